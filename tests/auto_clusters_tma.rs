//! `examples/tma_matmul.py`'s TMA matmuls (tutorial 09's kernels in small) launched as clusters of 2 and 4 CTAs
//! (`num_ctas`), spread over the CTAs (`tessel_tile::layout::spread`): each CTA's copies bring its rows of A
//! and the columns of B its part of the tile needs, with boxes of that part's shape, its ring's barriers expect
//! its part's bytes, and its epilogue's TMA store writes its part of C. The plain kernel, B given transposed,
//! the warp-specialized loop (a producer warp filling every CTA's own ring) and the persistent kernel with its
//! fused, split loop.
//!
//! On the PTX simulator's clusters against the interpreter (outputs within one fp16 ulp: wgmma sums in its own
//! order) and the interpreter against float64, ragged M, N and K, C poisoned; ptxas when there is one.

mod common;
#[path = "sim_common/mod.rs"]
mod sim_common;

use std::path::Path;

use common::{assemble, c, int};
use sim_common::{RunOptions, V, run_on_ctas};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::F16;
use tessel::tile::{KernelConfig, Target};

const FILE: &str = "tma_matmul.py";

fn source() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tma_matmul.py")).unwrap()
}

fn desc(block: [u32; 2]) -> ArgSpec {
    ArgSpec::TensorDesc { elem: F16, block_shape: block.to_vec(), padding_nan: false, layout: None }
}

fn cb(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

/// The programs the persistent kernel runs (its NUM_SMS): fewer than the tiles, so each walks several.
const PROGRAMS: u32 = 2;

/// A kernel of the file, its specialization for `(bm, bn, bk)` tiles, and its grid for an `m x n` product.
fn kernel(name: &str, (bm, bn, bk): (u32, u32, u32), (m, n): (usize, usize)) -> (Vec<ArgSpec>, [u32; 3]) {
    let sizes = [int(false), int(false), int(false)];
    let tiles = (m.div_ceil(bm as usize) * n.div_ceil(bn as usize)) as u32;
    match name {
        "matmul_kernel" | "matmul_kernel_ws" => {
            let mut s = vec![desc([bm, bk]), desc([bk, bn]), desc([bm, bn])];
            s.extend(sizes);
            s.extend([c(2), cb(name == "matmul_kernel_ws")]);
            (s, [tiles, 1, 1])
        }
        "matmul_kernel_bt" => {
            let mut s = vec![desc([bm, bk]), desc([bn, bk]), desc([bm, bn])];
            s.extend(sizes);
            s.push(c(2));
            (s, [tiles, 1, 1])
        }
        "matmul_kernel_persistent" => {
            let mut s = vec![desc([bm, bk]), desc([bk, bn]), desc([bm, bn])];
            s.extend(sizes);
            s.extend([c(2), c(PROGRAMS as i64), cb(true), cb(true)]);
            (s, [PROGRAMS, 1, 1])
        }
        _ => unreachable!("a kernel of tma_matmul.py"),
    }
}

/// The file's name of a case's kernel (`matmul_kernel_ws` is `matmul_kernel` with WARP_SPECIALIZE).
fn file_kernel(name: &str) -> &str {
    if name == "matmul_kernel_ws" { "matmul_kernel" } else { name }
}

fn ptx(name: &str, spec: Vec<ArgSpec>, warps: u32, ctas: u32) -> (String, Vec<String>) {
    let src = source();
    let config = KernelConfig { num_warps: warps, num_stages: 3, num_ctas: ctas, ..KernelConfig::DEFAULT };
    let sp = Specialization::with_config(spec, config);
    let ks = tessel::KernelSource { file: FILE, source: &src, kernel: file_kernel(name), spec: &sp, module: None };
    let mut t = tessel::pipeline::Timings::default();
    match tessel::pipeline::run(&ks, Target::Sm90a, Stage::Ptx, None, &mut t) {
        Ok(Output::Ptx { kernel, .. }) => (kernel.ptx, t.messages),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => panic!("{name} x{ctas}: {e}"),
    }
}

const KERNELS: [&str; 4] = ["matmul_kernel", "matmul_kernel_ws", "matmul_kernel_bt", "matmul_kernel_persistent"];

/// Every kernel spreads at 2 and 4 CTAs with nothing crossing the CTAs (each loads, multiplies and stores its
/// own part), each CTA's ring expecting its part's bytes; ptxas accepts it. A CTA's part is as square as the
/// tile allows: 128x128 tiles split their rows first (64x128 a CTA, two warpgroups side by side), 128x256 tiles
/// their columns (128x128 a CTA: 32 KiB a K step, where 64x256 parts would bring 40).
#[test]
fn tma_matmuls_spread_over_ctas_without_crossing_them() {
    let cases = [
        ((128, 128, 64), 2, "m64n64k16", 8192 + 16384),
        ((128, 128, 64), 4, "m64n32k16", 8192 + 8192),
        ((128, 256, 64), 2, "m64n128k16", 16384 + 16384),
        ((128, 256, 64), 4, "m64n64k16", 8192 + 16384),
    ];
    for name in KERNELS {
        for (tile, ctas, shape, bytes) in cases {
            let (spec, _) = kernel(name, tile, (256, 256));
            let (ptx, warnings) = ptx(name, spec, 8, ctas);
            assert!(warnings.is_empty(), "{name} x{ctas}: {warnings:?}");
            assert!(ptx.contains(&format!("wgmma.mma_async.sync.aligned.{shape}")), "{name} x{ctas}: not {shape}");
            assert!(ptx.contains(&format!("], {bytes};")), "{name} x{ctas}: a K step is not {bytes} bytes");
            assert!(!ptx.contains("barrier.cluster") && !ptx.contains(".multicast"), "{name} x{ctas}: crosses CTAs");
            assemble(&format!("auto-cluster-{name}-{}-{ctas}", tile.1), &ptx, "sm_90a");
        }
    }
}

/// Each kernel on the simulator's clusters against the interpreter and float64: ragged sizes, a K loop that
/// wraps the ring, C poisoned.
#[test]
fn tma_matmuls_spread_over_ctas_equal_the_interpreter() {
    let (m, n, k) = (200usize, 144usize, 200usize);
    let tile = (128, 64, 32);
    for name in KERNELS {
        for ctas in [2, 4] {
            let what = format!("{name} x{ctas}, {m}x{n}x{k}, tile {tile:?}");
            let (spec, grid) = kernel(name, tile, (m, n));
            let ([a, mut b, cc], want) = sim_common::fp16_matmul_descs(m, n, k, 70 + ctas as u64);
            if name == "matmul_kernel_bt" {
                // B^T, N x K row-major.
                let V::Desc(t, Some(bv), _) = &b else { unreachable!("an input descriptor") };
                let bt: Vec<f64> = (0..n * k).map(|e| bv[(e % k) * n + e / k]).collect();
                b = V::Desc(*t, Some(bt), vec![n as u32, k as u32]);
            }
            let vals = [a, b, cc, V::Int(m as i64), V::Int(n as i64), V::Int(k as i64)];
            let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 4, num_stages: 3, poison: true };
            let outs = run_on_ctas(&source(), file_kernel(name), spec, &opts, ctas, &vals, grid)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            // One fp16 ulp, and the f32 sums' order (wgmma's is not the interpreter's) where C nearly cancels.
            let (sim, interp) = &outs[0];
            for (j, ((&got, &r), &w)) in sim.iter().zip(interp).zip(&want).enumerate() {
                assert!(got.is_finite() && (got - r).abs() <= r.abs() / 1024.0 + 1e-5, "{what}: C[{j}] = {got}, {r}");
                assert!((r - w).abs() <= 1e-3 * w.abs() + 2e-3, "{what}: C[{j}] = {r}, float64 {w}");
            }
        }
    }
}
