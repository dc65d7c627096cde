//! Automatic warp specialization of a fused persistent loop on sm_90a (`tl.range(..., flatten=True,
//! warp_specialize=True)`, `examples/tma_matmul.py::matmul_kernel_persistent`). The fused loop sits in the
//! elaborator's `if k_tiles > 0` (the `else` runs the unfused nest, which stores zero tiles); the split wraps
//! that `if`, so the producer re-evaluates its condition and walks every tile's K steps ahead of the consumers,
//! across tile boundaries, while the kernel's warps run the wgmmas and each tile's epilogue.
//!
//! On the PTX simulator against the interpreter (every shared-memory access checked by happens-before, the
//! partitions run as independent warps; outputs within one fp16 ulp, wgmma summing in its own order), with fresh
//! random inputs, poisoned outputs and ragged M, N and K; the interpreter against the float64 product; ptxas when
//! there is one.

mod common;
mod sim_common;

use std::path::Path;

use common::{assemble, c, int};
use sim_common::{RunOptions, V, run_on, simulate_broken, skip_wait};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::F16;
use tessel::tile::{KernelConfig, Target};

/// Programs the tests launch (the kernel's NUM_SMS): fewer than the tiles, so each program walks several.
const PROGRAMS: u32 = 3;

fn source() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tma_matmul.py")).unwrap()
}

fn cb(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

/// `matmul_kernel_persistent`'s specialization: blocks of `tile`, GROUP_M 2, NUM_SMS [`PROGRAMS`], fused, split.
fn spec((bm, bn, bk): (u32, u32, u32)) -> Vec<ArgSpec> {
    let desc = |block: [u32; 2]| ArgSpec::TensorDesc {
        elem: F16,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    let mut s = vec![desc([bm, bk]), desc([bk, bn]), desc([bm, bn]), int(false), int(false), int(false)];
    s.extend([c(2), c(PROGRAMS as i64), cb(true), cb(true)]);
    s
}

fn opts(warps: u32, stages: u32) -> RunOptions<'static> {
    RunOptions { file: "tma_matmul.py", target: Target::Sm90a, num_warps: warps, num_stages: stages, poison: true }
}

fn compiled(stage: Stage, tile: (u32, u32, u32), warps: u32) -> Output {
    let source = source();
    let sp = Specialization::with_config(
        spec(tile),
        KernelConfig { num_warps: warps, num_stages: 3, ..KernelConfig::DEFAULT },
    );
    let ks = tessel::KernelSource {
        file: "tma_matmul.py",
        source: &source,
        kernel: "matmul_kernel_persistent",
        spec: &sp,
        module: None,
    };
    tessel::pipeline::run(&ks, Target::Sm90a, stage, None, &mut Default::default())
        .unwrap_or_else(|e| panic!("{tile:?} on {warps} warps: {e}"))
}

/// The inputs of an `m x n x k` product and the float64 product.
fn inputs(m: usize, n: usize, k: usize, seed: u64) -> ([V; 6], Vec<f64>) {
    let ([a, b, c], want) = sim_common::fp16_matmul_descs(m, n, k, seed);
    ([a, b, c, V::Int(m as i64), V::Int(n as i64), V::Int(k as i64)], want)
}

/// The schedule says the fused loop was split, with which producer.
#[test]
fn the_fused_persistent_loop_is_split_on_sm90a() {
    for (tile, warps, producer) in [((128, 256, 64), 8, "a producer warpgroup"), ((64, 64, 32), 4, "a producer warp")] {
        let sched = compiled(Stage::Sched, tile, warps).text();
        let head = sched.lines().find(|l| l.contains("scheduled 3")).unwrap_or_else(|| panic!("{sched}"));
        assert!(head.contains("warp-specialized") && head.contains(producer), "{tile:?}: {head}");
    }
}

/// Ragged shapes (TMA reads zeros past the edges and writes nothing there), programs walking several tiles,
/// K loops that wrap the ring, one shorter than the ring, one of a single step, and K = 0 (the unfused `else`:
/// zero tiles). The simulator equals the interpreter (to an fp16 ulp); the interpreter equals the float64
/// product.
#[test]
fn split_fused_persistent_matmul_matches_the_interpreter_and_float64() {
    let cases = [
        (200, 136, 200, (64u32, 64u32, 32u32), 4u32, 3u32),
        (130, 72, 40, (64, 64, 32), 4, 4),
        (90, 200, 24, (64, 64, 32), 4, 2),
        (150, 264, 136, (128, 256, 64), 8, 3),
        (70, 40, 0, (64, 64, 32), 4, 3),
    ];
    for (i, (m, n, k, tile, warps, stages)) in cases.into_iter().enumerate() {
        let (vals, want) = inputs(m, n, k, 90 + i as u64);
        let what = format!("{m}x{n}x{k}, tile {tile:?}, {warps} warps, {stages} stages");
        let outs =
            run_on(&source(), "matmul_kernel_persistent", spec(tile), &opts(warps, stages), &vals, [PROGRAMS, 1, 1])
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        // wgmma's f32 sums run in another order than the interpreter's: one fp16 ulp apart at most.
        sim_common::check_fp16_product(&what, sim, interp, &want, true);
    }
}

/// The split's waits taken out, each refused by the simulator: the consumers' wait for a filled slot (their
/// wgmma reads what the producer's copy writes, with nothing ordering the two) and the producer's wait for a
/// released slot (its copies overwrite a slot the consumers may still read).
#[test]
fn a_broken_split_fused_persistent_matmul_is_refused() {
    let tile = (64u32, 64u32, 32u32);
    let (vals, _) = inputs(130, 72, 160, 5);
    let run = |edit: &dyn Fn(&str) -> String| {
        simulate_broken(&source(), "matmul_kernel_persistent", spec(tile), &opts(4, 3), &vals, [PROGRAMS, 1, 1], edit)
    };
    assert_eq!(run(&|p| p.to_string()), Ok(()), "the unbroken PTX");
    let err = run(&|p| skip_wait(p, "\n$L_ws_default", 0)).unwrap_err();
    assert!(err.contains("asynchronous copy") && err.contains("without a barrier"), "no ready wait: {err}");
    let err = run(&|p| skip_wait(p, "\n$L_ws_worker", 0)).unwrap_err();
    assert!(err.contains("cp.async.bulk.tensor"), "no empty wait: {err}");
}

/// ptxas accepts the split kernels, and the producer warpgroup gives its registers to the consumers.
#[test]
fn split_fused_persistent_matmul_assembles() {
    for (tile, warps) in [((128u32, 256u32, 64u32), 8u32), ((64, 64, 32), 4)] {
        let Output::Ptx { kernel, .. } = compiled(Stage::Ptx, tile, warps) else { unreachable!() };
        let p = kernel.ptx;
        assert!(p.contains("$L_ws_default"), "{tile:?}: no partitions");
        if warps == 8 {
            assert!(p.contains("setmaxnreg.dec") && p.contains("setmaxnreg.inc"), "{tile:?}: no reallocation");
        }
        assemble(&format!("ws_persistent_{}x{}x{}_w{warps}", tile.0, tile.1, tile.2), &p, "sm_90a");
    }
}
