//! Cluster launch control in the simulator, from the PTX ISA: `clusterlaunchcontrol.try_cancel.async.shared::cta.
//! mbarrier::complete_tx::bytes[.multicast::cluster::all].b128 [resp], [bar]` (the multicast form: the response
//! and its bytes reach every CTA of the cluster at the same offsets) cancels a cluster of the grid that has not started (here: the
//! next one in launch order, x fastest; or none, [`answer_every_request`]) and writes a 16-byte response to `resp`, completing 16 transaction bytes
//! on the mbarrier `bar`; a canceled cluster is not launched. `query_cancel.is_canceled.pred.b128` and
//! `query_cancel.get_first_ctaid::{x,y,z}.b32.b128` read a response in a `.b128` register (made by `mov.b128
//! %q, {lo, hi}`; the parser gives a `%q` register two 64-bit slots). The response's bytes are the simulator's
//! own (the ISA leaves them opaque): bit 0 canceled, then the first CTA's ctaid x, y, z in 32 bits each; asking a
//! failed response for its ctaid (undefined in the ISA) is an error, as is a request after a failed one was read.

use std::cell::Cell;
use std::collections::BTreeSet;

use super::{Cta, Ins, Opnd};

thread_local! {
    /// Whether requests succeed while clusters wait to launch (the hardware's usual answer), or all fail (a
    /// program then does only its own work): set per test thread by [`answer_every_request`].
    static CANCELS: Cell<bool> = const { Cell::new(true) };
}

/// Makes this thread's simulations cancel the next cluster not launched (`true`, the default) or fail every
/// request (`false`), so a kernel can be shown correct under both answers.
#[allow(dead_code)]
pub fn answer_every_request(cancel: bool) {
    CANCELS.with(|c| c.set(cancel));
}

/// The grid's clusters in launch order: the one running and those a response canceled.
#[derive(Default)]
pub(super) struct Queue {
    pub clusters: u64,
    pub current: u64,
    pub canceled: BTreeSet<u64>,
}

impl Queue {
    /// Cancels the next cluster not started: its index, if any.
    fn cancel_next(&mut self) -> Option<u64> {
        if !CANCELS.with(Cell::get) {
            return None;
        }
        let n = (self.current + 1..self.clusters).find(|n| !self.canceled.contains(n))?;
        self.canceled.insert(n);
        Some(n)
    }
}

/// Whether [`step`] executes `op`.
pub(super) fn handles(op: &str) -> bool {
    op.starts_with("clusterlaunchcontrol") || op == "mov.b128"
}

/// Executes one instruction [`handles`] says is this module's, for the active threads.
pub(super) fn step(c: &mut Cta, ins: &Ins, active: &[bool]) -> Result<(), String> {
    let op = ins.op.as_str();
    let a = &ins.args;
    let threads: Vec<usize> = (0..active.len()).filter(|&t| active[t]).collect();
    if op == "mov.b128" {
        let (Opnd::Reg(q), Opnd::Vec(words)) = (&a[0], &a[1]) else { return Err("bad mov.b128".into()) };
        let [Some(lo), Some(hi)] = words[..] else { return Err("mov.b128 needs two 64-bit registers".into()) };
        for t in threads {
            let (l, h) = (c.regs[t][lo], c.regs[t][hi]);
            c.regs[t][*q] = l;
            c.regs[t][*q + 1] = h;
        }
        return Ok(());
    }
    let multicast =
        "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128";
    if op == "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128" || op == multicast {
        for t in threads {
            if c.cluster.clc_failed_seen {
                return Err("try_cancel after a failed response was read (undefined in the ISA)".into());
            }
            let (resp, bar) = (c.addr(t, &a[0])?, c.addr(t, &a[1])?);
            if resp % 16 != 0 {
                return Err(format!("the response address {resp:#x} is not 16-byte aligned"));
            }
            let canceled = c.cluster.clc.borrow_mut().cancel_next();
            let mut bytes = [0u8; 16];
            if let Some(n) = canceled {
                let [gx, gy, _] = c.cluster.clusters.map(u64::from);
                let first = [(n % gx) * c.cluster.size as u64, n / gx % gy, n / (gx * gy)];
                bytes[0] = 1;
                for (i, id) in first.iter().enumerate() {
                    bytes[4 + 4 * i..8 + 4 * i].copy_from_slice(&(*id as u32).to_le_bytes());
                }
            }
            // The async proxy's write: checked with this thread's knowledge, then, like a TMA load's, known to the
            // readers through the mbarrier. `.multicast::cluster::all`: the same at the same offsets in every CTA
            // of the cluster (the peers' delivered when this CTA stops, as a multicast copy's).
            let writes = vec![(resp as usize, bytes.to_vec())];
            if op == multicast {
                for rank in (0..c.cluster.size).filter(|&r| r != c.cluster.rank) {
                    let d = super::tma::Delivery { writes: writes.clone(), bar, tx: 16, known: 0 };
                    c.cluster.outbox.push((rank, d));
                }
            }
            let clock = c.async_write(Some(t), bar, &writes)?;
            super::mbarrier::complete_tx(c, bar, 16, &clock)?;
        }
        return Ok(());
    }
    let (d, q) = (a[0].reg()?, a[1].reg()?);
    for t in threads {
        let (lo, hi) = (c.regs[t][q], c.regs[t][q + 1]);
        let canceled = lo & 1 == 1;
        let value = match op {
            "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128" => {
                if !canceled {
                    c.cluster.clc_failed_seen = true;
                }
                canceled as u64
            }
            _ if !canceled && op.starts_with("clusterlaunchcontrol.query_cancel.get_first_ctaid") => {
                return Err("get_first_ctaid of a response that canceled nothing (undefined in the ISA)".into());
            }
            "clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128" => lo >> 32,
            "clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128" => hi & 0xffff_ffff,
            "clusterlaunchcontrol.query_cancel.get_first_ctaid::z.b32.b128" => hi >> 32,
            _ => return Err(format!("`{op}` is not simulated")),
        };
        c.regs[t][d] = value;
    }
    Ok(())
}
