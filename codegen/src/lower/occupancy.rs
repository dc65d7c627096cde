//! How many CTAs of a kernel should fit on one SM at once, told to ptxas as `.minnctapersm`.
//!
//! A tensor-core kernel with a small tile overlaps one CTA's loads with another's MMAs only when two CTAs are
//! resident; ptxas, left alone, may spend a few registers more than half the register file per CTA allows and
//! leave one CTA per SM (the 128x128x64 matmul without pipelining: 140 registers and 0.58 ms on the H100, 128
//! registers and 0.35 ms). The hint asks for two CTAs when the shared memory and the thread count allow them
//! and the accumulators take at most half of the registers that two CTAs leave each thread, so that the cap
//! leaves room for the operands and addresses; a `maxnreg` from the user always wins.

use tessel_tile::ir::Func;
use tessel_tile::ops::Op;

use super::Lower;

/// The `.minnctapersm` value for the kernel, if any.
pub(crate) fn min_ctas_per_sm(l: &Lower, f: &Func, smem_bytes: u32) -> Option<u32> {
    if f.config.maxnreg.is_some() {
        return None;
    }
    let threads = l.num_warps * 32;
    let mut acc_regs = 0u32;
    for o in f.all_ops() {
        let d = f.op(o);
        if matches!(d.op, Op::WarpGroupDot { .. } | Op::Dot { .. }) {
            acc_regs += l.num_regs(f.ty(d.results[0])).ok()? as u32;
        }
    }
    if acc_regs == 0 {
        return None;
    }
    let target = l.arch;
    let by_threads = target.threads_per_sm() / threads;
    let by_smem = if smem_bytes == 0 { u32::MAX } else { target.smem_per_sm() / (smem_bytes + 1024) };
    let ctas = by_threads.min(by_smem).min(2);
    let cap = (target.registers_per_sm() / (ctas * threads)).min(target.max_registers_per_thread()) / 8 * 8;
    (ctas >= 2 && 2 * acc_regs <= cap).then_some(ctas)
}
