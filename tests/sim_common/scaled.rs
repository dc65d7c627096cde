//! Block-scaled operands as tutorial 11's and example 04's host code makes them, shared by the simulator tests
//! that run those kernels: random e2m1 values (as e4m3, or packed two to a byte) with their scales, in the
//! packed-block layout the scale descriptors read.

use tessel_math::testing::Rng;

/// The block-scaled operand formats of tutorial 11's tests: (A's, B's).
pub const FORMATS: [(&str, &str); 5] =
    [("mxfp8", "mxfp8"), ("mxfp8", "mxfp4"), ("mxfp4", "mxfp8"), ("mxfp4", "mxfp4"), ("nvfp4", "nvfp4")];

pub fn vec_size(fmt: &str) -> usize {
    if fmt == "nvfp4" { 16 } else { 32 }
}

pub const E2M1: [f64; 16] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0];

/// A `rows x k` operand of format `fmt` as its buffer holds it (e4m3 values, or e2m1 pairs packed in bytes,
/// the even value in the low nibble) and its `rows x k / VEC` scales (e8m0 exponents, or e4m3 powers of two
/// for nvfp4): random e2m1 values and scales in [2^-7, 2^1], as the tutorial's random_quantized_tensor makes.
pub fn quantized(rng: &mut Rng, rows: usize, k: usize, fmt: &str) -> (Vec<f64>, Vec<f64>) {
    let nib: Vec<usize> = (0..rows * k).map(|_| rng.below(16) as usize).collect();
    let values = if fmt == "mxfp8" {
        nib.iter().map(|&n| E2M1[n]).collect()
    } else {
        nib.chunks(2).map(|p| (p[0] | p[1] << 4) as f64).collect()
    };
    let scales = (0..rows * k / vec_size(fmt))
        .map(|_| {
            let e = 120 + rng.below(9);
            if fmt == "nvfp4" { 2f64.powi(e as i32 - 127) } else { e as f64 }
        })
        .collect();
    (values, scales)
}

pub fn nvmma(spelling: &str) -> tessel::layouts::NvmmaSharedLayout {
    match tessel::layouts::expr::parse_layout(spelling).unwrap() {
        tessel::layouts::AnyLayout::Shared(tessel::layouts::SharedLayout::Nvmma(l)) => l,
        other => panic!("{other}"),
    }
}

/// `swizzle_scales_packed_block`: `[rows, S]` scales (rows a multiple of 128, S of 4) as
/// `[rows / 128, S / 4, 32, 4, 4]`, row-major.
pub fn packed_block(s: &[f64], rows: usize, sk: usize) -> Vec<f64> {
    let mut out = vec![0.0; s.len()];
    let mut i = 0;
    for r in 0..rows / 128 {
        for k in 0..sk / 4 {
            for lane in 0..32 {
                for q in 0..4 {
                    for j in 0..4 {
                        out[i] = s[(r * 128 + q * 32 + lane) * sk + k * 4 + j];
                        i += 1;
                    }
                }
            }
        }
    }
    out
}
