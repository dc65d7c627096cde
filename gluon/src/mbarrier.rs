//! mbarriers (`triton.experimental.gluon.language.nvidia.{ampere,hopper}.mbarrier`): a barrier is a
//! shared-memory descriptor of shape `[1]` and `int64` (`MBarrierLayout()`; `allocate_mbarrier(batch)` gives
//! `[batch, 1]`, indexed per barrier; `two_ctas=True`: one barrier per CTA pair, `tessel_tile::cluster`'s two-CTA
//! barrier, whose count and bytes are the pair's). `init(bar, count)`, `expect(bar, bytes, pred=True)`,
//! `arrive(bar, count=1, pred=True, cta_mask=0)` (the mask as Gluon's Rubin `arrive` has it: arrivals on the
//! same barrier of the CTAs whose ranks differ in its bits), `wait(bar, phase, pred=True, deps=())`, `invalidate(bar)` emit the
//! `mbarrier_*` ops; `hopper.fence_async_shared()` emits `fence_async_shared`.

use tessel_lang::elab::builtins::{Arg, Bound};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Dtype, Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_layouts::{CgaLayout, SharedLayout, SwizzledSharedLayout};
use tessel_tile::ops::{Const, Op};
use tessel_tile::types::Shape;
use tessel_tile::{ScalarType, Type};

use crate::{AMPERE_MBARRIER, HOPPER, HOPPER_MBARRIER};

pub fn register(r: &mut Registry) {
    for m in [AMPERE_MBARRIER, HOPPER_MBARRIER] {
        r.add(m, "allocate_mbarrier", Handler::Bound("batch=None, two_ctas=False", allocate));
        r.add(m, "init", Handler::Bound("mbarrier, count", init));
        r.add(m, "expect", Handler::Bound("mbarrier, bytes_per_cta=None, pred=True", expect));
        r.add(m, "arrive", Handler::Bound("mbarrier, count=1, pred=True, *, cta_mask=0", arrive));
        r.add(m, "wait", Handler::Bound("mbarrier, phase, pred=True, deps=None", wait));
        r.add(m, "invalidate", Handler::Bound("mbarrier", invalidate));
    }
    r.add(HOPPER, "fence_async_shared", Handler::Bound("cluster=False", fence));
}

/// `MBarrierLayout()`.
fn layout() -> SharedLayout {
    SharedLayout::Swizzled(SwizzledSharedLayout {
        vec: 1,
        per_phase: 1,
        max_phase: 1,
        order: vec![0],
        cga: CgaLayout::Single,
    })
}

/// `allocate_mbarrier(batch=None, two_ctas=False)`: each CTA's barrier, or with `two_ctas` one barrier per CTA
/// pair (in the pair's even CTA, `MBarrierLayout(cga_layout=[[0]])`: see `tessel_tile::cluster`).
fn allocate<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let mut spec = layout();
    if b.opt("two_ctas").is_some() && e.const_bool(b.req("two_ctas"), &b.fname, "two_ctas")? {
        let n = e.func.config.num_ctas;
        if n < 2 {
            return Err(e.err_hint(
                b.req("two_ctas").span,
                format!("a two-CTA barrier is shared by a pair of CTAs, but the kernel has num_ctas = {n}"),
                "launch with num_ctas=2 (or more), or allocate a barrier of one CTA",
            ));
        }
        if let SharedLayout::Swizzled(s) = &mut spec {
            s.cga = CgaLayout::Bases(vec![vec![0]]);
        }
    }
    let shape = match b.opt("batch") {
        None => vec![1],
        Some(a) => {
            let n = e.const_int(a, &b.fname, "batch")?;
            // `batch` counts barriers (a ring of 3 is fine), as the leading dims of allocate_shared_memory do.
            if !(1..=1 << 16).contains(&n) {
                return Err(e.err(a.span, format!("batch counts barriers: it must be in 1..=65536, got {n}")));
            }
            vec![n as u32, 1]
        }
    };
    let layout = crate::smem::shared_layout(e, &spec, &shape, ScalarType::I64, b.span)?;
    let ty = Type::MemDesc { shape: Shape::from_slice(&shape), elem: ScalarType::I64, layout };
    Ok(Value::Tensor(e.emit1(Op::LocalAlloc, &[], ty, b.span)?))
}

/// The barrier argument: a descriptor of shape `[1]` holding `int64`.
pub(crate) fn barrier<'a>(e: &Elab<'a>, b: &Bound<'a>) -> R<Tv> {
    let a = b.req("mbarrier");
    let t = crate::smem::memdesc_arg(e, a, &b.fname, "mbarrier")?;
    match t.ty.memdesc() {
        Some(([1], ScalarType::I64, _)) => Ok(t),
        _ => Err(e.err_hint(
            a.span,
            format!("`{}` needs a barrier (a shared-memory descriptor of shape [1] and int64), got {}", b.fname, t.ty),
            "allocate one with `mbarrier.allocate_mbarrier()` (or `.index(i)` of a batch)",
        )),
    }
}

/// A predicate: `Some(None)` always, `None` never, `Some(Some(p))` when the runtime `i1` `p` holds.
pub(crate) fn pred<'a>(e: &mut Elab<'a>, a: &Arg<'a>, fname: &str) -> R<Option<Option<Tv>>> {
    match &a.value {
        Value::Tensor(t) if t.is_block() => {
            Err(e.err(a.span, format!("the `pred` of `{fname}` must be a scalar, got {}", t.ty)))
        }
        Value::Tensor(t) => Ok(Some(Some(e.cast(t.clone(), Dtype::Scalar(ScalarType::I1), a.span)?))),
        _ => Ok(e.const_bool(a, fname, "pred")?.then_some(None)),
    }
}

/// A compile-time count (at least 1, at most 2^20 as the hardware's arrival counter holds).
fn count<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str, what: &str) -> R<u32> {
    let n = e.const_int(a, fname, what)?;
    if !(1..=(1 << 20) - 1).contains(&n) {
        return Err(e.err(a.span, format!("`{what}` of `{fname}` must be between 1 and 2^20 - 1, got {n}")));
    }
    Ok(n as u32)
}

fn init<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let bar = barrier(e, &b)?;
    let count = count(e, b.req("count"), &b.fname, "count")?;
    e.emit(Op::MBarrierInit { count }, &[bar], vec![], b.span)?;
    Ok(Value::None)
}

fn expect<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let bar = barrier(e, &b)?;
    let Some(bytes) = b.opt("bytes_per_cta") else {
        return Err(e.err(b.span, format!("`{}` needs the transaction bytes (`bytes_per_cta`)", b.fname)));
    };
    let n = e.const_int(bytes, &b.fname, "bytes_per_cta")?;
    let Ok(bytes) = u32::try_from(n) else {
        return Err(e.err(bytes.span, format!("{n} is not a byte count")));
    };
    emit_predicated(e, &b, Op::MBarrierExpect { bytes }, bar)
}

fn arrive<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let bar = barrier(e, &b)?;
    let count = count(e, b.req("count"), &b.fname, "count")?;
    let cta_mask = cta_mask(e, &b, &bar)?;
    emit_predicated(e, &b, Op::MBarrierArrive { count, per_warpgroup: false, cta_mask }, bar)
}

/// `arrive`'s `cta_mask` (as in Gluon's Rubin `mbarrier.arrive` and Triton's `arrive_barrier {ctaMask}`): the
/// arrival reaches the barrier at the same offset in every CTA whose rank differs from the arriving CTA's only in
/// the mask's bits. The barrier must be each CTA's own.
fn cta_mask<'a>(e: &Elab<'a>, b: &Bound<'a>, bar: &Tv) -> R<u16> {
    let Some(a) = b.opt("cta_mask") else { return Ok(0) };
    let mask = e.const_int(a, &b.fname, "cta_mask")?;
    if mask == 0 {
        return Ok(0);
    }
    let n = e.func.config.num_ctas as i128;
    if mask < 0 || mask >= n {
        return Err(e.err_hint(
            a.span,
            format!("`cta_mask` names CTAs of the cluster by the bits their ranks differ in: it must be in 0..{n} for num_ctas = {n}, got {mask}"),
            "launch with num_ctas > 1, and set only bits below num_ctas",
        ));
    }
    if tessel_tile::cluster::barrier_ctas(&bar.ty) != 1 {
        return Err(e.err(
            a.span,
            "`cta_mask` arrives on each CTA's own barrier; a two-CTA barrier (`allocate_mbarrier(two_ctas=True)`) is \
             arrived on through its pair's lead already",
        ));
    }
    Ok(mask as u16)
}

fn emit_predicated<'a>(e: &mut Elab<'a>, b: &Bound<'a>, op: Op, bar: Tv) -> R<Value<'a>> {
    match pred(e, b.req("pred"), &b.fname)? {
        None => {}
        Some(None) => {
            e.emit(op, &[bar], vec![], b.span)?;
        }
        Some(Some(p)) => {
            e.emit(op, &[bar, p], vec![], b.span)?;
        }
    }
    Ok(Value::None)
}

fn wait<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let bar = barrier(e, &b)?;
    let phase = b.req("phase");
    let phase = match phase.value.as_int() {
        Some(p) if !(0..=1).contains(&p) => {
            return Err(e.err(phase.span, format!("the phase of `{}` is a parity, 0 or 1, got {p}", b.fname)));
        }
        Some(p) => e.constant(Const::Int(p as i64), Type::scalar(ScalarType::I32), phase.span)?,
        None => {
            let t = e.tensor_arg(phase, &b.fname, "phase")?;
            if t.is_block() || t.scalar().is_none_or(|s| !s.is_int()) {
                return Err(
                    e.err(phase.span, format!("the phase of `{}` must be an integer scalar, got {}", b.fname, t.ty))
                );
            }
            e.cast(t, Dtype::Scalar(ScalarType::I32), phase.span)?
        }
    };
    match pred(e, b.req("pred"), &b.fname)? {
        None => Ok(Value::None),
        Some(None) => {
            e.emit(Op::mbarrier_wait(), &[bar, phase], vec![], b.span)?;
            Ok(Value::None)
        }
        // A runtime predicate: the wait under an `if` (uniform: a scalar every thread holds).
        Some(Some(p)) => {
            let (then_r, else_r) = (e.func.new_region(), e.func.new_region());
            e.in_region(then_r, |e| {
                e.emit(Op::mbarrier_wait(), &[bar, phase], vec![], b.span)?;
                e.emit(Op::Yield, &[], vec![], b.span)
            })?;
            e.in_region(else_r, |e| e.emit(Op::Yield, &[], vec![], b.span))?;
            e.emit_with_regions(Op::If, &[p], vec![], &[then_r, else_r], b.span)?;
            Ok(Value::None)
        }
    }
}

fn invalidate<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let bar = barrier(e, &b)?;
    e.emit(Op::MBarrierInvalidate, &[bar], vec![], b.span)?;
    Ok(Value::None)
}

/// `fence_async_shared(cluster=False)`: the CTA's shared memory, or with `cluster` every CTA's of the cluster.
pub(crate) fn fence<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let cluster = e.const_bool(b.req("cluster"), &b.fname, "cluster")?;
    e.emit(Op::FenceAsyncShared { cluster }, &[], vec![], b.span)?;
    Ok(Value::None)
}
