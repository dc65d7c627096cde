//! libdevice's exponent functions, built from elementwise IR ops op for op as Triton 3.6's PTX for sm_90
//! computes them (branches become selects): `ilogb(x)` (int32: the unbiased exponent; `INT_MIN` for 0 and NaN,
//! and at f32 for subnormals, which `abs.ftz` reads as 0; `INT_MAX` for ±inf), and
//! `libdevice.ldexp(x, n)` and `libdevice.scalbn(x, n)` (the same code in libdevice: `__nv_ldexpf`/
//! `__nv_scalbnf`, `__nv_ldexp`/`__nv_scalbn`), x fp32 or fp64 and n int32, built from elementwise IR ops
//! op for op as Triton 3.6's PTX for sm_90 computes them (branches become selects). f32 scales by
//! `ex2.approx.ftz` of integers (`exp2` on f32, exact powers of two) in one, two or four factors by |n|;
//! f64 builds the powers of two from their bits, n clamped to ±2200 first. ±0, ±inf, NaN or n = 0 give
//! x (or x + x where |x| > 0 does not hold: 0, NaN, and at f32 a subnormal, which `abs.ftz` reads as 0).

use tessel_tile::ScalarType;
use tessel_tile::ops::{BinOp, CmpPred, Const, Op, UnOp};

use crate::elab::value::{Dtype, Tv};
use crate::elab::{Elab, R};
use crate::span::Span;

impl<'a> Elab<'a> {
    /// ldexp of `x` (fp32 or fp64) by `n` (int32), broadcast together.
    pub(super) fn ldexp(&mut self, x: Tv, n: Tv, span: Span) -> R<Tv> {
        let (x, n) = self.broadcast_pair(x, n, span)?;
        let (fty, ity) = (x.ty.clone(), n.ty.clone());
        let wide = x.scalar() == Some(ScalarType::F64);
        let int = |e: &mut Self, v: i64| e.constant(Const::Int(v), ity.clone(), span);
        let flt = |e: &mut Self, v: f64| e.constant(Const::Float(v), fty.clone(), span);
        // |x|, with libdevice's abs.ftz at f32.
        let mut a = self.emit1(Op::Unary(UnOp::Abs), std::slice::from_ref(&x), fty.clone(), span)?;
        let zero = flt(self, 0.0)?;
        if !wide {
            let min_normal = flt(self, f32::MIN_POSITIVE as f64)?;
            let tiny = self.lt(a.clone(), min_normal, span)?;
            a = self.emit1(Op::Select, &[tiny, zero.clone(), a], fty.clone(), span)?;
        }
        // The special cases: |x| = inf, |x| = 0, n = 0.
        let inf = flt(self, f64::INFINITY)?;
        let is_inf = self.cmp2(CmpPred::Eq, a.clone(), inf, span)?;
        let is_zero = self.cmp2(CmpPred::Eq, a.clone(), zero.clone(), span)?;
        let zero_i = int(self, 0)?;
        let n0 = self.cmp2(CmpPred::Eq, n.clone(), zero_i, span)?;
        let special = self.arith(BinOp::Or, is_inf, is_zero, span)?;
        let special = self.arith(BinOp::Or, special, n0, span)?;
        let pos = self.cmp2(CmpPred::Gt, a, zero, span)?;
        let xx = self.arith(BinOp::Add, x.clone(), x.clone(), span)?;
        let sp = self.emit1(Op::Select, &[pos, x.clone(), xx], fty.clone(), span)?;
        let v = if wide { self.ldexp_f64(x, n, span)? } else { self.ldexp_f32(x, n, span)? };
        self.emit1(Op::Select, &[special, sp, v], fty, span)
    }

    /// `__nv_ldexpf`'s scaling: |n| ≤ 125 one factor 2^n, ≤ 251 two (n/2 and the rest), else four (n/4 three
    /// times and the rest), each 2^k from `ex2.approx.ftz` of k.
    fn ldexp_f32(&mut self, x: Tv, n: Tv, span: Span) -> R<Tv> {
        let fty = x.ty.clone();
        let pow2 = |e: &mut Self, k: Tv| -> R<Tv> {
            let kf = e.cast(k, Dtype::Scalar(ScalarType::F32), span)?;
            e.emit1(Op::Unary(UnOp::Exp2), &[kf], fty.clone(), span)
        };
        self.scale_in_factors(x, n, [125, 251], &pow2, span)
    }

    /// `__nv_ldexp`'s scaling: n clamped to ±2200; |n| ≤ 1021 one factor 2^n, ≤ 2043 two, else four; 2^k
    /// as the double with exponent field k + 1023.
    fn ldexp_f64(&mut self, x: Tv, n: Tv, span: Span) -> R<Tv> {
        let ity = n.ty.clone();
        let int = |e: &mut Self, v: i64| e.constant(Const::Int(v), ity.clone(), span);
        let lty = ity.with_elem(tessel_tile::Elem::Scalar(ScalarType::I64));
        let pow2 = |e: &mut Self, k: Tv| -> R<Tv> {
            let k = e.cast(k, Dtype::Scalar(ScalarType::I64), span)?;
            let (bias, sh) =
                (e.constant(Const::Int(1023), lty.clone(), span)?, e.constant(Const::Int(52), lty.clone(), span)?);
            let b = e.arith(BinOp::Add, k, bias, span)?;
            let b = e.arith(BinOp::Shl, b, sh, span)?;
            e.bitcast(b, Dtype::Scalar(ScalarType::F64), span)
        };
        let (lo, hi) = (int(self, -2200)?, int(self, 2200)?);
        let n = self.arith(BinOp::Max, n, lo, span)?;
        let n = self.arith(BinOp::Min, n, hi, span)?;
        self.scale_in_factors(x, n, [1021, 2043], &pow2, span)
    }

    /// x·2^n as libdevice's ldexp computes it: one factor 2^n when |n| ≤ `limits[0]`, two (2^(n/2), 2^(n − n/2))
    /// when |n| ≤ `limits[1]`, else four (2^(n/4) three times and the rest); `pow2` builds 2^k.
    fn scale_in_factors(
        &mut self,
        x: Tv,
        n: Tv,
        limits: [i64; 2],
        pow2: &dyn Fn(&mut Self, Tv) -> R<Tv>,
        span: Span,
    ) -> R<Tv> {
        let (fty, ity) = (x.ty.clone(), n.ty.clone());
        let int = |e: &mut Self, v: i64| e.constant(Const::Int(v), ity.clone(), span);
        let m = self.emit1(Op::Unary(UnOp::Abs), std::slice::from_ref(&n), ity.clone(), span)?;
        let (k_big, k_huge) = (int(self, limits[0])?, int(self, limits[1])?);
        let big = self.cmp2(CmpPred::Gt, m.clone(), k_big, span)?;
        let huge = self.cmp2(CmpPred::Gt, m, k_huge, span)?;
        let e = pow2(self, n.clone())?;
        let v1 = self.arith(BinOp::Mul, e, x.clone(), span)?;
        // n/2 and n/4 toward zero (libdevice's shift-and-correct sequences compute exactly these).
        let two = int(self, 2)?;
        let h = self.arith(BinOp::Div, n.clone(), two, span)?;
        let rest = self.arith(BinOp::Sub, n.clone(), h.clone(), span)?;
        let eh = pow2(self, h)?;
        let v2 = self.arith(BinOp::Mul, eh, x.clone(), span)?;
        let er = pow2(self, rest)?;
        let v2 = self.arith(BinOp::Mul, v2, er, span)?;
        let four = int(self, 4)?;
        let q = self.arith(BinOp::Div, n.clone(), four, span)?;
        let three = int(self, 3)?;
        let q3 = self.arith(BinOp::Mul, q.clone(), three, span)?;
        let rest = self.arith(BinOp::Sub, n, q3, span)?;
        let eq = pow2(self, q)?;
        let mut v3 = self.arith(BinOp::Mul, eq.clone(), x, span)?;
        for _ in 0..2 {
            v3 = self.arith(BinOp::Mul, eq.clone(), v3, span)?;
        }
        let er = pow2(self, rest)?;
        let v3 = self.arith(BinOp::Mul, er, v3, span)?;
        let v = self.emit1(Op::Select, &[huge, v3, v2], fty.clone(), span)?;
        self.emit1(Op::Select, &[big, v, v1], fty, span)
    }

    /// `__nv_ilogbf` / `__nv_ilogb` of `x` (fp32 or fp64), as int32.
    pub(super) fn ilogb(&mut self, x: Tv, span: Span) -> R<Tv> {
        let wide = x.scalar() == Some(ScalarType::F64);
        // |x| on the bits: the float abs of a NaN may keep its sign (the H100's abs.f64 does), and a negative
        // NaN's bits would then read as a tiny magnitude.
        let it = if wide { ScalarType::I64 } else { ScalarType::I32 };
        let bits = self.bitcast(x, Dtype::Scalar(it), span)?;
        let ity = bits.ty.clone();
        let int = |e: &mut Self, v: i64| e.constant(Const::Int(v), ity.clone(), span);
        let magnitude = int(self, if wide { i64::MAX } else { i32::MAX as i64 })?;
        let mut b = self.arith(BinOp::And, bits, magnitude, span)?;
        let (mant, bias, sub_base, inf_bits) =
            if wide { (52, 1023, -1011, 0x7ff0_0000_0000_0000) } else { (23, 127, -118, 0x7f80_0000) };
        if !wide {
            // abs.ftz: a subnormal counts as 0.
            let min_normal = int(self, 1 << mant)?;
            let tiny = self.lt(b.clone(), min_normal, span)?;
            let zero = int(self, 0)?;
            b = self.emit1(Op::Select, &[tiny, zero, b], ity.clone(), span)?;
        }
        // Normal: the exponent field less the bias.
        let sh = int(self, mant)?;
        let e = self.arith(BinOp::Shr, b.clone(), sh, span)?;
        let bias = int(self, -bias)?;
        let e = self.arith(BinOp::Add, e, bias, span)?;
        // Subnormal (f64 only: f32's were flushed): from the leading zeros.
        let z = self.emit1(Op::Unary(UnOp::Clz), std::slice::from_ref(&b), ity.clone(), span)?;
        let base = int(self, sub_base)?;
        let sub = self.arith(BinOp::Sub, base, z, span)?;
        let min_normal = int(self, 1 << mant)?;
        let is_sub = self.lt(b.clone(), min_normal, span)?;
        let e = self.emit1(Op::Select, &[is_sub, sub, e], ity.clone(), span)?;
        // 0 and NaN give INT_MIN, inf INT_MAX (as int32 values in the wider type at f64).
        let (imin, imax) = (int(self, i32::MIN as i64)?, int(self, i32::MAX as i64)?);
        let infb = int(self, inf_bits)?;
        let is_inf = self.cmp2(CmpPred::Eq, b.clone(), infb.clone(), span)?;
        let e = self.emit1(Op::Select, &[is_inf, imax, e], ity.clone(), span)?;
        let is_nan = self.cmp2(CmpPred::Gt, b.clone(), infb, span)?;
        let zero_i = int(self, 0)?;
        let is_zero = self.cmp2(CmpPred::Eq, b, zero_i, span)?;
        let bad = self.arith(BinOp::Or, is_nan, is_zero, span)?;
        let e = self.emit1(Op::Select, &[bad, imin, e], ity, span)?;
        if wide { self.cast(e, Dtype::Scalar(ScalarType::I32), span) } else { Ok(e) }
    }

    fn cmp2(&mut self, pred: CmpPred, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.with_elem(tessel_tile::Elem::Scalar(ScalarType::I1));
        self.emit1(Op::Cmp(pred), &[x, y], ty, span)
    }

    fn lt(&mut self, x: Tv, y: Tv, span: Span) -> R<Tv> {
        self.cmp2(CmpPred::Lt, x, y, span)
    }
}
