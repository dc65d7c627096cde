//! Layout conversions: planning, the bank-conflict model, and an executor that runs a plan on plain arrays.
//!
//! A conversion moves a tensor held in registers under a source distributed layout into registers under a
//! destination layout of the same shape. [`plan_conversion`] picks the cheapest correct transfer and describes it
//! as data ([`ConversionPlan`]): nothing, a permutation of each thread's registers, rounds of intra-warp shuffles,
//! or a round trip through shared memory with a layout chosen so that the vectorized stores and loads are free of
//! bank conflicts. [`run_plan`] executes a plan thread by thread so that plans can be property-tested, and
//! [`bank_conflicts`] counts the wavefronts of any (distributed, shared) access pair.
//!
//! Internally every layout is flattened: an element of the tensor is a `u128` (first out-dim in the low bits),
//! and a distributed layout is the list of images of its `register`, `lane`, `warp` and `block` bits.

mod banks;
mod display;
mod exec;
mod plan;
mod shuffle;
mod swizzle;
#[cfg(test)]
mod tests;

pub use banks::{BankReport, InstrBanks, bank_conflicts, bank_conflicts_with_vec, global_vector_width};
#[cfg(feature = "proptest")]
pub(crate) use exec::row_major;
pub use exec::{ThreadRegs, check, distribute, gather, run_plan};
pub use plan::{ConversionPlan, PlanOptions, plan_conversion};
pub use shuffle::{ShufflePlan, ShuffleRound};
pub use swizzle::{BarrierKind, SharedPlan, StoreMask};

use crate::f2::Echelon;
use crate::linear::{Dim, LinearLayout, Result, bail};

pub(crate) const REGISTER: &str = "register";
pub(crate) const LANE: &str = "lane";
pub(crate) const WARP: &str = "warp";
pub(crate) const BLOCK: &str = "block";
const DIST_DIMS: [&str; 4] = [REGISTER, LANE, WARP, BLOCK];

/// A distributed layout flattened: the tensor element (first out-dim in the low bits) of each in-bit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Flat {
    pub reg: Vec<u128>,
    pub lane: Vec<u128>,
    pub warp: Vec<u128>,
    pub block: Vec<u128>,
}

impl Flat {
    /// Flattens a layout whose in-dims are among `register, lane, warp, block` (missing ones have size 1).
    pub fn of(layout: &LinearLayout, what: &str) -> Result<Flat> {
        if let Some(d) = layout.in_dims().find(|d| !DIST_DIMS.contains(&d.as_str())) {
            bail!("{what} layout has in-dim `{d}`; a distributed layout has only register, lane, warp and block");
        }
        let get = |name: &str| layout.bases(name).iter().map(|b| layout.flatten_basis(b)).collect::<Vec<_>>();
        Ok(Flat { reg: get(REGISTER), lane: get(LANE), warp: get(WARP), block: get(BLOCK) })
    }

    /// The element held by register `r` of thread (`lane`, `warp`, `block`).
    pub fn eval(&self, r: u32, lane: u32, warp: u32, block: u32) -> u128 {
        apply_bits(&self.reg, r)
            ^ apply_bits(&self.lane, lane)
            ^ apply_bits(&self.warp, warp)
            ^ apply_bits(&self.block, block)
    }
}

/// XOR of `cols[i]` over the set bits `i` of `x`.
pub(crate) fn apply_bits<V: Copy + Default + std::ops::BitXor<Output = V>>(cols: &[V], x: u32) -> V {
    cols.iter().enumerate().filter(|(i, _)| x >> i & 1 == 1).fold(V::default(), |acc, (_, &c)| acc ^ c)
}

/// A subspace of F2^128 with an echelon basis: membership, reduction, and solving over its own basis.
#[derive(Clone, Debug, Default)]
pub(crate) struct Space {
    ech: Echelon,
    basis: Vec<u128>,
}

impl Space {
    pub fn new() -> Self {
        Space { ech: Echelon::new(), basis: Vec::new() }
    }

    pub fn spanned_by(vs: &[u128]) -> Self {
        let mut s = Space::new();
        for &v in vs {
            s.insert(v);
        }
        s
    }

    /// Adds `v`; returns true if it was independent (and is now basis vector number `dim() - 1`).
    pub fn insert(&mut self, v: u128) -> bool {
        let col = self.basis.len() as u32;
        if self.ech.insert(col, v) {
            self.basis.push(v);
            true
        } else {
            false
        }
    }

    pub fn contains(&self, v: u128) -> bool {
        self.ech.solve(v).is_some()
    }

    /// The canonical representative of `v` modulo the space.
    pub fn reduce(&self, v: u128) -> u128 {
        self.ech.reduce(v).0
    }

    /// Which basis vectors (by insertion number) XOR to `v`.
    pub fn solve(&self, v: u128) -> Option<u128> {
        self.ech.solve(v)
    }

    pub fn dim(&self) -> u32 {
        self.basis.len() as u32
    }

    pub fn basis(&self) -> &[u128] {
        &self.basis
    }
}

/// A basis of `span(a) ∩ span(b)`.
pub(crate) fn intersect(a: &[u128], b: &[u128]) -> Vec<u128> {
    let sa = Space::spanned_by(a);
    let na = sa.dim() as usize;
    // Columns: a's basis (0..na), then b's vectors. A b-vector that reduces to zero gives a relation whose a-part
    // is a vector of the intersection.
    let mut ech = Echelon::new();
    for (i, &v) in sa.basis().iter().enumerate() {
        ech.insert(i as u32, v);
    }
    let mut out = Vec::new();
    let mut col = na as u32;
    for &v in b {
        let (rem, comb) = ech.reduce(v);
        if rem == 0 {
            let x = apply_bits128(sa.basis(), comb & ((1u128 << na) - 1));
            if x != 0 && !Space::spanned_by(&out).contains(x) {
                out.push(x);
            }
        } else {
            ech.insert(col, v);
            col += 1;
        }
    }
    out
}

/// XOR of `cols[i]` over the set bits `i` of a 128-bit combination.
pub(crate) fn apply_bits128(cols: &[u128], x: u128) -> u128 {
    cols.iter().enumerate().filter(|(i, _)| x >> i & 1 == 1).fold(0, |acc, (_, &c)| acc ^ c)
}

/// The source and destination of a conversion, checked against each other.
pub(crate) struct Pair<'a> {
    pub src: &'a LinearLayout,
    pub dst: &'a LinearLayout,
    pub s: Flat,
    pub d: Flat,
}

impl<'a> Pair<'a> {
    pub fn new(src: &'a LinearLayout, dst: &'a LinearLayout) -> Result<Self> {
        if src.out_dim_sizes() != dst.out_dim_sizes() {
            bail!(
                "mismatched shapes: the source layout covers [{}] but the destination covers [{}]",
                fmt_dims(&src.out_dim_sizes()),
                fmt_dims(&dst.out_dim_sizes())
            );
        }
        let s = Flat::of(src, "source")?;
        let d = Flat::of(dst, "destination")?;
        for name in [LANE, WARP, BLOCK] {
            let (a, b) = (src.in_dim_size(name), dst.in_dim_size(name));
            if a != b {
                bail!("mismatched dims: the source has {a} {name}s but the destination has {b}");
            }
        }
        if src.in_dim_size(LANE) > 32 {
            bail!("a warp has at most 32 lanes; the layouts have {}", src.in_dim_size(LANE));
        }
        Ok(Pair { src, dst, s, d })
    }

    /// Formats a flat element as named coordinates.
    pub fn element(&self, v: u128) -> String {
        let coords = self.src.unflatten_out(v);
        let parts: Vec<String> = self.src.out_dims().zip(coords.iter()).map(|(n, c)| format!("{n}={c}")).collect();
        format!("({})", parts.join(", "))
    }
}

fn fmt_dims(d: &[(Dim, u32)]) -> String {
    d.iter().map(|(n, s)| format!("{n}: {s}")).collect::<Vec<_>>().join(", ")
}

/// The element widths a plan supports.
pub(crate) fn check_elem_bits(elem_bits: u32) -> Result<()> {
    if !matches!(elem_bits, 8 | 16 | 32 | 64) {
        bail!("element width {elem_bits} bits is not supported; use 8, 16, 32 or 64");
    }
    Ok(())
}
