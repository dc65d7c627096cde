//! Compound statements, blocks and the module.
//!
//! A compound statement's span runs from its first keyword to the end of its last nested statement (not to the
//! `DEDENT` after it, which sits at the start of the next statement). Decorators belong to the `def`/`class` but,
//! as in Python's AST, the statement's span starts at `def`/`class`.

use chumsky::prelude::*;

use super::expr::{Exprs, exprs};
use super::stmt::simple_stmts;
use super::targets::check_store;
use super::{P, custom, ident, soft_keyword, tok, tok_span, unsupported};
use crate::ast::*;
use crate::diag::Diagnostic;
use crate::token::TokenKind as T;

/// A whole module: statements until the end of input.
pub(crate) fn module<'t>(source_len: usize) -> P<'t, Module> {
    let x = exprs();
    statement(&x)
        .repeated()
        .collect::<Vec<_>>()
        .then_ignore(end())
        .map(move |stmts| Module { body: stmts.into_iter().flatten().collect(), span: Span::new(0, source_len) })
        .boxed()
}

/// One statement (a line of simple statements yields several).
fn statement<'t>(x: &Exprs<'t>) -> P<'t, Vec<Stmt>> {
    let simple = simple_stmts(x);
    recursive(|statement| {
        let indented = tok(T::Newline)
            .ignore_then(tok(T::Indent).labelled(super::error::INDENTED_BLOCK))
            .ignore_then(statement.repeated().at_least(1).collect::<Vec<Vec<Stmt>>>())
            .then_ignore(tok(T::Dedent))
            .map(|stmts| stmts.into_iter().flatten().collect::<Vec<_>>());
        let block = indented.or(simple.clone()).boxed();
        compound_stmt(x, block).map(|s| vec![s]).or(simple.clone()).labelled("a statement")
    })
    .boxed()
}

/// The end of the last statement of a (never empty) block.
fn end_of(body: &[Stmt]) -> usize {
    body.last().map_or(0, |s| s.span.end)
}

/// From the keyword to the end of the `else` block if there is one, else of the body.
fn span_with_orelse(keyword: Span, body: &[Stmt], orelse: &[Stmt]) -> Span {
    Span::new(keyword.start, end_of(if orelse.is_empty() { body } else { orelse }))
}

fn if_stmt(keyword: Span, test: Expr, body: Vec<Stmt>, orelse: Option<Vec<Stmt>>) -> Stmt {
    let orelse = orelse.unwrap_or_default();
    let span = span_with_orelse(keyword, &body, &orelse);
    Stmt::new(StmtKind::If { test, body, orelse }, span)
}

fn compound_stmt<'t>(x: &Exprs<'t>, block: P<'t, Vec<Stmt>>) -> P<'t, Stmt> {
    let colon_block = || tok(T::Colon).ignore_then(block.clone());
    let else_block = tok(T::Else).ignore_then(colon_block()).boxed();

    // `if`/`elif`/`else`: each `elif` is an `If` nested alone in the `orelse` of the one before.
    let if_tail = recursive(|if_tail| {
        tok_span(T::Elif)
            .then(x.named.clone())
            .then(colon_block())
            .then(if_tail.or_not())
            .map(|(((kw, test), body), orelse)| vec![if_stmt(kw, test, body, orelse)])
            .or(else_block.clone())
    });
    let if_ = tok_span(T::If)
        .then(x.named.clone())
        .then(colon_block())
        .then(if_tail.or_not())
        .map(|(((kw, test), body), orelse)| if_stmt(kw, test, body, orelse));

    let while_ = tok_span(T::While).then(x.named.clone()).then(colon_block()).then(else_block.clone().or_not()).map(
        |(((kw, test), body), orelse)| {
            let orelse = orelse.unwrap_or_default();
            let span = span_with_orelse(kw, &body, &orelse);
            Stmt::new(StmtKind::While { test, body, orelse }, span)
        },
    );

    let for_ = tok_span(T::For)
        .then(x.star_targets.clone().validate(|target, _, emitter| {
            check_store(&target, emitter);
            target
        }))
        .then_ignore(tok(T::In))
        .then(x.star_expressions.clone())
        .then(colon_block())
        .then(else_block.clone().or_not())
        .map(|((((kw, target), iter), body), orelse)| {
            let orelse = orelse.unwrap_or_default();
            let span = span_with_orelse(kw, &body, &orelse);
            Stmt::new(StmtKind::For { target, iter, body, orelse }, span)
        })
        .boxed();

    let with_ = with_stmt(x, block.clone());
    let try_ = try_stmt(x, block.clone());

    let def = tok_span(T::Def)
        .then(ident())
        .then(x.type_params.clone().or_not())
        .then(x.parameters.clone().delimited_by(tok(T::LParen), tok(T::RParen)))
        .then(tok(T::Arrow).ignore_then(x.expression.clone()).or_not())
        .then(colon_block())
        .map(|(((((kw, name), type_params), params), returns), body)| {
            let span = Span::new(kw.start, end_of(&body));
            let def = FunctionDef {
                name,
                decorators: vec![],
                type_params: type_params.unwrap_or_default(),
                params,
                returns,
                body,
            };
            Stmt::new(StmtKind::FunctionDef(Box::new(def)), span)
        })
        .boxed();

    let class = tok_span(T::Class)
        .then(ident())
        .then(x.type_params.clone().or_not())
        .then(x.arguments.clone().delimited_by(tok(T::LParen), tok(T::RParen)).or_not())
        .then(colon_block())
        .map(|((((kw, name), type_params), arguments), body)| {
            let (bases, keywords) = arguments.unwrap_or_default();
            let span = Span::new(kw.start, end_of(&body));
            let class = ClassDef {
                name,
                decorators: vec![],
                type_params: type_params.unwrap_or_default(),
                bases,
                keywords,
                body,
            };
            Stmt::new(StmtKind::ClassDef(Box::new(class)), span)
        })
        .boxed();

    // `async def/for/with` parse (so the error points at `async`) but are not supported.
    let async_ = tok_span(T::Async)
        .then(choice((def.clone(), for_.clone(), with_.clone())))
        .validate(|(span, stmt), _, emitter| {
            emitter.emit(unsupported("async", span, "kernels and their host code run synchronously; drop `async`"));
            stmt
        })
        .boxed();

    let decorators =
        tok(T::At).ignore_then(x.named.clone()).then_ignore(tok(T::Newline)).repeated().collect::<Vec<_>>();
    let decorated = decorators.then(choice((def, class, async_.clone()))).map(|(decorators, mut stmt)| {
        match &mut stmt.kind {
            StmtKind::FunctionDef(def) => def.decorators = decorators,
            StmtKind::ClassDef(class) => class.decorators = decorators,
            _ => {}
        }
        stmt
    });

    choice((decorated, if_, while_, for_, with_, try_, async_, match_stmt(x, block.clone()))).boxed()
}

/// `with a as b, c:` or `with (a as b, c,):`
fn with_stmt<'t>(x: &Exprs<'t>, block: P<'t, Vec<Stmt>>) -> P<'t, Stmt> {
    let item = x.expression.clone().then(tok(T::As).ignore_then(x.star_target.clone()).or_not()).validate(
        |(context, target), _, emitter| {
            if let Some(target) = &target {
                check_store(target, emitter);
            }
            WithItem { context, target }
        },
    );
    let parenthesized = item
        .clone()
        .separated_by(tok(T::Comma))
        .at_least(1)
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(tok(T::LParen), tok(T::RParen))
        .then_ignore(tok(T::Colon));
    let plain = item.separated_by(tok(T::Comma)).at_least(1).collect::<Vec<_>>().then_ignore(tok(T::Colon));
    tok_span(T::With)
        .then(parenthesized.or(plain))
        .then(block)
        .map(|((kw, items), body)| {
            let span = Span::new(kw.start, end_of(&body));
            Stmt::new(StmtKind::With { items, body }, span)
        })
        .boxed()
}

/// `try:` with `except` handlers (`except*` too), `else` and `finally`.
fn try_stmt<'t>(x: &Exprs<'t>, block: P<'t, Vec<Stmt>>) -> P<'t, Stmt> {
    let colon_block = || tok(T::Colon).ignore_then(block.clone());
    let handler = tok_span(T::Except)
        .then(tok(T::Star).or_not().map(|s| s.is_some()))
        .then(x.expression.clone().then(tok(T::As).ignore_then(ident()).or_not()).or_not())
        .then(colon_block())
        .map(|(((kw, star), typ), body)| {
            let (typ, name) = match typ {
                Some((typ, name)) => (Some(typ), name),
                None => (None, None),
            };
            (star, ExceptHandler { typ, name, span: Span::new(kw.start, end_of(&body)), body })
        });
    let finally = tok(T::Finally).ignore_then(colon_block());
    let handlers_else_finally = handler
        .repeated()
        .at_least(1)
        .collect::<Vec<_>>()
        .then(tok(T::Else).ignore_then(colon_block()).or_not())
        .then(finally.clone().or_not())
        .map(|((handlers, orelse), finalbody)| (handlers, orelse.unwrap_or_default(), finalbody.unwrap_or_default()));
    let finally_only = finally.map(|finalbody| (vec![], vec![], finalbody));
    tok_span(T::Try)
        .then(colon_block())
        .then(handlers_else_finally.or(finally_only))
        .validate(|((kw, body), (handlers, orelse, finalbody)), _, emitter| {
            let star = handlers.first().is_some_and(|(star, _)| *star);
            let count = handlers.len();
            let mut hs = Vec::with_capacity(count);
            for (i, (is_star, handler)) in handlers.into_iter().enumerate() {
                if is_star != star {
                    emitter.emit(custom(Diagnostic::error(
                        "cannot have both `except` and `except*` on the same `try`",
                        handler.span,
                    )));
                }
                if handler.typ.is_none() && (star || i + 1 < count) {
                    let message =
                        if star { "`except*` needs an exception type" } else { "a bare `except:` must be last" };
                    emitter.emit(custom(Diagnostic::error(
                        message,
                        Span::new(handler.span.start, handler.span.start + 6),
                    )));
                }
                hs.push(handler);
            }
            let end = [&finalbody, &orelse]
                .into_iter()
                .find(|b| !b.is_empty())
                .map_or_else(|| hs.last().map_or(end_of(&body), |h| h.span.end), |b| end_of(b));
            Stmt::new(StmtKind::Try { body, handlers: hs, orelse, finalbody, star }, Span::new(kw.start, end))
        })
        .boxed()
}

/// `match subject:` followed by an indented block of `case`s (`match` and `case` are soft keywords, so
/// `match = 1` and `match(x)` are still ordinary statements). Patterns are read as expressions ([`MatchCase`]).
fn match_stmt<'t>(x: &Exprs<'t>, block: P<'t, Vec<Stmt>>) -> P<'t, Stmt> {
    let case = soft_keyword("case")
        .then(x.star_expressions.clone())
        .then(tok(T::As).ignore_then(ident()).or_not())
        .then(tok(T::If).ignore_then(x.named.clone()).or_not())
        .then_ignore(tok(T::Colon))
        .then(block)
        .map(|((((kw, pattern), alias), guard), body)| MatchCase {
            span: Span::new(kw.start, end_of(&body)),
            pattern,
            alias,
            guard,
            body,
        });
    soft_keyword("match")
        .then(x.star_expressions.clone())
        .then_ignore(tok(T::Colon))
        .then_ignore(tok(T::Newline))
        .then_ignore(tok(T::Indent))
        .then(case.repeated().at_least(1).collect::<Vec<_>>())
        .then_ignore(tok(T::Dedent))
        .map(|((kw, subject), cases)| {
            let end = cases.last().map_or(kw.end, |c| c.span.end);
            Stmt::new(StmtKind::Match { subject, cases }, Span::new(kw.start, end))
        })
        .boxed()
}
