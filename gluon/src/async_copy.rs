//! `cp.async` (`triton.experimental.gluon.language.nvidia.ampere.async_copy`):
//! `async_copy_global_to_shared(smem, pointer, mask=None)` (alias `async_load`) copies a tile of pointed-to
//! elements into a shared-memory buffer asynchronously (`async_copy`), `commit_group()` closes the group of
//! copies issued since the last commit, `wait_group(num_outstanding=0)` waits until at most that many groups are
//! in flight (their data lands there, in the interpreter as on the GPU). `mbarrier_arrive(mbarrier,
//! increment_count=True)` hands the copies in flight to an mbarrier instead (`cp.async.mbarrier.arrive`): they
//! land when its phase completes. With `increment_count` the arrival only holds the phase open until then (the
//! barrier's count is unchanged); without, every thread of the partition arrives once its copies are done, so
//! the barrier must expect that many arrivals.

use tessel_lang::elab::builtins::Bound;
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::Value;
use tessel_lang::elab::{Elab, R};
use tessel_tile::ops::Op;
use tessel_tile::{Elem, ScalarType, Type};

use crate::AMPERE_ASYNC_COPY;
use crate::smem::memdesc_arg;

const COPY_SIG: &str =
    "smem, pointer, mask=None, cache_modifier=None, eviction_policy=None, volatile=False, cache_policy=None";

pub fn register(r: &mut Registry) {
    r.add(AMPERE_ASYNC_COPY, "async_copy_global_to_shared", Handler::Bound(COPY_SIG, copy));
    r.add(AMPERE_ASYNC_COPY, "async_load", Handler::Bound(COPY_SIG, copy));
    r.add(AMPERE_ASYNC_COPY, "commit_group", Handler::Bound("", commit));
    r.add(AMPERE_ASYNC_COPY, "wait_group", Handler::Bound("num_outstanding=0", wait));
    r.add(AMPERE_ASYNC_COPY, "mbarrier_arrive", Handler::Bound("mbarrier, increment_count=True", mbarrier_arrive));
}

fn mbarrier_arrive<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let bar = crate::mbarrier::barrier(e, &b)?;
    let increment = e.const_bool(b.req("increment_count"), &b.fname, "increment_count")?;
    // Without `increment_count`, each thread of the partition arrives (`.noinc`).
    let arrivals = if increment { 0 } else { e.warps() * 32 };
    e.emit(Op::AsyncCopyMBarrierArrive { arrivals }, &[bar], vec![], b.span)?;
    Ok(Value::None)
}

fn copy<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let mem = memdesc_arg(e, b.req("smem"), &fname, "smem")?;
    let (shape, elem, _) = mem.ty.memdesc().expect("a memdesc");
    let shape = shape.to_vec();
    let pa = b.req("pointer");
    let ptrs = e.tensor_arg(pa, &fname, "pointer")?;
    match ptrs.elem() {
        Some(Elem::Ptr(p, _)) if ptrs.is_block() && ptrs.shape() == shape.as_slice() && p == elem => {}
        Some(Elem::Ptr(p, _)) if ptrs.is_block() && p == elem => {
            return Err(e.err(
                pa.span,
                format!("the pointers have shape {:?}, but the shared-memory buffer has shape {shape:?}", ptrs.shape()),
            ));
        }
        Some(Elem::Ptr(p, _)) if ptrs.is_block() => {
            return Err(e.err(
                pa.span,
                format!(
                    "the pointers point to {}, but the shared-memory buffer holds {}",
                    p.triton_name(),
                    elem.triton_name()
                ),
            ));
        }
        _ => {
            return Err(e.err(pa.span, format!("`pointer` of `{fname}` must be a tensor of pointers, got {}", ptrs.ty)));
        }
    }
    if elem.bits() < 8 {
        return Err(e.err(b.req("smem").span, "cp.async copies whole bytes; int1 buffers cannot be its destination"));
    }
    let mut operands = vec![ptrs, mem];
    if let Some(m) = b.opt("mask") {
        let mask = e.tensor_arg(m, &fname, "mask")?;
        if mask.shape() != shape.as_slice() || mask.scalar() != Some(ScalarType::I1) {
            return Err(e.err(m.span, format!("the mask must be a tensor of int1 of shape {shape:?}, got {}", mask.ty)));
        }
        operands.push(mask);
    }
    for k in ["cache_modifier", "eviction_policy", "cache_policy"] {
        if let Some(a) = b.opt(k)
            && !matches!(&a.value, Value::Str(s) if s.is_empty())
        {
            return Err(e.err(a.span, format!("`{k}` of `{fname}` is not supported by tessel yet")));
        }
    }
    e.emit1(Op::AsyncCopy, &operands, Type::Token, b.span)?;
    Ok(Value::None)
}

fn commit<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    e.emit1(Op::AsyncCommitGroup, &[], Type::Token, b.span)?;
    Ok(Value::None)
}

fn wait<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let a = b.req("num_outstanding");
    let n = e.const_int(a, &b.fname, "num_outstanding")?;
    let Ok(pending) = u32::try_from(n) else {
        return Err(e.err(a.span, format!("`num_outstanding` must be a non-negative count, got {n}")));
    };
    e.emit1(Op::AsyncWait { pending }, &[], Type::Token, b.span)?;
    Ok(Value::None)
}
