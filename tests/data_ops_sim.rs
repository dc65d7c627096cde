//! Codegen of `tl.inline_asm_elementwise`, `tl.gather` and `tl.histogram`, run on the PTX simulator of
//! `ptx_sim`: gather and histogram against the interpreter, inline PTX (which the interpreter
//! cannot run) against the same computation done here; and each kernel assembled by ptxas when it is on hand
//! (`.ci/run` sets TESSEL_REQUIRE_PTXAS).

mod common;
mod sim_common;

use common::{c, int, ptr};
use sim_common::{RunOptions, V};
use tessel::lang::elab::{ArgSpec, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{BF16, F16, F32, I8, I32};
use tessel::tile::{KernelConfig, Target};

fn module(kernel: &str) -> String {
    format!("import triton\nimport triton.language as tl\n\n{kernel}")
}

fn opts() -> RunOptions<'static> {
    RunOptions { file: "test.py", target: Target::Sm90a, num_warps: 4, num_stages: 3, poison: true }
}

/// Compiles `kernel` for `target` and, when ptxas is on hand, assembles it; returns the PTX or the error.
fn ptx_for(source: &str, kernel: &str, spec: &[ArgSpec], num_warps: u32, target: Target) -> Result<String, String> {
    let spec = Specialization::with_config(spec.to_vec(), KernelConfig { num_warps, ..KernelConfig::DEFAULT });
    let ks = tessel::KernelSource { file: "test.py", source, kernel, spec: &spec, module: None };
    match tessel::pipeline::run(&ks, target, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => {
            if tessel::runtime::find_ptxas().is_some() || std::env::var_os("TESSEL_REQUIRE_PTXAS").is_some() {
                tessel::runtime::assemble(&kernel).map_err(|e| format!("ptxas ({}): {e}", target.name()))?;
            }
            Ok(kernel.ptx)
        }
        Ok(_) => Err("not PTX".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Deterministic test values: `n` integers in `lo..hi`.
fn ints(n: usize, lo: i64, hi: i64, seed: u64) -> Vec<f64> {
    let span = (hi - lo) as u64;
    (0..n as u64).map(|i| (lo + ((i * 2654435761 + seed * 97) % span) as i64) as f64).collect()
}

const INLINE_ASM: &str = r#"
@triton.jit
def mad(Out, X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    z = tl.inline_asm_elementwise("mad.lo.s32 $0, $1, 3, $2;", "=r,r,r", [x, y], tl.int32, True, 1)
    tl.store(Out + offs, z)


@triton.jit
def two_results(Out, Out2, X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    a, b = tl.inline_asm_elementwise(
        "add.s32 $0, $2, 1;\n sub.s32 $1, $2, 1;", "=r,=r,r", [x], (tl.int32, tl.int32), True, 1)
    tl.store(Out + offs, a)
    tl.store(Out2 + offs, b)


@triton.jit
def negate_odd_halves(Out, X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    z = tl.inline_asm_elementwise("xor.b32 $0, $1, 0x80000000;", "=r,r", [x], tl.float16, True, 2)
    tl.store(Out + offs, z)


@triton.jit
def bytes_in_words(Out, X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    z = tl.inline_asm_elementwise("and.b32 $0, $1, 0xff00ff;", "=r,r", [x], tl.int8, True, 4)
    tl.store(Out + offs, z)


@triton.jit
def f32_as_bits(Out, X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    z = tl.inline_asm_elementwise("and.b32 $0, $1, 0x7fffffff;", "=r,r", [x], tl.float32, True, 1)
    tl.store(Out + offs, z)
"#;

/// Inline PTX over each thread's registers: one instance per element, two results, and packed operands
/// (two f16 halves in a 32-bit register, the first element low; four i8 bytes, signs kept on unpacking).
#[test]
fn inline_asm_runs_on_the_simulator() {
    let src = module(INLINE_ASM);
    let n = 1024usize;
    let run = |kernel: &str, spec: Vec<ArgSpec>, vals: &[V]| {
        for target in [Target::Sm90a, Target::Sm80] {
            ptx_for(&src, kernel, &spec, 4, target).unwrap_or_else(|e| panic!("{kernel}: {e}"));
        }
        sim_common::sim_only(&src, kernel, spec, &opts(), vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"))
    };
    let (x, y) = (ints(n, -1000, 1000, 1), ints(n, -50, 50, 2));
    let out = run(
        "mad",
        vec![ptr(I32), ptr(I32), ptr(I32), c(n as i64)],
        &[V::Out(I32, n), V::Buf(I32, x.clone()), V::Buf(I32, y.clone())],
    );
    let want: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a * 3.0 + b).collect();
    assert_eq!(out[0], want, "mad.lo.s32 x, 3, y");

    let out = run(
        "two_results",
        vec![ptr(I32), ptr(I32), ptr(I32), c(n as i64)],
        &[V::Out(I32, n), V::Out(I32, n), V::Buf(I32, x.clone())],
    );
    assert_eq!(out[0], x.iter().map(|a| a + 1.0).collect::<Vec<_>>());
    assert_eq!(out[1], x.iter().map(|a| a - 1.0).collect::<Vec<_>>());

    let h: Vec<f64> = (0..n).map(|i| (i as f64 - 500.0) / 8.0).collect();
    let out =
        run("negate_odd_halves", vec![ptr(F16), ptr(F16), c(n as i64)], &[V::Out(F16, n), V::Buf(F16, h.clone())]);
    let want: Vec<f64> = h.iter().enumerate().map(|(i, &v)| if i % 2 == 1 { -v } else { v }).collect();
    assert_eq!(out[0], want, "the second element of each pair sits in the high half");

    let b = ints(n, -128, 128, 3);
    let out = run("bytes_in_words", vec![ptr(I8), ptr(I8), c(n as i64)], &[V::Out(I8, n), V::Buf(I8, b.clone())]);
    let want: Vec<f64> = b.iter().enumerate().map(|(i, &v)| if i % 2 == 1 { 0.0 } else { v }).collect();
    assert_eq!(out[0], want, "bytes 0 and 2 of each word kept, sign-extended");

    let f: Vec<f64> = (0..n).map(|i| (i as f64 - 512.0) * 0.75).collect();
    let out = run("f32_as_bits", vec![ptr(F32), ptr(F32), c(n as i64)], &[V::Out(F32, n), V::Buf(F32, f.clone())]);
    assert_eq!(out[0], f.iter().map(|v| v.abs()).collect::<Vec<_>>(), "an f32 passed as `r` keeps its bits");
}

/// Constraints that do not match the operands, and a pack larger than a thread's share of the tensor, are
/// errors naming the cause.
#[test]
fn inline_asm_errors() {
    let kernel = |asm_args: &str| {
        module(&format!(
            "@triton.jit\ndef k(Out, X, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n    x = tl.load(X + \
             offs)\n    tl.store(Out + offs, tl.inline_asm_elementwise({asm_args}))\n"
        ))
    };
    let spec = [ptr(I32), ptr(I32), c(256)];
    let cases = [
        (r#""mov.b32 $0, $1;", "=r,r,r", [x], tl.int32, True, 1"#, "name 1 output(s) and 2 input(s)"),
        (r#""mov.b32 $0, $2;", "=r,r", [x], tl.int32, True, 1"#, "`$2` names no operand"),
        (r#""mov.b32 $0, $1;", "=q,r", [x], tl.int32, True, 1"#, "constraint `q` is not supported"),
        (r#""mov.b32 $0, $1;", "=r,r,r,r", [x], tl.int32, True, 4"#, "not a multiple of the pack"),
    ];
    for (args, want) in cases {
        let e = ptx_for(&kernel(args), "k", &spec, 4, Target::Sm90a).expect_err(args);
        assert!(e.contains(want), "{args}: {e}");
        assert!(e.contains("inline_asm"), "{args}: the error names the op: {e}");
    }
}

const GATHER_HISTOGRAM: &str = r#"
@triton.jit
def gather_rows(Out, X, I, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    offs = tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :]
    i = tl.load(I + offs)
    tl.store(Out + offs, tl.gather(x, i, 0))


@triton.jit
def gather_cols(Out, X, I, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    i = tl.load(I + offs)
    tl.store(Out + offs, tl.gather(x, i, 1))


@triton.jit
def hist(Out, X, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    h = tl.histogram(x, BINS, mask=offs < n)
    tl.store(Out + tl.arange(0, BINS), h)
    tl.store(Out + BINS + tl.arange(0, BINS), tl.histogram(x, BINS))
"#;

/// `gather` along either axis (row indices from a smaller source, a permutation within rows) and `histogram`
/// (values out of range, a mask, bins fewer and more than threads) on the simulator against the interpreter,
/// at several warp counts; assembled by ptxas for sm_90a and sm_80.
#[test]
fn gather_and_histogram_match_the_interpreter() {
    let src = module(GATHER_HISTOGRAM);
    for warps in [1u32, 4] {
        let o = RunOptions { num_warps: warps, ..opts() };
        let both = |kernel: &str, spec: Vec<ArgSpec>, vals: &[V]| {
            for target in [Target::Sm90a, Target::Sm80] {
                ptx_for(&src, kernel, &spec, warps, target).unwrap_or_else(|e| panic!("{kernel}: {e}"));
            }
            let outs = sim_common::run_on(&src, kernel, spec, &o, vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
            for (sim, interp) in &outs {
                assert_eq!(sim, interp, "{kernel}, {warps} warps: simulated PTX vs interpreter");
            }
            outs.into_iter().map(|(s, _)| s).collect::<Vec<_>>()
        };
        let (m, n, k) = (8usize, 32usize, 16usize);
        let x: Vec<f64> = (0..m * n).map(|i| i as f64 * 0.5 - 3.0).collect();
        let idx = ints(k * n, 0, m as i64, 4);
        let out = both(
            "gather_rows",
            vec![ptr(F32), ptr(F32), ptr(I32), c(m as i64), c(n as i64), c(k as i64)],
            &[V::Out(F32, k * n), V::Buf(F32, x.clone()), V::Buf(I32, idx.clone())],
        );
        for (e, &v) in out[0].iter().enumerate() {
            assert_eq!(v, x[idx[e] as usize * n + e % n], "gather_rows element {e}");
        }
        let perm: Vec<f64> = (0..m * n).map(|e| ((e % n) * 7 + e / n) as f64 % n as f64).collect();
        both(
            "gather_cols",
            vec![ptr(F32), ptr(F32), ptr(I32), c(m as i64), c(n as i64)],
            &[V::Out(F32, m * n), V::Buf(F32, x.clone()), V::Buf(I32, perm)],
        );
        for (block, bins) in [(256usize, 16usize), (64, 256)] {
            let vals = ints(block, -3, bins as i64 + 5, 7);
            let n_on = block as i64 - 9;
            let out = both(
                "hist",
                vec![ptr(I32), ptr(I32), int(false), c(block as i64), c(bins as i64)],
                &[V::Out(I32, 2 * bins), V::Buf(I32, vals.clone()), V::Int(n_on)],
            );
            for b in 0..bins {
                let count = |upto: usize| vals[..upto].iter().filter(|&&v| v == b as f64).count() as f64;
                assert_eq!(out[0][b], count(n_on as usize), "masked bin {b}");
                assert_eq!(out[0][bins + b], count(block), "bin {b}");
            }
        }
    }
}

const HALF_ATOMICS: &str = r#"
@triton.jit
def add_into(Acc, X, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.atomic_add(Acc + offs % 8, x, mask=offs < n)
"#;

/// `tl.atomic_add` on float16 and bfloat16 (Liger's fused MoE backward adds bfloat16 partial sums): several
/// programs add into 8 counters; the values are small multiples of 1/4, so every order of the adds is exact and
/// the simulated PTX must equal the interpreter and the sum. bfloat16 needs sm_90's `atom.add.noftz.bf16`.
#[test]
fn half_precision_atomic_add_matches_the_interpreter() {
    let src = module(HALF_ATOMICS);
    let n = 300usize;
    let x: Vec<f64> = ints(n, -6, 7, 3).into_iter().map(|v| v * 0.25).collect();
    let spec = |t| vec![ptr(t), ptr(t), int(false), c(64)];
    for t in [F16, BF16] {
        ptx_for(&src, "add_into", &spec(t), 4, Target::Sm90a).unwrap_or_else(|e| panic!("{t}: {e}"));
        let o = RunOptions { poison: false, ..opts() };
        // Unpoisoned outputs start as -7.0 on both sides.
        let vals = [V::Out(t, 8), V::Buf(t, x.clone()), V::Int(n as i64)];
        let outs =
            sim_common::run_on(&src, "add_into", spec(t), &o, &vals, [5, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
        let (sim, interp) = &outs[0];
        assert_eq!(sim, interp, "{t}: simulated PTX vs interpreter");
        for (k, &got) in interp.iter().enumerate() {
            let want: f64 = -7.0 + x.iter().skip(k).step_by(8).sum::<f64>();
            assert_eq!(got, want, "{t}: counter {k}");
        }
    }
    let err = ptx_for(&src, "add_into", &spec(BF16), 4, Target::Sm80).unwrap_err();
    assert!(err.contains("bfloat16 needs sm_90"), "{err}");
    ptx_for(&src, "add_into", &spec(F16), 4, Target::Sm80).unwrap_or_else(|e| panic!("f16 on sm_80: {e}"));
}
