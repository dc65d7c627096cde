//! Tensor-descriptor accesses as TMA copies (sm_90a and newer, host descriptors): the lowering of the
//! `desc_load`s and `desc_store`s that layout assignment (`tessel_tile::layout::descriptors`) left in place and
//! the software pipeliner did not take (it issues its own TMA loads into rings). It runs after the pipeliner, which
//! takes its loads first: post-schedule work, so it lives in this crate.
//!
//! - A `desc_load` whose one user stages it in shared memory in the descriptor's TMA layout (a wgmma operand, see
//!   `tessel_tile::layout::accelerate`) becomes a TMA load straight into that buffer.
//! - Any other `desc_load` becomes a TMA load into a buffer of its own, then a `local_load` in the load's layout.
//! - A `desc_store` becomes a `local_alloc` of the value in the TMA layout, a `tma_store`, and a `tma_store_wait`
//!   before the buffer can be reused. Inside a loop ([`StoreWaits::Deferred`]), as in Triton's persistent
//!   matmuls, the store gets a buffer of its own, allocated before the loop: the next iteration waits for the
//!   store to have read it just before writing it again, and the loop is followed by the last wait, so the
//!   store's read overlaps the next tile's main loop instead of stalling the epilogue. That costs the buffer's
//!   space over the whole loop; when the kernel then needs more shared memory than the CTA may have, the
//!   compile pipeline lowers again with [`StoreWaits::Immediate`].
//!
//! Each load has its own mbarrier: initialized for one arrival, armed with the block's bytes (in a cluster, those
//! of the CTA's part), waited on in phase 0
//! and invalidated, all before the data is read. Out-of-bounds parts of a box read as the descriptor's padding
//! and are not written, as the interpreter's `desc_load`/`desc_store` define.

use std::collections::{HashMap, HashSet};

use tessel_tile::ir::{Cursor, Func, OpId, ValueDef, ValueId};
use tessel_tile::ops::{Const, Op};
use tessel_tile::tma;
use tessel_tile::types::{ScalarType, Type};

use crate::error::SchedError;

/// When a `desc_store` in a loop waits for its TMA store to have read the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreWaits {
    /// Right after the store; the buffer's space is free for anything after it.
    Immediate,
    /// Just before the next iteration writes the buffer again, and after the loop; the buffer is the store's
    /// over the whole loop.
    Deferred,
}

/// What [`lower_tma_copies`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lowered {
    /// Descriptor accesses lowered.
    pub accesses: usize,
    /// Stores given a buffer over their loop ([`StoreWaits::Deferred`]).
    pub deferred_stores: usize,
}

/// Lowers every remaining `desc_load` / `desc_store` of `f` to TMA copies. The accesses left are those
/// [`tma::usable`] allows (the others became pointer accesses in layout assignment), so a failure here is an
/// internal error.
pub fn lower_tma_copies(f: &mut Func, waits: StoreWaits) -> Result<Lowered, SchedError> {
    let accesses: Vec<OpId> =
        f.all_ops().into_iter().filter(|&o| matches!(f.op(o).op, Op::DescLoad | Op::DescStore)).collect();
    let deferred = if waits == StoreWaits::Deferred { deferred_stores(f, &accesses) } else { HashMap::new() };
    let mut waited_after: HashSet<OpId> = HashSet::new();
    for &o in &accesses {
        match (&f.op(o).op, deferred.get(&o)) {
            (Op::DescLoad, _) => load(f, o)?,
            (_, Some(&(lp, pending))) => {
                store_deferred(f, o, lp, pending, waited_after.insert(lp))?;
            }
            _ => store(f, o)?,
        }
    }
    Ok(Lowered { accesses: accesses.len(), deferred_stores: deferred.len() })
}

/// The `desc_store`s to defer, each with its innermost enclosing loop and the `pending` count of the wait
/// before its buffer is written again. A loop's stores all in one block run in the same order every
/// iteration, so between two writes of one store's buffer the other k − 1 stores' groups were committed:
/// `pending = k − 1`. Stores spread over branches, or a loop that also holds other TMA stores (in nested
/// loops, or Gluon's), wait for everything (`pending = 0`).
fn deferred_stores(f: &Func, accesses: &[OpId]) -> HashMap<OpId, (OpId, u32)> {
    let mut by_loop: HashMap<OpId, Vec<OpId>> = HashMap::new();
    for &o in accesses.iter().filter(|&&o| f.op(o).op == Op::DescStore) {
        if let Some(lp) = innermost_loop(f, o) {
            by_loop.entry(lp).or_default().push(o);
        }
    }
    let mut out = HashMap::new();
    for (lp, stores) in by_loop {
        let mut others = false;
        f.walk_op(lp, &mut |x| {
            others |= matches!(f.op(x).op, Op::TmaStore) || (f.op(x).op == Op::DescStore && !stores.contains(&x));
        });
        let one_block = stores.iter().all(|&s| f.op(s).parent == f.op(stores[0]).parent);
        let pending = if one_block && !others { stores.len() as u32 - 1 } else { 0 };
        out.extend(stores.into_iter().map(|s| (s, (lp, pending))));
    }
    out
}

/// The innermost `for` / `while` loop around `o`, if it is inside one (and not in a `warp_specialize`
/// partition, whose buffers the allocator keeps live over the whole op anyway).
fn innermost_loop(f: &Func, o: OpId) -> Option<OpId> {
    let mut up = f.op(o).parent.and_then(|r| f.region(r).parent);
    while let Some(p) = up {
        match f.op(p).op {
            Op::For(_) | Op::While => return Some(p),
            Op::WarpSpecialize(_) => return None,
            _ => up = f.op(p).parent.and_then(|r| f.region(r).parent),
        }
    }
    None
}

/// The `local_alloc` that is the only user of `v`, when its buffer is in layout `want`.
fn staging_alloc(f: &Func, v: ValueId, want: &Type) -> Option<OpId> {
    if f.use_counts()[v.index()] != 1 {
        return None;
    }
    let parent = f.value(v).def;
    let ValueDef::Result(def, _) = parent else { return None };
    let region = f.op(def).parent?;
    let user = f.region(region).ops.iter().copied().find(|&x| f.op(x).operands.contains(&v))?;
    let same_layout = |t: &Type| match (t.memdesc(), want.memdesc()) {
        (Some((_, _, a)), Some((_, _, b))) => a.linear == b.linear,
        _ => false,
    };
    (f.op(user).op == Op::LocalAlloc && same_layout(f.ty(f.op(user).results[0]))).then_some(user)
}

fn load(f: &mut Func, o: OpId) -> Result<(), SchedError> {
    let data = f.op(o).clone();
    let (desc, coords, v) = (data.operands[0], data.operands[1..].to_vec(), data.results[0]);
    tma::desc_block(f.ty(desc)).ok_or(SchedError::NotADescriptor { load: true })?;
    // The block in the descriptor's TMA layout (spread over a cluster's CTAs as its maker says), each CTA
    // expecting the bytes of its part.
    let (buffer_ty, bytes) = (tma::desc_buffer_type(f, desc)?, tma::desc_cta_bytes(f, desc)?);
    let staged = staging_alloc(f, v, &buffer_ty);
    let mut c = Cursor { f, anchor: o };
    let bar = c.op(Op::LocalAlloc, &[], tma::barrier_type());
    c.insert(Op::MBarrierInit { count: 1 }, &[bar], vec![]);
    let buf = c.op(Op::LocalAlloc, &[], buffer_ty.clone());
    c.insert(Op::MBarrierExpect { bytes }, &[bar], vec![]);
    let mut operands = vec![desc, buf, bar];
    operands.extend(coords);
    c.insert(Op::TmaLoad { multicast: false }, &operands, vec![]);
    let phase = c.constant(Const::Int(0), Type::scalar(ScalarType::I32));
    c.insert(Op::mbarrier_wait(), &[bar, phase], vec![]);
    c.insert(Op::MBarrierInvalidate, &[bar], vec![]);
    match staged {
        Some(a) => {
            let staged_buf = c.f.op(a).results[0];
            c.f.replace_all_uses(staged_buf, buf);
            c.f.unlink(a);
        }
        None => {
            let ty = c.f.ty(v).clone();
            let loaded = c.op(Op::LocalLoad, &[buf], ty);
            c.f.replace_all_uses(v, loaded);
        }
    }
    f.unlink(o);
    Ok(())
}

fn store(f: &mut Func, o: OpId) -> Result<(), SchedError> {
    let data = f.op(o).clone();
    let (desc, value) = (data.operands[0], data.operands[1]);
    tma::desc_block(f.ty(desc)).ok_or(SchedError::NotADescriptor { load: false })?;
    let buffer_ty = tma::desc_buffer_type(f, desc)?;
    let mut c = Cursor { f, anchor: o };
    let buf = c.op(Op::LocalAlloc, &[value], buffer_ty);
    let mut operands = vec![desc, buf];
    operands.extend(data.operands[2..].iter().copied());
    c.insert(Op::TmaStore, &operands, vec![]);
    c.insert(Op::TmaStoreWait { pending: 0, writes: false }, &[], vec![]);
    f.unlink(o);
    Ok(())
}

/// `desc_store` `o` in loop `lp` with a buffer of its own: allocated before the loop; at the store, a wait
/// until at most `pending` bulk groups are in flight (the previous iteration's store from this buffer has read
/// it), the value written into it, the store; after the loop (once per loop, `wait_after`), the last wait, and
/// the buffer freed.
fn store_deferred(f: &mut Func, o: OpId, lp: OpId, pending: u32, wait_after: bool) -> Result<(), SchedError> {
    let data = f.op(o).clone();
    let (desc, value) = (data.operands[0], data.operands[1]);
    tma::desc_block(f.ty(desc)).ok_or(SchedError::NotADescriptor { load: false })?;
    let buffer_ty = tma::desc_buffer_type(f, desc)?;
    let buf = Cursor { f, anchor: lp }.op(Op::LocalAlloc, &[], buffer_ty);
    let mut c = Cursor { f, anchor: o };
    c.insert(Op::TmaStoreWait { pending, writes: false }, &[], vec![]);
    c.insert(Op::LocalStore, &[value, buf], vec![]);
    let mut operands = vec![desc, buf];
    operands.extend(data.operands[2..].iter().copied());
    c.insert(Op::TmaStore, &operands, vec![]);
    f.unlink(o);
    let region = f.op(lp).parent.expect("a linked loop");
    let at = f.region(region).ops.iter().position(|&x| x == lp).expect("the loop is in its region");
    let after = *f.region(region).ops.get(at + 1).ok_or(SchedError::LoopLast(lp))?;
    let mut c = Cursor { f, anchor: after };
    if wait_after {
        c.insert(Op::TmaStoreWait { pending: 0, writes: false }, &[], vec![]);
    }
    c.insert(Op::LocalDealloc, &[buf], vec![]);
    Ok(())
}
