//! The parts of Python's standard library that compile-time helpers use (`@constexpr_function`s and constexpr
//! arithmetic in kernels): `math`'s functions of numbers (`math.log2(SPLIT_FACTOR)`) and `copy`'s `copy` and
//! `deepcopy` (of lists, tuples, dicts and aggregates; layouts, dtypes and numbers are immutable and copy as
//! themselves). They compute on compile-time values only: a tensor is refused with the `tl` function to use.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::elab::args::{Arg, Bound};
use crate::elab::names::{PY_COPY, PY_MATH};
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Instance, Value};
use crate::elab::{Elab, R};

pub(super) fn register(r: &mut Registry) {
    r.module(PY_MATH, "math");
    r.module(PY_COPY, "copy");
    for name in ["log2", "log10", "sqrt", "exp"] {
        r.add(PY_MATH, name, Handler::Bound("x", |e, b| e.py_math_float(b)));
    }
    r.add(PY_MATH, "log", Handler::Bound("x, base=None", |e, b| e.py_math_float(b)));
    for name in ["ceil", "floor", "trunc"] {
        r.add(PY_MATH, name, Handler::Bound("x", |e, b| e.py_math_round(b)));
    }
    r.add(PY_MATH, "gcd", Handler::Bound("a, b", |e, b| e.py_math_gcd(b)));
    r.add(PY_MATH, "isqrt", Handler::Bound("n", |e, b| e.py_math_isqrt(b)));
    r.add(PY_COPY, "copy", Handler::Bound("x", |_, b| Ok(shallow_copy(&b.req("x").value))));
    r.add(PY_COPY, "deepcopy", Handler::Bound("x", |_, b| Ok(deep_copy(&b.req("x").value, &mut HashMap::new()))));
}

/// `copy.copy(x)`: a new list, dict or aggregate holding the same items; anything else is `x`.
fn shallow_copy<'a>(v: &Value<'a>) -> Value<'a> {
    match v {
        Value::List(l) => Value::List(Rc::new(RefCell::new(l.borrow().clone()))),
        Value::Dict(d) => Value::Dict(Rc::new(RefCell::new(d.borrow().clone()))),
        Value::Instance(i) => Value::Instance(Rc::new(Instance {
            class: i.class.clone(),
            fields: RefCell::new(i.fields.borrow().clone()),
        })),
        other => other.clone(),
    }
}

/// `copy.deepcopy(x)`: mutable containers (lists, dicts, aggregates) are copied all the way down, each one once
/// (`memo`, by address, keeps what two paths share shared, as Python's memo does); tuples are rebuilt around
/// their copied items; every other value is immutable and is its own copy.
fn deep_copy<'a>(v: &Value<'a>, memo: &mut HashMap<usize, Value<'a>>) -> Value<'a> {
    let key = match v {
        Value::List(l) => Rc::as_ptr(l) as usize,
        Value::Dict(d) => Rc::as_ptr(d) as usize,
        Value::Instance(i) => Rc::as_ptr(i) as usize,
        Value::Tuple(t) => return Value::tuple(t.iter().map(|x| deep_copy(x, memo)).collect()),
        other => return other.clone(),
    };
    if let Some(done) = memo.get(&key) {
        return done.clone();
    }
    let out = match v {
        Value::List(l) => {
            let out = Rc::new(RefCell::new(Vec::new()));
            memo.insert(key, Value::List(out.clone()));
            let items: Vec<Value<'a>> = l.borrow().iter().map(|x| deep_copy(x, memo)).collect();
            *out.borrow_mut() = items;
            Value::List(out)
        }
        Value::Dict(d) => {
            let out = Rc::new(RefCell::new(Vec::new()));
            memo.insert(key, Value::Dict(out.clone()));
            let items: Vec<(Value<'a>, Value<'a>)> =
                d.borrow().iter().map(|(k, x)| (deep_copy(k, memo), deep_copy(x, memo))).collect();
            *out.borrow_mut() = items;
            Value::Dict(out)
        }
        Value::Instance(i) => {
            let out = Rc::new(Instance { class: i.class.clone(), fields: RefCell::new(Vec::new()) });
            memo.insert(key, Value::Instance(out.clone()));
            let fields: Vec<(String, Value<'a>)> =
                i.fields.borrow().iter().map(|(k, x)| (k.clone(), deep_copy(x, memo))).collect();
            *out.fields.borrow_mut() = fields;
            Value::Instance(out)
        }
        _ => unreachable!("keyed above"),
    };
    memo.insert(key, out.clone());
    out
}

impl<'a> Elab<'a> {
    /// A number argument of a `math` function, as Python sees it (`bool` and `int` are numbers too).
    fn py_number(&self, a: &Arg<'a>, fname: &str, tl_name: &str) -> R<f64> {
        match &a.value {
            Value::Tensor(t) => Err(self.err_hint(
                a.span,
                format!("`{fname}` computes at compile time, but its argument is a runtime value of type {}", t.ty),
                format!("use `{tl_name}` on tensors"),
            )),
            v => v
                .as_f64()
                .ok_or_else(|| self.err(a.span, format!("`{fname}` needs a number, got {}", a.value.describe()))),
        }
    }

    /// `math.log2(x)`, `math.log(x, base)`, `math.log10(x)`, `math.sqrt(x)`, `math.exp(x)`: a float.
    fn py_math_float(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let fname = b.fname.clone();
        let name = fname.rsplit('.').next().unwrap_or(&fname).to_string();
        let x = self.py_number(b.req("x"), &fname, &format!("tl.{name}"))?;
        let domain =
            |ok: bool| if ok { Ok(()) } else { Err(self.err(b.span, format!("`{fname}`: math domain error"))) };
        let y = match name.as_str() {
            "log2" | "log10" | "log" => {
                domain(x > 0.0)?;
                let base = match if name == "log" { b.opt("base") } else { None } {
                    Some(a) => {
                        let base = self.py_number(a, &fname, "tl.log")?;
                        domain(base > 0.0 && base != 1.0)?;
                        Some(base)
                    }
                    None => None,
                };
                match (name.as_str(), base) {
                    ("log2", _) => x.log2(),
                    ("log10", _) => x.log10(),
                    (_, Some(base)) => x.ln() / base.ln(),
                    _ => x.ln(),
                }
            }
            "sqrt" => {
                domain(x >= 0.0)?;
                x.sqrt()
            }
            _ => x.exp(),
        };
        Ok(Value::Float(y))
    }

    /// `math.ceil(x)`, `math.floor(x)`, `math.trunc(x)`: an int.
    fn py_math_round(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let fname = b.fname.clone();
        if let Value::Int(i) = b.req("x").value {
            return Ok(Value::Int(i));
        }
        let x = self.py_number(b.req("x"), &fname, "tl.math.ceil or tl.math.floor")?;
        if !x.is_finite() {
            return Err(self.err(b.span, format!("`{fname}` cannot convert {x} to an integer")));
        }
        let y = match fname.rsplit('.').next() {
            Some("ceil") => x.ceil(),
            Some("floor") => x.floor(),
            _ => x.trunc(),
        };
        Ok(Value::Int(y as i128))
    }

    /// `math.gcd(a, b)`.
    fn py_math_gcd(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let fname = b.fname.clone();
        let (mut x, mut y) =
            (self.const_int(b.req("a"), &fname, "a")?.abs(), self.const_int(b.req("b"), &fname, "b")?.abs());
        while y != 0 {
            (x, y) = (y, x % y);
        }
        Ok(Value::Int(x))
    }

    /// `math.isqrt(n)`: the largest integer whose square is at most `n`.
    fn py_math_isqrt(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let fname = b.fname.clone();
        let n = self.const_int(b.req("n"), &fname, "n")?;
        if n < 0 {
            return Err(self.err(b.span, format!("`{fname}` of a negative number")));
        }
        let mut r = (n as f64).sqrt() as i128;
        while r * r > n {
            r -= 1;
        }
        while (r + 1) * (r + 1) <= n {
            r += 1;
        }
        Ok(Value::Int(r))
    }
}
