//! The dense tcgen05 MMA's arithmetic for the simulator, from the PTX ISA: the kinds `f16`, `tf32`, `f8f6f4`
//! (e4m3, e5m2) and `i8` (s8, u8; s32 D) and their instruction descriptors (M 64 and 128, and a CTA pair's M 256),
//! the data path layout of D, the operands read through sm_100 shared-memory descriptors (swizzled), and the
//! accumulation (each K step rounding once in f32, s32 wrapping). `tcgen05` runs a CTA's MMAs with it,
//! `tcgen05_pair` a CTA pair's.

use tessel_tile::eval::value::from_bits;

use super::Cta;
use super::smem_desc::smem_desc;
use super::tmem_race::Reader;
use super::wgmma::address_of;

/// [`smem_desc`] of a dense MMA's operand, which this simulator reads swizzled only.
fn swizzled_desc(d: u64) -> Result<(u64, u64, u64, u64), String> {
    let desc = smem_desc(d)?;
    if desc.3 == 0 {
        return Err(format!("descriptor {d:#018x}: swizzle mode 0 is not simulated for dense MMAs"));
    }
    Ok(desc)
}

/// A dense MMA's kind (from its opcode) and operand formats (from the instruction descriptor's codes): the
/// operand's bytes, and its value (integers exactly, floats as the tensor cores read them: tf32 the top 19 bits).
#[derive(Clone, Copy)]
enum Format {
    Float(tessel_tile::ScalarType),
    Tf32,
    S8,
    U8,
}

impl Format {
    fn of(kind: &str, code: u32) -> Result<Format, String> {
        use tessel_tile::ScalarType::*;
        Ok(match (kind, code) {
            ("f16", 0) => Format::Float(F16),
            ("f16", 1) => Format::Float(BF16),
            ("tf32", 2) => Format::Tf32,
            ("f8f6f4", 0) => Format::Float(F8E4M3),
            ("f8f6f4", 1) => Format::Float(F8E5M2),
            ("i8", 0) => Format::U8,
            ("i8", 1) => Format::S8,
            (k, other) => return Err(format!("kind::{k} operand format {other} is not simulated")),
        })
    }

    fn bytes(self) -> u64 {
        match self {
            Format::Float(t) => t.bits() as u64 / 8,
            Format::Tf32 => 4,
            Format::S8 | Format::U8 => 1,
        }
    }

    fn value(self, x: u64) -> f64 {
        match self {
            Format::Float(t) => from_bits(x, t).as_f64(),
            Format::Tf32 => f32::from_bits((x as u32) & !0x1FFF) as f64,
            Format::S8 => x as u8 as i8 as f64,
            Format::U8 => x as u8 as f64,
        }
    }
}

/// A dense MMA's shape and operand formats, from its kind (`f16`, `tf32`, `f8f6f4`, `i8`) and its instruction
/// descriptor. `m` is the instruction's M: for a CTA pair (`cta_group::2`) the pair's, each CTA computing half.
pub(super) struct Dense {
    pub kind: String,
    ta: Format,
    tb: Format,
    a_mn: bool,
    b_mn: bool,
    pub m: u32,
    pub n: u32,
    /// Elements of K one instruction takes (32 bytes of them).
    k_elems: u64,
}

impl Dense {
    /// Decodes `idesc` of `kind`; `pair`: the instruction is `cta_group::2`.
    pub(super) fn decode(kind: &str, idesc: u32, pair: bool) -> Result<Dense, String> {
        let bits = |lo: u32, n: u32| (idesc >> lo) & ((1 << n) - 1);
        let d_format = if kind == "i8" { 2 } else { 1 };
        if bits(0, 4) != 0 || bits(4, 2) != d_format || bits(13, 2) != 0 || bits(23, 1) != 0 || bits(29, 3) != 0 {
            return Err(format!(
                "instruction descriptor {idesc:#010x} of kind::{kind}: only dense, {} D, no negation or saturation \
                 is simulated",
                if kind == "i8" { "s32" } else { "f32" }
            ));
        }
        let (ta, tb) = (Format::of(kind, bits(7, 3))?, Format::of(kind, bits(10, 3))?);
        let (a_mn, b_mn) = (bits(15, 1) == 1, bits(16, 1) == 1);
        if kind != "f16" && (a_mn || b_mn) {
            return Err(format!("kind::{kind} with an MN-major operand is not simulated"));
        }
        let (n, m) = (bits(17, 6) << 3, bits(24, 5) << 4);
        if pair {
            // The pair's M: 256 is 128 rows in each CTA, lane = row (M 128, 64 rows each, is not simulated).
            if m != 256 || n == 0 || n % 16 != 0 || n > 256 {
                return Err(format!(
                    "instruction descriptor {idesc:#010x}: M {m}, N {n} (simulated for a CTA pair: M 256 with N \
                     16..256 by 16)"
                ));
            }
        } else {
            let n_step = if m == 64 && kind != "i8" { 8 } else { 16 };
            if !(m == 64 || m == 128) || n == 0 || n % n_step != 0 || n > 256 {
                return Err(format!(
                    "instruction descriptor {idesc:#010x}: M {m}, N {n} (simulated: M 128 with N 16..256 by 16, M 64 \
                     with N 8..256 by 8; kind::i8 N by 16)"
                ));
            }
        }
        let (ea, eb) = (ta.bytes(), tb.bytes());
        if ea != eb {
            return Err(format!("kind::{kind}: operands of {ea} and {eb} bytes"));
        }
        Ok(Dense { kind: kind.to_string(), ta, tb, a_mn, b_mn, m, n, k_elems: 32 / ea })
    }

    /// The tensor-memory lane of D's row `row` of this CTA's rows. The data path layouts (ISA): M 128 (layout D)
    /// and a pair's M 256, row i in lane i; M 64 (layout F), rows 16q..16q+15 in the first 16 lanes of lane
    /// quarter q.
    fn lane_of(&self, row: u32) -> u32 {
        if self.m == 64 { (row / 16) * 32 + row % 16 } else { row }
    }

    /// Operand bytes per element.
    fn bytes(&self) -> u64 {
        self.ta.bytes()
    }

    /// Elements of K one instruction takes.
    pub(super) fn k_elems(&self) -> usize {
        self.k_elems as usize
    }
}

/// One operand element of `e` bytes at shared address `at` of CTA `c`, read by the tensor cores for `reader`.
pub(super) fn operand(c: &mut Cta, reader: Reader, at: u64, e: u64) -> Result<u64, String> {
    for i in 0..e {
        c.async_read(at + i, "tcgen05.mma")?;
        c.tmem.flight.reads(at + i);
    }
    let b = match reader {
        Reader::Thread(t) => c.smem(t, at, e as usize, None)?.to_vec(),
        Reader::Peer(_) => {
            let (a, n) = (at as usize, e as usize);
            let bytes =
                c.smem.get(a..a + n).ok_or_else(|| format!("a pair MMA reads shared bytes {a}.. past the end"))?;
            // Its copies not issued yet (the issuing thread did not wait for them): bytes nothing has written.
            if let Some(i) = (a..a + n).find(|&i| !c.shadow[i].written()) {
                return Err(format!(
                    "a pair MMA reads shared byte {i}, which nothing has written (no copy landed there)"
                ));
            }
            bytes.to_vec()
        }
    };
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(&b);
    Ok(u64::from_le_bytes(w))
}

/// A's `rows` x K from CTA `c`'s tensor memory at `addr` (kind::f16, K-major: row i in the data path's lane for
/// it, K packed two per 32-bit column), row-major; the cells are marked as read by the op in flight, issued for
/// `by` (each read ordered after the threads' stores there: `tmem_race`).
pub(super) fn a_from_tmem(c: &mut Cta, by: Reader, s: &Dense, addr: u32, rows: u32) -> Result<Vec<f64>, String> {
    if s.a_mn || s.kind != "f16" {
        return Err("A from tensor memory is K-major, of kind::f16".into());
    }
    let (lane0, col0) = (addr >> 16, addr & 0xffff);
    let mut av = vec![0f64; (rows as u64 * s.k_elems) as usize];
    for row in 0..rows {
        for k in 0..s.k_elems as u32 {
            let at = c.tmem.cell(lane0 + s.lane_of(row), col0 + k / 2)?;
            let op = c.tmem.flight.latest();
            if let Some(me) = c.tmem.flight.kind_of(op) {
                c.tmem.flight.check_mma_order(op, me, at, false)?;
            }
            c.tmem.flight.reads_cell(at);
            c.tmem_core(by, op, at, false, "tcgen05.mma")?;
            let cell = c.tmem.cells[at];
            av[(row as u64 * s.k_elems + k as u64) as usize] = s.ta.value(((cell >> (16 * (k % 2))) & 0xffff) as u64);
        }
    }
    Ok(av)
}

/// A's `rows` x K from the shared-memory descriptor `desc` of CTA `c`, row-major.
pub(super) fn a_from_smem(c: &mut Cta, reader: Reader, s: &Dense, desc: u64, rows: u32) -> Result<Vec<f64>, String> {
    let (start, lbo, sbo, sw) = swizzled_desc(desc)?;
    let mut av = vec![0f64; (rows as u64 * s.k_elems) as usize];
    for row in 0..rows as u64 {
        for k in 0..s.k_elems {
            let at = address_of(start, lbo, sbo, sw, s.a_mn, row, k, s.bytes());
            av[(row * s.k_elems + k) as usize] = s.ta.value(operand(c, reader, at, s.bytes())?);
        }
    }
    Ok(av)
}

/// B's K x `cols` from the shared-memory descriptor `desc` of CTA `c`: `out[k * stride + first + col]`.
pub(super) fn b_from_smem(
    c: &mut Cta,
    reader: Reader,
    s: &Dense,
    desc: u64,
    cols: u32,
    (out, stride, first): (&mut [f64], usize, usize),
) -> Result<(), String> {
    let (start, lbo, sbo, sw) = swizzled_desc(desc)?;
    for col in 0..cols as u64 {
        for k in 0..s.k_elems {
            let at = address_of(start, lbo, sbo, sw, s.b_mn, col, k, s.bytes());
            out[k as usize * stride + first + col as usize] = s.tb.value(operand(c, reader, at, s.bytes())?);
        }
    }
    Ok(())
}

/// D += A B (or D = A B without `accumulate`) into CTA `c`'s tensor memory from column `d_col`: `rows` rows of
/// A (`av`, row-major) against B's `n` columns (`bv`, K-major), each step rounding once in f32 (s32 wrapping for
/// kind::i8). The cells are marked as written by op `op`, issued for `by` (`None`: its writes were checked and
/// recorded at the issue, a pair MMA's in the even CTA).
pub(super) fn accumulate(
    c: &mut Cta,
    (s, op, by): (&Dense, u32, Option<Reader>),
    d_col: u32,
    rows: u32,
    (av, bv): (&[f64], &[f64]),
    accumulate: bool,
) -> Result<(), String> {
    let (k_elems, n) = (s.k_elems as usize, s.n);
    for row in 0..rows {
        for col in 0..n {
            let cell = c.tmem.cell(s.lane_of(row), d_col + col)?;
            if let Some(me) = c.tmem.flight.kind_of(op) {
                c.tmem.flight.check_mma_order(op, me, cell, true)?;
            }
            c.tmem.flight.written_by(cell, op);
            if let Some(by) = by {
                c.tmem_core(by, op, cell, true, "tcgen05.mma")?;
            }
            let (x, y) = (&av[row as usize * k_elems..], |k: usize| bv[k * n as usize + col as usize]);
            c.tmem.cells[cell] = if s.kind == "i8" {
                let mut acc = if accumulate { c.tmem.cells[cell] as i32 } else { 0 };
                for (k, &xv) in x[..k_elems].iter().enumerate() {
                    acc = acc.wrapping_add(xv as i32 * y(k) as i32);
                }
                acc as u32
            } else {
                // Products of these formats are exact in f32; each step rounds once.
                let mut acc = if accumulate { f32::from_bits(c.tmem.cells[cell]) } else { 0.0 };
                for (k, &xv) in x[..k_elems].iter().enumerate() {
                    acc = (xv as f32).mul_add(y(k) as f32, acc);
                }
                acc.to_bits()
            };
        }
    }
    Ok(())
}
