//! Gluon's Hopper TMA: `examples/gluon_tma_matmul.py` (a two-buffer ring of TMA loads, an mbarrier per buffer,
//! async wgmma, a TMA store epilogue) against a float64 reference in the interpreter on ragged sizes (the boxes
//! past the edges read zeros and write nothing), and the checks at the call: the buffer's layout, the
//! descriptor's origin, multicast.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, Specialization};
use tessel_tile::ScalarType::*;

fn desc(block: &[u32]) -> ArgSpec {
    ArgSpec::TensorDesc { elem: F16, block_shape: block.to_vec(), padding_nan: false, layout: None }
}

#[test]
fn tma_matmul_matches_a_float64_reference_on_ragged_sizes() {
    let src = example_source("gluon_tma_matmul.py");
    let (bm, bn, bk) = (64u32, 64u32, 32u32);
    let f = elab(&src, "matmul_kernel", vec![desc(&[bm, bk]), desc(&[bk, bn]), desc(&[bm, bn]), int()]);
    let text = f.to_string();
    for op in ["tma_load", "mbarrier_expect {bytes = 8192}", "tma_store", "tma_store_wait {pending = 0}"] {
        assert!(text.contains(op), "{op} missing:\n{text}");
    }
    // M, N, K not multiples of the blocks; rows padded to 16-byte multiples, as TMA requires.
    let (m, n, k) = (100usize, 72usize, 88usize);
    let (lda, ldb, ldc) = (88usize, 72usize, 72usize);
    let mut rng = Rng::new(11);
    let (a, b) = (rounded(F16, &rng.vec(m * lda)), rounded(F16, &rng.vec(k * ldb)));
    let mut mem = Memory::new();
    let (ba, bb) = (mem.alloc_from("a", F16, &a), mem.alloc_from("b", F16, &b));
    let bc = poisoned(&mut mem, "c", F16, m * ldc);
    let d = |buf, rows: usize, cols: usize, ld: usize| {
        [Arg::Buffer(buf), Arg::Int(rows as i64), Arg::Int(cols as i64), Arg::Int(ld as i64), Arg::Int(1)]
    };
    let mut args: Vec<Arg> = Vec::new();
    args.extend(d(ba, m, k, lda));
    args.extend(d(bb, k, n, ldb));
    args.extend(d(bc, m, n, ldc));
    args.push(Arg::Int(k as i64));
    let grid = [m.div_ceil(bm as usize) as u32, n.div_ceil(bn as usize) as u32, 1];
    run(&f, &args, grid, &mut mem);
    let c = mem.read_f64(bc);
    let reference: Vec<f64> =
        (0..m * n).map(|i| (0..k).map(|p| a[i / n * lda + p] * b[p * ldb + i % n]).sum()).collect();
    let got: Vec<f64> = (0..m * n).map(|i| c[i / n * ldc + i % n]).collect();
    assert_close("gluon TMA matmul 100x72x88", &got, &reference, 2e-3);
}

const WRONG_LAYOUT: &str = r#"
@gluon.jit
def k(x_desc):
    buf = gl.allocate_shared_memory(gl.float16, [64, 64], gl.NVMMASharedLayout(64, 16))
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    tma.async_load(x_desc, [0, 0], bar, buf)
"#;

#[test]
fn a_buffer_not_in_the_descriptors_layout_is_refused_at_the_call() {
    let src = format!("{HEADER}from triton.experimental.gluon.language.nvidia.hopper import tma\n{WRONG_LAYOUT}");
    let err = elab_error(&src, "k", vec![desc(&[64, 64])]);
    assert!(err.contains("not in the descriptor's TMA layout") && err.contains("desc.layout"), "{err}");
    assert!(err.contains("tma.async_load(x_desc, [0, 0], bar, buf)"), "the span shows the call: {err}");
    let multicast = WRONG_LAYOUT
        .replace("gl.NVMMASharedLayout(64, 16)", "x_desc.layout")
        .replace("bar, buf)", "bar, buf, multicast=True)");
    let src = format!("{HEADER}from triton.experimental.gluon.language.nvidia.hopper import tma\n{multicast}");
    // A one-CTA program has no one to share the copy with: an ordinary load, as in Triton.
    let f = elab(&src, "k", vec![desc(&[64, 64])]);
    assert!(f.to_string().contains("tma_load %x_desc") && !f.to_string().contains("multicast"), "{f}");
}

/// In a cluster, `multicast=True` marks the load (CTA 0 copies for all: codegen's and the simulator's, tested in
/// tests/clusters.rs), also into a buffer whose cga_layout is all zeros.
#[test]
fn multicast_loads_in_a_cluster() {
    let multicast = WRONG_LAYOUT
        .replace("gl.NVMMASharedLayout(64, 16)", "x_desc.layout")
        .replace("bar, buf)", "bar, buf, multicast=True)");
    let src = format!("{HEADER}from triton.experimental.gluon.language.nvidia.hopper import tma\n{multicast}");
    let spec = |ctas| {
        Specialization::with_config(
            vec![desc(&[64, 64])],
            tessel_tile::KernelConfig { num_ctas: ctas, ..tessel_tile::KernelConfig::DEFAULT },
        )
    };
    let f = elab_with(&src, "k", &spec(2));
    assert!(f.to_string().contains("tma_load {multicast = true} %x_desc"), "{f}");
    // A buffer whose cga_layout gives every CTA the whole block is in the descriptor's layout.
    let broadcast = multicast.replace("x_desc.layout)", "gl.NVMMASharedLayout(128, 16, cga_layout=[[0, 0]]))");
    let src = format!("{HEADER}from triton.experimental.gluon.language.nvidia.hopper import tma\n{broadcast}");
    assert!(elab_with(&src, "k", &spec(2)).to_string().contains("tma_load {multicast = true}"));
}

/// `fence_async_shared(cluster=True)` covers every CTA's shared memory (codegen: `fence.proxy.async.shared::cluster`,
/// `codegen/tests/filetests/cluster_fence.tir`); the default, the CTA's own.
#[test]
fn cluster_fences() {
    let src =
        format!("{HEADER}\n@gluon.jit\ndef k(x):\n    fence_async_shared(cluster=True)\n    fence_async_shared()\n");
    let text = elab(&src, "k", vec![ptr(F32)]).to_string();
    assert!(text.contains("fence_async_shared {cluster = true}\n  fence_async_shared\n"), "{text}");
}
