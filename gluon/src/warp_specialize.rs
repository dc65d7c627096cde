//! `gl.warp_specialize`: partitions of a kernel that run at the same time on disjoint warps.
//!
//! Two spellings bind to one op:
//! - `warp_specialize([(default_fn, args), (worker_fn, args), ...], worker_num_warps, worker_num_regs=None)`;
//! - the older `warp_specialize(default_args, default_partition, worker_args, worker_partitions,
//!   worker_num_warps, worker_num_regs)`.
//!
//! The default partition runs on the kernel's `num_warps` warps and may use anything in scope; its return value
//! is `warp_specialize`'s. Worker `i` runs on `worker_num_warps[i]` warps of its own: inside it, `gl.num_warps()`
//! is that count and its layouts are written for it. A worker is isolated from the kernel's other warps: the
//! runtime values in its arguments (scalars, pointers, shared-memory descriptors) become the op's captures,
//! and tensors (which live in the registers of the default partition's warps) cannot be passed to it. The
//! partitions synchronize through mbarriers the author writes.

use std::cell::RefCell;
use std::rc::Rc;

use tessel_lang::elab::builtins::{Arg, CallArgs};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{FuncVal, Instance, Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_lang::span::Span;
use tessel_tile::ops::{Op, WarpSpec};
use tessel_tile::{RegionId, Type};

use crate::GL;

/// At most 32 warps (1024 threads) in a CTA.
const MAX_WARPS: u32 = 32;

pub fn register(r: &mut Registry) {
    r.add(GL, "warp_specialize", Handler::Raw(warp_specialize));
}

/// One partition as written: its function, its arguments, and where the pair is.
struct Partition<'a> {
    func: Rc<FuncVal<'a>>,
    args: Vec<Value<'a>>,
    span: Span,
}

const NEW_SIG: &str = "functions_and_args, worker_num_warps, worker_num_regs=None";
const OLD_SIG: &str =
    "default_args, default_partition, worker_args, worker_partitions, worker_num_warps, worker_num_regs=None";

fn warp_specialize<'a>(e: &mut Elab<'a>, name: &'static str, args: CallArgs<'a>) -> R<Value<'a>> {
    let old = args.kw.iter().any(|(k, _)| k == "default_partition")
        || args.pos.get(1).is_some_and(|a| matches!(a.value, Value::Func(_)));
    let span = args.span;
    let (parts, warps, regs) = if old {
        let b = e.bind(name, OLD_SIG, args)?;
        let default = Partition {
            func: func_arg(e, b.req("default_partition"))?,
            args: items(e, b.req("default_args"), "default_args")?,
            span: b.req("default_partition").span,
        };
        let fns = items(e, b.req("worker_partitions"), "worker_partitions")?;
        let fargs = items(e, b.req("worker_args"), "worker_args")?;
        if fns.len() != fargs.len() {
            return Err(e.err(
                b.req("worker_args").span,
                format!("{} worker partitions but {} tuples of worker arguments", fns.len(), fargs.len()),
            ));
        }
        let mut parts = vec![default];
        let fn_spans = item_spans(b.req("worker_partitions"), fns.len());
        let arg_spans = item_spans(b.req("worker_args"), fargs.len());
        for ((f, a), (at, args_at)) in fns.into_iter().zip(fargs).zip(fn_spans.into_iter().zip(arg_spans)) {
            let func = func_arg(e, &Arg::new(f, at))?;
            parts.push(Partition { func, args: items(e, &Arg::new(a, args_at), "worker_args")?, span: at });
        }
        (parts, b.req("worker_num_warps").clone(), b.opt("worker_num_regs").cloned())
    } else {
        let b = e.bind(name, NEW_SIG, args)?;
        let list = b.req("functions_and_args");
        let mut parts = Vec::new();
        let all = items(e, list, "functions_and_args")?;
        let spans = item_spans(list, all.len());
        for (item, at) in all.into_iter().zip(spans) {
            let pair = match &item {
                Value::Tuple(t) if t.len() == 2 => t.clone(),
                other => {
                    return Err(e.err_hint(
                        at,
                        format!("each partition is a pair `(function, args)`, got {}", other.type_name()),
                        "write `gl.warp_specialize([(default_fn, (a, b)), (worker_fn, (c,))], [1], [24])`",
                    ));
                }
            };
            let func = func_arg(e, &Arg::new(pair[0].clone(), at))?;
            parts.push(Partition { func, args: items(e, &Arg::new(pair[1].clone(), at), "args")?, span: at });
        }
        if parts.len() < 2 {
            return Err(e.err(list.span, "warp_specialize needs the default partition and at least one worker"));
        }
        (parts, b.req("worker_num_warps").clone(), b.opt("worker_num_regs").cloned())
    };
    let workers = parts.len() - 1;
    let counted = counts(e, &warps, workers, "worker_num_warps")?;
    if let Some(&(w, at)) = counted.iter().find(|(w, _)| !w.is_power_of_two()) {
        return Err(e.err(at, format!("a worker's warp count must be a power of two, got {w}")));
    }
    let worker_num_warps: Vec<u32> = counted.iter().map(|&(w, _)| w).collect();
    let total = e.warps() + worker_num_warps.iter().sum::<u32>();
    if total > MAX_WARPS {
        return Err(e.err(
            warps.span,
            format!(
                "the partitions need {total} warps ({} for the default partition and {worker_num_warps:?}), more \
                 than the {MAX_WARPS} a CTA can have",
                e.warps()
            ),
        ));
    }
    let worker_num_regs = match &regs {
        None => Vec::new(),
        Some(a) => {
            let v = counts(e, a, workers, "worker_num_regs")?;
            if let Some(&(r, at)) = v.iter().find(|&&(r, _)| !(24..=256).contains(&r) || r % 8 != 0) {
                return Err(e.err_hint(
                    at,
                    format!("a worker's register count must be a multiple of 8 in 24..=256, got {r}"),
                    "setmaxnreg takes 24, 32, ..., 256 registers per thread",
                ));
            }
            v.into_iter().map(|(r, _)| r).collect()
        }
    };
    if e.regions.len() != 1 {
        return Err(e.err(
            span,
            "warp_specialize must be called at the top level of the kernel, not in a loop, branch or partition",
        ));
    }
    if e.func.all_ops().iter().any(|&o| matches!(e.func.op(o).op, Op::WarpSpecialize(_))) {
        return Err(e.err(span, "tessel supports one warp_specialize per kernel"));
    }
    // The captures: every runtime value in the workers' arguments, once each.
    let mut captures: Vec<Tv> = Vec::new();
    for p in &parts[1..] {
        let mut leaves = Vec::new();
        for a in &p.args {
            leaves_of(a, &mut leaves);
        }
        for t in leaves {
            if t.is_block() || matches!(t.ty, Type::Token) {
                return Err(e.err_hint(
                    p.span,
                    format!(
                        "worker partition `{}` is passed a value of type {}; workers run on warps of their own and \
                         take scalars, pointers and shared-memory descriptors",
                        p.func.def.name.name, t.ty
                    ),
                    "store the tensor to shared memory and pass the descriptor",
                ));
            }
            // A descriptor's shape and strides (runtime scalars) come along, for `desc.shape` in the worker.
            let dims = desc_dims(e, &t);
            for x in std::iter::once(t).chain(dims) {
                if !captures.iter().any(|c| c.v == x.v) {
                    captures.push(x);
                }
            }
        }
    }
    let default_region = e.func.new_region();
    let worker_regions: Vec<RegionId> = (0..workers).map(|_| e.func.new_region()).collect();
    // The default partition: the kernel's warps, everything in scope.
    let ret = e.in_region(default_region, |e| {
        let p = &parts[0];
        let v = call(e, p, p.args.clone())?;
        let mut out = Vec::new();
        leaves_of(&v, &mut out);
        e.emit(Op::Yield, &out, vec![], span)?;
        Ok(v)
    })?;
    for (i, &r) in worker_regions.iter().enumerate() {
        let args: Vec<Tv> = captures
            .iter()
            .map(|c| {
                let a = e.func.add_region_arg(r, c.ty.clone(), e.func.value(c.v).name.clone());
                Tv::new(a, c.ty.clone())
            })
            .collect();
        for (c, a) in captures.iter().zip(&args) {
            e.worker_args.insert(a.v, c.v);
            let dims: Vec<Tv> = desc_dims(e, c)
                .iter()
                .map(|d| args[captures.iter().position(|x| x.v == d.v).expect("captured with its descriptor")].clone())
                .collect();
            if !dims.is_empty() {
                e.desc_dims.insert(a.v, dims);
            }
        }
        let p = &parts[i + 1];
        let rebound: Vec<Value<'a>> = p.args.iter().map(|a| substitute(a, &captures, &args)).collect();
        e.in_partition(r, worker_num_warps[i], |e| {
            let v = call(e, p, rebound)?;
            if v.has_runtime() {
                return Err(
                    e.err(p.span, format!("worker partition `{}` must not return values", p.func.def.name.name))
                );
            }
            e.emit(Op::Yield, &[], vec![], span)
        })?;
    }
    let mut yielded = Vec::new();
    leaves_of(&ret, &mut yielded);
    let types: Vec<Type> = yielded.iter().map(|t| t.ty.clone()).collect();
    let mut regions = vec![default_region];
    regions.extend(&worker_regions);
    let spec = WarpSpec { worker_num_warps, worker_num_regs, ..Default::default() };
    let results = e.emit_with_regions(Op::WarpSpecialize(spec), &captures, types, &regions, span)?;
    for &r in &worker_regions {
        check_worker_tma(e, r)?;
    }
    Ok(substitute(&ret, &yielded, &results))
}

/// A worker's TMA copies use the descriptors it was passed; only host descriptors have a tensor map. While the
/// worker was elaborated its arguments were not yet the op's (`tma::descriptor` let them through), so the copies
/// are checked here, at their source.
fn check_worker_tma<'a>(e: &Elab<'a>, r: RegionId) -> R<()> {
    for &o in &e.func.region(r).ops {
        let data = e.func.op(o);
        let host = match data.op {
            Op::TmaLoadIm2col { .. } => tessel_tile::tma::host_im2col_base(&e.func, data.operands[0]).is_some(),
            Op::TmaLoad { .. } | Op::TmaStore | Op::TmaGather { .. } | Op::TmaScatter => {
                tessel_tile::tma::host_desc_base(&e.func, data.operands[0]).is_some()
            }
            _ => true,
        };
        if !host {
            let at = data.loc.map_or(Span::default(), |l| Span::new(l.start as usize, l.end as usize));
            return Err(e.err(at, crate::tma::NOT_HOST));
        }
        for &inner in &data.regions {
            check_worker_tma(e, inner)?;
        }
    }
    Ok(())
}

/// The shape then the strides of tensor descriptor `t` (the operands of the `make_tensor_desc` that made it),
/// empty for any other value.
fn desc_dims(e: &Elab, t: &Tv) -> Vec<Tv> {
    if !matches!(t.ty, Type::TensorDesc { .. }) {
        return Vec::new();
    }
    if let Some(d) = e.desc_dims.get(&t.v) {
        return d.clone();
    }
    match e.func.value(t.v).def {
        tessel_tile::ir::ValueDef::Result(o, 0) if matches!(e.func.op(o).op, Op::MakeTensorDesc { .. }) => {
            e.func.op(o).operands[1..].iter().map(|&v| Tv::new(v, e.func.ty(v).clone())).collect()
        }
        _ => Vec::new(),
    }
}

/// Where each item of a tuple or list argument is written (the whole argument's span when it is not a literal).
fn item_spans(a: &Arg, n: usize) -> Vec<Span> {
    use tessel_lang::ast::ExprKind;
    match a.expr.map(|x| &x.kind) {
        Some(ExprKind::List(items) | ExprKind::Tuple(items)) if items.len() == n => {
            items.iter().map(|x| x.span).collect()
        }
        _ => vec![a.span; n],
    }
}

fn call<'a>(e: &mut Elab<'a>, p: &Partition<'a>, args: Vec<Value<'a>>) -> R<Value<'a>> {
    let pos = args.into_iter().map(|v| Arg::new(v, p.span)).collect();
    e.call_function(p.func.clone(), None, CallArgs { pos, kw: Vec::new(), span: p.span }, p.span)
}

fn func_arg<'a>(e: &Elab<'a>, a: &Arg<'a>) -> R<Rc<FuncVal<'a>>> {
    match &a.value {
        Value::Func(f) => Ok(f.clone()),
        other => Err(e.err(a.span, format!("a partition must be a @gluon.jit function, got {}", other.type_name()))),
    }
}

/// The items of a tuple or list argument.
fn items<'a>(e: &Elab<'a>, a: &Arg<'a>, what: &str) -> R<Vec<Value<'a>>> {
    match &a.value {
        Value::Tuple(t) => Ok(t.to_vec()),
        Value::List(l) => Ok(l.borrow().clone()),
        other => Err(e.err(a.span, format!("`{what}` must be a tuple or list, got {}", other.type_name()))),
    }
}

/// A list of `n` compile-time counts, one per worker.
fn counts<'a>(e: &Elab<'a>, a: &Arg<'a>, n: usize, what: &str) -> R<Vec<(u32, Span)>> {
    let v = items(e, a, what)?;
    if v.len() != n {
        return Err(e.err(a.span, format!("`{what}` needs one entry per worker partition ({n}), got {}", v.len())));
    }
    v.iter()
        .zip(item_spans(a, n))
        .map(|(x, at)| match x.as_int() {
            Some(i) if (1..=1024).contains(&i) => Ok((i as u32, at)),
            _ => Err(e.err(at, format!("`{what}` must hold positive compile-time integers, got {}", x.type_name()))),
        })
        .collect()
}

/// The runtime values inside `v` (through tuples, lists and aggregates), in order.
fn leaves_of(v: &Value, out: &mut Vec<Tv>) {
    match v {
        Value::Tensor(t) => out.push(t.clone()),
        Value::Tuple(t) => t.iter().for_each(|x| leaves_of(x, out)),
        Value::List(l) => l.borrow().iter().for_each(|x| leaves_of(x, out)),
        Value::Instance(i) => i.fields.borrow().iter().for_each(|(_, x)| leaves_of(x, out)),
        _ => {}
    }
}

/// `v` with each runtime value `from[i]` replaced by `to[i]` (tuples, lists and aggregates rebuilt).
fn substitute<'a>(v: &Value<'a>, from: &[Tv], to: &[Tv]) -> Value<'a> {
    match v {
        Value::Tensor(t) => match from.iter().position(|f| f.v == t.v) {
            Some(i) => Value::Tensor(to[i].clone()),
            None => v.clone(),
        },
        Value::Tuple(t) => Value::tuple(t.iter().map(|x| substitute(x, from, to)).collect()),
        Value::List(l) => {
            Value::List(Rc::new(RefCell::new(l.borrow().iter().map(|x| substitute(x, from, to)).collect())))
        }
        Value::Instance(i) if v.has_runtime() => {
            let fields = i.fields.borrow().iter().map(|(k, x)| (k.clone(), substitute(x, from, to))).collect();
            Value::Instance(Rc::new(Instance { class: i.class.clone(), fields: RefCell::new(fields) }))
        }
        other => other.clone(),
    }
}
