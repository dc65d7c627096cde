//! Atoms: names, literals, (implicitly concatenated) strings and f-strings, parenthesized expressions, tuples,
//! list/set/dict displays and all four comprehensions.
//!
//! Each bracketed form parses its first item once and then decides what it is from the next token (`for` makes a
//! comprehension, `,` a tuple or longer display, `:` a dict, the closing bracket a group or one-item display).

use chumsky::prelude::*;

use super::{P, custom, ident, tok};
use crate::ast::*;
use crate::diag::Diagnostic;
use crate::token::TokenKind as T;

/// The parsers an atom needs from the rest of the expression grammar (they are recursive, so they are passed in).
pub(crate) struct Core<'t> {
    pub expression: P<'t, Expr>,
    pub named: P<'t, Expr>,
    pub star_named: P<'t, Expr>,
    pub star_expressions: P<'t, Expr>,
    pub bitwise_or: P<'t, Expr>,
    pub comp_for: P<'t, Vec<Comprehension>>,
}

pub(crate) fn atom<'t>(c: &Core<'t>) -> P<'t, Expr> {
    let constant = select! {
        T::Int(v) => Constant::Int(v),
        T::Float(v) => Constant::Float(v),
        T::True => Constant::Bool(true),
        T::False => Constant::Bool(false),
        T::None => Constant::None,
        T::Ellipsis => Constant::Ellipsis,
    }
    .map_with(|value, e| Expr::new(ExprKind::Constant(value), e.span()));
    let name = ident().map(|id| Expr::new(ExprKind::Name(id.name), id.span));
    choice((name, constant, strings(c), parenthesized(c), list(c), braces(c), yield_expr(c))).boxed()
}

/// `yield [value]` and `yield from value`. Host code may define generators (a `@contextmanager` fixture, say);
/// the elaborator rejects `yield` in kernels.
fn yield_expr<'t>(c: &Core<'t>) -> P<'t, Expr> {
    let from = tok(T::From).ignore_then(c.expression.clone()).map(|v| ExprKind::YieldFrom(Box::new(v)));
    let plain = c.star_expressions.clone().or_not().map(|v| ExprKind::Yield(v.map(Box::new)));
    tok(T::Yield).ignore_then(from.or(plain)).map_with(|kind, e| Expr::new(kind, e.span())).boxed()
}

/// What follows the first item of a bracketed display.
#[derive(Clone)]
enum Tail {
    /// The closing bracket: `(x)`, `[x]`, `{x}`.
    Close,
    /// Comprehension clauses, then the closing bracket.
    Comprehension(Vec<Comprehension>),
    /// A comma, further items, then the closing bracket.
    More(Vec<Expr>),
}

fn tail<'t>(c: &Core<'t>, close: T) -> P<'t, Tail> {
    choice((
        c.comp_for.clone().then_ignore(tok(close.clone())).map(Tail::Comprehension),
        tok(T::Comma)
            .ignore_then(c.star_named.clone().separated_by(tok(T::Comma)).allow_trailing().collect::<Vec<_>>())
            .then_ignore(tok(close.clone()))
            .map(Tail::More),
        tok(close).to(Tail::Close),
    ))
    .boxed()
}

fn no_starred_element(elt: &Expr, what: &str, emitter: &mut chumsky::input::Emitter<super::Error<'_>>) {
    if matches!(elt.kind, ExprKind::Starred(_)) {
        emitter.emit(custom(Diagnostic::error(format!("iterable unpacking cannot be used in {what}"), elt.span)));
    }
}

/// `()`, `(x)`, `(x,)`, `(x, y)`, `(x for ...)`.
fn parenthesized<'t>(c: &Core<'t>) -> P<'t, Expr> {
    let contents = choice((
        tok(T::RParen).map_with(|_, e| (Expr::new(ExprKind::Tuple(vec![]), e.span()), None)),
        c.star_named.clone().then(tail(c, T::RParen)).map(|(first, tail)| (first, Some(tail))),
    ));
    tok(T::LParen)
        .ignore_then(contents)
        .validate(|(first, tail), e, emitter| match tail {
            None => first,
            Some(Tail::Close) => {
                if matches!(first.kind, ExprKind::Starred(_)) {
                    emitter.emit(custom(
                        Diagnostic::error("cannot use starred expression here", first.span)
                            .with_hint("add a comma to make a tuple: `(*xs,)`"),
                    ));
                }
                // A parenthesized expression keeps the span of what is inside, as in Python.
                first
            }
            Some(Tail::Comprehension(generators)) => {
                no_starred_element(&first, "a generator expression", emitter);
                Expr::new(ExprKind::GeneratorExp { elt: Box::new(first), generators }, e.span())
            }
            Some(Tail::More(rest)) => {
                Expr::new(ExprKind::Tuple(std::iter::once(first).chain(rest).collect()), e.span())
            }
        })
        .boxed()
}

/// `[]`, `[x, y]`, `[x for ...]`.
fn list<'t>(c: &Core<'t>) -> P<'t, Expr> {
    let contents = tok(T::RBracket).to(None).or(c.star_named.clone().then(tail(c, T::RBracket)).map(Some));
    tok(T::LBracket)
        .ignore_then(contents)
        .validate(|contents, e, emitter| {
            let kind = match contents {
                None => ExprKind::List(vec![]),
                Some((first, Tail::Close)) => ExprKind::List(vec![first]),
                Some((first, Tail::More(rest))) => ExprKind::List(std::iter::once(first).chain(rest).collect()),
                Some((first, Tail::Comprehension(generators))) => {
                    no_starred_element(&first, "a list comprehension", emitter);
                    ExprKind::ListComp { elt: Box::new(first), generators }
                }
            };
            Expr::new(kind, e.span())
        })
        .boxed()
}

/// `{}`, `{k: v, **m}`, `{k: v for ...}`, `{x, y}`, `{x for ...}`.
fn braces<'t>(c: &Core<'t>) -> P<'t, Expr> {
    let spread = tok(T::DoubleStar).ignore_then(c.bitwise_or.clone()).map(DictItem::Spread);
    let pair = c.expression.clone().then_ignore(tok(T::Colon)).then(c.expression.clone());
    let item = spread.clone().or(pair.map(|(key, value)| DictItem::Pair { key, value })).labelled("a dict item");
    let more_items = tok(T::Comma).ignore_then(item.separated_by(tok(T::Comma)).allow_trailing().collect::<Vec<_>>());
    let close = || tok(T::RBrace);

    #[derive(Clone)]
    enum Braces {
        Dict(Vec<DictItem>),
        DictComp(Expr, Expr, Vec<Comprehension>),
        Set(Expr, Tail),
    }
    // After a first `key: value`: comprehension clauses, or more items.
    let after_pair = choice((
        c.comp_for.clone().then_ignore(close()).map(Ok),
        more_items.clone().or_not().then_ignore(close()).map(|rest| Err(rest.unwrap_or_default())),
    ));
    // After the first item: `: value` and then comprehension clauses or more items (a dict), or a set's tail.
    let after_first =
        choice((tok(T::Colon).ignore_then(c.expression.clone()).then(after_pair).map(Ok), tail(c, T::RBrace).map(Err)));
    let contents = choice((
        close().to(Braces::Dict(vec![])),
        spread
            .then(more_items.or_not())
            .then_ignore(close())
            .map(|(first, rest)| Braces::Dict(std::iter::once(first).chain(rest.unwrap_or_default()).collect())),
        c.star_named.clone().then(after_first).map(|(first, after)| match after {
            Ok((value, Ok(generators))) => Braces::DictComp(first, value, generators),
            Ok((value, Err(rest))) => {
                Braces::Dict(std::iter::once(DictItem::Pair { key: first, value }).chain(rest).collect())
            }
            Err(tail) => Braces::Set(first, tail),
        }),
    ));
    tok(T::LBrace)
        .ignore_then(contents)
        .validate(|contents, e, emitter| {
            let kind = match contents {
                Braces::Dict(items) => {
                    for item in &items {
                        if let DictItem::Pair { key, .. } = item {
                            no_starred_element(key, "a dict key", emitter);
                        }
                    }
                    ExprKind::Dict(items)
                }
                Braces::DictComp(key, value, generators) => {
                    no_starred_element(&key, "a dict comprehension", emitter);
                    ExprKind::DictComp { key: Box::new(key), value: Box::new(value), generators }
                }
                Braces::Set(first, Tail::Close) => ExprKind::Set(vec![first]),
                Braces::Set(first, Tail::More(rest)) => ExprKind::Set(std::iter::once(first).chain(rest).collect()),
                Braces::Set(first, Tail::Comprehension(generators)) => {
                    no_starred_element(&first, "a set comprehension", emitter);
                    ExprKind::SetComp { elt: Box::new(first), generators }
                }
            };
            Expr::new(kind, e.span())
        })
        .boxed()
}

/// One piece of an implicitly concatenated string.
#[derive(Clone)]
enum Piece {
    Str(String, Span),
    Bytes(Vec<u8>),
    FString(Vec<FStringPart>),
}

/// Adjacent string literals and f-strings, concatenated: a `Str` or `Bytes` constant, or a `JoinedStr` if any
/// piece is an f-string.
fn strings<'t>(c: &Core<'t>) -> P<'t, Expr> {
    let literal = select_ref! {
        T::Str(s) = e => Piece::Str(s.clone(), e.span()),
        T::Bytes(b) => Piece::Bytes(b.clone()),
    };
    let fstring = tok(T::FStringStart)
        .ignore_then(fstring_parts(c).repeated().collect::<Vec<_>>())
        .then_ignore(tok(T::FStringEnd).labelled("the end of the f-string"))
        .map(Piece::FString);
    literal
        .or(fstring)
        .repeated()
        .at_least(1)
        .collect::<Vec<_>>()
        .validate(|pieces, e, emitter| {
            let has_bytes = pieces.iter().any(|p| matches!(p, Piece::Bytes(_)));
            if has_bytes && !pieces.iter().all(|p| matches!(p, Piece::Bytes(_))) {
                emitter.emit(custom(Diagnostic::error("cannot mix bytes and nonbytes literals", e.span())));
            }
            let kind = if has_bytes {
                let mut bytes = Vec::new();
                for piece in pieces {
                    if let Piece::Bytes(b) = piece {
                        bytes.extend(b);
                    }
                }
                ExprKind::Constant(Constant::Bytes(bytes))
            } else if pieces.iter().all(|p| matches!(p, Piece::Str(..))) {
                let mut text = String::new();
                for piece in pieces {
                    if let Piece::Str(s, _) = piece {
                        text.push_str(&s);
                    }
                }
                ExprKind::Constant(Constant::Str(text))
            } else {
                let mut parts: Vec<FStringPart> = Vec::new();
                for piece in pieces {
                    match piece {
                        Piece::Str(s, span) => push_literal(&mut parts, s, span),
                        Piece::FString(ps) => {
                            for part in ps {
                                match part {
                                    FStringPart::Literal(s, span) => push_literal(&mut parts, s, span),
                                    field => parts.push(field),
                                }
                            }
                        }
                        Piece::Bytes(_) => {}
                    }
                }
                ExprKind::JoinedStr(parts)
            };
            Expr::new(kind, e.span())
        })
        .boxed()
}

/// Appends literal text, merging it into a preceding literal as Python does.
fn push_literal(parts: &mut Vec<FStringPart>, text: String, span: Span) {
    if text.is_empty() {
        return;
    }
    if let Some(FStringPart::Literal(prev, prev_span)) = parts.last_mut() {
        prev.push_str(&text);
        *prev_span = prev_span.to(span);
    } else {
        parts.push(FStringPart::Literal(text, span));
    }
}

/// The literal text and replacement fields of an f-string (or of a format spec, which is the same grammar).
fn fstring_parts<'t>(c: &Core<'t>) -> P<'t, FStringPart> {
    recursive(|part| {
        let middle = select_ref! { T::FStringMiddle(s) = e => FStringPart::Literal(s.clone(), e.span()) };
        let debug = select_ref! { T::FStringDebug(text) => text.clone() };
        let conversion = tok(T::Bang).ignore_then(ident()).validate(|conv, _, emitter| {
            match conv.name.as_str() {
                "s" | "r" | "a" => {}
                other => emitter.emit(custom(
                    Diagnostic::error(format!("f-string: invalid conversion character `{other}`"), conv.span)
                        .with_hint("the conversion is `!s`, `!r` or `!a`"),
                )),
            }
            conv.name.chars().next().expect("a name is never empty")
        });
        let spec = tok(T::Colon).ignore_then(part.repeated().collect::<Vec<_>>());
        let field = tok(T::LBrace)
            .ignore_then(c.star_expressions.clone())
            .then(debug.or_not())
            .then(conversion.or_not())
            .then(spec.or_not())
            .then_ignore(tok(T::RBrace))
            .map_with(|(((value, debug_text), conversion), format_spec), e| {
                FStringPart::Field(FormattedValue {
                    value: Box::new(value),
                    debug_text,
                    conversion,
                    format_spec,
                    span: e.span(),
                })
            });
        middle.or(field)
    })
    .boxed()
}
