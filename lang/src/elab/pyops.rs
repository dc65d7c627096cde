//! Python semantics of operators on compile-time values: arbitrary-looking ints (128-bit here, with overflow
//! reported), floats, bools, strings, tuples and lists. `//` and `%` floor as in Python (unlike Triton's runtime
//! integer division, which truncates like C).

use std::rc::Rc;

use crate::ast::{BinOpKind, CmpOp, UnaryOpKind};
use crate::elab::value::{Value, py_eq};
use crate::elab::{Elab, R};
use crate::span::Span;

/// The most items (or bytes, for a string) a compile-time sequence built by `+` or `*` may have.
const MAX_SEQUENCE: i128 = 1 << 20;

impl<'a> Elab<'a> {
    pub fn py_binop(&mut self, op: BinOpKind, a: &Value<'a>, b: &Value<'a>, span: Span) -> R<Value<'a>> {
        let unsupported = |this: &Self| {
            this.err(
                span,
                format!("unsupported operand types for {}: {} and {}", op.symbol(), a.type_name(), b.type_name()),
            )
        };
        if a.is_number() && b.is_number() {
            let both_bool = matches!((a, b), (Value::Bool(_), Value::Bool(_)));
            let floats = matches!(a, Value::Float(_)) || matches!(b, Value::Float(_));
            if matches!(op, BinOpKind::BitAnd | BinOpKind::BitOr | BinOpKind::BitXor) && both_bool {
                let (x, y) = (a.truth().unwrap(), b.truth().unwrap());
                return Ok(Value::Bool(match op {
                    BinOpKind::BitAnd => x & y,
                    BinOpKind::BitOr => x | y,
                    _ => x ^ y,
                }));
            }
            if floats || op == BinOpKind::Div {
                let (x, y) = (a.as_f64().unwrap(), b.as_f64().unwrap());
                let zero_div = |this: &Self| this.err(span, "division by zero");
                let r = match op {
                    BinOpKind::Add => x + y,
                    BinOpKind::Sub => x - y,
                    BinOpKind::Mul => x * y,
                    BinOpKind::Div if y == 0.0 => return Err(zero_div(self)),
                    BinOpKind::Div => x / y,
                    BinOpKind::FloorDiv if y == 0.0 => return Err(zero_div(self)),
                    BinOpKind::FloorDiv => (x / y).floor(),
                    BinOpKind::Mod if y == 0.0 => return Err(zero_div(self)),
                    BinOpKind::Mod => {
                        let r = x % y;
                        if r != 0.0 && (r < 0.0) != (y < 0.0) { r + y } else { r }
                    }
                    BinOpKind::Pow => x.powf(y),
                    _ => return Err(unsupported(self)),
                };
                return Ok(Value::Float(r));
            }
            let (x, y) = (a.as_int().unwrap(), b.as_int().unwrap());
            let overflow = |this: &Self| this.err(span, format!("integer overflow in {x} {} {y}", op.symbol()));
            let r = match op {
                BinOpKind::Add => x.checked_add(y),
                BinOpKind::Sub => x.checked_sub(y),
                BinOpKind::Mul => x.checked_mul(y),
                BinOpKind::FloorDiv | BinOpKind::Mod if y == 0 => {
                    return Err(self.err(span, "integer division or modulo by zero"));
                }
                BinOpKind::FloorDiv => {
                    let q = x / y;
                    Some(if x % y != 0 && ((x < 0) != (y < 0)) { q - 1 } else { q })
                }
                BinOpKind::Mod => {
                    let r = x % y;
                    Some(if r != 0 && (r < 0) != (y < 0) { r + y } else { r })
                }
                BinOpKind::Pow if y < 0 => return Ok(Value::Float((x as f64).powf(y as f64))),
                BinOpKind::Pow => u32::try_from(y).ok().and_then(|e| x.checked_pow(e)),
                BinOpKind::LShift if y < 0 => return Err(self.err(span, "negative shift count")),
                BinOpKind::LShift => {
                    u32::try_from(y).ok().filter(|&s| s < 127).and_then(|s| x.checked_shl(s)).filter(|r| r >> y == x)
                }
                BinOpKind::RShift if y < 0 => return Err(self.err(span, "negative shift count")),
                BinOpKind::RShift => Some(x >> y.min(127)),
                BinOpKind::BitAnd => Some(x & y),
                BinOpKind::BitOr => Some(x | y),
                BinOpKind::BitXor => Some(x ^ y),
                BinOpKind::Div | BinOpKind::MatMul => return Err(unsupported(self)),
            };
            return r.map(Value::Int).ok_or_else(|| overflow(self));
        }
        // Sequences, no longer than MAX_SEQUENCE: `'a' * 10**12` must be an error, not an allocation failure.
        let len = |v: &Value| match v {
            Value::Str(s) => s.len() as i128,
            Value::Tuple(_) | Value::List(_) => v.items().map_or(0, |i| i.len() as i128),
            _ => 0,
        };
        let total = match (op, a, b) {
            (BinOpKind::Add, x, y) => len(x) + len(y),
            (BinOpKind::Mul, seq, Value::Int(n)) | (BinOpKind::Mul, Value::Int(n), seq) => {
                len(seq).saturating_mul((*n).max(0))
            }
            _ => 0,
        };
        if total > MAX_SEQUENCE {
            return Err(self
                .err(span, format!("this makes a compile-time sequence of {total} items, more than {MAX_SEQUENCE}")));
        }
        match (op, a, b) {
            (BinOpKind::Add, Value::Str(x), Value::Str(y)) => Ok(Value::Str(Rc::from(format!("{x}{y}").as_str()))),
            (BinOpKind::Add, Value::Tuple(x), Value::Tuple(y)) => {
                Ok(Value::tuple(x.iter().chain(y.iter()).cloned().collect()))
            }
            (BinOpKind::Add, Value::List(x), Value::List(y)) => {
                let items: Vec<Value> = x.borrow().iter().chain(y.borrow().iter()).cloned().collect();
                Ok(Value::List(Rc::new(std::cell::RefCell::new(items))))
            }
            (BinOpKind::Mul, seq, Value::Int(n)) | (BinOpKind::Mul, Value::Int(n), seq)
                if matches!(seq, Value::Str(_) | Value::Tuple(_) | Value::List(_)) =>
            {
                let n = (*n).max(0) as usize;
                match seq {
                    Value::Str(s) => Ok(Value::Str(Rc::from(s.repeat(n).as_str()))),
                    Value::Tuple(t) => Ok(Value::tuple(t.iter().cloned().cycle().take(t.len() * n).collect())),
                    Value::List(l) => {
                        let l = l.borrow();
                        let items = l.iter().cloned().cycle().take(l.len() * n).collect();
                        Ok(Value::List(Rc::new(std::cell::RefCell::new(items))))
                    }
                    _ => unreachable!(),
                }
            }
            (BinOpKind::Mod, Value::Str(fmt), args) => self.percent_format(fmt, args, span),
            _ => Err(unsupported(self)),
        }
    }

    /// `"..." % args` (old-style formatting: `%s`, `%d`, `%r`, `%%`).
    fn percent_format(&self, fmt: &str, args: &Value<'a>, span: Span) -> R<Value<'a>> {
        let items = match args {
            Value::Tuple(t) => t.as_ref().clone(),
            other => vec![other.clone()],
        };
        let mut it = items.iter();
        let mut out = String::new();
        let mut chars = fmt.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some(k @ ('s' | 'd' | 'r' | 'i')) => {
                    let v = it.next().ok_or_else(|| self.err(span, "not enough arguments for format string"))?;
                    out.push_str(&if k == 'r' { crate::elab::value::repr(v) } else { crate::elab::value::py_str(v) });
                }
                _ => return Err(self.err(span, "unsupported format character")),
            }
        }
        Ok(Value::str(&out))
    }

    pub fn py_compare(&mut self, op: CmpOp, a: &Value<'a>, b: &Value<'a>, span: Span) -> R<Value<'a>> {
        use std::cmp::Ordering;
        let r = match op {
            CmpOp::Eq => py_eq(a, b).unwrap_or(false),
            CmpOp::NotEq => !py_eq(a, b).unwrap_or(false),
            CmpOp::Is | CmpOp::IsNot => {
                let same = match (a, b) {
                    (Value::None, Value::None) | (Value::Ellipsis, Value::Ellipsis) => true,
                    (Value::Bool(x), Value::Bool(y)) => x == y,
                    (Value::None, _) | (_, Value::None) => false,
                    (Value::Dtype(_) | Value::Func(_) | Value::Class(_) | Value::Builtin(_) | Value::Module(_), _) => {
                        py_eq(a, b).unwrap_or(false)
                    }
                    (Value::Instance(x), Value::Instance(y)) => Rc::ptr_eq(x, y),
                    _ => false,
                };
                same == (op == CmpOp::Is)
            }
            CmpOp::In | CmpOp::NotIn => {
                let found = match b {
                    Value::Tuple(_) | Value::List(_) => b.items().unwrap().iter().any(|x| py_eq(a, x).unwrap_or(false)),
                    Value::Dict(d) => d.borrow().iter().any(|(k, _)| py_eq(a, k).unwrap_or(false)),
                    Value::Str(s) => match a {
                        Value::Str(x) => s.contains(x.as_ref()),
                        _ => return Err(self.err(span, "`in <str>` needs a string on the left")),
                    },
                    other => {
                        return Err(self.err(span, format!("argument of type {} is not iterable", other.type_name())));
                    }
                };
                found == (op == CmpOp::In)
            }
            CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE => {
                let ord = py_cmp(a, b).ok_or_else(|| {
                    self.err(
                        span,
                        format!("`{}` is not supported between {} and {}", op.symbol(), a.type_name(), b.type_name()),
                    )
                })?;
                match op {
                    CmpOp::Lt => ord == Ordering::Less,
                    CmpOp::LtE => ord != Ordering::Greater,
                    CmpOp::Gt => ord == Ordering::Greater,
                    _ => ord != Ordering::Less,
                }
            }
        };
        Ok(Value::Bool(r))
    }

    pub fn py_unary(&mut self, op: UnaryOpKind, v: &Value<'a>, span: Span) -> R<Value<'a>> {
        Ok(match (op, v) {
            (UnaryOpKind::Not, v) => match v.truth() {
                Some(t) => Value::Bool(!t),
                None => return Err(self.err(span, format!("`not` is not defined on {}", v.type_name()))),
            },
            (UnaryOpKind::UAdd, Value::Bool(b)) => Value::Int(*b as i128),
            (UnaryOpKind::UAdd, v @ (Value::Int(_) | Value::Float(_))) => v.clone(),
            (UnaryOpKind::USub, Value::Float(f)) => Value::Float(-f),
            (UnaryOpKind::USub, v) if v.as_int().is_some() => {
                Value::Int(v.as_int().unwrap().checked_neg().ok_or_else(|| self.err(span, "integer overflow"))?)
            }
            (UnaryOpKind::Invert, v) if v.as_int().is_some() => Value::Int(!v.as_int().unwrap()),
            _ => {
                return Err(self.err(span, format!("bad operand type for unary `{}`: {}", op.symbol(), v.type_name())));
            }
        })
    }
}

/// Python ordering of numbers, strings, tuples and lists.
pub fn py_cmp<'a>(a: &Value<'a>, b: &Value<'a>) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (x, y) if x.is_number() && y.is_number() => match (x, y) {
            (Value::Float(_), _) | (_, Value::Float(_)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
            _ => Some(x.as_int()?.cmp(&y.as_int()?)),
        },
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        (Value::Tuple(_), Value::Tuple(_)) | (Value::List(_), Value::List(_)) => {
            let (x, y) = (a.items()?, b.items()?);
            for (p, q) in x.iter().zip(&y) {
                match py_cmp(p, q)? {
                    std::cmp::Ordering::Equal => continue,
                    o => return Some(o),
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        _ => None,
    }
}
