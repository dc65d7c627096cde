//! Elementwise ops, register by register: constants, arithmetic, math, comparisons, select, fma, clamp and
//! bitcasts (value casts are in `cast.rs`, routines without a PTX instruction in `tessel_math`).
//!
//! Compute types: f16/bf16/fp8 compute in f32 (widen exactly, round the result once), as Triton does for
//! most ops; i8/u8 compute in their 16-bit extension and are brought back to 8 bits after each op. f32
//! `add`/`mul` carry `.rn` so ptxas never contracts them into an fma the interpreter would not do. The
//! exceptions are f16 `add`/`sub`/`mul` (and bf16 from sm_90, which has `add.rn.bf16x2`): these run natively,
//! two elements per `.f16x2`/`.bf16x2` instruction for tensors. The results are bit-identical to the f32
//! route: f32 carries more than 2p + 2 bits for p = 11 (8), so rounding the f32 result again to the half type
//! is the single correct rounding.
//!
//! Instruction choices follow Triton's NVIDIA lowering (`ElementwiseOpToLLVM.cpp` and the libdevice functions
//! it reaches with `__CUDA_FTZ` set): f32 `a / b` is `div.full.f32` (about 2 ulp), `div_rn` is `div.rn`;
//! `sqrt` is `sqrt.approx.ftz.f32` and `sqrt_rn` `sqrt.rn.f32`; `rsqrt` is `rsqrt.approx.ftz.f32`; `exp` is
//! `ex2.approx.f32` of `x·log2 e` (the product rounded to f32), `exp2` is `ex2.approx.ftz.f32` (libdevice's
//! `exp2f` under Triton's FTZ reflection: subnormal results are +0). The interpreter models the argument
//! reduction and the flushes exactly and rounds the function correctly, so it differs from these only by the
//! hardware unit's own error (≤ 2 ulp; see `tessel_tile::eval::arith::ex2_f32`). f32 `sin`, `cos`, `log`,
//! `log2`, `erf`, and `libdevice.tanh`, `exp10`, `log10`, `acosh`, `cbrt`, `hypot`, `pow` (the last two at f64
//! too, with f64 `erf`) are libdevice's own sequences (`tessel_math`, which the interpreter runs too);
//! float `%` is LLVM's expansion of `frem` (`fmod.rs`), as in Triton. `floor`, `ceil` (f32) flush a subnormal
//! input to ±0 as libdevice does under Triton's FTZ setting. The other f64 transcendentals use the routines of
//! `tessel_math::exp_log::own64` (libdevice accuracy, see there); the other libdevice functions those `libdevice.rs` emits (and `cfmod.rs` for `fmod`, and `tessel_math::trig::sincos64` for f64 `sin`/`cos`; see there). The
//! interpreter models these instruction semantics (see `interp/src/README.md`).

use tessel_math::rounding::{Arith, Dir};
use tessel_tile::eval::value::{Val, convert, round_float, to_bits, wrap_int};
use tessel_tile::ir::{OpData, ValueId};
use tessel_tile::layout::axis::pow2_div;
use tessel_tile::ops::{BinOp, CmpPred, Const, Op, UnOp};
use tessel_tile::types::{Elem, ScalarType, Type};

use super::cast::{canon8, is_fp8, narrow_f32, widen_float};
use super::fpops::Emit;
use super::{Lower, class_of};
use super::{cfmod, intdiv, libdevice};
use crate::CompileError;
use tessel_math::exp_log::own64::{exp_f64, exp2_f64, log_f64, log2_f64};
use tessel_math::trig::sincos64::sin_cos_f64;
use tessel_tile::Target;

use crate::ptx::{Reg, RegClass, f32_imm, f64_imm, hex, instr, not, vector};

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

/// The type arithmetic on `s` happens in.
fn compute_ty(s: ScalarType) -> ScalarType {
    match s {
        F16 | BF16 | F8E4M3 | F8E5M2 => F32,
        I8 => I16,
        U8 => U16,
        _ => s,
    }
}

impl Lower<'_> {
    /// `x` (of type `s`) in its compute type (8-bit ints already are: they are kept extended).
    pub(crate) fn widen(&mut self, x: Reg, s: ScalarType) -> Reg {
        if s.is_float() { widen_float(self, x, s) } else { x }
    }

    /// `x` (in the compute type of `s`) rounded or wrapped back to `s`.
    pub(crate) fn narrow(&mut self, x: Reg, s: ScalarType) -> Reg {
        match s {
            F16 | BF16 | F8E4M3 | F8E5M2 => narrow_f32(self, x, s),
            I8 | U8 => canon8(self, x, s),
            _ => x,
        }
    }

    /// One scalar constant in a register, with the interpreter's `constant` semantics (integers wrap, floats
    /// round to the type, a float constant of an integer type converts).
    pub(crate) fn const_reg(&mut self, c: Const, e: Elem) -> Result<Reg, CompileError> {
        let class = class_of(e)?;
        let d = self.b.reg(class);
        let Elem::Scalar(s) = e else {
            let v = match c {
                Const::Int(i) => i,
                Const::Float(f) => f as i64,
            };
            self.b.op("mov.b64", d, v);
            return Ok(d);
        };
        let v = match c {
            Const::Int(i) if s.is_int() => Val::Int(wrap_int(i, s)),
            Const::Int(i) => Val::Float(round_float(i as f64, s)),
            Const::Float(x) if s.is_float() => Val::Float(round_float(x, s)),
            Const::Float(x) => convert(Val::Float(x), Elem::Scalar(F64), Elem::Scalar(s)),
        };
        match s {
            I1 => self.b.op("setp.ne.u32", d, (v.is_true() as u32, 0)),
            F32 => self.b.op("mov.f32", d, f32_imm(v.as_f64() as f32)),
            F64 => self.b.op("mov.f64", d, f64_imm(v.as_f64())),
            // Sign-extended in its 16-bit register.
            I8 => self.b.op("mov.b16", d, hex((v.as_i64() & 0xffff) as u64)),
            _ => self.b.op(format!("mov.b{}", class.bits()), d, hex(to_bits(v, s))),
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
    let unsupported = || Err(CompileError::new(format!("`{}` on {s} is not supported yet", op.word())));
    if s.is_float() && matches!(op, BinOp::Pow | BinOp::Hypot | BinOp::Rhypot) {
        // libdevice's own sequence (tessel_math's), as Triton runs it: f32 (the half types widened) or f64.
        let (x, y) = (l.widen(a, s), l.widen(b, s));
        let wide = compute_ty(s) == F64;
        let mut e = Emit { l, wide };
        let r = if wide {
            tessel_tile::eval::routines::binary_f64(&mut e, op, x, y)
        } else {
            tessel_tile::eval::routines::binary_f32(&mut e, op, x, y)
        };
        if let Some(r) = r {
            return Ok(l.narrow(r, s));
        }
    }
    if op == BinOp::Pow {
        return Err(CompileError::new(format!("`pow` on {s}: the interpreter defines it on floats only")));
    }
    let c = compute_ty(s);
    if c == I1 {
        let w = match op {
            BinOp::And | BinOp::Min | BinOp::Mul => "and",
            BinOp::Or | BinOp::Max => "or",
            BinOp::Xor | BinOp::Add | BinOp::Sub => "xor",
            _ => return unsupported(),
        };
        let d = l.b.reg(RegClass::Pred);
        l.b.op(format!("{w}.pred"), d, (a, b));
        return Ok(d);
    }
    if op == BinOp::UMulHi && matches!(s, I8 | U8) {
        // The high byte of the 16-bit product of the unsigned bytes.
        let (x, y, p, d) =
            (l.b.reg(RegClass::B16), l.b.reg(RegClass::B16), l.b.reg(RegClass::B16), l.b.reg(RegClass::B16));
        l.b.op("and.b16", x, (a, 255));
        l.b.op("and.b16", y, (b, 255));
        l.b.op("mul.lo.u16", p, (x, y));
        l.b.op("shr.u16", d, (p, 8));
        return Ok(canon8(l, d, s));
    }
    if let (Some(t), Some(w)) = (native_half(l.arch, s), half_op(op)) {
        let d = l.b.reg(RegClass::B16);
        l.b.op(format!("{w}.{t}"), d, (a, b));
        return Ok(d);
    }
    if let Some((arith, dir)) = op.directed() {
        // libdevice's add_rn, div_ru...: PTX's rounding modifiers, on f32 (with `.ftz`, as libdevice under
        // Triton) and f64 only.
        if !matches!(s, F32 | F64) {
            return Err(CompileError::new(format!("`{}` is defined on f32 and f64 only, not {s}", op.word())));
        }
        let w = match arith {
            Arith::Add => "add",
            Arith::Sub => "sub",
            Arith::Mul => "mul",
            Arith::Div | Arith::Sqrt => "div",
        };
        let d = l.b.reg(if s == F64 { RegClass::F64 } else { RegClass::F32 });
        let ftz = if s == F32 { ".ftz" } else { "" };
        l.b.op(format!("{w}.{}{ftz}.{}", dir.ptx(), ty(s)), d, (a, b));
        return Ok(d);
    }
    if s.is_float() && op == BinOp::Atan2 {
        // atan2 (libdevice.rs): f32 (and the half types, widened) or f64.
        let c = if s == F64 { F64 } else { F32 };
        let (x, y) = (l.widen(a, s), l.widen(b, s));
        let r = libdevice::emit_atan2(l, c, x, y);
        return Ok(l.narrow(r, s));
    }
    if s.is_float() && op == BinOp::Fmod {
        // libdevice's exact C fmod (cfmod.rs), in f64 for every type (f32 flushed first, as libdevice under FTZ).
        let (x, y) = (l.widen(a, s), l.widen(b, s));
        if s == F64 {
            return Ok(cfmod::emit(l, x, y, 53));
        }
        let (x, y) = (libdevice::widen_flushed(l, x), libdevice::widen_flushed(l, y));
        let r = cfmod::emit(l, x, y, 24);
        let r = libdevice::narrow(l, r);
        return Ok(l.narrow(r, s));
    }
    if s.is_float() && op == BinOp::Rem {
        // Triton's `frem` expansion (see fmod.rs): in f64 for f64, in f32 for every narrower float.
        let (x, y) = (l.widen(a, s), l.widen(b, s));
        let r = tessel_math::remainder::frem(&mut Emit { l, wide: s == F64 }, x, y);
        return Ok(l.narrow(r, s));
    }
    let (a, b) = (l.widen(a, s), l.widen(b, s));
    let class = class_of(Elem::Scalar(c))?;
    let d = l.b.reg(class);
    let t = ty(c);
    let bits = class.bits();
    let bin = |op: String| instr(op).dst(d).srcs((a, b));
    let ins = if c.is_float() {
        match op {
            BinOp::Add => bin(format!("add.rn.{t}")),
            BinOp::Sub => bin(format!("sub.rn.{t}")),
            BinOp::Mul => bin(format!("mul.rn.{t}")),
            BinOp::Div if c == F32 => bin("div.full.f32".into()),
            // libdevice's fast_dividef.
            BinOp::DivApprox if c == F32 => bin("div.approx.ftz.f32".into()),
            BinOp::Div | BinOp::DivRn => bin(format!("div.rn.{t}")),
            BinOp::Max | BinOp::Min if nan && c == F64 => {
                // No `max.NaN.f64`: select NaN when either side is NaN.
                let w = if op == BinOp::Max { "max" } else { "min" };
                let (m, p) = (l.b.reg(RegClass::F64), l.b.reg(RegClass::Pred));
                l.b.op(format!("{w}.f64"), m, (a, b));
                l.b.op("setp.nan.f64", p, (a, b));
                instr("selp.f64").dst(d).srcs((f64_imm(f64::NAN), m, p))
            }
            BinOp::Max | BinOp::Min => {
                let w = if op == BinOp::Max { "max" } else { "min" };
                bin(format!("{w}{}.{t}", if nan { ".NaN" } else { "" }))
            }
            _ => return unsupported(),
        }
    } else {
        let bt = format!("b{bits}");
        match op {
            BinOp::Add => bin(format!("add.{t}")),
            BinOp::Sub => bin(format!("sub.{t}")),
            BinOp::Mul => bin(format!("mul.lo.{t}")),
            BinOp::Div | BinOp::Rem if bits == 64 => {
                div64(l, op == BinOp::Div, t, a, b, d);
                return Ok(d);
            }
            BinOp::Div => bin(format!("div.{t}")),
            BinOp::Rem => bin(format!("rem.{t}")),
            BinOp::And => bin(format!("and.{bt}")),
            BinOp::Or => bin(format!("or.{bt}")),
            BinOp::Xor => bin(format!("xor.{bt}")),
            BinOp::Max => bin(format!("max.{t}")),
            BinOp::Min => bin(format!("min.{t}")),
            BinOp::UMulHi => bin(format!("mul.hi.{}", t.replace('s', "u"))),
            BinOp::MulHi => bin(format!("mul.hi.{t}")),
            BinOp::Shl | BinOp::Shr => {
                // PTX shift amounts are .u32 and clamp at the register width; an 8-bit value shifted by 8 or
                // more leaves 0 (or the sign) in its low byte, as the interpreter's shift does.
                let amt = if bits == 32 {
                    b
                } else {
                    let r = l.b.reg(RegClass::B32);
                    l.b.op(format!("cvt.u32.{t}"), r, b);
                    r
                };
                let op = if op == BinOp::Shl { format!("shl.{bt}") } else { format!("shr.{t}") };
                instr(op).dst(d).srcs((a, amt))
            }
            _ => return unsupported(),
        }
    };
    l.b.emit(ins);
    Ok(l.narrow(d, s))
}

/// 64-bit `/` or `%` into `d` as LLVM's NVPTX backend emits it for Triton: when both operands' high halves are
/// zero, the 32-bit `div.u32`/`rem.u32` (its "bypass slow division": far cheaper than the 64-bit expansion);
/// else the 64-bit instruction. Besides speed this fixes the result of a division by zero, which differs
/// between the two (see `tessel_tile::eval::arith::int_div_by_zero`).
fn div64(l: &mut Lower, div: bool, t: &str, a: Reg, b: Reg, d: Reg) {
    let w = if div { "div" } else { "rem" };
    let (or, hi, small) = (l.b.reg(RegClass::B64), l.b.reg(RegClass::B64), l.b.reg(RegClass::Pred));
    l.b.op("or.b64", or, (a, b));
    l.b.op("shr.u64", hi, (or, 32));
    l.b.op("setp.eq.u64", small, (hi, 0));
    let (a32, b32, r32) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
    l.b.op("cvt.u32.u64", a32, a);
    l.b.op("cvt.u32.u64", b32, b);
    l.b.emit(instr(format!("{w}.u32")).dst(r32).srcs((a32, b32)).guard(small));
    l.b.emit(instr("cvt.u64.u32").dst(d).src(r32).guard(small));
    l.b.emit(instr(format!("{w}.{t}")).dst(d).srcs((a, b)).unless(small));
}

pub(crate) fn binary(l: &mut Lower, data: &OpData, op: BinOp, nan: bool) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    if let Some(fused) = contraction(l, data, op, s) {
        return fused;
    }
    if matches!(op, BinOp::Div | BinOp::Rem)
        && matches!(s, I32 | U32 | I64 | U64)
        && let Some(k) = intdiv::pow2_divisor(l, data.operands[1]).filter(|&k| k < s.bits())
    {
        return map_regs(l, data, |l, a| Ok(intdiv::emit(l, op, s, s.bits(), a[0], k)));
    }
    if let (Some(t), Some(w)) = (native_half(l.arch, s), half_op(op))
        && l.num_regs(l.f.ty(data.results[0]))? >= 2
    {
        return packed_half(l, data, &format!("{w}.{t}x2"), op, s);
    }
    map_regs(l, data, |l, a| binary_scalar(l, op, nan, s, a[0], a[1]))
}

/// The PTX type of native arithmetic on `s` for this target: f16 everywhere (sm_53+), bf16 from sm_90.
fn native_half(arch: Target, s: ScalarType) -> Option<&'static str> {
    match (s, arch) {
        (F16, _) => Some("f16"),
        (BF16, Target::Sm90a | Target::Sm100a) => Some("bf16"),
        _ => None,
    }
}

/// The half-precision instruction of `op`, for the ops that run natively (see the module doc).
fn half_op(op: BinOp) -> Option<&'static str> {
    match op {
        BinOp::Add => Some("add.rn"),
        BinOp::Sub => Some("sub.rn"),
        BinOp::Mul => Some("mul.rn"),
        _ => None,
    }
}

/// A binary op on f16/bf16 tensors two registers at a time: registers `2i` and `2i + 1` of both operands are
/// packed (free when they came unpacked from one 32-bit load word), combined by one `instr`
/// (`add.rn.f16x2`...), and unpacked; an odd last register goes through [`binary_scalar`].
fn packed_half(l: &mut Lower, data: &OpData, instr: &str, op: BinOp, s: ScalarType) -> Result<(), CompileError> {
    let v = data.results[0];
    let n = l.num_regs(l.f.ty(v))?;
    let (a, b) = (l.get(data.operands[0])?.to_vec(), l.get(data.operands[1])?.to_vec());
    if a.len() != n || b.len() != n {
        return Err(CompileError::new("operands and result have different layouts"));
    }
    let mut memo: Vec<([Reg; 4], [Reg; 2])> = Vec::new();
    let mut out = Vec::with_capacity(n);
    for i in (0..n).step_by(2) {
        if i + 1 == n {
            out.push(binary_scalar(l, op, false, s, a[i], b[i])?);
            break;
        }
        let key = [a[i], a[i + 1], b[i], b[i + 1]];
        if let Some((_, pair)) = memo.iter().find(|(k, _)| *k == key) {
            out.extend(*pair);
            continue;
        }
        let pack = |l: &mut Lower, lo: Reg, hi: Reg| {
            let p = l.b.reg(RegClass::B32);
            l.b.op("mov.b32", p, vector(&[lo, hi]));
            p
        };
        let (x, y) = (pack(l, a[i], a[i + 1]), pack(l, b[i], b[i + 1]));
        let d = l.b.reg(RegClass::B32);
        l.b.op(instr.to_string(), d, (x, y));
        let pair = [l.b.reg(RegClass::B16), l.b.reg(RegClass::B16)];
        l.b.op("mov.b32", vector(&[pair[0], pair[1]]), d);
        memo.push((key, pair));
        out.extend(pair);
    }
    l.vals.insert(v, out);
    Ok(())
}

/// Multiply-add contraction, as LLVM does for Triton (`enable_fp_fusion`): `a * b + c`, `c + a * b`,
/// `a * b - c` and `c - a * b` on f32/f64, where the product has no other use, become one `fma.rn` (one
/// rounding instead of two; the multiply is left dead for ptxas to remove). `None` when the pattern does not
/// apply.
fn contraction(l: &mut Lower, data: &OpData, op: BinOp, s: ScalarType) -> Option<Result<(), CompileError>> {
    if !l.fp_fusion || !matches!(s, F32 | F64) || !matches!(op, BinOp::Add | BinOp::Sub) {
        return None;
    }
    let product = |v: ValueId| {
        let o = *l.producer.get(&v)?;
        let d = l.f.op(o);
        let mul = matches!(d.op, Op::Binary { op: BinOp::Mul, .. });
        (mul && l.uses[v.index()] == 1 && l.f.ty(d.operands[0]) == l.f.ty(v)).then(|| (d.operands[0], d.operands[1]))
    };
    // (product operands, addend, negate the product, negate the addend)
    let (x, y, c, neg_p, neg_c) = match (product(data.operands[0]), product(data.operands[1])) {
        (Some((x, y)), _) => (x, y, data.operands[1], false, op == BinOp::Sub),
        (None, Some((x, y))) => (x, y, data.operands[0], op == BinOp::Sub, false),
        (None, None) => return None,
    };
    let mut fused = data.clone();
    fused.operands = [x, y, c].into_iter().collect();
    let t = ty(s);
    Some(map_regs(l, &fused, |l, a| {
        let class = class_of(Elem::Scalar(s))?;
        let negated = |l: &mut Lower, r: Reg, on: bool| {
            if !on {
                return r;
            }
            let n = l.b.reg(class);
            l.b.op(format!("neg.{t}"), n, r);
            n
        };
        let (x, c) = (negated(l, a[0], neg_p), negated(l, a[2], neg_c));
        let d = l.b.reg(class);
        l.b.op(format!("fma.rn.{t}"), d, (x, a[1], c));
        Ok(d)
    }))
}

/// `clamp x, lo, hi` = `min(max(x, lo), hi)`, with the op's NaN propagation, as the interpreter defines it.
pub(crate) fn clamp(l: &mut Lower, data: &OpData, nan: bool) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    map_regs(l, data, |l, a| {
        let lo = binary_scalar(l, BinOp::Max, nan, s, a[0], a[1])?;
        binary_scalar(l, BinOp::Min, nan, s, lo, a[2])
    })
}

/// libdevice's `norm3d`/`norm4d`/`rnorm3d`/`rnorm4d` (`tessel_math::roots::norm`, which the interpreter runs too).
pub(crate) fn norm(l: &mut Lower, data: &OpData, recip: bool) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    if !matches!(s, F32 | F64) {
        let name = data.op.name();
        return Err(CompileError::new(format!("`{name}` is defined on f32 and f64 only, not {s}")));
    }
    map_regs(l, data, |l, a| {
        let wide = s == F64;
        let mut e = Emit { l, wide };
        Ok(if wide {
            tessel_math::roots::norm::norm_f64(&mut e, a, recip)
        } else {
            tessel_math::roots::norm::norm_f32(&mut e, a, recip)
        })
    })
}

const LOG2E: f32 = std::f32::consts::LOG2_E;

pub(crate) fn unary(l: &mut Lower, data: &OpData, op: UnOp) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    let c = compute_ty(s);
    map_regs(l, data, |l, a| {
        let x = l.widen(a[0], s);
        let class = class_of(Elem::Scalar(c))?;
        let t = ty(c);
        let unsupported = || Err(CompileError::new(format!("`{}` on {s} is not supported yet", op.word())));
        let one = |l: &mut Lower, text: &str| {
            let d = l.b.reg(class);
            l.b.op(text.to_string(), d, x);
            d
        };
        if let Some(dir) = op.directed() {
            if !matches!(s, F32 | F64) {
                return Err(CompileError::new(format!("`{}` is defined on f32 and f64 only, not {s}", op.word())));
            }
            let d = l.b.reg(class);
            let ftz = if s == F32 { ".ftz" } else { "" };
            l.b.op(format!("sqrt.{}{ftz}.{t}", dir.ptx()), d, x);
            return Ok(d);
        }
        if c == F32
            && let Some(d) = tessel_tile::eval::routines::unary_f32(&mut Emit { l, wide: false }, op, x)
        {
            // libdevice's own f32 sequence (tessel_math's), as Triton runs it.
            return Ok(l.narrow(d, s));
        }
        if c == F64
            && let Some(d) = tessel_tile::eval::routines::unary_f64(&mut Emit { l, wide: true }, op, x)
        {
            return Ok(d);
        }
        if c.is_float()
            && let Some(d) = libdevice::emit_unary(l, op, c, x)
        {
            return Ok(l.narrow(d, s));
        }
        let d = match (op, c) {
            (UnOp::Neg, I1) => x,
            (UnOp::Not, I1) => one(l, "not.pred"),
            (UnOp::Neg, _) if c.is_float() || c.is_signed_int() => one(l, &format!("neg.{t}")),
            (UnOp::Neg, _) => one(l, &format!("neg.s{}", class.bits())),
            (UnOp::Not, _) if c.is_int() => one(l, &format!("not.b{}", class.bits())),
            (UnOp::Abs, _) if c.is_float() || c.is_signed_int() => one(l, &format!("abs.{t}")),
            (UnOp::Abs, _) if c.is_unsigned_int() => x,
            (UnOp::Brev, _) if c.is_int() => one(l, &format!("brev.b{}", class.bits())),
            (UnOp::Popc | UnOp::Clz, _) if c.is_int() => {
                // A 32-bit count, widened back to the operand's width.
                let w = if op == UnOp::Popc { "popc" } else { "clz" };
                let n = l.b.reg(RegClass::B32);
                l.b.op(format!("{w}.b{}", class.bits()), n, x);
                if class.bits() == 64 {
                    let d = l.b.reg(class);
                    l.b.op("cvt.u64.u32", d, n);
                    d
                } else {
                    n
                }
            }
            (UnOp::Exp, F32) => {
                let m = l.b.reg(RegClass::F32);
                l.b.op("mul.f32", m, (x, f32_imm(LOG2E)));
                let d = l.b.reg(RegClass::F32);
                l.b.op("ex2.approx.f32", d, m);
                d
            }
            // libdevice's exp2f under Triton's FTZ setting: `ex2.approx.ftz` (subnormal results flush to +0, measured).
            (UnOp::Exp2, F32) => one(l, "ex2.approx.ftz.f32"),
            (UnOp::Sqrt, F32) => one(l, "sqrt.approx.ftz.f32"),
            (UnOp::Rsqrt, F32) => one(l, "rsqrt.approx.ftz.f32"),
            (UnOp::Sqrt | UnOp::SqrtRn, F32 | F64) => one(l, &format!("sqrt.rn.{t}")),
            // As Triton (`__nv_rsqrt` is the approximate instruction).
            (UnOp::Rsqrt, F64) => one(l, "rsqrt.approx.f64"),
            (UnOp::Sin, F64) => sin_cos_f64(&mut Emit { l, wide: true }, x, false),
            (UnOp::Cos, F64) => sin_cos_f64(&mut Emit { l, wide: true }, x, true),
            // libdevice's floorf/ceilf under Triton's FTZ setting: subnormal inputs count as ±0.
            (UnOp::Floor, F32) => one(l, "cvt.rmi.ftz.f32.f32"),
            (UnOp::Ceil, F32) => one(l, "cvt.rpi.ftz.f32.f32"),
            (UnOp::Floor, F64) => one(l, "cvt.rmi.f64.f64"),
            (UnOp::Ceil, F64) => one(l, "cvt.rpi.f64.f64"),
            // libdevice's fast_log2f/fast_sinf/fast_cosf and saturatef.
            (UnOp::Lg2Approx, F32) => one(l, "lg2.approx.ftz.f32"),
            (UnOp::SinApprox, F32) => one(l, "sin.approx.ftz.f32"),
            (UnOp::CosApprox, F32) => one(l, "cos.approx.ftz.f32"),
            (UnOp::Saturate, F32) => one(l, "cvt.ftz.sat.f32.f32"),
            (UnOp::Exp, F64) => exp_f64(&mut Emit { l, wide: true }, x),
            (UnOp::Exp2, F64) => exp2_f64(&mut Emit { l, wide: true }, x),
            (UnOp::Log, F64) => log_f64(&mut Emit { l, wide: true }, x),
            (UnOp::Log2, F64) => log2_f64(&mut Emit { l, wide: true }, x),
            _ => return unsupported(),
        };
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
    let c = compute_ty(s);
    map_regs(l, data, |l, a| {
        let d = l.b.reg(RegClass::Pred);
        if s == I1 {
            // 0/1 as 16-bit values.
            let (x, y) = (l.b.reg(RegClass::B16), l.b.reg(RegClass::B16));
            l.b.op("selp.u16", x, (1, 0, a[0]));
            l.b.op("selp.u16", y, (1, 0, a[1]));
            l.b.op(format!("setp.{}.u16", cmp_word(p, false)), d, (x, y));
            return Ok(d);
        }
        let (x, y) = (l.widen(a[0], s), l.widen(a[1], s));
        l.b.op(format!("setp.{}.{}", cmp_word(p, c.is_float()), ty(c)), d, (x, y));
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
        l.b.op("and.pred", t, (c, x));
        l.b.op("and.pred", u, (not(c), y));
        l.b.op("or.pred", d, (t, u));
    } else {
        l.b.op(format!("selp.b{}", class.bits()), d, (x, y, c));
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
        l.b.op(format!("fma.rn.{}", ty(c)), d, (x, y, z));
        Ok(l.narrow(d, s))
    })
}

/// libdevice's `fma_rn` ... `fma_ru`: `fma.rn.ftz.f32`, `fma.rz.f64`...
pub(crate) fn fma_round(l: &mut Lower, data: &OpData, dir: Dir) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    if !matches!(s, F32 | F64) {
        return Err(CompileError::new(format!("`{}` is defined on f32 and f64 only, not {s}", data.op.name())));
    }
    map_regs(l, data, |l, a| {
        let d = l.b.reg(class_of(Elem::Scalar(s))?);
        let ftz = if s == F32 { ".ftz" } else { "" };
        l.b.op(format!("fma.{}{ftz}.{}", dir.ptx(), ty(s)), d, (a[0], a[1], a[2]));
        Ok(d)
    })
}

/// libdevice's conversions with a rounding mode: `cvt.rz.f32.s32` ... `cvt.rp.f64.u64`, and f64 to f32 with
/// `.ftz` (`cvt.rm.ftz.f32.f64`).
pub(crate) fn cast_round(l: &mut Lower, data: &OpData, dir: Dir) -> Result<(), CompileError> {
    let from = l.scalar_of(data.operands[0])?;
    let to = l.scalar_of(data.results[0])?;
    let ftz = if from == F64 { ".ftz" } else { "" };
    map_regs(l, data, |l, a| {
        let d = l.b.reg(class_of(Elem::Scalar(to))?);
        l.b.op(format!("cvt.{}{ftz}.{}.{}", dir.ptx(), ty(to), ty(from)), d, a[0]);
        Ok(d)
    })
}

pub(crate) fn cast(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (fe, te) = (l.elem_of(data.operands[0])?, l.elem_of(data.results[0])?);
    if fe.is_ptr() || te.is_ptr() {
        return map_regs(l, data, |l, a| int_ptr_cast(l, a[0], fe, te));
    }
    let from = l.scalar_of(data.operands[0])?;
    let to = l.scalar_of(data.results[0])?;
    let ins = l.get(data.operands[0])?.to_vec();
    if from == F32 && matches!(to, F16 | BF16) && ins.len() % 2 == 0 {
        // Register pairs narrow in one instruction (sm_80+; the same rounding as two scalar conversions).
        let mut out = Vec::with_capacity(ins.len());
        let mut memo: Vec<(&[Reg], [Reg; 2])> = Vec::new();
        for pair in ins.chunks(2) {
            if let Some((_, halves)) = memo.iter().find(|(p, _)| *p == pair) {
                out.extend(halves);
                continue;
            }
            let (w, lo, hi) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B16), l.b.reg(RegClass::B16));
            // The first source fills the upper half.
            l.b.op(format!("cvt.rn.{}x2.f32", ty(to)), w, (pair[1], pair[0]));
            l.b.op("mov.b32", vector(&[lo, hi]), w);
            memo.push((pair, [lo, hi]));
            out.extend([lo, hi]);
        }
        l.vals.insert(data.results[0], out);
        return Ok(());
    }
    if from == F32 && matches!(to, F8E4M3 | F8E5M2) && l.arch != Target::Sm80 && ins.len() % 2 == 0 {
        // Register pairs narrow to fp8 in one instruction; each element is a byte of its pair's 16-bit result
        // (recorded, so that packing four elements reuses the pairs: `bytes`).
        let mut out = Vec::with_capacity(ins.len());
        for pair in ins.chunks(2) {
            let w = super::cast::f32_pair_to_fp8(l, pair[1], pair[0], to);
            out.extend([l.extract_byte(w, 0, false), l.extract_byte(w, 1, false)]);
        }
        l.vals.insert(data.results[0], out);
        return Ok(());
    }
    map_regs(l, data, |l, a| super::cast::cast_scalar(l, a[0], from, to))
}

/// An integer to a pointer, or a pointer to a 64-bit integer (the casts the elaborator emits as `cast`; a
/// pointer to `int1` is a comparison, a pointer to a pointer a `bitcast`). Addresses are 64-bit; a narrower
/// integer is zero-extended, as LLVM's `inttoptr` (Triton's `int_to_ptr`) does.
fn int_ptr_cast(l: &mut Lower, x: Reg, from: Elem, to: Elem) -> Result<Reg, CompileError> {
    let bits = from.scalar().map_or(64, |s| s.bits());
    match (from, to) {
        (Elem::Ptr(..), Elem::Scalar(s)) if s.is_int() && s.bits() == 64 => Ok(x),
        (Elem::Scalar(_), Elem::Ptr(..)) if bits == 64 => Ok(x),
        (Elem::Scalar(ScalarType::I1), Elem::Ptr(..)) => {
            let d = l.b.reg(RegClass::B64);
            l.b.op("selp.b64", d, (1, 0, x));
            Ok(d)
        }
        (Elem::Scalar(s), Elem::Ptr(..)) if s.is_int() => {
            let d = l.b.reg(RegClass::B64);
            l.b.op(format!("cvt.u64.u{bits}"), d, x);
            Ok(d)
        }
        _ => Err(CompileError::new(format!("cast {from} -> {to} is not supported"))),
    }
}

pub(crate) fn bitcast(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (fe, te) = (l.elem_of(data.operands[0])?, l.elem_of(data.results[0])?);
    let (fc, tc) = (class_of(fe)?, class_of(te)?);
    let bits = |e: Elem| e.scalar().map_or(64, |s| s.bits());
    if bits(fe) != bits(te) || fc == RegClass::Pred {
        return Err(CompileError::new(format!("bitcast {fe} -> {te} is not supported")));
    }
    let to = te.scalar();
    map_regs(l, data, |l, a| {
        let d = l.b.reg(tc);
        l.b.op(format!("mov.b{}", tc.bits()), d, a[0]);
        // 8-bit values: the byte is what moves; the target decides the upper half (extension or zero).
        Ok(match to {
            Some(t @ (I8 | U8)) => canon8(l, d, t),
            Some(t) if is_fp8(t) => {
                let z = l.b.reg(RegClass::B16);
                l.b.op("and.b16", z, (d, 255));
                z
            }
            _ => d,
        })
    })
}
