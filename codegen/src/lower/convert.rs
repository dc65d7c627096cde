//! `convert_layout`, executing the plan of `tessel_layouts::plan_conversion`: nothing, a register
//! permutation, warp shuffles (`shuffle.rs`), or a shared-memory round trip with the planner's swizzled
//! `store_map` / `load_map`, its vector width, duplicate-store masks, barrier kind and repetitions.

use tessel_layouts::convert::{BarrierKind, SharedPlan};
use tessel_layouts::{ConversionPlan, LinearLayout, PlanOptions, plan_conversion};
use tessel_tile::ir::OpData;

use super::coords::{bases, layout_of};
use super::shared::{ld_vec, pack};
use super::{Lower, class_of};
use crate::CompileError;
use crate::ptx::{Reg, RegClass};

pub(crate) fn convert_layout(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (x, v) = (data.operands[0], data.results[0]);
    let (src, dst) = (layout_of(l.f.ty(x))?.clone(), layout_of(l.f.ty(v))?.clone());
    let regs = l.get(x)?.to_vec();
    let class = class_of(l.elem_of(v)?)?;
    // Predicates travel as 16-bit values.
    let bits = if class == RegClass::Pred { 16 } else { class.bits() };
    let plan_err = |e: tessel_layouts::LayoutError| CompileError::new(format!("planning the conversion: {e}"));
    let plan = plan_conversion(&src, &dst, bits, &PlanOptions::default()).map_err(plan_err)?;
    let out = match plan {
        ConversionPlan::NoOp => regs,
        ConversionPlan::RegisterPermutation { src_register } => {
            src_register.iter().map(|&r| regs[r as usize]).collect()
        }
        ConversionPlan::SharedRoundTrip(p) => {
            l.b.comment(format!("convert_layout: shared-memory round trip, {} rep(s), vec {}", p.reps, p.vec));
            round_trip(l, &regs, &p, &dst, class)?
        }
        ConversionPlan::WarpShuffle(sh) => super::shuffle::warp_shuffle(l, &regs, &sh, class)?,
    };
    l.vals.insert(v, out);
    Ok(())
}

/// `(offset, rep)` of register `r` at lane = warp = 0.
fn reg_part(map: &LinearLayout, r: u32) -> (u32, u32) {
    let input: Vec<u32> = map.in_dim_names().iter().map(|d| if d.as_str() == "register" { r } else { 0 }).collect();
    let o = map.apply(&input);
    (o[0], o[1])
}

/// The registers of one access: `vec` consecutive registers whose offsets are consecutive, or single ones.
fn groups(map: &LinearLayout, n: u32, vec: u32) -> Vec<(u32, u32)> {
    let ok = (0..n).step_by(vec as usize).all(|r0| {
        let (o0, k0) = reg_part(map, r0);
        o0 % vec == 0 && (0..vec).all(|i| reg_part(map, r0 + i) == (o0 + i, k0))
    });
    let v = if ok { vec } else { 1 };
    (0..n).step_by(v as usize).map(|r| (r, v)).collect()
}

fn round_trip(
    l: &mut Lower,
    regs: &[Reg],
    p: &SharedPlan,
    dst: &LinearLayout,
    class: RegClass,
) -> Result<Vec<Reg>, CompileError> {
    let bits = if class == RegClass::Pred { 16 } else { class.bits() };
    let eb = bits / 8;
    let base = l.scratch(p.scratch_bytes.max((1u32 << p.shared.in_dim_size_log2("offset")) * eb));
    let offset_part = |m: &LinearLayout, dim: &str| bases(m, dim).iter().map(|b| b[0]).collect::<Vec<u32>>();
    let st_thread = l.thread_xor(offset_part(&p.store_map, "lane"), offset_part(&p.store_map, "warp"));
    let ld_thread = l.thread_xor(offset_part(&p.load_map, "lane"), offset_part(&p.load_map, "warp"));
    // Threads holding duplicates of another thread's elements skip the stores.
    let mask = p.store_mask.lane | p.store_mask.warp << 5;
    let st_pred = if mask != 0 {
        let (t, q) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
        l.b.ins(format!("and.b32 {t}, {}, {mask}", l.tid));
        l.b.ins(format!("setp.eq.u32 {q}, {t}, 0"));
        Some(q)
    } else {
        None
    };
    let guard = st_pred.map(|q| format!("@{q} ")).unwrap_or_default();
    let n_src = regs.len() as u32;
    let n_dst = dst.in_dim_size("register");
    let st_groups = groups(&p.store_map, n_src, p.vec);
    let ld_groups = groups(&p.load_map, n_dst, p.vec);
    let mut out = vec![None; n_dst as usize];
    // Source values as stored (predicates widened once).
    let stored: Vec<Reg> = regs
        .iter()
        .map(|&r| {
            if class == RegClass::Pred {
                let t = l.b.reg(RegClass::B16);
                l.b.ins(format!("selp.u16 {t}, 1, 0, {r}"));
                t
            } else {
                r
            }
        })
        .collect();
    for k in 0..p.reps {
        for &(r0, v) in &st_groups {
            if r0 & p.store_mask.register != 0 || reg_part(&p.store_map, r0).1 != k {
                continue;
            }
            let addr = address(l, base, st_thread, reg_part(&p.store_map, r0).0, eb);
            let vals: Vec<Reg> = (r0..r0 + v).map(|r| stored[r as usize]).collect();
            let (ty, operand) = pack(l, &vals, bits);
            l.b.ins(format!("{guard}st.shared{ty} [{addr}], {operand}"));
        }
        match p.barrier {
            BarrierKind::Warp => l.b.ins("bar.warp.sync -1"),
            BarrierKind::Cta => l.barrier(),
        }
        for &(r0, v) in &ld_groups {
            if reg_part(&p.load_map, r0).1 != k {
                continue;
            }
            let addr = address(l, base, ld_thread, reg_part(&p.load_map, r0).0, eb);
            let loaded = ld_vec(l, addr, v, bits);
            for (i, d) in loaded.into_iter().enumerate() {
                let d = if class == RegClass::Pred {
                    let q = l.b.reg(RegClass::Pred);
                    l.b.ins(format!("setp.ne.u16 {q}, {d}, 0"));
                    q
                } else if class != d.class {
                    let c = l.b.reg(class);
                    l.b.ins(format!("mov.b{bits} {c}, {d}"));
                    c
                } else {
                    d
                };
                out[r0 as usize + i] = Some(d);
            }
        }
        // The next user of shared memory (or the next repetition) may overwrite the buffer.
        l.barrier();
    }
    out.into_iter().map(|r| r.ok_or_else(|| CompileError::new("conversion plan left a register unset"))).collect()
}

fn address(l: &mut Lower, base: Reg, thread: Option<Reg>, c: u32, eb: u32) -> Reg {
    let idx = l.xor_const(thread, c, 0);
    let a = l.b.reg(RegClass::B32);
    l.b.ins(format!("mad.lo.u32 {a}, {idx}, {eb}, {base}"));
    a
}
