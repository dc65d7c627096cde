//! The shared-memory bank model, and vector widths for global accesses.
//!
//! Shared memory has 32 banks of 4 bytes. A warp-wide access of `U` bytes per lane is served in phases: 4 phases
//! of 8 lanes for 16-byte accesses, 2 of 16 lanes for 8-byte accesses, one of 32 lanes otherwise. Within a phase,
//! lanes that touch the same 4-byte word share it; distinct words in one bank are serialized. The wavefronts of
//! a phase are the most distinct words any bank sees; a phase without conflicts takes one.

use std::collections::HashSet;

use crate::convert::{Flat, LANE, REGISTER, Space, WARP, apply_bits, check_elem_bits};
use crate::linear::{LinearLayout, Result, bail};

/// The wavefronts of one warp-wide shared-memory instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstrBanks {
    pub warp: u32,
    /// The repetition it belongs to (0 outside a multi-repetition round trip).
    pub rep: u32,
    /// The first register of the vector it moves (in lane 0).
    pub register: u32,
    /// Phases with at least one active lane: the wavefronts it takes without conflicts.
    pub phases: u32,
    pub wavefronts: u32,
}

impl InstrBanks {
    pub fn conflicts(&self) -> u32 {
        self.wavefronts - self.phases
    }
}

/// Bank conflicts of the accesses of one CTA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankReport {
    /// Elements per access.
    pub vec: u32,
    /// Bytes per lane per access.
    pub bytes_per_access: u32,
    pub lanes_per_phase: u32,
    pub instructions: Vec<InstrBanks>,
    pub wavefronts: u32,
    /// One wavefront per active phase of every instruction.
    pub ideal_wavefronts: u32,
    /// `wavefronts - ideal_wavefronts`.
    pub conflicts: u32,
}

impl BankReport {
    /// The worst instruction's extra wavefronts.
    pub fn max_conflicts_per_instruction(&self) -> u32 {
        self.instructions.iter().map(InstrBanks::conflicts).max().unwrap_or(0)
    }
}

/// log2 of the lanes served together by one phase of a `unit_bytes` access.
pub(crate) fn phase_lanes_log2(unit_bytes: u32) -> u32 {
    match unit_bytes {
        16.. => 3,
        8 => 4,
        _ => 5,
    }
}

/// A warp's accesses: the shared offset (and repetition) of each register, lane and warp bit.
#[derive(Clone, Debug, Default)]
pub(crate) struct Access {
    /// `(offset, rep)` of each register bit.
    pub reg: Vec<(u32, u32)>,
    pub lane: Vec<u32>,
    pub warp: Vec<u32>,
    /// Registers, lanes and warps that skip the access (`x & mask != 0`).
    pub reg_mask: u32,
    pub lane_mask: u32,
    pub warp_mask: u32,
    pub vec_log2: u32,
    pub elem_bits: u32,
}

/// Counts the wavefronts of every instruction, simulating each lane's words.
pub(crate) fn simulate(a: &Access) -> BankReport {
    let k = a.vec_log2;
    let unit = (a.elem_bits << k) / 8;
    let lanes = 1u32 << a.lane.len();
    let per_phase = lanes.min(1 << phase_lanes_log2(unit));
    let reg_off: Vec<u32> = a.reg.iter().map(|x| x.0).collect();
    let reg_rep: Vec<u32> = a.reg.iter().map(|x| x.1).collect();
    let mut instructions = Vec::new();
    for w in 0..1u32 << a.warp.len() {
        if w & a.warp_mask != 0 {
            continue;
        }
        let woff = apply_bits(&a.warp, w);
        let mut seen = HashSet::new();
        for r in 0..1u32 << a.reg.len() {
            if r & a.reg_mask != 0 {
                continue;
            }
            let (roff, rep) = (apply_bits(&reg_off, r) ^ woff, apply_bits(&reg_rep, r));
            if !seen.insert((rep, roff >> k)) {
                continue;
            }
            let (mut phases, mut wavefronts) = (0, 0);
            for p in (0..lanes).step_by(per_phase as usize) {
                let mut words: Vec<u64> = Vec::new();
                for l in (p..p + per_phase).filter(|l| l & a.lane_mask == 0) {
                    let group = ((roff ^ apply_bits(&a.lane, l)) >> k) as u64;
                    let start = group * unit as u64;
                    words.extend(start / 4..=(start + unit as u64 - 1) / 4);
                }
                if words.is_empty() {
                    continue;
                }
                words.sort_unstable();
                words.dedup();
                let mut per_bank = [0u32; 32];
                for w in words {
                    per_bank[(w % 32) as usize] += 1;
                }
                phases += 1;
                wavefronts += per_bank.iter().copied().max().unwrap_or(0);
            }
            instructions.push(InstrBanks { warp: w, rep, register: r, phases, wavefronts });
        }
    }
    let wavefronts = instructions.iter().map(|i| i.wavefronts).sum();
    let ideal_wavefronts = instructions.iter().map(|i| i.phases).sum();
    BankReport {
        vec: 1 << k,
        bytes_per_access: unit,
        lanes_per_phase: per_phase,
        instructions,
        wavefronts,
        ideal_wavefronts,
        conflicts: wavefronts - ideal_wavefronts,
    }
}

/// The largest `k` such that offsets `1, 2, .., 2^(k-1)` are all reached by register combinations, at most
/// `max_log2`: a thread then holds every aligned run of `2^k` offsets it touches and moves it with one access.
pub(crate) fn vector_log2(reg_offsets: &[u32], max_log2: u32) -> u32 {
    let span = Space::spanned_by(&reg_offsets.iter().map(|&o| o as u128).collect::<Vec<_>>());
    (0..max_log2).take_while(|&i| span.contains(1u128 << i)).count() as u32
}

/// Free-variable mask of `cols` given the span `prior` of earlier columns; extends `prior`.
pub(crate) fn free_mask(cols: &[u128], prior: &mut Space) -> u32 {
    cols.iter().enumerate().filter(|&(_, &v)| !prior.insert(v)).fold(0, |m, (i, _)| m | 1 << i)
}

/// Bank conflicts of moving a tensor between registers laid out by `dist` and shared memory laid out by
/// `shared` (in-dims `offset` and optionally `block`), for one CTA, with every lane taking part.
///
/// The vector width is the largest run of offset bits `0, 1, 2, ..` that the registers of a thread cover
/// (registers may be reordered freely within a thread), capped at 16 bytes; each instruction moves one vector
/// per lane. Registers holding duplicates are accessed once.
pub fn bank_conflicts(dist: &LinearLayout, shared: &LinearLayout, elem_bits: u32) -> Result<BankReport> {
    bank_conflicts_impl(dist, shared, elem_bits, None)
}

/// [`bank_conflicts`] with accesses of exactly `vec` elements (a power of two no wider than what the registers
/// cover), e.g. the `vec` a [`crate::convert::SharedPlan`] uses on both sides.
pub fn bank_conflicts_with_vec(
    dist: &LinearLayout,
    shared: &LinearLayout,
    elem_bits: u32,
    vec: u32,
) -> Result<BankReport> {
    if !vec.is_power_of_two() {
        bail!("bank_conflicts: vec {vec} is not a power of two");
    }
    bank_conflicts_impl(dist, shared, elem_bits, Some(vec.trailing_zeros()))
}

fn bank_conflicts_impl(
    dist: &LinearLayout,
    shared: &LinearLayout,
    elem_bits: u32,
    vec_log2: Option<u32>,
) -> Result<BankReport> {
    check_elem_bits(elem_bits)?;
    if !shared.has_in_dim("offset") {
        bail!("bank_conflicts: the shared layout has no `offset` in-dim");
    }
    let flat = Flat::of(dist, "distributed")?;
    let outs: Vec<String> = dist.out_dims().map(|d| d.to_string()).collect();
    let outs: Vec<&str> = outs.iter().map(String::as_str).collect();
    let per_cta = dist.sublayout(&[REGISTER, LANE, WARP], &outs);
    let shared_outs: Vec<String> = shared.out_dims().map(|d| d.to_string()).collect();
    let shared_cta = shared.sublayout(&["offset"], &shared_outs.iter().map(String::as_str).collect::<Vec<_>>());
    let phi = per_cta.invert_and_compose(&shared_cta)?;
    let offsets =
        |name: &str| -> Vec<u32> { phi.bases(name).iter().map(|b| b.first().copied().unwrap_or(0)).collect() };
    let reg: Vec<u32> = offsets(REGISTER);
    let max_log2 = (128 / elem_bits).trailing_zeros().min(shared.in_dim_size_log2("offset"));
    let widest = vector_log2(&reg, max_log2);
    let vec_log2 = match vec_log2 {
        None => widest,
        Some(k) if k <= widest => k,
        Some(k) => bail!(
            "bank_conflicts: a thread's registers cover runs of {} offsets (within 16 bytes), not {}",
            1u32 << widest,
            1u32 << k
        ),
    };
    let reg_mask = free_mask(&flat.reg, &mut Space::new());
    Ok(simulate(&Access {
        reg: reg.into_iter().map(|o| (o, 0)).collect(),
        lane: offsets(LANE),
        warp: offsets(WARP),
        reg_mask,
        lane_mask: 0,
        warp_mask: 0,
        vec_log2,
        elem_bits,
    }))
}

/// Elements per vectorized global access (at most 16 bytes) for a tensor in `layout` whose dim
/// `contiguous_dim` is contiguous in memory in runs of `contiguity` elements, starting at a multiple of
/// `alignment_elems` elements: the longest aligned run along that dim that every thread holds in its registers.
pub fn global_vector_width(
    layout: &LinearLayout,
    elem_bits: u32,
    contiguous_dim: usize,
    contiguity: u32,
    alignment_elems: u32,
) -> u32 {
    let sizes = layout.out_dim_sizes();
    let Some((_, size)) = sizes.get(contiguous_dim) else { return 1 };
    let shift: u32 = sizes[..contiguous_dim].iter().map(|(_, s)| s.trailing_zeros()).sum();
    let regs: Vec<u128> = layout.bases(REGISTER).iter().map(|b| layout.flatten_basis(b)).collect();
    let span = Space::spanned_by(&regs);
    let run_log2 = (0..size.trailing_zeros()).take_while(|&i| span.contains(1u128 << (shift + i))).count() as u32;
    let cap = if elem_bits == 0 || elem_bits > 128 { 1 } else { 128 / elem_bits };
    let contig = if contiguity == 0 { 1 } else { 1 << (31 - contiguity.leading_zeros()) };
    let align = if alignment_elems == 0 { 1 } else { alignment_elems & alignment_elems.wrapping_neg() };
    (1u32 << run_log2).min(1 << (31 - cap.leading_zeros())).min(contig).min(align)
}
