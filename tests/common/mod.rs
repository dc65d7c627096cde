//! Specialization helpers shared by the end-to-end tests over the example kernels.

use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::{self, I32};

/// A pointer argument (16-byte aligned, as PyTorch allocations are).
pub fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, true)
}

/// An i32 argument, specialized as a multiple of 16 when `div16`.
pub fn int(div16: bool) -> ArgSpec {
    ArgSpec::Int(I32, div16)
}

/// An integer constexpr.
pub fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}
