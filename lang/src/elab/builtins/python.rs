//! Python's builtins at compile time (`range`, `len`, `min`, `isinstance`, `enumerate`...), `importlib`'s
//! `import_module`, and the host-level names of `triton`, gluon and `tessel`: the helpers usable in kernels
//! (`triton.cdiv`, `triton.next_power_of_2`) and those a kernel's module only mentions (`triton.autotune`).

use std::cell::RefCell;
use std::rc::Rc;

use tessel_tile::Type;

use crate::elab::args::{Arg, Bound, CallArgs};
use crate::elab::builtins::core::STATIC_RANGE_SIG;
use crate::elab::builtins::debug::static_text;
use crate::elab::names::{BUILTINS, GLUON, IMPORTLIB, TESSEL, TL, TRITON};
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Value, py_str};
use crate::elab::{Elab, R};
use crate::span::Span;

fn list<'a>(items: Vec<Value<'a>>) -> Value<'a> {
    Value::List(Rc::new(RefCell::new(items)))
}

/// Python's conversions of one value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Conv {
    Int,
    Float,
    Bool,
    Str,
}

pub(super) fn register(r: &mut Registry) {
    let b = BUILTINS;
    r.add(b, "range", Handler::Bound(STATIC_RANGE_SIG, |e, b| e.range_value(false, true, b).map(Value::Range)));
    r.add(b, "len", Handler::Bound("obj", |e, b| e.py_len(b)));
    r.add(b, "min", Handler::Raw(|e, _, args| e.py_min_max(args, false)));
    r.add(b, "max", Handler::Raw(|e, _, args| e.py_min_max(args, true)));
    r.add(b, "abs", Handler::Bound("x", |e, b| e.py_abs(b)));
    r.add(b, "int", Handler::Bound("x?", |e, b| e.py_convert(b, Conv::Int)));
    r.add(b, "float", Handler::Bound("x?", |e, b| e.py_convert(b, Conv::Float)));
    r.add(b, "bool", Handler::Bound("x?", |e, b| e.py_convert(b, Conv::Bool)));
    r.add(b, "str", Handler::Bound("x?", |e, b| e.py_convert(b, Conv::Str)));
    r.add(b, "tuple", Handler::Bound("iterable?", |e, b| Ok(Value::tuple(e.py_items(&b)?))));
    r.add(b, "list", Handler::Bound("iterable?", |e, b| Ok(list(e.py_items(&b)?))));
    r.add(
        b,
        "dict",
        Handler::Raw(|_, _, args| {
            let out = args.kw.into_iter().map(|(k, a)| (Value::str(&k), a.value)).collect();
            Ok(Value::Dict(Rc::new(RefCell::new(out))))
        }),
    );
    r.add(
        b,
        "isinstance",
        Handler::Bound("obj, classinfo", |e, b| {
            let obj = b.req("obj").value.clone();
            let classes = match &b.req("classinfo").value {
                Value::Tuple(t) => t.as_ref().clone(),
                other => vec![other.clone()],
            };
            let mut hit = false;
            for c in &classes {
                hit |= e.is_instance(&obj, c, b.req("classinfo").span)?;
            }
            Ok(Value::Bool(hit))
        }),
    );
    r.add(b, "print", Handler::Raw(|e, name, args| e.py_print(name, args)));
    r.add(
        b,
        "enumerate",
        Handler::Bound("iterable, start?", |e, b| {
            let start = b.opt("start").map_or(Ok(0), |a| e.const_int(a, &b.fname, "start"))?;
            let items = e.iterate(&b.req("iterable").value.clone(), b.span)?;
            let pairs = items.into_iter().enumerate();
            Ok(list(pairs.map(|(i, v)| Value::tuple(vec![Value::Int(start + i as i128), v])).collect()))
        }),
    );
    r.add(
        b,
        "zip",
        Handler::Raw(|e, _, args| {
            let mut seqs = Vec::new();
            for a in &args.pos {
                seqs.push(e.iterate(&a.value.clone(), a.span)?);
            }
            let n = seqs.iter().map(Vec::len).min().unwrap_or(0);
            Ok(list((0..n).map(|i| Value::tuple(seqs.iter().map(|s| s[i].clone()).collect())).collect()))
        }),
    );
    r.add(
        b,
        "sum",
        Handler::Bound("iterable, start?", |e, b| {
            let mut acc = b.opt("start").map_or(Value::Int(0), |a| a.value.clone());
            for v in e.iterate(&b.req("iterable").value.clone(), b.span)? {
                acc = e.binop(crate::ast::BinOpKind::Add, acc, v, b.span)?;
            }
            Ok(acc)
        }),
    );
    r.add(b, "any", Handler::Bound("iterable", |e, b| e.py_any_all(b, false)));
    r.add(b, "all", Handler::Bound("iterable", |e, b| e.py_any_all(b, true)));
    r.add(b, "sorted", Handler::Bound("iterable, reverse?", |e, b| e.py_sorted(b)));
    r.add(
        b,
        "reversed",
        Handler::Bound("iterable, reverse?", |e, b| {
            let mut items = e.iterate(&b.req("iterable").value.clone(), b.span)?;
            items.reverse();
            Ok(list(items))
        }),
    );
    r.add(b, "getattr", Handler::Bound("obj, name, default?", |e, b| e.py_getattr(b, false)));
    r.add(b, "hasattr", Handler::Bound("obj, name, default?", |e, b| e.py_getattr(b, true)));
    r.add(b, "round", Handler::Bound("a, b?", |e, b| e.py_round(b)));
    r.add(
        b,
        "divmod",
        Handler::Bound("a, b?", |e, b| {
            let (a, span) = (b.req("a").value.clone(), b.span);
            let bv = b.opt("b").map(|x| x.value.clone()).ok_or_else(|| e.err(span, "divmod() needs two arguments"))?;
            let q = e.py_binop(crate::ast::BinOpKind::FloorDiv, &a, &bv, span)?;
            let r = e.py_binop(crate::ast::BinOpKind::Mod, &a, &bv, span)?;
            Ok(Value::tuple(vec![q, r]))
        }),
    );
    r.add(
        b,
        "pow",
        Handler::Bound("a, b?", |e, b| {
            let (a, span) = (b.req("a").value.clone(), b.span);
            let bv = b.opt("b").map(|x| x.value.clone()).ok_or_else(|| e.err(span, "pow() needs two arguments"))?;
            e.binop(crate::ast::BinOpKind::Pow, a, bv, span)
        }),
    );
    r.add(
        b,
        "type",
        Handler::Raw(|e, _, args| Err(e.err(args.span, "type() is not supported in kernels; use isinstance()"))),
    );
    for name in ["staticmethod", "property"] {
        r.add(b, name, Handler::Raw(|e, name, args| Err(e.err(args.span, format!("`{name}` is a decorator")))));
    }
    // Exception classes: `ValueError("...")` builds a message (used by `raise`).
    for name in ["ValueError", "TypeError", "AssertionError", "NotImplementedError", "RuntimeError"] {
        r.add(
            b,
            name,
            Handler::Raw(|_, name, args| {
                let msg = args.pos.first().map(|a| py_str(&a.value)).unwrap_or_default();
                Ok(Value::str(&format!("{name}: {msg}")))
            }),
        );
    }
    r.add(IMPORTLIB, "import_module", Handler::Bound("name, package=None", |e, b| e.import_module(b)));

    r.add(TRITON, "cdiv", Handler::Bound("x, y", |e, b| e.triton_cdiv(b)));
    r.add(
        TRITON,
        "next_power_of_2",
        Handler::Bound("n", |e, b| {
            let n = e.const_int(b.req("n"), &b.fname, "n")?;
            Ok(Value::Int(if n <= 1 { 1 } else { (n as u128).next_power_of_two() as i128 }))
        }),
    );
    for name in ["jit", "autotune", "heuristics", "Config", "constexpr_function", "must_use_result"] {
        r.add(TRITON, name, Handler::HostSide);
    }
    for name in ["jit", "aggregate", "constexpr_function", "must_use_result"] {
        r.add(GLUON, name, Handler::HostSide);
    }
    // `tessel.jit`, `tessel.aggregate`... are `tl`'s (which `tessel` re-exports).
    r.add(TESSEL, "must_use_result", Handler::HostSide);
}

impl<'a> Elab<'a> {
    /// Whether the innermost frame is a `@jit` function (not compile-time code).
    fn in_jit(&self) -> bool {
        !self.frames.last().is_some_and(|f| f.compile_time_only)
    }

    fn py_len(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let v = &b.req("obj").value;
        match v {
            Value::Tuple(_) | Value::List(_) => Ok(Value::Int(v.items().unwrap().len() as i128)),
            Value::Str(s) => Ok(Value::Int(s.chars().count() as i128)),
            Value::Dict(d) => Ok(Value::Int(d.borrow().len() as i128)),
            Value::Tensor(t) if t.is_block() => Ok(Value::Int(t.shape()[0] as i128)),
            other => Err(self.err(b.span, format!("{} has no len()", other.type_name()))),
        }
    }

    /// `min(...)`, or `max(...)` (`max`): of compile-time values, or `tl.minimum`/`tl.maximum` of two tensors.
    fn py_min_max(&mut self, args: CallArgs<'a>, max: bool) -> R<Value<'a>> {
        let span = args.span;
        let name = if max { "max" } else { "min" };
        let runtime = args.pos.iter().any(|a| a.value.is_runtime());
        if runtime && self.in_jit() && args.pos.len() == 2 {
            // Triton maps `min`/`max` on tensors to `tl.minimum`/`tl.maximum`.
            return self.call_named(TL, if max { "maximum" } else { "minimum" }, args);
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
            if (!max && ord.is_lt()) || (max && ord.is_gt()) {
                best = v.clone();
            }
        }
        Ok(best)
    }

    fn py_abs(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let span = b.span;
        match &b.req("x").value {
            Value::Int(i) => Ok(Value::Int(i.checked_abs().ok_or_else(|| self.err(span, "integer overflow"))?)),
            Value::Bool(x) => Ok(Value::Int(*x as i128)),
            Value::Float(f) => Ok(Value::Float(f.abs())),
            Value::Tensor(_) => {
                let args = CallArgs { pos: vec![b.req("x").clone()], kw: vec![], span };
                self.call_named(TL, "abs", args)
            }
            other => Err(self.err(span, format!("bad operand for abs(): {}", other.type_name()))),
        }
    }

    /// `int(x)`, `float(x)`, `bool(x)`, `str(x)` of a compile-time value.
    fn py_convert(&mut self, b: Bound<'a>, conv: Conv) -> R<Value<'a>> {
        let (name, span) = (&b.fname, b.span);
        let v = b.opt("x").map_or(Value::Int(0), |a| a.value.clone());
        if let Value::Tensor(t) = &v {
            return Err(self.err_hint(
                span,
                format!("{name}() of a runtime value ({}) cannot be computed at compile time", t.ty),
                "use `.to(dtype)` to convert tensors",
            ));
        }
        Ok(match conv {
            Conv::Bool => Value::Bool(v.truth().unwrap_or(true)),
            Conv::Str => Value::str(&py_str(&v)),
            Conv::Int => match &v {
                Value::Float(f) if f.is_finite() => Value::Int(f.trunc() as i128),
                Value::Str(s) => Value::Int(
                    s.trim().parse().map_err(|_| self.err(span, format!("invalid literal for int(): {s:?}")))?,
                ),
                v => Value::Int(v.as_int().ok_or_else(|| self.err(span, format!("int() of {}", v.describe())))?),
            },
            Conv::Float => match &v {
                Value::Str(s) => Value::Float(
                    s.trim().parse().map_err(|_| self.err(span, format!("could not convert {s:?} to float")))?,
                ),
                v => Value::Float(v.as_f64().ok_or_else(|| self.err(span, format!("float() of {}", v.describe())))?),
            },
        })
    }

    /// The items of the optional `iterable` argument (`tuple()`, `list(x)`).
    fn py_items(&mut self, b: &Bound<'a>) -> R<Vec<Value<'a>>> {
        match b.opt("iterable") {
            Some(a) => self.iterate(&a.value.clone(), a.span),
            None => Ok(Vec::new()),
        }
    }

    /// `print(...)`: a `device_print` of tensors in a `@jit` function, else a static print.
    fn py_print(&mut self, fname: &str, args: CallArgs<'a>) -> R<Value<'a>> {
        let span = args.span;
        if self.in_jit() && args.pos.iter().any(|a| a.value.is_runtime()) {
            let (prefix, rest) = match args.pos.first() {
                Some(Arg { value: Value::Str(s), .. }) => (s.to_string(), &args.pos[1..]),
                _ => (String::new(), &args.pos[..]),
            };
            let values = rest.iter().map(|a| self.tensor_arg(a, fname, "args")).collect::<R<Vec<_>>>()?;
            self.device_print(prefix, values, false, span)?;
        } else {
            let line = args.pos.iter().map(|a| static_text(&a.value)).collect::<Vec<_>>().join(" ");
            self.static_prints.push(line);
        }
        Ok(Value::None)
    }

    /// `any(iterable)`, or `all(iterable)` (`all`), of compile-time values.
    fn py_any_all(&mut self, b: Bound<'a>, all: bool) -> R<Value<'a>> {
        let (name, span) = (&b.fname, b.span);
        let items = self.iterate(&b.req("iterable").value.clone(), span)?;
        let mut out = all;
        for v in items {
            let t = v.truth().ok_or_else(|| self.err(span, format!("{name}() needs compile-time values")))?;
            if all { out &= t } else { out |= t }
        }
        Ok(Value::Bool(out))
    }

    fn py_sorted(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let span = b.span;
        let mut items = self.iterate(&b.req("iterable").value.clone(), span)?;
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
            && self.const_bool(r, &b.fname, "reverse")?
        {
            items.reverse();
        }
        Ok(list(items))
    }

    /// `getattr(obj, name, default)`, or `hasattr(obj, name)` (`has`).
    fn py_getattr(&mut self, b: Bound<'a>, has: bool) -> R<Value<'a>> {
        let attr = self.const_str(b.req("name"), &b.fname, "name")?;
        let r = self.get_attr(b.req("obj").value.clone(), &attr, b.span);
        match (has, r) {
            (true, r) => Ok(Value::Bool(r.is_ok())),
            (false, Ok(v)) => Ok(v),
            (false, Err(e)) => match b.opt("default") {
                Some(d) => Ok(d.value.clone()),
                None => Err(e),
            },
        }
    }

    fn py_round(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        match (b.req("a").value.as_f64(), b.opt("b")) {
            (Some(f), None) => {
                let r = f.round();
                // Python rounds halves to even.
                let r = if (f - f.trunc()).abs() == 0.5 { 2.0 * (f / 2.0).round() } else { r };
                Ok(Value::Int(r as i128))
            }
            (Some(f), Some(n)) => {
                let n = self.const_int(n, &b.fname, "ndigits")? as i32;
                let p = 10f64.powi(n);
                Ok(Value::Float((f * p).round() / p))
            }
            _ => Err(self.err(b.span, "round() needs a number")),
        }
    }

    fn import_module(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let name = self.const_str(b.req("name"), &b.fname, "name")?;
        match self.set_module(&name) {
            Some(m) => Ok(Value::UserModule(m)),
            None => Err(self.err_hint(
                b.span,
                format!("the module `{name}` was not loaded"),
                "tessel loads `importlib.import_module(\"NAME\")` assigned at the top of the kernel's file \
                 from NAME.py beside it (the CLI and `tessel.load` of a file do)",
            )),
        }
    }

    /// `triton.cdiv(x, y)`: of compile-time integers, or `tl.cdiv` of runtime values.
    fn triton_cdiv(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (x, y) = (b.req("x"), b.req("y"));
        if x.value.is_runtime() || y.value.is_runtime() {
            let args = CallArgs { pos: vec![x.clone(), y.clone()], kw: vec![], span: b.span };
            return self.call_named(TL, "cdiv", args);
        }
        let x = self.const_int(x, &b.fname, "x")?;
        let y = self.const_int(y, &b.fname, "y")?;
        if y == 0 {
            return Err(self.err(b.span, "cdiv by zero"));
        }
        Ok(Value::Int((x + y - 1).div_euclid(y)))
    }

    fn is_instance(&mut self, obj: &Value<'a>, class: &Value<'a>, span: Span) -> R<bool> {
        Ok(match class {
            // A Gluon layout class (`gl.NVMMASharedLayout`).
            Value::Builtin(b) if self.registry.entry(b.id).gluon_only && b.name.ends_with("Layout") => {
                matches!(obj, Value::Layout(l) if tessel_layouts::expr::layout_kind(l) == b.name)
            }
            Value::Builtin(b) => match (self.registry.entry(b.id).module, b.name) {
                (BUILTINS, "int") => matches!(obj, Value::Int(_) | Value::Bool(_)),
                (BUILTINS, "float") => matches!(obj, Value::Float(_)),
                (BUILTINS, "bool") => matches!(obj, Value::Bool(_)),
                (BUILTINS, "str") => matches!(obj, Value::Str(_)),
                (BUILTINS | TL, "tuple") => matches!(obj, Value::Tuple(_)),
                (BUILTINS, "list") => matches!(obj, Value::List(_)),
                (BUILTINS, "dict") => matches!(obj, Value::Dict(_)),
                (TL, "tensor") => matches!(obj, Value::Tensor(t) if !matches!(t.ty, Type::TensorDesc { .. })),
                (TL, "tensor_descriptor") => matches!(obj, Value::Tensor(t) if matches!(t.ty, Type::TensorDesc { .. })),
                (TL, "constexpr") => !obj.has_runtime(),
                (TL, "dtype") => matches!(obj, Value::Dtype(_)),
                _ => {
                    let name = self.registry.display(b.id);
                    return Err(self.err(span, format!("isinstance() does not know the class `{name}`")));
                }
            },
            Value::Class(c) => matches!(obj, Value::Instance(i) if Rc::ptr_eq(&i.class, c)),
            other => return Err(self.err(span, format!("isinstance() needs a class, got {}", other.type_name()))),
        })
    }
}
