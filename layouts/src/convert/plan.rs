//! The conversion plan as data, and the planner that picks the cheapest correct transfer.
//!
//! For a source layout `S` and a destination layout `D`, a transfer at level L keeps the *fixed* in-dims of L
//! in place and moves data only along the *movable* ones:
//!
//! | level    | fixed                   | movable              | transfer                         |
//! |----------|-------------------------|----------------------|----------------------------------|
//! | register | lane, warp, block       | register             | register permutation             |
//! | warp     | warp, block             | register, lane       | `shfl.sync.idx` rounds           |
//! | CTA      | block                   | register, lane, warp | shared-memory store, bar, load   |
//!
//! The conversion is possible at level L when, for every destination basis vector `e`, `D(e) ⊕ S(e_F)`
//! (`e_F` = the part of `e` in the fixed dims, mapped through the source) lies in the image of `S` restricted to
//! the movable dims: then every destination thread finds its elements among the source threads that share its
//! fixed coordinates. The solution `Y(e)` (free variables 0, earlier in-dims preferred) says where.

use crate::convert::shuffle::{ShufflePlan, build_shuffle};
use crate::convert::swizzle::{SharedPlan, plan_shared};
use crate::convert::{Pair, Space, apply_bits, check_elem_bits};
use crate::f2::Echelon;
use crate::linear::{LinearLayout, Result, bail};

/// What [`plan_conversion`] may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// The most shared memory (bytes, per CTA) a round trip may use. When the tensor does not fit, the round
    /// trip is split into repetitions over tensor directions that both layouts hold in registers.
    pub max_scratch_bytes: Option<u32>,
    /// Allow intra-warp shuffles; when false, conversions that need data from other lanes go through shared
    /// memory.
    pub allow_shuffles: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { max_scratch_bytes: None, allow_shuffles: true }
    }
}

/// How a conversion moves data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConversionPlan {
    /// Source and destination are the same layout.
    NoOp,
    /// Every thread already holds its destination elements: destination register `r` is source register
    /// `src_register[r]`, the same in every thread.
    RegisterPermutation { src_register: Vec<u32> },
    /// Data moves between lanes of a warp only.
    WarpShuffle(ShufflePlan),
    /// Data goes through shared memory.
    SharedRoundTrip(Box<SharedPlan>),
}

impl ConversionPlan {
    /// Short name of the plan kind: `noop`, `registers`, `shuffle` or `shared`.
    pub fn kind(&self) -> &'static str {
        match self {
            ConversionPlan::NoOp => "noop",
            ConversionPlan::RegisterPermutation { .. } => "registers",
            ConversionPlan::WarpShuffle(_) => "shuffle",
            ConversionPlan::SharedRoundTrip(_) => "shared",
        }
    }
}

/// Plans the conversion of a tensor from layout `src` to layout `dst` (both distributed: in-dims among
/// `register, lane, warp, block`; the same out-dims) for elements of `elem_bits` bits.
pub fn plan_conversion(
    src: &LinearLayout,
    dst: &LinearLayout,
    elem_bits: u32,
    opts: &PlanOptions,
) -> Result<ConversionPlan> {
    check_elem_bits(elem_bits)?;
    let pair = Pair::new(src, dst)?;
    let (s, d) = (&pair.s, &pair.d);
    if s == d {
        return Ok(ConversionPlan::NoOp);
    }

    // CTA level: every destination element must be in the source CTA with the same block coordinate.
    let all_src = Space::spanned_by(&[&s.reg[..], &s.lane, &s.warp, &s.block].concat());
    let cta = Space::spanned_by(&[&s.reg[..], &s.lane, &s.warp].concat());
    for (name, cols) in [("register", &d.reg), ("lane", &d.lane), ("warp", &d.warp), ("block", &d.block)] {
        for (bit, &v) in cols.iter().enumerate() {
            if !all_src.contains(v) {
                bail!(
                    "the source layout never holds element {} that the destination holds at {name} {}",
                    pair.element(v),
                    1u64 << bit
                );
            }
            let shifted = if name == "block" { v ^ s.block[bit] } else { v };
            if !cta.contains(shifted) {
                bail!(
                    "not supported: the conversion moves data across CTAs (destination {name} {} holds {} which \
                     its CTA does not hold in the source layout)",
                    1u64 << bit,
                    pair.element(v)
                );
            }
        }
    }

    // Register level.
    if let Some(src_register) = register_permutation(&pair) {
        let identity = src.in_dim_size("register") == dst.in_dim_size("register")
            && src_register.iter().enumerate().all(|(r, &x)| r as u32 == x);
        return Ok(if identity { ConversionPlan::NoOp } else { ConversionPlan::RegisterPermutation { src_register } });
    }

    // Warp level.
    let warp_local = within_warps(&pair);
    if opts.allow_shuffles
        && warp_local
        && let Some(plan) = build_shuffle(&pair)
    {
        return Ok(ConversionPlan::WarpShuffle(plan));
    }

    Ok(ConversionPlan::SharedRoundTrip(Box::new(plan_shared(&pair, elem_bits, warp_local, opts.max_scratch_bytes)?)))
}

/// The register-level transfer: destination register `r` of every thread is source register `table[r]` of the
/// same thread. Needs the thread parts of both layouts to agree (then the solution for thread bits is 0).
fn register_permutation(pair: &Pair) -> Option<Vec<u32>> {
    let (s, d) = (&pair.s, &pair.d);
    if s.lane != d.lane || s.warp != d.warp || s.block != d.block {
        return None;
    }
    let mut ech = Echelon::new();
    for (i, &v) in s.reg.iter().enumerate() {
        ech.insert(i as u32, v);
    }
    let cols: Vec<u32> = d.reg.iter().map(|&v| ech.solve(v).map(|x| x as u32)).collect::<Option<_>>()?;
    Some((0..1u32 << d.reg.len()).map(|r| apply_bits(&cols, r)).collect())
}

/// The warp-level condition: every destination warp's elements are held by the source warp with the same warp
/// and block coordinates, so data never crosses warps.
fn within_warps(pair: &Pair) -> bool {
    let (s, d) = (&pair.s, &pair.d);
    let movable = Space::spanned_by(&[&s.reg[..], &s.lane].concat());
    d.reg.iter().chain(&d.lane).all(|&v| movable.contains(v))
        && d.warp.iter().zip(&s.warp).chain(d.block.iter().zip(&s.block)).all(|(&a, &b)| movable.contains(a ^ b))
}
