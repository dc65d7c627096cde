//! Thread-block clusters (`num_ctas` > 1) end to end (`tests/kernels/gluon_clusters.py`): a row softmax and
//! row sums whose tiles the layouts' cga bases spread over the CTAs of a cluster, compiled for sm_90a (and
//! sm_100a), assembled by ptxas when there is one (`TESSEL_REQUIRE_PTXAS` makes it required), equal to float64 in
//! the interpreter on masked partial tiles, and run on the PTX simulator's clusters against the interpreter with
//! the outputs poisoned; on a GPU (skipped without one), the same against the interpreter; and the refusals.

#[path = "cluster_gpu/mod.rs"]
mod cluster_gpu;
#[allow(dead_code)] // the helpers this file does not use
mod common;
#[path = "sim_common/mod.rs"]
mod sim_common;

use common::{assemble, c, int};
use sim_common::{RunOptions, V, run_on_ctas};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::*;
use tessel::tile::{KernelConfig, Target};
use tessel_math::testing::Rng;

const FILE: &str = "tests/kernels/gluon_clusters.py";

fn source() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE)).unwrap()
}

fn layout(text: &str) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Expr(text.to_string()))
}

/// A 1-D blocked layout of `spt` elements per thread over `warps` warps, its CTA tiles spread over `ctas` CTAs in
/// the order of `cga` (each a power of two: the CTA tile the CTA bit selects).
fn blocked_1d(spt: u32, warps: u32, cga: &[u32]) -> String {
    let bases: Vec<String> = cga.iter().map(|b| format!("[{b}]")).collect();
    format!("gl.BlockedLayout([{spt}], [32], [{warps}], [0], cga_layout=[{}])", bases.join(", "))
}

fn softmax_args(block: u32, lay: &str) -> Vec<ArgSpec> {
    vec![
        ArgSpec::Pointer(F32, true),
        ArgSpec::Pointer(F32, true),
        int(false),
        int(false),
        int(false),
        c(block as i64),
        layout(lay),
    ]
}

pub(crate) fn ptx_for(
    kernel: &str,
    args: Vec<ArgSpec>,
    warps: u32,
    ctas: u32,
    target: Target,
) -> Result<String, String> {
    let src = source();
    let spec =
        Specialization::with_config(args, KernelConfig { num_warps: warps, num_ctas: ctas, ..KernelConfig::DEFAULT });
    let ks = tessel::KernelSource { file: FILE, source: &src, kernel, spec: &spec, module: None };
    match tessel::pipeline::run(&ks, target, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => Ok(kernel.ptx),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => Err(e.to_string()),
    }
}

/// The float64 softmax of each row's first `n` elements of `x` (rows of `stride`).
fn softmax_f64(x: &[f64], rows: usize, n: usize, stride: usize) -> Vec<Vec<f64>> {
    (0..rows)
        .map(|r| {
            let row = &x[r * stride..r * stride + n];
            let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = row.iter().map(|v| (v - m).exp()).collect();
            let s: f64 = e.iter().sum();
            e.iter().map(|v| v / s).collect()
        })
        .collect()
}

/// The configurations the softmax is checked at: (block, spt, warps, cga bases); the cga bases in units of a CTA
/// tile, the second one permuted (CTA 1 holds the third quarter).
const SOFTMAX_CONFIGS: [(u32, u32, u32, &[u32]); 7] = [
    (256, 4, 1, &[1]),
    (512, 2, 2, &[1, 2]),
    (1024, 1, 4, &[2, 1]),
    (2048, 2, 1, &[1, 2, 4]),
    (64, 1, 1, &[1]),
    // Fewer elements than the layout covers: lanes hold copies.
    (64, 4, 1, &[1]),
    (4096, 1, 2, &[1, 2, 4, 8]),
];

#[test]
fn cluster_softmax_assembles_for_sm_90a_and_sm_100a() {
    for (block, spt, warps, cga) in SOFTMAX_CONFIGS {
        let ctas = 1 << cga.len();
        let lay = blocked_1d(spt, warps, cga);
        for (target, arch) in [(Target::Sm90a, "sm_90a"), (Target::Sm100a, "sm_100a")] {
            let ptx = ptx_for("cluster_row_softmax", softmax_args(block, &lay), warps, ctas, target)
                .unwrap_or_else(|e| panic!("{lay}: {e}"));
            for needle in [
                format!(".explicitcluster\n.reqnctapercluster {ctas}, 1, 1\n"),
                "%clusterid.x".into(),
                "%cluster_ctarank".into(),
                "mapa.shared::cluster.u32".into(),
                "ld.shared::cluster.b32".into(),
                "barrier.cluster.arrive.release.aligned;\n    barrier.cluster.wait.acquire.aligned;".into(),
            ] {
                assert!(ptx.contains(needle.as_str()), "{needle}:\n{ptx}");
            }
            assert!(!ptx.contains("%ctaid"), "a program is a cluster:\n{ptx}");
            // Two reductions, each two cluster barriers (partials published; read before the next use).
            assert_eq!(ptx.matches("barrier.cluster.wait").count(), 4, "{ptx}");
            assemble(&format!("softmax_{block}_{warps}_{ctas}"), &ptx, arch);
        }
    }
}

#[test]
fn cluster_softmax_equals_float64_and_the_simulator_agrees() {
    let (rows, stride) = (3usize, 4200usize);
    for (k, (block, spt, warps, cga)) in SOFTMAX_CONFIGS.into_iter().enumerate() {
        let ctas = 1 << cga.len();
        let lay = blocked_1d(spt, warps, cga);
        // A masked partial tile: fewer columns than the block (and a full one for the smallest block).
        let n = if block == 64 { 64 } else { block as usize - 37 };
        let x: Vec<f64> = Rng::new(40 + k as u64).vec(rows * stride).into_iter().map(|v| 4.0 * v).collect();
        let vals = [
            V::Buf(F32, x.clone()),
            V::Out(F32, rows * stride),
            V::Int(n as i64),
            V::Int(stride as i64),
            V::Int(stride as i64),
        ];
        let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: warps, num_stages: 1, poison: true };
        let outs = run_on_ctas(
            &source(),
            "cluster_row_softmax",
            softmax_args(block, &lay),
            &opts,
            ctas,
            &vals,
            [rows as u32, 1, 1],
        )
        .unwrap_or_else(|e| panic!("{lay}: {e}"));
        let (sim, interp) = &outs[0];
        let want = softmax_f64(&x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>(), rows, n, stride);
        for r in 0..rows {
            for j in 0..stride {
                let (s, i) = (sim[r * stride + j], interp[r * stride + j]);
                if j < n {
                    let w = want[r][j];
                    assert!((i - w).abs() <= 1e-6 * w.max(1e-3), "{lay} row {r} col {j}: interpreter {i} vs {w}");
                    assert!((s - i).abs() <= 1e-6 * i.max(1e-3), "{lay} row {r} col {j}: simulator {s} vs {i}");
                } else {
                    assert!(i.is_nan() && s.is_nan(), "{lay} row {r} col {j}: written past the mask ({i}, {s})");
                }
            }
        }
    }
}

/// Rows longer than the cluster's tile: running max and sum over chunks (cluster barriers inside loops), and the
/// argmax (a reduction of two operands across the CTAs).
#[test]
fn cluster_reductions_in_loops_agree_with_the_interpreter() {
    let rows = 3usize;
    let configs: [(usize, u32, u32, &[u32]); 3] =
        [(1000, 256, 1, &[1]), (700, 128, 1, &[2, 1]), (3000, 1024, 2, &[1, 2, 4])];
    for (k, (n, block, warps, cga)) in configs.into_iter().enumerate() {
        let ctas = 1 << cga.len();
        let lay = blocked_1d(2, warps, cga);
        let args =
            vec![ArgSpec::Pointer(F32, true), ArgSpec::Pointer(F32, true), int(false), c(block as i64), layout(&lay)];
        let ptx = ptx_for("cluster_online_softmax", args.clone(), warps, ctas, Target::Sm90a)
            .unwrap_or_else(|e| panic!("{lay}: {e}"));
        assemble(&format!("online_softmax_{k}"), &ptx, "sm_90a");
        let x: Vec<f64> = Rng::new(70 + k as u64).vec(rows * n).into_iter().map(|v| 3.0 * v).collect();
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, rows * (n + 1)), V::Int(n as i64)];
        let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: warps, num_stages: 1, poison: true };
        let outs = run_on_ctas(&source(), "cluster_online_softmax", args, &opts, ctas, &vals, [rows as u32, 1, 1])
            .unwrap_or_else(|e| panic!("{lay}: {e}"));
        let (sim, interp) = &outs[0];
        let xf: Vec<f64> = x.iter().map(|&v| v as f32 as f64).collect();
        let want = softmax_f64(&xf, rows, n, n);
        for r in 0..rows {
            for j in 0..n {
                let (s, i, w) = (sim[r * (n + 1) + j], interp[r * (n + 1) + j], want[r][j]);
                assert!((i - w).abs() <= 1e-5 * w.max(1e-3), "{lay} row {r} col {j}: interpreter {i} vs {w}");
                assert!((s - i).abs() <= 1e-5 * i.max(1e-3), "{lay} row {r} col {j}: simulator {s} vs {i}");
            }
            let head = &xf[r * n..r * n + (block as usize).min(n)];
            let arg = head.iter().enumerate().fold(0, |b, (j, &v)| if v > head[b] { j } else { b });
            assert_eq!(interp[r * (n + 1) + n], arg as f64, "{lay} row {r}: argmax");
            assert_eq!(sim[r * (n + 1) + n], arg as f64, "{lay} row {r}: simulated argmax");
        }
    }
}

fn sums_args(bm: u32, bn: u32, lay: &str) -> Vec<ArgSpec> {
    vec![
        ArgSpec::Pointer(F32, true),
        ArgSpec::Pointer(F32, true),
        int(false),
        int(false),
        c(bm as i64),
        c(bn as i64),
        layout(lay),
    ]
}

/// Row sums of a 2-D tile whose columns (and, in the second layout, rows too) are spread over the CTAs: a sliced
/// result that some CTAs hold alike (one of them stores), several warps along the reduced dim.
#[test]
fn cluster_row_sums_agree_with_the_interpreter() {
    let (n_rows, n_cols) = (50usize, 120usize);
    for (bm, bn, warps, ctas, lay) in [
        (32, 128, 4, 2, "gl.BlockedLayout([1, 4], [4, 8], [1, 4], [1, 0], cga_layout=[[0, 1]])"),
        (64, 128, 2, 4, "gl.BlockedLayout([2, 2], [8, 4], [1, 2], [1, 0], cga_layout=[[0, 1], [1, 0]])"),
        (16, 128, 4, 8, "gl.BlockedLayout([1, 1], [2, 16], [2, 2], [1, 0], cga_layout=[[1, 0], [0, 1], [0, 2]])"),
    ] {
        let x: Vec<f64> = Rng::new(9).vec(n_rows * n_cols);
        let grid = [n_rows.div_ceil(bm as usize) as u32, 1, 1];
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, n_rows), V::Int(n_rows as i64), V::Int(n_cols as i64)];
        let ptx = ptx_for("cluster_row_sums", sums_args(bm, bn, lay), warps, ctas, Target::Sm90a)
            .unwrap_or_else(|e| panic!("{lay}: {e}"));
        assemble(&format!("row_sums_{bm}_{ctas}"), &ptx, "sm_90a");
        let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: warps, num_stages: 1, poison: true };
        let outs = run_on_ctas(&source(), "cluster_row_sums", sums_args(bm, bn, lay), &opts, ctas, &vals, grid)
            .unwrap_or_else(|e| panic!("{lay} ({ctas} CTAs): {e}"));
        let (sim, interp) = &outs[0];
        for r in 0..n_rows {
            let want: f64 = (0..n_cols).map(|j| x[r * n_cols + j] as f32 as f64).sum();
            assert!((interp[r] - want).abs() <= 1e-5 * (1.0 + want.abs()), "{lay} row {r}: {} vs {want}", interp[r]);
            assert!(
                (sim[r] - interp[r]).abs() <= 1e-5 * (1.0 + want.abs()),
                "{lay} row {r}: {} vs {}",
                sim[r],
                interp[r]
            );
        }
    }
}

/// The row sums converted before their store: from a layout every CTA holds alike (the sums of columns split
/// over the CTAs) to one whose CTAs split the rows (each CTA reads its part of its own shared memory at an offset
/// of its rank), and between two split layouts of the same CTA bases.
#[test]
fn conversions_within_each_cta_agree_with_the_interpreter() {
    let (n_rows, n_cols) = (50usize, 120usize);
    for (bm, warps, ctas, lay, out) in [
        (
            32,
            4,
            2,
            "gl.BlockedLayout([1, 4], [4, 8], [1, 4], [1, 0], cga_layout=[[0, 1]])",
            "gl.BlockedLayout([1], [32], [4], [0], cga_layout=[[1]])",
        ),
        (
            64,
            2,
            4,
            "gl.BlockedLayout([2, 2], [8, 4], [1, 2], [1, 0], cga_layout=[[0, 1], [1, 0]])",
            "gl.BlockedLayout([1], [32], [2], [0], cga_layout=[[0], [1]])",
        ),
    ] {
        let mut args = sums_args(bm, 128, lay);
        args.push(layout(out));
        let x: Vec<f64> = Rng::new(10).vec(n_rows * n_cols);
        let grid = [n_rows.div_ceil(bm as usize) as u32, 1, 1];
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, n_rows), V::Int(n_rows as i64), V::Int(n_cols as i64)];
        let ptx = ptx_for("cluster_row_sums_to", args.clone(), warps, ctas, Target::Sm90a)
            .unwrap_or_else(|e| panic!("{out}: {e}"));
        assemble(&format!("row_sums_to_{bm}_{ctas}"), &ptx, "sm_90a");
        let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: warps, num_stages: 1, poison: true };
        let outs = run_on_ctas(&source(), "cluster_row_sums_to", args, &opts, ctas, &vals, grid)
            .unwrap_or_else(|e| panic!("{out} ({ctas} CTAs): {e}"));
        let (sim, interp) = &outs[0];
        for r in 0..n_rows {
            let want: f64 = (0..n_cols).map(|j| x[r * n_cols + j] as f32 as f64).sum();
            assert!((interp[r] - want).abs() <= 1e-5 * (1.0 + want.abs()), "{out} row {r}: {} vs {want}", interp[r]);
            assert!(
                (sim[r] - interp[r]).abs() <= 1e-5 * (1.0 + want.abs()),
                "{out} row {r}: {} vs {}",
                sim[r],
                interp[r]
            );
        }
    }
}

/// Side effects on a CTA's own shared memory are every CTA's (a `cp.async` of a layout the CTAs hold alike), those
/// on global memory one CTA's.
#[test]
fn each_cta_stages_its_own_shared_memory() {
    let whole = "gl.BlockedLayout([1], [32], [2], [0], cga_layout=[[0], [0]])";
    let split = "gl.BlockedLayout([1], [32], [2], [0], cga_layout=[[1], [2]])";
    let args = vec![ArgSpec::Pointer(F32, true), ArgSpec::Pointer(F32, true), c(256), layout(whole), layout(split)];
    let x: Vec<f64> = Rng::new(5).vec(256);
    let vals = [V::Buf(F32, x.clone()), V::Out(F32, 256)];
    let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 2, num_stages: 1, poison: true };
    let outs = run_on_ctas(&source(), "cluster_staged_copy", args, &opts, 4, &vals, [1, 1, 1])
        .unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    let want: Vec<f64> = x.iter().map(|&v| 2.0 * (v as f32 as f64)).collect();
    assert_eq!(*interp, want);
    assert_eq!(sim, interp, "simulated PTX vs interpreter");
}

/// `convert_layout` that moves data between CTAs, through distributed shared memory: tiles split by rows to
/// tiles split by columns (and back), over 2 and 4 CTAs; the simulator against the interpreter, and both equal to
/// the input.
#[test]
fn conversions_across_ctas_agree_with_the_interpreter() {
    for (bm, bn, warps, ctas, from, to) in [
        (
            16,
            64,
            1,
            2,
            "gl.BlockedLayout([1, 4], [4, 8], [1, 1], [1, 0], cga_layout=[[1, 0]])",
            "gl.BlockedLayout([1, 4], [4, 8], [1, 1], [1, 0], cga_layout=[[0, 1]])",
        ),
        (
            32,
            64,
            2,
            4,
            "gl.BlockedLayout([2, 1], [8, 4], [2, 1], [0, 1], cga_layout=[[0, 1], [0, 2]])",
            "gl.BlockedLayout([1, 2], [4, 8], [1, 2], [1, 0], cga_layout=[[1, 0], [0, 1]])",
        ),
        (
            64,
            32,
            4,
            4,
            "gl.BlockedLayout([1, 1], [32, 1], [4, 1], [0, 1], cga_layout=[[0, 0], [0, 0]])",
            "gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0], cga_layout=[[1, 0], [2, 0]])",
        ),
        (
            64,
            32,
            4,
            4,
            "gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0], cga_layout=[[1, 0], [2, 0]])",
            "gl.BlockedLayout([1, 1], [32, 1], [4, 1], [0, 1], cga_layout=[[0, 0], [0, 0]])",
        ),
    ] {
        let args = vec![
            ArgSpec::Pointer(F32, true),
            ArgSpec::Pointer(F32, true),
            c(bm as i64),
            c(bn as i64),
            layout(from),
            layout(to),
        ];
        let ptx = ptx_for("cluster_transpose_ctas", args.clone(), warps, ctas, Target::Sm90a)
            .unwrap_or_else(|e| panic!("{from} -> {to}: {e}"));
        // A source every CTA holds whole needs no other CTA's data.
        let across = !from.contains("[[0, 0], [0, 0]]");
        assert_eq!(ptx.contains("convert_layout: across the CTAs of the cluster"), across, "{from} -> {to}:\n{ptx}");
        assemble(&format!("transpose_ctas_{bm}_{ctas}"), &ptx, "sm_90a");
        let x: Vec<f64> = Rng::new(bm as u64).vec(bm * bn);
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, bm * bn)];
        let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: warps, num_stages: 1, poison: true };
        let outs = run_on_ctas(&source(), "cluster_transpose_ctas", args, &opts, ctas, &vals, [1, 1, 1])
            .unwrap_or_else(|e| panic!("{from} -> {to}: {e}"));
        let (sim, interp) = &outs[0];
        let want: Vec<f64> = x.iter().map(|&v| v as f32 as f64).collect();
        assert!(*interp == want, "{from} -> {to}: the interpreter's copy differs");
        assert!(sim == interp, "{from} -> {to}: simulated PTX vs interpreter");
    }
}

/// Atomics on a tensor the CTAs split: each CTA does its own elements, and sees their old values.
#[test]
fn atomics_on_split_tensors_agree_with_the_interpreter() {
    let lay = "gl.BlockedLayout([2], [32], [1], [0], cga_layout=[[1], [2]])";
    let args = vec![ArgSpec::Pointer(F32, true), ArgSpec::Pointer(F32, true), c(256), layout(lay)];
    let ptx = ptx_for("cluster_fetch_add", args.clone(), 1, 4, Target::Sm90a).unwrap_or_else(|e| panic!("{e}"));
    assemble("fetch_add", &ptx, "sm_90a");
    let x: Vec<f64> = Rng::new(3).vec(256);
    let vals = [V::Buf(F32, x.clone()), V::Out(F32, 256)];
    let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 1, num_stages: 1, poison: true };
    let outs =
        run_on_ctas(&source(), "cluster_fetch_add", args, &opts, 4, &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    assert_eq!(*interp, x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>(), "the old values");
    assert_eq!(sim, interp, "simulated PTX vs interpreter");
}

/// A scan along a dim the CTAs do not split: each CTA scans its own rows.
#[test]
fn scans_within_each_cta_agree_with_the_interpreter() {
    let (bm, bn) = (32usize, 64usize);
    let lay = "gl.BlockedLayout([1, 2], [4, 8], [2, 2], [1, 0], cga_layout=[[1, 0], [2, 0]])";
    let args = vec![ArgSpec::Pointer(I32, true), ArgSpec::Pointer(I32, true), c(bm as i64), c(bn as i64), layout(lay)];
    let ptx = ptx_for("cluster_row_cumsum", args.clone(), 4, 4, Target::Sm90a).unwrap_or_else(|e| panic!("{e}"));
    assemble("row_cumsum", &ptx, "sm_90a");
    let x: Vec<f64> = (0..bm * bn).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
    let vals = [V::Buf(I32, x.clone()), V::Out(I32, bm * bn)];
    let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 4, num_stages: 1, poison: true };
    let outs = run_on_ctas(&source(), "cluster_row_cumsum", args, &opts, 4, &vals, [1, 1, 1])
        .unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    let want: Vec<f64> = (0..bm * bn).map(|i| (i / bn * bn..=i).map(|j| x[j]).sum()).collect();
    assert_eq!(*interp, want);
    assert_eq!(sim, interp, "simulated PTX vs interpreter");
}

#[test]
fn what_clusters_do_not_lower_is_refused_at_the_op() {
    let lay = blocked_1d(1, 1, &[1]);
    let args = vec![ArgSpec::Pointer(F32, true), ArgSpec::Pointer(F32, true), c(64), layout(&lay)];
    let err = ptx_for("cluster_cumsum", args, 1, 2, Target::Sm90a).unwrap_err();
    assert!(err.contains("`scan` on a tensor spread over the CTAs of a cluster"), "{err}");
    assert!(err.contains("gl.cumsum(gl.load(x_ptr + cols), axis=0)"), "the span: {err}");

    // Shared memory spread over the CTAs otherwise than the tensor stored into it: each CTA would hold in shared
    // memory a part it does not hold in registers.
    let args = vec![
        ArgSpec::Pointer(F32, true),
        ArgSpec::Pointer(F32, true),
        c(64),
        layout(&blocked_1d(1, 1, &[])),
        layout("gl.SwizzledSharedLayout(1, 1, 1, [0], cga_layout=[[1]])"),
    ];
    let err = ptx_for("cluster_spread_smem", args, 1, 2, Target::Sm90a).unwrap_err();
    assert!(err.contains("each CTA must hold in registers the part of the buffer it holds in shared memory"), "{err}");

    // An atomic whose old values are used, on elements every CTA holds: one CTA does it, the others cannot see it.
    let args = vec![
        ArgSpec::Pointer(F32, true),
        ArgSpec::Pointer(F32, true),
        c(64),
        layout("gl.BlockedLayout([1], [32], [1], [0])"),
    ];
    let err = ptx_for("cluster_fetch_add", args, 1, 2, Target::Sm90a).unwrap_err();
    assert!(err.contains("`atomic` whose old values are used, on elements every CTA of the cluster holds"), "{err}");
    assert!(err.contains("gl.atomic_add(x_ptr + offs, 1.0)"), "the span: {err}");

    // A layout for another cluster size. (Auto mode at num_ctas > 1: tests/auto_clusters.rs.)
    let err =
        ptx_for("cluster_row_softmax", softmax_args(256, &blocked_1d(4, 1, &[1, 2])), 1, 2, Target::Sm90a).unwrap_err();
    assert!(err.contains("spans 4 CTAs but the kernel has num_ctas = 2"), "{err}");
    // sm_80 has no clusters.
    let err =
        ptx_for("cluster_row_softmax", softmax_args(256, &blocked_1d(4, 1, &[1])), 1, 2, Target::Sm80).unwrap_err();
    assert!(err.contains("need sm_90a or newer"), "{err}");
}

/// Shared memory spread over the CTAs as the tensor staged in it is (`cga_layout=[[1]]` on both): each CTA
/// allocates and addresses only its own half, and the simulator agrees with the interpreter on every element.
#[test]
fn each_cta_holds_its_part_of_a_spread_buffer() {
    let args = || {
        vec![
            ArgSpec::Pointer(F32, true),
            ArgSpec::Pointer(F32, true),
            c(64),
            layout(&blocked_1d(1, 1, &[1])),
            layout("gl.SwizzledSharedLayout(1, 1, 1, [0], cga_layout=[[1]])"),
        ]
    };
    let ptx = ptx_for("cluster_spread_smem", args(), 1, 2, Target::Sm90a).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.contains("// shared memory: 128 bytes per CTA"), "each CTA holds 32 of the 64 floats:\n{ptx}");
    assemble("cluster_spread_smem", &ptx, "sm_90a");
    let x: Vec<f64> = Rng::new(3).vec(64);
    let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 1, num_stages: 1, poison: true };
    let vals = [V::Buf(F32, x.clone()), V::Out(F32, 64)];
    let outs = run_on_ctas(&source(), "cluster_spread_smem", args(), &opts, 2, &vals, [1, 1, 1])
        .unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    for i in 0..64 {
        assert_eq!(interp[i], (x[i] as f32 + 1.0) as f64, "interpreter, element {i}");
        assert_eq!(sim[i], interp[i], "simulator, element {i}");
    }
}

/// On a GPU (skipped without one): the softmax at the tutorial's configurations against the interpreter, fresh
/// random inputs, the output poisoned with NaN first. `examples/cluster_check.rs` is the same check as a program
/// to run under compute-sanitizer.
#[test]
fn cluster_softmax_on_the_gpu_equals_the_interpreter() {
    let gpu = match tessel::runtime::Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("skipped: no GPU ({e})");
            return;
        }
    };
    let report = cluster_gpu::check(&gpu, &source(), FILE, 12345).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
}

/// The simulator catches a cluster kernel without its barriers: a CTA reading a peer's partials in the phase
/// the peer writes them.
#[test]
fn the_simulator_catches_a_missing_cluster_barrier() {
    let lay = blocked_1d(4, 1, &[1]);
    let ptx = ptx_for("cluster_row_softmax", softmax_args(256, &lay), 1, 2, Target::Sm90a).unwrap();
    let pair = "    barrier.cluster.arrive.release.aligned;\n    barrier.cluster.wait.acquire.aligned;\n";
    // Without the barrier, the CTA's own threads race; with a CTA barrier in its place, the CTAs do.
    let broken = ptx.replacen(pair, "", 1);
    let cta_only = ptx.replacen(pair, "    bar.sync 0;\n", 1);
    assert_ne!(broken, ptx);
    let run = |text: &str| {
        let prog = sim_common::ptx_sim::Program::parse(text).unwrap();
        let mut global = sim_common::ptx_sim::Global::default();
        let x = global.alloc(vec![0; 256 * 4]);
        let out = global.alloc(vec![0; 256 * 4]);
        sim_common::ptx_sim::run_clusters(&prog, &mut global, &[x, out, 256, 256, 256], [1, 1, 1], 32, 4, 2)
    };
    run(&ptx).unwrap();
    let err = run(&broken).unwrap_err();
    assert!(err.contains("without a barrier between"), "{err}");
    let err = run(&cta_only).unwrap_err();
    assert!(err.contains("CTA 0 reads shared byte 0 of CTA 1, which CTA 1 writes in the same cluster phase"), "{err}");
}

/// A [64, 64] tile every CTA holds whole (the multicast tests' first read of their copy).
const WHOLE_64: &str = "gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])";

/// A multicast TMA copy: CTA 0 copies each program's block into every CTA of the cluster, and each CTA stores the
/// rows its layout gives it from its own copy (so every copy is read). Against the interpreter and float64 on the
/// simulator, as clusters of 2 and 4 CTAs; the PTX issues one multicast copy and meets the cluster after the
/// barrier's initialization.
#[test]
fn multicast_tma_reaches_every_cta() {
    let (bm, bn, programs) = (64u32, 64u32, 2u32);
    let (m, n) = ((bm * programs) as usize, bn as usize);
    for cga in [&[[1, 0]][..], &[[1, 0], [2, 0]]] {
        let ctas = 1u32 << cga.len();
        let bases: Vec<String> = cga.iter().map(|b| format!("[{}, {}]", b[0], b[1])).collect();
        let lay = format!("gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], cga_layout=[{}])", bases.join(", "));
        let args = || {
            vec![
                ArgSpec::TensorDesc { elem: F16, block_shape: vec![bm, bn], padding_nan: false, layout: None },
                ArgSpec::Pointer(F16, true),
                int(false),
                layout(WHOLE_64),
                layout(&lay),
            ]
        };
        let ptx = ptx_for("cluster_multicast_tile", args(), 4, ctas, Target::Sm90a).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ptx.matches(".multicast::cluster").count(), 1, "{ptx}");
        let meet = ptx.find("barrier.cluster.arrive").expect("a cluster barrier");
        assert!(ptx.find("fence.mbarrier_init.release.cluster").is_some_and(|f| f < meet), "{ptx}");
        assert!(meet < ptx.find(".multicast::cluster").unwrap(), "the CTAs meet before the multicast copy");
        assemble("cluster_multicast_tile", &ptx, "sm_90a");
        let x: Vec<f64> = Rng::new(7 + ctas as u64).vec(m * n);
        let vals = [V::Desc(F16, Some(x.clone()), vec![m as u32, n as u32]), V::Out(F16, m * n), V::Int(n as i64)];
        let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 4, num_stages: 1, poison: true };
        let outs = run_on_ctas(&source(), "cluster_multicast_tile", args(), &opts, ctas, &vals, [programs, 1, 1])
            .unwrap_or_else(|e| panic!("{lay}: {e}"));
        let (sim, interp) = &outs[0];
        for i in 0..m * n {
            let want = 2.0 * (x[i] as f32 as f64);
            let want = half::f16::from_f64(want).to_f64();
            assert_eq!(interp[i], want, "{lay}: interpreter, element {i}");
            assert_eq!(sim[i], interp[i], "{lay}: simulator, element {i}");
        }
    }
}

/// Runs the PTX of a multicast kernel (`cluster_multicast_tile` or `_rounds`: an fp16 descriptor over `x`, an
/// `[m, n]` row-major tensor read in 64x64 boxes, then the output pointer and its row stride) on the simulator as
/// one cluster of `ctas` CTAs of 4 warps; the output buffer's bytes (`out_bytes` of them, poisoned with 0xFF).
fn simulate_multicast(ptx: &str, x: Vec<u8>, m: u64, n: u64, out_bytes: usize, ctas: u32) -> Result<Vec<u8>, String> {
    let prog = sim_common::ptx_sim::Program::parse(ptx)?;
    let smem: u32 = ptx
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("// shared memory: ")?
                .strip_suffix(" bytes per CTA (buffers and scratch)")?
                .parse()
                .ok()
        })
        .ok_or("the PTX does not name its shared memory")?;
    let mut global = sim_common::ptx_sim::Global::default();
    let xa = global.alloc(x);
    let out = global.alloc(vec![0xFF; out_bytes]);
    let map = global.map(sim_common::ptx_sim::TensorMap {
        base: xa,
        elem_bytes: 2,
        dims: vec![m, n],
        strides: vec![n * 2, 2],
        box_dims: vec![64, 64],
        swizzle: 128,
        fp4_padded: false,
    });
    // The descriptor's base, dims and element strides, the output pointer and stride, then the tensor map.
    let args = [xa, m, n, n, 1, out, n, map];
    sim_common::ptx_sim::run_clusters(&prog, &mut global, &args, [1, 1, 1], 128, smem, ctas)?;
    Ok(global.bytes(out).to_vec())
}

/// Multicast copies in a loop into one buffer, a cluster barrier (`gl.barrier(cluster=True)`) between a round's
/// reads and the next round's copy: equal to float64 in the interpreter and to the interpreter on the simulator
/// (2 CTAs); without the cluster barrier, the simulator sees CTA 0's next copy land before CTA 1 read the last.
#[test]
fn multicast_rounds_meet_at_cluster_barriers() {
    let (bm, bn, rounds) = (64u32, 64u32, 3usize);
    let lay = "gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], cga_layout=[[1, 0]])";
    let args = || {
        vec![
            ArgSpec::TensorDesc { elem: F16, block_shape: vec![bm, bn], padding_nan: false, layout: None },
            ArgSpec::Pointer(F32, true),
            int(false),
            c(rounds as i64),
            layout(WHOLE_64),
            layout(lay),
        ]
    };
    let ptx = ptx_for("cluster_multicast_rounds", args(), 4, 2, Target::Sm90a).unwrap_or_else(|e| panic!("{e}"));
    // The meeting after the initialization, one per round, and one before the exit (no CTA leaves while a
    // multicast may still write into it).
    assert_eq!(ptx.matches("barrier.cluster.arrive").count(), 3, "{ptx}");
    assemble("cluster_multicast_rounds", &ptx, "sm_90a");
    let (m, n) = (bm as usize * rounds, bn as usize);
    let x: Vec<f64> = Rng::new(99).vec(m * n);
    let vals = [V::Desc(F16, Some(x.clone()), vec![m as u32, n as u32]), V::Out(F32, 64 * n), V::Int(n as i64)];
    let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 4, num_stages: 1, poison: true };
    let outs = run_on_ctas(&source(), "cluster_multicast_rounds", args(), &opts, 2, &vals, [1, 1, 1])
        .unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    for i in 0..64 * n {
        let want: f64 = (0..rounds).map(|r| half::f16::from_f64(x[r * 64 * n + i]).to_f64()).sum();
        assert!(
            (interp[i] - want).abs() <= 1e-6 * want.abs().max(1.0),
            "interpreter, element {i}: {} vs {want}",
            interp[i]
        );
        assert_eq!(sim[i], interp[i], "simulator, element {i}");
    }
    // The round's cluster barrier taken out (the second pair of the PTX: the first is the initialization's).
    let pair = "    barrier.cluster.arrive.release.aligned;\n    barrier.cluster.wait.acquire.aligned;\n";
    let at = ptx.match_indices(pair).nth(1).expect("the round's cluster barrier").0;
    let broken = format!("{}{}", &ptx[..at], &ptx[at + pair.len()..]);
    let xb: Vec<u8> = x.iter().flat_map(|&v| half::f16::from_f64(v).to_le_bytes()).collect();
    let wrong = match simulate_multicast(&broken, xb, m as u64, n as u64, 64 * n * 4, 2) {
        Err(e) => {
            eprintln!("broken: {e}");
            true
        }
        Ok(got) => {
            let got: Vec<f64> = got.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64).collect();
            got != *sim
        }
    };
    assert!(wrong, "without the round's cluster barrier the simulator must see CTA 1 read an overwritten block");
}

/// The PTX of `cluster_multicast_tile` as clusters of 2 CTAs (one 64x64 fp16 block per program).
fn two_cta_multicast_tile_ptx() -> String {
    let lay = "gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], cga_layout=[[1, 0]])";
    let args = vec![
        ArgSpec::TensorDesc { elem: F16, block_shape: vec![64, 64], padding_nan: false, layout: None },
        ArgSpec::Pointer(F16, true),
        int(false),
        layout(WHOLE_64),
        layout(lay),
    ];
    ptx_for("cluster_multicast_tile", args, 4, 2, Target::Sm90a).unwrap()
}

/// The simulator catches a multicast copy issued before the other CTAs have initialized their barriers (the
/// cluster barrier after the initialization taken out).
#[test]
fn the_simulator_catches_a_multicast_before_the_peers_initialize() {
    let ptx = two_cta_multicast_tile_ptx();
    let pair = "    barrier.cluster.arrive.release.aligned;\n    barrier.cluster.wait.acquire.aligned;\n";
    let broken = ptx.replacen(pair, "", 1);
    assert_ne!(broken, ptx);
    let run = |text: &str| simulate_multicast(text, vec![0; 64 * 64 * 2], 64, 64, 64 * 64 * 2, 2);
    run(&ptx).unwrap();
    let err = run(&broken).unwrap_err();
    assert!(err.contains("not initialized"), "{err}");
}

/// The simulator catches a multicast copy whose CTA mask leaves a CTA out (the mask's `mov.b16` edited from 0b11
/// to 0b01): the left-out CTA waits for bytes no copy will deliver, and the run stops naming its wait.
#[test]
fn the_simulator_catches_a_multicast_with_a_wrong_mask() {
    let ptx = two_cta_multicast_tile_ptx();
    let copy = ptx.find(".multicast::cluster").expect("a multicast copy");
    let mov = ptx[..copy].rfind("mov.b16 ").expect("the mask's move");
    let line_end = mov + ptx[mov..].find('\n').unwrap();
    assert!(ptx[mov..line_end].ends_with(", 3;"), "{}", &ptx[mov..line_end]);
    let broken = format!("{}{}1;{}", &ptx[..mov], &ptx[mov..line_end - 2], &ptx[line_end..]);
    let run = |text: &str| simulate_multicast(text, vec![0; 64 * 64 * 2], 64, 64, 64 * 64 * 2, 2);
    run(&ptx).unwrap();
    let err = run(&broken).unwrap_err();
    assert!(err.contains("CTA 1 waits") && err.contains("deadlock"), "{err}");
}

/// With `TESSEL_GLUON_TUTORIALS=DIR` (the public Gluon tutorials, which this repository does not hold; skipped
/// otherwise): 14-multicta.py's `multicta_softmax_kernel`, unmodified, on the simulator against the interpreter
/// and float64, as clusters of 2, 4 and 8 CTAs.
#[test]
fn the_tutorial_multicta_softmax_agrees_on_the_simulator() {
    let Some(dir) = std::env::var_os("TESSEL_GLUON_TUTORIALS") else {
        eprintln!("skipped: set TESSEL_GLUON_TUTORIALS to the Gluon tutorials' directory");
        return;
    };
    let path = std::path::Path::new(&dir).join("14-multicta.py");
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = path.to_str().unwrap();
    for (rows, n, warps, ctas) in [(3usize, 512usize, 1u32, 2u32), (2, 2048, 2, 4), (2, 8192, 4, 8)] {
        let args = vec![ArgSpec::Pointer(F32, true), ArgSpec::Pointer(F32, true), int(false), int(false), c(n as i64)];
        let x: Vec<f64> = Rng::new(n as u64).vec(rows * n).into_iter().map(|v| 4.0 * v).collect();
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, rows * n), V::Int(n as i64), V::Int(n as i64)];
        let opts = RunOptions { file, target: Target::Sm90a, num_warps: warps, num_stages: 1, poison: true };
        let outs = run_on_ctas(&src, "multicta_softmax_kernel", args, &opts, ctas, &vals, [rows as u32, 1, 1])
            .unwrap_or_else(|e| panic!("{n} columns, {ctas} CTAs: {e}"));
        let (sim, interp) = &outs[0];
        let want = softmax_f64(&x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>(), rows, n, n);
        for (i, (s, g)) in sim.iter().zip(interp).enumerate() {
            let w = want[i / n][i % n];
            assert!((g - w).abs() <= 1e-6 * w.max(1e-3), "{ctas} CTAs, element {i}: interpreter {g} vs {w}");
            assert!((s - g).abs() <= 1e-6 * g.max(1e-3), "{ctas} CTAs, element {i}: simulator {s} vs {g}");
        }
    }
}
