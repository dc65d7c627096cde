//! Tensor maps (`CUtensorMap`, 128 bytes) for the TMA copies of a kernel, encoded at launch from a host
//! descriptor's argument values: the base address, shape and strides (elements, row-major, as the IR receives a
//! `TensorDescriptor`) with the box and swizzle of `tessel_tile::tma::block` (the rule the compiler lowered the
//! copies with). The checks are the tensor-map rules `cuTensorMapEncodeTiled` enforces (and Triton's
//! `TensorDescriptor` asserts), reported with the descriptor's argument position rather than as a driver error
//! code.

use cudarc::driver::sys;

use tessel_codegen::TensorMapArg;
use tessel_tile::ScalarType;

use crate::error::{RuntimeError, TensorMapError, TensorMapProblem as P};

/// The values a map is encoded from, as the kernel's IR arguments give them.
pub struct DescriptorValues<'a> {
    pub base: u64,
    pub shape: &'a [i64],
    pub strides: &'a [i64],
}

/// The tensor-map data type of `m`'s elements (8-bit floats are copied as bytes; an `fp4_padded` block of e2m1
/// pairs is `16U4_ALIGN16B`: 4-bit elements, each 16 of them followed by 8 bytes of padding in shared memory).
fn data_type(m: &TensorMapArg) -> sys::CUtensorMapDataType {
    use sys::CUtensorMapDataType::*;
    if fp4_padded(m) {
        return CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
    }
    match m.elem {
        ScalarType::F16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        ScalarType::BF16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        ScalarType::F32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        ScalarType::F64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        ScalarType::I32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
        ScalarType::U32 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
        ScalarType::I64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
        ScalarType::U64 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
        s if s.bits() == 16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
        _ => CU_TENSOR_MAP_DATA_TYPE_UINT8,
    }
}

/// Whether `m`'s block is staged padded (`fp4_padded`): its dims and box count 4-bit elements, two per byte.
fn fp4_padded(m: &TensorMapArg) -> bool {
    m.layout.as_ref().is_some_and(|l| l.fp4_padded)
}

/// The driver's arguments, innermost dim first: dims, byte strides of the outer dims, box.
type DriverArgs = (Vec<u64>, Vec<u64>, Vec<u32>);

/// Checks `v` against the tensor-map rules for `m`; returns the driver's arguments.
fn driver_args(m: &TensorMapArg, v: &DescriptorValues) -> Result<DriverArgs, P> {
    let rank = m.im2col_rank.map_or(m.block_shape.len(), |r| r as usize);
    let b = tessel_tile::tma::block_in(m.elem, &m.block_shape, m.layout.as_ref()).map_err(P::Block)?;
    let eb = m.elem.bytes() as u64;
    if v.shape.len() != rank || v.strides.len() != rank {
        return Err(P::Rank { rank, shape: v.shape.to_vec(), strides: v.strides.to_vec() });
    }
    if v.base % 16 != 0 {
        return Err(P::Base(v.base));
    }
    if v.strides[rank - 1] != 1 {
        return Err(P::LastStride(v.strides.to_vec()));
    }
    if let Some(d) = v.shape.iter().position(|&d| !(1..=1 << 32).contains(&d)) {
        return Err(P::Dim { dim: d, size: v.shape[d] });
    }
    // 16U4_ALIGN16B maps need strides of multiples of 32 bytes.
    let stride_align = if fp4_padded(m) { 32 } else { 16 };
    if let Some(d) = (0..rank - 1).find(|&d| v.strides[d] <= 0 || (v.strides[d] as u64 * eb) % stride_align != 0) {
        return Err(P::Stride { dim: d, elements: v.strides[d], element_bytes: eb });
    }
    if m.nan_padding && (!m.elem.is_float() || m.elem.bits() == 8) {
        return Err(P::NanPadding(m.elem));
    }
    let mut dims: Vec<u64> = v.shape.iter().rev().map(|&d| d as u64).collect();
    let strides = v.strides[..rank - 1].iter().rev().map(|&s| s as u64 * eb).collect();
    let mut boxes: Vec<u32> = b.box_dims.iter().rev().copied().collect();
    if fp4_padded(m) {
        // The innermost dim and box in 4-bit elements: two per byte of the packed tensor.
        dims[0] *= 2;
        boxes[0] *= 2;
    }
    Ok((dims, strides, boxes))
}

fn swizzle_and_fill(m: &TensorMapArg) -> Result<(sys::CUtensorMapSwizzle, sys::CUtensorMapFloatOOBfill), P> {
    let swizzle = match tessel_tile::tma::block_in(m.elem, &m.block_shape, m.layout.as_ref())
        .map_err(P::Block)?
        .swizzle_bytes()
    {
        128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        _ => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
    };
    let fill = if m.nan_padding {
        sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
    } else {
        sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
    };
    Ok((swizzle, fill))
}

/// The pixel box of an im2col map, as the kernel's arguments give it (spatial dims outermost first; element
/// strides one per dim).
pub struct Im2colValues<'a> {
    pub lower: &'a [i64],
    pub upper: &'a [i64],
    pub element_strides: &'a [i64],
}

/// The im2col driver arguments after the dims and strides: lower and upper corners (innermost spatial dim
/// first), channels per pixel, pixels per column (the box: one box's channels, the block's pixels) and the
/// element strides (innermost first).
/// The im2col driver arguments: lower corners, upper corners, channels per pixel, pixels per column, element
/// strides.
type Im2colArgs = (Vec<i32>, Vec<i32>, u32, u32, Vec<u32>);

fn im2col_args(m: &TensorMapArg, im: &Im2colValues) -> Result<Im2colArgs, P> {
    let rank = m.im2col_rank.expect("an im2col map") as usize;
    let b = tessel_tile::tma::block_in(m.elem, &m.block_shape, m.layout.as_ref()).map_err(P::Block)?;
    let s = rank - 2;
    if im.lower.len() != s || im.upper.len() != s || im.element_strides.len() != rank {
        return Err(P::Im2colCounts { rank });
    }
    // cuTensorMapEncodeIm2col: the corners are signed 16-, 8- and 4-bit numbers for rank 3, 4 and 5.
    let bits = match rank {
        3 => 16,
        4 => 8,
        _ => 4,
    };
    let (lo, hi) = (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1);
    if let Some(&c) = im.lower.iter().chain(im.upper).find(|c| !(lo..=hi).contains(*c)) {
        return Err(P::Corner { rank, lo, hi, got: c });
    }
    if let Some(&e) = im.element_strides.iter().find(|e| !(1..=8).contains(*e)) {
        return Err(P::ElementStride(e));
    }
    if b.box_dims[0] != m.block_shape[0] {
        return Err(P::Pixels(m.block_shape[0]));
    }
    let lower = im.lower.iter().rev().map(|&c| c as i32).collect();
    let upper = im.upper.iter().rev().map(|&c| c as i32).collect();
    let strides = im.element_strides.iter().rev().map(|&e| e as u32).collect();
    Ok((lower, upper, b.box_dims[1], b.box_dims[0], strides))
}

/// Encodes the im2col tensor map of descriptor `m` over `v` and `im` (`cuTensorMapEncodeIm2col`).
pub fn encode_im2col(m: &TensorMapArg, v: &DescriptorValues, im: &Im2colValues) -> Result<[u64; 16], RuntimeError> {
    let what = |problem| TensorMapError { base_arg: m.base_arg, im2col: true, problem };
    let (dims, strides, _) = driver_args(m, v).map_err(what)?;
    let (lower, upper, channels, pixels, element_strides) = im2col_args(m, im).map_err(what)?;
    let (swizzle, fill) = swizzle_and_fill(m).map_err(what)?;
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: `dims` and `element_strides` hold `rank` entries, `strides` `rank - 1`, the corners `rank - 2`, as
    // the call reads; `map` is writable and the function only encodes.
    let r = unsafe {
        sys::cuTensorMapEncodeIm2col(
            &mut map,
            data_type(m),
            dims.len() as u32,
            v.base as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            lower.as_ptr(),
            upper.as_ptr(),
            channels,
            pixels,
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            fill,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(what(P::Encode { call: "cuTensorMapEncodeIm2col", result: r }).into());
    }
    Ok(map.opaque)
}

/// The stand-in tensor the template of a descriptor made in the kernel is encoded over: one block, row-major,
/// at a 16-byte aligned address. Only the fields the kernel keeps matter (element type, box, swizzle, padding,
/// interleave, L2 promotion); it replaces the address, dims and strides with its own before any copy.
pub fn template_values(m: &TensorMapArg) -> (u64, Vec<i64>, Vec<i64>) {
    let shape: Vec<i64> = m.block_shape.iter().map(|&d| d as i64).collect();
    let mut strides = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    (1 << 20, shape, strides)
}

/// Encodes the tensor map of descriptor `m` over `v`. Needs the CUDA driver (no GPU work is done).
pub fn encode(m: &TensorMapArg, v: &DescriptorValues) -> Result<[u64; 16], RuntimeError> {
    let what = |problem| TensorMapError { base_arg: m.base_arg, im2col: false, problem };
    let (dims, strides, boxes) = driver_args(m, v).map_err(what)?;
    let (swizzle, fill) = swizzle_and_fill(m).map_err(what)?;
    let element_strides = vec![1u32; dims.len()];
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: every array holds `rank` entries (strides `rank - 1`), as the call reads; `map` is writable and the
    // function only encodes (it neither dereferences the global address nor touches the GPU).
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            data_type(m),
            dims.len() as u32,
            v.base as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            fill,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(what(P::Encode { call: "cuTensorMapEncodeTiled", result: r }).into());
    }
    Ok(map.opaque)
}

/// A kernel's tensor maps (`Kernel::tensor_maps`), encoded from its IR arguments (`arg(i)`: argument `i` as an
/// integer, a device address for pointers) in the order the kernel takes them after those arguments.
pub(crate) fn encode_args(maps: &[TensorMapArg], arg: impl Fn(usize) -> i64) -> Result<Vec<[u64; 16]>, RuntimeError> {
    maps.iter()
        .map(|m| {
            let Some(b) = m.base_arg.map(|b| b as usize) else {
                // A descriptor the kernel makes: a template the kernel completes.
                let (base, shape, strides) = template_values(m);
                let values = DescriptorValues { base, shape: &shape, strides: &strides };
                return encode(m, &values);
            };
            let r = m.im2col_rank.map_or(m.block_shape.len(), |r| r as usize);
            let shape: Vec<i64> = (b + 1..b + 1 + r).map(|i| arg(i) as i32 as i64).collect();
            let strides: Vec<i64> = (b + 1 + r..b + 1 + 2 * r).map(&arg).collect();
            let values = DescriptorValues { base: arg(b) as u64, shape: &shape, strides: &strides };
            if m.im2col_rank.is_none() {
                return encode(m, &values);
            }
            // Lower corners, upper corners (spatial dims), element strides, as i32 arguments.
            let rest: Vec<i64> = (b + 1 + 2 * r..b + 5 * r - 3).map(|i| arg(i) as i32 as i64).collect();
            let s = r - 2;
            let im2col = Im2colValues { lower: &rest[..s], upper: &rest[s..2 * s], element_strides: &rest[2 * s..] };
            encode_im2col(m, &values, &im2col)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(elem: ScalarType, block: &[u32]) -> TensorMapArg {
        TensorMapArg {
            base_arg: Some(0),
            elem,
            block_shape: block.to_vec(),
            nan_padding: false,
            im2col_rank: None,
            layout: None,
        }
    }

    /// The template of a descriptor made in the kernel passes the same checks as a host tensor would: every
    /// block TMA can copy has a stand-in tensor with 16-byte strides.
    #[test]
    fn templates_are_encodable_stand_ins() {
        for (elem, block) in [
            (ScalarType::F16, &[64, 128][..]),
            (ScalarType::F8E4M3, &[128, 128]),
            (ScalarType::F32, &[16]),
            (ScalarType::BF16, &[2, 8, 64]),
        ] {
            let m = TensorMapArg { base_arg: None, ..arg(elem, block) };
            let (base, shape, strides) = template_values(&m);
            let v = DescriptorValues { base, shape: &shape, strides: &strides };
            driver_args(&m, &v).unwrap_or_else(|e| panic!("{elem} {block:?}: {e}"));
        }
    }

    #[test]
    fn driver_arguments_are_innermost_first_in_bytes() {
        let m = arg(ScalarType::F16, &[64, 128]);
        let v = DescriptorValues { base: 0x1000, shape: &[300, 200], strides: &[256, 1] };
        let (dims, strides, boxes) = driver_args(&m, &v).unwrap();
        assert_eq!((dims, strides, boxes), (vec![200, 300], vec![512], vec![64, 64]));
    }

    #[test]
    fn the_tensor_map_rules_are_checked_before_the_driver() {
        let m = arg(ScalarType::F16, &[16, 32]);
        let bad = |shape: &[i64], strides: &[i64], base| {
            driver_args(&m, &DescriptorValues { base, shape, strides }).unwrap_err()
        };
        let e = bad(&[8, 100], &[100, 1], 0);
        assert_eq!(e, P::Stride { dim: 0, elements: 100, element_bytes: 2 });
        assert_eq!(e.field(), "strides");
        assert!(e.to_string().contains("multiples of 16 bytes"), "{e}");
        assert_eq!(bad(&[8, 64], &[64, 1], 8), P::Base(8));
        assert_eq!(bad(&[8, 64], &[1, 8], 0).field(), "strides");
        let nan_i8 = TensorMapArg { nan_padding: true, ..arg(ScalarType::I8, &[16, 32]) };
        let v = DescriptorValues { base: 0, shape: &[16, 32], strides: &[32, 1] };
        assert_eq!(driver_args(&nan_i8, &v).unwrap_err(), P::NanPadding(ScalarType::I8));
        // The whole error names the descriptor by its first kernel argument.
        let whole = TensorMapError { base_arg: Some(3), im2col: false, problem: P::Base(8) };
        assert_eq!(
            whole.to_string(),
            "the tensor descriptor of kernel argument 3 cannot be copied by TMA: TMA needs a 16-byte aligned base \
             address, got 0x8"
        );
    }
}
