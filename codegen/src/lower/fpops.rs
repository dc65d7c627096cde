//! The operations the branch-free math routines of `math.rs` are written in, with two implementations: one
//! emits PTX, the other evaluates the same sequence on the CPU with the same IEEE roundings. A routine is
//! therefore tested bit-exactly on the CPU (against the interpreter's reference functions) and the PTX it
//! emits is that tested sequence, instruction for instruction.
//!
//! Every float op is correctly rounded to nearest even (`add.rn`, `mul.rn`, `fma.rn`, `div.rn`; `.rn` also
//! keeps ptxas from contracting a `mul` and an `add` into an `fma` the model would not do) and keeps
//! subnormals (no `.ftz`). Integers have the width of the float (32 or 64 bits) and wrap.

use super::Lower;
use crate::ptx::{Imm, Reg, RegClass, f32_imm, f64_imm, instr};

/// A sequence of float/int/predicate operations at one precision (32 or 64 bits).
pub(crate) trait FloatOps {
    /// A float, an integer of the same width, a predicate.
    type F: Copy;
    type I: Copy;
    type P: Copy;

    /// `v` rounded to the precision.
    fn fc(&mut self, v: f64) -> Self::F;
    /// A float from its bits.
    fn fbits(&mut self, bits: u64) -> Self::F;
    fn ic(&mut self, v: u64) -> Self::I;
    fn add(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn sub(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn mul(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn div(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// Correctly rounded square root (`sqrt.rn`).
    fn sqrt(&mut self, a: Self::F) -> Self::F;
    /// `a * b + c` with one rounding.
    fn fma(&mut self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    fn neg(&mut self, a: Self::F) -> Self::F;
    fn abs(&mut self, a: Self::F) -> Self::F;
    /// Round to the nearest integer, ties to even (`cvt.rni`).
    fn rni(&mut self, a: Self::F) -> Self::F;
    /// Round toward zero to an integer (`cvt.rzi`).
    fn trunc(&mut self, a: Self::F) -> Self::F;
    /// An integral float as a signed integer (saturating; NaN gives 0).
    fn f2i(&mut self, a: Self::F) -> Self::I;
    /// A signed integer as a float (rounded).
    fn i2f(&mut self, a: Self::I) -> Self::F;
    fn f_to_bits(&mut self, a: Self::F) -> Self::I;
    fn bits_to_f(&mut self, a: Self::I) -> Self::F;
    fn iadd(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn isub(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn iand(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn ior(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn shl(&mut self, a: Self::I, n: u32) -> Self::I;
    /// Logical shift right.
    fn shr(&mut self, a: Self::I, n: u32) -> Self::I;
    /// Arithmetic shift right.
    fn sar(&mut self, a: Self::I, n: u32) -> Self::I;
    /// Shift left by a variable amount (amounts at or past the width give 0, as PTX clamps).
    fn shl_v(&mut self, a: Self::I, n: Self::I) -> Self::I;
    /// Logical shift right by a variable amount (amounts at or past the width give 0).
    fn shr_v(&mut self, a: Self::I, n: Self::I) -> Self::I;
    /// Unsigned remainder (`b` nonzero).
    fn urem(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// Unsigned high half of the double-width product.
    fn umulhi(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// Wrapping (low half) product.
    fn imul(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// Signed `a < b`.
    fn slt(&mut self, a: Self::I, b: Self::I) -> Self::P;
    /// Unsigned `a < b`.
    fn ult(&mut self, a: Self::I, b: Self::I) -> Self::P;
    fn umin(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// Ordered comparisons (false when either side is NaN).
    fn lt(&mut self, a: Self::F, b: Self::F) -> Self::P;
    fn le(&mut self, a: Self::F, b: Self::F) -> Self::P;
    fn eq(&mut self, a: Self::F, b: Self::F) -> Self::P;
    /// `a != b` or either is NaN.
    fn ne(&mut self, a: Self::F, b: Self::F) -> Self::P;
    fn is_nan(&mut self, a: Self::F) -> Self::P;
    fn sel(&mut self, p: Self::P, a: Self::F, b: Self::F) -> Self::F;
    fn isel(&mut self, p: Self::P, a: Self::I, b: Self::I) -> Self::I;
    fn and(&mut self, a: Self::P, b: Self::P) -> Self::P;
    fn or(&mut self, a: Self::P, b: Self::P) -> Self::P;
    fn not(&mut self, a: Self::P) -> Self::P;
}

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
}

/// The CPU model: the same operations on `f32`/`f64` values (Rust's float ops round to nearest even and keep
/// subnormals, as the PTX forms above do).
#[cfg(test)]
pub(crate) mod model {
    use super::FloatOps;

    macro_rules! model {
        ($name:ident, $f:ty, $u:ty, $s:ty) => {
            pub(crate) struct $name;

            impl FloatOps for $name {
                type F = $f;
                type I = $u;
                type P = bool;

                fn fc(&mut self, v: f64) -> $f {
                    v as $f
                }
                fn fbits(&mut self, bits: u64) -> $f {
                    <$f>::from_bits(bits as $u)
                }
                fn ic(&mut self, v: u64) -> $u {
                    v as $u
                }
                fn add(&mut self, a: $f, b: $f) -> $f {
                    a + b
                }
                fn sub(&mut self, a: $f, b: $f) -> $f {
                    a - b
                }
                fn mul(&mut self, a: $f, b: $f) -> $f {
                    a * b
                }
                fn div(&mut self, a: $f, b: $f) -> $f {
                    a / b
                }
                fn sqrt(&mut self, a: $f) -> $f {
                    a.sqrt()
                }
                fn fma(&mut self, a: $f, b: $f, c: $f) -> $f {
                    a.mul_add(b, c)
                }
                fn neg(&mut self, a: $f) -> $f {
                    -a
                }
                fn abs(&mut self, a: $f) -> $f {
                    a.abs()
                }
                fn rni(&mut self, a: $f) -> $f {
                    a.round_ties_even()
                }
                fn trunc(&mut self, a: $f) -> $f {
                    a.trunc()
                }
                fn f2i(&mut self, a: $f) -> $u {
                    a.round_ties_even() as $s as $u
                }
                fn i2f(&mut self, a: $u) -> $f {
                    a as $s as $f
                }
                fn f_to_bits(&mut self, a: $f) -> $u {
                    a.to_bits()
                }
                fn bits_to_f(&mut self, a: $u) -> $f {
                    <$f>::from_bits(a)
                }
                fn iadd(&mut self, a: $u, b: $u) -> $u {
                    a.wrapping_add(b)
                }
                fn isub(&mut self, a: $u, b: $u) -> $u {
                    a.wrapping_sub(b)
                }
                fn iand(&mut self, a: $u, b: $u) -> $u {
                    a & b
                }
                fn ior(&mut self, a: $u, b: $u) -> $u {
                    a | b
                }
                fn shl(&mut self, a: $u, n: u32) -> $u {
                    a << n
                }
                fn shr(&mut self, a: $u, n: u32) -> $u {
                    a >> n
                }
                fn sar(&mut self, a: $u, n: u32) -> $u {
                    ((a as $s) >> n) as $u
                }
                fn shl_v(&mut self, a: $u, n: $u) -> $u {
                    if n < <$u>::BITS as $u { a << n } else { 0 }
                }
                fn shr_v(&mut self, a: $u, n: $u) -> $u {
                    if n < <$u>::BITS as $u { a >> n } else { 0 }
                }
                fn urem(&mut self, a: $u, b: $u) -> $u {
                    a % b
                }
                fn umulhi(&mut self, a: $u, b: $u) -> $u {
                    ((a as u128 * b as u128) >> <$u>::BITS) as $u
                }
                fn imul(&mut self, a: $u, b: $u) -> $u {
                    a.wrapping_mul(b)
                }
                fn slt(&mut self, a: $u, b: $u) -> bool {
                    (a as $s) < (b as $s)
                }
                fn ult(&mut self, a: $u, b: $u) -> bool {
                    a < b
                }
                fn umin(&mut self, a: $u, b: $u) -> $u {
                    a.min(b)
                }
                fn lt(&mut self, a: $f, b: $f) -> bool {
                    a < b
                }
                fn le(&mut self, a: $f, b: $f) -> bool {
                    a <= b
                }
                fn eq(&mut self, a: $f, b: $f) -> bool {
                    a == b
                }
                fn ne(&mut self, a: $f, b: $f) -> bool {
                    a != b
                }
                fn is_nan(&mut self, a: $f) -> bool {
                    a.is_nan()
                }
                fn sel(&mut self, p: bool, a: $f, b: $f) -> $f {
                    if p { a } else { b }
                }
                fn isel(&mut self, p: bool, a: $u, b: $u) -> $u {
                    if p { a } else { b }
                }
                fn and(&mut self, a: bool, b: bool) -> bool {
                    a && b
                }
                fn or(&mut self, a: bool, b: bool) -> bool {
                    a || b
                }
                fn not(&mut self, a: bool) -> bool {
                    !a
                }
            }
        };
    }

    model!(M32, f32, u32, i32);
    model!(M64, f64, u64, i64);
}
