//! `gl.map_elementwise(scalar_fn, *args, pack=1)`: a function of scalars applied to every element of its
//! (broadcast) tensor arguments.
//!
//! tessel's tensor ops are elementwise already, so the function runs once on the broadcast tensors: what it
//! computes with arithmetic, comparisons, `gl.where`, casts and compile-time control flow is exactly its
//! elementwise map. Control flow on the elements themselves (an `if` on an argument) would need a scalar
//! region per element; it is refused with a note saying so. `pack > 1` is not supported yet.

use tessel_lang::elab::builtins::{Arg, CallArgs};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Tv, Value};
use tessel_lang::elab::{Elab, R};

use crate::GL;

pub fn register(r: &mut Registry) {
    r.add(GL, "map_elementwise", Handler::Raw(map_elementwise));
}

fn map_elementwise<'a>(e: &mut Elab<'a>, name: &'static str, args: CallArgs<'a>) -> R<Value<'a>> {
    let span = args.span;
    for (k, a) in &args.kw {
        match k.as_str() {
            "pack" if a.value.as_int() == Some(1) => {}
            "pack" => return Err(e.err(a.span, format!("`pack` other than 1 in `{name}` is not supported yet"))),
            other => return Err(e.err(a.span, format!("`{name}` has no parameter `{other}`"))),
        }
    }
    let mut pos = args.pos.into_iter();
    let Some(first) = pos.next() else {
        return Err(e.err(span, format!("`{name}` needs a function and its arguments")));
    };
    let Value::Func(f) = first.value else {
        return Err(e.err(first.span, format!("the first argument of `{name}` must be a @jit function")));
    };
    let rest: Vec<Arg<'a>> = pos.collect();
    if rest.is_empty() {
        return Err(e.err(span, format!("`{name}` needs at least one tensor argument")));
    }
    // One shape for every tensor argument (NumPy broadcasting, as Triton does).
    let mut shaped: Option<Tv> = None;
    for a in &rest {
        if let Value::Tensor(t) = &a.value
            && t.is_block()
        {
            shaped = Some(match shaped {
                None => t.clone(),
                Some(s) => e.broadcast_pair(s, t.clone(), a.span)?.0,
            });
        }
    }
    let mut call_args = Vec::with_capacity(rest.len());
    for a in rest {
        let value = match (&a.value, &shaped) {
            (Value::Tensor(t), Some(s)) if t.is_block() || matches!(t.ty, tessel_tile::Type::Scalar(_)) => {
                Value::Tensor(e.broadcast_like(t.clone(), &s.ty, a.span)?)
            }
            (v, _) => v.clone(),
        };
        call_args.push(Arg::new(value, a.span));
    }
    let fname = f.def.name.name.clone();
    e.call_function(f, None, CallArgs { pos: call_args, kw: Vec::new(), span }, span).map_err(|mut err| {
        err.diag.notes.push(format!(
            "`{name}` runs `{fname}` on whole tensors: control flow on their elements is not supported yet"
        ));
        err
    })
}
