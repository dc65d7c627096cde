//! `triton.language.extra.libdevice`: its functions beyond `tl.math`'s (which the module has too, some in
//! versions of its own) and `tl.extra.cuda`'s, registered here: the transcendental ones (`tanh`, `atan2`,
//! `log1p`, `sinpi`, `erfc`, ... as IR ops: libdevice's own sequences where `tessel_math` has them, which the
//! interpreter and codegen both run, else the interpreter's correctly rounded values and the routines of
//! `codegen/src/lower/libdevice.rs`), rounding (`trunc`, `rint`, `nearbyint`, `round`), `pow`, `fmod` (C's exact
//! remainder, unlike `%`), `remainder` (IEEE's, `libdevice_remainder.rs`), `ldexp`/`scalbn` and `ilogb`
//! (`libdevice_exponent.rs`), `norm3d`/`norm4d`/`rnorm3d`/`rnorm4d` (`libdevice_norm.rs`), `jn`/`yn`
//! (`libdevice_bessel.rs`), arithmetic with a rounding mode (`add_rz`, `mul_rd`, `div_ru`, `sqrt_rz`, `rcp_rn`,
//! `fma_rz`...: PTX's `.rz`/`.rm`/`.rp`), the `fast_*f` functions, fmax/fmin/fdim/saturatef/nextafter, the
//! conversions (`float2int_rn`...), and the classification and sign functions (`isnan`, `isinf`, `finitef`,
//! `isfinited`, `signbit`, `copysign`), which are compositions of compares and bit operations. As in Triton, each
//! takes fp32 or fp64 only (`__nv_tanhf` / `__nv_tanh`...), and the classification functions return int32 (1 or
//! 0). The integer and bit functions are `libdevice_int.rs`'s.

use tessel_math::bessel::bessel_n::Kind as Bessel;
use tessel_math::rounding::Dir;
use tessel_tile::ops::{BinOp, CmpPred, Const, Op, UnOp};
use tessel_tile::{Elem, ScalarType};

use crate::elab::args::Bound;
use crate::elab::names::LIBDEVICE;
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Dtype, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

use ScalarType::{F32, F64, I32, I64, U32, U64};

const F32_F64: &[ScalarType] = &[F32, F64];

/// An elementwise function of two tensors of one float type.
type Combine<'a> = fn(&mut Elab<'a>, Tv, Tv, Span) -> R<Tv>;
/// A predicate of one float tensor (an `i1` tensor).
type Test<'a> = fn(&mut Elab<'a>, Tv, Span) -> R<Tv>;

/// Registers each `"name" => (args...)` in libdevice, its arguments bound to `sig`, its handler
/// `Elab::method(bound, args...)`.
macro_rules! libdevice {
    ($r:ident, $sig:literal, $method:ident { $($name:literal => ($($arg:expr),*)),* $(,)? }) => {
        $( $r.add(LIBDEVICE, $name, Handler::Bound($sig, |e, b| e.$method(b, $($arg),*).map(Value::Tensor))); )*
    };
}

pub(super) fn register(r: &mut Registry) {
    use UnOp::*;
    libdevice!(r, "arg0", ld_unary {
        "tanh" => (Tanh, F32_F64), "sinh" => (Sinh, F32_F64), "cosh" => (Cosh, F32_F64), "tan" => (Tan, F32_F64),
        "asin" => (Asin, F32_F64), "acos" => (Acos, F32_F64), "atan" => (Atan, F32_F64),
        "asinh" => (Asinh, F32_F64), "acosh" => (Acosh, F32_F64), "atanh" => (Atanh, F32_F64),
        "log1p" => (Log1p, F32_F64), "expm1" => (Expm1, F32_F64), "log10" => (Log10, F32_F64),
        "exp10" => (Exp10, F32_F64), "cbrt" => (Cbrt, F32_F64), "sinpi" => (Sinpi, F32_F64),
        "cospi" => (Cospi, F32_F64), "rcbrt" => (Rcbrt, F32_F64), "logb" => (Logb, F32_F64),
        "erfinv" => (Erfinv, F32_F64), "erfc" => (Erfc, F32_F64), "normcdf" => (Normcdf, F32_F64),
        "erfcx" => (Erfcx, F32_F64), "erfcinv" => (Erfcinv, F32_F64), "normcdfinv" => (Normcdfinv, F32_F64),
        "cyl_bessel_i0" => (BesselI0, F32_F64), "cyl_bessel_i1" => (BesselI1, F32_F64),
        "tgamma" => (Tgamma, F32_F64), "lgamma" => (Lgamma, F32_F64),
        "j0" => (J0, F32_F64), "j1" => (J1, F32_F64), "y0" => (Y0, F32_F64), "y1" => (Y1, F32_F64),
        // libdevice has `rsqrt_rn` for fp32 only, `rcp64h` for fp64 only.
        "rsqrt_rn" => (RsqrtRnFtz, &[F32]), "rcp64h" => (Rcp64h, &[F64]),
        "trunc" => (Trunc, F32_F64), "rint" => (Rint, F32_F64), "nearbyint" => (Rint, F32_F64),
        "round" => (Round, F32_F64),
        // Unlike `tl.sqrt_rn`, libdevice's flushes f32 subnormals (`sqrt.rn.ftz.f32`).
        "sqrt_rn" => (SqrtRnFtz, F32_F64),
        "sqrt_rz" => (SqrtRz, F32_F64), "sqrt_rd" => (SqrtRd, F32_F64), "sqrt_ru" => (SqrtRu, F32_F64),
    });
    // Unlike `tl.abs`, libdevice's flushes an f32 subnormal (`abs.ftz.f32`).
    r.add(LIBDEVICE, "abs", Handler::Bound("arg0", |e, b| e.libdevice_abs(b)));
    libdevice!(r, "arg0, arg1", ld_rounded {
        "add_rn" => (BinOp::AddRn), "add_rz" => (BinOp::AddRz), "add_rd" => (BinOp::AddRd),
        "add_ru" => (BinOp::AddRu), "sub_rn" => (BinOp::SubRn), "sub_rz" => (BinOp::SubRz),
        "sub_rd" => (BinOp::SubRd), "sub_ru" => (BinOp::SubRu), "mul_rn" => (BinOp::MulRn),
        "mul_rz" => (BinOp::MulRz), "mul_rd" => (BinOp::MulRd), "mul_ru" => (BinOp::MulRu),
        // Unlike `tl.div_rn`, libdevice's flushes f32 subnormals (`div.rn.ftz.f32`).
        "div_rn" => (BinOp::DivRnFtz), "div_rz" => (BinOp::DivRz), "div_rd" => (BinOp::DivRd),
        "div_ru" => (BinOp::DivRu),
    });
    // rcp_X(x) = div_X(1, x).
    libdevice!(r, "arg0", ld_rcp {
        "rcp_rn" => (BinOp::DivRnFtz), "rcp_rz" => (BinOp::DivRz), "rcp_rd" => (BinOp::DivRd),
        "rcp_ru" => (BinOp::DivRu),
    });
    libdevice!(r, "arg0, arg1, arg2", ld_fma {
        "fma_rn" => (Dir::Nearest), "fma_rz" => (Dir::Zero), "fma_rd" => (Dir::Down), "fma_ru" => (Dir::Up),
    });
    libdevice!(r, "arg0, arg1", libdevice_bessel_n { "jn" => (Bessel::J), "yn" => (Bessel::Y) });
    libdevice!(r, "arg0, arg1, arg2", libdevice_norm { "norm3d" => (3, false), "rnorm3d" => (3, true) });
    libdevice!(r, "arg0, arg1, arg2, arg3", libdevice_norm { "norm4d" => (4, false), "rnorm4d" => (4, true) });
    libdevice!(r, "arg0", ld_ilogb { "ilogb" => () });
    libdevice!(r, "arg0, arg1", ld_ldexp { "ldexp" => (), "scalbn" => () });
    libdevice!(r, "arg0", ld_fast {
        "fast_expf" => (Fast::Exp), "fast_exp10f" => (Fast::Exp10), "fast_log2f" => (Fast::Log2),
        "fast_logf" => (Fast::Log), "fast_log10f" => (Fast::Log10), "fast_sinf" => (Fast::Sin),
        "fast_cosf" => (Fast::Cos), "fast_tanf" => (Fast::Tan),
    });
    libdevice!(r, "arg0, arg1", ld_fast2 { "fast_powf" => (false), "fast_dividef" => (true) });
    libdevice!(r, "arg0", ld_saturate { "saturatef" => () });
    libdevice!(r, "arg0, arg1", ld_binary {
        // IEEE fmax/fmin: a NaN operand gives the other (PTX max.f32/min.f32).
        "fmax" => (|e, x, y, s| e.min_max_ieee(BinOp::Max, x, y, s)),
        "fmin" => (|e, x, y, s| e.min_max_ieee(BinOp::Min, x, y, s)),
        "fdim" => (Elab::fdim), "nextafter" => (Elab::nextafter_any),
        "atan2" => (|e, x, y, s| e.arith(BinOp::Atan2, x, y, s)),
        "hypot" => (|e, x, y, s| e.arith(BinOp::Hypot, x, y, s)),
        "rhypot" => (|e, x, y, s| e.arith(BinOp::Rhypot, x, y, s)),
        "pow" => (|e, x, y, s| e.arith(BinOp::Pow, x, y, s)),
        "fmod" => (|e, x, y, s| e.arith(BinOp::Fmod, x, y, s)),
        "remainder" => (Elab::remainder), "copysign" => (Elab::copysign),
    });
    // The conversions with a rounding mode: (source, target, direction). `double2float_rn` flushes a
    // subnormal f32 result, as libdevice does.
    libdevice!(r, "arg0", ld_convert_rounded {
        "double2float_rn" => (F64, F32, Dir::Nearest),
        "int2float_rz" => (I32, F32, Dir::Zero), "int2float_rd" => (I32, F32, Dir::Down),
        "int2float_ru" => (I32, F32, Dir::Up), "uint2float_rz" => (U32, F32, Dir::Zero),
        "uint2float_rd" => (U32, F32, Dir::Down), "uint2float_ru" => (U32, F32, Dir::Up),
        "ll2float_rz" => (I64, F32, Dir::Zero), "ll2float_rd" => (I64, F32, Dir::Down),
        "ll2float_ru" => (I64, F32, Dir::Up), "ull2float_rz" => (U64, F32, Dir::Zero),
        "ull2float_rd" => (U64, F32, Dir::Down), "ull2float_ru" => (U64, F32, Dir::Up),
        "ll2double_rz" => (I64, F64, Dir::Zero), "ll2double_rd" => (I64, F64, Dir::Down),
        "ll2double_ru" => (I64, F64, Dir::Up), "ull2double_rz" => (U64, F64, Dir::Zero),
        "ull2double_rd" => (U64, F64, Dir::Down), "ull2double_ru" => (U64, F64, Dir::Up),
        "double2float_rz" => (F64, F32, Dir::Zero), "double2float_rd" => (F64, F32, Dir::Down),
        "double2float_ru" => (F64, F32, Dir::Up),
    });
    // The conversions to nearest even, and the reinterpretations of the bits (`_as_`): (source, target, bits).
    libdevice!(r, "arg0", ld_convert {
        "float_as_int" => (F32, I32, true), "int_as_float" => (I32, F32, true),
        "double_as_longlong" => (F64, I64, true), "longlong_as_double" => (I64, F64, true),
        "int2float_rn" => (I32, F32, false), "uint2float_rn" => (U32, F32, false),
        "ll2float_rn" => (I64, F32, false), "ull2float_rn" => (U64, F32, false),
        "int2double_rn" => (I32, F64, false), "uint2double_rn" => (U32, F64, false),
        "ll2double_rn" => (I64, F64, false), "ull2double_rn" => (U64, F64, false),
    });
    // The float-to-integer conversions: the value is rounded to an integer (`rint`, `floor`, `ceil`, or nothing
    // for `_rz`), then cast, which truncates and saturates as `cvt.rni`, `cvt.rmi`... do (NaN gives 0, or 2^63
    // for u64).
    libdevice!(r, "arg0", ld_float_to_int {
        "float2int_rn" => (F32, I32, Some(Rint)), "float2int_rz" => (F32, I32, None),
        "float2int_rd" => (F32, I32, Some(Floor)), "float2int_ru" => (F32, I32, Some(Ceil)),
        "float2uint_rn" => (F32, U32, Some(Rint)), "float2uint_rz" => (F32, U32, None),
        "float2uint_rd" => (F32, U32, Some(Floor)), "float2uint_ru" => (F32, U32, Some(Ceil)),
        "float2ll_rn" => (F32, I64, Some(Rint)), "float2ll_rz" => (F32, I64, None),
        "float2ll_rd" => (F32, I64, Some(Floor)), "float2ll_ru" => (F32, I64, Some(Ceil)),
        "float2ull_rn" => (F32, U64, Some(Rint)), "float2ull_rz" => (F32, U64, None),
        "float2ull_rd" => (F32, U64, Some(Floor)), "float2ull_ru" => (F32, U64, Some(Ceil)),
        "double2int_rn" => (F64, I32, Some(Rint)), "double2int_rz" => (F64, I32, None),
        "double2int_rd" => (F64, I32, Some(Floor)), "double2int_ru" => (F64, I32, Some(Ceil)),
        "double2uint_rn" => (F64, U32, Some(Rint)), "double2uint_rz" => (F64, U32, None),
        "double2uint_rd" => (F64, U32, Some(Floor)), "double2uint_ru" => (F64, U32, Some(Ceil)),
        "double2ll_rn" => (F64, I64, Some(Rint)), "double2ll_rz" => (F64, I64, None),
        "double2ll_rd" => (F64, I64, Some(Floor)), "double2ll_ru" => (F64, I64, Some(Ceil)),
        "double2ull_rn" => (F64, U64, Some(Rint)), "double2ull_rz" => (F64, U64, None),
        "double2ull_rd" => (F64, U64, Some(Floor)), "double2ull_ru" => (F64, U64, Some(Ceil)),
    });
    // The classification functions: int32 1 or 0.
    libdevice!(r, "arg0", ld_classify {
        "isnan" => (F32_F64, |e, x, s| e.cmp(CmpPred::Ne, x.clone(), x, s)),
        "isinf" => (F32_F64, |e, x, s| e.abs_vs_inf(CmpPred::Eq, x, s)),
        "finitef" => (&[F32], |e, x, s| e.abs_vs_inf(CmpPred::Lt, x, s)),
        "isfinited" => (&[F64], |e, x, s| e.abs_vs_inf(CmpPred::Lt, x, s)),
        "signbit" => (F32_F64, Elab::signbit),
    });
    super::libdevice_int::register(r);
}

/// The `fast_*f` functions of one argument.
#[derive(Clone, Copy)]
enum Fast {
    Exp,
    Exp10,
    Log2,
    Log,
    Log10,
    Sin,
    Cos,
    Tan,
}

impl<'a> Elab<'a> {
    /// Argument `p` of a libdevice function, a tensor of one of the types `allowed`.
    pub(super) fn ld_arg(&mut self, b: &Bound<'a>, p: &str, allowed: &[ScalarType]) -> R<Tv> {
        let x = self.tensor_arg(b.req(p), &b.fname, p)?;
        self.check_dtype(&x, allowed, &b.fname, b.req(p).span)?;
        Ok(x)
    }

    /// The two float arguments of a libdevice function (of `allowed` types), broadcast together, of one type.
    fn ld_pair(&mut self, b: &Bound<'a>, allowed: &[ScalarType]) -> R<(Tv, Tv)> {
        let x = self.tensor_arg(b.req("arg0"), &b.fname, "arg0")?;
        let y = self.tensor_arg(b.req("arg1"), &b.fname, "arg1")?;
        self.check_dtype(&x, allowed, &b.fname, b.req("arg0").span)?;
        self.check_dtype(&y, allowed, &b.fname, b.req("arg1").span)?;
        self.same_type_pair(x, y, &b.fname, b.span)
    }

    fn ld_unary(&mut self, b: Bound<'a>, op: UnOp, allowed: &[ScalarType]) -> R<Tv> {
        let x = self.ld_arg(&b, "arg0", allowed)?;
        self.un(op, x, b.span)
    }

    /// Two-operand arithmetic with a rounding (`add_rz`...).
    fn ld_rounded(&mut self, b: Bound<'a>, op: BinOp) -> R<Tv> {
        let (x, y) = self.ld_pair(&b, F32_F64)?;
        self.arith(op, x, y, b.span)
    }

    fn ld_rcp(&mut self, b: Bound<'a>, op: BinOp) -> R<Tv> {
        let x = self.ld_arg(&b, "arg0", F32_F64)?;
        let one = self.constant(Const::Float(1.0), x.ty.clone(), b.span)?;
        self.arith(op, one, x, b.span)
    }

    fn ld_fma(&mut self, b: Bound<'a>, dir: Dir) -> R<Tv> {
        let span = b.span;
        let mut xs = Vec::new();
        for p in ["arg0", "arg1", "arg2"] {
            let x = self.tensor_arg(b.req(p), &b.fname, p)?;
            self.check_dtype(&x, F32_F64, &b.fname, b.req(p).span)?;
            xs.push(x);
        }
        let [x, y, z]: [Tv; 3] = xs.try_into().expect("three arguments");
        let (x, y) = self.same_type_pair(x, y, &b.fname, span)?;
        let (x, z) = self.same_type_pair(x, z, &b.fname, span)?;
        let y = self.broadcast_to(y, x.shape(), span)?;
        let ty = x.ty.clone();
        self.emit1(Op::FmaRound(dir), &[x, y, z], ty, span)
    }

    fn ld_ilogb(&mut self, b: Bound<'a>) -> R<Tv> {
        let x = self.ld_arg(&b, "arg0", F32_F64)?;
        self.ilogb(x, b.span)
    }

    fn ld_ldexp(&mut self, b: Bound<'a>) -> R<Tv> {
        let x = self.tensor_arg(b.req("arg0"), &b.fname, "arg0")?;
        let n = self.tensor_arg(b.req("arg1"), &b.fname, "arg1")?;
        self.check_dtype(&x, F32_F64, &b.fname, b.req("arg0").span)?;
        self.check_dtype(&n, &[I32], &b.fname, b.req("arg1").span)?;
        self.ldexp(x, n, b.span)
    }

    fn ld_saturate(&mut self, b: Bound<'a>) -> R<Tv> {
        // `cvt.ftz.sat.f32`: clamped to [0, 1], NaN and subnormals giving 0.
        let x = self.ld_arg(&b, "arg0", &[F32])?;
        self.un(UnOp::Saturate, x, b.span)
    }

    /// A function of two fp32 or fp64 operands of one type.
    fn ld_binary(&mut self, b: Bound<'a>, f: Combine<'a>) -> R<Tv> {
        let (x, y) = self.ld_pair(&b, F32_F64)?;
        f(self, x, y, b.span)
    }

    /// A conversion from `from` to `to` with the rounding `dir`.
    fn ld_convert_rounded(&mut self, b: Bound<'a>, from: ScalarType, to: ScalarType, dir: Dir) -> R<Tv> {
        let x = self.ld_arg(&b, "arg0", &[from])?;
        let ty = x.ty.with_elem(Elem::Scalar(to));
        self.emit1(Op::CastRound(dir), &[x], ty, b.span)
    }

    /// A conversion from `from` to `to` (to nearest even), or a reinterpretation of its bits (`bits`).
    fn ld_convert(&mut self, b: Bound<'a>, from: ScalarType, to: ScalarType, bits: bool) -> R<Tv> {
        let x = self.ld_arg(&b, "arg0", &[from])?;
        if bits { self.bitcast(x, Dtype::Scalar(to), b.span) } else { self.cast(x, Dtype::Scalar(to), b.span) }
    }

    /// A float-to-integer conversion: `round`, then a cast to `to`.
    fn ld_float_to_int(&mut self, b: Bound<'a>, from: ScalarType, to: ScalarType, round: Option<UnOp>) -> R<Tv> {
        let x = self.ld_arg(&b, "arg0", &[from])?;
        let x = match round {
            Some(op) => self.un(op, x, b.span)?,
            None => x,
        };
        self.cast(x, Dtype::Scalar(to), b.span)
    }

    /// A classification function: `test` of x as int32.
    fn ld_classify(&mut self, b: Bound<'a>, allowed: &[ScalarType], test: Test<'a>) -> R<Tv> {
        let x = self.ld_arg(&b, "arg0", allowed)?;
        let p = test(self, x, b.span)?;
        self.cast(p, Dtype::Scalar(I32), b.span)
    }

    /// `|x| pred inf`.
    fn abs_vs_inf(&mut self, pred: CmpPred, x: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.clone();
        let a = self.emit1(Op::Unary(UnOp::Abs), &[x], ty.clone(), span)?;
        let inf = self.constant(Const::Float(f64::INFINITY), ty, span)?;
        self.cmp(pred, a, inf, span)
    }

    /// Whether x's sign bit is set.
    fn signbit(&mut self, x: Tv, span: Span) -> R<Tv> {
        let (bits, _) = self.float_bits(x, span)?;
        let zero = self.zero_like(&bits, span)?;
        self.cmp(CmpPred::Lt, bits, zero, span)
    }

    /// IEEE's fmax/fmin (`op` max or min): a NaN operand gives the other.
    fn min_max_ieee(&mut self, op: BinOp, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.clone();
        self.emit1(Op::Binary { op, propagate_nan: false }, &[x, y], ty, span)
    }

    /// x − y where x > y, +0 where x ≤ y, NaN where either is NaN.
    fn fdim(&mut self, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.clone();
        let d = self.arith(BinOp::Sub, x.clone(), y.clone(), span)?;
        let le = self.cmp(CmpPred::Le, x, y, span)?;
        let zero = self.constant(Const::Float(0.0), ty.clone(), span)?;
        self.emit1(Op::Select, &[le, zero, d], ty, span)
    }

    /// `nextafter` at fp32 (libdevice's, which flushes subnormals) or fp64 (C's).
    fn nextafter_any(&mut self, x: Tv, y: Tv, span: Span) -> R<Tv> {
        if x.scalar() == Some(F32) { self.nextafter_f32(x, y, span) } else { self.nextafter(x, y, span) }
    }

    /// libdevice's `abs`: its `fabsf` at f32, `tl.abs` at other types.
    fn libdevice_abs(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let x = self.tensor_arg(b.req("arg0"), &b.fname, "arg0")?;
        if x.scalar() != Some(F32) {
            return self.abs_builtin(b.req("arg0"), &b.fname, b.span);
        }
        Ok(Value::Tensor(self.fabsf(x, b.span)?))
    }

    /// libdevice's `fabsf`: `abs.ftz.f32`, so a subnormal gives +0 (Triton: libdevice.abs(0x00000001) = 0). A NaN
    /// keeps its bits (the comparison is false).
    fn fabsf(&mut self, x: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.clone();
        let a = self.emit1(Op::Unary(UnOp::Abs), &[x], ty.clone(), span)?;
        let min_normal = self.constant(Const::Float(f32::MIN_POSITIVE as f64), ty.clone(), span)?;
        let tiny = self.cmp(CmpPred::Lt, a.clone(), min_normal, span)?;
        let zero = self.constant(Const::Float(0.0), ty.clone(), span)?;
        self.emit1(Op::Select, &[tiny, zero, a], ty, span)
    }

    /// The `fast_*f` functions (fp32 only), as libdevice computes them: the hardware's approximations
    /// (`lg2.approx.ftz`, `sin.approx.ftz`, `cos.approx.ftz`, `div.approx.ftz`, `ex2.approx.ftz` = tessel's
    /// f32 `exp2`), `fast_logf`/`fast_log10f` as log2 times ln 2 or log10 2 (rounded to f32), `fast_tanf` as
    /// sin/cos, `fast_expf`/`fast_exp10f` as 2^(x·log2 e) / 2^(x·log2 10).
    fn ld_fast(&mut self, b: Bound<'a>, f: Fast) -> R<Tv> {
        let span = b.span;
        let x = self.ld_arg(&b, "arg0", &[F32])?;
        // `x` times an f32 constant given by its bits.
        let scale = |e: &mut Self, x: Tv, bits: u32| -> R<Tv> {
            let k = e.constant(Const::Float(f32::from_bits(bits) as f64), x.ty.clone(), span)?;
            e.arith(BinOp::Mul, x, k, span)
        };
        match f {
            Fast::Exp | Fast::Exp10 => {
                let k = if matches!(f, Fast::Exp) { std::f64::consts::LOG2_E } else { std::f64::consts::LOG2_10 };
                let k = self.constant(Const::Float(k), x.ty.clone(), span)?;
                let t = self.arith(BinOp::Mul, x, k, span)?;
                self.un(UnOp::Exp2, t, span)
            }
            Fast::Log2 => self.un(UnOp::Lg2Approx, x, span),
            Fast::Log => {
                let l = self.un(UnOp::Lg2Approx, x, span)?;
                scale(self, l, 0x3f31_7218)
            }
            Fast::Log10 => {
                let l = self.un(UnOp::Lg2Approx, x, span)?;
                scale(self, l, 0x3e9a_209b)
            }
            Fast::Sin => self.un(UnOp::SinApprox, x, span),
            Fast::Cos => self.un(UnOp::CosApprox, x, span),
            Fast::Tan => {
                let sn = self.un(UnOp::SinApprox, x.clone(), span)?;
                let cs = self.un(UnOp::CosApprox, x, span)?;
                self.arith(BinOp::DivApprox, sn, cs, span)
            }
        }
    }

    /// `fast_powf(x, y)` as 2^(log2(x)·y), or `fast_dividef(x, y)` (`divide`): `div.approx.ftz`.
    fn ld_fast2(&mut self, b: Bound<'a>, divide: bool) -> R<Tv> {
        let span = b.span;
        let (x, y) = self.ld_pair(&b, &[F32])?;
        if divide {
            return self.arith(BinOp::DivApprox, x, y, span);
        }
        let l = self.un(UnOp::Lg2Approx, x, span)?;
        let t = self.arith(BinOp::Mul, l, y, span)?;
        self.un(UnOp::Exp2, t, span)
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
