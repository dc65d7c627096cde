//! Compile-time and device-side printing and assertions: `static_print`, `static_assert`, `device_print`,
//! `device_assert`.

use tessel_tile::ScalarType;
use tessel_tile::ops::{BinOp, Op, UnOp};

use crate::elab::args::{Arg, Bound};
use crate::elab::names::TL;
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Dtype, Tv, Value, py_str};
use crate::elab::{Elab, R};
use crate::span::Span;

pub(super) fn register(r: &mut Registry) {
    r.add(
        TL,
        "static_print",
        Handler::Bound("*values, sep?, end?, file?, flush?", |e, b| {
            let sep = match b.opt("sep") {
                Some(a) => e.const_str(a, &b.fname, "sep")?,
                None => " ".into(),
            };
            let line = b.rest.iter().map(|a| static_text(&a.value)).collect::<Vec<_>>().join(&sep);
            e.static_prints.push(line);
            Ok(Value::None)
        }),
    );
    r.add(TL, "static_assert", Handler::Bound("cond, msg?", |e, b| e.static_assert(b)));
    r.add(
        TL,
        "device_print",
        Handler::Bound("prefix, *args, hex?", |e, b| {
            let prefix = e.const_str(b.req("prefix"), &b.fname, "prefix")?;
            let hex = match b.opt("hex") {
                Some(a) => e.const_bool(a, &b.fname, "hex")?,
                None => false,
            };
            let values = b.rest.iter().map(|a| e.tensor_arg(a, &b.fname, "args")).collect::<R<Vec<Tv>>>()?;
            e.device_print(prefix, values, hex, b.span)?;
            Ok(Value::None)
        }),
    );
    r.add(
        TL,
        "device_assert",
        Handler::Bound("cond, msg?, mask?", |e, b| {
            let msg = match b.opt("msg") {
                Some(m) => e.const_str(m, &b.fname, "msg")?,
                None => String::new(),
            };
            e.device_assert(b.req("cond"), msg, b.opt("mask"), b.span)?;
            Ok(Value::None)
        }),
    );
}

impl<'a> Elab<'a> {
    fn static_assert(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let c = b.req("cond");
        let msg = match b.opt("msg") {
            Some(m) => py_str(&m.value),
            None => String::new(),
        };
        match c.value.truth() {
            Some(true) => Ok(Value::None),
            Some(false) => {
                let text = if msg.is_empty() {
                    format!("static_assert failed: {}", c.name_or("the condition"))
                } else {
                    format!("static_assert failed: {msg}")
                };
                Err(self.err(c.span, text))
            }
            None => Err(self.not_constexpr(c, &b.fname, "cond", &c.value.type_name())),
        }
    }

    /// `device_print`, with Triton's prefix normalization (`" prefix: "`).
    pub fn device_print(&mut self, mut prefix: String, values: Vec<Tv>, hex: bool, span: Span) -> R<()> {
        if !prefix.is_ascii() {
            return Err(self.err(span, format!("the prefix of device_print must be ASCII, got {prefix:?}")));
        }
        if !values.is_empty() {
            if !prefix.ends_with(' ') {
                prefix.push(' ');
            }
            if !prefix.ends_with(": ") {
                prefix.pop();
                prefix.push_str(": ");
            }
        }
        if prefix.len() > 2 && !prefix.starts_with(' ') {
            prefix.insert(0, ' ');
        }
        self.emit(Op::Print { prefix, hex }, &values, vec![], span)?;
        Ok(())
    }

    /// `device_assert(cond, msg, mask)`: lanes where `mask` is false pass.
    fn device_assert(&mut self, cond: &Arg<'a>, msg: String, mask: Option<&Arg<'a>>, span: Span) -> R<()> {
        if let Some(t) = cond.value.truth() {
            if !t {
                return Err(
                    self.err(cond.span, format!("device_assert of a condition that is false at compile time: {msg}"))
                );
            }
            return Ok(());
        }
        let c = self.tensor_arg(cond, "device_assert", "cond")?;
        let mut c = self.cast(c, Dtype::Scalar(ScalarType::I1), span)?;
        if let Some(m) = mask {
            let m = self.tensor_arg(m, "device_assert", "mask")?;
            let m = self.cast(m, Dtype::Scalar(ScalarType::I1), span)?;
            let (cc, m) = self.broadcast_pair(c, m, span)?;
            let ty = m.ty.clone();
            let not_m = self.emit1(Op::Unary(UnOp::Not), &[m], ty, span)?;
            c = self.arith(BinOp::Or, cc, not_m, span)?;
        }
        self.emit(Op::Assert { message: msg }, &[c], vec![], span)?;
        Ok(())
    }
}

/// How `static_print` shows a value: compile-time values as Python prints them, runtime ones by type.
pub fn static_text(v: &Value) -> String {
    match v {
        Value::Tensor(t) => t.ty.to_string(),
        other => py_str(other),
    }
}
