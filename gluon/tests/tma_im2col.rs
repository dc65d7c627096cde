//! Gluon's TMA im2col load (`tma.async_load_im2col` of a host `TensorDescriptorIm2Col`): the interpreter's block
//! against a reference that lists the pixel box's positions and takes a run of them (padding corners, an offset
//! filter tap, channels past the tensor, a walk into the next image), the IR round trip, and the refusals at the
//! call.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::ArgSpec;
use tessel_tile::ScalarType::*;

/// `examples/gluon_tma_im2col.py`: one im2col load of a 32 x 16 fp16 block, copied out through registers.
fn kernel() -> String {
    example_source("gluon_tma_im2col.py")
}

fn im2col_desc() -> ArgSpec {
    ArgSpec::TensorDescIm2col { elem: F16, block_shape: vec![32, 16], rank: 4, padding_nan: false }
}

fn spec(off: [i64; 2]) -> Vec<ArgSpec> {
    vec![im2col_desc(), ptr(F16), int(), int(), int(), int(), cint(off[0]), cint(off[1])]
}

/// The block by enumeration: the box's base positions `(n, h, w)` for images `n0..`, in row-major order; the run
/// of 32 starting at `(n0, h0, w0)`; each shifted by the offsets; channels `c0..c0 + 16`; zero outside the tensor.
#[allow(clippy::too_many_arguments)]
fn reference(x: &[f64], dims: [i64; 4], lower: [i64; 2], upper: [i64; 2], at: [i64; 4], off: [i64; 2]) -> Vec<f64> {
    let [nn, hh, ww, cc] = dims;
    let mut positions = Vec::new();
    for n in at[0]..at[0] + 4 {
        for h in lower[0]..=hh - 1 + upper[0] {
            for w in lower[1]..=ww - 1 + upper[1] {
                positions.push((n, h, w));
            }
        }
    }
    let start = positions.iter().position(|&p| p == (at[0], at[1], at[2])).expect("the start is in the box");
    let mut out = Vec::new();
    for &(n, h, w) in &positions[start..start + 32] {
        let (h, w) = (h + off[0], w + off[1]);
        for c in at[3]..at[3] + 16 {
            let inside = (0..nn).contains(&n) && (0..hh).contains(&h) && (0..ww).contains(&w) && (0..cc).contains(&c);
            out.push(if inside { x[(((n * hh + h) * ww + w) * cc + c) as usize] } else { 0.0 });
        }
    }
    out
}

/// Runs `im2col_copy` kernel `f` in the interpreter on the channels-last tensor `x` of `dims` (a descriptor with
/// the pixel box's `corners`, unit traversal strides), loading at coordinates `at`; returns the poisoned-first
/// 32 x 16 output.
fn copy(f: &tessel_tile::ir::Func, x: &[f64], dims: [i64; 4], corners: ([i64; 2], [i64; 2]), at: [i64; 4]) -> Vec<f64> {
    let (lower, upper) = corners;
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, x);
    let out = poisoned(&mut mem, "out", F16, 32 * 16);
    let strides = [dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1];
    let mut args = vec![Arg::Buffer(bx)];
    args.extend(dims.iter().chain(&strides).chain(&lower).chain(&upper).map(|&d| Arg::Int(d)));
    args.extend([1, 1, 1, 1].map(Arg::Int));
    args.push(Arg::Buffer(out));
    args.extend(at.map(Arg::Int));
    run(f, &args, [1, 1, 1], &mut mem);
    mem.read_f64(out)
}

#[test]
fn im2col_loads_match_an_enumeration_of_the_pixel_box() {
    // NHWC [2, 5, 6, 24] halves; the box is h in -1..=4 and w in -2..=4 (lower [-1, -2], upper [0, -1]).
    let dims = [2i64, 5, 6, 24];
    let (lower, upper) = ([-1i64, -2], [0i64, -1]);
    let len = dims.iter().product::<i64>() as usize;
    let x = rounded(F16, &Rng::new(5).vec(len));
    // (coordinates, offsets): the box's corner; a tap inside the image; a start late in image 0 that walks
    // into image 1 with channels 16..32 of 24.
    let cases = [([0i64, -1, -2, 0], [0i64, 0]), ([0, -1, -2, 8], [1, 2]), ([0, 3, 1, 16], [1, 0])];
    for (at, off) in cases {
        let f = elab(&kernel(), "im2col_copy", spec(off));
        assert!(f.to_string().contains("tma_load_im2col"), "{f}");
        let want = reference(&x, dims, lower, upper, at, off);
        assert_eq!(copy(&f, &x, dims, (lower, upper), at), want, "coordinates {at:?}, offsets {off:?}");
    }
}

#[test]
fn tiled_copies_of_an_im2col_descriptor_and_im2col_loads_of_a_tiled_one_are_refused_at_the_call() {
    let tiled_load = kernel().replace(
        "tma.async_load_im2col(x_desc, [n, h, w, c], [OFF_H, OFF_W], bar, buf)",
        "tma.async_load(x_desc, [n, h], bar, buf)",
    );
    let err = elab_error(&tiled_load, "im2col_copy", spec([0, 0]));
    assert!(err.contains("this is an im2col descriptor") && err.contains("async_load_im2col"), "{err}");
    assert!(err.contains("x_desc, [n, h], bar, buf"), "the span shows the call: {err}");
    let mut args = spec([0, 0]);
    args[0] = ArgSpec::TensorDesc { elem: F16, block_shape: vec![32, 16], padding_nan: false, layout: None };
    let err = elab_error(&kernel(), "im2col_copy", args);
    assert!(err.contains("needs an im2col descriptor") && err.contains("tensordesc_im2col"), "{err}");
    let three_offsets = kernel().replace("[OFF_H, OFF_W]", "[OFF_H, OFF_W, 0]");
    let err = elab_error(&three_offsets, "im2col_copy", spec([0, 0]));
    assert!(err.contains("`offsets` of `tma.async_load_im2col` needs 2 entries, got 3"), "{err}");
}

#[test]
fn an_im2col_load_issued_by_a_warp_specialize_worker_fills_the_default_partitions_buffer() {
    // As the conv examples' load partitions: the worker receives the host descriptor as an argument; its load
    // reaches the tensor map through the partition's operands.
    let src = kernel()
        .replace(
            "    tma.async_load_im2col(x_desc, [n, h, w, c], [OFF_H, OFF_W], bar, buf)\n    mbarrier.wait(bar, 0)\n",
            "    gl.warp_specialize([(waiter, (bar,)), (loader, (x_desc, buf, bar, n, h, w, c, OFF_H, OFF_W))], [1], \
             [24])\n",
        )
        .replace(
            "@gluon.jit\ndef im2col_copy",
            "@gluon.jit\ndef waiter(bar):\n    mbarrier.wait(bar, 0)\n\n\n@gluon.jit\ndef loader(x_desc, buf, bar, n, \
             h, w, c, OFF_H: gl.constexpr, OFF_W: gl.constexpr):\n    tma.async_load_im2col(x_desc, [n, h, w, c], \
             [OFF_H, OFF_W], bar, buf)\n\n\n@gluon.jit\ndef im2col_copy",
        );
    assert!(src.contains("gl.warp_specialize") && src.contains("def loader"), "{src}");
    let dims = [2i64, 5, 6, 24];
    let (lower, upper) = ([-1i64, -2], [0i64, -1]);
    let x = rounded(F16, &Rng::new(6).vec(dims.iter().product::<i64>() as usize));
    let (at, off) = ([0i64, -1, -2, 8], [1i64, 2]);
    let f = elab(&src, "im2col_copy", spec(off));
    assert!(f.to_string().contains("warp_specialize") && f.to_string().contains("tma_load_im2col"), "{f}");
    assert_eq!(copy(&f, &x, dims, (lower, upper), at), reference(&x, dims, lower, upper, at, off));
}
