//! Math semantics that the frontend decides: `-x` on floats (Triton's `0 - x`), and the `libdevice` functions.

mod elab_common;

use elab_common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::ArgSpec;
use tessel_tile::ScalarType::{self, *};

const PRELUDE: &str = "import triton\nimport triton.language as tl\n\n";

fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, false)
}

/// Runs `out = EXPR` (of `x`, loaded from a buffer of type `t`) over `xs` in the interpreter; the results as
/// f64s.
fn unary(expr: &str, t: ScalarType, xs: &[f64]) -> Vec<f64> {
    let n = xs.len().next_power_of_two();
    let src = format!(
        "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    offs = tl.arange(0, {n})\n    m = offs < {}\n    x = tl.load(X + offs, mask=m)\n    tl.store(Out + offs, {expr}, mask=m)\n",
        xs.len()
    );
    let f = elab("test.py", &src, "k", vec![ptr(t), ptr(t)]);
    let mut mem = Memory::new();
    let (o, x) = (mem.alloc("out", t, xs.len()), mem.alloc_from("x", t, xs));
    run(&f, &[Arg::Buffer(o), Arg::Buffer(x)], [1, 1, 1], &mut mem);
    mem.read_f64(o)
}

/// Triton's `-x` is `0 - x`: `-(+0.0)` and `-(-0.0)` are both +0.0 (measured on an H100: `-0.0` gave
/// 0x00000000), other values negate.
#[test]
fn float_negation_is_zero_minus_x() {
    for t in [F32, F16, F64] {
        let got = unary("-x", t, &[0.0, -0.0, 1.5, -2.0]);
        assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>()[..2], [0, 0], "{t}: {got:?}");
        assert_eq!(got[2..], [-1.5, 2.0], "{t}");
    }
    // Integers wrap as before.
    assert_eq!(unary("-x", I32, &[0.0, 5.0, -(2f64.powi(31))]), [0.0, -5.0, -(2f64.powi(31))]);
}

/// Runs `out = EXPR` over two f32/f64 inputs.
fn binary(expr: &str, t: ScalarType, xs: &[f64], ys: &[f64]) -> Vec<f64> {
    elementwise2(expr, t, xs, ys)
}

/// Each libdevice function reaches its own semantics: in the interpreter f64 results are the host's libm
/// (asinh/atanh through log1p) and f32 results that value rounded once, except where tessel runs libdevice's
/// own sequence (within an ulp or two of that).
#[test]
fn libdevice_functions_compute_their_function() {
    let xs = [0.3, -0.7, 0.999, 1e-3, -0.25];
    let big = [1.5, 2.5, 10.0, 300.0, 7.25];
    type F = fn(f64) -> f64;
    let cases: [(&str, F, &[f64]); 19] = [
        ("tanh", f64::tanh, &xs),
        ("sinh", f64::sinh, &xs),
        ("cosh", f64::cosh, &xs),
        ("tan", f64::tan, &xs),
        ("asin", f64::asin, &xs),
        ("acos", f64::acos, &xs),
        ("atan", f64::atan, &big),
        ("asinh", tessel_tile::eval::arith::asinh, &big),
        ("acosh", tessel_tile::eval::arith::acosh, &big),
        ("atanh", tessel_tile::eval::arith::atanh, &xs),
        ("log1p", f64::ln_1p, &xs),
        ("expm1", f64::exp_m1, &xs),
        ("log10", f64::log10, &big),
        ("exp10", |x| 10f64.powf(x), &xs),
        ("cbrt", f64::cbrt, &big),
        ("trunc", f64::trunc, &big),
        ("rint", f64::round_ties_even, &big),
        ("nearbyint", f64::round_ties_even, &big),
        ("round", f64::round, &big),
    ];
    // libdevice's own sequences (`tessel_math`), not correctly rounded: within 2 ulp (f32), 1 ulp (f64).
    let (own32, own64) = (["tanh", "exp10", "log10", "cbrt", "acosh"], ["acosh"]);
    for (name, f, args) in cases {
        let got = unary(&format!("libdevice.{name}(x)"), F64, args);
        let want: Vec<f64> = args.iter().map(|&x| f(x)).collect();
        if own64.contains(&name) {
            for (g, w) in got.iter().zip(&want) {
                assert!((g.to_bits() as i64 - w.to_bits() as i64).abs() <= 1, "{name} {g} {w}");
            }
        } else {
            assert_eq!(got, want, "{name} (f64)");
        }
        let got = unary(&format!("libdevice.{name}(x)"), F32, args);
        let want: Vec<f64> = args.iter().map(|&x| f(x as f32 as f64) as f32 as f64).collect();
        if own32.contains(&name) {
            for (g, w) in got.iter().zip(&want) {
                let d = ((*g as f32).to_bits() as i64 - (*w as f32).to_bits() as i64).abs();
                assert!(d <= 2, "{name} {g} {w}");
            }
            continue;
        }
        assert_eq!(got, want, "{name} (f32)");
    }
    let (ys, xs2) = ([1.0, -1.0, 0.0, -0.0, 3.0], [-2.0, -2.0, -1.0, -1.0, 4.0]);
    assert_eq!(
        binary("libdevice.atan2(x, y)", F64, &ys, &xs2),
        ys.iter().zip(&xs2).map(|(y, x)| y.atan2(*x)).collect::<Vec<_>>()
    );
    let got = binary("libdevice.hypot(x, y)", F64, &xs2, &ys);
    for (g, w) in got.iter().zip(xs2.iter().zip(&ys).map(|(x, y)| x.hypot(*y))) {
        assert!((g.to_bits() as i64 - w.to_bits() as i64).abs() <= 1, "hypot {g} {w}");
    }
    assert_eq!(binary("libdevice.pow(x, y)", F32, &[2.0, 9.0], &[10.0, 0.5]), [1024.0, 3.0]);
    assert_eq!(binary("libdevice.rhypot(x, y)", F32, &[3.0, 0.0], &[-4.0, 0.0]), [0.2f32 as f64, f64::INFINITY]);
    let cs = binary("libdevice.copysign(x, y)", F32, &[1.5, -2.0, 3.0], &[-0.0, 1.0, -4.0]);
    assert_eq!(cs, [-1.5, 2.0, -3.0]);
}

/// The classification functions return int32 1/0; signbit sees −0 and negative NaNs.
#[test]
fn libdevice_classification_returns_int32() {
    let xs = [0.0, -0.0, f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0];
    let run = |expr: &str, t: ScalarType| {
        let src = format!(
            "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    offs = tl.arange(0, 8)\n    m = offs < 7\n    x = tl.load(X + offs, mask=m)\n    tl.store(Out + offs, {expr}, mask=m)\n"
        );
        let f = elab("test.py", &src, "k", vec![ptr(I32), ptr(t)]);
        let mut mem = Memory::new();
        let (o, x) = (mem.alloc("out", I32, 7), mem.alloc_from("x", t, &xs));
        run(&f, &[Arg::Buffer(o), Arg::Buffer(x)], [1, 1, 1], &mut mem);
        mem.read_f64(o)
    };
    for t in [F32, F64] {
        assert_eq!(run("libdevice.isnan(x)", t), [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0], "{t}");
        assert_eq!(run("libdevice.isinf(x)", t), [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0], "{t}");
        assert_eq!(run("libdevice.signbit(x)", t), [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0], "{t}");
    }
    assert_eq!(run("libdevice.finitef(x)", F32), [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    assert_eq!(run("libdevice.isfinited(x)", F64), [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
}

/// Like Triton, libdevice functions take fp32/fp64 only: an fp16 argument is an error at the argument, with a
/// hint; an unknown name suggests the closest.
#[test]
fn libdevice_errors_point_at_the_argument() {
    let src = format!(
        "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    x = tl.load(X + tl.arange(0, 8))\n    tl.store(Out + tl.arange(0, 8), libdevice.tanh(x))\n"
    );
    let msg = elab_error(&src, "k", vec![ptr(F16), ptr(F16)]);
    assert!(msg.contains("`libdevice.tanh` expects float32 or float64, got float16"), "{msg}");
    assert!(msg.contains("x.to(tl.float32)"), "{msg}");
    let line = msg.lines().position(|l| l.contains("libdevice.tanh(x)")).expect("the call is shown");
    let col = msg.lines().nth(line).unwrap().find("tanh(x)").unwrap() + 5;
    let mark = msg.lines().nth(line + 1).unwrap().find(['─', '┬', '^']).unwrap();
    assert_eq!(
        msg.lines().nth(line + 1).unwrap()[..mark].chars().count(),
        msg.lines().nth(line).unwrap()[..col].chars().count(),
        "{msg}"
    );
    let msg = elab_error(&src.replace("libdevice.tanh(x)", "libdevice.tanhh(x)"), "k", vec![ptr(F32), ptr(F32)]);
    assert!(msg.contains("tanh"), "{msg}");
}

/// `libdevice.fmod` is C's exact fmod, unlike `%` (Triton's frem expansion): 1 % 0.1 differs, signs follow
/// the dividend in both.
#[test]
fn libdevice_fmod_is_exact_unlike_percent() {
    let (xs, ys) = ([1.0, -7.5, 1e10, 5.0], [0.1, 2.0, 3.0, -2.5]);
    for t in [F32, F64] {
        let got = binary("libdevice.fmod(x, y)", t, &xs, &ys);
        let want: Vec<f64> = if t == F32 {
            xs.iter().zip(&ys).map(|(&x, &y)| ((x as f32) % (y as f32)) as f64).collect()
        } else {
            xs.iter().zip(&ys).map(|(&x, &y)| x % y).collect()
        };
        assert_eq!(got, want, "{t}");
        assert_eq!(got[3].to_bits(), 0, "{t}: 5 fmod -2.5 is +0");
        let pct = binary("x % y", t, &xs, &ys);
        assert!(pct[0] < 0.0 && got[0] > 0.0, "{t}: % gives {}, fmod {}", pct[0], got[0]);
    }
}

/// libdevice's rounding-mode arithmetic: each name reaches its op and direction (checked against the
/// interpreter's exact directed rounding), `_rn` is the ordinary op, `rcp_X(x)` is `div_X(1, x)`.
#[test]
fn libdevice_rounding_modes() {
    use tessel_math::rounding::{Arith, Dir, directed};
    let (xs, ys) = ([1.0, -1.0, 1e30, 3.0, -7.0], [3.0, 3.0, 7.0, 1e-30, 0.1]);
    for t in [F32, F64] {
        for (name, op) in [("add", Arith::Add), ("sub", Arith::Sub), ("mul", Arith::Mul), ("div", Arith::Div)] {
            for (m, dir) in [("rz", Dir::Zero), ("rd", Dir::Down), ("ru", Dir::Up)] {
                let got = binary(&format!("libdevice.{name}_{m}(x, y)"), t, &xs, &ys);
                let want: Vec<f64> =
                    xs.iter().zip(&ys).map(|(&x, &y)| directed(op, dir, t.float_format(), x, y)).collect();
                assert_eq!(got, want, "{name}_{m} on {t}");
            }
        }
        for (m, dir) in [("rz", Dir::Zero), ("rd", Dir::Down), ("ru", Dir::Up)] {
            let got = unary(&format!("libdevice.sqrt_{m}(x)"), t, &[2.0, 3.0, 0.5]);
            let want: Vec<f64> =
                [2.0, 3.0, 0.5].iter().map(|&x| directed(Arith::Sqrt, dir, t.float_format(), x, 0.0)).collect();
            assert_eq!(got, want, "sqrt_{m} on {t}");
            let got = unary(&format!("libdevice.rcp_{m}(x)"), t, &[3.0, -7.0]);
            let want: Vec<f64> =
                [3.0, -7.0].iter().map(|&x| directed(Arith::Div, dir, t.float_format(), 1.0, x)).collect();
            assert_eq!(got, want, "rcp_{m} on {t}");
        }
        // Round down and up bracket 1/3; _rn is the nearest.
        let (d, u) =
            (binary("libdevice.div_rd(x, y)", t, &[1.0], &[3.0]), binary("libdevice.div_ru(x, y)", t, &[1.0], &[3.0]));
        assert!(d[0] < u[0], "{t}");
        assert_eq!(binary("libdevice.add_rn(x, y)", t, &[1.0], &[2.0]), [3.0]);
    }
}

/// The compositions: fmax/fmin ignore a NaN, fdim, saturatef, nextafter (bit for bit against the host's
/// `nextafter` semantics), the bit reinterpretations and the rounding conversions to integers.
#[test]
fn libdevice_compositions() {
    let nan = f64::NAN;
    let got = binary("libdevice.fmax(x, y)", F32, &[1.0, nan, -0.0], &[nan, 2.0, 0.0]);
    assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [1.0f64, 2.0, 0.0].map(f64::to_bits));
    assert_eq!(binary("libdevice.fmin(x, y)", F64, &[1.0, nan], &[nan, 2.0]), [1.0, 2.0]);
    let got = binary("libdevice.fdim(x, y)", F32, &[5.0, 1.0, nan, 2.0], &[3.0, 4.0, 1.0, 2.0]);
    assert!(got[0] == 2.0 && got[1].to_bits() == 0 && got[2].is_nan() && got[3].to_bits() == 0, "{got:?}");
    // libdevice.abs is fabsf = abs.ftz.f32 at f32: a subnormal gives +0 (Triton: abs(0x00000001) = 0); f64 keeps it.
    let got = unary("libdevice.abs(x)", F32, &[-1e-45, 1e-40, -2.5, f32::MIN_POSITIVE as f64]);
    assert_eq!(
        got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        [0.0, 0.0, 2.5, f32::MIN_POSITIVE as f64].map(f64::to_bits)
    );
    assert_eq!(unary("libdevice.abs(x)", F64, &[-1e-310]), [1e-310]);
    assert!(unary("libdevice.abs(x)", F32, &[nan])[0].is_nan());
    let got = unary("libdevice.saturatef(x)", F32, &[-1.0, 0.25, 7.0, nan]);
    assert_eq!(got, [0.0, 0.25, 1.0, 0.0]);
    let got = unary("libdevice.saturatef(x)", F32, &[1e-40, -1e-40]);
    assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [0, 0], "subnormals flush to +0");
    // nextafter, f32 and f64, against stepping the bits by hand; f32 flushes subnormals as libdevice's
    // nextafterf does (from zero the step is the smallest normal).
    let next32 = |x: f32, y: f32| -> f32 {
        if x.is_nan() || y.is_nan() {
            return f32::NAN;
        }
        let flush = |v: f32| if v.is_subnormal() { 0f32.copysign(v) } else { v };
        let (x, y) = (flush(x), flush(y));
        if x == y {
            return y;
        }
        if x == 0.0 {
            return f32::MIN_POSITIVE.copysign(y);
        }
        let b = x.to_bits();
        f32::from_bits(if (x < y) == (x > 0.0) { b + 1 } else { b - 1 })
    };
    let xs = [1.0, 1.0, -1.0, -1.0, 0.0, -0.0, 0.0, f64::MAX, 3.0, nan, 2.0, 1e-40, 0.0];
    let ys = [2.0, 0.0, 0.0, -2.0, 1.0, -1.0, 0.0, f64::INFINITY, nan, 1.0, 2.0, 1.0, -1e-40];
    let got = binary("libdevice.nextafter(x, y)", F32, &xs, &ys);
    for i in 0..xs.len() {
        let want = next32(xs[i] as f32, ys[i] as f32) as f64;
        assert!(got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan()), "{} {}", xs[i], ys[i]);
    }
    let got = binary("libdevice.nextafter(x, y)", F64, &[1.0, -1.0], &[2.0, 0.0]);
    assert_eq!(got, [f64::from_bits(1f64.to_bits() + 1), f64::from_bits((-1f64).to_bits() - 1)]);
    // Reinterpretations and conversions.
    let src = |body: &str| {
        format!(
            "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    offs = tl.arange(0, 4)\n    x = tl.load(X + offs)\n    tl.store(Out + offs, {body})\n"
        )
    };
    let run = |body: &str, a: ScalarType, o: ScalarType, xs: &[f64]| {
        let f = elab("test.py", &src(body), "k", vec![ptr(o), ptr(a)]);
        let mut mem = Memory::new();
        let (out, x) = (mem.alloc("out", o, 4), mem.alloc_from("x", a, xs));
        run(&f, &[Arg::Buffer(out), Arg::Buffer(x)], [1, 1, 1], &mut mem);
        mem.read_f64(out)
    };
    let xs = [2.5, -2.5, 3.7, -0.5];
    assert_eq!(run("libdevice.float2int_rn(x)", F32, I32, &xs), [2.0, -2.0, 4.0, 0.0]);
    assert_eq!(run("libdevice.float2int_rz(x)", F32, I32, &xs), [2.0, -2.0, 3.0, 0.0]);
    assert_eq!(run("libdevice.float2int_rd(x)", F32, I32, &xs), [2.0, -3.0, 3.0, -1.0]);
    assert_eq!(run("libdevice.double2ll_ru(x)", F64, I64, &xs), [3.0, -2.0, 4.0, 0.0]);
    assert_eq!(run("libdevice.float_as_int(x)", F32, I32, &[1.0, -0.0, 2.0, 0.5])[..2], [1065353216.0, -2147483648.0]);
    assert_eq!(run("libdevice.int2float_rn(x)", I32, F32, &[16777217.0, 3.0, -5.0, 0.0]), [16777216.0, 3.0, -5.0, 0.0]);
    let msg = elab_error(&src("libdevice.float2int_rn(x)"), "k", vec![ptr(I32), ptr(F64)]);
    assert!(msg.contains("`libdevice.float2int_rn` expects float32, got float64"), "{msg}");
}

/// The fast_* functions are libdevice's approximate instructions: fast_expf is ex2.approx.ftz(x·log2 e) (the
/// interpreter's model: the product rounded to f32, subnormal results flushed), fast_sinf is sin.approx
/// (within 2^-20 absolute), fast_dividef is div.approx (0 for divisors above 2^126), fast_powf 2^(log2 x·y).
#[test]
fn libdevice_fast_functions() {
    let xs = [1.0, -2.5, 10.0, -100.0];
    let got = unary("libdevice.fast_expf(x)", F32, &xs);
    let want: Vec<f64> =
        xs.iter().map(|&x| tessel_tile::eval::arith::ex2_f32(x as f32 * std::f32::consts::LOG2_E, true)).collect();
    assert_eq!(got, want);
    assert_eq!(got[3], 0.0, "e^-100 is subnormal in f32: flushed");
    assert_eq!(unary("libdevice.fast_log2f(x)", F32, &[8.0, 0.5]), [3.0, -1.0]);
    assert!((unary("libdevice.fast_sinf(x)", F32, &[0.5])[0] - 0.5f64.sin()).abs() < 2f64.powi(-20));
    assert_eq!(binary("libdevice.fast_powf(x, y)", F32, &[2.0], &[5.0]), [32.0]);
    assert!(binary("libdevice.fast_powf(x, y)", F32, &[1.0], &[f64::INFINITY])[0].is_nan());
    assert_eq!(binary("libdevice.fast_dividef(x, y)", F32, &[1.0, 6.0], &[1e38, 3.0]), [0.0, 2.0]);
    assert_eq!(unary("libdevice.fast_logf(x)", F32, &[1.0]), [0.0]);
    let msg = elab_error(
        &format!(
            "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    x = tl.load(X + tl.arange(0, 4))\n    tl.store(Out + tl.arange(0, 4), libdevice.fast_expf(x))\n"
        ),
        "k",
        vec![ptr(F64), ptr(F64)],
    );
    assert!(msg.contains("`libdevice.fast_expf` expects float32, got float64"), "{msg}");
}

/// libdevice's integer and bit functions against the host's integer operations.
#[test]
fn libdevice_integer_functions() {
    let xs: [i64; 6] = [0, 1, -1, 0x1234_5678, i32::MIN as i64, 96];
    let ys: [i64; 6] = [5, -3, 7, 0x7fff_ffff, -1, 40];
    let f = |v: &[i64]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    let ints = |v: Vec<f64>| v.into_iter().map(|x| x as i64).collect::<Vec<_>>();
    let each = |g: fn(i32) -> i64| xs.iter().map(|&x| g(x as i32)).collect::<Vec<_>>();
    assert_eq!(ints(unary("libdevice.popc(x)", I32, &f(&xs))), each(|x| x.count_ones() as i64));
    assert_eq!(ints(unary("libdevice.clz(x)", I32, &f(&xs))), each(|x| x.leading_zeros() as i64));
    assert_eq!(ints(unary("libdevice.brev(x)", I32, &f(&xs))), each(|x| x.reverse_bits() as i64));
    assert_eq!(
        ints(unary("libdevice.ffs(x)", I32, &f(&xs))),
        each(|x| if x == 0 { 0 } else { x.trailing_zeros() as i64 + 1 })
    );
    let pairs = |g: fn(i32, i32) -> i64| xs.iter().zip(&ys).map(|(&x, &y)| g(x as i32, y as i32)).collect::<Vec<_>>();
    assert_eq!(ints(binary("libdevice.mulhi(x, y)", I32, &f(&xs), &f(&ys))), pairs(|x, y| (x as i64 * y as i64) >> 32));
    assert_eq!(
        ints(binary("libdevice.hadd(x, y)", I32, &f(&xs), &f(&ys))),
        pairs(|x, y| (x as i64 + y as i64).div_euclid(2))
    );
    assert_eq!(
        ints(binary("libdevice.rhadd(x, y)", I32, &f(&xs), &f(&ys))),
        pairs(|x, y| (x as i64 + y as i64 + 1).div_euclid(2))
    );
    assert_eq!(
        ints(binary("libdevice.mul24(x, y)", I32, &f(&xs), &f(&ys))),
        pairs(|x, y| (((x << 8) >> 8).wrapping_mul((y << 8) >> 8)) as i64)
    );
    // byte_perm(x, y, s): bytes of y:x chosen by the selector's nibbles; 0x3210 is x, 0x7654 is y.
    assert_eq!(ints(binary("libdevice.byte_perm(x, y, 0x3210)", I32, &[0x1234_5678 as f64], &[7.0])), [0x1234_5678]);
    assert_eq!(ints(binary("libdevice.byte_perm(x, y, 0x7654)", I32, &[1.0], &[0x0102_0304 as f64])), [0x0102_0304]);
    assert_eq!(ints(binary("libdevice.byte_perm(x, y, 0x0123)", I32, &[0x1234_5678 as f64], &[0.0])), [0x7856_3412]);
    // 64-bit: popc and clz give int32 counts of the 64-bit value, mulhi the high half of the 128-bit product.
    let big = [(1i64 << 40) as f64, -1.0, 3.0];
    assert_eq!(ints(unary("libdevice.popc(x)", I64, &big)), [1, 64, 2]);
    assert_eq!(ints(unary("libdevice.clz(x)", I64, &big)), [23, 0, 62]);
    assert_eq!(
        ints(binary("libdevice.mulhi(x, y)", I64, &[-(1i64 << 40) as f64], &[(1i64 << 40) as f64])),
        [-(1 << 16)]
    );
    // llrint rounds ties to even, llround away from zero.
    assert_eq!(unary("libdevice.llrint(x)", F64, &[2.5, -3.5, 1e18]), [2.0, -4.0, 1e18]);
    assert_eq!(unary("libdevice.llround(x)", F64, &[2.5, -3.5, 0.49]), [3.0, -4.0, 0.0]);
    // Word reinterpretations of an f64.
    let d = 1.5f64;
    assert_eq!(ints(run_f64_to_i32("libdevice.double2hiint(x)", d)), [(d.to_bits() >> 32) as i32 as i64]);
    let msg = elab_error(
        &format!(
            "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    x = tl.load(X + tl.arange(0, 4))\n    tl.store(Out + tl.arange(0, 4), libdevice.popc(x))\n"
        ),
        "k",
        vec![ptr(F32), ptr(F32)],
    );
    assert!(msg.contains("`libdevice.popc` expects"), "{msg}");
}

/// `EXPR` of an f64 `x` stored to an i32 output.
fn run_f64_to_i32(expr: &str, x: f64) -> Vec<f64> {
    let src = format!(
        "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    offs = tl.arange(0, 1)\n    x = tl.load(X + offs)\n    tl.store(Out + offs, {expr})\n"
    );
    let f = elab("test.py", &src, "k", vec![ptr(I32), ptr(F64)]);
    let mut mem = Memory::new();
    let (o, xb) = (mem.alloc("out", I32, 1), mem.alloc_from("x", F64, &[x]));
    run(&f, &[Arg::Buffer(o), Arg::Buffer(xb)], [1, 1, 1], &mut mem);
    mem.read_f64(o)
}

/// `sinpi`, `cospi`, `logb` (f32 and f64), `rcbrt`, `erfinv`, `erfc` (f32 here; their f64 forms in
/// `elab_libdevice_special.rs`) reach libdevice's sequences.
#[test]
fn libdevice_pi_functions_and_f32_only_ones() {
    let xs = [0.5, -1.0, 0.25, 2.5, -0.75];
    for t in [F32, F64] {
        let s = unary("libdevice.sinpi(x)", t, &xs);
        let c = unary("libdevice.cospi(x)", t, &xs);
        for (i, &x) in xs.iter().enumerate() {
            let (ws, wc) = ((std::f64::consts::PI * x).sin(), (std::f64::consts::PI * x).cos());
            assert!((s[i] - ws).abs() < 1e-6 && (c[i] - wc).abs() < 1e-6, "{t} sinpi/cospi({x}): {} {}", s[i], c[i]);
        }
    }
    assert_eq!(unary("libdevice.sinpi(x)", F32, &[1.0, -2.0]), [0.0, -0.0]);
    assert_eq!(unary("libdevice.rcbrt(x)", F32, &[8.0, -0.125, 1.0]), [0.5, -2.0, 1.0]);
    for t in [F32, F64] {
        assert_eq!(unary("libdevice.logb(x)", t, &[1.0, 0.1, -1024.0, 0.0]), [0.0, -4.0, 10.0, f64::NEG_INFINITY]);
    }
    assert_eq!(unary("libdevice.rsqrt_rn(x)", F32, &[4.0, 0.0]), [0.5, f64::INFINITY]);
    // rcp64h: the approximate f64 reciprocal, which the interpreter rounds correctly; `.ftz` reads a
    // subnormal as ±0.
    assert_eq!(unary("libdevice.rcp64h(x)", F64, &[4.0, -0.5, -1e-310]), [0.25, -2.0, f64::NEG_INFINITY]);
    let e = unary("libdevice.normcdf(x)", F32, &[0.0, 1.0, -2.0]);
    assert!(e[0] == 0.5 && (e[1] - 0.841_344_746).abs() < 1e-7 && (e[2] - 0.022_750_132).abs() < 1e-8, "{e:?}");
    let e = unary("libdevice.erfc(x)", F32, &[0.0, 1.0, -1.0]);
    assert!(e[0] == 1.0 && (e[1] - 0.157_299_207).abs() < 1e-7 && (e[2] - 1.842_700_793).abs() < 1e-6, "{e:?}");
    let e = unary("libdevice.erfinv(x)", F32, &[0.0, 0.5, -0.9]);
    assert!(e[0] == 0.0 && (e[1] - 0.476_936_276).abs() < 1e-6 && (e[2] + 1.163_087_154).abs() < 1e-6, "{e:?}");
}

/// `libdevice.fma_rn` ... `fma_ru`: one rounding in the direction; f32 reads subnormal operands as zero.
#[test]
fn libdevice_fma_rounds_once_in_its_direction() {
    // (±(1 + 2^-12))·(1 + 2^-12) = ±(1 + 2^-11 + 2^-24): half an f32 ulp above 1 + 2^-11 (a tie, to even).
    let a = 1.0 + 2f64.powi(-12);
    let run = |f: &str, t: ScalarType| binary(&format!("libdevice.{f}(x, y, x - x)"), t, &[a, -a], &[a, a]);
    let (lo, hi) = (1.0 + 2f64.powi(-11), 1.0 + 2f64.powi(-11) + 2f64.powi(-23));
    assert_eq!(run("fma_rn", F32), [lo, -lo]);
    assert_eq!(run("fma_rz", F32), [lo, -lo]);
    assert_eq!(run("fma_rd", F32), [lo, -hi]);
    assert_eq!(run("fma_ru", F32), [hi, -lo]);
    let exact = 1.0 + 2f64.powi(-11) + 2f64.powi(-24);
    assert_eq!(run("fma_rd", F64), [exact, -exact]);
    // 2^-149 (subnormal) read as 0: fma_ru(2^-149, 1, 0) = 0 in f32, 2^-149 would be exact in f64.
    let sub = f32::from_bits(1) as f64;
    assert_eq!(binary("libdevice.fma_ru(x, y, x - x)", F32, &[sub], &[1.0]), [0.0]);
    assert_eq!(binary("libdevice.fma_ru(x, y, x - x)", F64, &[sub], &[1.0]), [sub]);
}

/// Runs `out = EXPR` of `x` (type `t`) and `n` (int32).
fn with_int(expr: &str, t: ScalarType, xs: &[f64], ns: &[i64]) -> Vec<f64> {
    let k = xs.len().next_power_of_two();
    let src = format!(
        "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X, N):\n    offs = tl.arange(0, {k})\n    m = offs < {}\n    x = tl.load(X + offs, mask=m)\n    n = tl.load(N + offs, mask=m)\n    tl.store(Out + offs, {expr}, mask=m)\n",
        xs.len()
    );
    let f = elab("test.py", &src, "k", vec![ptr(t), ptr(t), ptr(I32)]);
    let mut mem = Memory::new();
    let ns: Vec<f64> = ns.iter().map(|&n| n as f64).collect();
    let (o, x, n) = (mem.alloc("out", t, xs.len()), mem.alloc_from("x", t, xs), mem.alloc_from("n", I32, &ns));
    run(&f, &[Arg::Buffer(o), Arg::Buffer(x), Arg::Buffer(n)], [1, 1, 1], &mut mem);
    mem.read_f64(o)
}

/// `libdevice.ldexp` / `scalbn`: x·2^n in one, two or four exact factors (libdevice's split by |n|), so results
/// that reach the subnormals through a product are what one rounding gives; libdevice's special cases, its
/// reading of an f32 subnormal as 0 (x + x) included.
#[test]
fn libdevice_ldexp_scales_by_powers_of_two() {
    let p = |k: i32| 2f64.powi(k);
    let xs = [1.5, 1.0, 1.0, -3.0, 1.0, 1.0, 5.0, p(-149)];
    let ns = [3, -149, 200, -300, 250, i32::MIN as i64, 0, 0];
    let want = [12.0, p(-149), f64::INFINITY, -0.0, p(250).min(f64::INFINITY), 0.0, 5.0, p(-148)];
    let got = with_int("libdevice.ldexp(x, n)", F32, &xs, &ns);
    let want32: Vec<f64> = want.iter().map(|&w| if w > f32::MAX as f64 { f64::INFINITY } else { w }).collect();
    assert_eq!(got, want32);
    assert_eq!(with_int("libdevice.scalbn(x, n)", F32, &xs, &ns), want32);
    let xs = [1.5, 1.0, 1.0, p(-1074), p(-1074), -1.0, 0.0, 1.0];
    let ns = [3, -1074, 1024, 2000, 2100, -5000, 7, i32::MAX as i64];
    let want = [12.0, p(-1074), f64::INFINITY, p(926), f64::INFINITY, -0.0, 0.0, f64::INFINITY];
    assert_eq!(with_int("libdevice.ldexp(x, n)", F64, &xs, &ns), want);
}

/// `libdevice.ilogb`: the unbiased exponent as int32; `INT_MIN` for 0, NaN (and f32 subnormals, read as 0),
/// `INT_MAX` for ±inf; f64 subnormals from their leading zeros.
#[test]
fn libdevice_ilogb_gives_int32_exponents() {
    let run = |t: ScalarType, xs: &[f64]| -> Vec<f64> {
        let src = format!(
            "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    offs = tl.arange(0, 8)\n    x = tl.load(X + offs)\n    tl.store(Out + offs, libdevice.ilogb(x))\n"
        );
        let f = elab("test.py", &src, "k", vec![ptr(I32), ptr(t)]);
        let mut mem = Memory::new();
        let (o, x) = (mem.alloc("out", I32, 8), mem.alloc_from("x", t, xs));
        run(&f, &[Arg::Buffer(o), Arg::Buffer(x)], [1, 1, 1], &mut mem);
        mem.read_f64(o)
    };
    let (imin, imax) = (i32::MIN as f64, i32::MAX as f64);
    let xs = [1.0, 0.1, -1024.0, 0.0, 1e-40, f64::INFINITY, f64::NAN, f32::MAX as f64];
    assert_eq!(run(F32, &xs), [0.0, -4.0, 10.0, imin, imin, imax, imin, 127.0]);
    let xs = [1.0, 0.1, -1024.0, 0.0, 5e-324, f64::NEG_INFINITY, f64::NAN, 1e-310];
    assert_eq!(run(F64, &xs), [0.0, -4.0, 10.0, imin, -1074.0, imax, imin, -1030.0]);
    // A negative NaN (sign bit and payload 1) is a NaN too: the magnitude is taken on the bits, since the
    // H100's abs.f64 returned this NaN with its sign and it read as a subnormal (-1011).
    let neg_nan = f64::from_bits(0xfff0_0000_0000_0001);
    assert_eq!(run(F64, &[neg_nan, -1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])[0], imin);
    let src = format!(
        "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    offs = tl.arange(0, 8)\n    tl.store(Out + offs, libdevice.ilogb(tl.load(X + offs)))\n"
    );
    let ir = tessel_tile::print::print_func(&elab("test.py", &src, "k", vec![ptr(I32), ptr(F64)]));
    assert!(!ir.contains(" abs "), "{ir}");
}

/// Runs `out = EXPR` of `x` (type `t`) into a buffer of type `u`.
fn convert(expr: &str, t: ScalarType, u: ScalarType, xs: &[f64]) -> Vec<f64> {
    let k = xs.len().next_power_of_two();
    let src = format!(
        "{PRELUDE}from triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X):\n    offs = tl.arange(0, {k})\n    m = offs < {}\n    x = tl.load(X + offs, mask=m)\n    tl.store(Out + offs, {expr}, mask=m)\n",
        xs.len()
    );
    let f = elab("test.py", &src, "k", vec![ptr(u), ptr(t)]);
    let mut mem = Memory::new();
    let (o, x) = (mem.alloc("out", u, xs.len()), mem.alloc_from("x", t, xs));
    run(&f, &[Arg::Buffer(o), Arg::Buffer(x)], [1, 1, 1], &mut mem);
    mem.read_f64(o)
}

/// The conversions with a rounding mode round once in their direction; `double2float_*` flush a subnormal
/// result (libdevice's `cvt.rn.ftz.f32.f64`).
#[test]
fn libdevice_conversions_round_in_their_direction() {
    let p = |k: i32| 2f64.powi(k);
    let xs = [p(24) + 1.0, -(p(24) + 1.0), 3.0];
    assert_eq!(convert("libdevice.int2float_rz(x)", I32, F32, &xs), [p(24), -p(24), 3.0]);
    assert_eq!(convert("libdevice.int2float_ru(x)", I32, F32, &xs), [p(24) + 2.0, -p(24), 3.0]);
    assert_eq!(convert("libdevice.int2float_rd(x)", I32, F32, &xs), [p(24), -p(24) - 2.0, 3.0]);
    assert_eq!(convert("libdevice.uint2float_rd(x)", U32, F32, &[p(32) - 1.0]), [p(32) - 256.0]);
    assert_eq!(convert("libdevice.uint2float_ru(x)", U32, F32, &[p(32) - 1.0]), [p(32)]);
    assert_eq!(convert("libdevice.ll2float_rz(x)", I64, F32, &[-(p(40) + 1.0)]), [-p(40)]);
    assert_eq!(convert("libdevice.ull2float_ru(x)", U64, F32, &[p(40) + 1.0]), [p(40) + p(17)]);
    assert_eq!(convert("libdevice.ll2double_rz(x)", I64, F64, &[p(53) + 2.0]), [p(53) + 2.0]);
    assert_eq!(convert("libdevice.ull2double_rd(x)", U64, F64, &[p(60) + 1.0]), [p(60)]);
    let xs = [1.0 + p(-30), -(1.0 + p(-30)), 1e-40, -1e-40, 1e300, f64::NEG_INFINITY];
    let up = 1.0 + p(-23);
    assert_eq!(
        convert("libdevice.double2float_rz(x)", F64, F32, &xs),
        [1.0, -1.0, 0.0, -0.0, f32::MAX as f64, f64::NEG_INFINITY]
    );
    assert_eq!(
        convert("libdevice.double2float_ru(x)", F64, F32, &xs),
        [up, -1.0, 0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY]
    );
    assert_eq!(
        convert("libdevice.double2float_rd(x)", F64, F32, &xs),
        [1.0, -up, 0.0, -0.0, f32::MAX as f64, f64::NEG_INFINITY]
    );
    let got = convert("libdevice.double2float_rn(x)", F64, F32, &xs);
    assert_eq!(got, [1.0, -1.0, 0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY]);
    assert!(got[3].is_sign_negative(), "the flushed −1e-40 keeps its sign");
}

/// IEEE 754's remainder, exactly: x − n·y with n the integer nearest x / y, ties to even (for operands whose
/// exponents are within 60 of each other, so that both fit an i128 at a common exponent).
fn exact_remainder(x: f64, y: f64) -> f64 {
    if x == 0.0 {
        return x;
    }
    let split = |v: f64| {
        let b = v.abs().to_bits();
        let (e, m) = ((b >> 52) as i32, b & ((1 << 52) - 1));
        if e == 0 { (m as i128, -1074) } else { ((m | 1 << 52) as i128, e - 1075) }
    };
    let ((mx, ex), (my, ey)) = (split(x), split(y));
    let e0 = ex.min(ey);
    let (big_x, big_y) = (mx << (ex - e0), my << (ey - e0));
    let q = big_x / big_y;
    let mut r = big_x - q * big_y;
    if 2 * r > big_y || (2 * r == big_y && q % 2 == 1) {
        r -= big_y;
    }
    // 2^e0 in two exact halves (2f64.powi(-1074) is 0: it divides by an overflowed 2^1074).
    let v = r as f64 * 2f64.powi(e0 / 2) * 2f64.powi(e0 - e0 / 2);
    if x.is_sign_negative() { -v } else { v }
}

/// `libdevice.remainder`: IEEE's remainder (always exact), ties to the even quotient, x's sign on a zero, NaN
/// for x = ±inf or y = 0, x for y = ±inf; f64 subnormal divisors (where |y| / 2 would round) too.
#[test]
fn libdevice_remainder_is_ieee_remainder() {
    let mut rng = Rng::new(41);
    for t in [F32, F64] {
        let mut xs = vec![5.5, 4.5, -5.5, 3.0, -3.0, 1.0, 7.0, 0.0, -0.0];
        let mut ys = vec![1.0, 1.0, 1.0, 3.0, 3.0, 0.1, -2.0, 3.0, 3.0];
        for _ in 0..500 {
            let (sx, sy) = (rng.normal() * 2f64.powi((rng.below(60) as i32) - 30), rng.normal());
            let (sx, sy) = if t == F32 { (sx as f32 as f64, sy as f32 as f64) } else { (sx, sy) };
            xs.push(sx);
            ys.push(if sy == 0.0 { 1.0 } else { sy });
        }
        if t == F64 {
            xs.extend([3e-323, 1e-310, -7e-322]);
            ys.extend([5e-324, 3e-323, 1e-323]);
        } else {
            // The kernel reads f32 values; the reference takes the same ones.
            for v in xs.iter_mut().chain(ys.iter_mut()) {
                *v = *v as f32 as f64;
            }
        }
        let got = binary("libdevice.remainder(x, y)", t, &xs, &ys);
        for ((&x, &y), &g) in xs.iter().zip(&ys).zip(&got) {
            let want = exact_remainder(x, y);
            assert_eq!(g.to_bits(), want.to_bits(), "{t}: remainder({x:e}, {y:e}) = {g:e}, want {want:e}");
        }
        let special = binary(
            "libdevice.remainder(x, y)",
            t,
            &[f64::INFINITY, 1.0, 2.5, f64::NAN, -2.5],
            &[1.0, 0.0, f64::INFINITY, 1.0, f64::NEG_INFINITY],
        );
        assert!(special[0].is_nan() && special[1].is_nan() && special[3].is_nan(), "{t}: {special:?}");
        assert_eq!((special[2], special[4]), (2.5, -2.5), "{t}");
    }
}

/// fp32 `libdevice.remainder` flushes as libdevice does under `__CUDA_FTZ` (found on the H100 against Triton): a
/// subnormal divisor reads as 0 (NaN), a subnormal dividend as a zero of its sign, and a subnormal result is
/// flushed to a zero of its sign.
#[test]
fn libdevice_remainder_f32_flushes_subnormals() {
    let tiny = f32::from_bits(0x007f_ffff) as f64;
    let (a, b) = (2f64.powi(-125), 2f64.powi(-140));
    let got = binary(
        "libdevice.remainder(x, y)",
        F32,
        &[1.0, tiny, -tiny, a + b, -(a + b), 5.5],
        &[tiny, 1.0, 1.0, a, a, 1.0],
    );
    assert!(got[0].is_nan(), "{got:?}");
    assert_eq!(
        got[1..].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        [0.0, -0.0, 0.0, -0.0, -0.5].map(f64::to_bits)
    );
}
