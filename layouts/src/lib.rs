//! tessel-layouts owns F2 linear layouts: the algebra (construction, application, composition, inversion,
//! products and divisions, reshapes, sub-layouts, free variables, vectorization queries), a constructor for every
//! standard GPU layout (blocked, slice, dot operands, MMA v2/v3 and tcgen05 fragments, swizzled and NVMMA shared
//! memory, user-written linear layouts), and the planning of layout conversions (register permutations, warp
//! shuffles, bank-conflict-free shared-memory round trips) together with an executor that runs a plan on plain
//! arrays. It depends on no IR crate: it is usable on its own to property-test layout conversions, and with the
//! `proptest` feature, [`testing`] provides the strategies and assertions to do so.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod algebra;
pub mod convert;
pub mod expr;
pub mod f2;
mod linear;
mod reshape;
pub mod standard;
#[cfg(feature = "proptest")]
#[cfg_attr(docsrs, doc(cfg(feature = "proptest")))]
pub mod testing;
pub mod view;

pub use convert::{ConversionPlan, PlanOptions, plan_conversion};
pub use linear::{Basis, Dim, LayoutError, LinearLayout, MAX_DIM_LOG2, Result, standard_out_dims};
pub use standard::{
    AnyLayout, BlockedLayout, CgaLayout, DistributedLayout, DistributedLinearLayout, DotOperandLayout,
    NvmmaDistributedLayout, NvmmaSharedLayout, SharedLayout, SharedLinearLayout, SliceLayout, SwizzledSharedLayout,
    TensorMemoryLayout, TensorMemoryScalesLayout, TmemAccess, TmemRegLayout,
};
