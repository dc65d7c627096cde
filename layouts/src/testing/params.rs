//! Strategies for the sizes every layout is built from: powers of two, tensor shapes, warp counts, warp sizes,
//! element widths, splits of a power of two over several dims, and permutations (`order` lists).

use proptest::prelude::*;

/// A power of two in `2^lo..=2^hi`.
pub fn pow2(lo: u32, hi: u32) -> impl Strategy<Value = u32> + Clone {
    (lo..=hi).prop_map(|l| 1u32 << l)
}

/// A tensor shape of `rank` powers of two, each in `2^lo..=2^hi`, with at most `2^max_total_log2` elements.
pub fn shape(rank: usize, lo: u32, hi: u32, max_total_log2: u32) -> impl Strategy<Value = Vec<u32>> + Clone {
    prop::collection::vec(lo..=hi, rank)
        .prop_filter("too many elements", move |v| v.iter().sum::<u32>() <= max_total_log2)
        .prop_map(|v| v.into_iter().map(|l| 1u32 << l).collect())
}

/// Warps per CTA: a power of two up to `2^max_log2`.
pub fn warp_count(max_log2: u32) -> impl Strategy<Value = u32> + Clone {
    pow2(0, max_log2)
}

/// Threads per warp for layouts built with a non-standard warp size (`to_linear_for_warp_size`): 1 to 32. The
/// conversion planner accepts at most 32 lanes.
pub fn warp_size() -> impl Strategy<Value = u32> + Clone {
    pow2(0, 5)
}

/// Element widths the conversion planner supports: 8, 16, 32 and 64 bits.
pub fn elem_bits() -> impl Strategy<Value = u32> + Clone {
    prop::sample::select(vec![8u32, 16, 32, 64])
}

/// Element widths of the tensor-core types (the MMA and tcgen05 layouts take 8, 16 or 32 bits).
pub fn mma_elem_bits() -> impl Strategy<Value = u32> + Clone {
    prop::sample::select(vec![8u32, 16, 32])
}

/// `n` one-bits spread over `rank` dims: the power-of-two sizes of a split of `2^n` threads (or warps).
pub fn split_bits(n: usize, rank: usize) -> impl Strategy<Value = Vec<u32>> + Clone {
    prop::collection::vec(0..rank, n).prop_map(move |assign| {
        let mut sizes = vec![1u32; rank];
        for d in assign {
            sizes[d] *= 2;
        }
        sizes
    })
}

/// `2^total` split over two dims: `[2^a, 2^(total - a)]`.
pub fn split2(total: u32) -> impl Strategy<Value = [u32; 2]> + Clone {
    (0..=total).prop_map(move |a| [1 << a, 1 << (total - a)])
}

/// A permutation of `0..rank` (an `order` list).
pub fn permutation(rank: usize) -> impl Strategy<Value = Vec<u32>> + Clone {
    Just((0..rank as u32).collect::<Vec<_>>()).prop_shuffle()
}
