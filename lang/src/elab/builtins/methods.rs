//! Methods: of tensors (registered here when they are no `tl` function: `x.to(...)`, `x.logical_and(y)`; the
//! others are the `tl` functions registered as tensor methods, `x.exp()` being `tl.exp(x)`), and of tensor
//! descriptors, dtypes, strings, lists and dicts.

use std::cell::RefCell;
use std::rc::Rc;

use tessel_tile::{ScalarType, Type};

use crate::elab::args::CallArgs;
use crate::elab::builtins::core::CAST_SIG;
use crate::elab::names::TENSOR;
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Dtype, Value, py_eq, py_str};
use crate::elab::{Elab, R};
use crate::span::Span;

fn list<'a>(items: Vec<Value<'a>>) -> Value<'a> {
    Value::List(Rc::new(RefCell::new(items)))
}

pub(super) fn register(r: &mut Registry) {
    r.add(TENSOR, "to", Handler::Bound(CAST_SIG, |e, b| e.cast_builtin(b))).method();
    // Triton's `and`/`or` of tensors, both sides as int1.
    r.add(
        TENSOR,
        "logical_and",
        Handler::Bound("self, other", |e, b| {
            let (x, y) = (b.req("self").value.clone(), b.req("other").value.clone());
            e.logical(true, x, y, b.span)
        }),
    )
    .method();
    r.add(
        TENSOR,
        "logical_or",
        Handler::Bound("self, other", |e, b| {
            let (x, y) = (b.req("self").value.clone(), b.req("other").value.clone());
            e.logical(false, x, y, b.span)
        }),
    )
    .method();
}

impl<'a> Elab<'a> {
    /// `receiver.name(args)` for non-aggregate receivers.
    pub fn call_method(&mut self, recv: Value<'a>, name: &str, args: CallArgs<'a>, span: Span) -> R<Value<'a>> {
        let args = match self.plugin_method(&recv, name, args, span)? {
            Ok(v) => return Ok(v),
            Err(args) => args,
        };
        match &recv {
            Value::Tensor(t) if matches!(t.ty, Type::TensorDesc { .. }) => {
                let fname = format!("desc.{name}");
                if name == "load" {
                    let b = self.bind(&fname, "offsets", args)?;
                    Ok(Value::Tensor(self.desc_load(t.clone(), b.req("offsets"), &fname, span)?))
                } else {
                    let b = self.bind(&fname, "offsets, value", args)?;
                    self.desc_store(t.clone(), b.req("offsets"), b.req("value"), &fname, span)?;
                    Ok(Value::None)
                }
            }
            Value::Tensor(_) => self.call_tensor_method(name, args, recv.clone(), span),
            Value::Dtype(d) => {
                self.bind(&format!("dtype.{name}"), "", args)?;
                self.dtype_method(*d, name, span).map(Value::Bool)
            }
            Value::Str(s) => self.str_method(s, name, args, span),
            // `int.bit_length()`: the bits needed for |i| (`(8).bit_length() == 4`, `(0).bit_length() == 0`).
            Value::Int(i) if name == "bit_length" => {
                self.bind("int.bit_length", "", args)?;
                Ok(Value::Int((128 - i.unsigned_abs().leading_zeros()) as i128))
            }
            Value::List(l) => {
                let l = l.clone();
                match name {
                    "append" => {
                        let b = self.bind("list.append", "x", args)?;
                        l.borrow_mut().push(b.req("x").value.clone());
                        Ok(Value::None)
                    }
                    "extend" => {
                        let b = self.bind("list.extend", "iterable", args)?;
                        let items = self.iterate(&b.req("iterable").value.clone(), span)?;
                        l.borrow_mut().extend(items);
                        Ok(Value::None)
                    }
                    "insert" => {
                        let b = self.bind("list.insert", "i, x", args)?;
                        let i = self.const_int(b.req("i"), "list.insert", "i")?;
                        let n = l.borrow().len() as i128;
                        let i = if i < 0 { (i + n).max(0) } else { i.min(n) };
                        l.borrow_mut().insert(i as usize, b.req("x").value.clone());
                        Ok(Value::None)
                    }
                    "pop" => {
                        let b = self.bind("list.pop", "i?", args)?;
                        let n = l.borrow().len() as i128;
                        let i = b.opt("i").map_or(Ok(n - 1), |a| self.const_int(a, "list.pop", "i"))?;
                        let i = if i < 0 { i + n } else { i };
                        if !(0..n).contains(&i) {
                            return Err(self.err(span, "pop index out of range"));
                        }
                        Ok(l.borrow_mut().remove(i as usize))
                    }
                    "copy" => Ok(list(l.borrow().clone())),
                    _ => self.seq_method(&recv, name, args, span),
                }
            }
            Value::Tuple(_) => self.seq_method(&recv, name, args, span),
            Value::Dict(d) => {
                let d = d.borrow().clone();
                match name {
                    "keys" => Ok(list(d.iter().map(|(k, _)| k.clone()).collect())),
                    "values" => Ok(list(d.iter().map(|(_, v)| v.clone()).collect())),
                    "items" => Ok(list(d.iter().map(|(k, v)| Value::tuple(vec![k.clone(), v.clone()])).collect())),
                    "get" => {
                        let b = self.bind("dict.get", "key, default?", args)?;
                        let key = &b.req("key").value;
                        Ok(d.iter()
                            .find(|(k, _)| py_eq(k, key) == Some(true))
                            .map(|(_, v)| v.clone())
                            .unwrap_or_else(|| b.opt("default").map_or(Value::None, |a| a.value.clone())))
                    }
                    _ => Err(self.err(span, format!("dict has no method `{name}`"))),
                }
            }
            other => Err(self.err(span, format!("{} has no method `{name}`", other.type_name()))),
        }
    }

    fn seq_method(&mut self, recv: &Value<'a>, name: &str, args: CallArgs<'a>, span: Span) -> R<Value<'a>> {
        let items = recv.items().unwrap();
        match name {
            "index" | "count" => {
                let b = self.bind(name, "x", args)?;
                let x = &b.req("x").value;
                let hits: Vec<usize> =
                    items.iter().enumerate().filter(|(_, v)| py_eq(v, x) == Some(true)).map(|(i, _)| i).collect();
                if name == "count" {
                    return Ok(Value::Int(hits.len() as i128));
                }
                hits.first()
                    .map(|&i| Value::Int(i as i128))
                    .ok_or_else(|| self.err(span, format!("{} is not in the sequence", x.describe())))
            }
            _ => Err(self.err(span, format!("{} has no method `{name}`", recv.type_name()))),
        }
    }

    fn str_method(&mut self, s: &str, name: &str, args: CallArgs<'a>, span: Span) -> R<Value<'a>> {
        match name {
            "format" => {
                let mut out = String::new();
                let mut next = 0;
                let mut chars = s.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '{' if chars.peek() == Some(&'{') => {
                            chars.next();
                            out.push('{');
                        }
                        '}' if chars.peek() == Some(&'}') => {
                            chars.next();
                            out.push('}');
                        }
                        '{' => {
                            let mut field = String::new();
                            for c in chars.by_ref() {
                                if c == '}' {
                                    break;
                                }
                                field.push(c);
                            }
                            let (key, spec) = field.split_once(':').unwrap_or((&field, ""));
                            let v = if key.is_empty() {
                                next += 1;
                                args.pos.get(next - 1).map(|a| a.value.clone())
                            } else if let Ok(i) = key.parse::<usize>() {
                                args.pos.get(i).map(|a| a.value.clone())
                            } else {
                                args.kw.iter().find(|(k, _)| k == key).map(|(_, a)| a.value.clone())
                            };
                            let v = v.ok_or_else(|| {
                                self.err(span, format!("missing argument for format field {{{field}}}"))
                            })?;
                            let text = crate::elab::expr::format_spec(&v, spec)
                                .ok_or_else(|| self.err(span, format!("unsupported format spec `{spec}`")))?;
                            out.push_str(&text);
                        }
                        c => out.push(c),
                    }
                }
                Ok(Value::str(&out))
            }
            "join" => {
                let b = self.bind("str.join", "iterable", args)?;
                let items = self.iterate(&b.req("iterable").value.clone(), span)?;
                Ok(Value::str(&items.iter().map(py_str).collect::<Vec<_>>().join(s)))
            }
            "upper" => Ok(Value::str(&s.to_uppercase())),
            "lower" => Ok(Value::str(&s.to_lowercase())),
            "strip" => Ok(Value::str(s.trim())),
            "startswith" | "endswith" => {
                let b = self.bind(name, "prefix", args)?;
                let p = self.const_str(b.req("prefix"), name, "prefix")?;
                Ok(Value::Bool(if name == "startswith" { s.starts_with(&p) } else { s.ends_with(&p) }))
            }
            "replace" => {
                let b = self.bind("str.replace", "old, new", args)?;
                let (o, n) = (
                    self.const_str(b.req("old"), "str.replace", "old")?,
                    self.const_str(b.req("new"), "str.replace", "new")?,
                );
                Ok(Value::str(&s.replace(&o, &n)))
            }
            "split" => {
                let b = self.bind("str.split", "sep?", args)?;
                let parts: Vec<Value> = match b.opt("sep") {
                    Some(a) => {
                        let sep = self.const_str(a, "str.split", "sep")?;
                        s.split(sep.as_str()).map(Value::str).collect()
                    }
                    None => s.split_whitespace().map(Value::str).collect(),
                };
                Ok(list(parts))
            }
            _ => Err(self.err(span, format!("str has no method `{name}`"))),
        }
    }

    /// Properties of a dtype (`primitive_bitwidth`, `element_ty`...); `None` if `name` is one of its methods.
    pub fn dtype_attr(&self, d: Dtype, name: &str, span: Span) -> R<Option<Value<'a>>> {
        let bits = d.elem().map_or(0, |e| e.bits());
        Ok(Some(match name {
            "primitive_bitwidth" => Value::Int(bits as i128),
            "int_bitwidth" | "fp_mantissa_width" | "element_ty" | "name" | "itemsize" => match (name, d) {
                ("int_bitwidth", Dtype::Scalar(s)) if s.is_int() => Value::Int(bits as i128),
                ("fp_mantissa_width", Dtype::Scalar(s)) if s.is_float() => Value::Int(match s {
                    ScalarType::F64 => 52,
                    ScalarType::F32 => 23,
                    ScalarType::F16 => 10,
                    ScalarType::BF16 => 7,
                    ScalarType::F8E4M3 => 3,
                    _ => 2,
                }),
                ("element_ty", Dtype::Ptr(s)) => Value::Dtype(Dtype::Scalar(s)),
                ("name", d) => Value::str(&d.to_string()),
                ("itemsize", _) => Value::Int((bits as i128 + 7) / 8),
                _ => return Err(self.err(span, format!("dtype {d} has no attribute `{name}`"))),
            },
            m if DTYPE_METHODS.contains(&m) => return Ok(None),
            _ => {
                let mut e = self.err(span, format!("dtype {d} has no attribute `{name}`"));
                if let Some(best) = crate::elab::names::closest(name, DTYPE_METHODS.iter().copied()) {
                    e.diag = e.diag.with_hint(format!("did you mean `{best}()`?"));
                }
                return Err(e);
            }
        }))
    }

    fn dtype_method(&self, d: Dtype, name: &str, _span: Span) -> R<bool> {
        let s = d.scalar();
        let is = |f: fn(ScalarType) -> bool| s.is_some_and(f);
        Ok(match name {
            "is_floating" => is(ScalarType::is_float),
            "is_int" => is(ScalarType::is_int),
            "is_int_signed" => is(|s| s.is_signed_int() || s == ScalarType::I1),
            "is_int_unsigned" => is(ScalarType::is_unsigned_int),
            "is_bool" | "is_int1" => s == Some(ScalarType::I1),
            "is_fp8" => is(|s| matches!(s, ScalarType::F8E4M3 | ScalarType::F8E5M2)),
            "is_fp8e4nv" => s == Some(ScalarType::F8E4M3),
            "is_fp8e5" => s == Some(ScalarType::F8E5M2),
            "is_fp16" => s == Some(ScalarType::F16),
            "is_bf16" => s == Some(ScalarType::BF16),
            "is_fp32" => s == Some(ScalarType::F32),
            "is_fp64" => s == Some(ScalarType::F64),
            "is_standard_floating" => {
                is(|s| matches!(s, ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 | ScalarType::F64))
            }
            "is_ptr" => matches!(d, Dtype::Ptr(_)),
            "is_void" => d == Dtype::Void,
            "is_block" => false,
            "is_int8" => s == Some(ScalarType::I8),
            "is_int16" => s == Some(ScalarType::I16),
            "is_int32" => s == Some(ScalarType::I32),
            "is_int64" => s == Some(ScalarType::I64),
            "is_uint8" => s == Some(ScalarType::U8),
            "is_uint16" => s == Some(ScalarType::U16),
            "is_uint32" => s == Some(ScalarType::U32),
            "is_uint64" => s == Some(ScalarType::U64),
            _ => unreachable!("checked by dtype_attr"),
        })
    }
}

const DTYPE_METHODS: &[&str] = &[
    "is_floating",
    "is_int",
    "is_int_signed",
    "is_int_unsigned",
    "is_bool",
    "is_int1",
    "is_fp8",
    "is_fp8e4nv",
    "is_fp8e5",
    "is_fp16",
    "is_bf16",
    "is_fp32",
    "is_fp64",
    "is_standard_floating",
    "is_ptr",
    "is_void",
    "is_block",
    "is_int8",
    "is_int16",
    "is_int32",
    "is_int64",
    "is_uint8",
    "is_uint16",
    "is_uint32",
    "is_uint64",
];
