//! The small checks every typing rule shares, [`crate::verify`]'s table and the rules it hands to `verify_smem`
//! and `verify_ext`: how many operands and results, one type, pointers.

use crate::types::{Elem, ScalarType, Type};

/// `ins` and `outs` number `n_in` (a range) and `n_out`.
pub(crate) fn counts(
    ins: &[&Type],
    outs: &[&Type],
    n_in: std::ops::RangeInclusive<usize>,
    n_out: usize,
) -> Result<(), String> {
    if !n_in.contains(&ins.len()) {
        return Err(format!("expected {} operands, got {}", fmt_range(&n_in), ins.len()));
    }
    if outs.len() != n_out {
        return Err(format!("expected {n_out} results, got {}", outs.len()));
    }
    Ok(())
}

/// `1`, `1 to 3`, `at least 2`.
fn fmt_range(r: &std::ops::RangeInclusive<usize>) -> String {
    if r.start() == r.end() {
        r.start().to_string()
    } else if *r.end() == usize::MAX {
        format!("at least {}", r.start())
    } else {
        format!("{} to {}", r.start(), r.end())
    }
}

/// `a` is `b` (`what` names them in the error).
pub(crate) fn same(a: &Type, b: &Type, what: &str) -> Result<(), String> {
    match (a == b, what) {
        (true, _) => Ok(()),
        (false, "operands" | "results") => Err(format!("{what} must have one type, got {a} and {b}")),
        (false, _) => Err(format!("{what}: expected {b}, got {a}")),
    }
}

/// The element type `t` points to.
pub(crate) fn pointee(t: &Type) -> Result<ScalarType, String> {
    match t.elem() {
        Some(Elem::Ptr(s, _)) => Ok(s),
        _ => Err(format!("expected pointers, got {t}")),
    }
}
