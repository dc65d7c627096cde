//! Python's builtins at compile time (`range`, `len`, `min`, `isinstance`, `enumerate`...), `triton.*` host
//! helpers usable in kernels (`triton.cdiv`, `triton.next_power_of_2`), and methods: of tensors (bound to the
//! `tl` function of the same name), tensor descriptors, dtypes, strings, lists and dicts.

use std::cell::RefCell;
use std::rc::Rc;

use crate::elab::args::{Arg, CallArgs};
use crate::elab::value::{Builtin, Dtype, Ns, Value, py_eq, py_str};
use crate::elab::{Elab, R};
use crate::span::Span;
use tessel_tile::{ScalarType, Type};

fn list<'a>(items: Vec<Value<'a>>) -> Value<'a> {
    Value::List(Rc::new(RefCell::new(items)))
}

impl<'a> Elab<'a> {
    pub fn call_python(&mut self, name: &str, fname: &str, args: CallArgs<'a>) -> R<Value<'a>> {
        let span = args.span;
        let jit = !self.frames.last().is_some_and(|f| f.compile_time_only);
        match name {
            "range" => self.range_value(false, true, fname, args).map(Value::Range),
            "len" => {
                let b = self.bind(fname, "obj", args)?;
                let v = &b.req("obj").value;
                match v {
                    Value::Tuple(_) | Value::List(_) => Ok(Value::Int(v.items().unwrap().len() as i128)),
                    Value::Str(s) => Ok(Value::Int(s.chars().count() as i128)),
                    Value::Dict(d) => Ok(Value::Int(d.borrow().len() as i128)),
                    Value::Tensor(t) if t.is_block() => Ok(Value::Int(t.shape()[0] as i128)),
                    other => Err(self.err(span, format!("{} has no len()", other.type_name()))),
                }
            }
            "min" | "max" => {
                let runtime = args.pos.iter().any(|a| a.value.is_runtime());
                if runtime && jit && args.pos.len() == 2 {
                    // Triton maps `min`/`max` on tensors to `tl.minimum`/`tl.maximum`.
                    let b = Builtin { ns: Ns::Tl, name: if name == "min" { "minimum" } else { "maximum" } };
                    return self.call_builtin(b, args);
                }
                let items = if args.pos.len() == 1 {
                    self.iterate(&args.pos[0].value.clone(), span)?
                } else {
                    args.pos.iter().map(|a| a.value.clone()).collect()
                };
                if items.is_empty() {
                    return Err(self.err(span, format!("{name}() of an empty sequence")));
                }
                let mut best = items[0].clone();
                for v in &items[1..] {
                    let ord = crate::elab::pyops::py_cmp(v, &best).ok_or_else(|| {
                        self.err(
                            span,
                            format!(
                                "{name}() needs comparable compile-time values, got {} and {}",
                                v.describe(),
                                best.describe()
                            ),
                        )
                    })?;
                    if (name == "min" && ord.is_lt()) || (name == "max" && ord.is_gt()) {
                        best = v.clone();
                    }
                }
                Ok(best)
            }
            "abs" => {
                let b = self.bind(fname, "x", args)?;
                match &b.req("x").value {
                    Value::Int(i) => Ok(Value::Int(i.checked_abs().ok_or_else(|| self.err(span, "integer overflow"))?)),
                    Value::Bool(x) => Ok(Value::Int(*x as i128)),
                    Value::Float(f) => Ok(Value::Float(f.abs())),
                    Value::Tensor(_) => {
                        let args = CallArgs { pos: vec![b.req("x").clone()], kw: vec![], span };
                        self.call_builtin(Builtin { ns: Ns::Tl, name: "abs" }, args)
                    }
                    other => Err(self.err(span, format!("bad operand for abs(): {}", other.type_name()))),
                }
            }
            "int" | "float" | "bool" | "str" => {
                let b = self.bind(fname, "x?", args)?;
                let v = b.opt("x").map_or(Value::Int(0), |a| a.value.clone());
                if let Value::Tensor(t) = &v {
                    return Err(self.err_hint(
                        span,
                        format!("{name}() of a runtime value ({}) cannot be computed at compile time", t.ty),
                        "use `.to(dtype)` to convert tensors",
                    ));
                }
                Ok(match name {
                    "bool" => Value::Bool(v.truth().unwrap_or(true)),
                    "str" => Value::str(&py_str(&v)),
                    "int" => match &v {
                        Value::Float(f) if f.is_finite() => Value::Int(f.trunc() as i128),
                        Value::Str(s) => Value::Int(
                            s.trim()
                                .parse()
                                .map_err(|_| self.err(span, format!("invalid literal for int(): {s:?}")))?,
                        ),
                        v => {
                            Value::Int(v.as_int().ok_or_else(|| self.err(span, format!("int() of {}", v.describe())))?)
                        }
                    },
                    _ => match &v {
                        Value::Str(s) => Value::Float(
                            s.trim()
                                .parse()
                                .map_err(|_| self.err(span, format!("could not convert {s:?} to float")))?,
                        ),
                        v => Value::Float(
                            v.as_f64().ok_or_else(|| self.err(span, format!("float() of {}", v.describe())))?,
                        ),
                    },
                })
            }
            "tuple" | "list" => {
                let b = self.bind(fname, "iterable?", args)?;
                let items = match b.opt("iterable") {
                    Some(a) => self.iterate(&a.value.clone(), a.span)?,
                    None => Vec::new(),
                };
                Ok(if name == "tuple" { Value::tuple(items) } else { list(items) })
            }
            "dict" => {
                let mut out = Vec::new();
                for (k, a) in args.kw {
                    out.push((Value::str(&k), a.value));
                }
                Ok(Value::Dict(Rc::new(RefCell::new(out))))
            }
            "isinstance" => {
                let b = self.bind(fname, "obj, classinfo", args)?;
                let obj = b.req("obj").value.clone();
                let classes = match &b.req("classinfo").value {
                    Value::Tuple(t) => t.as_ref().clone(),
                    other => vec![other.clone()],
                };
                let mut hit = false;
                for c in &classes {
                    hit |= self.is_instance(&obj, c, b.req("classinfo").span)?;
                }
                Ok(Value::Bool(hit))
            }
            "print" => {
                if jit && args.pos.iter().any(|a| a.value.is_runtime()) {
                    let (prefix, rest) = match args.pos.first() {
                        Some(Arg { value: Value::Str(s), .. }) => (s.to_string(), &args.pos[1..]),
                        _ => (String::new(), &args.pos[..]),
                    };
                    let values = rest.iter().map(|a| self.tensor_arg(a, fname, "args")).collect::<R<Vec<_>>>()?;
                    self.device_print(prefix, values, false, span)?;
                } else {
                    let line = args
                        .pos
                        .iter()
                        .map(|a| crate::elab::builtins::debug::static_text(&a.value))
                        .collect::<Vec<_>>()
                        .join(" ");
                    self.static_prints.push(line);
                }
                Ok(Value::None)
            }
            "enumerate" => {
                let b = self.bind(fname, "iterable, start?", args)?;
                let start = b.opt("start").map_or(Ok(0), |a| self.const_int(a, fname, "start"))?;
                let items = self.iterate(&b.req("iterable").value.clone(), span)?;
                Ok(list(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| Value::tuple(vec![Value::Int(start + i as i128), v]))
                        .collect(),
                ))
            }
            "zip" => {
                let mut seqs = Vec::new();
                for a in &args.pos {
                    seqs.push(self.iterate(&a.value.clone(), a.span)?);
                }
                let n = seqs.iter().map(Vec::len).min().unwrap_or(0);
                Ok(list((0..n).map(|i| Value::tuple(seqs.iter().map(|s| s[i].clone()).collect())).collect()))
            }
            "sum" => {
                let b = self.bind(fname, "iterable, start?", args)?;
                let mut acc = b.opt("start").map_or(Value::Int(0), |a| a.value.clone());
                for v in self.iterate(&b.req("iterable").value.clone(), span)? {
                    acc = self.binop(crate::ast::BinOpKind::Add, acc, v, span)?;
                }
                Ok(acc)
            }
            "any" | "all" => {
                let b = self.bind(fname, "iterable", args)?;
                let items = self.iterate(&b.req("iterable").value.clone(), span)?;
                let mut out = name == "all";
                for v in items {
                    let t = v.truth().ok_or_else(|| self.err(span, format!("{name}() needs compile-time values")))?;
                    if name == "any" { out |= t } else { out &= t }
                }
                Ok(Value::Bool(out))
            }
            "sorted" | "reversed" => {
                let b = self.bind(fname, "iterable, reverse?", args)?;
                let mut items = self.iterate(&b.req("iterable").value.clone(), span)?;
                if name == "sorted" {
                    let mut err = false;
                    items.sort_by(|x, y| {
                        crate::elab::pyops::py_cmp(x, y).unwrap_or_else(|| {
                            err = true;
                            std::cmp::Ordering::Equal
                        })
                    });
                    if err {
                        return Err(self.err(span, "sorted() needs comparable compile-time values"));
                    }
                    if let Some(r) = b.opt("reverse")
                        && self.const_bool(r, fname, "reverse")?
                    {
                        items.reverse();
                    }
                } else {
                    items.reverse();
                }
                Ok(list(items))
            }
            "getattr" | "hasattr" => {
                let b = self.bind(fname, "obj, name, default?", args)?;
                let attr = self.const_str(b.req("name"), fname, "name")?;
                let r = self.get_attr(b.req("obj").value.clone(), &attr, span);
                match (name, r) {
                    ("hasattr", r) => Ok(Value::Bool(r.is_ok())),
                    (_, Ok(v)) => Ok(v),
                    (_, Err(e)) => match b.opt("default") {
                        Some(d) => Ok(d.value.clone()),
                        None => Err(e),
                    },
                }
            }
            "round" | "divmod" | "pow" => {
                let b = self.bind(fname, "a, b?", args)?;
                let a = b.req("a").value.clone();
                match name {
                    "round" => match (a.as_f64(), b.opt("b")) {
                        (Some(f), None) => {
                            let r = f.round();
                            // Python rounds halves to even.
                            let r = if (f - f.trunc()).abs() == 0.5 { 2.0 * (f / 2.0).round() } else { r };
                            Ok(Value::Int(r as i128))
                        }
                        (Some(f), Some(n)) => {
                            let n = self.const_int(n, fname, "ndigits")? as i32;
                            let p = 10f64.powi(n);
                            Ok(Value::Float((f * p).round() / p))
                        }
                        _ => Err(self.err(span, "round() needs a number")),
                    },
                    "divmod" => {
                        let bv = b
                            .opt("b")
                            .map(|x| x.value.clone())
                            .ok_or_else(|| self.err(span, "divmod() needs two arguments"))?;
                        let q = self.py_binop(crate::ast::BinOpKind::FloorDiv, &a, &bv, span)?;
                        let r = self.py_binop(crate::ast::BinOpKind::Mod, &a, &bv, span)?;
                        Ok(Value::tuple(vec![q, r]))
                    }
                    _ => {
                        let bv = b
                            .opt("b")
                            .map(|x| x.value.clone())
                            .ok_or_else(|| self.err(span, "pow() needs two arguments"))?;
                        self.binop(crate::ast::BinOpKind::Pow, a, bv, span)
                    }
                }
            }
            "type" => Err(self.err(span, "type() is not supported in kernels; use isinstance()")),
            "import_module" => {
                let b = self.bind(fname, "name, package=None", args)?;
                let name = self.const_str(b.req("name"), fname, "name")?;
                match self.set_module(&name) {
                    Some(m) => Ok(Value::UserModule(m)),
                    None => Err(self.err_hint(
                        span,
                        format!("the module `{name}` was not loaded"),
                        "tessel loads `importlib.import_module(\"NAME\")` assigned at the top of the kernel's file \
                         from NAME.py beside it (the CLI and `tessel.load` of a file do)",
                    )),
                }
            }
            "staticmethod" | "property" => Err(self.err(span, format!("`{name}` is a decorator"))),
            _ => {
                // Exception classes: `ValueError("...")` builds a message (used by `raise`).
                let msg = args.pos.first().map(|a| py_str(&a.value)).unwrap_or_default();
                Ok(Value::str(&format!("{name}: {msg}")))
            }
        }
    }

    fn is_instance(&mut self, obj: &Value<'a>, class: &Value<'a>, span: Span) -> R<bool> {
        Ok(match class {
            // A Gluon layout class (`gl.NVMMASharedLayout`).
            Value::Builtin(b) if matches!(b.ns, Ns::Plugin(_)) && b.name.ends_with("Layout") => {
                matches!(obj, Value::Layout(l) if tessel_layouts::expr::layout_kind(l) == b.name)
            }
            Value::Builtin(b) => match (b.ns, b.name) {
                (Ns::Py, "int") => matches!(obj, Value::Int(_) | Value::Bool(_)),
                (Ns::Py, "float") => matches!(obj, Value::Float(_)),
                (Ns::Py, "bool") => matches!(obj, Value::Bool(_)),
                (Ns::Py, "str") => matches!(obj, Value::Str(_)),
                (Ns::Py, "tuple") | (Ns::Tl, "tuple") => matches!(obj, Value::Tuple(_)),
                (Ns::Py, "list") => matches!(obj, Value::List(_)),
                (Ns::Py, "dict") => matches!(obj, Value::Dict(_)),
                (Ns::Tl, "tensor") => matches!(obj, Value::Tensor(t) if !matches!(t.ty, Type::TensorDesc { .. })),
                (Ns::Tl, "tensor_descriptor") => {
                    matches!(obj, Value::Tensor(t) if matches!(t.ty, Type::TensorDesc { .. }))
                }
                (Ns::Tl, "constexpr") => !obj.has_runtime(),
                (Ns::Tl, "dtype") => matches!(obj, Value::Dtype(_)),
                _ => return Err(self.err(span, format!("isinstance() does not know the class `{}`", b.display()))),
            },
            Value::Class(c) => matches!(obj, Value::Instance(i) if Rc::ptr_eq(&i.class, c)),
            other => return Err(self.err(span, format!("isinstance() needs a class, got {}", other.type_name()))),
        })
    }

    /// `triton.*` helpers.
    pub fn call_host(&mut self, name: &str, fname: &str, args: CallArgs<'a>) -> R<Value<'a>> {
        let span = args.span;
        match name {
            "cdiv" => {
                if args.pos.iter().any(|a| a.value.is_runtime()) {
                    let f = self.module_attr("triton.language", "cdiv", span)?;
                    return self.call_value(f, args, span);
                }
                let b = self.bind(fname, "x, y", args)?;
                let x = self.const_int(b.req("x"), fname, "x")?;
                let y = self.const_int(b.req("y"), fname, "y")?;
                if y == 0 {
                    return Err(self.err(span, "cdiv by zero"));
                }
                Ok(Value::Int((x + y - 1).div_euclid(y)))
            }
            "next_power_of_2" => {
                let b = self.bind(fname, "n", args)?;
                let n = self.const_int(b.req("n"), fname, "n")?;
                Ok(Value::Int(if n <= 1 { 1 } else { (n as u128).next_power_of_two() as i128 }))
            }
            _ => Err(self.err(span, format!("`{fname}` is host-side; it cannot be called inside a kernel"))),
        }
    }

    /// `receiver.name(args)` for non-aggregate receivers.
    pub fn call_method(&mut self, recv: Value<'a>, name: &str, args: CallArgs<'a>, span: Span) -> R<Value<'a>> {
        let mut args = match self.plugin_method(&recv, name, args, span)? {
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
            Value::Tensor(_) => {
                args.pos.insert(0, Arg::new(recv.clone(), span));
                if name == "to" {
                    return self.call_core("to", "tensor.to", args);
                }
                // `x.logical_and(y)` / `x.logical_or(y)`: Triton's `and`/`or` of tensors, both sides as int1.
                if matches!(name, "logical_and" | "logical_or") {
                    let b = self.bind(&format!("tensor.{name}"), "self, other", args)?;
                    let (x, y) = (b.req("self").value.clone(), b.req("other").value.clone());
                    return self.logical(name == "logical_and", x, y, span);
                }
                let f = self.module_attr("triton.language", name, span)?;
                self.call_value(f, args, span)
            }
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
