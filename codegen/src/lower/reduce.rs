//! `reduce` along one axis with its combine region: first over the thread's own registers, then across the
//! lanes of the axis with `shfl.sync.bfly` (widest stride first), then across the warps of the axis through shared
//! memory (each warp writes its partial, `bar.sync`, every thread combines the partials pairwise from the widest
//! stride down, `bar.sync`), then, in a cluster, across the CTAs of the axis (`cluster::reduce_across_ctas`).
//! That is Triton's order of combining, so floating-point sums round as Triton's do for the same layout. A sum of products
//! (`tl.sum(x * y)`) contracts its in-thread steps into `fma` as LLVM does Triton's (see [`product_sum`]). The result lands in the slice layout without moving data: every thread holds the
//! reduction of the rows it owned.

use tessel_tile::ir::OpData;
use tessel_tile::types::ScalarType;

use super::coords::{bases, flatten, layout_of, reg_coords, remap};
use super::shared::{ld_shared_run, slot_bytes, st_shared};
use super::{Lower, class_of};
use crate::CompileError;
use crate::ptx::{Operand, Reg, RegClass, vector};

/// `shfl.sync.<mode>` of a register of any class over the full warp (64-bit as two halves, 16-bit values and
/// predicates widened to 32 bits). `lane` is the lane/offset operand; `c` the clamp/segment operand (31 for
/// `bfly`, `down` and `idx`, 0 for `up`).
pub(crate) fn shuffle(l: &mut Lower, v: Reg, mode: &str, lane: Operand, c: u32) -> Reg {
    let shfl = |l: &mut Lower, x: Reg| {
        let d = l.b.reg(x.class);
        l.b.op(format!("shfl.sync.{mode}.b32"), d, (x, lane.clone(), c, -1));
        d
    };
    match v.class {
        RegClass::B128 => unreachable!("no tensor element is 128 bits (only cluster launch control responses)"),
        RegClass::B32 | RegClass::F32 => shfl(l, v),
        RegClass::B64 | RegClass::F64 => {
            let (lo, hi) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
            l.b.op("mov.b64", vector(&[lo, hi]), v);
            let (lo2, hi2) = (shfl(l, lo), shfl(l, hi));
            let d = l.b.reg(v.class);
            l.b.op("mov.b64", d, vector(&[lo2, hi2]));
            d
        }
        RegClass::B16 => {
            let w = l.b.reg(RegClass::B32);
            l.b.op("cvt.u32.u16", w, v);
            let w2 = shfl(l, w);
            let d = l.b.reg(RegClass::B16);
            l.b.op("cvt.u16.u32", d, w2);
            d
        }
        RegClass::Pred => {
            let w = l.b.reg(RegClass::B32);
            l.b.op("selp.b32", w, (1, 0, v));
            let w2 = shfl(l, w);
            let d = l.b.reg(RegClass::Pred);
            l.b.op("setp.ne.u32", d, (w2, 0));
            d
        }
    }
}

/// `shfl.sync.bfly` with lane mask `lane_mask`.
fn shuffle_xor(l: &mut Lower, v: Reg, lane_mask: u32) -> Reg {
    shuffle(l, v, "bfly", lane_mask.into(), 31)
}

pub(crate) fn reduce(l: &mut Lower, data: &OpData, axis: u32) -> Result<(), CompileError> {
    let a = axis as usize;
    let n_ops = data.operands.len();
    let region = data.regions[0];
    let in_ty = l.f.ty(data.operands[0]).clone();
    let lin = layout_of(&in_ty)?.clone();
    let shape = in_ty.shape().to_vec();
    let drop_axis =
        move |c: &[u32]| -> Vec<u32> { c.iter().enumerate().filter(|(d, _)| *d != a).map(|(_, &x)| x).collect() };
    let inputs: Vec<Vec<Reg>> =
        data.operands.iter().map(|&o| l.get(o).map(|r| r.to_vec())).collect::<Result<_, _>>()?;
    let classes: Vec<RegClass> = inputs.iter().map(|r| r[0].class).collect();

    // 1. In-thread: combine the registers of each row (skipping replicated registers). A sum of products
    //    contracts as LLVM contracts Triton's: fma(x0, y0, x1*y1), then fma(xi, yi, acc).
    let reg_bases = bases(&lin, "register");
    let dup_regs: u32 =
        reg_bases.iter().enumerate().filter(|(_, b)| b.iter().all(|&x| x == 0)).fold(0, |m, (i, _)| m | 1 << i);
    let n_regs = lin.in_dim_size("register");
    let products = product_sum(l)?;
    let mut groups: Vec<(Vec<u32>, Vec<Reg>)> = Vec::new();
    // Per group: the register index of its first element while the accumulator is that element alone.
    let mut first: Vec<Option<usize>> = Vec::new();
    for r in 0..n_regs {
        if r & dup_regs != 0 {
            continue;
        }
        let key = drop_axis(&reg_coords(&lin, r));
        let x: Vec<Reg> = inputs.iter().map(|rs| rs[r as usize]).collect();
        match groups.iter().position(|(k, _)| *k == key) {
            Some(g) => {
                let acc = groups[g].1.clone();
                groups[g].1 = match &products {
                    Some(ProductSum { xs, ys, fma }) => {
                        // acc + x*y: the product still pending in `acc` when it is the group's first element.
                        let (i, addend) = match first[g].take() {
                            Some(i0) => (i0, x[0]),
                            None => (r as usize, acc[0]),
                        };
                        let d = l.b.reg(classes[0]);
                        l.b.op(fma.to_string(), d, (xs[i], ys[i], addend));
                        vec![d]
                    }
                    None => l.combine(region, &acc, &x)?,
                };
            }
            None => {
                groups.push((key, x));
                first.push(Some(r as usize));
            }
        }
    }

    // 2. Across lanes of the axis: the highest lane bit first, as Triton shuffles (xor 16, 8, ..., 1), so that
    //    floating-point sums add in Triton's order.
    for (i, b) in bases(&lin, "lane").iter().enumerate().rev() {
        if b[a] == 0 {
            continue;
        }
        if b.iter().enumerate().any(|(d, &x)| d != a && x != 0) {
            return Err(CompileError::new("a lane basis mixes the reduced axis with other dims; not supported yet"));
        }
        for group in groups.iter_mut() {
            let acc = group.1.clone();
            let other: Vec<Reg> = acc.iter().map(|&v| shuffle_xor(l, v, 1 << i)).collect();
            group.1 = l.combine(region, &acc, &other)?;
        }
    }

    // 3. Across warps of the axis, through shared memory.
    let warp_bases = bases(&lin, "warp");
    let axis_warps: Vec<usize> = warp_bases.iter().enumerate().filter(|(_, b)| b[a] != 0).map(|(i, _)| i).collect();
    if !axis_warps.is_empty() {
        if axis_warps.iter().any(|&i| warp_bases[i].iter().enumerate().any(|(d, &x)| d != a && x != 0)) {
            return Err(CompileError::new("a warp basis mixes the reduced axis with other dims; not supported yet"));
        }
        let w = 1u32 << axis_warps.len();
        let out_shape = drop_axis(&shape);
        let out_numel: u32 = out_shape.iter().product::<u32>().max(1);
        let region_bytes: Vec<u32> = classes.iter().map(|&c| out_numel * w * slot_bytes(c)).collect();
        let scratch_bytes: u32 = region_bytes.iter().sum();
        l.b.comment("reduce: combine the warps of the axis through shared memory");
        // Slot of (output element e, axis warp index wa) = e * w + wa; e = thread part ^ register key. Both
        // thread parts are linear in the thread id: one for the loads (wa = 0), one for the stores.
        let logw = axis_warps.len() as u32;
        let lv: Vec<u32> = bases(&lin, "lane").iter().map(|b| flatten(&drop_axis(b), &out_shape) << logw).collect();
        let wv: Vec<u32> = warp_bases.iter().map(|b| flatten(&drop_axis(b), &out_shape) << logw).collect();
        let mut wv_store = wv.clone();
        for (j, &i) in axis_warps.iter().enumerate() {
            wv_store[i] |= 1 << j;
        }
        let ld_thread = l.thread_xor(lv.clone(), wv);
        let st_thread = l.thread_xor(lv, wv_store);
        let base = l.scratch(scratch_bytes)?;
        let mut slots = Vec::new();
        for (g, (key, _)) in groups.iter().enumerate() {
            let k = flatten(key, &out_shape) << logw;
            let st_slot = l.xor_const(st_thread, k, 0);
            let mut off = 0;
            for (op, &c) in classes.iter().enumerate() {
                let addr = l.b.reg(RegClass::B32);
                l.b.op("mad.lo.u32", addr, (st_slot, slot_bytes(c), base));
                if off > 0 {
                    l.b.op("add.u32", addr, (addr, off));
                }
                let v = groups[g].1[op];
                st_shared(l, addr, v);
                off += region_bytes[op];
            }
            slots.push(l.xor_const(ld_thread, k, 0));
        }
        l.barrier();
        for (g, slot) in slots.iter().enumerate() {
            // Each operand's `w` partials of this group are contiguous: load them with vector accesses.
            let mut off = 0;
            let mut partials: Vec<Vec<Reg>> = Vec::new();
            for (k, &c) in classes.iter().enumerate() {
                let addr = l.b.reg(RegClass::B32);
                l.b.op("mad.lo.u32", addr, (*slot, slot_bytes(c), base));
                if off > 0 {
                    l.b.op("add.u32", addr, (addr, off));
                }
                partials.push(ld_shared_run(l, addr, c, w));
                off += region_bytes[k];
            }
            // Combined as Triton's second shuffle round does, a butterfly from the widest stride down: with
            // four warps ((p0 + p2) + (p1 + p3)).
            let mut level: Vec<Vec<Reg>> = (0..w as usize).map(|wi| partials.iter().map(|p| p[wi]).collect()).collect();
            let mut stride = level.len() / 2;
            while stride > 0 {
                for i in 0..stride {
                    level[i] = l.combine(region, &level[i], &level[i + stride])?;
                }
                stride /= 2;
            }
            groups[g].1 = level.swap_remove(0);
        }
        l.barrier();
    }

    // 4. Across the CTAs of the axis, in a cluster: through distributed shared memory.
    let out_shape = drop_axis(&shape);
    super::cluster::reduce_across_ctas(l, &lin, a, &out_shape, region, &mut groups, &drop_axis)?;

    // 5. The results in the slice layout (or scalars).
    for k in 0..n_ops {
        let v = data.results[k];
        let out_ty = l.f.ty(v).clone();
        let regs = if out_ty.is_tensor() {
            let lo = layout_of(&out_ty)?.clone();
            let virt: Vec<Reg> = (0..n_regs)
                .map(|r| {
                    let key = drop_axis(&reg_coords(&lin, r));
                    groups.iter().find(|(gk, _)| *gk == key).map(|(_, acc)| acc[k]).unwrap()
                })
                .collect();
            remap(&virt, &lin, &lo, &drop_axis, &|c| c.to_vec()).ok_or_else(|| {
                CompileError::new(format!("the result layout of reduce is not the slice of {in_ty} along {a}"))
            })?
        } else {
            vec![groups[0].1[k]]
        };
        let _ = class_of(out_ty.elem().unwrap())?;
        l.vals.insert(v, regs);
    }
    Ok(())
}

/// The factors of a sum of products, per register, and the `fma` that steps through them.
struct ProductSum {
    xs: Vec<Reg>,
    ys: Vec<Reg>,
    fma: &'static str,
}

/// The registers of `x` and `y` when the reduce being lowered is `tl.sum(x * y)` that Triton's LLVM would contract
/// ([`tessel_tile::reduce::contracted_product`]). Then each step of the in-thread loop is an `fma` (the `mul`
/// stays only for each row's second element, and ptxas drops it where unused), rounding as Triton's kernels do.
fn product_sum(l: &mut Lower) -> Result<Option<ProductSum>, CompileError> {
    let Some((ty, x, y)) = tessel_tile::reduce::contracted_product(l.f, l.cur_op) else { return Ok(None) };
    let fma = if ty == ScalarType::F64 { "fma.rn.f64" } else { "fma.rn.f32" };
    Ok(Some(ProductSum { xs: l.get(x)?.to_vec(), ys: l.get(y)?.to_vec(), fma }))
}
