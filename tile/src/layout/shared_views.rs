//! Views of a shared-memory buffer (Gluon's descriptor methods `permute`, `reshape`, `slice`): the same bytes
//! seen with another shape, whose layout (offset → coordinates) follows from the buffer's.
//!
//! - `permute(order)`: view dim `i` is buffer dim `order[i]`; every offset keeps its element.
//! - `reshape(shape)`: the row-major reshape of the coordinates; every offset keeps its element.
//! - `slice(start, length, dim)`: `length` elements of `dim` from `start`. The view is laid out as one aligned
//!   block of the buffer's offsets: the offset bits that select coordinates of `dim` at or above `length` must
//!   be the buffer's top offset bits and select nothing else (true of the outermost dims of the standard shared
//!   layouts, and of any dim whose slices are whole swizzle tiles). Then the view's layout is the buffer's low
//!   offset bits and it starts `offset_of(start)` elements into the buffer.
//!
//! The results carry a `SharedLinearLayout` spec made of their offset bases.

use std::sync::Arc;

use tessel_layouts::{AnyLayout, LinearLayout, SharedLayout, SharedLinearLayout};

use crate::layout::rules;
use crate::types::{Layout, Type};

/// Why a view of a buffer has no layout, or not the one its type says.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewError {
    /// A slice along a dimension a buffer's CTAs split.
    SpreadOverCtas,
    /// The view's layout is not one (the layouts crate's reason).
    Layout(tessel_layouts::LayoutError),
    NotPermutation {
        order: Vec<u32>,
        rank: usize,
    },
    /// The permuted (or reshaped) layout is no layout.
    Unrepresentable {
        reshape: bool,
    },
    /// A reshape to another number of elements.
    Elements {
        shape: Vec<u32>,
        numel: u64,
        buffer: u64,
    },
    DimOutOfRange {
        dim: usize,
        rank: usize,
    },
    /// A slice that is not a power-of-two length at a multiple of it inside the dim.
    SliceBounds {
        start: u32,
        length: u32,
        size: u32,
    },
    /// Slicing `dim` does not give one contiguous block of the buffer.
    NotContiguous {
        dim: usize,
    },
    /// The verifier's rule: a view op needs a memdesc operand and result.
    NotMemDesc,
    /// A view holding other elements than its buffer.
    ElementType {
        input: Type,
        output: Type,
    },
    NotASlice {
        input: Type,
        output: Type,
        dim: u32,
    },
    NotAView(&'static str),
    /// The view's type says another layout than its buffer's gives.
    LaidOut {
        input: Type,
        output: Type,
        want: Box<LinearLayout>,
    },
}

impl std::fmt::Display for ViewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ViewError::SpreadOverCtas => {
                f.write_str("a slice along a dimension the CTAs of a cluster split (each CTA's part would start elsewhere) is not supported")
            }
            ViewError::Layout(e) => write!(f, "{e}"),
            ViewError::NotPermutation { order, rank } => write!(f, "{order:?} is not a permutation of the {rank} dims"),
            ViewError::Unrepresentable { reshape: false } => f.write_str("the permuted layout is not a layout"),
            ViewError::Unrepresentable { reshape: true } => f.write_str("the reshaped layout is not a layout"),
            ViewError::Elements { shape, numel, buffer } => {
                write!(f, "a view of shape {shape:?} has {numel} elements, the buffer {buffer}")
            }
            ViewError::DimOutOfRange { dim, rank } => write!(f, "dim {dim} is out of range for a rank-{rank} buffer"),
            ViewError::SliceBounds { start, length, size } => write!(
                f,
                "a slice is a power-of-two length at a multiple of it inside the dim: {length} elements from {start} of \
                 {size}"
            ),
            ViewError::NotContiguous { dim } => write!(
                f,
                "slicing dim {dim} of this layout does not give one contiguous block of the buffer (the dim's high \
                 coordinates are not its outermost offsets); slice an outer dim, or whole swizzle tiles"
            ),
            ViewError::NotMemDesc => f.write_str("needs a memdesc operand and result"),
            ViewError::ElementType { input, output } => {
                let elem = |t: &Type| t.memdesc().map(|(_, e, _)| e);
                write!(
                    f,
                    "a view of {input} holds {}, not {}",
                    elem(input).expect("a memdesc"),
                    elem(output).expect("a memdesc")
                )
            }
            ViewError::NotASlice { input, output, dim } => write!(f, "{output} is not a slice of dim {dim} of {input}"),
            ViewError::NotAView(name) => write!(f, "`{name}` is not a view"),
            ViewError::LaidOut { input, output, want } => {
                write!(f, "the view of {input} is laid out as {want}, not as {output} says")
            }
        }
    }
}

impl std::error::Error for ViewError {}

/// For the gluon builtins, which report it as a diagnostic's message.
impl From<ViewError> for String {
    fn from(e: ViewError) -> String {
        e.to_string()
    }
}

/// The view's layout: `linear`, with the first of `candidates` that lays out the view's shape the same way as
/// its spec (so that an NVMMA buffer's views stay NVMMA where they are: a transposed view, a slice of rows),
/// else a `SharedLinearLayout` of its bases.
fn with_spec(linear: &LinearLayout, candidates: &[SharedLayout]) -> Result<Arc<Layout>, ViewError> {
    let shape: Vec<u32> = linear.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
    for c in candidates {
        let any = AnyLayout::Shared(c.clone());
        if let Ok(l) = any.to_linear_buffered(&shape)
            && l.equivalent(linear)
        {
            return Ok(Arc::new(Layout { spec: Some(any), linear: l }));
        }
    }
    let offset_bases = linear.bases("offset").iter().map(|b| b.to_vec()).collect();
    // A buffer spread over a cluster's CTAs keeps its `block` bases: the view's are the same CTAs' parts.
    let block_bases =
        if linear.has_in_dim("block") { linear.bases("block").iter().map(|b| b.to_vec()).collect() } else { vec![] };
    let spec = SharedLayout::Linear(SharedLinearLayout { offset_bases, block_bases, alignment: 16 });
    let shape: Vec<u32> = linear.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
    let any = AnyLayout::Shared(spec);
    let rebuilt = any.to_linear_buffered(&shape).map_err(ViewError::Layout)?;
    Ok(Arc::new(Layout { spec: Some(any), linear: rebuilt }))
}

/// The layout of `permute(order)`.
pub fn permute(l: &Layout, order: &[u32]) -> Result<Arc<Layout>, ViewError> {
    let rank = l.linear.num_out_dims();
    let mut seen = vec![false; rank];
    if order.len() != rank
        || order.iter().any(|&d| (d as usize) >= rank || std::mem::replace(&mut seen[d as usize], true))
    {
        return Err(ViewError::NotPermutation { order: order.to_vec(), rank });
    }
    let p = rules::permute(l, order).ok_or(ViewError::Unrepresentable { reshape: false })?;
    let candidates: Vec<SharedLayout> = match &l.spec {
        Some(AnyLayout::Shared(SharedLayout::Nvmma(n))) if order == [1, 0] => match n.cga.permuted(order) {
            // The CTAs hold the same parts, now along the permuted dims.
            Ok(cga) => vec![SharedLayout::Nvmma(tessel_layouts::NvmmaSharedLayout {
                transposed: !n.transposed,
                cga,
                ..n.clone()
            })],
            Err(_) => Vec::new(),
        },
        _ => Vec::new(),
    };
    with_spec(&p.linear, &candidates)
}

/// The layout of `reshape(shape)`.
pub fn reshape(l: &Layout, shape: &[u32]) -> Result<Arc<Layout>, ViewError> {
    let numel: u64 = shape.iter().map(|&d| d as u64).product();
    if numel != l.linear.total_out_size() {
        return Err(ViewError::Elements { shape: shape.to_vec(), numel, buffer: l.linear.total_out_size() });
    }
    let r = rules::reshape(l, shape).ok_or(ViewError::Unrepresentable { reshape: true })?;
    with_spec(&r.linear, &own_spec(l))
}

/// The layout of `slice(start, length, dim)` and where it starts in the buffer (in elements).
pub fn slice(l: &Layout, dim: usize, start: u32, length: u32) -> Result<(Arc<Layout>, u32), ViewError> {
    let sizes: Vec<u32> = l.linear.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
    if dim >= sizes.len() {
        return Err(ViewError::DimOutOfRange { dim, rank: sizes.len() });
    }
    if !length.is_power_of_two() || start % length != 0 || start + length > sizes[dim] {
        return Err(ViewError::SliceBounds { start, length, size: sizes[dim] });
    }
    // A slice along a dim the CTAs of a cluster split would start at another offset in each CTA.
    let block: Vec<Vec<u32>> = if l.linear.has_in_dim("block") {
        l.linear.bases("block").iter().map(|b| b.to_vec()).collect()
    } else {
        vec![]
    };
    if block.iter().any(|b| b[dim] != 0) {
        return Err(ViewError::SpreadOverCtas);
    }
    let bases = l.linear.bases("offset");
    let keep = bases.len() - (sizes[dim] / length).trailing_zeros() as usize;
    let high = |b: &[u32]| b[dim] >= length;
    let pure_high = |b: &[u32]| b[dim].is_power_of_two() && b.iter().enumerate().all(|(i, &x)| i == dim || x == 0);
    if bases[..keep].iter().any(|b| high(b)) || bases[keep..].iter().any(|b| !high(b) || !pure_high(b)) {
        return Err(ViewError::NotContiguous { dim });
    }
    let offset: u32 =
        bases[keep..].iter().enumerate().filter(|(_, b)| start & b[dim] != 0).map(|(j, _)| 1 << (keep + j)).sum();
    let mut new_sizes = sizes.clone();
    new_sizes[dim] = length;
    let names = tessel_layouts::standard_out_dims(sizes.len());
    let mut ins = vec![("offset", bases[..keep].iter().map(|b| b.to_vec()).collect::<Vec<Vec<u32>>>())];
    if !block.is_empty() {
        ins.push(("block", block));
    }
    let linear = LinearLayout::new(ins, names.into_iter().zip(new_sizes.iter().copied())).map_err(ViewError::Layout)?;
    Ok((with_spec(&linear, &own_spec(l))?, offset))
}

fn own_spec(l: &Layout) -> Vec<SharedLayout> {
    match &l.spec {
        Some(AnyLayout::Shared(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The verifier's rule for a view op: `input`'s buffer seen as `output` (shape, element type and layout).
pub fn check(op: &crate::ops::Op, input: &Type, output: &Type) -> Result<(), ViewError> {
    use crate::ops::Op;
    let (Some((shape, elem, l)), Some((vshape, velem, vl))) = (input.memdesc(), output.memdesc()) else {
        return Err(ViewError::NotMemDesc);
    };
    if elem != velem {
        return Err(ViewError::ElementType { input: input.clone(), output: output.clone() });
    }
    let want = match op {
        Op::MemDescPermute { order } => permute(l, order)?,
        Op::MemDescReshape => reshape(l, vshape)?,
        Op::MemDescSlice { dim, start } => {
            let d = *dim as usize;
            if d >= shape.len()
                || vshape.len() != shape.len()
                || (0..shape.len()).any(|i| i != d && vshape[i] != shape[i])
            {
                return Err(ViewError::NotASlice { input: input.clone(), output: output.clone(), dim: *dim });
            }
            slice(l, d, *start, vshape[d])?.0
        }
        other => return Err(ViewError::NotAView(other.name())),
    };
    let got: Vec<u32> = want.linear.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
    if got != vshape || !want.linear.equivalent(&vl.linear) {
        return Err(ViewError::LaidOut {
            input: input.clone(),
            output: output.clone(),
            want: Box::new(want.linear.clone()),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(spec: SharedLayout, shape: &[u32]) -> Layout {
        let any = AnyLayout::Shared(spec);
        Layout { linear: any.to_linear_buffered(shape).unwrap(), spec: Some(any) }
    }

    fn nvmma(shape: &[u32]) -> Layout {
        buffer(
            SharedLayout::Nvmma(tessel_layouts::NvmmaSharedLayout {
                swizzle_byte_width: 128,
                element_bitwidth: 16,
                rank: 2,
                transposed: false,
                fp4_padded: false,
                cga: tessel_layouts::CgaLayout::Single,
            }),
            shape,
        )
    }

    /// The buffer offset of view element `c`, through the view's layout.
    fn offset_of(view: &Layout, c: &[u32]) -> u32 {
        let inv = view.linear.invert().unwrap();
        let names = tessel_layouts::standard_out_dims(c.len());
        let input: Vec<(&str, u32)> = names.iter().map(|n| n.as_str()).zip(c.iter().copied()).collect();
        inv.apply_named(&input)[0].1
    }

    #[test]
    fn a_permuted_view_keeps_every_element_at_its_offset() {
        let l = nvmma(&[32, 64]);
        let t = permute(&l, &[1, 0]).unwrap();
        assert_eq!(t.linear.out_dim_sizes().iter().map(|x| x.1).collect::<Vec<_>>(), [64, 32]);
        for (r, c) in [(0, 0), (5, 17), (31, 63), (9, 40)] {
            assert_eq!(offset_of(&t, &[c, r]), offset_of(&l, &[r, c]));
        }
        assert!(matches!(&t.spec, Some(AnyLayout::Shared(SharedLayout::Nvmma(n))) if n.transposed), "{:?}", t.spec);
        assert_eq!(permute(&l, &[0, 0]), Err(ViewError::NotPermutation { order: vec![0, 0], rank: 2 }));
    }

    #[test]
    fn a_slice_of_rows_is_a_block_of_offsets_and_a_slice_inside_the_swizzle_is_refused() {
        let l = nvmma(&[128, 64]);
        let (v, start) = slice(&l, 0, 64, 64).unwrap();
        assert_eq!(start, 64 * 64);
        for (r, c) in [(0, 0), (3, 40), (63, 63), (17, 9)] {
            assert_eq!(start + offset_of(&v, &[r, c]), offset_of(&l, &[64 + r, c]));
        }
        let e = slice(&l, 1, 32, 32).unwrap_err();
        assert_eq!(e, ViewError::NotContiguous { dim: 1 });
        assert!(e.to_string().contains("does not give one contiguous block"), "{e}");
        assert_eq!(slice(&l, 0, 48, 32).unwrap_err(), ViewError::SliceBounds { start: 48, length: 32, size: 128 });
    }

    #[test]
    fn a_reshaped_view_keeps_the_row_major_order() {
        let l = nvmma(&[2, 64, 64]);
        let v = reshape(&l, &[128, 64]).unwrap();
        for (b, r, c) in [(1, 0, 0), (0, 63, 5), (1, 17, 33)] {
            assert_eq!(offset_of(&v, &[b * 64 + r, c]), offset_of(&l, &[b, r, c]));
        }
        assert!(reshape(&l, &[64, 64]).is_err());
    }
}
