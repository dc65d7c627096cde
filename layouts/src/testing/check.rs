//! Running a conversion plan on random data and explaining the first thing it gets wrong.
//!
//! Every element of the tensor is tagged with its row-major index and carries a random payload of the element
//! width; the plan runs thread by thread ([`run_plan`]); then every destination register is compared with the
//! element the destination layout puts there. The first wrong register (in block, warp, lane, register order) is
//! the counterexample: which element landed there, which source slot held it, and where it should have gone.

use std::fmt;

use crate::convert::{
    BLOCK, ConversionPlan, Flat, LANE, PlanOptions, REGISTER, WARP, distribute, plan_conversion, row_major, run_plan,
};
use crate::linear::LinearLayout;

/// A hardware slot of a distributed layout: register `register` of lane `lane` of warp `warp` of CTA `block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    pub block: u32,
    pub warp: u32,
    pub lane: u32,
    pub register: u32,
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(block {}, warp {}, lane {}, register {})", self.block, self.warp, self.lane, self.register)
    }
}

/// Every slot of `layout` (in-dims among `register, lane, warp, block`), in block, warp, lane, register order.
pub(crate) fn slots(layout: &LinearLayout) -> impl Iterator<Item = Slot> + use<> {
    let [nr, nl, nw, nb] = [REGISTER, LANE, WARP, BLOCK].map(|d| layout.in_dim_size(d));
    (0..nb).flat_map(move |block| {
        (0..nw).flat_map(move |warp| {
            (0..nl).flat_map(move |lane| (0..nr).map(move |register| Slot { block, warp, lane, register }))
        })
    })
}

/// The flat element (first out-dim in the low bits) that `flat` puts at `slot`.
pub(crate) fn element_at(flat: &Flat, s: Slot) -> u128 {
    flat.eval(s.register, s.lane, s.warp, s.block)
}

/// The first slot of `layout` that holds flat element `v`.
pub(crate) fn first_holder(layout: &LinearLayout, flat: &Flat, v: u128) -> Option<Slot> {
    slots(layout).find(|&s| element_at(flat, s) == v)
}

/// `(dim0=3, dim1=5)`.
pub(crate) fn fmt_element(layout: &LinearLayout, v: u128) -> String {
    let coords = layout.unflatten_out(v);
    let parts: Vec<String> = layout.out_dims().zip(coords.iter()).map(|(n, c)| format!("{n}={c}")).collect();
    format!("({})", parts.join(", "))
}

fn fmt_holder(h: Option<Slot>) -> String {
    h.map_or_else(|| "no slot".to_string(), |s| s.to_string())
}

/// A destination register holding the wrong element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrongElement {
    /// The first wrong destination slot.
    pub slot: Slot,
    /// The element that landed there, e.g. `(dim0=0, dim1=1)`.
    pub got: String,
    /// The first source slot that holds `got`.
    pub got_from: Option<Slot>,
    /// The first destination slot where `got` belongs.
    pub got_belongs: Option<Slot>,
    /// The element the destination layout puts at `slot`.
    pub expected: String,
    /// The first source slot that holds `expected`.
    pub expected_from: Option<Slot>,
    /// How many destination registers are wrong, of how many.
    pub wrong: u64,
    pub total: u64,
}

impl fmt::Display for WrongElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "element {}, held in the source by {}, lands in the destination at {}",
            self.got,
            fmt_holder(self.got_from),
            self.slot
        )?;
        writeln!(f, "  but the destination layout puts it at {}", fmt_holder(self.got_belongs))?;
        writeln!(
            f,
            "  and wants element {} at {} (held in the source by {})",
            self.expected,
            self.slot,
            fmt_holder(self.expected_from)
        )?;
        write!(f, "  {} of {} destination registers are wrong", self.wrong, self.total)
    }
}

/// Why a conversion is not correct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConversionFailure {
    /// The planner refused the conversion.
    Plan(String),
    /// The executor refused the plan: a register written twice or never, an offset loaded before any store, an
    /// incomplete vector, a warp reading another warp's data behind a warp barrier, ...
    Execution(String),
    /// The plan runs but moves an element to the wrong place.
    WrongElement(Box<WrongElement>),
}

impl fmt::Display for ConversionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConversionFailure::Plan(e) => write!(f, "planning failed: {e}"),
            ConversionFailure::Execution(e) => write!(f, "the plan cannot run: {e}"),
            ConversionFailure::WrongElement(w) => write!(f, "{w}"),
        }
    }
}

/// What a plan costs: its instructions, access widths and bank conflicts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionReport {
    pub plan: ConversionPlan,
    pub elem_bits: u32,
    /// `shfl.sync` instructions each thread executes.
    pub shuffles: u32,
    /// Warp-wide `st.shared` instructions of one CTA (every warp, every repetition).
    pub shared_stores: u32,
    /// Warp-wide `ld.shared` instructions of one CTA.
    pub shared_loads: u32,
    /// Barriers each thread passes: one between the stores and the loads of each repetition, and one before the
    /// next repetition overwrites the buffer.
    pub barriers: u32,
    /// Bytes each lane moves per shared-memory access (0 without shared memory).
    pub access_bytes: u32,
    /// Extra wavefronts of the stores and of the loads (0 without shared memory).
    pub store_conflicts: u32,
    pub load_conflicts: u32,
}

impl ConversionReport {
    /// The costs of `plan` for `elem_bits`-bit elements.
    pub fn of(plan: ConversionPlan, elem_bits: u32) -> Self {
        let mut r = ConversionReport {
            plan,
            elem_bits,
            shuffles: 0,
            shared_stores: 0,
            shared_loads: 0,
            barriers: 0,
            access_bytes: 0,
            store_conflicts: 0,
            load_conflicts: 0,
        };
        match &r.plan {
            ConversionPlan::NoOp | ConversionPlan::RegisterPermutation { .. } => {}
            ConversionPlan::WarpShuffle(sh) => r.shuffles = sh.rounds.len() as u32,
            ConversionPlan::SharedRoundTrip(sp) => {
                r.shared_stores = sp.store_report.instructions.len() as u32;
                r.shared_loads = sp.load_report.instructions.len() as u32;
                r.barriers = 2 * sp.reps - 1;
                r.access_bytes = sp.vec * sp.elem_bits / 8;
                r.store_conflicts = sp.store_conflicts;
                r.load_conflicts = sp.load_conflicts;
            }
        }
        r
    }
}

/// A tensor element as the checker moves it: its row-major index and a random payload of the element width.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tagged {
    index: u64,
    payload: u64,
}

/// SplitMix64: a well-mixed 64-bit value from `x`.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The flat element (first out-dim in the low bits) at row-major index `index` (last out-dim fastest).
fn flat_of_row_major(layout: &LinearLayout, mut index: u64) -> u128 {
    let sizes = layout.out_dim_sizes();
    let mut coords = vec![0u32; sizes.len()];
    for (c, (_, size)) in coords.iter_mut().zip(&sizes).rev() {
        *c = (index % *size as u64) as u32;
        index /= *size as u64;
    }
    layout.flatten_basis(&coords)
}

/// Runs `plan` from `src` to `dst` on a tensor of random `elem_bits`-bit values (from `seed`) and checks every
/// destination register.
pub fn check_plan(
    plan: &ConversionPlan,
    src: &LinearLayout,
    dst: &LinearLayout,
    elem_bits: u32,
    seed: u64,
) -> Result<(), ConversionFailure> {
    let exec = |e: crate::LayoutError| ConversionFailure::Execution(e.0);
    let mask = if elem_bits >= 64 { u64::MAX } else { (1u64 << elem_bits) - 1 };
    let tensor: Vec<Tagged> =
        (0..src.total_out_size()).map(|index| Tagged { index, payload: mix(seed ^ mix(index)) & mask }).collect();
    let regs = distribute(src, &tensor).map_err(exec)?;
    let out = run_plan(plan, src, dst, &regs).map_err(exec)?;
    let (fs, fd) = (Flat::of(src, "source").map_err(exec)?, Flat::of(dst, "destination").map_err(exec)?);
    let (mut first, mut wrong, mut total) = (None, 0u64, 0u64);
    for s in slots(dst) {
        total += 1;
        let want = tensor[row_major(dst, element_at(&fd, s))];
        let got = out.get(s.block, s.warp, s.lane, s.register);
        if got == want {
            continue;
        }
        if got.index == want.index {
            return Err(ConversionFailure::Execution(format!(
                "element {} arrives at {s} with bits {:#x} instead of {:#x}",
                fmt_element(dst, element_at(&fd, s)),
                got.payload,
                want.payload
            )));
        }
        wrong += 1;
        if first.is_none() {
            first = Some((s, got.index));
        }
    }
    let Some((slot, got_index)) = first else { return Ok(()) };
    let expected = element_at(&fd, slot);
    let got = flat_of_row_major(dst, got_index);
    Err(ConversionFailure::WrongElement(Box::new(WrongElement {
        slot,
        got: fmt_element(dst, got),
        got_from: first_holder(src, &fs, got),
        got_belongs: first_holder(dst, &fd, got),
        expected: fmt_element(dst, expected),
        expected_from: first_holder(src, &fs, expected),
        wrong,
        total,
    })))
}

/// Plans the conversion from `src` to `dst` with `opts`, runs it on `cases` random tensors (seeds `seed`,
/// `seed + 1`, ...) and returns what it costs, or the first thing it gets wrong.
pub fn check_conversion(
    src: &LinearLayout,
    dst: &LinearLayout,
    elem_bits: u32,
    opts: &PlanOptions,
    seed: u64,
    cases: u32,
) -> Result<ConversionReport, ConversionFailure> {
    let plan = plan_conversion(src, dst, elem_bits, opts).map_err(|e| ConversionFailure::Plan(e.0))?;
    for k in 0..cases.max(1) {
        check_plan(&plan, src, dst, elem_bits, seed.wrapping_add(k as u64))?;
    }
    Ok(ConversionReport::of(plan, elem_bits))
}
