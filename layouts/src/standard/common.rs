//! Building blocks shared by every standard layout: N-d identities, growing a layout to a shape (repeating in
//! registers or offsets), shrinking it to a shape (broadcasting lanes and warps, dropping registers), putting a
//! CTA tile and a CGA arrangement together, and the parameter checks every constructor uses.

use crate::linear::{Dim, LinearLayout, Result, bail, standard_out_dims};

use super::CgaLayout;

/// The in-dims of a distributed layout, in the order every `to_linear` returns them.
pub const DISTRIBUTED_IN_DIMS: [&str; 4] = ["register", "lane", "warp", "block"];

/// The in-dims of a shared layout, in order.
pub const SHARED_IN_DIMS: [&str; 2] = ["offset", "block"];

/// Threads per warp on every NVIDIA GPU.
pub const WARP_SIZE: u32 = 32;

/// Largest tensor a layout is built for: 2^48 elements. With parameter lists capped at 2^24 (below) a layout
/// never needs more than the 128 input bits the algebra supports.
pub const MAX_SHAPE_LOG2: u32 = 48;

/// Input bits the algebra supports in one layout.
const MAX_IN_LOG2: u32 = 128;

/// Largest product of one parameter list (sizes per thread, warps per CTA, CTAs per CGA, ...): 2^24.
pub const MAX_PARAM_LOG2: u32 = 24;

/// The identity from `in_dim` onto an N-d tensor of `shape`, `order[0]` varying fastest: the 1-d identity of
/// size `product(shape)` reshaped to `shape` permuted by `order`.
///
/// The out-dims of the result are listed in `order` (fastest first), not in `dim0, dim1, ...` order. That is
/// deliberate: [`ensure_layout_not_smaller_than`] grows a layout one out-dim at a time in the layout's own
/// out-dim order, so the order set here decides in which dimension a layout repeats first.
pub fn identity_standard_nd(in_dim: &str, shape: &[u32], order: &[u32]) -> Result<LinearLayout> {
    check_permutation(order, shape.len(), "identity_standard_nd: order")?;
    if let Some(&s) = shape.iter().find(|s| !s.is_power_of_two()) {
        bail!("identity_standard_nd: shape {shape:?} has a dim of size {s}, which is not a power of two");
    }
    if shape.iter().map(|s| s.trailing_zeros()).sum::<u32>() > MAX_SHAPE_LOG2 {
        bail!("identity_standard_nd: shape {shape:?} has more than 2^{MAX_SHAPE_LOG2} elements");
    }
    let names = standard_out_dims(shape.len());
    Ok(order.iter().fold(LinearLayout::empty(), |acc, &d| {
        acc * LinearLayout::identity_1d(shape[d as usize], in_dim, &names[d as usize])
    }))
}

/// Grows `layout` so that each out-dim is at least as large as `shape` says, by appending bits to its first
/// in-dim (`register` for distributed layouts, `offset` for shared ones). Out-dims are visited in the layout's
/// own order, so the first out-dim listed repeats first. `shape` names a size for every out-dim.
pub fn ensure_layout_not_smaller_than(layout: &LinearLayout, shape: &[(Dim, u32)]) -> Result<LinearLayout> {
    let Some(first) = layout.in_dims().next().cloned() else {
        bail!("ensure_layout_not_smaller_than: the layout has no in-dims to repeat along");
    };
    let mut ret = layout.clone();
    let mut added = 0;
    for (name, actual) in layout.out_dim_sizes() {
        let desired = size_for(shape, &name, "ensure_layout_not_smaller_than")?;
        added += desired.trailing_zeros().saturating_sub(actual.trailing_zeros());
    }
    if layout.total_in_log2() + added > MAX_IN_LOG2 {
        bail!(
            "ensure_layout_not_smaller_than: repeating the layout would need {} input bits; at most {MAX_IN_LOG2} are \
             supported",
            layout.total_in_log2() + added
        );
    }
    for (name, actual) in layout.out_dim_sizes() {
        let desired = size_for(shape, &name, "ensure_layout_not_smaller_than")?;
        if desired > actual {
            ret *= LinearLayout::identity_1d(desired / actual, &first, &name);
        }
    }
    Ok(ret)
}

/// Shrinks `layout` so that no out-dim is larger than `shape` says. For each out-dim that is too large, the
/// bases that reach it are taken from the largest coordinate to the smallest until it fits: a `register` basis
/// is removed (unless `broadcast_registers`, in which case it is zeroed like the others), any other basis has
/// that coordinate set to 0, so the lanes, warps or blocks it distinguished now hold the same elements.
pub fn ensure_layout_not_larger_than(
    layout: &LinearLayout,
    shape: &[(Dim, u32)],
    broadcast_registers: bool,
) -> Result<LinearLayout> {
    let mut bases = layout.bases_vec();
    let out_sizes = layout.out_dim_sizes();
    let reg = bases.iter().position(|(name, _)| *name == "register");
    let mut removed_regs: Vec<usize> = Vec::new();
    for (o, (name, actual)) in out_sizes.iter().enumerate() {
        let desired = size_for(shape, name, "ensure_layout_not_larger_than")?;
        let mut size = *actual;
        if size <= desired {
            continue;
        }
        // (in-dim index, basis index, coordinate), largest coordinate first; ties keep in-dim then bit order.
        let mut sorted: Vec<(usize, usize, u32)> = Vec::new();
        for (d, (in_name, in_bases)) in bases.iter().enumerate() {
            for (b, basis) in in_bases.iter().enumerate() {
                let v = basis[o];
                if v == 0 {
                    continue;
                }
                if !v.is_power_of_two() {
                    bail!(
                        "ensure_layout_not_larger_than: bit {b} of `{in_name}` reaches {v} in `{name}`, which is not a \
                         power of two, so the layout cannot be cut down to size {desired}"
                    );
                }
                sorted.push((d, b, v));
            }
        }
        sorted.sort_by_key(|&(_, _, v)| std::cmp::Reverse(v));
        for (d, b, _) in sorted {
            if size <= desired {
                break;
            }
            if !broadcast_registers && Some(d) == reg {
                removed_regs.push(b);
            } else {
                bases[d].1[b][o] = 0;
            }
            size >>= 1;
        }
    }
    if let Some(r) = reg {
        let kept = bases[r].1.iter().enumerate().filter(|(b, _)| !removed_regs.contains(b)).map(|(_, v)| v.clone());
        bases[r].1 = kept.collect();
    }
    let outs = out_sizes.into_iter().map(|(name, size)| {
        let desired = shape.iter().find(|(n, _)| *n == name).map_or(size, |&(_, s)| s);
        (name, size.min(desired))
    });
    LinearLayout::new(bases, outs)
}

/// Puts a CTA tile (in-dims `register, lane, warp` or `offset`) and a CGA arrangement of CTAs (in-dim
/// `block`) together into the layout of a tensor of `shape`. Each CTA gets `shape / CTAs along each dim`
/// (at least 1); the tile is repeated or cut down to that, then the CTAs tile the tensor. The tile's out-dims
/// must be `dim0..` in any order; that order decides where the tile repeats first. The result's out-dims are
/// in `dim0, dim1, ...` order.
pub fn combine_cta_cga_with_shape(cta: &LinearLayout, cga: &CgaLayout, shape: &[u32]) -> Result<LinearLayout> {
    let rank = shape.len();
    let names = standard_out_dims(rank);
    if rank == 0 || cta.num_out_dims() != rank || !names.iter().all(|n| cta.has_out_dim(n.as_str())) {
        bail!("the CTA layout's out-dims [{}] are not the dims of a rank-{rank} shape", join(cta.out_dims()));
    }
    let labeled: Vec<(Dim, u32)> = names.iter().cloned().zip(shape.iter().copied()).collect();
    let cta_order: Vec<&str> = cta.out_dims().map(Dim::as_str).collect();
    let cga_layout =
        ensure_layout_not_larger_than(&cga.to_linear(rank)?, &labeled, false)?.transpose_outs(&cta_order)?;
    let cta_shape: Vec<(Dim, u32)> = cta
        .out_dims()
        .map(|n| {
            let full = labeled.iter().find(|(m, _)| m == n).map_or(1, |&(_, s)| s);
            (n.clone(), (full / cga_layout.out_dim_size(n.as_str())).max(1))
        })
        .collect();
    let cta = ensure_layout_not_smaller_than(cta, &cta_shape)?;
    let cta = ensure_layout_not_larger_than(&cta, &cta_shape, false)?;
    if cta.total_in_log2() + cga_layout.total_in_log2() > MAX_IN_LOG2 {
        bail!("the layout would need more than {MAX_IN_LOG2} input bits");
    }
    let name_refs: Vec<&str> = names.iter().map(Dim::as_str).collect();
    let ret = (cta * cga_layout).transpose_outs(&name_refs)?;
    for (name, &size) in names.iter().zip(shape) {
        if ret.out_dim_size(name.as_str()) != size {
            bail!(
                "internal error: the combined layout covers {} elements along {name}, the shape asks for {size}",
                ret.out_dim_size(name.as_str())
            );
        }
    }
    Ok(ret)
}

/// Reorders the in-dims to `order`, adding any that are missing with size 1, and the out-dims to
/// `dim0, dim1, ...`.
pub(crate) fn normalize_dims(layout: LinearLayout, order: &[&str]) -> Result<LinearLayout> {
    let mut layout = layout;
    let Some(first_out) = layout.out_dims().next().cloned() else {
        bail!("internal error: a standard layout has no out-dims");
    };
    for name in order {
        if !layout.has_in_dim(name) {
            layout *= LinearLayout::identity_1d(1, *name, &first_out);
        }
    }
    let names = standard_out_dims(layout.num_out_dims());
    let name_refs: Vec<&str> = names.iter().map(Dim::as_str).collect();
    layout.transpose_ins(order)?.transpose_outs(&name_refs)
}

/// `(dimN, shape[N])` for every dim.
pub(crate) fn labeled_shape(shape: &[u32]) -> Vec<(Dim, u32)> {
    standard_out_dims(shape.len()).into_iter().zip(shape.iter().copied()).collect()
}

/// `[rank-1, ..., 1, 0]` (row-major) or the same with the last two dims swapped (column-major): the order of a
/// batch of matrices `[*, m, n]`.
pub(crate) fn matrix_order(rank: usize, row_major: bool) -> Vec<u32> {
    let mut order: Vec<u32> = (0..rank as u32).rev().collect();
    if !row_major && rank >= 2 {
        order.swap(0, 1);
    }
    order
}

// ----- parameter checks -----

/// A tensor shape: the expected rank, every dim a power of two, at most 2^48 elements.
pub(crate) fn check_shape(shape: &[u32], rank: usize, what: &str) -> Result<()> {
    if shape.len() != rank {
        bail!("{what}: the layout has rank {rank} but the shape {shape:?} has rank {}", shape.len());
    }
    if let Some(&s) = shape.iter().find(|s| !s.is_power_of_two()) {
        bail!("{what}: shape {shape:?} has a dim of size {s}, which is not a power of two");
    }
    let total: u32 = shape.iter().map(|s| s.trailing_zeros()).sum();
    if total > MAX_SHAPE_LOG2 {
        bail!("{what}: shape {shape:?} has 2^{total} elements; at most 2^{MAX_SHAPE_LOG2} are supported");
    }
    Ok(())
}

/// Every entry a power of two (so at least 1), and the product at most 2^24.
pub(crate) fn check_pow2_list(values: &[u32], what: &str) -> Result<()> {
    if let Some(&v) = values.iter().find(|v| !v.is_power_of_two()) {
        bail!("{what} {values:?} contains {v}, which is not a power of two");
    }
    let total: u32 = values.iter().map(|v| v.trailing_zeros()).sum();
    if total > MAX_PARAM_LOG2 {
        bail!("{what} {values:?} multiplies out to 2^{total}; at most 2^{MAX_PARAM_LOG2} is supported");
    }
    Ok(())
}

/// One power of two (so at least 1), at most 2^24.
pub(crate) fn check_pow2(value: u32, what: &str) -> Result<()> {
    if !value.is_power_of_two() || value.trailing_zeros() > MAX_PARAM_LOG2 {
        bail!("{what} must be a power of two no larger than 2^{MAX_PARAM_LOG2}, got {value}");
    }
    Ok(())
}

/// `order` lists each of `0..rank` exactly once.
pub(crate) fn check_permutation(order: &[u32], rank: usize, what: &str) -> Result<()> {
    if order.len() != rank {
        bail!("{what} {order:?} has {} entries but the rank is {rank}", order.len());
    }
    let mut seen = vec![false; rank];
    for &d in order {
        match seen.get_mut(d as usize) {
            Some(s) if !*s => *s = true,
            Some(_) => bail!("{what} {order:?} is not a permutation of 0..{rank}: {d} appears twice"),
            None => bail!("{what} {order:?} is not a permutation of 0..{rank}: {d} is out of range"),
        }
    }
    Ok(())
}

/// A parameter list has the layout's rank.
pub(crate) fn check_rank(values: &[u32], rank: usize, what: &str) -> Result<()> {
    if values.len() != rank {
        bail!("{what} {values:?} has {} entries but the layout has rank {rank}", values.len());
    }
    Ok(())
}

fn size_for(shape: &[(Dim, u32)], name: &Dim, what: &str) -> Result<u32> {
    match shape.iter().find(|(n, _)| n == name) {
        Some(&(_, s)) if s.is_power_of_two() => Ok(s),
        Some(&(_, s)) => bail!("{what}: size {s} for `{name}` is not a power of two"),
        None => bail!("{what}: no size given for out-dim `{name}`"),
    }
}

fn join<'a>(dims: impl Iterator<Item = &'a Dim>) -> String {
    dims.map(Dim::as_str).collect::<Vec<_>>().join(", ")
}
