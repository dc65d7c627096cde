//! `libdevice.remainder(x, y)`: IEEE 754's remainder, x − n·y with n the integer nearest x / y (ties to even),
//! always exactly representable, so any exact computation gives libdevice's bits. Built from elementwise IR:
//! `fmod` (exact, with fp32's flush of subnormal operands, as libdevice's `abs.ftz` reads them) by 2|y| leaves
//! |r| < 2|y| with x's sign; then up to two exact subtractions of |y| bring |r| to at most |y|/2 (a tie kept
//! only when its quotient is even), comparing 2|r| with |y| where |y| is so small that |y|/2 would round, and
//! the result takes x's sign (a zero result is ±0 as x). NaN operands, x = ±inf and y = 0 give NaN (through
//! `fmod`); y = ±inf gives x. On fp32, libdevice runs with `__CUDA_FTZ` as Triton compiles it: subnormal
//! operands read as zeros of their sign (a subnormal y gives NaN), and a subnormal result is flushed too.

use tessel_tile::ops::{BinOp, CmpPred, Const, Op, UnOp};

use crate::elab::value::Tv;
use crate::elab::{Elab, R};
use crate::span::Span;

impl<'a> Elab<'a> {
    /// remainder of `x` by `y` (same float type, fp32 or fp64).
    pub(super) fn remainder(&mut self, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let fty = x.ty.clone();
        let wide = x.scalar() == Some(tessel_tile::ScalarType::F64);
        let flt = |e: &mut Self, v: f64| e.constant(Const::Float(v), fty.clone(), span);
        let abs = |e: &mut Self, v: Tv| e.emit1(Op::Unary(UnOp::Abs), &[v], fty.clone(), span);
        let cmp = |e: &mut Self, p: CmpPred, a: Tv, b: Tv| {
            let ty = a.ty.with_elem(tessel_tile::Elem::Scalar(tessel_tile::ScalarType::I1));
            e.emit1(Op::Cmp(p), &[a, b], ty, span)
        };
        // fp32: subnormals to zeros of their sign (`v * 0` keeps the sign), as libdevice's `.ftz` ops read them.
        let ftz = |e: &mut Self, v: Tv| -> R<Tv> {
            if wide {
                return Ok(v);
            }
            let small = abs(e, v.clone())?;
            let normal = flt(e, f32::MIN_POSITIVE as f64)?;
            let tiny = cmp(e, CmpPred::Lt, small, normal)?;
            let z = flt(e, 0.0)?;
            let zero = e.arith(BinOp::Mul, v.clone(), z, span)?;
            e.emit1(Op::Select, &[tiny, zero, v], fty.clone(), span)
        };
        let (x, y) = (ftz(self, x)?, ftz(self, y)?);
        let p = abs(self, y)?;
        // 2|y| overflows to inf only when |y| > max / 2, where fmod by inf leaves x, as it should.
        let two_p = self.arith(BinOp::Add, p.clone(), p.clone(), span)?;
        let r = self.arith(BinOp::Fmod, x.clone(), two_p, span)?;
        let a = abs(self, r)?;
        // |y| / 2 is exact unless |y| is below twice the smallest normal: there, compare 2|r| with |y| instead
        // (no overflow at that size).
        let tiny_bound = if wide { 2.0 * f64::MIN_POSITIVE } else { 2.0 * f32::MIN_POSITIVE as f64 };
        let tiny_bound = flt(self, tiny_bound)?;
        let tiny = cmp(self, CmpPred::Lt, p.clone(), tiny_bound)?;
        let half = flt(self, 0.5)?;
        let p_half = self.arith(BinOp::Mul, p.clone(), half, span)?;
        // Whether `v` is above |y| / 2 (`strict`) or at least |y| / 2.
        let beyond = |e: &mut Self, v: Tv, strict: bool| -> R<Tv> {
            let pred = if strict { CmpPred::Gt } else { CmpPred::Ge };
            let twice = e.arith(BinOp::Add, v.clone(), v.clone(), span)?;
            let small = cmp(e, pred, twice, p.clone())?;
            let large = cmp(e, pred, v, p_half.clone())?;
            e.emit1(Op::Select, &[tiny.clone(), small, large], tiny.ty.clone(), span)
        };
        let c1 = beyond(self, a.clone(), true)?;
        let a_less = self.arith(BinOp::Sub, a.clone(), p.clone(), span)?;
        let a1 = self.emit1(Op::Select, &[c1.clone(), a_less, a], fty.clone(), span)?;
        let again = beyond(self, a1.clone(), false)?;
        let c2 = self.emit1(Op::Select, &[c1.clone(), again, c1.clone()], c1.ty.clone(), span)?;
        let a1_less = self.arith(BinOp::Sub, a1.clone(), p, span)?;
        let a2 = self.emit1(Op::Select, &[c2, a1_less, a1], fty.clone(), span)?;
        // x's sign on the result: negate when x's sign bit is set (a zero becomes -0).
        let (bits, _) = self.float_bits(x, span)?;
        let zero = self.zero_like(&bits, span)?;
        let negative = cmp(self, CmpPred::Lt, bits, zero)?;
        let flipped = self.emit1(Op::Unary(UnOp::Neg), std::slice::from_ref(&a2), fty.clone(), span)?;
        let r = self.emit1(Op::Select, &[negative, flipped, a2], fty.clone(), span)?;
        ftz(self, r)
    }
}
