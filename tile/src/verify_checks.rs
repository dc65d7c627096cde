//! The small checks every typing rule shares, [`crate::verify`]'s table and the rules it hands to `verify_smem`
//! and `verify_ext`: how many operands and results, one type, pointers; and [`Violation`], what a typing rule
//! finds wrong.

use std::fmt;

use crate::layout::shared_views::ViewError;
use crate::types::{Elem, ScalarType, Type};

/// What an op's typing rule finds wrong with its operands, results or attributes.
#[derive(Clone, Debug, PartialEq)]
pub enum Violation {
    /// It has `got` operands (or results) where the rule takes `expected`.
    Count { results: bool, expected: std::ops::RangeInclusive<usize>, got: usize },
    /// Two types that must be one: `what` names them (`operands`, `result`, `the accumulator`...).
    Mismatch { what: String, expected: Type, got: Type },
    /// A type that must hold pointers.
    NotPointer(Type),
    /// A type that must hold numbers.
    NotNumeric(Type),
    /// A shared-memory view whose type does not follow from its buffer's.
    View(Box<ViewError>),
    /// One of the op's own rules, in its words (the typing table has a rule per op and attribute, each said once).
    Rule(String),
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Count { results: false, expected, got } => {
                write!(f, "expected {} operands, got {got}", fmt_range(expected))
            }
            Violation::Count { results: true, expected, got } => {
                write!(f, "expected {} results, got {got}", fmt_range(expected))
            }
            Violation::Mismatch { what, expected, got } if what == "operands" || what == "results" => {
                write!(f, "{what} must have one type, got {got} and {expected}")
            }
            Violation::Mismatch { what, expected, got } => write!(f, "{what}: expected {expected}, got {got}"),
            Violation::NotPointer(t) => write!(f, "expected pointers, got {t}"),
            Violation::NotNumeric(t) => write!(f, "expected numbers, got {t}"),
            Violation::View(e) => write!(f, "{e}"),
            Violation::Rule(words) => f.write_str(words),
        }
    }
}

/// `ins` and `outs` number `n_in` (a range) and `n_out`.
pub(crate) fn counts(
    ins: &[&Type],
    outs: &[&Type],
    n_in: std::ops::RangeInclusive<usize>,
    n_out: usize,
) -> Result<(), Violation> {
    if !n_in.contains(&ins.len()) {
        return Err(Violation::Count { results: false, expected: n_in, got: ins.len() });
    }
    if outs.len() != n_out {
        return Err(Violation::Count { results: true, expected: n_out..=n_out, got: outs.len() });
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
pub(crate) fn same(a: &Type, b: &Type, what: &str) -> Result<(), Violation> {
    if a == b { Ok(()) } else { Err(Violation::Mismatch { what: what.into(), expected: b.clone(), got: a.clone() }) }
}

/// The element type `t` points to.
pub(crate) fn pointee(t: &Type) -> Result<ScalarType, Violation> {
    match t.elem() {
        Some(Elem::Ptr(s, _)) => Ok(s),
        _ => Err(Violation::NotPointer(t.clone())),
    }
}
