//! `reshape`, `permute` and `split` of register tensors in gluon mode: the layout follows the elements (each
//! keeps its register, lane and warp), as tutorial 07 splits its accumulator into two halves for two TMA stores;
//! a split whose halves are not one register bit apart is refused at the call.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_tile::ScalarType::*;

const HALVES: &str = r#"
@gluon.jit
def halves(X, Lo, Hi, L: gl.constexpr):
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, L))
    x = gl.load(X + r[:, None] * 64 + c[None, :])
    lo, hi = x.reshape((128, 2, 32)).permute(0, 2, 1).split()
    HL: gl.constexpr = gl.BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0])
    rh = gl.arange(0, 128, layout=gl.SliceLayout(1, HL))
    ch = gl.arange(0, 32, layout=gl.SliceLayout(0, HL))
    gl.store(Lo + rh[:, None] * 32 + ch[None, :], gl.convert_layout(lo, HL))
    gl.store(Hi + rh[:, None] * 32 + ch[None, :], gl.convert_layout(hi, HL))
"#;

fn layout(src: &str) -> tessel_lang::elab::ArgSpec {
    tessel_lang::elab::ArgSpec::Constexpr(tessel_lang::elab::ConstValue::Expr(src.into()))
}

#[test]
fn a_row_splits_into_its_halves_with_the_layout_following() {
    let src = format!("{HEADER}{HALVES}");
    let f = elab(
        &src,
        "halves",
        vec![ptr(F32), ptr(F32), ptr(F32), layout("gl.BlockedLayout([1, 64], [32, 1], [4, 1], [1, 0])")],
    );
    let text = f.to_string();
    for op in ["reshape", "permute", "split"] {
        assert!(text.contains(op), "{op}:\n{text}");
    }
    let x = rounded(F32, &Rng::new(2).vec(128 * 64));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let (lo, hi) = (poisoned(&mut mem, "lo", F32, 128 * 32), poisoned(&mut mem, "hi", F32, 128 * 32));
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(lo), Arg::Buffer(hi)], [1, 1, 1], &mut mem);
    let want = |off: usize| (0..128 * 32).map(|i| x[i / 32 * 64 + off + i % 32]).collect::<Vec<_>>();
    assert_eq!(mem.read_f64(lo), want(0));
    assert_eq!(mem.read_f64(hi), want(32));
}

/// The attention example's `_split_n` and `_join_n`: halves split along N and given a layout of their own
/// (`convert_layout(..., assert_trivial=True)` to the same map), joined back and converted to the original layout
/// with `assert_trivial` (join puts the halves in the first register bit, the original layout has them in the
/// last: the conversion renames registers only).
const ROUND_TRIP: &str = r#"
@gluon.jit
def round_trip(X, Y, L: gl.constexpr, OUT: gl.constexpr):
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, L))
    x = gl.load(X + r[:, None] * 64 + c[None, :])
    lo, hi = x.reshape([128, 2, 32]).permute(0, 2, 1).split()
    HL: gl.constexpr = gl.BlockedLayout([1, 32], [32, 1], [4, 1], [1, 0])
    lo = gl.convert_layout(lo, HL, assert_trivial=True)
    hi = gl.convert_layout(hi, HL, assert_trivial=True)
    y = gl.join(lo * 2.0, hi).permute(0, 2, 1).reshape([128, 64])
    gl.static_print(y.type.layout == L)
    gl.store(Y + r[:, None] * 64 + c[None, :], gl.convert_layout(y, OUT, assert_trivial=True))
"#;

#[test]
fn join_puts_the_pair_in_a_register_and_converts_back_trivially() {
    let src = format!("{HEADER}{ROUND_TRIP}");
    let spec = layout("gl.BlockedLayout([1, 64], [32, 1], [4, 1], [1, 0])");
    let module = tessel_lang::parse_module(&src).unwrap();
    let args = vec![ptr(F32), ptr(F32), spec.clone(), spec.clone()];
    let specialization = tessel_lang::elab::Specialization::new(args.clone());
    let e = tessel_lang::elab::elaborate_with(&module, "round_trip", &specialization, tessel_gluon::registry())
        .unwrap_or_else(|d| panic!("{}", d.render("test.py", &src)));
    assert_eq!(e.static_prints, ["False"], "the joined layout is the original one up to a register renaming");
    let f = elab(&src, "round_trip", args);
    assert_eq!(f.to_string().matches("convert_layout").count(), 1, "one register renaming:\n{f}");
    let x = rounded(F32, &Rng::new(3).vec(128 * 64));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, 128 * 64);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    let want: Vec<f64> = (0..128 * 64).map(|i| if i % 64 < 32 { 2.0 * x[i] } else { x[i] }).collect();
    assert_eq!(mem.read_f64(by), want);
    // Across lanes it is a real conversion, which `assert_trivial` refuses.
    let lanes = layout("gl.BlockedLayout([1, 32], [16, 2], [4, 1], [1, 0])");
    let err = elab_error(&src, "round_trip", vec![ptr(F32), ptr(F32), spec, lanes]);
    assert!(err.contains("hold elements in different threads"), "{err}");
}

/// The attention example's row sums: a pair joined from two slices is the parent layout, and split gives back
/// the slices (Gluon's split and join layouts), which `expand_dims` takes.
const PAIR: &str = r#"
@gluon.jit
def pair(X, Y, L: gl.constexpr):
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, L))
    x = gl.load(X + r)
    p = gl.join(x, x * 2.0)
    a, b = gl.split(p)
    gl.static_print(p.type.layout == L, a.type.layout == gl.SliceLayout(1, L))
    s = (a + b).expand_dims(1) + gl.zeros([128, 2], gl.float32, L)
    c = gl.arange(0, 2, layout=gl.SliceLayout(0, L))
    gl.store(Y + r[:, None] * 2 + c[None, :], s)
"#;

#[test]
fn a_joined_pair_of_slices_splits_back_into_slices() {
    let src = format!("{HEADER}{PAIR}");
    let spec = layout("gl.BlockedLayout([1, 2], [32, 1], [4, 1], [1, 0])");
    let specialization = tessel_lang::elab::Specialization::new(vec![ptr(F32), ptr(F32), spec.clone()]);
    let module = tessel_lang::parse_module(&src).unwrap();
    let e = tessel_lang::elab::elaborate_with(&module, "pair", &specialization, tessel_gluon::registry())
        .unwrap_or_else(|d| panic!("{}", d.render("test.py", &src)));
    assert_eq!(e.static_prints, ["True True"]);
    let f = elab(&src, "pair", vec![ptr(F32), ptr(F32), spec]);
    let x = rounded(F32, &Rng::new(4).vec(128));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, 256);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    let want: Vec<f64> = (0..256).map(|i| rounded(F32, &[x[i / 2] + 2.0 * x[i / 2]])[0]).collect();
    assert_eq!(mem.read_f64(by), want);
}

#[test]
fn a_split_across_warps_is_refused_at_the_call() {
    let src = format!("{HEADER}{HALVES}");
    // Dim 1 spread over lanes and warps: after the reshape the halves are two warps apart, not two registers.
    let e = elab_error(
        &src,
        "halves",
        vec![ptr(F32), ptr(F32), ptr(F32), layout("gl.BlockedLayout([1, 1], [2, 16], [1, 4], [1, 0])")],
    );
    assert!(e.contains("its last dim is not held in one thread's registers"), "{e}");
    assert!(e.contains("test.py:"), "{e}");
}

#[test]
fn reinterpret_keeps_what_it_is_not_given() {
    let src = format!(
        "{HEADER}{}",
        r#"
@gluon.jit
def k(X, Y):
    L: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    r = gl.arange(0, 32, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, 16, layout=gl.SliceLayout(0, L))
    buf = gl.allocate_shared_memory(gl.float32, [2, 32, 16], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    buf.index(1).store(gl.load(X + r[:, None] * 16 + c[None, :]))
    flat = buf.index(1)._reinterpret(shape=[512], layout=gl.SwizzledSharedLayout(1, 1, 1, [0]))
    F: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])
    same = buf._reinterpret()
    gl.store(Y + gl.arange(0, 512, layout=F), flat.load(F) + same.index(1).reshape([512]).load(F))
"#
    );
    let f = elab(&src, "k", vec![ptr(F32), ptr(F32)]);
    let x = rounded(F32, &Rng::new(8).vec(512));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, 512);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(by), x.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
}
