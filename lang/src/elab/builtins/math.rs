//! Elementwise math (`tl.exp`, `tl.math.log2`, `tl.fma`, `tl.maximum`, `tl.umulhi`, `tl.fdiv`...), with the
//! dtype restrictions Triton's `math.py` enforces (libdevice's: `exp` is defined on fp32/fp64 only, etc.). Each
//! is a member of both `tl.math` and `tl` (two entries with one handler, so that messages name the one written).

use tessel_tile::ScalarType;
use tessel_tile::ops::{BinOp, Op, UnOp};

use crate::elab::args::{Arg, Bound};
use crate::elab::names::{MATH, TL};
use crate::elab::promote::Checking;
use crate::elab::registry::{Handler, Registration, Registry};
use crate::elab::value::{Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

const F32_F64: &[ScalarType] = &[ScalarType::F32, ScalarType::F64];

/// Registers `name` in `tl.math` and in `tl`; the `tl` entry is returned (to make it a tensor method).
fn both<'r>(r: &'r mut Registry, name: &'static str, handler: Handler) -> Registration<'r> {
    r.add(MATH, name, handler);
    r.add(TL, name, handler)
}

pub(super) fn register(r: &mut Registry) {
    both(r, "exp", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Exp, F32_F64))).method();
    both(r, "exp2", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Exp2, F32_F64))).method();
    both(r, "log", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Log, F32_F64))).method();
    both(r, "log2", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Log2, F32_F64))).method();
    both(r, "sqrt", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Sqrt, F32_F64))).method();
    both(r, "sqrt_rn", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::SqrtRn, &[ScalarType::F32]))).method();
    both(r, "rsqrt", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Rsqrt, F32_F64))).method();
    both(r, "sin", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Sin, F32_F64))).method();
    both(r, "cos", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Cos, F32_F64))).method();
    both(r, "abs", Handler::Bound("x", |e, b| e.abs_builtin(b.req("x"), &b.fname, b.span))).method();
    both(r, "erf", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Erf, F32_F64))).method();
    both(r, "floor", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Floor, F32_F64))).method();
    both(r, "ceil", Handler::Bound("x", |e, b| e.unary_math(b, UnOp::Ceil, F32_F64))).method();
    both(r, "fma", Handler::Bound("x, y, z", |e, b| e.fma(b))).method();
    both(r, "umulhi", Handler::Bound("x, y", |e, b| e.umulhi(b)));
    both(r, "div_rn", Handler::Bound("x, y", |e, b| e.div_rn(b)));
    both(r, "fdiv", Handler::Bound("x, y, ieee_rounding?", |e, b| e.fdiv(b)));
    both(r, "maximum", Handler::Bound("x, y, propagate_nan?", |e, b| e.min_max(b, BinOp::Max)));
    both(r, "minimum", Handler::Bound("x, y, propagate_nan?", |e, b| e.min_max(b, BinOp::Min)));
    both(r, "clamp", Handler::Bound("x, min, max, propagate_nan?", |e, b| e.clamp(b)));
}

impl<'a> Elab<'a> {
    /// The unary `op` of `x`, defined on the dtypes `dtypes`.
    fn unary_math(&mut self, b: Bound<'a>, op: UnOp, dtypes: &[ScalarType]) -> R<Value<'a>> {
        let x = self.tensor_arg(b.req("x"), &b.fname, "x")?;
        self.check_dtype(&x, dtypes, &b.fname, b.req("x").span)?;
        let ty = x.ty.clone();
        Ok(Value::Tensor(self.emit1(Op::Unary(op), &[x], ty, b.span)?))
    }

    /// `tl.abs(x)`: unsigned integers and bools are their own absolute values.
    pub(super) fn abs_builtin(&mut self, x: &Arg<'a>, fname: &str, span: Span) -> R<Value<'a>> {
        let x = self.tensor_arg(x, fname, "x")?;
        match x.scalar() {
            Some(s) if s.is_unsigned_int() || s.is_bool() => Ok(Value::Tensor(x)),
            Some(_) => {
                let ty = x.ty.clone();
                Ok(Value::Tensor(self.emit1(Op::Unary(UnOp::Abs), &[x], ty, span)?))
            }
            None => Err(self.err(span, format!("`{fname}` needs numbers, got {}", x.ty))),
        }
    }

    fn fma(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let (x, y, z) = (b.req("x").value.clone(), b.req("y").value.clone(), b.req("z").value.clone());
        let opts = Checking { arithmetic: true, ..Checking::default() };
        let (x, y) = self.binary_operands(&x, &y, opts, "fma", span)?;
        let (x, z) = self.binary_operands(&Value::Tensor(x), &z, opts, "fma", span)?;
        let y = self.cast(y, x.dtype().unwrap(), span)?;
        let y = self.broadcast_to(y, x.shape(), span)?;
        if !x.scalar().is_some_and(ScalarType::is_float) {
            return Err(self.err(span, format!("`{fname}` needs float operands, got {}", x.ty)));
        }
        let ty = x.ty.clone();
        Ok(Value::Tensor(self.emit1(Op::Fma, &[x, y, z], ty, span)?))
    }

    /// `tl.maximum` (`op` max) or `tl.minimum` (min).
    fn min_max(&mut self, b: Bound<'a>, op: BinOp) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let nan = self.propagate_nan(b.opt("propagate_nan"), fname)?;
        let opts = Checking { arithmetic: true, ..Checking::default() };
        let (x, y) = self.binary_operands(&b.req("x").value, &b.req("y").value, opts, fname, span)?;
        let nan = nan && x.scalar().is_some_and(ScalarType::is_float);
        let ty = x.ty.clone();
        Ok(Value::Tensor(self.emit1(Op::Binary { op, propagate_nan: nan }, &[x, y], ty, span)?))
    }

    fn clamp(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let nan = self.propagate_nan(b.opt("propagate_nan"), fname)?;
        let opts = Checking { arithmetic: true, ..Checking::default() };
        let (x, lo) = self.binary_operands(&b.req("x").value, &b.req("min").value, opts, fname, span)?;
        let (x, hi) = self.binary_operands(&Value::Tensor(x), &b.req("max").value, opts, fname, span)?;
        let lo = self.cast(lo, x.dtype().unwrap(), span)?;
        let lo = self.broadcast_to(lo, x.shape(), span)?;
        if !x.scalar().is_some_and(ScalarType::is_float) {
            return Err(self.err(span, format!("`{fname}` only supports floating point, got {}", x.ty)));
        }
        let ty = x.ty.clone();
        Ok(Value::Tensor(self.emit1(Op::Clamp { propagate_nan: nan }, &[x, lo, hi], ty, span)?))
    }

    fn umulhi(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let opts = Checking { arithmetic: true, ..Checking::default() };
        let ints = [ScalarType::I32, ScalarType::I64, ScalarType::U32, ScalarType::U64];
        for k in ["x", "y"] {
            if let Value::Tensor(t) = &b.req(k).value {
                self.check_dtype(t, &ints, fname, b.req(k).span)?;
            }
        }
        let (x, y) = self.binary_operands(&b.req("x").value, &b.req("y").value, opts, fname, span)?;
        Ok(Value::Tensor(self.arith(BinOp::UMulHi, x, y, span)?))
    }

    fn div_rn(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        for k in ["x", "y"] {
            if let Value::Tensor(t) = &b.req(k).value {
                self.check_dtype(t, &[ScalarType::F32], fname, b.req(k).span)?;
            }
        }
        let opts = Checking { arithmetic: true, ..Checking::default() };
        let (x, y) = self.binary_operands(&b.req("x").value, &b.req("y").value, opts, fname, span)?;
        Ok(Value::Tensor(self.arith(BinOp::DivRn, x, y, span)?))
    }

    fn fdiv(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let ieee = match b.opt("ieee_rounding") {
            Some(a) => self.const_bool(a, fname, "ieee_rounding")?,
            None => false,
        };
        let x = self.tensor_arg(b.req("x"), fname, "x")?;
        let y = self.tensor_arg(b.req("y"), fname, "y")?;
        if !x.scalar().is_some_and(ScalarType::is_float) || !y.scalar().is_some_and(ScalarType::is_float) {
            return Err(self.err(span, format!("both operands of `{fname}` must be floats, got {} and {}", x.ty, y.ty)));
        }
        let (x, y) = self.broadcast_pair(x, y, span)?;
        if x.ty != y.ty {
            return Err(self.err(span, format!("`{fname}` needs operands of one type, got {} and {}", x.ty, y.ty)));
        }
        Ok(Value::Tensor(self.arith(if ieee { BinOp::DivRn } else { BinOp::Div }, x, y, span)?))
    }

    /// Triton's `_check_dtype`: math functions accept only some dtypes.
    pub fn check_dtype(&self, x: &Tv, allowed: &[ScalarType], fname: &str, span: Span) -> R<()> {
        match x.scalar() {
            Some(s) if allowed.contains(&s) => Ok(()),
            _ => {
                let names: Vec<&str> = allowed.iter().map(|s| s.triton_name()).collect();
                let got = x.dtype().map_or_else(|| x.ty.to_string(), |d| d.to_string());
                let mut e = self.err(span, format!("`{fname}` expects {}, got {got}", names.join(" or ")));
                if allowed.contains(&ScalarType::F32) && x.scalar().is_some_and(ScalarType::is_float) {
                    e.diag = e.diag.with_hint("convert first: `x.to(tl.float32)`");
                }
                Err(e)
            }
        }
    }

    fn propagate_nan(&self, a: Option<&Arg<'a>>, fname: &str) -> R<bool> {
        match a {
            None => Ok(false),
            Some(a) => Ok(self.const_int(a, fname, "propagate_nan")? != 0),
        }
    }
}
