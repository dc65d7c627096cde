//! Strategies for memory layouts: the generic swizzled shared layout, the NVMMA shared layouts (32/64/128-byte
//! swizzles), shared layouts written as bases, and tensor-memory (TMEM) allocations. The crate has no padded
//! shared layout, so there is no strategy for one.

use proptest::prelude::*;

use super::Ctx;
use super::distributed::{mixed_columns, tmem_choices};
use super::params::{permutation, pow2};
use crate::standard::{
    CgaLayout, NvmmaSharedLayout, SharedLayout, SharedLinearLayout, SwizzledSharedLayout, TensorMemoryLayout,
};

/// `SwizzledSharedLayout(vec, per_phase, max_phase, order)` on one CTA.
pub fn swizzled_layout(vec: u32, per_phase: u32, max_phase: u32, order: &[u32]) -> SharedLayout {
    SharedLayout::Swizzled(SwizzledSharedLayout {
        vec,
        per_phase,
        max_phase,
        order: order.to_vec(),
        cga: CgaLayout::Single,
    })
}

/// `NVMMASharedLayout(swizzle_byte_width, element_bitwidth, rank=2, transposed)` on one CTA.
pub fn nvmma_shared_layout(swizzle: u32, bits: u32, transposed: bool) -> SharedLayout {
    SharedLayout::Nvmma(NvmmaSharedLayout {
        swizzle_byte_width: swizzle,
        element_bitwidth: bits,
        rank: 2,
        transposed,
        fp4_padded: false,
        cga: CgaLayout::Single,
    })
}

/// A swizzled shared layout of `rank` (any shape of that rank builds): `vec` 1 to 8, `per_phase` 1 to 4,
/// `max_phase` 1 to 8, any order.
pub fn swizzled_shared(rank: usize) -> impl Strategy<Value = SwizzledSharedLayout> + Clone {
    (pow2(0, 3), pow2(0, 2), pow2(0, 3), permutation(rank)).prop_map(|(vec, per_phase, max_phase, order)| {
        SwizzledSharedLayout { vec, per_phase, max_phase, order, cga: CgaLayout::Single }
    })
}

/// Every rank-2 NVMMA shared layout for `ctx.bits`-bit elements that builds at `ctx.shape`: swizzle 0, 32, 64
/// or 128 bytes (a swizzle needs one swizzle row along the contiguous dim and 8 rows), transposed or not.
pub fn nvmma_shared_choices(ctx: &Ctx) -> Vec<SharedLayout> {
    let mut out = Vec::new();
    for swizzle in [0, 32, 64, 128] {
        for transposed in [false, true] {
            let l = nvmma_shared_layout(swizzle, ctx.bits, transposed);
            if l.to_linear(&ctx.shape).is_ok() {
                out.push(l);
            }
        }
    }
    out
}

/// A rank-2 NVMMA shared layout from [`nvmma_shared_choices`] (never empty: the unswizzled layout always builds).
pub fn nvmma_shared(ctx: &Ctx) -> impl Strategy<Value = SharedLayout> + Clone + use<> {
    prop::sample::select(nvmma_shared_choices(ctx))
}

/// A `SharedLinearLayout` over exactly `shape`: an invertible map whose offset bases are XOR mixes of the tensor
/// bits (arbitrary swizzles).
pub fn shared_linear(shape: [u32; 2]) -> impl Strategy<Value = SharedLayout> + Clone {
    let bits = shape[0].trailing_zeros() + shape[1].trailing_zeros();
    let n = bits.max(1) as usize;
    prop::collection::vec((0..n, 0..n, any::<bool>()), 0..24).prop_map(move |ops| {
        let lb1 = shape[1].trailing_zeros();
        // Invertible, so the top bit of each dim appears in some basis: the written shape is `shape`.
        let offset_bases: Vec<Vec<u32>> =
            mixed_columns(bits, &ops, true).into_iter().map(|c| vec![c >> lb1, c & ((1 << lb1) - 1)]).collect();
        SharedLayout::Linear(SharedLinearLayout { offset_bases, block_bases: vec![], alignment: 16 })
    })
}

/// A single-CTA tensor-memory allocation that builds at `ctx.shape` for `ctx.bits`-bit elements.
///
/// # Panics
/// If none does (fewer than 64 rows).
pub fn tensor_memory(ctx: &Ctx) -> impl Strategy<Value = TensorMemoryLayout> + Clone + use<> {
    let choices = tmem_choices(ctx);
    assert!(!choices.is_empty(), "tensor_memory: no TensorMemoryLayout builds at {ctx:?}");
    prop::sample::select(choices)
}
