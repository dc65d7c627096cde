//! `examples/gluon/blackwell_attention.py` (a FlashAttention-4-style forward for sm_100a: S and O in tensor
//! memory, P aliasing S, an MMA warp, a TMA loader warp, the softmax and correction in the default partition) in
//! the interpreter against float64 attention, causal and not, fp16 and bf16, head dims 64 and 128; its PTX
//! through ptxas where one is at hand, and on the PTX simulator against the interpreter; and broken variants of
//! it, whose errors name what went wrong.

mod cli_common;
mod common;
mod sim_common;

use cli_common::{scratch, tessel};
use sim_common::{RunOptions, V, run_on};
use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::{self, BF16, F16};
use tessel::tile::Target;

const KERNEL: &str = "examples/gluon/blackwell_attention.py::attention_kernel";

/// Two heads of `n` keys: two query blocks each.
const HEADS: usize = 2;

/// The target, sm_100a and the specialization: head dim `d`, 128x128 blocks, `causal`, 2 stages, `dtype`
/// (`fp16`/`bf16`) descriptors.
fn spec_args(target: &str, d: usize, causal: bool, dtype: &str) -> Vec<String> {
    let desc = format!("tensordesc<{dtype}[128,{d}]>");
    let causal = if causal { "True" } else { "False" };
    let mut a = vec![target.to_string(), "--arch".into(), "sm_100a".into(), "--signature".into()];
    a.push(format!("fp32,{desc},{desc},{desc},{desc},i32"));
    for c in [format!("HEAD_DIM={d}"), "BLOCK_M=128".into(), "BLOCK_N=128".into(), format!("CAUSAL={causal}")] {
        a.extend(["--const".into(), c]);
    }
    a.extend(["--const".into(), "STAGES=2".into()]);
    a
}

/// The `tessel run --interpret` arguments for `target` over `HEADS` heads of `n` rows (see [`spec_args`]),
/// writing the buffers to `out`.
fn run_args(target: &str, d: usize, n: usize, causal: bool, dtype: &str, out: &str) -> Vec<String> {
    let rows = HEADS * n;
    let mut a = vec!["run".to_string(), "--interpret".into()];
    a.extend(spec_args(target, d, causal, dtype));
    a.extend(["--grid".into(), format!("{},{HEADS}", n / 128), "--arg".into(), "sm_scale=0.125".into()]);
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
    let mut o = vec![0.0; HEADS * n * d];
    for h in 0..HEADS {
        let row = |x: &[f64], i: usize| -> Vec<f64> { x[(h * n + i) * d..(h * n + i + 1) * d].to_vec() };
        for i in 0..n {
            let qi = row(q, i);
            let keys = if causal { i + 1 } else { n };
            let s: Vec<f64> =
                (0..keys).map(|j| row(k, j).iter().zip(&qi).map(|(a, b)| a * b).sum::<f64>() * 0.125).collect();
            let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
            let l: f64 = p.iter().sum();
            for (j, pj) in p.iter().enumerate() {
                let vj = row(v, j);
                for c in 0..d {
                    o[(h * n + i) * d + c] += pj / l * vj[c];
                }
            }
        }
    }
    o
}

#[test]
fn blackwell_attention_matches_float64_in_the_interpreter() {
    let dir = scratch("bw-attention-ref");
    let n = 256;
    for (d, causal, dtype) in
        [(64, true, "fp16"), (64, false, "bf16"), (128, false, "fp16"), (128, true, "bf16"), (64, false, "fp16")]
    {
        // Under both of the interpreter's schedules of the partitions.
        let mut args = run_args(KERNEL, d, n, causal, dtype, dir.to_str().unwrap());
        args.extend(["--ws-schedule".into(), if d == 64 { "hand-off" } else { "run-ahead" }.into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = tessel(&args);
        assert_eq!(code, 0, "d {d} causal {causal} {dtype}: {err}");
        let read = |f: &str| tessel::npy::read(&std::fs::read(dir.join(f)).unwrap()).unwrap().to_f64();
        let (q, k, v, o) = (read("q.npy"), read("k.npy"), read("v.npy"), read("o.npy"));
        let want = reference(&q, &k, &v, d, n, causal);
        // P is rounded to the inputs' type before P V, and O once more at the end: about 2^-10 (fp16) or 2^-7
        // (bf16) of the row's values.
        let tol = if dtype == "fp16" { 2e-3 } else { 1.6e-2 };
        let worst = o.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
        assert!(worst <= tol, "d {d} causal {causal} {dtype}: largest error {worst} > {tol}\n{out}");
        assert!(o.iter().all(|x| x.is_finite()), "d {d} causal {causal} {dtype}: an output is not finite");
    }
    std::fs::remove_dir_all(&dir).ok();
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
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/gluon/blackwell_attention.py")).unwrap();
    assert!(src.contains(from), "{name}: the example no longer holds `{from}`");
    let file = dir.join("variant.py");
    std::fs::write(&file, src.replacen(from, to, 1)).unwrap();
    let target = format!("{}::attention_kernel", file.display());
    let mut args = run_args(&target, 128, 256, false, "fp16", dir.to_str().unwrap());
    args.extend(["--ws-schedule".into(), schedule.into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = tessel(&args);
    std::fs::remove_dir_all(&dir).ok();
    assert_ne!(code, 0, "{name}: the broken variant ran");
    assert!(!err.contains("internal error") && !err.contains("panicked"), "{name}: {err}");
    err
}

#[test]
fn broken_variants_name_the_partition_barrier_and_buffer() {
    // The MMA warp waits for P in the wrong phase: P V reads P before the softmax has written it.
    let err = broken(
        "phase",
        "mbarrier.wait(p_ready.index(j % 2), (j // 2) & 1)",
        "mbarrier.wait(p_ready.index(j % 2), ((j // 2) & 1) ^ 1)",
    );
    assert!(err.contains("the default partition: tmem_store writes tensor-memory buffer `p_tmem`"), "{err}");
    assert!(err.contains("tcgen05_mma into `o_tmem` reading it is in flight"), "{err}");
    // A barrier initialized for two arrivals gets one each phase: a deadlock naming who waits for what.
    let err = broken("count", "mbarrier.init(p_ready.index(i), count=1)", "mbarrier.init(p_ready.index(i), count=2)");
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("worker partition 0 waits"), "{err}");
    assert!(err.contains("mbarrier `p_ready[0]` (phase 0 running, which still lacks 1 arrival(s)"), "{err}");
    // Four S buffers and O do not fit in the 512 columns: the budget names the buffers.
    let err = broken(
        "budget",
        "allocate_tensor_memory(gl.float32, [2, BLOCK_M, BLOCK_N]",
        "allocate_tensor_memory(gl.float32, [4, BLOCK_M, BLOCK_N]",
    );
    assert!(err.contains("the kernel needs 640 tensor-memory columns, more than the 512 of a CTA"), "{err}");
    assert!(err.contains("%s_tmem") && err.contains("%o_tmem"), "{err}");
    // The correction without its wait for P_{j-1} V_{j-1}: run ahead, the softmax corrects O before the MMA warp
    // has even issued that MMA; handing the turn on after each arrival, the MMA warp issues it at once and the
    // correction reads O under it.
    let err = broken_under(
        "correction",
        "            mbarrier.wait(o_ready, (j - 1) & 1)\n            for c in",
        "            for c in",
        "hand-off",
    );
    assert!(err.contains("the default partition: tmem_load reads tensor-memory buffer `o_part`"), "{err}");
    assert!(err.contains("the tcgen05_mma into `o_tmem` writing it is in flight"), "{err}");
}

#[test]
fn an_unknown_schedule_is_refused() {
    let (code, _, err) = tessel(&["run", "--interpret", KERNEL, "--ws-schedule", "random"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected `run-ahead` or `hand-off`, got `random`"), "{err}");
}

/// The kernel's PTX on the simulator against the interpreter, one case per dtype and head dim (causal and not):
/// one head of 256 keys (two query blocks; the K/V ring of two stages turns over), fresh random Q, K and V, O
/// poisoned on both sides. The partitions (the softmax and correction warpgroup, the MMA warp, the loader warp)
/// run as the simulator schedules them, each shared-memory access checked against the others by happens-before.
/// Every element is written and equal, bit for bit. (Up to 7 of 16384 used to be one fp16/bf16 ulp apart: the
/// interpreter summed the softmax's rows by a balanced tree where the kernel folds a thread's row in register
/// order. It now reduces an operand with a layout in the generated code's order, `tessel_interp`'s
/// `reduce_order.rs`.)
#[test]
fn blackwell_attention_agrees_with_the_interpreter_on_the_simulator() {
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/gluon/blackwell_attention.py")).unwrap();
    let n = 256u32;
    for (d, causal, dtype, seed) in
        [(64u32, true, F16, 1u64), (64, false, BF16, 2), (128, false, F16, 3), (128, true, BF16, 4)]
    {
        let desc = ArgSpec::TensorDesc { elem: dtype, block_shape: vec![128, d], padding_nan: false, layout: None };
        let mut spec = vec![ArgSpec::Float(ScalarType::F32), desc.clone(), desc.clone(), desc.clone(), desc];
        spec.push(ArgSpec::Int(ScalarType::I32, false));
        spec.extend([d as i64, 128, 128].map(|x| ArgSpec::Constexpr(ConstValue::Int(x))));
        spec.extend([ArgSpec::Constexpr(ConstValue::Bool(causal)), ArgSpec::Constexpr(ConstValue::Int(2))]);
        let mut rng = tessel_math::testing::Rng::new(seed);
        let mut input = || {
            let data = tessel::tile::testing::vec_of(&mut rng, (n * d) as usize, dtype);
            V::Desc(dtype, Some(data), vec![n, d])
        };
        let vals = [V::F32(0.125), input(), input(), input(), V::Desc(dtype, None, vec![n, d]), V::Int(n as i64)];
        let file = "examples/gluon/blackwell_attention.py";
        let opts = RunOptions { file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
        let what = format!("head dim {d}, causal {causal}, {dtype}");
        let outs = run_on(&src, "attention_kernel", spec, &opts, &vals, [n / 128, 1, 1])
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: unwritten outputs");
        let differ = (0..sim.len()).filter(|&j| sim[j] != interp[j]).count();
        assert_eq!(differ, 0, "{what}: {differ} of {} elements differ", sim.len());
    }
}
