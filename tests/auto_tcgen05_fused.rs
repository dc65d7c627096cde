//! A fused persistent matmul (`tl.range(..., flatten=True)`: the tile loop and its K loop one loop, the
//! epilogue in the `if` that ends a tile) on sm_100a: its tcgen05 MMA stays in flight across K steps, the
//! epilogue waiting for the tile's last MMA itself (`sched/src/mma_flight.rs`), one iteration late, beside the
//! next tile's first MMA, which accumulates into the other of two tensor-memory buffers
//! (`sched/src/acc_overlap.rs`); the PTX simulator equals the interpreter, which equals the float64 product, on
//! ragged shapes with fewer programs than tiles (three tiles each: a buffer is reused). Where the ring
//! buffer the MMA in flight costs does not fit in shared memory, the compiler keeps the loop and waits for each
//! MMA instead (`src/pipeline.rs`).

mod common;
mod sim_common;

use common::{assemble, c, int, ptr};
use sim_common::{RunOptions, V, run_on};
use tessel::lang::elab::{ArgSpec, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::F16;
use tessel::tile::{KernelConfig, Target};

/// Written for this test: program p takes tiles p, p + PROGRAMS, ... of C = A @ B (row-major, fp16 in and out, f32 accumulation).
const FUSED: &str = r#"
import triton
import triton.language as tl

@triton.jit
def fused_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 PROGRAMS: tl.constexpr):
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for tile in tl.range(tl.program_id(0), tiles, PROGRAMS, flatten=True):
        rm = (tile // tiles_n) * BM + tl.arange(0, BM)
        rn = (tile % tiles_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, K, BK):
            rk = k + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))
"#;

/// M, N and K multiples of 16 (as Triton's launcher specializes them here), the tile and the programs.
fn spec((bm, bn, bk): (u32, u32, u32), programs: i64) -> Vec<ArgSpec> {
    vec![
        ptr(F16),
        ptr(F16),
        ptr(F16),
        int(true),
        int(true),
        int(true),
        c(bm as i64),
        c(bn as i64),
        c(bk as i64),
        c(programs),
    ]
}

fn ptx(tile: (u32, u32, u32), warps: u32, stages: u32) -> String {
    ptx_of(FUSED, tile, warps, stages)
}

fn ptx_of(source: &str, tile: (u32, u32, u32), warps: u32, stages: u32) -> String {
    let sp = Specialization::with_config(
        spec(tile, 148),
        KernelConfig { num_warps: warps, num_stages: stages, ..KernelConfig::DEFAULT },
    );
    let ks = tessel::KernelSource { file: "fused.py", source, kernel: "fused_matmul", spec: &sp, module: None };
    match tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => kernel.ptx,
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => panic!("{tile:?} on {warps} warps, {stages} stages: {e}"),
    }
}

/// The tensor-memory columns the kernel allocates (`tcgen05.alloc ..., N;`).
fn tmem_columns(ptx: &str) -> u32 {
    let line = ptx.lines().find(|l| l.contains("tcgen05.alloc")).expect("a tensor-memory allocation");
    line.trim_end().trim_end_matches(';').rsplit(' ').next().and_then(|n| n.parse().ok()).expect("a column count")
}

/// The bytes of shared memory the PTX says the kernel takes.
fn smem_bytes(ptx: &str) -> u32 {
    let line = ptx.lines().find(|l| l.contains("bytes per CTA")).expect("a shared-memory total");
    line.split_whitespace().find_map(|w| w.parse().ok()).expect("a number")
}

#[test]
fn fused_persistent_matmul_keeps_its_mma_in_flight() {
    let (bm, bn, bk) = (128u32, 128u32, 64u32);
    // Two programs over 2x3 and 3x2 tiles, K of 3 and 4 steps with a partial last one, and of one step (every
    // iteration ends a tile).
    for (m, n, k) in [(208usize, 272usize, 176usize), (272, 144, 208), (272, 144, 48)] {
        let mut rng = tessel_math::testing::Rng::new((m + n + k) as u64);
        let (a, b) =
            (tessel::tile::testing::vec_of(&mut rng, m * k, F16), tessel::tile::testing::vec_of(&mut rng, k * n, F16));
        let vals = [
            V::Buf(F16, a.clone()),
            V::Buf(F16, b.clone()),
            V::Out(F16, m * n),
            V::Int(m as i64),
            V::Int(n as i64),
            V::Int(k as i64),
        ];
        let opts = RunOptions { file: "fused.py", target: Target::Sm100a, num_warps: 4, num_stages: 3, poison: true };
        let what = format!("{m}x{n}x{k}");
        let outs = run_on(FUSED, "fused_matmul", spec((bm, bn, bk), 2), &opts, &vals, [2, 1, 1])
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        assert_eq!(sim, interp, "{what}: simulator against interpreter");
        for i in 0..m * n {
            let want: f64 = (0..k).map(|j| a[i / n * k + j] * b[j * n + i % n]).sum();
            assert!(
                (interp[i] - want).abs() <= 1e-3 * want.abs() + 1e-3,
                "{what}: C[{i}] = {}, want {want}",
                interp[i]
            );
        }
    }
    let p = ptx((bm, bn, bk), 4, 3);
    assert!(p.contains("%mma_bars"), "one MMA in flight across the fused loop");
    assert_eq!(tmem_columns(&p), 256, "two 128-column accumulators");
    // `disallow_acc_multi_buffer=True` keeps one accumulator, its epilogue where it is written.
    let one =
        ptx_of(&FUSED.replace("flatten=True", "flatten=True, disallow_acc_multi_buffer=True"), (bm, bn, bk), 4, 3);
    assert!(one.contains("%mma_bars"), "the MMA still in flight");
    assert_eq!(tmem_columns(&one), 128, "one accumulator with disallow_acc_multi_buffer");
    assemble("fused_matmul_128x128x64", &p, "sm_100a");
}

/// 128x256x64 tiles at 4 stages: with the MMA in flight the rings would take 4 buffers (192 KiB) beside the
/// epilogue's 64 KiB conversion scratch, more than a CTA's 227 KiB; the kernel compiles with 3 buffers and each K
/// step waits for its MMA. At 3 stages the MMA stays in flight.
#[test]
fn an_mma_in_flight_that_does_not_fit_is_waited_for_instead() {
    let tight = ptx((128, 256, 64), 4, 4);
    assert!(!tight.contains("%mma_bars"), "no MMA in flight at 4 stages");
    assert!(smem_bytes(&tight) <= 232448, "{} bytes", smem_bytes(&tight));
    assemble("fused_matmul_128x256x64_s4", &tight, "sm_100a");
    let roomy = ptx((128, 256, 64), 4, 3);
    assert!(roomy.contains("%mma_bars"), "one MMA in flight at 3 stages");
    assemble("fused_matmul_128x256x64_s3", &roomy, "sm_100a");
}
