//! Cluster launch control (sm_100a): `clc_try_cancel` is one thread's
//! `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [resp], [bar]` (the
//! 16-byte response lands asynchronously and completes 16 transaction bytes on the barrier); `clc_load_result`
//! is every thread's `ld.shared.v2.b64` of the response (a `clc_result` is two b64 registers);
//! `clc_is_canceled` and `clc_program_id` rebuild the `.b128` (`mov.b128 %q, {lo, hi}`) and query it:
//! `clusterlaunchcontrol.query_cancel.is_canceled.pred.b128` and, only when it canceled a program (the ISA leaves
//! the ctaid of a failed response undefined), `query_cancel.get_first_ctaid::{x,y,z}.b32.b128`, else -1. These
//! are the forms ptxas 13.0 accepts for sm_100a at PTX 8.6, the version sm_100a kernels carry. With one CTA per
//! program the first ctaid of the canceled cluster is the program id; in a cluster (`num_ctas` CTAs along x) the
//! cluster's first CTA asks, with `.multicast::cluster::all` (the response reaches every CTA's buffer and barrier),
//! and the program id along x is that ctaid over `num_ctas`.

use tessel_tile::ir::OpData;
use tessel_tile::ops::Op;

use super::Lower;
use super::asynchronous::first_thread;
use crate::CompileError;
use crate::ptx::{Reg, RegClass, instr, mem, vector};

pub(crate) fn lower(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    if l.arch != tessel_tile::Target::Sm100a {
        return Err(CompileError::new(format!("`{}` (cluster launch control) needs sm_100a", data.op.name())));
    }
    match &data.op {
        Op::ClcTryCancel => {
            let (resp, bar) = (l.get(data.operands[0])?[0], l.get(data.operands[1])?[0]);
            let p = first_thread(l, None)?;
            if l.f.config.num_ctas > 1 {
                // A cluster's request: its first CTA asks once for the cluster, and the response (with its 16
                // bytes) reaches every CTA's buffer and barrier, each of which expects it.
                let rank = l.cta_rank();
                let first = l.b.reg(RegClass::Pred);
                l.b.op("setp.eq.and.u32", first, (rank, 0u32, p));
                let op = "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes\
                          .multicast::cluster::all.b128";
                l.b.emit(instr(op).guard(first).srcs((mem(resp), mem(bar))));
            } else {
                let op = "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128";
                l.b.emit(instr(op).guard(p).srcs((mem(resp), mem(bar))));
            }
        }
        Op::ClcLoadResult => {
            let resp = l.get(data.operands[0])?[0];
            let words = [l.b.reg(RegClass::B64), l.b.reg(RegClass::B64)];
            l.b.op("ld.shared.v2.b64", vector(&words), mem(resp));
            l.vals.insert(data.results[0], words.to_vec());
        }
        Op::ClcIsCanceled | Op::ClcProgramId(_) => {
            let words = l.get(data.operands[0])?.to_vec();
            let q = l.b.reg(RegClass::B128);
            l.b.op("mov.b128", q, vector(&words));
            let p = canceled(l, q);
            let out = match data.op {
                Op::ClcProgramId(axis) => {
                    let r = l.b.reg(RegClass::B32);
                    l.b.op("mov.b32", r, -1i32);
                    let dim = ["x", "y", "z"][axis as usize];
                    let op = format!("clusterlaunchcontrol.query_cancel.get_first_ctaid::{dim}.b32.b128");
                    l.b.emit(instr(op).guard(p).dst(r).src(q));
                    // Clusters lie along x: the program (cluster) id is the first CTA's x over the CTAs per cluster.
                    let n = l.f.config.num_ctas;
                    if axis == 0 && n > 1 {
                        l.b.emit(instr("div.s32").guard(p).dst(r).srcs((r, n)));
                    }
                    r
                }
                _ => p,
            };
            l.vals.insert(data.results[0], vec![out]);
        }
        _ => unreachable!("not a cluster launch control op"),
    }
    Ok(())
}

/// Whether the response in `q` canceled a program.
fn canceled(l: &mut Lower, q: Reg) -> Reg {
    let p = l.b.reg(RegClass::Pred);
    l.b.op("clusterlaunchcontrol.query_cancel.is_canceled.pred.b128", p, q);
    p
}
