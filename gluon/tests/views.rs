//! Views of a shared-memory descriptor: `permute`, `slice`, `reshape` see the same bytes with another shape
//! (run in the interpreter, against the tile they were made from), a permuted K-major buffer feeds
//! `warpgroup_mma` as B, and slices tessel cannot address are refused with a span.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_tile::ScalarType::*;

pub const VIEWS: &str = r#"
@gluon.jit
def views_kernel(x_ptr, t_ptr, s_ptr, q_ptr, b_ptr, M: gl.constexpr, N: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    x = gl.load(x_ptr + r[:, None] * N + c[None, :])
    smem = gl.allocate_shared_memory(gl.float16, [M, N], gl.NVMMASharedLayout.get_default_for([M, N], gl.float16), x)
    # The transpose: element (j, i) of the view is x[i, j].
    tr = gl.arange(0, N, layout=gl.SliceLayout(1, L))
    tc = gl.arange(0, M, layout=gl.SliceLayout(0, L))
    t = smem.permute((1, 0)).load(L)
    gl.store(t_ptr + tr[:, None] * M + tc[None, :], t)
    # The second half of the rows, twice: as a slice, and as buffer 1 of the reshaped [2, M // 2, N].
    h = gl.arange(0, M // 2, layout=gl.SliceLayout(1, L))
    s = smem.slice(M // 2, M // 2).load(L)
    gl.store(s_ptr + h[:, None] * N + c[None, :], s)
    q = smem.reshape([2, M // 2, N]).index(1).load(L)
    gl.store(q_ptr + h[:, None] * N + c[None, :], q)
    # The bits as int16, under a row-major layout: element (i, j) is the one at offset i * N + j of the swizzled
    # buffer.
    b = smem._reinterpret(gl.int16, [M, N], gl.SwizzledSharedLayout(1, 1, 1, [1, 0])).load(L)
    gl.store(b_ptr + r[:, None] * N + c[None, :], b)
"#;

#[test]
fn permuted_sliced_and_reshaped_views_read_the_same_bytes() {
    let (m, n) = (64, 64);
    let f = elab(
        &format!("{HEADER}{VIEWS}"),
        "views_kernel",
        vec![ptr(F16), ptr(F16), ptr(F16), ptr(F16), ptr(I16), cint(m), cint(n)],
    );
    let text = f.to_string();
    for op in ["memdesc_permute {order = [1, 0]}", "memdesc_slice {dim = 0, start = 32}", "memdesc_reshape"] {
        assert!(text.contains(op), "{op} missing:\n{text}");
    }
    let (m, n) = (m as usize, n as usize);
    let x = rounded(F16, &Rng::new(5).vec(m * n));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, &x);
    let bt = poisoned(&mut mem, "t", F16, m * n);
    let bs = poisoned(&mut mem, "s", F16, m * n / 2);
    let bq = poisoned(&mut mem, "q", F16, m * n / 2);
    let bb = poisoned(&mut mem, "b", I16, m * n);
    let args = [Arg::Buffer(bx), Arg::Buffer(bt), Arg::Buffer(bs), Arg::Buffer(bq), Arg::Buffer(bb)];
    run(&f, &args, [1, 1, 1], &mut mem);
    let want_t: Vec<f64> = (0..m * n).map(|k| x[(k % m) * n + k / m]).collect();
    assert_eq!(mem.read_f64(bt), want_t);
    assert_eq!(mem.read_f64(bs), x[m * n / 2..]);
    assert_eq!(mem.read_f64(bq), x[m * n / 2..]);
    // Offset o of the NVMMA buffer holds x at the coordinates its layout gives o.
    let nvmma =
        tessel_layouts::AnyLayout::Shared(tessel_layouts::SharedLayout::Nvmma(tessel_layouts::NvmmaSharedLayout {
            swizzle_byte_width: 128,
            element_bitwidth: 16,
            rank: 2,
            transposed: false,
            fp4_padded: false,
            cga: tessel_layouts::CgaLayout::Single,
        }))
        .to_linear_buffered(&[m as u32, n as u32])
        .unwrap();
    let want_b: Vec<f64> = (0..m * n)
        .map(|o| {
            let rc = nvmma.apply_named(&[("offset", o as u32)]);
            let v = x[rc[0].1 as usize * n + rc[1].1 as usize];
            let bits = tessel_tile::eval::value::to_bits(tessel_tile::eval::value::Val::Float(v), F16);
            bits as u16 as i16 as f64
        })
        .collect();
    assert_eq!(mem.read_f64(bb), want_b);
}

const BAD_SLICE: &str = r#"
@gluon.jit
def bad(x_ptr, CASE: gl.constexpr):
    smem = gl.allocate_shared_memory(gl.float16, [64, 64], gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16))
    if CASE == 0:
        v = smem.slice(32, 32, dim=1)
    elif CASE == 1:
        v = smem.slice(16, 32)
    else:
        v = smem.permute((0, 2))
"#;

#[test]
fn views_tessel_cannot_address_are_refused_with_a_span() {
    let err = |case| elab_error(&format!("{HEADER}{BAD_SLICE}"), "bad", vec![ptr(F16), cint(case)]);
    let e = err(0);
    assert!(e.contains("slicing dim 1 of this layout does not give one contiguous block"), "{e}");
    assert!(e.contains("smem.slice(32, 32, dim=1)"), "{e}");
    assert!(err(1).contains("at a multiple of it"));
    assert!(err(2).contains("is not a permutation of the 2 dims"));
}
