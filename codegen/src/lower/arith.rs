//! Elementwise ops, register by register: constants, arithmetic, math, comparisons, select, fma, casts.
//! f16/bf16 compute in f32 (widen with `cvt.f32.f16`, narrow with `cvt.rn.f16.f32`), as Triton does for most
//! ops; f32 `add`/`mul` carry `.rn` so ptxas never contracts them into an fma the interpreter would not do.

use tessel_tile::ir::{OpData, ValueId};
use tessel_tile::layout::axis::pow2_div;
use tessel_tile::ops::{BinOp, CmpPred, Const, UnOp};
use tessel_tile::types::{Elem, ScalarType, Type};

use super::{Lower, class_of};
use crate::CompileError;
use crate::ptx::{Reg, RegClass, f32_imm, f64_imm};

use ScalarType::*;

/// The PTX type suffix of a scalar type.
pub(crate) fn ty(s: ScalarType) -> &'static str {
    match s {
        I1 => "pred",
        I8 => "s8",
        U8 => "u8",
        I16 => "s16",
        U16 => "u16",
        I32 => "s32",
        U32 => "u32",
        I64 => "s64",
        U64 => "u64",
        F16 => "f16",
        BF16 => "bf16",
        F32 => "f32",
        F64 => "f64",
        F8E4M3 | F8E5M2 => "b8",
    }
}

fn is_half(s: ScalarType) -> bool {
    matches!(s, F16 | BF16)
}

/// The type arithmetic happens in.
fn compute_ty(s: ScalarType) -> ScalarType {
    if is_half(s) { F32 } else { s }
}

impl Lower<'_> {
    /// `x` (of type `s`) in its compute type.
    pub(crate) fn widen(&mut self, x: Reg, s: ScalarType) -> Reg {
        if !is_half(s) {
            return x;
        }
        let d = self.b.reg(RegClass::F32);
        self.b.ins(format!("cvt.f32.{} {d}, {x}", ty(s)));
        d
    }

    /// `x` (f32) rounded back to the half type `s`.
    pub(crate) fn narrow(&mut self, x: Reg, s: ScalarType) -> Reg {
        if !is_half(s) {
            return x;
        }
        let d = self.b.reg(RegClass::B16);
        self.b.ins(format!("cvt.rn.{}.f32 {d}, {x}", ty(s)));
        d
    }

    /// One scalar constant in a register.
    pub(crate) fn const_reg(&mut self, c: Const, e: Elem) -> Result<Reg, CompileError> {
        let class = class_of(e)?;
        let s = e.scalar().unwrap_or(U64);
        let d = self.b.reg(class);
        let (iv, fv) = match c {
            Const::Int(i) => (i, i as f64),
            Const::Float(f) => (f as i64, f),
        };
        match s {
            I1 => self.b.ins(format!("setp.ne.u32 {d}, {}, 0", (iv != 0) as u32)),
            F32 => self.b.ins(format!("mov.f32 {d}, {}", f32_imm(fv as f32))),
            F64 => self.b.ins(format!("mov.f64 {d}, {}", f64_imm(fv))),
            F16 | BF16 => {
                let t = self.b.reg(RegClass::F32);
                self.b.ins(format!("mov.f32 {t}, {}", f32_imm(fv as f32)));
                self.b.ins(format!("cvt.rn.{}.f32 {d}, {t}", ty(s)));
            }
            _ => self.b.ins(format!("mov.b{} {d}, {iv}", class.bits())),
        }
        Ok(d)
    }
}

pub(crate) fn constant(l: &mut Lower, c: Const, e: Elem, n: usize) -> Result<Vec<Reg>, CompileError> {
    let r = l.const_reg(c, e)?;
    Ok(vec![r; n])
}

/// Applies `f` register by register over the operands and records the result.
pub(crate) fn map_regs(
    l: &mut Lower,
    data: &OpData,
    mut f: impl FnMut(&mut Lower, &[Reg]) -> Result<Reg, CompileError>,
) -> Result<(), CompileError> {
    let v = data.results[0];
    let n = l.num_regs(l.f.ty(v))?;
    let ins: Vec<Vec<Reg>> = data.operands.iter().map(|&o| l.get(o).map(|r| r.to_vec())).collect::<Result<_, _>>()?;
    for r in &ins {
        if r.len() != n {
            return Err(CompileError::new("operands and result have different layouts"));
        }
    }
    // Registers whose elements the axis analysis proves equal share one result (Triton's deduplication by
    // constancy: `cols < N` with N a multiple of 16 is one compare per 8-element vector, not eight).
    let same = constant_register_bits(l, v);
    // Registers that hold the same inputs (broadcast copies) share one result.
    let mut memo: Vec<(Vec<Reg>, Reg)> = Vec::new();
    let mut out: Vec<Reg> = Vec::with_capacity(n);
    for i in 0..n {
        if i & same != 0 {
            out.push(out[i & !same]);
            continue;
        }
        let args: Vec<Reg> = ins.iter().map(|r| r[i]).collect();
        if let Some((_, d)) = memo.iter().find(|(a, _)| *a == args) {
            out.push(*d);
            continue;
        }
        let d = f(l, &args)?;
        memo.push((args, d));
        out.push(d);
    }
    l.vals.insert(v, out);
    Ok(())
}

/// The register-index bits of `v`'s layout that only move an element within an aligned group of equal
/// elements (per the axis analysis's constancy): flipping them never changes the value.
fn constant_register_bits(l: &Lower, v: ValueId) -> usize {
    let (Some(info), Type::Tensor { layout: Some(layout), .. }) = (l.axis.get(v), l.f.ty(v)) else { return 0 };
    let lin = &layout.linear;
    if !lin.has_in_dim("register") {
        return 0;
    }
    // Aligned groups of k nest aligned groups of every power of two dividing k, and XOR with a value below
    // such a power stays inside its group.
    let group: Vec<u64> = info.constancy.iter().map(|&k| pow2_div(k as i64)).collect();
    lin.bases("register")
        .iter()
        .enumerate()
        .filter(|(_, b)| b.iter().zip(&group).all(|(&x, &g)| (x as u64) < g))
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// The scalar binary op `a op b` in type `s` (used by elementwise ops and reduction combine regions).
pub(crate) fn binary_scalar(
    l: &mut Lower,
    op: BinOp,
    nan: bool,
    s: ScalarType,
    a: Reg,
    b: Reg,
) -> Result<Reg, CompileError> {
    let c = compute_ty(s);
    let (a, b) = (l.widen(a, s), l.widen(b, s));
    let class = class_of(Elem::Scalar(c))?;
    let d = l.b.reg(class);
    let t = ty(c);
    let bits = class.bits();
    let unsupported = || Err(CompileError::new(format!("`{}` on {s} is not supported yet", op.word())));
    if c == I1 {
        let w = match op {
            BinOp::And | BinOp::Min | BinOp::Mul => "and",
            BinOp::Or | BinOp::Max => "or",
            BinOp::Xor | BinOp::Add | BinOp::Sub => "xor",
            _ => return unsupported(),
        };
        l.b.ins(format!("{w}.pred {d}, {a}, {b}"));
        return Ok(d);
    }
    if matches!(c, I8 | U8) {
        return unsupported();
    }
    let text = if c.is_float() {
        match op {
            BinOp::Add => format!("add.rn.{t} {d}, {a}, {b}"),
            BinOp::Sub => format!("sub.rn.{t} {d}, {a}, {b}"),
            BinOp::Mul => format!("mul.rn.{t} {d}, {a}, {b}"),
            BinOp::Div if c == F32 => format!("div.full.f32 {d}, {a}, {b}"),
            BinOp::Div | BinOp::DivRn => format!("div.rn.{t} {d}, {a}, {b}"),
            BinOp::Max | BinOp::Min => {
                let w = if op == BinOp::Max { "max" } else { "min" };
                if nan && c == F64 {
                    return unsupported();
                }
                format!("{w}{}.{t} {d}, {a}, {b}", if nan { ".NaN" } else { "" })
            }
            _ => return unsupported(),
        }
    } else {
        let bt = format!("b{bits}");
        match op {
            BinOp::Add => format!("add.{t} {d}, {a}, {b}"),
            BinOp::Sub => format!("sub.{t} {d}, {a}, {b}"),
            BinOp::Mul => format!("mul.lo.{t} {d}, {a}, {b}"),
            BinOp::Div => format!("div.{t} {d}, {a}, {b}"),
            BinOp::Rem => format!("rem.{t} {d}, {a}, {b}"),
            BinOp::And => format!("and.{bt} {d}, {a}, {b}"),
            BinOp::Or => format!("or.{bt} {d}, {a}, {b}"),
            BinOp::Xor => format!("xor.{bt} {d}, {a}, {b}"),
            BinOp::Max => format!("max.{t} {d}, {a}, {b}"),
            BinOp::Min => format!("min.{t} {d}, {a}, {b}"),
            BinOp::UMulHi => format!("mul.hi.{} {d}, {a}, {b}", t.replace('s', "u")),
            BinOp::Shl | BinOp::Shr => {
                // PTX shift amounts are .u32; shifts >= width give 0 (or the sign) as in LLVM's PTX lowering.
                let amt = if bits == 32 {
                    b
                } else {
                    let r = l.b.reg(RegClass::B32);
                    l.b.ins(format!("cvt.u32.{t} {r}, {b}"));
                    r
                };
                if op == BinOp::Shl { format!("shl.{bt} {d}, {a}, {amt}") } else { format!("shr.{t} {d}, {a}, {amt}") }
            }
            _ => return unsupported(),
        }
    };
    l.b.ins(text);
    Ok(l.narrow(d, s))
}

pub(crate) fn binary(l: &mut Lower, data: &OpData, op: BinOp, nan: bool) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    map_regs(l, data, |l, a| binary_scalar(l, op, nan, s, a[0], a[1]))
}

const LOG2E: f32 = std::f32::consts::LOG2_E;
const LN2: f32 = std::f32::consts::LN_2;

pub(crate) fn unary(l: &mut Lower, data: &OpData, op: UnOp) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    let c = compute_ty(s);
    map_regs(l, data, |l, a| {
        let x = l.widen(a[0], s);
        let class = class_of(Elem::Scalar(c))?;
        let d = l.b.reg(class);
        let t = ty(c);
        let unsupported = || Err(CompileError::new(format!("`{}` on {s} is not supported yet", op.word())));
        match (op, c) {
            (UnOp::Neg, I1) | (UnOp::Not, I1) => {
                if op == UnOp::Neg {
                    l.b.ins(format!("mov.pred {d}, {x}"))
                } else {
                    l.b.ins(format!("not.pred {d}, {x}"))
                }
            }
            (UnOp::Neg, _) if c.is_float() || c.is_signed_int() => l.b.ins(format!("neg.{t} {d}, {x}")),
            (UnOp::Neg, _) => l.b.ins(format!("neg.s{} {d}, {x}", class.bits())),
            (UnOp::Not, _) if c.is_int() => l.b.ins(format!("not.b{} {d}, {x}", class.bits())),
            (UnOp::Abs, _) if c.is_float() || c.is_signed_int() => l.b.ins(format!("abs.{t} {d}, {x}")),
            (UnOp::Abs, _) if c.is_unsigned_int() => l.b.ins(format!("mov.b{} {d}, {x}", class.bits())),
            (UnOp::Exp, F32) => {
                let m = l.b.reg(RegClass::F32);
                l.b.ins(format!("mul.f32 {m}, {x}, {}", f32_imm(LOG2E)));
                l.b.ins(format!("ex2.approx.f32 {d}, {m}"));
            }
            (UnOp::Exp2, F32) => l.b.ins(format!("ex2.approx.f32 {d}, {x}")),
            (UnOp::Log2, F32) => l.b.ins(format!("lg2.approx.f32 {d}, {x}")),
            (UnOp::Log, F32) => {
                let m = l.b.reg(RegClass::F32);
                l.b.ins(format!("lg2.approx.f32 {m}, {x}"));
                l.b.ins(format!("mul.f32 {d}, {m}, {}", f32_imm(LN2)));
            }
            (UnOp::Sqrt, F32) => l.b.ins(format!("sqrt.approx.f32 {d}, {x}")),
            (UnOp::Sqrt | UnOp::SqrtRn, F32 | F64) => l.b.ins(format!("sqrt.rn.{t} {d}, {x}")),
            (UnOp::Rsqrt, F32) => l.b.ins(format!("rsqrt.approx.f32 {d}, {x}")),
            (UnOp::Rsqrt, F64) => l.b.ins(format!("rsqrt.approx.f64 {d}, {x}")),
            (UnOp::Sin, F32) => l.b.ins(format!("sin.approx.f32 {d}, {x}")),
            (UnOp::Cos, F32) => l.b.ins(format!("cos.approx.f32 {d}, {x}")),
            (UnOp::Floor, F32 | F64) => l.b.ins(format!("cvt.rmi.{t}.{t} {d}, {x}")),
            (UnOp::Ceil, F32 | F64) => l.b.ins(format!("cvt.rpi.{t}.{t} {d}, {x}")),
            _ => return unsupported(),
        }
        Ok(l.narrow(d, s))
    })
}

fn cmp_word(p: CmpPred, float: bool) -> &'static str {
    match p {
        CmpPred::Eq => "eq",
        // Python/Triton `!=` is true when either side is NaN: the unordered form.
        CmpPred::Ne if float => "neu",
        CmpPred::Ne => "ne",
        CmpPred::Lt => "lt",
        CmpPred::Le => "le",
        CmpPred::Gt => "gt",
        CmpPred::Ge => "ge",
    }
}

pub(crate) fn cmp(l: &mut Lower, data: &OpData, p: CmpPred) -> Result<(), CompileError> {
    let e = l.elem_of(data.operands[0])?;
    let s = e.scalar().unwrap_or(U64);
    if s == I1 || matches!(s, I8 | U8) {
        return Err(CompileError::new(format!("comparisons of {s} are not supported yet")));
    }
    let c = compute_ty(s);
    map_regs(l, data, |l, a| {
        let (x, y) = (l.widen(a[0], s), l.widen(a[1], s));
        let d = l.b.reg(RegClass::Pred);
        l.b.ins(format!("setp.{}.{} {d}, {x}, {y}", cmp_word(p, c.is_float()), ty(c)));
        Ok(d)
    })
}

pub(crate) fn select(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    map_regs(l, data, |l, a| Ok(select_reg(l, a[0], a[1], a[2])))
}

/// `c ? x : y` for registers `x`, `y` of one class.
pub(crate) fn select_reg(l: &mut Lower, c: Reg, x: Reg, y: Reg) -> Reg {
    let class = x.class;
    let d = l.b.reg(class);
    if class == RegClass::Pred {
        let (t, u) = (l.b.reg(RegClass::Pred), l.b.reg(RegClass::Pred));
        l.b.ins(format!("and.pred {t}, {c}, {x}"));
        l.b.ins(format!("and.pred {u}, !{c}, {y}"));
        l.b.ins(format!("or.pred {d}, {t}, {u}"));
    } else {
        l.b.ins(format!("selp.b{} {d}, {x}, {y}, {c}", class.bits()));
    }
    d
}

pub(crate) fn fma(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    if !s.is_float() {
        return Err(CompileError::new(format!("fma on {s} is not supported")));
    }
    map_regs(l, data, |l, a| {
        let (x, y, z) = (l.widen(a[0], s), l.widen(a[1], s), l.widen(a[2], s));
        let c = compute_ty(s);
        let d = l.b.reg(class_of(Elem::Scalar(c))?);
        l.b.ins(format!("fma.rn.{} {d}, {x}, {y}, {z}", ty(c)));
        Ok(l.narrow(d, s))
    })
}

/// Value conversion from `from` to `to` (round to nearest even; float→int truncates toward zero).
pub(crate) fn cast_scalar(l: &mut Lower, x: Reg, from: ScalarType, to: ScalarType) -> Result<Reg, CompileError> {
    if from == to {
        return Ok(x);
    }
    if matches!(from, I8 | U8 | F8E4M3 | F8E5M2) || matches!(to, I8 | U8 | F8E4M3 | F8E5M2) {
        return Err(CompileError::new(format!("cast {from} -> {to} is not supported yet")));
    }
    let dc = class_of(Elem::Scalar(to))?;
    let d = l.b.reg(dc);
    if from == I1 {
        if to.is_float() {
            let one = l.const_reg(Const::Float(1.0), Elem::Scalar(to))?;
            let zero = l.const_reg(Const::Float(0.0), Elem::Scalar(to))?;
            l.b.ins(format!("selp.b{} {d}, {one}, {zero}, {x}", dc.bits()));
        } else {
            l.b.ins(format!("selp.b{} {d}, 1, 0, {x}", dc.bits()));
        }
        return Ok(d);
    }
    if to == I1 {
        let zero = l.const_reg(Const::Int(0), Elem::Scalar(from))?;
        let f = from.is_float();
        l.b.ins(format!("setp.{}.{} {d}, {x}, {zero}", if f { "neu" } else { "ne" }, ty(from)));
        return Ok(d);
    }
    let text = match (from.is_float(), to.is_float()) {
        (true, true) if to.bits() > from.bits() || (from == BF16 && to == F16) || (from == F16 && to == BF16) => {
            if to.bits() > from.bits() {
                format!("cvt.{}.{} {d}, {x}", ty(to), ty(from))
            } else {
                let w = l.widen(x, from);
                format!("cvt.rn.{}.f32 {d}, {w}", ty(to))
            }
        }
        (true, true) => format!("cvt.rn.{}.{} {d}, {x}", ty(to), ty(from)),
        (false, true) => format!("cvt.rn.{}.{} {d}, {x}", ty(to), ty(from)),
        (true, false) => format!("cvt.rzi.{}.{} {d}, {x}", ty(to), ty(from)),
        (false, false) => format!("cvt.{}.{} {d}, {x}", ty(to), ty(from)),
    };
    l.b.ins(text);
    Ok(d)
}

pub(crate) fn cast(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let from = l.scalar_of(data.operands[0])?;
    let to = l.scalar_of(data.results[0])?;
    map_regs(l, data, |l, a| cast_scalar(l, a[0], from, to))
}

pub(crate) fn bitcast(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (fe, te) = (l.elem_of(data.operands[0])?, l.elem_of(data.results[0])?);
    let (fc, tc) = (class_of(fe)?, class_of(te)?);
    if fc.bits() != tc.bits() || fc == RegClass::Pred {
        return Err(CompileError::new(format!("bitcast {fe} -> {te} is not supported")));
    }
    map_regs(l, data, |l, a| {
        let d = l.b.reg(tc);
        l.b.ins(format!("mov.b{} {d}, {}", tc.bits(), a[0]));
        Ok(d)
    })
}
