//! mbarriers in the simulator, from the PTX ISA: `mbarrier.init` (the arrivals a phase expects),
//! `mbarrier.arrive` (with a count; `.shared::cluster` arrivals at a `mapa` address are `cluster`'s) and `mbarrier.arrive.expect_tx` (transaction bytes the phase also waits for),
//! the `complete_tx` of an asynchronous copy (TMA, a cluster-launch-control response), `mbarrier.try_wait.parity`
//! (the phase of that parity has completed when the running phase has the other parity) and `mbarrier.inval`.
//!
//! Each barrier carries the happens-before model's clocks (`race`): an arrival releases the arriving warp's
//! clock into the running phase, a copy's completion releases its writes, and a wait that finds the phase
//! complete acquires what the last completed phase collected. A wait that fails in every thread of its group
//! blocks the group (`warps`) until the barrier's phase moves.

use std::collections::HashMap;

use super::race::{VClock, join};
use super::{Cta, Ins};

/// One mbarrier: arrivals per phase, arrivals still missing, the running phase, the transaction bytes it still
/// expects, the clock released into the running phase and the one the last completed phase released.
#[derive(Default)]
pub(super) struct Bar {
    count: u32,
    missing: u32,
    pub(super) phase: u64,
    tx: i64,
    pending: VClock,
    done: VClock,
}

/// The CTA's mbarriers, by shared address.
#[derive(Default)]
pub(super) struct State {
    pub(super) bars: HashMap<u64, Bar>,
}

impl State {
    /// Whether a wait for the phase of `parity` of `bar` would now succeed (or fail on a barrier that is gone).
    pub(super) fn passes(&self, bar: u64, parity: u64) -> bool {
        self.bars.get(&bar).is_none_or(|b| b.phase % 2 != parity % 2)
    }

    /// The running phase of `bar` and what it lacks, for a deadlock report.
    pub(super) fn describe(&self, bar: u64) -> String {
        match self.bars.get(&bar) {
            Some(b) => format!(
                "phase {} running, which still lacks {} arrival(s) and {} transaction byte(s)",
                b.phase, b.missing, b.tx
            ),
            None => "not initialized".into(),
        }
    }
}

/// Whether [`step`] executes `op`: `mbarrier.*` and `fence.mbarrier_init`.
pub(super) fn handles(op: &str) -> bool {
    op.starts_with("mbarrier") || op.starts_with("fence.mbarrier_init")
}

/// `mbarrier.*` for the active threads (init, try_wait.parity, inval, arrive, arrive.expect_tx).
pub(super) fn step(c: &mut Cta, ins: &Ins, active: &[bool]) -> Result<(), String> {
    let op = ins.op.as_str();
    let a = &ins.args;
    if op.starts_with("fence.mbarrier_init") {
        // The initialization made visible to the async proxy and the cluster: the barrier's state is the
        // simulator's, which every warp sees.
        return Ok(());
    }
    for t in (0..active.len()).filter(|&t| active[t]) {
        if op.starts_with("mbarrier.init") {
            let bar = c.addr(t, &a[0])?;
            let n = c.val(t, &a[1])? as u32;
            c.mbar.bars.insert(bar, Bar { count: n, missing: n, ..Default::default() });
        } else if op.starts_with("mbarrier.try_wait.parity") {
            let bar = c.addr(t, &a[1])?;
            let parity = c.val(t, &a[2])?;
            let b = c.mbar.bars.get(&bar).ok_or("waiting on an mbarrier that is not initialized")?;
            // The phase of parity `parity` has completed when the running phase has the other parity.
            let done = b.phase % 2 != parity % 2;
            c.regs[t][a[0].reg()?] = done as u64;
            if done {
                let (phase, clock) = (b.phase, b.done.clone());
                c.tmem.flight.observe(bar, phase);
                c.clocks.acquire(t / 32, &clock);
            }
        } else if op.starts_with("mbarrier.inval") {
            let bar = c.addr(t, &a[0])?;
            c.mbar.bars.remove(&bar).ok_or("invalidating an mbarrier that is not initialized")?;
        } else if op.starts_with("mbarrier.arrive.expect_tx") {
            // `_, [bar], tx`: expect tx bytes, then one arrival.
            let bar = c.addr(t, &a[1])?;
            let tx = c.val(t, &a[2])? as u32;
            expect_tx(c, bar, tx)?;
            arrive(c, t, bar, 1)?;
        } else if op.starts_with("mbarrier.arrive") {
            let (bar, n) = match a.len() {
                2 => (c.addr(t, &a[1])?, 1),
                _ => (c.addr(t, &a[1])?, c.val(t, &a[2])? as u32),
            };
            arrive(c, t, bar, n)?;
        } else {
            return Err(format!("`{op}` is not simulated"));
        }
    }
    Ok(())
}

/// `n` arrivals on `bar` by thread `t`, releasing its warp's clock into the running phase.
pub(super) fn arrive(c: &mut Cta, t: usize, bar: u64, n: u32) -> Result<(), String> {
    let clock = c.clocks.release(t / 32, 1 << (t % 32));
    let b = c.mbar.bars.get_mut(&bar).ok_or("an arrival on an mbarrier that is not initialized")?;
    if n > b.missing {
        return Err(format!("{n} arrivals on a phase that lacks only {}", b.missing));
    }
    b.missing -= n;
    join(&mut b.pending, &clock);
    complete_if_done(b);
    Ok(())
}

/// `n` arrivals on `bar` from another CTA of the cluster (`mbarrier.arrive.shared::cluster` at a `mapa`
/// address, a pair's commit). The arrival itself releases nothing: what the arriving thread's warp knew is
/// released first, carried into this CTA's clocks (`cluster::deliver`), as a pair commit releases the tensor
/// cores' accesses (`tcgen05_pair`).
pub(super) fn arrive_from_peer(c: &mut Cta, bar: u64, n: u32) -> Result<(), String> {
    let b = c.mbar.bars.get_mut(&bar).ok_or("an arrival on an mbarrier that is not initialized")?;
    if n > b.missing {
        return Err(format!("{n} arrivals on a phase that lacks only {}", b.missing));
    }
    b.missing -= n;
    complete_if_done(b);
    Ok(())
}

/// Releases `clock` into the running phase of the mbarrier at `bar`: its waiters are ordered after it.
pub(super) fn release(c: &mut Cta, bar: u64, clock: &[u32]) -> Result<(), String> {
    let b = c.mbar.bars.get_mut(&bar).ok_or("a release into an mbarrier that is not initialized")?;
    join(&mut b.pending, clock);
    Ok(())
}

/// The phase of the mbarrier at `bar` also waits for `bytes` transaction bytes.
pub(super) fn expect_tx(c: &mut Cta, bar: u64, bytes: u32) -> Result<(), String> {
    c.mbar.bars.get_mut(&bar).ok_or("expect_tx on an mbarrier that is not initialized")?.tx += bytes as i64;
    Ok(())
}

/// The phase completes once every arrival and every expected transaction byte is in.
fn complete_if_done(b: &mut Bar) {
    if b.missing == 0 && b.tx == 0 {
        b.missing = b.count;
        b.phase += 1;
        b.done = std::mem::take(&mut b.pending);
    }
}

/// `bytes` of an asynchronous copy landed, tracked by the mbarrier at `bar` (`complete_tx`), releasing `clock`
/// (the copy's writes) into the running phase.
pub(super) fn complete_tx(c: &mut Cta, bar: u64, bytes: u32, clock: &[u32]) -> Result<(), String> {
    let b = c.mbar.bars.get_mut(&bar).ok_or("a TMA copy completes on an mbarrier that is not initialized")?;
    b.tx -= bytes as i64;
    join(&mut b.pending, clock);
    complete_if_done(b);
    Ok(())
}
