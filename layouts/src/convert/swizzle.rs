//! A round trip through shared memory ([`SharedPlan`]), and its layout, chosen so that the vectorized stores and
//! loads are free of bank conflicts.
//!
//! Work in the space `T` of tensor elements one CTA holds. The *vector* subspace `V` is a basis of
//! `im(S_register) ∩ im(D_register)` (at most 16 bytes): directions both sides hold inside a thread, so a thread
//! moves `2^dim V` elements per access whatever their register numbers. The offset bits, low to high, are `V`,
//! then *unit* bits; a unit is `U = vec · bits / 8` bytes and its bank is given by the unit bits just above the
//! ones that pick bytes inside a 4-byte word. A phase of `2^nb` lanes (8, 16 or 32, from the access width) is
//! conflict-free when its lanes' tensor directions, modulo `V`, map injectively onto those bank bits.
//!
//! With `A` = the source phase-lane images and `B` = the destination ones (modulo `V`, extended to `nb`
//! dimensions each), a subspace `H` of the unit space that meets neither `A` nor `B` in more than 0 is a common
//! complement: with `I = A ∩ B`, `A = I ⊕ X1`, `B = I ⊕ X2`, the pairs `Z = {x1_i ⊕ x2_i}` and any completion `C`
//! of `A + B` give `H = Z ⊕ C`. Putting `A` on the bank bits and `H` everywhere else makes both sides
//! conflict-free whenever each side alone could be (two subspaces of equal dimension always have a common
//! complement); otherwise the conflicts are counted and reported.

use crate::convert::banks::BankReport;
use crate::convert::banks::{Access, free_mask, phase_lanes_log2, simulate};
use crate::convert::{BLOCK, LANE, Pair, REGISTER, Space, WARP, intersect};
use crate::linear::{Basis, LinearLayout, Result, bail};

/// Which barrier separates the stores from the loads of a shared-memory round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierKind {
    /// Every warp reads only what it wrote itself: `bar.warp.sync`.
    Warp,
    /// Warps read each other's data: `bar.sync` over the CTA.
    Cta,
}

/// Source hardware slots that hold a duplicate of an element another slot stores: a thread skips register `r`
/// when `r & register != 0`, and a whole thread skips the store when `lane_id & lane != 0` or
/// `warp_id & warp != 0` (the free-variable masks of the source within one CTA).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreMask {
    pub register: u32,
    pub lane: u32,
    pub warp: u32,
}

/// A round trip through shared memory.
///
/// Each CTA has its own buffer of `2^offset_bits` elements. Repetition `k` (of `reps`) moves the elements `x`
/// whose rep coordinate is `k`: a source thread stores register `r` at `store_map(r, lane, warp, block)` (out-dims
/// `offset`, `rep`) in the repetition given by the `rep` coordinate, then after the barrier a destination thread
/// loads register `r` from `load_map(r, lane, warp, block)`. Both maps send a register's `rep` coordinate from
/// its register bits only, so each repetition touches a fixed subset of every thread's registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedPlan {
    /// `offset → tensor` for one repetition of one CTA: element at offset `o` of repetition `k` is
    /// `shared(o) ⊕ rep(k)` (relative to the CTA's own source elements).
    pub shared: LinearLayout,
    /// One tensor direction per repetition bit (coordinates per out-dim).
    pub rep_bases: Vec<Basis>,
    pub reps: u32,
    /// Elements per vector access (at most 16 bytes).
    pub vec: u32,
    pub elem_bits: u32,
    pub barrier: BarrierKind,
    /// `(register, lane, warp, block) → (offset, rep)` for the stores.
    pub store_map: LinearLayout,
    /// `(register, lane, warp, block) → (offset, rep)` for the loads.
    pub load_map: LinearLayout,
    pub store_mask: StoreMask,
    /// Wavefronts beyond one per phase, summed over the store instructions of one CTA (all repetitions).
    pub store_conflicts: u32,
    /// The same for the loads.
    pub load_conflicts: u32,
    pub store_report: BankReport,
    pub load_report: BankReport,
    /// Bytes of shared memory per CTA.
    pub scratch_bytes: u32,
}

/// Plans the round trip of `pair` through shared memory, in repetitions when it needs more than
/// `max_scratch_bytes` per CTA.
pub(crate) fn plan_shared(
    pair: &Pair,
    elem_bits: u32,
    warp_local: bool,
    max_scratch_bytes: Option<u32>,
) -> Result<SharedPlan> {
    let (s, d) = (&pair.s, &pair.d);
    let bytes = elem_bits / 8;
    let cta_cols: Vec<u128> = [&s.reg[..], &s.lane, &s.warp].concat();
    let t = Space::spanned_by(&cta_cols);
    let dim_t = t.dim();

    // Duplicated source slots store nothing. With a warp barrier every warp must store its own data.
    let mut prior = Space::new();
    let mut store_mask = StoreMask {
        register: free_mask(&s.reg, &mut prior),
        lane: free_mask(&s.lane, &mut prior),
        warp: free_mask(&s.warp, &mut prior),
    };
    let barrier = if warp_local && store_mask.warp == 0 { BarrierKind::Warp } else { BarrierKind::Cta };
    if barrier == BarrierKind::Warp {
        store_mask.warp = 0;
    }

    // Directions every repetition must hold: whatever lanes and warps of either side reach.
    let cross: Vec<u128> = d.block.iter().zip(&s.block).map(|(a, b)| a ^ b).collect();
    let k0_cols: Vec<u128> = [&s.lane[..], &s.warp, &d.lane, &d.warp, &cross].concat();
    let k0 = Space::spanned_by(&k0_cols);
    let v_full = intersect(Space::spanned_by(&s.reg).basis(), &d.reg);

    // Repetitions: split off directions outside the lanes and warps, preferring those outside V.
    let mut q_count = 0u32;
    if let Some(max) = max_scratch_bytes {
        while ((bytes as u64) << (dim_t - q_count)) > max as u64 {
            if q_count == dim_t - k0.dim() {
                bail!(
                    "the conversion needs at least {} bytes of shared memory per CTA (every lane and warp must take \
                     part in each repetition), more than max_scratch_bytes = {max}",
                    (bytes as u64) << k0.dim()
                );
            }
            q_count += 1;
        }
    }
    let mut k0v = k0.clone();
    for &v in &v_full {
        k0v.insert(v);
    }
    let mut outside_v: Vec<u128> = Vec::new();
    for &x in t.basis() {
        if k0v.insert(x) {
            outside_v.push(x);
        }
    }
    let mut q_space = k0.clone();
    let mut q: Vec<u128> = Vec::new();
    for &x in outside_v.iter().rev().chain(v_full.iter().rev()) {
        if q.len() as u32 == q_count {
            break;
        }
        if q_space.insert(x) {
            q.push(x);
        }
    }
    debug_assert_eq!(q.len() as u32, q_count);

    // The vector: the longest prefix of V (at most 16 bytes) whose span meets the repetition directions only in
    // 0, even together with K0: a direction already in K0 + V is harmless, a new one must avoid Q + K0 + V.
    let mut vec_space = Space::new();
    let mut k0_v = k0.clone();
    let mut q_k0_v = Space::spanned_by(&[&q[..], k0.basis()].concat());
    let mut v: Vec<u128> = Vec::new();
    for &x in v_full.iter().take((128 / elem_bits).trailing_zeros() as usize) {
        if !k0_v.contains(x) && !q_k0_v.insert(x) {
            break;
        }
        k0_v.insert(x);
        vec_space.insert(x);
        v.push(x);
    }

    // K: the shared buffer of one repetition, a complement of the repetition directions containing K0 and V.
    let mut k_space = Space::spanned_by(&q);
    let mut k_basis: Vec<u128> = Vec::new();
    for &x in k0.basis().iter().chain(&v).chain(t.basis()) {
        if k_space.insert(x) {
            k_basis.push(x);
        }
    }
    let dim_k = k_basis.len() as u32;
    debug_assert_eq!(dim_k + q_count, dim_t);

    let units = unit_basis(pair, &vec_space, &k_basis, elem_bits << v.len(), store_mask.lane)?;
    let offsets: Vec<u128> = v.iter().chain(&units).copied().collect();
    // Offsets then repetitions: a basis of T.
    let ext = Space::spanned_by(&[&offsets[..], &q].concat());
    if ext.dim() != dim_t || offsets.len() as u32 != dim_k {
        bail!("internal error: the chosen shared layout is not invertible");
    }
    let split = |x: u128| -> Result<(u32, u32)> {
        let Some(c) = ext.solve(x) else {
            bail!("internal error: element {} is outside the CTA tile", pair.element(x))
        };
        Ok(((c & ((1u128 << dim_k) - 1)) as u32, (c >> dim_k) as u32))
    };
    let map = |reg: &[u128], lane: &[u128], warp: &[u128], block: &[u128]| -> Result<LinearLayout> {
        let conv = |cols: &[u128]| cols.iter().map(|&x| split(x).map(|(o, r)| vec![o, r])).collect::<Result<Vec<_>>>();
        LinearLayout::new(
            [(REGISTER, conv(reg)?), (LANE, conv(lane)?), (WARP, conv(warp)?), (BLOCK, conv(block)?)],
            [("offset", 1u32 << dim_k), ("rep", 1u32 << q_count)],
        )
    };
    let zero_blocks = vec![0u128; s.block.len()];
    let store_map = map(&s.reg, &s.lane, &s.warp, &zero_blocks)?;
    let load_map = map(&d.reg, &d.lane, &d.warp, &cross)?;
    for m in [&store_map, &load_map] {
        if [LANE, WARP, BLOCK].iter().any(|n| m.bases(n).iter().any(|b| b[1] != 0)) {
            bail!("internal error: a repetition depends on the lane, warp or block");
        }
    }

    let unflatten = |x: &u128| -> Vec<u32> { pair.src.unflatten_out(*x).to_vec() };
    let shared = LinearLayout::new([("offset", offsets.iter().map(unflatten).collect())], pair.src.out_dim_sizes())?;
    let rep_bases: Vec<Basis> = q.iter().map(|x| pair.src.unflatten_out(*x)).collect();

    let access = |m: &LinearLayout, reg_mask: u32, lane_mask: u32, warp_mask: u32| Access {
        reg: m.bases(REGISTER).iter().map(|b| (b[0], b[1])).collect(),
        lane: m.bases(LANE).iter().map(|b| b[0]).collect(),
        warp: m.bases(WARP).iter().map(|b| b[0]).collect(),
        reg_mask,
        lane_mask,
        warp_mask,
        vec_log2: v.len() as u32,
        elem_bits,
    };
    let store_report = simulate(&access(&store_map, store_mask.register, store_mask.lane, store_mask.warp));
    let load_report = simulate(&access(&load_map, free_mask(&d.reg, &mut Space::new()), 0, 0));
    Ok(SharedPlan {
        shared,
        rep_bases,
        reps: 1 << q_count,
        vec: 1 << v.len(),
        elem_bits,
        barrier,
        store_map,
        load_map,
        store_mask,
        store_conflicts: store_report.conflicts,
        load_conflicts: load_report.conflicts,
        store_report,
        load_report,
        scratch_bytes: bytes << dim_k,
    })
}

/// The unit bits (offset bits above the vector), low to high: the source phase lanes on the bank bits and a
/// common complement of both sides' phase lanes everywhere else.
fn unit_basis(pair: &Pair, vec: &Space, k_basis: &[u128], unit_bits: u32, src_lane_mask: u32) -> Result<Vec<u128>> {
    let (s, d) = (&pair.s, &pair.d);
    let unit_bytes = unit_bits / 8;
    let phase_bits = phase_lanes_log2(unit_bytes);
    // Unit bits that pick a unit inside a 4-byte word: lanes there share words instead of banks.
    let word_bits = if unit_bytes < 4 { (4 / unit_bytes).trailing_zeros() } else { 0 };
    // Everything below is modulo V: `m` collects V plus what has been taken.
    let independent = |cands: &[u128], taken: &[u128], limit: usize| -> Vec<u128> {
        let mut m = vec.clone();
        for &x in taken {
            m.insert(x);
        }
        let mut out = Vec::new();
        for &x in cands {
            if taken.len() + out.len() == limit {
                break;
            }
            let r = vec.reduce(x);
            if m.insert(r) {
                out.push(r);
            }
        }
        out
    };
    let ks: Vec<u128> = k_basis.iter().map(|&x| vec.reduce(x)).collect();
    let n_units = Space::spanned_by(&[vec.basis(), k_basis].concat()).dim() - vec.dim();
    let nb = (phase_bits as usize).min(n_units as usize);

    let src_phase: Vec<u128> = s
        .lane
        .iter()
        .enumerate()
        .take(phase_bits as usize)
        .filter(|(i, _)| src_lane_mask >> i & 1 == 0)
        .map(|(_, &x)| x)
        .collect();
    let dst_phase: Vec<u128> = d.lane.iter().take(phase_bits as usize).copied().collect();
    let mut a = independent(&src_phase, &[], nb);
    let b0 = independent(&dst_phase, &[], nb);
    let mut b = b0.clone();
    let ext_a = independent(&[&b0[..], &ks].concat(), &a, nb);
    a.extend(ext_a);
    let ext_b = independent(&[&a[..], &ks].concat(), &b, nb);
    b.extend(ext_b);

    // I = A ∩ B (mod V), X1 / X2 its complements in A / B, Z the pairwise sums.
    let with_v = |xs: &[u128]| [vec.basis(), xs].concat();
    let i_full = intersect(&with_v(&a), &with_v(&b));
    let i = independent(&i_full, &[], usize::MAX);
    let x1 = independent(&a, &i, usize::MAX);
    let x2 = independent(&b, &i, usize::MAX);
    if x1.len() != x2.len() {
        bail!("internal error: the source and destination phase spaces have different dimensions");
    }
    let z: Vec<u128> = x1.iter().zip(&x2).map(|(p, q)| p ^ q).collect();
    let c = independent(&ks, &[&a[..], &z].concat(), usize::MAX);
    let rest: Vec<u128> = z.into_iter().chain(c).collect();
    let w = word_bits as usize;
    let units: Vec<u128> = if w > 0 && rest.len() >= w {
        rest[..w].iter().chain(&a).chain(&rest[w..]).copied().collect()
    } else {
        a.iter().chain(&rest).copied().collect()
    };
    if units.len() as u32 != n_units {
        bail!("internal error: the unit basis has {} vectors for {} unit bits", units.len(), n_units);
    }
    Ok(units)
}
