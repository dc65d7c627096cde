//! One CTA's part of a memory buffer spread over the CTAs of a cluster, as the IR's logical view types it.
//!
//! The IR keeps the cluster's logical view: a `[256, 64]` shared buffer with `cga_layout=[[1, 0]]` is one buffer
//! whose rows 0..128 live in CTA 0 and rows 128..256 in CTA 1; a CTA pair's accumulator
//! (`TensorMemoryLayout(two_ctas=True)`) and a pair's block scales (`TensorMemoryScalesLayout(cga_layout=...)`)
//! are one buffer whose CTA bits are its last column bits. Each CTA allocates and addresses only its own part:
//! [`local_type`] gives that part's type (the shape divided along the split dims, the layout without its CTA
//! bases) and where each CTA's part sits in the logical tensor (its CTA bases; a zero basis: the two CTAs that
//! differ in that bit hold the same part, a broadcast).
//!
//! A shared linear layout is `S(offset, block) = S(offset, 0) ^ S(0, block)`, so every CTA's part is CTA 0's
//! pattern translated by the part's origin: the per-CTA layout addresses every CTA's part. The instructions that
//! read such buffers (descriptors of a pair's MMA operands, `tcgen05.cp` of a pair's scales) are derived from the
//! per-CTA types, the same ones codegen compiles against, so the rule checked at the call is the rule lowered.

use std::sync::Arc;

use tessel_layouts::{AnyLayout, CgaLayout, LinearLayout, SharedLayout, TensorMemoryLayout, TensorMemoryScalesLayout};

use crate::types::{Layout, Shape, Type};

/// One CTA's part of a buffer spread over the cluster: its layout and shape, and the CTA bases it came from (one
/// per rank bit, in elements of the logical tensor).
#[derive(Clone, Debug)]
pub struct LocalPart {
    pub layout: Layout,
    pub shape: Vec<u32>,
    pub bases: Vec<Vec<u32>>,
}

/// The bases of in-dim `name` (none when the layout has no such in-dim).
fn bases(l: &LinearLayout, name: &str) -> Vec<Vec<u32>> {
    if !l.has_in_dim(name) {
        return Vec::new();
    }
    l.bases(name).iter().map(|b| b.to_vec()).collect()
}

/// Whether any CTA basis is nonzero.
fn splits(block: &[Vec<u32>]) -> bool {
    block.iter().any(|b| b.iter().any(|&x| x != 0))
}

/// One CTA's part of a tensor of `shape` whose CTA bases are `block`: its shape, when every nonzero basis is a
/// single coordinate at one of the top bits of its dim (the part of each CTA is an aligned box of the tensor).
pub fn part_shape(shape: &[u32], block: &[Vec<u32>]) -> Result<Vec<u32>, String> {
    let mut local = shape.to_vec();
    for (d, size) in local.iter_mut().enumerate() {
        let mut along: Vec<u32> = block.iter().map(|b| b[d]).filter(|&x| x != 0).collect();
        along.sort_unstable();
        let n = 1u32 << along.len();
        if *size % n != 0 {
            return Err(format!("dim {d} of size {size} cannot be split over {n} CTAs"));
        }
        let part = *size / n;
        if along.iter().enumerate().any(|(i, &x)| x != part << i) {
            return Err(format!(
                "the CTA bases {along:?} along dim {d} do not split it into aligned parts of {part} (a cga_layout \
                 that interleaves the CTAs' elements)"
            ));
        }
        *size = part;
    }
    if block.iter().any(|b| b.iter().filter(|&&x| x != 0).count() > 1) {
        return Err("a CTA basis moves along two dims at once".into());
    }
    Ok(local)
}

/// The spec without its CTA bases.
fn spec_alone(spec: &AnyLayout) -> Result<AnyLayout, String> {
    let mut s = spec.clone();
    match &mut s {
        AnyLayout::Shared(SharedLayout::Nvmma(l)) => l.cga = CgaLayout::Single,
        AnyLayout::Shared(SharedLayout::Swizzled(l)) => l.cga = CgaLayout::Single,
        AnyLayout::Shared(SharedLayout::Linear(l)) => l.block_bases.clear(),
        other => return Err(format!("{other:?} is not a shared layout")),
    }
    Ok(s)
}

/// The rank of the buffers a shared layout is written for.
fn spec_rank(s: &SharedLayout) -> usize {
    match s {
        SharedLayout::Nvmma(l) => l.rank as usize,
        SharedLayout::Swizzled(l) => l.order.len(),
        SharedLayout::Linear(l) => l.offset_bases.first().map_or(0, |b| b.len()),
    }
}

/// One CTA's layout of a shared buffer of `shape` whose layout splits it over the CTAs: the offset bases as
/// they are, over the part's shape. `None` when no CTA basis is nonzero.
pub fn local_shared(layout: &Layout, shape: &[u32]) -> Result<Option<LocalPart>, String> {
    let lin = &layout.linear;
    let block = bases(lin, "block");
    if !splits(&block) {
        return Ok(None);
    }
    let local_shape = part_shape(shape, &block)?;
    // Out-dims keep the layout's power-of-two sizes (a ring of 3 buffers spans 4), each divided by its split.
    let outs: Vec<(String, u32)> = lin
        .out_dim_names()
        .iter()
        .enumerate()
        .map(|(d, n)| {
            let split = block.iter().filter(|b| b[d] != 0).count();
            (n.to_string(), lin.out_dim_size(n.as_str()) >> split)
        })
        .collect();
    // The `block` in-dim stays, of size 1 (as a layout without a cga_layout has it).
    let ins = lin
        .in_dims()
        .map(|d| {
            let b =
                if d.as_str() == "block" { vec![] } else { lin.bases(d.as_str()).iter().map(|b| b.to_vec()).collect() };
            (d.to_string(), b)
        })
        .collect::<Vec<(String, Vec<Vec<u32>>)>>();
    let local = LinearLayout::new(ins, outs)
        .map_err(|e| format!("its offsets reach past one CTA's part of {local_shape:?}: {e}"))?;
    let spec = match &layout.spec {
        Some(s) => {
            let alone = spec_alone(s)?;
            // (A ring's spec is the layout of one buffer, its leading dims added to the linear layout only.)
            if let AnyLayout::Shared(sh) = &alone
                && spec_rank(sh) == local_shape.len()
                && sh.to_linear(&local_shape).map_err(|e| e.to_string())? != local
            {
                return Err("one CTA's part is not the layout without its cga_layout".into());
            }
            Some(alone)
        }
        None => None,
    };
    Ok(Some(LocalPart { layout: Layout { spec, linear: local }, shape: local_shape, bases: block }))
}

/// One CTA's part of tensor memory spread over the CTAs: a CTA pair's buffer (`TensorMemoryLayout(two_ctas=True)`
/// with its `cta_split`), or block scales split (`TensorMemoryScalesLayout`'s `cta_split`) or broadcast over them.
/// The per-CTA shape, the layout without the CTAs, and the CTA bases (the split's rank bits along M, then N, as
/// the layout's last column bits take them; zero for a broadcast). `None` for tensor memory one CTA holds.
pub fn local_tmem(layout: &Layout, shape: &[u32]) -> Result<Option<LocalPart>, String> {
    let (split, broadcast, alone) = match &layout.spec {
        Some(AnyLayout::TensorMemory(t)) if t.two_ctas && t.cta_split != [1, 1] => {
            (t.cta_split, 1, AnyLayout::TensorMemory(TensorMemoryLayout { cta_split: [1, 1], ..t.clone() }))
        }
        Some(AnyLayout::TensorMemoryScales(s)) if s.cta_split != [1, 1] || s.broadcast > 1 => (
            s.cta_split,
            s.broadcast,
            AnyLayout::TensorMemoryScales(TensorMemoryScalesLayout { cta_split: [1, 1], broadcast: 1 }),
        ),
        _ => return Ok(None),
    };
    let lead = shape.len() - 2;
    let [sm, sn] = split;
    let mut local_shape = shape.to_vec();
    local_shape[lead] /= sm;
    local_shape[lead + 1] /= sn;
    let mut cta = Vec::new();
    for (d, s) in [(lead, sm), (lead + 1, sn)] {
        for i in 0..s.trailing_zeros() {
            let mut b = vec![0; shape.len()];
            b[d] = local_shape[d] << i;
            cta.push(b);
        }
    }
    cta.extend((0..broadcast.trailing_zeros()).map(|_| vec![0; shape.len()]));
    let local = alone.to_linear(&local_shape).map_err(|e| e.to_string())?;
    // The logical layout is the local one with the CTAs' column bits added after one buffer's columns (before
    // the bits of a `[buffers, ...]` buffer's index): dropping them gives it back. A pair's accumulator's CTA
    // bases are nonzero and point past one CTA's part, so they are found by value; a broadcast's are zero, so by
    // place.
    let lin = &layout.linear;
    let mut cols = bases(lin, "col");
    if broadcast > 1 {
        let one = alone.to_linear(&local_shape[lead..]).map_err(|e| e.to_string())?;
        let at = bases(&one, "col").len() + cta.len() - broadcast.trailing_zeros() as usize;
        if cols.len() < at + broadcast.trailing_zeros() as usize {
            return Err(format!("{alone:?} broadcast over {broadcast} CTAs has too few column bits"));
        }
        cols.drain(at..at + broadcast.trailing_zeros() as usize);
    }
    cols.retain(|b| !cta.contains(b) || b.iter().all(|&x| x == 0));
    let outs: Vec<(String, u32)> =
        lin.out_dim_names().iter().enumerate().map(|(d, n)| (n.to_string(), local_shape[d])).collect();
    let back = LinearLayout::new(vec![("row".to_string(), bases(lin, "row")), ("col".to_string(), cols)], outs)
        .map_err(|e| e.to_string())?;
    if back != local {
        return Err(format!("one CTA's part of {alone:?} is not the layout without its CTAs"));
    }
    Ok(Some(LocalPart { layout: Layout { spec: Some(alone), linear: local }, shape: local_shape, bases: cta }))
}

/// One CTA's part of a memdesc spread over the cluster's CTAs (shared or tensor memory), or `None` when every CTA
/// holds all of it alone (the type is its own part).
pub fn local_part(t: &Type) -> Result<Option<LocalPart>, String> {
    let Type::MemDesc { shape, layout, .. } = t else { return Ok(None) };
    if t.is_tmem() { local_tmem(layout, shape) } else { local_shared(layout, shape) }
}

/// The type of one CTA's part of `t` (`t` itself when it is not spread over the CTAs).
pub fn local_type(t: &Type) -> Result<Type, String> {
    let Some(p) = local_part(t)? else { return Ok(t.clone()) };
    let Type::MemDesc { elem, .. } = t else { unreachable!("a memdesc") };
    Ok(Type::MemDesc { shape: Shape::from_slice(&p.shape), elem: *elem, layout: Arc::new(p.layout) })
}

/// Whether `t` is a logical-view memdesc spread over CTAs (a type [`local_type`] would rewrite).
pub fn is_spread(t: &Type) -> bool {
    local_part(t).is_ok_and(|p| p.is_some())
}

/// Where each CTA's part of `t` sits in the logical tensor: its CTA bases, the trailing zero ones dropped (so a
/// buffer every CTA holds whole, and one broadcast to every CTA, both give none).
pub fn cta_bases(t: &Type) -> Result<Vec<Vec<u32>>, String> {
    let mut b = match local_part(t)? {
        Some(p) => p.bases,
        None => match t {
            Type::MemDesc { layout, .. } => bases(&layout.linear, "block"),
            _ => Vec::new(),
        },
    };
    while b.last().is_some_and(|x| x.iter().all(|&c| c == 0)) {
        b.pop();
    }
    Ok(b)
}
