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
use crate::types::Layout;

/// The view's layout: `linear`, with the first of `candidates` that lays out the view's shape the same way as
/// its spec (so that an NVMMA buffer's views stay NVMMA where they are: a transposed view, a slice of rows),
/// else a `SharedLinearLayout` of its bases.
fn with_spec(linear: &LinearLayout, candidates: &[SharedLayout]) -> Result<Arc<Layout>, String> {
    if linear.has_in_dim("block") && linear.in_dim_size("block") != 1 {
        return Err("views of buffers spread over several CTAs are not supported".into());
    }
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
    let spec = SharedLayout::Linear(SharedLinearLayout { offset_bases, block_bases: vec![], alignment: 16 });
    let shape: Vec<u32> = linear.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
    let any = AnyLayout::Shared(spec);
    let rebuilt = any.to_linear_buffered(&shape).map_err(|e| e.to_string())?;
    Ok(Arc::new(Layout { spec: Some(any), linear: rebuilt }))
}

/// The layout of `permute(order)`.
pub fn permute(l: &Layout, order: &[u32]) -> Result<Arc<Layout>, String> {
    let rank = l.linear.num_out_dims();
    let mut seen = vec![false; rank];
    if order.len() != rank
        || order.iter().any(|&d| (d as usize) >= rank || std::mem::replace(&mut seen[d as usize], true))
    {
        return Err(format!("{order:?} is not a permutation of the {rank} dims"));
    }
    let p = rules::permute(l, order).ok_or("the permuted layout is not a layout")?;
    let candidates: Vec<SharedLayout> = match &l.spec {
        Some(AnyLayout::Shared(SharedLayout::Nvmma(n))) if order == [1, 0] => {
            vec![SharedLayout::Nvmma(tessel_layouts::NvmmaSharedLayout { transposed: !n.transposed, ..n.clone() })]
        }
        _ => Vec::new(),
    };
    with_spec(&p.linear, &candidates)
}

/// The layout of `reshape(shape)`.
pub fn reshape(l: &Layout, shape: &[u32]) -> Result<Arc<Layout>, String> {
    let numel: u64 = shape.iter().map(|&d| d as u64).product();
    if numel != l.linear.total_out_size() {
        return Err(format!(
            "a view of shape {shape:?} has {numel} elements, the buffer {}",
            l.linear.total_out_size()
        ));
    }
    let r = rules::reshape(l, shape).ok_or("the reshaped layout is not a layout")?;
    with_spec(&r.linear, &own_spec(l))
}

/// The layout of `slice(start, length, dim)` and where it starts in the buffer (in elements).
pub fn slice(l: &Layout, dim: usize, start: u32, length: u32) -> Result<(Arc<Layout>, u32), String> {
    let sizes: Vec<u32> = l.linear.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
    if dim >= sizes.len() {
        return Err(format!("dim {dim} is out of range for a rank-{} buffer", sizes.len()));
    }
    if !length.is_power_of_two() || start % length != 0 || start + length > sizes[dim] {
        return Err(format!(
            "a slice is a power-of-two length at a multiple of it inside the dim: {length} elements from {start} of {}",
            sizes[dim]
        ));
    }
    let bases = l.linear.bases("offset");
    let keep = bases.len() - (sizes[dim] / length).trailing_zeros() as usize;
    let high = |b: &[u32]| b[dim] >= length;
    let pure_high = |b: &[u32]| b[dim].is_power_of_two() && b.iter().enumerate().all(|(i, &x)| i == dim || x == 0);
    if bases[..keep].iter().any(|b| high(b)) || bases[keep..].iter().any(|b| !high(b) || !pure_high(b)) {
        return Err(format!(
            "slicing dim {dim} of this layout does not give one contiguous block of the buffer (the dim's high \
             coordinates are not its outermost offsets); slice an outer dim, or whole swizzle tiles"
        ));
    }
    let offset: u32 =
        bases[keep..].iter().enumerate().filter(|(_, b)| start & b[dim] != 0).map(|(j, _)| 1 << (keep + j)).sum();
    let mut new_sizes = sizes.clone();
    new_sizes[dim] = length;
    let names = tessel_layouts::standard_out_dims(sizes.len());
    let linear = LinearLayout::new(
        [("offset", bases[..keep].iter().map(|b| b.to_vec()).collect::<Vec<Vec<u32>>>())],
        names.into_iter().zip(new_sizes.iter().copied()),
    )
    .map_err(|e| e.to_string())?;
    Ok((with_spec(&linear, &own_spec(l))?, offset))
}

fn own_spec(l: &Layout) -> Vec<SharedLayout> {
    match &l.spec {
        Some(AnyLayout::Shared(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The verifier's rule for a view op: `input`'s buffer seen as `output` (shape, element type and layout).
pub fn check(op: &crate::ops::Op, input: &crate::types::Type, output: &crate::types::Type) -> Result<(), String> {
    use crate::ops::Op;
    let (Some((shape, elem, l)), Some((vshape, velem, vl))) = (input.memdesc(), output.memdesc()) else {
        return Err("needs a memdesc operand and result".into());
    };
    if elem != velem {
        return Err(format!("a view of {input} holds {elem}, not {velem}"));
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
                return Err(format!("{output} is not a slice of dim {dim} of {input}"));
            }
            slice(l, d, *start, vshape[d])?.0
        }
        other => return Err(format!("`{}` is not a view", other.name())),
    };
    let got: Vec<u32> = want.linear.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
    if got != vshape || !want.linear.equivalent(&vl.linear) {
        return Err(format!("the view of {input} is laid out as {}, not as {output} says", want.linear));
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
        assert!(permute(&l, &[0, 0]).unwrap_err().contains("not a permutation"));
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
        assert!(e.contains("does not give one contiguous block"), "{e}");
        assert!(slice(&l, 0, 48, 32).unwrap_err().contains("multiple"));
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
