//! Layouts the author writes as their bases: `DistributedLinearLayout` (registers) and `SharedLinearLayout`
//! (shared memory).

use crate::linear::{Dim, LinearLayout, Result, bail, standard_out_dims};

use super::common::{
    DISTRIBUTED_IN_DIMS, MAX_PARAM_LOG2, check_pow2, check_shape, ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than, labeled_shape,
};
use super::{DistributedLinearLayout, SharedLinearLayout};

/// At most this many register bases (2^64 registers per thread is far beyond any tensor we build).
const MAX_REGISTER_BASES: usize = 64;

impl DistributedLinearLayout {
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Checks the bases: one coordinate per dim of `shape`, each 0 or a power of two, at most one non-zero (a
    /// hardware bit moves along one dim), 5 lane bases (32 lanes), and every element of `shape` reached.
    pub fn validate(&self) -> Result<()> {
        self.as_written().map(|_| ())
    }

    /// The layout exactly as written: out-dims `dim0..` of the sizes in `shape`.
    pub fn as_written(&self) -> Result<LinearLayout> {
        let rank = self.rank();
        if rank == 0 {
            bail!("DistributedLinearLayout: shape is empty; a layout needs rank at least 1");
        }
        check_shape(&self.shape, rank, "DistributedLinearLayout")?;
        if self.lane_bases.len() != 5 {
            bail!("DistributedLinearLayout: {} lane bases given; a warp of 32 lanes has 5", self.lane_bases.len());
        }
        let lists = [&self.reg_bases, &self.lane_bases, &self.warp_bases, &self.block_bases];
        for (name, bases) in DISTRIBUTED_IN_DIMS.iter().zip(lists) {
            let limit = if *name == "register" { MAX_REGISTER_BASES } else { MAX_PARAM_LOG2 as usize };
            if bases.len() > limit {
                bail!("DistributedLinearLayout: {} {name} bases given; at most {limit} are supported", bases.len());
            }
            for (i, b) in bases.iter().enumerate() {
                if b.len() != rank {
                    bail!(
                        "DistributedLinearLayout: {name} basis {i} {b:?} has {} coordinates, the shape has rank {rank}",
                        b.len()
                    );
                }
                if let Some(&c) = b.iter().find(|&&c| c != 0 && !c.is_power_of_two()) {
                    bail!(
                        "DistributedLinearLayout: {name} basis {i} {b:?} has coordinate {c}, not 0 or a power of two"
                    );
                }
                if b.iter().filter(|&&c| c != 0).count() > 1 {
                    bail!("DistributedLinearLayout: {name} basis {i} {b:?} moves along more than one dim");
                }
            }
        }
        let ins = DISTRIBUTED_IN_DIMS.iter().zip(lists).map(|(name, bases)| (*name, bases.clone()));
        let layout = LinearLayout::new(ins, standard_out_dims(rank).into_iter().zip(self.shape.iter().copied()))
            .map_err(|e| crate::linear::LayoutError(format!("DistributedLinearLayout: {e}")))?;
        if !layout.is_surjective() {
            bail!("DistributedLinearLayout: the bases do not reach every element of the shape {:?}", self.shape);
        }
        Ok(layout)
    }

    /// The layout for a tensor of `shape`. The written layout is repeated in registers (along the dims in the
    /// order its registers first move along them) when the tensor is larger, and cut down (registers dropped,
    /// lanes, warps and blocks broadcast) when it is smaller.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        let written = self.as_written()?;
        let rank = self.rank();
        check_shape(shape, rank, "DistributedLinearLayout")?;
        if shape == self.shape.as_slice() {
            return Ok(written);
        }
        let names = standard_out_dims(rank);
        let mut order: Vec<usize> = Vec::with_capacity(rank);
        for b in &self.reg_bases {
            if let Some(d) = b.iter().position(|&c| c != 0)
                && !order.contains(&d)
            {
                order.push(d);
            }
        }
        for d in (0..rank).rev() {
            if !order.contains(&d) {
                order.push(d);
            }
        }
        let permuted: Vec<&str> = order.iter().map(|&d| names[d].as_str()).collect();
        let target = labeled_shape(shape);
        let layout = written.transpose_outs(&permuted)?;
        let layout = ensure_layout_not_smaller_than(&layout, &target)?;
        let layout = ensure_layout_not_larger_than(&layout, &target, false)?;
        let standard: Vec<&str> = names.iter().map(Dim::as_str).collect();
        layout.transpose_outs(&standard)
    }
}

impl SharedLinearLayout {
    /// The number of coordinates of the bases (0 if there are none).
    pub fn rank(&self) -> usize {
        self.offset_bases.first().or(self.block_bases.first()).map_or(0, Vec::len)
    }

    pub fn validate(&self) -> Result<()> {
        check_pow2(self.alignment, "SharedLinearLayout: alignment")?;
        let rank = self.rank();
        for (name, bases) in [("offset", &self.offset_bases), ("block", &self.block_bases)] {
            if bases.len() > 2 * MAX_PARAM_LOG2 as usize {
                bail!(
                    "SharedLinearLayout: {} {name} bases given; at most {} are supported",
                    bases.len(),
                    2 * MAX_PARAM_LOG2
                );
            }
            if let Some((i, b)) = bases.iter().enumerate().find(|(_, b)| b.len() != rank) {
                bail!(
                    "SharedLinearLayout: {name} basis {i} {b:?} has {} coordinates, the first basis has {rank}",
                    b.len()
                );
            }
        }
        Ok(())
    }

    /// The layout as written. Its shape is, per dim, the smallest power of two above every coordinate the bases
    /// reach, and it must equal `shape`: a shared layout written as bases is not stretched to other shapes.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.validate()?;
        let rank = shape.len();
        check_shape(shape, rank, "SharedLinearLayout")?;
        if (!self.offset_bases.is_empty() || !self.block_bases.is_empty()) && self.rank() != rank {
            bail!(
                "SharedLinearLayout: the bases have {} coordinates, the shape {shape:?} has rank {rank}",
                self.rank()
            );
        }
        let ins = [("offset", self.offset_bases.clone()), ("block", self.block_bases.clone())];
        let layout = LinearLayout::from_bases(ins, standard_out_dims(rank))?;
        let sizes: Vec<u32> = layout.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
        if sizes != shape {
            bail!("SharedLinearLayout: the bases span the shape {sizes:?}, the tensor has shape {shape:?}");
        }
        if !layout.is_surjective() {
            bail!("SharedLinearLayout: the bases do not reach every element of the shape {shape:?}");
        }
        Ok(layout)
    }
}
