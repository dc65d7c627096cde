//! `convert_layout`, executing the plan of `tessel_layouts::plan_conversion`: nothing, a register
//! permutation, warp shuffles (`shuffle.rs`), or a shared-memory round trip with the planner's swizzled
//! `store_map` / `load_map`, its vector width, duplicate-store masks, barrier kind and repetitions.

use tessel_layouts::convert::{BarrierKind, SharedPlan};
use tessel_layouts::{ConversionPlan, LinearLayout, PlanOptions, plan_conversion};
use tessel_tile::ir::OpData;
use tessel_tile::types::ScalarType;

use super::coords::{bases, layout_of};
use super::shared::{Addresses, ld_vec, pack};
use super::{Lower, class_of};
use crate::CompileError;
use crate::ptx::{Reg, RegClass, instr};

pub(crate) fn convert_layout(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (x, v) = (data.operands[0], data.results[0]);
    // In a cluster, a layout without CTA bases is held alike by every CTA.
    let ctas = l.f.config.num_ctas;
    let (src, dst) = (layout_of(l.f.ty(x))?, layout_of(l.f.ty(v))?);
    let (src, dst) = (super::coords::over_ctas(src, ctas), super::coords::over_ctas(dst, ctas));
    let regs = l.get(x)?.to_vec();
    let class = class_of(l.elem_of(v)?)?;
    // Predicates travel as 16-bit values.
    let bits = if class == RegClass::Pred { 16 } else { class.bits() };
    let plan_err = |e: tessel_layouts::LayoutError| CompileError::new(format!("planning the conversion: {e}"));
    let plan = match plan_conversion(&src, &dst, bits, &PlanOptions::default()) {
        Ok(plan) => plan,
        // Data that moves between the CTAs of a cluster (the planner transfers within a CTA).
        Err(_) if ctas > 1 && super::cluster::splits(&src) | super::cluster::splits(&dst) => {
            let out = super::cluster::convert_across_ctas(l, &regs, &src, &dst, class)?;
            l.vals.insert(v, out);
            return Ok(());
        }
        Err(e) => return Err(plan_err(e)),
    };
    let out = match plan {
        ConversionPlan::NoOp => regs,
        ConversionPlan::RegisterPermutation { src_register } => {
            src_register.iter().map(|&r| regs[r as usize]).collect()
        }
        ConversionPlan::SharedRoundTrip(p) => {
            l.b.comment(format!("convert_layout: shared-memory round trip, {} rep(s), vec {}", p.reps, p.vec));
            round_trip(l, &regs, &p, &dst, class)?
        }
        ConversionPlan::WarpShuffle(sh) => {
            let bytes = l.scalar_of(v).ok().filter(|s| s.bits() == 8).map(|s| s == ScalarType::I8);
            super::shuffle::warp_shuffle(l, &regs, &sh, class, bytes)?
        }
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

/// The accesses of a plan's map: each holds `vec` elements at consecutive offsets (the registers, in offset
/// order, whatever their numbers), or one element each when some aligned block of offsets is not held whole by
/// the thread or a thread's part could break a block.
fn groups(map: &LinearLayout, regs: impl Iterator<Item = u32>, vec: u32) -> Vec<Vec<u32>> {
    let regs: Vec<u32> = regs.collect();
    let thread_low = ["lane", "warp"].iter().flat_map(|d| bases(map, d)).any(|b| b[0] % vec != 0);
    let mut blocks: std::collections::BTreeMap<(u32, u32), Vec<Option<u32>>> = Default::default();
    let mut whole = !thread_low;
    for &r in &regs {
        let (o, k) = reg_part(map, r);
        let slot = &mut blocks.entry((k, o / vec)).or_insert_with(|| vec![None; vec as usize])[(o % vec) as usize];
        whole &= slot.replace(r).is_none();
    }
    whole &= blocks.values().all(|b| b.iter().all(Option::is_some));
    if !whole || vec == 1 {
        return regs.into_iter().map(|r| vec![r]).collect();
    }
    blocks.into_values().map(|b| b.into_iter().map(|r| r.expect("checked")).collect()).collect()
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
    let base = l.scratch(p.scratch_bytes.max((1u32 << p.shared.in_dim_size_log2("offset")) * eb))?;
    let part = |map: &LinearLayout, dim: &str| bases(map, dim).iter().map(|b| b[0]).collect::<Vec<u32>>();
    // In a cluster each CTA goes through its own shared memory; the loads' offsets may depend on the CTA's rank
    // (a destination split over CTAs that the source holds whole in each), the stores' never do.
    let addrs = |l: &mut Lower, m: &LinearLayout| {
        Addresses::new_cta(l, part(m, "lane"), part(m, "warp"), part(m, "block"), base, eb)
    };
    let mut st_addr = addrs(l, &p.store_map);
    let mut ld_addr = addrs(l, &p.load_map);
    // Threads holding duplicates of another thread's elements skip the stores.
    let mask = p.store_mask.lane | p.store_mask.warp << 5;
    let st_pred = if mask != 0 {
        let (t, q) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
        l.b.op("and.b32", t, (l.tid, mask));
        l.b.op("setp.eq.u32", q, (t, 0));
        Some(q)
    } else {
        None
    };
    let n_src = regs.len() as u32;
    let n_dst = dst.in_dim_size("register");
    let st_groups = groups(&p.store_map, (0..n_src).filter(|r| r & p.store_mask.register == 0), p.vec);
    let ld_groups = groups(&p.load_map, 0..n_dst, p.vec);
    let mut out = vec![None; n_dst as usize];
    // Source values as stored (predicates widened once).
    let stored: Vec<Reg> = regs
        .iter()
        .map(|&r| {
            if class == RegClass::Pred {
                let t = l.b.reg(RegClass::B16);
                l.b.op("selp.u16", t, (1, 0, r));
                t
            } else {
                r
            }
        })
        .collect();
    for k in 0..p.reps {
        for g in &st_groups {
            let (o0, rep) = reg_part(&p.store_map, g[0]);
            if rep != k {
                continue;
            }
            let addr = st_addr.of(l, o0);
            let vals: Vec<Reg> = g.iter().map(|&r| stored[r as usize]).collect();
            let (ty, operand) = pack(l, &vals, bits);
            l.b.emit(instr(format!("st.shared{ty}")).when(st_pred).srcs((addr, operand)));
        }
        match p.barrier {
            BarrierKind::Warp => l.b.effect("bar.warp.sync", -1),
            BarrierKind::Cta => l.barrier(),
        }
        for g in &ld_groups {
            let (o0, rep) = reg_part(&p.load_map, g[0]);
            if rep != k {
                continue;
            }
            let addr = ld_addr.of(l, o0);
            let loaded = ld_vec(l, addr, g.len() as u32, bits);
            for (&r, d) in g.iter().zip(loaded) {
                let d = if class == RegClass::Pred {
                    let q = l.b.reg(RegClass::Pred);
                    l.b.op("setp.ne.u16", q, (d, 0));
                    q
                } else if class != d.class {
                    let c = l.b.reg(class);
                    l.b.op(format!("mov.b{bits}"), c, d);
                    c
                } else {
                    d
                };
                out[r as usize] = Some(d);
            }
        }
        // The next user of shared memory (or the next repetition) may overwrite the buffer.
        l.barrier();
    }
    out.into_iter().map(|r| r.ok_or_else(|| CompileError::new("conversion plan left a register unset"))).collect()
}
