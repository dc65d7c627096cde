//! What Gluon kernels receive from host Python and read off their arguments: constexprs given as Python
//! expressions (layouts, classes a host-side factory builds), `desc.block_type` and `desc.type`, `isinstance` on
//! layout classes, `constexpr.value`. Interpreter results, the IR, and errors with spans.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, ConstValue};
use tessel_tile::ScalarType::*;

fn expr(src: &str) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Expr(src.to_string()))
}

/// `Scaler(k)` builds a class (as tutorial 07's `GroupedPersistentTileScheduler(GROUP)` does) whose jit method
/// multiplies by the captured `k` and names the class it is a method of.
const COPY: &str = r#"
def Scaler(k):
    K = gl.constexpr(k)

    @gluon.aggregate
    class ScalerImpl:
        x: gl.tensor

        @gluon.jit
        def apply(self):
            return ScalerImpl(self.x * K.value)

    ScalerImpl.__name__ = f"Scaler({K.value})"
    return ScalerImpl

@gluon.jit
def copy(X, Y, n, BLOCK: gl.constexpr, layout: gl.constexpr, Impl: gl.constexpr):
    gl.static_assert(isinstance(layout, gl.BlockedLayout))
    gl.static_assert(not isinstance(layout, gl.NVMMASharedLayout))
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    m = offs < n
    x = gl.load(X + offs, mask=m)
    gl.store(Y + offs, Impl(x).apply().x, mask=m)
"#;

fn copy_spec(layout: &str, imp: &str) -> Vec<ArgSpec> {
    vec![ptr(F32), ptr(F32), int(), cint(128), expr(layout), expr(imp)]
}

#[test]
fn python_constants_bind_in_the_kernels_module() {
    let src = format!("{HEADER}{COPY}");
    // The layout in Python (`gl.` from the module) and as `tessel layout` spells it (bare).
    for layout in ["gl.BlockedLayout([1], [32], [4], [0])", "BlockedLayout([1], [32], [4], [0])"] {
        let f = elab(&src, "copy", copy_spec(layout, "Scaler(3)"));
        let n = 300usize;
        let x = rounded(F32, &Rng::new(3).vec(n));
        let mut mem = Memory::new();
        let bx = mem.alloc_from("x", F32, &x);
        let by = poisoned(&mut mem, "y", F32, n);
        run(&f, &[Arg::Buffer(bx), Arg::Buffer(by), Arg::Int(n as i64)], [3, 1, 1], &mut mem);
        let want: Vec<f64> = x.iter().map(|v| rounded(F32, &[v * 3.0])[0]).collect();
        assert_eq!(mem.read_f64(by), want, "{layout}");
    }
}

#[test]
fn a_constant_that_does_not_evaluate_names_the_parameter_and_the_text() {
    let src = format!("{HEADER}{COPY}");
    let e = elab_error(&src, "copy", copy_spec("gl.BlockedLayout([1], [32], [4], [0])", "Scalr(3)"));
    assert!(e.contains("the constant `Impl=Scalr(3)` does not evaluate: name `Scalr` is not defined"), "{e}");
    // At the parameter of the kernel.
    assert!(e.contains("test.py:"), "{e}");
    let e = elab_error(&src, "copy", copy_spec("gl.SwizzledSharedLayout(1, 1, 1, [0])", "Scaler(3)"));
    assert!(e.contains("static_assert"), "{e}");
}

const DESC: &str = r#"
@gluon.jit
def k(x_desc, Y, ONLY_WRITES: gl.constexpr):
    bt = x_desc.block_type
    gl.static_assert(x_desc.type.block_type.element_ty == gl.float16)
    gl.static_assert(bt.nbytes == 64 * 32 * 2)
    bufs = gl.allocate_shared_memory(bt.element_ty, [3] + bt.shape, x_desc.layout)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    for i in gl.static_range(3):
        mbarrier.expect(bar, bt.nbytes)
        tma.async_load(x_desc, [0, 32 * i], bar, bufs.index(i))
        mbarrier.wait(bar, i % 2)
    L: gl.constexpr = gl.BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, 32, layout=gl.SliceLayout(0, L))
    total = bufs.index(0).load(L).to(gl.float32) + bufs.index(1).load(L).to(gl.float32) + bufs.index(2).load(L).to(gl.float32)
    gl.store(Y + r[:, None] * 32 + c[None, :], total)
    tma.store_wait(0, read_only=not ONLY_WRITES)
"#;

const DESC_HEADER: &str = "from triton.experimental.gluon.language.nvidia.hopper import tma\n";

#[test]
fn block_type_shapes_a_ring_of_three_buffers_filled_by_tma() {
    let src = format!("{HEADER}{DESC_HEADER}{DESC}");
    let d = ArgSpec::TensorDesc { elem: F16, block_shape: vec![64, 32], padding_nan: false, layout: None };
    let f = elab(&src, "k", vec![d.clone(), ptr(F32), cint(0)]);
    let text = f.to_string();
    assert!(text.contains("mbarrier_expect {bytes = 4096}"), "{text}");
    assert!(text.contains("memdesc<3x64x32xf16"), "{text}");
    assert!(text.contains("tma_store_wait {pending = 0}"), "{text}");
    // `read_only=False`: the wait covers the stores' writes too.
    let g = elab(&src, "k", vec![d, ptr(F32), cint(1)]);
    assert!(g.to_string().contains("tma_store_wait {pending = 0, writes = true}"), "{g}");
    let (rows, cols) = (64usize, 96usize);
    let x = rounded(F16, &Rng::new(5).vec(rows * cols));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, &x);
    let by = poisoned(&mut mem, "y", F32, 64 * 32);
    let args = [
        Arg::Buffer(bx),
        Arg::Int(rows as i64),
        Arg::Int(cols as i64),
        Arg::Int(cols as i64),
        Arg::Int(1),
        Arg::Buffer(by),
    ];
    run(&f, &args, [1, 1, 1], &mut mem);
    let want: Vec<f64> = (0..64 * 32).map(|e| (0..3).map(|i| x[e / 32 * cols + 32 * i + e % 32]).sum()).collect();
    assert_close("three TMA blocks summed", &mem.read_f64(by), &want, 1e-6);
}

#[test]
fn only_buffer_counts_may_be_other_than_powers_of_two() {
    let src = format!(
        "{HEADER}{}",
        r#"
@gluon.jit
def k():
    b = gl.allocate_shared_memory(gl.float32, [3, 48], gl.SwizzledSharedLayout(1, 1, 1, [0]))
"#
    );
    let e = elab_error(&src, "k", vec![]);
    assert!(e.contains("shape[1] must be a power of two, got 48"), "{e}");
}
