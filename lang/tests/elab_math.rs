//! Math semantics that the frontend decides: `-x` on floats (Triton's `0 - x`), and the `libdevice` functions.

mod elab_common;

use elab_common::*;
use tessel_lang::elab::ArgSpec;
use tessel_tile::ScalarType::{self, *};
use tessel_tile::interp::Arg;
use tessel_tile::interp::memory::Memory;

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
