//! `examples/tma_matmul.py`'s TMA matmuls (tutorial 09's kernels in small) launched as clusters of 2 and 4 CTAs
//! (`num_ctas`), spread over the CTAs (`tessel_tile::layout::spread`): each CTA's ring holds its rows of A and
//! the columns of B its part of the tile needs, copied in boxes of that part's shape, its barriers expect its
//! part's bytes, and its epilogue's TMA store writes its part of C. In a loop at the kernel's top level the CTAs
//! that hold the same part share its copies (multicast; a slot is refilled once each of them has released it,
//! in the warp-specialized loop each CTA's consumers releasing it to every producer); the persistent kernel's
//! fused, split loop (nested in the elaborator's `if`) copies for each CTA alone. The plain kernel, B given
//! transposed, the warp-specialized loop and the persistent kernel.
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

/// Every kernel spreads at 2 and 4 CTAs, each CTA loading, multiplying and storing its own part, its ring
/// expecting its part's bytes; ptxas accepts it. A CTA's part is as square as the
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
            // A loop at the kernel's top level shares the copies of what several CTAs hold (multicast, a slot
            // refilled once all of them released it); the persistent kernel's nested loop copies for each CTA
            // alone. No data moves between CTAs otherwise.
            let shared = name != "matmul_kernel_persistent";
            assert_eq!(ptx.contains(".multicast::cluster"), shared, "{name} x{ctas}");
            assert_eq!(ptx.contains("barrier.cluster"), shared, "{name} x{ctas}");
            assert!(!ptx.contains("ld.shared::cluster") && !ptx.contains("st.shared::cluster"), "{name} x{ctas}");
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

/// The multicast ring broken two ways, each refused by the simulator: a CTA's wait for its peers' releases taken
/// out (its multicast copy reaches a slot a peer may still read, its bytes a barrier phase the peer still waits
/// in) and the arrivals on the peer's barrier taken out (the wait for them never completes: a deadlock).
#[test]
fn a_broken_multicast_ring_is_refused() {
    let (m, n, k) = (200usize, 144usize, 200usize);
    let tile = (128, 64, 32);
    let (spec, grid) = kernel("matmul_kernel", tile, (m, n));
    let ([a, b, cc], _) = sim_common::fp16_matmul_descs(m, n, k, 5);
    let vals = [a, b, cc, V::Int(m as i64), V::Int(n as i64), V::Int(k as i64)];
    let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 4, num_stages: 3, poison: true };
    let run = |edit: &dyn Fn(&str) -> String| {
        sim_common::simulate_broken_on_ctas(&source(), "matmul_kernel", spec.clone(), &opts, 2, &vals, grid, edit)
    };
    assert_eq!(run(&|p| p.to_string()), Ok(()), "the unbroken PTX");
    // (The early copy either meets a wgmma still reading the slot, or lands its bytes in the phase the peer is
    // still waiting in, which then never completes.)
    let err = run(&|p| sim_common::skip_wait(p, "mapa.shared::cluster", 0)).unwrap_err();
    assert!(err.contains("cp.async.bulk.tensor") || err.contains("deadlock"), "no wait for the releases: {err}");
    let no_remote = |p: &str| {
        p.lines().filter(|l| !l.contains("mbarrier.arrive.shared::cluster.b64")).collect::<Vec<_>>().join("\n")
    };
    let err = run(&no_remote).unwrap_err();
    assert!(err.contains("deadlock") || err.contains("never"), "no arrival on the peer: {err}");
}
