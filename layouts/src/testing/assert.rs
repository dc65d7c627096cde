//! The assertions: a conversion is correct, its shared-memory accesses are free of bank conflicts, and they are
//! at least so many bytes wide. Each panics with a minimal counterexample naming the element and the hardware
//! slots involved, and returns what it checked when it passes.

use std::fmt;

use super::check::{ConversionReport, check_conversion, first_holder, fmt_element};
use super::explain::{AccessSide, explain_conflict};
use crate::convert::{BankReport, ConversionPlan, Flat, LANE, PlanOptions, REGISTER, SharedPlan, WARP, bank_conflicts};
use crate::linear::{LinearLayout, Result, bail};
use crate::standard::{AnyLayout, DistributedLayout, SharedLayout};

/// Something that is a linear layout at a tensor shape: a standard layout spec, or a linear layout already built
/// (whose out-dims must then have exactly the shape's sizes).
pub trait LayoutSpec: fmt::Display {
    fn linear_at(&self, shape: &[u32]) -> Result<LinearLayout>;
}

impl LayoutSpec for DistributedLayout {
    fn linear_at(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.to_linear(shape)
    }
}

impl LayoutSpec for SharedLayout {
    fn linear_at(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.to_linear(shape)
    }
}

impl LayoutSpec for AnyLayout {
    fn linear_at(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.to_linear(shape)
    }
}

impl LayoutSpec for LinearLayout {
    fn linear_at(&self, shape: &[u32]) -> Result<LinearLayout> {
        let sizes: Vec<u32> = self.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
        if sizes != shape {
            bail!("the linear layout covers {sizes:?}, not the shape {shape:?}");
        }
        Ok(self.clone())
    }
}

impl<T: LayoutSpec + ?Sized> LayoutSpec for &T {
    fn linear_at(&self, shape: &[u32]) -> Result<LinearLayout> {
        (**self).linear_at(shape)
    }
}

/// `64x128`.
fn fmt_shape(shape: &[u32]) -> String {
    shape.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
}

#[track_caller]
fn build(spec: &dyn LayoutSpec, shape: &[u32]) -> LinearLayout {
    spec.linear_at(shape).unwrap_or_else(|e| panic!("cannot build {spec} on {}: {e}", fmt_shape(shape)))
}

/// Data seed of the assertions: fixed, so that a failure reproduces; proptest varies the layouts.
const SEED: u64 = 0x7e55e1;

/// Asserts that the planned conversion from `src` to `dst` (default [`PlanOptions`]) moves every element of a
/// tensor of `shape` with `bits`-bit elements where `dst` says, and returns what the plan costs.
///
/// # Panics
/// With the first wrong destination register: which element landed there, which source `(block, warp, lane,
/// register)` held it, where it belongs, and the plan; or with the planner's or the executor's error.
#[track_caller]
pub fn assert_conversion_correct(
    src: &impl LayoutSpec,
    dst: &impl LayoutSpec,
    shape: &[u32],
    bits: u32,
) -> ConversionReport {
    assert_conversion_correct_with(src, dst, shape, bits, &PlanOptions::default())
}

/// [`assert_conversion_correct`] with explicit planner options (no shuffles, a shared-memory budget).
#[track_caller]
pub fn assert_conversion_correct_with(
    src: &impl LayoutSpec,
    dst: &impl LayoutSpec,
    shape: &[u32],
    bits: u32,
    opts: &PlanOptions,
) -> ConversionReport {
    let (s, d) = (build(src, shape), build(dst, shape));
    match check_conversion(&s, &d, bits, opts, SEED, 1) {
        Ok(report) => report,
        Err(failure) => {
            let plan = crate::plan_conversion(&s, &d, bits, opts).map(|p| format!("\nplan: {p}")).unwrap_or_default();
            panic!("conversion {src} -> {dst} on {}, {bits}-bit elements, is wrong:\n{failure}{plan}", fmt_shape(shape))
        }
    }
}

/// The shared-memory side of a check: a round trip planned between two register layouts, or one store into (or
/// load from) a shared layout.
enum Memory {
    RoundTrip(LinearLayout, LinearLayout, Box<SharedPlan>),
    Store(LinearLayout, LinearLayout),
    Load(LinearLayout, LinearLayout),
    None,
}

#[track_caller]
fn memory_side(src: &dyn LayoutSpec, dst: &dyn LayoutSpec, shape: &[u32], bits: u32) -> Memory {
    let (s, d) = (build(src, shape), build(dst, shape));
    match (s.has_in_dim("offset"), d.has_in_dim("offset")) {
        (false, true) => Memory::Store(s, d),
        (true, false) => Memory::Load(d, s),
        (true, true) => panic!("{src} and {dst} are both shared layouts: there is no access to check"),
        (false, false) => match crate::plan_conversion(&s, &d, bits, &PlanOptions::default()) {
            Ok(ConversionPlan::SharedRoundTrip(sp)) => Memory::RoundTrip(s, d, sp),
            Ok(_) => Memory::None,
            Err(e) => panic!("cannot plan {src} -> {dst} on {}: {e}", fmt_shape(shape)),
        },
    }
}

/// `(register, lane, warp) → offset` of `dist` stored into (or loaded from) `shared`, in CTA 0.
fn offset_map(dist: &LinearLayout, shared: &LinearLayout) -> LinearLayout {
    let outs: Vec<String> = dist.out_dims().map(|d| d.to_string()).collect();
    let outs: Vec<&str> = outs.iter().map(String::as_str).collect();
    let per_cta = dist.sublayout(&[REGISTER, LANE, WARP], &outs);
    let shared_cta = shared.sublayout(&["offset"], &outs);
    per_cta.invert_and_compose(&shared_cta).expect("bank_conflicts already solved this")
}

fn apply3(map: &LinearLayout, dim: &str, r: u32, l: u32, w: u32) -> u32 {
    let out = map.apply_named(&[(REGISTER, r), (LANE, l), (WARP, w)]);
    out.iter().find(|(n, _)| *n == dim).map_or(0, |(_, v)| *v)
}

/// The element a register layout puts at `(register, lane, warp)` of CTA 0.
fn element_of(dist: &LinearLayout) -> impl Fn(u32, u32, u32) -> String + '_ {
    let flat = Flat::of(dist, "distributed").expect("a register layout");
    move |r, l, w| fmt_element(dist, flat.eval(r, l, w, 0))
}

/// Asserts that the shared-memory accesses between `src` and `dst` on `shape` are free of bank conflicts: the
/// stores and loads of the planned round trip when both are register layouts (a plan without shared memory
/// passes), or the store into / load from a shared layout when one side is one. Returns the bank reports checked.
///
/// # Panics
/// With the worst instruction: its warp and register, its wavefronts, and two lanes of one phase (with their
/// elements, offsets and 4-byte words) that hit the same bank.
#[track_caller]
pub fn assert_bank_conflict_free(
    src: &impl LayoutSpec,
    dst: &impl LayoutSpec,
    shape: &[u32],
    bits: u32,
) -> Vec<BankReport> {
    let title = format!("{src} -> {dst} on {}, {bits}-bit elements", fmt_shape(shape));
    let fail = |side: &AccessSide, report: &BankReport| -> ! {
        panic!("bank conflicts in {title}:\n{}", explain_conflict(side, report))
    };
    match memory_side(src, dst, shape, bits) {
        Memory::None => Vec::new(),
        Memory::Store(dist, shared) | Memory::Load(dist, shared) => {
            let report = bank_conflicts(&dist, &shared, bits).unwrap_or_else(|e| panic!("{title}: {e}"));
            if report.conflicts > 0 {
                let map = offset_map(&dist, &shared);
                let what = if src.linear_at(shape).is_ok_and(|l| l.has_in_dim("offset")) { "ld" } else { "st" };
                let elem = element_of(&dist);
                let offset = |r, l, w| apply3(&map, "offset", r, l, w);
                let side = AccessSide {
                    what: &format!("{what}.shared"),
                    offset: &offset,
                    element: &elem,
                    lanes: dist.in_dim_size(LANE),
                    lane_mask: 0,
                    elem_bits: bits,
                };
                fail(&side, &report);
            }
            vec![report]
        }
        Memory::RoundTrip(s, d, sp) => {
            for (what, dist, map, report, mask) in [
                ("st.shared", &s, &sp.store_map, &sp.store_report, sp.store_mask.lane),
                ("ld.shared", &d, &sp.load_map, &sp.load_report, 0),
            ] {
                if report.conflicts > 0 {
                    let elem = element_of(dist);
                    let offset = |r, l, w| apply3(map, "offset", r, l, w);
                    let side = AccessSide {
                        what,
                        offset: &offset,
                        element: &elem,
                        lanes: dist.in_dim_size(LANE),
                        lane_mask: mask,
                        elem_bits: bits,
                    };
                    fail(&side, report);
                }
            }
            vec![sp.store_report.clone(), sp.load_report.clone()]
        }
    }
}

/// Asserts that every shared-memory access between `src` and `dst` on `shape` moves at least `min_bytes` per lane
/// (the planned round trip's vector, or the widest store into / load from a shared layout). A conversion without
/// shared memory passes. Returns the bytes per lane (0 without shared memory).
///
/// # Panics
/// If `min_bytes` is not a power of two of at most 16 (no access is wider), or with the first element past the
/// vector: which offset holds it and which thread holds it, against the thread that holds offset 0.
#[track_caller]
pub fn assert_vectorized(
    src: &impl LayoutSpec,
    dst: &impl LayoutSpec,
    shape: &[u32],
    bits: u32,
    min_bytes: u32,
) -> u32 {
    assert!(
        min_bytes.is_power_of_two() && min_bytes <= 16,
        "assert_vectorized: min_bytes {min_bytes} must be a power of two of at most 16 (the widest shared access)"
    );
    let title = format!("{src} -> {dst} on {}, {bits}-bit elements", fmt_shape(shape));
    let (bytes, vec, shared, sides): (u32, u32, LinearLayout, Vec<(&str, LinearLayout)>) =
        match memory_side(src, dst, shape, bits) {
            Memory::None => return 0,
            Memory::Store(dist, shared) | Memory::Load(dist, shared) => {
                let r = bank_conflicts(&dist, &shared, bits).unwrap_or_else(|e| panic!("{title}: {e}"));
                (r.bytes_per_access, r.vec, shared, vec![("the register layout", dist)])
            }
            Memory::RoundTrip(s, d, sp) => {
                (sp.vec * bits / 8, sp.vec, sp.shared.clone(), vec![("the source", s), ("the destination", d)])
            }
        };
    if bytes >= min_bytes {
        return bytes;
    }
    let size = shared.in_dim_size("offset");
    let mut text = format!(
        "accesses in {title} move {bytes} bytes per lane ({vec} elements), fewer than {min_bytes}: {} {min_bytes}-byte \
         access needs offsets 0..{} in one thread",
        if min_bytes == 8 { "an" } else { "a" },
        min_bytes * 8 / bits
    );
    if vec >= size {
        text.push_str(&format!(", but the buffer has only {size} elements"));
        panic!("{text}");
    }
    let at = |o: u32| -> Vec<u32> {
        let named = shared.apply_named(&[("offset", o)]);
        named.iter().map(|(_, c)| *c).collect()
    };
    for (name, dist) in &sides {
        let flat = Flat::of(dist, "distributed").expect("a register layout");
        let (e0, e1) = (dist.flatten_basis(&at(0)), dist.flatten_basis(&at(vec)));
        let (h0, h1) = (first_holder(dist, &flat, e0), first_holder(dist, &flat, e1));
        let thread = |h: Option<super::Slot>| h.map(|s| (s.block, s.warp, s.lane));
        let show = |h: Option<super::Slot>| h.map_or_else(|| "no thread".to_string(), |s| s.to_string());
        text.push_str(&format!(
            "\n  in {name}, offset 0 holds element {} at {} and offset {vec} holds element {} at {}{}",
            fmt_element(dist, e0),
            show(h0),
            fmt_element(dist, e1),
            show(h1),
            if thread(h0) == thread(h1) { " (the same thread)" } else { " (another thread)" }
        ));
    }
    panic!("{text}")
}
