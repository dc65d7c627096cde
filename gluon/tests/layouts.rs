//! Gluon layouts through the registry: the layout classes bound by `tessel_layouts::expr` (names, defaults,
//! checks), their attributes, `convert_layout`, and the example kernel whose tiling is an aggregate.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_tile::ScalarType::*;

#[test]
fn gluon_aggregate_copy_and_row_stats() {
    let src = example_source("gluon_aggregate.py");
    let t = F16;
    let args = vec![ptr(t), ptr(t), ptr(F32), ptr(F32), int(), int(), int(), int(), cint(16), cint(64)];
    let f = elab(&src, "copy_rows_kernel", args);
    let text = f.to_string();
    assert!(text.contains("BlockedLayout("), "gluon tensors carry the layouts as written:\n{text}");
    assert!(text.contains("SliceLayout("), "{text}");
    let (m, n, stride) = (37usize, 150usize, 160usize);
    let mut rng = Rng::new(7);
    let x = rounded(t, &rng.vec(m * stride));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", t, &x);
    let by = poisoned(&mut mem, "y", t, m * n);
    let (bs, bmax) = (poisoned(&mut mem, "sum", F32, m), poisoned(&mut mem, "max", F32, m));
    let argv = [Arg::Buffer(bx), Arg::Buffer(by), Arg::Buffer(bs), Arg::Buffer(bmax)];
    let argv = [&argv[..], &[m, n, stride, n].map(|v| Arg::Int(v as i64))[..]].concat();
    run(&f, &argv, [m.div_ceil(16) as u32, 1, 1], &mut mem);
    let copy_ref: Vec<f64> = (0..m).flat_map(|r| x[r * stride..r * stride + n].to_vec()).collect();
    assert_eq!(mem.read_f64(by), copy_ref, "the copy is exact");
    let sums: Vec<f64> = (0..m).map(|r| x[r * stride..r * stride + n].iter().sum()).collect();
    let maxs: Vec<f64> =
        (0..m).map(|r| x[r * stride..r * stride + n].iter().cloned().fold(f64::NEG_INFINITY, f64::max)).collect();
    assert_close("gluon row sums", &mem.read_f64(bs), &sums, 1e-5);
    assert_eq!(mem.read_f64(bmax), maxs, "row maxima are exact");
}

/// A kernel that prints layouts and their attributes at compile time.
fn static_prints(body: &str) -> Vec<String> {
    let src = format!("{HEADER}\n@gluon.jit\ndef k(X):\n{body}");
    let module = tessel_lang::parse_module(&src).unwrap();
    let spec = tessel_lang::elab::Specialization::new(vec![ptr(F32)]);
    match tessel_lang::elab::elaborate_with(&module, "k", &spec, tessel_gluon::registry()) {
        Ok(e) => e.static_prints,
        Err(d) => panic!("{}", d.render("test.py", &src)),
    }
}

#[test]
fn layout_classes_bind_with_gluon_names_and_defaults() {
    let out = static_prints(
        "    a: gl.constexpr = gl.NVMMASharedLayout.get_default_for([64, 32], gl.float16)
    gl.static_print(a, a.swizzle_byte_width, a.element_bitwidth, a.transposed)
    b: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    gl.static_print(b == gl.NVMMASharedLayout(128, 16))
    acc: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
    gl.static_print(acc.instr_shape, acc.version)
    op: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc, k_width=2)
    gl.static_print(op.k_width, op.parent == acc)
    s: gl.constexpr = gl.SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])
    gl.static_print(s.vec, s.order, mbarrier.MBarrierLayout())
",
    );
    assert_eq!(
        out,
        [
            "NVMMASharedLayout(64, 16) 64 16 False",
            "True",
            "(16, 64, 16) (3, 0)",
            "2 True",
            "8 (1, 0) SwizzledSharedLayout(1,1,1,[0])",
        ]
    );
}

#[test]
fn a_register_tensors_type_is_a_distributed_type_with_its_layout() {
    let out = static_prints(
        "    L: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    x = gl.full([32, 16], 1.0, gl.float16, layout=L)
    gl.static_print(x.type.layout == L, x.type.shape, x.type.element_ty, x.type.scalar, x.type.nbytes)
    s = gl.sum(x, axis=1)
    gl.static_print(s.type.layout == gl.SliceLayout(1, L), gl.sum(s, axis=0).type)
    y = gl.convert_layout(x, x.type.layout, assert_trivial=True)
    p = X + gl.arange(0, 16, layout=gl.SliceLayout(0, L))
    gl.static_print(p.type.element_ty, p.type)
",
    );
    assert_eq!(
        out,
        [
            "True [32, 16] float16 float16 1024",
            "True float16",
            "pointer<float32> <[16], pointer<float32>, SliceLayout(0, BlockedLayout([1,4],[8,4],[4,1],[1,0]))>",
        ]
    );
    let src = format!(
        "{HEADER}\n@gluon.jit\ndef k(X):\n    x = gl.full([32], 1.0, gl.float32, layout=gl.BlockedLayout([1], [32], [4], [0]))\n    y = x.type.order\n"
    );
    let err = elab_error(&src, "k", vec![ptr(F32)]);
    assert!(err.contains("a distributed type has no attribute `order`"), "{err}");
    // A `@triton.jit` kernel (through the same registry) keeps tessel's `.type` of a block: its dtype.
    let src = "import triton\nimport triton.language as tl\n@triton.jit\ndef k(X):\n    \
               x = tl.load(X + tl.arange(0, 16))\n    tl.static_print(x.type, x.type.is_fp32())\n";
    let module = tessel_lang::parse_module(src).unwrap();
    let spec = tessel_lang::elab::Specialization::new(vec![ptr(F32)]);
    let e = tessel_lang::elab::elaborate_with(&module, "k", &spec, tessel_gluon::registry())
        .unwrap_or_else(|d| panic!("{}", d.render("test.py", src)));
    assert_eq!(e.static_prints, ["float32 True"]);
}

#[test]
fn a_layouts_lists_are_read_only() {
    let body = r#"
import copy

@gluon.constexpr_function
def edited(layout):
    ret = copy.deepcopy(layout)
    ret.reg_bases[0] = [0, 2]
    return ret

@gluon.jit
def k(X):
    L: gl.constexpr = gl.DistributedLinearLayout([[0, 1]], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], [], [], [32, 2])
    gl.static_print(copy.deepcopy(L) == L, L.reg_bases)
    M: gl.constexpr = edited(L)
"#;
    let err = elab_error(&format!("{HEADER}{body}"), "k", vec![ptr(F32)]);
    assert!(err.contains("cannot assign items of a layout's `reg_bases`: layouts are immutable here"), "{err}");
    assert!(err.contains("ret.reg_bases[0] = [0, 2]"), "the error points at the assignment:\n{err}");
}

#[test]
fn convert_layout_converts_and_assert_trivial_refuses_a_real_conversion() {
    let body = "
@gluon.jit
def k(X):
    a: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    b: gl.constexpr = gl.BlockedLayout([4, 1], [4, 8], [1, 4], [0, 1])
    x = gl.full([32, 32], 1.0, gl.float32, layout=a)
    y = gl.convert_layout(x, a, assert_trivial=True)
    z = gl.convert_layout(y, b)
    w = gl.convert_layout(z, a, assert_trivial=TRIVIAL)
";
    let src = format!("{HEADER}{}", body.replace("TRIVIAL", "False"));
    let f = elab(&src, "k", vec![ptr(F32)]);
    assert_eq!(f.to_string().matches("convert_layout").count(), 2, "{f}");
    let src = format!("{HEADER}{}", body.replace("TRIVIAL", "True"));
    let err = elab_error(&src, "k", vec![ptr(F32)]);
    assert!(err.contains("this conversion is not trivial"), "{err}");
    assert!(err.contains("gl.convert_layout(z, a, assert_trivial=True)"), "the error points at the call:\n{err}");
}

const MAP: &str = r#"
@gluon.jit
def axpy_clamped(a, b, alpha):
    return gl.minimum(a * alpha + b, 4.0)

@gluon.jit
def relu(x):
    if x > 0:
        return x
    return 0.0

@gluon.jit
def k(X, Y, Out, N: gl.constexpr, BRANCH: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 1], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, N, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    x = gl.load(X + r[:, None] * N + c[None, :])
    y = gl.load(Y + c)[None, :]
    if BRANCH:
        out = gl.map_elementwise(relu, x)
    else:
        out = gl.map_elementwise(axpy_clamped, x, y, 2.0)
    gl.store(Out + r[:, None] * N + c[None, :], out)
"#;

#[test]
fn map_elementwise_applies_a_function_to_every_broadcast_element() {
    use tessel_interp::Arg;
    use tessel_interp::memory::Memory;
    let n = 16;
    let f = elab(&format!("{HEADER}{MAP}"), "k", vec![ptr(F32), ptr(F32), ptr(F32), cint(n), cint(0)]);
    let n = n as usize;
    let mut rng = Rng::new(2);
    let (x, y) = (rounded(F32, &rng.vec(n * n)), rounded(F32, &rng.vec(n)));
    let mut mem = Memory::new();
    let (bx, by) = (mem.alloc_from("x", F32, &x), mem.alloc_from("y", F32, &y));
    let out = poisoned(&mut mem, "out", F32, n * n);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by), Arg::Buffer(out)], [1, 1, 1], &mut mem);
    let want: Vec<f64> =
        (0..n * n).map(|i| rounded(F32, &[rounded(F32, &[x[i] * 2.0])[0] + y[i % n]])[0].min(4.0)).collect();
    assert_eq!(mem.read_f64(out), want);
    let err = elab_error(&format!("{HEADER}{MAP}"), "k", vec![ptr(F32), ptr(F32), ptr(F32), cint(16), cint(1)]);
    assert!(err.contains("runs `relu` on whole tensors: control flow on their elements is not supported yet"), "{err}");
}
