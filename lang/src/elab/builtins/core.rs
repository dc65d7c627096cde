//! `tl` builtins that create tensors or rearrange them: `program_id`, `arange`, `full`, `zeros`, broadcasting,
//! `expand_dims`, `reshape`, `permute`/`trans`, `join`/`split`, `cat`, `where`, casts, loop ranges and hints;
//! and `tl`'s types and decorators, which kernels name but do not call.

use std::rc::Rc;

use tessel_tile::ops::{LoopAttrs, Op};
use tessel_tile::{Elem, ScalarType, Type};

use crate::elab::args::{Arg, Bound};
use crate::elab::names::TL;
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Dtype, RangeVal, Tv, Value};
use crate::elab::{Elab, R};

/// The signature of `tl.cast` and `tensor.to`.
pub(super) const CAST_SIG: &str = "input, dtype, fp_downcast_rounding?, bitcast?";
/// The signature of `tl.range`.
const RANGE_SIG: &str = "arg1, arg2?, step?, num_stages?, loop_unroll_factor?, disallow_acc_multi_buffer?, \
                         flatten?, warp_specialize?, disable_licm?";
/// The signature of `tl.static_range` and Python's `range`.
pub(super) const STATIC_RANGE_SIG: &str = "arg1, arg2?, step?";

pub(super) fn register(r: &mut Registry) {
    r.add(TL, "program_id", Handler::Bound("axis?", |e, b| e.program_id(b, false)));
    r.add(TL, "num_programs", Handler::Bound("axis?", |e, b| e.program_id(b, true)));
    r.add(TL, "arange", Handler::Bound("start, end, layout?", |e, b| e.arange(b)));
    r.add(TL, "full", Handler::Bound("shape, value, dtype?, layout?", |e, b| e.full_builtin(b, true)));
    r.add(TL, "zeros", Handler::Bound("shape, dtype?, layout?", |e, b| e.full_builtin(b, false)));
    r.add(TL, "zeros_like", Handler::Bound("input, dtype?, layout?", |e, b| e.full_like(b, false)));
    r.add(TL, "full_like", Handler::Bound("input, value, dtype?, layout?", |e, b| e.full_like(b, true)));
    r.add(TL, "splat", Handler::Bound("input, *shape", |e, b| e.splat(b)));
    r.add(TL, "broadcast", Handler::Bound("input, other", |e, b| e.broadcast_builtin(b))).method();
    r.add(TL, "broadcast_to", Handler::Bound("input, *shape", |e, b| e.broadcast_to_builtin(b))).method();
    r.add(TL, "expand_dims", Handler::Bound("input, axis", |e, b| e.expand_dims_builtin(b))).method();
    r.add(TL, "reshape", Handler::Bound("input, *shape, can_reorder?", |e, b| e.reshape_builtin(b, false))).method();
    r.add(TL, "view", Handler::Bound("input, *shape, can_reorder?", |e, b| e.reshape_builtin(b, true))).method();
    r.add(TL, "permute", Handler::Bound("input, *dims", |e, b| e.permute_builtin(b, false))).method();
    r.add(TL, "trans", Handler::Bound("input, *dims", |e, b| e.permute_builtin(b, true))).method();
    r.add(TL, "join", Handler::Bound("a, b", |e, b| e.join(b))).method();
    r.add(TL, "split", Handler::Bound("a", |e, b| e.split(b))).method();
    r.add(TL, "cat", Handler::Bound("input, other, can_reorder?", |e, b| e.cat(b)));
    r.add(
        TL,
        "where",
        Handler::Bound("condition, x, y", |e, b| {
            let (c, x, y) = (&b.req("condition").value, &b.req("x").value, &b.req("y").value);
            Ok(Value::Tensor(e.where_(c, x, y, b.span)?))
        }),
    );
    r.add(TL, "cast", Handler::Bound(CAST_SIG, |e, b| e.cast_builtin(b))).method();
    r.add(TL, "to_tensor", Handler::Bound("x", |e, b| Ok(Value::Tensor(e.tensor_arg(b.req("x"), &b.fname, "x")?))));
    r.add(TL, "multiple_of", Handler::Bound("input, values", |e, b| e.hint(b, Op::MultipleOf)));
    r.add(TL, "max_contiguous", Handler::Bound("input, values", |e, b| e.hint(b, Op::MaxContiguous)));
    r.add(TL, "max_constancy", Handler::Bound("input, values", |e, b| e.hint(b, Op::MaxConstancy)));
    r.add(TL, "assume", Handler::Bound("cond", |e, b| e.assume(b)));
    r.add(
        TL,
        "debug_barrier",
        Handler::Bound("", |e, b| {
            e.emit(Op::DebugBarrier, &[], vec![], b.span)?;
            Ok(Value::None)
        }),
    );
    r.add(TL, "range", Handler::Bound(RANGE_SIG, |e, b| e.range_value(false, false, b).map(Value::Range)));
    r.add(TL, "static_range", Handler::Bound(STATIC_RANGE_SIG, |e, b| e.range_value(true, false, b).map(Value::Range)));
    r.add(
        TL,
        "constexpr",
        Handler::Bound("value", |e, b| {
            let v = b.req("value");
            if v.value.has_runtime() {
                return Err(e.not_constexpr(v, &b.fname, "value", &v.value.type_name()));
            }
            Ok(v.value.clone())
        }),
    );
    r.add(
        TL,
        "pointer_type",
        Handler::Bound("element_ty, address_space?, const?", |e, b| {
            match e.dtype_arg(b.req("element_ty"), &b.fname, "element_ty")? {
                Dtype::Scalar(s) => Ok(Value::Dtype(Dtype::Ptr(s))),
                other => Err(e.err(b.span, format!("pointers to {other} are not supported"))),
            }
        }),
    );
    r.add(
        TL,
        "tuple",
        Handler::Bound("args?", |e, b| match b.opt("args") {
            None => Ok(Value::tuple(vec![])),
            Some(a) => {
                let items = e.iterate(&a.value.clone(), a.span)?;
                Ok(Value::tuple(items))
            }
        }),
    );
    for name in ["tensor", "tensor_descriptor", "dtype", "PropagateNan"] {
        r.add(TL, name, Handler::Type);
    }
    for name in ["constexpr_function", "aggregate", "_aggregate", "jit"] {
        r.add(TL, name, Handler::Decorator);
    }
}

impl<'a> Elab<'a> {
    /// `tl.program_id(axis)`, `tl.num_programs(axis)`.
    fn program_id(&mut self, b: Bound<'a>, num: bool) -> R<Value<'a>> {
        let axis = match b.opt("axis") {
            Some(a) => self.const_int(a, &b.fname, "axis")?,
            None => 0,
        };
        if !(0..3).contains(&axis) {
            let span = b.opt("axis").unwrap().span;
            return Err(self.err(span, format!("`{}` axis must be 0, 1 or 2, got {axis}", b.fname)));
        }
        let op = if num { Op::NumPrograms(axis as u32) } else { Op::ProgramId(axis as u32) };
        Ok(Value::Tensor(self.emit1(op, &[], Type::scalar(ScalarType::I32), b.span)?))
    }

    fn arange(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let start = self.const_int(b.req("start"), fname, "start")?;
        let end = self.const_int(b.req("end"), fname, "end")?;
        let bound = (i32::MIN as i128)..=(i32::MAX as i128);
        if !bound.contains(&start) || !bound.contains(&end) {
            return Err(self.err(span, format!("`{fname}` bounds must fit in int32, got {start} and {end}")));
        }
        if end <= start {
            return Err(self.err(span, format!("`{fname}` needs end > start, got start={start}, end={end}")));
        }
        let n = end - start;
        let end_arg = b.req("end");
        let label = match end_arg.expr {
            Some(e) if start == 0 && e.as_name().is_some() => e.to_string(),
            _ if start == 0 => "the arange size".to_string(),
            _ => "the arange range (end - start)".to_string(),
        };
        let label_span = if start == 0 { end_arg.span } else { span };
        self.check_pow2(n, &label, label_span)?;
        let layout = self.layout_kwarg(&b, &[n as u32])?;
        let ty = Type::Tensor { shape: [n as u32].as_slice().into(), elem: Elem::Scalar(ScalarType::I32), layout };
        Ok(Value::Tensor(self.emit1(Op::Arange { start: start as i32, end: end as i32 }, &[], ty, span)?))
    }

    /// `tl.full(shape, value, ...)`, or `tl.zeros(shape, ...)` (`value` 0).
    fn full_builtin(&mut self, b: Bound<'a>, full: bool) -> R<Value<'a>> {
        let fname = &b.fname;
        let shape = self.shape_arg(b.req("shape"), fname)?;
        let value = if full { b.req("value").value.clone() } else { Value::Int(0) };
        let dtype = match b.opt("dtype") {
            Some(d) => Some(self.dtype_arg(d, fname, "dtype")?),
            None => None,
        };
        let layout = self.layout_kwarg(&b, &shape)?;
        self.full(&shape, &value, dtype, layout, b.span).map(Value::Tensor)
    }

    /// `tl.full_like(input, value, ...)`, or `tl.zeros_like(input, ...)` (`value` 0).
    fn full_like(&mut self, b: Bound<'a>, full: bool) -> R<Value<'a>> {
        let fname = &b.fname;
        let input = self.tensor_arg(b.req("input"), fname, "input")?;
        let dtype = match b.opt("dtype") {
            Some(d) => self.dtype_arg(d, fname, "dtype")?,
            None => input.dtype().expect("tensor"),
        };
        let value = if full { b.req("value").value.clone() } else { Value::Int(0) };
        let layout = match b.opt("layout") {
            Some(_) => self.layout_kwarg(&b, input.shape())?,
            None => input.ty.layout().map(|l| std::sync::Arc::new(l.clone())),
        };
        let shape = input.shape().to_vec();
        self.full(&shape, &value, Some(dtype), layout, b.span).map(Value::Tensor)
    }

    fn splat(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let x = self.tensor_arg(b.req("input"), &b.fname, "input")?;
        if x.is_block() {
            return Err(self.err(b.req("input").span, format!("`{}` needs a scalar, got {}", b.fname, x.ty)));
        }
        let shape = self.varargs_shape(&b, &b.fname, true)?;
        Ok(Value::Tensor(self.broadcast_to(x, &shape, b.span)?))
    }

    fn broadcast_builtin(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let x = self.tensor_arg(b.req("input"), &b.fname, "input")?;
        let y = self.tensor_arg(b.req("other"), &b.fname, "other")?;
        let (x, y) = self.broadcast_pair(x, y, b.span)?;
        Ok(Value::tuple(vec![Value::Tensor(x), Value::Tensor(y)]))
    }

    fn broadcast_to_builtin(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let x = self.tensor_arg(b.req("input"), &b.fname, "input")?;
        let shape = self.varargs_shape(&b, &b.fname, true)?;
        Ok(Value::Tensor(self.broadcast_to(x, &shape, b.span)?))
    }

    fn expand_dims_builtin(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let x = self.tensor_arg(b.req("input"), &b.fname, "input")?;
        let axes = self.int_list(b.req("axis"), &b.fname, "axis")?;
        let new_rank = (x.shape().len() + axes.len()) as i128;
        let mut norm = Vec::new();
        for a in axes {
            let n = if a < 0 { a + new_rank } else { a };
            if !(0..new_rank).contains(&n) {
                return Err(
                    self.err(b.req("axis").span, format!("axis {a} is out of range for a result of rank {new_rank}"))
                );
            }
            if norm.contains(&n) {
                return Err(self.err(b.req("axis").span, format!("axis {a} given twice")));
            }
            norm.push(n);
        }
        norm.sort_unstable();
        let mut t = x;
        for a in norm {
            t = self.expand_dims(t, a as usize, b.span)?;
        }
        Ok(Value::Tensor(t))
    }

    /// `tl.reshape`, or `tl.view` (which may reorder elements unless told otherwise).
    fn reshape_builtin(&mut self, b: Bound<'a>, view: bool) -> R<Value<'a>> {
        let x = self.tensor_arg(b.req("input"), &b.fname, "input")?;
        let shape = self.varargs_shape(&b, &b.fname, true)?;
        let can_reorder = match b.opt("can_reorder") {
            Some(a) => self.const_bool(a, &b.fname, "can_reorder")?,
            None => view,
        };
        self.reshape(x, &shape, can_reorder, b.span).map(Value::Tensor)
    }

    /// `tl.permute`, or `tl.trans` (which swaps the two dims of a matrix when given no dims).
    fn permute_builtin(&mut self, b: Bound<'a>, trans: bool) -> R<Value<'a>> {
        let x = self.tensor_arg(b.req("input"), &b.fname, "input")?;
        let mut dims = self.varargs_ints(&b, &b.fname, "dims")?;
        if dims.is_empty() && trans {
            dims = vec![1, 0];
        }
        self.permute(x, &dims, b.span).map(Value::Tensor)
    }

    fn join(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let x = self.tensor_arg(b.req("a"), fname, "a")?;
        let y = self.tensor_arg(b.req("b"), fname, "b")?;
        let (x, y) = self.broadcast_pair(x, y, span)?;
        if x.ty != y.ty {
            return Err(self.err(span, format!("`{fname}` needs operands of one type, got {} and {}", x.ty, y.ty)));
        }
        if !x.is_block() {
            return Err(self.err(span, format!("`{fname}` needs tensors, got scalars of type {}", x.ty)));
        }
        let mut shape = x.shape().to_vec();
        shape.push(2);
        // In gluon mode the new last dim is the first register bit (Triton's default join layout); the join of
        // a split's halves is then the layout split, up to a renaming of registers.
        let (layout, gluon) = match x.ty.layout() {
            Some(l) => (
                Some(spelled(tessel_tile::layout::rules::join(l).ok_or_else(|| {
                    self.err(span, format!("cannot join two tensors of type {}: no layout holds the pair", x.ty))
                })?)),
                self.join_layout(l, &shape),
            ),
            None => (None, None),
        };
        let ty = self.block_ty(&shape, x.elem().unwrap(), layout.as_ref(), span)?;
        let joined = self.emit1(Op::Join, &[x, y], ty, span)?;
        match gluon {
            Some(want) => self.settle_layout(joined, want, fname, span).map(Value::Tensor),
            None => Ok(Value::Tensor(joined)),
        }
    }

    fn split(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let x = self.tensor_arg(b.req("a"), fname, "a")?;
        if x.shape().last() != Some(&2) {
            return Err(self.err(span, format!("`{fname}` needs a tensor whose last dim is 2, got {}", x.ty)));
        }
        let shape = &x.shape()[..x.shape().len() - 1];
        // In gluon mode the halves are the last dim's register bit apart (Triton requires the same).
        let layout = match x.ty.layout() {
            Some(l) => Some(spelled(tessel_tile::layout::rules::split(l).ok_or_else(|| {
                self.err_hint(
                    span,
                    format!("cannot split {}: its last dim is not held in one thread's registers", x.ty),
                    "convert it first to a layout whose last register bit spans the last dim",
                )
            })?)),
            None => None,
        };
        // Gluon spells the halves' layout as the operand's sliced along the last dim.
        let gluon = match x.ty.layout() {
            Some(l) => self.split_layout(l, shape, span)?,
            None => None,
        };
        let ty = self.block_ty(shape, x.elem().unwrap(), layout.as_ref(), span)?;
        let mut out = self.emit(Op::Split, &[x], vec![ty.clone(), ty], span)?;
        if let Some(want) = gluon {
            for half in &mut out {
                *half = self.settle_layout(half.clone(), want.clone(), fname, span)?;
            }
        }
        Ok(Value::tuple(out.into_iter().map(Value::Tensor).collect()))
    }

    fn cat(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let x = self.tensor_arg(b.req("input"), fname, "input")?;
        let y = self.tensor_arg(b.req("other"), fname, "other")?;
        let can_reorder = match b.opt("can_reorder") {
            Some(a) => self.const_bool(a, fname, "can_reorder")?,
            None => false,
        };
        if !can_reorder {
            return Err(self.err_hint(
                span,
                format!("`{fname}` may reorder elements; pass `can_reorder=True`"),
                "Triton's cat only guarantees the set of elements; tessel concatenates along dim 0",
            ));
        }
        if x.ty != y.ty || !x.is_block() {
            return Err(self.err(span, format!("`{fname}` needs two tensors of one type, got {} and {}", x.ty, y.ty)));
        }
        let mut shape = x.shape().to_vec();
        shape[0] *= 2;
        let ty = self.block_ty(&shape, x.elem().unwrap(), None, span)?;
        Ok(Value::Tensor(self.emit1(Op::Cat, &[x, y], ty, span)?))
    }

    /// `tl.cast(input, dtype, ...)` and `x.to(dtype, ...)`, bound to [`CAST_SIG`].
    pub(super) fn cast_builtin(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let x = self.tensor_arg(b.req("input"), fname, "input")?;
        let d = self.dtype_arg(b.req("dtype"), fname, "dtype")?;
        let bitcast = match b.opt("bitcast") {
            Some(a) => self.const_bool(a, fname, "bitcast")?,
            None => false,
        };
        if let Some(r) = b.opt("fp_downcast_rounding") {
            let mode = self.const_str(r, fname, "fp_downcast_rounding")?;
            if mode != "rtne" {
                return Err(self.err(r.span, format!("fp_downcast_rounding `{mode}` is not supported (only `rtne`)")));
            }
        }
        let t = if bitcast { self.bitcast(x, d, span)? } else { self.cast(x, d, span)? };
        Ok(Value::Tensor(t))
    }

    /// `tl.multiple_of`, `tl.max_contiguous`, `tl.max_constancy`: the hint `op` of one value per dim.
    fn hint(&mut self, b: Bound<'a>, op: fn(Vec<i64>) -> Op) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let x = self.tensor_arg(b.req("input"), fname, "input")?;
        let values: Vec<i64> = self.int_list(b.req("values"), fname, "values")?.into_iter().map(|v| v as i64).collect();
        let rank = x.shape().len().max(1);
        if values.len() != rank {
            return Err(self
                .err(span, format!("`{fname}` needs {rank} values (one per dim of {}), got {}", x.ty, values.len())));
        }
        let ty = x.ty.clone();
        Ok(Value::Tensor(self.emit1(op(values), &[x], ty, span)?))
    }

    fn assume(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let c = b.req("cond");
        match c.value.truth() {
            Some(true) => Ok(Value::None),
            Some(false) => Err(self.err(c.span, "`assume` of a condition that is false at compile time")),
            None => {
                let t = self.tensor_arg(c, &b.fname, "cond")?;
                if t.is_block() {
                    return Err(self.err(c.span, format!("`{}` needs a scalar condition, got {}", b.fname, t.ty)));
                }
                let t = self.cast(t, Dtype::Scalar(ScalarType::I1), b.span)?;
                self.emit(Op::Assume, &[t], vec![], b.span)?;
                Ok(Value::None)
            }
        }
    }

    /// `tl.full`: a constant tile, or a runtime scalar splatted (converted to `dtype` first).
    pub fn full(
        &mut self,
        shape: &[u32],
        value: &Value<'a>,
        dtype: Option<Dtype>,
        layout: Option<std::sync::Arc<tessel_tile::Layout>>,
        span: crate::span::Span,
    ) -> R<Tv> {
        match value {
            Value::Tensor(t) => {
                if t.is_block() && t.ty.numel() != 1 {
                    return Err(self.err(span, format!("`full` needs a scalar value, got {}", t.ty)));
                }
                let t = match dtype {
                    Some(d) => self.cast(t.clone(), d, span)?,
                    None => t.clone(),
                };
                if shape.is_empty() {
                    return Ok(t);
                }
                let t = if t.is_block() { self.reshape(t, &[], false, span)? } else { t };
                let ty = self.block_ty(shape, t.elem().unwrap(), layout.as_ref(), span)?;
                self.emit1(Op::Splat, &[t], ty, span)
            }
            v if v.is_number() => {
                let Some(Dtype::Scalar(s)) = dtype else {
                    return Err(self.err(span, "`dtype` must be given when the value is a Python number"));
                };
                let ty = self.block_ty(shape, Elem::Scalar(s), layout.as_ref(), span)?;
                self.number_constant(v, ty, span)
            }
            other => Err(self.err(span, format!("`full` needs a number or a scalar tensor, got {}", other.describe()))),
        }
    }

    /// `reshape`: same number of elements, power-of-two dims.
    pub fn reshape(&mut self, x: Tv, shape: &[u32], can_reorder: bool, span: crate::span::Span) -> R<Tv> {
        let numel: u64 = shape.iter().map(|&d| d as u64).product();
        if numel != x.ty.numel() {
            return Err(self.err(
                span,
                format!("cannot reshape {} ({} elements) to shape {shape:?} ({numel} elements)", x.ty, x.ty.numel()),
            ));
        }
        if x.shape() == shape {
            return Ok(x);
        }
        if shape.is_empty() {
            // A one-element tensor to a scalar: reduce it.
            let elem = x.elem().unwrap();
            let flat = self.reshape(x, &[1], false, span)?;
            return self.reduce_to_scalar_single(flat, elem, span);
        }
        // In gluon mode the elements keep their registers, lanes and warps: the layout follows the reshape.
        let layout = match x.ty.layout() {
            Some(l) => Some(spelled(tessel_tile::layout::rules::reshape(l, shape).ok_or_else(|| {
                self.err(span, format!("cannot reshape {} to {shape:?}: no layout keeps its elements in place", x.ty))
            })?)),
            None => None,
        };
        let ty = if x.is_block() {
            self.block_ty(shape, x.elem().unwrap(), layout.as_ref(), span)?
        } else {
            return self.broadcast_to(x, shape, span);
        };
        self.emit1(Op::Reshape { can_reorder }, &[x], ty, span)
    }

    /// A one-element 1-D tensor as a scalar (a reduce whose combine returns its first operand).
    fn reduce_to_scalar_single(&mut self, x: Tv, elem: Elem, span: crate::span::Span) -> R<Tv> {
        let region = self.func.new_region();
        let a = self.func.add_region_arg(region, Type::Scalar(elem), None);
        self.func.add_region_arg(region, Type::Scalar(elem), None);
        self.in_region(region, |this| this.emit(Op::Yield, &[Tv::new(a, Type::Scalar(elem))], vec![], span))?;
        Ok(self.emit_with_regions(Op::Reduce { axis: 0 }, &[x], vec![Type::Scalar(elem)], &[region], span)?.remove(0))
    }

    /// `permute` by `dims` (a permutation of the dims).
    pub fn permute(&mut self, x: Tv, dims: &[i128], span: crate::span::Span) -> R<Tv> {
        let rank = x.shape().len();
        let mut seen: Vec<i128> = dims.to_vec();
        seen.sort_unstable();
        if seen != (0..rank as i128).collect::<Vec<_>>() {
            return Err(self.err(span, format!("{dims:?} is not a permutation of the {rank} dims of {}", x.ty)));
        }
        let order: Vec<u32> = dims.iter().map(|&d| d as u32).collect();
        if order.iter().enumerate().all(|(i, &d)| i as u32 == d) {
            return Ok(x);
        }
        let shape: Vec<u32> = order.iter().map(|&d| x.shape()[d as usize]).collect();
        let layout = match x.ty.layout() {
            Some(l) => Some(spelled(tessel_tile::layout::rules::permute(l, &order).ok_or_else(|| {
                self.err(span, format!("cannot permute {} by {order:?}: no layout keeps its elements in place", x.ty))
            })?)),
            None => None,
        };
        let ty = self.block_ty(&shape, x.elem().unwrap(), layout.as_ref(), span)?;
        self.emit1(Op::Permute { order }, &[x], ty, span)
    }

    /// A shape given as varargs (`reshape(x, 4, 8)`) or as one tuple (`reshape(x, (4, 8))`).
    fn varargs_shape(&self, b: &Bound<'a>, fname: &str, pow2: bool) -> R<Vec<u32>> {
        let arg = self.varargs_arg(b);
        let shape = self.int_list(&arg, fname, "shape")?;
        let mut out = Vec::new();
        for (i, &d) in shape.iter().enumerate() {
            if pow2 {
                self.check_pow2(d, &format!("shape[{i}]"), arg.span)?;
            }
            out.push(d as u32);
        }
        Ok(out)
    }

    fn varargs_ints(&self, b: &Bound<'a>, fname: &str, what: &str) -> R<Vec<i128>> {
        let arg = self.varargs_arg(b);
        self.int_list(&arg, fname, what)
    }

    fn varargs_arg(&self, b: &Bound<'a>) -> Arg<'a> {
        match b.rest.as_slice() {
            [one] if matches!(one.value, Value::Tuple(_) | Value::List(_)) => one.clone(),
            rest => {
                let span = rest.first().map_or(b.span, |a| a.span.to(rest.last().unwrap().span));
                Arg::new(Value::tuple(rest.iter().map(|a| a.value.clone()).collect()), span)
            }
        }
    }

    /// `range(...)`, `tl.range(...)`, `tl.static_range(...)` as a range value, from the arguments bound to
    /// [`STATIC_RANGE_SIG`] (`tl.range`: [`RANGE_SIG`]).
    pub fn range_value(&mut self, is_static: bool, is_python: bool, b: Bound<'a>) -> R<Rc<RangeVal<'a>>> {
        let fname = &b.fname;
        let (start, end) = match b.opt("arg2") {
            Some(e) => (b.req("arg1").value.clone(), e.value.clone()),
            None => (Value::Int(0), b.req("arg1").value.clone()),
        };
        let step = b.opt("step").map_or(Value::Int(1), |s| s.value.clone());
        if is_static {
            for (v, what, a) in
                [(&start, "start", b.req("arg1")), (&end, "end", b.opt("arg2").unwrap_or(b.req("arg1")))]
            {
                if v.as_int().is_none() {
                    return Err(self.not_constexpr(a, fname, what, &v.type_name()));
                }
            }
            if step.as_int().is_none() {
                return Err(self.not_constexpr(b.opt("step").unwrap(), fname, "step", &step.type_name()));
            }
        }
        let mut attrs = LoopAttrs::default();
        if !is_static && !is_python {
            if let Some(a) = b.opt("num_stages") {
                attrs.num_stages = Some(self.const_int(a, fname, "num_stages")? as u32);
            }
            if let Some(a) = b.opt("loop_unroll_factor") {
                attrs.loop_unroll_factor = Some(self.const_int(a, fname, "loop_unroll_factor")? as u32);
            }
            for (k, slot) in [
                ("disallow_acc_multi_buffer", &mut attrs.disallow_acc_multi_buffer),
                ("flatten", &mut attrs.flatten),
                ("warp_specialize", &mut attrs.warp_specialize),
            ] {
                if let Some(a) = b.opt(k) {
                    *slot = self.const_bool(a, fname, k)?;
                }
            }
            if let Some(a) = b.opt("disable_licm") {
                self.const_bool(a, fname, "disable_licm")?;
            }
        }
        Ok(Rc::new(RangeVal { is_static, is_python, start, end, step, attrs }))
    }
}

/// A derived register layout (a reshape's, a permute's, a split's) written as Gluon writes it: its bases as a
/// `DistributedLinearLayout`, so the IR prints it in the spelling it parses back.
fn spelled(l: std::sync::Arc<tessel_tile::Layout>) -> std::sync::Arc<tessel_tile::Layout> {
    use tessel_layouts::{AnyLayout, DistributedLayout, DistributedLinearLayout};
    if l.spec.is_some() {
        return l;
    }
    let bases = l.linear.bases_vec();
    let get = |n: &str| bases.iter().find(|(k, _)| k.as_str() == n).map(|(_, b)| b.clone()).unwrap_or_default();
    let shape = l.linear.out_dim_sizes().iter().map(|(_, s)| *s).collect();
    let spec = DistributedLinearLayout {
        reg_bases: get("register"),
        lane_bases: get("lane"),
        warp_bases: get("warp"),
        block_bases: get("block"),
        shape,
    };
    let spec = Some(AnyLayout::Distributed(DistributedLayout::Linear(spec)));
    std::sync::Arc::new(tessel_tile::Layout { spec, linear: l.linear.clone() })
}
