//! Tensor descriptors made on the host (`TensorDescriptor.from_tensor`) and passed as kernel parameters
//! ([`ArgSpec::TensorDesc`]): each becomes base, shape and strides arguments of the IR function, re-formed into a
//! descriptor at entry. Run in the interpreter at shapes that are not multiples of the blocks, with garbage
//! around the tensors in memory and poisoned outputs, and compared exactly.

mod elab_common;

use elab_common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, ConstValue};
use tessel_tile::ScalarType::{self, *};

fn desc(elem: ScalarType, block_shape: &[u32], padding_nan: bool) -> ArgSpec {
    ArgSpec::TensorDesc { elem, block_shape: block_shape.to_vec(), padding_nan, layout: None }
}

/// Exact equality, NaN matching NaN (poison that must survive).
fn assert_same(what: &str, out: &[f64], want: &[f64]) {
    assert_eq!(out.len(), want.len(), "{what}: length");
    for (i, (a, b)) in out.iter().zip(want).enumerate() {
        assert!(a == b || a.is_nan() && b.is_nan(), "{what}[{i}]: got {a}, want {b}");
    }
}

#[test]
fn descriptor_copy_example_transposes_scales_and_sums_ragged_tiles() {
    let src = example_source("descriptor_copy.py");
    let (bm, bn) = (16u32, 32u32);
    let spec =
        vec![desc(F16, &[bm, bn], false), desc(F16, &[bn, bm], false), desc(F32, &[bm], false), ArgSpec::Float(F32)];
    let ir_args: usize = spec.iter().map(ArgSpec::ir_args).sum();
    let f = elab("descriptor_copy.py", &src, "transpose_scale_kernel", spec);
    assert_eq!(f.args().len(), ir_args);
    assert_eq!(ir_args, 5 + 5 + 3 + 1, "a rank-r descriptor is 1 + 2r arguments");
    let arg_types: Vec<String> = f.args().iter().map(|&v| f.ty(v).to_string()).collect();
    assert_eq!(arg_types[..5], ["ptr<f16>", "i32", "i32", "i64", "i64"], "base, shape (i32), strides (i64)");
    let text = f.to_string();
    assert!(text.contains("%x_desc = make_tensor_desc {rank = 2}"), "{text}");
    assert!(text.contains("for %5, %x_desc_shape1, %6"), "the loop bound is the runtime `x_desc.shape[1]`:\n{text}");

    // x is M x N inside a buffer with row stride LDX and extra rows; everything outside M x N is garbage that
    // neither the loads (zero padding) nor the row sums may see. Values are multiples of 1/4 below 8 in
    // magnitude, so f16 holds them and their scaled values exactly and f32 sums are exact in any order.
    let (m, n, ldx, ldy) = (37usize, 100usize, 104usize, 40usize);
    let rows_alloc = m.div_ceil(bm as usize) * bm as usize + 2;
    let mut rng = Rng::new(7);
    let mut x = vec![1000.0; rows_alloc * ldx];
    for r in 0..m {
        for c in 0..n {
            x[r * ldx + c] = ((rng.uniform() * 32.0).floor()) / 4.0;
        }
    }
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, &x);
    // y is N x M with row stride LDY: the LDY - M columns between rows must stay poisoned (stores past the
    // edge are dropped), and so must the elements after the last row.
    let by = poisoned(&mut mem, "y", F16, n * ldy + 64);
    let bs = poisoned(&mut mem, "row_sum", F32, m + 11);
    let i = |v: usize| Arg::Int(v as i64);
    let args = [
        Arg::Buffer(bx),
        i(m),
        i(n),
        i(ldx),
        i(1),
        Arg::Buffer(by),
        i(n),
        i(m),
        i(ldy),
        i(1),
        Arg::Buffer(bs),
        i(m),
        i(1),
        Arg::Float(1.5),
    ];
    run(&f, &args, [m.div_ceil(bm as usize) as u32, 1, 1], &mut mem);

    let mut want_y = vec![f64::NAN; n * ldy + 64];
    for c in 0..n {
        for r in 0..m {
            want_y[c * ldy + r] = x[r * ldx + c] * 1.5;
        }
    }
    assert_same("y", &mem.read_f64(by), &want_y);
    let mut want_sum = vec![f64::NAN; m + 11];
    for (r, s) in want_sum.iter_mut().enumerate().take(m) {
        *s = x[r * ldx..r * ldx + n].iter().sum();
    }
    assert_same("row_sum", &mem.read_f64(bs), &want_sum);
    assert_eq!(mem.read_f64(bx), x, "the input is not written");
}

const KERNEL: &str = r#"
import triton
import triton.language as tl

@triton.jit
def k(d, out_ptr, meta_ptr, ROW: tl.constexpr):
    tl.static_assert(isinstance(d, tl.tensor_descriptor))
    tl.static_assert(not isinstance(d, tl.tensor))
    t = d.load([ROW, 0])
    r = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    tl.store(out_ptr + r, t)
    tl.store(meta_ptr + 0, d.shape[0])
    tl.store(meta_ptr + 1, d.shape[1])
    tl.store(meta_ptr + 2, d.strides[0])
    tl.store(meta_ptr + 3, d.strides[1])
    d.store([ROW + 1, 1], t + 100)
"#;

#[test]
fn nan_padding_runtime_shape_and_strides() {
    let ptr = |t| ArgSpec::Pointer(t, true);
    let spec = vec![desc(F32, &[4, 8], true), ptr(F32), ptr(I64), ArgSpec::Constexpr(ConstValue::Int(1))];
    let f = elab("test.py", KERNEL, "k", spec);
    let text = f.to_string();
    assert!(text.contains("%d = make_tensor_desc {rank = 2, padding = nan}"), "{text}");
    // A 3 x 5 tensor with row stride 8 inside a buffer of 4 rows; the 4 x 8 block at row 1 reads rows 1..3 and
    // columns 0..5; the rest is NaN (the descriptor's padding), never the garbage around the tensor.
    let (rows, cols, ld) = (3usize, 5usize, 8usize);
    let base: Vec<f64> = (0..4 * ld).map(|i| if i / ld < rows && i % ld < cols { i as f64 } else { -1.0 }).collect();
    let mut mem = Memory::new();
    let bd = mem.alloc_from("d", F32, &base);
    let out = poisoned(&mut mem, "out", F32, 32);
    let meta = poisoned(&mut mem, "meta", I64, 4);
    let i = |v: usize| Arg::Int(v as i64);
    run(
        &f,
        &[Arg::Buffer(bd), i(rows), i(cols), i(ld), i(1), Arg::Buffer(out), Arg::Buffer(meta)],
        [1, 1, 1],
        &mut mem,
    );
    let got = mem.read_f64(out);
    for r in 0..4 {
        for c in 0..8 {
            let (sr, v) = (r + 1, got[r * 8 + c]);
            if sr < rows && c < cols {
                assert_eq!(v, (sr * ld + c) as f64, "out[{r}][{c}]");
            } else {
                assert!(v.is_nan(), "out[{r}][{c}] is padding, got {v}");
            }
        }
    }
    assert_eq!(mem.read_f64(meta), [3.0, 5.0, 8.0, 1.0], "desc.shape and desc.strides are the runtime values");
    // The store at (2, 1) writes only row 2, columns 1..5: the loaded block's row 0 (tensor row 1) plus 100.
    let d = mem.read_f64(bd);
    for (idx, (&now, &before)) in d.iter().zip(&base).enumerate() {
        let (r, c) = (idx / ld, idx % ld);
        let want = if r == 2 && (1..cols).contains(&c) { base[ld + c - 1] + 100.0 } else { before };
        assert_eq!(now, want, "d[{r}][{c}]");
    }
}

#[test]
fn descriptor_parameters_are_checked() {
    let ptr = |t| ArgSpec::Pointer(t, true);
    let c1 = ArgSpec::Constexpr(ConstValue::Int(1));
    let msg = elab_error(KERNEL, "k", vec![desc(I32, &[4, 8], true), ptr(F32), ptr(I64), c1.clone()]);
    assert!(msg.contains("NaN padding needs float elements, got int32"), "{msg}");
    let msg = elab_error(KERNEL, "k", vec![desc(F32, &[4, 2], false), ptr(F32), ptr(I64), c1.clone()]);
    assert!(msg.contains("the last block dim must span at least 16 bytes, got 2 x 4 bytes"), "{msg}");
    let msg = elab_error(KERNEL, "k", vec![desc(F32, &[3, 8], false), ptr(F32), ptr(I64), c1.clone()]);
    assert!(msg.contains("block_shape[0] of descriptor `d` must be a power of two, got 3"), "{msg}");
    let msg = elab_error(KERNEL, "k", vec![desc(F32, &[8, 8], false), ptr(F32), ptr(I64), c1.clone()]);
    assert!(msg.contains("shape"), "the loaded 8x8 block does not fit the stored 4x8 pointers: {msg}");
    let msg = elab_error(KERNEL, "k", vec![desc(F32, &[4, 8], false), ptr(F32), ptr(I64), desc(F32, &[4], false)]);
    assert!(msg.contains("parameter `ROW` is declared tl.constexpr") && msg.contains("tensordesc<4xf32>"), "{msg}");
}

/// `desc[None, :]` (found by the fuzz campaign) panicked in `expand_dims`, which took any non-tensor for a scalar;
/// it is a diagnostic at the subscript.
#[test]
fn indexing_a_descriptor_with_none_is_an_error() {
    let src = example_source("descriptor_copy.py").replace("x_desc.block_shape[1]", "x_desc[None, :].block_shape[1]");
    assert!(src.contains("x_desc[None, :]"));
    let spec =
        vec![desc(F16, &[16, 32], false), desc(F16, &[32, 16], false), desc(F32, &[16], false), ArgSpec::Float(F32)];
    let msg = elab_error(&src, "transpose_scale_kernel", spec);
    assert!(msg.contains("cannot add a dimension to tensordesc"), "{msg}");
}

/// `desc.block_shape` is a list, as in Triton and Gluon: kernels build shapes from it with `+` (the Gluon examples'
/// `[STAGES] + a_desc.block_shape`), which a tuple would refuse.
#[test]
fn a_descriptor_block_shape_is_a_list() {
    let src = r#"
import triton
import triton.language as tl

@triton.jit
def k(d, out):
    shape: tl.constexpr = [2] + d.block_shape
    x = tl.zeros(shape, tl.float32) + 1.0
    tl.store(out + tl.arange(0, 2 * 8 * 8), tl.reshape(x, (2 * 8 * 8,)))
"#;
    let f = elab("k.py", src, "k", vec![desc(F16, &[8, 8], false), ArgSpec::Pointer(F32, true)]);
    let text = f.to_string();
    assert!(text.contains("tensor<2x8x8xf32>"), "{text}");
}
