//! Data-movement library functions: `tl.flip` and `tl.sort` (written in the prelude from shape ops), and the ops
//! `tl.gather` and `tl.histogram`, run in the interpreter against references.

mod elab_common;

use elab_common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, ConstValue};
use tessel_tile::ScalarType::{self, *};

const PRELUDE: &str = "import triton\nimport triton.language as tl\n\n";

fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, false)
}

fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

fn b(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

/// Runs `k(Out, X, ...)` (one program) with `x` of type `t` as `X` and an output of `n_out` elements of `t`.
fn run_k(src: &str, t: ScalarType, extra: Vec<ArgSpec>, x: &[f64], n_out: usize) -> (String, Vec<f64>) {
    let src = format!("{PRELUDE}{src}");
    let mut args = vec![ptr(t), ptr(t)];
    args.extend(extra);
    let f = elab("test.py", &src, "k", args);
    let mut mem = Memory::new();
    let out = poisoned(&mut mem, "out", t, n_out);
    let xb = mem.alloc_from("x", t, x);
    run(&f, &[Arg::Buffer(out), Arg::Buffer(xb)], [1, 1, 1], &mut mem);
    (f.to_string(), mem.read_f64(out))
}

const FLIP_2D: &str = r#"
@triton.jit
def k(Out, X, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(Out + offs, tl.flip(x, DIM))
"#;

#[test]
fn flip_reverses_one_axis() {
    let (m, n) = (4usize, 8usize);
    let x: Vec<f64> = (0..m * n).map(|i| i as f64).collect();
    for dim in [0i64, 1, -1] {
        let (ir, out) = run_k(FLIP_2D, F32, vec![c(m as i64), c(n as i64), c(dim)], &x, m * n);
        let want: Vec<f64> = (0..m * n)
            .map(|i| {
                let (r, col) = (i / n, i % n);
                if dim == 0 { ((m - 1 - r) * n + col) as f64 } else { (r * n + n - 1 - col) as f64 }
            })
            .collect();
        assert_eq!(out, want, "flip(x, {dim}):\n{ir}");
    }
    // 1-D, as a method, default dim; and a size-1 axis.
    let src = r#"
@triton.jit
def k(Out, X):
    offs = tl.arange(0, 16)
    x = tl.load(X + offs)
    tl.store(Out + offs, x.flip())
    one = tl.reshape(x, [16, 1])
    tl.store(Out + 16 + offs, tl.reshape(tl.flip(one, 1), [16]))
"#;
    let x: Vec<f64> = (0..16).map(|i| (i * 3) as f64).collect();
    let (_, out) = run_k(src, I32, vec![], &x, 32);
    let mut want: Vec<f64> = x.iter().rev().copied().collect();
    want.extend(&x);
    assert_eq!(out, want);
}

#[test]
fn flip_errors_name_the_problem() {
    let src = format!("{PRELUDE}{FLIP_2D}");
    let msg = elab_error(&src, "k", vec![ptr(F32), ptr(F32), c(4), c(8), c(2)]);
    assert!(msg.contains("flip: dim 2 is out of range for a tensor of rank 2"), "{msg}");
    assert!(msg.contains("tl.flip(x, DIM)"), "points at the call:\n{msg}");
}

const SORT: &str = r#"
@triton.jit
def k(Out, X, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr, DESC: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(Out + offs, tl.sort(x, DIM, descending=DESC))
"#;

fn sorted_ref(x: &[f64], m: usize, n: usize, dim: usize, desc: bool) -> Vec<f64> {
    let mut out = x.to_vec();
    let (count, len, stride, step) = if dim == 1 { (m, n, 1, n) } else { (n, m, n, 1) };
    for k in 0..count {
        let idx: Vec<usize> = (0..len).map(|j| k * step + j * stride).collect();
        let mut v: Vec<f64> = idx.iter().map(|&i| x[i]).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        if desc {
            v.reverse();
        }
        for (i, val) in idx.into_iter().zip(v) {
            out[i] = val;
        }
    }
    out
}

#[test]
fn sort_is_a_bitonic_sort_along_any_axis() {
    let mut rng = Rng::new(7);
    for (m, n) in [(2usize, 16usize), (4, 32), (8, 1), (1, 64)] {
        let x: Vec<f64> = rounded(F32, &rng.normals(m * n));
        for dim in [0usize, 1] {
            for desc in [false, true] {
                let (_, out) = run_k(SORT, F32, vec![c(m as i64), c(n as i64), c(dim as i64), b(desc)], &x, m * n);
                assert_eq!(out, sorted_ref(&x, m, n, dim, desc), "sort {m}x{n} dim {dim} descending {desc}");
            }
        }
    }
    // Integers with duplicates, as a method with the default (last) axis.
    let src = r#"
@triton.jit
def k(Out, X):
    offs = tl.arange(0, 32)
    tl.store(Out + offs, tl.load(X + offs).sort())
"#;
    let x: Vec<f64> = (0..32).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
    let (_, out) = run_k(src, I32, vec![], &x, 32);
    let mut want = x.clone();
    want.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(out, want);
}

#[test]
fn gather_picks_elements_along_an_axis() {
    let src = r#"
@triton.jit
def k(Out, X):
    rows = tl.arange(0, 4)[:, None]
    cols = tl.arange(0, 8)[None, :]
    x = tl.load(X + rows * 8 + cols)
    # Reverse each row with gather along axis 1; pick rows 3, 0 along axis 0 (a [2, 8] index).
    rev = 7 - (rows * 0 + cols)
    tl.store(Out + rows * 8 + cols, tl.gather(x, rev, axis=1))
    idx = tl.where(tl.arange(0, 2)[:, None] == 0, 3, 0) + cols * 0
    tl.store(Out + 32 + tl.arange(0, 2)[:, None] * 8 + cols, x.gather(idx, -2))
"#;
    let x: Vec<f64> = (0..32).map(|i| i as f64).collect();
    let (ir, out) = run_k(src, F32, vec![], &x, 48);
    assert!(ir.contains("gather {axis = 1}") && ir.contains("gather {axis = 0}"), "{ir}");
    let mut want: Vec<f64> = (0..32).map(|i| ((i / 8) * 8 + 7 - i % 8) as f64).collect();
    want.extend((24..32).map(|i| i as f64));
    want.extend((0..8).map(|i| i as f64));
    assert_eq!(out, want);
}

#[test]
fn gather_errors_point_at_the_arguments() {
    let err = |body: &str| {
        let src = format!("{PRELUDE}@triton.jit\ndef k(Out, X):\n    x = tl.load(X + tl.arange(0, 8))\n{body}\n");
        elab_error(&src, "k", vec![ptr(F32), ptr(F32)])
    };
    let msg = err("    y = tl.gather(x, x, 0)");
    assert!(msg.contains("`index` of `tl.gather` must be integers, got tensor<8xf32>"), "{msg}");
    let msg = err("    y = tl.gather(x, tl.arange(0, 4)[:, None], 0)");
    assert!(msg.contains("must be tensors of one rank"), "{msg}");
    let msg = err("    y = tl.gather(x, tl.arange(0, 4), 1)");
    assert!(msg.contains("`axis` 1 is out of range for rank 1"), "{msg}");
}

#[test]
fn histogram_counts_with_and_without_a_mask() {
    let src = r#"
@triton.jit
def k(Out, X):
    offs = tl.arange(0, 16)
    x = tl.load(X + offs)
    tl.store(Out + tl.arange(0, 8), tl.histogram(x, 8))
    tl.store(Out + 8 + tl.arange(0, 4), x.histogram(4, mask=offs < 8))
"#;
    let x: Vec<f64> = [0, 1, 1, 7, 3, 3, 3, 9, 2, 2, 5, 6, -1, 0, 0, 4].iter().map(|&v| v as f64).collect();
    let (_, out) = run_k(src, I32, vec![], &x, 12);
    assert_eq!(out, [3.0, 2.0, 2.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.0, 3.0]);
    let src = format!("{PRELUDE}@triton.jit\ndef k(Out, X):\n    h = tl.histogram(tl.load(X + tl.arange(0, 8)), 6)\n");
    let msg = elab_error(&src, "k", vec![ptr(I32), ptr(I32)]);
    assert!(msg.contains("num_bins must be a power of two, got 6"), "{msg}");
}
