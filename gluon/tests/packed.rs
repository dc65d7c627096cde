//! Blackwell's packed arithmetic (`add2`, `sub2`, `mul2`, `fma2`, `min2`, `max2`): the values of the
//! elementwise operations they stand for (each lane of the packed instructions rounds as the scalar op), with
//! broadcasting of a row vector and a scalar as the attention example uses them, and the refused forms.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_tile::ScalarType::*;

const SRC: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia import blackwell as bw


@gluon.jit
def packed(X, Y, M, Out):
    L: gl.constexpr = gl.BlockedLayout([1, 2], [32, 1], [4, 1], [1, 0])
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, 16, layout=gl.SliceLayout(0, L))
    offs = r[:, None] * 16 + c[None, :]
    x = gl.load(X + offs)
    y = gl.load(Y + offs)
    m = gl.load(M + r)
    gl.store(Out + offs, bw.mul2(x, y))
    gl.store(Out + 2048 + offs, bw.fma2(x, 0.5, -m[:, None]))
    gl.store(Out + 4096 + offs, bw.add2(x, y))
    gl.store(Out + 6144 + offs, bw.sub2(x, y, dtype=gl.float32))
    gl.store(Out + 8192 + offs, bw.min2(x, y))
    gl.store(Out + 10240 + offs, bw.max2(x, y))
"#;

#[test]
fn packed_ops_give_the_elementwise_values() {
    let f = elab(SRC, "packed", vec![ptr(F32), ptr(F32), ptr(F32), ptr(F32)]);
    let text = f.to_string();
    assert!(text.contains("fma"), "fma2 is one rounding: {text}");
    let mut rng = Rng::new(21);
    let (x, y, m) = (rng.vec(2048), rng.vec(2048), rng.vec(128));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = mem.alloc_from("y", F32, &y);
    let bm = mem.alloc_from("m", F32, &m);
    let out = poisoned(&mut mem, "out", F32, 6 * 2048);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by), Arg::Buffer(bm), Arg::Buffer(out)], [1, 1, 1], &mut mem);
    let got = mem.read_f64(out);
    let f32of = |v: f64| v as f32 as f64;
    let (x, y, m): (Vec<f64>, Vec<f64>, Vec<f64>) = (
        x.iter().map(|&v| f32of(v)).collect(),
        y.iter().map(|&v| f32of(v)).collect(),
        m.iter().map(|&v| f32of(v)).collect(),
    );
    for i in 0..2048 {
        let want = [
            f32of(x[i] * y[i]),
            f32of(x[i] * 0.5 - m[i / 16]),
            f32of(x[i] + y[i]),
            f32of(x[i] - y[i]),
            x[i].min(y[i]),
            x[i].max(y[i]),
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(got[k * 2048 + i], *w, "op {k} at {i}");
        }
    }
}

/// The attention example's row-sum reduction: two tensors reduced at once, the combine packing its scalar pairs
/// into a `[2]` tensor every thread holds whole, adding them with `add2` and splitting the sums back.
const COMBINE: &str = r#"
@gluon.jit
def _combine_add2(a, b, c, d):
    parent: gl.constexpr = gl.BlockedLayout([1, 2], [1, 32], [1, gl.num_warps()], [1, 0])
    lanes = gl.arange(0, 2, layout=gl.SliceLayout(0, parent))
    lhs = gl.where(lanes == 0, a, b)
    rhs = gl.where(lanes == 0, c, d)
    return gl.split(bw.add2(lhs, rhs))


@gluon.jit
def row_sums(X, Out):
    L: gl.constexpr = gl.BlockedLayout([1, 16], [32, 1], [4, 1], [1, 0])
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, 16, layout=gl.SliceLayout(0, L))
    x = gl.load(X + r[:, None] * 16 + c[None, :])
    s0, s1 = gl.reduce((x, x * 2.0), axis=1, combine_fn=_combine_add2)
    gl.store(Out + r, s0)
    gl.store(Out + 128 + r, s1)
"#;

#[test]
fn a_combine_packing_scalars_into_pairs_reduces_two_tensors() {
    let src = format!("{}{COMBINE}", &SRC[..SRC.find("@gluon.jit").unwrap()]);
    let f = elab(&src, "row_sums", vec![ptr(F32), ptr(F32)]);
    // The scalar halves of the pair carry no layout, which layout assignment accepts as they are.
    let mut laid_out = f.clone();
    tessel_tile::layout::assign_layouts(&mut laid_out).unwrap_or_else(|e| panic!("{e}\n{f}"));
    let x: Vec<f64> = Rng::new(5).vec(2048).iter().map(|&v| v as f32 as f64).collect();
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let out = poisoned(&mut mem, "out", F32, 256);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(out)], [1, 1, 1], &mut mem);
    let got = mem.read_f64(out);
    for r in 0..128 {
        let sum: f64 = x[r * 16..r * 16 + 16].iter().sum();
        assert!((got[r] - sum).abs() <= 1e-5 * sum.abs().max(1.0), "row {r}: {} vs {sum}", got[r]);
        assert!((got[128 + r] - 2.0 * sum).abs() <= 2e-5 * sum.abs().max(1.0), "row {r}: {}", got[128 + r]);
    }
}

#[test]
fn converting_and_integer_forms_are_refused_at_the_call() {
    let case = |stmt: &str| {
        let src = SRC.replace("    gl.store(Out + offs, bw.mul2(x, y))", stmt);
        elab_error(&src, "packed", vec![ptr(F32), ptr(F32), ptr(F32), ptr(F32)])
    };
    let err = case("    gl.store(Out + offs, bw.mul2(x, y, dtype=gl.float16))");
    assert!(err.contains("`dtype=float16` of `blackwell.mul2` differs from its operands' float32"), "{err}");
    let err = case("    gl.store(Out + offs, bw.add2(r[:, None] + c[None, :], c[None, :]))");
    assert!(err.contains("integer operands (packed FP4 bytes) is not supported"), "{err}");
    let err = case("    gl.store(Out + offs, bw.mul2(1.0, 2.0))");
    assert!(err.contains("needs at least one tensor operand"), "{err}");
}
