//! How gluon layouts follow tensors through the ops the elaborator emits: a tensor-creating builtin's `layout=`,
//! elementwise ops keep layouts, reductions slice them, `expand_dims` un-slices them. A layout mismatch is an
//! error, never a silent conversion. The `gl.*` builtins that make layouts live in the gluon crate.

use std::sync::Arc;

use tessel_layouts::{AnyLayout, DistributedLayout, SliceLayout};
use tessel_tile::Layout;

use crate::elab::args::Bound;
use crate::elab::value::Value;
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
}
