//! The standard GPU layouts, as the Gluon author writes them, and their linear layouts.
//!
//! Each spec type mirrors a Gluon layout class (same parameters, same defaults) and turns into a
//! [`LinearLayout`] for a given tensor shape with `to_linear`. Distributed layouts map
//! `register, lane, warp, block` to `dim0..`; shared layouts map `offset, block` to `dim0..`; tensor-memory
//! layouts map `row, col` to `dim0, dim1`. When the tensor is larger than the layout's natural tile the tile
//! repeats in registers (or offsets); when it is smaller, lanes and warps broadcast (registers are dropped).

use std::fmt;

use crate::linear::{LinearLayout, Result};

/// The CTA (block) part of a layout: how a CGA cluster's CTAs split the tensor.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum CgaLayout {
    /// `cga_layout` as Gluon writes it: one basis per `block` bit, in units of the per-CTA tile
    /// (`[]` = a single CTA).
    #[default]
    Single,
    Bases(Vec<Vec<u32>>),
    /// Legacy parameters: CTAs per CGA, CTA split per dim and CTA order. A split smaller than the CTA count
    /// duplicates the tensor across the extra CTAs (those `block` bases are 0).
    Legacy { ctas_per_cga: Vec<u32>, cta_split: Vec<u32>, cta_order: Vec<u32> },
}

/// `BlockedLayout(size_per_thread, threads_per_warp, warps_per_cta, order, cga_layout=[])`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedLayout {
    pub size_per_thread: Vec<u32>,
    pub threads_per_warp: Vec<u32>,
    pub warps_per_cta: Vec<u32>,
    /// Dims from fastest to slowest varying.
    pub order: Vec<u32>,
    pub cga: CgaLayout,
}

/// `SliceLayout(dim, parent)`: the parent with `dim` removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceLayout {
    pub dim: u32,
    pub parent: Box<DistributedLayout>,
}

/// `DotOperandLayout(operand_index, parent, k_width)`: operand 0 (A, `[M, K]`) or 1 (B, `[K, N]`) of a dot
/// whose accumulator has layout `parent`. `k_width` = consecutive K elements per thread (32 bits' worth for
/// MMA operands); 0 for the FMA path of a blocked parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DotOperandLayout {
    pub operand_index: u32,
    pub parent: Box<DistributedLayout>,
    pub k_width: u32,
}

/// `NVMMADistributedLayout(version, warps_per_cta, instr_shape, cga_layout=[])`: the accumulator of
/// `mma.sync` (version `[2, 0]`, instr_shape `[16, 8]`) or `wgmma` (version `[3, 0]`, instr_shape `[16, N, K]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvmmaDistributedLayout {
    pub version: [u32; 2],
    pub warps_per_cta: Vec<u32>,
    pub instr_shape: Vec<u32>,
    pub cga: CgaLayout,
}

/// `DistributedLinearLayout(reg_bases, lane_bases, warp_bases, block_bases, shape)`: a layout written as its
/// bases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistributedLinearLayout {
    pub reg_bases: Vec<Vec<u32>>,
    pub lane_bases: Vec<Vec<u32>>,
    pub warp_bases: Vec<Vec<u32>>,
    pub block_bases: Vec<Vec<u32>>,
    pub shape: Vec<u32>,
}

/// Which `tcgen05.ld/st` shape a tensor-memory register layout follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmemAccess {
    /// `.32x32b`: each warp reads 32 TMEM lanes, one 32-bit column per register.
    B32x32,
    /// `.16x64b`: each warp reads 16 TMEM lanes, 64 bits per lane per repetition.
    B16x64,
}

/// The register layout of a tensor loaded from (or stored to) tensor memory with `tcgen05.ld/st`
/// (Gluon's `get_tmem_reg_layout` / `tensor_memory_descriptor.get_reg_layout`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmemRegLayout {
    pub tmem: TensorMemoryLayout,
    pub access: TmemAccess,
    pub num_warps: u32,
}

/// A layout of values in registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DistributedLayout {
    Blocked(BlockedLayout),
    Slice(SliceLayout),
    DotOperand(DotOperandLayout),
    Nvmma(NvmmaDistributedLayout),
    Linear(DistributedLinearLayout),
    TmemReg(TmemRegLayout),
}

/// `SwizzledSharedLayout(vec, per_phase, max_phase, order, cga_layout=[])`: row `r` of the two fastest dims
/// XORs its `vec`-element groups with `(r / per_phase) % max_phase`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwizzledSharedLayout {
    pub vec: u32,
    pub per_phase: u32,
    pub max_phase: u32,
    pub order: Vec<u32>,
    pub cga: CgaLayout,
}

/// `NVMMASharedLayout(swizzle_byte_width, element_bitwidth, rank=2, transposed=False, fp4_padded=False,
/// cga_layout=[])`: the shared layouts TMA writes and wgmma/tcgen05 read (swizzle 0, 32, 64 or 128 bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvmmaSharedLayout {
    pub swizzle_byte_width: u32,
    pub element_bitwidth: u32,
    pub rank: u32,
    pub transposed: bool,
    pub fp4_padded: bool,
    pub cga: CgaLayout,
}

/// `SharedLinearLayout(offset_bases, block_bases=[], alignment=16)`: a shared layout written as its bases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedLinearLayout {
    pub offset_bases: Vec<Vec<u32>>,
    pub block_bases: Vec<Vec<u32>>,
    pub alignment: u32,
}

/// A layout of values in shared memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SharedLayout {
    Swizzled(SwizzledSharedLayout),
    Nvmma(NvmmaSharedLayout),
    Linear(SharedLinearLayout),
}

/// `TensorMemoryLayout(block=(M, N), col_stride, cga_layout=[], two_ctas=False)`: a Blackwell tensor-memory
/// allocation (block M is 64 or 128; `col_stride` is 1 for packed, `32 / bitwidth` for unpacked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMemoryLayout {
    pub block: [u32; 2],
    pub col_stride: u32,
    pub two_ctas: bool,
    /// CTA split along M and N (`[1, 1]` for one CTA).
    pub cta_split: [u32; 2],
}

/// Any layout a tensor or memory descriptor can carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnyLayout {
    Distributed(DistributedLayout),
    Shared(SharedLayout),
    TensorMemory(TensorMemoryLayout),
}

impl AnyLayout {
    /// The linear layout for a tensor of `shape` (in-dims `register, lane, warp, block`, `offset, block` or
    /// `row, col` depending on the kind).
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        match self {
            AnyLayout::Distributed(l) => l.to_linear(shape),
            AnyLayout::Shared(l) => l.to_linear(shape),
            AnyLayout::TensorMemory(l) => l.to_linear(shape),
        }
    }
}

/// Gluon spelling: `BlockedLayout([1,4],[8,4],[4,1],[1,0])`.
impl fmt::Display for AnyLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyLayout::Distributed(l) => write!(f, "{l}"),
            AnyLayout::Shared(l) => write!(f, "{l}"),
            AnyLayout::TensorMemory(l) => write!(f, "{l}"),
        }
    }
}
