//! TMA for the simulator, from the PTX ISA and the tensor-map definition: `cp.async.bulk.tensor` tile copies
//! between a tensor in global memory and a box in shared memory, independently of tessel-codegen and of how the
//! compiler picks its boxes. A tensor map here is what the launch encodes (base, dims, byte strides, box,
//! swizzle); the kernel names it by the address of its `.param .b8 tmap[128]`.
//!
//! A load writes the box in row-major order, each element at its byte offset swizzled in the shared address
//! (`swizzle` bytes: bits 4.. of the address XOR bits 7.., over 3, 2 or 1 bits for 128, 64 or 32 bytes), zero
//! outside the tensor, and completes its bytes on the mbarrier (`complete_tx`) at once: its writes are checked
//! with the issuing thread's knowledge and are ordered for the threads only by a wait on that mbarrier (`race`).
//! A store writes the elements inside the tensor from the box read the same way. Coordinates are innermost first.
//!
//! `.multicast::cluster` (a 16-bit CTA mask): the box lands at the same shared offset in every CTA of the mask
//! and completes its bytes on each one's mbarrier at the barrier's offset. `.cta_group::2` (a CTA pair's copy,
//! its barrier a `mapa` address of the issuer's pair's even CTA): each destination's bytes complete instead on
//! the barrier at that offset in the destination's pair's even CTA ([`land_pair`]). The issuing CTA's part lands at once;
//! the peers' parts are queued (`Member::outbox`) and delivered when the issuing CTA stops (at a cluster barrier,
//! a blocked wait or its exit, `cluster::deliver`): the CTAs of a cluster run in rank order, so a copy CTA 0
//! issues reaches its peers before they run on. A peer whose barrier is not initialized by then is an error,
//! which is what a missing cluster barrier between the initializations and the copy leads to.
//!
//! A map of data type `16U4_ALIGN16B` (`fp4_padded`) counts its innermost dim and box in 4-bit elements, two per
//! byte in global memory; in shared memory each 16 of them (8 bytes) are followed by 8 bytes of padding, and the
//! transaction bytes are the packed ones.

use super::{Cta, Global, Ins, Opnd};

/// A tiled tensor map: dims and byte strides outermost first, the box the same way, the swizzle span in bytes
/// (0, 32, 64 or 128).
#[derive(Clone, Debug)]
pub struct TensorMap {
    pub base: u64,
    pub elem_bytes: u32,
    pub dims: Vec<u64>,
    pub strides: Vec<u64>,
    pub box_dims: Vec<u32>,
    pub swizzle: u32,
    /// `16U4_ALIGN16B`: 4-bit elements, padded in shared memory (see the module).
    pub fp4_padded: bool,
}

/// The shared address of byte offset `off` of a box at `base`, swizzled.
pub(super) fn swizzled(base: u64, off: u64, swizzle: u32) -> u64 {
    let a = base + off;
    if swizzle == 0 {
        return a;
    }
    let bits = (swizzle / 16 - 1) as u64;
    a ^ (((a >> 7) & bits) << 4)
}

/// Each element of the box at `coords` (innermost first): its byte offset in the box and, when inside the
/// tensor, its global address.
fn elements(m: &TensorMap, coords: &[i64]) -> Vec<(u64, Option<u64>)> {
    let rank = m.box_dims.len();
    let origin: Vec<i64> = coords.iter().rev().copied().collect();
    let total: u64 = m.box_dims.iter().map(|&b| b as u64).product();
    (0..total)
        .map(|i| {
            let mut rest = i;
            let mut at = Some(m.base);
            for d in (0..rank).rev() {
                let k = (rest % m.box_dims[d] as u64) as i64;
                rest /= m.box_dims[d] as u64;
                let x = origin[d] + k;
                at = match at {
                    Some(a) if x >= 0 && (x as u64) < m.dims[d] => Some(a + x as u64 * m.strides[d]),
                    _ => None,
                };
            }
            (i * m.elem_bytes as u64, at)
        })
        .collect()
}

/// A `16U4_ALIGN16B` load: each byte of the box's packed rows (two 4-bit elements, innermost dim in elements) to
/// its padded shared-memory place, zero outside the tensor; the packed bytes complete on the mbarrier.
#[allow(clippy::too_many_arguments)]
fn load_padded_fp4(
    c: &mut Cta,
    g: &mut Global,
    t: usize,
    m: &TensorMap,
    coords: &[i64],
    dst: u64,
    bar: u64,
) -> Result<(), String> {
    let rank = m.box_dims.len();
    let inner = m.box_dims[rank - 1] as u64;
    if inner % 16 != 0 || coords[0] % 2 != 0 {
        return Err("a 16U4_ALIGN16B box must span whole 16-element groups from an even coordinate".into());
    }
    // The map as whole bytes: the innermost dim halved.
    let mut bytes_map = m.clone();
    bytes_map.dims[rank - 1] = m.dims[rank - 1].div_ceil(2);
    bytes_map.box_dims[rank - 1] = (inner / 2) as u32;
    bytes_map.elem_bytes = 1;
    let mut byte_coords = coords.to_vec();
    byte_coords[0] /= 2;
    let elems = elements(&bytes_map, &byte_coords);
    let row = inner / 2;
    let mut writes = Vec::with_capacity(elems.len());
    for &(off, at) in &elems {
        let byte = match at {
            Some(a) => g.slice(a, 1)?[0],
            None => 0,
        };
        let (r, k) = (off / row, off % row);
        let padded = r * inner + (k / 8) * 16 + k % 8;
        let s = swizzled(dst, padded, m.swizzle) as usize;
        if s + 1 > c.smem.len() {
            return Err(format!("a TMA load writes shared byte {s} past the {} allocated", c.smem.len()));
        }
        writes.push((s, vec![byte]));
    }
    land(c, Delivery { writes, bar, tx: elems.len() as u32, known: 0 }, Some(t))
}

/// One CTA's part of a (multicast) TMA load: shared-memory writes (offset, bytes) and the mbarrier (offset) its
/// `tx` bytes complete on.
#[derive(Clone)]
pub(super) struct Delivery {
    pub writes: Vec<(usize, Vec<u8>)>,
    pub bar: u64,
    pub tx: u32,
    /// For a copy another CTA issued: what that CTA knew of the destination's tcgen05 ops when it issued
    /// ([`super::tcgen05::InFlight::knows`]); 0 for the destination's own.
    pub known: u32,
}

/// `cp.async.bulk.tensor.Nd` by thread `t`: a load into shared memory completing on an mbarrier, or a store
/// from shared memory (gather4 and scatter4 are `tma_gather`'s, im2col loads `tma_im2col`'s, dispatched by the
/// caller).
pub(super) fn copy(c: &mut Cta, g: &mut Global, ins: &Ins, t: usize) -> Result<(), String> {
    let op = ins.op.as_str();
    if !op.contains(".tile") {
        return Err("only tile-mode copies are simulated here (im2col loads: `tma_im2col`)".into());
    }
    let a = &ins.args;
    let load = op.contains(".shared::cluster.global") || op.contains(".shared::cta.global");
    let (coords_op, smem_op) = if load { (&a[1], &a[0]) } else { (&a[0], &a[1]) };
    let Opnd::Coords(map_op, regs) = coords_op else { return Err("no [tensor map, {coordinates}]".into()) };
    let map_at = c.val(t, map_op)?;
    let m = g.maps.get(&map_at).ok_or_else(|| format!("no tensor map at {map_at:#x}"))?.clone();
    if regs.len() != m.box_dims.len() {
        return Err(format!("{} coordinates for a rank-{} tensor map", regs.len(), m.box_dims.len()));
    }
    let coords: Vec<i64> = regs.iter().map(|&r| c.regs[t][r] as u32 as i32 as i64).collect();
    let dst = c.addr(t, smem_op)?;
    if m.fp4_padded {
        if !load {
            return Err("TMA stores of 16U4_ALIGN16B maps are not simulated".into());
        }
        let bar = c.addr(t, &a[2])?;
        return load_padded_fp4(c, g, t, &m, &coords, dst, bar);
    }
    let eb = m.elem_bytes as usize;
    let elems = elements(&m, &coords);
    if load {
        let mut writes = Vec::with_capacity(elems.len());
        for &(off, at) in &elems {
            let bytes = match at {
                Some(a) => g.slice(a, eb)?.to_vec(),
                None => vec![0; eb],
            };
            let s = swizzled(dst, off, m.swizzle) as usize;
            if s + eb > c.smem.len() {
                return Err(format!("a TMA load writes shared bytes {s}.. past the {} allocated", c.smem.len()));
            }
            writes.push((s, bytes));
        }
        let bar = c.addr(t, &a[2])?;
        deliver(c, t, op, a, writes, bar, (elems.len() * eb) as u32)
    } else {
        for &(off, at) in &elems {
            let s = swizzled(dst, off, m.swizzle);
            for i in 0..eb as u64 {
                c.async_read(s + i, "a TMA store")?;
            }
            let bytes = c.smem(t, s, eb, None)?.to_vec();
            if let Some(a) = at {
                g.slice(a, eb)?.copy_from_slice(&bytes);
            }
        }
        Ok(())
    }
}

/// A load's part for each of its destinations (`writes` at the same offsets in each, `tx` bytes on the barrier
/// at `bar`, the copy's barrier operand; the `.multicast::cluster` mask is operand 3): the issuing CTA's lands at
/// once, the peers' are queued. A `.cta_group::2` copy completes each destination's bytes on its pair's even CTA's
/// barrier ([`land_pair`]); any other completes on the destination's own.
pub(super) fn deliver(
    c: &mut Cta,
    t: usize,
    op: &str,
    a: &[Opnd],
    writes: Vec<(usize, Vec<u8>)>,
    bar: u64,
    tx: u32,
) -> Result<(), String> {
    let (bar_rank, bar) = super::cluster_addr::rank_and_offset(c, bar);
    if op.contains(".cta_group::2") {
        // A pair's copy: each destination's box lands in that CTA and its bytes complete on the barrier at the
        // same offset in that CTA's pair's even CTA (the barrier the pair's MMA issuer waits on).
        let rank = c.cluster.rank;
        if bar_rank as u32 != rank & !1 {
            return Err(format!("a pair copy of CTA {rank} completes on CTA {bar_rank}, not its pair's even CTA"));
        }
        let mask = super::cluster_addr::cta_mask(c, t, op, a, 3, rank)?;
        for to in (0..c.cluster.size).filter(|r| mask >> r & 1 == 1) {
            let known = c.tmem.flight.knows(to as usize);
            let d = Delivery { writes: writes.clone(), bar, tx, known };
            if to == rank {
                land_pair(c, d, Some(t))?;
            } else {
                c.cluster.pair_outbox.push((to, d));
            }
        }
        return Ok(());
    }
    if bar_rank != c.cluster.rank as usize {
        return Err(format!("`{op}` completes on CTA {bar_rank}'s mbarrier: simulated for .cta_group::2 copies"));
    }
    let mask = super::cluster_addr::cta_mask(c, t, op, a, 3, c.cluster.rank)?;
    for rank in (0..c.cluster.size).filter(|r| mask >> r & 1 == 1) {
        let known = c.tmem.flight.knows(rank as usize);
        let d = Delivery { writes: writes.clone(), bar, tx, known };
        if rank == c.cluster.rank {
            land(c, d, Some(t))?;
        } else {
            c.cluster.outbox.push((rank, d));
        }
    }
    Ok(())
}

/// A pair copy's part for CTA `c` lands (`issuer`: the thread of `c` that issued it, if any): into `c`'s shared
/// memory, its bytes for the pair's even CTA's barrier: `c`'s own when `c` is that CTA, else queued for it
/// (`Member::remote_tx`), the writes then ordered for `c`'s threads only through the pair's MMAs (`tcgen05_pair`).
pub(super) fn land_pair(c: &mut Cta, d: Delivery, issuer: Option<usize>) -> Result<(), String> {
    let lead = c.cluster.rank & !1;
    if lead == c.cluster.rank {
        return land(c, d, issuer);
    }
    for (s, bytes) in &d.writes {
        c.tmem.flight.check_smem_write_known(*s as u64, bytes.len(), "a TMA load", d.known)?;
    }
    let clock = c.async_write(issuer, d.bar | (lead as u64 + 1) << super::race::PEER_BAR, &d.writes)?;
    super::race::join(&mut c.cluster.pair_copies, &clock);
    c.cluster.remote_tx.push((lead, d.bar, d.tx));
    Ok(())
}

/// A copy's part for one CTA lands: the async proxy's writes, checked with the knowledge of the thread that
/// issued it (`issuer`, in this CTA; none for a peer's multicast) and ordered for the waiting threads by the
/// mbarrier (`race`), then its bytes complete on the CTA's mbarrier.
pub(super) fn land(c: &mut Cta, d: Delivery, issuer: Option<usize>) -> Result<(), String> {
    for (s, bytes) in &d.writes {
        c.tmem.flight.check_smem_write_known(*s as u64, bytes.len(), "a TMA load", d.known)?;
    }
    let clock = c.async_write(issuer, d.bar, &d.writes)?;
    super::mbarrier::complete_tx(c, d.bar, d.tx, &clock)
}
