//! The GPU check of thread-block clusters, shared by `tests/clusters.rs` (skipped without a GPU) and
//! `examples/cluster_check.rs` (the program to run under compute-sanitizer): `cluster_row_softmax` of
//! `tests/kernels/gluon_clusters.py` launched as clusters of 2, 4, 8 and 16 CTAs (the tutorial's configurations
//! for rows of 32K..256K floats, and small ones with masked partial tiles) on fresh random inputs with the output
//! poisoned (NaN), against the interpreter on the same inputs.
#![allow(dead_code)]

pub mod auto;

use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::runtime::{Gpu, KArg};
use tessel::tile::KernelConfig;
use tessel::tile::ScalarType::{F32, I32};
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_math::testing::Rng;

/// (rows, columns, block, num_warps, num_ctas): the tutorial's picker for 32K..256K columns, then small blocks of
/// 1 and 2 warps with partial tiles.
pub const CONFIGS: [(usize, usize, u32, u32, u32); 7] = [
    (4, 32 * 1024, 32 * 1024, 4, 2),
    (4, 64 * 1024, 64 * 1024, 4, 4),
    (2, 128 * 1024, 128 * 1024, 4, 8),
    (2, 256 * 1024, 256 * 1024, 4, 16),
    (33, 200, 256, 1, 2),
    (17, 1000, 1024, 2, 4),
    (9, 2000, 2048, 1, 8),
];

/// The softmax's layout: 4 elements per thread, the CTA tiles in order over the cluster.
pub fn layout(warps: u32, ctas: u32) -> String {
    let bases: Vec<String> = (0..ctas.trailing_zeros()).map(|i| format!("[{}]", 1 << i)).collect();
    format!("gl.BlockedLayout([4], [32], [{warps}], [0], cga_layout=[{}])", bases.join(", "))
}

/// Runs every configuration on `gpu` and in the interpreter; a line per configuration, or the first mismatch.
pub fn check(gpu: &Gpu, source: &str, file: &str, seed: u64) -> Result<String, String> {
    let mut report = String::new();
    for (k, &(rows, n, block, warps, ctas)) in CONFIGS.iter().enumerate() {
        let args = vec![
            ArgSpec::Pointer(F32, true),
            ArgSpec::Pointer(F32, true),
            ArgSpec::Int(I32, false),
            ArgSpec::Int(I32, false),
            ArgSpec::Int(I32, false),
            ArgSpec::Constexpr(ConstValue::Int(block as i64)),
            ArgSpec::Constexpr(ConstValue::Expr(layout(warps, ctas))),
        ];
        let spec = Specialization::with_config(
            args,
            KernelConfig { num_warps: warps, num_ctas: ctas, num_stages: 1, ..KernelConfig::DEFAULT },
        );
        let what = format!("{rows}x{n} (block {block}, {warps} warps, {ctas} CTAs)");
        let kernel =
            tessel::load(gpu, source, "cluster_row_softmax", &spec).map_err(|e| format!("{file}: {what}: {e}"))?;
        if kernel.num_ctas() != ctas {
            return Err(format!("{what}: loaded with {} CTAs per cluster", kernel.num_ctas()));
        }
        let x: Vec<f32> = Rng::new(seed + k as u64).vec(rows * n).into_iter().map(|v| (3.0 * v) as f32).collect();
        let poison = vec![f32::NAN; rows * n];
        let (dx, dout) =
            (gpu.upload_slice(&x).map_err(|e| e.to_string())?, gpu.upload_slice(&poison).map_err(|e| e.to_string())?);
        let grid = [rows as u32, 1, 1];
        let n32 = n as i32;
        kernel
            .launch(gpu, grid, &[(&dx).into(), (&dout).into(), KArg::I32(n32), KArg::I32(n32), KArg::I32(n32)])
            .map_err(|e| format!("{what}: launch: {e}"))?;
        gpu.synchronize().map_err(|e| format!("{what}: {e}"))?;
        let got: Vec<f32> = gpu.download_vec(&dout).map_err(|e| e.to_string())?;

        let mut mem = Memory::new();
        let xi = mem.alloc_from("x", F32, &x.iter().map(|&v| v as f64).collect::<Vec<_>>());
        let oi = mem.alloc_from("out", F32, &vec![f64::NAN; rows * n]);
        let iargs = [Arg::Buffer(xi), Arg::Buffer(oi), Arg::Int(n as i64), Arg::Int(n as i64), Arg::Int(n as i64)];
        tessel::interpret(source, "cluster_row_softmax", &spec, &iargs, grid, &mut mem)
            .map_err(|e| format!("{what}: interpreter: {e}"))?;
        let want: Vec<f64> =
            mem.buffer(oi).bytes.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64).collect();
        let mut worst = 0.0f64;
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            let g = g as f64;
            if g.is_nan() || w.is_nan() {
                return Err(format!("{what}: element {i} (row {}, col {}): GPU {g}, interpreter {w}", i / n, i % n));
            }
            let err = (g - w).abs() / w.abs().max(1e-30);
            worst = worst.max(err);
            if err > 1e-4 {
                return Err(format!("{what}: element {i}: GPU {g}, interpreter {w} (relative error {err:e})"));
            }
        }
        report += &format!("{what}: equal to the interpreter (largest relative error {worst:.1e})\n");
    }
    Ok(report)
}
