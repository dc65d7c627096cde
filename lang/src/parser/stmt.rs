//! Simple statements: everything that fits on one logical line (several may share it, separated by `;`).

use chumsky::prelude::*;

use super::expr::{Exprs, op_table};
use super::targets::{check_delete, check_single, check_store};
use super::{P, comma_list, custom, ident, soft_keyword, tok};
use crate::ast::*;
use crate::diag::Diagnostic;
use crate::token::TokenKind as T;

/// `simple_stmt (; simple_stmt)* [;] NEWLINE`
pub(crate) fn simple_stmts<'t>(x: &Exprs<'t>) -> P<'t, Vec<Stmt>> {
    simple_stmt(x)
        .separated_by(tok(T::Semi))
        .at_least(1)
        .allow_trailing()
        .collect::<Vec<_>>()
        .then_ignore(tok(T::Newline))
        .boxed()
}

fn simple_stmt<'t>(x: &Exprs<'t>) -> P<'t, Stmt> {
    let keyword = |t: T, kind: StmtKind| tok(t).to(kind);
    let names = || ident().separated_by(tok(T::Comma)).at_least(1).collect::<Vec<_>>();
    let return_ = tok(T::Return).ignore_then(x.star_expressions.clone().or_not()).map(StmtKind::Return);
    let raise = tok(T::Raise)
        .ignore_then(x.expression.clone().then(tok(T::From).ignore_then(x.expression.clone()).or_not()).or_not())
        .map(|r| match r {
            None => StmtKind::Raise { exc: None, cause: None },
            Some((exc, cause)) => StmtKind::Raise { exc: Some(exc), cause },
        });
    let delete = tok(T::Del).ignore_then(comma_list(x.star_target.clone())).validate(|(targets, _), _, emitter| {
        targets.iter().for_each(|t| check_delete(t, emitter));
        StmtKind::Delete(targets)
    });
    let assert = tok(T::Assert)
        .ignore_then(x.expression.clone())
        .then(tok(T::Comma).ignore_then(x.expression.clone()).or_not())
        .map(|(test, msg)| StmtKind::Assert { test, msg });
    let type_alias = soft_keyword("type")
        .ignore_then(ident())
        .then(x.type_params.clone().or_not())
        .then_ignore(tok(T::Eq))
        .then(x.expression.clone())
        .map(|((name, type_params), value)| StmtKind::TypeAlias {
            name,
            type_params: type_params.unwrap_or_default(),
            value,
        });
    choice((
        keyword(T::Pass, StmtKind::Pass),
        keyword(T::Break, StmtKind::Break),
        keyword(T::Continue, StmtKind::Continue),
        return_,
        raise,
        tok(T::Global).ignore_then(names()).map(StmtKind::Global),
        tok(T::Nonlocal).ignore_then(names()).map(StmtKind::Nonlocal),
        delete,
        assert,
        import(),
        import_from(),
        type_alias,
        assignment(x),
    ))
    .map_with(|kind, e| Stmt::new(kind, e.span()))
    .labelled("a statement")
    .boxed()
}

/// An expression statement, or an assignment (plain, chained, augmented or annotated) that starts with one.
fn assignment<'t>(x: &Exprs<'t>) -> P<'t, StmtKind> {
    use BinOpKind::*;
    enum Rest {
        Assign(Vec<Expr>),
        Aug(BinOpKind, Expr),
        Annotated(Expr, Option<Expr>),
    }
    let augmented = op_table(vec![
        (T::PlusEq, Add),
        (T::MinusEq, Sub),
        (T::StarEq, Mul),
        (T::AtEq, MatMul),
        (T::SlashEq, Div),
        (T::DoubleSlashEq, FloorDiv),
        (T::PercentEq, Mod),
        (T::DoubleStarEq, Pow),
        (T::LShiftEq, LShift),
        (T::RShiftEq, RShift),
        (T::PipeEq, BitOr),
        (T::CaretEq, BitXor),
        (T::AmpEq, BitAnd),
    ]);
    let rest = choice((
        tok(T::Eq).ignore_then(x.star_expressions.clone()).repeated().at_least(1).collect::<Vec<_>>().map(Rest::Assign),
        augmented.then(x.star_expressions.clone()).map(|(op, value)| Rest::Aug(op, value)),
        tok(T::Colon)
            .ignore_then(x.expression.clone())
            .then(tok(T::Eq).ignore_then(x.star_expressions.clone()).or_not())
            .map(|(annotation, value)| Rest::Annotated(annotation, value)),
    ));
    x.star_expressions
        .clone()
        .then(rest.or_not())
        .validate(|(first, rest), e, emitter| {
            let no_bare_starred = |value: &Expr, emitter: &mut chumsky::input::Emitter<super::Error<'_>>| {
                if matches!(value.kind, ExprKind::Starred(_)) {
                    emitter.emit(custom(
                        Diagnostic::error("cannot use starred expression here", value.span)
                            .with_hint("add a comma to make a tuple: `*xs,`"),
                    ));
                }
            };
            match rest {
                None => {
                    no_bare_starred(&first, emitter);
                    StmtKind::Expr(first)
                }
                Some(Rest::Assign(mut values)) => {
                    let value = values.pop().expect("at least one `= value`");
                    let targets: Vec<Expr> = std::iter::once(first).chain(values).collect();
                    targets.iter().for_each(|t| check_store(t, emitter));
                    no_bare_starred(&value, emitter);
                    StmtKind::Assign { targets, value }
                }
                Some(Rest::Aug(op, value)) => {
                    check_single(&first, "augmented-assigned", emitter);
                    StmtKind::AugAssign { target: first, op, value }
                }
                Some(Rest::Annotated(annotation, value)) => {
                    check_single(&first, "annotated", emitter);
                    // A bare name is "simple"; `(x): int` is not (Python's distinction for module annotations).
                    let span: Span = e.span();
                    let simple = matches!(first.kind, ExprKind::Name(_)) && first.span.start == span.start;
                    StmtKind::AnnAssign { target: first, annotation, value, simple }
                }
            }
        })
        .boxed()
}

/// `a.b.c` as one dotted string and its span.
fn dotted_name<'t>() -> P<'t, (String, Span)> {
    ident()
        .separated_by(tok(T::Dot))
        .at_least(1)
        .collect::<Vec<_>>()
        .map_with(|parts, e| (parts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join("."), e.span()))
        .boxed()
}

/// `import a.b [as c], ...`
fn import<'t>() -> P<'t, StmtKind> {
    let alias = dotted_name().then(tok(T::As).ignore_then(ident()).or_not()).map_with(|((name, _), asname), e| Alias {
        name,
        asname,
        span: e.span(),
    });
    tok(T::Import).ignore_then(alias.separated_by(tok(T::Comma)).at_least(1).collect()).map(StmtKind::Import).boxed()
}

/// `from [.]*module import names`, `from . import (a, b as c,)`, `from m import *`
fn import_from<'t>() -> P<'t, StmtKind> {
    let dots = choice((tok(T::Dot).to(1u32), tok(T::Ellipsis).to(3u32))).repeated().collect::<Vec<_>>();
    let alias = ident().then(tok(T::As).ignore_then(ident()).or_not()).map_with(|(name, asname), e| Alias {
        name: name.name,
        asname,
        span: e.span(),
    });
    let aliases = || alias.clone().separated_by(tok(T::Comma)).at_least(1);
    let names = choice((
        tok(T::Star).map_with(|_, e| vec![Alias { name: "*".into(), asname: None, span: e.span() }]),
        aliases().allow_trailing().collect().delimited_by(tok(T::LParen), tok(T::RParen)),
        aliases().collect(),
    ));
    tok(T::From)
        .ignore_then(dots)
        .then(dotted_name().or_not())
        .then_ignore(tok(T::Import))
        .then(names)
        .validate(|((dots, module), names), e, emitter| {
            let level = dots.iter().sum();
            if level == 0 && module.is_none() {
                emitter.emit(custom(Diagnostic::error("expected a module name after `from`", e.span())));
            }
            StmtKind::ImportFrom { module: module.map(|(name, _)| name), names, level }
        })
        .boxed()
}
