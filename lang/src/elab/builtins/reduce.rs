//! `tl.reduce` and `tl.associative_scan` (the combine function is elaborated into the op's region, inlined on
//! scalars), `tl.dot` with Triton's operand, accumulator and precision rules, and `tl._dot_scaled_op`, the
//! `dot_scaled` op the prelude's `tl.dot_scaled` emits for the forms the block-scaled MMA may take.

use tessel_tile::ops::{Const, InputPrecision, MxFormat, Op};
use tessel_tile::{Elem, ScalarType, Type};

use crate::elab::args::{Arg, Bound, CallArgs};
use crate::elab::names::TL;
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

pub(super) fn register(r: &mut Registry) {
    r.add(TL, "reduce", Handler::Bound("input, axis, combine_fn, keep_dims?", |e, b| e.reduce_builtin(b, false)))
        .method();
    r.add(
        TL,
        "associative_scan",
        Handler::Bound("input, axis, combine_fn, reverse?", |e, b| e.reduce_builtin(b, true)),
    )
    .method();
    r.add(
        TL,
        "dot",
        Handler::Bound(
            "input, other, acc?, input_precision?, allow_tf32?, max_num_imprecise_acc?, out_dtype?",
            |e, b| Ok(Value::Tensor(e.dot(&b, &b.fname, b.span)?)),
        ),
    );
    r.add(
        TL,
        "_dot_scaled_op",
        Handler::Bound("lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, lhs_up, rhs_up", |e, b| {
            Ok(Value::Tensor(e.dot_scaled_op(&b)?))
        }),
    );
}

impl<'a> Elab<'a> {
    /// `tl.reduce(input, axis, combine_fn, keep_dims)`, or `tl.associative_scan(input, axis, combine_fn, reverse)`
    /// (`scan`); `input` a tensor or a tuple of them.
    fn reduce_builtin(&mut self, b: Bound<'a>, scan: bool) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let input = b.req("input");
        let (inputs, is_tuple) = match &input.value {
            Value::Tuple(items) => {
                let ts = items
                    .iter()
                    .map(|v| self.tensor_arg(&Arg::new(v.clone(), input.span), fname, "input"))
                    .collect::<R<Vec<_>>>()?;
                (ts, true)
            }
            _ => (vec![self.tensor_arg(input, fname, "input")?], false),
        };
        let axis = match b.opt("axis") {
            Some(a) => Some(self.const_int(a, fname, "axis")?),
            None => None,
        };
        let combine = b.req("combine_fn").value.clone();
        let flag_name = if scan { "reverse" } else { "keep_dims" };
        let flag = match b.opt(flag_name) {
            Some(a) => self.const_bool(a, fname, flag_name)?,
            None => false,
        };
        let out = if scan {
            let Some(axis) = axis else {
                return Err(self.err(span, format!("`{fname}` needs an axis")));
            };
            self.scan(inputs, axis, combine, flag, fname, span)?
        } else {
            self.reduce(inputs, axis, combine, flag, fname, span)?
        };
        Ok(if is_tuple {
            Value::tuple(out.into_iter().map(Value::Tensor).collect())
        } else {
            Value::Tensor(out.into_iter().next().unwrap())
        })
    }

    fn check_axis(&self, axis: i128, rank: usize, fname: &str, span: Span) -> R<usize> {
        let r = rank as i128;
        let a = if axis < 0 { axis + r } else { axis };
        if !(0..r).contains(&a) {
            return Err(self.err(span, format!("`{fname}`: axis {axis} is out of range for a tensor of rank {rank}")));
        }
        Ok(a as usize)
    }

    /// Builds the combine region: arguments `(a..., b...)`, the combine function inlined on them, a yield.
    fn combine_region(
        &mut self,
        elems: &[Elem],
        combine: Value<'a>,
        fname: &str,
        span: Span,
    ) -> R<tessel_tile::RegionId> {
        let region = self.func.new_region();
        let mut args = Vec::new();
        for _ in 0..2 {
            for &e in elems {
                let v = self.func.add_region_arg(region, Type::Scalar(e), None);
                args.push(Tv::new(v, Type::Scalar(e)));
            }
        }
        self.in_region(region, |this| {
            let call = CallArgs {
                pos: args.iter().map(|t| Arg::new(Value::Tensor(t.clone()), span)).collect(),
                kw: vec![],
                span,
            };
            let out = this.call_value(combine, call, span)?;
            let outs = match out {
                Value::Tuple(items) => items.as_ref().clone(),
                other => vec![other],
            };
            if outs.len() != elems.len() {
                return Err(this.err(
                    span,
                    format!(
                        "the combine function of `{fname}` returns {} values, expected {}",
                        outs.len(),
                        elems.len()
                    ),
                ));
            }
            let mut yields = Vec::new();
            for (i, (v, &e)) in outs.iter().zip(elems).enumerate() {
                let t = this.to_tensor(v, span)?;
                if t.ty != Type::Scalar(e) {
                    return Err(this.err(
                        span,
                        format!(
                            "the combine function of `{fname}` returns {} for operand {i}, expected {}",
                            t.ty,
                            Type::Scalar(e)
                        ),
                    ));
                }
                yields.push(t);
            }
            this.emit(Op::Yield, &yields, vec![], span)?;
            Ok(())
        })?;
        Ok(region)
    }

    /// `tl.reduce(inputs, axis, combine_fn, keep_dims)`.
    pub fn reduce(
        &mut self,
        mut inputs: Vec<Tv>,
        axis: Option<i128>,
        combine: Value<'a>,
        keep_dims: bool,
        fname: &str,
        span: Span,
    ) -> R<Vec<Tv>> {
        let shape = inputs[0].shape().to_vec();
        for t in &inputs {
            if !t.is_block() {
                return Err(self.err(span, format!("`{fname}` needs tensors, got {}", t.ty)));
            }
            if t.shape() != shape.as_slice() {
                return Err(
                    self.err(span, format!("`{fname}` needs inputs of one shape, got {:?} and {:?}", shape, t.shape()))
                );
            }
        }
        let orig_rank = shape.len();
        let flattened = axis.is_none();
        let axis = match axis {
            Some(a) => self.check_axis(a, shape.len(), fname, span)?,
            None => {
                let n = inputs[0].ty.numel() as u32;
                inputs = inputs.into_iter().map(|t| self.reshape(t, &[n], true, span)).collect::<R<Vec<_>>>()?;
                0
            }
        };
        let elems: Vec<Elem> = inputs.iter().map(|t| t.elem().unwrap()).collect();
        let region = self.combine_region(&elems, combine, fname, span)?;
        let mut out_shape = inputs[0].shape().to_vec();
        out_shape.remove(axis);
        let mut types = Vec::new();
        for t in &inputs {
            let layout = match t.ty.layout() {
                Some(l) => self.sliced_layout(l, axis, &out_shape, span)?,
                None => None,
            };
            types.push(if out_shape.is_empty() {
                Type::Scalar(t.elem().unwrap())
            } else {
                Type::Tensor { shape: out_shape.as_slice().into(), elem: t.elem().unwrap(), layout }
            });
        }
        let mut out = self.emit_with_regions(Op::Reduce { axis: axis as u32 }, &inputs, types, &[region], span)?;
        if keep_dims {
            for t in out.iter_mut() {
                *t = if flattened || !t.is_block() {
                    // Every reduced dim stays as a 1.
                    let ones: Vec<u32> = if flattened { vec![1; orig_rank] } else { vec![1] };
                    let ty = self.block_ty(&ones, t.elem().unwrap(), None, span)?;
                    self.emit1(Op::Splat, std::slice::from_ref(t), ty, span)?
                } else {
                    self.expand_dims(t.clone(), axis, span)?
                };
            }
        }
        Ok(out)
    }

    /// `tl.associative_scan(inputs, axis, combine_fn, reverse)`: inclusive scan.
    pub fn scan(
        &mut self,
        inputs: Vec<Tv>,
        axis: i128,
        combine: Value<'a>,
        reverse: bool,
        fname: &str,
        span: Span,
    ) -> R<Vec<Tv>> {
        let shape = inputs[0].shape().to_vec();
        for t in &inputs {
            if !t.is_block() || t.shape() != shape.as_slice() {
                return Err(self.err(span, format!("`{fname}` needs tensors of one shape, got {}", t.ty)));
            }
        }
        let axis = self.check_axis(axis, shape.len(), fname, span)?;
        let elems: Vec<Elem> = inputs.iter().map(|t| t.elem().unwrap()).collect();
        let region = self.combine_region(&elems, combine, fname, span)?;
        let types = inputs.iter().map(|t| t.ty.clone()).collect();
        self.emit_with_regions(Op::Scan { axis: axis as u32, reverse }, &inputs, types, &[region], span)
    }

    fn dot(&mut self, b: &Bound<'a>, fname: &str, span: Span) -> R<Tv> {
        let x = self.tensor_arg(b.req("input"), fname, "input")?;
        let y = self.tensor_arg(b.req("other"), fname, "other")?;
        let (sa, sb) = (x.shape().to_vec(), y.shape().to_vec());
        let r = sa.len();
        if !(r == 2 || r == 3) || sb.len() != r {
            return Err(
                self.err(span, format!("`{fname}` needs two 2-D or two 3-D tensors, got shapes {sa:?} and {sb:?}"))
            );
        }
        if sa[r - 1] != sb[r - 2] {
            return Err(self.err(
                span,
                format!(
                    "`{fname}`: shapes {sa:?} and {sb:?} do not form a matrix product (K = {} vs {})",
                    sa[r - 1],
                    sb[r - 2]
                ),
            ));
        }
        if r == 3 && sa[0] != sb[0] {
            return Err(self.err(span, format!("`{fname}`: batch dims differ: {sa:?} and {sb:?}")));
        }
        let (ta, tb) = (x.scalar().unwrap_or(ScalarType::I1), y.scalar().unwrap_or(ScalarType::I1));
        let fp8 = |s: ScalarType| matches!(s, ScalarType::F8E4M3 | ScalarType::F8E5M2);
        if !(fp8(ta) && fp8(tb)) {
            let ok =
                [ScalarType::I8, ScalarType::U8, ScalarType::F16, ScalarType::BF16, ScalarType::F32, ScalarType::F64];
            for (t, s) in [(&x, ta), (&y, tb)] {
                if !ok.contains(&s) {
                    return Err(self.err(span, format!("`{fname}` does not support operands of type {}", t.ty)));
                }
            }
            if ta != tb {
                return Err(self.err(
                    span,
                    format!(
                        "both operands of `{fname}` must have one dtype, got {} and {}",
                        ta.triton_name(),
                        tb.triton_name()
                    ),
                ));
            }
        }
        let min_k = if ta.bits() == 8 { 32 } else { 16 };
        if sa[r - 1] < min_k {
            return Err(self.err(
                span,
                format!("`{fname}` needs K >= {min_k} for {} operands, got K = {}", ta.triton_name(), sa[r - 1]),
            ));
        }
        let out_dtype = match b.opt("out_dtype") {
            Some(a) => match self.dtype_arg(a, fname, "out_dtype")?.scalar() {
                Some(s) => s,
                None => return Err(self.err(a.span, "out_dtype must be a scalar dtype")),
            },
            None => ScalarType::F32,
        };
        let ret = if ta.is_int() {
            if ta != ScalarType::I8 {
                return Err(
                    self.err(span, format!("integer `{fname}` supports int8 operands only, got {}", ta.triton_name()))
                );
            }
            ScalarType::I32
        } else if out_dtype == ScalarType::BF16 {
            return Err(self.err_hint(
                span,
                "out_dtype=bfloat16 is not supported",
                "use out_dtype=tl.float32 (or float16) and convert with `.to(tl.bfloat16)`",
            ));
        } else if matches!(ta, ScalarType::F32 | ScalarType::BF16) {
            ScalarType::F32
        } else if ta == ScalarType::F64 {
            ScalarType::F64
        } else {
            out_dtype
        };
        let mut precision = match b.opt("input_precision") {
            Some(a) => match self.const_str(a, fname, "input_precision")?.as_str() {
                "tf32" => InputPrecision::Tf32,
                "tf32x3" => InputPrecision::Tf32x3,
                "ieee" => InputPrecision::Ieee,
                other => {
                    return Err(self.err(
                        a.span,
                        format!("input_precision \"{other}\" is not supported (use \"tf32\", \"tf32x3\" or \"ieee\")"),
                    ));
                }
            },
            None => InputPrecision::Tf32,
        };
        if let Some(a) = b.opt("allow_tf32") {
            if b.opt("input_precision").is_some() {
                return Err(self.err(a.span, "give only one of `input_precision` and `allow_tf32`"));
            }
            precision =
                if self.const_bool(a, fname, "allow_tf32")? { InputPrecision::Tf32 } else { InputPrecision::Ieee };
        }
        if ta != ScalarType::F32 {
            precision = InputPrecision::Ieee;
        }
        let max_imprecise = match b.opt("max_num_imprecise_acc") {
            Some(a) => self.const_int(a, fname, "max_num_imprecise_acc")? as u32,
            None => 0,
        };
        let mut out_shape = vec![sa[r - 2], sb[r - 1]];
        if r == 3 {
            out_shape.insert(0, sa[0]);
        }
        let acc = match b.opt("acc") {
            Some(a) => {
                let acc = self.tensor_arg(a, fname, "acc")?;
                if acc.shape() != out_shape.as_slice() || acc.scalar() != Some(ret) {
                    let want = Type::tensor(&out_shape, Elem::Scalar(ret));
                    let mut e = self
                        .err(a.span, format!("the accumulator of `{fname}` is {} but the product is {want}", acc.ty));
                    if acc.shape() == out_shape.as_slice() && !ta.is_int() {
                        let d = acc.dtype().unwrap();
                        e.diag = e.diag.with_hint(format!("pass `out_dtype=tl.{d}` to accumulate in {d}"));
                    }
                    return Err(e);
                }
                acc
            }
            None => {
                let c = if ret.is_float() { Const::Float(0.0) } else { Const::Int(0) };
                self.constant(c, Type::tensor(&out_shape, Elem::Scalar(ret)), span)?
            }
        };
        let ty = acc.ty.clone();
        self.emit1(Op::Dot { precision, max_num_imprecise_acc: max_imprecise }, &[x, y, acc], ty, span)
    }

    /// `tl._dot_scaled_op(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, lhs_up, rhs_up)`: the
    /// `dot_scaled` op (the prelude's `tl.dot_scaled` has checked the call and made `lhs_up`, `rhs_up`).
    fn dot_scaled_op(&mut self, b: &Bound<'a>) -> R<Tv> {
        let (fname, span) = (&b.fname, b.span);
        let format = |what: &str| -> R<MxFormat> {
            let a = b.req(what);
            let s = self.const_str(a, fname, what)?;
            MxFormat::from_word(&s).ok_or_else(|| {
                self.err(a.span, format!("`{what}` of `{fname}` must be one of {:?}, got \"{s}\"", MxFormat::WORDS))
            })
        };
        let (a_format, b_format) = (format("lhs_format")?, format("rhs_format")?);
        let names = ["lhs", "lhs_scale", "rhs", "rhs_scale", "acc", "lhs_up", "rhs_up"];
        let ins = names.iter().map(|&n| self.tensor_arg(b.req(n), fname, n)).collect::<R<Vec<Tv>>>()?;
        let ty = ins[4].ty.clone();
        let types: Vec<&Type> = ins.iter().map(|t| &t.ty).collect();
        tessel_tile::verify::dot_scaled_types(&types, &[&ty], a_format, b_format)
            .map_err(|e| self.err(span, format!("`{fname}`: {e}")))?;
        self.emit1(Op::DotScaled { a_format, b_format }, &ins, ty, span)
    }
}
