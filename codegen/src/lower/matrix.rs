//! 8×8 matrices of 16-bit elements moved between a warp's registers and shared memory in one instruction:
//! `stmatrix` (sm_90+) writes them, `ldmatrix` (sm_75+) reads them, plain or transposed (`.trans`).
//!
//! Both see an access through its offset map `S⁻¹ ∘ D` (register, lane, warp → element offset in the buffer;
//! [`super::local::offsets`]). Each instruction moves up to four matrices; lane `8i + r` supplies the address of
//! row `r` of matrix `i` (a row is 8 elements, 16 contiguous bytes), and register `i` of lane `4r + q` holds
//! elements `2q` and `2q + 1` of row `r` of matrix `i` (plain), or element `r` of rows `2q` and `2q + 1`
//! (`.trans`). So a map qualifies when its bases fall in that pattern:
//!
//! - plain: register bit 0 and lane bits 0–1 step 1, 2 and 4 along a row, lane bits 2–4 pick the row;
//! - transposed: lane bits 2–4 step 1, 2 and 4 along a row, register bit 0 and lane bits 0–1 pick the row;
//!
//! and in both, register bits 1–2 pick the matrix (where the instruction has that many), the further register
//! bits one instruction each, the warp bits its own rows, every one of them a whole row away (a multiple of 8
//! elements, so that rows stay 16-byte aligned whatever the swizzle XORs into the higher bits).

use tessel_layouts::LinearLayout;
use tessel_tile::layout::shared_access::reg_offset;

use super::Lower;
use super::coords::bases;
use super::shared::Addresses;
use crate::ptx::{Operand, Reg, RegClass, vector};

/// How one of a thread's 32-bit words relates to the matrix rows it moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Orientation {
    /// The word's two elements are adjacent in one row.
    Plain,
    /// The word's two elements are in adjacent rows (`.trans`).
    Transposed,
}

/// An access that [`ldmatrix`] or [`stmatrix`] can make: how many matrices one instruction moves (1, 2 or 4), the
/// orientation, and the element offsets, for lane bits 0–4, of the row each lane addresses.
pub(crate) struct Matrices {
    pub(crate) count: u32,
    pub(crate) orientation: Orientation,
    row_lanes: Vec<u32>,
    warp: Vec<u32>,
}

impl Matrices {
    /// Whether `map` (over `n` registers of 16-bit elements) falls in an 8×8 matrix pattern, and which.
    pub(crate) fn of(map: &LinearLayout, n: u32) -> Option<Matrices> {
        let basis = |dim: &str| bases(map, dim).iter().map(|b| b[0]).collect::<Vec<u32>>();
        let (reg, lane, warp) = (basis("register"), basis("lane"), basis("warp"));
        if lane.len() != 5 || reg.is_empty() || n < 2 {
            return None;
        }
        let row = |b: &u32| b % 8 == 0;
        let (orientation, rows) = if reg[0] == 1 && lane[..2] == [2, 4] && lane[2..].iter().all(row) {
            (Orientation::Plain, [lane[2], lane[3], lane[4]])
        } else if lane[2..] == [1, 2, 4] && row(&reg[0]) && lane[..2].iter().all(row) {
            (Orientation::Transposed, [reg[0], lane[0], lane[1]])
        } else {
            return None;
        };
        if !reg[1..].iter().chain(&warp).all(row) {
            return None;
        }
        let count = (n / 2).min(4);
        // Lanes 8–15 and 16–31 address matrices 1 and 2–3; where the instruction has fewer, their addresses are
        // not read.
        let matrix_bit = |i: usize| if (1u32 << i) < count { reg[i + 1] } else { 0 };
        let row_lanes = vec![rows[0], rows[1], rows[2], matrix_bit(0), matrix_bit(1)];
        Some(Matrices { count, orientation, row_lanes, warp })
    }

    /// `.trans` where the instruction transposes.
    fn trans(&self) -> &'static str {
        if self.orientation == Orientation::Transposed { ".trans" } else { "" }
    }

    /// Each instruction's address, for groups of `2 * count` registers in order.
    fn addresses(&self, l: &mut Lower, map: &LinearLayout, n: u32, base: Reg) -> Vec<Operand> {
        let mut addrs = Addresses::new(l, self.row_lanes.clone(), self.warp.clone(), base, 2);
        (0..n).step_by(2 * self.count as usize).map(|r0| addrs.of(l, reg_offset(map, r0))).collect()
    }
}

/// Writes `regs` (16-bit, in `map`'s register order) into the buffer at `base` by `stmatrix`.
pub(crate) fn stmatrix(l: &mut Lower, m: &Matrices, map: &LinearLayout, regs: &[Reg], base: Reg) {
    let addrs = m.addresses(l, map, regs.len() as u32, base);
    for (chunk, addr) in regs.chunks(2 * m.count as usize).zip(addrs) {
        let words: Vec<Reg> = chunk
            .chunks(2)
            .map(|p| {
                let w = l.b.reg(RegClass::B32);
                l.b.op("mov.b32", w, vector(&[p[0], p[1]]));
                w
            })
            .collect();
        let (count, trans) = (m.count, m.trans());
        l.b.effect(format!("stmatrix.sync.aligned.m8n8.x{count}{trans}.shared.b16"), (addr, vector(&words)));
    }
}

/// Reads `n` 16-bit registers (`.b16`, in `map`'s register order) from the buffer at `base` by `ldmatrix`.
pub(crate) fn ldmatrix(l: &mut Lower, m: &Matrices, map: &LinearLayout, n: u32, base: Reg) -> Vec<Reg> {
    let addrs = m.addresses(l, map, n, base);
    let mut out = Vec::with_capacity(n as usize);
    for addr in addrs {
        let words: Vec<Reg> = (0..m.count).map(|_| l.b.reg(RegClass::B32)).collect();
        let (count, trans) = (m.count, m.trans());
        l.b.op(format!("ldmatrix.sync.aligned.m8n8.x{count}{trans}.shared.b16"), vector(&words), addr);
        for w in words {
            let (lo, hi) = (l.b.reg(RegClass::B16), l.b.reg(RegClass::B16));
            l.b.op("mov.b32", vector(&[lo, hi]), w);
            out.extend([lo, hi]);
        }
    }
    out
}
