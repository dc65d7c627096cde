//! The libdevice special functions that run libdevice's own sequences from `tessel_math` (erfcx, erfcinv,
//! normcdfinv, the Bessel and gamma functions, norm3d/norm4d and their reciprocals, and the f64 forms of rcbrt,
//! erfinv, erfc, normcdf) and `jn`/`yn` through the elaborator and the interpreter, on fp32 and fp64.

mod elab_common;

use elab_common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::ArgSpec;
use tessel_tile::ScalarType::{self, *};

const PRELUDE: &str = "import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n";

fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, false)
}

fn run2(expr: &str, t: ScalarType, xs: &[f64], ys: &[f64]) -> Vec<f64> {
    elementwise2(expr, t, xs, ys)
}

fn unary(f: &str, t: ScalarType, xs: &[f64]) -> Vec<f64> {
    run2(&format!("libdevice.{f}(x)"), t, xs, xs)
}

/// Each function at a few points (exact in f32) against its value (mpmath, 200 bits, rounded to f64), on fp32 and
/// fp64: within 8 ulps of the type, relative (absolute below 1, where j0/j1/y0/y1 oscillate; 1e−12 for their f64
/// forms past 8). The routines' bounds are measured in `tessel_math`'s tests.
#[test]
fn special_functions_compute_their_function() {
    // (function, (x, value) points).
    type Case = (&'static str, &'static [(f64, f64)]);
    let cases: &[Case] = &[
        ("erfcx", &[(1.0, 0.427583576155807), (-0.5, 1.952360489182557), (30.0, 0.01879588886141675)]),
        (
            "erfcinv",
            &[(0.5, 0.4769362762044699), (1.1641532182693481e-10, 4.556549801237543), (1.875, -1.0847870400692832)],
        ),
        ("normcdfinv", &[(0.96875, 1.8627318674216515), (7.62939453125e-06, -4.324919040826046)]),
        ("cyl_bessel_i0", &[(1.0, 1.2660658777520084), (-20.0, 43558282.559553534)]),
        ("cyl_bessel_i1", &[(1.0, 0.565159103992485), (-20.0, -42454973.38512777)]),
        ("tgamma", &[(4.5, 11.631728396567448), (-1.5, 2.363271801207355)]),
        ("lgamma", &[(0.5, 0.5723649429247001), (30.0, 71.25703896716801), (-1.5, 0.860047015376481)]),
        ("j0", &[(1.0, 0.7651976865579666), (20.0, 0.16702466434058316)]),
        ("j1", &[(1.0, 0.4400505857449335), (-20.0, -0.06683312417585005)]),
        ("y0", &[(1.0, 0.08825696421567696), (20.0, 0.06264059680938383)]),
        ("y1", &[(1.0, -0.7812128213002887), (20.0, -0.1655116143625213)]),
        ("rcbrt", &[(8.0, 0.5), (-3.0, -0.6933612743506347)]),
        ("erfinv", &[(0.5, 0.4769362762044699), (-0.998046875, -2.190099968353768)]),
        ("erfc", &[(1.0, 0.15729920705028513), (-2.0, 1.9953222650189528)]),
        ("normcdf", &[(1.0, 0.8413447460685429), (-10.0, 7.619853024160525e-24)]),
    ];
    for &(f, points) in cases {
        let (xs, want): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
        for t in [F32, F64] {
            let got = unary(f, t, &xs);
            let eps = if t == F32 { f32::EPSILON as f64 } else { f64::EPSILON };
            for i in 0..xs.len() {
                let err = (got[i] - want[i]).abs() / want[i].abs().max(1.0);
                // Past 8, libdevice's f64 j0/j1/y0/y1 are Hankel's form, about 1e−12 relative (its amplitude's
                // constant term is 1 − 1.5e−12).
                let far = t == F64 && f.len() == 2 && xs[i].abs() > 8.0;
                let tol = if far { 1e-12 } else { 8.0 * eps };
                assert!(err <= tol, "libdevice.{f}({}) on {t}: {}, want {}", xs[i], got[i], want[i]);
            }
        }
    }
}

/// norm3d/norm4d/rnorm3d/rnorm4d: one type for all operands, broadcast together (a scalar operand too: a
/// Python float is an fp32 scalar here, as for the other libdevice functions of several operands).
#[test]
fn norms_broadcast_their_operands() {
    assert_eq!(run2("libdevice.norm3d(x, y, 12.0)", F32, &[3.0, 0.0], &[4.0, 5.0]), [13.0, 13.0]);
    for t in [F32, F64] {
        assert_eq!(run2("libdevice.norm3d(x, y, x + y + 5)", t, &[3.0, 0.0], &[4.0, 0.0]), [13.0, 5.0], "{t}");
        assert_eq!(run2("libdevice.norm4d(x, y, x, y)", t, &[1.0, 0.0], &[1.0, 0.0]), [2.0, 0.0], "{t}");
        assert_eq!(run2("libdevice.rnorm3d(x, y, y)", t, &[2.0, 0.0], &[0.0, 0.0]), [0.5, f64::INFINITY], "{t}");
        assert_eq!(run2("libdevice.rnorm4d(x, x, x, y)", t, &[1.0], &[1.0]), [0.5], "{t}");
    }
    assert_eq!(run2("libdevice.norm3d(x, y, x)", F32, &[f64::INFINITY], &[f64::NAN]), [f64::INFINITY]);
}

/// Bad calls are errors at the call: an integer operand, mixed float types, a missing operand, `jn`/`yn` with an
/// order that is not int32 or an x that is not fp32/fp64.
#[test]
fn bad_calls_are_errors_at_the_call() {
    let src = |body: &str| {
        format!(
            "{PRELUDE}@triton.jit\ndef k(Out, X, Y):\n    x = tl.load(X + tl.arange(0, 8))\n    y = tl.load(Y + tl.arange(0, 8))\n    tl.store(Out + tl.arange(0, 8), {body})\n"
        )
    };
    let msg = elab_error(&src("libdevice.norm3d(x, y)"), "k", vec![ptr(F32), ptr(F32), ptr(F32)]);
    assert!(msg.contains("arg2") && msg.contains("libdevice.norm3d(x, y)"), "{msg}");
    let msg = elab_error(&src("libdevice.norm3d(x, y, x)"), "k", vec![ptr(F32), ptr(F32), ptr(F64)]);
    assert!(msg.contains("one type") && msg.contains("libdevice.norm3d(x, y, x)"), "{msg}");
    let msg = elab_error(&src("libdevice.rnorm4d(x, y, x, y)"), "k", vec![ptr(F32), ptr(I32), ptr(I32)]);
    assert!(msg.contains("rnorm4d"), "{msg}");
    // jn/yn: the order must be int32 and x fp32/fp64 (Triton's two signatures).
    for (call, t) in
        [("libdevice.jn(x, x)", F32), ("libdevice.yn(y, y)", I32), ("libdevice.jn(y.to(tl.int64), x)", I32)]
    {
        let msg = elab_error(&src(call), "k", vec![ptr(F32), ptr(F32), ptr(t)]);
        assert!(msg.contains(call) && (msg.contains("int32") || msg.contains("i32") || msg.contains("fp32")), "{msg}");
    }
}

/// `jn`/`yn` of an int32 order (a tensor, or a Python int broadcast against x) on fp32 and fp64, against mpmath's
/// values (200 bits, rounded to f64): orders 0 and 1 (j0/j1/y0/y1), both of `jn`'s recurrences (7 at 30:
/// forward; 3 at 2.5 and 12 at 4: backward), `yn`'s forward one; within 8 ulps of the type relative (absolute
/// below 1; 1e−12 for f64 past 8); a negative order gives NaN.
#[test]
fn bessel_functions_of_integer_order() {
    let (ns, xs) = ([3, 0, 1, 7, 12, -1], [2.5, 1.5, 2.0, 30.0, 4.0, 1.0]);
    let jn = [0.21660039103911352, 0.5118276717359181, 0.5767248077568734, 0.1451851895723283, 6.264461794312208e-06];
    let yn = [-0.756055496753671, 0.38244892379775886, -0.10703243154093754, 0.02720211839520559, -4493.779939702275];
    let ord: Vec<f64> = ns.iter().map(|&n| n as f64).collect();
    for t in [F32, F64] {
        for (f, want) in [("jn", &jn), ("yn", &yn)] {
            let src = format!(
                "{PRELUDE}@triton.jit\ndef k(Out, X, N):\n    offs = tl.arange(0, 8)\n    m = offs < 6\n    x = tl.load(X + offs, mask=m)\n    n = tl.load(N + offs, mask=m)\n    tl.store(Out + offs, libdevice.{f}(n, x), mask=m)\n"
            );
            let k = elab("test.py", &src, "k", vec![ptr(t), ptr(t), ptr(I32)]);
            let mut mem = Memory::new();
            let (o, x, n) = (mem.alloc("out", t, 6), mem.alloc_from("x", t, &xs), mem.alloc_from("n", I32, &ord));
            run(&k, &[Arg::Buffer(o), Arg::Buffer(x), Arg::Buffer(n)], [1, 1, 1], &mut mem);
            let got = mem.read_f64(o);
            let eps = if t == F32 { f32::EPSILON as f64 } else { f64::EPSILON };
            for i in 0..5 {
                let err = (got[i] - want[i]).abs() / want[i].abs().max(1.0);
                // Past 8 the f64 recurrence starts from j0/j1/y0/y1's Hankel form (about 1e−12 relative).
                let tol = if t == F64 && xs[i] > 8.0 { 1e-12 } else { 8.0 * eps };
                assert!(err <= tol, "libdevice.{f}({}, {}) on {t}: {}, want {}", ns[i], xs[i], got[i], want[i]);
            }
            assert!(got[5].is_nan(), "libdevice.{f}(-1, 1.0) on {t}: {}", got[5]);
        }
        // A Python int order, broadcast: jn(3, x).
        let src = format!(
            "{PRELUDE}@triton.jit\ndef k(Out, X, N):\n    offs = tl.arange(0, 8)\n    m = offs < 1\n    x = tl.load(X + offs, mask=m)\n    tl.store(Out + offs, libdevice.jn(3, x), mask=m)\n"
        );
        let k = elab("test.py", &src, "k", vec![ptr(t), ptr(t), ptr(I32)]);
        let mut mem = Memory::new();
        let (o, x, n) = (mem.alloc("out", t, 1), mem.alloc_from("x", t, &[2.5]), mem.alloc("n", I32, 1));
        run(&k, &[Arg::Buffer(o), Arg::Buffer(x), Arg::Buffer(n)], [1, 1, 1], &mut mem);
        let got = mem.read_f64(o)[0];
        let eps = if t == F32 { f32::EPSILON as f64 } else { f64::EPSILON };
        assert!((got - jn[0]).abs() <= 8.0 * eps, "jn(3, 2.5) on {t}: {got}");
    }
}

/// `jn` of a huge order loops that many steps in one element (on the GPU as in libdevice): the interpreter counts
/// the steps against its work budget before running them, and stops at the op with an error instead of running
/// for hours.
#[test]
fn huge_orders_stop_at_the_work_budget() {
    let src = format!(
        "{PRELUDE}@triton.jit\ndef k(Out, X):\n    offs = tl.arange(0, 64)\n    x = tl.load(X + offs)\n    tl.store(Out + offs, libdevice.jn(1 << 30, x))\n"
    );
    let f = elab("test.py", &src, "k", vec![ptr(F32), ptr(F32)]);
    let mut mem = Memory::new();
    let (o, x) = (mem.alloc("out", F32, 64), mem.alloc_from("x", F32, &[0.5; 64]));
    let t0 = std::time::Instant::now();
    let err = tessel_interp::run(&f, &[Arg::Buffer(o), Arg::Buffer(x)], [1, 1, 1], &mut mem).unwrap_err();
    assert!(err.to_string().contains("recurrences over the orders would run about"), "{err}");
    assert!(t0.elapsed().as_secs() < 5, "stopped before running: {:?}", t0.elapsed());
}
