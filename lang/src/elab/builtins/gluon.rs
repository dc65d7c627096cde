//! Gluon layouts: `gl.BlockedLayout`, `gl.SliceLayout`, `gl.AutoLayout`, `gl.convert_layout`, `gl.num_warps`,
//! and how layouts follow tensors through the ops the elaborator emits (elementwise ops keep them, reductions
//! slice them, `expand_dims` un-slices them). A layout mismatch is an error, never a silent conversion.

use std::rc::Rc;
use std::sync::Arc;

use tessel_layouts::{AnyLayout, BlockedLayout, CgaLayout, DistributedLayout, SliceLayout};
use tessel_tile::ops::Op;
use tessel_tile::{Layout, Type};

use crate::elab::builtins::{Bound, Builtin, CallArgs, Ns};
use crate::elab::value::Value;
use crate::elab::{Elab, R};
use crate::span::Span;

impl<'a> Elab<'a> {
    pub fn call_gluon(&mut self, b: Builtin, fname: &str, args: &CallArgs<'a>) -> R<Option<Value<'a>>> {
        if b.ns != Ns::Gl {
            return Ok(None);
        }
        let span = args.span;
        Ok(Some(match b.name {
            "BlockedLayout" => {
                let bd = self.bind(
                    fname,
                    "size_per_thread, threads_per_warp, warps_per_cta, order, cga_layout?",
                    args.clone(),
                )?;
                let list = |this: &Self, k: &str| -> R<Vec<u32>> {
                    let v = this.int_list(bd.req(k), fname, k)?;
                    v.into_iter()
                        .map(|x| {
                            u32::try_from(x)
                                .map_err(|_| this.err(bd.req(k).span, format!("`{k}` entries must be non-negative")))
                        })
                        .collect()
                };
                let cga = match bd.opt("cga_layout") {
                    None => CgaLayout::Single,
                    Some(a) => {
                        let items =
                            a.value.items().ok_or_else(|| self.err(a.span, "`cga_layout` must be a list of bases"))?;
                        if items.is_empty() {
                            CgaLayout::Single
                        } else {
                            let mut bases = Vec::new();
                            for it in items {
                                let arg = crate::elab::builtins::Arg::new(it, a.span);
                                bases.push(
                                    self.int_list(&arg, fname, "cga_layout")?.into_iter().map(|x| x as u32).collect(),
                                );
                            }
                            CgaLayout::Bases(bases)
                        }
                    }
                };
                let layout = BlockedLayout {
                    size_per_thread: list(self, "size_per_thread")?,
                    threads_per_warp: list(self, "threads_per_warp")?,
                    warps_per_cta: list(self, "warps_per_cta")?,
                    order: list(self, "order")?,
                    cga,
                };
                layout.validate().map_err(|e| self.err(span, e.to_string()))?;
                Value::Layout(Rc::new(AnyLayout::Distributed(DistributedLayout::Blocked(layout))))
            }
            "SliceLayout" => {
                let bd = self.bind(fname, "dim, parent", args.clone())?;
                let dim = self.const_int(bd.req("dim"), fname, "dim")?;
                let parent = match &bd.req("parent").value {
                    Value::Layout(l) => match l.as_ref() {
                        AnyLayout::Distributed(d) => d.clone(),
                        other => {
                            return Err(self.err(
                                bd.req("parent").span,
                                format!("the parent of a SliceLayout must be a distributed layout, got {other}"),
                            ));
                        }
                    },
                    other => {
                        return Err(self.err(
                            bd.req("parent").span,
                            format!("`parent` must be a layout, got {}", other.describe()),
                        ));
                    }
                };
                if dim < 0 || dim as usize >= parent.rank() {
                    return Err(self.err(
                        bd.req("dim").span,
                        format!("SliceLayout dim {dim} is out of range for a rank-{} parent", parent.rank()),
                    ));
                }
                let l = SliceLayout { dim: dim as u32, parent: Box::new(parent) };
                Value::Layout(Rc::new(AnyLayout::Distributed(DistributedLayout::Slice(l))))
            }
            "AutoLayout" => {
                self.bind(fname, "", args.clone())?;
                Value::None
            }
            "num_warps" => {
                self.bind(fname, "", args.clone())?;
                Value::Int(self.num_warps as i128)
            }
            "convert_layout" | "set_auto_layout" => {
                let bd = self.bind(fname, "value, layout, assert_trivial?", args.clone())?;
                let t = self.tensor_arg(bd.req("value"), fname, "value")?;
                if !t.is_block() {
                    return Err(self.err(span, format!("`{fname}` needs a tensor, got {}", t.ty)));
                }
                let layout = self.layout_kwarg(&bd, t.shape())?;
                let ty = match &t.ty {
                    Type::Tensor { shape, elem, .. } => Type::Tensor { shape: shape.clone(), elem: *elem, layout },
                    _ => unreachable!(),
                };
                if ty == t.ty {
                    Value::Tensor(t)
                } else {
                    Value::Tensor(self.emit1(Op::ConvertLayout, &[t], ty, span)?)
                }
            }
            "barrier" => {
                self.bind(fname, "cluster?", args.clone())?;
                self.emit(Op::DebugBarrier, &[], vec![], span)?;
                Value::None
            }
            _ => return Ok(None),
        }))
    }

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
        if linear.has_in_dim("warp") && linear.in_dim_size("warp") != self.num_warps {
            return Err(self.err(
                a.span,
                format!(
                    "layout {spec} spreads over {} warps, but the kernel runs with num_warps = {}",
                    linear.in_dim_size("warp"),
                    self.num_warps
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

/// Attributes of layout objects (`layout.order`...), where they have one.
pub fn layout_attr<'a>(l: &AnyLayout, name: &str) -> Option<Value<'a>> {
    let ints = |v: &[u32]| Value::tuple(v.iter().map(|&x| Value::Int(x as i128)).collect());
    match (l, name) {
        (AnyLayout::Distributed(DistributedLayout::Blocked(b)), "size_per_thread") => Some(ints(&b.size_per_thread)),
        (AnyLayout::Distributed(DistributedLayout::Blocked(b)), "threads_per_warp") => Some(ints(&b.threads_per_warp)),
        (AnyLayout::Distributed(DistributedLayout::Blocked(b)), "warps_per_cta") => Some(ints(&b.warps_per_cta)),
        (AnyLayout::Distributed(DistributedLayout::Blocked(b)), "order") => Some(ints(&b.order)),
        (AnyLayout::Distributed(DistributedLayout::Slice(s)), "dim") => Some(Value::Int(s.dim as i128)),
        (AnyLayout::Distributed(DistributedLayout::Slice(s)), "parent") => {
            Some(Value::Layout(Rc::new(AnyLayout::Distributed((*s.parent).clone()))))
        }
        _ => None,
    }
}
