//! Shared memory in gluon kernels: a tile staged through a buffer (stored in one layout, loaded in another)
//! comes back equal; multi-buffered allocations index one buffer at a time; descriptor attributes.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_tile::ScalarType::*;

const STAGE: &str = r#"
@gluon.jit
def stage(X, Y, M: gl.constexpr, N: gl.constexpr):
    src: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    dst: gl.constexpr = gl.BlockedLayout([4, 1], [4, 8], [1, 4], [0, 1])
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, src))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, src))
    x = gl.load(X + rows[:, None] * N + cols[None, :])
    smem = gl.allocate_shared_memory(gl.float16, [M, N], gl.SwizzledSharedLayout(4, 2, 4, [1, 0]))
    smem.store(x)
    gl.thread_barrier()
    y = smem.load(dst)
    r2 = gl.arange(0, M, layout=gl.SliceLayout(1, dst))
    c2 = gl.arange(0, N, layout=gl.SliceLayout(0, dst))
    gl.store(Y + r2[:, None] * N + c2[None, :], y)
"#;

#[test]
fn a_tile_staged_through_shared_memory_comes_back_equal() {
    let f = elab(&format!("{HEADER}{STAGE}"), "stage", vec![ptr(F16), ptr(F16), cint(32), cint(64)]);
    let text = f.to_string();
    assert!(text.contains("local_alloc : memdesc<32x64xf16, SwizzledSharedLayout(4,2,4,[1,0])>"), "{text}");
    assert!(text.contains("local_store") && text.contains("local_load"), "{text}");
    let mut rng = Rng::new(3);
    let x = rounded(F16, &rng.vec(32 * 64));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, &x);
    let by = poisoned(&mut mem, "y", F16, 32 * 64);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(by), x, "the staged tile is the input");
}

#[test]
fn allocation_with_a_value_multi_buffers_and_descriptor_attributes() {
    let src = format!(
        "{HEADER}{}",
        r#"
@gluon.jit
def k(X, Y):
    L: gl.constexpr = gl.BlockedLayout([1, 2], [4, 8], [4, 1], [1, 0])
    S: gl.constexpr = gl.NVMMASharedLayout.get_default_for([16, 16], gl.float32)
    r = gl.arange(0, 16, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, 16, layout=gl.SliceLayout(0, L))
    offs = r[:, None] * 16 + c[None, :]
    x = gl.load(X + offs)
    ring = gl.allocate_shared_memory(gl.float32, [2, 16, 16], S)
    gl.static_print(ring.shape, ring.dtype, ring.layout, ring.type.shape, ring.rank, ring.nbytes_per_cta)
    ring.index(0).store(x)
    ring.index(1).store(x * 2.0)
    one = ring.index(1)
    gl.static_print(one.shape, one.layout == S)
    copy = gl.allocate_shared_memory(gl.float32, [16, 16], S, value=one.load(L) + ring.index(0).load(L))
    copy._keep_alive()
    gl.store(Y + offs, copy.load(L))
"#
    );
    let module = tessel_lang::parse_module(&src).unwrap();
    let spec = tessel_lang::elab::Specialization::new(vec![ptr(F32), ptr(F32)]);
    let e = tessel_lang::elab::elaborate_with(&module, "k", &spec, tessel_gluon::registry())
        .unwrap_or_else(|d| panic!("{}", d.render("test.py", &src)));
    assert_eq!(
        e.static_prints,
        ["(2, 16, 16) float32 NVMMASharedLayout(64, 32) (2, 16, 16) 3 2048", "(16, 16) True"],
        "{}",
        e.func
    );
    check_ir(&e.func);
    let text = e.func.to_string();
    assert!(text.contains("memdesc<2x16x16xf32, NVMMASharedLayout(64, 32)>"), "{text}");
    assert_eq!(text.matches("memdesc_index").count(), 4, "{text}");
    let mut rng = Rng::new(5);
    let x = rounded(F32, &rng.vec(256));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, 256);
    run(&e.func, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    let want = rounded(F32, &x.iter().map(|v| v * 3.0).collect::<Vec<_>>());
    assert_eq!(mem.read_f64(by), want);
}
