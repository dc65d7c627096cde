//! Expressions: names, constants, attributes, subscripts, calls, operators, conditional expressions, displays,
//! comprehensions and f-strings. Compile-time operands give compile-time results; runtime ones emit IR.

use std::cell::RefCell;
use std::rc::Rc;

use tessel_tile::ops::Op;
use tessel_tile::{ScalarType, Type};

use crate::ast::{BoolOpKind, Constant, Expr, ExprKind, FStringPart, Keyword};
use crate::elab::args::{Arg, CallArgs};
use crate::elab::names::TL;
use crate::elab::names::closest;
use crate::elab::value::{BlockLayout, BlockType, Dtype, Tv, Value, py_str, repr};
use crate::elab::{Elab, R};
use crate::span::Span;

/// The most expressions and statements one elaboration evaluates: compile-time loops nest (`static_range` in `static_range`, a
/// comprehension over two ranges), and each is bounded alone; this bounds them together. A real kernel takes
/// some thousands.
pub const MAX_STEPS: u64 = 10_000_000;

impl<'a> Elab<'a> {
    /// Evaluates an expression.
    pub fn eval(&mut self, e: &'a Expr) -> R<Value<'a>> {
        self.step(e.span)?;
        crate::deep(|| self.eval_inner(e))
    }

    /// Counts one expression or statement against [`MAX_STEPS`].
    pub fn step(&mut self, span: Span) -> R<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.err_hint(
                span,
                format!("elaboration took more than {MAX_STEPS} steps (expressions and statements), stopped here"),
                "a compile-time loop (static_range, a comprehension, a constexpr while) runs too long",
            ));
        }
        Ok(())
    }

    fn eval_inner(&mut self, e: &'a Expr) -> R<Value<'a>> {
        let span = e.span;
        match &e.kind {
            ExprKind::Name(n) => self.lookup(n, span),
            ExprKind::Constant(c) => Ok(match c {
                Constant::None => Value::None,
                Constant::Bool(b) => Value::Bool(*b),
                Constant::Int(i) => {
                    Value::Int(i128::try_from(*i).map_err(|_| self.err(span, "integer literal too large"))?)
                }
                Constant::Float(f) => Value::Float(*f),
                Constant::Str(s) => Value::str(s),
                Constant::Bytes(_) => return Err(self.err(span, "bytes literals are not supported in kernels")),
                Constant::Ellipsis => Value::Ellipsis,
            }),
            ExprKind::Attribute { value, attr } => {
                let v = self.eval(value)?;
                self.get_attr(v, &attr.name, attr.span.to(span))
            }
            ExprKind::Subscript { value, index } => {
                let v = self.eval(value)?;
                let i = self.eval(index)?;
                self.subscript(v, i, span)
            }
            ExprKind::Slice { lower, upper, step } => {
                let mut part = |x: &'a Option<Box<Expr>>| -> R<Option<i128>> {
                    match x {
                        None => Ok(None),
                        Some(x) => match self.eval(x)? {
                            Value::None => Ok(None),
                            v => v.as_int().map(Some).ok_or_else(|| {
                                self.err(
                                    x.span,
                                    format!("slice indices must be compile-time integers, got {}", v.describe()),
                                )
                            }),
                        },
                    }
                };
                Ok(Value::Slice(part(lower)?, part(upper)?, part(step)?))
            }
            ExprKind::Call { func, args, keywords } => {
                let f = self.eval(func)?;
                let args = self.eval_args(args, keywords, span)?;
                self.call_value(f, args, span)
            }
            ExprKind::BinOp { left, op, right } => {
                let a = self.eval(left)?;
                let b = self.eval(right)?;
                self.binop(*op, a, b, span)
            }
            ExprKind::UnaryOp { op, operand } => {
                let v = self.eval(operand)?;
                self.unary(*op, v, span)
            }
            ExprKind::BoolOp { op, values } => {
                let mut acc = self.eval(&values[0])?;
                for v in &values[1..] {
                    match acc.truth() {
                        Some(t) => {
                            let short = if *op == BoolOpKind::And { !t } else { t };
                            if short {
                                return Ok(acc);
                            }
                            acc = self.eval(v)?;
                        }
                        None => {
                            let rhs = self.eval(v)?;
                            acc = self.logical(*op == BoolOpKind::And, acc, rhs, span)?;
                        }
                    }
                }
                Ok(acc)
            }
            ExprKind::Compare { left, ops, comparators } => {
                let mut lhs = self.eval(left)?;
                if ops.len() == 1 {
                    let rhs = self.eval(&comparators[0])?;
                    return self.compare(ops[0], lhs, rhs, span);
                }
                for (op, c) in ops.iter().zip(comparators) {
                    let rhs = self.eval(c)?;
                    if lhs.is_runtime() || rhs.is_runtime() {
                        return Err(self.err_hint(
                            span,
                            "chained comparisons are not supported on tensors",
                            "split the chain: `(a < b) & (b < c)`",
                        ));
                    }
                    if !self.py_compare(*op, &lhs, &rhs, span)?.truth().unwrap() {
                        return Ok(Value::Bool(false));
                    }
                    lhs = rhs;
                }
                Ok(Value::Bool(true))
            }
            ExprKind::IfExp { test, body, orelse } => {
                let cond = self.eval(test)?;
                match cond.truth() {
                    Some(true) => self.eval(body),
                    Some(false) => self.eval(orelse),
                    None => self.runtime_ifexp(cond, body, orelse, span),
                }
            }
            ExprKind::Lambda { .. } => {
                Err(self.err(span, "lambdas are not supported in kernels; define a @jit function"))
            }
            ExprKind::Yield(_) | ExprKind::YieldFrom(_) => Err(self.err_hint(
                span,
                "`yield` is not supported in kernels: a kernel is not a generator",
                "build a tuple or list and return it, or store the values",
            )),
            ExprKind::Tuple(items) => Ok(Value::tuple(self.eval_items(items)?)),
            ExprKind::List(items) => Ok(Value::List(Rc::new(RefCell::new(self.eval_items(items)?)))),
            ExprKind::Set(_) | ExprKind::SetComp { .. } => Err(self.err(span, "sets are not supported in kernels")),
            ExprKind::Dict(items) => {
                let mut out = Vec::new();
                for item in items {
                    match item {
                        crate::ast::DictItem::Pair { key, value } => {
                            let k = self.eval(key)?;
                            let v = self.eval(value)?;
                            dict_insert(&mut out, k, v);
                        }
                        crate::ast::DictItem::Spread(e) => match self.eval(e)? {
                            Value::Dict(d) => {
                                for (k, v) in d.borrow().iter() {
                                    dict_insert(&mut out, k.clone(), v.clone());
                                }
                            }
                            other => {
                                return Err(self.err(e.span, format!("`**` needs a dict, got {}", other.type_name())));
                            }
                        },
                    }
                }
                Ok(Value::Dict(Rc::new(RefCell::new(out))))
            }
            ExprKind::ListComp { elt, generators } | ExprKind::GeneratorExp { elt, generators } => {
                let mut out = Vec::new();
                self.comprehension(generators, 0, &mut |this| {
                    let v = this.eval(elt)?;
                    out.push(v);
                    Ok(())
                })?;
                Ok(Value::List(Rc::new(RefCell::new(out))))
            }
            ExprKind::DictComp { key, value, generators } => {
                let mut out = Vec::new();
                self.comprehension(generators, 0, &mut |this| {
                    let k = this.eval(key)?;
                    let v = this.eval(value)?;
                    dict_insert(&mut out, k, v);
                    Ok(())
                })?;
                Ok(Value::Dict(Rc::new(RefCell::new(out))))
            }
            ExprKind::Starred(_) => {
                Err(self.err(span, "`*` is only allowed in calls, displays and assignment targets"))
            }
            ExprKind::NamedExpr { target, value } => {
                let v = self.eval(value)?;
                self.frame().vars.insert(target.name.clone(), v.clone());
                Ok(v)
            }
            ExprKind::JoinedStr(parts) => {
                let mut out = String::new();
                self.fstring(parts, &mut out)?;
                Ok(Value::str(&out))
            }
        }
    }

    fn fstring(&mut self, parts: &'a [FStringPart], out: &mut String) -> R<()> {
        for p in parts {
            match p {
                FStringPart::Literal(s, _) => out.push_str(s),
                FStringPart::Field(f) => {
                    let v = self.eval(&f.value)?;
                    if v.has_runtime() {
                        return Err(self.err(
                            f.span,
                            format!(
                                "an f-string is formatted at compile time, but this is a runtime value ({})",
                                v.type_name()
                            ),
                        ));
                    }
                    if let Some(d) = &f.debug_text {
                        out.push_str(d);
                    }
                    let mut spec = String::new();
                    if let Some(s) = &f.format_spec {
                        self.fstring(s, &mut spec)?;
                    }
                    let text = if f.conversion == Some('r')
                        || (f.debug_text.is_some() && f.conversion.is_none() && spec.is_empty())
                    {
                        repr(&v)
                    } else {
                        format_spec(&v, &spec)
                            .ok_or_else(|| self.err(f.span, format!("unsupported format spec `{spec}`")))?
                    };
                    out.push_str(&text);
                }
            }
        }
        Ok(())
    }

    /// Items of a tuple/list display, expanding `*xs`.
    fn eval_items(&mut self, items: &'a [Expr]) -> R<Vec<Value<'a>>> {
        let mut out = Vec::new();
        for item in items {
            if let ExprKind::Starred(inner) = &item.kind {
                let v = self.eval(inner)?;
                out.extend(self.iterate(&v, inner.span)?);
            } else {
                out.push(self.eval(item)?);
            }
        }
        Ok(out)
    }

    /// Evaluates the arguments of a call.
    pub fn eval_args(&mut self, args: &'a [Expr], keywords: &'a [Keyword], span: Span) -> R<CallArgs<'a>> {
        let mut out = CallArgs { pos: Vec::new(), kw: Vec::new(), span };
        for a in args {
            if let ExprKind::Starred(inner) = &a.kind {
                let v = self.eval(inner)?;
                for item in self.iterate(&v, inner.span)? {
                    out.pos.push(Arg::new(item, inner.span));
                }
            } else {
                let value = self.eval(a)?;
                out.pos.push(Arg { value, span: a.span, expr: Some(a) });
            }
        }
        for k in keywords {
            let value = self.eval(&k.value)?;
            match &k.arg {
                Some(name) => out.kw.push((name.name.clone(), Arg { value, span: k.span, expr: Some(&k.value) })),
                None => match value {
                    Value::Dict(d) => {
                        for (key, v) in d.borrow().iter() {
                            let Value::Str(key) = key else {
                                return Err(self.err(k.span, "keywords must be strings"));
                            };
                            out.kw.push((key.to_string(), Arg::new(v.clone(), k.span)));
                        }
                    }
                    other => return Err(self.err(k.span, format!("`**` needs a dict, got {}", other.type_name()))),
                },
            }
        }
        Ok(out)
    }

    /// The items a compile-time iterable yields.
    pub fn iterate(&mut self, v: &Value<'a>, span: Span) -> R<Vec<Value<'a>>> {
        match v {
            Value::Tuple(_) | Value::List(_) => Ok(v.items().unwrap()),
            Value::Str(s) => Ok(s.chars().map(|c| Value::str(&c.to_string())).collect()),
            Value::Dict(d) => Ok(d.borrow().iter().map(|(k, _)| k.clone()).collect()),
            Value::Range(r) => {
                let (Some(a), Some(b), Some(c)) = (r.start.as_int(), r.end.as_int(), r.step.as_int()) else {
                    return Err(self.err(span, "this range has runtime bounds; it can only drive a `for` loop"));
                };
                if c == 0 {
                    return Err(self.err(span, "range() step must not be zero"));
                }
                let ceil = |x: i128, y: i128| (x + y - 1) / y;
                let n = if c > 0 { ceil((b - a).max(0), c) } else { ceil((a - b).max(0), -c) };
                if n > 1 << 16 {
                    return Err(self.err(span, format!("compile-time range of {n} iterations is too long to unroll")));
                }
                Ok((0..n).map(|i| Value::Int(a + i * c)).collect())
            }
            Value::Tensor(t) => Err(self.err(span, format!("cannot iterate over a tensor ({}) at compile time", t.ty))),
            other => Err(self.err(span, format!("{} is not iterable", other.type_name()))),
        }
    }

    fn comprehension(
        &mut self,
        gens: &'a [crate::ast::Comprehension],
        i: usize,
        body: &mut dyn FnMut(&mut Self) -> R<()>,
    ) -> R<()> {
        if i == gens.len() {
            return body(self);
        }
        let g = &gens[i];
        let iterable = self.eval(&g.iter)?;
        let mut names = Vec::new();
        crate::elab::blocks::assigned_names(
            &[crate::ast::Stmt::new(
                crate::ast::StmtKind::Assign { targets: vec![g.target.clone()], value: g.iter.clone() },
                g.span,
            )],
            &mut names,
        );
        let saved: Vec<(String, Option<Value<'a>>)> =
            names.iter().map(|n| (n.clone(), self.frame().vars.get(n).cloned())).collect();
        let items = self.iterate(&iterable, g.iter.span)?;
        let mut result = Ok(());
        'items: for item in items {
            if let Err(e) = self.assign(&g.target, item, false) {
                result = Err(e);
                break;
            }
            for cond in &g.ifs {
                let c = match self.eval(cond) {
                    Ok(c) => c,
                    Err(e) => {
                        result = Err(e);
                        break 'items;
                    }
                };
                match c.truth() {
                    Some(true) => {}
                    Some(false) => continue 'items,
                    None => {
                        result = Err(self.err(cond.span, "comprehension conditions must be compile-time values"));
                        break 'items;
                    }
                }
            }
            if let Err(e) = self.comprehension(gens, i + 1, body) {
                result = Err(e);
                break;
            }
        }
        for (n, v) in saved {
            match v {
                Some(v) => self.frame().vars.insert(n, v),
                None => self.frame().vars.remove(&n),
            };
        }
        result
    }

    /// `cond ? body : orelse` with a runtime condition: an `if` op yielding one value.
    fn runtime_ifexp(&mut self, cond: Value<'a>, body: &'a Expr, orelse: &'a Expr, span: Span) -> R<Value<'a>> {
        let c = self.condition(cond, span)?;
        let then_r = self.func.new_region();
        let else_r = self.func.new_region();
        let a = self.in_region(then_r, |this| {
            let v = this.eval(body)?;
            this.to_tensor(&v, body.span)
        })?;
        let b = self.in_region(else_r, |this| {
            let v = this.eval(orelse)?;
            this.to_tensor(&v, orelse.span)
        })?;
        if a.ty != b.ty {
            return Err(self.err(
                span,
                format!("the two sides of this conditional expression have different types: {} and {}", a.ty, b.ty),
            ));
        }
        self.in_region(then_r, |this| this.emit(Op::Yield, std::slice::from_ref(&a), vec![], span))?;
        self.in_region(else_r, |this| this.emit(Op::Yield, &[b], vec![], span))?;
        let out = self.emit_with_regions(Op::If, &[c], vec![a.ty.clone()], &[then_r, else_r], span)?;
        Ok(Value::Tensor(out[0].clone()))
    }

    /// A runtime branch condition: an `int1` scalar.
    pub fn condition(&mut self, cond: Value<'a>, span: Span) -> R<Tv> {
        let t = self.to_tensor(&cond, span)?;
        if t.is_block() {
            return Err(self.err(span, format!("a branch condition must be a scalar, got {}", t.ty)));
        }
        self.cast(t, Dtype::Scalar(ScalarType::I1), span)
    }

    /// `value.name`.
    pub fn get_attr(&mut self, v: Value<'a>, name: &str, span: Span) -> R<Value<'a>> {
        if let Some(x) = self.plugin_attr(&v, name, span)? {
            return Ok(x);
        }
        match &v {
            Value::Module(path) => {
                let path = path.to_string();
                self.module_attr(&path, name, span)
            }
            Value::UserModule(m) => self.set_module_attr(*m, name, span),
            Value::Tensor(t) => match (name, &t.ty) {
                // A list, as Triton's and Gluon's `block_shape` is (`[STAGES] + desc.block_shape` is a shape).
                ("block_shape", Type::TensorDesc { block_shape, .. }) => {
                    Ok(Value::List(Rc::new(RefCell::new(block_shape.iter().map(|&d| Value::Int(d as i128)).collect()))))
                }
                ("block_type", Type::TensorDesc { elem, block_shape }) => Ok(Value::BlockType(Rc::new(BlockType {
                    elem: Dtype::Scalar(*elem),
                    shape: block_shape.to_vec(),
                    layout: BlockLayout::None,
                }))),
                // The descriptor's type (`desc.type.block_type`, `desc.type.layout`): the descriptor answers both.
                ("type", Type::TensorDesc { .. }) => Ok(v.clone()),
                // As in Triton, the tensor's shape (`i32`) and strides (`i64`) are runtime values: the operands
                // of the `make_tensor_desc` that formed the descriptor (in the kernel, or at entry for a host one).
                ("shape" | "strides", Type::TensorDesc { block_shape, .. }) => {
                    let rank = block_shape.len();
                    if let Some(dims) = self.desc_dims.get(&t.v) {
                        let range = if name == "shape" { 0..rank } else { rank..2 * rank };
                        return Ok(Value::tuple(dims[range].iter().cloned().map(Value::Tensor).collect()));
                    }
                    let made = match self.func.value(t.v).def {
                        tessel_tile::ir::ValueDef::Result(o, 0) => Some(self.func.op(o)),
                        _ => None,
                    };
                    let Some(op) = made.filter(|op| matches!(op.op, tessel_tile::ops::Op::MakeTensorDesc { .. }))
                    else {
                        return Err(self.err_hint(
                            span,
                            format!("the {name} of this descriptor is not known here"),
                            "use the descriptor made by tl.make_tensor_descriptor or passed to the kernel directly",
                        ));
                    };
                    let range = if name == "shape" { 1..1 + rank } else { 1 + rank..1 + 2 * rank };
                    let vals: Vec<Value<'a>> = op.operands[range]
                        .iter()
                        .map(|&v| Value::Tensor(Tv::new(v, self.func.ty(v).clone())))
                        .collect();
                    Ok(Value::tuple(vals))
                }
                ("dtype", Type::TensorDesc { elem, .. }) => Ok(Value::Dtype(Dtype::Scalar(*elem))),
                ("load" | "store", Type::TensorDesc { .. }) => {
                    Ok(Value::Method(Rc::new((v.clone(), name.to_string()))))
                }
                ("shape", _) => Ok(Value::tuple(t.shape().iter().map(|&d| Value::Int(d as i128)).collect())),
                ("dtype", _) => Ok(Value::Dtype(t.dtype().expect("tensor"))),
                ("numel", _) => Ok(Value::Int(t.ty.numel() as i128)),
                ("ndim", _) => Ok(Value::Int(t.shape().len() as i128)),
                ("type", Type::Tensor { .. } | Type::Scalar(_)) => Ok(Value::Dtype(t.dtype().expect("tensor"))),
                ("T", _) => {
                    let args = CallArgs { pos: vec![Arg::new(v.clone(), span)], kw: vec![], span };
                    self.call_named(TL, "trans", args)
                }
                (m, _) if self.is_tensor_method(m) => Ok(Value::Method(Rc::new((v.clone(), name.to_string())))),
                _ => {
                    let mut e = self.err(span, format!("a tensor has no attribute `{name}`"));
                    let candidates = self.registry.method_names().chain(["shape", "dtype", "T", "numel"]);
                    if let Some(best) = closest(name, candidates) {
                        e.diag = e.diag.with_hint(format!("did you mean `.{best}`?"));
                    }
                    Err(e)
                }
            },
            Value::BlockType(bt) => {
                let numel: u64 = bt.shape.iter().map(|&d| d as u64).product();
                Ok(match (name, &bt.layout) {
                    ("shape", _) => Value::List(Rc::new(std::cell::RefCell::new(
                        bt.shape.iter().map(|&d| Value::Int(d as i128)).collect(),
                    ))),
                    ("element_ty" | "dtype" | "scalar", _) => Value::Dtype(bt.elem),
                    ("numel", _) => Value::Int(numel as i128),
                    ("nbytes", _) => {
                        let bits = bt.elem.elem().map_or(0, |e| e.bits()) as u64;
                        Value::Int((numel * bits / 8) as i128)
                    }
                    ("rank", _) => Value::Int(bt.shape.len() as i128),
                    // A distributed_type's layout; `gl.AutoLayout()` is `None` as a value.
                    ("layout", BlockLayout::Of(l)) => Value::Layout(l.clone()),
                    ("layout", BlockLayout::Auto) => Value::None,
                    _ => {
                        let (what, has) = match bt.layout {
                            BlockLayout::None => ("a block type", "a block type has"),
                            _ => ("a distributed type", "a distributed type has `layout`,"),
                        };
                        return Err(self.err_hint(
                            span,
                            format!("{what} has no attribute `{name}`"),
                            format!("{has} `shape`, `element_ty`, `scalar`, `nbytes`, `numel` and `rank`"),
                        ));
                    }
                })
            }
            Value::Instance(inst) => {
                if let Some(f) = inst.get(name) {
                    return Ok(f);
                }
                if inst.class.methods.contains_key(name) {
                    if inst.class.statics.iter().any(|s| s == name) {
                        return Ok(Value::Func(inst.class.methods[name].clone()));
                    }
                    return Ok(Value::Method(Rc::new((v.clone(), name.to_string()))));
                }
                let fields: Vec<String> = inst.fields.borrow().iter().map(|(k, _)| k.clone()).collect();
                let mut e = self.err(span, format!("`{}` has no field or method `{name}`", inst.class.def.name.name));
                let methods: Vec<&str> = inst.class.methods.keys().map(String::as_str).collect();
                if let Some(best) = closest(name, fields.iter().map(String::as_str).chain(methods)) {
                    e.diag = e.diag.with_hint(format!("did you mean `{best}`?"));
                }
                Err(e)
            }
            Value::Class(c) => match c.methods.get(name) {
                Some(m) => Ok(Value::Func(m.clone())),
                None => Err(self.err(span, format!("class `{}` has no method `{name}`", c.def.name.name))),
            },
            Value::Builtin(b) if b.name == "PropagateNan" => match name {
                "NONE" => Ok(Value::Int(0)),
                "ALL" => Ok(Value::Int(0xFFFF)),
                _ => Err(self.err(span, format!("`PropagateNan` has no member `{name}`"))),
            },
            Value::Dtype(d) => self
                .dtype_attr(*d, name, span)
                .map(|r| r.unwrap_or(Value::Method(Rc::new((v.clone(), name.to_string()))))),
            // `tmem_block.value` of a constexpr tuple parameter: a constexpr is its Python value here.
            Value::Str(_) | Value::Tuple(_) | Value::Layout(_) if name == "value" => Ok(v),
            Value::Str(_) | Value::List(_) | Value::Tuple(_) | Value::Dict(_) | Value::Layout(_) => {
                Ok(Value::Method(Rc::new((v.clone(), name.to_string()))))
            }
            Value::Int(_) if name == "bit_length" => Ok(Value::Method(Rc::new((v.clone(), name.to_string())))),
            // `tl.constexpr(x).value`: a constexpr is its Python value here.
            Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::None if name == "value" => Ok(v),
            other => Err(self.err(span, format!("{} has no attribute `{name}`", other.type_name()))),
        }
    }

    /// `value[index]`.
    pub fn subscript(&mut self, v: Value<'a>, index: Value<'a>, span: Span) -> R<Value<'a>> {
        match &v {
            Value::Tensor(t) => {
                let mut parts = match &index {
                    Value::Tuple(items) => items.as_ref().clone(),
                    other => vec![other.clone()],
                };
                // `...` stands for as many `:` as the dims the other indices do not name.
                let ellipses = parts.iter().filter(|p| matches!(p, Value::Ellipsis)).count();
                if ellipses > 1 {
                    return Err(self.err(span, "an index can only have a single ellipsis (`...`)"));
                }
                if let Some(at) = parts.iter().position(|p| matches!(p, Value::Ellipsis)) {
                    let named = parts.iter().filter(|p| !matches!(p, Value::None | Value::Ellipsis)).count();
                    let fill = t.shape().len().saturating_sub(named);
                    parts.splice(at..=at, std::iter::repeat_n(Value::Slice(None, None, None), fill));
                }
                let mut out = t.clone();
                for (dim, p) in parts.iter().enumerate() {
                    match p {
                        Value::None if dim <= out.shape().len() => out = self.expand_dims(out, dim, span)?,
                        Value::Slice(None, None, None) if dim < out.shape().len() => {}
                        Value::None | Value::Slice(None, None, None) => {
                            return Err(self.err(span, format!("too many indices for {}", t.ty)));
                        }
                        other => {
                            return Err(self.err_hint(
                                span,
                                format!("unsupported tensor index {}", other.describe()),
                                "tensors can only be indexed with `:`, `...` and `None` (as in `x[:, None]`)",
                            ));
                        }
                    }
                }
                Ok(Value::Tensor(out))
            }
            Value::Tuple(_) | Value::List(_) | Value::Str(_) => {
                let items: Vec<Value<'a>> = match &v {
                    Value::Str(s) => s.chars().map(|c| Value::str(&c.to_string())).collect(),
                    _ => v.items().unwrap(),
                };
                let n = items.len() as i128;
                match index {
                    Value::Slice(a, b, c) => {
                        let step = c.unwrap_or(1);
                        if step == 0 {
                            return Err(self.err(span, "slice step cannot be zero"));
                        }
                        let norm = |x: i128| if x < 0 { (x + n).max(if step < 0 { -1 } else { 0 }) } else { x.min(n) };
                        let (lo, hi) = if step > 0 {
                            (a.map_or(0, norm), b.map_or(n, norm))
                        } else {
                            (a.map_or(n - 1, |x| norm(x).min(n - 1)), b.map_or(-1, norm))
                        };
                        let mut out = Vec::new();
                        let mut i = lo;
                        while (step > 0 && i < hi) || (step < 0 && i > hi) {
                            out.push(items[i as usize].clone());
                            i += step;
                        }
                        Ok(match &v {
                            Value::Str(_) => Value::str(&out.iter().map(py_str).collect::<String>()),
                            Value::List(_) => Value::List(Rc::new(RefCell::new(out))),
                            _ => Value::tuple(out),
                        })
                    }
                    ref i if i.as_int().is_some() => {
                        let i = i.as_int().unwrap();
                        let j = if i < 0 { i + n } else { i };
                        if !(0..n).contains(&j) {
                            return Err(self.err(
                                span,
                                format!("index {i} is out of range for a {} of length {n}", v.type_name()),
                            ));
                        }
                        Ok(items[j as usize].clone())
                    }
                    Value::Tensor(t) => Err(self.err_hint(
                        span,
                        format!("a {} cannot be indexed with a runtime value ({})", v.type_name(), t.ty),
                        "indices into tuples must be compile-time constants",
                    )),
                    other => {
                        Err(self
                            .err(span, format!("{} indices must be integers, got {}", v.type_name(), other.describe())))
                    }
                }
            }
            Value::Dict(d) => {
                let found = d
                    .borrow()
                    .iter()
                    .find(|(k, _)| crate::elab::value::py_eq(k, &index) == Some(true))
                    .map(|(_, v)| v.clone());
                found.ok_or_else(|| self.err(span, format!("key {} not found", repr(&index))))
            }
            Value::Builtin(_) | Value::Dtype(_) | Value::Class(_) => Ok(v.clone()), // type annotations like tl.tensor[...]
            other => Err(self.err(span, format!("{} is not subscriptable", other.type_name()))),
        }
    }
}

/// Inserts or replaces a dict entry.
pub fn dict_insert<'a>(d: &mut Vec<(Value<'a>, Value<'a>)>, k: Value<'a>, v: Value<'a>) {
    match d.iter_mut().find(|(x, _)| crate::elab::value::py_eq(x, &k) == Some(true)) {
        Some(slot) => slot.1 = v,
        None => d.push((k, v)),
    }
}

/// Python's `format(value, spec)` for the common specs (`d`, `x`, `.3f`, `e`, widths).
pub fn format_spec(v: &Value, spec: &str) -> Option<String> {
    if spec.is_empty() {
        return Some(py_str(v));
    }
    let (width, rest) = {
        let digits: String = spec.chars().take_while(|c| c.is_ascii_digit()).collect();
        (digits.parse::<usize>().ok(), &spec[digits.len()..])
    };
    let body = match (rest, v) {
        ("", _) => py_str(v),
        ("d", x) if x.as_int().is_some() => x.as_int()?.to_string(),
        ("x", x) if x.as_int().is_some() => format!("{:x}", x.as_int()?),
        ("e", x) => format!("{:e}", x.as_f64()?),
        (p, x) if p.starts_with('.') && p.ends_with('f') => {
            let prec: usize = p[1..p.len() - 1].parse().ok()?;
            format!("{:.*}", prec, x.as_f64()?)
        }
        _ => return None,
    };
    Some(match width {
        Some(w) => format!("{body:>w$}"),
        None => body,
    })
}
