//! A readable tree dump of the AST (`tessel compile --emit ast`).
//!
//! One node per line, `Kind detail @start..end`, children indented under it, named fields as `field: Node` (or
//! `field:` followed by an indented list). With `spans = false` the spans are left out, which makes dumps of two
//! parses of differently formatted sources comparable.

use std::fmt::Write;

use super::*;

/// Dumps a module.
pub fn dump(module: &Module, spans: bool) -> String {
    let mut d = Dumper { out: String::new(), spans };
    d.line(0, None, "Module", module.span);
    d.stmts(1, None, &module.body);
    d.out
}

/// Dumps one expression.
pub fn dump_expr(expr: &Expr, spans: bool) -> String {
    let mut d = Dumper { out: String::new(), spans };
    d.expr(0, None, expr);
    d.out
}

struct Dumper {
    out: String,
    spans: bool,
}

impl Dumper {
    fn line(&mut self, depth: usize, label: Option<&str>, head: &str, span: Span) {
        let indent = "  ".repeat(depth);
        let label = label.map(|l| format!("{l}: ")).unwrap_or_default();
        let _ = write!(self.out, "{indent}{label}{head}");
        if self.spans {
            let _ = write!(self.out, " @{span}");
        }
        self.out.push('\n');
    }

    fn header(&mut self, depth: usize, label: &str) {
        let _ = writeln!(self.out, "{}{label}:", "  ".repeat(depth));
    }

    fn stmts(&mut self, depth: usize, label: Option<&str>, stmts: &[Stmt]) {
        let depth = match label {
            Some(label) if !stmts.is_empty() => {
                self.header(depth, label);
                depth + 1
            }
            _ => depth,
        };
        for stmt in stmts {
            self.stmt(depth, stmt);
        }
    }

    fn exprs(&mut self, depth: usize, label: &str, exprs: &[Expr]) {
        if exprs.is_empty() {
            return;
        }
        self.header(depth, label);
        for e in exprs {
            self.expr(depth + 1, None, e);
        }
    }

    fn opt(&mut self, depth: usize, label: &str, expr: Option<&Expr>) {
        if let Some(e) = expr {
            self.expr(depth, Some(label), e);
        }
    }

    fn ident(&mut self, depth: usize, label: &str, id: &Ident) {
        self.line(depth, Some(label), &id.name, id.span);
    }

    fn stmt(&mut self, d: usize, s: &Stmt) {
        let c = d + 1;
        match &s.kind {
            StmtKind::Expr(e) => {
                self.line(d, None, "Expr", s.span);
                self.expr(c, None, e);
            }
            StmtKind::Assign { targets, value } => {
                self.line(d, None, "Assign", s.span);
                self.exprs(c, "targets", targets);
                self.expr(c, Some("value"), value);
            }
            StmtKind::AugAssign { target, op, value } => {
                self.line(d, None, &format!("AugAssign {}=", op.symbol()), s.span);
                self.expr(c, Some("target"), target);
                self.expr(c, Some("value"), value);
            }
            StmtKind::AnnAssign { target, annotation, value, simple } => {
                self.line(d, None, if *simple { "AnnAssign simple" } else { "AnnAssign" }, s.span);
                self.expr(c, Some("target"), target);
                self.expr(c, Some("annotation"), annotation);
                self.opt(c, "value", value.as_ref());
            }
            StmtKind::FunctionDef(f) => {
                self.line(d, None, &format!("FunctionDef {}", f.name.name), s.span);
                self.exprs(c, "decorators", &f.decorators);
                self.type_params(c, &f.type_params);
                self.params(c, &f.params);
                self.opt(c, "returns", f.returns.as_ref());
                self.stmts(c, Some("body"), &f.body);
            }
            StmtKind::ClassDef(k) => {
                self.line(d, None, &format!("ClassDef {}", k.name.name), s.span);
                self.exprs(c, "decorators", &k.decorators);
                self.type_params(c, &k.type_params);
                self.exprs(c, "bases", &k.bases);
                self.keywords(c, &k.keywords);
                self.stmts(c, Some("body"), &k.body);
            }
            StmtKind::Return(value) => {
                self.line(d, None, "Return", s.span);
                self.opt(c, "value", value.as_ref());
            }
            StmtKind::If { test, body, orelse } => {
                self.line(d, None, "If", s.span);
                self.expr(c, Some("test"), test);
                self.stmts(c, Some("body"), body);
                self.stmts(c, Some("orelse"), orelse);
            }
            StmtKind::For { target, iter, body, orelse } => {
                self.line(d, None, "For", s.span);
                self.expr(c, Some("target"), target);
                self.expr(c, Some("iter"), iter);
                self.stmts(c, Some("body"), body);
                self.stmts(c, Some("orelse"), orelse);
            }
            StmtKind::While { test, body, orelse } => {
                self.line(d, None, "While", s.span);
                self.expr(c, Some("test"), test);
                self.stmts(c, Some("body"), body);
                self.stmts(c, Some("orelse"), orelse);
            }
            StmtKind::Break => self.line(d, None, "Break", s.span),
            StmtKind::Continue => self.line(d, None, "Continue", s.span),
            StmtKind::Pass => self.line(d, None, "Pass", s.span),
            StmtKind::Import(names) => {
                self.line(d, None, "Import", s.span);
                self.aliases(c, names);
            }
            StmtKind::ImportFrom { module, names, level } => {
                let dots = ".".repeat(*level as usize);
                self.line(d, None, &format!("ImportFrom {dots}{}", module.as_deref().unwrap_or("")), s.span);
                self.aliases(c, names);
            }
            StmtKind::Global(names) | StmtKind::Nonlocal(names) => {
                let kind = if matches!(s.kind, StmtKind::Global(_)) { "Global" } else { "Nonlocal" };
                let names: Vec<&str> = names.iter().map(|n| n.name.as_str()).collect();
                self.line(d, None, &format!("{kind} {}", names.join(", ")), s.span);
            }
            StmtKind::Delete(targets) => {
                self.line(d, None, "Delete", s.span);
                self.exprs(c, "targets", targets);
            }
            StmtKind::Assert { test, msg } => {
                self.line(d, None, "Assert", s.span);
                self.expr(c, Some("test"), test);
                self.opt(c, "msg", msg.as_ref());
            }
            StmtKind::Raise { exc, cause } => {
                self.line(d, None, "Raise", s.span);
                self.opt(c, "exc", exc.as_ref());
                self.opt(c, "cause", cause.as_ref());
            }
            StmtKind::Try { body, handlers, orelse, finalbody, star } => {
                self.line(d, None, if *star { "TryStar" } else { "Try" }, s.span);
                self.stmts(c, Some("body"), body);
                for h in handlers {
                    self.line(c, None, "ExceptHandler", h.span);
                    self.opt(c + 1, "type", h.typ.as_ref());
                    if let Some(name) = &h.name {
                        self.ident(c + 1, "name", name);
                    }
                    self.stmts(c + 1, Some("body"), &h.body);
                }
                self.stmts(c, Some("orelse"), orelse);
                self.stmts(c, Some("finalbody"), finalbody);
            }
            StmtKind::Match { subject, cases } => {
                self.line(d, None, "Match", s.span);
                self.expr(c, Some("subject"), subject);
                for case in cases {
                    self.line(c, None, "match_case", case.span);
                    self.expr(c + 1, Some("pattern"), &case.pattern);
                    if let Some(alias) = &case.alias {
                        self.ident(c + 1, "as", alias);
                    }
                    self.opt(c + 1, "guard", case.guard.as_ref());
                    self.stmts(c + 1, Some("body"), &case.body);
                }
            }
            StmtKind::With { items, body } => {
                self.line(d, None, "With", s.span);
                for item in items {
                    self.header(c, "item");
                    self.expr(c + 1, Some("context"), &item.context);
                    self.opt(c + 1, "target", item.target.as_ref());
                }
                self.stmts(c, Some("body"), body);
            }
            StmtKind::TypeAlias { name, type_params, value } => {
                self.line(d, None, &format!("TypeAlias {}", name.name), s.span);
                self.type_params(c, type_params);
                self.expr(c, Some("value"), value);
            }
        }
    }

    fn aliases(&mut self, d: usize, names: &[Alias]) {
        for a in names {
            let head = match &a.asname {
                Some(asname) => format!("Alias {} as {}", a.name, asname.name),
                None => format!("Alias {}", a.name),
            };
            self.line(d, None, &head, a.span);
        }
    }

    fn params(&mut self, d: usize, p: &Parameters) {
        let groups: [(&str, &[Param]); 5] = [
            ("posonly", &p.posonly),
            ("args", &p.args),
            ("vararg", p.vararg.as_slice()),
            ("kwonly", &p.kwonly),
            ("kwarg", p.kwarg.as_slice()),
        ];
        for (label, params) in groups {
            if params.is_empty() {
                continue;
            }
            self.header(d, label);
            for param in params {
                self.line(d + 1, None, &format!("Param {}", param.name.name), param.span);
                self.opt(d + 2, "annotation", param.annotation.as_ref());
                self.opt(d + 2, "default", param.default.as_ref());
            }
        }
    }

    fn type_params(&mut self, d: usize, params: &[TypeParam]) {
        if params.is_empty() {
            return;
        }
        self.header(d, "type_params");
        for p in params {
            let kind = match p.kind {
                TypeParamKind::TypeVar => "TypeVar",
                TypeParamKind::TypeVarTuple => "TypeVarTuple",
                TypeParamKind::ParamSpec => "ParamSpec",
            };
            self.line(d + 1, None, &format!("{kind} {}", p.name.name), p.span);
            self.opt(d + 2, "bound", p.bound.as_ref());
            self.opt(d + 2, "default", p.default.as_ref());
        }
    }

    fn keywords(&mut self, d: usize, keywords: &[Keyword]) {
        if keywords.is_empty() {
            return;
        }
        self.header(d, "keywords");
        for k in keywords {
            let head = match &k.arg {
                Some(arg) => format!("Keyword {}", arg.name),
                None => "Keyword **".to_string(),
            };
            self.line(d + 1, None, &head, k.span);
            self.expr(d + 2, None, &k.value);
        }
    }

    fn generators(&mut self, d: usize, generators: &[Comprehension]) {
        for g in generators {
            self.line(d, None, "Comprehension", g.span);
            self.expr(d + 1, Some("target"), &g.target);
            self.expr(d + 1, Some("iter"), &g.iter);
            self.exprs(d + 1, "ifs", &g.ifs);
        }
    }

    fn fstring_parts(&mut self, d: usize, parts: &[FStringPart]) {
        for part in parts {
            match part {
                FStringPart::Literal(text, span) => self.line(d, None, &format!("Literal {text:?}"), *span),
                FStringPart::Field(f) => {
                    let mut head = String::from("FormattedValue");
                    if let Some(text) = &f.debug_text {
                        let _ = write!(head, " debug={text:?}");
                    }
                    if let Some(conv) = f.conversion {
                        let _ = write!(head, " !{conv}");
                    }
                    self.line(d, None, &head, f.span);
                    self.expr(d + 1, Some("value"), &f.value);
                    if let Some(spec) = &f.format_spec {
                        self.header(d + 1, "format_spec");
                        self.fstring_parts(d + 2, spec);
                    }
                }
            }
        }
    }

    fn expr(&mut self, d: usize, label: Option<&str>, e: &Expr) {
        crate::deep(|| self.expr_inner(d, label, e))
    }

    fn expr_inner(&mut self, d: usize, label: Option<&str>, e: &Expr) {
        let c = d + 1;
        let line = |this: &mut Self, head: &str| this.line(d, label, head, e.span);
        match &e.kind {
            ExprKind::Name(n) => line(self, &format!("Name {n}")),
            ExprKind::Constant(k) => line(self, &format!("Constant {}", constant(k))),
            ExprKind::Attribute { value, attr } => {
                line(self, &format!("Attribute .{}", attr.name));
                self.expr(c, None, value);
            }
            ExprKind::Subscript { value, index } => {
                line(self, "Subscript");
                self.expr(c, Some("value"), value);
                self.expr(c, Some("index"), index);
            }
            ExprKind::Slice { lower, upper, step } => {
                line(self, "Slice");
                self.opt(c, "lower", lower.as_deref());
                self.opt(c, "upper", upper.as_deref());
                self.opt(c, "step", step.as_deref());
            }
            ExprKind::Call { func, args, keywords } => {
                line(self, "Call");
                self.expr(c, Some("func"), func);
                self.exprs(c, "args", args);
                self.keywords(c, keywords);
            }
            ExprKind::BinOp { left, op, right } => {
                line(self, &format!("BinOp {}", op.symbol()));
                self.expr(c, None, left);
                self.expr(c, None, right);
            }
            ExprKind::UnaryOp { op, operand } => {
                line(self, &format!("UnaryOp {}", op.symbol()));
                self.expr(c, None, operand);
            }
            ExprKind::BoolOp { op, values } => {
                line(self, &format!("BoolOp {}", op.symbol()));
                for v in values {
                    self.expr(c, None, v);
                }
            }
            ExprKind::Compare { left, ops, comparators } => {
                let ops: Vec<&str> = ops.iter().map(|o| o.symbol()).collect();
                line(self, &format!("Compare {}", ops.join(" ")));
                self.expr(c, None, left);
                for v in comparators {
                    self.expr(c, None, v);
                }
            }
            ExprKind::IfExp { test, body, orelse } => {
                line(self, "IfExp");
                self.expr(c, Some("test"), test);
                self.expr(c, Some("body"), body);
                self.expr(c, Some("orelse"), orelse);
            }
            ExprKind::Lambda { params, body } => {
                line(self, "Lambda");
                self.params(c, params);
                self.expr(c, Some("body"), body);
            }
            ExprKind::Yield(value) => {
                line(self, "Yield");
                if let Some(v) = value {
                    self.expr(c, Some("value"), v);
                }
            }
            ExprKind::YieldFrom(value) => {
                line(self, "YieldFrom");
                self.expr(c, Some("value"), value);
            }
            ExprKind::Tuple(items) | ExprKind::List(items) | ExprKind::Set(items) => {
                let kind = match e.kind {
                    ExprKind::Tuple(_) => "Tuple",
                    ExprKind::List(_) => "List",
                    _ => "Set",
                };
                line(self, kind);
                for item in items {
                    self.expr(c, None, item);
                }
            }
            ExprKind::Dict(items) => {
                line(self, "Dict");
                for item in items {
                    match item {
                        DictItem::Pair { key, value } => {
                            self.expr(c, Some("key"), key);
                            self.expr(c + 1, Some("value"), value);
                        }
                        DictItem::Spread(value) => self.expr(c, Some("**"), value),
                    }
                }
            }
            ExprKind::ListComp { elt, generators }
            | ExprKind::SetComp { elt, generators }
            | ExprKind::GeneratorExp { elt, generators } => {
                let kind = match e.kind {
                    ExprKind::ListComp { .. } => "ListComp",
                    ExprKind::SetComp { .. } => "SetComp",
                    _ => "GeneratorExp",
                };
                line(self, kind);
                self.expr(c, Some("elt"), elt);
                self.generators(c, generators);
            }
            ExprKind::DictComp { key, value, generators } => {
                line(self, "DictComp");
                self.expr(c, Some("key"), key);
                self.expr(c, Some("value"), value);
                self.generators(c, generators);
            }
            ExprKind::Starred(value) => {
                line(self, "Starred");
                self.expr(c, None, value);
            }
            ExprKind::NamedExpr { target, value } => {
                line(self, &format!("NamedExpr {}", target.name));
                self.expr(c, None, value);
            }
            ExprKind::JoinedStr(parts) => {
                line(self, "JoinedStr");
                self.fstring_parts(c, parts);
            }
        }
    }
}

fn constant(k: &Constant) -> String {
    match k {
        Constant::None => "None".into(),
        Constant::Bool(true) => "True".into(),
        Constant::Bool(false) => "False".into(),
        Constant::Int(v) => v.to_string(),
        Constant::Float(v) => format!("{v:?}"),
        Constant::Str(s) => format!("{s:?}"),
        Constant::Bytes(b) => format!("b\"{}\"", b.escape_ascii()),
        Constant::Ellipsis => "...".into(),
    }
}
