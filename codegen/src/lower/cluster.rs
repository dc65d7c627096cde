//! Pairs of CTAs in a cluster (sm_90a): the agreement that lets two programs share their TMA copies, and the
//! cross-CTA half of a ring release.
//!
//! A kernel with `cluster_agree` is launched in clusters of two CTAs when its grid allows
//! ([`crate::Kernel::cluster_pairs`]); otherwise each CTA is its own cluster and every agreement is false. Both
//! CTAs of a pair compute the same agreement from the same exchanged values, so they take the same path: either
//! both multicast half of each shared block into both CTAs and release its ring slots to each other, or neither
//! does and each runs as alone.

use tessel_tile::ir::OpData;

use super::Lower;
use crate::CompileError;
use crate::ptx::{Instr, Operand, Reg, RegClass, instr, mem, mem_off, special};

fn need_clusters(l: &Lower) -> Result<(), CompileError> {
    if l.arch == tessel_tile::Target::Sm80 {
        return Err(CompileError::new("clusters of CTAs need sm_90a or newer"));
    }
    Ok(())
}

/// This CTA's rank in its cluster and whether the cluster is a pair.
pub(crate) fn rank_and_pair(l: &mut Lower) -> (Reg, Reg) {
    let (rank, n, pair) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
    l.b.op("mov.u32", rank, special("%cluster_ctarank"));
    l.b.op("mov.u32", n, special("%cluster_nctarank"));
    l.b.op("setp.eq.u32", pair, (n, 2u32));
    (rank, pair)
}

/// `barrier.cluster` arrive and wait, every thread of both CTAs: the release and acquire order this CTA's
/// earlier shared-memory writes and mbarrier initializations before the peer's later accesses.
fn cluster_barrier(l: &mut Lower) {
    l.b.effect("barrier.cluster.arrive.release.aligned", ());
    l.b.effect("barrier.cluster.wait.acquire.aligned", ());
}

/// `%share = cluster_agree xchg, values...`.
///
/// - A first cluster barrier: the peer has started (its shared memory may be written) and has initialized its
///   mbarriers (`fence.mbarrier_init` at each initialization, released by the barrier).
/// - The first thread writes this CTA's values into the peer's `xchg` (`st.shared::cluster` through `mapa`).
/// - A second cluster barrier: the peer's values are in this CTA's `xchg`, and no remote access to it follows
///   (the buffer may be reused).
/// - Every thread compares: true when the cluster is a pair and every value matches.
pub(crate) fn agree(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    need_clusters(l)?;
    let xchg = l.get(data.operands[0])?[0];
    let values: Vec<Reg> = data.operands[1..].iter().map(|&v| l.get(v).map(|r| r[0])).collect::<Result<_, _>>()?;
    let (rank, pair) = rank_and_pair(l);
    let first = super::asynchronous::first_thread(l, None)?;
    let writer = l.b.reg(RegClass::Pred);
    l.b.op("and.pred", writer, (first, pair));
    cluster_barrier(l);
    let (peer, remote) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
    l.b.op("xor.b32", peer, (rank, 1u32));
    l.b.emit(instr("mapa.shared::cluster.u32").guard(pair).dst(remote).srcs((xchg, peer)));
    for (i, &v) in values.iter().enumerate() {
        l.b.emit(instr("st.shared::cluster.u32").guard(writer).srcs((mem_off(remote, 4 * i as i64), v)));
    }
    cluster_barrier(l);
    let share = l.b.reg(RegClass::Pred);
    l.b.op("mov.pred", share, pair);
    for (i, &v) in values.iter().enumerate() {
        let (theirs, same) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
        l.b.op("ld.shared.u32", theirs, mem_off(xchg, 4 * i as i64));
        l.b.op("setp.eq.and.u32", same, (theirs, v, share));
        l.b.op("mov.pred", share, same);
    }
    l.vals.insert(data.results[0], vec![share]);
    Ok(())
}

/// Before a multicast refill: where `share` holds, thread `first` tells the peer that this CTA is done with
/// the buffer (a release arrival on the peer's copy of `peer_bar`: every warp's reads of it came before, by
/// the CTA barrier or the ring release that elected the copies' issuers), and each thread of `issuers` (the
/// copies' predicates) waits for the peer's own arrival on this CTA's `peer_bar`, phase parity `phase`.
pub(crate) fn handshake(l: &mut Lower, first: Reg, issuers: &[Reg], share: Reg, peer_bar: Reg, phase: Reg) {
    let arrive = l.b.reg(RegClass::Pred);
    l.b.op("and.pred", arrive, (first, share));
    let (rank, _) = rank_and_pair(l);
    let (peer, remote) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
    l.b.op("xor.b32", peer, (rank, 1u32));
    l.b.emit(instr("mapa.shared::cluster.u32").guard(arrive).dst(remote).srcs((peer_bar, peer)));
    l.b.emit(
        instr("mbarrier.arrive.release.cluster.shared::cluster.b64").guard(arrive).dst(Operand::Sink).srcs(mem(remote)),
    );
    let wait = l.b.reg(RegClass::Pred);
    l.b.op("mov.pred", wait, issuers[0]);
    for &p in &issuers[1..] {
        l.b.op("or.pred", wait, (wait, p));
    }
    l.b.op("and.pred", wait, (wait, share));
    let (again, done) = (l.b.new_label("peer_wait"), l.b.new_label("peer_done"));
    l.b.emit(Instr::bra(&done).unless(wait));
    l.b.label(&again);
    let ready = l.b.reg(RegClass::Pred);
    l.b.op("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64", ready, (mem(peer_bar), phase));
    l.b.emit(Instr::bra(&again).unless(ready));
    l.b.label(&done);
}
