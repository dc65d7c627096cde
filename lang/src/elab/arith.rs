//! Operators: `+ - * / // % << >> & | ^`, comparisons, unary `- ~ not`, `and`/`or`, on compile-time values
//! (Python semantics, [`crate::elab::pyops`]) or, as soon as one operand is a runtime value, as IR with Triton's
//! typing (`semantic.py`: `add`, `sub`, `mul`, `truediv`, `floordiv`, `mod`, bitwise ops, comparisons).

use tessel_tile::ops::{BinOp, CmpPred, Const, Op, UnOp};
use tessel_tile::{Elem, ScalarType};

use crate::ast::{BinOpKind, CmpOp, UnaryOpKind};
use crate::elab::promote::Checking;
use crate::elab::value::{Dtype, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

impl<'a> Elab<'a> {
    /// `a op b`.
    pub fn binop(&mut self, op: BinOpKind, a: Value<'a>, b: Value<'a>, span: Span) -> R<Value<'a>> {
        if !a.is_runtime() && !b.is_runtime() {
            return self.py_binop(op, &a, &b, span);
        }
        let sym = op.symbol();
        let arith = |div_or_mod| Checking { arithmetic: true, div_or_mod, ..Checking::default() };
        let t = match op {
            BinOpKind::Add => {
                let opts = Checking { allow_lhs_ptr: true, allow_rhs_ptr: true, ..arith(false) };
                let (x, y) = self.binary_operands(&a, &b, opts, sym, span)?;
                match (x.elem().unwrap(), y.elem().unwrap()) {
                    (Elem::Ptr(..), Elem::Ptr(..)) => return Err(self.err(span, "cannot add two pointers")),
                    (Elem::Ptr(..), _) => self.emit1(Op::AddPtr, &[x.clone(), y], x.ty, span)?,
                    (_, Elem::Ptr(..)) => self.emit1(Op::AddPtr, &[y.clone(), x], y.ty, span)?,
                    _ => self.arith(BinOp::Add, x, y, span)?,
                }
            }
            BinOpKind::Sub => {
                let opts = Checking { allow_lhs_ptr: true, ..arith(false) };
                let (x, y) = self.binary_operands(&a, &b, opts, sym, span)?;
                if x.elem().unwrap().is_ptr() {
                    let neg = self.emit1(Op::Unary(UnOp::Neg), std::slice::from_ref(&y), y.ty.clone(), span)?;
                    self.emit1(Op::AddPtr, &[x.clone(), neg], x.ty, span)?
                } else {
                    self.arith(BinOp::Sub, x, y, span)?
                }
            }
            BinOpKind::Mul => {
                let (x, y) = self.binary_operands(&a, &b, arith(false), sym, span)?;
                self.arith(BinOp::Mul, x, y, span)?
            }
            BinOpKind::Div => {
                let (x, y) = self.binary_operands(&a, &b, arith(true), sym, span)?;
                self.truediv(x, y, span)?
            }
            BinOpKind::FloorDiv => {
                let (x, y) = self.binary_operands(&a, &b, arith(true), sym, span)?;
                let (sx, sy) = (x.scalar().unwrap(), y.scalar().unwrap());
                if !sx.is_int() || !sy.is_int() {
                    return Err(self.err(
                        span,
                        format!("`//` needs integer operands, got {} and {}", sx.triton_name(), sy.triton_name()),
                    ));
                }
                self.arith(BinOp::Div, x, y, span)?
            }
            BinOpKind::Mod => {
                let (x, y) = self.binary_operands(&a, &b, arith(true), sym, span)?;
                self.arith(BinOp::Rem, x, y, span)?
            }
            BinOpKind::BitAnd | BinOpKind::BitOr | BinOpKind::BitXor | BinOpKind::LShift | BinOpKind::RShift => {
                let (x, y) = self.bitwise_operands(&a, &b, sym, span)?;
                let bop = match op {
                    BinOpKind::BitAnd => BinOp::And,
                    BinOpKind::BitOr => BinOp::Or,
                    BinOpKind::BitXor => BinOp::Xor,
                    BinOpKind::LShift => BinOp::Shl,
                    _ => BinOp::Shr,
                };
                self.arith(bop, x, y, span)?
            }
            BinOpKind::Pow => {
                return Err(self.err_hint(
                    span,
                    "`**` is not supported on tensors",
                    "multiply explicitly, or use tl.exp2/tl.log2",
                ));
            }
            BinOpKind::MatMul => {
                return Err(self.err_hint(span, "`@` is not supported on tensors", "use tl.dot(a, b)"));
            }
        };
        Ok(Value::Tensor(t))
    }

    /// An elementwise binary op on operands of one type.
    pub fn arith(&mut self, op: BinOp, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.clone();
        self.emit1(Op::Binary { op, propagate_nan: false }, &[x, y], ty, span)
    }

    /// Triton's `truediv`: ints become float32, floats meet at the wider mantissa.
    fn truediv(&mut self, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let (sx, sy) = (x.scalar().unwrap(), y.scalar().unwrap());
        let (x, y) = match (sx.is_float(), sy.is_float()) {
            (true, false) => {
                let y = self.cast(y, Dtype::Scalar(sx), span)?;
                (x, y)
            }
            (false, true) => (self.cast(x, Dtype::Scalar(sy), span)?, y),
            (false, false) => {
                let f32 = Dtype::Scalar(ScalarType::F32);
                (self.cast(x, f32, span)?, self.cast(y, f32, span)?)
            }
            (true, true) => {
                if mantissa(sx) > mantissa(sy) {
                    let y = self.cast(y, Dtype::Scalar(sx), span)?;
                    (x, y)
                } else {
                    (self.cast(x, Dtype::Scalar(sy), span)?, y)
                }
            }
        };
        self.arith(BinOp::Div, x, y, span)
    }

    /// Triton's `bitwise_op_type_checking_impl`: integers only, promoted like C.
    fn bitwise_operands(&mut self, a: &Value<'a>, b: &Value<'a>, sym: &str, span: Span) -> R<(Tv, Tv)> {
        let (x, y) = self.binary_operands(a, b, Checking::default(), sym, span)?;
        let (sx, sy) = match (x.scalar(), y.scalar()) {
            (Some(p), Some(q)) if p.is_int() && q.is_int() => (p, q),
            _ => {
                return Err(
                    self.err(span, format!("`{sym}` needs integer operands, got {} and {}", show(&x), show(&y)))
                );
            }
        };
        let ret = crate::elab::promote::integer_promote(sx, sy).map_err(|m| self.err(span, m))?;
        let x = self.cast(x, Dtype::Scalar(ret), span)?;
        let y = self.cast(y, Dtype::Scalar(ret), span)?;
        Ok((x, y))
    }

    /// `a op b` for a comparison.
    pub fn compare(&mut self, op: CmpOp, a: Value<'a>, b: Value<'a>, span: Span) -> R<Value<'a>> {
        if !a.is_runtime() && !b.is_runtime() {
            return self.py_compare(op, &a, &b, span);
        }
        let pred = match op {
            CmpOp::Eq => CmpPred::Eq,
            CmpOp::NotEq => CmpPred::Ne,
            CmpOp::Lt => CmpPred::Lt,
            CmpOp::LtE => CmpPred::Le,
            CmpOp::Gt => CmpPred::Gt,
            CmpOp::GtE => CmpPred::Ge,
            CmpOp::Is | CmpOp::IsNot => {
                // `is` compares identities: a runtime value is never `None`, and is only itself.
                let same = match (&a, &b) {
                    (Value::Tensor(x), Value::Tensor(y)) => x.v == y.v,
                    _ => false,
                };
                return Ok(Value::Bool(same == (op == CmpOp::Is)));
            }
            CmpOp::In | CmpOp::NotIn => return Err(self.err(span, "`in` is not supported on tensors")),
        };
        let opts = Checking { arithmetic: true, allow_lhs_ptr: true, allow_rhs_ptr: true, ..Checking::default() };
        let (x, y) = self.binary_operands(&a, &b, opts, op.symbol(), span)?;
        if x.ty != y.ty {
            return Err(self.err(span, format!("cannot compare {} with {}", x.ty, y.ty)));
        }
        let ty = x.ty.with_elem(Elem::Scalar(ScalarType::I1));
        Ok(Value::Tensor(self.emit1(Op::Cmp(pred), &[x, y], ty, span)?))
    }

    /// `-x`, `+x`, `~x`, `not x`.
    pub fn unary(&mut self, op: UnaryOpKind, v: Value<'a>, span: Span) -> R<Value<'a>> {
        let Value::Tensor(t) = v else { return self.py_unary(op, &v, span) };
        let Some(s) = t.scalar() else {
            return Err(self.err(span, format!("bad operand type for unary `{}`: {}", op.symbol(), t.ty)));
        };
        let out = match op {
            UnaryOpKind::UAdd => t,
            // Triton's `-x` on floats is `0 - x` (semantic.py's `minus`), so `-(+0.0)` is +0.0, not −0.0.
            UnaryOpKind::USub if s.is_float() => {
                let zero = self.constant(Const::Float(0.0), t.ty.clone(), span)?;
                self.arith(BinOp::Sub, zero, t, span)?
            }
            UnaryOpKind::USub => self.emit1(Op::Unary(UnOp::Neg), std::slice::from_ref(&t), t.ty.clone(), span)?,
            UnaryOpKind::Invert | UnaryOpKind::Not => {
                if s.is_float() {
                    return Err(self.err(span, format!("bad operand type for unary `{}`: {}", op.symbol(), t.ty)));
                }
                self.emit1(Op::Unary(UnOp::Not), std::slice::from_ref(&t), t.ty.clone(), span)?
            }
        };
        Ok(Value::Tensor(out))
    }

    /// Runtime `a and b` / `a or b` (Triton's `logical_and` / `logical_or`: both sides as `int1`).
    pub fn logical(&mut self, and: bool, a: Value<'a>, b: Value<'a>, span: Span) -> R<Value<'a>> {
        let x = self.to_tensor(&a, span)?;
        let y = self.to_tensor(&b, span)?;
        let x = self.cast(x, Dtype::Scalar(ScalarType::I1), span)?;
        let y = self.cast(y, Dtype::Scalar(ScalarType::I1), span)?;
        let (x, y) = self.broadcast_pair(x, y, span)?;
        let op = if and { BinOp::And } else { BinOp::Or };
        Ok(Value::Tensor(self.arith(op, x, y, span)?))
    }

    /// `tl.where(cond, x, y)`.
    pub fn where_(&mut self, cond: &Value<'a>, x: &Value<'a>, y: &Value<'a>, span: Span) -> R<Tv> {
        let c = self.to_tensor(cond, span)?;
        let c = self.cast(c, Dtype::Scalar(ScalarType::I1), span)?;
        let opts = Checking { allow_lhs_ptr: true, allow_rhs_ptr: true, arithmetic: true, ..Checking::default() };
        let (x, y) = self.binary_operands(x, y, opts, "where", span)?;
        let (c, x) = self.broadcast_pair(c, x, span)?;
        let (x, y) = self.broadcast_pair(x, y, span)?;
        let (c, x) = self.broadcast_pair(c, x, span)?;
        if x.ty != y.ty {
            return Err(self.err(span, format!("`where` needs two values of one type, got {} and {}", x.ty, y.ty)));
        }
        let c = self.splat_like(c, &x.ty, span)?;
        let ty = x.ty.clone();
        self.emit1(Op::Select, &[c, x, y], ty, span)
    }
}

/// Mantissa bits of a float type (for `truediv` between floats).
fn mantissa(s: ScalarType) -> u32 {
    match s {
        ScalarType::F64 => 52,
        ScalarType::F32 => 23,
        ScalarType::F16 => 10,
        ScalarType::BF16 => 7,
        ScalarType::F8E4M3 => 3,
        ScalarType::F8E5M2 => 2,
        _ => 0,
    }
}

fn show(t: &Tv) -> String {
    t.dtype().map_or_else(|| t.ty.to_string(), |d| d.to_string())
}
