//! Carried integers that stage 0 advances by a loop-invariant increment each iteration: the row offset
//! `curr_m += BLOCK_M` of attention backward's causal dk/dv loop, from which both the row statistics' addresses
//! (stage 0, `D = S − 1` iterations ahead) and the causal mask (the last stage) are computed.
//!
//! Stage 0 carries such a value `D` iterations ahead, like a pointer; the last stage's own iteration had the
//! carried value less `D` increments (wrapping arithmetic makes this exact, and stage 0 runs every iteration,
//! the last `D` included, so the carried value always advances). What depends on such values and the
//! induction variable alone the last stage computes again from that, instead of the loop falling back to
//! loading the statistics synchronously.

use std::collections::HashMap;

use tessel_tile::ir::{Func, OpId, ValueDef, ValueId};
use tessel_tile::ops::{BinOp, Op};
use tessel_tile::types::{Elem, Type};

/// Among the carried values stage 0 advances (`early`, positions among the carried values), those whose next
/// value is the carried value plus a scalar integer defined before the loop: position → increment.
pub(crate) fn inductions(
    f: &Func,
    body_args: &[ValueId],
    yields: &[ValueId],
    early: impl IntoIterator<Item = usize>,
    in_body: impl Fn(OpId) -> bool,
) -> HashMap<usize, ValueId> {
    let scalar_int = |v: ValueId| matches!(f.ty(v), Type::Scalar(Elem::Scalar(s)) if s.is_int());
    let defined_before = |v: ValueId| match f.value(v).def {
        ValueDef::Result(p, _) => !in_body(p),
        _ => !body_args.contains(&v),
    };
    let mut out = HashMap::new();
    for i in early {
        let arg = body_args[i + 1];
        let ValueDef::Result(p, _) = f.value(yields[i]).def else { continue };
        let pd = f.op(p);
        if !in_body(p) || !matches!(pd.op, Op::Binary { op: BinOp::Add, .. }) || !scalar_int(arg) {
            continue;
        }
        let inc = match pd.operands[..] {
            [a, c] if a == arg => c,
            [c, a] if a == arg => c,
            _ => continue,
        };
        if scalar_int(inc) && f.ty(inc) == f.ty(arg) && defined_before(inc) {
            out.insert(i, inc);
        }
    }
    out
}
