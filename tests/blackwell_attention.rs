//! `examples/gluon/blackwell_attention.py` (a FlashAttention-4-style forward for sm_100a: two 128-row query
//! sub-tiles per program, S and O in tensor memory, P aliasing S, a softmax warpgroup per sub-tile, a correction
//! warpgroup, an MMA warp, a TMA loader warp and two TMA-store warps, registers moved by warpgroup) in the
//! interpreter against float64 attention, causal and not, fp16 and bf16, head dims 64 and 128; its PTX through
//! ptxas where one is at hand, and on the PTX simulator against the interpreter; and broken variants of it, whose
//! errors name what went wrong. The same for its persistent grid (`attention_persistent_kernel`) under the static
//! scheduler and under cluster launch control, the latter with every answer policy of the interpreter.

mod attention_ref;
mod cli_common;
mod common;
mod sim_common;

use cli_common::{scratch, tessel};
use sim_common::{RunOptions, V, run_on};
use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::{self, BF16, F16};
use tessel::tile::Target;

const KERNEL: &str = "examples/gluon/blackwell_attention.py::attention_kernel";
const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/gluon/blackwell_attention.py");

/// Two heads of `n` keys.
const HEADS: usize = 2;

/// A program's query rows: two sub-tiles of 128.
const BLOCK_M: usize = 256;

/// The ring's stages at head dim `d`: 3 where they fit in shared memory (so a ring slot's phase does not start
/// over with each tile), 2 at 128.
fn stages(d: usize) -> usize {
    if d == 64 { 3 } else { 2 }
}

/// The target, sm_100a and the specialization: head dim `d`, 256-row query blocks over 128-key blocks, `causal`,
/// [`stages`], `dtype` (`fp16`/`bf16`) descriptors of 128-row blocks.
fn spec_args(target: &str, d: usize, causal: bool, dtype: &str) -> Vec<String> {
    let desc = format!("tensordesc<{dtype}[128,{d}]>");
    let causal = if causal { "True" } else { "False" };
    let mut a = vec![target.to_string(), "--arch".into(), "sm_100a".into(), "--signature".into()];
    a.push(format!("fp32,{desc},{desc},{desc},{desc},i32"));
    for c in [format!("HEAD_DIM={d}"), format!("BLOCK_M={BLOCK_M}"), "BLOCK_N=128".into(), format!("CAUSAL={causal}")] {
        a.extend(["--const".into(), c]);
    }
    a.extend(["--const".into(), format!("STAGES={}", stages(d))]);
    a
}

/// The `tessel run --interpret` arguments for `target` over `HEADS` heads of `n` rows (see [`spec_args`]),
/// writing the buffers to `out`.
fn run_args(target: &str, d: usize, n: usize, causal: bool, dtype: &str, out: &str) -> Vec<String> {
    with_buffers(spec_args(target, d, causal, dtype), &format!("{},{HEADS}", n.div_ceil(BLOCK_M)), d, n, dtype, out)
}

/// `tessel run --interpret` of the specialization `spec` over `grid`: Q, K and V random, O poisoned with NaN,
/// `HEADS` heads of `n` rows; the buffers written to `out`.
fn with_buffers(spec: Vec<String>, grid: &str, d: usize, n: usize, dtype: &str, out: &str) -> Vec<String> {
    let rows = HEADS * n;
    let mut a = vec!["run".to_string(), "--interpret".into()];
    a.extend(spec);
    a.extend(["--grid".into(), grid.into(), "--arg".into(), "sm_scale=0.125".into()]);
    a.extend(["--out-dir".into(), out.into()]);
    for t in ["q", "k", "v"] {
        a.extend(["--arg".into(), format!("{t}=randn:{rows}x{d}:{dtype}")]);
    }
    a.extend(["--arg".into(), format!("o=fill:nan:{rows}x{d}:{dtype}")]);
    for t in ["q", "k", "v", "o"] {
        a.extend(["--arg".into(), format!("{t}_desc=desc:{t}:block=128x{d}")]);
    }
    a.extend(["--arg".into(), format!("N_CTX={n}")]);
    a
}

/// Float64 attention over the inputs the run wrote: `[HEADS * n, d]` each.
fn reference(q: &[f64], k: &[f64], v: &[f64], d: usize, n: usize, causal: bool) -> Vec<f64> {
    attention_ref::reference(q, k, v, HEADS, d, n, causal)
}

#[test]
fn blackwell_attention_matches_float64_in_the_interpreter() {
    let dir = scratch("bw-attention-ref");
    let n = 512;
    for (d, causal, dtype) in
        [(64, true, "fp16"), (64, false, "bf16"), (128, false, "fp16"), (128, true, "bf16"), (64, false, "fp16")]
    {
        // Under both of the interpreter's schedules of the partitions.
        let mut args = run_args(KERNEL, d, n, causal, dtype, dir.to_str().unwrap());
        args.extend(["--ws-schedule".into(), if d == 64 { "hand-off" } else { "run-ahead" }.into()]);
        equals_float64(&args, &dir, d, n, causal, dtype, &format!("d {d} causal {causal} {dtype}"));
    }
    // N_CTX an odd number of 128-row sub-tiles: each head's second query block is half past its end (its second
    // sub-tile computed, not stored; causal, its key blocks stop at N_CTX).
    for (d, causal) in [(64, true), (128, false)] {
        let args = run_args(KERNEL, d, 384, causal, "fp16", dir.to_str().unwrap());
        equals_float64(&args, &dir, d, 384, causal, "fp16", &format!("d {d} causal {causal}, 384 rows"));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs `tessel args` (which writes its buffers to `dir`) and checks its O against float64 attention over its Q,
/// K and V; `what` names the case.
fn equals_float64(args: &[String], dir: &std::path::Path, d: usize, n: usize, causal: bool, dtype: &str, what: &str) {
    let (code, out, err) = tessel(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{what}: {err}");
    let read = |f: &str| tessel::npy::read(&std::fs::read(dir.join(f)).unwrap()).unwrap().to_f64();
    let (q, k, v, o) = (read("q.npy"), read("k.npy"), read("v.npy"), read("o.npy"));
    assert!(o.iter().all(|x| x.is_finite()), "{what}: an output is not finite");
    let want = reference(&q, &k, &v, d, n, causal);
    // P is rounded to the inputs' type before P V, and O once more at the end: about 2^-10 (fp16) or 2^-7 (bf16)
    // of the row's values.
    let tol = if dtype == "fp16" { 2e-3 } else { 1.6e-2 };
    let worst = o.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    assert!(worst <= tol, "{what}: largest error {worst} > {tol}\n{out}");
}

/// Every specialization the issue names compiles for sm_100a and ptxas (where one is found) takes it.
#[test]
fn blackwell_attention_assembles_for_sm_100a() {
    for d in [64, 128] {
        for causal in [true, false] {
            for dtype in ["fp16", "bf16"] {
                let mut args = vec!["compile".to_string()];
                args.extend(spec_args(KERNEL, d, causal, dtype));
                args.extend(["--emit".into(), "ptx".into()]);
                let (code, ptx, err) = tessel(&args.iter().map(String::as_str).collect::<Vec<_>>());
                assert_eq!(code, 0, "d {d} causal {causal} {dtype}: {err}");
                // QK^T with B from shared memory, P V with A from tensor memory.
                assert!(ptx.contains("tcgen05.mma.cta_group::1.kind::f16 [%r"), "{ptx}");
                assert!(ptx.contains("(A in tensor memory"), "P V reads P from tensor memory:\n{ptx}");
                common::assemble(&format!("blackwell_attention d{d} {causal} {dtype}"), &ptx, "sm_100a");
            }
        }
    }
}

/// `examples/gluon/blackwell_attention.py` with its first `from` replaced by `to`, run at head dim 128: the
/// error.
fn broken(name: &str, from: &str, to: &str) -> String {
    broken_under(name, from, to, "run-ahead")
}

/// [`broken`] under the interpreter's `schedule` of the partitions.
fn broken_under(name: &str, from: &str, to: &str, schedule: &str) -> String {
    let dir = scratch(name);
    let file = attention_ref::variant(EXAMPLE, &dir, "variant.py", from, to);
    let target = format!("{}::attention_kernel", file.display());
    let mut args = run_args(&target, 128, 256, false, "fp16", dir.to_str().unwrap());
    args.extend(["--ws-schedule".into(), schedule.into()]);
    attention_ref::refused(name, &args, &dir)
}

#[test]
fn broken_variants_name_the_partition_barrier_and_buffer() {
    // The MMA warp waits for P in the wrong phase: P_0 V of the first block goes at once, reading P's columns
    // while S_0 = Q_0 K^T, which writes them, is still in flight.
    let err = broken("phase", "mbarrier.wait(p_ready.index(i), g & 1)", "mbarrier.wait(p_ready.index(i), (g & 1) ^ 1)");
    assert!(err.contains("worker partition 2: the tcgen05_mma into `o_tmem[0]` reads tensor-memory cells"), "{err}");
    assert!(err.contains("the earlier tcgen05_mma into `s_tmem[0]`, still in flight, writes"), "{err}");
    // The MMA warp issues the next S_0 without waiting for P_0 V: S_0 overwrites P_0 while P_0 V may still read
    // it (the ISA orders two MMAs only into one accumulator).
    let err = broken("overwrite", "                    mbarrier.wait(o_ready.index(i), g & 1)\n", "");
    assert!(err.contains("worker partition 2: the tcgen05_mma into `s_tmem[0]` writes tensor-memory cells"), "{err}");
    assert!(err.contains("the earlier tcgen05_mma into `o_tmem[0]`, still in flight, reads"), "{err}");
    assert!(err.contains("only when both are MMAs into the same accumulator"), "{err}");
    // A barrier initialized for two arrivals gets one each phase: a deadlock naming who waits for what.
    let err = broken("count", "mbarrier.init(p_ready.index(i), count=1)", "mbarrier.init(p_ready.index(i), count=2)");
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("worker partition 2 waits"), "the MMA warp: {err}");
    assert!(err.contains("mbarrier `p_ready[0]` (phase 0 running, which still lacks 1 arrival(s)"), "{err}");
    // Four S buffers and two O do not fit in the 512 columns: the budget names the buffers.
    let err = broken(
        "budget",
        "allocate_tensor_memory(gl.float32, [2, SUB_M, BLOCK_N]",
        "allocate_tensor_memory(gl.float32, [4, SUB_M, BLOCK_N]",
    );
    assert!(err.contains("the kernel needs 768 tensor-memory columns, more than the 512 of a CTA"), "{err}");
    assert!(err.contains("%s_tmem") && err.contains("%o_tmem"), "{err}");
    // The softmax puts its next alpha into the mailbox without waiting until the correction took the last one:
    // the mailbox's barrier runs a phase ahead, and the correction waits for a phase that has gone by.
    let err = broken("mailbox", "    mbarrier.wait(free, (m & 1) ^ 1)\n", "");
    assert!(err.contains("deadlock") && err.contains("worker partition 1 waits"), "the correction: {err}");
    assert!(err.contains("of mbarrier `ready`"), "{err}");
}

/// `--mma-order issue` lets MMAs run in issue order: the variant without the MMA warp's wait for P V before the
/// next S (refused under the default, `isa`) runs, and still equals float64 (the interpreter computes in issue
/// order either way). An unknown order is refused.
#[test]
fn mma_order_issue_allows_what_the_isa_does_not_order() {
    let dir = scratch("bw-attention-issue-order");
    let src = std::fs::read_to_string(EXAMPLE).unwrap();
    let file = dir.join("variant.py");
    std::fs::write(&file, src.replacen("                    mbarrier.wait(o_ready.index(i), g & 1)\n", "", 1)).unwrap();
    let target = format!("{}::attention_kernel", file.display());
    let mut args = run_args(&target, 64, 512, true, "fp16", dir.to_str().unwrap());
    args.extend(["--mma-order".into(), "issue".into()]);
    equals_float64(&args, &dir, 64, 512, true, "fp16", "no wait before the next S, --mma-order issue");
    std::fs::remove_dir_all(&dir).ok();
    let (code, _, err) = tessel(&["run", "--interpret", KERNEL, "--mma-order", "any"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected `isa` or `issue`, got `any`"), "{err}");
}

#[test]
fn an_unknown_schedule_is_refused() {
    let (code, _, err) = tessel(&["run", "--interpret", KERNEL, "--ws-schedule", "random"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected `run-ahead` or `hand-off`, got `random`"), "{err}");
}

/// The kernel's PTX on the simulator against the interpreter, one case per dtype and head dim (causal and not):
/// one head of 512 keys (two query blocks of up to four key blocks; the K/V ring turns over), fresh random Q, K
/// and V, O poisoned on both sides. The partitions (the two softmax warpgroups, the correction warpgroup, the MMA
/// warp, the loader warp, the epilogue warps) run as the simulator schedules them, each shared-memory access checked against the others by happens-before.
/// Every element is written and equal, bit for bit, with the simulator holding the MMAs to the ISA's order
/// (`check_mma_order`), and refusing the kernel without the MMA warp's wait for P V before the next S. (Up to 7
/// of 16384 used to be one fp16/bf16 ulp apart: the
/// interpreter summed the softmax's rows by a balanced tree where the kernel folds a thread's row in register
/// order. It now reduces an operand with a layout in the generated code's order, `tessel_interp`'s
/// `reduce_order.rs`.)
#[test]
fn blackwell_attention_agrees_with_the_interpreter_on_the_simulator() {
    let src = std::fs::read_to_string(EXAMPLE).unwrap();
    let n = 512u32;
    for (d, causal, dtype, seed) in
        [(64u32, true, F16, 1u64), (64, false, BF16, 2), (128, false, F16, 3), (128, true, BF16, 4)]
    {
        let desc = ArgSpec::TensorDesc { elem: dtype, block_shape: vec![128, d], padding_nan: false, layout: None };
        let mut spec = vec![ArgSpec::Float(ScalarType::F32), desc.clone(), desc.clone(), desc.clone(), desc];
        spec.push(ArgSpec::Int(ScalarType::I32, false));
        spec.extend([d as i64, BLOCK_M as i64, 128].map(|x| ArgSpec::Constexpr(ConstValue::Int(x))));
        let stages = ArgSpec::Constexpr(ConstValue::Int(stages(d as usize) as i64));
        spec.extend([ArgSpec::Constexpr(ConstValue::Bool(causal)), stages]);
        let mut rng = tessel_math::testing::Rng::new(seed);
        let mut input = || {
            let data = tessel::tile::testing::vec_of(&mut rng, (n * d) as usize, dtype);
            V::Desc(dtype, Some(data), vec![n, d])
        };
        let vals = [V::F32(0.125), input(), input(), input(), V::Desc(dtype, None, vec![n, d]), V::Int(n as i64)];
        let file = "examples/gluon/blackwell_attention.py";
        let opts = RunOptions { file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
        let what = format!("head dim {d}, causal {causal}, {dtype}");
        // The simulator holds the MMAs to the ISA's order too (the MMA warp waits for P V before the next S).
        sim_common::ptx_sim::check_mma_order(true);
        let outs = run_on(&src, "attention_kernel", spec.clone(), &opts, &vals, [n / BLOCK_M as u32, 1, 1]);
        let outs = outs.unwrap_or_else(|e| panic!("{what}: {e}"));
        if d == 64 && causal {
            // Without that wait the simulator, too, refuses the next S over the P that P V may still read.
            let broken = src.replacen("                    mbarrier.wait(o_ready.index(i), g & 1)\n", "", 1);
            let err = run_on(&broken, "attention_kernel", spec, &opts, &vals, [n / BLOCK_M as u32, 1, 1]);
            let err = err.expect_err("the next S over P without the wait for P V");
            assert!(err.contains("tcgen05.mma (op #") && err.contains("still reads"), "{what}: {err}");
        }
        sim_common::ptx_sim::check_mma_order(false);
        let (sim, interp) = &outs[0];
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: unwritten outputs");
        attention_ref::assert_same_bits(&what, sim, interp, sim.len(), d as usize);
    }
}

// The persistent grid (`attention_persistent_kernel`): one program walks several (query block, head) tiles, each
// ring's slot and phase counted on across them, under the static scheduler or cluster launch control.

const PERSISTENT: &str = "examples/gluon/blackwell_attention.py::attention_persistent_kernel";

/// Three query blocks of each of the `HEADS` heads: 6 tiles (causal: of 6, 6, 4, 4, 2 and 2 key blocks, the longest
/// first), so a 3-stage ring's slots and phases carry from one tile to the next.
const PERSISTENT_N: usize = 768;

/// Head dim, causal, dtype: every specialization.
const SPECS: [(usize, bool, &str); 8] = [
    (64, true, "fp16"),
    (64, false, "bf16"),
    (128, false, "fp16"),
    (128, true, "bf16"),
    (64, false, "fp16"),
    (64, true, "bf16"),
    (128, true, "fp16"),
    (128, false, "bf16"),
];

/// [`spec_args`] for `attention_persistent_kernel` (which also takes the number of heads) under `scheduler`
/// (`StaticScheduler` or `ClcScheduler`).
fn persistent_spec_args(target: &str, d: usize, causal: bool, dtype: &str, scheduler: &str) -> Vec<String> {
    let mut a = spec_args(target, d, causal, dtype);
    let sig = a.iter().position(|x| x == "--signature").unwrap() + 1;
    a[sig].push_str(",i32");
    a.extend(["--const".into(), format!("SCHEDULER={scheduler}")]);
    a
}

/// How a persistent run is launched and interpreted: the scheduler, the programs, the interpreter's answer to a
/// cancellation request (`--clc-policy`), its schedule of the partitions, the inputs' seed.
struct Launch<'a> {
    scheduler: &'a str,
    grid: usize,
    policy: &'a str,
    ws: &'a str,
    seed: u64,
}

/// The `tessel run --interpret` arguments of `target` (the persistent kernel or a variant of it) over `HEADS` heads
/// of `n` rows, launched as `l` says, writing the buffers to `out`.
fn persistent_run_args(
    target: &str,
    d: usize,
    n: usize,
    causal: bool,
    dtype: &str,
    l: &Launch,
    out: &str,
) -> Vec<String> {
    let spec = persistent_spec_args(target, d, causal, dtype, l.scheduler);
    let mut a = with_buffers(spec, &l.grid.to_string(), d, n, dtype, out);
    let seed = l.seed.to_string();
    let heads = format!("num_heads={HEADS}");
    for x in ["--arg", &heads, "--clc-policy", l.policy, "--ws-schedule", l.ws, "--seed", &seed] {
        a.push(x.into());
    }
    a
}

/// The static scheduler over 4 or 2 programs, fewer than the 6 tiles: a program takes one to three tiles of
/// different lengths, under both of the interpreter's schedules of the partitions.
#[test]
fn persistent_attention_with_the_static_scheduler_matches_float64_in_the_interpreter() {
    let dir = scratch("bw-attention-static");
    for (i, &(d, causal, dtype)) in SPECS.iter().enumerate() {
        let grid = if i % 2 == 0 { 4 } else { 2 };
        let ws = if i % 4 < 2 { "hand-off" } else { "run-ahead" };
        let l = Launch { scheduler: "StaticScheduler", grid, policy: "next", ws, seed: 100 + i as u64 };
        let args = persistent_run_args(PERSISTENT, d, PERSISTENT_N, causal, dtype, &l, dir.to_str().unwrap());
        let what = format!("static, {grid} programs, d {d} causal {causal} {dtype} ({ws})");
        equals_float64(&args, &dir, d, PERSISTENT_N, causal, dtype, &what);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Cluster launch control: a grid of one program per tile, the interpreter answering each request with the next
/// program not started (program 0 does every tile), with none (each program its own), or at random (some of
/// each); every specialization under one of the three, both schedules of the partitions.
#[test]
fn persistent_attention_with_cluster_launch_control_matches_float64_under_every_policy() {
    let dir = scratch("bw-attention-clc");
    for (i, &(d, causal, dtype)) in SPECS.iter().enumerate() {
        let policy = ["next".to_string(), "none".into(), format!("random:{}", 7 + i)][i % 3].clone();
        let ws = if i % 2 == 0 { "hand-off" } else { "run-ahead" };
        let l = Launch { scheduler: "ClcScheduler", grid: 6, policy: &policy, ws, seed: 200 + i as u64 };
        let args = persistent_run_args(PERSISTENT, d, PERSISTENT_N, causal, dtype, &l, dir.to_str().unwrap());
        let what = format!("CLC ({policy}), d {d} causal {causal} {dtype} ({ws})");
        equals_float64(&args, &dir, d, PERSISTENT_N, causal, dtype, &what);
    }
    // The answers do hand tiles over: a scheduler that takes its own tile again instead of the canceled program's
    // leaves the canceled tiles' O unwritten under `next`; under `none`, where nothing is canceled, it passes.
    let (from, to) = ("ClcScheduler(result.program_id(0),", "ClcScheduler(self.tile,");
    let file = attention_ref::variant(EXAMPLE, &dir, "own_tile.py", from, to);
    let target = format!("{}::attention_persistent_kernel", file.display());
    for (policy, nan) in [("next", true), ("none", false)] {
        let l = Launch { scheduler: "ClcScheduler", grid: 6, policy, ws: "run-ahead", seed: 300 };
        let args = persistent_run_args(&target, 64, PERSISTENT_N, false, "fp16", &l, dir.to_str().unwrap());
        let (code, _, err) = tessel(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "{policy}: {err}");
        let o = tessel::npy::read(&std::fs::read(dir.join("o.npy")).unwrap()).unwrap().to_f64();
        let unwritten = o.iter().filter(|x| x.is_nan()).count();
        // Under `next` program 0 cancels the other five and does its own tile six times.
        let want = if nan { 5 * BLOCK_M * 64 } else { 0 };
        assert_eq!(unwritten, want, "{policy}: elements of O left NaN");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Every persistent specialization, under both schedulers, compiles for sm_100a and ptxas takes it.
#[test]
fn persistent_attention_assembles_for_sm_100a() {
    for scheduler in ["StaticScheduler", "ClcScheduler"] {
        for (d, causal, dtype) in SPECS {
            let mut args = vec!["compile".to_string()];
            args.extend(persistent_spec_args(PERSISTENT, d, causal, dtype, scheduler));
            args.extend(["--emit".into(), "ptx".into()]);
            let what = format!("{scheduler} d {d} causal {causal} {dtype}");
            let (code, ptx, err) = tessel(&args.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(code, 0, "{what}: {err}");
            assert!(ptx.contains("(A in tensor memory"), "{what}: P V reads P from tensor memory:\n{ptx}");
            let asks = ptx.contains("clusterlaunchcontrol.try_cancel");
            assert_eq!(asks, scheduler == "ClcScheduler", "{what}: cancellation requests");
            common::assemble(&format!("blackwell_attention_{scheduler}_d{d}_{causal}_{dtype}"), &ptx, "sm_100a");
        }
    }
}

/// The persistent kernel's PTX on the simulator against the interpreter under both schedulers: fp16 at head dim
/// 64, causal and not, and bf16 at 128; two heads of 512 keys (4 tiles; causal: of 4, 4, 2 and 2 key blocks). The
/// static scheduler runs 3 programs (program 0 takes tiles 0 and 3); under cluster launch control (4 programs) both
/// answer a request with the next program not started, so program 0 does every tile, and once more with the
/// simulator failing every request (each program does its own tile; the interpreter's program 0 still does them
/// all). Fresh random Q, K and V, O poisoned on both sides; every element written and equal, bit for bit, the
/// simulator holding the MMAs to the ISA's order (`check_mma_order`).
#[test]
fn persistent_attention_agrees_with_the_interpreter_on_the_simulator() {
    let src = std::fs::read_to_string(EXAMPLE).unwrap();
    let n = 512u32;
    let rows = n * HEADS as u32;
    for (scheduler, programs, d, causal, dtype, cancel, seed) in [
        ("StaticScheduler", 3u32, 64u32, true, F16, true, 11u64),
        ("StaticScheduler", 3, 64, false, F16, true, 12),
        ("StaticScheduler", 3, 128, true, BF16, true, 13),
        ("ClcScheduler", 4, 64, true, F16, true, 14),
        ("ClcScheduler", 4, 64, false, F16, true, 15),
        ("ClcScheduler", 4, 128, false, BF16, true, 16),
        ("ClcScheduler", 4, 64, true, F16, false, 17),
    ] {
        let desc = ArgSpec::TensorDesc { elem: dtype, block_shape: vec![128, d], padding_nan: false, layout: None };
        let mut spec = vec![ArgSpec::Float(ScalarType::F32), desc.clone(), desc.clone(), desc.clone(), desc];
        spec.extend([ArgSpec::Int(ScalarType::I32, false), ArgSpec::Int(ScalarType::I32, false)]);
        spec.extend([d as i64, BLOCK_M as i64, 128].map(|x| ArgSpec::Constexpr(ConstValue::Int(x))));
        let stages = ArgSpec::Constexpr(ConstValue::Int(stages(d as usize) as i64));
        spec.extend([ArgSpec::Constexpr(ConstValue::Bool(causal)), stages]);
        spec.push(ArgSpec::Constexpr(ConstValue::Expr(scheduler.into())));
        let mut rng = tessel_math::testing::Rng::new(seed);
        let mut input = || {
            let data = tessel::tile::testing::vec_of(&mut rng, (rows * d) as usize, dtype);
            V::Desc(dtype, Some(data), vec![rows, d])
        };
        let mut vals = vec![V::F32(0.125), input(), input(), input(), V::Desc(dtype, None, vec![rows, d])];
        vals.extend([V::Int(n as i64), V::Int(HEADS as i64)]);
        let file = "examples/gluon/blackwell_attention.py";
        let opts = RunOptions { file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
        let what = format!("{scheduler}, head dim {d}, causal {causal}, {dtype}, requests answered {cancel}");
        sim_common::ptx_sim::answer_every_request(cancel);
        sim_common::ptx_sim::check_mma_order(true);
        let outs = run_on(&src, "attention_persistent_kernel", spec, &opts, &vals, [programs, 1, 1]);
        sim_common::ptx_sim::check_mma_order(false);
        sim_common::ptx_sim::answer_every_request(true);
        let outs = outs.unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: unwritten outputs");
        attention_ref::assert_same_bits(&what, sim, interp, sim.len(), d as usize);
    }
}

/// `examples/gluon/blackwell_attention.py` with its first `from` replaced by `to`, the persistent kernel run at
/// head dim 64, causal, over [`PERSISTENT_N`] keys as `l` says: the error.
fn broken_persistent(name: &str, from: &str, to: &str, l: &Launch) -> String {
    let dir = scratch(name);
    let file = attention_ref::variant(EXAMPLE, &dir, "variant.py", from, to);
    let target = format!("{}::attention_persistent_kernel", file.display());
    let args = persistent_run_args(&target, 64, PERSISTENT_N, true, "fp16", l, dir.to_str().unwrap());
    attention_ref::refused(name, &args, &dir)
}

#[test]
fn broken_persistent_variants_name_the_partition_barrier_and_buffer() {
    let fixed = |ws| Launch { scheduler: "StaticScheduler", grid: 2, policy: "next", ws, seed: 400 };
    // The correction reads O out for the epilogue without waiting for the tile's last P V: handing the turn on
    // after each arrival, the MMA warp issues that P V at once and the correction warpgroup reads O under it.
    let epilogue = "            mbarrier.wait(o_ready.index(i), (base - 1) & 1)\n";
    let err = broken_persistent("epilogue", epilogue, "", &fixed("hand-off"));
    assert!(err.contains("worker partition 1: tmem_load reads tensor-memory buffer `o_tmem[0]"), "{err}");
    assert!(err.contains("the tcgen05_mma into `o_tmem"), "{err}");
    assert!(err.contains("writing it is in flight"), "{err}");
    // Q's phase not carried across tiles: the MMA warp waits for phase 0 of `q_bar` in every tile, and in the
    // third that phase parity is the one running (the hardware's wait blocks): a deadlock.
    let err =
        broken_persistent("q-phase", "mbarrier.wait(q_bar, t & 1)", "mbarrier.wait(q_bar, 0)", &fixed("run-ahead"));
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("worker partition 2 waits (bytes"), "the MMA warp: {err}");
    assert!(err.contains("for phase parity 0 of mbarrier `q_bar` (phase 2 running"), "{err}");
    // The loader refills Q without waiting for the last QK^T of the tile before, which may still read it.
    let err = broken_persistent("q-refill", "        mbarrier.wait(q_empty, (t & 1) ^ 1)\n", "", &fixed("run-ahead"));
    assert!(err.contains("worker partition 3: tma_load into"), "the loader: {err}");
    assert!(err.contains("overwrites a shared-memory operand of the tcgen05_mma"), "{err}");
    assert!(err.contains("tma.async_load(q_desc, [q_row + i * SUB_M, 0], q_bar, q_smem.index(i))"), "the span: {err}");
    // The epilogue warps hand the staging tile back without waiting for their TMA store: the correction writes
    // the next sub-tile's O into it while the store may still read it.
    let err = broken_persistent("store", "            tma.store_wait(0)\n", "", &fixed("run-ahead"));
    assert!(err.contains("worker partition 1: shared-memory buffer"), "the correction: {err}");
    assert!(err.contains("is written while a TMA store may still read it"), "{err}");
    assert!(err.contains("o_smem.slice(c * 64, 64, dim=1).store(o.to(dtype))"), "the span: {err}");
    // The loader asks into a response slot without waiting until every partition has read its last answer: the
    // slot's `landed` barrier runs two phases ahead of the others, whose wait for it never returns.
    let clc = Launch { scheduler: "ClcScheduler", grid: 6, policy: "next", ws: "run-ahead", seed: 401 };
    let ask = "        mbarrier.wait(self.consumed.index(slot), ((self.taken // 2) & 1) ^ 1)\n";
    let err = broken_persistent("ask", ask, "", &clc);
    assert!(err.contains("deadlock") && err.contains("the default partition waits"), "{err}");
    assert!(err.contains("of mbarrier `landed[1]`"), "{err}");
}
