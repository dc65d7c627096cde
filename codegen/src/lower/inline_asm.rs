//! `inline_asm` (Triton's `inline_asm_elementwise`): the author's PTX, instantiated once per `pack` elements
//! of each thread's registers, with `$n` replaced by registers.
//!
//! As in Triton, operands are numbered outputs first (result by result), then inputs (argument by argument);
//! elements narrower than 32 bits are packed into 32-bit registers, `min(32 / bits, pack)` to a register with
//! the first element in the low bits, so each operand contributes `pack / per_register` registers per
//! instance. The constraint letter of each says its register type (`h` 16-bit, `r` 32-bit, `l` 64-bit, `f`
//! f32, `d` f64; `c` an 8-bit value in a 16-bit register); a value of another type of the same width is
//! moved across, and a 16-bit value widens to (or narrows from) a 32-bit operand.

use tessel_tile::ir::OpData;
use tessel_tile::ops::Op;
use tessel_tile::types::{Elem, ScalarType};

use super::{Lower, class_of};
use crate::CompileError;
use crate::ptx::{Reg, RegClass, vector};

/// The register class a constraint letter asks for.
fn constraint_class(c: &str) -> Result<RegClass, CompileError> {
    Ok(match c {
        "h" | "c" => RegClass::B16,
        "r" => RegClass::B32,
        "l" => RegClass::B64,
        "f" => RegClass::F32,
        "d" => RegClass::F64,
        other => {
            return Err(CompileError::new(format!(
                "inline_asm constraint `{other}` is not supported (use h, r, l, f, d or c)"
            )));
        }
    })
}

/// One operand of one instance: the element registers it carries (in element order) and their type.
struct Operand {
    elems: Vec<Reg>,
    elem: ScalarType,
}

/// Elements of `s` per asm register, for a pack of `pack`.
fn per_register(s: ScalarType, pack: u32) -> u32 {
    (32 / s.bits()).clamp(1, pack)
}

pub(crate) fn lower(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let Op::InlineAsm { asm, constraints, pack, .. } = &data.op else { unreachable!("not inline_asm") };
    let pack = *pack as usize;
    let scalar = |l: &Lower, v| -> Result<ScalarType, CompileError> {
        match l.f.ty(v).elem() {
            Some(Elem::Scalar(ScalarType::I1)) | Some(Elem::Ptr(..)) | None => {
                Err(CompileError::new(format!("inline_asm on `{}` values is not supported (numbers only)", l.f.ty(v))))
            }
            Some(Elem::Scalar(s)) => Ok(s),
        }
    };
    let n = match data.results.first() {
        Some(&r) => l.num_regs(l.f.ty(r))?,
        None => return Ok(()),
    };
    if n % pack != 0 {
        return Err(CompileError::new(format!(
            "inline_asm with pack = {pack}: each thread holds {n} element(s) of the result's layout, not a multiple \
             of the pack (use a larger tensor or a smaller pack)"
        )));
    }
    let outs: Vec<ScalarType> = data.results.iter().map(|&r| scalar(l, r)).collect::<Result<_, _>>()?;
    let ins: Vec<(ScalarType, Vec<Reg>)> =
        data.operands.iter().map(|&v| Ok((scalar(l, v)?, l.get(v)?.to_vec()))).collect::<Result<_, CompileError>>()?;
    // The constraints, outputs first; clobbers (`~{...}`) do not name operands.
    let cons: Vec<&str> =
        constraints.split(',').map(str::trim).filter(|c| !c.is_empty() && !c.starts_with('~')).collect();
    let regs_per = |s: ScalarType| pack / per_register(s, pack as u32) as usize;
    let want_out: usize = outs.iter().map(|&s| regs_per(s)).sum();
    let want_in: usize = ins.iter().map(|(s, _)| regs_per(*s)).sum();
    let (out_cons, in_cons) = cons.split_at(cons.iter().take_while(|c| c.starts_with('=')).count());
    if out_cons.len() != want_out || in_cons.len() != want_in {
        return Err(CompileError::new(format!(
            "inline_asm constraints `{constraints}` name {} output(s) and {} input(s); with pack = {pack} the op needs \
             {want_out} output(s) and {want_in} input(s) (elements under 32 bits share 32-bit registers)",
            out_cons.len(),
            in_cons.len()
        )));
    }
    let out_classes: Vec<RegClass> = out_cons
        .iter()
        .map(|c| constraint_class(c.trim_start_matches('=').trim_start_matches('&')))
        .collect::<Result<_, _>>()?;
    let in_classes: Vec<RegClass> = in_cons.iter().map(|c| constraint_class(c)).collect::<Result<_, _>>()?;
    let mut results: Vec<Vec<Reg>> = outs.iter().map(|_| Vec::with_capacity(n)).collect();
    for inst in 0..n / pack {
        let range = inst * pack..(inst + 1) * pack;
        // Inputs: pack registers, convert to the constraint's class.
        let mut in_regs = Vec::new();
        let mut k = 0;
        for (s, regs) in &ins {
            let epr = per_register(*s, pack as u32) as usize;
            for chunk in regs[range.clone()].chunks(epr) {
                let op = Operand { elems: chunk.to_vec(), elem: *s };
                in_regs.push(pack_input(l, &op, in_classes[k])?);
                k += 1;
            }
        }
        let out_regs: Vec<Reg> = out_classes.iter().map(|&c| l.b.reg(c)).collect();
        let mut named = out_regs.clone();
        named.extend(&in_regs);
        let text = substitute(asm, &named)?;
        l.b.asm(text, named);
        // Outputs: unpack into the results' element registers.
        let mut k = 0;
        for (i, &s) in outs.iter().enumerate() {
            let epr = per_register(s, pack as u32) as usize;
            for _ in 0..pack / epr {
                results[i].extend(unpack_output(l, out_regs[k], s, epr)?);
                k += 1;
            }
        }
    }
    for (&r, regs) in data.results.iter().zip(results) {
        l.vals.insert(r, regs);
    }
    Ok(())
}

/// Replaces `$n` in `asm` by `regs[n]`.
fn substitute(asm: &str, regs: &[Reg]) -> Result<String, CompileError> {
    let mut out = String::with_capacity(asm.len());
    let mut chars = asm.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let mut digits = String::new();
        while let Some(&(_, d)) = chars.peek()
            && d.is_ascii_digit()
        {
            digits.push(d);
            chars.next();
        }
        let Ok(i) = digits.parse::<usize>() else {
            return Err(CompileError::new(format!(
                "inline_asm: `$` must be followed by an operand number (`$0`..`${}`) in `{asm}`",
                regs.len().saturating_sub(1)
            )));
        };
        let r = regs.get(i).ok_or_else(|| {
            CompileError::new(format!("inline_asm: `${i}` names no operand ({} operands) in `{asm}`", regs.len()))
        })?;
        out.push_str(&r.to_string());
    }
    Ok(out)
}

/// The register an input operand is passed in: its elements packed (several narrow ones in 32 bits) and
/// moved to `class`.
fn pack_input(l: &mut Lower, op: &Operand, class: RegClass) -> Result<Reg, CompileError> {
    let bits = op.elem.bits();
    let one = if op.elems.len() == 1 {
        op.elems[0]
    } else if bits == 16 {
        let w = l.b.reg(RegClass::B32);
        l.b.op("mov.b32", w, vector(&op.elems));
        w
    } else {
        // 8-bit elements (each in the low byte of a 16-bit register): byte j of the word is element j.
        let w = l.b.reg(RegClass::B32);
        l.b.op("mov.b32", w, 0);
        for (j, &e) in op.elems.iter().enumerate() {
            let t = l.b.reg(RegClass::B32);
            l.b.op("cvt.u32.u16", t, e);
            l.b.op("and.b32", t, (t, 255));
            if j > 0 {
                l.b.op("shl.b32", t, (t, 8 * j as i64));
            }
            l.b.op("or.b32", w, (w, t));
        }
        w
    };
    convert(l, one, class)
}

/// `r` moved to a register of `class`: the same bits when the widths agree, a 16-bit value zero-extended to
/// 32 bits or a 32-bit one truncated to 16.
fn convert(l: &mut Lower, r: Reg, class: RegClass) -> Result<Reg, CompileError> {
    if r.class == class {
        return Ok(r);
    }
    let d = l.b.reg(class);
    match (r.class.bits(), class.bits()) {
        (a, b) if a == b => l.b.op(format!("mov.b{a}"), d, r),
        (16, 32) => {
            let t = l.b.reg(RegClass::B32);
            l.b.op("cvt.u32.u16", t, r);
            if class == RegClass::B32 {
                return Ok(t);
            }
            l.b.op("mov.b32", d, t);
        }
        (32, 16) => {
            let t = if r.class == RegClass::B32 {
                r
            } else {
                let t = l.b.reg(RegClass::B32);
                l.b.op("mov.b32", t, r);
                t
            };
            l.b.op("cvt.u16.u32", d, t);
        }
        (a, b) => {
            return Err(CompileError::new(format!(
                "inline_asm: a {a}-bit value cannot be passed as a {b}-bit operand"
            )));
        }
    }
    Ok(d)
}

/// The element registers an output operand holds (`epr` of them, packed as inputs are).
fn unpack_output(l: &mut Lower, r: Reg, s: ScalarType, epr: usize) -> Result<Vec<Reg>, CompileError> {
    let class = class_of(Elem::Scalar(s))?;
    if epr == 1 {
        if s.bits() == 8 {
            // An 8-bit result lives in the low byte; keep the 16-bit register sign- or zero-extended.
            let w = convert(l, r, RegClass::B32)?;
            let t = l.b.reg(RegClass::B32);
            let bfe = if s.is_signed_int() { "bfe.s32" } else { "bfe.u32" };
            l.b.op(bfe, t, (w, 0, 8));
            return Ok(vec![convert(l, t, class)?]);
        }
        return Ok(vec![convert(l, r, class)?]);
    }
    let w = convert(l, r, RegClass::B32)?;
    if s.bits() == 16 {
        let (a, b) = (l.b.reg(RegClass::B16), l.b.reg(RegClass::B16));
        l.b.op("mov.b32", vector(&[a, b]), w);
        return [a, b].into_iter().map(|h| convert(l, h, class)).collect();
    }
    let bfe = if s.is_signed_int() { "bfe.s32" } else { "bfe.u32" };
    (0..epr)
        .map(|j| {
            let t = l.b.reg(RegClass::B32);
            l.b.op(bfe, t, (w, 8 * j as i64, 8));
            convert(l, t, class)
        })
        .collect()
}
