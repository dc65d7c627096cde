//! `tcgen05.cp` and the block-scaled `tcgen05.mma ... .block_scale` for the simulator, written from the PTX ISA
//! independently of tessel-codegen and of tile's plans:
//!
//! - the sm_100 shared-memory descriptor read K-major: with a swizzle (128, 64, 32 bytes) as wgmma's canonical
//!   layouts, or without (the interleaved layout: 8-row by 16-byte core matrices of 128 contiguous bytes, SBO
//!   apart along the rows and LBO apart along K);
//! - `tcgen05.cp.cta_group::1.{128x256b, 128x128b, 32x128b.warpx4}`: rows of 32 or 16 bytes from shared memory
//!   into consecutive 32-bit columns of 128 lanes (or 32 lanes written to each of the four lane quarters);
//! - the block-scaled instruction descriptor (bits 4-5 SF_ID of B, 7-9 / 10-12 the formats, 15/16 transpose, 17-22
//!   N >> 3, 23 the scales' format, 24-28 M >> 4, 29-30 SF_ID of A), the kinds and scale vectors (mxf8f6f4:
//!   e4m3/e5m2/e2m1, K 32, one e8m0 scale per row; mxf4: e2m1, K 64, two; mxf4nvf4: e2m1, K 64, two (`2X`,
//!   `.block32`) or four (`4X`, `.block16`), e8m0 or e4m3), the operands' values (e2m1 packed two per byte; for
//!   mxf8f6f4 each 16 of them, 8 bytes, then 8 bytes of padding: a 16-byte chunk per 16 values);
//! - the scale factors in tensor memory: row i of A (M 128) at lane i, column `sfa + i / 32`, bytes `SF_ID..`;
//!   row n of B at lane `32 q + n % 32`, column `sfb + n / 32`, the same in every lane quarter q (each quarter of
//!   the data path reads its own lanes: the simulator requires the copies to agree);
//! - products in f32 of the scaled values, accumulated in K order with one f32 rounding per step;
//! - every shared byte they read stored by a thread before a `fence.proxy.async` (per byte: a store elsewhere since,
//!   a layout conversion's scratch, does not concern them).

use std::cell::Cell;

use tessel_tile::eval::value::from_bits;

use super::tmem_race::Reader;
use super::wgmma::address_of;
use super::{Cta, Opnd};

thread_local! {
    /// Whether a `tcgen05.cp` over tensor memory an MMA in flight reads is an error: set per test thread by
    /// [`check_copy_order`].
    static COPY_ORDER: Cell<bool> = const { Cell::new(false) };
}

/// Makes this thread's simulations refuse (`true`) or allow (`false`, the default) a `tcgen05.cp` over tensor
/// memory that an MMA in flight reads, which the ISA does not order after the MMA.
#[allow(dead_code)]
pub fn check_copy_order(strict: bool) {
    COPY_ORDER.with(|c| c.set(strict));
}

/// Whether [`check_copy_order`] is on for this thread.
fn copy_order_checked() -> bool {
    COPY_ORDER.with(Cell::get)
}

/// The shared address of byte `kb` of K-major row `row` of the matrix a descriptor describes.
fn k_major(desc: (u64, u64, u64, u64), row: u64, kb: u64) -> u64 {
    let (start, lbo, sbo, swizzle) = desc;
    if swizzle == 0 {
        start + (row / 8) * sbo + (row % 8) * 16 + (kb / 16) * lbo + kb % 16
    } else {
        address_of(start, lbo, sbo, swizzle, false, row, kb, 1)
    }
}

/// A shared byte the tensor cores read for `reader` (a thread's store to it must have been fenced since).
fn byte(c: &mut Cta, reader: Reader, at: u64) -> Result<u8, String> {
    Ok(super::tcgen05_dense::operand(c, reader, at, 1)? as u8)
}

/// A `tcgen05.cp` shape: rows of `bytes` bytes, into consecutive columns of lanes `0..rows` (or, `warpx4`, of
/// each of the four lane quarters).
#[derive(Clone, Copy)]
pub(super) struct CopyShape {
    rows: u64,
    bytes: u64,
    warpx4: bool,
}

/// The shape of `tcgen05.cp.cta_group::<1|2>.<shape>` (its CTA group is the caller's).
pub(super) fn copy_shape(op: &str) -> Result<CopyShape, String> {
    let parts: Vec<&str> = op.split('.').collect();
    let warpx4 = parts.contains(&"warpx4");
    let (rows, bytes) = if parts.contains(&"128x256b") {
        (128, 32)
    } else if parts.contains(&"128x128b") {
        (128, 16)
    } else if parts.contains(&"32x128b") && warpx4 {
        (32, 16)
    } else {
        return Err(format!("`{op}`: only 128x256b, 128x128b and 32x128b.warpx4 copies are simulated"));
    };
    if parts.iter().any(|p| p.starts_with("b8x16") || p.starts_with("warpx2")) {
        return Err(format!("`{op}`: decompressing and warpx2 copies are not simulated"));
    }
    Ok(CopyShape { rows, bytes, warpx4 })
}

/// `tcgen05.cp.cta_group::1.<shape> [taddr], sdesc` by thread `t` (a pair's, `cta_group::2`, is
/// [`super::tcgen05_pair::copy`]).
pub(super) fn copy(c: &mut Cta, t: usize, op: &str, a: &[Opnd]) -> Result<(), String> {
    if !op.contains("cta_group::1") {
        return Err(format!("`{op}`: a tcgen05.cp names its CTA group"));
    }
    let shape = copy_shape(op)?;
    let taddr = c.addr(t, &a[0])? as u32;
    let desc = c.val(t, &a[1])?;
    copy_into(c, Reader::Thread(t), shape, taddr, desc)
}

/// The copy of `shape` into CTA `c`'s tensor memory at `taddr` from its shared memory through `desc`.
pub(super) fn copy_into(c: &mut Cta, reader: Reader, shape: CopyShape, taddr: u32, desc: u64) -> Result<(), String> {
    let (lane0, col0) = (taddr >> 16, taddr & 0xffff);
    if lane0 != 0 {
        return Err(format!("a tcgen05.cp writes from lane 0 of tensor memory, not lane {lane0}"));
    }
    let desc = super::smem_desc::smem_desc(desc)?;
    for r in 0..shape.rows {
        let mut words = vec![0u32; shape.bytes as usize / 4];
        for b in 0..shape.bytes {
            let x = byte(c, reader, k_major(desc, r, b))?;
            words[(b / 4) as usize] |= (x as u32) << (8 * (b % 4));
        }
        let lanes: Vec<u32> = if shape.warpx4 { (0..4).map(|q| 32 * q + r as u32).collect() } else { vec![r as u32] };
        for lane in lanes {
            for (j, &w) in words.iter().enumerate() {
                let cell = c.tmem.cell(lane, col0 + j as u32)?;
                if copy_order_checked() {
                    c.tmem.flight.check_cell_write(cell, "tcgen05.cp writes")?;
                }
                c.tmem.flight.writes(cell);
                let op = c.tmem.flight.latest();
                c.tmem_core(reader, op, cell, true, "tcgen05.cp")?;
                c.tmem.cells[cell] = w;
            }
        }
    }
    Ok(())
}

/// The e2m1 value of a nibble.
fn e2m1(n: u8) -> f32 {
    let mag = match n & 7 {
        0 => 0.0,
        1 => 0.5,
        2 => 1.0,
        3 => 1.5,
        4 => 2.0,
        5 => 3.0,
        6 => 4.0,
        _ => 6.0,
    };
    if n & 8 != 0 { -mag } else { mag }
}

/// An operand format of a block-scaled MMA, from the kind and the descriptor's 3-bit code.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    E4m3,
    E5m2,
    /// e2m1, packed two per byte, with 8 bytes of padding after each 8 (`kind::mxf8f6f4`) or without.
    E2m1 {
        padded: bool,
    },
}

/// Element `k` of K-major row `row` of an operand read through `desc`.
fn element(c: &mut Cta, t: Reader, desc: (u64, u64, u64, u64), f: Format, row: u64, k: u64) -> Result<f32, String> {
    Ok(match f {
        Format::E4m3 => {
            from_bits(byte(c, t, k_major(desc, row, k))? as u64, tessel_tile::ScalarType::F8E4M3).as_f64() as f32
        }
        Format::E5m2 => {
            from_bits(byte(c, t, k_major(desc, row, k))? as u64, tessel_tile::ScalarType::F8E5M2).as_f64() as f32
        }
        Format::E2m1 { padded } => {
            // Padded: 16 values in the first 8 bytes of each 16-byte chunk; packed: two values per byte.
            let kb = if padded { (k / 16) * 16 + (k % 16) / 2 } else { k / 2 };
            let b = byte(c, t, k_major(desc, row, kb))?;
            e2m1(if k % 2 == 0 { b & 0xf } else { b >> 4 })
        }
    })
}

/// A scale factor byte.
fn scale(x: u8, ue8m0: bool) -> f32 {
    if ue8m0 {
        if x == 255 { f32::NAN } else { 2f32.powi(x as i32 - 127) }
    } else {
        from_bits((x & 0x7f) as u64, tessel_tile::ScalarType::F8E4M3).as_f64() as f32
    }
}

/// A block-scaled `tcgen05.mma`, decoded from its opcode and instruction descriptor.
pub(super) struct Scaled {
    /// K per instruction, values per scale.
    k: u64,
    vec: u64,
    /// The instruction's M (a pair's: both CTAs' rows) and N.
    pub m: u64,
    pub n: u64,
    fa: Format,
    fb: Format,
    a_sf: u64,
    b_sf: u64,
    ue8m0: bool,
}

impl Scaled {
    /// `tcgen05.mma.cta_group::<1|2>.kind::<kind>.block_scale[.<vector>]` with instruction descriptor `idesc`
    /// (`pair`: `cta_group::2`, M 256).
    pub(super) fn decode(op: &str, idesc: u32, pair: bool) -> Result<Scaled, String> {
        let parts: Vec<&str> = op.split('.').collect();
        let kind = parts.iter().find_map(|p| p.strip_prefix("kind::")).ok_or("no .kind")?;
        let vector = parts
            .iter()
            .copied()
            .find(|p| p.starts_with("scale_vec::") || p.starts_with("block1") || p.starts_with("block3"));
        let (k, per_row) = match (kind, vector) {
            ("mxf8f6f4", Some("scale_vec::1X" | "block32")) => (32u64, 1u64),
            ("mxf4", Some("scale_vec::2X" | "block32")) => (64, 2),
            ("mxf4nvf4", Some("scale_vec::2X" | "block32")) => (64, 2),
            ("mxf4nvf4", Some("scale_vec::4X" | "block16")) => (64, 4),
            _ => return Err(format!("`{op}`: kind::{kind} with scale vector {vector:?} is not simulated")),
        };
        let bits = |lo: u32, n: u32| (idesc >> lo) & ((1 << n) - 1);
        if bits(0, 4) != 0 || bits(6, 1) != 0 || bits(13, 2) != 0 || bits(31, 1) != 0 {
            return Err(format!("instruction descriptor {idesc:#010x}: only dense, unnegated MMAs are simulated"));
        }
        if bits(15, 2) != 0 {
            return Err(format!(
                "instruction descriptor {idesc:#010x}: only K-major (untransposed) operands are simulated"
            ));
        }
        let (b_sf, a_sf) = (bits(4, 2) as u64, bits(29, 2) as u64);
        let ue8m0 = bits(23, 1) == 1;
        let (n, m) = ((bits(17, 6) << 3) as u64, (bits(24, 5) << 4) as u64);
        let want_m = if pair { 256 } else { 128 };
        if m != want_m || n == 0 || n % 16 != 0 || n > 256 {
            return Err(format!(
                "instruction descriptor {idesc:#010x}: M {m}, N {n} (simulated: M {want_m}, N 16..256 by 16)"
            ));
        }
        let format = |code: u32| -> Result<Format, String> {
            match (kind, code) {
                ("mxf8f6f4", 0) => Ok(Format::E4m3),
                ("mxf8f6f4", 1) => Ok(Format::E5m2),
                ("mxf8f6f4", 5) => Ok(Format::E2m1 { padded: true }),
                ("mxf4" | "mxf4nvf4", 1) => Ok(Format::E2m1 { padded: false }),
                _ => Err(format!("kind::{kind} operand format {code} is not simulated")),
            }
        };
        let (fa, fb) = (format(bits(7, 3))?, format(bits(10, 3))?);
        if kind != "mxf4nvf4" && !ue8m0 {
            return Err(format!("kind::{kind} takes UE8M0 scales (descriptor bit 23)"));
        }
        if a_sf + per_row > 4 || b_sf + per_row > 4 || (per_row > 1 && (a_sf % per_row != 0 || b_sf % per_row != 0)) {
            return Err(format!("SF_IDs {a_sf} and {b_sf} with {per_row} scales per row"));
        }
        Ok(Scaled { k, vec: k / per_row, m, n, fa, fb, a_sf, b_sf, ue8m0 })
    }

    /// `rows` rows of A through descriptor `desc` of CTA `c`, each value times its scale: row i's at lane i,
    /// column `sfa_col + i / 32` of `c`'s tensor memory (cells marked as read by the op in flight).
    pub(super) fn a(&self, c: &mut Cta, r: Reader, desc: u64, rows: u64, sfa_col: u32) -> Result<Vec<f32>, String> {
        let desc = super::smem_desc::smem_desc(desc)?;
        let k = self.k;
        let mut av = vec![0f32; (rows * k) as usize];
        for i in 0..rows {
            let col = sfa_col + (i / 32) as u32;
            let cell = c.tmem.cell(i as u32, col)?;
            c.tmem.flight.reads_cell(cell);
            let op = c.tmem.flight.latest();
            c.tmem_core(r, op, cell, false, "tcgen05.mma")?;
            for kk in 0..k {
                let sc = scale_byte(c, i as u32, col, self.a_sf + kk / self.vec)?;
                av[(i * k + kk) as usize] = element(c, r, desc, self.fa, i, kk)? * scale(sc, self.ue8m0);
            }
        }
        Ok(av)
    }

    /// `rows` rows (N) of B through descriptor `desc` of CTA `c`, unscaled.
    pub(super) fn b_values(&self, c: &mut Cta, r: Reader, desc: u64, rows: u64) -> Result<Vec<f32>, String> {
        let desc = super::smem_desc::smem_desc(desc)?;
        let mut bv = vec![0f32; (rows * self.k) as usize];
        for j in 0..rows {
            for kk in 0..self.k {
                bv[(j * self.k + kk) as usize] = element(c, r, desc, self.fb, j, kk)?;
            }
        }
        Ok(bv)
    }

    /// The scales of B's N rows in CTA `c`'s tensor memory: row n at lane `32 q + n % 32`, column
    /// `sfb_col + n / 32`, the same in every lane quarter q (each quarter of the data path reads its own copy);
    /// per row and K, the factor (cells marked as read by the op in flight, issued for `r`).
    pub(super) fn b_scales(&self, c: &mut Cta, r: Reader, sfb_col: u32) -> Result<Vec<f32>, String> {
        let mut sv = vec![0f32; (self.n * self.k) as usize];
        for j in 0..self.n {
            let col = sfb_col + (j / 32) as u32;
            for q in 0..4u32 {
                let cell = c.tmem.cell(32 * q + (j % 32) as u32, col)?;
                c.tmem.flight.reads_cell(cell);
                let op = c.tmem.flight.latest();
                c.tmem_core(r, op, cell, false, "tcgen05.mma")?;
            }
            for kk in 0..self.k {
                let s = scale_byte(c, (j % 32) as u32, col, self.b_sf + kk / self.vec)?;
                for q in 1..4u32 {
                    if scale_byte(c, 32 * q + (j % 32) as u32, col, self.b_sf + kk / self.vec)? != s {
                        return Err(format!(
                            "the scale factors of B row {j} differ between lane quarters 0 and {q} (column {col}): \
                             each quarter of the data path reads its own copy"
                        ));
                    }
                }
                sv[(j * self.k + kk) as usize] = scale(s, self.ue8m0);
            }
        }
        Ok(sv)
    }

    /// D (`rows` x N at column `d_col` of `c`'s tensor memory, row i in lane i) `+=` (or `=`, `!accumulate`)
    /// `av` times B (`bv` scaled by `sv`, N rows of K), products in f32 accumulated in K order with one
    /// rounding per step; the cells written by `c`'s tcgen05 op number `op`, issued for `by` (`None`: checked and
    /// recorded at the issue, a pair MMA's in the even CTA).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn accumulate(
        &self,
        c: &mut Cta,
        (op, by): (u32, Option<Reader>),
        d_col: u32,
        rows: u64,
        av: &[f32],
        bv: &[f32],
        sv: &[f32],
        accumulate: bool,
    ) -> Result<(), String> {
        let k = self.k as usize;
        for i in 0..rows as usize {
            for j in 0..self.n as usize {
                let cell = c.tmem.cell(i as u32, d_col + j as u32)?;
                let mut acc = if accumulate { f32::from_bits(c.tmem.cells[cell]) } else { 0.0 };
                for kk in 0..k {
                    acc = av[i * k + kk].mul_add(bv[j * k + kk] * sv[j * k + kk], acc);
                }
                c.tmem.flight.written_by(cell, op);
                if let Some(by) = by {
                    c.tmem_core(by, op, cell, true, "tcgen05.mma")?;
                }
                c.tmem.cells[cell] = acc.to_bits();
            }
        }
        Ok(())
    }
}

/// Byte `b` of tensor-memory cell (lane, column) of `c`.
fn scale_byte(c: &Cta, lane: u32, col: u32, b: u64) -> Result<u8, String> {
    Ok((c.tmem.cells[c.tmem.cell(lane, col)?] >> (8 * b)) as u8)
}

/// The operands of a block-scaled MMA: `[d], adesc, bdesc, idesc, [sfa], [sfb], enable_input_d`; the accumulator
/// and the scales start at lane 0.
pub(super) fn operands(c: &Cta, t: usize, op: &str, a: &[Opnd]) -> Result<(u32, u64, u64, u32, u32, bool), String> {
    if a.len() != 7 {
        return Err(format!("`{op}` takes [d], adesc, bdesc, idesc, [sfa], [sfb], enable_input_d"));
    }
    let d_addr = c.addr(t, &a[0])? as u32;
    if d_addr >> 16 != 0 {
        return Err("the accumulator of a block-scaled MMA starts at lane 0".into());
    }
    let (sfa, sfb) = (c.addr(t, &a[4])? as u32, c.addr(t, &a[5])? as u32);
    if sfa >> 16 != 0 || sfb >> 16 != 0 {
        return Err("the scale factors' tensor-memory addresses start at lane 0".into());
    }
    let enable = c.val(t, &a[6])? != 0;
    Ok((d_addr & 0xffff, c.val(t, &a[1])?, c.val(t, &a[2])?, sfa & 0xffff, sfb & 0xffff, enable))
}

/// `tcgen05.mma.cta_group::1.kind::<kind>.block_scale[.<vector>] [d], adesc, bdesc, idesc, [sfa], [sfb],
/// enable_input_d` by thread `t`.
pub(super) fn mma(c: &mut Cta, t: usize, op: &str, a: &[Opnd]) -> Result<(), String> {
    let (d_col, ad, bd, sfa, sfb, enable) = operands(c, t, op, a)?;
    let s = Scaled::decode(op, c.val(t, &a[3])? as u32, false)?;
    let av = s.a(c, Reader::Thread(t), ad, s.m, sfa)?;
    let bv = s.b_values(c, Reader::Thread(t), bd, s.n)?;
    let sv = s.b_scales(c, Reader::Thread(t), sfb)?;
    let op = c.tmem.flight.latest();
    s.accumulate(c, (op, Some(Reader::Thread(t))), d_col, s.m, &av, &bv, &sv, enable)
}
