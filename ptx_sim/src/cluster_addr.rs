//! Addresses across the CTAs of a cluster in the simulator, from the PTX ISA: a `shared::cluster` address is this
//! CTA's own `shared::cta` window or a `mapa` result naming a peer (here: a bit of its own, the rank, the offset),
//! and a `.multicast::cluster` instruction's 16-bit CTA mask. `cluster`, `tma` and `tcgen05_pair` read them.

use super::{Cta, Opnd};

/// A `mapa` result: this bit set, the peer's rank at bit 24, the offset below.
pub(super) const REMOTE: u64 = 1 << 31;

/// The CTA and the shared-memory offset a `shared::cluster` address names: a `mapa` result, or (a `shared::cta`
/// address) this CTA's own.
pub(super) fn rank_and_offset(c: &Cta, addr: u64) -> (usize, u64) {
    if addr & REMOTE == 0 { (c.cluster.rank as usize, addr) } else { ((addr >> 24 & 0x7f) as usize, addr & 0xff_ffff) }
}

/// `mapa.shared::cluster.u32 d, a, rank`: the address of offset `a` in CTA `rank`'s shared memory.
pub(super) fn mapa(c: &Cta, addr: u64, rank: u64) -> Result<u64, String> {
    if rank >= c.cluster.size as u64 {
        return Err(format!("mapa to CTA rank {rank} of a cluster of {}", c.cluster.size));
    }
    if addr & REMOTE != 0 || addr >= 1 << 24 {
        return Err(format!("mapa of {addr:#x}, not a shared::cta address"));
    }
    Ok(REMOTE | rank << 24 | addr)
}

/// The CTAs a `.multicast::cluster` instruction of thread `t` reaches: its 16-bit CTA mask operand `a[at]` (bit `r`:
/// rank `r`), or without `.multicast::cluster` the CTA `own` alone.
pub(super) fn cta_mask(c: &Cta, t: usize, op: &str, a: &[Opnd], at: usize, own: u32) -> Result<u32, String> {
    if !op.contains(".multicast::cluster") {
        return Ok(1 << own);
    }
    let m = c.val(t, a.get(at).ok_or("a multicast instruction without its CTA mask")?)? as u16 as u32;
    if m >> c.cluster.size != 0 {
        return Err(format!("CTA mask {m:#06x} names CTAs past the cluster's {}", c.cluster.size));
    }
    Ok(m)
}
