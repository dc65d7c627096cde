//! Blocked layouts, slices of any distributed layout, and the FMA dot operands of a blocked accumulator.

use crate::linear::{LinearLayout, Result, bail, standard_out_dims};

use super::common::{
    WARP_SIZE, check_permutation, check_pow2_list, check_rank, check_shape, combine_cta_cga_with_shape,
    identity_standard_nd,
};
use super::{BlockedLayout, SliceLayout};

impl BlockedLayout {
    /// Checks the parameters: four lists of one rank, powers of two, 32 threads per warp, `order` a
    /// permutation, and a CGA layout of the same rank.
    pub fn validate(&self) -> Result<()> {
        self.validate_for_warp_size(WARP_SIZE)
    }

    /// [`Self::validate`] for a warp of `warp_size` threads.
    pub fn validate_for_warp_size(&self, warp_size: u32) -> Result<()> {
        let rank = self.order.len();
        if rank == 0 {
            bail!("BlockedLayout: order is empty; a layout needs rank at least 1");
        }
        check_rank(&self.size_per_thread, rank, "BlockedLayout: size_per_thread")?;
        check_rank(&self.threads_per_warp, rank, "BlockedLayout: threads_per_warp")?;
        check_rank(&self.warps_per_cta, rank, "BlockedLayout: warps_per_cta")?;
        check_pow2_list(&self.size_per_thread, "BlockedLayout: size_per_thread")?;
        check_pow2_list(&self.threads_per_warp, "BlockedLayout: threads_per_warp")?;
        check_pow2_list(&self.warps_per_cta, "BlockedLayout: warps_per_cta")?;
        check_permutation(&self.order, rank, "BlockedLayout: order")?;
        let threads: u32 = self.threads_per_warp.iter().product();
        if threads != warp_size {
            bail!(
                "BlockedLayout: threads_per_warp {:?} multiplies out to {threads}, but a warp has {warp_size} threads",
                self.threads_per_warp
            );
        }
        self.cga.to_linear(rank).map_err(|e| crate::linear::LayoutError(format!("BlockedLayout: {e}")))?;
        Ok(())
    }

    pub fn rank(&self) -> usize {
        self.order.len()
    }

    /// Registers, then lanes, then warps, each an N-d identity in `order` (fastest dim first); the tile repeats
    /// in registers along `order[0]` first when the tensor is larger, and lanes and warps broadcast when it is
    /// smaller.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.to_linear_for_warp_size(shape, WARP_SIZE)
    }

    /// [`Self::to_linear`] for a warp of `warp_size` threads (the threads per warp must multiply to it).
    pub fn to_linear_for_warp_size(&self, shape: &[u32], warp_size: u32) -> Result<LinearLayout> {
        self.validate_for_warp_size(warp_size)?;
        check_shape(shape, self.rank(), "BlockedLayout")?;
        let cta = identity_standard_nd("register", &self.size_per_thread, &self.order)?
            * identity_standard_nd("lane", &self.threads_per_warp, &self.order)?
            * identity_standard_nd("warp", &self.warps_per_cta, &self.order)?;
        combine_cta_cga_with_shape(&cta, &self.cga, shape)
    }

    /// The FMA operand `operand_index` (0: A `[.., M, K]`, 1: B `[.., K, N]`) of a dot whose accumulator has this
    /// layout: each thread holds the whole K extent of its rows (or columns), and the lanes and warps that split
    /// the accumulator along the other operand's dim hold the same elements.
    pub(crate) fn fma_dot_operand_to_linear(&self, operand_index: u32, shape: &[u32]) -> Result<LinearLayout> {
        self.validate()?;
        let rank = self.rank();
        check_shape(shape, rank, "DotOperandLayout")?;
        if rank < 2 {
            bail!("DotOperandLayout: a dot operand has rank at least 2, the parent BlockedLayout has rank {rank}");
        }
        let k_dim = if operand_index == 0 { rank - 1 } else { rank - 2 };
        let mut per_thread = self.size_per_thread.clone();
        per_thread[k_dim] = shape[k_dim];
        let registers = identity_standard_nd("register", &per_thread, &self.order)?;
        let lanes = broadcast_along("lane", &self.threads_per_warp, &self.order, k_dim);
        let warps = broadcast_along("warp", &self.warps_per_cta, &self.order, k_dim);
        combine_cta_cga_with_shape(&(registers * lanes * warps), &self.cga.broadcast_dim(k_dim), shape)
    }
}

/// `in_dim` spread over `sizes` in `order`, except along `k_dim` where every one of its values holds the same
/// element: the lanes or warps of a dot operand, which must see the whole K extent.
pub(crate) fn broadcast_along(in_dim: &str, sizes: &[u32], order: &[u32], k_dim: usize) -> LinearLayout {
    let names = standard_out_dims(sizes.len());
    order.iter().fold(LinearLayout::empty(), |acc, &d| {
        let d = d as usize;
        if d == k_dim {
            acc * LinearLayout::zeros_1d(sizes[d], in_dim, &names[d])
        } else {
            acc * LinearLayout::identity_1d(sizes[d], in_dim, &names[d])
        }
    })
}

impl SliceLayout {
    pub fn validate(&self) -> Result<()> {
        let parent_rank = self.parent.rank();
        if parent_rank < 2 {
            bail!("SliceLayout: the parent has rank {parent_rank}; slicing it would leave a rank-0 tensor");
        }
        if self.dim as usize >= parent_rank {
            bail!("SliceLayout: dim {} is out of range for a parent of rank {parent_rank}", self.dim);
        }
        Ok(())
    }

    pub fn rank(&self) -> usize {
        self.parent.rank().saturating_sub(1)
    }

    /// The parent's layout at `shape` with a 1 inserted at `dim`, with out-dim `dim` dropped (the later dims
    /// renumbered) and the registers that only moved along `dim` removed: the hardware slots that held
    /// different elements along `dim` now hold the same one.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.validate()?;
        check_shape(shape, self.rank(), "SliceLayout")?;
        let dim = self.dim as usize;
        let mut parent_shape = shape.to_vec();
        parent_shape.insert(dim, 1);
        let parent = self.parent.to_linear(&parent_shape)?;
        // parent out-dims → slice out-dims: `dim` goes to zero, the ones after it move down by one.
        let slice_names = standard_out_dims(shape.len());
        let mut drop = LinearLayout::empty();
        for (idx, (name, size)) in parent.out_dim_sizes().into_iter().enumerate() {
            drop = match idx.cmp(&dim) {
                std::cmp::Ordering::Equal => drop * LinearLayout::zeros_1d(size, &name, &slice_names[0]),
                std::cmp::Ordering::Less => drop * LinearLayout::identity_1d(size, &name, &slice_names[idx]),
                std::cmp::Ordering::Greater => drop * LinearLayout::identity_1d(size, &name, &slice_names[idx - 1]),
            };
        }
        Ok(parent.compose(&drop)?.remove_zero_bases("register"))
    }
}
