//! How gluon layouts follow tensors through the ops the elaborator emits: a tensor-creating builtin's `layout=`,
//! elementwise ops keep layouts, reductions slice them, `expand_dims` un-slices them, `split` slices its operand's
//! along the last dim and `join` un-slices it again (Gluon's spellings; the maps are tile's rules). A layout
//! mismatch is an error, never a silent conversion; a renaming of registers ([`registers_only`]) is not a
//! conversion in Gluon's sense. The `gl.*` builtins that make layouts live in the gluon crate.

use std::sync::Arc;

use tessel_layouts::{AnyLayout, DistributedLayout, SliceLayout};
use tessel_tile::ops::Op;
use tessel_tile::{Layout, Type};

use crate::elab::args::Bound;
use crate::elab::value::{Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

impl<'a> Elab<'a> {
    /// The `layout=` argument of a tensor-creating builtin, as a layout for `shape` (`None`: no layout).
    pub fn layout_kwarg(&self, b: &Bound<'a>, shape: &[u32]) -> R<Option<Arc<Layout>>> {
        let Some(a) = b.opt("layout") else { return Ok(None) };
        let Value::Layout(spec) = &a.value else {
            return Err(self.err(a.span, format!("`layout` must be a gluon layout, got {}", a.value.describe())));
        };
        if spec.rank() != shape.len() {
            return Err(
                self.err(a.span, format!("layout {spec} has rank {}, but the tensor has shape {shape:?}", spec.rank()))
            );
        }
        let linear = spec.to_linear(shape).map_err(|e| self.err(a.span, format!("layout {spec}: {e}")))?;
        if linear.has_in_dim("warp") && linear.in_dim_size("warp") != self.warps() {
            return Err(self.err(
                a.span,
                format!(
                    "layout {spec} spreads over {} warps, but the kernel runs with num_warps = {}",
                    linear.in_dim_size("warp"),
                    self.warps()
                ),
            ));
        }
        Ok(Some(Arc::new(Layout { spec: Some(spec.as_ref().clone()), linear })))
    }

    /// The layout of a tensor created without one (auto mode and gluon's auto layout): none.
    pub fn default_layout(&self, _shape: &[u32], _span: Span) -> R<Option<Arc<Layout>>> {
        Ok(None)
    }

    /// The layout after `expand_dims(axis)`: the operand must be laid out as a slice of that dim.
    pub fn expand_layout(&self, l: &Layout, axis: usize, shape: &[u32], span: Span) -> R<Arc<Layout>> {
        match &l.spec {
            Some(AnyLayout::Distributed(DistributedLayout::Slice(s))) if s.dim as usize == axis => {
                let parent = AnyLayout::Distributed((*s.parent).clone());
                let linear = parent.to_linear(shape).map_err(|e| self.err(span, format!("layout {parent}: {e}")))?;
                Ok(Arc::new(Layout { spec: Some(parent), linear }))
            }
            Some(spec) => Err(self.err_hint(
                span,
                format!(
                    "expand_dims along axis {axis} needs an operand with layout SliceLayout({axis}, parent), got {spec}"
                ),
                "build the operand with `layout=gl.SliceLayout(axis, parent)`",
            )),
            None => Err(self.err(span, "expand_dims of a tensor whose layout has no gluon spelling")),
        }
    }

    /// The layout of a reduction's result along `axis`: the parent sliced at that dim.
    pub fn sliced_layout(&self, l: &Layout, axis: usize, out_shape: &[u32], span: Span) -> R<Option<Arc<Layout>>> {
        if out_shape.is_empty() {
            return Ok(None);
        }
        match &l.spec {
            Some(AnyLayout::Distributed(d)) => {
                let spec = AnyLayout::Distributed(DistributedLayout::Slice(SliceLayout {
                    dim: axis as u32,
                    parent: Box::new(d.clone()),
                }));
                let linear = spec.to_linear(out_shape).map_err(|e| self.err(span, format!("layout {spec}: {e}")))?;
                Ok(Some(Arc::new(Layout { spec: Some(spec), linear })))
            }
            _ => Err(self.err(span, "reductions need a distributed layout")),
        }
    }

    /// Gluon's layout of `split`'s halves (of shape `shape`): `SliceLayout(rank - 1, L)` of the operand's layout
    /// `L` (Gluon's `create_split`). `None` for scalar halves, or if `L` is no distributed layout.
    pub fn split_layout(&self, l: &Layout, shape: &[u32], span: Span) -> R<Option<Arc<Layout>>> {
        if shape.is_empty() {
            return Ok(None);
        }
        let Some(AnyLayout::Distributed(parent)) = spelled_spec(l) else { return Ok(None) };
        let spec = AnyLayout::Distributed(DistributedLayout::Slice(SliceLayout {
            dim: shape.len() as u32,
            parent: Box::new(parent),
        }));
        let linear = spec.to_linear(shape).map_err(|e| self.err(span, format!("layout {spec}: {e}")))?;
        Ok(Some(Arc::new(Layout { spec: Some(spec), linear })))
    }

    /// Gluon's layout of `join(a, b)` (of shape `joined`) when the operands' layout `l` is `SliceLayout(rank, P)`
    /// and `P` holds the new last dim in one register bit: `P` itself (Triton's `inferDefaultJoinOpEncoding`), so
    /// that a split and a join give back the layout split. `None` otherwise (the join's own layout).
    pub fn join_layout(&self, l: &Layout, joined: &[u32]) -> Option<Arc<Layout>> {
        let Some(AnyLayout::Distributed(DistributedLayout::Slice(s))) = &l.spec else { return None };
        if s.dim as usize + 1 != joined.len() {
            return None;
        }
        let parent = AnyLayout::Distributed((*s.parent).clone());
        let linear = parent.to_linear(joined).ok()?;
        // Triton's isSplitCompatible: the register bases reach the last dim in exactly its one bit.
        let last = joined.len() - 1;
        let bases = linear.bases_vec();
        let regs = bases.iter().find(|(n, _)| n == "register").map(|(_, b)| b.as_slice()).unwrap_or(&[]);
        let reach: Vec<u32> = regs.iter().map(|b| b[last]).filter(|&c| c != 0).collect();
        (reach == [1]).then(|| Arc::new(Layout { spec: Some(parent), linear }))
    }

    /// `t` laid out by `want`: `t` itself, respelled, when the two are the same map; else the registers renamed
    /// (a `convert_layout` that moves nothing between threads). Any other difference is an error.
    pub fn settle_layout(&mut self, t: Tv, want: Arc<Layout>, what: &str, span: Span) -> R<Tv> {
        let ty = match &t.ty {
            Type::Tensor { shape, elem, .. } => Type::Tensor { shape: shape.clone(), elem: *elem, layout: Some(want) },
            other => return Ok(Tv::new(t.v, other.clone())),
        };
        if ty == t.ty {
            return Ok(Tv::new(t.v, ty));
        }
        if !registers_only(&t.ty, &ty) {
            return Err(self.err(span, format!("{what}: {} and Gluon's {ty} hold elements in different threads", t.ty)));
        }
        self.emit1(Op::ConvertLayout, &[t], ty, span)
    }
}

/// A layout's spec, or its map spelled as a `DistributedLinearLayout` when it has none.
fn spelled_spec(l: &Layout) -> Option<AnyLayout> {
    if let Some(s) = &l.spec {
        return Some(s.clone());
    }
    let bases = l.linear.bases_vec();
    let get = |n: &str| bases.iter().find(|(k, _)| k.as_str() == n).map(|(_, b)| b.clone()).unwrap_or_default();
    let shape = l.linear.out_dim_sizes().iter().map(|(_, s)| *s).collect();
    Some(AnyLayout::Distributed(DistributedLayout::Linear(tessel_layouts::DistributedLinearLayout {
        reg_bases: get("register"),
        lane_bases: get("lane"),
        warp_bases: get("warp"),
        block_bases: get("block"),
        shape,
    })))
}

/// Whether converting a tensor of type `from` to type `to` only renames registers (Gluon's trivial conversion:
/// the minimal conversion moves registers only): both have layouts, and the planner codegen runs moves nothing
/// between lanes, warps or CTAs.
pub fn registers_only(from: &Type, to: &Type) -> bool {
    let (Some(a), Some(b), Some(elem)) = (from.layout(), to.layout(), from.elem()) else { return false };
    let opts = tessel_layouts::PlanOptions::default();
    matches!(
        tessel_layouts::plan_conversion(&a.linear, &b.linear, elem.bits(), &opts),
        Ok(tessel_layouts::ConversionPlan::NoOp | tessel_layouts::ConversionPlan::RegisterPermutation { .. })
    )
}
