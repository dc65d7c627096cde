//! Elementwise math (`tl.exp`, `tl.math.log2`, `tl.fma`, `tl.maximum`, `tl.umulhi`, `tl.fdiv`...), with the
//! dtype restrictions Triton's `math.py` enforces (libdevice's: `exp` is defined on fp32/fp64 only, etc.).

use tessel_tile::ScalarType;
use tessel_tile::ops::{BinOp, Op, UnOp};

use crate::elab::args::CallArgs;
use crate::elab::promote::Checking;
use crate::elab::value::{Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

const F32_F64: &[ScalarType] = &[ScalarType::F32, ScalarType::F64];

impl<'a> Elab<'a> {
    pub fn call_math(&mut self, name: &str, fname: &str, args: &CallArgs<'a>) -> R<Option<Value<'a>>> {
        let span = args.span;
        let unary = match name {
            "exp" => Some((UnOp::Exp, F32_F64)),
            "exp2" => Some((UnOp::Exp2, F32_F64)),
            "log" => Some((UnOp::Log, F32_F64)),
            "log2" => Some((UnOp::Log2, F32_F64)),
            "sqrt" => Some((UnOp::Sqrt, F32_F64)),
            "sqrt_rn" => Some((UnOp::SqrtRn, &[ScalarType::F32][..])),
            "rsqrt" => Some((UnOp::Rsqrt, F32_F64)),
            "sin" => Some((UnOp::Sin, F32_F64)),
            "cos" => Some((UnOp::Cos, F32_F64)),
            "erf" => Some((UnOp::Erf, F32_F64)),
            "floor" => Some((UnOp::Floor, F32_F64)),
            "ceil" => Some((UnOp::Ceil, F32_F64)),
            _ => None,
        };
        if let Some((op, dtypes)) = unary {
            let b = self.bind(fname, "x", args.clone())?;
            let x = self.tensor_arg(b.req("x"), fname, "x")?;
            self.check_dtype(&x, dtypes, fname, b.req("x").span)?;
            let ty = x.ty.clone();
            return Ok(Some(Value::Tensor(self.emit1(Op::Unary(op), &[x], ty, span)?)));
        }
        Ok(Some(match name {
            "abs" => {
                let b = self.bind(fname, "x", args.clone())?;
                let x = self.tensor_arg(b.req("x"), fname, "x")?;
                match x.scalar() {
                    Some(s) if s.is_unsigned_int() || s.is_bool() => Value::Tensor(x),
                    Some(_) => {
                        let ty = x.ty.clone();
                        Value::Tensor(self.emit1(Op::Unary(UnOp::Abs), &[x], ty, span)?)
                    }
                    None => return Err(self.err(span, format!("`{fname}` needs numbers, got {}", x.ty))),
                }
            }
            "fma" => {
                let b = self.bind(fname, "x, y, z", args.clone())?;
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
                Value::Tensor(self.emit1(Op::Fma, &[x, y, z], ty, span)?)
            }
            "maximum" | "minimum" => {
                let b = self.bind(fname, "x, y, propagate_nan?", args.clone())?;
                let nan = self.propagate_nan(b.opt("propagate_nan"), fname)?;
                let opts = Checking { arithmetic: true, ..Checking::default() };
                let (x, y) = self.binary_operands(&b.req("x").value, &b.req("y").value, opts, fname, span)?;
                let op = if name == "maximum" { BinOp::Max } else { BinOp::Min };
                let nan = nan && x.scalar().is_some_and(ScalarType::is_float);
                let ty = x.ty.clone();
                Value::Tensor(self.emit1(Op::Binary { op, propagate_nan: nan }, &[x, y], ty, span)?)
            }
            "clamp" => {
                let b = self.bind(fname, "x, min, max, propagate_nan?", args.clone())?;
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
                Value::Tensor(self.emit1(Op::Clamp { propagate_nan: nan }, &[x, lo, hi], ty, span)?)
            }
            "umulhi" => {
                let b = self.bind(fname, "x, y", args.clone())?;
                let opts = Checking { arithmetic: true, ..Checking::default() };
                let ints = [ScalarType::I32, ScalarType::I64, ScalarType::U32, ScalarType::U64];
                for k in ["x", "y"] {
                    if let Value::Tensor(t) = &b.req(k).value {
                        self.check_dtype(t, &ints, fname, b.req(k).span)?;
                    }
                }
                let (x, y) = self.binary_operands(&b.req("x").value, &b.req("y").value, opts, fname, span)?;
                Value::Tensor(self.arith(BinOp::UMulHi, x, y, span)?)
            }
            "div_rn" => {
                let b = self.bind(fname, "x, y", args.clone())?;
                for k in ["x", "y"] {
                    if let Value::Tensor(t) = &b.req(k).value {
                        self.check_dtype(t, &[ScalarType::F32], fname, b.req(k).span)?;
                    }
                }
                let opts = Checking { arithmetic: true, ..Checking::default() };
                let (x, y) = self.binary_operands(&b.req("x").value, &b.req("y").value, opts, fname, span)?;
                Value::Tensor(self.arith(BinOp::DivRn, x, y, span)?)
            }
            "fdiv" => {
                let b = self.bind(fname, "x, y, ieee_rounding?", args.clone())?;
                let ieee = match b.opt("ieee_rounding") {
                    Some(a) => self.const_bool(a, fname, "ieee_rounding")?,
                    None => false,
                };
                let x = self.tensor_arg(b.req("x"), fname, "x")?;
                let y = self.tensor_arg(b.req("y"), fname, "y")?;
                if !x.scalar().is_some_and(ScalarType::is_float) || !y.scalar().is_some_and(ScalarType::is_float) {
                    return Err(
                        self.err(span, format!("both operands of `{fname}` must be floats, got {} and {}", x.ty, y.ty))
                    );
                }
                let (x, y) = self.broadcast_pair(x, y, span)?;
                if x.ty != y.ty {
                    return Err(
                        self.err(span, format!("`{fname}` needs operands of one type, got {} and {}", x.ty, y.ty))
                    );
                }
                Value::Tensor(self.arith(if ieee { BinOp::DivRn } else { BinOp::Div }, x, y, span)?)
            }
            _ => return Ok(None),
        }))
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

    fn propagate_nan(&self, a: Option<&crate::elab::args::Arg<'a>>, fname: &str) -> R<bool> {
        match a {
            None => Ok(false),
            Some(a) => Ok(self.const_int(a, fname, "propagate_nan")? != 0),
        }
    }
}
