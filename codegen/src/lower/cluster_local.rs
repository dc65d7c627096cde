//! Shared memory spread over the CTAs of a cluster: a buffer whose shared layout has nonzero `block` bases (a
//! `cga_layout` that splits it, as the operand and output tiles of a cluster GEMM have), and the TMA
//! descriptors whose blocks are staged in such buffers.
//!
//! The IR keeps the cluster's logical view: a `[256, 64]` buffer with `cga_layout=[[1, 0]]` is one buffer whose
//! rows 0..128 live in CTA 0 and rows 128..256 in CTA 1. Each CTA allocates and addresses only its own part, so
//! before code generation [`localize`] rewrites every such type to one CTA's: the shape divided along the split
//! dims and the layout without its `block` bases. A shared linear layout is `S(offset, block) = S(offset, 0) ^
//! S(0, block)`, so every CTA's part is CTA 0's pattern translated by the part's origin: the per-CTA layout
//! addresses every CTA's part, and what differs by CTA is only where its part sits in the logical tensor
//! ([`Parts`], added to TMA coordinates at the copy). A descriptor's block becomes one CTA's part too, so its
//! tensor map's box is the part each CTA copies.
//!
//! The ops that meet such a buffer and how each CTA does its share:
//! - `local_alloc`, `memdesc_index`: the per-CTA sizes;
//! - `local_load`, `local_store` (and `local_alloc` with a value): a register tensor whose CTA bases are the
//!   buffer's (each CTA holds in registers what it holds in shared memory), so its per-CTA part meets the
//!   per-CTA buffer;
//! - `tma_load`, `tma_store`: each CTA copies its part at the coordinates plus its part's origin; CTAs that
//!   hold the same part (a zero basis) share one copy, multicast by the first of them;
//! - `warpgroup_dot`: each CTA multiplies its rows of A by its columns of B into its part of the accumulator,
//!   so the accumulator's CTA bases must be A's along M and B's along N, and neither operand may split K;
//! - `memdesc_slice` along a dim the CTAs do not split, `memdesc_permute`, `memdesc_reinterpret`: each CTA takes
//!   the same view of its own part;
//! - a CTA pair's tensor memory (`TensorMemoryLayout(two_ctas=True)`, split along M): each CTA allocates, loads
//!   and stores its part, and the pair's even CTA issues the MMA over both (`tcgen05`).
//!
//! Every other op on such a buffer is refused by [`check_op`], with the op.

use std::collections::HashMap;
use std::sync::Arc;

use tessel_layouts::{AnyLayout, CgaLayout, LinearLayout, SharedLayout};
use tessel_tile::ir::{Func, OpId, ValueDef, ValueId};
use tessel_tile::ops::Op;
use tessel_tile::types::{Layout, Shape, Type};

use super::coords::{bases, over_ctas};

/// The CTA bases (one per rank bit, in elements of the logical tensor, zero where the CTAs of that bit hold
/// the same part) of every value [`localize`] rewrote: where each CTA's part sits.
pub(crate) type Parts = HashMap<ValueId, Vec<Vec<u32>>>;

/// One CTA's part of a buffer spread over the cluster: its layout and shape, and the CTA bases it came from.
struct LocalPart {
    layout: Layout,
    shape: Vec<u32>,
    bases: Vec<Vec<u32>>,
}

/// Why a kernel's spread shared memory cannot be localized: the op to point at (when there is one) and what.
pub(crate) type Refusal = (Option<OpId>, String);

/// Whether any CTA basis is nonzero.
fn splits(block: &[Vec<u32>]) -> bool {
    block.iter().any(|b| b.iter().any(|&x| x != 0))
}

/// One CTA's part of a tensor of `shape` whose CTA bases are `block`: its shape, when every nonzero basis is a
/// single coordinate at one of the top bits of its dim (the part of each CTA is an aligned box of the tensor).
fn part_shape(shape: &[u32], block: &[Vec<u32>]) -> Result<Vec<u32>, String> {
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
fn local_layout(layout: &Layout, shape: &[u32]) -> Result<Option<LocalPart>, String> {
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

/// One CTA's part of a CTA pair's tensor memory (`TensorMemoryLayout(two_ctas=True)` with its `cta_split`):
/// the per-CTA shape, the layout without the split, and the CTA bases (the split's rank bits along M, then N,
/// as the layout's last column bits take them). `None` for tensor memory that is not split.
fn local_tmem(layout: &Layout, shape: &[u32]) -> Result<Option<LocalPart>, String> {
    let Some(AnyLayout::TensorMemory(t)) = &layout.spec else { return Ok(None) };
    if !t.two_ctas || t.cta_split == [1, 1] {
        return Ok(None);
    }
    let lead = shape.len() - 2;
    let [sm, sn] = t.cta_split;
    let mut local_shape = shape.to_vec();
    local_shape[lead] /= sm;
    local_shape[lead + 1] /= sn;
    let mut bases = Vec::new();
    for (d, split) in [(lead, sm), (lead + 1, sn)] {
        for i in 0..split.trailing_zeros() {
            let mut b = vec![0; shape.len()];
            b[d] = local_shape[d] << i;
            bases.push(b);
        }
    }
    let spec = tessel_layouts::TensorMemoryLayout { cta_split: [1, 1], ..t.clone() };
    let local = spec.to_linear(&local_shape).map_err(|e| e.to_string())?;
    // The logical layout is the local one with the split's column bits added: dropping them gives it back.
    let lin = &layout.linear;
    let cols: Vec<Vec<u32>> = lin.bases("col").iter().map(|b| b.to_vec()).filter(|b| !bases.contains(b)).collect();
    let rows: Vec<Vec<u32>> = lin.bases("row").iter().map(|b| b.to_vec()).collect();
    let outs: Vec<(String, u32)> =
        lin.out_dim_names().iter().enumerate().map(|(d, n)| (n.to_string(), local_shape[d])).collect();
    let back = LinearLayout::new(vec![("row".to_string(), rows), ("col".to_string(), cols)], outs)
        .map_err(|e| e.to_string())?;
    if back != local {
        return Err(format!(
            "one CTA's part of {} is not the layout without its CTA split",
            AnyLayout::TensorMemory(t.clone())
        ));
    }
    let spec = Some(AnyLayout::TensorMemory(spec));
    Ok(Some(LocalPart { layout: Layout { spec, linear: local }, shape: local_shape, bases }))
}

/// [`Parts`] and the per-CTA types of a kernel: `f` with every shared buffer and descriptor spread over the
/// CTAs, and a CTA pair's tensor memory, rewritten to one CTA's part. `None` when nothing is spread (the kernel
/// compiles as it is).
pub(crate) fn localize(f: &Func) -> Result<Option<(Func, Parts)>, Refusal> {
    if f.config.num_ctas <= 1 {
        return Ok(None);
    }
    let mut g = f.clone();
    let mut parts = Parts::new();
    // Descriptors: the layout their maker stages the block in.
    let mut desc_parts: HashMap<OpId, (Vec<u32>, Vec<Vec<u32>>)> = HashMap::new();
    for o in f.all_ops() {
        if let Op::MakeTensorDesc { layout: Some(nv), .. } = &f.op(o).op {
            let Some((_, block)) = tessel_tile::tma::desc_block(f.ty(f.op(o).results[0])) else { continue };
            let spec = AnyLayout::Shared(SharedLayout::Nvmma(nv.clone()));
            let Ok(linear) = SharedLayout::Nvmma(nv.clone()).to_linear(block) else { continue };
            let layout = Layout { spec: Some(spec), linear };
            match local_layout(&layout, block) {
                Ok(Some(LocalPart { layout: local, shape, bases: cta })) => {
                    let AnyLayout::Shared(SharedLayout::Nvmma(nv)) = local.spec.expect("a shared spec") else {
                        unreachable!()
                    };
                    if let Op::MakeTensorDesc { layout, .. } = &mut g.op_mut(o).op {
                        *layout = Some(nv);
                    }
                    desc_parts.insert(o, (shape, cta));
                }
                Ok(None) => {}
                Err(e) => return Err((Some(o), format!("a descriptor block spread over the CTAs: {e}"))),
            }
        }
    }
    for i in 0..f.values.len() {
        let v = ValueId(i as u32);
        match f.ty(v) {
            Type::MemDesc { shape, elem, layout } => {
                // Tensor memory of a CTA pair, or shared memory spread over the CTAs: each CTA's part.
                let (part, what) = if f.ty(v).is_tmem() {
                    (local_tmem(layout, shape), "tensor memory of a CTA pair")
                } else {
                    (local_layout(layout, shape), "shared memory spread over the CTAs")
                };
                let LocalPart { layout: local, shape: local_shape, bases: cta } = match part {
                    Ok(Some(x)) => x,
                    Ok(None) => continue,
                    Err(e) => return Err((definer(f, v), format!("{what}: {e}"))),
                };
                g.values[i].ty =
                    Type::MemDesc { shape: Shape::from_slice(&local_shape), elem: *elem, layout: Arc::new(local) };
                parts.insert(v, cta);
            }
            Type::TensorDesc { elem, .. } => {
                let ValueDef::Result(maker, _) = f.value(tessel_tile::tma::desc_source(f, v)).def else { continue };
                if let Some((shape, cta)) = desc_parts.get(&maker) {
                    g.values[i].ty = Type::TensorDesc { elem: *elem, block_shape: Shape::from_slice(shape) };
                    parts.insert(v, cta.clone());
                }
            }
            _ => {}
        }
    }
    for o in f.all_ops() {
        check_op(f, o, &parts).map_err(|m| (Some(o), m))?;
    }
    Ok((!parts.is_empty()).then_some((g, parts)))
}

/// The op that makes `v`, if any (for the error's span).
fn definer(f: &Func, v: ValueId) -> Option<OpId> {
    match f.value(v).def {
        ValueDef::Result(o, _) => Some(o),
        _ => None,
    }
}

/// The CTA bases of value `v` in the logical view: a rewritten buffer's or descriptor's, a register tensor's over
/// the cluster's CTAs, all zero otherwise.
fn cta_bases(f: &Func, parts: &Parts, v: ValueId) -> Vec<Vec<u32>> {
    let n = f.config.num_ctas;
    if let Some(p) = parts.get(&v) {
        return p.clone();
    }
    let rank = f.ty(v).shape().len();
    let mut out = match f.ty(v) {
        Type::Tensor { layout: Some(l), .. } => bases(&over_ctas(&l.linear, n), "block"),
        _ => vec![],
    };
    out.resize(n.trailing_zeros() as usize, vec![0; rank]);
    out
}

/// Whether op `o` can do its share on the buffers [`localize`] rewrote: `Err` with why not.
fn check_op(f: &Func, o: OpId, parts: &Parts) -> Result<(), String> {
    let d = f.op(o);
    let spread = |v: &ValueId| parts.contains_key(v);
    // A wgmma whose accumulator alone is spread (operands every CTA holds whole) is checked too.
    if !d.operands.iter().chain(&d.results).any(spread) && !matches!(d.op, Op::WarpGroupDot { .. }) {
        return Ok(());
    }
    let name = d.op.name();
    let same = |x: ValueId, y: ValueId, what: &str| {
        let (a, b) = (cta_bases(f, parts, x), cta_bases(f, parts, y));
        if a == b {
            Ok(())
        } else {
            Err(format!(
                "`{name}`: {what} ({a:?} and {b:?}): each CTA must hold in registers the part of the buffer it holds \
                 in shared memory"
            ))
        }
    };
    match &d.op {
        Op::LocalAlloc => match d.operands.first() {
            Some(&x) => same(x, d.results[0], "the value's CTA bases differ from the buffer's"),
            None => Ok(()),
        },
        Op::LocalStore => same(d.operands[0], d.operands[1], "the value's CTA bases differ from the buffer's"),
        Op::LocalLoad => same(d.results[0], d.operands[0], "the result's CTA bases differ from the buffer's"),
        // Views and the ops that pass buffers on (to partitions) or only wait.
        Op::MemDescIndex | Op::WarpSpecialize(_) | Op::WarpGroupDotWait { .. } | Op::MakeTensorDesc { .. } => Ok(()),
        // A pair's tensor memory: each CTA allocates, loads and stores its part; the verifier placed a pair MMA's
        // operands (`tessel_tile::cluster`), and the even CTA issues it over both parts.
        // Views along dims the CTAs do not split: each CTA takes the same view of its own part (the offsets of
        // the local buffer are the logical ones there).
        Op::MemDescSlice { dim, .. } => {
            let (src, res) = (cta_bases(f, parts, d.operands[0]), cta_bases(f, parts, d.results[0]));
            if src.iter().any(|b| b[*dim as usize] != 0) {
                return Err(format!("`{name}` along dim {dim}, which the CTAs of the cluster split ({src:?})"));
            }
            if src != res {
                return Err(format!("`{name}`: the view's CTA bases {res:?} are not its buffer's {src:?}"));
            }
            Ok(())
        }
        Op::MemDescPermute { order } => {
            let (src, res) = (cta_bases(f, parts, d.operands[0]), cta_bases(f, parts, d.results[0]));
            let permuted: Vec<Vec<u32>> = src.iter().map(|b| order.iter().map(|&i| b[i as usize]).collect()).collect();
            if permuted != res {
                return Err(format!("`{name}`: the view's CTA bases {res:?} are not its buffer's permuted ({src:?})"));
            }
            Ok(())
        }
        Op::MemDescReinterpret => same(d.results[0], d.operands[0], "the view's CTA bases differ from its buffer's"),
        Op::TmemAlloc => match d.operands.first() {
            Some(&x) => same(x, d.results[0], "the value's CTA bases differ from the tensor memory's"),
            None => Ok(()),
        },
        Op::TmemLoad => same(d.results[0], d.operands[0], "the result's CTA bases differ from the tensor memory's"),
        Op::TmemStore => same(d.operands[0], d.operands[1], "the value's CTA bases differ from the tensor memory's"),
        Op::Tcgen05Mma | Op::Tcgen05Commit { .. } => Ok(()),
        Op::TmaLoad { .. } | Op::TmaStore => {
            let (desc, buf) = (d.operands[0], d.operands[1]);
            if cta_bases(f, parts, desc) != cta_bases(f, parts, buf) {
                return Err(format!(
                    "`{name}`: the descriptor's block and the buffer are spread over the CTAs differently (give \
                     the descriptor the buffer's layout, cga_layout included)"
                ));
            }
            Ok(())
        }
        Op::WarpGroupDot { .. } => {
            let (a, b, acc) = (cta_bases(f, parts, d.operands[0]), cta_bases(f, parts, d.operands[1]), d.operands[2]);
            let c = cta_bases(f, parts, acc);
            let fits =
                a.iter().zip(&b).zip(&c).all(|((a, b), c)| a[1] == 0 && b[0] == 0 && c[0] == a[0] && c[1] == b[1]);
            if fits {
                Ok(())
            } else {
                Err(format!(
                    "`{name}`: each CTA multiplies its own rows of A by its own columns of B, so the accumulator's \
                     CTA bases {c:?} must be A's ({a:?}) along M and B's ({b:?}) along N, and neither may split K"
                ))
            }
        }
        _ => Err(format!(
            "`{name}` on shared memory spread over the CTAs of a cluster (a shared layout with nonzero \
             cga_layout/block bases) is not supported yet"
        )),
    }
}
