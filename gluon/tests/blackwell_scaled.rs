//! Block-scaled MMAs and tcgen05_copy in gluon kernels: what the builtins refuse, at the call (or the argument)
//! that is wrong: a copy source no matrix descriptor reads, scales outside a TensorMemoryScalesLayout buffer, an
//! e2m1 operand beside fp8 that is not padded, an unknown format; and scales broadcast over a CTA pair, stored
//! and read back in the interpreter. The MMA kernels' results are checked against the
//! interpreter and float64 in `tests/tcgen05.rs` (`tests/kernels/gluon_tcgen05_scaled.py`).

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_tile::ScalarType::*;

const IMPORTS: &str = "\
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout, TensorMemoryScalesLayout, allocate_tensor_memory, tcgen05_copy, tcgen05_mma_scaled,
)
";

fn src(body: &str) -> String {
    format!("{HEADER}{IMPORTS}{body}")
}

#[test]
fn a_copy_source_no_descriptor_reads_is_refused_at_the_call() {
    let body = r#"
@gluon.jit
def k(X):
    smem = gl.allocate_shared_memory(gl.float32, [128, 32], gl.NVMMASharedLayout(0, 32))
    tmem = allocate_tensor_memory(gl.float32, [128, 32], TensorMemoryLayout((128, 32), col_stride=1))
    tcgen05_copy(smem, tmem)
"#;
    let err = elab_error(&src(body), "k", vec![ptr(F32)]);
    assert!(err.contains("no tcgen05.cp copies memdesc<128x32xf32, NVMMASharedLayout(0, 32)>"), "{err}");
    assert!(err.contains("tcgen05_copy(smem, tmem)"), "the span: {err}");
    // 16-bit elements into a TensorMemoryLayout buffer.
    let body = r#"
@gluon.jit
def k(X):
    smem = gl.allocate_shared_memory(gl.float16, [128, 64], gl.NVMMASharedLayout(128, 16))
    tmem = allocate_tensor_memory(gl.float16, [128, 64], TensorMemoryLayout((128, 64), col_stride=1))
    tcgen05_copy(smem, tmem)
"#;
    let err = elab_error(&src(body), "k", vec![ptr(F32)]);
    assert!(err.contains("copies 32-bit elements"), "{err}");
}

/// A `tcgen05_mma_scaled` of 128 x 128 x 128 with A and B of `a_ty`/`b_ty` in the given layouts, scales made by
/// `scales` (a statement defining `sa` and `sb`), formats `fa`/`fb`.
fn mma(a: &str, b: &str, scales: &str, fa: &str, fb: &str) -> String {
    format!(
        r#"
@gluon.jit
def k(X):
    a = {a}
    b = {b}
{scales}
    acc = allocate_tensor_memory(gl.float32, [128, 128], TensorMemoryLayout((128, 128), col_stride=1))
    tcgen05_mma_scaled(a, b.permute((1, 0)), acc, sa, sb, "{fa}", "{fb}", use_acc=False)
"#
    )
}

const FP8: &str = "gl.allocate_shared_memory(gl.float8e4nv, [128, 128], gl.NVMMASharedLayout(128, 8))";
const FP4: &str = "gl.allocate_shared_memory(gl.uint8, [128, 64], gl.NVMMASharedLayout(64, 8))";
const SCALES: &str = "    sa = allocate_tensor_memory(gl.uint8, [128, 4], TensorMemoryScalesLayout())
    sb = allocate_tensor_memory(gl.uint8, [128, 4], TensorMemoryScalesLayout())";

#[test]
fn a_scaled_mma_elaborates_and_its_ir_round_trips() {
    let f = elab(&src(&mma(FP8, FP8, SCALES, "e4m3", "e4m3")), "k", vec![ptr(F32)]);
    let text = f.to_string();
    assert!(text.contains("tcgen05_mma_scaled {a_format = e4m3, b_format = e4m3}"), "{text}");
    assert!(text.contains("memdesc<128x4xu8, TensorMemoryScalesLayout()>"), "{text}");
}

#[test]
fn scales_outside_a_scales_layout_are_refused_at_the_argument() {
    let scales = "    sa = allocate_tensor_memory(gl.float32, [128, 4], TensorMemoryLayout((128, 4), col_stride=1))
    sb = allocate_tensor_memory(gl.uint8, [128, 4], TensorMemoryScalesLayout())";
    let err = elab_error(&src(&mma(FP8, FP8, scales, "e4m3", "e4m3")), "k", vec![ptr(F32)]);
    assert!(
        err.contains(
            "`a_scale` of `blackwell.tcgen05_mma_scaled` must be tensor memory laid out by a TensorMemoryScalesLayout"
        ),
        "{err}"
    );
    // e4m3 scales with fp8 operands (nvfp4's scales go with e2m1 only).
    let scales = "    sa = allocate_tensor_memory(gl.float8e4nv, [128, 8], TensorMemoryScalesLayout())
    sb = allocate_tensor_memory(gl.float8e4nv, [128, 8], TensorMemoryScalesLayout())";
    let err = elab_error(&src(&mma(FP8, FP8, scales, "e4m3", "e4m3")), "k", vec![ptr(F32)]);
    assert!(err.contains("an fp8 operand takes e8m0 (u8) scales"), "{err}");
}

#[test]
fn an_unpadded_e2m1_operand_beside_fp8_and_unknown_formats_are_refused() {
    let err = elab_error(&src(&mma(FP8, FP4, SCALES, "e4m3", "e2m1")), "k", vec![ptr(F32)]);
    assert!(
        err.contains("operand B (e2m1) of an MMA with an 8-bit operand") && err.contains("fp4_padded=True"),
        "{err}"
    );
    let err = elab_error(&src(&mma(FP8, FP8, SCALES, "e4m3", "e3m4")), "k", vec![ptr(F32)]);
    assert!(err.contains("`b_type` of `blackwell.tcgen05_mma_scaled` must be one of"), "{err}");
    // The operand's element type must be the format's storage.
    let err = elab_error(&src(&mma(FP8, FP8, SCALES, "e4m3", "e5m2")), "k", vec![ptr(F32)]);
    assert!(err.contains("operand B of format e5m2 is a 2-D buffer of f8e5m2"), "{err}");
}

#[test]
fn scales_broadcast_over_a_cta_pair_store_and_load_in_each_cta() {
    // 05-moe-bmm1-fused-gather's activation scales: `TensorMemoryScalesLayout(cga_layout=((0, 0),))` in a kernel
    // of two CTAs, filled through its register layout (each CTA its copy) and read back.
    let src = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia import blackwell


@gluon.jit
def broadcast_scales(Out):
    layout: gl.constexpr = blackwell.TensorMemoryScalesLayout(cga_layout=((0, 0), ))
    s = blackwell.allocate_tensor_memory(gl.uint8, [128, 4], layout)
    regs: gl.constexpr = s.get_reg_layout()
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, regs))
    c = gl.arange(0, 4, layout=gl.SliceLayout(0, regs))
    s.store((r[:, None] * 4 + c[None, :]).to(gl.uint8))
    gl.store(Out + r[:, None] * 4 + c[None, :], s.load(regs))
"#;
    let mut config = tessel_tile::KernelConfig { num_ctas: 2, ..tessel_tile::KernelConfig::DEFAULT };
    config.num_warps = 4;
    let f = elab_with(src, "broadcast_scales", &tessel_lang::elab::Specialization::with_config(vec![ptr(U8)], config));
    assert!(f.to_string().contains("TensorMemoryScalesLayout(cga_layout=[[0, 0]])"), "{f}");
    let mut mem = Memory::new();
    let out = poisoned(&mut mem, "out", U8, 512);
    run(&f, &[Arg::Buffer(out)], [2, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(out), (0..512).map(|i| (i % 256) as f64).collect::<Vec<_>>());
}
