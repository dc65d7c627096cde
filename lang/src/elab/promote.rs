//! Triton's typing rules: the dtype of Python numbers, the computation type of a binary op (integer promotion,
//! float promotion, Python scalars that do not take part in promotion), casts, and NumPy broadcasting.
//!
//! These mirror `semantic.py` of Triton 3.x (`to_tensor`, `computation_type_impl`, `integer_promote_impl`,
//! `binary_op_type_checking_impl`, `cast`, `broadcast_impl_value`).

use std::sync::Arc;

use tessel_tile::ops::{CmpPred, Const, Op};
use tessel_tile::{Elem, Layout, ScalarType, Type};

use crate::elab::value::{Dtype, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

/// Kinds in promotion order: bool < integer < float.
fn kind(s: ScalarType) -> u8 {
    if s.is_bool() {
        0
    } else if s.is_int() {
        1
    } else {
        2
    }
}

/// Triton's `integer_promote_impl`: C's usual arithmetic conversions on two integer types.
pub fn integer_promote(a: ScalarType, b: ScalarType) -> Result<ScalarType, String> {
    if !a.is_int() || !b.is_int() {
        return Err(format!("expected integer types, got {} and {}", a.triton_name(), b.triton_name()));
    }
    let (ar, br) = (a.bits(), b.bits());
    let (au, bu) = (a.is_unsigned_int(), b.is_unsigned_int());
    Ok(if au == bu {
        if ar > br { a } else { b }
    } else if au {
        if ar >= br { a } else { b }
    } else if br >= ar {
        b
    } else {
        a
    })
}

/// Triton's `computation_type_impl`: the type both operands of an arithmetic op are converted to. A Python
/// scalar (`a_scalar`) of a kind no higher than the tensor's does not take part.
pub fn computation_type(
    a: ScalarType,
    a_scalar: bool,
    b: ScalarType,
    b_scalar: bool,
    div_or_mod: bool,
) -> Result<ScalarType, String> {
    use ScalarType::*;
    if a_scalar != b_scalar {
        let (scalar, tensor) = if a_scalar { (a, b) } else { (b, a) };
        if kind(scalar) <= kind(tensor) {
            return Ok(if div_or_mod && matches!(tensor, F16 | BF16) { F32 } else { tensor });
        }
    }
    if a == F64 || b == F64 {
        return Ok(F64);
    }
    if a == F32 || b == F32 {
        return Ok(F32);
    }
    if a == F16 || b == F16 {
        return Ok(if div_or_mod { F32 } else { F16 });
    }
    if a == BF16 && b == BF16 {
        return Ok(if div_or_mod { F32 } else { BF16 });
    }
    if a == BF16 || b == BF16 {
        return Ok(F32);
    }
    let fp8 = |s: ScalarType| matches!(s, F8E4M3 | F8E5M2);
    if fp8(a) && fp8(b) {
        return Ok(if a == b { a } else { F16 });
    }
    if !a.is_int() || !b.is_int() {
        return Err(format!("unexpected types {} and {}", a.triton_name(), b.triton_name()));
    }
    if div_or_mod && a.is_unsigned_int() != b.is_unsigned_int() && !a.is_bool() && !b.is_bool() {
        return Err(format!(
            "cannot use /, // or % with {} and {}: they have different signedness; cast one of them first",
            a.triton_name(),
            b.triton_name()
        ));
    }
    integer_promote(a, b)
}

/// Options of [`Elab::binary_operands`] (Triton's `binary_op_type_checking_impl` flags).
#[derive(Clone, Copy, Debug, Default)]
pub struct Checking {
    pub allow_lhs_ptr: bool,
    pub allow_rhs_ptr: bool,
    /// Convert both operands to the computation type.
    pub arithmetic: bool,
    pub div_or_mod: bool,
}

impl<'a> Elab<'a> {
    /// The dtype Triton gives a Python number: `int32` if it fits, else `uint32`, `int64`, `uint64`; `float32`
    /// for floats in its range (and 0, inf, nan), else `float64`; `int1` for bools.
    pub fn py_dtype(&self, v: &Value<'a>, span: Span) -> R<ScalarType> {
        Ok(match v {
            Value::Bool(_) => ScalarType::I1,
            Value::Int(i) => {
                let i = *i;
                if (-(1i128 << 31)..(1i128 << 31)).contains(&i) {
                    ScalarType::I32
                } else if ((1i128 << 31)..(1i128 << 32)).contains(&i) {
                    ScalarType::U32
                } else if (-(1i128 << 63)..(1i128 << 63)).contains(&i) {
                    ScalarType::I64
                } else if ((1i128 << 63)..(1i128 << 64)).contains(&i) {
                    ScalarType::U64
                } else {
                    return Err(self.err(span, format!("integer {i} does not fit in 64 bits")));
                }
            }
            Value::Float(f) => {
                let a = f.abs();
                let min32 = 2f64.powi(-126);
                let max32 = (2.0 - 2f64.powi(-23)) * 2f64.powi(127);
                if a.is_infinite() || a == 0.0 || f.is_nan() || (min32..=max32).contains(&a) {
                    ScalarType::F32
                } else {
                    ScalarType::F64
                }
            }
            other => return Err(self.err(span, format!("expected a number, got {}", other.describe()))),
        })
    }

    /// A runtime scalar for a Python number (Triton's `to_tensor`); tensors pass through.
    pub fn to_tensor(&mut self, v: &Value<'a>, span: Span) -> R<Tv> {
        match v {
            Value::Tensor(t) => Ok(t.clone()),
            v if v.is_number() => {
                let s = self.py_dtype(v, span)?;
                self.scalar_constant(v, s, span)
            }
            other => Err(self.err(span, format!("expected a tensor or a number, got {}", other.describe()))),
        }
    }

    /// A Python number as a scalar of type `s`.
    pub fn scalar_constant(&mut self, v: &Value<'a>, s: ScalarType, span: Span) -> R<Tv> {
        self.number_constant(v, Type::scalar(s), span)
    }

    /// A Python number as a constant of type `ty` (a scalar or a splat tensor).
    pub fn number_constant(&mut self, v: &Value<'a>, ty: Type, span: Span) -> R<Tv> {
        let s = ty.elem().and_then(Elem::scalar).expect("numeric constant type");
        let c = match v {
            Value::Float(f) if s.is_float() => Const::Float(*f),
            Value::Float(f) => Const::Int(*f as i64),
            v => {
                let i = v.as_int().expect("a number");
                if s.is_float() {
                    Const::Float(i as f64)
                } else if s == ScalarType::I1 {
                    Const::Int((i != 0) as i64)
                } else {
                    // Wrap to 64 bits; u64 constants above i64::MAX keep their bits.
                    Const::Int(i as u64 as i64)
                }
            }
        };
        self.constant(c, ty, span)
    }

    /// The zero of `t`'s type.
    pub fn zero_like(&mut self, t: &Tv, span: Span) -> R<Tv> {
        let c = if t.scalar().is_some_and(ScalarType::is_float) { Const::Float(0.0) } else { Const::Int(0) };
        self.constant(c, t.ty.clone(), span)
    }

    /// A tensor type of `shape` holding `elem`, laid out like `like` (gluon mode; `None` in auto mode).
    pub fn block_ty(&self, shape: &[u32], elem: Elem, like: Option<&Arc<Layout>>, span: Span) -> R<Type> {
        if shape.is_empty() {
            return Ok(Type::Scalar(elem));
        }
        let layout = match like {
            None => None,
            Some(l) if l.linear.out_dim_sizes().iter().map(|(_, s)| *s).eq(shape.iter().copied()) => Some(l.clone()),
            Some(l) => match &l.spec {
                Some(spec) => {
                    let linear = spec.to_linear(shape).map_err(|e| self.err(span, format!("layout {spec}: {e}")))?;
                    Some(Arc::new(Layout { spec: Some(spec.clone()), linear }))
                }
                None => return Err(self.err(span, "cannot reshape a tensor whose layout has no gluon spelling")),
            },
        };
        Ok(Type::Tensor { shape: shape.into(), elem, layout })
    }

    /// Converts `t` to element type `dst` (Triton's `cast`): ints extend by their signedness, floats round to
    /// nearest even, floats to ints truncate, anything to `int1` compares with zero, pointers reinterpret.
    pub fn cast(&mut self, t: Tv, dst: Dtype, span: Span) -> R<Tv> {
        let Some(src) = t.elem() else {
            return Err(self.err(span, format!("cannot cast {}", t.ty)));
        };
        let Some(dst_elem) = dst.elem() else {
            return Err(self.err(span, "cannot cast to void"));
        };
        if src == dst_elem {
            return Ok(t);
        }
        let ty = t.ty.with_elem(dst_elem);
        match (src, dst_elem) {
            (Elem::Ptr(..), Elem::Ptr(..)) => self.emit1(Op::Bitcast, &[t], ty, span),
            (Elem::Ptr(..), Elem::Scalar(ScalarType::I1)) => {
                let as_int = self.cast(t, Dtype::Scalar(ScalarType::I64), span)?;
                self.compare_zero(as_int, span)
            }
            (Elem::Ptr(..), Elem::Scalar(s)) if s.bits() == 64 && s.is_int() => self.emit1(Op::Cast, &[t], ty, span),
            (Elem::Ptr(..), Elem::Scalar(s)) => {
                Err(self.err(span, format!("cannot cast a pointer to {}", s.triton_name())))
            }
            (Elem::Scalar(s), Elem::Ptr(..)) if s.is_int() => self.emit1(Op::Cast, &[t], ty, span),
            (Elem::Scalar(s), Elem::Ptr(..)) => {
                Err(self.err(span, format!("cannot cast {} to a pointer", s.triton_name())))
            }
            (Elem::Scalar(_), Elem::Scalar(ScalarType::I1)) => self.compare_zero(t, span),
            (Elem::Scalar(_), Elem::Scalar(_)) => self.emit1(Op::Cast, &[t], ty, span),
        }
    }

    /// `t != 0` as `int1`.
    fn compare_zero(&mut self, t: Tv, span: Span) -> R<Tv> {
        let zero = self.zero_like(&t, span)?;
        let ty = t.ty.with_elem(Elem::Scalar(ScalarType::I1));
        self.emit1(Op::Cmp(CmpPred::Ne), &[t, zero], ty, span)
    }

    /// Reinterprets the bits of `t` as `dst` (same width); pointers cast.
    pub fn bitcast(&mut self, t: Tv, dst: Dtype, span: Span) -> R<Tv> {
        let (Some(src), Some(dst_elem)) = (t.elem(), dst.elem()) else {
            return Err(self.err(span, format!("cannot bitcast {} to {dst}", t.ty)));
        };
        if src == dst_elem {
            return Ok(t);
        }
        if src.is_ptr() || dst_elem.is_ptr() {
            return self.cast(t, dst, span);
        }
        if src.bits() != dst_elem.bits() {
            return Err(self.err(
                span,
                format!(
                    "cannot bitcast {} ({} bits) to {dst} ({} bits)",
                    Dtype::from_elem(src),
                    src.bits(),
                    dst_elem.bits()
                ),
            ));
        }
        let ty = t.ty.with_elem(dst_elem);
        self.emit1(Op::Bitcast, &[t], ty, span)
    }

    /// Splats a scalar to the shape (and layout) of `like`.
    pub fn splat_like(&mut self, t: Tv, like: &Type, span: Span) -> R<Tv> {
        if t.is_block() || !like.is_tensor() {
            return Ok(t);
        }
        let ty = like.with_elem(t.elem().expect("scalar"));
        self.emit1(Op::Splat, &[t], ty, span)
    }

    /// Broadcasts `t` to `shape` (NumPy rules: missing leading dims are added, dims of size 1 stretch).
    pub fn broadcast_to(&mut self, t: Tv, shape: &[u32], span: Span) -> R<Tv> {
        if t.shape() == shape {
            return Ok(t);
        }
        let elem = t.elem().expect("tensor element");
        if !t.is_block() {
            let layout = self.default_layout(shape, span)?;
            let ty = self.block_ty(shape, elem, layout.as_ref(), span)?;
            return self.emit1(Op::Splat, &[t], ty, span);
        }
        let mut t = t;
        if t.shape().len() > shape.len() {
            return Err(self.err(span, format!("cannot broadcast {} to shape {shape:?}: it has more dims", t.ty)));
        }
        while t.shape().len() < shape.len() {
            t = self.expand_dims(t, 0, span)?;
        }
        for (i, (&a, &b)) in t.shape().iter().zip(shape).enumerate() {
            if a != b && a != 1 {
                return Err(self.err(
                    span,
                    format!("cannot broadcast shape {:?} to {shape:?}: dim {i} is {a}, not 1 or {b}", t.shape()),
                ));
            }
        }
        let layout = t.ty.layout().map(|l| Arc::new(l.clone()));
        let ty = self.block_ty(shape, elem, layout.as_ref(), span)?;
        self.emit1(Op::Broadcast, &[t], ty, span)
    }

    /// Broadcasts `t` to the shape of `like`; scalars take `like`'s layout too.
    pub fn broadcast_like(&mut self, t: Tv, like: &Type, span: Span) -> R<Tv> {
        if !t.is_block() {
            return self.splat_like(t, like, span);
        }
        let t = self.broadcast_to(t, like.shape(), span)?;
        if t.ty.layout() != like.layout() {
            return Err(
                self.err(span, format!("layout mismatch: {} and {}; convert one with gl.convert_layout", t.ty, like))
            );
        }
        Ok(t)
    }

    /// `expand_dims` of a tensor at `axis` (in gluon mode the operand must have a slice layout of that dim).
    pub fn expand_dims(&mut self, t: Tv, axis: usize, span: Span) -> R<Tv> {
        if !t.is_block() {
            // A scalar; a tensor descriptor (`desc[None, :]`, found by fuzzing) has no element to splat.
            let Some(elem) = t.elem() else {
                return Err(self.err(span, format!("cannot add a dimension to {}", t.ty)));
            };
            let ty = self.block_ty(&[1], elem, None, span)?;
            return self.emit1(Op::Splat, &[t], ty, span);
        }
        if axis > t.shape().len() {
            return Err(self.err(span, format!("axis {axis} is out of range for expand_dims of {}", t.ty)));
        }
        let mut shape = t.shape().to_vec();
        shape.insert(axis, 1);
        let elem = t.elem().expect("tensor element");
        let layout = match t.ty.layout() {
            None => None,
            Some(l) => Some(self.expand_layout(l, axis, &shape, span)?),
        };
        let ty = Type::Tensor { shape: shape.into(), elem, layout };
        self.emit1(Op::ExpandDims { axis: axis as u32 }, &[t], ty, span)
    }

    /// Triton's `broadcast_impl_value`: gives two operands one shape.
    pub fn broadcast_pair(&mut self, a: Tv, b: Tv, span: Span) -> R<(Tv, Tv)> {
        match (a.is_block(), b.is_block()) {
            (false, false) => Ok((a, b)),
            (true, false) => {
                let b = self.splat_like(b, &a.ty, span)?;
                Ok((a, b))
            }
            (false, true) => {
                let a = self.splat_like(a, &b.ty, span)?;
                Ok((a, b))
            }
            (true, true) => {
                let (sa, sb) = (a.shape().to_vec(), b.shape().to_vec());
                let rank = sa.len().max(sb.len());
                let pad = |s: &[u32]| -> Vec<u32> {
                    std::iter::repeat_n(1, rank - s.len()).chain(s.iter().copied()).collect()
                };
                let (pa, pb) = (pad(&sa), pad(&sb));
                let mut shape = Vec::with_capacity(rank);
                for i in 0..rank {
                    let (x, y) = (pa[i], pb[i]);
                    shape.push(if x == 1 {
                        y
                    } else if y == 1 || x == y {
                        x
                    } else {
                        return Err(self.err(
                            span,
                            format!("incompatible shapes for broadcasting: {sa:?} and {sb:?} (dim {i}: {x} vs {y})"),
                        ));
                    });
                }
                let a = self.broadcast_to(a, &shape, span)?;
                let b = self.broadcast_to(b, &shape, span)?;
                if a.ty.layout() != b.ty.layout() {
                    return Err(self.err(
                        span,
                        format!("layout mismatch: {} and {}; convert one with gl.convert_layout", a.ty, b.ty),
                    ));
                }
                Ok((a, b))
            }
        }
    }

    /// Triton's `binary_op_type_checking_impl`: converts Python numbers, checks pointer use, converts both
    /// operands to the computation type (if `arithmetic`), and broadcasts them.
    pub fn binary_operands(
        &mut self,
        a: &Value<'a>,
        b: &Value<'a>,
        opts: Checking,
        op: &str,
        span: Span,
    ) -> R<(Tv, Tv)> {
        let (a_scalar, b_scalar) = (a.is_number(), b.is_number());
        let ta = self.operand_type(a, span)?;
        let tb = self.operand_type(b, span)?;
        let incompatible = |this: &Self| {
            this.err(
                span,
                format!("unsupported operand types for {op}: {} and {}", Dtype::from_elem(ta), Dtype::from_elem(tb)),
            )
        };
        let check_ptr = |x: Elem, y: Elem, allow: bool| -> bool {
            if let Elem::Ptr(..) = x {
                if !allow {
                    return false;
                }
                if y.is_ptr() && x != y {
                    return false;
                }
                if y.scalar().is_some_and(ScalarType::is_float) {
                    return false;
                }
            }
            true
        };
        if !check_ptr(ta, tb, opts.allow_lhs_ptr) || !check_ptr(tb, ta, opts.allow_rhs_ptr) {
            return Err(incompatible(self));
        }
        let (mut x, mut y);
        match (ta, tb) {
            (Elem::Scalar(sa), Elem::Scalar(sb)) if opts.arithmetic => {
                let ret = computation_type(sa, a_scalar, sb, b_scalar, opts.div_or_mod)
                    .map_err(|m| self.err(span, format!("{op}: {m}")))?;
                let neg = |v: &Value| v.as_f64().is_some_and(|f| f < 0.0);
                if ret.is_unsigned_int() && ((a_scalar && neg(a)) || (b_scalar && neg(b))) {
                    return Err(self.err(
                        span,
                        "cannot combine an unsigned tensor with a negative Python number; cast one of them explicitly",
                    ));
                }
                x = self.operand_as(a, ret, span)?;
                y = self.operand_as(b, ret, span)?;
            }
            _ => {
                x = self.to_tensor(a, span)?;
                y = self.to_tensor(b, span)?;
            }
        }
        (x, y) = self.broadcast_pair(x, y, span)?;
        Ok((x, y))
    }

    /// The element type an operand has (Python numbers: their default dtype).
    fn operand_type(&self, v: &Value<'a>, span: Span) -> R<Elem> {
        match v {
            Value::Tensor(t) => t.elem().ok_or_else(|| self.err(span, format!("expected a tensor, got {}", t.ty))),
            v if v.is_number() => Ok(Elem::Scalar(self.py_dtype(v, span)?)),
            other => Err(self.err(span, format!("expected a tensor or a number, got {}", other.describe()))),
        }
    }

    /// An operand converted to `s` (Python numbers become constants of `s` directly).
    pub fn operand_as(&mut self, v: &Value<'a>, s: ScalarType, span: Span) -> R<Tv> {
        match v {
            Value::Tensor(t) => self.cast(t.clone(), Dtype::Scalar(s), span),
            v => self.scalar_constant(v, s, span),
        }
    }
}
