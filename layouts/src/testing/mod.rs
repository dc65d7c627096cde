//! Layout conversions as a property-testing product: [proptest] strategies for every standard layout family,
//! the plan executor, and assertions whose failures name a minimal counterexample.
//!
//! Enabled by the `proptest` feature:
//!
//! ```toml
//! [dev-dependencies]
//! tessel-layouts = { version = "0.1", features = ["proptest"] }
//! proptest = "1.5"
//! ```
//!
//! # What is here
//!
//! * **Strategies** for every kind of layout the crate builds — [`blocked_2d`] and [`blocked_nd`], [`slice()`],
//!   dot operands ([`dot_fma`], [`dot_mma_v2`], [`dot_mma_v3`]), the MMA accumulators ([`mma_v2`],
//!   [`mma_v3`]), the tcgen05 register layouts ([`tmem_reg`]) and TMEM allocations ([`tensor_memory`]), shared
//!   layouts ([`swizzled_shared`], [`nvmma_shared`], [`shared_linear`]), user-written distributed layouts
//!   ([`distributed_linear`]) and raw linear layouts with or without broadcast ([`linear_layout`]) — plus the
//!   sizes they are built from ([`shape`], [`warp_count`], [`warp_size`], [`elem_bits`]). [`Family`] lists the
//!   families; [`conversion_case`] draws a whole conversion between two of them.
//! * **The executor**, re-exported from [`crate::convert`]: [`distribute`] a tensor into registers, [`run_plan`]
//!   thread by thread, [`check`] or [`gather`] the result.
//! * **Assertions**: [`assert_conversion_correct`], [`assert_bank_conflict_free`], [`assert_vectorized`]. They
//!   take standard layouts (or built [`LinearLayout`]s) and a shape, and panic with the first thing that is
//!   wrong: which element, held by which `(block, warp, lane, register)`, lands where.
//! * **Outside tests**: [`check_conversion`] and [`check_plan`] return the counterexample instead of
//!   panicking, and [`fuzz_conversions`] runs a seeded, shrinking search (this is `tessel layout check` and
//!   `tessel layout fuzz`).
//!
//! # Examples
//!
//! One conversion, checked at 16 and 32 bits, with its cost:
//!
//! ```
//! use tessel_layouts::testing::{assert_bank_conflict_free, assert_conversion_correct, assert_vectorized};
//! use tessel_layouts::testing::{blocked_layout, mma_layout};
//!
//! let acc = mma_layout(2, &[2, 2], &[16, 8]); // mma.sync accumulator, 4 warps
//! let rows = blocked_layout(&[1, 8], &[4, 8], &[4, 1], &[1, 0]);
//! for bits in [16, 32] {
//!     let report = assert_conversion_correct(&acc, &rows, &[64, 128], bits);
//!     assert_eq!(report.plan.kind(), "shared");
//!     assert_bank_conflict_free(&acc, &rows, &[64, 128], bits);
//!     assert_vectorized(&acc, &rows, &[64, 128], bits, 4);
//! }
//! ```
//!
//! A property over random layouts (here any `mma.sync` accumulator to any blocked layout over the same 4
//! warps, at every width the planner supports):
//!
//! ```
//! use proptest::prelude::*;
//! use tessel_layouts::testing::{assert_conversion_correct, blocked_2d, elem_bits, mma_v2};
//!
//! proptest!(ProptestConfig::with_cases(16), |(acc in mma_v2(2), dst in blocked_2d(2), bits in elem_bits())| {
//!     assert_conversion_correct(&acc, &dst, &[32, 64], bits);
//! });
//! ```
//!
//! What a failure looks like: a plan broken on purpose with [`corrupt_plan`] (a test hook) and checked with
//! [`check_plan`]. The counterexample is the first wrong destination register:
//!
//! ```
//! use tessel_layouts::testing::{blocked_layout, check_plan, corrupt_plan};
//! use tessel_layouts::{PlanOptions, plan_conversion};
//!
//! let src = blocked_layout(&[1, 4], &[8, 4], &[4, 1], &[1, 0]).to_linear(&[64, 64])?;
//! let dst = blocked_layout(&[4, 1], &[4, 8], &[1, 4], &[0, 1]).to_linear(&[64, 64])?;
//! let plan = plan_conversion(&src, &dst, 16, &PlanOptions::default())?;
//! check_plan(&plan, &src, &dst, 16, 0).expect("the planner's plan is right");
//! let broken = corrupt_plan(&plan, &src, &dst).expect("a shared round trip can be broken");
//! let message = check_plan(&broken, &src, &dst, 16, 0).unwrap_err().to_string();
//! assert!(message.starts_with(
//!     "element (dim0=36, dim1=0), held in the source by (block 0, warp 0, lane 16, register 16), lands in the \
//!      destination at (block 0, warp 0, lane 1, register 0)\n  but the destination layout puts it at (block 0, warp 0, \
//!      lane 1, register 8)"
//! ), "{message}");
//! assert!(message.contains("2048 of 4096 destination registers are wrong"), "{message}");
//! # Ok::<(), tessel_layouts::LayoutError>(())
//! ```
//!
//! [proptest]: https://docs.rs/proptest

mod assert;
mod check;
mod corrupt;
mod distributed;
mod explain;
mod families;
mod fuzz;
mod params;
mod shared;

pub use assert::{
    LayoutSpec, assert_bank_conflict_free, assert_conversion_correct, assert_conversion_correct_with, assert_vectorized,
};
pub use check::{ConversionFailure, ConversionReport, Slot, WrongElement, check_conversion, check_plan};
pub use corrupt::corrupt_plan;
pub use distributed::{
    blocked_2d, blocked_layout, blocked_nd, blocked_with_shape, distributed, distributed_linear, dot_fma, dot_layout,
    dot_mma_v2, dot_mma_v3, dot_operand, linear_layout, mma_accumulator, mma_k_width, mma_layout, mma_v2, mma_v3,
    slice, tmem_choices, tmem_reg, tmem_reg_choices,
};
pub use families::{ConversionCase, Ctx, Family, conversion_case, ctx};
pub use fuzz::{FuzzFailure, FuzzOptions, FuzzOutcome, check_case, fuzz_conversions};
pub use params::{elem_bits, mma_elem_bits, permutation, pow2, shape, split_bits, split2, warp_count, warp_size};
pub use shared::{
    nvmma_shared, nvmma_shared_choices, nvmma_shared_layout, shared_linear, swizzled_layout, swizzled_shared,
    tensor_memory,
};

/// The plan executor: distribute a tensor into registers, run a plan thread by thread, check or gather the result.
pub use crate::convert::{ThreadRegs, check, distribute, gather, run_plan};
/// The linear layout type the strategies and assertions work with.
pub use crate::linear::LinearLayout;
