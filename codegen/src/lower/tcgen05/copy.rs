//! `tcgen05_copy`: one thread issues the `tcgen05.cp.cta_group::1` instructions of the plan
//! `tessel_tile::tcgen05_copy` derives from the source's shared layout and the destination's tensor-memory
//! layout (shape, one matrix descriptor, each instruction's column and start byte). The barrier analysis fences
//! the threads' writes of the source for the async proxy (`fence.proxy.async` + `bar.sync`) first; the copy
//! completes with the tcgen05 ops before a `tcgen05_commit`, in order with the MMAs issued after it.

use tessel_tile::ir::OpData;

use super::super::Lower;
use super::mma::encode;
use super::thread_sync;
use crate::CompileError;
use crate::ptx::{RegClass, instr, mem};

/// `tcgen05_copy src, dst`.
pub(crate) fn copy(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (src, dst) = (data.operands[0], data.operands[1]);
    let plan = tessel_tile::tcgen05_copy::plan(l.f.ty(src), l.f.ty(dst)).map_err(CompileError::new)?;
    // Every warp's tensor-memory accesses before are done before the one thread issues.
    thread_sync(l);
    let issuer = super::super::asynchronous::first_thread(l, None)?;
    let (s_base, d_base) = (l.get(src)?[0], l.get(dst)?[0]);
    l.b.comment(format!(
        "tcgen05_copy: {} x tcgen05.cp.{} (swizzle {}, LBO {}, SBO {})",
        plan.instrs.len(),
        plan.shape.ptx(),
        plan.desc.swizzle,
        plan.desc.lbo,
        plan.desc.sbo
    ));
    let op = format!("tcgen05.cp.cta_group::1.{}", plan.shape.ptx());
    for i in &plan.instrs {
        let desc = encode(l, s_base, i.start, &plan.desc);
        let d = l.b.reg(RegClass::B32);
        l.b.op("add.u32", d, (d_base, i.column));
        l.b.emit(instr(op.clone()).guard(issuer).srcs((mem(d), desc)));
    }
    Ok(())
}
