//! Auto-mode kernels launched as thread-block clusters (`num_ctas` > 1, `tests/kernels/auto_clusters.py`).
//!
//! Auto mode spreads a kernel's tensors over the cluster's CTAs as Triton does (each blocked layout splits its
//! tensor, slowest dim first: `tessel_tile::layout::spreads_over_ctas`), and each CTA computes its part; a
//! reduction along a split dim meets in distributed shared memory, and a `wgmma` dot splits its tile. A kernel it
//! does not spread (tcgen05 dots, not yet; reductions across the CTAs too small to pay) or
//! whose spread code generation refuses (an atomic whose old value every CTA would need) runs in the cluster's
//! first CTA as it would at `num_ctas` = 1, the other CTAs exiting at the entry (`codegen`'s
//! `cluster::leader_only`), the latter with a warning. These tests hold both to that: every kernel,
//! including an atomic whose old value is used inside a spin loop, a pipelined dot and TMA descriptors, compiles
//! for sm_90a and sm_100a at 2 and 4 CTAs, assembles (ptxas when there is one), runs on the PTX simulator's
//! clusters with the outputs poisoned and equals the interpreter (and float64); the PTX is a cluster entry whose
//! program id is the cluster's.

#[path = "cluster_gpu/mod.rs"]
mod cluster_gpu;
#[allow(dead_code)] // the helpers this file does not use
mod common;
#[path = "sim_common/mod.rs"]
mod sim_common;

use common::{assemble, c, int, ptr};
use sim_common::{RunOptions, V, run_on_ctas};
use tessel::lang::elab::{ArgSpec, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::*;
use tessel::tile::{KernelConfig, Target};
use tessel_math::testing::Rng;

const FILE: &str = "tests/kernels/auto_clusters.py";

fn source() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE)).unwrap()
}

fn desc(block: &[u32]) -> ArgSpec {
    desc_of(F32, block)
}

fn desc_of(elem: tessel::tile::ScalarType, block: &[u32]) -> ArgSpec {
    ArgSpec::TensorDesc { elem, block_shape: block.to_vec(), padding_nan: false, layout: None }
}

/// `desc_dot_tiles`'s arguments: 128x64 tiles of C, K in steps of 32.
fn desc_dot_args() -> Vec<ArgSpec> {
    vec![desc_of(F16, &[128, 32]), desc_of(F16, &[32, 64]), desc_of(F32, &[128, 64]), int(false), c(128), c(64), c(32)]
}

/// `device_desc_dot_tiles`'s arguments, at `desc_dot_args`'s tiles (the sizes multiples of 16: TMA's strides).
fn device_desc_dot_args() -> Vec<ArgSpec> {
    let sizes = ArgSpec::Int(I32, true);
    vec![ptr(F16), ptr(F16), ptr(F32), sizes.clone(), sizes.clone(), sizes, c(128), c(64), c(32)]
}

fn opts(target: Target) -> RunOptions<'static> {
    RunOptions { file: FILE, target, num_warps: 4, num_stages: 3, poison: true }
}

fn ptx_for(kernel: &str, args: Vec<ArgSpec>, ctas: u32, target: Target) -> Result<(String, Vec<String>), String> {
    let src = source();
    let spec = Specialization::with_config(args, KernelConfig { num_ctas: ctas, ..KernelConfig::DEFAULT });
    let ks = tessel::KernelSource { file: FILE, source: &src, kernel, spec: &spec, module: None };
    let mut t = tessel::pipeline::Timings::default();
    match tessel::pipeline::run(&ks, target, Stage::Ptx, None, &mut t) {
        Ok(Output::Ptx { kernel, .. }) => Ok((kernel.ptx, t.messages)),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => Err(e.to_string()),
    }
}

/// How a cluster runs a kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Runs {
    /// Every CTA, each on its part of the spread tensors.
    Spread,
    /// Spread on sm_90a (a wgmma dot), the first CTA alone on sm_100a (a tcgen05 dot, not spread yet).
    SpreadOnSm90a,
    /// The first CTA alone: nothing is spread (no tensors, a tcgen05 dot, too little to pay).
    FirstCta,
    /// The first CTA alone, after code generation refused the spread (with a warning).
    FirstCtaRefused,
}

/// Every kernel of the file with the arguments the tests below give it, and how a cluster runs it.
fn kernels() -> Vec<(&'static str, Vec<ArgSpec>, Runs)> {
    use Runs::*;
    vec![
        ("add_masked", vec![ptr(F32), ptr(F32), ptr(F32), int(false), c(256)], Spread),
        ("program_ids", vec![ptr(I32)], FirstCta),
        // Its block sum meets the CTAs for 64 elements each: not worth spreading.
        ("locked_total", vec![ptr(I32), ptr(I32), ptr(I32), ptr(I32), int(false), c(128)], FirstCta),
        ("ticket_then_copy", vec![ptr(I32), ptr(I32), ptr(I32), ptr(I32), c(1024)], FirstCtaRefused),
        // A row of 512 split over the CTAs would meet them twice for 256 elements each: not worth it.
        ("row_softmax", vec![ptr(F32), ptr(F32), int(false), int(false), c(512)], FirstCta),
        ("row_softmax", vec![ptr(F32), ptr(F32), int(false), int(false), c(16384)], Spread),
        (
            "dot_tiles",
            vec![ptr(F16), ptr(F16), ptr(F32), int(false), int(false), int(false), c(64), c(64), c(32)],
            SpreadOnSm90a,
        ),
        // 64 rows are one warpgroup's, and 16 columns split in two would leave B 16 bytes wide: not spread.
        (
            "dot_tiles",
            vec![ptr(F16), ptr(F16), ptr(F32), int(false), int(false), int(false), c(64), c(16), c(32)],
            FirstCta,
        ),
        // A scan along the split dim: laid out unspread, without a word.
        ("row_cumsum", vec![ptr(F32), ptr(F32), c(16384)], FirstCta),
        // A transpose moves the tile between the CTAs: worth it for 16384 elements, not for 4096.
        ("transposed_copy", vec![ptr(F32), ptr(F32), c(64), c(64)], FirstCta),
        ("transposed_copy", vec![ptr(F32), ptr(F32), c(128), c(128)], Spread),
        // TMA copies of each CTA's rows of the block: a box of that part's shape.
        ("descriptor_tiles", vec![desc(&[32, 64]), desc(&[32, 64]), c(32), c(64)], Spread),
        (
            "device_descriptor_tiles",
            vec![ptr(F32), ptr(F32), ArgSpec::Int(I32, true), ArgSpec::Int(I32, true), c(32), c(64)],
            Spread,
        ),
        ("desc_dot_tiles", desc_dot_args(), SpreadOnSm90a),
        ("device_desc_dot_tiles", device_desc_dot_args(), SpreadOnSm90a),
        ("printing", vec![ptr(F32), c(64)], Spread),
        ("rows_then_columns", vec![ptr(F32), ptr(F32), ptr(F32), ptr(F32), ptr(F32), c(128), c(128)], Spread),
    ]
}

#[test]
fn auto_kernels_compile_to_cluster_entries_spread_or_run_by_the_first_cta() {
    for target in [Target::Sm90a, Target::Sm100a] {
        for ctas in [2, 4] {
            for (kernel, args, runs) in kernels() {
                let runs = match runs {
                    Runs::SpreadOnSm90a if target == Target::Sm90a => Runs::Spread,
                    Runs::SpreadOnSm90a => Runs::FirstCta,
                    other => other,
                };
                let (ptx, warnings) =
                    ptx_for(kernel, args, ctas, target).unwrap_or_else(|e| panic!("{kernel} x{ctas}: {e}"));
                assert!(ptx.contains(&format!(".reqnctapercluster {ctas}, 1, 1")), "{kernel}: not a cluster entry");
                // Wherever a program's id is read (program_id, the scratch slot of a tensor map made in the
                // kernel, device_print's pid), it is the cluster's: a CTA's id is not the program's.
                assert!(!ptx.contains("%ctaid") && !ptx.contains("%nctaid"), "{kernel}: a CTA's id read");
                if kernel == "program_ids" {
                    assert!(ptx.contains("%clusterid.x") && ptx.contains("%nclusterid.y"), "{kernel}: {ptx}");
                }
                let at = ptx.find("%cluster_ctarank").unwrap_or_else(|| panic!("{kernel}: no CTA rank read"));
                let next: Vec<&str> = ptx[at..].lines().skip(1).take(2).map(str::trim).collect();
                let first_cta_only = next[0].starts_with("setp.ge.u32") && next[1].ends_with("exit;");
                let refused = warnings.iter().any(|w| w.contains("runs in each cluster's first CTA alone"));
                assert_eq!(refused, runs == Runs::FirstCtaRefused, "{kernel} x{ctas}: {warnings:?}");
                if runs == Runs::Spread {
                    // Every CTA runs the program on its part.
                    assert!(!first_cta_only, "{kernel} x{ctas}: {next:?}");
                } else {
                    // The entry reads the CTA's rank and lets every CTA but the first exit before anything else;
                    // nothing reaches another CTA: no cluster barrier, no distributed shared memory.
                    assert!(first_cta_only, "{kernel} x{ctas}: {next:?}");
                    assert!(!ptx.contains("barrier.cluster") && !ptx.contains("shared::cluster.u"), "{kernel}");
                }
                assemble(&format!("auto-{kernel}-{ctas}-{}", target.name()), &ptx, target.name());
            }
        }
    }
    // sm_80 has no clusters.
    let err = ptx_for("add_masked", kernels().remove(0).1, 2, Target::Sm80).unwrap_err();
    assert!(err.contains("need sm_90a or newer"), "{err}");
}

#[test]
fn elementwise_and_program_ids_agree_on_clusters() {
    let n = 1000usize;
    let mut rng = Rng::new(7);
    let (x, y) = (rng.vec(n), rng.vec(n));
    for ctas in [2, 4] {
        let vals = [V::Buf(F32, x.clone()), V::Buf(F32, y.clone()), V::Out(F32, n), V::Int(n as i64)];
        let args = vec![ptr(F32), ptr(F32), ptr(F32), int(false), c(256)];
        let outs = run_on_ctas(&source(), "add_masked", args, &opts(Target::Sm90a), ctas, &vals, [4, 1, 1])
            .unwrap_or_else(|e| panic!("{e}"));
        let (sim, interp) = &outs[0];
        for i in 0..n {
            let want = (x[i] as f32 * 2.0 + y[i] as f32) as f64;
            assert_eq!((sim[i], interp[i]), (want, want), "x{ctas} element {i}");
        }
        let vals = [V::Out(I32, 4 * 6)];
        let outs = run_on_ctas(&source(), "program_ids", vec![ptr(I32)], &opts(Target::Sm90a), ctas, &vals, [3, 2, 1])
            .unwrap_or_else(|e| panic!("{e}"));
        let want: Vec<f64> = (0..6).flat_map(|p| [(p % 3) as f64, (p / 3) as f64, 3.0, 2.0]).collect();
        assert_eq!(outs[0], (want.clone(), want), "x{ctas}: program ids");
    }
}

#[test]
fn a_spin_lock_and_ticket_atomics_agree_on_clusters() {
    let (n, programs) = (1000usize, 8u32);
    let x: Vec<f64> = (0..n).map(|i| ((i * 37) % 101) as f64 - 50.0).collect();
    let total: f64 = x.iter().sum();
    for ctas in [2, 4] {
        let vals = [
            V::InOut(I32, vec![0.0]),
            V::InOut(I32, vec![0.0]),
            V::InOut(I32, vec![0.0; programs as usize + 1]),
            V::Buf(I32, x.clone()),
            V::Int(n as i64),
        ];
        let args = vec![ptr(I32), ptr(I32), ptr(I32), ptr(I32), int(false), c(128)];
        let outs = run_on_ctas(&source(), "locked_total", args, &opts(Target::Sm90a), ctas, &vals, [programs, 1, 1])
            .unwrap_or_else(|e| panic!("x{ctas}: {e}"));
        for (side, k) in [("simulator", 0), ("interpreter", 1)] {
            let pick = |o: &(Vec<f64>, Vec<f64>)| if k == 0 { o.0.clone() } else { o.1.clone() };
            let (lock, sum, tickets) = (pick(&outs[0]), pick(&outs[1]), pick(&outs[2]));
            assert_eq!(lock, [0.0], "x{ctas} {side}: the lock is released");
            assert_eq!(sum, [total], "x{ctas} {side}: every block added once");
            // Each program drew one ticket: 0..programs, each once, and the counter counted them.
            let mut drawn = tickets[..programs as usize].to_vec();
            drawn.sort_by(f64::total_cmp);
            assert_eq!(drawn, (0..programs).map(f64::from).collect::<Vec<_>>(), "x{ctas} {side}: tickets");
            assert_eq!(tickets[programs as usize], programs as f64, "x{ctas} {side}: the counter");
        }
    }
}

/// A row softmax's output (simulator, interpreter) against float64 over `rows` rows of `n` in rows of `stride`
/// (row-major `x`): the columns past `n` keep their poison on both sides.
fn check_softmax((sim, interp): &(Vec<f64>, Vec<f64>), x: &[f64], [rows, n, stride]: [usize; 3], what: &str) {
    for r in 0..rows {
        let row: Vec<f64> = x[r * stride..r * stride + n].iter().map(|&v| v as f32 as f64).collect();
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|v| (v - m).exp()).sum();
        for j in 0..stride {
            let (s, i) = (sim[r * stride + j], interp[r * stride + j]);
            if j >= n {
                assert!(s.is_nan() && i.is_nan(), "{what} row {r} col {j}: written past the mask");
                continue;
            }
            let w = (row[j] - m).exp() / sum;
            assert!((i - w).abs() <= 1e-6 * w.max(1e-6), "{what} row {r} col {j}: interpreter {i} vs {w}");
            assert!((s - i).abs() <= 1e-6 * i.max(1e-6), "{what} row {r} col {j}: simulator {s} vs {i}");
        }
    }
}

/// `dot_tiles`'s arguments: fp16 `a` and `b`, a poisoned f32 output, the sizes `[m, n, k]`.
fn matmul_vals(a: &[f64], b: &[f64], [m, n, k]: [usize; 3]) -> [V; 6] {
    [
        V::Buf(F16, a.to_vec()),
        V::Buf(F16, b.to_vec()),
        V::Out(F32, m * n),
        V::Int(m as i64),
        V::Int(n as i64),
        V::Int(k as i64),
    ]
}

/// `dot_tiles`'s output (simulator, interpreter) against float64 `a @ b` (`[m, n, k]`, row-major).
fn check_matmul((sim, interp): &(Vec<f64>, Vec<f64>), a: &[f64], b: &[f64], [m, n, k]: [usize; 3], what: &str) {
    for i in 0..m {
        for j in 0..n {
            let w: f64 = (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum();
            let (s, g) = (sim[i * n + j], interp[i * n + j]);
            assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{what} ({i}, {j}): interpreter {g} vs {w}");
            assert!((s - g).abs() <= 1e-5 * (1.0 + g.abs()), "{what} ({i}, {j}): simulator {s} vs {g}");
        }
    }
}

#[test]
fn softmax_dot_and_descriptors_agree_on_clusters() {
    let mut rng = Rng::new(11);
    // Softmax: 3 rows of 450 in rows of 512, masked.
    let (rows, n, stride) = (3usize, 450usize, 512usize);
    let x: Vec<f64> = rng.vec(rows * stride).into_iter().map(|v| 4.0 * v).collect();
    for target in [Target::Sm90a, Target::Sm100a] {
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, rows * stride), V::Int(n as i64), V::Int(stride as i64)];
        let args = vec![ptr(F32), ptr(F32), int(false), int(false), c(512)];
        let outs = run_on_ctas(&source(), "row_softmax", args, &opts(target), 2, &vals, [rows as u32, 1, 1])
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        check_softmax(&outs[0], &x, [rows, n, stride], &target.to_string());
    }
    // A pipelined dot on ragged sizes (wgmma on sm_90a, tcgen05 on sm_100a).
    let (m, nn, k) = (100usize, 72usize, 80usize);
    let a: Vec<f64> = rng.vec(m * k).into_iter().map(|v| half::f16::from_f64(v).to_f64()).collect();
    let b: Vec<f64> = rng.vec(k * nn).into_iter().map(|v| half::f16::from_f64(v).to_f64()).collect();
    for target in [Target::Sm90a, Target::Sm100a] {
        let vals = matmul_vals(&a, &b, [m, nn, k]);
        let args = vec![ptr(F16), ptr(F16), ptr(F32), int(false), int(false), int(false), c(64), c(64), c(32)];
        let outs = run_on_ctas(&source(), "dot_tiles", args, &opts(target), 2, &vals, [2, 2, 1])
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        check_matmul(&outs[0], &a, &b, [m, nn, k], &target.to_string());
    }
    // TMA tiles over a ragged 50 x 100 tensor.
    let (rows, cols) = (50u32, 100u32);
    let src: Vec<f64> = rng.vec((rows * cols) as usize);
    let vals = [V::Desc(F32, Some(src.clone()), vec![rows, cols]), V::Desc(F32, None, vec![rows, cols])];
    let args = vec![desc(&[32, 64]), desc(&[32, 64]), c(32), c(64)];
    let outs = run_on_ctas(&source(), "descriptor_tiles", args, &opts(Target::Sm90a), 2, &vals, [2, 2, 1])
        .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f64> = src.iter().map(|&v| (v as f32 + 1.0) as f64).collect();
    assert_eq!(outs[0], (want.clone(), want), "descriptor tiles");
}

#[test]
fn a_tile_spread_by_rows_reduces_across_ctas_and_meets_at_debug_barrier() {
    let (rows, cols, programs) = (128usize, 128usize, 3usize);
    let tile = rows * cols;
    let mut rng = Rng::new(23);
    let x: Vec<f64> = rng.vec(programs * tile).into_iter().map(|v| (v * 8.0).round() / 8.0).collect();
    let at = |p: usize, i: usize, j: usize| x[p * tile + i * cols + j];
    let sums: Vec<f64> = (0..programs * rows).map(|pi| (0..cols).map(|j| at(pi / rows, pi % rows, j)).sum()).collect();
    let maxes: Vec<f64> = (0..programs * cols)
        .map(|pj| (0..rows).map(|i| at(pj / cols, i, pj % cols)).fold(f64::MIN, f64::max))
        .collect();
    let doubled: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
    let flipped: Vec<f64> =
        (0..programs * tile).map(|e| 2.0 * at(e / tile, rows - 1 - (e / cols) % rows, e % cols)).collect();
    for ctas in [2, 4] {
        let vals = [
            V::Buf(F32, x.clone()),
            V::Out(F32, programs * rows),
            V::Out(F32, programs * cols),
            V::Out(F32, programs * tile),
            V::Out(F32, programs * tile),
        ];
        let args = vec![ptr(F32), ptr(F32), ptr(F32), ptr(F32), ptr(F32), c(rows as i64), c(cols as i64)];
        let outs = run_on_ctas(&source(), "rows_then_columns", args, &opts(Target::Sm90a), ctas, &vals, [3, 1, 1])
            .unwrap_or_else(|e| panic!("x{ctas}: {e}"));
        // Eighths sum exactly in f32, in any order.
        let wants = [("row sums", &sums), ("column maxima", &maxes), ("scratch", &doubled), ("flipped", &flipped)];
        for (out, (name, want)) in outs.iter().zip(wants) {
            assert_eq!(out, &(want.clone(), want.clone()), "x{ctas}: {name}");
        }
    }
}

/// On a GPU (skipped without one): the spread kernels at 2 and 4 CTAs against the interpreter, fresh random
/// inputs, the outputs poisoned first (`examples/cluster_check.rs` runs the same under compute-sanitizer).
#[test]
fn spread_kernels_on_the_gpu_equal_the_interpreter() {
    let gpu = match tessel::runtime::Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("skipped: no GPU ({e})");
            return;
        }
    };
    let report = cluster_gpu::auto::check(&gpu, &source(), FILE, 777).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
}

/// `examples/layer_norm.py`'s forward, unmodified, spread over 2 CTAs (blocks of 16384 columns, reductions large
/// enough to pay for meeting across the CTAs: `tessel_tile::layout::spread::worth_it`): its loops over the columns
/// keep each CTA on its part of every block, and the row's mean and variance meet across the CTAs; on the
/// simulator against the interpreter, outputs poisoned, ragged rows (17000 columns: a full block and a masked one).
#[test]
fn layer_norm_forward_spread_over_ctas_equals_the_interpreter() {
    let file = "examples/layer_norm.py";
    let src = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let (rows, n) = (2usize, 17000usize);
    let mut rng = Rng::new(31);
    let f16 = |v: f64| half::f16::from_f64(v).to_f64();
    let x: Vec<f64> = rng.vec(rows * n).into_iter().map(|v| f16(3.0 * v + 0.5)).collect();
    let w: Vec<f64> = rng.vec(n).into_iter().map(f16).collect();
    let b: Vec<f64> = rng.vec(n).into_iter().map(f16).collect();
    for ctas in [2] {
        let vals = [
            V::Buf(F16, x.clone()),
            V::Out(F16, rows * n),
            V::Buf(F16, w.clone()),
            V::Buf(F16, b.clone()),
            V::Out(F32, rows),
            V::Out(F32, rows),
            V::Int(n as i64),
            V::Int(n as i64),
            V::F32(1e-5),
        ];
        let f32s = ArgSpec::Float(F32);
        let args =
            vec![ptr(F16), ptr(F16), ptr(F16), ptr(F16), ptr(F32), ptr(F32), int(false), int(false), f32s, c(16384)];
        let o = RunOptions { file, ..opts(Target::Sm90a) };
        let (ptx, _) = {
            let spec =
                Specialization::with_config(args.clone(), KernelConfig { num_ctas: ctas, ..KernelConfig::DEFAULT });
            let ks =
                tessel::KernelSource { file, source: &src, kernel: "_layer_norm_fwd_fused", spec: &spec, module: None };
            match tessel::pipeline::run(&ks, Target::Sm90a, Stage::Ptx, None, &mut Default::default()) {
                Ok(Output::Ptx { kernel, .. }) => (kernel.ptx, ()),
                other => panic!("x{ctas}: {:?}", other.err()),
            }
        };
        assert!(ptx.contains("barrier.cluster") && ptx.contains("ld.shared::cluster"), "x{ctas}: not spread");
        let outs = run_on_ctas(&src, "_layer_norm_fwd_fused", args, &o, ctas, &vals, [rows as u32, 1, 1])
            .unwrap_or_else(|e| panic!("x{ctas}: {e}"));
        // The sums combine in another order in the interpreter: within a few roundings (y is fp16).
        for (k, name, tol) in [(0, "y", 2e-3), (1, "mean", 1e-5), (2, "rstd", 1e-5)] {
            let (sim, interp) = &outs[k];
            let bad = sim
                .iter()
                .zip(interp)
                .position(|(s, i)| s.is_nan() || i.is_nan() || (s - i).abs() > tol * i.abs().max(1e-2));
            if let Some(e) = bad {
                panic!("x{ctas} {name}[{e}]: simulator {}, interpreter {}", sim[e], interp[e]);
            }
        }
        // The interpreter against float64: each row's mean.
        for r in 0..rows {
            let mean: f64 = x[r * n..(r + 1) * n].iter().sum::<f64>() / n as f64;
            assert!((outs[1].1[r] - mean).abs() < 1e-5, "x{ctas} row {r}: mean {} vs {mean}", outs[1].1[r]);
        }
    }
}

/// A pipelined wgmma dot spread over the CTAs (sm_90a): at 2 CTAs each takes 64 of the tile's 128 rows (A's rows
/// and the accumulator split, B whole in each CTA's `cp.async` ring), at 4 the rows split in two and the columns
/// in two; B as given and transposed in the kernel; on the simulator against the interpreter and float64, ragged
/// sizes, the output poisoned.
#[test]
fn a_pipelined_wgmma_dot_spread_over_ctas_equals_the_interpreter() {
    let (m, n, k) = (272usize, 144usize, 96usize);
    let mut rng = Rng::new(41);
    let a: Vec<f64> = rng.vec(m * k).into_iter().map(|v| half::f16::from_f64(v).to_f64()).collect();
    let b: Vec<f64> = rng.vec(k * n).into_iter().map(|v| half::f16::from_f64(v).to_f64()).collect();
    let args = vec![ptr(F16), ptr(F16), ptr(F32), int(true), int(true), int(true), c(128), c(64), c(32)];
    // B transposed in the kernel (`tl.trans`): its loads take the columns of B^T each CTA needs, as rows.
    let bt: Vec<f64> = (0..n * k).map(|e| b[(e % k) * n + e / k]).collect();
    for (kernel, ctas) in [("dot_tiles", 2), ("dot_tiles", 4), ("dot_tiles_bt", 2), ("dot_tiles_bt", 4)] {
        let b_given = if kernel == "dot_tiles" { &b } else { &bt };
        let (ptx, warnings) = ptx_for(kernel, args.clone(), ctas, Target::Sm90a).unwrap();
        assert!(warnings.is_empty(), "{kernel} x{ctas}: {warnings:?}");
        // Each CTA's part of the tile: 64 rows by 64 columns at 2 CTAs, 64 by 32 at 4.
        let shape = if ctas == 2 { "m64n64k16" } else { "m64n32k16" };
        assert!(ptx.contains(&format!("wgmma.mma_async.sync.aligned.{shape}")), "x{ctas}: not {shape}");
        assert!(ptx.contains("cp.async.cg.shared.global"), "x{ctas}: the K loop is not pipelined");
        // Each CTA loads, multiplies and stores its own part: nothing crosses the CTAs (the store takes the
        // accumulator's split, A and B are loaded as each CTA's part needs them).
        assert!(!ptx.contains("barrier.cluster") && !ptx.contains("shared::cluster"), "x{ctas}: crosses the CTAs");
        let vals = matmul_vals(&a, b_given, [m, n, k]);
        let grid = [m.div_ceil(128) as u32, n.div_ceil(64) as u32, 1];
        let outs = run_on_ctas(&source(), kernel, args.clone(), &opts(Target::Sm90a), ctas, &vals, grid)
            .unwrap_or_else(|e| panic!("{kernel} x{ctas}: {e}"));
        check_matmul(&outs[0], &a, &b, [m, n, k], &format!("{kernel} x{ctas}"));
    }
}

/// `examples/fused_softmax.py` (tutorial 02's persistent softmax, `tl.range(..., num_stages=3)`), rows of 16384
/// spread over 2 CTAs: the pipeliner's copy ring for the row loads is split as the rows are (each CTA copies its
/// half into its part of each buffer), and the row's maximum and sum meet across the CTAs; on the simulator
/// against the interpreter and float64, outputs poisoned, ragged rows.
#[test]
fn a_pipelined_softmax_spread_over_ctas_equals_the_interpreter() {
    let file = "examples/fused_softmax.py";
    let src = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let (rows, n, stride) = (5usize, 16000usize, 16384usize);
    let x: Vec<f64> = Rng::new(53).vec(rows * stride).into_iter().map(|v| 4.0 * v).collect();
    let args = vec![ptr(F32), ptr(F32), int(true), int(true), int(false), int(false), c(16384), c(3)];
    let spec = Specialization::with_config(args.clone(), KernelConfig { num_ctas: 2, ..KernelConfig::DEFAULT });
    let ks = tessel::KernelSource { file, source: &src, kernel: "softmax_kernel", spec: &spec, module: None };
    let mut t = tessel::pipeline::Timings::default();
    let Ok(Output::Ptx { kernel, .. }) = tessel::pipeline::run(&ks, Target::Sm90a, Stage::Ptx, None, &mut t) else {
        panic!("softmax_kernel does not compile")
    };
    assert!(t.messages.is_empty(), "{:?}", t.messages);
    assert!(kernel.ptx.contains("cp.async") && kernel.ptx.contains("barrier.cluster"), "not pipelined and spread");
    let vals = [
        V::Out(F32, rows * stride),
        V::Buf(F32, x.clone()),
        V::Int(stride as i64),
        V::Int(stride as i64),
        V::Int(rows as i64),
        V::Int(n as i64),
    ];
    let o = RunOptions { file, ..opts(Target::Sm90a) };
    let outs = run_on_ctas(&src, "softmax_kernel", args, &o, 2, &vals, [2, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    check_softmax(&outs[0], &x, [rows, n, stride], "fused_softmax");
}

/// A 128x128 tile spread by rows and stored transposed: the conversion gathers each CTA's columns from the other
/// CTAs' rows through distributed shared memory; on the simulator against the interpreter, outputs poisoned.
#[test]
fn a_transpose_across_ctas_equals_the_interpreter() {
    let (n, programs) = (128usize, 2usize);
    let x: Vec<f64> = Rng::new(61).vec(programs * n * n);
    for ctas in [2, 4] {
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, programs * n * n)];
        let args = vec![ptr(F32), ptr(F32), c(n as i64), c(n as i64)];
        let (ptx, _) = ptx_for("transposed_copy", args.clone(), ctas, Target::Sm90a).unwrap();
        assert!(ptx.contains("ld.shared::cluster"), "x{ctas}: the transpose does not cross the CTAs");
        let outs = run_on_ctas(&source(), "transposed_copy", args, &opts(Target::Sm90a), ctas, &vals, [2, 1, 1])
            .unwrap_or_else(|e| panic!("x{ctas}: {e}"));
        let want: Vec<f64> = (0..programs * n * n)
            .map(|e| {
                let (p, i, j) = (e / (n * n), (e / n) % n, e % n);
                x[p * n * n + j * n + i] as f32 as f64
            })
            .collect();
        assert_eq!(outs[0], (want.clone(), want), "x{ctas}");
    }
}

/// A pipelined wgmma dot through host tensor descriptors spread over the CTAs (sm_90a): each CTA's TMA copies bring its rows of A (a box of 64 rows at 2 and 4 CTAs) and the
/// columns of B its part needs, the ring's barriers expect each CTA's bytes, and the epilogue's TMA store writes
/// each CTA's part of C; on the simulator against the interpreter and float64, ragged sizes, C poisoned.
#[test]
fn a_tma_dot_spread_over_ctas_equals_the_interpreter() {
    let (m, n, k) = (272usize, 144usize, 96usize);
    let mut rng = Rng::new(43);
    let a: Vec<f64> = rng.vec(m * k).into_iter().map(|v| half::f16::from_f64(v).to_f64()).collect();
    let b: Vec<f64> = rng.vec(k * n).into_iter().map(|v| half::f16::from_f64(v).to_f64()).collect();
    let grid = [m.div_ceil(128) as u32, n.div_ceil(64) as u32, 1];
    // (The simulator has no `tensormap.replace`: descriptors the kernel makes run in this file's GPU test.)
    let kernel = "desc_dot_tiles";
    for ctas in [2, 4] {
        let (ptx, warnings) = ptx_for(kernel, desc_dot_args(), ctas, Target::Sm90a).unwrap();
        assert!(warnings.is_empty(), "{kernel} x{ctas}: {warnings:?}");
        let shape = if ctas == 2 { "m64n64k16" } else { "m64n32k16" };
        assert!(ptx.contains(&format!("wgmma.mma_async.sync.aligned.{shape}")), "{kernel} x{ctas}: not {shape}");
        // Each CTA's part of A (64 x 32) and of B (32 x 64 at 2 CTAs, 32 x 32 at 4), in fp16.
        let bytes = if ctas == 2 { 8192 } else { 6144 };
        assert!(ptx.contains("expect_tx.shared::cta.b64 _, [%r"), "{kernel} x{ctas}: no TMA ring");
        assert!(ptx.contains(&format!("], {bytes};")), "{kernel} x{ctas}: not {bytes} bytes a stage");
        assert!(!ptx.contains("barrier.cluster") && !ptx.contains(".multicast"), "{kernel} x{ctas}: crosses the CTAs");
        let vals = [
            V::Desc(F16, Some(a.clone()), vec![m as u32, k as u32]),
            V::Desc(F16, Some(b.clone()), vec![k as u32, n as u32]),
            V::Desc(F32, None, vec![m as u32, n as u32]),
            V::Int(k as i64),
        ];
        let outs = run_on_ctas(&source(), kernel, desc_dot_args(), &opts(Target::Sm90a), ctas, &vals, grid)
            .unwrap_or_else(|e| panic!("{kernel} x{ctas}: {e}"));
        check_matmul(&outs[0], &a, &b, [m, n, k], &format!("{kernel} x{ctas}"));
    }
}

/// A descriptor block too small to split over the CTAs with TMA boxes of at least 16 bytes a row (`[1, 8]` of
/// f32 over 4 CTAs would be 2 elements each) is laid out unspread, without a word, and runs in each cluster's
/// first CTA; over 2 CTAs (4 elements, 16 bytes) it is spread. Both equal the interpreter on the simulator.
#[test]
fn a_descriptor_block_too_small_to_split_runs_unspread() {
    let (rows, cols) = (3u32, 20u32);
    let src: Vec<f64> = Rng::new(47).vec((rows * cols) as usize);
    let want: Vec<f64> = src.iter().map(|&v| (v as f32 + 1.0) as f64).collect();
    let args = vec![desc(&[1, 8]), desc(&[1, 8]), c(1), c(8)];
    for (ctas, spread) in [(2, true), (4, false)] {
        let (ptx, warnings) = ptx_for("descriptor_tiles", args.clone(), ctas, Target::Sm90a).unwrap();
        assert!(warnings.is_empty(), "x{ctas}: {warnings:?}");
        let at = ptx.find("%cluster_ctarank").expect("a CTA rank read");
        let next: Vec<&str> = ptx[at..].lines().skip(1).take(2).map(str::trim).collect();
        let first_cta_only = next[0].starts_with("setp.ge.u32") && next[1].ends_with("exit;");
        assert_eq!(first_cta_only, !spread, "x{ctas}: {next:?}");
        let vals = [V::Desc(F32, Some(src.clone()), vec![rows, cols]), V::Desc(F32, None, vec![rows, cols])];
        let outs =
            run_on_ctas(&source(), "descriptor_tiles", args.clone(), &opts(Target::Sm90a), ctas, &vals, [3, 3, 1])
                .unwrap_or_else(|e| panic!("x{ctas}: {e}"));
        assert_eq!(outs[0], (want.clone(), want.clone()), "x{ctas}");
    }
}
