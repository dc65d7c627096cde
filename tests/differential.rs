//! Differential testing (Csmith-style): random well-typed kernels (2-D tiles of random power-of-two shapes,
//! elementwise math, broadcasts of row/column reductions, scans, `where`, f16/bf16 round trips, `flip`/`sort`,
//! runtime loops with `break`/`continue`, masked loads and stores, several programs and warp counts) are
//! compiled to PTX and run on the PTX simulator and in the interpreter, and the outputs compared.
//!
//! CI runs a fixed small budget (`DEFAULT_PROGRAMS`). A longer campaign:
//! `TESSEL_DIFF_PROGRAMS=10000 TESSEL_DIFF_SEED=1 cargo test --release --test differential -- --nocapture`.
//! A failing program is printed with its seed; `TESSEL_DIFF_SEED=<seed> TESSEL_DIFF_PROGRAMS=1` replays it, and
//! `TESSEL_DIFF_SOURCE=<file.py>` replays that seed's shapes and data with an edited program (to shrink it).

mod common;
mod sim_common;

use common::{c, int, ptr};
use sim_common::{V, run_both};
use tessel::tile::ScalarType::F32;

const DEFAULT_PROGRAMS: u64 = 24;

use tessel::tile::testing::Rng;

/// Expressions over `[M, N]` f32 tiles, kept bounded (no division, exp or log). Inputs are multiples of 1/64 and
/// constants of 1/8, so that sums are mostly exact whatever the order of additions (the one thing the two sides
/// may do differently): a sum at an integer boundary could otherwise truncate or compare either way.
fn expr(r: &mut Rng, depth: u32) -> String {
    if depth == 0 || r.below(4) == 0 {
        return match r.below(4) {
            0 => "x".into(),
            1 => "y".into(),
            // Constants as tiles, so that every expression is a tile.
            2 => format!("(x * 0.0 + {})", (r.uniform() * 8.0).round() / 8.0),
            _ => "((rows + cols).to(tl.float32) * 0.125)".into(),
        };
    }
    let a = expr(r, depth - 1);
    match r.below(14) {
        0 => format!("({a} + {})", expr(r, depth - 1)),
        1 => format!("({a} - {})", expr(r, depth - 1)),
        2 => format!("({a} * {})", expr(r, depth - 1)),
        3 => format!("(-{a})"),
        4 => format!("tl.abs({a})"),
        5 => format!("tl.maximum({a}, {})", expr(r, depth - 1)),
        6 => format!("tl.minimum({a}, {})", expr(r, depth - 1)),
        7 => format!("tl.where({a} > {}, {a}, {})", expr(r, depth - 1), expr(r, depth - 1)),
        8 => {
            let (f, axis) = (r.pick(&["sum", "max", "min"]), r.below(2));
            let idx = if axis == 0 { "[None, :]" } else { "[:, None]" };
            // `+ 0.0` turns -0.0 into +0.0: lanes holding copies of one result may otherwise reduce zeros of
            // both signs in different orders and get different signs (max(-0, +0) may return either).
            format!("(tl.{f}({a} + 0.0, axis={axis}){idx} + 0.0 * x)")
        }
        9 => format!("tl.cumsum({a}, axis={})", r.below(2)),
        10 => format!("{a}.to({}).to(tl.float32)", r.pick(&["tl.float16", "tl.bfloat16"])),
        11 => format!("tl.flip({a}, {})", r.below(2)),
        12 => format!("tl.sort({a}, {}, descending={})", r.below(2), r.pick(&["False", "True"])),
        // On inputs only: after a reduction or scan, a value at an integer boundary may truncate either way
        // depending on the order of additions.
        _ => format!("(({} * 8.0).to(tl.int32) & 7).to(tl.float32)", r.pick(&["x", "y"])),
    }
}

/// A whole kernel: loads of `x` and `y` (masked by `n`), a runtime loop accumulating an expression (with a
/// `continue` or a `break` on a runtime condition, sometimes), and a masked store of another expression.
fn program(r: &mut Rng) -> String {
    let body = expr(r, 3);
    let loop_expr = expr(r, 2);
    let jump = match r.below(3) {
        0 => "",
        1 => "        if tl.sum(acc, axis=None) > 4.0 * (i + 1):\n            continue\n",
        _ => "        if tl.max(acc, axis=None) > 2.0:\n            break\n",
    };
    format!(
        r#"import triton
import triton.language as tl

@triton.jit
def k(Out, X, Y, n, iters, M: tl.constexpr, N: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    offs = pid * M * N + rows * N + cols
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.5)
    y = tl.load(Y + offs, mask=mask, other=-0.25)
    acc = tl.zeros([M, N], dtype=tl.float32)
    for i in range(iters):
{jump}        acc = acc * 0.5 + {loop_expr}
    out = {body} + acc
    tl.store(Out + offs, out, mask=mask)
"#
    )
}

fn rel_err(got: &[f64], want: &[f64]) -> Result<f64, String> {
    let (mut num, mut den) = (0.0, 0.0);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if g.is_nan() != w.is_nan() {
            return Err(format!("element {i}: simulated {g}, interpreter {w}"));
        }
        if !g.is_nan() {
            num += (g - w) * (g - w);
            den += w * w;
        }
    }
    Ok((num / den.max(1e-30)).sqrt())
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Runs the program of `seed`; `Err` describes a mismatch or a failure to compile or run.
fn case(seed: u64) -> Result<(), String> {
    let mut r = Rng::new(seed);
    let mut source = program(&mut r);
    // Hand-shrinking a failure: the same seed (shapes, data) with an edited program.
    if let Ok(path) = std::env::var("TESSEL_DIFF_SOURCE") {
        source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    let (m, n) = (1u32 << r.below(5), 1u32 << r.below(6));
    let warps = *r.pick(&[1u32, 2, 4]);
    let programs = 1 + r.below(3) as u32;
    let total = (m * n * programs) as usize;
    let valid = total - r.below(total as u64 / 2 + 1) as usize;
    let iters = r.below(4) as i64;
    let data = |r: &mut Rng| (0..total).map(|_| (r.uniform() * 64.0).round() / 64.0).collect::<Vec<_>>();
    let (x, y) = (data(&mut r), data(&mut r));
    let spec = vec![ptr(F32), ptr(F32), ptr(F32), int(false), int(false), c(m as i64), c(n as i64)];
    let vals = [V::Out(F32, total), V::Buf(F32, x), V::Buf(F32, y), V::Int(valid as i64), V::Int(iters)];
    let explain = |what: String| format!("seed {seed} ({m}x{n}, {warps} warps, {programs} programs): {what}\n{source}");
    let outs = run_both(&source, "k", spec, warps, &vals, [programs, 1, 1]).map_err(explain)?;
    for (got, want) in outs {
        let e = rel_err(&got, &want).map_err(explain)?;
        // Reductions and scans may add in another order; everything else is exact.
        if e > 1e-5 {
            return Err(explain(format!("relative error {e:e}")));
        }
    }
    Ok(())
}

#[test]
fn random_programs_agree_between_the_simulator_and_the_interpreter() {
    let (first, count) = (env("TESSEL_DIFF_SEED", 1), env("TESSEL_DIFF_PROGRAMS", DEFAULT_PROGRAMS));
    let mut failures = Vec::new();
    for seed in first..first + count {
        if let Err(e) = case(seed) {
            eprintln!("{e}");
            failures.push(seed);
        }
    }
    eprintln!("differential: {count} programs from seed {first}, {} mismatches", failures.len());
    assert!(failures.is_empty(), "mismatching seeds: {failures:?}");
}
