//! Checks that the targets of assignments, `for`, `with ... as`, comprehensions and `del` are assignable.
//!
//! Targets are parsed as expressions (as CPython's parser does for its error paths) and then checked here, so
//! that `f() = 1` gets "cannot assign to a function call" at the call instead of a generic syntax error.

use chumsky::input::Emitter;

use super::{Error, custom};
use crate::ast::{Expr, ExprKind};
use crate::diag::Diagnostic;

/// What kind of expression `e` is, in words, for "cannot assign to ..." messages.
fn describe(e: &Expr) -> &'static str {
    match &e.kind {
        ExprKind::Call { .. } => "a function call",
        ExprKind::Constant(_) | ExprKind::JoinedStr(_) => "a literal",
        ExprKind::BinOp { .. } | ExprKind::UnaryOp { .. } => "an expression",
        ExprKind::BoolOp { .. } => "a boolean expression",
        ExprKind::Compare { .. } => "a comparison",
        ExprKind::IfExp { .. } => "a conditional expression",
        ExprKind::Lambda { .. } => "a lambda",
        ExprKind::Yield(_) | ExprKind::YieldFrom(_) => "a yield expression",
        ExprKind::NamedExpr { .. } => "a named expression",
        ExprKind::Dict(_) => "a dict display",
        ExprKind::Set(_) => "a set display",
        ExprKind::ListComp { .. } => "a list comprehension",
        ExprKind::SetComp { .. } => "a set comprehension",
        ExprKind::DictComp { .. } => "a dict comprehension",
        ExprKind::GeneratorExp { .. } => "a generator expression",
        ExprKind::Slice { .. } => "a slice",
        ExprKind::Name(_)
        | ExprKind::Attribute { .. }
        | ExprKind::Subscript { .. }
        | ExprKind::Starred(_)
        | ExprKind::Tuple(_)
        | ExprKind::List(_) => "a target",
    }
}

/// An assignment target: a name, attribute, subscript, or a tuple/list of targets with at most one `*starred`.
pub(crate) fn check_store(target: &Expr, emitter: &mut Emitter<Error<'_>>) {
    match &target.kind {
        ExprKind::Name(_) | ExprKind::Attribute { .. } | ExprKind::Subscript { .. } => {}
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            let mut starred = items.iter().filter(|e| matches!(e.kind, ExprKind::Starred(_)));
            if let (Some(_), Some(second)) = (starred.next(), starred.next()) {
                emitter.emit(custom(Diagnostic::error("multiple starred expressions in assignment", second.span)));
            }
            for item in items {
                match &item.kind {
                    ExprKind::Starred(inner) => check_store(inner, emitter),
                    _ => check_store(item, emitter),
                }
            }
        }
        ExprKind::Starred(_) => emitter.emit(custom(
            Diagnostic::error("starred assignment target must be in a list or tuple", target.span)
                .with_hint("add a comma: `*rest, = values`"),
        )),
        _ => {
            let mut diag = Diagnostic::error(format!("cannot assign to {}", describe(target)), target.span);
            if matches!(target.kind, ExprKind::Compare { .. } | ExprKind::Call { .. }) {
                diag = diag.with_hint("did you mean `==` instead of `=`?");
            }
            emitter.emit(custom(diag));
        }
    }
}

/// The target of an augmented assignment or annotation: a single name, attribute or subscript.
pub(crate) fn check_single(target: &Expr, what: &str, emitter: &mut Emitter<Error<'_>>) {
    match &target.kind {
        ExprKind::Name(_) | ExprKind::Attribute { .. } | ExprKind::Subscript { .. } => {}
        ExprKind::Tuple(_) | ExprKind::List(_) => emitter.emit(custom(Diagnostic::error(
            format!("only a single target (not a tuple or list) can be {what}"),
            target.span,
        ))),
        _ => emitter
            .emit(custom(Diagnostic::error(format!("{} cannot be {what}", capitalize(describe(target))), target.span))),
    }
}

/// A `del` target: a name, attribute, subscript, or a tuple/list of those.
pub(crate) fn check_delete(target: &Expr, emitter: &mut Emitter<Error<'_>>) {
    match &target.kind {
        ExprKind::Name(_) | ExprKind::Attribute { .. } | ExprKind::Subscript { .. } => {}
        ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().for_each(|item| check_delete(item, emitter)),
        _ => emitter.emit(custom(Diagnostic::error(format!("cannot delete {}", describe(target)), target.span))),
    }
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
