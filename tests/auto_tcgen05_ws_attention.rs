//! Automatic warp specialization of attention's forward loop on sm_100a (`sched/src/ws_mma.rs`, chained MMAs):
//! a producer warp issues K's and V's TMA copies; the default partition waits for the slot, issues S = Q K^T and
//! waits for it, runs the softmax, stages P and issues O += P V, which commits to the slot's `empty` barrier and
//! is waited for there (its completion releases the slot). Causal attention's second loop (the diagonal) runs
//! unsplit after the join. Checked on the PTX simulator against the interpreter (within 1e-3: the reductions and
//! `ex2` run in another order), the interpreter against a float64 reference, inputs fresh random and outputs
//! poisoned; ptxas (with the tutorial's `maxnreg` 80 and 168); broken variants refused by name.

mod common;
mod sim_common;

use std::path::Path;

use common::{assemble, c, int};
use sim_common::{RunOptions, SimAndInterp, V, run_on, simulate_broken, skip_wait};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{F16, F32};
use tessel::tile::{KernelConfig, Target};

fn example() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flash_attention.py")).unwrap()
}

fn cb(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

fn desc(rows: u32, d: u32) -> ArgSpec {
    ArgSpec::TensorDesc { elem: F16, block_shape: vec![rows, d], padding_nan: false, layout: None }
}

fn random(n: usize, seed: u64) -> Vec<f64> {
    tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(seed), n, F16)
}

/// The attention blocks: 128 rows of Q, `bn` of K and V per step, at head dim `d`.
#[derive(Clone, Copy, Debug)]
struct Shape {
    heads: usize,
    n_ctx: usize,
    d: u32,
    bm: u32,
    bn: u32,
}

/// `examples/flash_attention.py::_attn_fwd_tma`'s specialization with WARP_SPECIALIZE (`ws`).
fn example_spec(s: Shape, causal: bool, ws: bool) -> Vec<ArgSpec> {
    let mut spec = vec![ArgSpec::Float(F32), ArgSpec::Pointer(F32, true), c(1), int(false)];
    spec.extend([desc(s.bm, s.d), desc(s.bn, s.d), desc(s.bn, s.d), desc(s.bm, s.d), int(false)]);
    spec.extend([c(s.d as i64), c(s.bm as i64), c(s.bn as i64), c(if causal { 3 } else { 1 }), cb(ws)]);
    spec
}

/// Tutorial 06's `_attn_fwd` at its Blackwell configuration (host descriptors, FP8_OUTPUT and IS_HOPPER false)
/// with `warp_specialize`.
fn tutorial_spec(s: Shape, causal: bool, ws: bool) -> Vec<ArgSpec> {
    let mut spec = vec![ArgSpec::Float(F32), ArgSpec::Pointer(F32, true), c(1), int(false)];
    spec.extend([desc(s.bm, s.d), desc(s.bn, s.d), desc(s.bn, s.d), desc(s.bm, s.d), int(true)]);
    spec.extend([c(s.d as i64), c(s.bm as i64), c(s.bn as i64), cb(false), c(if causal { 3 } else { 1 })]);
    spec.extend([cb(ws), cb(false)]);
    spec
}

const SM_SCALE: f32 = 0.5;

/// The kernels' arguments (sm_scale, M, H, Q, K, V, O, N_CTX; Z = 1 is a constant), Q, K and V random from
/// `seed` on, and the float64 reference: M (the rows' log2-sum-exp2 of the scaled scores) and O.
fn inputs(s: Shape, causal: bool, seed: u64) -> (Vec<V>, [Vec<f64>; 2]) {
    let (y, d) = (s.heads * s.n_ctx, s.d as usize);
    let (q, k, v) = (random(y * d, seed), random(y * d, seed + 1), random(y * d, seed + 2));
    let (mut m, mut o) = (vec![0.0; y], vec![0.0; y * d]);
    let scale = SM_SCALE as f64 * std::f64::consts::LOG2_E;
    for h in 0..s.heads {
        for i in 0..s.n_ctx {
            let row = h * s.n_ctx + i;
            let keys = if causal { i + 1 } else { s.n_ctx };
            let t: Vec<f64> = (0..keys)
                .map(|j| (0..d).map(|x| q[row * d + x] * k[(h * s.n_ctx + j) * d + x]).sum::<f64>() * scale)
                .collect();
            let max = t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = t.iter().map(|x| (x - max).exp2()).collect();
            let l: f64 = p.iter().sum();
            m[row] = max + l.log2();
            for x in 0..d {
                o[row * d + x] = (0..keys).map(|j| p[j] * v[(h * s.n_ctx + j) * d + x]).sum::<f64>() / l;
            }
        }
    }
    let shape = vec![y as u32, s.d];
    let vals = vec![
        V::F32(SM_SCALE),
        V::Out(F32, y),
        V::Int(s.heads as i64),
        V::Desc(F16, Some(q), shape.clone()),
        V::Desc(F16, Some(k), shape.clone()),
        V::Desc(F16, Some(v), shape.clone()),
        V::Desc(F16, None, shape),
        V::Int(s.n_ctx as i64),
    ];
    (vals, [m, o])
}

fn grid(s: Shape) -> [u32; 3] {
    [(s.n_ctx as u32).div_ceil(s.bm), s.heads as u32, 1]
}

fn opts(file: &str, warps: u32, stages: u32) -> RunOptions<'_> {
    RunOptions { file, target: Target::Sm100a, num_warps: warps, num_stages: stages, poison: true }
}

/// The outputs (M, O) written everywhere; the simulator within `1e-3` of the interpreter (root mean square
/// relative to the output); the interpreter within fp16 rounding of the float64 reference (P is rounded to fp16
/// before P V, O is stored as fp16).
fn check(what: &str, outs: Result<Vec<SimAndInterp>, String>, want: &[Vec<f64>; 2]) {
    let outs = outs.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(outs.len(), 2, "{what}: M and O");
    for (i, ((sim, interp), want)) in outs.iter().zip(want).enumerate() {
        let name = ["M", "O"][i];
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: {name} has elements the interpreter left unwritten");
        assert!(sim.iter().all(|x| x.is_finite()), "{what}: {name} has elements the simulated PTX left unwritten");
        let num: f64 = sim.iter().zip(interp).map(|(p, q)| (p - q) * (p - q)).sum();
        let den: f64 = interp.iter().map(|q| q * q).sum();
        let err = (num / den).sqrt();
        assert!(err < 1e-3, "{what}: {name}: simulated PTX against the interpreter {err}");
        for (j, (&got, &w)) in interp.iter().zip(want).enumerate() {
            assert!((got - w).abs() <= 4e-3 + 4e-3 * w.abs(), "{what}: {name}[{j}] = {got}, float64 {w}");
        }
    }
}

/// The schedule's text (`--emit sched`) of `kernel` of `src`.
fn compile(file: &str, src: &str, kernel: &str, spec: Vec<ArgSpec>, config: KernelConfig, stage: Stage) -> Output {
    let sp = Specialization::with_config(spec, config);
    let ks = tessel::KernelSource { file, source: src, kernel, spec: &sp, module: None };
    tessel::pipeline::run(&ks, Target::Sm100a, stage, None, &mut Default::default())
        .unwrap_or_else(|e| panic!("{kernel}: {e}"))
}

fn sched(file: &str, src: &str, kernel: &str, spec: Vec<ArgSpec>, warps: u32) -> String {
    let config = KernelConfig { num_warps: warps, num_stages: 3, ..KernelConfig::DEFAULT };
    match compile(file, src, kernel, spec, config, Stage::Sched) {
        Output::Sched { schedule, .. } => schedule,
        _ => unreachable!("the pipeline stops at the stage asked for"),
    }
}

fn ptx(file: &str, src: &str, kernel: &str, spec: Vec<ArgSpec>, maxnreg: Option<u32>) -> String {
    let config = KernelConfig { num_warps: 4, num_stages: 3, maxnreg, ..KernelConfig::DEFAULT };
    match compile(file, src, kernel, spec, config, Stage::Ptx) {
        Output::Ptx { kernel, .. } => kernel.ptx,
        _ => unreachable!("the pipeline stops at the stage asked for"),
    }
}

const SPLIT: &str = "warp-specialized: a producer warp issues the copies";

/// The example's split loop: non-causal (one loop of four K steps, wrapping the two-slot ring twice) and causal
/// (the off-band loop split, of no, two and four steps by program, then the diagonal loop after the join, in one
/// partition), two heads, fresh inputs per case.
#[test]
fn warp_specialized_attention_example_matches_the_interpreter_and_float64() {
    let src = example();
    let s = Shape { heads: 2, n_ctx: 256, d: 64, bm: 128, bn: 64 };
    for (i, (causal, n_ctx)) in [(false, 256usize), (true, 384)].into_iter().enumerate() {
        let s = Shape { n_ctx, ..s };
        let what = format!("_attn_fwd_tma causal {causal} n_ctx {n_ctx}");
        let schedule = sched("flash_attention.py", &src, "_attn_fwd_tma", example_spec(s, causal, true), 4);
        assert_eq!(schedule.matches(SPLIT).count(), 1, "{what}: one loop split\n{schedule}");
        let (vals, want) = inputs(s, causal, 100 + 10 * i as u64);
        let outs = run_on(
            &src,
            "_attn_fwd_tma",
            example_spec(s, causal, true),
            &opts("flash_attention.py", 4, 3),
            &vals,
            grid(s),
        );
        check(&what, outs, &want);
    }
}

/// The `n`-th `tcgen05.commit` of the kernel taken out.
fn no_commit(ptx: &str, n: usize) -> String {
    let at = ptx.match_indices("tcgen05.commit").nth(n).unwrap().0;
    let start = ptx[..at].rfind('\n').unwrap();
    let end = at + ptx[at..].find('\n').unwrap();
    format!("{}{}", &ptx[..start], &ptx[end..])
}

/// The example's split PTX broken, each refused by the simulator by name: the default partition's wait for a
/// filled slot skipped (S = Q K^T reads K while the copy writes it), the producer's wait for a released slot
/// skipped (a copy overwrites a slot an MMA may still read), P V's commit to the slot's `empty` barrier taken out
/// (nothing releases the slot or completes the default partition's wait: a deadlock), and the default
/// partition's wait for P V skipped (O is read from tensor memory while P V writes it).
#[test]
fn a_broken_warp_specialized_attention_is_refused() {
    let src = example();
    let s = Shape { heads: 1, n_ctx: 256, d: 64, bm: 128, bn: 64 };
    let (vals, _) = inputs(s, false, 7);
    let opts = opts("flash_attention.py", 4, 3);
    let run = |edit: &dyn Fn(&str) -> String| {
        simulate_broken(&src, "_attn_fwd_tma", example_spec(s, false, true), &opts, &vals, grid(s), edit)
    };
    assert_eq!(run(&|p| p.to_string()), Ok(()), "the unbroken PTX");
    let err = run(&|p| skip_wait(p, "\n$L_ws_default", 0)).unwrap_err();
    assert!(
        err.contains("tcgen05.mma") && err.contains("reads what an asynchronous copy completing on the mbarrier"),
        "no ready wait: {err}"
    );
    let err = run(&|p| skip_wait(p, "\n$L_ws_worker", 0)).unwrap_err();
    assert!(err.contains("cp.async.bulk.tensor") && err.contains("without a barrier between"), "no empty wait: {err}");
    // The kernel's commits: S's, then P V's to the slot's `empty` barrier.
    let err = run(&|p| no_commit(p, 1)).unwrap_err();
    assert!(err.contains("deadlock") && err.contains("warp 4") && err.contains("warps 0-3"), "no release: {err}");
    // The default partition's waits in the loop: the slot's, S's, P V's.
    let err = run(&|p| skip_wait(p, "\n$L_ws_default", 2)).unwrap_err();
    assert!(err.contains("tcgen05.ld") && err.contains("no wait has observed a commit"), "no wait for P V: {err}");
}

fn tutorial() -> Option<(String, String)> {
    sim_common::tutorial("TESSEL_TUTORIALS", "06-fused-attention.py")
}

/// Tutorial 06's `_attn_fwd` with `warp_specialize=True` at its Blackwell configurations (host descriptors, 4
/// warps): head dim 64 with 128x64 blocks and 128 with 128x128 (where the tutorial rescales O in two halves),
/// non-causal (STAGE 1) and causal (STAGE 3: both loops ask, the off-band one splits, of no, one or more steps by
/// program, and the diagonal one runs after the join in one partition). On the simulator against the
/// interpreter, the interpreter against float64.
#[test]
fn tutorial_06_warp_specialized_forward_on_the_simulator() {
    let Some((file, src)) = tutorial() else { return };
    let cases = [
        (Shape { heads: 2, n_ctx: 256, d: 64, bm: 128, bn: 64 }, false),
        (Shape { heads: 2, n_ctx: 384, d: 64, bm: 128, bn: 64 }, true),
        (Shape { heads: 1, n_ctx: 256, d: 128, bm: 128, bn: 128 }, false),
        (Shape { heads: 1, n_ctx: 384, d: 128, bm: 128, bn: 128 }, true),
    ];
    for (i, (s, causal)) in cases.into_iter().enumerate() {
        let what = format!("_attn_fwd D{} causal {causal} n_ctx {}", s.d, s.n_ctx);
        let schedule = sched(&file, &src, "_attn_fwd", tutorial_spec(s, causal, true), 4);
        assert_eq!(schedule.matches(SPLIT).count(), 1, "{what}: one loop split\n{schedule}");
        if causal {
            assert!(
                schedule.contains("warp_specialize=True not applied: the kernel already has a warp_specialize"),
                "{what}: the diagonal loop unsplit\n{schedule}"
            );
        }
        let (vals, want) = inputs(s, causal, 200 + 10 * i as u64);
        let outs = run_on(&src, "_attn_fwd", tutorial_spec(s, causal, true), &opts(&file, 4, 3), &vals, grid(s));
        check(&what, outs, &want);
    }
}

/// The split's PTX: a producer warp beside the kernel's four (`.reqntid 160`), the partitions; in the default
/// partition's loop three waits (the slot's, S's, P V's on the slot's `empty` barrier) and one commit per MMA, no
/// `mbarrier.arrive` (the commit releases the slot). ptxas accepts it, also under the `maxnreg` the tutorial
/// passes with `warp_specialize` on Blackwell (80, and 168 at head dim 128).
#[test]
fn warp_specialized_attention_ptx_assembles() {
    let src = example();
    let tut = tutorial();
    for (d, bn) in [(64u32, 64u32), (128, 128)] {
        for causal in [false, true] {
            let s = Shape { heads: 1, n_ctx: 256, d, bm: 128, bn };
            let mut kernels =
                vec![("flash_attention.py", src.as_str(), "_attn_fwd_tma", example_spec(s, causal, true))];
            if let Some((file, tsrc)) = &tut {
                kernels.push((file.as_str(), tsrc.as_str(), "_attn_fwd", tutorial_spec(s, causal, true)));
            }
            for (file, src, kernel, spec) in kernels {
                for maxnreg in [None, Some(80), Some(168)] {
                    let p = ptx(file, src, kernel, spec.clone(), maxnreg);
                    let what = format!("{kernel} D{d} causal {causal} maxnreg {maxnreg:?}");
                    assert!(p.contains(".reqntid 160"), "{what}: a producer warp more");
                    let default = &p[p.find("\n$L_ws_default").expect("the default partition")..];
                    let body = &default[..default.find("\n$L_for_end").expect("the default partition's loop")];
                    assert_eq!(body.matches("mbarrier.try_wait").count(), 3, "{what}: the slot's, S's, P V's");
                    assert_eq!(body.matches("tcgen05.commit").count(), 2, "{what}: one commit per MMA");
                    assert!(!body.contains("mbarrier.arrive"), "{what}: the slot is released by P V's commit");
                    if let Some(n) = maxnreg {
                        assert!(p.contains(&format!(".maxnreg {n}")), "{what}");
                    }
                    let name = format!("ws_attention_{kernel}_d{d}_{causal}_{}", maxnreg.unwrap_or(0));
                    assemble(&name, &p, "sm_100a");
                }
            }
        }
    }
}
