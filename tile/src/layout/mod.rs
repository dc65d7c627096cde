//! Auto-mode layout assignment: tile IR → layout IR.
//!
//! [`assign_layouts`] runs, in order: [`dot_scaled::fall_back`] (each `dot_scaled` the block-scaled MMA cannot
//! take becomes the dot of its upcast operands), [`descriptors::lower_descriptors`] (tensor-descriptor accesses become
//! masked pointer loads/stores), [`axis::analyze`] (contiguity, divisibility, constancy of integer and
//! pointer values), [`coalesce::coalesce`] (a blocked layout per memory op following memory contiguity, with
//! 16-byte vectors, and the accumulator layout of each `dot` from [`accelerate`]: an MMA layout where the
//! target's tensor cores run it), [`propagate::propagate`] and [`propagate::rewrite`] (a layout for every
//! tensor, with `convert_layout` where two meet), [`cleanup::cleanup`] (redundant conversions removed, cheap
//! values recomputed, conversions moved to smaller tensors), [`accelerate::stage_operands`] (wgmma operands
//! into shared memory), [`tcgen05::lower_dots`] (sm_100a's dots on tensor memory and `tcgen05_mma`),
//! [`crate::passes::canonicalize`] and [`dot_scaled::unswizzle_scale_descs`] (scale descriptors laid out for
//! `tcgen05.cp`). Afterwards every
//! tensor value has a layout and [`crate::verify::verify_layouts`] holds.
//!
//! A gluon kernel ([`crate::FuncAttrs::gluon`]) whose tensors all carry the layouts their author wrote is only checked
//! ([`crate::verify::verify_layouts`]): no layout of it changes. One with tensors left without a layout
//! (`gl.AutoLayout`) goes through the auto-mode passes like any other.
//!
//! Read here: the function's target and `config.num_warps`, and [`crate::FuncAttrs::divisible_by_16`]
//! (`divisible_by_16 = [i, ...]`: kernel arguments `i` are multiples of 16 — 16-byte aligned pointers, integers
//! divisible by 16 — as Triton's specialization of `tt.divisibility`).

pub mod accelerate;
pub mod axis;
pub mod cleanup;
pub mod coalesce;
pub mod descriptors;
pub mod dot_scaled;
pub mod insert;
pub mod propagate;
pub mod rules;
pub mod shared_access;
pub mod shared_views;
pub mod spread;
pub mod staging;
pub mod tcgen05;
mod tcgen05_site;

pub use spread::{Spread, spreads_over_ctas};

use crate::ir::{Func, ValueId};
use crate::target::ConfigError;
use crate::verify::VerifyError;

/// Why layout assignment failed.
#[derive(Clone, Debug, PartialEq)]
pub enum AssignError {
    /// The launch configuration is out of range.
    Config(ConfigError),
    /// A gluon kernel's layouts, as its author wrote them, do not fit.
    GluonLayouts(VerifyError),
    /// A descriptor access that cannot become pointer ops.
    Descriptor(descriptors::DescriptorError),
    /// A standard layout that does not fit its tensor (the layouts crate's reason).
    Layout(tessel_layouts::LayoutError),
    /// A tensor left without a layout.
    NoLayout(ValueId),
    /// No layout fits op `0`'s operands and results.
    NoFit(&'static str),
    /// A dot operand that is not a tensor.
    NotATensor(ValueId),
    /// A wgmma operand spanning fewer than 32 bytes along its contiguous dim.
    OperandBytes(u32),
    /// The function does not verify afterwards.
    Verify(VerifyError),
}

impl std::fmt::Display for AssignError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssignError::Config(e) => write!(f, "{e}"),
            AssignError::GluonLayouts(e) => write!(f, "gluon layouts: {e}"),
            AssignError::Descriptor(e) => write!(f, "{e}"),
            AssignError::Layout(e) => write!(f, "{e}"),
            AssignError::NoLayout(v) => write!(f, "no layout for {v}"),
            AssignError::NoFit(op) => write!(f, "`{op}`: no layout fits its operands and results"),
            AssignError::NotATensor(v) => write!(f, "dot operand {v} is not a tensor"),
            AssignError::OperandBytes(n) => {
                write!(f, "a wgmma operand needs at least 32 bytes along its contiguous dim, got {n}")
            }
            AssignError::Verify(e) => write!(f, "after layout assignment: {e}"),
        }
    }
}

impl std::error::Error for AssignError {}

impl From<tessel_layouts::LayoutError> for AssignError {
    fn from(e: tessel_layouts::LayoutError) -> AssignError {
        AssignError::Layout(e)
    }
}

/// Assigns a layout to every tensor of `f`, for its target and `config.num_warps`; an auto-mode cluster kernel's
/// tensors are spread over its CTAs where [`spreads_over_ctas`] allows and [`spread::worth_it`] finds it pays.
pub fn assign_layouts(f: &mut Func) -> Result<(), AssignError> {
    assign_layouts_with(f, Spread::WhereSupported)
}

/// [`assign_layouts`], with the spread over a cluster's CTAs as `spread` says.
pub fn assign_layouts_with(f: &mut Func, spread: Spread) -> Result<(), AssignError> {
    f.config.validate().map_err(AssignError::Config)?;
    if is_laid_out_gluon(f) {
        return crate::verify::verify_layouts(f).map_err(AssignError::GluonLayouts);
    }
    if spread == Spread::WhereSupported && spreads_over_ctas(f) {
        let unspread = f.clone();
        // A spread layout the passes cannot complete (a split staged operand too narrow for wgmma, say) is no
        // reason to refuse the kernel: it runs unspread, as at one CTA.
        if assign(f, coalesce::Ctas(f.config.num_ctas)).is_ok() && spread::worth_it(f) {
            return Ok(());
        }
        *f = unspread;
    }
    assign(f, coalesce::Ctas::ONE)
}

/// The auto-mode passes, each blocked layout and `wgmma` accumulator split over `ctas` CTAs.
fn assign(f: &mut Func, ctas: coalesce::Ctas) -> Result<(), AssignError> {
    let num_warps = f.config.num_warps;
    dot_scaled::fall_back(f);
    if descriptors::lower_descriptors(f).map_err(AssignError::Descriptor)? {
        // The per-access index math repeats (one `arange` per dim and access): merge it before analysis.
        crate::passes::canonicalize(f);
    }
    let info = axis::analyze(f);
    let anchors = coalesce::coalesce(f, &info, num_warps, ctas)?;
    let assignment = propagate::propagate(f, &anchors, num_warps, ctas)?;
    propagate::rewrite(f, &assignment, &anchors)?;
    cleanup::cleanup(f);
    accelerate::stage_operands(f)?;
    if ctas.0 > 1 {
        spread::split_descriptors(f)?;
    }
    tcgen05::lower_dots(f)?;
    crate::passes::canonicalize(f);
    dot_scaled::unswizzle_scale_descs(f);
    crate::verify::verify(f).map_err(AssignError::Verify)?;
    crate::verify::verify_layouts(f).map_err(AssignError::Verify)
}

/// Whether `f` is a gluon kernel in which every live tensor has a layout (the author's, kept as written). Values
/// of ops a pass removed stay in the arena without one (an `arange` folded away before its layout was
/// written): they do not count, or the author's layouts would be assigned anew.
fn is_laid_out_gluon(f: &Func) -> bool {
    if !f.attrs.gluon {
        return false;
    }
    let laid_out = |v: &crate::ValueId| !f.ty(*v).is_tensor() || f.ty(*v).layout().is_some();
    f.all_ops().into_iter().all(|o| {
        let d = f.op(o);
        d.results.iter().all(laid_out) && d.regions.iter().all(|&r| f.region(r).args.iter().all(laid_out))
    })
}
