//! `wgmma` and `tcgen05.mma` shared-memory matrix descriptors: the model is tile's
//! ([`tessel_tile::smem_desc`], which the tcgen05 rules check layouts with too); here its errors become
//! codegen's.

use tessel_layouts::LinearLayout;
pub use tessel_tile::smem_desc::{MatrixDesc, Operand};

use crate::CompileError;

/// Offsets (elements) of tensor coordinates in a buffer ([`tessel_tile::smem_desc::Offsets`]).
pub struct Offsets(tessel_tile::smem_desc::Offsets);

impl Offsets {
    pub fn new(shared: &LinearLayout) -> Result<Offsets, CompileError> {
        tessel_tile::smem_desc::Offsets::new(shared).map(Offsets).map_err(CompileError::new)
    }

    pub fn of(&self, c: [u32; 2]) -> u32 {
        self.0.of(c)
    }
}

/// [`tessel_tile::smem_desc::derive`] over the swizzled canonical layouts.
pub fn derive(
    offsets: &Offsets,
    op: Operand,
    elem_bytes: u32,
    rows: u32,
    k: u32,
    origins: &[(u32, u32)],
) -> Result<MatrixDesc, CompileError> {
    tessel_tile::smem_desc::derive(&offsets.0, op, elem_bytes, rows, k, origins, false).map_err(CompileError::new)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use tessel_layouts::NvmmaSharedLayout;
    use tessel_layouts::standard::CgaLayout;

    use super::*;

    fn nvmma(swizzle: u32, bits: u32, transposed: bool, shape: [u32; 2]) -> LinearLayout {
        let l = NvmmaSharedLayout {
            swizzle_byte_width: swizzle,
            element_bitwidth: bits,
            rank: 2,
            transposed,
            fp4_padded: false,
            cga: CgaLayout::default(),
        };
        l.to_linear(&shape).unwrap()
    }

    /// Every tile origin of an operand of `shape`: rows in steps of `rows`, K in steps of `k`.
    fn origins(op: Operand, shape: [u32; 2], rows: u32, k: u32) -> Vec<(u32, u32)> {
        let (r, kk) = match op {
            Operand::A => (shape[0], shape[1]),
            Operand::B => (shape[1], shape[0]),
        };
        (0..r).step_by(rows as usize).flat_map(|a| (0..kk).step_by(k as usize).map(move |b| (a, b))).collect()
    }

    #[test]
    fn a_128b_swizzled_k_major_tile_has_the_documented_fields() {
        // A 128x64 f16 A tile, 128-byte swizzle: rows 128 bytes apart, 8-row groups 1024 bytes apart (ptx.md).
        let shape = [128, 64];
        let off = Offsets::new(&nvmma(128, 16, false, shape)).unwrap();
        let d = derive(&off, Operand::A, 2, 64, 16, &origins(Operand::A, shape, 64, 16)).unwrap();
        assert_eq!(d, MatrixDesc { swizzle: 128, mn_major: false, lbo: 16, sbo: 1024 });
        assert_eq!(d.hi_word(), (1024 >> 4) | (1 << 30));
    }

    #[test]
    fn an_n_contiguous_b_is_mn_major_with_lbo_between_64_column_blocks() {
        // B 64x128 f16 with N contiguous: 64-element (128-byte) runs of N, boxes of 64 K-rows (8 KiB) apart.
        let shape = [64, 128];
        let off = Offsets::new(&nvmma(128, 16, false, shape)).unwrap();
        let d = derive(&off, Operand::B, 2, 128, 16, &origins(Operand::B, shape, 128, 16)).unwrap();
        assert_eq!(d, MatrixDesc { swizzle: 128, mn_major: true, lbo: 8192, sbo: 1024 });
    }

    #[test]
    fn a_layout_the_hardware_cannot_read_is_refused() {
        // Row-major without swizzle: no swizzle mode addresses it.
        let shape = [64u32, 64];
        let plain = LinearLayout::from_bases(
            [("offset", (0..6).map(|b| vec![0, 1 << b]).chain((0..6).map(|b| vec![1 << b, 0])).collect())],
            ["dim0", "dim1"],
        )
        .unwrap();
        let off = Offsets::new(&plain).unwrap();
        let e = derive(&off, Operand::A, 2, 64, 16, &origins(Operand::A, shape, 64, 16)).unwrap_err();
        assert!(e.to_string().contains("cannot be read through a matrix descriptor"), "{e}");
    }

    proptest! {
        /// For every NVMMA shared layout auto mode or a gluon kernel can give a wgmma operand, the derived
        /// descriptor addresses exactly the elements the layout maps, at every tile of the operand.
        #[test]
        fn descriptors_address_exactly_what_the_layout_maps(
            swizzle in prop::sample::select(vec![32u32, 64, 128]),
            bits in prop::sample::select(vec![8u32, 16, 32]),
            is_b in any::<bool>(),
            mn_major in any::<bool>(),
            rows_log in 6u32..=8,
            k_mult in prop::sample::select(vec![1u32, 2, 4]),
        ) {
            let eb = bits / 8;
            let k_instr = 32 / eb;
            let mn_major = mn_major && bits == 16;
            let op = if is_b { Operand::B } else { Operand::A };
            let rows = if is_b { 1 << (rows_log - 1) } else { 64 };
            let (mn, k) = (1u32 << rows_log, k_instr * k_mult * 2);
            let shape = if is_b { [k, mn] } else { [mn, k] };
            // The contiguous dim: K unless MN-major.
            let contig_dim = match (is_b, mn_major) { (false, false) | (true, true) => 1, _ => 0 };
            prop_assume!(shape[contig_dim] * eb >= swizzle);
            let layout = nvmma(swizzle, bits, contig_dim == 0, shape);
            let off = Offsets::new(&layout).unwrap();
            let d = derive(&off, op, eb, rows, k_instr, &origins(op, shape, rows, k_instr)).unwrap();
            prop_assert_eq!(d.swizzle, swizzle);
            prop_assert_eq!(d.mn_major, mn_major);
        }
    }
}
