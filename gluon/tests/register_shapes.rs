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
