//! Calls: `@jit` functions are inlined (their parameters bound to the argument values, compile-time ones
//! staying compile-time), constexpr functions run at compile time, aggregate classes construct instances,
//! methods bind their receiver. Also the kernel's own entry: its signature from the specialization.

use std::cell::RefCell;
use std::rc::Rc;

use tessel_tile::ops::Op;
use tessel_tile::{Elem, Func, ScalarType, Type};

use crate::ast::{self, Param};
use crate::elab::args::{Arg, CallArgs};
use crate::elab::scope::{Frame, Imports};
use crate::elab::stmt::Flow;
use crate::elab::value::{ClassVal, FnKind, FuncVal, Instance, Tv, Value};
use crate::elab::{ArgSpec, ConstValue, Elab, PRELUDE_MODULE, R, Specialization, const_value};
use crate::span::Span;

/// How deep inlined calls may nest.
const MAX_DEPTH: usize = 64;

impl<'a> Elab<'a> {
    /// Calls any callable value.
    pub fn call_value(&mut self, callee: Value<'a>, args: CallArgs<'a>, span: Span) -> R<Value<'a>> {
        match callee {
            Value::Func(f) => self.call_function(f, None, args, span),
            Value::Builtin(b) => self.call_builtin(b, args),
            Value::Method(m) => {
                let (recv, name) = (m.0.clone(), m.1.clone());
                match &recv {
                    Value::Instance(inst) => {
                        let f = inst.class.methods[&name].clone();
                        self.call_function(f, Some(recv.clone()), args, span)
                    }
                    _ => self.call_method(recv, &name, args, span),
                }
            }
            Value::Class(c) => self.construct(c, args, span),
            Value::Dtype(d) => Err(self.err(span, format!("dtype `{d}` is not callable; use `x.to({d})` to convert"))),
            // A name bound to something of a module the compiler has no source for (`h` of
            // `from pkg.utils import helper as h`, `pkg.utils` not given).
            Value::Module(path) if !self.is_module(&path) => Err(self.host_side(&path, span)),
            other => Err(self.err(span, format!("{} is not callable", other.type_name()))),
        }
    }

    /// Calls a user function (with `receiver` as its first argument for methods).
    pub fn call_function(
        &mut self,
        f: Rc<FuncVal<'a>>,
        receiver: Option<Value<'a>>,
        mut args: CallArgs<'a>,
        span: Span,
    ) -> R<Value<'a>> {
        if self.frames.len() > MAX_DEPTH {
            return Err(self.err(span, format!("calls nest more than {MAX_DEPTH} deep (recursion is not supported)")));
        }
        if let Some(r) = receiver {
            args.pos.insert(0, Arg::new(r, span));
        }
        let name = f.def.name.name.clone();
        let caller_module = self.cur_module();
        let bound = self.bind_params(&f, args, span)?;
        // Compile-time code stays compile-time: a jit function called from a constexpr function cannot emit IR.
        let compile_time = f.kind == FnKind::ConstexprFn || self.frames.last().is_some_and(|fr| fr.compile_time_only);
        let mut frame = Frame::new(f.module, &name, compile_time);
        frame.env = f.env.clone();
        for (p, v, constexpr) in bound {
            if let Value::Tensor(t) = &v
                && f.module != PRELUDE_MODULE
            {
                self.name_value(t, &p);
            }
            if constexpr {
                frame.constexpr_names.insert(p.clone());
            }
            frame.vars.insert(p, v);
        }
        let saved_loc = self.loc_override;
        if f.module == PRELUDE_MODULE && caller_module != PRELUDE_MODULE && self.loc_override.is_none() {
            self.loc_override = Some(span);
        }
        self.frames.push(frame);
        let body: Vec<&'a ast::Stmt> = f.def.body.iter().collect();
        let result = self.exec_block(&body, Some(&[]));
        self.frames.pop();
        self.loc_override = saved_loc;
        let flow = match result {
            Ok(flow) => flow,
            Err(mut e) => {
                if e.module == PRELUDE_MODULE && caller_module != PRELUDE_MODULE {
                    // Point at the user's call, not into the prelude's source.
                    let mut d = crate::diag::Diagnostic::error(e.diag.message.clone(), span);
                    d.hint = e.diag.hint.clone();
                    d.notes = e.diag.notes.clone();
                    d.notes.push(format!("raised inside the library function `{name}`"));
                    e = Box::new(crate::elab::ElabError { diag: d, module: caller_module });
                }
                return Err(e);
            }
        };
        let value = match flow {
            Flow::Return(v) => v,
            Flow::Normal => Value::None,
            Flow::Break(s) | Flow::Continue(s) => {
                return Err(self.err(s, "`break`/`continue` outside a loop"));
            }
        };
        if compile_time {
            return Ok(value);
        }
        // A jit function's returned Python numbers become tensors, as in Triton.
        self.decay(value, span)
    }

    fn decay(&mut self, v: Value<'a>, span: Span) -> R<Value<'a>> {
        match v {
            v if v.is_number() => Ok(Value::Tensor(self.to_tensor(&v, span)?)),
            Value::Tuple(items) => {
                let items = items.iter().map(|x| self.decay(x.clone(), span)).collect::<R<Vec<_>>>()?;
                Ok(Value::tuple(items))
            }
            other => Ok(other),
        }
    }

    /// Binds call arguments to a function's parameters (Python's rules); returns (name, value, is constexpr).
    fn bind_params(&mut self, f: &FuncVal<'a>, args: CallArgs<'a>, span: Span) -> R<Vec<(String, Value<'a>, bool)>> {
        let def = f.def;
        let name = &def.name.name;
        let imports = &self.modules[f.module].imports;
        let params = &def.params;
        let positional: Vec<&'a Param> = params.posonly.iter().chain(&params.args).collect();
        let mut slots: Vec<Option<Arg<'a>>> = vec![None; positional.len() + params.kwonly.len()];
        let all: Vec<&'a Param> = positional.iter().copied().chain(&params.kwonly).collect();
        let constexpr: Vec<bool> =
            all.iter().map(|p| p.annotation.as_ref().is_some_and(|a| imports.is_constexpr_annotation(a))).collect();
        let mut varargs = Vec::new();
        let n_pos = args.pos.len();
        for (i, a) in args.pos.into_iter().enumerate() {
            if i < positional.len() {
                slots[i] = Some(a);
            } else if params.vararg.is_some() {
                varargs.push(a.value);
            } else {
                return Err(self.err(
                    a.span,
                    format!("`{name}()` takes {} positional arguments but {n_pos} were given", positional.len()),
                ));
            }
        }
        let mut kwargs = Vec::new();
        for (k, a) in args.kw {
            match all.iter().position(|p| p.name.name == k) {
                Some(i) if i < params.posonly.len() => {
                    return Err(self.err(a.span, format!("`{name}()`: `{k}` is positional-only")));
                }
                Some(i) if slots[i].is_some() => {
                    return Err(self.err(a.span, format!("`{name}()` got multiple values for argument `{k}`")));
                }
                Some(i) => slots[i] = Some(a),
                None if params.kwarg.is_some() => kwargs.push((Value::str(&k), a.value)),
                None => {
                    let mut e = self.err(a.span, format!("`{name}()` got an unexpected keyword argument `{k}`"));
                    if let Some(best) = crate::elab::names::closest(&k, all.iter().map(|p| p.name.name.as_str())) {
                        e.diag = e.diag.with_hint(format!("did you mean `{best}`?"));
                    }
                    return Err(e);
                }
            }
        }
        let mut out = Vec::new();
        let mut missing = Vec::new();
        for (i, p) in all.iter().enumerate() {
            let value = match slots[i].take() {
                // As in Triton, the annotation of a called function's parameter does not make the argument
                // compile-time: a runtime value passed there stays a runtime value (Triton's 06 fused attention
                // passes `offs_m` and `N_CTX` so). Only the kernel's own constexpr parameters must be constants.
                Some(a) => a.value,
                None => match &p.default {
                    Some(d) => self.eval_default(f.module, name, d)?,
                    None => {
                        missing.push(format!("`{}`", p.name.name));
                        continue;
                    }
                },
            };
            let constexpr = constexpr[i] && !value.has_runtime();
            out.push((p.name.name.clone(), value, constexpr));
        }
        if !missing.is_empty() {
            let s = if missing.len() == 1 { "" } else { "s" };
            return Err(self.err(
                span,
                format!("`{name}()` is missing {} required argument{s}: {}", missing.len(), missing.join(", ")),
            ));
        }
        if let Some(v) = &params.vararg {
            out.push((v.name.name.clone(), Value::tuple(varargs), false));
        }
        if let Some(k) = &params.kwarg {
            out.push((k.name.name.clone(), Value::Dict(Rc::new(RefCell::new(kwargs))), false));
        }
        Ok(out)
    }

    /// A parameter default, evaluated at compile time in the function's module.
    fn eval_default(&mut self, module: usize, fname: &str, d: &'a ast::Expr) -> R<Value<'a>> {
        self.frames.push(Frame::new(module, fname, true));
        let v = self.eval(d);
        self.frames.pop();
        v
    }

    /// `Class(args)`: runs `__init__` on a fresh instance, or fills the fields in order.
    fn construct(&mut self, c: Rc<ClassVal<'a>>, args: CallArgs<'a>, span: Span) -> R<Value<'a>> {
        let inst = Rc::new(Instance { class: c.clone(), fields: RefCell::new(Vec::new()) });
        let value = Value::Instance(inst.clone());
        if let Some(init) = c.methods.get("__init__") {
            self.call_function(init.clone(), Some(value.clone()), args, span)?;
            return Ok(value);
        }
        let cname = &c.def.name.name;
        if args.pos.len() > c.fields.len() {
            return Err(self.err(
                span,
                format!("`{cname}` has {} fields but {} arguments were given", c.fields.len(), args.pos.len()),
            ));
        }
        let mut vals: Vec<Option<Value<'a>>> = vec![None; c.fields.len()];
        for (i, a) in args.pos.into_iter().enumerate() {
            vals[i] = Some(a.value);
        }
        for (k, a) in args.kw {
            match c.fields.iter().position(|f| *f == k) {
                Some(i) => vals[i] = Some(a.value),
                None => return Err(self.err(a.span, format!("`{cname}` has no field `{k}`"))),
            }
        }
        for (f, v) in c.fields.iter().zip(vals) {
            match v {
                Some(v) => inst.set(f, v),
                None => return Err(self.err(span, format!("`{cname}(...)` is missing the field `{f}`"))),
            }
        }
        Ok(value)
    }
}

/// Sets up the kernel: its runtime arguments become the function's arguments, constexpr ones compile-time
/// values; then elaborates the body.
///
/// A pointer or scalar parameter is one argument of the IR function, named after it. A tensor descriptor
/// parameter ([`ArgSpec::TensorDesc`]) is `1 + 2 * rank` arguments, `NAME_base: ptr<elem>`,
/// `NAME_shape0..: i32`, `NAME_stride0..: i64` (Triton's flattening of a host `TensorDescriptor`), from which a
/// `make_tensor_desc` op at entry re-forms the descriptor that the parameter's name is bound to. Launchers find
/// how many IR arguments each parameter took with [`ArgSpec::ir_args`].
pub fn bind_kernel<'a>(
    elab: &mut Elab<'a>,
    def: &'a ast::FunctionDef,
    imports: &Imports,
    spec: &Specialization,
) -> R<()> {
    let name = def.name.name.clone();
    let params = &def.params;
    if let Some(p) = params.vararg.as_ref().or(params.kwarg.as_ref()) {
        return Err(elab.err(p.span, "kernels cannot take `*args` or `**kwargs`"));
    }
    let all: Vec<&'a Param> = params.posonly.iter().chain(&params.args).chain(&params.kwonly).collect();
    if spec.args.len() > all.len() {
        return Err(elab.err(
            def.name.span,
            format!(
                "`{name}` takes {} parameters, but the specialization gives {} arguments",
                all.len(),
                spec.args.len()
            ),
        ));
    }
    // Per runtime parameter: its index and the (name, type) of each IR argument it takes.
    let mut runtime: Vec<(usize, Vec<(String, Type)>)> = Vec::new();
    for (i, p) in all.iter().enumerate() {
        let pname = &p.name.name;
        let (shown, ir_args) = match spec.args.get(i) {
            Some(ArgSpec::Pointer(s, _)) => (Type::ptr(*s), vec![(pname.clone(), Type::ptr(*s))]),
            Some(ArgSpec::Int(s, _)) => {
                if !s.is_int() {
                    return Err(elab.err(p.span, format!("parameter `{pname}`: {s} is not an integer type")));
                }
                (Type::scalar(*s), vec![(pname.clone(), Type::scalar(*s))])
            }
            Some(ArgSpec::Float(s)) => {
                if !s.is_float() {
                    return Err(elab.err(p.span, format!("parameter `{pname}`: {s} is not a float type")));
                }
                (Type::scalar(*s), vec![(pname.clone(), Type::scalar(*s))])
            }
            Some(ArgSpec::TensorDesc { elem, block_shape, padding_nan, layout }) => {
                for (d, &b) in block_shape.iter().enumerate() {
                    elab.check_pow2(b as i128, &format!("block_shape[{d}] of descriptor `{pname}`"), p.span)?;
                }
                elab.check_desc_block(*elem, block_shape, p.span)?;
                if let Some(l) = layout
                    && let Err(e) = tessel_tile::tma::block_in(*elem, block_shape, Some(l))
                {
                    return Err(elab.err(p.span, format!("descriptor `{pname}`: {e}")));
                }
                if *padding_nan && !elem.is_float() {
                    return Err(elab.err(
                        p.span,
                        format!("descriptor `{pname}`: NaN padding needs float elements, got {}", elem.triton_name()),
                    ));
                }
                let rank = block_shape.len();
                let mut ir_args = vec![(format!("{pname}_base"), Type::ptr(*elem))];
                ir_args.extend((0..rank).map(|d| (format!("{pname}_shape{d}"), Type::scalar(ScalarType::I32))));
                ir_args.extend((0..rank).map(|d| (format!("{pname}_stride{d}"), Type::scalar(ScalarType::I64))));
                (Type::TensorDesc { elem: *elem, block_shape: block_shape.as_slice().into() }, ir_args)
            }
            Some(ArgSpec::TensorDescIm2col { elem, block_shape, rank, padding_nan }) => {
                let r = *rank as usize;
                if !(3..=5).contains(&r) || block_shape.len() != 2 {
                    return Err(elab.err(
                        p.span,
                        format!(
                            "im2col descriptor `{pname}`: the tensor has rank 3 to 5 (got {r}) and the block is \
                             [pixels, channels] (got {block_shape:?})"
                        ),
                    ));
                }
                for (d, &b) in block_shape.iter().enumerate() {
                    elab.check_pow2(b as i128, &format!("block_shape[{d}] of descriptor `{pname}`"), p.span)?;
                }
                elab.check_desc_block(*elem, block_shape, p.span)?;
                if *padding_nan && !elem.is_float() {
                    return Err(elab.err(
                        p.span,
                        format!("descriptor `{pname}`: NaN padding needs float elements, got {}", elem.triton_name()),
                    ));
                }
                let i32s = |what: &str, n: usize| {
                    (0..n).map(|d| (format!("{pname}_{what}{d}"), Type::scalar(ScalarType::I32))).collect::<Vec<_>>()
                };
                let mut ir_args = vec![(format!("{pname}_base"), Type::ptr(*elem))];
                ir_args.extend(i32s("shape", r));
                ir_args.extend((0..r).map(|d| (format!("{pname}_stride{d}"), Type::scalar(ScalarType::I64))));
                ir_args.extend(i32s("lower", r - 2));
                ir_args.extend(i32s("upper", r - 2));
                ir_args.extend(i32s("element_stride", r));
                (Type::TensorDesc { elem: *elem, block_shape: block_shape.as_slice().into() }, ir_args)
            }
            _ => continue,
        };
        if p.annotation.as_ref().is_some_and(|a| imports.is_constexpr_annotation(a)) {
            return Err(elab.err_hint(
                p.span,
                format!(
                    "parameter `{pname}` is declared tl.constexpr, but the specialization makes it a runtime {shown}"
                ),
                "pass a compile-time value for it",
            ));
        }
        runtime.push((i, ir_args));
    }
    let ir_args = runtime.iter().flat_map(|(_, a)| a.iter().map(|(n, t)| (Some(n.clone()), t.clone())));
    elab.func = Func::new(name.clone(), ir_args.collect::<Vec<_>>());
    elab.func.config = spec.config;
    elab.regions.push(elab.func.body);
    elab.frames.push(Frame::new(crate::elab::USER_MODULE, &name, false));
    let args: Vec<_> = elab.func.args().to_vec();
    let mut args = args.into_iter();
    let mut runtime = runtime.into_iter().peekable();
    for (i, p) in all.iter().enumerate() {
        let pname = p.name.name.clone();
        let constexpr = p.annotation.as_ref().is_some_and(|a| imports.is_constexpr_annotation(a));
        let value = match runtime.next_if(|(j, _)| *j == i) {
            Some((_, ir_args)) => {
                let vals: Vec<Tv> = ir_args.into_iter().map(|(_, ty)| Tv::new(args.next().unwrap(), ty)).collect();
                match &spec.args[i] {
                    ArgSpec::TensorDesc { elem, block_shape, padding_nan, layout } => {
                        // Triton's host descriptor guarantees a 16-byte aligned base; record it, then re-form the
                        // descriptor so every descriptor code path (and `desc.shape`) sees one kind of value.
                        let mut operands = vals;
                        let ty = operands[0].ty.clone();
                        operands[0] = elab.emit1(Op::MultipleOf(vec![16]), &operands[..1], ty, p.span)?;
                        let op = Op::MakeTensorDesc {
                            rank: block_shape.len() as u32,
                            padding: if *padding_nan { "nan".into() } else { String::new() },
                            layout: layout.clone(),
                        };
                        let ty = Type::TensorDesc { elem: *elem, block_shape: block_shape.as_slice().into() };
                        let d = elab.emit1(op, &operands, ty, p.span)?;
                        elab.name_value(&d, &pname);
                        Value::Tensor(d)
                    }
                    ArgSpec::TensorDescIm2col { elem, block_shape, rank, padding_nan } => {
                        let mut operands = vals;
                        let ty = operands[0].ty.clone();
                        operands[0] = elab.emit1(Op::MultipleOf(vec![16]), &operands[..1], ty, p.span)?;
                        let op = Op::MakeTensorDescIm2col {
                            rank: *rank,
                            padding: if *padding_nan { "nan".into() } else { String::new() },
                        };
                        let ty = Type::TensorDesc { elem: *elem, block_shape: block_shape.as_slice().into() };
                        let d = elab.emit1(op, &operands, ty, p.span)?;
                        elab.name_value(&d, &pname);
                        Value::Tensor(d)
                    }
                    a => {
                        let t = vals.into_iter().next().unwrap();
                        if matches!(a, ArgSpec::Pointer(_, true) | ArgSpec::Int(_, true)) {
                            // The launcher guarantees 16-divisibility: record it for axis analysis.
                            let h =
                                elab.emit1(Op::MultipleOf(vec![16]), std::slice::from_ref(&t), t.ty.clone(), p.span)?;
                            elab.name_value(&h, &pname);
                            Value::Tensor(h)
                        } else {
                            Value::Tensor(t)
                        }
                    }
                }
            }
            None => match (spec.args.get(i), &p.default) {
                (Some(ArgSpec::Constexpr(c)), _) => match const_value(c) {
                    Some(v) => v,
                    None => const_expr(elab, i, c, p, &name)?,
                },
                (None, Some(d)) => {
                    elab.frames.push(Frame::new(crate::elab::USER_MODULE, &name, true));
                    let v = elab.eval(d);
                    elab.frames.pop();
                    v?
                }
                (None, None) => {
                    return Err(elab.err(p.span, format!("the specialization gives no value for parameter `{pname}`")));
                }
                (Some(_), _) => unreachable!("runtime arguments are handled above"),
            },
        };
        if constexpr {
            elab.frame().constexpr_names.insert(pname.clone());
        }
        elab.frame().vars.insert(pname, value);
    }
    let body: Vec<&'a ast::Stmt> = def.body.iter().collect();
    let flow = elab.exec_block(&body, Some(&[]))?;
    match flow {
        Flow::Return(Value::None) | Flow::Normal => {}
        Flow::Return(v) => {
            return Err(
                elab.err(def.name.span, format!("a kernel cannot return a value (it returns {})", v.type_name()))
            );
        }
        Flow::Break(s) | Flow::Continue(s) => return Err(elab.err(s, "`break`/`continue` outside a loop")),
    }
    elab.frames.pop();
    elab.regions.pop();
    elab.finish_kernel(&name);
    let _ = Elem::is_ptr;
    Ok(())
}

/// Evaluates the [`ConstValue::Expr`] argument of parameter `i` in the kernel's module, as a default value is; a
/// Gluon layout in `tessel layout`'s spelling that is not Python in scope (`BlockedLayout(...)` where the module
/// imports `gl`) binds through the layout parser. An error is reported at the parameter, naming the constant.
fn const_expr<'a>(elab: &mut Elab<'a>, i: usize, c: &ConstValue, p: &Param, kernel: &str) -> R<Value<'a>> {
    let src = match c {
        ConstValue::Expr(src) => src.as_str(),
        _ => "(a tuple)",
    };
    let wrap = |elab: &Elab<'a>, message: &str| {
        elab.err(p.name.span, format!("the constant `{}={src}` does not evaluate: {message}", p.name.name))
    };
    let Some(expr) = elab.const_exprs.get(i).copied().flatten() else {
        return Err(wrap(elab, "an expression may be a whole constant, not an element of a tuple"));
    };
    elab.frames.push(Frame::new(crate::elab::USER_MODULE, kernel, true));
    let v = elab.eval(expr);
    elab.frames.pop();
    match v {
        Ok(v) => Ok(v),
        Err(e) => match tessel_layouts::expr::parse_layout(src) {
            Ok(layout) => Ok(Value::Layout(Rc::new(layout))),
            Err(_) => Err(wrap(elab, &e.diag.message)),
        },
    }
}
