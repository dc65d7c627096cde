//! Layouts: the Gluon layout classes (`gl.BlockedLayout`, `gl.NVMMASharedLayout.get_default_for`,
//! `mbarrier.MBarrierLayout`...), bound by `tessel_layouts::expr::call_layout` (one binder for kernels, the IR
//! text and the `tessel layout` CLI: the same parameter names, defaults and checks), their attributes
//! (`layout.order`), a register tensor's `type` (a `distributed_type`), `gl.convert_layout`, `gl.num_warps`/`gl.num_ctas` and `gl.thread_barrier`/`gl.barrier`.

use std::cell::RefCell;
use std::rc::Rc;

use tessel_lang::Span;
use tessel_lang::elab::builtins::{Arg, Bound, CallArgs};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{BlockLayout, BlockType, Dtype, Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_layouts::expr::{ArgValue, CallArg, call_layout};
use tessel_layouts::{AnyLayout, CgaLayout, DistributedLayout, SharedLayout};
use tessel_tile::ops::Op;
use tessel_tile::{Layout, Type};

use crate::{GL, HOPPER_MBARRIER};

/// The layout classes the shared binder knows that live in other modules than `gl` (mbarrier) or in features
/// gluon mode does not have yet (tensor memory, Blackwell).
const NOT_IN_GL: &[&str] = &[
    "MBarrierLayout",
    "MBarrierLayout.multicta",
    "TensorMemoryLayout",
    "TensorMemoryScalesLayout",
    "get_tmem_reg_layout",
];

pub fn register(r: &mut Registry) {
    // Every layout class `tessel_layouts::expr` binds is a `gl.*` class, bound the same way.
    for name in tessel_layouts::expr::KNOWN_CALLABLES.iter().filter(|n| !NOT_IN_GL.contains(n)) {
        r.add(GL, name, Handler::Raw(layout_call));
    }
    for m in [crate::AMPERE_MBARRIER, HOPPER_MBARRIER] {
        r.add(m, "MBarrierLayout", Handler::Raw(layout_call));
        r.add(m, "MBarrierLayout.multicta", Handler::Raw(layout_call));
    }
    r.add(GL, "AutoLayout", Handler::Bound("", placeholder));
    r.add(GL, "CoalescedLayout", Handler::Bound("", placeholder));
    r.add(GL, "num_warps", Handler::Bound("", |e, _| Ok(Value::Int(e.warps() as i128))));
    r.add(GL, "num_ctas", Handler::Bound("", |e, _| Ok(Value::Int(e.func.config.num_ctas as i128))));
    r.add(GL, "convert_layout", Handler::Bound("value, layout, assert_trivial=False", convert_layout));
    r.add(GL, "set_auto_layout", Handler::Bound("value, layout", |e, b| convert(e, b, false)));
    r.add(
        GL,
        "thread_barrier",
        Handler::Bound("", |e, b| {
            e.emit(Op::DebugBarrier, &[], vec![], b.span)?;
            Ok(Value::None)
        }),
    );
    r.add(GL, "barrier", Handler::Bound("*, cluster=False", barrier));
}

/// `AutoLayout()` / `CoalescedLayout()`: no layout of their own; tensors made with them have none.
fn placeholder<'a>(_: &mut Elab<'a>, _: Bound<'a>) -> R<Value<'a>> {
    Ok(Value::None)
}

/// `gl.barrier(cluster=False)`: the CTA's threads meet (as `thread_barrier`); with `cluster=True`, every thread of
/// every CTA of the cluster (before a CTA reuses a buffer other CTAs' copies wrote into, e.g. a multicast
/// destination). Cross-CTA reductions and conversions insert their own.
fn barrier<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let op = if e.const_bool(b.req("cluster"), &b.fname, "cluster")? { Op::ClusterBarrier } else { Op::DebugBarrier };
    e.emit(op, &[], vec![], b.span)?;
    Ok(Value::None)
}

/// A compile-time argument as the layout binder's value.
fn arg_value<'a>(e: &Elab<'a>, v: &Value<'a>, span: Span, fname: &str) -> R<ArgValue> {
    Ok(match v {
        Value::None => ArgValue::None,
        Value::Bool(b) => ArgValue::Bool(*b),
        Value::Int(i) => ArgValue::Int(i64::try_from(*i).map_err(|_| e.err(span, format!("{i} is too large")))?),
        Value::Str(s) => ArgValue::Str(s.to_string()),
        Value::Dtype(Dtype::Scalar(s)) => ArgValue::Dtype(s.triton_name().to_string()),
        Value::Layout(l) => ArgValue::Layout(l.as_ref().clone()),
        Value::Tuple(_) | Value::List(_) => {
            let items = v.items().expect("a sequence");
            let items = items.iter().map(|x| arg_value(e, x, span, fname)).collect::<R<Vec<_>>>()?;
            if matches!(v, Value::Tuple(_)) { ArgValue::Tuple(items) } else { ArgValue::List(items) }
        }
        Value::Tensor(t) => {
            let a = Arg::new(v.clone(), span);
            return Err(e.not_constexpr(&a, fname, "every argument", &t.ty.to_string()));
        }
        other => {
            return Err(
                e.err(span, format!("the arguments of `{fname}` are compile-time values, got {}", other.describe()))
            );
        }
    })
}

/// A layout constructor: the arguments go to `tessel_layouts::expr::call_layout`, its errors come back at the
/// argument (or call) they are about.
pub(crate) fn layout_call<'a>(e: &mut Elab<'a>, name: &'static str, args: CallArgs<'a>) -> R<Value<'a>> {
    let fname = format!("gl.{name}");
    let mut call_args = Vec::new();
    for a in &args.pos {
        call_args.push(CallArg { name: None, value: arg_value(e, &a.value, a.span, &fname)?, span: range(a.span) });
    }
    for (k, a) in &args.kw {
        call_args.push(CallArg {
            name: Some(k.clone()),
            value: arg_value(e, &a.value, a.span, &fname)?,
            span: range(a.span),
        });
    }
    let path: Vec<&str> = name.split('.').collect();
    let span = range(args.span);
    match call_layout(&path, span.clone(), span, call_args) {
        Ok(p) => Ok(Value::Layout(Rc::new(p.layout))),
        Err(err) => Err(e.err(Span::new(err.span.start, err.span.end), err.message)),
    }
}

fn range(s: Span) -> std::ops::Range<usize> {
    s.start..s.end
}

/// `gl.convert_layout(value, layout, assert_trivial=False)` (and `gl.set_auto_layout`): the same values in
/// another distributed layout; with `assert_trivial`, only if no element changes threads (Gluon's
/// `is_convert_layout_trivial`: the minimal conversion moves registers only).
fn convert_layout<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let trivial = e.const_bool(b.req("assert_trivial"), &b.fname, "assert_trivial")?;
    convert(e, b, trivial)
}

fn convert<'a>(e: &mut Elab<'a>, b: Bound<'a>, assert_trivial: bool) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let t = e.tensor_arg(b.req("value"), &fname, "value")?;
    if !t.is_block() {
        return Err(e.err(b.span, format!("`{fname}` needs a tensor, got {}", t.ty)));
    }
    distributed_arg(e, b.req("layout"), &fname)?;
    let layout = e.layout_kwarg(&b, t.shape())?;
    let ty = match &t.ty {
        Type::Tensor { shape, elem, .. } => Type::Tensor { shape: shape.clone(), elem: *elem, layout },
        _ => unreachable!("a block"),
    };
    if ty == t.ty {
        // The same map: no conversion, but the value now carries the spelling asked for (a `SliceLayout` that
        // `expand_dims` needs, where the tensor came spelt by its bases).
        return Ok(Value::Tensor(Tv::new(t.v, ty)));
    }
    // Trivial as Gluon means it: every thread already holds its elements, perhaps in other registers (a
    // register renaming, no data moves between threads).
    if assert_trivial && !tessel_lang::elab::builtins::layout::registers_only(&t.ty, &ty) {
        return Err(e.err(
            b.span,
            format!("this conversion is not trivial: {} and {} hold elements in different threads", t.ty, ty),
        ));
    }
    Ok(Value::Tensor(e.emit1(Op::ConvertLayout, &[t], ty, b.span)?))
}

/// A distributed layout argument (`None` passes: no layout).
pub fn distributed_arg<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str) -> R<Option<DistributedLayout>> {
    match &a.value {
        Value::None => Ok(None),
        Value::Layout(l) => match l.as_ref() {
            AnyLayout::Distributed(d) => Ok(Some(d.clone())),
            other => Err(e.err(
                a.span,
                format!("`{fname}` needs a distributed (register) layout, got the {} {other}", kind(other)),
            )),
        },
        other => Err(e.err(a.span, format!("`{fname}` needs a layout, got {}", other.describe()))),
    }
}

/// A shared layout argument.
pub fn shared_arg<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str) -> R<SharedLayout> {
    match &a.value {
        Value::Layout(l) => match l.as_ref() {
            AnyLayout::Shared(s) => Ok(s.clone()),
            other => Err(e.err_hint(
                a.span,
                format!("`{fname}` needs a shared-memory layout, got the {} {other}", kind(other)),
                "shared layouts: NVMMASharedLayout, SwizzledSharedLayout, SharedLinearLayout, MBarrierLayout",
            )),
        },
        other => Err(e.err(a.span, format!("`{fname}` needs a shared-memory layout, got {}", other.describe()))),
    }
}

/// The Gluon class name of a layout, for messages.
pub fn kind(l: &AnyLayout) -> &'static str {
    tessel_layouts::expr::layout_kind(l)
}

/// A register tensor's `type`: Gluon's `distributed_type`, its element type, shape and layout (`gl.AutoLayout()`
/// while the tensor waits for layout assignment to give it one). `None` for a tensor that is not a block.
pub fn distributed_type<'a>(t: &Tv) -> Option<Value<'a>> {
    let Type::Tensor { shape, elem, layout } = &t.ty else { return None };
    let layout = match layout {
        Some(l) => BlockLayout::Of(Rc::new(spec_of(l))),
        None => BlockLayout::Auto,
    };
    Some(Value::BlockType(Rc::new(BlockType { elem: Dtype::from_elem(*elem), shape: shape.to_vec(), layout })))
}

/// The spec of a tile layout, or its linear form spelled as a Gluon class.
pub fn spec_of(l: &Layout) -> AnyLayout {
    if let Some(s) = &l.spec {
        return s.clone();
    }
    let lin = &l.linear;
    let bases = |n: &str| if lin.has_in_dim(n) { lin.bases(n).iter().map(|b| b.to_vec()).collect() } else { vec![] };
    if lin.has_in_dim("offset") {
        AnyLayout::Shared(SharedLayout::Linear(tessel_layouts::SharedLinearLayout {
            offset_bases: bases("offset"),
            block_bases: bases("block"),
            alignment: 16,
        }))
    } else {
        let shape = lin.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
        AnyLayout::Distributed(DistributedLayout::Linear(tessel_layouts::DistributedLinearLayout {
            reg_bases: bases("register"),
            lane_bases: bases("lane"),
            warp_bases: bases("warp"),
            block_bases: bases("block"),
            shape,
        }))
    }
}

/// `layout.attr` for the attributes Gluon's layout classes have.
pub fn layout_attr<'a>(l: &AnyLayout, name: &str) -> Option<Value<'a>> {
    let ints = |v: &[u32]| Value::tuple(v.iter().map(|&x| Value::Int(x as i128)).collect());
    let int = |x: u32| Value::Int(x as i128);
    let list = |v: &[u32]| Value::List(Rc::new(RefCell::new(v.iter().map(|&x| Value::Int(x as i128)).collect())));
    let bases = |b: &[Vec<u32>]| Value::List(Rc::new(RefCell::new(b.iter().map(|v| list(v)).collect())));
    let dist = |d: &DistributedLayout| Value::Layout(Rc::new(AnyLayout::Distributed(d.clone())));
    let cga = |c: &CgaLayout| match c {
        CgaLayout::Bases(b) => Value::tuple(b.iter().map(|v| ints(v)).collect()),
        // A layout without CTA bases, or the legacy parameters, read back as bases.
        other => match other.to_linear(l.rank()) {
            Ok(lin) if lin.has_in_dim("block") => Value::tuple(lin.bases("block").iter().map(|v| ints(v)).collect()),
            _ => Value::tuple(vec![]),
        },
    };
    Some(match (l, name) {
        (_, "rank") => int(l.rank() as u32),
        (AnyLayout::Distributed(DistributedLayout::Blocked(b)), "cga_layout") => cga(&b.cga),
        (AnyLayout::Shared(SharedLayout::Nvmma(n)), "cga_layout") => cga(&n.cga),
        (AnyLayout::Shared(SharedLayout::Swizzled(w)), "cga_layout") => cga(&w.cga),
        (AnyLayout::TensorMemory(t), "block") => ints(&t.block),
        (AnyLayout::TensorMemory(t), "col_stride") => int(t.col_stride),
        (AnyLayout::TensorMemory(t), "two_ctas") => Value::Bool(t.two_ctas),
        // The CTA split as bases: M's bits, then N's.
        (AnyLayout::TensorMemory(t), "cga_layout") => {
            let m = (0..t.cta_split[0].trailing_zeros()).map(|i| ints(&[1 << i, 0]));
            let n = (0..t.cta_split[1].trailing_zeros()).map(|i| ints(&[0, 1 << i]));
            Value::tuple(m.chain(n).collect())
        }
        (AnyLayout::Distributed(d), _) => match (d, name) {
            (DistributedLayout::Blocked(b), "size_per_thread") => ints(&b.size_per_thread),
            (DistributedLayout::Blocked(b), "threads_per_warp") => ints(&b.threads_per_warp),
            (DistributedLayout::Blocked(b), "warps_per_cta") => ints(&b.warps_per_cta),
            (DistributedLayout::Blocked(b), "order") => ints(&b.order),
            (DistributedLayout::Slice(s), "dim") => int(s.dim),
            (DistributedLayout::Slice(s), "parent") => dist(&s.parent),
            (DistributedLayout::DotOperand(o), "operand_index") => int(o.operand_index),
            (DistributedLayout::DotOperand(o), "parent") => dist(&o.parent),
            (DistributedLayout::DotOperand(o), "k_width") => int(o.k_width),
            (DistributedLayout::Nvmma(n), "version") => ints(&n.version),
            (DistributedLayout::Nvmma(n), "warps_per_cta") => ints(&n.warps_per_cta),
            (DistributedLayout::Nvmma(n), "instr_shape") => ints(&n.instr_shape),
            // Lists, as Gluon's dataclass fields are (`layout.reg_bases[-1] == [0, 32]`).
            (DistributedLayout::Linear(d), "reg_bases") => bases(&d.reg_bases),
            (DistributedLayout::Linear(d), "lane_bases") => bases(&d.lane_bases),
            (DistributedLayout::Linear(d), "warp_bases") => bases(&d.warp_bases),
            (DistributedLayout::Linear(d), "block_bases") => bases(&d.block_bases),
            (DistributedLayout::Linear(d), "shape") => list(&d.shape),
            _ => return None,
        },
        (AnyLayout::Shared(s), _) => match (s, name) {
            (SharedLayout::Nvmma(n), "swizzle_byte_width") => int(n.swizzle_byte_width),
            (SharedLayout::Nvmma(n), "element_bitwidth") => int(n.element_bitwidth),
            (SharedLayout::Nvmma(n), "transposed") => Value::Bool(n.transposed),
            (SharedLayout::Nvmma(n), "fp4_padded") => Value::Bool(n.fp4_padded),
            (SharedLayout::Swizzled(w), "vec") => int(w.vec),
            (SharedLayout::Swizzled(w), "per_phase") => int(w.per_phase),
            (SharedLayout::Swizzled(w), "max_phase") => int(w.max_phase),
            (SharedLayout::Swizzled(w), "order") => ints(&w.order),
            _ => return None,
        },
        _ => return None,
    })
}

/// The distributed linear layout `l` (`register, lane, warp, block → dims`) spelt by its bases.
pub(crate) fn linear_spec(l: &tessel_layouts::LinearLayout, shape: &[u32]) -> AnyLayout {
    let bases = |d: &str| l.bases(d).iter().map(|b| b.to_vec()).collect::<Vec<Vec<u32>>>();
    AnyLayout::Distributed(DistributedLayout::Linear(tessel_layouts::DistributedLinearLayout {
        reg_bases: bases("register"),
        lane_bases: bases("lane"),
        warp_bases: bases("warp"),
        block_bases: bases("block"),
        shape: shape.to_vec(),
    }))
}
