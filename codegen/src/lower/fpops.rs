//! The PTX implementation of [`FloatOps`] (`tessel_math`), the operations every branch-free math routine of
//! `tessel_math` is written in; `tessel_math::model`
//! evaluates the same sequence on the CPU with the same roundings. A routine is therefore tested bit-exactly
//! on the CPU and the PTX it emits is that tested sequence, instruction for instruction.
//!
//! Every plain float op is correctly rounded to nearest even (`add.rn`, `mul.rn`, `fma.rn`, `div.rn`; `.rn`
//! also keeps ptxas from contracting a `mul` and an `add` into an `fma` the model would not do) and keeps
//! subnormals; the `_ftz` and `_approx` forms are libdevice's (`fma.rn.ftz.f32`, `ex2.approx.ftz.f32`...).
//! Integers have the width of the float (32 or 64 bits) and wrap.

use super::Lower;
use crate::ptx::{Imm, Reg, RegClass, f32_imm, f64_imm, instr};

pub(crate) use tessel_math::FloatOps;
use tessel_math::rounding::{Arith, Dir};

/// Emits the operations as PTX at 32 (`wide = false`) or 64 bits.
pub(crate) struct Emit<'a, 'f> {
    pub l: &'a mut Lower<'f>,
    pub wide: bool,
}

impl Emit<'_, '_> {
    fn fty(&self) -> &'static str {
        if self.wide { "f64" } else { "f32" }
    }
    fn bty(&self) -> &'static str {
        if self.wide { "b64" } else { "b32" }
    }
    fn sty(&self) -> &'static str {
        if self.wide { "s64" } else { "s32" }
    }
    fn uty(&self) -> &'static str {
        if self.wide { "u64" } else { "u32" }
    }
    fn freg(&mut self) -> Reg {
        self.l.b.reg(if self.wide { RegClass::F64 } else { RegClass::F32 })
    }
    fn ireg(&mut self) -> Reg {
        self.l.b.reg(if self.wide { RegClass::B64 } else { RegClass::B32 })
    }
    fn pred(&mut self) -> Reg {
        self.l.b.reg(RegClass::Pred)
    }
    /// `op.ty d, args` into a fresh register made by `fresh`.
    fn op(&mut self, fresh: fn(&mut Self) -> Reg, text: &str, args: &[Reg]) -> Reg {
        let d = fresh(self);
        let ins = args.iter().fold(instr(text.to_string()).dst(d), |i, &a| i.src(a));
        self.l.b.emit(ins);
        d
    }
    fn fop(&mut self, name: &str, args: &[Reg]) -> Reg {
        let t = format!("{name}.{}", self.fty());
        self.op(Self::freg, &t, args)
    }
    fn iop(&mut self, name: &str, ty: &str, args: &[Reg]) -> Reg {
        self.op(Self::ireg, &format!("{name}.{ty}"), args)
    }
    fn setp(&mut self, cmp: &str, ty: &str, a: Reg, b: Reg) -> Reg {
        self.op(Self::pred, &format!("setp.{cmp}.{ty}"), &[a, b])
    }
    /// A shift amount as the .u32 register PTX shifts take.
    fn amount(&mut self, n: Reg) -> Reg {
        if !self.wide {
            return n;
        }
        let r = self.l.b.reg(RegClass::B32);
        self.l.b.op("cvt.u32.u64", r, n);
        r
    }
    fn ishift(&mut self, name: &str, ty: &str, a: Reg, n: u32) -> Reg {
        let d = self.ireg();
        self.l.b.op(format!("{name}.{ty}"), d, (a, n));
        d
    }
}

impl FloatOps for Emit<'_, '_> {
    type F = Reg;
    type I = Reg;
    type P = Reg;

    fn fc(&mut self, v: f64) -> Reg {
        let d = self.freg();
        let imm = if self.wide { f64_imm(v) } else { f32_imm(v as f32) };
        self.l.b.op(format!("mov.{}", self.fty()), d, imm);
        d
    }
    fn fbits(&mut self, bits: u64) -> Reg {
        let d = self.freg();
        let imm = if self.wide { Imm::F64(bits) } else { Imm::F32(bits as u32) };
        self.l.b.op(format!("mov.{}", self.fty()), d, imm);
        d
    }
    fn ic(&mut self, v: u64) -> Reg {
        let d = self.ireg();
        let v = if self.wide { v } else { v & 0xffff_ffff };
        self.l.b.op(format!("mov.{}", self.bty()), d, v);
        d
    }
    fn add(&mut self, a: Reg, b: Reg) -> Reg {
        self.fop("add.rn", &[a, b])
    }
    fn sub(&mut self, a: Reg, b: Reg) -> Reg {
        self.fop("sub.rn", &[a, b])
    }
    fn mul(&mut self, a: Reg, b: Reg) -> Reg {
        self.fop("mul.rn", &[a, b])
    }
    fn div(&mut self, a: Reg, b: Reg) -> Reg {
        self.fop("div.rn", &[a, b])
    }
    fn sqrt(&mut self, a: Reg) -> Reg {
        self.fop("sqrt.rn", &[a])
    }
    fn fma(&mut self, a: Reg, b: Reg, c: Reg) -> Reg {
        self.fop("fma.rn", &[a, b, c])
    }
    fn neg(&mut self, a: Reg) -> Reg {
        self.fop("neg", &[a])
    }
    fn abs(&mut self, a: Reg) -> Reg {
        self.fop("abs", &[a])
    }
    fn rni(&mut self, a: Reg) -> Reg {
        let t = self.fty();
        self.op(Self::freg, &format!("cvt.rni.{t}.{t}"), &[a])
    }
    fn trunc(&mut self, a: Reg) -> Reg {
        let t = self.fty();
        self.op(Self::freg, &format!("cvt.rzi.{t}.{t}"), &[a])
    }
    fn f2i(&mut self, a: Reg) -> Reg {
        let (s, f) = (self.sty(), self.fty());
        self.op(Self::ireg, &format!("cvt.rni.{s}.{f}"), &[a])
    }
    fn i2f(&mut self, a: Reg) -> Reg {
        let (s, f) = (self.sty(), self.fty());
        self.op(Self::freg, &format!("cvt.rn.{f}.{s}"), &[a])
    }
    fn u2f(&mut self, a: Reg) -> Reg {
        let (u, f) = (self.uty(), self.fty());
        self.op(Self::freg, &format!("cvt.rn.{f}.{u}"), &[a])
    }
    fn f_to_bits(&mut self, a: Reg) -> Reg {
        let b = self.bty();
        self.iop("mov", b, &[a])
    }
    fn bits_to_f(&mut self, a: Reg) -> Reg {
        let b = self.bty();
        self.op(Self::freg, &format!("mov.{b}"), &[a])
    }
    fn iadd(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.sty();
        self.iop("add", t, &[a, b])
    }
    fn isub(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.sty();
        self.iop("sub", t, &[a, b])
    }
    fn iand(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.bty();
        self.iop("and", t, &[a, b])
    }
    fn ior(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.bty();
        self.iop("or", t, &[a, b])
    }
    fn shl(&mut self, a: Reg, n: u32) -> Reg {
        let t = self.bty();
        self.ishift("shl", t, a, n)
    }
    fn shr(&mut self, a: Reg, n: u32) -> Reg {
        let t = self.uty();
        self.ishift("shr", t, a, n)
    }
    fn sar(&mut self, a: Reg, n: u32) -> Reg {
        let t = self.sty();
        self.ishift("shr", t, a, n)
    }
    fn shl_v(&mut self, a: Reg, n: Reg) -> Reg {
        let amt = self.amount(n);
        let t = self.bty();
        self.op(Self::ireg, &format!("shl.{t}"), &[a, amt])
    }
    fn shr_v(&mut self, a: Reg, n: Reg) -> Reg {
        let amt = self.amount(n);
        let t = self.uty();
        self.op(Self::ireg, &format!("shr.{t}"), &[a, amt])
    }
    fn urem(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.uty();
        self.iop("rem", t, &[a, b])
    }
    fn umulhi(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.uty();
        self.iop("mul.hi", t, &[a, b])
    }
    fn imul(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.uty();
        self.iop("mul.lo", t, &[a, b])
    }
    fn slt(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.sty();
        self.setp("lt", t, a, b)
    }
    fn ult(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.uty();
        self.setp("lt", t, a, b)
    }
    fn umin(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.uty();
        self.iop("min", t, &[a, b])
    }
    fn lt(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.fty();
        self.setp("lt", t, a, b)
    }
    fn le(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.fty();
        self.setp("le", t, a, b)
    }
    fn eq(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.fty();
        self.setp("eq", t, a, b)
    }
    fn ne(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.fty();
        self.setp("neu", t, a, b)
    }
    fn is_nan(&mut self, a: Reg) -> Reg {
        let t = self.fty();
        self.setp("nan", t, a, a)
    }
    fn sel(&mut self, p: Reg, a: Reg, b: Reg) -> Reg {
        let t = self.fty();
        self.op(Self::freg, &format!("selp.{t}"), &[a, b, p])
    }
    fn isel(&mut self, p: Reg, a: Reg, b: Reg) -> Reg {
        let t = self.bty();
        self.op(Self::ireg, &format!("selp.{t}"), &[a, b, p])
    }
    fn and(&mut self, a: Reg, b: Reg) -> Reg {
        self.op(Self::pred, "and.pred", &[a, b])
    }
    fn or(&mut self, a: Reg, b: Reg) -> Reg {
        self.op(Self::pred, "or.pred", &[a, b])
    }
    fn not(&mut self, a: Reg) -> Reg {
        self.op(Self::pred, "not.pred", &[a])
    }
    fn fma_ftz(&mut self, a: Reg, b: Reg, c: Reg) -> Reg {
        let name = if self.wide { "fma.rn" } else { "fma.rn.ftz" };
        self.fop(name, &[a, b, c])
    }
    fn fma_rm_ftz(&mut self, a: Reg, b: Reg, c: Reg) -> Reg {
        let name = if self.wide { "fma.rm" } else { "fma.rm.ftz" };
        self.fop(name, &[a, b, c])
    }
    fn sat_ftz(&mut self, a: Reg) -> Reg {
        let t = self.fty();
        let name = if self.wide { format!("cvt.sat.{t}.{t}") } else { format!("cvt.ftz.sat.{t}.{t}") };
        self.op(Self::freg, &name, &[a])
    }
    fn ex2_approx_ftz(&mut self, a: Reg) -> Reg {
        self.approx("ex2", a)
    }
    fn lg2_approx_ftz(&mut self, a: Reg) -> Reg {
        self.approx("lg2", a)
    }
    fn rcp_approx_ftz(&mut self, a: Reg) -> Reg {
        self.approx("rcp", a)
    }
    fn mul_ftz(&mut self, a: Reg, b: Reg) -> Reg {
        let name = if self.wide { "mul.rn" } else { "mul.rn.ftz" };
        self.fop(name, &[a, b])
    }
    fn ixor(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.bty();
        self.iop("xor", t, &[a, b])
    }
    fn s64_scaled_to_f32(&mut self, hi: Reg, lo: Reg, scale: u64) -> Reg {
        assert!(!self.wide, "an f32 reduction step");
        let (v, w, p) = (self.l.b.reg(RegClass::B64), self.l.b.reg(RegClass::F64), self.l.b.reg(RegClass::F64));
        self.l.b.op("mov.b64", v, crate::ptx::Operand::Vector(vec![lo, hi]));
        self.l.b.op("cvt.rn.f64.s64", w, v);
        self.l.b.op("mul.rn.f64", p, (w, Imm::F64(scale)));
        let d = self.freg();
        self.l.b.op("cvt.rn.f32.f64", d, p);
        d
    }
    fn f32_rni_scaled(&mut self, a: Reg, k: u32) -> Reg {
        assert!(self.wide, "an f64 routine's f32 step");
        let (f, m, n) = (self.l.b.reg(RegClass::F32), self.l.b.reg(RegClass::F32), self.l.b.reg(RegClass::F32));
        self.l.b.op("cvt.rn.f32.f64", f, a);
        self.l.b.op("mul.rn.f32", m, (f, Imm::F32(k)));
        self.l.b.op("cvt.rni.f32.f32", n, m);
        let d = self.freg();
        self.l.b.op("cvt.f64.f32", d, n);
        d
    }
    fn abs_as_f32(&mut self, a: Reg) -> Reg {
        assert!(self.wide, "an f64 routine's f32 step");
        let (f, m) = (self.l.b.reg(RegClass::F32), self.l.b.reg(RegClass::F32));
        self.l.b.op("cvt.rn.f32.f64", f, a);
        self.l.b.op("abs.ftz.f32", m, f);
        let d = self.freg();
        self.l.b.op("cvt.f64.f32", d, m);
        d
    }
    fn ex2_f32_widened(&mut self, n: Reg) -> Reg {
        assert!(self.wide, "an f64 routine's f32 step");
        let (f, e) = (self.l.b.reg(RegClass::F32), self.l.b.reg(RegClass::F32));
        self.l.b.op("cvt.rn.f32.f64", f, n);
        self.l.b.op("ex2.approx.ftz.f32", e, f);
        let d = self.freg();
        self.l.b.op("cvt.f64.f32", d, e);
        d
    }
    fn abs_ftz(&mut self, a: Reg) -> Reg {
        let name = if self.wide { "abs" } else { "abs.ftz" };
        self.fop(name, &[a])
    }
    fn arith_ftz(&mut self, op: Arith, dir: Dir, a: Reg, b: Reg) -> Reg {
        let name = match op {
            Arith::Add => "add",
            Arith::Sub => "sub",
            Arith::Mul => "mul",
            Arith::Div | Arith::Sqrt => unreachable!("libm routines round add, sub and mul only"),
        };
        let ftz = if self.wide { "" } else { ".ftz" };
        self.fop(&format!("{name}.{}{ftz}", dir.ptx()), &[a, b])
    }
    fn sqrt_approx_ftz(&mut self, a: Reg) -> Reg {
        assert!(!self.wide, "sqrt.approx is f32 only");
        self.approx("sqrt", a)
    }
    fn rsqrt_approx_ftz(&mut self, a: Reg) -> Reg {
        self.approx("rsqrt", a)
    }
    fn smin(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.sty();
        self.iop("min", t, &[a, b])
    }
    fn smax(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.sty();
        self.iop("max", t, &[a, b])
    }
    fn clz(&mut self, a: Reg) -> Reg {
        let n = self.l.b.reg(RegClass::B32);
        let t = self.bty();
        self.l.b.op(format!("clz.{t}"), n, a);
        if !self.wide {
            return n;
        }
        let d = self.ireg();
        self.l.b.op("cvt.u64.u32", d, n);
        d
    }
    fn ieq(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.bty();
        self.setp("eq", t, a, b)
    }
    fn umax(&mut self, a: Reg, b: Reg) -> Reg {
        let t = self.uty();
        self.iop("max", t, &[a, b])
    }
    fn fmin(&mut self, a: Reg, b: Reg) -> Reg {
        self.fop("min", &[a, b])
    }
    fn fmax(&mut self, a: Reg, b: Reg) -> Reg {
        self.fop("max", &[a, b])
    }
    fn floor_ftz(&mut self, a: Reg) -> Reg {
        let t = self.fty();
        let ftz = if self.wide { "" } else { ".ftz" };
        self.op(Self::freg, &format!("cvt.rmi{ftz}.{t}.{t}"), &[a])
    }
    fn rsqrt_approx(&mut self, a: Reg) -> Reg {
        assert!(self.wide, "an f64 routine's step");
        self.fop("rsqrt.approx", &[a])
    }
    fn div_approx_ftz(&mut self, a: Reg, b: Reg) -> Reg {
        assert!(!self.wide, "div.approx is f32 only");
        self.fop("div.approx.ftz", &[a, b])
    }
    fn f32_exp2_scaled_log2(&mut self, a: Reg, k: u32) -> Reg {
        assert!(self.wide, "an f64 routine's f32 step");
        let r: [Reg; 4] = std::array::from_fn(|_| self.l.b.reg(RegClass::F32));
        self.l.b.op("cvt.rn.f32.f64", r[0], a);
        self.l.b.op("lg2.approx.ftz.f32", r[1], r[0]);
        self.l.b.op("mul.rn.f32", r[2], (r[1], Imm::F32(k)));
        self.l.b.op("ex2.approx.ftz.f32", r[3], r[2]);
        let d = self.freg();
        self.l.b.op("cvt.f64.f32", d, r[3]);
        d
    }
}

impl Emit<'_, '_> {
    /// `name.approx.ftz.f32` (`rcp.approx.ftz.f64`, `rsqrt.approx.ftz.f64` at 64 bits; `ex2`/`lg2`/`sqrt` have no
    /// f64 form, so the f64 routines never ask for them).
    fn approx(&mut self, name: &str, a: Reg) -> Reg {
        let t = self.fty();
        self.op(Self::freg, &format!("{name}.approx.ftz.{t}"), &[a])
    }
}

#[cfg(test)]
pub(crate) use tessel_math::model;
