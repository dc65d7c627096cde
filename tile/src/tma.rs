//! TMA (the Hopper/Blackwell tensor memory accelerator) as the compiler and the runtime both see it: which
//! tensor descriptors a TMA copy can serve, the shared layout a copy writes or reads, and the boxes it moves.
//!
//! One rule, used on both sides of the kernel boundary: the layout of a descriptor's block is Gluon's
//! `NVMMASharedLayout.get_default_for(block_shape, dtype)`, or the NVMMA layout a host descriptor gives
//! ([`desc_layout`]: another swizzle, or `fp4_padded`, where TMA writes each 8 bytes of packed e2m1 values
//! followed by 8 bytes of padding, `CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B`, and the box's bytes are the packed
//! ones), and the tensor map's box is that layout's TMA box
//! (`NvmmaSharedLayout::tma_block_shape`: every dim at most 256 elements, the contiguous dim one swizzle row
//! when swizzled). A block wider than a swizzle row, or longer than 256 along a dim, is copied as several boxes,
//! each landing where the layout puts its first element. The compiler lowers `desc_load`/`desc_store` through
//! this rule and records, for every descriptor a TMA op uses, the element type and block shape; the runtime
//! encodes the tensor map (`cuTensorMapEncodeTiled`) from the same rule, so neither side has to be told the
//! other's choice. A descriptor the kernel makes (`tl.make_tensor_descriptor`) gets the same encoding: the
//! runtime encodes it over a stand-in tensor as a template, and the kernel copies the template into its global
//! scratch and replaces the address, dims and strides (`tensormap.replace`).

use tessel_layouts::LinearLayout;
use tessel_layouts::standard::NvmmaSharedLayout;

use crate::ir::{Func, ValueDef, ValueId};
use crate::ops::Op;
use crate::types::{ScalarType, Type};

/// The most dims a tensor map has.
pub const MAX_RANK: usize = 5;

/// How TMA copies one block of a descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmaBlock {
    /// The shared layout of the block (what the copy writes, or reads for a store).
    pub layout: NvmmaSharedLayout,
    /// The box of the tensor map, in the block's dim order (row-major: the last dim is contiguous).
    pub box_dims: Vec<u32>,
    /// The origin of each box within the block, in the block's dim order.
    pub boxes: Vec<Vec<u32>>,
}

impl TmaBlock {
    /// Bytes one box moves (what a load's mbarrier transaction count adds per box).
    pub fn box_bytes(&self) -> u32 {
        self.box_dims.iter().product::<u32>() * self.layout.element_bitwidth / 8
    }

    /// Bytes the whole block moves.
    pub fn bytes(&self) -> u32 {
        self.box_bytes() * self.boxes.len() as u32
    }

    /// The swizzle of the tensor map: 0 (none), 32, 64 or 128 bytes.
    pub fn swizzle_bytes(&self) -> u32 {
        self.layout.swizzle_byte_width
    }
}

/// Why a block has no TMA copy, or its buffer no box offset.
#[derive(Clone, Debug, PartialEq)]
pub enum TmaError {
    /// A block of rank 0 or above [`MAX_RANK`].
    Rank(usize),
    /// Elements of other than 8 to 64 bits.
    ElementSize(ScalarType),
    /// The block's NVMMA layout has no TMA box.
    Layout(tessel_layouts::LayoutError),
    /// The box's contiguous dim spans `bytes`, not a multiple of 16.
    InnerBytes { block: Vec<u32>, elem: ScalarType, bytes: u32 },
    /// The boxes do not tile the block.
    Tiling { box_dims: Vec<u32>, block: Vec<u32> },
    /// The buffer's layout has no `offset` in-dim.
    NoOffsetDim,
    /// A descriptor's block layout of another rank or element size than its block, or transposed.
    BlockLayout { layout: String, block: Vec<u32>, elem: ScalarType },
}

impl std::fmt::Display for TmaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TmaError::Rank(r) => write!(f, "TMA copies blocks of rank 1 to {MAX_RANK}, not {r}"),
            TmaError::ElementSize(elem) => write!(f, "TMA copies 8- to 64-bit elements, not {elem}"),
            TmaError::Layout(e) => write!(f, "{e}"),
            TmaError::InnerBytes { block, elem, bytes } => write!(
                f,
                "a TMA box's contiguous dim must span a multiple of 16 bytes; the block {block:?} of {elem} spans \
                 {bytes}"
            ),
            TmaError::Tiling { box_dims, block } => {
                write!(f, "the TMA box {box_dims:?} does not tile the block {block:?}")
            }
            TmaError::NoOffsetDim => f.write_str("no offset dim"),
            TmaError::BlockLayout { layout, block, elem } => write!(
                f,
                "{layout} cannot stage a TMA block {block:?} of {elem}: it must have the block's rank and element \
                 size, not transposed"
            ),
        }
    }
}

impl std::error::Error for TmaError {}

/// For the gluon builtins, which report it as a diagnostic's message.
impl From<TmaError> for String {
    fn from(e: TmaError) -> String {
        e.to_string()
    }
}

/// The TMA copy of a `block` of `elem` in its default layout ([`block_in`]).
pub fn block(elem: ScalarType, block: &[u32]) -> Result<TmaBlock, TmaError> {
    block_in(elem, block, None)
}

/// The TMA copy of a `block` of `elem` staged in `layout` (else `NVMMASharedLayout.get_default_for`), or why
/// there is none: rank 1 to 5, 8- to 64-bit elements, a layout of the block's rank and element size that is not
/// transposed, and a box whose contiguous dim spans a multiple of 16 bytes (the tensor-map rule) that tiles the
/// block exactly.
pub fn block_in(elem: ScalarType, block: &[u32], layout: Option<&NvmmaSharedLayout>) -> Result<TmaBlock, TmaError> {
    let bits = elem.bits();
    if block.is_empty() || block.len() > MAX_RANK {
        return Err(TmaError::Rank(block.len()));
    }
    if ![8, 16, 32, 64].contains(&bits) {
        return Err(TmaError::ElementSize(elem));
    }
    let layout = match layout {
        None => NvmmaSharedLayout::default_for(block, bits),
        Some(l) => {
            if l.rank as usize != block.len() || l.element_bitwidth != bits || l.transposed {
                return Err(TmaError::BlockLayout { layout: l.to_string(), block: block.to_vec(), elem });
            }
            l.clone()
        }
    };
    let box_dims = layout.tma_block_shape(block, true).map_err(TmaError::Layout)?;
    let inner_bytes = box_dims[box_dims.len() - 1] * bits / 8;
    if inner_bytes % 16 != 0 {
        return Err(TmaError::InnerBytes { block: block.to_vec(), elem, bytes: inner_bytes });
    }
    if block.iter().zip(&box_dims).any(|(&b, &x)| b % x != 0) {
        return Err(TmaError::Tiling { box_dims, block: block.to_vec() });
    }
    // Boxes in row-major order of their origins.
    let counts: Vec<u32> = block.iter().zip(&box_dims).map(|(&b, &x)| b / x).collect();
    let total: u32 = counts.iter().product();
    let boxes = (0..total)
        .map(|mut i| {
            let mut origin = vec![0; block.len()];
            for d in (0..block.len()).rev() {
                origin[d] = i % counts[d] * box_dims[d];
                i /= counts[d];
            }
            origin
        })
        .collect();
    Ok(TmaBlock { layout, box_dims, boxes })
}

/// The element offset where a box with first element at `origin` starts in a buffer of `layout` (a shared
/// layout's linear map, in-dim `offset` to the tensor's dims): the layout's inverse at the origin. Boxes start
/// on swizzle-atom boundaries, where the swizzle is the identity.
pub fn box_offset(layout: &LinearLayout, origin: &[u32]) -> Result<u32, TmaError> {
    let inv = layout.pseudo_invert().map_err(TmaError::Layout)?;
    let names: Vec<String> = (0..origin.len()).map(|d| format!("dim{d}")).collect();
    let ins: Vec<(&str, u32)> = names.iter().map(String::as_str).zip(origin.iter().copied()).collect();
    let out = inv.apply_named(&ins);
    out.iter().find(|(d, _)| d.as_str() == "offset").map(|&(_, x)| x).ok_or(TmaError::NoOffsetDim)
}

/// The value a descriptor stands for: itself, or, for an argument of a `warp_specialize` worker region (workers
/// are isolated from above and receive what they use as the op's operands), the operand passed to it, so that a
/// host descriptor handed to a worker keeps its tensor map.
pub fn desc_source(f: &Func, mut desc: ValueId) -> ValueId {
    while let ValueDef::Arg(r, i) = f.value(desc).def {
        let Some(parent) = f.region(r).parent else { break };
        let op = f.op(parent);
        if !matches!(op.op, Op::WarpSpecialize(_)) || op.regions.first() == Some(&r) {
            break;
        }
        desc = op.operands[i as usize];
    }
    desc
}

/// The index of the function argument holding the base pointer of host descriptor `desc` (a
/// `make_tensor_desc` of the function's arguments, as a `TensorDescriptor` parameter is received), or `None`
/// for a descriptor made in the kernel. Only host descriptors have a tensor map.
pub fn host_desc_base(f: &Func, desc: ValueId) -> Option<usize> {
    host_base(f, desc, false)
}

/// The index of the function argument holding the base pointer of host im2col descriptor `desc` (a
/// `make_tensor_desc_im2col` of the function's arguments) and its tensor's rank, or `None` when `desc` is not one.
pub fn host_im2col_base(f: &Func, desc: ValueId) -> Option<(usize, u32)> {
    let ValueDef::Result(maker, _) = f.value(desc_source(f, desc)).def else { return None };
    let Op::MakeTensorDescIm2col { rank, .. } = f.op(maker).op else { return None };
    Some((host_base(f, desc, true)?, rank))
}

/// Whether `desc` was made by `make_tensor_desc_im2col` (host or not).
pub fn is_im2col(f: &Func, desc: ValueId) -> bool {
    matches!(f.value(desc_source(f, desc)).def, ValueDef::Result(o, _) if matches!(f.op(o).op, Op::MakeTensorDescIm2col { .. }))
}

fn host_base(f: &Func, desc: ValueId, im2col: bool) -> Option<usize> {
    let ValueDef::Result(maker, _) = f.value(desc_source(f, desc)).def else { return None };
    let data = f.op(maker);
    let made = if im2col {
        matches!(data.op, Op::MakeTensorDescIm2col { .. })
    } else {
        matches!(data.op, Op::MakeTensorDesc { .. })
    };
    if !made {
        return None;
    }
    let arg_index = |mut v: ValueId| {
        loop {
            match f.value(v).def {
                ValueDef::Arg(r, i) if r == f.body => return Some(i as usize),
                ValueDef::Result(o, _) if matches!(f.op(o).op, Op::MultipleOf(_) | Op::Assume) => {
                    v = f.op(o).operands[0];
                }
                _ => return None,
            }
        }
    };
    let base = arg_index(data.operands[0])?;
    // Shape and strides must be the arguments that follow the base, as the elaborator binds them.
    let rest_are_args = data.operands[1..].iter().enumerate().all(|(k, &v)| arg_index(v) == Some(base + 1 + k));
    rest_are_args.then_some(base)
}

/// The `make_tensor_desc` that made descriptor `desc` in the kernel (`tl.make_tensor_descriptor`), when the
/// program makes it once: the op sits in the function's body, outside every loop, branch and partition, so
/// that its tensor map can be written once per program into the program's global scratch before any copy
/// uses it. `None` for host descriptors and for descriptors made in loops or branches.
pub fn kernel_desc_maker(f: &Func, desc: ValueId) -> Option<crate::ir::OpId> {
    let ValueDef::Result(maker, _) = f.value(desc_source(f, desc)).def else { return None };
    let data = f.op(maker);
    (matches!(data.op, Op::MakeTensorDesc { .. }) && data.parent == Some(f.body) && host_desc_base(f, desc).is_none())
        .then_some(maker)
}

/// Whether the accesses of descriptor `desc` in `f` go through TMA: the target has it, the descriptor has a
/// tensor map (a host descriptor's is a kernel parameter; one made once per program in the kernel, see
/// [`kernel_desc_maker`], gets one in global scratch) and its block has a TMA copy. Descriptors made in loops or
/// branches are read and written through pointers.
pub fn usable(f: &Func, desc: ValueId) -> bool {
    f.target.has_tma()
        && (host_desc_base(f, desc).is_some() || kernel_desc_maker(f, desc).is_some())
        && desc_tma_block(f, desc).is_ok()
}

/// The shared layout a host descriptor's block is staged in when it gives one (`TensorDescriptor(...,
/// layout)` other than the default): the `layout` of the `make_tensor_desc` that made it.
pub fn desc_layout(f: &Func, desc: ValueId) -> Option<NvmmaSharedLayout> {
    let ValueDef::Result(maker, _) = f.value(desc_source(f, desc)).def else { return None };
    match &f.op(maker).op {
        Op::MakeTensorDesc { layout, .. } => layout.clone(),
        _ => None,
    }
}

/// The TMA copy of descriptor `desc`'s block, in its layout ([`desc_layout`]).
pub fn desc_tma_block(f: &Func, desc: ValueId) -> Result<TmaBlock, TmaError> {
    let (elem, b) = desc_block(f.ty(desc)).ok_or(TmaError::Rank(0))?;
    block_in(elem, b, desc_layout(f, desc).as_ref())
}

/// The memdesc type of one block of descriptor `desc` in its TMA layout.
pub fn desc_buffer_type(f: &Func, desc: ValueId) -> Result<Type, TmaError> {
    let (elem, b) = desc_block(f.ty(desc)).ok_or(TmaError::Rank(0))?;
    buffer_type_in(elem, b, desc_layout(f, desc).as_ref())
}

/// The bytes of one block of descriptor `desc` that land in each CTA of a cluster, what an `mbarrier.expect` for
/// its copy counts: the block's, divided among the parts its layout's `cga_layout` splits it into (a CTA holding
/// the block whole receives all of it, multicast or not).
pub fn desc_cta_bytes(f: &Func, desc: ValueId) -> Result<u32, TmaError> {
    let ty = desc_buffer_type(f, desc)?;
    let Type::MemDesc { shape, elem, layout } = &ty else { unreachable!("a memdesc") };
    let bytes = shape.iter().product::<u32>() * elem.bits() / 8;
    Ok(bytes / crate::cluster::parts(&layout.linear))
}

/// The memdesc type of one block of a descriptor of `elem` in its default TMA layout.
pub fn buffer_type(elem: ScalarType, block_shape: &[u32]) -> Result<Type, TmaError> {
    buffer_type_in(elem, block_shape, None)
}

/// The memdesc type of one block of a descriptor of `elem` staged in `layout` ([`block_in`]).
pub fn buffer_type_in(
    elem: ScalarType,
    block_shape: &[u32],
    layout: Option<&NvmmaSharedLayout>,
) -> Result<Type, TmaError> {
    let b = block_in(elem, block_shape, layout)?;
    let linear = b.layout.to_linear(block_shape).map_err(TmaError::Layout)?;
    let spec = tessel_layouts::AnyLayout::Shared(tessel_layouts::SharedLayout::Nvmma(b.layout));
    Ok(Type::MemDesc {
        shape: block_shape.into(),
        elem,
        layout: std::sync::Arc::new(crate::types::Layout { spec: Some(spec), linear }),
    })
}

/// The memdesc type of one mbarrier (`MBarrierLayout()`: one 64-bit word).
pub fn barrier_type() -> Type {
    one_word(ScalarType::I64)
}

/// The type of a ring buffer's release counter (`ring_release`): one `i32` word.
pub fn release_counter_type() -> Type {
    one_word(ScalarType::I32)
}

fn one_word(elem: ScalarType) -> Type {
    use tessel_layouts::{AnyLayout, CgaLayout, SharedLayout, SwizzledSharedLayout};
    let spec = SwizzledSharedLayout { vec: 1, per_phase: 1, max_phase: 1, order: vec![0], cga: CgaLayout::Single };
    let linear = spec.to_linear(&[1]).expect("a one-element layout");
    let layout = crate::types::Layout { spec: Some(AnyLayout::Shared(SharedLayout::Swizzled(spec))), linear };
    Type::MemDesc { shape: [1].as_slice().into(), elem, layout: std::sync::Arc::new(layout) }
}

/// The element type and block shape of a descriptor type.
/// The layout a descriptor's block is given (in a signature, or by a host descriptor), as the compiler carries
/// it: `None` for the block's default (`NVMMASharedLayout.get_default_for(block, dtype)`; layouts compare as
/// linear layouts over the block, and zero CTA bases, every CTA of a cluster holding the whole block, leave one
/// the same), else the layout, checked to have a TMA box over the block. A gather descriptor's `[1, cols]` block
/// lands as rows of a larger buffer, so its layout is that buffer's (checked at the gather).
pub fn given_layout(
    elem: ScalarType,
    block: &[u32],
    given: &NvmmaSharedLayout,
) -> Result<Option<NvmmaSharedLayout>, TmaError> {
    use tessel_layouts::SharedLayout;
    let default = NvmmaSharedLayout::default_for(block, elem.bits());
    let want = SharedLayout::Nvmma(default).to_linear(block);
    let got = match SharedLayout::Nvmma(given.clone()).to_linear(block) {
        Ok(got) => got,
        Err(_) if block.len() == 2 && block[0] == 1 && !given.fp4_padded => {
            block_in(elem, block, Some(given))?;
            return Ok(Some(given.clone()));
        }
        Err(e) => return Err(TmaError::Layout(e)),
    };
    if want.as_ref().ok() == Some(&got.remove_zero_bases("block")) {
        return Ok(None);
    }
    block_in(elem, block, Some(given))?;
    Ok(Some(given.clone()))
}

pub fn desc_block(ty: &Type) -> Option<(ScalarType, &[u32])> {
    match ty {
        Type::TensorDesc { elem, block_shape } => Some((*elem, block_shape.as_slice())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_wider_than_a_swizzle_row_is_copied_as_several_boxes() {
        // 64 x 128 halves: 256-byte rows, 128-byte swizzle, two 64 x 64 boxes side by side.
        let b = block(ScalarType::F16, &[64, 128]).unwrap();
        assert_eq!(b.swizzle_bytes(), 128);
        assert_eq!(b.box_dims, [64, 64]);
        assert_eq!(b.boxes, [vec![0, 0], vec![0, 64]]);
        assert_eq!(b.bytes(), 64 * 128 * 2);
        // The second box starts after the first one's 8 KiB.
        let linear = b.layout.to_linear(&[64, 128]).unwrap();
        assert_eq!(box_offset(&linear, &[0, 64]).unwrap(), 64 * 64);
        // 128 x 64 halves: one box with a 128-byte swizzle.
        let a = block(ScalarType::F16, &[128, 64]).unwrap();
        assert_eq!((a.box_dims.as_slice(), a.boxes.len(), a.swizzle_bytes()), ([128, 64].as_slice(), 1, 128));
    }

    #[test]
    fn small_and_one_dimensional_blocks_are_not_swizzled() {
        let v = block(ScalarType::F32, &[16]).unwrap();
        assert_eq!((v.box_dims.as_slice(), v.swizzle_bytes()), ([16].as_slice(), 0));
        let r = block(ScalarType::F16, &[4, 64]).unwrap();
        assert_eq!((r.box_dims.as_slice(), r.swizzle_bytes()), ([4, 64].as_slice(), 0));
        let long = block(ScalarType::F32, &[512, 8]).unwrap();
        assert_eq!(long.box_dims, [256, 8]);
        assert_eq!(long.boxes.len(), 2);
    }

    #[test]
    fn boxes_narrower_than_16_bytes_are_refused() {
        let e = block(ScalarType::F16, &[16, 4]).unwrap_err();
        assert_eq!(e, TmaError::InnerBytes { block: vec![16, 4], elem: ScalarType::F16, bytes: 8 });
        assert!(e.to_string().contains("multiple of 16 bytes"), "{e}");
        assert!(matches!(block(ScalarType::I1, &[16, 16]), Err(TmaError::ElementSize(ScalarType::I1))));
    }
}
