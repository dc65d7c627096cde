//! Tensor-core register layouts: the accumulators of `mma.sync` (MMA v2, Ampere) and `wgmma` (MMA v3,
//! Hopper), and the dot operands that feed them from registers.
//!
//! Both accumulators are built from one 2-d tile pattern ([`nvidia_mma_tile`]): along the contiguous dim a
//! thread holds `k_width` consecutive elements and the four lanes of a quad sit side by side; along the other
//! dim the eight quads of a warp stack, then the tile repeats in registers. That is the `groupID` /
//! `threadID_in_group` decomposition of the PTX ISA fragment figures for `mma.m16n8k16` and `wgmma.m64nNk16`.

use crate::linear::{LinearLayout, Result, bail, standard_out_dims};

use super::blocked::broadcast_along;
use super::common::{
    check_pow2, check_pow2_list, check_rank, check_shape, combine_cta_cga_with_shape, identity_standard_nd,
    matrix_order,
};
use super::{DistributedLayout, DotOperandLayout, NvmmaDistributedLayout};

/// The register/lane pattern of one MMA tile of `tile_shape`: `k_width` registers and then 4 lanes along the
/// contiguous dim `order[0]`, 8 lanes along `order[1]`, then registers repeating the 8-row group along
/// `order[1]` and the `4 * k_width`-wide group along `order[0]`. The out-dims are listed in `rep_order`, which
/// is the order in which the tile repeats (in registers) when the tensor is larger.
pub fn nvidia_mma_tile(tile_shape: &[u32], k_width: u32, order: &[u32], rep_order: &[u32]) -> Result<LinearLayout> {
    let rank = rep_order.len();
    if rank < 2 || tile_shape.len() != rank || order.len() != rank {
        bail!("an MMA tile needs rank at least 2 and one tile size and order entry per dim");
    }
    check_pow2_list(tile_shape, "MMA tile shape")?;
    check_pow2(k_width, "k_width")?;
    let names = standard_out_dims(rank);
    let (inner, outer) = (order[0] as usize, order[1] as usize);
    let (m, n) = (tile_shape[outer], tile_shape[inner]);
    if m % 8 != 0 || n % (4 * k_width) != 0 {
        bail!(
            "MMA tile {tile_shape:?} with k_width {k_width} does not hold whole 8-row groups and 4-lane quads: need \
             {m} divisible by 8 and {n} divisible by {}",
            4 * k_width
        );
    }
    let (inner, outer) = (&names[inner], &names[outer]);
    Ok(identity_standard_nd("register", &vec![1; rank], rep_order)?
        * LinearLayout::identity_1d(k_width, "register", inner)
        * LinearLayout::identity_1d(4, "lane", inner)
        * LinearLayout::identity_1d(8, "lane", outer)
        * LinearLayout::identity_1d(m / 8, "register", outer)
        * LinearLayout::identity_1d(n / (4 * k_width), "register", inner))
}

impl NvmmaDistributedLayout {
    /// MMA v3 (`wgmma`, Hopper) rather than v2 (`mma.sync`, Ampere).
    pub fn is_hopper(&self) -> bool {
        self.version[0] == 3
    }

    pub fn rank(&self) -> usize {
        self.warps_per_cta.len()
    }

    /// Checks the version, the warps, and the instruction shape: `[16, 8]` for v2 (with leading 1s for a batch
    /// dim), `[16, N, K]` for v3 with N a power of two in 8..=256 and K = 256 / bitwidth (8, 16 or 32), and the
    /// warps along M a multiple of 4 so that each warpgroup covers 64 rows.
    pub fn validate(&self) -> Result<()> {
        let rank = self.rank();
        check_pow2_list(&self.warps_per_cta, "NVMMADistributedLayout: warps_per_cta")?;
        match self.version[0] {
            2 => {
                if rank < 2 {
                    bail!("NVMMADistributedLayout: rank {rank}; an MMA layout has rank at least 2");
                }
                check_rank(&self.instr_shape, rank, "NVMMADistributedLayout: instr_shape")?;
                let (batch, mn) = self.instr_shape.split_at(rank - 2);
                if mn != [16, 8] || batch.iter().any(|&b| b != 1) {
                    bail!(
                        "NVMMADistributedLayout: instr_shape {:?} is not the mma.sync tile [16, 8] (with leading 1s \
                         for batch dims)",
                        self.instr_shape
                    );
                }
            }
            3 => {
                if rank != 2 {
                    bail!("NVMMADistributedLayout: version [3, _] (wgmma) has rank 2, warps_per_cta has rank {rank}");
                }
                let &[m, n, k] = self.instr_shape.as_slice() else {
                    bail!("NVMMADistributedLayout: wgmma instr_shape {:?} is not [16, N, K]", self.instr_shape);
                };
                if m != 16 || !n.is_power_of_two() || !(8..=256).contains(&n) || ![8, 16, 32].contains(&k) {
                    bail!(
                        "NVMMADistributedLayout: wgmma instr_shape {:?} is not [16, N, K] with N a power of two in \
                         8..=256 and K in {{8, 16, 32}}",
                        self.instr_shape
                    );
                }
                if self.warps_per_cta[0] % 4 != 0 {
                    bail!(
                        "NVMMADistributedLayout: wgmma warps_per_cta {:?} must have a multiple of 4 warps along M (a \
                         warpgroup covers 64 rows)",
                        self.warps_per_cta
                    );
                }
            }
            v => bail!(
                "NVMMADistributedLayout: version {:?} is not supported; use [2, 0] (mma.sync) or [3, 0] (wgmma)",
                [v, self.version[1]]
            ),
        }
        self.cga.to_linear(rank).map_err(|e| crate::linear::LayoutError(format!("NVMMADistributedLayout: {e}")))?;
        Ok(())
    }

    /// Warps tile the accumulator row-major for `mma.sync` and column-major (down M first, so that four warps
    /// form a warpgroup) for `wgmma`.
    fn warp_order(&self) -> Vec<u32> {
        matrix_order(self.rank(), !self.is_hopper())
    }

    /// The accumulator: the `[M, N]` instruction tile per warp (2 consecutive columns per thread), the warps
    /// around it, and the CTA tile repeating along N first, then M.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.validate()?;
        let rank = self.rank();
        check_shape(shape, rank, "NVMMADistributedLayout")?;
        let tile_shape = if self.is_hopper() { self.instr_shape[..2].to_vec() } else { self.instr_shape.clone() };
        let row_major = matrix_order(rank, true);
        let tile = nvidia_mma_tile(&tile_shape, 2, &row_major, &row_major)?;
        let warps = identity_standard_nd("warp", &self.warps_per_cta, &self.warp_order())?;
        let cta = tile.clone() * warps.transpose_outs(&out_names(&tile))?;
        combine_cta_cga_with_shape(&cta, &self.cga, shape)
    }

    /// Operand `operand_index` of a dot with this accumulator, held in registers with `k_width` consecutive K
    /// elements per thread (32 bits' worth). A: one `[16, 8 * k_width]` tile per warp (the `a0..a7` fragment of
    /// `mma.m16n8k16` for 16-bit types); B (`mma.sync` only): one `[8 * k_width, 8]` tile. Warps that split the
    /// accumulator along the other operand's dim hold the same elements.
    pub(crate) fn dot_operand_to_linear(
        &self,
        operand_index: u32,
        k_width: u32,
        shape: &[u32],
    ) -> Result<LinearLayout> {
        self.validate()?;
        let rank = self.rank();
        check_shape(shape, rank, "DotOperandLayout")?;
        if k_width == 0 || !k_width.is_power_of_two() || k_width > 32 {
            bail!("DotOperandLayout: k_width {k_width} must be a power of two in 1..=32 for an MMA parent");
        }
        let is_a = operand_index == 0;
        if !is_a && self.is_hopper() {
            bail!("DotOperandLayout: wgmma reads operand B from shared memory; only operand 0 can live in registers");
        }
        let mut tile_shape = vec![1; rank];
        if is_a {
            tile_shape[rank - 2] = 16;
            tile_shape[rank - 1] = 8 * k_width;
        } else {
            tile_shape[rank - 2] = 8 * k_width;
            tile_shape[rank - 1] = 8;
        }
        // Registers run along K for both operands.
        let k_contiguous = matrix_order(rank, is_a);
        let tile = nvidia_mma_tile(&tile_shape, k_width, &k_contiguous, &k_contiguous)?;
        let k_dim = if is_a { rank - 1 } else { rank - 2 };
        let warps = broadcast_along("warp", &self.warps_per_cta, &self.warp_order(), k_dim);
        let cta = tile.clone() * warps.transpose_outs(&out_names(&tile))?;
        combine_cta_cga_with_shape(&cta, &self.cga.broadcast_dim(k_dim), shape)
    }
}

impl DotOperandLayout {
    pub fn rank(&self) -> usize {
        self.parent.rank()
    }

    /// Checks the operand index and that `k_width` fits the parent: 0 for a blocked (FMA) parent, a power of two
    /// for an MMA parent. The parent itself is checked when the layout is built.
    pub fn validate(&self) -> Result<()> {
        if self.operand_index > 1 {
            bail!("DotOperandLayout: operand_index {} must be 0 (A) or 1 (B)", self.operand_index);
        }
        match &*self.parent {
            DistributedLayout::Blocked(_) if self.k_width != 0 => {
                bail!("DotOperandLayout: k_width must be 0 for a BlockedLayout parent (FMA dot), got {}", self.k_width)
            }
            DistributedLayout::Nvmma(_) if !self.k_width.is_power_of_two() || self.k_width > 32 => {
                bail!(
                    "DotOperandLayout: k_width {} must be a power of two in 1..=32 for an NVMMADistributedLayout parent",
                    self.k_width
                )
            }
            DistributedLayout::Nvmma(m) if m.is_hopper() && self.operand_index != 0 => {
                bail!(
                    "DotOperandLayout: wgmma reads operand B from shared memory; only operand 0 can live in registers"
                )
            }
            DistributedLayout::Blocked(_) | DistributedLayout::Nvmma(_) => Ok(()),
            other => bail!(
                "DotOperandLayout: the parent must be a BlockedLayout or an NVMMADistributedLayout, not {}",
                other.kind_name()
            ),
        }
    }

    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.validate()?;
        match &*self.parent {
            DistributedLayout::Blocked(b) => b.fma_dot_operand_to_linear(self.operand_index, shape),
            DistributedLayout::Nvmma(m) => m.dot_operand_to_linear(self.operand_index, self.k_width, shape),
            other => bail!("DotOperandLayout: unsupported parent {}", other.kind_name()),
        }
    }
}

fn out_names(layout: &LinearLayout) -> Vec<&str> {
    layout.out_dims().map(|d| d.as_str()).collect()
}
