//! Global memory: `addptr`, vectorized and predicated `load`/`store`, atomics.
//!
//! Vector width: the run of a thread's registers along one tensor dim that the layout makes consecutive
//! (register bases `1, 2, 4...` along that dim, no other basis touching the low bits), bounded by the axis
//! analysis of the pointer tensor (contiguity; divisibility in bytes, which includes the 16-byte alignment of
//! `divisible_by_16` kernel arguments), by the constancy of the mask, and by 16 bytes per access.

use tessel_tile::ir::OpData;
use tessel_tile::ops::{AtomicOp, Const};
use tessel_tile::types::{Elem, ScalarType, Type};

use super::arith::{map_regs, ty};
use super::coords::{bases, flatten, layout_of, reg_coords};
use super::shared::{ld_shared, slot_bytes, st_shared};
use super::{Lower, class_of};
use crate::CompileError;
use crate::ptx::{Instr, Operand, Reg, RegClass, instr, mem, vector};

pub(crate) fn addptr(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let Some(Elem::Ptr(pointee, _)) = l.f.ty(data.results[0]).elem() else {
        return Err(CompileError::new("addptr on a non-pointer"));
    };
    let bytes = pointee.bytes();
    let off = l.scalar_of(data.operands[1])?;
    // Each distinct offset register is scaled to bytes once: a splatted offset (a loop's running offset, see
    // `tessel_tile::passes::reassociate_pointer_inductions`) is one multiply for the whole tensor.
    let mut scaled: Vec<(Reg, Reg)> = Vec::new();
    map_regs(l, data, |l, a| {
        let t = match scaled.iter().find(|(o, _)| *o == a[1]) {
            Some(&(_, t)) => t,
            None => {
                let t = l.b.reg(RegClass::B64);
                match off {
                    ScalarType::I32 | ScalarType::U32 => l.b.op(format!("mul.wide.{}", ty(off)), t, (a[1], bytes)),
                    // A shift, not `mul.lo.s64`: ptxas folds the multiply into a 64-bit multiply-add per
                    // address and schedules those ahead of the loop body (in the pipelined matmul, in front of
                    // the MMAs; measured 4% slower on the H200), while a shifted offset stays one uniform
                    // register added where each address is used.
                    ScalarType::I64 | ScalarType::U64 => l.b.op("shl.b64", t, (a[1], bytes.trailing_zeros())),
                    other => {
                        return Err(CompileError::new(format!("addptr offsets of type {other} are not supported")));
                    }
                }
                scaled.push((a[1], t));
                t
            }
        };
        let d = l.b.reg(RegClass::B64);
        l.b.op("add.s64", d, (a[0], t));
        Ok(d)
    })
}

/// Elements per access for the memory op on `ptr` (with optional `mask`): see
/// [`tessel_tile::layout::axis::AxisAnalysis::access_width`], which the pipeliner asks too.
pub(crate) fn vector_width(
    l: &Lower,
    ptr: tessel_tile::ir::ValueId,
    mask: Option<tessel_tile::ir::ValueId>,
    eb: u32,
) -> u32 {
    l.axis.access_width(l.f, ptr, mask, eb)
}

fn cache_suffix(c: &str, load: bool) -> Result<&'static str, CompileError> {
    Ok(match (c, load) {
        ("", _) => "",
        ("ca", true) => ".ca",
        ("cg", _) => ".cg",
        ("cs", _) => ".cs",
        ("cv", true) => ".cv",
        ("wb", false) => ".wb",
        ("wt", false) => ".wt",
        (other, _) => return Err(CompileError::new(format!("cache modifier `{other}` is not supported"))),
    })
}

/// How registers of one access are moved: the number of machine words and their width in bits. 16-bit
/// elements travel in pairs per `.b32` word; bytes in fours per `.b32` word (or a `.b16` pair, or alone).
fn words(eb: u32, vec: u32) -> (u32, u32) {
    let total = eb * vec;
    match eb {
        1 if vec >= 4 => (total / 4, 32),
        1 => (1, 8 * vec),
        2 if vec >= 2 => (total / 4, 32),
        _ => (vec, eb * 8),
    }
}

fn vsuffix(n: u32) -> String {
    if n == 1 { String::new() } else { format!(".v{n}") }
}

/// One register, or the `{...}` vector of several.
fn braces(rs: &[Reg]) -> Operand {
    if rs.len() == 1 { rs[0].into() } else { vector(rs) }
}

/// The PTX type of a memory word of `bits` (bytes go through 16-bit registers as `.u8`).
fn word_ty(bits: u32) -> String {
    if bits == 8 { ".u8".into() } else { format!(".b{bits}") }
}

fn word_class(bits: u32) -> RegClass {
    match bits {
        8 | 16 => RegClass::B16,
        32 => RegClass::B32,
        _ => RegClass::B64,
    }
}

/// Whether elements of `s` are their own memory words of `wbits` (no packing).
fn direct(s: ScalarType, wbits: u32) -> bool {
    s != ScalarType::I1 && s.bits() == wbits
}

/// A byte element (i1 as 0/1) zero-extended to 32 bits.
fn byte_u32(l: &mut Lower, e: Reg) -> Reg {
    let t = l.b.reg(RegClass::B32);
    if e.class == RegClass::Pred {
        l.b.op("selp.u32", t, (1, 0, e));
    } else {
        l.b.op("cvt.u32.u16", t, e);
    }
    t
}

/// Element registers of type `s` as the memory words of `wbits` bits they occupy (lower addresses in lower
/// bits: little endian).
fn pack(l: &mut Lower, elems: &[Reg], s: ScalarType, wbits: u32) -> Vec<Reg> {
    if direct(s, wbits) {
        return elems.to_vec();
    }
    let per = (wbits / 8 / s.bytes()) as usize;
    elems
        .chunks(per)
        .map(|c| {
            if s.bytes() == 2 {
                let w = l.b.reg(RegClass::B32);
                l.b.op("mov.b32", w, vector(&[c[0], c[1]]));
                return w;
            }
            if wbits == 8 {
                // One byte: a 16-bit register whose low byte is stored.
                return if c[0].class == RegClass::Pred {
                    let h = l.b.reg(RegClass::B16);
                    l.b.op("selp.u16", h, (1, 0, c[0]));
                    h
                } else {
                    c[0]
                };
            }
            let mut w = byte_u32(l, c[0]);
            for (k, &e) in c.iter().enumerate().skip(1) {
                let t = byte_u32(l, e);
                let n = l.b.reg(RegClass::B32);
                l.b.op("bfi.b32", n, (t, w, 8 * k, 8));
                w = n;
            }
            if wbits == 16 {
                let h = l.b.reg(RegClass::B16);
                l.b.op("cvt.u16.u32", h, w);
                h
            } else {
                w
            }
        })
        .collect()
}

/// The inverse of [`pack`]: element registers of `s` (8-bit integers extended, i1 true for a nonzero byte as
/// Triton loads it) from memory words of `wbits` bits.
fn unpack(l: &mut Lower, words: &[Reg], s: ScalarType, wbits: u32) -> Vec<Reg> {
    if direct(s, wbits) && s.bits() != 8 {
        return words.to_vec();
    }
    let class = super::class_of(Elem::Scalar(s)).expect("a scalar class");
    let mut out = Vec::new();
    for &w in words {
        if s.bytes() == 2 {
            let (a, b) = (l.b.reg(class), l.b.reg(class));
            l.b.op("mov.b32", vector(&[a, b]), w);
            out.extend([a, b]);
            continue;
        }
        if wbits == 8 {
            out.push(byte_elem(l, w, s));
            continue;
        }
        let w32 = if wbits == 16 {
            let t = l.b.reg(RegClass::B32);
            l.b.op("cvt.u32.u16", t, w);
            t
        } else {
            w
        };
        for k in 0..wbits / 8 {
            // i8 extracts sign-extended; the truncation to 16 bits keeps it so.
            let t = l.b.reg(RegClass::B32);
            let sign = if s == ScalarType::I8 { "s" } else { "u" };
            l.b.op(format!("bfe.{sign}32"), t, (w32, 8 * k, 8));
            if s == ScalarType::I1 {
                let p = l.b.reg(RegClass::Pred);
                l.b.op("setp.ne.u32", p, (t, 0));
                out.push(p);
            } else {
                let h = l.b.reg(RegClass::B16);
                l.b.op("cvt.u16.u32", h, t);
                out.push(h);
            }
        }
    }
    out
}

/// A zero-extended byte in a 16-bit register (a `.u8` load) as an element of `s`.
fn byte_elem(l: &mut Lower, h: Reg, s: ScalarType) -> Reg {
    match s {
        ScalarType::I1 => {
            let p = l.b.reg(RegClass::Pred);
            l.b.op("setp.ne.u16", p, (h, 0));
            p
        }
        ScalarType::I8 => super::cast::canon8(l, h, s),
        _ => h,
    }
}

pub(crate) fn load(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let tessel_tile::ops::Op::Load { cache, volatile, .. } = &data.op else { unreachable!() };
    let v = data.results[0];
    let s = l.scalar_of(v)?;
    let eb = s.bytes();
    let ptrs = l.get(data.operands[0])?.to_vec();
    let mask = data.operands.get(1).copied();
    let masks = mask.map(|m| l.get(m).map(|r| r.to_vec())).transpose()?;
    let other = match (data.operands.get(2), &masks) {
        (Some(&o), _) => l.get(o)?.to_vec(),
        // Masked-off elements without `other` read as 0 (Triton leaves them undefined).
        (None, Some(_)) => vec![l.const_reg(Const::Int(0), Elem::Scalar(s))?; ptrs.len()],
        (None, None) => Vec::new(),
    };
    let vec = vector_width(l, data.operands[0], mask, eb);
    let qual = if *volatile { ".volatile".to_string() } else { String::new() };
    let cs = if *volatile { "" } else { cache_suffix(cache, true)? };
    let (nw, wbits) = words(eb, vec);
    let mut out: Vec<Reg> = Vec::with_capacity(ptrs.len());
    for g in 0..ptrs.len() / vec as usize {
        let r0 = g * vec as usize;
        // Duplicate registers (a zero register basis) repeat an earlier group: reuse it.
        if let Some(prev) = (0..r0).step_by(vec as usize).find(|&p| ptrs[p] == ptrs[r0]) {
            let copy: Vec<Reg> = out[prev..prev + vec as usize].to_vec();
            out.extend(copy);
            continue;
        }
        let pred = masks.as_ref().map(|m| m[r0]);
        // Unpacked words are the elements themselves: give them the element's register class.
        let wclass = if direct(s, wbits) { super::class_of(Elem::Scalar(s))? } else { word_class(wbits) };
        let ws: Vec<Reg> = (0..nw).map(|_| l.b.reg(wclass)).collect();
        if pred.is_some() {
            // Masked-off lanes keep `other`: the words start out holding it.
            let init = pack(l, &other[r0..r0 + vec as usize], s, wbits);
            for (w, i) in ws.iter().zip(init) {
                l.b.op(format!("mov.b{}", w.class.bits()), w, i);
            }
        }
        let wt = word_ty(wbits);
        let op = format!("ld{qual}.global{cs}{}{wt}", vsuffix(nw));
        l.b.emit(instr(op).when(pred).dst(braces(&ws)).src(mem(ptrs[r0])));
        out.extend(unpack(l, &ws, s, wbits));
    }
    l.vals.insert(v, out);
    Ok(())
}

pub(crate) fn store(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let tessel_tile::ops::Op::Store { cache, .. } = &data.op else { unreachable!() };
    let s = l.scalar_of(data.operands[1])?;
    let eb = s.bytes();
    let ptrs = l.get(data.operands[0])?.to_vec();
    let vals = l.get(data.operands[1])?.to_vec();
    let mask = data.operands.get(2).copied();
    let masks = mask.map(|m| l.get(m).map(|r| r.to_vec())).transpose()?;
    let vec = vector_width(l, data.operands[0], mask, eb);
    let cs = cache_suffix(cache, false)?;
    let (nw, wbits) = words(eb, vec);
    // Elements held by several threads (a scalar, or lane/warp/CTA broadcast) are written by one of them.
    let owner = global_owner_pred(l, &l.f.ty(data.operands[1]).clone())?;
    for g in 0..ptrs.len() / vec as usize {
        let r0 = g * vec as usize;
        if (0..r0).step_by(vec as usize).any(|p| ptrs[p] == ptrs[r0]) {
            continue;
        }
        let pred = match (owner, masks.as_ref().map(|m| m[r0])) {
            (Some(o), Some(m)) => {
                let p = l.b.reg(RegClass::Pred);
                l.b.op("and.pred", p, (o, m));
                Some(p)
            }
            (o, m) => o.or(m),
        };
        let ws = pack(l, &vals[r0..r0 + vec as usize], s, wbits);
        let wt = word_ty(wbits);
        let op = format!("st.global{cs}{}{wt}", vsuffix(nw));
        l.b.emit(instr(op).when(pred).srcs((mem(ptrs[r0]), braces(&ws))));
    }
    Ok(())
}

/// A predicate true in exactly one of the threads of the CTA holding each element (lane/warp bits with a zero
/// basis must be 0), or `None` when no element is replicated across threads: for effects on the CTA's own shared
/// memory, which every CTA of a cluster makes for itself.
pub(crate) fn owner_pred(l: &mut Lower, ty: &Type) -> Result<Option<Reg>, CompileError> {
    owner_pred_in(l, ty, false)
}

/// [`owner_pred`] for effects on global memory (stores, atomics, prints): in a cluster, also one CTA of those
/// holding the element (the CTA rank's bits with a zero block basis must be 0; a layout without CTA bases is held
/// by every CTA).
pub(crate) fn global_owner_pred(l: &mut Lower, ty: &Type) -> Result<Option<Reg>, CompileError> {
    owner_pred_in(l, ty, true)
}

fn owner_pred_in(l: &mut Lower, ty: &Type, across_ctas: bool) -> Result<Option<Reg>, CompileError> {
    let ctas = l.f.config.num_ctas;
    let zero_bits = |lin: &tessel_layouts::LinearLayout, dim: &str| {
        bases(lin, dim).iter().enumerate().filter(|(_, b)| b.iter().all(|&x| x == 0)).fold(0u32, |a, (i, _)| a | 1 << i)
    };
    let (lane_mask, warp_mask, cta_mask) = match ty {
        Type::Scalar(_) => (31u32, l.num_warps - 1, ctas - 1),
        _ => {
            let lin = layout_of(ty)?;
            let cta = zero_bits(&super::coords::over_ctas(lin, ctas), "block");
            (zero_bits(lin, "lane"), zero_bits(lin, "warp"), cta)
        }
    };
    let mask = lane_mask | warp_mask << 5;
    let thread = (mask != 0).then(|| {
        let (t, p) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
        l.b.op("and.b32", t, (l.tid, mask));
        l.b.op("setp.eq.u32", p, (t, 0));
        p
    });
    if !across_ctas || cta_mask == 0 {
        return Ok(thread);
    }
    let rank = l.cta_rank();
    let (t, p) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
    l.b.op("and.b32", t, (rank, cta_mask));
    l.b.op("setp.eq.u32", p, (t, 0));
    Ok(Some(match thread {
        None => p,
        Some(q) => {
            let both = l.b.reg(RegClass::Pred);
            l.b.op("and.pred", both, (p, q));
            both
        }
    }))
}

fn sem_scope(sem: &str, scope: &str) -> Result<String, CompileError> {
    let sem = match sem {
        "" | "acq_rel" => "acq_rel",
        "acquire" | "release" | "relaxed" => sem,
        other => return Err(CompileError::new(format!("atomic semantic `{other}` is not supported"))),
    };
    let scope = match scope {
        "" | "gpu" => "gpu",
        "cta" | "sys" => scope,
        other => return Err(CompileError::new(format!("atomic scope `{other}` is not supported"))),
    };
    Ok(format!(".{sem}.{scope}"))
}

/// Builds the `atom` instruction for element `i` into register `d` from the operands' registers.
type AtomText<'a> = dyn Fn(usize, Reg, &[Vec<Reg>]) -> Instr + 'a;

/// Shared by `atomic` and `atomic_cas`: per element, one owning thread issues `atom`.
fn atomic_common(l: &mut Lower, data: &OpData, mask_index: Option<usize>, emit: &AtomText) -> Result<(), CompileError> {
    let v = data.results[0];
    let ty_v = l.f.ty(v).clone();
    let owner = global_owner_pred(l, &ty_v)?;
    let class = class_of(ty_v.elem().unwrap())?;
    let ptrs = l.get(data.operands[0])?.to_vec();
    let ops: Vec<Vec<Reg>> = data.operands.iter().map(|&o| l.get(o).map(|r| r.to_vec())).collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for i in 0..ptrs.len() {
        if let Some(j) = (0..i).find(|&j| ptrs[j] == ptrs[i]) {
            let prev = out[j];
            out.push(prev);
            continue;
        }
        let mut pred = owner;
        if let Some(mi) = mask_index.filter(|&mi| mi < ops.len()) {
            let m = ops[mi][i];
            pred = Some(match pred {
                None => m,
                Some(o) => {
                    let p = l.b.reg(RegClass::Pred);
                    l.b.op("and.pred", p, (o, m));
                    p
                }
            });
        }
        let d = l.b.reg(class);
        let zero = l.const_reg(Const::Int(0), ty_v.elem().unwrap())?;
        l.b.op(format!("mov.b{}", class.bits()), d, zero);
        l.b.emit(emit(i, d, &ops).when(pred));
        out.push(d);
    }
    if let Some(owner) = owner.filter(|_| l.f.use_counts()[v.index()] > 0) {
        out = broadcast_from_owners(l, &ty_v, &out, owner)?;
    }
    l.vals.insert(v, out);
    Ok(())
}

/// Gives every thread holding an element the value its owning thread got (the old value an atomic returned):
/// owners store to shared memory at the element's row-major index, a barrier, everyone loads, a barrier (so
/// the next user of shared memory may start at offset 0). This is how a scalar `atomic_cas` spin lock sees
/// one answer in the whole program.
fn broadcast_from_owners(l: &mut Lower, ty: &Type, regs: &[Reg], owner: Reg) -> Result<Vec<Reg>, CompileError> {
    let class = class_of(ty.elem().unwrap())?;
    let bytes = slot_bytes(class);
    let (flat_thread, flat_regs): (Option<Reg>, Vec<u32>) = match ty {
        Type::Scalar(_) => (None, vec![0]),
        _ => {
            let lin = layout_of(ty)?.clone();
            let shape = ty.shape().to_vec();
            let flat = |b: &Vec<u32>| flatten(b, &shape);
            let t = l.thread_xor(
                bases(&lin, "lane").iter().map(flat).collect(),
                bases(&lin, "warp").iter().map(flat).collect(),
            );
            (t, (0..regs.len() as u32).map(|r| flatten(&reg_coords(&lin, r), &shape)).collect())
        }
    };
    let numel: u32 = ty.shape().iter().product::<u32>().max(1);
    l.b.comment("atomic: broadcast the owners' old values through shared memory");
    let base = l.scratch(numel * bytes)?;
    let addrs: Vec<Reg> = flat_regs
        .iter()
        .map(|&c| {
            let idx = l.xor_const(flat_thread, c, 0);
            let a = l.b.reg(RegClass::B32);
            l.b.op("mad.lo.u32", a, (idx, bytes, base));
            a
        })
        .collect();
    let label = l.b.new_label("atomic_bcast");
    l.b.emit(Instr::bra(&label).unless(owner));
    for (&a, &r) in addrs.iter().zip(regs) {
        st_shared(l, a, r);
    }
    l.b.label(&label);
    l.barrier();
    let out = addrs.iter().map(|&a| ld_shared(l, a, class)).collect();
    l.barrier();
    Ok(out)
}

pub(crate) fn atomic(l: &mut Lower, data: &OpData, op: AtomicOp, sem: &str, scope: &str) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    let ss = sem_scope(sem, scope)?;
    let (w, t) = match (op, s) {
        (AtomicOp::Add, ScalarType::F32 | ScalarType::F64) => ("add", ty(s).to_string()),
        (AtomicOp::Add, ScalarType::F16) => ("add.noftz", "f16".to_string()),
        // `atom.add.noftz.bf16` is sm_90's (PTX ISA 7.8); sm_80 has no 16-bit bfloat16 atomic to build on.
        (AtomicOp::Add, ScalarType::BF16) if l.arch == tessel_tile::Target::Sm80 => {
            return Err(CompileError::new(
                "`atomic_add` on bfloat16 needs sm_90 or newer (atom.add.noftz.bf16); on sm_80 add in float32",
            ));
        }
        (AtomicOp::Add, ScalarType::BF16) => ("add.noftz", "bf16".to_string()),
        (AtomicOp::Add, ScalarType::I32 | ScalarType::U32) => ("add", "u32".to_string()),
        (AtomicOp::Add, ScalarType::I64 | ScalarType::U64) => ("add", "u64".to_string()),
        (AtomicOp::Max | AtomicOp::Min, ScalarType::I32 | ScalarType::U32 | ScalarType::I64 | ScalarType::U64) => {
            (if op == AtomicOp::Max { "max" } else { "min" }, ty(s).to_string())
        }
        (AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Xchg, _) if s.is_int() && s.bits() >= 32 => {
            let w = match op {
                AtomicOp::And => "and",
                AtomicOp::Or => "or",
                AtomicOp::Xor => "xor",
                _ => "exch",
            };
            (w, format!("b{}", s.bits()))
        }
        (AtomicOp::Xchg, ScalarType::F32 | ScalarType::F64) => ("exch", format!("b{}", s.bits())),
        _ => return Err(CompileError::new(format!("atomic `{}` on {s} is not supported yet", op.word()))),
    };
    let op = format!("atom{ss}.global.{w}.{t}");
    atomic_common(l, data, Some(2), &|i, d, ops| instr(op.clone()).dst(d).srcs((mem(ops[0][i]), ops[1][i])))
}

pub(crate) fn atomic_cas(l: &mut Lower, data: &OpData, sem: &str, scope: &str) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    if s.bits() < 32 {
        return Err(CompileError::new(format!("atomic_cas on {s} is not supported yet")));
    }
    let ss = sem_scope(sem, scope)?;
    let b = s.bits();
    let op = format!("atom{ss}.global.cas.b{b}");
    atomic_common(l, data, None, &|i, d, ops| instr(op.clone()).dst(d).srcs((mem(ops[0][i]), ops[1][i], ops[2][i])))
}
