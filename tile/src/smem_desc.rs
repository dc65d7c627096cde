//! The tensor cores' shared-memory matrix descriptor (PTX ISA "matrix descriptor"; wgmma on sm_90a, tcgen05.mma
//! and tcgen05.cp on sm_100a), derived from a buffer's shared layout and checked against it: the one model of
//! where the hardware reads an operand tile, which codegen encodes and the tcgen05 rules
//! ([`crate::tcgen05_copy`], [`crate::mma_scaled`]) check layouts with, so that a layout the descriptor cannot
//! express is refused where the kernel names it.
//!
//! A descriptor gives a start address, a leading-dimension byte offset (LBO), a stride-dimension byte offset
//! (SBO) and a swizzle mode. [`MatrixDesc::address`] is the byte the hardware reads for element (row, k) of the
//! tile. [`derive`] reads the fields off the buffer's linear layout (the offsets of a few elements) and then
//! checks every element of every tile the kernel will issue: the hardware address must be the layout's offset.

use tessel_layouts::LinearLayout;

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
    pub fn coords(self, row: u32, k: u32) -> [u32; 2] {
        match self {
            Operand::A => [row, k],
            Operand::B => [k, row],
        }
    }
}

/// The fields of a descriptor, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixDesc {
    /// Swizzle span: 128, 64 or 32 bytes, or 0 for none (the interleaved canonical layout: 8-row by 16-byte
    /// core matrices of 128 contiguous bytes, LBO apart along K and SBO apart along the rows).
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
        if w == 0 {
            // K-major core matrices: row r of a core matrix 16 bytes after row r - 1.
            let kb = k * elem_bytes;
            return start + (row / 8) * self.sbo + (row % 8) * 16 + (kb / 16) * self.lbo + kb % 16;
        }
        let linear = if self.mn_major {
            let span = w / elem_bytes;
            start + (row / span) * self.lbo + (row % span) * elem_bytes + (k % 8) * w + (k / 8) * self.sbo
        } else {
            start + (row / 8) * self.sbo + (row % 8) * w + k * elem_bytes
        };
        // The 16-byte chunk index (bits 4..) XOR the row within the 8-row swizzle atom (bits 7..).
        linear ^ (((linear >> 7) & (w / 16 - 1)) << 4)
    }

    /// The high 32 bits of the 64-bit sm_90 descriptor: SBO and the swizzle mode (bits 62-63: 128B 1, 64B 2,
    /// 32B 3, none 0).
    pub fn hi_word(&self) -> u32 {
        let mode = match self.swizzle {
            128 => 1,
            64 => 2,
            32 => 3,
            _ => 0,
        };
        (self.sbo >> 4) | (mode << 30)
    }

    /// The LBO field of the low word (the start address goes in bits 0..14).
    pub fn lbo_field(&self) -> u32 {
        (self.lbo >> 4) << 16
    }
}

/// Offsets (elements) of tensor coordinates in a buffer: the inverse of its shared layout. A layout that maps
/// several offsets to one element (the padding of an `fp4_padded` NVMMA layout) gives the first of them.
pub struct Offsets {
    inverse: LinearLayout,
}

impl Offsets {
    pub fn new(shared: &LinearLayout) -> Result<Offsets, String> {
        let inverse = match shared.invert() {
            Ok(i) => i,
            Err(_) => shared.pseudo_invert().map_err(|e| {
                format!("a tensor-core operand's shared layout does not hold every element of the tile: {e}")
            })?,
        };
        Ok(Offsets { inverse })
    }

    pub fn of(&self, c: [u32; 2]) -> u32 {
        self.inverse.apply(&c)[0]
    }
}

/// Derives the descriptor of `op`'s tiles of `rows` × `k` elements from the buffer layout, and checks it at
/// every tile origin in `origins` ((row, k) of the tile's first element). The buffer's base is aligned to the
/// swizzle repeat (the allocator's 1024 bytes). `no_swizzle` also tries the interleaved layout without swizzle
/// (tcgen05 reads it; tessel's wgmma lowering does not ask for it).
pub fn derive(
    offsets: &Offsets,
    op: Operand,
    elem_bytes: u32,
    rows: u32,
    k: u32,
    origins: &[(u32, u32)],
    no_swizzle: bool,
) -> Result<MatrixDesc, String> {
    derive_by(&|row, kk| offsets.of(op.coords(row, kk)) * elem_bytes, elem_bytes, rows, k, origins, no_swizzle)
}

/// [`derive`] over any map from (row, k) of the operand to its byte offset in the buffer.
pub fn derive_by(
    at: &dyn Fn(u32, u32) -> u32,
    elem_bytes: u32,
    rows: u32,
    k: u32,
    origins: &[(u32, u32)],
    no_swizzle: bool,
) -> Result<MatrixDesc, String> {
    let (o0, o1) = origins.first().copied().unwrap_or((0, 0));
    let rel = |row: u32, kk: u32| at(o0 + row, o1 + kk).wrapping_sub(at(o0, o1));
    let mn_major = rows > 1 && rel(1, 0) == elem_bytes;
    if !mn_major && k > 1 && rel(0, 1) != elem_bytes {
        return Err(format!(
            "a tensor-core operand must be contiguous along K or along its rows in shared memory; element (row 1, \
             k 0) is at byte {} and (row 0, k 1) at byte {}",
            rel(1, 0),
            rel(0, 1)
        ));
    }
    if mn_major && elem_bytes != 2 {
        return Err("the tensor cores read 8- and 32-bit operands K-major only".into());
    }
    let mut best: Option<(u64, String)> = None;
    let modes: &[u32] = if no_swizzle && !mn_major { &[128, 64, 32, 0] } else { &[128, 64, 32] };
    for &swizzle in modes {
        let desc = if swizzle == 0 {
            let kb = k * elem_bytes;
            let lbo = if kb > 16 { rel(0, 16 / elem_bytes) } else { 16 };
            MatrixDesc { swizzle, mn_major, lbo, sbo: if rows > 8 { rel(8, 0) } else { 128 } }
        } else if mn_major {
            let span = swizzle / elem_bytes;
            let lbo = if rows > span { rel(span, 0) } else { 16 };
            MatrixDesc { swizzle, mn_major, lbo, sbo: if k > 8 { rel(0, 8) } else { 16 } }
        } else {
            MatrixDesc { swizzle, mn_major, lbo: 16, sbo: if rows > 8 { rel(8, 0) } else { 16 } }
        };
        match check(&desc, at, elem_bytes, rows, k, origins) {
            Ok(()) => return Ok(desc),
            // The mode that read the most elements right says best what is wrong (the unswizzled one for an
            // unswizzled layout, rather than the 128-byte swizzle tried first).
            Err((read, e)) => {
                if best.as_ref().is_none_or(|(r, _)| read > *r) {
                    best = Some((read, e));
                }
            }
        }
    }
    Err(best.expect("a mode was tried").1)
}

fn check(
    desc: &MatrixDesc,
    at: &dyn Fn(u32, u32) -> u32,
    elem_bytes: u32,
    rows: u32,
    k: u32,
    origins: &[(u32, u32)],
) -> Result<(), (u64, String)> {
    let fits = |x: u32| x % 16 == 0 && x < (1 << 18);
    let mut read = 0u64;
    if !fits(desc.lbo) || !fits(desc.sbo) {
        return Err((
            read,
            format!(
                "matrix descriptor offsets must be multiples of 16 below 256 KiB, got LBO {} and SBO {}",
                desc.lbo, desc.sbo
            ),
        ));
    }
    for &(r0, k0) in origins {
        let start = at(r0, k0);
        if desc.swizzle == 0 && start % 16 != 0 {
            return Err((
                read,
                format!(
                    "a tile without swizzle must start on 16 bytes, the one at {:?} starts at byte {start}",
                    (r0, k0)
                ),
            ));
        }
        for row in 0..rows {
            for kk in 0..k {
                let want = at(r0 + row, k0 + kk);
                let got = desc.address(start, row, kk, elem_bytes);
                if got != want {
                    let mode = if desc.swizzle == 0 { "no".to_string() } else { format!("a {}-byte", desc.swizzle) };
                    return Err((
                        read,
                        format!(
                            "the shared layout cannot be read through a matrix descriptor: with {mode} swizzle, \
                             element (row {}, k {}) would be read at byte {got} but the layout puts it at byte {want}",
                            r0 + row,
                            k0 + kk
                        ),
                    ));
                }
                read += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interleaved_layout_steps_16_bytes_per_row_and_sbo_per_core_matrix() {
        // 32 rows of 16 bytes, one after another: SBO 128 (8 rows), one core matrix along K.
        let d = MatrixDesc { swizzle: 0, mn_major: false, lbo: 16, sbo: 128 };
        assert_eq!(d.address(0, 5, 3, 1), 5 * 16 + 3);
        assert_eq!(d.address(512, 17, 15, 1), 512 + 2 * 128 + 16 + 15);
        // Two core matrices along K, 2048 bytes apart.
        let d = MatrixDesc { swizzle: 0, mn_major: false, lbo: 2048, sbo: 128 };
        assert_eq!(d.address(0, 1, 20, 1), 16 + 2048 + 4);
        assert_eq!(d.hi_word(), 128 >> 4);
    }

    #[test]
    fn a_row_major_run_of_16_byte_rows_derives_no_swizzle() {
        let at = |row: u32, k: u32| row * 16 + k;
        let origins = [(0, 0), (32, 0)];
        let d = derive_by(&at, 1, 32, 16, &origins, true).unwrap();
        assert_eq!(d, MatrixDesc { swizzle: 0, mn_major: false, lbo: 16, sbo: 128 });
        // Without the interleaved mode nothing reads it.
        assert!(derive_by(&at, 1, 32, 16, &origins, false).is_err());
    }
}
