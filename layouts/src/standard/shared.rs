//! Shared-memory layouts: the generic XOR-swizzled layout and the NVMMA layouts that TMA writes and
//! wgmma/tcgen05 read. In-dims `offset` (element offset within one CTA's buffer) and `block`.

use crate::linear::{Dim, LinearLayout, Result, bail, standard_out_dims};

use super::common::{
    check_permutation, check_pow2, check_shape, combine_cta_cga_with_shape, ensure_layout_not_smaller_than,
    labeled_shape,
};
use super::{CgaLayout, NvmmaSharedLayout, SwizzledSharedLayout};

/// A TMA box holds at most 256 elements along each dim.
const TMA_MAX_BOX: u32 = 256;

/// Each CTA's part of `shape`: the shape divided by how many CTAs split each dim (at least 1).
fn shape_per_cta(cga: &CgaLayout, shape: &[u32]) -> Result<Vec<u32>> {
    let split = cga.split_per_dim(shape.len())?;
    Ok(shape.iter().zip(split).map(|(&s, k)| (s / k).max(1)).collect())
}

impl SwizzledSharedLayout {
    pub fn rank(&self) -> usize {
        self.order.len()
    }

    pub fn validate(&self) -> Result<()> {
        check_pow2(self.vec, "SwizzledSharedLayout: vec")?;
        check_pow2(self.per_phase, "SwizzledSharedLayout: per_phase")?;
        check_pow2(self.max_phase, "SwizzledSharedLayout: max_phase")?;
        if self.order.is_empty() {
            bail!("SwizzledSharedLayout: order is empty; a layout needs rank at least 1");
        }
        check_permutation(&self.order, self.rank(), "SwizzledSharedLayout: order")?;
        self.cga
            .to_linear(self.rank())
            .map_err(|e| crate::linear::LayoutError(format!("SwizzledSharedLayout: {e}")))?;
        Ok(())
    }

    /// Offsets run along `order[0]` (the columns) first, then along `order[1]` (the rows), where row `r` XORs
    /// the column with `vec * ((r / per_phase) % max_phase)` (modulo the row length); further dims follow in
    /// `order` unswizzled.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.validate()?;
        let rank = self.rank();
        check_shape(shape, rank, "SwizzledSharedLayout")?;
        let per_cta = shape_per_cta(&self.cga, shape)?;
        let names = standard_out_dims(rank);
        let cta = if rank == 1 {
            LinearLayout::identity_1d(per_cta[0], "offset", &names[0])
        } else {
            let (col, row) = (self.order[0] as usize, self.order[1] as usize);
            let (cols, rows) = (per_cta[col], per_cta[row]);
            let mut bases: Vec<Vec<u32>> = (0..cols.trailing_zeros()).map(|b| vec![0, 1 << b]).collect();
            for b in 0..rows.trailing_zeros() {
                let r = 1u32 << b;
                let phase = (r / self.per_phase) % self.max_phase;
                bases.push(vec![r, (self.vec as u64 * phase as u64 % cols as u64) as u32]);
            }
            let mut cta = LinearLayout::new([("offset", bases)], [(&names[row], rows), (&names[col], cols)])?;
            for &d in &self.order[2..] {
                cta *= LinearLayout::identity_1d(per_cta[d as usize], "offset", &names[d as usize]);
            }
            cta
        };
        combine_cta_cga_with_shape(&cta, &self.cga, shape)
    }
}

/// The swizzle Gluon's `NVMMASharedLayout.get_default_for` picks for a per-CTA block (contiguous dim last): the
/// widest of 128, 64 and 32 bytes that the contiguous dim's bytes are a multiple of, and none for 1-d blocks or
/// blocks of fewer than 8 rows (a swizzle atom is 8 rows).
pub fn default_swizzle(per_cta: &[u64], element_bitwidth: u32, fp4_padded: bool) -> u32 {
    let contig_bytes =
        per_cta.last().copied().unwrap_or(1) * if fp4_padded { 2 } else { 1 } * element_bitwidth as u64 / 8;
    let outer: u64 = per_cta.iter().rev().skip(1).product();
    if per_cta.len() < 2 || outer < 8 {
        return 0;
    }
    [128, 64, 32].into_iter().find(|&w| contig_bytes >= w && contig_bytes % w == 0).unwrap_or(0) as u32
}

impl NvmmaSharedLayout {
    /// `get_default_for(block_shape, dtype)` on one CTA: the layout TMA copies of `block_shape` use when the
    /// author did not choose one (auto mode's descriptors, and the tensor maps the runtime encodes for them).
    pub fn default_for(block_shape: &[u32], element_bitwidth: u32) -> NvmmaSharedLayout {
        let per_cta: Vec<u64> = block_shape.iter().map(|&d| d as u64).collect();
        NvmmaSharedLayout {
            swizzle_byte_width: default_swizzle(&per_cta, element_bitwidth, false),
            element_bitwidth,
            rank: block_shape.len() as u32,
            transposed: false,
            fp4_padded: false,
            cga: CgaLayout::default(),
        }
    }

    pub fn rank(&self) -> usize {
        self.rank as usize
    }

    /// Checks the swizzle width (0, 32, 64, 128 bytes), the element width (8, 16, 32, 64 bits), the rank, and
    /// that `fp4_padded` goes with a 128-byte swizzle of 8-bit elements.
    pub fn validate(&self) -> Result<()> {
        if ![0, 32, 64, 128].contains(&self.swizzle_byte_width) {
            bail!("NVMMASharedLayout: swizzle_byte_width must be 0, 32, 64 or 128, got {}", self.swizzle_byte_width);
        }
        if ![8, 16, 32, 64].contains(&self.element_bitwidth) {
            bail!("NVMMASharedLayout: element_bitwidth must be 8, 16, 32 or 64, got {}", self.element_bitwidth);
        }
        if self.rank == 0 {
            bail!("NVMMASharedLayout: rank must be at least 1");
        }
        if self.swizzle_byte_width != 0 && self.rank < 2 {
            bail!("NVMMASharedLayout: a {}-byte swizzle needs rank at least 2", self.swizzle_byte_width);
        }
        if self.fp4_padded && (self.swizzle_byte_width != 128 || self.element_bitwidth != 8) {
            bail!("NVMMASharedLayout: fp4_padded requires swizzle_byte_width 128 and element_bitwidth 8");
        }
        self.cga.to_linear(self.rank()).map_err(|e| crate::linear::LayoutError(format!("NVMMASharedLayout: {e}")))?;
        Ok(())
    }

    /// `(vec, per_phase, max_phase)` of the swizzle: 16-byte chunks, XORed with the row index in 32-byte
    /// (4 rows per phase, 2 phases), 64-byte (2, 4) or 128-byte (1, 8) mode.
    pub fn swizzle_params(&self) -> (u32, u32, u32) {
        let vec = 128 / self.element_bitwidth;
        match self.swizzle_byte_width {
            32 => (vec, 4, 2),
            64 => (vec, 2, 4),
            128 => (vec, 1, 8),
            _ => (vec, 1, 1),
        }
    }

    fn contiguous_dim(&self) -> usize {
        if self.transposed { 0 } else { self.rank() - 1 }
    }

    /// The box TMA copies for one CTA's part of the tensor: every dim at most 256, the contiguous dim exactly
    /// one swizzle row (`8 * swizzle_byte_width / element_bitwidth` elements) when swizzling. With
    /// `fp4_padded` the contiguous extent is counted in padded 4-bit elements and, if `packed`, halved back.
    pub fn tma_block_shape(&self, shape_per_cta: &[u32], packed: bool) -> Result<Vec<u32>> {
        let contig = self.contiguous_dim();
        let mut block: Vec<u32> = shape_per_cta.to_vec();
        if self.fp4_padded {
            block[contig] = block[contig].saturating_mul(2);
        }
        for b in &mut block {
            *b = (*b).min(TMA_MAX_BOX);
        }
        if self.swizzle_byte_width != 0 {
            let width = 8 * self.swizzle_byte_width / self.element_bitwidth;
            if block[contig] < width {
                bail!(
                    "NVMMASharedLayout: the contiguous dim {contig} of the per-CTA shape {shape_per_cta:?} holds {} \
                     elements, fewer than one {}-byte swizzle row ({width} elements of {} bits)",
                    block[contig],
                    self.swizzle_byte_width,
                    self.element_bitwidth
                );
            }
            block[contig] = width;
        }
        if self.fp4_padded && packed {
            block[contig] /= 2;
        }
        Ok(block)
    }

    /// The 8-row swizzle atom: one row of `8 * max(16, swizzle) / bitwidth` elements per 8 rows, row `r` XORing
    /// its 16-byte chunk index with `(r / per_phase) % max_phase`. With `fp4_padded`, each 16-byte chunk holds 8
    /// real bytes and 8 padding bytes that map onto the real ones.
    fn core_matrix(&self) -> Result<LinearLayout> {
        let (vec, per_phase, max_phase) = self.swizzle_params();
        let cols = 8 * self.swizzle_byte_width.max(16) / self.element_bitwidth;
        let pack = |c: u32| if self.fp4_padded { c / 16 * 8 + c % 8 } else { c };
        let mut bases: Vec<Vec<u32>> = (0..cols.trailing_zeros()).map(|b| vec![0, pack(1 << b)]).collect();
        for b in 0..3 {
            let r = 1u32 << b;
            bases.push(vec![r, pack(vec * ((r / per_phase) % max_phase))]);
        }
        LinearLayout::from_bases([("offset", bases)], ["dim0", "dim1"])
    }

    /// Swizzle 0: row-major over the TMA box, then boxes repeat. Otherwise the swizzle atom repeats down the
    /// (collapsed) rows of the box, the box is reshaped to the tensor's rank, and boxes repeat along dim0 first.
    /// `transposed` makes dim0 the contiguous dim.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.validate()?;
        let rank = self.rank();
        check_shape(shape, rank, "NVMMASharedLayout")?;
        let per_cta = shape_per_cta(&self.cga, shape)?;
        let tma = self.tma_block_shape(&per_cta, true)?;
        let names = standard_out_dims(rank);
        if self.swizzle_byte_width == 0 {
            let layout = (0..rank)
                .rev()
                .fold(LinearLayout::empty(), |acc, d| acc * LinearLayout::identity_1d(tma[d], "offset", &names[d]));
            let layout = ensure_layout_not_smaller_than(&layout, &labeled_shape(&per_cta))?;
            return combine_cta_cga_with_shape(&layout, &self.cga, shape);
        }
        let rows: u64 = tma[..rank - 1].iter().map(|&t| t as u64).product();
        if rows > 1 << crate::linear::MAX_DIM_LOG2 {
            bail!(
                "NVMMASharedLayout: the TMA box {tma:?} has {rows} rows, more than 2^{}",
                crate::linear::MAX_DIM_LOG2
            );
        }
        let mut collapsed = [rows as u32, tma[rank - 1]];
        if self.transposed {
            collapsed.swap(0, 1);
        }
        let tile = self.core_matrix()?;
        let (tile_rows, tile_cols) = (8, 8 * self.swizzle_byte_width / self.element_bitwidth);
        let packing = if self.fp4_padded { 2 } else { 1 };
        if collapsed[1] * packing < tile_cols || collapsed[0] < tile_rows {
            bail!(
                "NVMMASharedLayout: the TMA box {tma:?} collapses to {collapsed:?}, smaller than one {tile_rows}x{} \
                 swizzle atom",
                tile_cols / packing
            );
        }
        let layout = ensure_layout_not_smaller_than(&tile, &labeled_shape(&collapsed))?;
        let mut box_shape = tma.clone();
        if self.transposed {
            box_shape.rotate_left(1);
        }
        let mut layout = reshape_row_major(&layout, &box_shape)?;
        if self.transposed {
            // Box dim i came from tensor dim i + 1; the contiguous tensor dim 0 went last.
            let order: Vec<usize> = std::iter::once(rank - 1).chain(0..rank - 1).collect();
            layout = permute_coordinates(&layout, &order)?;
        }
        let layout = ensure_layout_not_smaller_than(&layout, &labeled_shape(&per_cta))?;
        combine_cta_cga_with_shape(&layout, &self.cga, shape)
    }
}

/// Reinterprets the out-dims of `layout` (a row-major 2-d or N-d index, last dim fastest) as a row-major
/// tensor of `shape`, with out-dims `dim0..` in order.
fn reshape_row_major(layout: &LinearLayout, shape: &[u32]) -> Result<LinearLayout> {
    let mut src: Vec<Dim> = layout.out_dim_names();
    src.reverse();
    let src_refs: Vec<&str> = src.iter().map(Dim::as_str).collect();
    let names = standard_out_dims(shape.len());
    let new_outs: Vec<(&str, u32)> = names.iter().map(Dim::as_str).zip(shape.iter().copied()).rev().collect();
    let name_refs: Vec<&str> = names.iter().map(Dim::as_str).collect();
    layout.transpose_outs(&src_refs)?.reshape_outs(&new_outs)?.transpose_outs(&name_refs)
}

/// The layout whose out coordinate `i` is `layout`'s out coordinate `order[i]` (out-dims named `dim0..`).
fn permute_coordinates(layout: &LinearLayout, order: &[usize]) -> Result<LinearLayout> {
    let bases = layout
        .bases_vec()
        .into_iter()
        .map(|(name, bases)| (name, bases.into_iter().map(|b| order.iter().map(|&i| b[i]).collect()).collect()))
        .collect::<Vec<(Dim, Vec<Vec<u32>>)>>();
    LinearLayout::from_bases(bases, standard_out_dims(order.len()))
}
