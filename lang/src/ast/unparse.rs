//! Prints the AST back as Python source.
//!
//! The output parses back to the same tree (modulo spans): parentheses are inserted from operator precedence, as
//! Python's `ast.unparse` does, and named expressions are always parenthesized. Formatting is normalized (four
//! spaces, single quotes where possible, comments and redundant parentheses dropped).

use std::fmt::{self, Write};

use super::*;

/// Python source for a module.
pub fn unparse(module: &Module) -> String {
    let mut u = Unparser { out: String::new(), depth: 0 };
    u.stmts(&module.body);
    u.out
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&unparse(self))
    }
}

impl fmt::Display for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut u = Unparser { out: String::new(), depth: 0 };
        u.stmt(self);
        f.write_str(u.out.trim_end())
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut u = Unparser { out: String::new(), depth: 0 };
        u.expr(self, Prec::Tuple);
        f.write_str(&u.out)
    }
}

/// Binding strength, loosest first (Python's `ast._Precedence`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    Tuple,
    Test,
    Or,
    And,
    Not,
    Cmp,
    BOr,
    BXor,
    BAnd,
    Shift,
    Arith,
    Term,
    Factor,
    Power,
    Await,
    Atom,
}

impl Prec {
    fn next(self) -> Prec {
        use Prec::*;
        match self {
            Tuple => Test,
            Test => Or,
            Or => And,
            And => Not,
            Not => Cmp,
            Cmp => BOr,
            BOr => BXor,
            BXor => BAnd,
            BAnd => Shift,
            Shift => Arith,
            Arith => Term,
            Term => Factor,
            Factor => Power,
            Power => Await,
            Await | Atom => Atom,
        }
    }
}

fn binop_prec(op: BinOpKind) -> Prec {
    use BinOpKind::*;
    match op {
        BitOr => Prec::BOr,
        BitXor => Prec::BXor,
        BitAnd => Prec::BAnd,
        LShift | RShift => Prec::Shift,
        Add | Sub => Prec::Arith,
        Mul | MatMul | Div | FloorDiv | Mod => Prec::Term,
        Pow => Prec::Power,
    }
}

struct Unparser {
    out: String,
    depth: usize,
}

impl Unparser {
    fn w(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn line(&mut self) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn block(&mut self, body: &[Stmt]) {
        self.w(":\n");
        self.depth += 1;
        self.stmts(body);
        self.depth -= 1;
    }

    fn else_block(&mut self, keyword: &str, body: &[Stmt]) {
        if !body.is_empty() {
            self.line();
            self.w(keyword);
            self.block(body);
        }
    }

    fn comma_sep<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            each(self, item);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        self.line();
        match &s.kind {
            StmtKind::Expr(e) => self.expr(e, Prec::Tuple),
            StmtKind::Assign { targets, value } => {
                for t in targets {
                    self.expr(t, Prec::Tuple);
                    self.w(" = ");
                }
                self.expr(value, Prec::Tuple);
            }
            StmtKind::AugAssign { target, op, value } => {
                self.expr(target, Prec::Tuple);
                let _ = write!(self.out, " {}= ", op.symbol());
                self.expr(value, Prec::Tuple);
            }
            StmtKind::AnnAssign { target, annotation, value, simple } => {
                if !simple && matches!(target.kind, ExprKind::Name(_)) {
                    self.w("(");
                    self.expr(target, Prec::Tuple);
                    self.w(")");
                } else {
                    self.expr(target, Prec::Tuple);
                }
                self.w(": ");
                self.expr(annotation, Prec::Test);
                if let Some(v) = value {
                    self.w(" = ");
                    self.expr(v, Prec::Tuple);
                }
            }
            StmtKind::FunctionDef(f) => {
                self.decorators(&f.decorators);
                let _ = write!(self.out, "def {}", f.name.name);
                self.type_params(&f.type_params);
                self.w("(");
                self.params(&f.params, true);
                self.w(")");
                if let Some(r) = &f.returns {
                    self.w(" -> ");
                    self.expr(r, Prec::Test);
                }
                self.block(&f.body);
                return;
            }
            StmtKind::ClassDef(c) => {
                self.decorators(&c.decorators);
                let _ = write!(self.out, "class {}", c.name.name);
                self.type_params(&c.type_params);
                if !c.bases.is_empty() || !c.keywords.is_empty() {
                    self.w("(");
                    self.call_args(&c.bases, &c.keywords);
                    self.w(")");
                }
                self.block(&c.body);
                return;
            }
            StmtKind::Return(v) => {
                self.w("return");
                if let Some(v) = v {
                    self.w(" ");
                    self.expr(v, Prec::Tuple);
                }
            }
            StmtKind::If { test, body, orelse } => {
                self.w("if ");
                self.expr(test, Prec::Test);
                self.block(body);
                let mut orelse = orelse;
                // An `If` alone in `orelse` prints as `elif`.
                while let [Stmt { kind: StmtKind::If { test, body, orelse: next }, .. }] = orelse.as_slice() {
                    self.line();
                    self.w("elif ");
                    self.expr(test, Prec::Test);
                    self.block(body);
                    orelse = next;
                }
                self.else_block("else", orelse);
                return;
            }
            StmtKind::For { target, iter, body, orelse } => {
                self.w("for ");
                self.expr(target, Prec::Tuple);
                self.w(" in ");
                self.expr(iter, Prec::Tuple);
                self.block(body);
                self.else_block("else", orelse);
                return;
            }
            StmtKind::While { test, body, orelse } => {
                self.w("while ");
                self.expr(test, Prec::Test);
                self.block(body);
                self.else_block("else", orelse);
                return;
            }
            StmtKind::Break => self.w("break"),
            StmtKind::Continue => self.w("continue"),
            StmtKind::Pass => self.w("pass"),
            StmtKind::Import(names) => {
                self.w("import ");
                self.aliases(names);
            }
            StmtKind::ImportFrom { module, names, level } => {
                let _ =
                    write!(self.out, "from {}{} import ", ".".repeat(*level as usize), module.as_deref().unwrap_or(""));
                self.aliases(names);
            }
            StmtKind::Global(names) | StmtKind::Nonlocal(names) => {
                self.w(if matches!(s.kind, StmtKind::Global(_)) { "global " } else { "nonlocal " });
                self.comma_sep(names, |u, n| u.w(&n.name));
            }
            StmtKind::Delete(targets) => {
                self.w("del ");
                self.comma_sep(targets, |u, t| u.expr(t, Prec::Test));
            }
            StmtKind::Assert { test, msg } => {
                self.w("assert ");
                self.expr(test, Prec::Test);
                if let Some(m) = msg {
                    self.w(", ");
                    self.expr(m, Prec::Test);
                }
            }
            StmtKind::Raise { exc, cause } => {
                self.w("raise");
                if let Some(e) = exc {
                    self.w(" ");
                    self.expr(e, Prec::Test);
                }
                if let Some(c) = cause {
                    self.w(" from ");
                    self.expr(c, Prec::Test);
                }
            }
            StmtKind::Try { body, handlers, orelse, finalbody, star } => {
                self.w("try");
                self.block(body);
                for h in handlers {
                    self.line();
                    self.w(if *star { "except*" } else { "except" });
                    if let Some(t) = &h.typ {
                        self.w(" ");
                        self.expr(t, Prec::Test);
                    }
                    if let Some(n) = &h.name {
                        let _ = write!(self.out, " as {}", n.name);
                    }
                    self.block(&h.body);
                }
                self.else_block("else", orelse);
                self.else_block("finally", finalbody);
                return;
            }
            StmtKind::Match { subject, cases } => {
                self.w("match ");
                self.expr(subject, Prec::Tuple);
                self.w(":\n");
                self.depth += 1;
                for case in cases {
                    self.line();
                    self.w("case ");
                    self.expr(&case.pattern, Prec::Tuple);
                    if let Some(alias) = &case.alias {
                        let _ = write!(self.out, " as {}", alias.name);
                    }
                    if let Some(guard) = &case.guard {
                        self.w(" if ");
                        self.expr(guard, Prec::Test);
                    }
                    self.block(&case.body);
                }
                self.depth -= 1;
                return;
            }
            StmtKind::With { items, body } => {
                self.w("with ");
                self.comma_sep(items, |u, item| {
                    u.expr(&item.context, Prec::Test);
                    if let Some(t) = &item.target {
                        u.w(" as ");
                        u.expr(t, Prec::Test);
                    }
                });
                self.block(body);
                return;
            }
            StmtKind::TypeAlias { name, type_params, value } => {
                let _ = write!(self.out, "type {}", name.name);
                self.type_params(type_params);
                self.w(" = ");
                self.expr(value, Prec::Test);
            }
        }
        self.w("\n");
    }

    fn decorators(&mut self, decorators: &[Expr]) {
        for d in decorators {
            self.w("@");
            self.expr(d, Prec::Test);
            self.w("\n");
            self.line();
        }
    }

    fn aliases(&mut self, names: &[Alias]) {
        self.comma_sep(names, |u, a| {
            u.w(&a.name);
            if let Some(asname) = &a.asname {
                let _ = write!(u.out, " as {}", asname.name);
            }
        });
    }

    fn type_params(&mut self, params: &[TypeParam]) {
        if params.is_empty() {
            return;
        }
        self.w("[");
        self.comma_sep(params, |u, p| {
            u.w(match p.kind {
                TypeParamKind::TypeVar => "",
                TypeParamKind::TypeVarTuple => "*",
                TypeParamKind::ParamSpec => "**",
            });
            u.w(&p.name.name);
            if let Some(b) = &p.bound {
                u.w(": ");
                u.expr(b, Prec::Test);
            }
            if let Some(d) = &p.default {
                u.w(" = ");
                u.expr(d, Prec::Test);
            }
        });
        self.w("]");
    }

    fn params(&mut self, p: &Parameters, annotated: bool) {
        let mut parts: Vec<String> = Vec::new();
        let one = |prefix: &str, param: &Param| {
            let mut u = Unparser { out: format!("{prefix}{}", param.name.name), depth: 0 };
            if let Some(a) = param.annotation.as_ref().filter(|_| annotated) {
                u.w(": ");
                u.expr(a, Prec::Test);
            }
            if let Some(d) = &param.default {
                u.w(if param.annotation.is_some() && annotated { " = " } else { "=" });
                u.expr(d, Prec::Test);
            }
            u.out
        };
        for param in &p.posonly {
            parts.push(one("", param));
        }
        if !p.posonly.is_empty() {
            parts.push("/".into());
        }
        for param in &p.args {
            parts.push(one("", param));
        }
        match &p.vararg {
            Some(v) => parts.push(one("*", v)),
            None if !p.kwonly.is_empty() => parts.push("*".into()),
            None => {}
        }
        for param in &p.kwonly {
            parts.push(one("", param));
        }
        if let Some(k) = &p.kwarg {
            parts.push(one("**", k));
        }
        self.w(&parts.join(", "));
    }

    fn call_args(&mut self, args: &[Expr], keywords: &[Keyword]) {
        self.comma_sep(args, |u, a| u.expr(a, Prec::Test));
        if !args.is_empty() && !keywords.is_empty() {
            self.w(", ");
        }
        self.comma_sep(keywords, |u, k| {
            match &k.arg {
                Some(arg) => {
                    u.w(&arg.name);
                    u.w("=");
                }
                None => u.w("**"),
            }
            u.expr(&k.value, Prec::Test);
        });
    }

    fn generators(&mut self, generators: &[Comprehension]) {
        for g in generators {
            self.w(" for ");
            self.expr(&g.target, Prec::Tuple);
            self.w(" in ");
            self.expr(&g.iter, Prec::Or);
            for cond in &g.ifs {
                self.w(" if ");
                self.expr(cond, Prec::Or);
            }
        }
    }

    /// Writes `e`, parenthesized if it binds looser than `ctx` requires.
    fn expr(&mut self, e: &Expr, ctx: Prec) {
        let own = match &e.kind {
            ExprKind::Tuple(items) if !items.is_empty() => Prec::Tuple,
            ExprKind::Lambda { .. } | ExprKind::IfExp { .. } => Prec::Test,
            ExprKind::BoolOp { op: BoolOpKind::Or, .. } => Prec::Or,
            ExprKind::BoolOp { op: BoolOpKind::And, .. } => Prec::And,
            ExprKind::UnaryOp { op: UnaryOpKind::Not, .. } => Prec::Not,
            ExprKind::UnaryOp { .. } => Prec::Factor,
            ExprKind::Compare { .. } => Prec::Cmp,
            ExprKind::BinOp { op, .. } => binop_prec(*op),
            ExprKind::Starred(_) => Prec::BOr,
            _ => Prec::Atom,
        };
        let parens = own < ctx || matches!(e.kind, ExprKind::NamedExpr { .. });
        if parens {
            self.w("(");
        }
        crate::deep(|| self.expr_inner(e));
        if parens {
            self.w(")");
        }
    }

    fn expr_inner(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) => self.w(n),
            ExprKind::Constant(k) => self.constant(k),
            ExprKind::Attribute { value, attr } => {
                // `1 .real`: an int literal needs parentheses before `.`.
                if matches!(value.kind, ExprKind::Constant(Constant::Int(_))) {
                    self.w("(");
                    self.expr(value, Prec::Atom);
                    self.w(")");
                } else {
                    self.expr(value, Prec::Atom);
                }
                self.w(".");
                self.w(&attr.name);
            }
            ExprKind::Subscript { value, index } => {
                self.expr(value, Prec::Atom);
                self.w("[");
                match &index.kind {
                    ExprKind::Tuple(items) if !items.is_empty() => {
                        self.comma_sep(items, |u, i| u.expr(i, Prec::Test));
                        if items.len() == 1 {
                            self.w(",");
                        }
                    }
                    _ => self.expr(index, Prec::Tuple),
                }
                self.w("]");
            }
            ExprKind::Slice { lower, upper, step } => {
                if let Some(l) = lower {
                    self.expr(l, Prec::Test);
                }
                self.w(":");
                if let Some(u) = upper {
                    self.expr(u, Prec::Test);
                }
                if let Some(s) = step {
                    self.w(":");
                    self.expr(s, Prec::Test);
                }
            }
            ExprKind::Call { func, args, keywords } => {
                self.expr(func, Prec::Atom);
                self.w("(");
                self.call_args(args, keywords);
                self.w(")");
            }
            ExprKind::BinOp { left, op, right } => {
                let p = binop_prec(*op);
                // Left-associative except `**`, which is right-associative.
                let (lp, rp) = if *op == BinOpKind::Pow { (p.next(), p) } else { (p, p.next()) };
                self.expr(left, lp);
                let _ = write!(self.out, " {} ", op.symbol());
                self.expr(right, rp);
            }
            ExprKind::UnaryOp { op, operand } => {
                self.w(op.symbol());
                if *op == UnaryOpKind::Not {
                    self.w(" ");
                    self.expr(operand, Prec::Not);
                } else {
                    self.expr(operand, Prec::Factor);
                }
            }
            ExprKind::BoolOp { op, values } => {
                let p = if *op == BoolOpKind::Or { Prec::Or } else { Prec::And };
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        let _ = write!(self.out, " {} ", op.symbol());
                    }
                    self.expr(v, p.next());
                }
            }
            ExprKind::Compare { left, ops, comparators } => {
                self.expr(left, Prec::BOr);
                for (op, c) in ops.iter().zip(comparators) {
                    let _ = write!(self.out, " {} ", op.symbol());
                    self.expr(c, Prec::BOr);
                }
            }
            ExprKind::IfExp { test, body, orelse } => {
                self.expr(body, Prec::Or);
                self.w(" if ");
                self.expr(test, Prec::Or);
                self.w(" else ");
                self.expr(orelse, Prec::Test);
            }
            // Always parenthesized: `(yield x)` is valid wherever `yield x` is, and parses to the same node.
            ExprKind::Yield(value) => {
                self.w("(yield");
                if let Some(v) = value {
                    self.w(" ");
                    self.expr(v, Prec::Tuple);
                }
                self.w(")");
            }
            ExprKind::YieldFrom(value) => {
                self.w("(yield from ");
                self.expr(value, Prec::Test);
                self.w(")");
            }
            ExprKind::Lambda { params, body } => {
                self.w("lambda");
                if !params.is_empty() {
                    self.w(" ");
                    self.params(params, false);
                }
                self.w(": ");
                self.expr(body, Prec::Test);
            }
            ExprKind::Tuple(items) => {
                let parenthesized = items.is_empty();
                if parenthesized {
                    self.w("(");
                }
                self.comma_sep(items, |u, i| u.expr(i, Prec::Test));
                if items.len() == 1 {
                    self.w(",");
                }
                if parenthesized {
                    self.w(")");
                }
            }
            ExprKind::List(items) => {
                self.w("[");
                self.comma_sep(items, |u, i| u.expr(i, Prec::Test));
                self.w("]");
            }
            ExprKind::Set(items) => {
                self.w("{");
                self.comma_sep(items, |u, i| u.expr(i, Prec::Test));
                self.w("}");
            }
            ExprKind::Dict(items) => {
                self.w("{");
                self.comma_sep(items, |u, item| match item {
                    DictItem::Pair { key, value } => {
                        u.expr(key, Prec::Test);
                        u.w(": ");
                        u.expr(value, Prec::Test);
                    }
                    DictItem::Spread(value) => {
                        u.w("**");
                        u.expr(value, Prec::BOr);
                    }
                });
                self.w("}");
            }
            ExprKind::ListComp { elt, generators } => {
                self.w("[");
                self.expr(elt, Prec::Test);
                self.generators(generators);
                self.w("]");
            }
            ExprKind::SetComp { elt, generators } => {
                self.w("{");
                self.expr(elt, Prec::Test);
                self.generators(generators);
                self.w("}");
            }
            ExprKind::GeneratorExp { elt, generators } => {
                self.w("(");
                self.expr(elt, Prec::Test);
                self.generators(generators);
                self.w(")");
            }
            ExprKind::DictComp { key, value, generators } => {
                self.w("{");
                self.expr(key, Prec::Test);
                self.w(": ");
                self.expr(value, Prec::Test);
                self.generators(generators);
                self.w("}");
            }
            ExprKind::Starred(value) => {
                self.w("*");
                self.expr(value, Prec::BOr);
            }
            ExprKind::NamedExpr { target, value } => {
                let _ = write!(self.out, "{} := ", target.name);
                self.expr(value, Prec::Test);
            }
            ExprKind::JoinedStr(parts) => {
                self.w("f'");
                self.fstring_parts(parts);
                self.w("'");
            }
        }
    }

    fn fstring_parts(&mut self, parts: &[FStringPart]) {
        for part in parts {
            match part {
                FStringPart::Literal(text, _) => {
                    let escaped = escape_str(text, '\'');
                    self.w(&escaped.replace('{', "{{").replace('}', "}}"));
                }
                FStringPart::Field(f) => {
                    self.w("{");
                    match &f.debug_text {
                        // The text before `=` is the source of the expression, as written.
                        Some(text) => self.w(text),
                        None => {
                            let mut inner = Unparser { out: String::new(), depth: 0 };
                            inner.expr(&f.value, Prec::Or);
                            if inner.out.starts_with('{') {
                                self.w(" ");
                            }
                            self.w(&inner.out);
                        }
                    }
                    if let Some(c) = f.conversion {
                        let _ = write!(self.out, "!{c}");
                    }
                    if let Some(spec) = &f.format_spec {
                        self.w(":");
                        self.fstring_parts(spec);
                    }
                    self.w("}");
                }
            }
        }
    }

    fn constant(&mut self, k: &Constant) {
        match k {
            Constant::None => self.w("None"),
            Constant::Bool(true) => self.w("True"),
            Constant::Bool(false) => self.w("False"),
            Constant::Int(v) => {
                let _ = write!(self.out, "{v}");
            }
            Constant::Float(v) if v.is_infinite() => self.w("1e309"),
            Constant::Float(v) => {
                let _ = write!(self.out, "{v:?}");
            }
            Constant::Str(s) => {
                let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
                let _ = write!(self.out, "{quote}{}{quote}", escape_str(s, quote));
            }
            Constant::Bytes(b) => {
                self.w("b'");
                for &byte in b {
                    match byte {
                        b'\\' => self.w("\\\\"),
                        b'\'' => self.w("\\'"),
                        b'\n' => self.w("\\n"),
                        b'\r' => self.w("\\r"),
                        b'\t' => self.w("\\t"),
                        0x20..=0x7e => self.out.push(byte as char),
                        _ => {
                            let _ = write!(self.out, "\\x{byte:02x}");
                        }
                    }
                }
                self.w("'");
            }
            Constant::Ellipsis => self.w("..."),
        }
    }
}

/// The body of a string literal quoted with `quote`.
fn escape_str(s: &str, quote: char) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}
