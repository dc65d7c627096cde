//! `warpgroup_mma` in gluon kernels: a 64x64x32 fp16 product (one warpgroup) with both operands in NVMMA
//! shared memory, issued asynchronously and waited for, against a float64 reference in the interpreter; a result
//! read before its wait is refused.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_tile::ScalarType::*;

pub const WGMMA_TILE: &str = r#"
@gluon.jit
def wgmma_tile(A, B, C, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, WAIT: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [gl.num_warps(), 1], [16, N, 16])
    ra = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    ka = gl.arange(0, K, layout=gl.SliceLayout(0, L))
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, L))
    nb = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    a = gl.load(A + ra[:, None] * K + ka[None, :])
    b = gl.load(B + kb[:, None] * N + nb[None, :])
    a_s = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16), a)
    b_s = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16))
    b_s.store(b)
    fence_async_shared()
    acc = warpgroup_mma_init(gl.zeros([M, N], gl.float32, layout=ACC))
    acc = warpgroup_mma(a_s, b_s, acc, is_async=True)
    if WAIT:
        acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    gl.store(C + rc[:, None] * N + nc[None, :], gl.convert_layout(acc, L))
"#;

fn matmul(wait: bool) -> Result<f64, String> {
    let (m, n, k) = (64, 64, 32);
    let src = format!("{HEADER}{WGMMA_TILE}");
    let f = elab(&src, "wgmma_tile", vec![ptr(F16), ptr(F16), ptr(F32), cint(m), cint(n), cint(k), cint(wait as i64)]);
    let text = f.to_string();
    assert!(text.contains("warpgroup_dot {precision = ieee, is_async = true}"), "{text}");
    assert!(text.contains("NVMMASharedLayout(64, 16)") && text.contains("NVMMASharedLayout(128, 16)"), "{text}");
    assert!(text.contains("fence_async_shared"), "{text}");
    // Layout assignment keeps a gluon kernel's layouts as written (auto mode would re-lay the accumulator).
    let mut laid_out = f.clone();
    tessel_tile::passes::canonicalize(&mut laid_out);
    let before = laid_out.to_string();
    tessel_tile::layout::assign_layouts(&mut laid_out).unwrap();
    assert_eq!(laid_out.to_string(), before, "assign_layouts changed a gluon kernel");
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let mut rng = Rng::new(9);
    let (a, b) = (rounded(F16, &rng.vec(m * k)), rounded(F16, &rng.vec(k * n)));
    let mut mem = Memory::new();
    let (ba, bb) = (mem.alloc_from("a", F16, &a), mem.alloc_from("b", F16, &b));
    let bc = poisoned(&mut mem, "c", F32, m * n);
    tessel_interp::run(&f, &[Arg::Buffer(ba), Arg::Buffer(bb), Arg::Buffer(bc)], [1, 1, 1], &mut mem)
        .map_err(|e| e.to_string())?;
    let reference: Vec<f64> = (0..m * n).map(|i| (0..k).map(|p| a[i / n * k + p] * b[p * n + i % n]).sum()).collect();
    Ok(assert_close("wgmma 64x64x32 fp16", &mem.read_f64(bc), &reference, 1e-6))
}

#[test]
fn an_async_wgmma_tile_matches_a_float64_reference() {
    matmul(true).unwrap();
}

#[test]
fn an_async_wgmma_result_read_before_its_wait_is_refused() {
    let err = matmul(false).unwrap_err();
    assert!(err.contains("read before a warpgroup_dot_wait"), "{err}");
}

/// `use_acc` a runtime flag (as tutorial 07's `WGMMA` aggregate carries it): program 1 accumulates onto C,
/// program 0 starts from zero. The flag is the dot's scale-d operand, not a select of the accumulator.
const USE_ACC: &str = r#"
@gluon.jit
def use_acc_tile(A, B, C, Out, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [gl.num_warps(), 1], [16, N, 16])
    ra = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    ka = gl.arange(0, K, layout=gl.SliceLayout(0, L))
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, L))
    nb = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    a_s = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16),
                                    gl.load(A + ra[:, None] * K + ka[None, :]))
    b_s = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16),
                                    gl.load(B + kb[:, None] * N + nb[None, :]))
    fence_async_shared()
    c = gl.convert_layout(gl.load(C + ra[:, None] * N + nb[None, :]), ACC)
    flag = gl.program_id(0) == 1
    acc = warpgroup_mma(a_s, b_s, c, use_acc=flag, is_async=True)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    gl.store(Out + gl.program_id(0) * M * N + ra[:, None] * N + nb[None, :], gl.convert_layout(acc, L))
"#;

#[test]
fn a_runtime_use_acc_chooses_between_the_accumulator_and_zero() {
    let (m, n, k) = (64usize, 64usize, 32usize);
    let src = format!("{HEADER}{USE_ACC}");
    let spec = vec![ptr(F16), ptr(F16), ptr(F32), ptr(F32), cint(m as i64), cint(n as i64), cint(k as i64)];
    let f = elab(&src, "use_acc_tile", spec);
    let text = f.to_string();
    let dot = text.lines().find(|l| l.contains("warpgroup_dot ")).expect("a warpgroup_dot");
    assert!(dot.contains("%a_s, %b_s, %c, %flag :"), "a, b, acc and the flag: {dot}");
    assert!(!text.contains("select"), "{f}");
    let mut rng = Rng::new(4);
    let (a, b, c) = (rounded(F16, &rng.vec(m * k)), rounded(F16, &rng.vec(k * n)), rounded(F32, &rng.vec(m * n)));
    let mut mem = Memory::new();
    let (ba, bb, bc) = (mem.alloc_from("a", F16, &a), mem.alloc_from("b", F16, &b), mem.alloc_from("c", F32, &c));
    let bo = poisoned(&mut mem, "out", F32, 2 * m * n);
    run(&f, &[Arg::Buffer(ba), Arg::Buffer(bb), Arg::Buffer(bc), Arg::Buffer(bo)], [2, 1, 1], &mut mem);
    let ab: Vec<f64> = (0..m * n).map(|i| (0..k).map(|p| a[i / n * k + p] * b[p * n + i % n]).sum()).collect();
    let with_c: Vec<f64> = ab.iter().zip(&c).map(|(x, y)| x + y).collect();
    let out = mem.read_f64(bo);
    assert_close("use_acc=False (program 0)", &out[..m * n], &ab, 1e-6);
    assert_close("use_acc=True (program 1)", &out[m * n..], &with_c, 1e-6);
}
