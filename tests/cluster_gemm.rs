//! `examples/gluon/matmul_cluster.py` (the persistent Hopper GEMM on clusters: A and C split along M over the
//! CTAs, B multicast to all of them, ring slots released to every CTA by `mbarrier.arrive(..., cta_mask=)`)
//! without a GPU: the interpreter against a float64 product on ragged sizes, a wrong `cta_mask` caught as a
//! named deadlock, the PTX's cluster forms through ptxas, and the PTX on the simulator against the interpreter.
//! The GPU check (and its sanitizers) is `CTAS=2 bash bench/gluon_gemm.sh check`.

mod cli_common;
mod common;
mod sim_common;

use cli_common::{scratch, tessel};
use common::int;
use sim_common::{RunOptions, V, run_on_ctas, simulate_broken_on_ctas};
use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::F16;
use tessel::tile::Target;

const KERNEL: &str = "matmul_cluster_kernel";

/// The kernel's signature for clusters of `ctas` CTAs of `bm` rows each, with `bn x bk` blocks: A and C split
/// along M (one `cga_layout` basis per rank bit), B whole in every CTA.
fn signature(ctas: u32, bm: u32, bn: u32, bk: u32) -> String {
    let bits = ctas.trailing_zeros();
    let split: Vec<String> = (0..bits).map(|i| format!("[{},0]", 1 << i)).collect();
    let whole: Vec<&str> = (0..bits).map(|_| "[0,0]").collect();
    let nv =
        |cga: &str| format!("NVMMASharedLayout(swizzle_byte_width=128,element_bitwidth=16,rank=2,cga_layout=[{cga}])");
    let (split, whole) = (nv(&split.join(",")), nv(&whole.join(",")));
    let tm = ctas * bm;
    format!(
        "tensordesc<fp16[{tm},{bk}],{split}>,tensordesc<fp16[{bk},{bn}],{whole}>,tensordesc<fp16[{tm},{bn}],{split}>,\
         i32,i32,i32"
    )
}

/// One GEMM shape: M, N, K, clusters of `ctas` CTAs with `bm` rows each, ring depth, programs.
struct Case {
    m: usize,
    n: usize,
    k: usize,
    ctas: u32,
    bm: u32,
    stages: u32,
    grid: u32,
}

/// `tessel run --interpret` of `file`'s kernel on `case` (64x64 B blocks, 4 warps), C poisoned with NaN first,
/// its buffers saved into `dir`: (exit status, stdout, stderr).
fn run(file: &str, case: &Case, dir: &std::path::Path) -> (i32, String, String) {
    let Case { m, n, k, ctas, bm, stages, grid } = *case;
    let tm = ctas * bm;
    tessel(&[
        "run",
        "--interpret",
        &format!("{file}::{KERNEL}"),
        "--signature",
        &signature(ctas, bm, 64, 64),
        "--num-ctas",
        &ctas.to_string(),
        "--const",
        "GROUP_M=2",
        "--const",
        &format!("STAGES={stages}"),
        "--num-warps",
        "4",
        "--grid",
        &grid.to_string(),
        "--arg",
        &format!("a=randn:{m}x{k}:fp16"),
        "--arg",
        &format!("b=randn:{k}x{n}:fp16"),
        "--arg",
        &format!("c=fill:nan:{m}x{n}:fp16"),
        "--arg",
        &format!("a_desc=desc:a:block={tm}x64"),
        "--arg",
        "b_desc=desc:b:block=64x64",
        "--arg",
        &format!("c_desc=desc:c:block={tm}x64"),
        "--arg",
        &format!("M={m}"),
        "--arg",
        &format!("N={n}"),
        "--arg",
        &format!("K={k}"),
        "--out-dir",
        dir.to_str().unwrap(),
    ])
}

/// Ragged M, N and K (rows 16-byte aligned, as TMA needs), fewer clusters than tiles, rings of 2 and 3, K shorter
/// than a block, clusters of 2 and 4 CTAs: every element of C is the float64 product of the inputs the run saved.
#[test]
fn the_cluster_gemm_matches_a_float64_product() {
    let dir = scratch("cluster-gemm-f64");
    let cases = [
        Case { m: 300, n: 200, k: 200, ctas: 2, bm: 64, stages: 3, grid: 3 },
        Case { m: 130, n: 72, k: 40, ctas: 2, bm: 64, stages: 2, grid: 1 },
        Case { m: 520, n: 136, k: 136, ctas: 4, bm: 64, stages: 2, grid: 2 },
    ];
    for case in &cases {
        let (m, n, k) = (case.m, case.n, case.k);
        let (code, out, err) = run("examples/gluon/matmul_cluster.py", case, &dir);
        assert_eq!(code, 0, "{m}x{n}x{k} on {} CTAs: {err}", case.ctas);
        let read = |f: &str| tessel::npy::read(&std::fs::read(dir.join(f)).unwrap()).unwrap().to_f64();
        let (a, b, c) = (read("a.npy"), read("b.npy"), read("c.npy"));
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                let got = c[i * n + j];
                // fp32 accumulation, one fp16 rounding of the result.
                assert!(
                    (got - want).abs() <= 1e-3 * want.abs() + 1e-2,
                    "{m}x{n}x{k} on {} CTAs: c[{i}, {j}] = {got}, want {want}\n{out}",
                    case.ctas
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A consumer that releases its ring slot only to its own CTA (`cta_mask=0`) while each `empty` barrier counts
/// one release per CTA: the loader's second pass over the ring waits forever, and the interpreter names the
/// barrier, the phase and what it still lacks instead of hanging.
#[test]
fn a_release_that_misses_the_peers_is_a_named_deadlock() {
    let dir = scratch("cluster-gemm-mask");
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/gluon/matmul_cluster.py")).unwrap();
    let broken = src.replace("cta_mask=ALL_PEERS", "cta_mask=0");
    assert_eq!(broken.matches("cta_mask=0").count(), 2, "both releases edited");
    std::fs::write(dir.join("matmul_cluster.py"), broken).unwrap();
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/gluon/matmul.py"), dir.join("matmul.py")).unwrap();
    let file = dir.join("matmul_cluster.py");
    let case = Case { m: 128, n: 64, k: 256, ctas: 2, bm: 64, stages: 2, grid: 1 };
    let (code, _, err) = run(file.to_str().unwrap(), &case, &dir);
    assert_ne!(code, 0, "the broken release ran to the end");
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("mbarrier `empty[0]`") && err.contains("lacks 1 arrival"), "{err}");
    assert!(err.contains("mbarrier.wait(empty.index(s)"), "the loader's wait, with its source: {err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The PTX of 2- and 4-CTA clusters: the cluster shape is declared, each CTA holds its part of A and C and all of
/// B, B arrives by one multicast copy, each release reaches every CTA's barrier through `mapa`, the barriers'
/// waits acquire at cluster scope, a cluster barrier follows the initialization and precedes the exit; ptxas
/// accepts it for sm_90a.
#[test]
fn the_cluster_gemm_ptx_has_the_cluster_forms_and_assembles() {
    for (ctas, warps, bm) in [(2u32, 8u32, 128u32), (4, 4, 64)] {
        let (code, ptx, err) = tessel(&[
            "compile",
            &format!("examples/gluon/matmul_cluster.py::{KERNEL}"),
            "--signature",
            &signature(ctas, bm, 256, 64),
            "--num-ctas",
            &ctas.to_string(),
            "--const",
            "GROUP_M=8",
            "--const",
            "STAGES=3",
            "--num-warps",
            &warps.to_string(),
            "--emit",
            "ptx",
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(ptx.contains(&format!(".reqnctapercluster {ctas}, 1, 1")), "{ptx}");
        // Per CTA and stage: bm x 64 of A, 64 x 256 of B (fp16).
        let (a, b) = (3 * bm * 64 * 2, 3 * 64 * 256 * 2);
        assert!(ptx.contains(&format!("%a_bufs {a} bytes")), "A: each CTA holds its {bm} rows\n{ptx}");
        assert!(ptx.contains(&format!("%b_bufs {b} bytes")), "B: each CTA holds all of it\n{ptx}");
        // B's 256 columns in four 64-column boxes (128-byte swizzle), each multicast, dealt out over the CTAs
        // (box i by the CTA at position i % ctas: `setp.eq.u32 %p, position, i % ctas` two lines before it); A's
        // rows by a plain copy.
        let lines: Vec<&str> = ptx.lines().collect();
        let issuers: Vec<u32> = (0..lines.len())
            .filter(|&i| lines[i].contains(".multicast::cluster ["))
            .map(|i| {
                let setp = lines[i - 2].trim();
                assert!(setp.starts_with("setp.eq.u32"), "{setp}");
                setp.trim_end_matches(';').rsplit(", ").next().unwrap().parse().unwrap()
            })
            .collect();
        assert_eq!(issuers, (0..4).map(|i| i % ctas).collect::<Vec<_>>(), "{ptx}");
        assert_eq!(
            ptx.matches("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [").count(),
            1
        );
        // Two releases in the source (in the loop, after it), each reaching this CTA's barrier and every peer's,
        // at CTA scope: no L1 invalidation or cluster-wide membar per step (see `remote_arrive`).
        let remote = ptx.matches("mbarrier.arrive.shared::cluster.b64").count();
        assert_eq!(remote, 2 * (ctas as usize - 1), "{ptx}");
        assert_eq!(ptx.matches("mapa.shared::cluster.u32").count(), remote, "{ptx}");
        assert!(!ptx.contains(".acquire.cluster") && !ptx.contains("arrive.release.cluster"), "{ptx}");
        assert_eq!(ptx.matches("barrier.cluster.arrive").count(), 2, "after the init, before the exit\n{ptx}");
        // The meeting after the initialization is at the warp_specialize hand-off, after the workers (which skip
        // the top-level code before it) have joined the CTA's `bar.sync 0`: before it, it would wait for them
        // forever (the first device run hung so).
        let handoff = ptx.find("$L_ws_handoff").expect("the hand-off");
        let meeting = ptx.find("barrier.cluster.arrive").unwrap();
        assert!(handoff < meeting, "the cluster barrier before the workers join\n{ptx}");
        common::assemble(&format!("matmul_cluster_{ctas}"), &ptx, "sm_90a");
    }
}

/// The cluster GEMM as the simulator tests run it: 2 CTAs of 64 rows, 64 x 64 blocks of B, a ring of 2, 4
/// warps; 200 x 136 x 200 (2 x 3 tiles of 128 x 64 over 2 clusters, K wrapping the ring). (source, spec, inputs,
/// options).
fn sim_case() -> (String, Vec<ArgSpec>, Vec<V>, RunOptions<'static>) {
    let source =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/gluon/matmul_cluster.py")).unwrap();
    let (ctas, bm, bn, bk) = (2u32, 64u32, 64u32, 64u32);
    let desc = |block: [u32; 2], cga: &str| ArgSpec::TensorDesc {
        elem: F16,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: Some(sim_common::scaled::nvmma(&format!(
            "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, cga_layout={cga})"
        ))),
    };
    let tm = ctas * bm;
    let two = || ArgSpec::Constexpr(ConstValue::Int(2));
    let spec = vec![
        desc([tm, bk], "[[1, 0]]"),
        desc([bk, bn], "[[0, 0]]"),
        desc([tm, bn], "[[1, 0]]"),
        int(false),
        int(false),
        int(false),
        two(),
        two(),
    ];
    let (m, n, k) = (200usize, 136usize, 200usize);
    let random = |len, seed| tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(seed), len, F16);
    let vals = vec![
        V::Desc(F16, Some(random(m * k, 31)), vec![m as u32, k as u32]),
        V::Desc(F16, Some(random(k * n, 32)), vec![k as u32, n as u32]),
        V::Desc(F16, None, vec![m as u32, n as u32]),
        V::Int(m as i64),
        V::Int(n as i64),
        V::Int(k as i64),
    ];
    let opts = RunOptions {
        file: "examples/gluon/matmul_cluster.py",
        target: Target::Sm90a,
        num_warps: 4,
        num_stages: 3,
        poison: true,
    };
    (source, spec, vals, opts)
}

/// The PTX simulator (written from the ISA, apart from codegen) runs the cluster GEMM's PTX: two CTAs per
/// cluster scheduled apart, the multicast copies and the releases on the peer's barriers delivered when their CTA
/// stops, every shared-memory access checked by happens-before within its CTA; every element of C is written and
/// within an fp16 rounding of the interpreter's, ragged, with the ring wrapping and fewer clusters than tiles.
#[test]
fn the_cluster_gemm_agrees_with_the_interpreter_on_the_simulator() {
    let (source, spec, vals, opts) = sim_case();
    let outs = run_on_ctas(&source, KERNEL, spec, &opts, 2, &vals, [2, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    let n = 136;
    assert!(interp.iter().all(|x| x.is_finite()), "the interpreter wrote every element");
    // Both accumulate in fp32, each in its own order (the simulator in wgmma's k16 steps): one fp16 rounding of
    // the result apart at most.
    for (i, (s, w)) in sim.iter().zip(interp).enumerate() {
        assert!((s - w).abs() <= w.abs() / 1024.0 + 1e-3, "c[{}, {}]: simulator {s}, interpreter {w}", i / n, i % n);
    }
}

/// The cluster GEMM's PTX without its arrivals on the peer's barriers: each CTA's `empty` barrier gets only its
/// own release, and the simulator reports the loader's wait as a deadlock instead of running on.
#[test]
fn the_simulator_catches_releases_that_miss_the_peer() {
    let (source, spec, vals, opts) = sim_case();
    let drop_remote = |ptx: &str| {
        let kept: Vec<&str> = ptx.lines().filter(|l| !l.contains("mbarrier.arrive.shared::cluster.b64")).collect();
        assert!(kept.len() < ptx.lines().count(), "the PTX has remote arrivals");
        kept.join("\n")
    };
    let err = simulate_broken_on_ctas(&source, KERNEL, spec, &opts, 2, &vals, [2, 1, 1], &drop_remote).unwrap_err();
    assert!(err.contains("deadlock"), "{err}");
    // The loader warp (warp 4) of each CTA, waiting on an `empty` barrier that lacks the peer's release.
    assert!(err.contains("CTA 1 waits: warp 4") && err.contains("lacks 1 arrival(s)"), "{err}");
}
