//! `local_alloc`, `local_store`, `local_load`: a distributed tensor into and out of a shared-memory buffer.
//!
//! A memdesc value is lowered to the 32-bit shared-window address of its buffer (the allocator's offset from
//! `global_smem`). Register `r` of thread (lane, warp) holds the element at `D(r, lane, warp)`, which the
//! buffer keeps at offset `S⁻¹(D(r, lane, warp))`: the composition `S⁻¹ ∘ D` (`invert_and_compose`) is a
//! linear map from the thread's registers and id to offsets, so each access is the XOR of a per-thread part
//! (computed once, from `%tid`) and a per-register constant. Runs of registers at consecutive offsets become
//! vector accesses of up to 16 bytes; 16-bit maps in the 8×8 matrix pattern (mma operands and accumulators) move
//! by `ldmatrix` and `stmatrix` instead ([`super::matrix`]).

use tessel_layouts::LinearLayout;
use tessel_tile::ir::{OpData, ValueId};
use tessel_tile::layout::shared_access::{self, reg_offset};
use tessel_tile::ops::Op;

use super::coords::{bases, layout_of};
use super::matrix::{self, Matrices, Orientation};
use super::shared::{Addresses, ld_vec, pack};
use super::{Lower, class_of};
use crate::CompileError;
use crate::ptx::{Operand, Reg, RegClass, sym};

/// The map from (register, lane, warp) of `dist` to the buffer offset (in elements) of `shared`. A buffer spread
/// over the CTAs of a cluster is one CTA's part here (`cluster_local`), smaller than the logical tensor; the
/// register tensor then holds the same part in each CTA (checked before lowering), so its per-CTA part, without
/// the `block` bases, meets it.
pub(crate) fn offsets(dist: &LinearLayout, shared: &LinearLayout) -> Result<LinearLayout, CompileError> {
    let sizes = |l: &LinearLayout| l.out_dim_names().iter().map(|d| l.out_dim_size(d.as_str())).collect::<Vec<_>>();
    let spread = |l: &LinearLayout| l.has_in_dim("block") && l.in_dim_size("block") > 1;
    if dist.has_in_dim("block") && !spread(shared) && sizes(dist) != sizes(shared) {
        let ins = dist.in_dims().map(|d| {
            let b = if d.as_str() == "block" {
                vec![]
            } else {
                dist.bases(d.as_str()).iter().map(|b| b.to_vec()).collect()
            };
            (d.to_string(), b)
        });
        let outs = shared.out_dim_names().into_iter().map(|d| (d.to_string(), shared.out_dim_size(d.as_str())));
        let part = LinearLayout::new(ins, outs).map_err(|e| {
            CompileError::new(format!("the register tensor does not hold one CTA's part of the buffer: {e}"))
        })?;
        return shared_access::offsets(&part, shared).map_err(CompileError::from);
    }
    shared_access::offsets(dist, shared).map_err(CompileError::from)
}

/// How many registers move per access: the contiguous run of the map, except that 8-bit elements, which live
/// one per 16-bit register, move one at a time when they go through registers one by one (`cp.async` copies
/// memory to memory and takes whole runs; `write` packs up to four bytes a store).
fn vector_width(map: &LinearLayout, n: u32, elem_bytes: u32, through_registers: bool) -> u32 {
    if elem_bytes == 1 && through_registers {
        return 1;
    }
    shared_access::contiguous_run(map, n, elem_bytes)
}

/// Per-run addresses: `(first register, run length, address operand)`.
pub(crate) fn accesses(
    l: &mut Lower,
    map: &LinearLayout,
    n: u32,
    elem_bytes: u32,
    base: Reg,
    max_vec: u32,
    through_registers: bool,
) -> Vec<(u32, u32, Operand)> {
    let offset_part = |dim: &str| bases(map, dim).iter().map(|b| b[0]).collect::<Vec<u32>>();
    let mut addrs = Addresses::new(l, offset_part("lane"), offset_part("warp"), base, elem_bytes);
    let v = vector_width(map, n, elem_bytes, through_registers).min(max_vec);
    (0..n).step_by(v as usize).map(|r0| (r0, v, addrs.of(l, reg_offset(map, r0)))).collect()
}

/// Bits one element occupies in shared memory.
fn elem_bits(l: &Lower, v: ValueId) -> u32 {
    l.f.ty(v).memdesc().map_or(32, |(_, e, _)| e.bits())
}

/// Writes tensor `x` into buffer `mem` at address `base`.
fn write(l: &mut Lower, x: ValueId, mem: ValueId, base: Reg) -> Result<(), CompileError> {
    let (_, _, shared) = l.f.ty(mem).memdesc().expect("verified: a memdesc");
    let map = offsets(layout_of(l.f.ty(x))?, &shared.linear)?;
    let bits = elem_bits(l, mem);
    let regs = l.get(x)?.to_vec();
    if bits == 16
        && l.arch.has_stmatrix()
        && let Some(m) = Matrices::of(&map, regs.len() as u32).filter(|m| m.orientation == Orientation::Plain)
    {
        matrix::stmatrix(l, &m, &map, &regs, base);
        return Ok(());
    }
    // 8-bit elements store up to four at a time, packed from the words they sit in (`bytes`).
    let (max_vec, one_by_one) = if bits == 8 { (4, false) } else { (u32::MAX, true) };
    for (r0, v, addr) in accesses(l, &map, regs.len() as u32, bits.div_ceil(8), base, max_vec, one_by_one) {
        let vals = &regs[r0 as usize..(r0 + v) as usize];
        if bits == 8 {
            match v {
                1 => l.b.effect("st.shared.b8", (addr, vals[0])),
                2 => {
                    let h = l.pack_bytes16(vals);
                    l.b.effect("st.shared.b16", (addr, h));
                }
                _ => {
                    let w = l.pack_bytes(vals);
                    l.b.effect("st.shared.b32", (addr, w));
                }
            }
            continue;
        }
        let (ty, operand) = pack(l, vals, bits);
        l.b.effect(format!("st.shared{ty}"), (addr, operand));
    }
    Ok(())
}

pub(crate) fn alloc(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let v = data.results[0];
    let offset = l.alloc.buffer(v).ok_or_else(|| CompileError::new(format!("buffer {v} was not allocated")))?.offset;
    // The buffer's address is a constant of the kernel: computed once, at the entry.
    l.b.set_prologue(true);
    let base = l.b.reg(RegClass::B32);
    l.b.op("mov.u32", base, sym("global_smem"));
    if offset != 0 {
        l.b.op("add.u32", base, (base, offset));
    }
    l.b.set_prologue(false);
    l.entry_regs.insert(base);
    l.vals.insert(v, vec![base]);
    if let Some(&x) = data.operands.first() {
        write(l, x, v, base)?;
    }
    Ok(())
}

/// `memdesc_permute`, `memdesc_reshape`, `memdesc_slice`, `memdesc_reinterpret`: the same bytes under another
/// layout (the result type's), a slice from its first element on (at the entry when the buffer's address is computed there).
pub(crate) fn view(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (src, v) = (data.operands[0], data.results[0]);
    let base = l.get(src)?[0];
    let Op::MemDescSlice { dim, start } = data.op else {
        l.vals.insert(v, vec![base]);
        return Ok(());
    };
    if l.f.ty(src).is_tmem() {
        // A tensor-memory address is `lane << 16 | column`: the slice starts `cols` columns on.
        let (_, cols) = tessel_tile::tmem_types::slice_layout(l.f.ty(src), start, l.f.ty(v).shape()[1])
            .map_err(CompileError::new)?;
        let at = l.b.reg(RegClass::B32);
        l.b.op("add.u32", at, (base, cols));
        l.vals.insert(v, vec![at]);
        return Ok(());
    }
    let (_, elem, layout) = l.f.ty(src).memdesc().expect("verified: a memdesc");
    let length = l.f.ty(v).shape()[dim as usize];
    let (_, offset) = tessel_tile::layout::shared_views::slice(layout, dim as usize, start, length)?;
    let bytes = offset * elem.bytes();
    if bytes == 0 {
        l.vals.insert(v, vec![base]);
        return Ok(());
    }
    let hoist = l.entry_regs.contains(&base);
    l.b.set_prologue(hoist);
    let at = l.b.reg(RegClass::B32);
    l.b.op("add.u32", at, (base, bytes));
    l.b.set_prologue(false);
    if hoist {
        l.entry_regs.insert(at);
    }
    l.vals.insert(v, vec![at]);
    Ok(())
}

pub(crate) fn store(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (x, mem) = (data.operands[0], data.operands[1]);
    let base = l.get(mem)?[0];
    write(l, x, mem, base)
}

pub(crate) fn load(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (mem, v) = (data.operands[0], data.results[0]);
    let base = l.get(mem)?[0];
    let (_, _, shared) = l.f.ty(mem).memdesc().expect("verified: a memdesc");
    let map = offsets(layout_of(l.f.ty(v))?, &shared.linear)?;
    let bits = elem_bits(l, mem);
    let class = class_of(l.elem_of(v)?)?;
    let n = l.num_regs(l.f.ty(v))? as u32;
    let as_class = |l: &mut Lower, d: Reg| {
        if d.class == class {
            d
        } else {
            let c = l.b.reg(class);
            l.b.op(format!("mov.b{bits}"), c, d);
            c
        }
    };
    // Registers in an 8×8 matrix pattern (an mma.sync operand read from its swizzled ring) take one `ldmatrix`
    // per four matrices, where vector loads would take one per 32-bit word.
    if bits == 16
        && let Some(m) = Matrices::of(&map, n)
    {
        let words = matrix::ldmatrix(l, &m, &map, n, base);
        let out = words.into_iter().map(|d| as_class(l, d)).collect();
        l.vals.insert(v, out);
        return Ok(());
    }
    let mut out = Vec::with_capacity(n as usize);
    for (_, len, addr) in accesses(l, &map, n, bits.div_ceil(8), base, u32::MAX, true) {
        if bits == 8 {
            let d = l.b.reg(RegClass::B16);
            l.b.op("ld.shared.b8", d, addr);
            out.push(d);
            continue;
        }
        for d in ld_vec(l, addr, len, bits) {
            out.push(as_class(l, d));
        }
    }
    l.vals.insert(v, out);
    Ok(())
}
