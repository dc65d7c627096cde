//! Tensor-descriptor accesses as TMA copies (sm_90a and newer, host descriptors): the lowering of the
//! `desc_load`s and `desc_store`s that [`super::descriptors`] left in place and the software pipeliner did not
//! take (it issues its own TMA loads into rings). It runs after the pipeliner.
//!
//! - A `desc_load` whose one user stages it in shared memory in the descriptor's TMA layout (a wgmma operand, see
//!   [`super::accelerate`]) becomes a TMA load straight into that buffer.
//! - Any other `desc_load` becomes a TMA load into a buffer of its own, then a `local_load` in the load's layout.
//! - A `desc_store` becomes a `local_alloc` of the value in the TMA layout, a `tma_store`, and a `tma_store_wait`
//!   before the buffer can be reused.
//!
//! Each load has its own mbarrier: initialized for one arrival, armed with the block's bytes, waited on in phase 0
//! and invalidated, all before the data is read. Out-of-bounds parts of a box read as the descriptor's padding
//! and are not written, as the interpreter's `desc_load`/`desc_store` define.

use crate::ir::{Func, OpId, ValueId};
use crate::ops::{Const, Op};
use crate::tma;
use crate::types::{ScalarType, Type};

use super::descriptors::Cursor;

/// Lowers every remaining `desc_load` / `desc_store` of `f` to TMA copies; returns whether anything changed.
/// The accesses left are those [`tma::usable`] allows (the others became pointer accesses in layout
/// assignment), so a failure here is an internal error.
pub fn lower_tma_copies(f: &mut Func) -> Result<bool, String> {
    let accesses: Vec<OpId> =
        f.all_ops().into_iter().filter(|&o| matches!(f.op(o).op, Op::DescLoad | Op::DescStore)).collect();
    for &o in &accesses {
        if matches!(f.op(o).op, Op::DescLoad) { load(f, o)? } else { store(f, o)? }
    }
    Ok(!accesses.is_empty())
}

/// The `local_alloc` that is the only user of `v`, when its buffer is in layout `want`.
fn staging_alloc(f: &Func, v: ValueId, want: &Type) -> Option<OpId> {
    if f.use_counts()[v.index()] != 1 {
        return None;
    }
    let parent = f.value(v).def;
    let crate::ir::ValueDef::Result(def, _) = parent else { return None };
    let region = f.op(def).parent?;
    let user = f.region(region).ops.iter().copied().find(|&x| f.op(x).operands.contains(&v))?;
    let same_layout = |t: &Type| match (t.memdesc(), want.memdesc()) {
        (Some((_, _, a)), Some((_, _, b))) => a.linear == b.linear,
        _ => false,
    };
    (f.op(user).op == Op::LocalAlloc && same_layout(f.ty(f.op(user).results[0]))).then_some(user)
}

fn load(f: &mut Func, o: OpId) -> Result<(), String> {
    let data = f.op(o).clone();
    let (desc, coords, v) = (data.operands[0], data.operands[1..].to_vec(), data.results[0]);
    let (elem, block) = tma::desc_block(f.ty(desc)).ok_or("desc_load of a non-descriptor")?;
    let (block, bytes) = (block.to_vec(), tma::block(elem, block)?.bytes());
    let buffer_ty = tma::buffer_type(elem, &block)?;
    let staged = staging_alloc(f, v, &buffer_ty);
    let mut c = Cursor { f, anchor: o };
    let bar = c.op(Op::LocalAlloc, &[], tma::barrier_type());
    c.insert(Op::MBarrierInit { count: 1 }, &[bar], vec![]);
    let buf = c.op(Op::LocalAlloc, &[], buffer_ty.clone());
    c.insert(Op::MBarrierExpect { bytes }, &[bar], vec![]);
    let mut operands = vec![desc, buf, bar];
    operands.extend(coords);
    c.insert(Op::TmaLoad, &operands, vec![]);
    let phase = c.constant(Const::Int(0), Type::scalar(ScalarType::I32));
    c.insert(Op::MBarrierWait, &[bar, phase], vec![]);
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

fn store(f: &mut Func, o: OpId) -> Result<(), String> {
    let data = f.op(o).clone();
    let (desc, value) = (data.operands[0], data.operands[1]);
    let (elem, block) = tma::desc_block(f.ty(desc)).ok_or("desc_store to a non-descriptor")?;
    let buffer_ty = tma::buffer_type(elem, block)?;
    let mut c = Cursor { f, anchor: o };
    let buf = c.op(Op::LocalAlloc, &[value], buffer_ty);
    let mut operands = vec![desc, buf];
    operands.extend(data.operands[2..].iter().copied());
    c.insert(Op::TmaStore, &operands, vec![]);
    c.insert(Op::TmaStoreWait { pending: 0, writes: false }, &[], vec![]);
    f.unlink(o);
    Ok(())
}
