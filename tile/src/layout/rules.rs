//! How layouts flow through each op: the linear-layout transforms (slice, expand, broadcast, permute, reshape,
//! join, split, cat) and, per op, the *backward* rule (operand layouts an op needs to produce given result
//! layouts) and the *forward* rule (result layouts an op produces from given operand layouts).
//!
//! Propagation, the rewrite and `verify_layouts` all use these rules, so the three cannot disagree. Every
//! transform works on the linear layout; a Gluon spec is kept only where one exists (a slice of a spec'd
//! parent, a blocked layout at a broadcast shape), so `spec.to_linear(shape) == linear` always holds.

use std::sync::Arc;

use tessel_layouts::{AnyLayout, DistributedLayout, LinearLayout, SliceLayout};

use crate::ir::{Func, OpId};
use crate::ops::Op;
use crate::types::{Layout, Type};

pub type L = Arc<Layout>;

/// A layout from a distributed spec at `shape`.
pub fn from_spec(spec: DistributedLayout, shape: &[u32]) -> Result<L, tessel_layouts::LayoutError> {
    let linear = spec.to_linear(shape)?;
    Ok(Arc::new(Layout { spec: Some(AnyLayout::Distributed(spec)), linear }))
}

fn from_linear(linear: LinearLayout) -> L {
    Arc::new(Layout { spec: None, linear })
}

fn dist_spec(l: &Layout) -> Option<&DistributedLayout> {
    match &l.spec {
        Some(AnyLayout::Distributed(d)) => Some(d),
        _ => None,
    }
}

/// Rebuilds a layout from per-in-dim bases and out-dim sizes (named `dim0..`).
fn rebuild(ins: Vec<(tessel_layouts::Dim, Vec<Vec<u32>>)>, sizes: &[u32]) -> Option<LinearLayout> {
    let names = tessel_layouts::standard_out_dims(sizes.len());
    LinearLayout::new(ins, names.into_iter().zip(sizes.iter().copied())).ok()
}

fn out_sizes(l: &LinearLayout) -> Vec<u32> {
    l.out_dim_sizes().into_iter().map(|(_, s)| s).collect()
}

/// Drops out-dim `axis` (the layout of a reduction's result): slots that walked along it now hold the same
/// element, and registers that did are removed.
pub fn slice(l: &Layout, axis: usize) -> Option<L> {
    let lin = &l.linear;
    let mut sizes = out_sizes(lin);
    if axis >= sizes.len() || sizes.len() < 2 {
        return None;
    }
    sizes.remove(axis);
    let ins = lin
        .bases_vec()
        .into_iter()
        .map(|(n, bases)| {
            let reg = n == "register";
            let bases = bases
                .into_iter()
                .map(|mut b| {
                    b.remove(axis);
                    b
                })
                .filter(|b| !reg || b.iter().any(|&c| c != 0))
                .collect();
            (n, bases)
        })
        .collect();
    let linear = rebuild(ins, &sizes)?;
    let spec = dist_spec(l).map(|p| SliceLayout { dim: axis as u32, parent: Box::new(p.clone()) });
    match spec {
        Some(s) => {
            let s = DistributedLayout::Slice(s);
            match s.to_linear(&sizes) {
                Ok(check) if check == linear => {
                    Some(Arc::new(Layout { spec: Some(AnyLayout::Distributed(s)), linear }))
                }
                _ => Some(from_linear(linear)),
            }
        }
        None => Some(from_linear(linear)),
    }
}

/// The layout at `shape` (every dim of `shape` equal to the layout's, or 1): the layout of a broadcast's
/// operand. Dims shrunk to 1 lose their coordinates; registers that only walked along them disappear.
pub fn shrink(l: &Layout, shape: &[u32]) -> Option<L> {
    let lin = &l.linear;
    let sizes = out_sizes(lin);
    if sizes.len() != shape.len() || sizes.iter().zip(shape).any(|(&a, &b)| a != b && b != 1) {
        return None;
    }
    if sizes == shape {
        return Some(Arc::new(l.clone()));
    }
    if let Some(spec) = dist_spec(l)
        && let Ok(linear) = spec.to_linear(shape)
        && generic_shrink(lin, shape).as_ref() == Some(&linear)
    {
        return Some(Arc::new(Layout { spec: l.spec.clone(), linear }));
    }
    generic_shrink(lin, shape).map(from_linear)
}

fn generic_shrink(lin: &LinearLayout, shape: &[u32]) -> Option<LinearLayout> {
    let ins = lin
        .bases_vec()
        .into_iter()
        .map(|(n, bases)| {
            let reg = n == "register";
            let bases = bases
                .into_iter()
                .map(|b| b.iter().zip(shape).map(|(&c, &s)| if s == 1 { 0 } else { c }).collect::<Vec<u32>>())
                .filter(|b| !reg || b.iter().any(|&c| c != 0))
                .collect();
            (n, bases)
        })
        .collect();
    rebuild(ins, shape)
}

/// The operand's spec re-applied at the larger `shape`: a candidate for a broadcast's result layout (the
/// caller checks that shrinking it gives the operand's layout back).
fn expand_from(l: &Layout, shape: &[u32]) -> Option<L> {
    let spec = dist_spec(l)?;
    let linear = spec.to_linear(shape).ok()?;
    Some(Arc::new(Layout { spec: l.spec.clone(), linear }))
}

/// The layout of `expand_dims(x, axis)` given x's layout: the parent of a slice along `axis`, else the same
/// map with a size-1 dim inserted.
pub fn expand_dims(l: &Layout, axis: usize, result_shape: &[u32]) -> Option<L> {
    if let Some(DistributedLayout::Slice(s)) = dist_spec(l)
        && s.dim as usize == axis
        && let Ok(p) = from_spec((*s.parent).clone(), result_shape)
        && slice(&p, axis).is_some_and(|back| back.linear == l.linear)
    {
        return Some(p);
    }
    let ins = l
        .linear
        .bases_vec()
        .into_iter()
        .map(|(n, bases)| {
            let bases = bases
                .into_iter()
                .map(|mut b| {
                    b.insert(axis, 0);
                    b
                })
                .collect();
            (n, bases)
        })
        .collect();
    rebuild(ins, result_shape).map(from_linear)
}

/// Result out-dim `i` is operand dim `order[i]`.
pub fn permute(l: &Layout, order: &[u32]) -> Option<L> {
    let sizes = out_sizes(&l.linear);
    let new_sizes: Vec<u32> = order.iter().map(|&d| sizes[d as usize]).collect();
    let ins = l
        .linear
        .bases_vec()
        .into_iter()
        .map(|(n, bases)| (n, bases.into_iter().map(|b| order.iter().map(|&d| b[d as usize]).collect()).collect()))
        .collect();
    rebuild(ins, &new_sizes).map(from_linear)
}

/// The inverse permutation of `order`.
pub fn inverse_order(order: &[u32]) -> Vec<u32> {
    let mut inv = vec![0; order.len()];
    for (i, &d) in order.iter().enumerate() {
        inv[d as usize] = i as u32;
    }
    inv
}

/// The layout after a row-major reshape to `shape`: elements keep their registers, lanes and warps.
pub fn reshape(l: &Layout, shape: &[u32]) -> Option<L> {
    let lin = &l.linear;
    let rank = lin.num_out_dims();
    // reshape_outs flattens with the first out-dim fastest; a row-major reshape has the last dim fastest.
    let rev: Vec<String> = (0..rank).rev().map(|i| format!("dim{i}")).collect();
    let rev_refs: Vec<&str> = rev.iter().map(String::as_str).collect();
    let names: Vec<String> = (0..shape.len()).rev().map(|i| format!("new{i}")).collect();
    let new_dims: Vec<(&str, u32)> = names.iter().map(String::as_str).zip(shape.iter().rev().copied()).collect();
    let r = lin.transpose_outs(&rev_refs).ok()?.reshape_outs(&new_dims).ok()?;
    let back: Vec<String> = (0..shape.len()).map(|i| format!("new{i}")).collect();
    let back_refs: Vec<&str> = back.iter().map(String::as_str).collect();
    let r = r.transpose_outs(&back_refs).ok()?;
    rebuild(r.bases_vec(), shape).map(from_linear)
}

/// `join(a, b)`: a new last dim of size 2, held in the first register bit.
pub fn join(l: &Layout) -> Option<L> {
    let mut sizes = out_sizes(&l.linear);
    sizes.push(2);
    let rank = sizes.len();
    let ins = l
        .linear
        .bases_vec()
        .into_iter()
        .map(|(n, bases)| {
            let mut out: Vec<Vec<u32>> = Vec::new();
            if n == "register" {
                let mut e = vec![0; rank];
                e[rank - 1] = 1;
                out.push(e);
            }
            out.extend(bases.into_iter().map(|mut b| {
                b.push(0);
                b
            }));
            (n, out)
        })
        .collect();
    rebuild(ins, &sizes).map(from_linear)
}

/// Removes the register bit that holds `dim`'s top bit (`dim`'s size halves), if exactly one register and
/// nothing else reaches it: the inverse of [`join`] (last dim) and [`cat`] (dim 0).
fn drop_register_bit(l: &Layout, dim: usize, remove_dim: bool) -> Option<L> {
    let mut sizes = out_sizes(&l.linear);
    let top = sizes.get(dim)? / 2;
    if top == 0 {
        return None;
    }
    let bv = l.linear.bases_vec();
    let is_top = |b: &Vec<u32>| b.iter().enumerate().all(|(i, &c)| if i == dim { c == top } else { c == 0 });
    let regs = &bv.iter().find(|(n, _)| *n == "register")?.1;
    let hit = regs.iter().position(is_top)?;
    let touches = bv.iter().flat_map(|(_, b)| b.iter()).filter(|b| b[dim] & top != 0).count();
    if touches != 1 {
        return None;
    }
    sizes[dim] /= 2;
    if remove_dim {
        sizes.remove(dim);
    }
    let ins = bv
        .into_iter()
        .map(|(n, bases)| {
            let reg = n == "register";
            let bases = bases
                .into_iter()
                .enumerate()
                .filter(|&(i, _)| !(reg && i == hit))
                .map(|(_, mut b)| {
                    if remove_dim {
                        b.remove(dim);
                    }
                    b
                })
                .collect();
            (n, bases)
        })
        .collect();
    rebuild(ins, &sizes).map(from_linear)
}

/// `split(x)`: the layout of each half, when the last dim (size 2) lives in one register bit.
pub fn split(l: &Layout) -> Option<L> {
    let rank = l.linear.num_out_dims();
    drop_register_bit(l, rank.checked_sub(1)?, true)
}

/// `cat(a, b)` along dim 0: the second half is one more register bit.
pub fn cat(l: &Layout) -> Option<L> {
    let mut sizes = out_sizes(&l.linear);
    let old = *sizes.first()?;
    sizes[0] *= 2;
    let ins = l
        .linear
        .bases_vec()
        .into_iter()
        .map(|(n, mut bases)| {
            if n == "register" {
                let mut e = vec![0; sizes.len()];
                e[0] = old;
                bases.push(e);
            }
            (n, bases)
        })
        .collect();
    rebuild(ins, &sizes).map(from_linear)
}

fn uncat(l: &Layout) -> Option<L> {
    drop_register_bit(l, 0, false)
}

/// The layout of a value, if it is a tensor that has one.
pub fn layout_of(f: &Func, v: crate::ir::ValueId) -> Option<L> {
    match f.ty(v) {
        Type::Tensor { layout, .. } => layout.clone(),
        _ => None,
    }
}

pub use crate::op_facts::LayoutKind as Kind;

/// What `op` does with layouts: its entry in [`crate::op_facts`]'s table.
pub fn kind(op: &Op) -> Kind {
    op.facts().layout
}

/// The layouts op `o` needs on its operands to produce results in `results` (one entry per result; `None`
/// for non-tensor results). Returns one entry per operand (`None`: no requirement), or `None` when no operand
/// layouts produce these results.
pub fn backward(f: &Func, o: OpId, results: &[Option<L>]) -> Option<Vec<Option<L>>> {
    let d = f.op(o);
    let n = d.operands.len();
    let tensor = |i: usize| f.ty(d.operands[i]).is_tensor();
    let shape = |i: usize| f.ty(d.operands[i]).shape().to_vec();
    match kind(&d.op) {
        Kind::Same => {
            let r = match results.first() {
                Some(r) => r.clone()?,
                None => return None,
            };
            if results.iter().any(|x| x.as_ref().is_some_and(|x| *x != r)) {
                return None;
            }
            Some((0..n).map(|i| tensor(i).then(|| r.clone())).collect())
        }
        Kind::Source => Some(vec![None; n]),
        Kind::Sink | Kind::Structured => None,
        Kind::Special => {
            let r = results.first().cloned().flatten();
            match &d.op {
                Op::Broadcast => Some(vec![Some(shrink(&*r?, &shape(0))?)]),
                Op::ExpandDims { axis } => Some(vec![Some(slice(&*r?, *axis as usize)?)]),
                Op::Permute { order } => Some(vec![Some(permute(&*r?, &inverse_order(order))?)]),
                Op::Reshape { .. } => Some(vec![Some(reshape(&*r?, &shape(0))?)]),
                Op::Join => {
                    // `join` puts the new dim in register bit 0 (and `cat` below in the last register bit): a
                    // result layout with it elsewhere comes from no operand layout (differential testing found
                    // the mismatch the layout verifier then reports).
                    let r = r?;
                    let x = split(&r)?;
                    if join(&x)?.linear != r.linear {
                        return None;
                    }
                    Some(vec![Some(x.clone()), Some(x)])
                }
                Op::Split => {
                    let (a, b) = (r?, results.get(1).cloned().flatten()?);
                    if a != b {
                        return None;
                    }
                    Some(vec![Some(join(&a)?)])
                }
                Op::Cat => {
                    let r = r?;
                    let x = uncat(&r)?;
                    if cat(&x)?.linear != r.linear {
                        return None;
                    }
                    Some(vec![Some(x.clone()), Some(x)])
                }
                Op::Reduce { axis } => {
                    // Only a slice of a spec'd parent along `axis` names the operand layout.
                    let r = r?;
                    let Some(DistributedLayout::Slice(s)) = dist_spec(&r) else { return None };
                    if s.dim != *axis || results.iter().any(|x| x.as_ref().is_some_and(|x| *x != r)) {
                        return None;
                    }
                    let p = from_spec((*s.parent).clone(), &shape(0)).ok()?;
                    if slice(&p, *axis as usize)?.linear != r.linear {
                        return None;
                    }
                    Some(vec![Some(p); n])
                }
                Op::Dot { .. } | Op::WarpGroupDot { .. } => {
                    let r = r?;
                    let spec = dist_spec(&r)?.clone();
                    let bits = operand_bits(f, d.operands[0]);
                    let k_width = match &spec {
                        // Registers of an MMA operand hold 32 bits of consecutive K elements.
                        DistributedLayout::Nvmma(_) => (32 / bits).max(1),
                        _ => 0,
                    };
                    let opnd = |i: u32, s: &[u32]| {
                        from_spec(
                            DistributedLayout::DotOperand(tessel_layouts::DotOperandLayout {
                                operand_index: i,
                                parent: Box::new(spec.clone()),
                                k_width,
                            }),
                            s,
                        )
                        .ok()
                    };
                    // tcgen05 reads both operands from shared memory (`layout::tcgen05` stages them).
                    if matches!(&spec, DistributedLayout::TmemReg(_)) {
                        return Some(vec![None, None, Some(r)]);
                    }
                    let hopper = matches!(&spec, DistributedLayout::Nvmma(m) if m.is_hopper());
                    // wgmma reads B (and A, unless it is a register tensor) from shared memory: a tensor operand
                    // of `dot` there is staged by `accelerate`, so it may keep any layout.
                    let a = if !tensor(0) || (hopper && matches!(d.op, Op::Dot { .. })) {
                        None
                    } else {
                        Some(opnd(0, &shape(0))?)
                    };
                    let b = if hopper { None } else { Some(opnd(1, &shape(1))?) };
                    Some(vec![a, b, Some(r)])
                }
                // A block-scaled MMA reads A and B from shared memory and the scales from tensor memory
                // (`layout::tcgen05` moves them there): only the accumulator follows the result.
                Op::DotScaled { .. } => Some(vec![None, None, None, None, Some(r?), None, None]),
                Op::ConvertLayout => Some(vec![None]),
                // The source goes through shared memory (any layout); each thread reads the elements its index
                // registers name, so the index has the result's layout.
                Op::Gather { .. } => Some(vec![None, Some(r?)]),
                // Each value keeps its layout through the wait.
                Op::WarpGroupDotWait { .. } => Some(results.to_vec()),
                _ => None,
            }
        }
    }
}

/// The layouts op `o` produces from operand layouts `operands` (one per operand, `None` for non-tensors or
/// unknown). Returns one entry per result, or `None` if the operands do not determine them.
pub fn forward(f: &Func, o: OpId, operands: &[Option<L>]) -> Option<Vec<Option<L>>> {
    let d = f.op(o);
    let res_tensor = |i: usize| f.ty(d.results[i]).is_tensor();
    let rshape = |i: usize| f.ty(d.results[i]).shape().to_vec();
    let first = operands.iter().flatten().next().cloned();
    match kind(&d.op) {
        Kind::Same => {
            let l = first?;
            Some((0..d.results.len()).map(|i| res_tensor(i).then(|| l.clone())).collect())
        }
        Kind::Source | Kind::Sink | Kind::Structured => None,
        Kind::Special if matches!(d.op, Op::Gather { .. }) => Some(vec![operands.get(1).cloned().flatten()]),
        Kind::Special => {
            let a = operands.first().cloned().flatten()?;
            let one = |l: Option<L>| Some(vec![Some(l?)]);
            match &d.op {
                Op::Broadcast => {
                    one(expand_from(&a, &rshape(0)).filter(|r| shrink(r, &a_shape(f, o)).as_deref() == Some(&*a)))
                }
                Op::ExpandDims { axis } => one(expand_dims(&a, *axis as usize, &rshape(0))),
                Op::Permute { order } => one(permute(&a, order)),
                Op::Reshape { .. } => one(reshape(&a, &rshape(0))),
                Op::Join => one(join(&a)),
                Op::Cat => one(cat(&a)),
                Op::Split => {
                    // The halves of a `[2]` tensor are scalars: no layout.
                    let h = split(&a)?;
                    Some((0..2).map(|i| res_tensor(i).then(|| h.clone())).collect())
                }
                Op::Reduce { axis } => {
                    let r = if res_tensor(0) { Some(slice(&a, *axis as usize)?) } else { None };
                    Some(vec![r; d.results.len()])
                }
                Op::Dot { .. } | Op::WarpGroupDot { .. } => Some(vec![operands.get(2).cloned().flatten()]),
                Op::DotScaled { .. } => Some(vec![operands.get(4).cloned().flatten()]),
                Op::WarpGroupDotWait { .. } => Some(operands.to_vec()),
                _ => None,
            }
        }
    }
}

/// Bits of the elements of a dot operand (a tensor or a shared-memory buffer).
fn operand_bits(f: &Func, v: crate::ir::ValueId) -> u32 {
    match f.ty(v) {
        Type::MemDesc { elem, .. } => elem.bits(),
        t => t.elem().map_or(32, |e| e.bits()),
    }
}

fn a_shape(f: &Func, o: OpId) -> Vec<u32> {
    f.ty(f.op(o).operands[0]).shape().to_vec()
}

/// How an op's layouts do not fit together ([`check`]); `None` is a tensor without a layout.
#[derive(Clone, Debug, PartialEq)]
pub enum LayoutMismatch {
    /// Operand `index` of a reduction has another layout than operand 0 (`want`).
    ReduceOperand {
        index: usize,
        want: Option<L>,
        got: Option<L>,
    },
    /// No result layouts follow from the operands'.
    NoForward,
    /// No operand layouts produce the results'.
    NoBackward,
    Result {
        index: usize,
        want: Option<L>,
        got: Option<L>,
    },
    Operand {
        index: usize,
        want: Option<L>,
        got: Option<L>,
    },
}

impl std::fmt::Display for LayoutMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |l: &Option<L>| l.as_ref().map_or("no layout".to_string(), |l| show_layout(l));
        match self {
            LayoutMismatch::ReduceOperand { index, want, got } => {
                write!(f, "operand {index} must have operand 0's layout {}, has {}", show(want), show(got))
            }
            LayoutMismatch::NoForward => f.write_str("no result layouts follow from its operand layouts"),
            LayoutMismatch::NoBackward => f.write_str("no operand layouts produce its result layouts"),
            LayoutMismatch::Result { index, want, got } => {
                write!(f, "result {index} must have layout {}, has {}", show(want), show(got))
            }
            LayoutMismatch::Operand { index, want, got } => {
                write!(f, "operand {index} must have layout {}, has {}", show(want), show(got))
            }
        }
    }
}

/// Whether op `o`'s operand and result layouts (as in the types) fit together. Ops whose result layout is a
/// function of the operand's (reduce, permute, reshape, join, split, cat) are checked forward; the others
/// backward (elementwise ops share one layout, a broadcast's operand is its result's layout at the smaller
/// shape, an `expand_dims` operand is the slice of its result's, dot operands are dot-operand layouts of the
/// accumulator's). Sources, sinks, conversions and structured ops are not constrained here.
pub fn check(f: &Func, o: OpId) -> Result<(), LayoutMismatch> {
    let d = f.op(o);
    let kind = kind(&d.op);
    if matches!(kind, Kind::Source | Kind::Sink | Kind::Structured) || matches!(d.op, Op::ConvertLayout) {
        return Ok(());
    }
    let have_in: Vec<Option<L>> = d.operands.iter().map(|&v| layout_of(f, v)).collect();
    let have_out: Vec<Option<L>> = d.results.iter().map(|&v| layout_of(f, v)).collect();
    let forward_checked =
        matches!(d.op, Op::Reduce { .. } | Op::Permute { .. } | Op::Reshape { .. } | Op::Join | Op::Split | Op::Cat);
    if forward_checked {
        // A reduction combines its operands register by register: one layout for all of them.
        if matches!(d.op, Op::Reduce { .. })
            && let Some(i) = (1..have_in.len()).find(|&i| have_in[i] != have_in[0])
        {
            return Err(LayoutMismatch::ReduceOperand { index: i, want: have_in[0].clone(), got: have_in[i].clone() });
        }
        let want = forward(f, o, &have_in).ok_or(LayoutMismatch::NoForward)?;
        for (i, (h, w)) in have_out.iter().zip(&want).enumerate() {
            if w.is_some() && h != w {
                return Err(LayoutMismatch::Result { index: i, want: w.clone(), got: h.clone() });
            }
        }
        return Ok(());
    }
    let want = if d.results.iter().any(|&r| f.ty(r).is_tensor()) {
        backward(f, o, &have_out).ok_or(LayoutMismatch::NoBackward)?
    } else {
        // No tensor results (stores): the tensor operands share one layout.
        let first = have_in.iter().flatten().next().cloned();
        d.operands.iter().map(|&v| if f.ty(v).is_tensor() { first.clone() } else { None }).collect()
    };
    for (i, (h, w)) in have_in.iter().zip(&want).enumerate() {
        if w.is_some() && h != w {
            return Err(LayoutMismatch::Operand { index: i, want: w.clone(), got: h.clone() });
        }
    }
    Ok(())
}

fn show_layout(l: &Layout) -> String {
    match &l.spec {
        Some(s) => s.to_string(),
        None => crate::types::linear_spelling(&l.linear),
    }
}
