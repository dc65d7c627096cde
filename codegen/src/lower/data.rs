//! Data-dependent indexing through shared-memory scratch: `gather` (the source stored row-major, each thread
//! loads the elements its index registers name) and `histogram` (bins zeroed, every element counted once with
//! a shared-memory atomic add, the bins read back in the result's layout).
//!
//! Row-major offsets of power-of-two shapes are linear over F2, so an element's offset is the XOR of its
//! register's constant part and its thread's part, as for any coordinate (`coords.rs`).

use tessel_layouts::LinearLayout;
use tessel_tile::ir::OpData;
use tessel_tile::ops::Op;
use tessel_tile::types::Type;

use super::Lower;
use super::coords::{bases, flatten, layout_of, reg_coords};
use super::memory::owner_pred;
use super::shared::{ld_shared, slot_bytes, st_shared};
use crate::CompileError;
use crate::ptx::{Reg, RegClass, instr, mem};

/// Row-major offsets (in elements, within `shape`) of every register of `lin` in this thread, with the
/// coordinate of out-dim `skip` (if any) left out.
fn offsets(l: &mut Lower, lin: &LinearLayout, shape: &[u32], skip: Option<usize>) -> Vec<Reg> {
    let flat = |b: &Vec<u32>| {
        let mut b = b.clone();
        if let Some(s) = skip {
            b[s] = 0;
        }
        flatten(&b, shape)
    };
    let lane = bases(lin, "lane").iter().map(flat).collect();
    let warp = bases(lin, "warp").iter().map(flat).collect();
    let t = l.thread_xor(lane, warp);
    (0..lin.in_dim_size("register")).map(|r| l.xor_const(t, flat(&reg_coords(lin, r)), 0)).collect()
}

/// Registers of `lin` that repeat an earlier register of the same thread (a zero register basis): a mask of
/// register-index bits, registers with any of them set are duplicates.
fn duplicate_registers(lin: &LinearLayout) -> u32 {
    bases(lin, "register").iter().enumerate().filter(|(_, b)| b.iter().all(|&x| x == 0)).fold(0, |m, (i, _)| m | 1 << i)
}

/// `addr = base + index * bytes`.
fn address(l: &mut Lower, base: Reg, index: Reg, bytes: u32) -> Reg {
    let a = l.b.reg(RegClass::B32);
    l.b.op("mad.lo.u32", a, (index, bytes, base));
    a
}

/// An integer register as a 32-bit index (16-bit values sign- or zero-extended, 64-bit ones truncated: the
/// callers bound or mask it).
fn index32(l: &mut Lower, r: Reg, signed: bool) -> Reg {
    match r.class {
        RegClass::B32 => r,
        RegClass::B16 => {
            let d = l.b.reg(RegClass::B32);
            l.b.op(if signed { "cvt.s32.s16" } else { "cvt.u32.u16" }, d, r);
            d
        }
        _ => {
            let d = l.b.reg(RegClass::B32);
            l.b.op("cvt.u32.u64", d, r);
            d
        }
    }
}

pub(crate) fn gather(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let Op::Gather { axis } = data.op else { unreachable!("not gather") };
    let axis = axis as usize;
    let (src, index, res) = (data.operands[0], data.operands[1], data.results[0]);
    let (src_ty, idx_ty, res_ty) = (l.f.ty(src).clone(), l.f.ty(index).clone(), l.f.ty(res).clone());
    let (src_lin, res_lin) = (layout_of(&src_ty)?.clone(), layout_of(&res_ty)?.clone());
    if layout_of(&idx_ty)? != &res_lin {
        return Err(CompileError::new("gather: the index and the result must share a layout (layout assignment)"));
    }
    let shape = src_ty.shape().to_vec();
    let class = l.get(src)?.first().map_or(RegClass::B32, |r| r.class);
    let slot = slot_bytes(class);
    let numel: u32 = shape.iter().product();
    let base = l.scratch(numel * slot)?;
    // The source, row-major, each element stored by one thread.
    let owner = owner_pred(l, &src_ty)?;
    let dup = duplicate_registers(&src_lin);
    let at = offsets(l, &src_lin, &shape, None);
    let vals = l.get(src)?.to_vec();
    for (r, (&v, &o)) in vals.iter().zip(&at).enumerate() {
        if r as u32 & dup != 0 {
            continue;
        }
        let a = address(l, base, o, slot);
        match (owner, class) {
            (None, _) => st_shared(l, a, v),
            (Some(p), RegClass::Pred) => {
                let w = l.b.reg(RegClass::B32);
                l.b.op("selp.b32", w, (1, 0, v));
                l.b.emit(instr("st.shared.b32").guard(p).srcs((mem(a), w)));
            }
            (Some(p), c) => l.b.emit(instr(format!("st.shared.b{}", c.bits())).guard(p).srcs((mem(a), v))),
        }
    }
    l.barrier();
    // Each result element: its coordinates but along `axis`, where the index says (wrapped into the dim).
    let rest = offsets(l, &res_lin, &shape, Some(axis));
    let stride: u32 = shape[axis + 1..].iter().product();
    let signed = l.scalar_of(index)?.is_signed_int();
    let idx = l.get(index)?.to_vec();
    let mut out = Vec::with_capacity(idx.len());
    for (&i, &o) in idx.iter().zip(&rest) {
        let i = index32(l, i, signed);
        let w = l.b.reg(RegClass::B32);
        l.b.op("and.b32", w, (i, shape[axis] as i64 - 1));
        let flat = l.b.reg(RegClass::B32);
        l.b.op("mad.lo.u32", flat, (w, stride, o));
        let a = address(l, base, flat, slot);
        out.push(ld_shared(l, a, class));
    }
    l.barrier();
    l.vals.insert(res, out);
    Ok(())
}

pub(crate) fn histogram(l: &mut Lower, data: &OpData, num_bins: u32) -> Result<(), CompileError> {
    let (x, res) = (data.operands[0], data.results[0]);
    let (x_ty, res_ty) = (l.f.ty(x).clone(), l.f.ty(res).clone());
    let mask = match data.operands.get(1) {
        Some(&m) if !matches!(l.f.ty(m), Type::Scalar(_)) && l.f.ty(m).layout() != x_ty.layout() => {
            return Err(CompileError::new(
                "histogram: the mask and the input must share a layout (the frontend folds masks into the input)",
            ));
        }
        Some(&m) => Some(l.get(m)?.to_vec()),
        None => None,
    };
    let base = l.scratch(num_bins * 4)?;
    // Zero the bins, the threads striding over them.
    let threads = l.num_warps * 32;
    for k in 0..num_bins.div_ceil(threads) {
        let i = l.b.reg(RegClass::B32);
        l.b.op("add.u32", i, (l.tid, k * threads));
        let a = address(l, base, i, 4);
        if (k + 1) * threads > num_bins {
            let p = l.b.reg(RegClass::Pred);
            l.b.op("setp.lt.u32", p, (i, num_bins));
            l.b.emit(instr("st.shared.b32").guard(p).srcs((mem(a), 0)));
        } else {
            l.b.effect("st.shared.b32", (mem(a), 0));
        }
    }
    l.barrier();
    // Count each element once: in its owning thread, in its first register, when in range (and unmasked).
    let lin = layout_of(&x_ty)?.clone();
    let owner = owner_pred(l, &x_ty)?;
    let dup = duplicate_registers(&lin);
    let signed = l.scalar_of(x)?.is_signed_int();
    let vals = l.get(x)?.to_vec();
    for (r, &v) in vals.iter().enumerate() {
        if r as u32 & dup != 0 {
            continue;
        }
        let p = l.b.reg(RegClass::Pred);
        let i = if v.class == RegClass::B64 {
            l.b.op("setp.lt.u64", p, (v, num_bins as i64));
            index32(l, v, signed)
        } else {
            let i = index32(l, v, signed);
            l.b.op("setp.lt.u32", p, (i, num_bins));
            i
        };
        for q in owner.into_iter().chain(mask.as_ref().map(|m| m[r])) {
            l.b.op("and.pred", p, (p, q));
        }
        let a = address(l, base, i, 4);
        l.b.emit(instr("red.shared.add.u32").guard(p).srcs((mem(a), 1)));
    }
    l.barrier();
    let res_lin = layout_of(&res_ty)?.clone();
    let at = offsets(l, &res_lin, &[num_bins], None);
    let out: Vec<Reg> = at
        .iter()
        .map(|&o| {
            let a = address(l, base, o, 4);
            ld_shared(l, a, RegClass::B32)
        })
        .collect();
    l.barrier();
    l.vals.insert(res, out);
    Ok(())
}
