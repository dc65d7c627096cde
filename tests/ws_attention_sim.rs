//! Auto mode's warp-specialized attention on sm_90a (`tests/kernels/attn_fp8_ws.py`: fp8 operands, eight
//! consumer warps), compiled to PTX and run on the PTX simulator against the interpreter. The split loop has a
//! producer (a warp, or a warpgroup that gives the consumers its registers) issuing K's and V's copies, and two
//! consumer warpgroups releasing each ring slot through an mbarrier; the simulator runs each warp on its own, so
//! a slot handed over wrongly shows as a race or a deadlock, and a value computed wrongly as a difference. The
//! causal form runs its split loop first (no iterations at all for the first row block) and an unsplit masked
//! loop after the partitions join, as tutorial 06's causal kernel does.

mod common;
mod sim_common;

use std::path::Path;

use common::{c, int, ptr};
use sim_common::{RunOptions, V, run_on, simulate_broken, skip_wait};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::Stage;
use tessel::tile::ScalarType::{F8E5M2, F16, F32};
use tessel::tile::{KernelConfig, Target};

const HEADS: usize = 2;
const BLOCK_M: u32 = 128;

fn source() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/attn_fp8_ws.py")).unwrap()
}

fn opts(num_stages: u32) -> RunOptions<'static> {
    RunOptions { file: "attn_fp8_ws.py", target: Target::Sm90a, num_warps: 8, num_stages, poison: true }
}

/// The kernel's specialization, its arguments (Q, K and Vᵀ random from `seed` on, M and O poisoned) and grid.
fn case(n_ctx: usize, d: u32, bn: u32, causal: bool, seed: u64) -> (Vec<ArgSpec>, Vec<V>, [u32; 3]) {
    let bm = BLOCK_M;
    let desc = |elem, block: [u32; 2]| ArgSpec::TensorDesc {
        elem,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    let mut spec = vec![ArgSpec::Float(F32), ptr(F32), int(false)];
    spec.extend([desc(F8E5M2, [bm, d]), desc(F8E5M2, [bn, d]), desc(F8E5M2, [d, bn]), desc(F16, [bm, d])]);
    spec.extend([int(false), c(d as i64), c(bm as i64), c(bn as i64), ArgSpec::Constexpr(ConstValue::Bool(causal))]);
    let rows = HEADS * n_ctx;
    let random =
        |s: u64| tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(s), rows * d as usize, F8E5M2);
    let vals = vec![
        V::F32(0.125),
        V::Out(F32, rows),
        V::Int(HEADS as i64),
        V::Desc(F8E5M2, Some(random(seed)), vec![rows as u32, d]),
        V::Desc(F8E5M2, Some(random(seed + 1)), vec![rows as u32, d]),
        V::Desc(F8E5M2, Some(random(seed + 2)), vec![HEADS as u32 * d, n_ctx as u32]),
        V::Desc(F16, None, vec![rows as u32, d]),
        V::Int(n_ctx as i64),
    ];
    (spec, vals, [(n_ctx / bm as usize) as u32, HEADS as u32, 1])
}

/// The loop schedules (`--emit sched`) of the kernel at `spec` on eight warps.
fn schedule(spec: &[ArgSpec], num_stages: u32) -> String {
    let config = KernelConfig { num_warps: 8, num_stages, ..KernelConfig::DEFAULT };
    let spec = Specialization::with_config(spec.to_vec(), config);
    let src = source();
    let ks =
        tessel::KernelSource { file: "attn_fp8_ws.py", source: &src, kernel: "attn_fp8_ws", spec: &spec, module: None };
    match tessel::pipeline::run(&ks, Target::Sm90a, Stage::Sched, None, &mut Default::default()) {
        Ok(out) => out.text(),
        Err(e) => panic!("{e}"),
    }
}

/// The worst relative error between the simulator's outputs and the interpreter's (every element written).
fn worst(outs: Vec<(Vec<f64>, Vec<f64>)>) -> f64 {
    let mut worst: f64 = 0.0;
    for (got, want) in outs {
        let (mut num, mut den) = (0.0, 0.0);
        for (i, (&g, &r)) in got.iter().zip(&want).enumerate() {
            assert!(g.is_finite() && r.is_finite(), "element {i}: simulated {g}, interpreter {r}");
            num += (g - r) * (g - r);
            den += r * r;
        }
        worst = worst.max((num / den.max(f64::MIN_POSITIVE)).sqrt());
    }
    worst
}

/// Three row blocks per head: the causal split loop runs 0, 2 and 4 iterations (a ring of 3 slots wrapping),
/// the non-causal one 6. Head dims 64 and 128 (tutorial 06's fp8 tables); the last case's shared memory (144 KiB)
/// holds one CTA per SM, so its producer is a warpgroup that gives the consumers its registers (`setmaxnreg`).
#[test]
fn split_fp8_attention_matches_the_interpreter() {
    for (d, bn, stages, causal, seed) in
        [(64, 64, 3, false, 31), (64, 64, 3, true, 41), (128, 64, 3, true, 43), (128, 128, 4, true, 47)]
    {
        let (spec, vals, grid) = case(384, d, bn, causal, seed);
        let sched = schedule(&spec, stages);
        assert!(sched.contains("warp-specialized"), "{sched}");
        let producer = if stages == 4 { "a producer warpgroup" } else { "a producer warp " };
        assert!(sched.contains(producer), "{sched}");
        let outs = run_on(&source(), "attn_fp8_ws", spec, &opts(stages), &vals, grid).unwrap_or_else(|e| panic!("{e}"));
        let err = worst(outs);
        assert!(err < 1e-3, "fp8 attention, head dim {d}, BLOCK_N {bn}, causal = {causal}: {err}");
    }
}

/// The split kernel's PTX with the producer's wait for a free slot answered at once: nothing throttles it, so its
/// copies lap the ring and two of them fill one slot with nothing ordering them, which the simulator reports (the
/// unbroken PTX runs clean, so the refusal is the edit's).
#[test]
fn a_producer_that_does_not_wait_for_a_free_slot_is_refused() {
    let (spec, vals, grid) = case(512, 64, 64, false, 51);
    let run = |edit: &dyn Fn(&str) -> String| {
        simulate_broken(&source(), "attn_fp8_ws", spec.clone(), &opts(3), &vals, grid, edit)
    };
    assert_eq!(run(&|p| p.to_string()), Ok(()), "the unbroken PTX");
    let no_wait = |ptx: &str| skip_wait(ptx, "\n$L_ws_worker", 0);
    let err = run(&no_wait).unwrap_err();
    assert!(err.contains("an asynchronous copy completing on the mbarrier at shared"), "{err}");
    assert!(err.contains("write different values without a barrier between"), "{err}");
}
