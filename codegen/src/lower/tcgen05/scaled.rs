//! `tcgen05_mma_scaled`: one thread issues `tcgen05.mma.cta_group::N.kind::<kind>.block_scale` per instruction
//! tile and K step of the plan `tessel_tile::mma_scaled` derives (kind, descriptors, each tile's accumulator
//! columns and scale addresses), with the block-scaled instruction descriptor [`idesc`]; then one
//! `tcgen05.commit` per barrier. A CTA pair's (`cta_group::2`) is issued by the even CTA with the pair's M, over
//! each CTA's rows of A, of the accumulator and of A's scales, half of B's columns, and B's scales for all of
//! them, which each CTA holds whole (`TensorMemoryScalesLayout(cga_layout=[[0, 0]])`).
//!
//! The block-scaled instruction descriptor (PTX ISA; `reference/ptx.md` §7.6): bits 4-5 `SF_ID` of B, 7-9 A's
//! format, 10-12 B's (kind::mxf8f6f4: E4M3 0, E5M2 1, E2M1 5; kind::mxf4 and mxf4nvf4: E2M1 1), 13/14 negate
//! (0), 15/16 transpose (0: K-major), 17-22 N >> 3, 23 the scales' format (1 UE8M0, 0 UE4M3), 24-28 M >> 4,
//! 29-30 `SF_ID` of A. The scale-vector spelling depends on the PTX ISA version (`.block32`/`.block16` from 8.8,
//! `.scale_vec::1X/2X/4X` before; kind::mxf4nvf4 needs 8.7), [`opcode`].

use std::collections::HashMap;

use tessel_tile::ir::OpData;
use tessel_tile::mma_scaled::{Kind, Plan};
use tessel_tile::ops::{MxFormat, Op};
use tessel_tile::{Func, Type};

use super::super::Lower;
use super::mma::{commit, encode};
use super::thread_sync;
use crate::CompileError;
use crate::ptx::{RegClass, instr, mem};

/// The block-scaled instruction descriptor of one `tcgen05.mma` (see the module's table).
#[allow(clippy::too_many_arguments)]
pub fn idesc(kind: Kind, a: MxFormat, b: MxFormat, scale_e4m3: bool, m: u32, n: u32, a_sf: u32, b_sf: u32) -> u32 {
    let code = |f: MxFormat| match (kind, f) {
        (Kind::Mxf8f6f4, MxFormat::E4m3) => 0,
        (Kind::Mxf8f6f4, MxFormat::E5m2) => 1,
        (Kind::Mxf8f6f4, MxFormat::E2m1) => 5,
        // kind::mxf4 and mxf4nvf4 read e2m1 only.
        _ => 1,
    };
    (b_sf << 4)
        | (code(a) << 7)
        | (code(b) << 10)
        | ((n >> 3) << 17)
        | ((!scale_e4m3 as u32) << 23)
        | ((m >> 4) << 24)
        | (a_sf << 29)
}

/// The opcode of a block-scaled MMA of `kind` with scales per `vec` values, spelt for PTX ISA `isa`: from 8.8
/// `.block_scale.block32` / `.block16`, before it `.block_scale.scale_vec::NX` (N scales per row per
/// instruction: mxf8f6f4 1X, mxf4 2X, mxf4nvf4 2X or 4X).
pub fn opcode(group: &str, kind: Kind, vec: u32, isa: &str) -> String {
    let block_spelling = isa_at_least(isa, 8, 8);
    let scale_vec = match (block_spelling, vec, kind.k_step() / vec) {
        (true, 16, _) => "block16".to_string(),
        (true, _, _) => "block32".to_string(),
        (false, _, n) => format!("scale_vec::{n}X"),
    };
    format!("tcgen05.mma.{group}.kind::{}.block_scale.{scale_vec}", kind.ptx())
}

/// Whether PTX ISA version `isa` ("8.6") is at least `major.minor`.
fn isa_at_least(isa: &str, major: u32, minor: u32) -> bool {
    let mut parts = isa.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

/// The PTX ISA version the kernel's block-scaled MMAs need beyond the target's: kind::mxf4nvf4 is PTX 8.7.
pub fn isa_needed(f: &Func) -> Option<&'static str> {
    f.all_ops().into_iter().find_map(|o| {
        let data = f.op(o);
        let Op::Tcgen05MmaScaled { a_format, b_format } = data.op else { return None };
        let tys: Vec<&Type> = data.operands.iter().map(|&v| f.ty(v)).collect();
        let plan = tessel_tile::mma_scaled::plan(&tys, a_format, b_format).ok()?;
        (plan.kind == Kind::Mxf4Nvf4).then_some("8.7")
    })
}

/// `tcgen05_mma_scaled a, b, acc, a_scale, b_scale, use_acc, pred, (bar, bar_pred)...`.
pub(crate) fn mma_scaled(
    l: &mut Lower,
    data: &OpData,
    a_format: MxFormat,
    b_format: MxFormat,
) -> Result<(), CompileError> {
    let f = l.f;
    let ins = &data.operands;
    let tys: Vec<&Type> = ins.iter().map(|&v| f.ty(v)).collect();
    let plan: Plan = tessel_tile::mma_scaled::plan(&tys, a_format, b_format).map_err(CompileError::new)?;
    // Every warp's tensor-memory stores (the scales) and loads are done before the one thread issues.
    thread_sync(l);
    let issuer = super::issuer(l, Some(ins[6]))?;
    let op = opcode(super::group(l), plan.kind, plan.vec, l.isa);
    let [im, inn] = plan.instr;
    // A pair's MMA (issued by the even CTA over both): the instruction's M is the pair's.
    let m_instr = if l.pairs { 2 * im } else { im };
    l.b.comment(format!(
        "tcgen05_mma_scaled: {}x{} tile(s) x {} x {op} m{m_instr}n{inn} ({} x {}, {} scales per {})",
        plan.a_starts.len(),
        plan.b_starts.len(),
        plan.steps,
        a_format.word(),
        b_format.word(),
        if plan.scale_e4m3 { "ue4m3" } else { "ue8m0" },
        plan.vec
    ));
    let (a_base, b_base, d_base) = (l.get(ins[0])?[0], l.get(ins[1])?[0], l.get(ins[2])?[0]);
    let (sa_base, sb_base) = (l.get(ins[3])?[0], l.get(ins[4])?[0]);
    let use_acc = l.get(ins[5])?[0];
    let always = l.b.reg(RegClass::Pred);
    l.b.op("setp.eq.u32", always, (l.tid, l.tid));
    let mut idescs: HashMap<u32, crate::ptx::Reg> = HashMap::new();
    for (mi, row) in plan.acc_columns.iter().enumerate() {
        for (ni, &col) in row.iter().enumerate() {
            let d_addr = l.b.reg(RegClass::B32);
            l.b.op("add.u32", d_addr, (d_base, col));
            for s in 0..plan.steps as usize {
                let ad = encode(l, a_base, plan.a_starts[mi][s], &plan.a_desc);
                let bd = encode(l, b_base, plan.b_starts[ni][s], &plan.b_desc);
                let ((ca, a_sf), (cb, b_sf)) = (plan.a_scales[mi][s], plan.b_scales[ni][s]);
                let id = idesc(plan.kind, a_format, b_format, plan.scale_e4m3, m_instr, inn, a_sf, b_sf);
                let id_r = *idescs.entry(id).or_insert_with(|| {
                    let r = l.b.reg(RegClass::B32);
                    l.b.op("mov.b32", r, id);
                    r
                });
                let (sa, sb) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
                l.b.op("add.u32", sa, (sa_base, ca));
                l.b.op("add.u32", sb, (sb_base, cb));
                let enable = if s == 0 { use_acc } else { always };
                l.b.emit(instr(op.clone()).guard(issuer).srcs((mem(d_addr), ad, bd, id_r, mem(sa), mem(sb), enable)));
            }
        }
    }
    for pair in ins[7..].chunks(2) {
        let (bar, p) = (l.get(pair[0])?[0], l.get(pair[1])?[0]);
        let q = l.b.reg(RegClass::Pred);
        l.b.op("and.pred", q, (issuer, p));
        commit(l, bar, q);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_scaled_instruction_descriptors_are_the_documented_words() {
        // e4m3 x e4m3 -> f32, M 128, N 256, UE8M0 scales (bit 23), SF_IDs 0: N >> 3 = 32 at bit 17, M >> 4 = 8 at
        // bit 24.
        assert_eq!(idesc(Kind::Mxf8f6f4, MxFormat::E4m3, MxFormat::E4m3, false, 128, 256, 0, 0), 0x08c0_0000);
        // e4m3 x e2m1 (padded) N 128, SF_ID 3 for both: B's at bits 4-5, A's at 29-30; B's format 5 at bit 10.
        assert_eq!(
            idesc(Kind::Mxf8f6f4, MxFormat::E4m3, MxFormat::E2m1, false, 128, 128, 3, 3),
            0x08a0_0000 | (3 << 4) | (5 << 10) | (3 << 29)
        );
        // e5m2 x e5m2, N 64: formats 1 at bits 7 and 10.
        assert_eq!(idesc(Kind::Mxf8f6f4, MxFormat::E5m2, MxFormat::E5m2, false, 128, 64, 0, 0), 0x0890_0480);
        // mxf4 (E2M1 = 1 in both fields) N 128 with SF_ID 2; nvfp4 (UE4M3 scales, bit 23 clear) N 256.
        assert_eq!(
            idesc(Kind::Mxf4, MxFormat::E2m1, MxFormat::E2m1, false, 128, 128, 2, 2),
            0x08a0_0480 | (2 << 4) | (2 << 29)
        );
        assert_eq!(idesc(Kind::Mxf4Nvf4, MxFormat::E2m1, MxFormat::E2m1, true, 128, 256, 0, 0), 0x0840_0480);
    }

    #[test]
    fn the_scale_vector_is_spelt_by_the_ptx_version() {
        let ops = |isa: &str| {
            [(Kind::Mxf8f6f4, 32), (Kind::Mxf4, 32), (Kind::Mxf4Nvf4, 32), (Kind::Mxf4Nvf4, 16)]
                .map(|(k, v)| opcode("cta_group::1", k, v, isa))
        };
        assert_eq!(
            ops("8.7"),
            [
                "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X",
                "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X",
                "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::2X",
                "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X"
            ]
        );
        assert_eq!(
            ops("8.8"),
            [
                "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32",
                "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32",
                "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block32",
                "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16"
            ]
        );
        assert!(isa_at_least("9.0", 8, 8) && !isa_at_least("8.6", 8, 7));
    }
}
