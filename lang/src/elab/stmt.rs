//! Statements and control flow.
//!
//! `if` on a compile-time condition, `tl.static_range` loops and loops over tuples run now. A runtime `if`
//! becomes an `if` op yielding every variable either branch assigns that is defined after both; a runtime `for`
//! becomes a `for` op carrying every variable its body assigns that was defined before it (its type may not
//! change); `while` becomes a `while` op the same way. A `return` inside a runtime `if` (outside loops) is
//! handled by moving the rest of the function into the branches, so both branches end in a return. `break` and
//! `continue` set flags that the loops and the rest of the body consume ([`crate::elab::jumps`]).

use std::collections::HashMap;

use tessel_tile::ops::Op;
use tessel_tile::{ScalarType, Type};

use crate::ast::{Expr, ExprKind, Stmt, StmtKind};
use crate::elab::blocks::{assigned_names, contains_jump, contains_return};
use crate::elab::promote::integer_promote;
use crate::elab::value::{Dtype, RangeVal, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

/// How a block finished.
#[derive(Debug)]
pub enum Flow<'a> {
    Normal,
    Return(Value<'a>),
    Break(Span),
    Continue(Span),
}

impl<'a> Elab<'a> {
    /// Runs a block. `cont` holds the statements that follow the block up to the end of the function, when
    /// the block is not inside a loop (a `return` in a runtime `if` needs them).
    pub fn exec_block(&mut self, stmts: &[&'a Stmt], cont: Option<&[&'a Stmt]>) -> R<Flow<'a>> {
        for (i, s) in stmts.iter().enumerate() {
            // After a `break`/`continue` the rest of the loop body is skipped: now if the jump was taken at
            // compile time, under an `if` on the flag if it was taken at run time.
            match self.skip_flag() {
                Some(Value::Bool(true)) => return Ok(Flow::Normal),
                Some(Value::Tensor(skip)) => {
                    self.guard_rest(skip, &stmts[i..], s.span)?;
                    return Ok(Flow::Normal);
                }
                _ => {}
            }
            let rest = &stmts[i + 1..];
            let flow = self.exec_stmt(s, rest, cont)?;
            match flow {
                Flow::Normal => {}
                // A runtime `if` with a return consumed the rest of the function.
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec_stmt(&mut self, s: &'a Stmt, rest: &[&'a Stmt], cont: Option<&[&'a Stmt]>) -> R<Flow<'a>> {
        self.step(s.span)?;
        crate::deep(|| self.exec_stmt_inner(s, rest, cont))
    }

    fn exec_stmt_inner(&mut self, s: &'a Stmt, rest: &[&'a Stmt], cont: Option<&[&'a Stmt]>) -> R<Flow<'a>> {
        let span = s.span;
        match &s.kind {
            StmtKind::Expr(e) => {
                if !matches!(e.kind, ExprKind::Constant(_)) {
                    self.eval(e)?;
                }
            }
            StmtKind::Assign { targets, value } => {
                let v = self.eval(value)?;
                let v = self.sanitize(v, value.span)?;
                for t in targets {
                    self.assign(t, v.clone(), false)?;
                }
            }
            StmtKind::AugAssign { target, op, value } => {
                let cur = self.eval(target)?;
                let rhs = self.eval(value)?;
                let v = self.binop(*op, cur, rhs, span)?;
                let v = self.sanitize(v, value.span)?;
                self.assign(target, v, false)?;
            }
            StmtKind::AnnAssign { target, annotation, value, .. } => {
                let constexpr = self.modules[self.cur_module()].imports.is_constexpr_annotation(annotation)
                    || matches!(self.eval(annotation), Ok(Value::Builtin(b)) if b.name == "constexpr");
                let Some(value) = value else { return Ok(Flow::Normal) };
                let v = self.eval(value)?;
                if constexpr {
                    let name = target.as_name().unwrap_or("");
                    if v.has_runtime() {
                        return Err(self.err(
                            value.span,
                            format!(
                                "`{name}` is declared tl.constexpr, but its value is a runtime value ({})",
                                v.type_name()
                            ),
                        ));
                    }
                    if self.frames.last().is_some_and(|f| f.vars.contains_key(name)) {
                        return Err(self.err(
                            target.span,
                            format!("`{name}` is already defined; a constexpr cannot be reassigned"),
                        ));
                    }
                    self.assign(target, v, false)?;
                    self.frame().constexpr_names.insert(name.to_string());
                } else {
                    let v = self.sanitize(v, value.span)?;
                    self.assign(target, v, false)?;
                }
            }
            StmtKind::Return(value) => {
                if self.frames.last().is_some_and(|f| f.runtime_loops > 0) {
                    return Err(self.err(span, "`return` inside a runtime `for`/`while` loop is not supported"));
                }
                let v = match value {
                    Some(e) => self.eval(e)?,
                    None => Value::None,
                };
                return Ok(Flow::Return(v));
            }
            StmtKind::If { test, body, orelse } => {
                let cond = self.eval(test)?;
                match cond.truth() {
                    Some(t) => {
                        let block: Vec<&'a Stmt> = if t { body.iter().collect() } else { orelse.iter().collect() };
                        let tail: Option<Vec<&'a Stmt>> = cont.map(|c| rest.iter().chain(c).copied().collect());
                        return self.exec_block(&block, tail.as_deref());
                    }
                    None => return self.runtime_if(cond, test, body, orelse, rest, cont),
                }
            }
            StmtKind::For { target, iter, body, orelse } => return self.exec_for(target, iter, body, orelse, span),
            StmtKind::While { test, body, orelse } => {
                if !orelse.is_empty() {
                    return Err(self.err(span, "`while ... else` is not supported"));
                }
                return self.exec_while(test, body, span);
            }
            StmtKind::Break if self.jump(true) => {}
            StmtKind::Continue if self.jump(false) => {}
            StmtKind::Break => return Ok(Flow::Break(span)),
            StmtKind::Continue => return Ok(Flow::Continue(span)),
            StmtKind::Pass => {}
            StmtKind::Delete(targets) => {
                for t in targets {
                    match &t.kind {
                        ExprKind::Name(n) => {
                            self.frame().vars.remove(n);
                        }
                        ExprKind::Subscript { value, index } => {
                            let obj = self.eval(value)?;
                            let idx = self.eval(index)?;
                            match (obj, idx.as_int()) {
                                (Value::List(l), Some(i)) => {
                                    let n = l.borrow().len() as i128;
                                    let j = if i < 0 { i + n } else { i };
                                    if !(0..n).contains(&j) {
                                        return Err(self.err(t.span, "list index out of range"));
                                    }
                                    l.borrow_mut().remove(j as usize);
                                }
                                _ => return Err(self.err(t.span, "only list items can be deleted")),
                            }
                        }
                        _ => return Err(self.err(t.span, "unsupported `del` target")),
                    }
                }
            }
            StmtKind::Assert { test, msg } => {
                let cond = self.eval(test)?;
                let message = match msg {
                    Some(m) => crate::elab::value::py_str(&self.eval(m)?),
                    None => String::new(),
                };
                match cond.truth() {
                    Some(true) => {}
                    Some(false) => {
                        let text = if message.is_empty() {
                            "assertion failed".to_string()
                        } else {
                            format!("assertion failed: {message}")
                        };
                        return Err(self.err(test.span, text));
                    }
                    None => {
                        let c = self.to_tensor(&cond, test.span)?;
                        let c = self.cast(c, Dtype::Scalar(ScalarType::I1), test.span)?;
                        let msg = if message.is_empty() { test.to_string() } else { message };
                        self.emit(Op::Assert { message: msg }, &[c], vec![], span)?;
                    }
                }
            }
            StmtKind::Raise { exc, .. } => {
                let text = match exc {
                    Some(e) => match &e.kind {
                        ExprKind::Call { func, args, .. } => {
                            let kind = func.dotted_name().unwrap_or_else(|| "error".into());
                            let msg = match args.first() {
                                Some(a) => crate::elab::value::py_str(&self.eval(a)?),
                                None => String::new(),
                            };
                            format!("{kind}: {msg}")
                        }
                        other => Expr::new(other.clone(), e.span).to_string(),
                    },
                    None => "raise".into(),
                };
                return Err(self.err(span, text));
            }
            StmtKind::FunctionDef(_) | StmtKind::ClassDef(_) if self.frame().compile_time_only => {
                self.nested_definition(s)?;
            }
            StmtKind::FunctionDef(_) | StmtKind::ClassDef(_) => {
                return Err(self.err_hint(
                    span,
                    "nested function and class definitions are not supported in kernels",
                    "define it at the top of the file, or in a host-side function that returns it",
                ));
            }
            StmtKind::Import(_) | StmtKind::ImportFrom { .. } => {
                return Err(self.err(span, "imports are not supported inside kernels; import at the top of the file"));
            }
            StmtKind::Global(_) | StmtKind::Nonlocal(_) => {
                return Err(self.err(span, "`global` and `nonlocal` are not supported in kernels"));
            }
            StmtKind::Try { .. } => return Err(self.err(span, "`try` is not supported in kernels")),
            StmtKind::Match { .. } => {
                return Err(self.err_hint(span, "`match` is not supported in kernels", "use an `if`/`elif` chain"));
            }
            StmtKind::With { .. } => return Err(self.err(span, "`with` is not supported in kernels")),
            StmtKind::TypeAlias { .. } => {}
        }
        Ok(Flow::Normal)
    }

    /// Triton's assignment rule: in `@jit` code a Python number assigned to a variable becomes a runtime scalar
    /// (declare it `x: tl.constexpr = ...` to keep it a compile-time value). Compile-time functions keep it.
    pub fn sanitize(&mut self, v: Value<'a>, span: Span) -> R<Value<'a>> {
        if self.frames.last().is_some_and(|f| f.compile_time_only) {
            return Ok(v);
        }
        match v {
            v if v.is_number() => Ok(Value::Tensor(self.to_tensor(&v, span)?)),
            Value::Tuple(items) => {
                let items = items.iter().map(|x| self.sanitize(x.clone(), span)).collect::<R<Vec<_>>>()?;
                Ok(Value::tuple(items))
            }
            other => Ok(other),
        }
    }

    /// Binds `value` to an assignment target.
    pub fn assign(&mut self, target: &'a Expr, value: Value<'a>, _decl: bool) -> R<()> {
        match &target.kind {
            ExprKind::Name(n) => {
                if self.frames.last().is_some_and(|f| f.constexpr_names.contains(n)) {
                    return Err(self.err(target.span, format!("`{n}` is a constexpr and cannot be reassigned")));
                }
                // Values get the user's names; the prelude's internal names would only confuse.
                if let Value::Tensor(t) = &value
                    && self.cur_module() != crate::elab::PRELUDE_MODULE
                {
                    self.name_value(t, n);
                }
                self.frame().vars.insert(n.clone(), value);
                Ok(())
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                let values = match &value {
                    Value::Tuple(_) | Value::List(_) => value.items().unwrap(),
                    Value::Tensor(t) => {
                        return Err(
                            self.err(target.span, format!("cannot unpack a tensor ({}) into several names", t.ty))
                        );
                    }
                    other => {
                        return Err(
                            self.err(target.span, format!("cannot unpack {} into several names", other.describe()))
                        );
                    }
                };
                let star = items.iter().position(|i| matches!(i.kind, ExprKind::Starred(_)));
                match star {
                    None => {
                        if values.len() != items.len() {
                            return Err(self.err(
                                target.span,
                                format!("cannot unpack {} values into {} names", values.len(), items.len()),
                            ));
                        }
                        for (t, v) in items.iter().zip(values) {
                            self.assign(t, v, false)?;
                        }
                    }
                    Some(k) => {
                        let after = items.len() - k - 1;
                        if values.len() < items.len() - 1 {
                            return Err(
                                self.err(target.span, format!("not enough values to unpack ({})", values.len()))
                            );
                        }
                        for (t, v) in items[..k].iter().zip(&values) {
                            self.assign(t, v.clone(), false)?;
                        }
                        let middle = values[k..values.len() - after].to_vec();
                        let ExprKind::Starred(inner) = &items[k].kind else { unreachable!() };
                        self.assign(inner, Value::List(std::rc::Rc::new(std::cell::RefCell::new(middle))), false)?;
                        for (t, v) in items[k + 1..].iter().zip(&values[values.len() - after..]) {
                            self.assign(t, v.clone(), false)?;
                        }
                    }
                }
                Ok(())
            }
            ExprKind::Attribute { value: obj, attr } => match self.eval(obj)? {
                Value::Instance(inst) => {
                    inst.set(&attr.name, value);
                    Ok(())
                }
                // A factory renaming the class it built (`Impl.__name__ = f"Scheduler({n})"`): the name only shows
                // when Python prints the class, which kernels never do; messages keep the `class` statement's name.
                Value::Class(_) if matches!(attr.name.as_str(), "__name__" | "__qualname__") => Ok(()),
                other => Err(self.err(target.span, format!("cannot set attributes of {}", other.type_name()))),
            },
            ExprKind::Subscript { value: obj, index } => {
                let o = match &obj.kind {
                    ExprKind::Attribute { value: base, attr } => {
                        let b = self.eval(base)?;
                        // A layout's lists (`layout.reg_bases`) are copies: an item written into one would be lost.
                        if matches!(b, Value::Layout(_)) {
                            return Err(self.err_hint(
                                target.span,
                                format!(
                                    "cannot assign items of a layout's `{}`: layouts are immutable here",
                                    attr.name
                                ),
                                "build a new layout from edited lists, e.g. `gl.DistributedLinearLayout(reg_bases, \
                                 lane_bases, warp_bases, block_bases, shape)`",
                            ));
                        }
                        self.get_attr(b, &attr.name, attr.span.to(obj.span))?
                    }
                    _ => self.eval(obj)?,
                };
                let i = self.eval(index)?;
                match (&o, i.as_int()) {
                    (Value::List(l), Some(i)) => {
                        let n = l.borrow().len() as i128;
                        let j = if i < 0 { i + n } else { i };
                        if !(0..n).contains(&j) {
                            return Err(self.err(target.span, "list assignment index out of range"));
                        }
                        l.borrow_mut()[j as usize] = value;
                        Ok(())
                    }
                    (Value::Dict(d), _) => {
                        crate::elab::expr::dict_insert(&mut d.borrow_mut(), i, value);
                        Ok(())
                    }
                    (Value::Tensor(_), _) => {
                        Err(self.err(target.span, "tensors are immutable: item assignment is not supported"))
                    }
                    _ => Err(self.err(target.span, format!("cannot assign items of {}", o.type_name()))),
                }
            }
            ExprKind::Starred(_) => Err(self.err(target.span, "a starred target must be inside a tuple")),
            _ => Err(self.err(target.span, "cannot assign to this expression")),
        }
    }

    /// A runtime `if`.
    fn runtime_if(
        &mut self,
        cond: Value<'a>,
        test: &'a Expr,
        body: &'a [Stmt],
        orelse: &'a [Stmt],
        rest: &[&'a Stmt],
        cont: Option<&[&'a Stmt]>,
    ) -> R<Flow<'a>> {
        let span = test.span;
        let c = self.condition(cond, span)?;
        if contains_return(body) || contains_return(orelse) {
            let then_r = self.func.new_region();
            let else_r = self.func.new_region();
            let snapshot = self.frame().vars.clone();
            let Some(cont) = cont else {
                return Err(self.err(span, "a `return` inside a runtime `if` is not supported inside a loop"));
            };
            // Both branches run to the end of the function and return.
            let tail: Vec<&'a Stmt> = rest.iter().chain(cont).copied().collect();
            let then_block: Vec<&'a Stmt> = body.iter().chain(tail.iter().copied()).collect();
            let else_block: Vec<&'a Stmt> = orelse.iter().chain(tail.iter().copied()).collect();
            let vt = self.in_region(then_r, |this| this.exec_block(&then_block, Some(&[])))?;
            self.frame().vars = snapshot.clone();
            let ve = self.in_region(else_r, |this| this.exec_block(&else_block, Some(&[])))?;
            self.frame().vars = snapshot;
            let returned = |f: Flow<'a>, this: &Self| match f {
                Flow::Return(v) => Ok(v),
                Flow::Normal => Ok(Value::None),
                Flow::Break(s) | Flow::Continue(s) => {
                    Err(this.err(s, "`break`/`continue` outside a compile-time loop"))
                }
            };
            let (vt, ve) = (returned(vt, self)?, returned(ve, self)?);
            if let Err(m) = vt.same_shape_as(&ve) {
                return Err(self.err(span, format!("the branches of this `if` return different types: {m}")));
            }
            let v = self.join_branches(c, then_r, else_r, &[vt], &[ve], span)?;
            return Ok(Flow::Return(v.into_iter().next().unwrap()));
        }
        let then_block: Vec<&'a Stmt> = body.iter().collect();
        let else_block: Vec<&'a Stmt> = orelse.iter().collect();
        self.branches(c, &then_block, &else_block, false, span)?;
        Ok(Flow::Normal)
    }

    /// Emits an `if` on `c` whose branches run `then_block` and `else_block`, yielding every variable either
    /// assigns that is defined after both, and the `break`/`continue` flags of the innermost loop. With
    /// `reset_skip`, `c` is "the rest of the loop body was not skipped": the then-branch starts unskipped.
    pub fn branches(
        &mut self,
        c: Tv,
        then_block: &[&'a Stmt],
        else_block: &[&'a Stmt],
        reset_skip: bool,
        span: Span,
    ) -> R<()> {
        let then_r = self.func.new_region();
        let else_r = self.func.new_region();
        let snapshot = self.frame().vars.clone();
        let mut names = Vec::new();
        for s in then_block.iter().chain(else_block) {
            assigned_names(std::slice::from_ref(*s), &mut names);
        }
        let ft = self.in_region(then_r, |this| {
            if reset_skip {
                this.known_skip(false);
            }
            this.exec_block(then_block, None)
        })?;
        self.no_jump(ft)?;
        let then_vars = std::mem::replace(&mut self.frame().vars, snapshot.clone());
        let fe = self.in_region(else_r, |this| {
            if reset_skip {
                this.known_skip(true);
            }
            this.exec_block(else_block, None)
        })?;
        self.no_jump(fe)?;
        let else_vars = std::mem::replace(&mut self.frame().vars, snapshot);
        let mut joined = Vec::new();
        let (mut tv, mut ev) = (Vec::new(), Vec::new());
        for n in names {
            let (Some(a), Some(b)) = (then_vars.get(&n), else_vars.get(&n)) else { continue };
            if let Err(m) = a.same_shape_as(b) {
                return Err(
                    self.err(span, format!("`{n}` has different types after the two branches of this `if`: {m}"))
                );
            }
            joined.push(n);
            tv.push(a.clone());
            ev.push(b.clone());
        }
        self.join_jump_flags(&then_vars, &else_vars, &mut joined, &mut tv, &mut ev, span)?;
        let values = self.join_branches(c, then_r, else_r, &tv, &ev, span)?;
        for (n, v) in joined.into_iter().zip(values) {
            if let Value::Tensor(t) = &v
                && !n.starts_with(crate::elab::scope::FLAG_PREFIX)
            {
                self.name_value(t, &n);
            }
            self.frame().vars.insert(n, v);
        }
        Ok(())
    }

    pub fn no_jump(&self, f: Flow<'a>) -> R<()> {
        match f {
            Flow::Normal | Flow::Return(_) => Ok(()),
            Flow::Break(s) | Flow::Continue(s) => Err(self.err(s, "`break`/`continue` outside a loop")),
        }
    }

    /// Ends both branch regions with yields of the runtime leaves of `tv` / `ev` and emits the `if` op; returns
    /// the joined values.
    fn join_branches(
        &mut self,
        c: Tv,
        then_r: tessel_tile::RegionId,
        else_r: tessel_tile::RegionId,
        tv: &[Value<'a>],
        ev: &[Value<'a>],
        span: Span,
    ) -> R<Vec<Value<'a>>> {
        let (mut lt, mut le) = (Vec::new(), Vec::new());
        tv.iter().for_each(|v| v.flatten(&mut lt));
        ev.iter().for_each(|v| v.flatten(&mut le));
        self.in_region(then_r, |this| this.emit(Op::Yield, &lt, vec![], span))?;
        self.in_region(else_r, |this| this.emit(Op::Yield, &le, vec![], span))?;
        let types: Vec<Type> = lt.iter().map(|t| t.ty.clone()).collect();
        let results = self.emit_with_regions(Op::If, &[c], types, &[then_r, else_r], span)?;
        let mut it = results.into_iter();
        Ok(tv.iter().map(|v| v.unflatten(&mut it)).collect())
    }

    fn exec_for(
        &mut self,
        target: &'a Expr,
        iter: &'a Expr,
        body: &'a [Stmt],
        orelse: &'a [Stmt],
        span: Span,
    ) -> R<Flow<'a>> {
        let it = self.eval(iter)?;
        let compile_time = self.frames.last().is_some_and(|f| f.compile_time_only);
        let runtime_range = match &it {
            Value::Range(r) if r.is_static => None,
            Value::Range(r) if r.is_python && compile_time => None,
            Value::Range(r) => Some(r.clone()),
            _ => None,
        };
        if let Some(r) = runtime_range {
            if !orelse.is_empty() {
                return Err(self.err(span, "`for ... else` is not supported on runtime loops"));
            }
            if contains_jump(body, true) {
                self.runtime_for_break(target, &r, body, iter.span)?;
            } else {
                self.runtime_for(target, &r, body, iter.span)?;
            }
            return Ok(Flow::Normal);
        }
        // Unrolled at compile time.
        let items = self.iterate(&it, iter.span)?;
        self.unrolled(target, items, body, orelse, span)
    }

    /// Variables a loop body carries: those it assigns that are defined before the loop.
    pub(crate) fn carried(&mut self, body: &'a [Stmt], exclude: Option<&str>) -> Vec<(String, Value<'a>)> {
        let mut names = Vec::new();
        assigned_names(body, &mut names);
        let vars = &self.frames.last().expect("frame").vars;
        names
            .into_iter()
            .filter(|n| Some(n.as_str()) != exclude)
            .filter_map(|n| vars.get(&n).map(|v| (n.clone(), v.clone())))
            .collect()
    }

    /// Checks the values at the end of a loop body against the loop-carried values and returns their leaves.
    pub(crate) fn loop_yields(&mut self, carried: &[(String, Value<'a>)], kind: &str, span: Span) -> R<Vec<Tv>> {
        let mut leaves = Vec::new();
        for (n, init) in carried {
            let Some(now) = self.frame().vars.get(n).cloned() else {
                return Err(self.err(span, format!("`{n}` is deleted inside the {kind} loop")));
            };
            if let Err(m) = init.same_shape_as(&now) {
                return Err(self.err_hint(
                    span,
                    format!("loop-carried variable `{n}` changes type inside the {kind} loop: {m} (before the loop, then after one iteration)"),
                    "a variable assigned in a loop must keep its type, shape and layout; cast it (`.to(...)`) or initialize it with the right type",
                ));
            }
            now.flatten(&mut leaves);
        }
        Ok(leaves)
    }

    fn runtime_for(&mut self, target: &'a Expr, r: &RangeVal<'a>, body: &'a [Stmt], span: Span) -> R<()> {
        let Some(iv_name) = target.as_name() else {
            return Err(self.err(target.span, "the target of a runtime `for` loop must be a single name"));
        };
        let (bounds, iv_ty, negative) = self.loop_bounds(r, span)?;
        let carried = self.carried(body, Some(iv_name));
        let mut inits = Vec::new();
        carried.iter().for_each(|(_, v)| v.flatten(&mut inits));
        let region = self.func.new_region();
        let iv = self.func.add_region_arg(region, Type::scalar(iv_ty), Some(iv_name.to_string()));
        let iv = Tv::new(iv, Type::scalar(iv_ty));
        let args = self.region_args(region, &carried);
        let snapshot = self.frame().vars.clone();
        let leaves = self.in_region(region, |this| {
            let iv_value = this.iv_value(&iv, &bounds, negative, span)?;
            this.frame().vars.insert(iv_name.to_string(), Value::Tensor(iv_value));
            this.bind_carried(&carried, &args);
            this.frame().runtime_loops += 1;
            this.push_jumps();
            let flow = this.exec_block(&body.iter().collect::<Vec<_>>(), None);
            this.pop_jumps();
            this.frame().runtime_loops -= 1;
            this.no_jump(flow?)?;
            let leaves = this.loop_yields(&carried, "`for`", span)?;
            this.emit(Op::Yield, &leaves, vec![], span)?;
            Ok(leaves)
        })?;
        let _ = leaves;
        self.frame().vars = snapshot;
        let operands: Vec<Tv> = bounds.iter().cloned().chain(inits.iter().cloned()).collect();
        let types: Vec<Type> = inits.iter().map(|t| t.ty.clone()).collect();
        let results = self.emit_with_regions(Op::For(r.attrs.clone()), &operands, types, &[region], span)?;
        self.rebind(&carried, results);
        Ok(())
    }

    /// The bounds of a runtime `for` (`lb`, `ub`, `step`, cast to one integer type), that type, and whether the
    /// range counts down (then the loop runs `lb..ub` over the swapped bounds, see [`Elab::iv_value`]).
    pub(crate) fn loop_bounds(&mut self, r: &RangeVal<'a>, span: Span) -> R<(Vec<Tv>, ScalarType, bool)> {
        let (mut lb, mut ub, mut step) = (r.start.clone(), r.end.clone(), r.step.clone());
        let negative = step.as_int().is_some_and(|s| s < 0);
        if negative {
            step = Value::Int(-step.as_int().unwrap());
            std::mem::swap(&mut lb, &mut ub);
        } else if step.as_int() == Some(0) {
            return Err(self.err(span, "range() step must not be zero"));
        }
        let mut bounds = Vec::new();
        for (v, what) in [(&lb, "lower bound"), (&ub, "upper bound"), (&step, "step")] {
            let t = self.to_tensor(v, span)?;
            match t.scalar() {
                Some(s) if s.is_int() && !t.is_block() => bounds.push(t),
                _ => {
                    return Err(
                        self.err(span, format!("the {what} of a `for` loop must be an integer scalar, got {}", t.ty))
                    );
                }
            }
        }
        let mut iv_ty = bounds[0].scalar().unwrap();
        for b in &bounds[1..] {
            iv_ty = integer_promote(iv_ty, b.scalar().unwrap()).map_err(|m| self.err(span, m))?;
        }
        let bounds = bounds.into_iter().map(|b| self.cast(b, Dtype::Scalar(iv_ty), span)).collect::<R<Vec<_>>>()?;
        Ok((bounds, iv_ty, negative))
    }

    /// The value of the loop variable for the induction variable `iv`.
    pub(crate) fn iv_value(&mut self, iv: &Tv, bounds: &[Tv], negative: bool, span: Span) -> R<Tv> {
        if negative {
            // range(hi, lo, -s) runs iv' = lo, lo+s, ... and uses hi - (iv' - lo) ... as Triton does.
            let d = self.arith(tessel_tile::ops::BinOp::Sub, bounds[1].clone(), iv.clone(), span)?;
            self.arith(tessel_tile::ops::BinOp::Add, d, bounds[0].clone(), span)
        } else {
            Ok(iv.clone())
        }
    }

    /// Adds region arguments for the leaves of the carried values; returns them.
    pub(crate) fn region_args(&mut self, region: tessel_tile::RegionId, carried: &[(String, Value<'a>)]) -> Vec<Tv> {
        let mut out = Vec::new();
        for (n, v) in carried {
            let mut leaves = Vec::new();
            v.flatten(&mut leaves);
            for l in leaves {
                let a = self.func.add_region_arg(region, l.ty.clone(), Some(n.clone()));
                out.push(Tv::new(a, l.ty));
            }
        }
        out
    }

    /// Binds the carried names to values rebuilt from `leaves`.
    pub(crate) fn bind_carried(&mut self, carried: &[(String, Value<'a>)], leaves: &[Tv]) {
        let mut it = leaves.iter().cloned();
        let rebuilt: HashMap<String, Value<'a>> =
            carried.iter().map(|(n, v)| (n.clone(), v.unflatten(&mut it))).collect();
        self.frame().vars.extend(rebuilt);
    }

    pub(crate) fn rebind(&mut self, carried: &[(String, Value<'a>)], results: Vec<Tv>) {
        for (t, (n, _)) in results.iter().zip(carried.iter().flat_map(|(n, v)| {
            let mut l = Vec::new();
            v.flatten(&mut l);
            l.into_iter().map(move |x| (n.clone(), x))
        })) {
            self.name_value(t, &n);
        }
        self.bind_carried(carried, &results);
    }

    fn exec_while(&mut self, test: &'a Expr, body: &'a [Stmt], span: Span) -> R<Flow<'a>> {
        if self.frames.last().is_some_and(|f| f.compile_time_only) {
            return self.unrolled_while(test, body, span);
        }
        if contains_jump(body, true) {
            self.runtime_while_break(test, body, span)?;
            return Ok(Flow::Normal);
        }
        let carried = self.carried(body, None);
        let mut inits = Vec::new();
        carried.iter().for_each(|(_, v)| v.flatten(&mut inits));
        let before = self.func.new_region();
        let after = self.func.new_region();
        let before_args = self.region_args(before, &carried);
        let after_args = self.region_args(after, &carried);
        let snapshot = self.frame().vars.clone();
        self.in_region(before, |this| {
            this.bind_carried(&carried, &before_args);
            let c = this.eval(test)?;
            let c = this.condition(c, test.span)?;
            let mut operands = vec![c];
            operands.extend(before_args.iter().cloned());
            this.emit(Op::Condition, &operands, vec![], test.span)?;
            Ok(())
        })?;
        self.frame().vars = snapshot.clone();
        self.in_region(after, |this| {
            this.bind_carried(&carried, &after_args);
            this.frame().runtime_loops += 1;
            this.push_jumps();
            let flow = this.exec_block(&body.iter().collect::<Vec<_>>(), None);
            this.pop_jumps();
            this.frame().runtime_loops -= 1;
            this.no_jump(flow?)?;
            let leaves = this.loop_yields(&carried, "`while`", span)?;
            this.emit(Op::Yield, &leaves, vec![], span)?;
            Ok(())
        })?;
        self.frame().vars = snapshot;
        let types: Vec<Type> = inits.iter().map(|t| t.ty.clone()).collect();
        let results = self.emit_with_regions(Op::While, &inits, types, &[before, after], span)?;
        self.rebind(&carried, results);
        Ok(Flow::Normal)
    }
}
