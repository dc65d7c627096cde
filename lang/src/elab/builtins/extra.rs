//! Data-dependent ops (`tl.gather`, `tl.histogram`), inline PTX (`tl.inline_asm_elementwise`), and the
//! `triton.language.extra.cuda` helpers (`globaltimer`, `smid`, `num_threads`, `num_warps`,
//! `convert_custom_float8*`, `gdc_wait`, `gdc_launch_dependents`), which libdevice's module has too.

use tessel_tile::ops::{Const, Op};
use tessel_tile::{Elem, ScalarType, Type};

use crate::elab::args::{Arg, Bound, CallArgs};
use crate::elab::builtins::core::CAST_SIG;
use crate::elab::names::{CUDA, TL};
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Dtype, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

pub(super) fn register(r: &mut Registry) {
    r.add(
        TL,
        "gather",
        Handler::Bound("src, index, axis", |e, b| {
            Ok(Value::Tensor(e.gather(b.req("src"), b.req("index"), b.req("axis"), &b.fname, b.span)?))
        }),
    )
    .method();
    r.add(
        TL,
        "histogram",
        Handler::Bound("input, num_bins, mask?, layout?", |e, b| {
            Ok(Value::Tensor(e.histogram(b.req("input"), b.req("num_bins"), b.opt("mask"), &b.fname, b.span)?))
        }),
    )
    .method();
    r.add(
        TL,
        "inline_asm_elementwise",
        Handler::Bound("asm, constraints, args, dtype, is_pure, pack", |e, b| e.inline_asm_builtin(b)),
    );
    r.add(
        CUDA,
        "globaltimer",
        Handler::Bound("", |e, b| {
            Ok(Value::Tensor(e.emit1(Op::GlobalTimer, &[], Type::scalar(ScalarType::I64), b.span)?))
        }),
    );
    r.add(
        CUDA,
        "smid",
        Handler::Bound("", |e, b| Ok(Value::Tensor(e.emit1(Op::SmId, &[], Type::scalar(ScalarType::I32), b.span)?))),
    );
    r.add(CUDA, "num_threads", Handler::Bound("", |e, _| Ok(Value::Int(e.warps() as i128 * 32))));
    r.add(CUDA, "num_warps", Handler::Bound("", |e, _| Ok(Value::Int(e.warps() as i128))));
    for name in ["convert_custom_float8", "convert_custom_float8_sm70", "convert_custom_float8_sm80"] {
        r.add(CUDA, name, Handler::Bound("arg, dst_ty, fp_downcast_rounding?", |e, b| e.convert_custom_float8(b)));
    }
    r.add(
        CUDA,
        "gdc_wait",
        Handler::Bound("", |e, b| {
            e.emit(Op::GdcWait, &[], vec![], b.span)?;
            Ok(Value::None)
        }),
    );
    r.add(
        CUDA,
        "gdc_launch_dependents",
        Handler::Bound("", |e, b| {
            e.emit(Op::GdcLaunchDependents, &[], vec![], b.span)?;
            Ok(Value::None)
        }),
    );
}

impl<'a> Elab<'a> {
    fn inline_asm_builtin(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let fname = &b.fname;
        let asm = self.const_str(b.req("asm"), fname, "asm")?;
        let constraints = self.const_str(b.req("constraints"), fname, "constraints")?;
        let pure = self.const_bool(b.req("is_pure"), fname, "is_pure")?;
        let pack = self.const_int(b.req("pack"), fname, "pack")?;
        if !(1..=16).contains(&pack) {
            return Err(self.err(b.req("pack").span, format!("`pack` must be in 1..=16, got {pack}")));
        }
        let op = Op::InlineAsm { asm, constraints, pure, pack: pack as u32 };
        self.inline_asm(op, b.req("args"), b.req("dtype"), fname, b.span)
    }

    /// `convert_custom_float8(arg, dst_ty, fp_downcast_rounding)`: a cast to or from a float8 type.
    fn convert_custom_float8(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let x = self.tensor_arg(b.req("arg"), fname, "arg")?;
        let d = self.dtype_arg(b.req("dst_ty"), fname, "dst_ty")?;
        let fp8 = |s: Option<ScalarType>| matches!(s, Some(ScalarType::F8E4M3 | ScalarType::F8E5M2));
        if !fp8(x.scalar()) && !fp8(d.scalar()) {
            return Err(self.err(span, format!("`{fname}` converts to or from a float8 type, got {} to {d}", x.ty)));
        }
        let mut cast =
            CallArgs { pos: vec![Arg::new(Value::Tensor(x), span), b.req("dst_ty").clone()], kw: vec![], span };
        if let Some(r) = b.opt("fp_downcast_rounding") {
            cast.kw.push(("fp_downcast_rounding".into(), r.clone()));
        }
        let cast = self.bind(fname, CAST_SIG, cast)?;
        self.cast_builtin(cast)
    }

    fn gather(&mut self, src: &Arg<'a>, index: &Arg<'a>, axis: &Arg<'a>, fname: &str, span: Span) -> R<Tv> {
        let s = self.tensor_arg(src, fname, "src")?;
        let i = self.tensor_arg(index, fname, "index")?;
        if !i.scalar().is_some_and(ScalarType::is_int) {
            return Err(self.err(index.span, format!("`index` of `{fname}` must be integers, got {}", i.ty)));
        }
        let rank = s.shape().len();
        if rank == 0 || i.shape().len() != rank {
            return Err(self.err(
                span,
                format!("`src` and `index` of `{fname}` must be tensors of one rank, got {} and {}", s.ty, i.ty),
            ));
        }
        let a = self.const_int(axis, fname, "axis")?;
        let a = if a < 0 { a + rank as i128 } else { a };
        if !(0..rank as i128).contains(&a) {
            return Err(self.err(axis.span, format!("`axis` {a} is out of range for rank {rank}")));
        }
        let a = a as usize;
        if let Some(d) = (0..rank).find(|&d| d != a && s.shape()[d] != i.shape()[d]) {
            return Err(self.err(
                span,
                format!(
                    "`src` and `index` of `{fname}` must have equal dims except along `axis` {a}: dim {d} is {} and {}",
                    s.shape()[d],
                    i.shape()[d]
                ),
            ));
        }
        let ty = i.ty.with_elem(s.elem().expect("a tensor"));
        self.emit1(Op::Gather { axis: a as u32 }, &[s, i], ty, span)
    }

    fn histogram(
        &mut self,
        input: &Arg<'a>,
        num_bins: &Arg<'a>,
        mask: Option<&Arg<'a>>,
        fname: &str,
        span: Span,
    ) -> R<Tv> {
        let x = self.tensor_arg(input, fname, "input")?;
        if x.shape().len() != 1 || !x.scalar().is_some_and(ScalarType::is_int) {
            return Err(
                self.err(input.span, format!("`input` of `{fname}` must be a 1-D integer tensor, got {}", x.ty))
            );
        }
        let n = self.const_int(num_bins, fname, "num_bins")?;
        self.check_pow2(n, "num_bins", num_bins.span)?;
        let mut x = x;
        if let Some(m) = mask {
            // A masked-off element becomes -1, which no bin counts: the mask is folded into the input (as a
            // signed integer wide enough to keep every value's bin), so the op sees one tensor and codegen
            // need not bring the mask into the input's layout.
            let m = self.tensor_arg(m, fname, "mask")?;
            let m = self.cast(m, Dtype::Scalar(ScalarType::I1), span)?;
            let m = self.broadcast_like(m, &x.ty, span)?;
            let wide = if x.scalar().is_some_and(|s| s.bits() == 64) { ScalarType::I64 } else { ScalarType::I32 };
            let xw = self.cast(x, Dtype::Scalar(wide), span)?;
            let off = self.constant(Const::Int(-1), xw.ty.clone(), span)?;
            let ty = xw.ty.clone();
            x = self.emit1(Op::Select, &[m, xw, off], ty, span)?;
        }
        let ty = self.block_ty(&[n as u32], Elem::Scalar(ScalarType::I32), None, span)?;
        self.emit1(Op::Histogram { num_bins: n as u32 }, &[x], ty, span)
    }

    /// `inline_asm_elementwise`: the arguments broadcast to one shape; one result per dtype (a tuple when
    /// `dtype` is a tuple).
    fn inline_asm(&mut self, op: Op, args: &Arg<'a>, dtype: &Arg<'a>, fname: &str, span: Span) -> R<Value<'a>> {
        let items = match &args.value {
            Value::Tuple(_) | Value::List(_) => args.value.items().unwrap(),
            other => vec![other.clone()],
        };
        let mut ts = Vec::new();
        for v in &items {
            let a = Arg::new(v.clone(), args.span);
            ts.push(self.tensor_arg(&a, fname, "args")?);
        }
        // Broadcast every argument to the shape of all of them.
        for k in 1..ts.len() {
            let (a, b) = self.broadcast_pair(ts[0].clone(), ts[k].clone(), span)?;
            ts[0] = a;
            ts[k] = b;
        }
        let shape_ty = ts.first().map(|t| t.ty.clone());
        let ts: Vec<Tv> = match &shape_ty {
            Some(like) => ts.into_iter().map(|t| self.broadcast_like(t, like, span)).collect::<R<_>>()?,
            None => ts,
        };
        let (dtypes, tuple) = match &dtype.value {
            Value::Tuple(d) => (d.as_ref().clone(), true),
            other => (vec![other.clone()], false),
        };
        let mut types = Vec::new();
        for d in &dtypes {
            let d = self.dtype_arg(&Arg::new(d.clone(), dtype.span), fname, "dtype")?;
            let Some(s) = d.scalar() else {
                return Err(self.err(dtype.span, format!("`dtype` of `{fname}` must be a number type, got {d}")));
            };
            types.push(match &shape_ty {
                Some(like) => like.with_elem(Elem::Scalar(s)),
                None => Type::scalar(s),
            });
        }
        if let Op::InlineAsm { pack, .. } = &op {
            let n: u32 = types[0].shape().iter().product();
            if n % pack != 0 {
                return Err(self.err(span, format!("`pack` {pack} must divide the {n} elements of the arguments")));
            }
        }
        let results = self.emit(op, &ts, types, span)?;
        Ok(if tuple {
            Value::tuple(results.into_iter().map(Value::Tensor).collect())
        } else {
            Value::Tensor(results.into_iter().next().expect("one result"))
        })
    }
}
