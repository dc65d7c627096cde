//! `tcgen05_mma` and `tcgen05_commit`: one thread issues `tcgen05.mma.cta_group::1.kind::<kind>` per instruction
//! tile and K step of 32 bytes (a CTA pair's MMA, `cta_group::2`: one thread of the pair's even CTA, over each
//! CTA's rows of A and D and half of B's columns, the instruction's M the pair's; its commits reach both CTAs) (the kind of the operand and accumulator types, [`Tcgen05Kind`]: f16 k16, tf32 k8,
//! f8f6f4 and i8 k32), with sm_100 shared-memory descriptors (wgmma's derived fields, version bit 46) and the
//! kind's instruction descriptor ([`Tcgen05Kind::idesc`]).
//!
//! An `M x N` product is a grid of instruction tiles `[block M, block N]` of the accumulator's
//! `TensorMemoryLayout` ([`tessel_tile::tmem_types::instr_shape`]). The hardware's data path places the rows of
//! one tile's D (and of A read from tensor memory): M 128, row i in lane i; M 64, rows `16 q..16 q + 15` in
//! lanes `32 q..32 q + 15` (ISA "Layout F"). Columns follow on from the tile's first column. Every tile's
//! placement is checked against the buffers' layouts, so a layout the instruction cannot use is an error naming
//! it, not wrong code.

use std::collections::HashMap;

use tessel_layouts::LinearLayout;
use tessel_tile::ir::OpData;
use tessel_tile::tcgen05_kind::Tcgen05Kind;

use super::super::Lower;
use super::super::wgmma_desc::{self, MatrixDesc, Offsets, Operand};
use super::thread_sync;
use crate::CompileError;
use crate::ptx::{Reg, RegClass, instr, mem, vector};

/// The high word of an sm_100 shared-memory descriptor: SBO >> 4 (bits 32-45), the fixed version 1 (bit 46), the
/// swizzle mode (bits 61-63: 128B 2, 64B 4, 32B 6), which are sm_90's codes one bit up, so `hi_word` carries them.
pub fn desc_hi(d: &MatrixDesc) -> u32 {
    d.hi_word() | (1 << 14)
}

/// The 64-bit descriptor of the tile at byte offset `byte_off` of the buffer at `base`.
pub(super) fn encode(l: &mut Lower, base: Reg, byte_off: u32, d: &MatrixDesc) -> Reg {
    let (lo, hi, r) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32), l.b.reg(RegClass::B64));
    l.b.op("add.u32", lo, (base, byte_off));
    l.b.op("bfe.u32", lo, (lo, 4, 14));
    l.b.op("or.b32", lo, (lo, d.lbo_field()));
    l.b.op("mov.b32", hi, desc_hi(d));
    l.b.op("mov.b64", r, vector(&[lo, hi]));
    r
}

/// The tensor-memory lane of row `i` of an `m`-row instruction tile (the data path layout).
pub fn lane_of(m: u32, i: u32) -> u32 {
    if m == 64 { 32 * (i / 16) + i % 16 } else { i }
}

/// Where a tensor-memory buffer holds each element: (lane, column, bit shift) of its first placement.
struct Placement {
    at: HashMap<(u32, u32), (u32, u32, u32)>,
}

impl Placement {
    fn new(tmem: &LinearLayout, bits: u32) -> Placement {
        let (rows, slots) = (tmem.in_dim_size("row"), tmem.in_dim_size("col"));
        let mut at = HashMap::new();
        for slot in 0..slots {
            for row in 0..rows {
                let c = tmem.apply(&[row, slot]);
                at.entry((c[0], c[1])).or_insert((row, slot * bits / 32, slot * bits % 32));
            }
        }
        Placement { at }
    }

    /// The first column of the `rows x cols` tile at `origin` when the tile sits in the data path layout of an
    /// `m`-row instruction with `per_col` elements packed per column; else why not.
    fn tile(&self, origin: [u32; 2], m: u32, cols: u32, per_col: u32, what: &str) -> Result<u32, CompileError> {
        let get = |i: u32, j: u32| self.at.get(&(origin[0] + i, origin[1] + j)).copied();
        let Some((_, c0, _)) = get(0, 0) else {
            return Err(CompileError::new(format!("{what}: element {origin:?} is not in its buffer")));
        };
        let bits = 32 / per_col;
        for i in 0..m {
            for j in 0..cols {
                let want = (lane_of(m, i), c0 + j / per_col, (j % per_col) * bits);
                if get(i, j) != Some(want) {
                    return Err(CompileError::new(format!(
                        "{what}: the tile at {origin:?} is not in the data path layout of an M = {m} tcgen05.mma: \
                         element ({}, {}) sits at {:?} (lane, column, bit), the instruction reads it at {want:?}",
                        origin[0] + i,
                        origin[1] + j,
                        get(i, j)
                    )));
                }
            }
        }
        Ok(c0)
    }
}

/// `tcgen05_mma a, b, acc, use_acc, pred, (bar, bar_pred)...`.
pub(crate) fn mma(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let f = l.f;
    let ins = &data.operands;
    let (a, b, acc) = (ins[0], ins[1], ins[2]);
    let (a_shape, elem, a_layout) = f.ty(a).memdesc().expect("verified");
    let (_, b_elem, b_layout) = f.ty(b).memdesc().expect("verified");
    let (c_shape, c_elem, c_layout) = f.ty(acc).memdesc().expect("verified");
    let (_, _, c_spec) = tessel_tile::tmem_types::tmem_parts(f.ty(acc)).map_err(CompileError::new)?;
    let kind = Tcgen05Kind::of(elem, b_elem, c_elem).map_err(CompileError::new)?;
    let (m, n, k) = (c_shape[0], c_shape[1], a_shape[1]);
    let [im, inn] = tessel_tile::tmem_types::instr_shape(c_spec, m, n);
    // A CTA pair's MMA (`cta_group::2`, the accumulator `two_ctas`): each CTA holds its rows of A and D and half
    // of B's columns (`tessel_tile::cluster`); the instruction's M is the pair's, its N the accumulator's.
    let pair = l.pairs;
    let b_cols = if pair { inn / 2 } else { inn };
    let k_step = kind.k_step(elem);
    let eb = elem.bits() / 8;
    let steps = k / k_step;
    // The instruction tiles: (row origin, column origin, D's first column).
    let d_place = Placement::new(&c_layout.linear, 32);
    let mut tiles = Vec::new();
    for mi in 0..m / im {
        for ni in 0..n / inn {
            let col = d_place.tile([mi * im, ni * inn], im, inn, 1, "the accumulator")?;
            tiles.push((mi * im, ni * inn, col));
        }
    }
    let a_origins: Vec<(u32, u32)> =
        (0..m / im).flat_map(|mi| (0..steps).map(move |s| (mi * im, s * k_step))).collect();
    let b_origins: Vec<(u32, u32)> =
        (0..n / inn).flat_map(|ni| (0..steps).map(move |s| (ni * b_cols, s * k_step))).collect();
    // A in tensor memory: each CTA's rows in its own (a pair's A is localized like its accumulator).
    let a_tmem = f.ty(a).is_tmem();

    let (a_desc, a_cols) = if a_tmem {
        // K packed 32 / bits elements per column.
        let place = Placement::new(&a_layout.linear, elem.bits());
        let mut cols = HashMap::new();
        for &(r0, kk) in &a_origins {
            cols.insert((r0, kk), place.tile([r0, kk], im, k_step, 32 / elem.bits(), "operand A in tensor memory")?);
        }
        (None, cols)
    } else {
        let off = Offsets::new(&a_layout.linear)?;
        let d = wgmma_desc::derive(&off, Operand::A, eb, im, k_step, &a_origins)?;
        (Some((off, d)), HashMap::new())
    };
    let b_off = Offsets::new(&b_layout.linear)?;
    let b_d = wgmma_desc::derive(&b_off, Operand::B, eb, b_cols, k_step, &b_origins)?;
    let a_mn_major = a_desc.as_ref().is_some_and(|x| x.1.mn_major);
    if !kind.mn_major_ok() && (a_mn_major || b_d.mn_major) {
        return Err(CompileError::new(format!(
            "tcgen05_mma kind::{}: operand {} is MN-major in shared memory; this kind is read K-major only",
            kind.name(),
            if a_mn_major { "A" } else { "B" }
        )));
    }
    let id = kind.idesc(elem, b_elem, if pair { 2 * im } else { im }, inn, a_mn_major, b_d.mn_major);
    // Every warp's tensor-memory stores and loads are done before the one thread issues.
    thread_sync(l);
    let issuer = super::issuer(l, Some(ins[4]))?;
    l.b.comment(format!(
        "tcgen05_mma: {} tile(s) x {steps} x tcgen05.mma.{}kind::{} m{}n{inn}k{k_step} (A {}, B {}), idesc {id:#010x}",
        tiles.len(),
        if pair { "cta_group::2." } else { "" },
        kind.name(),
        if pair { 2 * im } else { im },
        match &a_desc {
            None => "in tensor memory",
            Some((_, d)) if d.mn_major => "MN-major",
            _ => "K-major",
        },
        if b_d.mn_major { "MN-major" } else { "K-major" }
    ));
    let (a_base, b_base, d_base) = (l.get(a)?[0], l.get(b)?[0], l.get(acc)?[0]);
    let use_acc = l.get(ins[3])?[0];
    let idesc_r = l.b.reg(RegClass::B32);
    l.b.op("mov.b32", idesc_r, id);
    let always = l.b.reg(RegClass::Pred);
    l.b.op("setp.eq.u32", always, (l.tid, l.tid));
    let opcode = format!("tcgen05.mma.{}.kind::{}", super::group(l), kind.name());
    for &(r0, c0, d_col) in &tiles {
        let d_addr = l.b.reg(RegClass::B32);
        l.b.op("add.u32", d_addr, (d_base, d_col));
        for s in 0..steps {
            let kk = s * k_step;
            let a_operand = match &a_desc {
                Some((off, d)) => crate::ptx::Operand::Reg(encode(l, a_base, off.of([r0, kk]) * eb, d)),
                None => {
                    let r = l.b.reg(RegClass::B32);
                    l.b.op("add.u32", r, (a_base, a_cols[&(r0, kk)]));
                    mem(r)
                }
            };
            let bd = encode(l, b_base, b_off.of([kk, c0 / inn * b_cols]) * eb, &b_d);
            let enable = if s == 0 { use_acc } else { always };
            l.b.emit(instr(opcode.clone()).guard(issuer).srcs((mem(d_addr), a_operand, bd, idesc_r, enable)));
        }
    }
    for pair in ins[5..].chunks(2) {
        let (bar, p) = (l.get(pair[0])?[0], l.get(pair[1])?[0]);
        let q = l.b.reg(RegClass::Pred);
        l.b.op("and.pred", q, (issuer, p));
        commit(l, bar, q);
    }
    Ok(())
}

/// A commit of the MMAs issued so far to the barrier at `bar`, by the thread `p` holds. A CTA pair's (issued by its
/// even CTA) arrives on the barrier at that offset in both CTAs of the pair, as Gluon's default commit set is in
/// `cta_group::2` mode (`tessel_tile::cluster::commit_ctas`).
pub(super) fn commit(l: &mut Lower, bar: Reg, p: Reg) {
    commit_to(l, bar, p, if l.pairs { 0b11 } else { 0 });
}

/// A commit to the barrier at `bar` in each CTA `issuer ^ d` for the offsets `d` of `offsets` (a mask; 0: the
/// issuer's own barrier alone, as a plain commit), by the thread `p` holds.
fn commit_to(l: &mut Lower, bar: Reg, p: Reg, offsets: u16) {
    let g = super::group(l);
    if offsets == 0 {
        let op = format!("tcgen05.commit.{g}.mbarrier::arrive::one.shared::cluster.b64");
        l.b.emit(instr(op).guard(p).srcs(mem(bar)));
        return;
    }
    let rank = l.cta_rank();
    let (m32, mask) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B16));
    l.b.op("mov.b32", m32, 0u32);
    for d in (0..16u32).filter(|d| offsets >> d & 1 == 1) {
        let (to, bit) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
        l.b.op("xor.b32", to, (rank, d));
        l.b.op("shl.b32", bit, (1u32, to));
        l.b.op("or.b32", m32, (m32, bit));
    }
    l.b.op("cvt.u16.u32", mask, m32);
    let op = format!("tcgen05.commit.{g}.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64");
    l.b.emit(instr(op).guard(p).srcs((mem(bar), mask)));
}

/// `tcgen05_commit bar [, pred] {multicast}`: from the thread that issues the MMAs (a pair's: its even CTA's), to
/// the CTAs the multicast set names (`tessel_tile::ops::Op::Tcgen05Commit`; 0: the default, the issuer and in
/// `cta_group::2` mode its pair).
pub(crate) fn commit_op(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let tessel_tile::ops::Op::Tcgen05Commit { multicast } = data.op else { unreachable!("a tcgen05_commit") };
    let bar = l.get(data.operands[0])?[0];
    let p = super::issuer(l, data.operands.get(1).copied())?;
    let offsets = match (multicast, l.pairs) {
        (0, true) => 0b11,
        (m, _) => m,
    };
    commit_to(l, bar, p, offsets);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessel_tile::types::ScalarType;

    /// `kind::f16`'s descriptor with an f32 accumulator: D format F32 (bits 4-5 = 1), A and B formats (bits 7-9,
    /// 10-12: f16 0, bf16 1), A and B major (bits 15, 16: 1 = MN-major), N >> 3 (bits 17-22), M >> 4 (24-28).
    fn idesc(elem: ScalarType, m: u32, n: u32, a_mn_major: bool, b_mn_major: bool) -> u32 {
        Tcgen05Kind::F16.idesc(elem, elem, m, n, a_mn_major, b_mn_major)
    }

    #[test]
    fn instruction_descriptors_are_the_documented_words() {
        // f16 x f16 -> f32, M 128, N 128, both K-major; bf16 M 128 N 64.
        assert_eq!(idesc(ScalarType::F16, 128, 128, false, false), 0x0820_0010);
        assert_eq!(idesc(ScalarType::BF16, 128, 64, false, false), 0x0810_0490);
        assert_eq!(idesc(ScalarType::BF16, 128, 256, false, false), 0x0840_0490);
        assert_eq!(idesc(ScalarType::F16, 128, 64, false, true), 0x0811_0010);
    }

    #[test]
    fn an_sm100_descriptor_is_the_sm90_fields_with_version_1() {
        // K-major, 128-byte swizzle, LBO 16, SBO 1024: `0x4000404000010000 | start >> 4`.
        let d = MatrixDesc { swizzle: 128, mn_major: false, lbo: 16, sbo: 1024 };
        let word = ((desc_hi(&d) as u64) << 32) | d.lbo_field() as u64 | (0x400 >> 4);
        assert_eq!(word, 0x4000_4040_0001_0040);
    }

    #[test]
    fn m64_descriptors_and_lanes_follow_the_data_path() {
        // f16 -> f32, M 64 (bits 24-28 = 4), N 256 (bits 17-22 = 32): `0x04400010`; M 64 N 8: `0x04020010`.
        assert_eq!(idesc(ScalarType::F16, 64, 256, false, false), 0x0440_0010);
        assert_eq!(idesc(ScalarType::F16, 64, 8, false, false), 0x0402_0010);
        assert_eq!((0..64).step_by(15).map(|i| lane_of(64, i)).collect::<Vec<_>>(), [0, 15, 46, 77, 108]);
        assert_eq!(lane_of(128, 77), 77);
    }
}
