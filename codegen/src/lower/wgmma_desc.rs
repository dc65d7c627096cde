//! `wgmma` shared-memory matrix descriptors, derived from the buffer's shared layout and checked against it.
//!
//! A descriptor (PTX ISA, "matrix descriptor"; reference/ptx.md §5.2) tells the tensor cores where the rows and
//! K columns of one instruction's operand tile sit: a start address, a leading-dimension byte offset (LBO), a
//! stride-dimension byte offset (SBO) and a swizzle mode. [`Operand`] models the address the hardware computes
//! for element (row, k) of the tile from those fields ([`MatrixDesc::address`]). [`derive`] reads the fields
//! off the buffer's linear layout (the offsets of a few elements) and then checks every element of every tile
//! the kernel will issue: the hardware address must be the layout's offset. A layout the descriptor cannot
//! express is an error naming the first element that differs, never wrong code.

use tessel_layouts::LinearLayout;

use crate::CompileError;

/// Which operand, and so which tensor dims are the tile's rows (M for A, N for B) and K.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// `A[M, K]`: rows along dim 0, K along dim 1.
    A,
    /// `B[K, N]`: rows (N) along dim 1, K along dim 0.
    B,
}

impl Operand {
    /// The tensor coordinates of (row, k).
    fn coords(self, row: u32, k: u32) -> [u32; 2] {
        match self {
            Operand::A => [row, k],
            Operand::B => [k, row],
        }
    }
}

/// The fields of a descriptor, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixDesc {
    /// Swizzle span: 128, 64 or 32 bytes.
    pub swizzle: u32,
    /// K contiguous (`false`) or the rows contiguous (`true`, "transposed"; 16-bit types only).
    pub mn_major: bool,
    pub lbo: u32,
    pub sbo: u32,
}

impl MatrixDesc {
    /// The byte address the hardware reads for element (row, k) of a tile whose descriptor starts at `start`
    /// (relative to a base aligned to the swizzle repeat, 8 × span bytes).
    pub fn address(&self, start: u32, row: u32, k: u32, elem_bytes: u32) -> u32 {
        let w = self.swizzle;
        let linear = if self.mn_major {
            let span = w / elem_bytes;
            start + (row / span) * self.lbo + (row % span) * elem_bytes + (k % 8) * w + (k / 8) * self.sbo
        } else {
            start + (row / 8) * self.sbo + (row % 8) * w + k * elem_bytes
        };
        // The 16-byte chunk index (bits 4..) XOR the row within the 8-row swizzle atom (bits 7..).
        linear ^ (((linear >> 7) & (w / 16 - 1)) << 4)
    }

    /// The high 32 bits of the 64-bit descriptor: SBO and the swizzle mode.
    pub fn hi_word(&self) -> u32 {
        let mode = match self.swizzle {
            128 => 1,
            64 => 2,
            _ => 3,
        };
        (self.sbo >> 4) | (mode << 30)
    }

    /// The LBO field of the low word (the start address goes in bits 0..14).
    pub fn lbo_field(&self) -> u32 {
        (self.lbo >> 4) << 16
    }
}

/// Offsets (elements) of tensor coordinates in a buffer: the inverse of its shared layout.
pub struct Offsets {
    inverse: LinearLayout,
}

impl Offsets {
    pub fn new(shared: &LinearLayout) -> Result<Offsets, CompileError> {
        let inverse = shared
            .invert()
            .map_err(|e| CompileError::new(format!("a wgmma operand's shared layout is not a bijection: {e}")))?;
        Ok(Offsets { inverse })
    }

    pub fn of(&self, c: [u32; 2]) -> u32 {
        self.inverse.apply(&c)[0]
    }
}

/// Derives the descriptor of `op`'s tiles of `rows` × `k` elements from the buffer layout, and checks it at
/// every tile origin in `origins` ((row, k) of the tile's first element). The buffer's base is aligned to the
/// swizzle repeat (the allocator's 1024 bytes).
pub fn derive(
    offsets: &Offsets,
    op: Operand,
    elem_bytes: u32,
    rows: u32,
    k: u32,
    origins: &[(u32, u32)],
) -> Result<MatrixDesc, CompileError> {
    let at = |row: u32, kk: u32| offsets.of(op.coords(row, kk)) * elem_bytes;
    let mn_major = at(1, 0) == elem_bytes;
    if !mn_major && at(0, 1) != elem_bytes {
        return Err(CompileError::new(format!(
            "a wgmma operand must be contiguous along K or along its rows in shared memory; element (row 1, k 0) \
             is at byte {} and (row 0, k 1) at byte {}",
            at(1, 0),
            at(0, 1)
        )));
    }
    if mn_major && elem_bytes != 2 {
        return Err(CompileError::new("wgmma reads 8- and 32-bit operands K-major only"));
    }
    let mut first_error = None;
    for swizzle in [128u32, 64, 32] {
        let desc = if mn_major {
            let span = swizzle / elem_bytes;
            let lbo = if rows > span { at(span, 0) } else { 16 };
            MatrixDesc { swizzle, mn_major, lbo, sbo: if k > 8 { at(0, 8) } else { 16 } }
        } else {
            MatrixDesc { swizzle, mn_major, lbo: 16, sbo: if rows > 8 { at(8, 0) } else { 16 } }
        };
        match check(&desc, offsets, op, elem_bytes, rows, k, origins) {
            Ok(()) => return Ok(desc),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.expect("three modes were tried"))
}

fn check(
    desc: &MatrixDesc,
    offsets: &Offsets,
    op: Operand,
    elem_bytes: u32,
    rows: u32,
    k: u32,
    origins: &[(u32, u32)],
) -> Result<(), CompileError> {
    let fits = |x: u32| x % 16 == 0 && x < (1 << 18);
    if !fits(desc.lbo) || !fits(desc.sbo) {
        return Err(CompileError::new(format!(
            "wgmma descriptor offsets must be multiples of 16 below 256 KiB, got LBO {} and SBO {}",
            desc.lbo, desc.sbo
        )));
    }
    for &(r0, k0) in origins {
        let start = offsets.of(op.coords(r0, k0)) * elem_bytes;
        for row in 0..rows {
            for kk in 0..k {
                let want = offsets.of(op.coords(r0 + row, k0 + kk)) * elem_bytes;
                let got = desc.address(start, row, kk, elem_bytes);
                if got != want {
                    return Err(CompileError::new(format!(
                        "the shared layout cannot be read by a wgmma descriptor: with a {}-byte swizzle, element \
                         (row {}, k {}) would be read at byte {got} but the layout puts it at byte {want}",
                        desc.swizzle,
                        r0 + row,
                        k0 + kk
                    )));
                }
            }
        }
    }
    Ok(())
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
        assert!(e.to_string().contains("cannot be read by a wgmma descriptor"), "{e}");
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
