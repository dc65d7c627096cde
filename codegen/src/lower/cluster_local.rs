//! Shared memory spread over the CTAs of a cluster: a buffer whose shared layout has nonzero `block` bases (a
//! `cga_layout` that splits it, as the operand and output tiles of a cluster GEMM have), and the TMA
//! descriptors whose blocks are staged in such buffers.
//!
//! The IR keeps the cluster's logical view: a `[256, 64]` buffer with `cga_layout=[[1, 0]]` is one buffer whose
//! rows 0..128 live in CTA 0 and rows 128..256 in CTA 1. Each CTA allocates and addresses only its own part, so
//! before code generation [`localize`] rewrites every such type to one CTA's (`tessel_tile::cluster_part`: the
//! shape divided along the split dims and the layout without its `block` bases); what differs by CTA is only
//! where its part sits in the logical tensor ([`Parts`], added to TMA coordinates at the copy). A descriptor's
//! block becomes one CTA's part too, so its tensor map's box is the part each CTA copies.
//!
//! The ops that meet such a buffer and how each CTA does its share:
//! - `local_alloc`, `memdesc_index`: the per-CTA sizes;
//! - `local_load`, `local_store` (and `local_alloc` with a value): a register tensor whose CTA bases are the
//!   buffer's (each CTA holds in registers what it holds in shared memory), so its per-CTA part meets the
//!   per-CTA buffer;
//! - `tma_load`, `tma_store`: each CTA copies its part at the coordinates plus its part's origin; CTAs that
//!   hold the same part (a zero basis) share one copy, multicast by the first of them;
//! - `tma_gather`: each CTA gathers the rows of its part from its part of the row indices (split as the rows
//!   are); the descriptor's layout (the buffer's, its block being one row) loses its CTA bases;
//! - `warpgroup_dot`: each CTA multiplies its rows of A by its columns of B into its part of the accumulator,
//!   so the accumulator's CTA bases must be A's along M and B's along N, and neither operand may split K;
//! - `memdesc_slice` along a dim the CTAs do not split, `memdesc_permute`, `memdesc_reinterpret`: each CTA takes
//!   the same view of its own part; `memdesc_reshape` where each CTA's part is one run of elements on both sides;
//! - a CTA pair's tensor memory (`TensorMemoryLayout(two_ctas=True)`, split along M) and block scales (split
//!   with A, or whole in each CTA): each CTA allocates, loads and stores its part, and the pair's even CTA issues
//!   the MMAs and `tcgen05.cp` copies over both (`tcgen05`).
//!
//! Every other op on such a buffer is refused by [`check_op`], with the op.

use std::collections::HashMap;
use std::sync::Arc;

use tessel_layouts::{AnyLayout, SharedLayout};
use tessel_tile::cluster_part::{LocalPart, local_shared, local_tmem};
use tessel_tile::ir::{Func, OpId, ValueDef, ValueId};
use tessel_tile::ops::Op;
use tessel_tile::types::{Layout, Shape, Type};

use super::coords::{bases, over_ctas};

/// The CTA bases (one per rank bit, in elements of the logical tensor, zero where the CTAs of that bit hold
/// the same part) of every value [`localize`] rewrote: where each CTA's part sits.
pub(crate) type Parts = HashMap<ValueId, Vec<Vec<u32>>>;

/// Why a kernel's spread shared memory cannot be localized: the op to point at (when there is one) and what.
pub(crate) type Refusal = (Option<OpId>, String);

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
    let gathers = gather_descs(f);
    for o in f.all_ops() {
        if gathers.contains(&o) {
            // A gather descriptor's layout is its buffer's, not its `[1, cols]` block's: each CTA gathers rows
            // into its own part, in the layout without the CTA bases, from the whole tensor.
            if let Op::MakeTensorDesc { layout: Some(nv), .. } = &mut g.op_mut(o).op {
                nv.cga = tessel_layouts::CgaLayout::Single;
            }
        } else if let Op::MakeTensorDesc { layout: Some(nv), .. } = &f.op(o).op {
            let Some((_, block)) = tessel_tile::tma::desc_block(f.ty(f.op(o).results[0])) else { continue };
            let spec = AnyLayout::Shared(SharedLayout::Nvmma(nv.clone()));
            let Ok(linear) = SharedLayout::Nvmma(nv.clone()).to_linear(block) else { continue };
            let layout = Layout { spec: Some(spec), linear };
            match local_shared(&layout, block) {
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
                    (local_shared(layout, shape), "shared memory spread over the CTAs")
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

/// The makers of the descriptors that `tma_gather`s read (their layout describes the gathered buffer).
fn gather_descs(f: &Func) -> std::collections::HashSet<OpId> {
    let mut out = std::collections::HashSet::new();
    for o in f.all_ops() {
        if let Op::TmaGather { .. } = f.op(o).op
            && let ValueDef::Result(maker, _) = f.value(tessel_tile::tma::desc_source(f, f.op(o).operands[0])).def
        {
            out.insert(maker);
        }
    }
    out
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

/// Whether a reshape of a buffer spread over the CTAs is each CTA's reshape of its own part: every CTA's part
/// of the source and of the result is one run of the tensor's elements in row-major order (the dims before a
/// split one are 1 in the part), and the CTA bases name the same run on both sides (a zero basis, CTAs holding
/// the same part, on both).
fn reshape_parts(src: &[u32], src_cta: &[Vec<u32>], res: &[u32], res_cta: &[Vec<u32>]) -> Result<(), String> {
    let run = |shape: &[u32], cta: &[Vec<u32>]| -> Result<Vec<u64>, String> {
        let local = tessel_tile::cluster_part::part_shape(shape, cta)?;
        for b in cta {
            if let Some(d) = b.iter().position(|&x| x != 0)
                && local[..d].iter().any(|&x| x != 1)
            {
                return Err(format!(
                    "each CTA's part of {shape:?} (CTA bases {cta:?}) is not one run of the elements in row-major                      order"
                ));
            }
        }
        Ok(cta
            .iter()
            .map(|b| b.iter().zip(shape).fold(0u64, |flat, (&x, &size)| flat * size as u64 + x as u64))
            .collect())
    };
    let (a, b) = (run(src, src_cta)?, run(res, res_cta)?);
    if a != b {
        return Err(format!(
            "the view's CTA parts {res_cta:?} are not its buffer's {src_cta:?} reshaped: each CTA must hold the              reshape of its own part"
        ));
    }
    Ok(())
}

/// Whether op `o` can do its share on the buffers [`localize`] rewrote: `Err` with why not.
fn check_op(f: &Func, o: OpId, parts: &Parts) -> Result<(), String> {
    let d = f.op(o);
    let spread = |v: &ValueId| parts.contains_key(v);
    // A wgmma whose accumulator alone is spread (operands every CTA holds whole) is checked too, and so is a copy
    // whose pointers alone are (into a buffer every CTA holds whole: each CTA would fill only its part).
    if !d.operands.iter().chain(&d.results).any(spread) && !matches!(d.op, Op::WarpGroupDot { .. } | Op::AsyncCopy) {
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
        Op::AsyncCopy => same(d.operands[0], d.operands[1], "the pointers' CTA bases differ from the buffer's"),
        // Views and the ops that pass buffers on (to partitions) or only wait.
        Op::MemDescIndex
        | Op::LocalDealloc
        | Op::WarpSpecialize(_)
        | Op::WarpGroupDotWait { .. }
        | Op::MakeTensorDesc { .. } => Ok(()),
        // Control flow carries each CTA's part (the verifier keeps a carried value's type, CTA bases included).
        Op::For(_) | Op::If | Op::While | Op::Yield | Op::Condition => Ok(()),
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
        // The same bytes typed anew: each CTA's part of the view must be its part of the buffer, whatever the
        // two spreads (example 01 reads its K ring, split along the keys, as V, split along the head dim).
        Op::MemDescReinterpret if !f.ty(d.operands[0]).is_tmem() => {
            let (buf, view) = (f.ty(d.operands[0]), f.ty(d.results[0]));
            let local = |t: &Type| -> Result<u64, String> {
                let l = tessel_tile::cluster_part::local_type(t)?;
                let (shape, elem, _) = l.memdesc().expect("a memdesc");
                Ok(shape.iter().map(|&x| x as u64).product::<u64>() * elem.bits() as u64)
            };
            if local(buf)? != local(view)? {
                return Err(format!(
                    "`{name}`: each CTA's part of the view ({view}) is not the bytes of its part of the buffer ({buf})"
                ));
            }
            Ok(())
        }
        Op::MemDescReinterpret => same(d.results[0], d.operands[0], "the view's CTA bases differ from its buffer's"),
        Op::MemDescReshape => {
            let (src, res) = (d.operands[0], d.results[0]);
            reshape_parts(f.ty(src).shape(), &cta_bases(f, parts, src), f.ty(res).shape(), &cta_bases(f, parts, res))
                .map_err(|m| format!("`{name}`: {m}"))
        }
        Op::Tcgen05MmaScaled { .. } | Op::Tcgen05Copy => Ok(()),
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
        // Each CTA gathers the rows of its part of the buffer from the indices it holds (its part of them).
        Op::TmaGather { .. } => {
            let (buf, x) = (f.ty(d.operands[1]), f.ty(d.operands[3]));
            let (Some((_, _, bl)), Some(xl)) = (buf.memdesc(), x.layout()) else { return Ok(()) };
            match tessel_tile::tma_gather::cluster_problem(&xl.linear, &bl.linear, f.config.num_ctas) {
                None => Ok(()),
                Some(problem) => Err(format!("`{name}`: {problem}")),
            }
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
