//! The standard GPU layouts, as the Gluon author writes them, and their linear layouts.
//!
//! Each spec type mirrors a Gluon layout class (same parameters, same defaults) and turns into a
//! [`LinearLayout`] for a given tensor shape with `to_linear`. Distributed layouts map
//! `register, lane, warp, block` to `dim0..`; shared layouts map `offset, block` to `dim0..`; tensor-memory
//! layouts map `row, col` to `dim0, dim1`. When the tensor is larger than the layout's natural tile the tile
//! repeats in registers (or offsets); when it is smaller, lanes and warps broadcast (registers are dropped).

mod bases;
mod blocked;
mod cga;
mod common;
mod display;
mod mma;
mod shared;
#[cfg(test)]
mod tests;
mod tmem;

use std::fmt;

use crate::linear::{LinearLayout, Result, standard_out_dims};

pub use common::{
    DISTRIBUTED_IN_DIMS, MAX_PARAM_LOG2, MAX_SHAPE_LOG2, SHARED_IN_DIMS, WARP_SIZE, combine_cta_cga_with_shape,
    ensure_layout_not_larger_than, ensure_layout_not_smaller_than, identity_standard_nd,
};
pub use mma::nvidia_mma_tile;
pub use shared::default_swizzle;

/// The CTA (block) part of a layout: how a CGA cluster's CTAs split the tensor.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum CgaLayout {
    /// One CTA: the layout has no `block` bits.
    #[default]
    Single,
    /// `cga_layout` as Gluon writes it: one basis per `block` bit, in units of the per-CTA tile (`[[1, 0]]`:
    /// CTA 1 holds the tile after CTA 0's along dim0; a zero basis duplicates the tensor across CTAs).
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
    /// `.16x128b`: each warp reads 16 TMEM lanes, 128 bits per lane per repetition.
    B16x128,
    /// `.16x256b`: each warp reads 16 TMEM lanes, 256 bits per lane per repetition.
    B16x256,
}

/// The register layout of a tensor loaded from (or stored to) tensor memory with `tcgen05.ld/st`
/// (Gluon's `get_tmem_reg_layout` / `tensor_memory_descriptor.get_reg_layout`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmemRegLayout {
    pub tmem: TensorMemoryLayout,
    pub access: TmemAccess,
    pub num_warps: u32,
    /// Bits per element (8, 16 or 32): narrower elements are packed into 32-bit registers along dim1
    /// ([`TmemRegLayout::new`] gives 32).
    pub element_bitwidth: u32,
    /// Gluon's `instr_variant="32x32b_splitn"`: the `32x32b` layout with the column half `N / 2` moved into the
    /// last register ([`DistributedLinearLayout::split_n`]), so that `split` of the tensor into its two column
    /// halves is per thread. With 4 warps the last register already holds that half; with 8, the second
    /// warpgroup's columns are not a half any more but every other quarter. Only with `access` 32x32b.
    pub split_n: bool,
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

/// `TensorMemoryLayout(block=(M, N), col_stride, cta_split_num=(1, 1), two_ctas=False)`: a Blackwell
/// tensor-memory allocation (block M is 64 or 128; `col_stride` is 1 for packed, `32 / bitwidth` for
/// unpacked). Its linear layout maps `row` (the 128 TMEM lanes) and `col` (element-sized column slots) to the
/// tensor; the CTA split appears as the last `col` bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMemoryLayout {
    pub block: [u32; 2],
    pub col_stride: u32,
    pub two_ctas: bool,
    /// CTA split along M and N (`[1, 1]` for one CTA).
    pub cta_split: [u32; 2],
}

/// `TensorMemoryScalesLayout(cga_layout=[])`: the tensor-memory layout of block scales (8-bit, for
/// `tcgen05_mma_scaled`), `[rows, scales per row]` with the CTA split along M and N, or broadcast (zero bases:
/// every CTA of the group holds all of them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMemoryScalesLayout {
    /// CTA split along M and N (`[1, 1]` for one CTA).
    pub cta_split: [u32; 2],
    /// The CTAs holding a copy of the whole buffer (`cga_layout=[[0, 0]]`: 2, each CTA of a pair holds the
    /// scales both use); 1 for none. A broadcast layout splits nothing (`cta_split` is `[1, 1]`).
    pub broadcast: u32,
}

/// Any layout a tensor or memory descriptor can carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnyLayout {
    Distributed(DistributedLayout),
    Shared(SharedLayout),
    TensorMemory(TensorMemoryLayout),
    TensorMemoryScales(TensorMemoryScalesLayout),
}

impl DistributedLayout {
    /// The linear layout for a tensor of `shape`: in-dims `register, lane, warp, block` in that order, out-dims
    /// `dim0..dim{rank-1}`. Fails with a message naming the bad parameter if the layout or the shape is invalid.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        let layout = match self {
            DistributedLayout::Blocked(l) => l.to_linear(shape),
            DistributedLayout::Slice(l) => l.to_linear(shape),
            DistributedLayout::DotOperand(l) => l.to_linear(shape),
            DistributedLayout::Nvmma(l) => l.to_linear(shape),
            DistributedLayout::Linear(l) => l.to_linear(shape),
            DistributedLayout::TmemReg(l) => l.to_linear(shape),
        }?;
        common::normalize_dims(layout, &DISTRIBUTED_IN_DIMS)
    }

    /// Checks the parameters without building a layout (shape-independent checks only).
    pub fn validate(&self) -> Result<()> {
        match self {
            DistributedLayout::Blocked(l) => l.validate(),
            DistributedLayout::Slice(l) => l.validate().and_then(|_| l.parent.validate()),
            DistributedLayout::DotOperand(l) => l.validate().and_then(|_| l.parent.validate()),
            DistributedLayout::Nvmma(l) => l.validate(),
            DistributedLayout::Linear(l) => l.validate(),
            DistributedLayout::TmemReg(l) => l.validate(),
        }
    }

    /// The rank of the tensors this layout applies to.
    pub fn rank(&self) -> usize {
        match self {
            DistributedLayout::Blocked(l) => l.rank(),
            DistributedLayout::Slice(l) => l.rank(),
            DistributedLayout::DotOperand(l) => l.rank(),
            DistributedLayout::Nvmma(l) => l.rank(),
            DistributedLayout::Linear(l) => l.rank(),
            DistributedLayout::TmemReg(l) => l.rank(),
        }
    }

    /// The Gluon class name, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            DistributedLayout::Blocked(_) => "BlockedLayout",
            DistributedLayout::Slice(_) => "SliceLayout",
            DistributedLayout::DotOperand(_) => "DotOperandLayout",
            DistributedLayout::Nvmma(_) => "NVMMADistributedLayout",
            DistributedLayout::Linear(_) => "DistributedLinearLayout",
            DistributedLayout::TmemReg(_) => "TmemRegLayout",
        }
    }
}

impl SharedLayout {
    /// The linear layout for a buffer of `shape`: in-dims `offset, block`, out-dims `dim0..dim{rank-1}`.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        let layout = match self {
            SharedLayout::Swizzled(l) => l.to_linear(shape),
            SharedLayout::Nvmma(l) => l.to_linear(shape),
            SharedLayout::Linear(l) => l.to_linear(shape),
        }?;
        common::normalize_dims(layout, &SHARED_IN_DIMS)
    }

    pub fn validate(&self) -> Result<()> {
        match self {
            SharedLayout::Swizzled(l) => l.validate(),
            SharedLayout::Nvmma(l) => l.validate(),
            SharedLayout::Linear(l) => l.validate(),
        }
    }

    pub fn rank(&self) -> usize {
        match self {
            SharedLayout::Swizzled(l) => l.rank(),
            SharedLayout::Nvmma(l) => l.rank(),
            SharedLayout::Linear(l) => l.rank(),
        }
    }
}

impl AnyLayout {
    pub fn rank(&self) -> usize {
        match self {
            AnyLayout::Distributed(l) => l.rank(),
            AnyLayout::Shared(l) => l.rank(),
            AnyLayout::TensorMemory(l) => l.rank(),
            AnyLayout::TensorMemoryScales(_) => 2,
        }
    }

    /// The linear layout for a tensor of `shape` (in-dims `register, lane, warp, block`, `offset, block` or
    /// `row, col` depending on the kind).
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        match self {
            AnyLayout::Distributed(l) => l.to_linear(shape),
            AnyLayout::Shared(l) => l.to_linear(shape),
            AnyLayout::TensorMemory(l) => l.to_linear(shape),
            AnyLayout::TensorMemoryScales(l) => l.to_linear(shape),
        }
    }

    /// [`AnyLayout::to_linear`], except that a shared layout of rank `r` also lays out a buffer of rank `r + k`:
    /// the `k` leading dims index whole buffers of the last `r` dims, one after another in row-major order (as
    /// Gluon's multi-buffered `allocate_shared_memory(f16, [STAGES, M, K], NVMMASharedLayout(...))`); a buffer
    /// count that is not a power of two gets the out-dim size of the next one.
    pub fn to_linear_buffered(&self, shape: &[u32]) -> Result<LinearLayout> {
        let AnyLayout::Shared(s) = self else { return self.to_linear(shape) };
        let r = s.rank();
        if shape.len() <= r {
            return s.to_linear(shape);
        }
        let k = shape.len() - r;
        // A buffer count need not be a power of two (a ring of `num_stages` buffers): the layout spans the next
        // power of two, of which the memdesc holds the first `shape[d]`.
        let shape: Vec<u32> =
            shape.iter().enumerate().map(|(d, &n)| if d < k { n.next_power_of_two() } else { n }).collect();
        let inner = s.to_linear(&shape[k..])?;
        let ins = inner.bases_vec().into_iter().map(|(name, bases)| {
            let mut out: Vec<Vec<u32>> = bases.into_iter().map(|b| [vec![0; k], b].concat()).collect();
            if name.as_str() == "offset" {
                for d in (0..k).rev() {
                    for j in 0..shape[d].trailing_zeros() {
                        let mut b = vec![0; shape.len()];
                        b[d] = 1 << j;
                        out.push(b);
                    }
                }
            }
            (name, out)
        });
        LinearLayout::new(ins, standard_out_dims(shape.len()).into_iter().zip(shape.iter().copied()))
    }
}

/// Gluon spelling: `BlockedLayout([1,4],[8,4],[4,1],[1,0])`.
impl fmt::Display for AnyLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyLayout::Distributed(l) => write!(f, "{l}"),
            AnyLayout::Shared(l) => write!(f, "{l}"),
            AnyLayout::TensorMemory(l) => write!(f, "{l}"),
            AnyLayout::TensorMemoryScales(l) => write!(f, "{l}"),
        }
    }
}
