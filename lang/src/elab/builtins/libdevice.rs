//! The functions of `triton.language.extra.libdevice` beyond `tl.math`'s (which the libdevice namespace also
//! resolves): the transcendental ones (`tanh`, `atan2`, `log1p`, `sinpi`, `erfc`, ... as IR ops: libdevice's own
//! sequences where `tessel_math` has them, which the interpreter and codegen both run, else the
//! interpreter's correctly rounded values and the routines of `codegen/src/lower/libdevice.rs`), rounding
//! (`trunc`, `rint`, `nearbyint`, `round`), `pow`, `fmod` (C's exact remainder, unlike `%`), `remainder` (IEEE's,
//! `libdevice_remainder.rs`), `ldexp`/`scalbn`
//! and `ilogb` (`libdevice_exponent.rs`), `norm3d`/`norm4d`/`rnorm3d`/`rnorm4d` (`libdevice_norm.rs`), arithmetic with a rounding mode (`add_rz`, `mul_rd`, `div_ru`, `sqrt_rz`, `rcp_rn`,
//! `fma_rz`...: PTX's `.rz`/`.rm`/`.rp`), the `fast_*f` functions,
//! fmax/fmin/fdim/saturatef/nextafter, the conversions (`float2int_rn`...), and the classification and
//! sign functions (`isnan`, `isinf`, `finitef`, `isfinited`, `signbit`, `copysign`), which are compositions of
//! compares and bit operations. As in Triton, each takes fp32 or fp64 only (`__nv_tanhf` / `__nv_tanh`...), and
//! the classification functions return int32 (1 or 0).

use tessel_math::rounding::Dir;
use tessel_tile::ops::{BinOp, CmpPred, Const, Op, UnOp};
use tessel_tile::{Elem, ScalarType};

use crate::elab::args::CallArgs;
use crate::elab::value::{Dtype, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

const F32_F64: &[ScalarType] = &[ScalarType::F32, ScalarType::F64];

/// The libdevice names this module adds to those of `tl.math`.
pub const LIBDEVICE_NAMES: &[&str] = &[
    "tanh",
    "sinh",
    "cosh",
    "tan",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "log1p",
    "expm1",
    "log10",
    "exp10",
    "cbrt",
    "sinpi",
    "cospi",
    "rcbrt",
    "logb",
    "erfinv",
    "erfc",
    "normcdf",
    "erfcx",
    "erfcinv",
    "normcdfinv",
    "cyl_bessel_i0",
    "cyl_bessel_i1",
    "tgamma",
    "lgamma",
    "j0",
    "j1",
    "y0",
    "y1",
    "jn",
    "yn",
    "norm3d",
    "norm4d",
    "rnorm3d",
    "rnorm4d",
    "rsqrt_rn",
    "rcp64h",
    "trunc",
    "rint",
    "nearbyint",
    "round",
    "atan2",
    "hypot",
    "rhypot",
    "pow",
    "fmod",
    "remainder",
    "add_rn",
    "add_rz",
    "add_rd",
    "add_ru",
    "sub_rn",
    "sub_rz",
    "sub_rd",
    "sub_ru",
    "mul_rn",
    "mul_rz",
    "mul_rd",
    "mul_ru",
    "div_rz",
    "div_rd",
    "div_ru",
    "rcp_rn",
    "rcp_rz",
    "rcp_rd",
    "rcp_ru",
    "sqrt_rz",
    "sqrt_rd",
    "sqrt_ru",
    "ldexp",
    "scalbn",
    "ilogb",
    "fma_rn",
    "fma_rz",
    "fma_rd",
    "fma_ru",
    "fast_expf",
    "fast_exp10f",
    "fast_log2f",
    "fast_logf",
    "fast_log10f",
    "fast_sinf",
    "fast_cosf",
    "fast_tanf",
    "fast_powf",
    "fast_dividef",
    "fmax",
    "fmin",
    "fdim",
    "saturatef",
    "nextafter",
    "float_as_int",
    "int_as_float",
    "double_as_longlong",
    "longlong_as_double",
    "double2float_rn",
    "int2float_rz",
    "int2float_rd",
    "int2float_ru",
    "uint2float_rz",
    "uint2float_rd",
    "uint2float_ru",
    "ll2float_rz",
    "ll2float_rd",
    "ll2float_ru",
    "ull2float_rz",
    "ull2float_rd",
    "ull2float_ru",
    "ll2double_rz",
    "ll2double_rd",
    "ll2double_ru",
    "ull2double_rz",
    "ull2double_rd",
    "ull2double_ru",
    "double2float_rz",
    "double2float_rd",
    "double2float_ru",
    "int2float_rn",
    "uint2float_rn",
    "ll2float_rn",
    "ull2float_rn",
    "int2double_rn",
    "uint2double_rn",
    "ll2double_rn",
    "ull2double_rn",
    "isnan",
    "isinf",
    "finitef",
    "isfinited",
    "signbit",
    "copysign",
];

/// The names `tl.math` has too whose libdevice version computes otherwise: `libdevice.div_rn` and
/// `libdevice.sqrt_rn` flush f32 subnormals (`div.rn.ftz.f32`), `tl.div_rn` and `tl.sqrt_rn` keep them; so
/// does `libdevice.abs` at f32 (`abs.ftz.f32`), `tl.abs` keeping them.
pub const OWN_VERSIONS: &[&str] = &["div_rn", "sqrt_rn", "abs"];

/// `add_rn` ... `div_ru`: the op with that rounding.
fn rounded_binary(name: &str) -> Option<BinOp> {
    Some(match name {
        "add_rn" => BinOp::AddRn,
        "add_rz" => BinOp::AddRz,
        "add_rd" => BinOp::AddRd,
        "add_ru" => BinOp::AddRu,
        "sub_rn" => BinOp::SubRn,
        "sub_rz" => BinOp::SubRz,
        "sub_rd" => BinOp::SubRd,
        "sub_ru" => BinOp::SubRu,
        "mul_rn" => BinOp::MulRn,
        "mul_rz" => BinOp::MulRz,
        "mul_rd" => BinOp::MulRd,
        "mul_ru" => BinOp::MulRu,
        "div_rn" => BinOp::DivRnFtz,
        "div_rz" => BinOp::DivRz,
        "div_rd" => BinOp::DivRd,
        "div_ru" => BinOp::DivRu,
        _ => return None,
    })
}

/// The conversions to float with a rounding mode (`int2float_rz`, `ull2double_ru`, `double2float_rd`...; and
/// `double2float_rn`, which flushes a subnormal f32 result as libdevice does): (source, target, direction).
fn rounded_conversion(name: &str) -> Option<(ScalarType, ScalarType, Dir)> {
    let (from, rest) = name.split_once('2')?;
    let (to, mode) = rest.split_once('_')?;
    let from = match from {
        "int" => ScalarType::I32,
        "uint" => ScalarType::U32,
        "ll" => ScalarType::I64,
        "ull" => ScalarType::U64,
        "double" => ScalarType::F64,
        _ => return None,
    };
    let to = match to {
        "float" => ScalarType::F32,
        "double" if from.is_int() && from.bits() == 64 => ScalarType::F64,
        _ => return None,
    };
    let dir = match mode {
        "rn" if from == ScalarType::F64 => Dir::Nearest,
        "rz" => Dir::Zero,
        "rd" => Dir::Down,
        "ru" => Dir::Up,
        _ => return None,
    };
    Some((from, to, dir))
}

/// `fma_rn` ... `fma_ru`: the fma with that rounding.
fn rounded_fma(name: &str) -> Option<Dir> {
    Some(match name {
        "fma_rn" => Dir::Nearest,
        "fma_rz" => Dir::Zero,
        "fma_rd" => Dir::Down,
        "fma_ru" => Dir::Up,
        _ => return None,
    })
}

fn rounded_rcp(name: &str) -> Option<BinOp> {
    Some(match name {
        "rcp_rn" => BinOp::DivRnFtz,
        "rcp_rz" => BinOp::DivRz,
        "rcp_rd" => BinOp::DivRd,
        "rcp_ru" => BinOp::DivRu,
        _ => return None,
    })
}

/// The float-to-integer conversions with a rounding mode (`float2int_rn`, `double2ull_rd`...).
pub const CONVERSIONS: &[&str] = &[
    "float2int_rn",
    "float2int_rz",
    "float2int_rd",
    "float2int_ru",
    "float2uint_rn",
    "float2uint_rz",
    "float2uint_rd",
    "float2uint_ru",
    "float2ll_rn",
    "float2ll_rz",
    "float2ll_rd",
    "float2ll_ru",
    "float2ull_rn",
    "float2ull_rz",
    "float2ull_rd",
    "float2ull_ru",
    "double2int_rn",
    "double2int_rz",
    "double2int_rd",
    "double2int_ru",
    "double2uint_rn",
    "double2uint_rz",
    "double2uint_rd",
    "double2uint_ru",
    "double2ll_rn",
    "double2ll_rz",
    "double2ll_rd",
    "double2ll_ru",
    "double2ull_rn",
    "double2ull_rz",
    "double2ull_rd",
    "double2ull_ru",
];

/// `(source, target, rounding op)` of a float-to-integer conversion name: the value is rounded to an integer
/// (`rint`, `floor`, `ceil`, or nothing for `_rz`), then cast, which truncates and saturates as `cvt.rni`,
/// `cvt.rmi`... do (NaN gives 0, or 2^63 for u64).
fn conversion(name: &str) -> Option<(ScalarType, ScalarType, Option<UnOp>)> {
    let (from, rest) = name.split_once('2')?;
    let (to, mode) = rest.split_once('_')?;
    let from = match from {
        "float" => ScalarType::F32,
        "double" => ScalarType::F64,
        _ => return None,
    };
    let to = match to {
        "int" => ScalarType::I32,
        "uint" => ScalarType::U32,
        "ll" => ScalarType::I64,
        "ull" => ScalarType::U64,
        _ => return None,
    };
    let round = match mode {
        "rn" => Some(UnOp::Rint),
        "rz" => None,
        "rd" => Some(UnOp::Floor),
        "ru" => Some(UnOp::Ceil),
        _ => return None,
    };
    Some((from, to, round))
}

fn unary_op(name: &str) -> Option<UnOp> {
    Some(match name {
        "tanh" => UnOp::Tanh,
        "sinh" => UnOp::Sinh,
        "cosh" => UnOp::Cosh,
        "tan" => UnOp::Tan,
        "asin" => UnOp::Asin,
        "acos" => UnOp::Acos,
        "atan" => UnOp::Atan,
        "asinh" => UnOp::Asinh,
        "acosh" => UnOp::Acosh,
        "atanh" => UnOp::Atanh,
        "log1p" => UnOp::Log1p,
        "expm1" => UnOp::Expm1,
        "log10" => UnOp::Log10,
        "exp10" => UnOp::Exp10,
        "cbrt" => UnOp::Cbrt,
        "sinpi" => UnOp::Sinpi,
        "cospi" => UnOp::Cospi,
        "rcbrt" => UnOp::Rcbrt,
        "logb" => UnOp::Logb,
        "erfinv" => UnOp::Erfinv,
        "erfc" => UnOp::Erfc,
        "normcdf" => UnOp::Normcdf,
        "erfcx" => UnOp::Erfcx,
        "erfcinv" => UnOp::Erfcinv,
        "normcdfinv" => UnOp::Normcdfinv,
        "cyl_bessel_i0" => UnOp::BesselI0,
        "cyl_bessel_i1" => UnOp::BesselI1,
        "tgamma" => UnOp::Tgamma,
        "lgamma" => UnOp::Lgamma,
        "j0" => UnOp::J0,
        "j1" => UnOp::J1,
        "y0" => UnOp::Y0,
        "y1" => UnOp::Y1,
        "rsqrt_rn" => UnOp::RsqrtRnFtz,
        "rcp64h" => UnOp::Rcp64h,
        "trunc" => UnOp::Trunc,
        "rint" | "nearbyint" => UnOp::Rint,
        "round" => UnOp::Round,
        "sqrt_rn" => UnOp::SqrtRnFtz,
        "sqrt_rz" => UnOp::SqrtRz,
        "sqrt_rd" => UnOp::SqrtRd,
        "sqrt_ru" => UnOp::SqrtRu,
        _ => return None,
    })
}

impl<'a> Elab<'a> {
    pub fn call_libdevice(&mut self, name: &str, fname: &str, args: &CallArgs<'a>) -> R<Option<Value<'a>>> {
        let span = args.span;
        if let Some(v) = self.call_libdevice_int(name, fname, args)? {
            return Ok(Some(Value::Tensor(v)));
        }
        if name == "abs"
            && let Some(v) = self.libdevice_fabsf(fname, args)?
        {
            return Ok(Some(Value::Tensor(v)));
        }
        if let Some(op) = rounded_binary(name) {
            let b = self.bind(fname, "arg0, arg1", args.clone())?;
            let x = self.tensor_arg(b.req("arg0"), fname, "arg0")?;
            let y = self.tensor_arg(b.req("arg1"), fname, "arg1")?;
            self.check_dtype(&x, F32_F64, fname, b.req("arg0").span)?;
            self.check_dtype(&y, F32_F64, fname, b.req("arg1").span)?;
            let (x, y) = self.same_type_pair(x, y, fname, span)?;
            return Ok(Some(Value::Tensor(self.arith(op, x, y, span)?)));
        }
        if let Some(kind) = match name {
            "jn" => Some(tessel_math::bessel::bessel_n::Kind::J),
            "yn" => Some(tessel_math::bessel::bessel_n::Kind::Y),
            _ => None,
        } {
            return Ok(Some(Value::Tensor(self.libdevice_bessel_n(kind, fname, args)?)));
        }
        if let Some((n, recip)) = super::libdevice_norm::norm_fn(name) {
            return Ok(Some(Value::Tensor(self.libdevice_norm(n, recip, fname, args)?)));
        }
        if name == "ilogb" {
            let x = self.libdevice_float(args, fname, "arg0", F32_F64)?;
            return Ok(Some(Value::Tensor(self.ilogb(x, span)?)));
        }
        if matches!(name, "ldexp" | "scalbn") {
            let b = self.bind(fname, "arg0, arg1", args.clone())?;
            let x = self.tensor_arg(b.req("arg0"), fname, "arg0")?;
            let n = self.tensor_arg(b.req("arg1"), fname, "arg1")?;
            self.check_dtype(&x, F32_F64, fname, b.req("arg0").span)?;
            self.check_dtype(&n, &[ScalarType::I32], fname, b.req("arg1").span)?;
            return Ok(Some(Value::Tensor(self.ldexp(x, n, span)?)));
        }
        if let Some((from, to, dir)) = rounded_conversion(name) {
            let x = self.libdevice_float(args, fname, "arg0", &[from])?;
            let ty = x.ty.with_elem(Elem::Scalar(to));
            return Ok(Some(Value::Tensor(self.emit1(Op::CastRound(dir), &[x], ty, span)?)));
        }
        if let Some(dir) = rounded_fma(name) {
            let b = self.bind(fname, "arg0, arg1, arg2", args.clone())?;
            let mut xs = Vec::new();
            for p in ["arg0", "arg1", "arg2"] {
                let x = self.tensor_arg(b.req(p), fname, p)?;
                self.check_dtype(&x, F32_F64, fname, b.req(p).span)?;
                xs.push(x);
            }
            let [x, y, z]: [Tv; 3] = xs.try_into().expect("three arguments");
            let (x, y) = self.same_type_pair(x, y, fname, span)?;
            let (x, z) = self.same_type_pair(x, z, fname, span)?;
            let y = self.broadcast_to(y, x.shape(), span)?;
            let ty = x.ty.clone();
            return Ok(Some(Value::Tensor(self.emit1(Op::FmaRound(dir), &[x, y, z], ty, span)?)));
        }
        if let Some(op) = rounded_rcp(name) {
            // rcp_X(x) = div_X(1, x).
            let x = self.libdevice_float(args, fname, "arg0", F32_F64)?;
            let one = self.constant(Const::Float(1.0), x.ty.clone(), span)?;
            return Ok(Some(Value::Tensor(self.arith(op, one, x, span)?)));
        }
        if let Some(v) = self.fast(name, fname, args)? {
            return Ok(Some(Value::Tensor(v)));
        }
        if let Some(op) = unary_op(name) {
            // libdevice has `rsqrt_rn` for fp32 only, `rcp64h` for fp64 only.
            let allowed = match op {
                UnOp::RsqrtRnFtz => &[ScalarType::F32][..],
                UnOp::Rcp64h => &[ScalarType::F64][..],
                _ => F32_F64,
            };
            let x = self.libdevice_float(args, fname, "arg0", allowed)?;
            let ty = x.ty.clone();
            return Ok(Some(Value::Tensor(self.emit1(Op::Unary(op), &[x], ty, span)?)));
        }
        if let Some((from, to, round)) = conversion(name) {
            let x = self.libdevice_float(args, fname, "arg0", &[from])?;
            let x = match round {
                Some(op) => {
                    let ty = x.ty.clone();
                    self.emit1(Op::Unary(op), &[x], ty, span)?
                }
                None => x,
            };
            return Ok(Some(Value::Tensor(self.cast(x, Dtype::Scalar(to), span)?)));
        }
        let bits = |name: &str| -> Option<(ScalarType, ScalarType)> {
            Some(match name {
                "float_as_int" => (ScalarType::F32, ScalarType::I32),
                "int_as_float" => (ScalarType::I32, ScalarType::F32),
                "double_as_longlong" => (ScalarType::F64, ScalarType::I64),
                "longlong_as_double" => (ScalarType::I64, ScalarType::F64),
                "int2float_rn" => (ScalarType::I32, ScalarType::F32),
                "uint2float_rn" => (ScalarType::U32, ScalarType::F32),
                "ll2float_rn" => (ScalarType::I64, ScalarType::F32),
                "ull2float_rn" => (ScalarType::U64, ScalarType::F32),
                "int2double_rn" => (ScalarType::I32, ScalarType::F64),
                "uint2double_rn" => (ScalarType::U32, ScalarType::F64),
                "ll2double_rn" => (ScalarType::I64, ScalarType::F64),
                "ull2double_rn" => (ScalarType::U64, ScalarType::F64),
                _ => return None,
            })
        };
        if let Some((from, to)) = bits(name) {
            // `_as_` reinterprets the bits; the others convert (to nearest even).
            let x = self.libdevice_float(args, fname, "arg0", &[from])?;
            let r = if name.contains("_as_") {
                self.bitcast(x, Dtype::Scalar(to), span)?
            } else {
                self.cast(x, Dtype::Scalar(to), span)?
            };
            return Ok(Some(Value::Tensor(r)));
        }
        Ok(Some(Value::Tensor(match name {
            "fmax" | "fmin" | "fdim" | "nextafter" => {
                let b = self.bind(fname, "arg0, arg1", args.clone())?;
                let x = self.tensor_arg(b.req("arg0"), fname, "arg0")?;
                let y = self.tensor_arg(b.req("arg1"), fname, "arg1")?;
                self.check_dtype(&x, F32_F64, fname, b.req("arg0").span)?;
                self.check_dtype(&y, F32_F64, fname, b.req("arg1").span)?;
                let (x, y) = self.same_type_pair(x, y, fname, span)?;
                let ty = x.ty.clone();
                match name {
                    // IEEE fmax/fmin: a NaN operand gives the other (PTX max.f32/min.f32).
                    "fmax" | "fmin" => {
                        let op = if name == "fmax" { BinOp::Max } else { BinOp::Min };
                        self.emit1(Op::Binary { op, propagate_nan: false }, &[x, y], ty, span)?
                    }
                    // x − y where x > y, +0 where x ≤ y, NaN where either is NaN.
                    "fdim" => {
                        let d = self.arith(BinOp::Sub, x.clone(), y.clone(), span)?;
                        let le = self.cmp(CmpPred::Le, x, y, span)?;
                        let zero = self.constant(Const::Float(0.0), ty.clone(), span)?;
                        self.emit1(Op::Select, &[le, zero, d], ty, span)?
                    }
                    _ if x.scalar() == Some(ScalarType::F32) => self.nextafter_f32(x, y, span)?,
                    _ => self.nextafter(x, y, span)?,
                }
            }
            "saturatef" => {
                // `cvt.ftz.sat.f32`: clamped to [0, 1], NaN and subnormals giving 0.
                let x = self.libdevice_float(args, fname, "arg0", &[ScalarType::F32])?;
                self.un(UnOp::Saturate, x, span)?
            }
            "atan2" | "hypot" | "rhypot" | "pow" | "fmod" | "remainder" | "copysign" => {
                let b = self.bind(fname, "arg0, arg1", args.clone())?;
                let x = self.tensor_arg(b.req("arg0"), fname, "arg0")?;
                let y = self.tensor_arg(b.req("arg1"), fname, "arg1")?;
                self.check_dtype(&x, F32_F64, fname, b.req("arg0").span)?;
                self.check_dtype(&y, F32_F64, fname, b.req("arg1").span)?;
                let (x, y) = self.same_type_pair(x, y, fname, span)?;
                match name {
                    "atan2" => self.arith(BinOp::Atan2, x, y, span)?,
                    "hypot" => self.arith(BinOp::Hypot, x, y, span)?,
                    "rhypot" => self.arith(BinOp::Rhypot, x, y, span)?,
                    "pow" => self.arith(BinOp::Pow, x, y, span)?,
                    "fmod" => self.arith(BinOp::Fmod, x, y, span)?,
                    "remainder" => self.remainder(x, y, span)?,
                    _ => self.copysign(x, y, span)?,
                }
            }
            "isnan" | "isinf" | "finitef" | "isfinited" | "signbit" => {
                let allowed: &[ScalarType] = match name {
                    "finitef" => &[ScalarType::F32],
                    "isfinited" => &[ScalarType::F64],
                    _ => F32_F64,
                };
                let x = self.libdevice_float(args, fname, "arg0", allowed)?;
                let p = match name {
                    "isnan" => self.cmp(CmpPred::Ne, x.clone(), x, span)?,
                    "signbit" => {
                        let (bits, _) = self.float_bits(x, span)?;
                        let zero = self.zero_like(&bits, span)?;
                        self.cmp(CmpPred::Lt, bits, zero, span)?
                    }
                    _ => {
                        let ty = x.ty.clone();
                        let a = self.emit1(Op::Unary(UnOp::Abs), &[x], ty.clone(), span)?;
                        let inf = self.constant(Const::Float(f64::INFINITY), ty, span)?;
                        let pred = if name == "isinf" { CmpPred::Eq } else { CmpPred::Lt };
                        self.cmp(pred, a, inf, span)?
                    }
                };
                self.cast(p, Dtype::Scalar(ScalarType::I32), span)?
            }
            _ => return Ok(None),
        })))
    }

    /// C's `nextafter(x, y)`: the neighbour of x toward y (y itself when equal, NaN when either is NaN), on the
    /// bits: ±the smallest subnormal from a zero, else the bits stepped by one away from or toward zero.
    fn nextafter(&mut self, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.clone();
        let (xb, _) = self.float_bits(x.clone(), span)?;
        let ity = xb.ty.clone();
        let one = self.constant(Const::Int(1), ity.clone(), span)?;
        let up = self.arith(BinOp::Add, xb.clone(), one.clone(), span)?;
        let down = self.arith(BinOp::Sub, xb, one, span)?;
        // Toward y: the bits grow (away from zero) when x > 0 moves up or x < 0 moves down.
        let zero = self.constant(Const::Float(0.0), ty.clone(), span)?;
        let lt = self.cmp(CmpPred::Lt, x.clone(), y.clone(), span)?;
        let pos = self.cmp(CmpPred::Gt, x.clone(), zero.clone(), span)?;
        let rising = self.emit1(Op::Select, &[pos.clone(), up.clone(), down.clone()], ity.clone(), span)?;
        let falling = self.emit1(Op::Select, &[pos, down, up], ity.clone(), span)?;
        let stepped = self.emit1(Op::Select, &[lt.clone(), rising, falling], ity.clone(), span)?;
        let stepped = self.bitcast(stepped, Dtype::Scalar(x.scalar().expect("a float")), span)?;
        // From ±0: the smallest subnormal with y's direction.
        let tiny = self.constant(Const::Int(1), ity, span)?;
        let tiny = self.bitcast(tiny, Dtype::Scalar(x.scalar().expect("a float")), span)?;
        let ntiny = self.arith(BinOp::Sub, zero.clone(), tiny.clone(), span)?;
        let toward = self.emit1(Op::Select, &[lt, tiny, ntiny], ty.clone(), span)?;
        let xz = self.cmp(CmpPred::Eq, x.clone(), zero, span)?;
        let r = self.emit1(Op::Select, &[xz, toward, stepped], ty.clone(), span)?;
        // x = y: y; a NaN: x + y (NaN).
        let eq = self.cmp(CmpPred::Eq, x.clone(), y.clone(), span)?;
        let r = self.emit1(Op::Select, &[eq, y.clone(), r], ty.clone(), span)?;
        let un = self.cmp(CmpPred::Ne, x.clone(), x.clone(), span)?;
        let un2 = self.cmp(CmpPred::Ne, y.clone(), y.clone(), span)?;
        let nan = self.arith(BinOp::Or, un, un2, span)?;
        let sum = self.arith(BinOp::Add, x, y, span)?;
        self.emit1(Op::Select, &[nan, sum, r], ty, span)
    }

    /// libdevice's `nextafterf`, which flushes subnormals (its f32 code under Triton's FTZ setting): a
    /// subnormal x counts as ±0, and from ±0 the step goes to ±2^-126 (the smallest normal) with y's sign,
    /// or to y flushed when y is ±0 too; otherwise x's bits step by one away from or toward zero as C's
    /// `nextafter` does (a step that reaches ±0 gives the zero of x's sign). A NaN operand gives x + y.
    fn nextafter_f32(&mut self, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.clone();
        let (xb, _) = self.float_bits(x.clone(), span)?;
        let (yb, _) = self.float_bits(y.clone(), span)?;
        let ity = xb.ty.clone();
        let int = |e: &mut Self, v: i64| e.constant(Const::Int(v), ity.clone(), span);
        let (expo, sign, mag, zero_i) =
            (int(self, 0x7f80_0000)?, int(self, i32::MIN as i64)?, int(self, i32::MAX as i64)?, int(self, 0)?);
        // Bits with a zero exponent field (±0 and subnormals) become the zero of their sign.
        let flush = |e: &mut Self, b: Tv| -> R<Tv> {
            let ex = e.arith(BinOp::And, b.clone(), expo.clone(), span)?;
            let tiny = e.cmp(CmpPred::Eq, ex, zero_i.clone(), span)?;
            let sg = e.arith(BinOp::And, b.clone(), sign.clone(), span)?;
            e.emit1(Op::Select, &[tiny, sg, b], ity.clone(), span)
        };
        let x1 = flush(self, xb)?;
        let y1 = flush(self, yb.clone())?;
        // x ≠ 0: one step, away from zero when y lies beyond x, toward zero when y lies between.
        let zero = self.constant(Const::Float(0.0), ty.clone(), span)?;
        let lt = self.cmp(CmpPred::Lt, x.clone(), y.clone(), span)?;
        let gt = self.cmp(CmpPred::Gt, x.clone(), y.clone(), span)?;
        let pos = self.cmp(CmpPred::Gt, x.clone(), zero.clone(), span)?;
        let neg = self.cmp(CmpPred::Lt, x.clone(), zero, span)?;
        let up1 = self.arith(BinOp::And, pos.clone(), lt.clone(), span)?;
        let up2 = self.arith(BinOp::And, neg.clone(), gt.clone(), span)?;
        let away = self.arith(BinOp::Or, up1, up2, span)?;
        let dn1 = self.arith(BinOp::And, neg, lt, span)?;
        let dn2 = self.arith(BinOp::And, pos, gt, span)?;
        let toward = self.arith(BinOp::Or, dn1, dn2, span)?;
        let (one, m1) = (int(self, 1)?, int(self, -1)?);
        let step = self.emit1(Op::Select, &[toward, m1, zero_i.clone()], ity.clone(), span)?;
        let step = self.emit1(Op::Select, &[away, one, step], ity.clone(), span)?;
        let r = self.arith(BinOp::Add, x1.clone(), step, span)?;
        let rm = self.arith(BinOp::And, r.clone(), mag.clone(), span)?;
        let rz = self.cmp(CmpPred::Eq, rm, zero_i.clone(), span)?;
        let rs = self.arith(BinOp::And, r.clone(), sign.clone(), span)?;
        let r = self.emit1(Op::Select, &[rz, rs, r], ity.clone(), span)?;
        // x = ±0: y flushed when it is ±0 too, else the smallest normal with y's sign.
        let normal = int(self, 0x0080_0000)?;
        let ys = self.arith(BinOp::And, yb, sign, span)?;
        let tiny = self.arith(BinOp::Or, ys, normal, span)?;
        let ym = self.arith(BinOp::And, y1.clone(), mag.clone(), span)?;
        let yz = self.cmp(CmpPred::Eq, ym, zero_i.clone(), span)?;
        let from_zero = self.emit1(Op::Select, &[yz, y1, tiny], ity.clone(), span)?;
        let xm = self.arith(BinOp::And, x1, mag, span)?;
        let xz = self.cmp(CmpPred::Eq, xm, zero_i, span)?;
        let r = self.emit1(Op::Select, &[xz, from_zero, r], ity, span)?;
        let r = self.bitcast(r, Dtype::Scalar(ScalarType::F32), span)?;
        let un = self.cmp(CmpPred::Ne, x.clone(), x.clone(), span)?;
        let un2 = self.cmp(CmpPred::Ne, y.clone(), y.clone(), span)?;
        let nan = self.arith(BinOp::Or, un, un2, span)?;
        let sum = self.arith(BinOp::Add, x, y, span)?;
        self.emit1(Op::Select, &[nan, sum, r], ty, span)
    }

    /// The `fast_*f` functions (fp32 only), as libdevice computes them: the hardware's approximations
    /// (`lg2.approx.ftz`, `sin.approx.ftz`, `cos.approx.ftz`, `div.approx.ftz`, `ex2.approx.ftz` = tessel's
    /// f32 `exp2`), `fast_logf`/`fast_log10f` as log2 times ln 2 or log10 2 (rounded to f32), `fast_tanf` as
    /// sin/cos, `fast_powf(x, y)` as 2^(log2(x)·y), `fast_expf`/`fast_exp10f` as 2^(x·log2 e) / 2^(x·log2 10).
    fn fast(&mut self, name: &str, fname: &str, args: &CallArgs<'a>) -> R<Option<Tv>> {
        let span = args.span;
        if matches!(name, "fast_powf" | "fast_dividef") {
            let b = self.bind(fname, "arg0, arg1", args.clone())?;
            let x = self.tensor_arg(b.req("arg0"), fname, "arg0")?;
            let y = self.tensor_arg(b.req("arg1"), fname, "arg1")?;
            self.check_dtype(&x, &[ScalarType::F32], fname, b.req("arg0").span)?;
            self.check_dtype(&y, &[ScalarType::F32], fname, b.req("arg1").span)?;
            let (x, y) = self.same_type_pair(x, y, fname, span)?;
            if name == "fast_dividef" {
                return Ok(Some(self.arith(BinOp::DivApprox, x, y, span)?));
            }
            let l = self.un(UnOp::Lg2Approx, x, span)?;
            let t = self.arith(BinOp::Mul, l, y, span)?;
            return Ok(Some(self.un(UnOp::Exp2, t, span)?));
        }
        if !name.starts_with("fast_") || name == "fast_dividef" {
            return Ok(None);
        }
        let x = self.libdevice_float(args, fname, "arg0", &[ScalarType::F32])?;
        // `x` times an f32 constant given by its bits.
        let scale = |e: &mut Self, x: Tv, bits: u32| -> R<Tv> {
            let k = e.constant(Const::Float(f32::from_bits(bits) as f64), x.ty.clone(), span)?;
            e.arith(BinOp::Mul, x, k, span)
        };
        Ok(Some(match name {
            "fast_expf" | "fast_exp10f" => {
                let k = if name == "fast_expf" { std::f64::consts::LOG2_E } else { std::f64::consts::LOG2_10 };
                let k = self.constant(Const::Float(k), x.ty.clone(), span)?;
                let t = self.arith(BinOp::Mul, x, k, span)?;
                self.un(UnOp::Exp2, t, span)?
            }
            "fast_log2f" => self.un(UnOp::Lg2Approx, x, span)?,
            "fast_logf" => {
                let l = self.un(UnOp::Lg2Approx, x, span)?;
                scale(self, l, 0x3f31_7218)?
            }
            "fast_log10f" => {
                let l = self.un(UnOp::Lg2Approx, x, span)?;
                scale(self, l, 0x3e9a_209b)?
            }
            "fast_sinf" => self.un(UnOp::SinApprox, x, span)?,
            "fast_cosf" => self.un(UnOp::CosApprox, x, span)?,
            "fast_tanf" => {
                let sn = self.un(UnOp::SinApprox, x.clone(), span)?;
                let cs = self.un(UnOp::CosApprox, x, span)?;
                self.arith(BinOp::DivApprox, sn, cs, span)?
            }
            _ => return Ok(None),
        }))
    }

    /// The elementwise unary `op` of `x`.
    pub(crate) fn un(&mut self, op: UnOp, x: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.clone();
        self.emit1(Op::Unary(op), &[x], ty, span)
    }

    /// Two float tensors broadcast together, of one type (libdevice does not promote).
    pub(super) fn same_type_pair(&mut self, x: Tv, y: Tv, fname: &str, span: Span) -> R<(Tv, Tv)> {
        let (x, y) = self.broadcast_pair(x, y, span)?;
        if x.ty != y.ty {
            return Err(self.err(span, format!("`{fname}` needs operands of one type, got {} and {}", x.ty, y.ty)));
        }
        Ok((x, y))
    }

    /// The one float argument `arg` of a libdevice function, checked against `allowed`.
    fn libdevice_float(
        &mut self,
        args: &CallArgs<'a>,
        fname: &str,
        arg: &'static str,
        allowed: &[ScalarType],
    ) -> R<Tv> {
        let b = self.bind(fname, arg, args.clone())?;
        let x = self.tensor_arg(b.req(arg), fname, arg)?;
        self.check_dtype(&x, allowed, fname, b.req(arg).span)?;
        Ok(x)
    }

    /// libdevice's `fabsf` (f32 only; other types are `tl.abs`): `abs.ftz.f32`, so a subnormal gives +0
    /// (Triton: libdevice.abs(0x00000001) = 0). A NaN keeps its bits (the comparison is false).
    fn libdevice_fabsf(&mut self, fname: &str, args: &CallArgs<'a>) -> R<Option<Tv>> {
        let span = args.span;
        let b = self.bind(fname, "arg0", args.clone())?;
        let x = self.tensor_arg(b.req("arg0"), fname, "arg0")?;
        if x.scalar() != Some(ScalarType::F32) {
            return Ok(None);
        }
        let ty = x.ty.clone();
        let a = self.emit1(Op::Unary(UnOp::Abs), &[x], ty.clone(), span)?;
        let min_normal = self.constant(Const::Float(f32::MIN_POSITIVE as f64), ty.clone(), span)?;
        let tiny = self.cmp(CmpPred::Lt, a.clone(), min_normal, span)?;
        let zero = self.constant(Const::Float(0.0), ty.clone(), span)?;
        Ok(Some(self.emit1(Op::Select, &[tiny, zero, a], ty, span)?))
    }

    fn cmp(&mut self, pred: CmpPred, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.with_elem(Elem::Scalar(ScalarType::I1));
        self.emit1(Op::Cmp(pred), &[x, y], ty, span)
    }

    /// The bits of a float tensor as a signed integer of its width, and that integer type.
    pub(super) fn float_bits(&mut self, x: Tv, span: Span) -> R<(Tv, ScalarType)> {
        let it = if x.scalar() == Some(ScalarType::F64) { ScalarType::I64 } else { ScalarType::I32 };
        Ok((self.bitcast(x, Dtype::Scalar(it), span)?, it))
    }

    /// |x| with the sign of y, on the bits (NaNs keep their payload).
    fn copysign(&mut self, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let dt = x.dtype().expect("a float tensor");
        let (xb, it) = self.float_bits(x, span)?;
        let (yb, _) = self.float_bits(y, span)?;
        let sign = if it == ScalarType::I64 { i64::MIN } else { i32::MIN as i64 };
        let ty = xb.ty.clone();
        let (s, m) = (self.constant(Const::Int(sign), ty.clone(), span)?, self.constant(Const::Int(!sign), ty, span)?);
        let mag = self.arith(BinOp::And, xb, m, span)?;
        let sgn = self.arith(BinOp::And, yb, s, span)?;
        let r = self.arith(BinOp::Or, mag, sgn, span)?;
        self.bitcast(r, dt, span)
    }
}
