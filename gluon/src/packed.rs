//! Blackwell's packed arithmetic (`add2`, `sub2`, `mul2`, `fma2`, `min2`, `max2` of
//! `triton.experimental.gluon.language.nvidia.blackwell`): elementwise arithmetic Gluon lowers to the two-lane
//! instructions (`mul.f32x2`, `fma.rn.f16x2`, ...). Each lane of those rounds as the scalar operation does, so
//! tessel elaborates them as the ordinary elementwise ops (`fma2` as `fma`, one rounding; `min2`/`max2` as
//! `minimum`/`maximum`, which return the number over a NaN as `min.f16x2` does): the same values, not yet the
//! packed instructions. Operands broadcast and promote as Gluon's do for floating operands; the forms with a
//! different result type (packed FP4 bytes, an fp8 addend, an explicit `dtype` other than the operands') are
//! refused with the call's span.

use tessel_lang::ast::BinOpKind;
use tessel_lang::elab::builtins::{Arg, Bound, CallArgs};
use tessel_lang::elab::names::TL;
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Dtype, Value};
use tessel_lang::elab::{Elab, R};

use crate::BLACKWELL;

pub fn register(r: &mut Registry) {
    r.add(BLACKWELL, "add2", Handler::Bound("lhs, rhs, dtype=None", |e, b| binary(e, b, Packed::Add)));
    r.add(BLACKWELL, "sub2", Handler::Bound("lhs, rhs, dtype=None", |e, b| binary(e, b, Packed::Sub)));
    r.add(BLACKWELL, "mul2", Handler::Bound("lhs, rhs, dtype=None", |e, b| binary(e, b, Packed::Mul)));
    r.add(BLACKWELL, "min2", Handler::Bound("lhs, rhs, dtype=None", |e, b| binary(e, b, Packed::Min)));
    r.add(BLACKWELL, "max2", Handler::Bound("lhs, rhs, dtype=None", |e, b| binary(e, b, Packed::Max)));
    r.add(BLACKWELL, "fma2", Handler::Bound("lhs, rhs, acc, dtype=None", fma2));
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Packed {
    Add,
    Sub,
    Mul,
    Min,
    Max,
}

/// The operands of a packed op, checked: at least one register tensor, a floating one among them (packed FP4
/// bytes are not modelled), no fp8 addend (its result would be fp8), and no other `dtype` than theirs.
fn check<'a>(e: &Elab<'a>, b: &Bound<'a>, names: &[&str], addend: Option<&str>) -> R<()> {
    let fname = &b.fname;
    let tensors: Vec<&Arg<'a>> = names.iter().map(|n| b.req(n)).filter(|a| a.value.is_runtime()).collect();
    let Some(first) = tensors.iter().find(|a| a.value.as_tensor().is_some_and(|t| t.is_block())) else {
        return Err(e.err(b.span, format!("`{fname}` needs at least one tensor operand (a register tensor)")));
    };
    let floating =
        tensors.iter().any(|a| a.value.as_tensor().and_then(|t| t.dtype()?.scalar()).is_some_and(|s| s.is_float()));
    if !floating {
        return Err(e.err(
            first.span,
            format!("`{fname}` of integer operands (packed FP4 bytes) is not supported by tessel yet"),
        ));
    }
    if let Some(a) = addend.map(|n| b.req(n))
        && let Some(Dtype::Scalar(s)) = a.value.as_tensor().and_then(|t| t.dtype())
        && s.bits() == 8
    {
        return Err(
            e.err(a.span, format!("`{fname}` with an fp8 addend (an fp8 result) is not supported by tessel yet"))
        );
    }
    Ok(())
}

/// `dtype=` of a packed op: `None`, or the dtype the operands give (anything else would change the result).
fn check_dtype<'a>(e: &mut Elab<'a>, b: &Bound<'a>, out: &Value<'a>) -> R<()> {
    let Some(a) = b.opt("dtype").filter(|a| !matches!(a.value, Value::None)) else { return Ok(()) };
    let want = e.dtype_arg(a, &b.fname, "dtype")?;
    let have = out.as_tensor().and_then(|t| t.dtype());
    if have != Some(want) {
        return Err(e.err(
            a.span,
            format!(
                "`dtype={want}` of `{}` differs from its operands' {}: a converting packed op is not supported by \
                 tessel yet",
                b.fname,
                have.map_or_else(|| "type".to_string(), |d| d.to_string())
            ),
        ));
    }
    Ok(())
}

fn binary<'a>(e: &mut Elab<'a>, b: Bound<'a>, op: Packed) -> R<Value<'a>> {
    check(e, &b, &["lhs", "rhs"], matches!(op, Packed::Add | Packed::Sub).then_some("rhs"))?;
    let (x, y) = (b.req("lhs").clone(), b.req("rhs").clone());
    let out = match op {
        Packed::Add => e.binop(BinOpKind::Add, x.value, y.value, b.span)?,
        Packed::Sub => e.binop(BinOpKind::Sub, x.value, y.value, b.span)?,
        Packed::Mul => e.binop(BinOpKind::Mul, x.value, y.value, b.span)?,
        Packed::Min | Packed::Max => {
            let name = if op == Packed::Min { "minimum" } else { "maximum" };
            e.call_named(TL, name, CallArgs { pos: vec![x, y], kw: vec![], span: b.span })?
        }
    };
    check_dtype(e, &b, &out)?;
    Ok(out)
}

/// `fma2(lhs, rhs, acc)`: `lhs * rhs + acc` with one rounding.
fn fma2<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    check(e, &b, &["lhs", "rhs", "acc"], Some("acc"))?;
    let pos = vec![b.req("lhs").clone(), b.req("rhs").clone(), b.req("acc").clone()];
    let out = e.call_named(TL, "fma", CallArgs { pos, kw: vec![], span: b.span })?;
    check_dtype(e, &b, &out)?;
    Ok(out)
}
