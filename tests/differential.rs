//! Differential testing (Csmith-style): random well-typed kernels (2-D tiles of random power-of-two shapes,
//! elementwise math, broadcasts of row/column reductions, scans, `where`, f16/bf16 round trips, `flip`/`sort`,
//! dots against a small constant tile, runtime loops with `break`/`continue`, masked loads and stores, integer
//! atomics that several programs contend on, several programs and warp counts) are compiled to PTX and run on
//! the PTX simulator and in the interpreter, and the outputs compared.
//!
//! CI runs a fixed small budget (`DEFAULT_PROGRAMS`). A longer campaign:
//! `TESSEL_DIFF_PROGRAMS=10000 TESSEL_DIFF_SEED=1 cargo test --release --test differential -- --nocapture`.
//! A failing program is printed with its seed; `TESSEL_DIFF_SEED=<seed> TESSEL_DIFF_PROGRAMS=1` replays it, and
//! `TESSEL_DIFF_SOURCE=<file.py>` replays that seed's shapes and data with an edited program (to shrink it).
//!
//! On a GPU: `TESSEL_DIFF_EXPORT=<dir>` (with the two variables above) writes each program, its inputs as
//! `.npy` files and the `tessel run --check` command that runs it on the GPU and compares it with the
//! interpreter, plus `<dir>/run.sh`, which runs them all and counts mismatches (see [`export`]).

mod common;
mod sim_common;

use common::{c, int, ptr};
use sim_common::{V, run_both};
use tessel::interp::compare::{Failure, Rules, compare_values};
use tessel::tile::ScalarType::{F32, I32};

const DEFAULT_PROGRAMS: u64 = 24;

use tessel_math::testing::Rng;

/// Expressions over `[M, N]` f32 tiles, kept bounded (no division, exp or log). Inputs are multiples of 1/64 and
/// constants of 1/8, so that sums are mostly exact whatever the order of additions (the one thing the two sides
/// may do differently): a sum at an integer boundary could otherwise truncate or compare either way.
fn expr(r: &mut Rng, depth: u32, dot: bool) -> String {
    if depth == 0 || r.below(4) == 0 {
        return match r.below(4) {
            0 => "x".into(),
            1 => "y".into(),
            // Constants as tiles, so that every expression is a tile.
            2 => format!("(x * 0.0 + {})", (r.uniform() * 8.0).round() / 8.0),
            _ => "((rows + cols).to(tl.float32) * 0.125)".into(),
        };
    }
    let a = expr(r, depth - 1, dot);
    let e = |r: &mut Rng| expr(r, depth - 1, dot);
    match r.below(if dot { 17 } else { 14 }) {
        0 => format!("({a} + {})", e(r)),
        1 => format!("({a} - {})", e(r)),
        2 => format!("({a} * {})", e(r)),
        3 => format!("(-{a})"),
        4 => format!("tl.abs({a})"),
        5 => format!("tl.maximum({a}, {})", e(r)),
        6 => format!("tl.minimum({a}, {})", e(r)),
        7 => format!("tl.where({a} > {}, {a}, {})", e(r), e(r)),
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
        13 => format!("(({} * 8.0).to(tl.int32) & 7).to(tl.float32)", r.pick(&["x", "y"])),
        // [M, N] @ [N, N]: a tile of 0, 1/4 and 1/2 (exact in tf32, as the inputs are), on the tensor cores.
        _ => format!(
            "tl.dot({a}, ((tl.arange(0, N)[:, None] * {} + tl.arange(0, N)[None, :]) % 3).to(tl.float32) * 0.25)",
            1 + r.below(3)
        ),
    }
}

/// A whole kernel: loads of `x` and `y` (masked by `n`), a runtime loop accumulating an expression (with a
/// `continue` or a `break` on a runtime condition, sometimes), a masked store of another expression, and
/// sometimes integer atomics into 8 counters every program shares (exact in any order). `dot`: the tiles are
/// large enough for `tl.dot` (16 or more each way).
fn program(r: &mut Rng, dot: bool) -> String {
    let body = expr(r, 3, dot);
    let loop_expr = expr(r, 2, dot);
    let jump = match r.below(3) {
        0 => "",
        1 => "        if tl.sum(acc, axis=None) > 4.0 * (i + 1):\n            continue\n",
        _ => "        if tl.max(acc, axis=None) > 2.0:\n            break\n",
    };
    // Of the inputs (multiples of 1/64), not of `out`: a sum that came out in another order could truncate to
    // another integer.
    let atomic = match r.below(3) {
        0 => String::new(),
        k => format!(
            "    tl.atomic_{}(Cnt + (offs % 8), ({} * 64.0).to(tl.int32), mask=mask)\n",
            if k == 1 { "add" } else { "max" },
            r.pick(&["x", "y"])
        ),
    };
    format!(
        r#"import triton
import triton.language as tl

@triton.jit
def k(Out, X, Y, n, iters, Cnt, M: tl.constexpr, N: tl.constexpr):
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
{atomic}"#
    )
}

/// One generated program and its launch: tile shape, warps, programs, inputs, the valid length, iterations.
struct Generated {
    source: String,
    m: u32,
    n: u32,
    warps: u32,
    programs: u32,
    x: Vec<f64>,
    y: Vec<f64>,
    valid: usize,
    iters: i64,
}

fn generate(seed: u64) -> Generated {
    let mut r = Rng::new(seed);
    let (m, n) = (1u32 << r.below(6), 1u32 << r.below(6));
    let mut source = program(&mut r, m >= 16 && n >= 16);
    // Hand-shrinking a failure: the same seed (shapes, data) with an edited program.
    if let Ok(path) = std::env::var("TESSEL_DIFF_SOURCE") {
        source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    let warps = *r.pick(&[1u32, 2, 4]);
    let programs = 1 + r.below(3) as u32;
    let total = (m * n * programs) as usize;
    let valid = total - r.below(total as u64 / 2 + 1) as usize;
    let iters = r.below(4) as i64;
    let data = |r: &mut Rng| (0..total).map(|_| (r.uniform() * 64.0).round() / 64.0).collect::<Vec<_>>();
    let (x, y) = (data(&mut r), data(&mut r));
    Generated { source, m, n, warps, programs, x, y, valid, iters }
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Runs the program of `seed`; `Err` describes a mismatch or a failure to compile or run.
fn case(seed: u64) -> Result<(), String> {
    let g = generate(seed);
    let Generated { m, n, warps, programs, .. } = g;
    let source = &g.source;
    let spec = vec![ptr(F32), ptr(F32), ptr(F32), int(false), int(false), ptr(I32), c(m as i64), c(n as i64)];
    let vals = [
        V::Out(F32, g.x.len()),
        V::Buf(F32, g.x.clone()),
        V::Buf(F32, g.y.clone()),
        V::Int(g.valid as i64),
        V::Int(g.iters),
        V::Out(I32, 8),
    ];
    let explain = |what: String| format!("seed {seed} ({m}x{n}, {warps} warps, {programs} programs): {what}\n{source}");
    let outs = run_both(source, "k", spec, warps, &vals, [programs, 1, 1]).map_err(explain)?;
    for (got, want) in outs {
        // The rules `tessel run --check` applies in the GPU campaign (see `export`): NaN on one side fails, every
        // other element is held to the bound. Reductions and scans may add in another order; everything else is
        // exact.
        match compare_values(&want, &got, false).check(1e-5, Rules::TOLERANCE_ONLY) {
            Ok(()) => {}
            Err(Failure::NanOnOneSide(e)) => {
                return Err(explain(format!(
                    "element {}: simulated {}, interpreter {}",
                    e.index, e.actual, e.expected
                )));
            }
            Err(Failure::AboveTolerance { rel_err, .. }) => return Err(explain(format!("relative error {rel_err:e}"))),
            Err(other) => return Err(explain(other.to_string())),
        }
    }
    Ok(())
}

#[test]
fn random_programs_agree_between_the_simulator_and_the_interpreter() {
    let (first, count) = (env("TESSEL_DIFF_SEED", 1), env("TESSEL_DIFF_PROGRAMS", DEFAULT_PROGRAMS));
    if let Ok(dir) = std::env::var("TESSEL_DIFF_EXPORT") {
        export(std::path::Path::new(&dir), first, count).unwrap_or_else(|e| panic!("exporting to {dir}: {e}"));
        return;
    }
    let mut failures = Vec::new();
    let (mut dots, mut atomics) = (0, 0);
    for seed in first..first + count {
        let source = generate(seed).source;
        dots += source.contains("tl.dot(") as u32;
        atomics += source.contains("tl.atomic_") as u32;
        if let Err(e) = case(seed) {
            eprintln!("{e}");
            failures.push(seed);
        }
    }
    eprintln!(
        "differential: {count} programs from seed {first} ({dots} with dots, {atomics} with atomics), {} mismatches",
        failures.len()
    );
    assert!(failures.is_empty(), "mismatching seeds: {failures:?}");
}

/// Writes programs `first..first + count` for a GPU campaign: `<dir>/<seed>/k.py`, `x.npy`, `y.npy` and `args`
/// (the `tessel run` arguments that launch it with `--check`: GPU and interpreter on the same inputs, every
/// output compared), and `<dir>/run.sh`. The script runs every program with `$TESSEL` (default `tessel`), counts
/// as a mismatch a failed run, a kernel that did not run on the GPU, a NaN on one side only, or a relative error
/// above 1e-5 (the simulator comparison's bound: reductions and dots may add in another order), prints each
/// mismatch's seed and output and a summary, and exits non-zero on any mismatch.
fn export(dir: &std::path::Path, first: u64, count: u64) -> std::io::Result<()> {
    use tessel::npy::{Array, write};
    std::fs::create_dir_all(dir)?;
    let npy = |v: &[f64]| {
        let data = v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
        write(&Array { elem: F32, shape: vec![v.len()], data })
    };
    for seed in first..first + count {
        let g = generate(seed);
        let d = dir.join(seed.to_string());
        std::fs::create_dir_all(&d)?;
        std::fs::write(d.join("k.py"), &g.source)?;
        std::fs::write(d.join("x.npy"), npy(&g.x))?;
        std::fs::write(d.join("y.npy"), npy(&g.y))?;
        let args = format!(
            "k.py::k --signature *fp32,*fp32,*fp32,i32,i32,*i32 --const M={} --const N={} --num-warps {} --grid {} \
             --arg Out=fill:nan:{} --arg X=x.npy --arg Y=y.npy --arg n={} --arg iters={} --arg Cnt=fill:-7:8 \
             --check --show 0\n",
            g.m,
            g.n,
            g.warps,
            g.programs,
            g.x.len(),
            g.valid,
            g.iters
        );
        std::fs::write(d.join("args"), args)?;
    }
    let script = format!(
        r#"#!/usr/bin/env bash
# Differential campaign on the GPU: programs {first}..{last} of tests/differential.rs, each run by `tessel run
# --check` (the GPU, then the interpreter on the same inputs, every output compared). Written by
# TESSEL_DIFF_EXPORT=<dir> TESSEL_DIFF_SEED={first} TESSEL_DIFF_PROGRAMS={count} cargo test --release --test differential
set -u
T=${{TESSEL:-tessel}}
cd "$(dirname "$0")"
ran=0; bad=0
for d in $(ls -d [0-9]* | sort -n); do
  ran=$((ran + 1))
  log=$(cd "$d" && $T run $(cat args) 2>&1); rc=$?
  why=""
  if [[ $rc -ne 0 ]]; then why="exit status $rc"
  elif ! grep -q "on the GPU" <<<"$log"; then why="did not run on the GPU"
  elif grep -q "MISMATCH" <<<"$log"; then why="NaN on one side only"
  else
    why=$(grep -E '^check ' <<<"$log" | awk '{{ for (i = 1; i <= NF; i++) if ($i == "=" && $(i + 1) + 0 > 1e-5) print "relative error " $(i + 1) }}')
  fi
  if [[ -n "$why" ]]; then
    bad=$((bad + 1)); echo "== seed $d: $why"; echo "$log" | tail -20
  fi
done
echo "differential on the GPU: $ran programs, $bad mismatches"
[[ $bad -eq 0 ]]
"#,
        last = first + count - 1
    );
    let path = dir.join("run.sh");
    std::fs::write(&path, script)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}
