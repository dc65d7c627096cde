//! TMA copies (`cp.async.bulk.tensor`, sm_90a and newer): `tma_load` (global → shared, completing its bytes on
//! an mbarrier), `tma_store` (shared → global, in a bulk group) and `tma_store_wait`.
//!
//! One thread of the program issues each copy, as for mbarrier arrivals: the copies are the program's, not each
//! thread's. The tensor map of a host descriptor is a 128-byte kernel parameter appended after the IR's
//! arguments (recorded in [`crate::Kernel::tensor_maps`], which the runtime encodes from the descriptor's
//! argument values); its generic address is the copy's tensor operand. A block is copied as the boxes of
//! [`tessel_tile::tma::block`], each to where the buffer's layout puts its first element, and the buffer's
//! layout must be the descriptor's TMA layout (that rule's), which the copy writes and reads.

use tessel_tile::ir::{OpData, ValueId};
use tessel_tile::tma::{self, TmaBlock};

use super::Lower;
use crate::ptx::{Operand, Reg, RegClass, instr, mem, sym};
use crate::{CompileError, TensorMapArg};

/// The TMA block of descriptor `desc`, checked against the layout of the buffer `buf` it is copied to or from.
fn checked_block(l: &Lower, desc: ValueId, buf: ValueId) -> Result<TmaBlock, CompileError> {
    let (elem, block) = tma::desc_block(l.f.ty(desc)).expect("verified: a tensordesc");
    let b = tma::block(elem, block).map_err(CompileError::new)?;
    let (_, _, layout) = l.f.ty(buf).memdesc().expect("verified: a memdesc");
    let want = b.layout.to_linear(block).map_err(|e| CompileError::new(e.to_string()))?;
    if layout.linear != want {
        return Err(CompileError::new(format!(
            "the buffer {buf} is not in the descriptor's TMA layout (NVMMASharedLayout({}, {}) over {block:?}): \
             TMA writes and reads that layout",
            b.swizzle_bytes(),
            elem.bits()
        )));
    }
    Ok(b)
}

/// The generic address of the tensor map of host descriptor `desc`, adding its kernel parameter on first use.
fn tensor_map(l: &mut Lower, desc: ValueId) -> Result<Reg, CompileError> {
    let base = tma::host_desc_base(l.f, desc).ok_or_else(|| {
        CompileError::new(
            "a TMA copy needs a descriptor made on the host (a TensorDescriptor argument); descriptors made in the \
             kernel have no tensor map yet",
        )
    })?;
    let (elem, block) = tma::desc_block(l.f.ty(desc)).expect("verified: a tensordesc");
    let maker = match l.f.value(tma::desc_source(l.f, desc)).def {
        tessel_tile::ir::ValueDef::Result(o, _) => o,
        _ => unreachable!("host_desc_base found its make_tensor_desc"),
    };
    let nan_padding = matches!(&l.f.op(maker).op, tessel_tile::Op::MakeTensorDesc { padding, .. } if padding == "nan");
    let arg = TensorMapArg { base_arg: base as u32, elem, block_shape: block.to_vec(), nan_padding, im2col_rank: None };
    Ok(map_param(l, arg))
}

/// The generic address of the tensor map `arg`, adding its kernel parameter on first use.
fn map_param(l: &mut Lower, arg: TensorMapArg) -> Reg {
    let k = match l.tensor_maps.iter().position(|m| *m == arg) {
        Some(k) => k,
        None => {
            l.tensor_maps.push(arg);
            l.tensor_maps.len() - 1
        }
    };
    let (p, g) = (l.b.reg(RegClass::B64), l.b.reg(RegClass::B64));
    l.b.op("mov.b64", p, sym(tensor_map_param(&l.f.name, k)));
    l.b.op("cvta.param.u64", g, p);
    g
}

/// The name of the kernel parameter holding tensor map `k`.
pub(crate) fn tensor_map_param(kernel: &str, k: usize) -> String {
    format!("{kernel}_tmap_{k}")
}

/// `%tid == 0` (and the op's predicate): the thread that issues the program's copies.
fn issuing_thread(l: &mut Lower, pred: Option<ValueId>) -> Result<Reg, CompileError> {
    let p = l.b.reg(RegClass::Pred);
    l.b.op("setp.eq.u32", p, (l.tid, 0));
    if let Some(x) = pred {
        let q = l.get(x)?[0];
        l.b.op("and.pred", p, (p, q));
    }
    Ok(p)
}

/// The coordinates of a box: the op's block coordinates plus the box origin, innermost dim first.
fn box_coords(l: &mut Lower, coords: &[ValueId], origin: &[u32]) -> Result<Vec<Reg>, CompileError> {
    let mut out = Vec::with_capacity(coords.len());
    for (&c, &o) in coords.iter().zip(origin).rev() {
        let r = l.get(c)?[0];
        if o == 0 {
            out.push(r);
        } else {
            let s = l.b.reg(RegClass::B32);
            l.b.op("add.s32", s, (r, o));
            out.push(s);
        }
    }
    Ok(out)
}

/// Each box's shared address: the buffer's base plus where the layout puts the box's first element.
fn box_addresses(l: &mut Lower, buf: ValueId, b: &TmaBlock) -> Result<Vec<Reg>, CompileError> {
    let base = l.get(buf)?[0];
    let (_, elem, layout) = l.f.ty(buf).memdesc().expect("verified: a memdesc");
    let mut out = Vec::with_capacity(b.boxes.len());
    for origin in &b.boxes {
        let offset = tma::box_offset(&layout.linear, origin).map_err(CompileError::new)? * elem.bytes();
        if offset == 0 {
            out.push(base);
        } else {
            let a = l.b.reg(RegClass::B32);
            l.b.op("add.u32", a, (base, offset));
            out.push(a);
        }
    }
    Ok(out)
}

fn need_tma(l: &Lower) -> Result<(), CompileError> {
    if l.arch == tessel_tile::Target::Sm80 {
        return Err(CompileError::new("TMA copies need sm_90a or newer"));
    }
    Ok(())
}

/// `tma_load desc, mem, bar, coords... [, pred]`.
pub(crate) fn load(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    need_tma(l)?;
    let (desc, buf, bar) = (data.operands[0], data.operands[1], data.operands[2]);
    let b = checked_block(l, desc, buf)?;
    let rank = b.box_dims.len();
    let coords = &data.operands[3..3 + rank];
    let map = tensor_map(l, desc)?;
    let bar_addr = l.get(bar)?[0];
    let dsts = box_addresses(l, buf, &b)?;
    let p = issuing_thread(l, data.operands.get(3 + rank).copied())?;
    let op = format!("cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes");
    for (origin, dst) in b.boxes.iter().zip(dsts) {
        let c = box_coords(l, coords, origin)?;
        l.b.emit(instr(op.clone()).guard(p).srcs((mem(dst), Operand::TensorAddr { map, coords: c }, mem(bar_addr))));
    }
    Ok(())
}

/// `tma_load_im2col desc, mem, bar, coords..., offsets... [, pred] {rank}`: the block's boxes (channels wider
/// than a swizzle row are several boxes side by side, each starting `origin` channels further), each one
/// `cp.async.bulk.tensor.{rank}d...im2col` with the coordinates and the 16-bit offsets innermost first.
pub(crate) fn load_im2col(l: &mut Lower, data: &OpData, rank: usize) -> Result<(), CompileError> {
    need_tma(l)?;
    let (desc, buf, bar) = (data.operands[0], data.operands[1], data.operands[2]);
    let b = checked_block(l, desc, buf)?;
    if b.boxes.iter().any(|o| o[0] != 0) {
        return Err(CompileError::new(format!(
            "an im2col load of {} pixels needs more than one box along the pixels ({} each), which continue the \
             pixel walk: not supported yet",
            b.box_dims[0] * b.boxes.len() as u32 / b.boxes.iter().filter(|o| o[0] == 0).count() as u32,
            b.box_dims[0]
        )));
    }
    let (base, _) = tma::host_im2col_base(l.f, desc).ok_or_else(|| {
        CompileError::new("an im2col load needs an im2col descriptor made on the host (a TensorDescriptorIm2Col)")
    })?;
    let (elem, block) = tma::desc_block(l.f.ty(desc)).expect("verified: a tensordesc");
    let maker = match l.f.value(tma::desc_source(l.f, desc)).def {
        tessel_tile::ir::ValueDef::Result(o, _) => o,
        _ => unreachable!("host_im2col_base found its maker"),
    };
    let nan_padding =
        matches!(&l.f.op(maker).op, tessel_tile::Op::MakeTensorDescIm2col { padding, .. } if padding == "nan");
    let arg = TensorMapArg {
        base_arg: base as u32,
        elem,
        block_shape: block.to_vec(),
        nan_padding,
        im2col_rank: Some(rank as u32),
    };
    let map = map_param(l, arg);
    let coords = &data.operands[3..3 + rank];
    let offsets = &data.operands[3 + rank..3 + 2 * rank - 2];
    let bar_addr = l.get(bar)?[0];
    let dsts = box_addresses(l, buf, &b)?;
    let mut offs = Vec::with_capacity(offsets.len());
    for &o in offsets.iter().rev() {
        let r = l.get(o)?[0];
        if r.class == RegClass::B16 {
            offs.push(r);
        } else {
            let h = l.b.reg(RegClass::B16);
            l.b.op("cvt.u16.u32", h, r);
            offs.push(h);
        }
    }
    let p = issuing_thread(l, data.operands.get(3 + 2 * rank - 2).copied())?;
    let op = format!("cp.async.bulk.tensor.{rank}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes");
    for (origin, dst) in b.boxes.iter().zip(dsts) {
        // The channel coordinate (innermost) moves by the box's channel origin; the pixel walk starts where the
        // load's does.
        let mut c = Vec::with_capacity(rank);
        for (k, &x) in coords.iter().rev().enumerate() {
            let r = l.get(x)?[0];
            if k == 0 && origin[1] != 0 {
                let s = l.b.reg(RegClass::B32);
                l.b.op("add.s32", s, (r, origin[1]));
                c.push(s);
            } else {
                c.push(r);
            }
        }
        let srcs = (mem(dst), Operand::TensorAddr { map, coords: c }, mem(bar_addr), Operand::Vector(offs.clone()));
        l.b.emit(instr(op.clone()).guard(p).srcs(srcs));
    }
    Ok(())
}

/// `tma_store desc, mem, coords...`: the boxes, then one bulk group for them.
pub(crate) fn store(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    need_tma(l)?;
    let (desc, buf) = (data.operands[0], data.operands[1]);
    let b = checked_block(l, desc, buf)?;
    let rank = b.box_dims.len();
    let coords = &data.operands[2..2 + rank];
    let map = tensor_map(l, desc)?;
    let srcs = box_addresses(l, buf, &b)?;
    let p = issuing_thread(l, None)?;
    let op = format!("cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group");
    for (origin, src) in b.boxes.iter().zip(srcs) {
        let c = box_coords(l, coords, origin)?;
        l.b.emit(instr(op.clone()).guard(p).srcs((Operand::TensorAddr { map, coords: c }, mem(src))));
    }
    l.b.emit(instr("cp.async.bulk.commit_group").guard(p));
    Ok(())
}

/// `tma_store_wait {pending}`: the issuing thread waits until at most `pending` bulk groups still read shared
/// memory; the barrier analysis puts a CTA barrier between that wait and the next write of the buffer.
pub(crate) fn store_wait(l: &mut Lower, pending: u32, writes: bool) -> Result<(), CompileError> {
    need_tma(l)?;
    let p = issuing_thread(l, None)?;
    // `.read`: until the bulk groups have read their shared memory; without it, until their writes are done.
    let op = if writes { "cp.async.bulk.wait_group" } else { "cp.async.bulk.wait_group.read" };
    l.b.emit(instr(op).guard(p).srcs(pending));
    Ok(())
}
