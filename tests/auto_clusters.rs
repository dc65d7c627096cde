//! Auto-mode kernels launched as thread-block clusters (`num_ctas` > 1, `tests/kernels/auto_clusters.py`).
//!
//! Auto mode does not spread tensors over a cluster's CTAs yet: the program runs in the cluster's first CTA as it
//! would at `num_ctas` = 1, and the other CTAs exit at the entry (`codegen`'s `cluster::leader_only`). These tests
//! hold it to that: every kernel, including an atomic whose old value is used inside a spin loop, a pipelined dot
//! and TMA descriptors, compiles for sm_90a and sm_100a at 2 and 4 CTAs, assembles (ptxas when there is one), runs
//! on the PTX simulator's clusters with the outputs poisoned and equals the interpreter (and float64); the PTX is
//! a cluster entry whose program id is the cluster's.

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
    ArgSpec::TensorDesc { elem: F32, block_shape: block.to_vec(), padding_nan: false, layout: None }
}

fn opts(target: Target) -> RunOptions<'static> {
    RunOptions { file: FILE, target, num_warps: 4, num_stages: 3, poison: true }
}

fn ptx_for(kernel: &str, args: Vec<ArgSpec>, ctas: u32, target: Target) -> Result<String, String> {
    let src = source();
    let spec = Specialization::with_config(args, KernelConfig { num_ctas: ctas, ..KernelConfig::DEFAULT });
    let ks = tessel::KernelSource { file: FILE, source: &src, kernel, spec: &spec, module: None };
    match tessel::pipeline::run(&ks, target, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => Ok(kernel.ptx),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => Err(e.to_string()),
    }
}

/// Every kernel of the file with the arguments the tests below give it.
fn kernels() -> Vec<(&'static str, Vec<ArgSpec>)> {
    vec![
        ("add_masked", vec![ptr(F32), ptr(F32), ptr(F32), int(false), c(256)]),
        ("program_ids", vec![ptr(I32)]),
        ("locked_total", vec![ptr(I32), ptr(I32), ptr(I32), ptr(I32), int(false), c(128)]),
        ("row_softmax", vec![ptr(F32), ptr(F32), int(false), int(false), c(512)]),
        ("dot_tiles", vec![ptr(F16), ptr(F16), ptr(F32), int(false), int(false), int(false), c(64), c(64), c(32)]),
        ("descriptor_tiles", vec![desc(&[32, 64]), desc(&[32, 64]), c(32), c(64)]),
        (
            "device_descriptor_tiles",
            vec![ptr(F32), ptr(F32), ArgSpec::Int(I32, true), ArgSpec::Int(I32, true), c(32), c(64)],
        ),
        ("printing", vec![ptr(F32), c(64)]),
    ]
}

#[test]
fn auto_kernels_compile_to_cluster_entries_that_only_the_first_cta_runs() {
    for target in [Target::Sm90a, Target::Sm100a] {
        for ctas in [2, 4] {
            for (kernel, args) in kernels() {
                let ptx = ptx_for(kernel, args, ctas, target).unwrap_or_else(|e| panic!("{kernel} x{ctas}: {e}"));
                assert!(ptx.contains(&format!(".reqnctapercluster {ctas}, 1, 1")), "{kernel}: not a cluster entry");
                // The entry reads the CTA's rank and lets every CTA but the first exit before anything else.
                let at = ptx.find("%cluster_ctarank").unwrap_or_else(|| panic!("{kernel}: no CTA rank read"));
                let next: Vec<&str> = ptx[at..].lines().skip(1).take(2).map(str::trim).collect();
                assert!(next[0].starts_with("setp.ge.u32") && next[1].ends_with("exit;"), "{kernel}: {next:?}");
                if kernel == "program_ids" {
                    assert!(ptx.contains("%clusterid.x") && ptx.contains("%nclusterid.y"), "{kernel}: {ptx}");
                }
                // Wherever a program's id is read (program_id, the scratch slot of a tensor map made in the
                // kernel, device_print's pid), it is the cluster's: a CTA's id is not the program's.
                assert!(!ptx.contains("%ctaid") && !ptx.contains("%nctaid"), "{kernel}: a CTA's id read");
                // Nothing reaches another CTA: no cluster barrier, no distributed shared memory.
                assert!(!ptx.contains("barrier.cluster") && !ptx.contains("shared::cluster.u"), "{kernel}");
                assemble(&format!("auto-{kernel}-{ctas}"), &ptx, target.name());
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
        let (sim, interp) = &outs[0];
        for r in 0..rows {
            let row: Vec<f64> = x[r * stride..r * stride + n].iter().map(|&v| v as f32 as f64).collect();
            let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = row.iter().map(|v| (v - m).exp()).sum();
            for j in 0..stride {
                let (s, i) = (sim[r * stride + j], interp[r * stride + j]);
                if j < n {
                    let w = (row[j] - m).exp() / sum;
                    assert!((i - w).abs() <= 1e-6 * w.max(1e-3), "{target} row {r} col {j}: interpreter {i} vs {w}");
                    assert!((s - i).abs() <= 1e-6 * i.max(1e-3), "{target} row {r} col {j}: simulator {s} vs {i}");
                } else {
                    assert!(s.is_nan() && i.is_nan(), "{target} row {r} col {j}: written past the mask");
                }
            }
        }
    }
    // A pipelined dot on ragged sizes (wgmma on sm_90a, tcgen05 on sm_100a).
    let (m, nn, k) = (100usize, 72usize, 80usize);
    let a: Vec<f64> = rng.vec(m * k).into_iter().map(|v| half::f16::from_f64(v).to_f64()).collect();
    let b: Vec<f64> = rng.vec(k * nn).into_iter().map(|v| half::f16::from_f64(v).to_f64()).collect();
    for target in [Target::Sm90a, Target::Sm100a] {
        let vals = [
            V::Buf(F16, a.clone()),
            V::Buf(F16, b.clone()),
            V::Out(F32, m * nn),
            V::Int(m as i64),
            V::Int(nn as i64),
            V::Int(k as i64),
        ];
        let args = vec![ptr(F16), ptr(F16), ptr(F32), int(false), int(false), int(false), c(64), c(64), c(32)];
        let outs = run_on_ctas(&source(), "dot_tiles", args, &opts(target), 2, &vals, [2, 2, 1])
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let (sim, interp) = &outs[0];
        for i in 0..m {
            for j in 0..nn {
                let w: f64 = (0..k).map(|t| a[i * k + t] * b[t * nn + j]).sum();
                let (s, g) = (sim[i * nn + j], interp[i * nn + j]);
                assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{target} ({i}, {j}): interpreter {g} vs {w}");
                assert!((s - g).abs() <= 1e-5 * (1.0 + g.abs()), "{target} ({i}, {j}): simulator {s} vs {g}");
            }
        }
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
