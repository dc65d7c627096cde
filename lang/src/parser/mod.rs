//! The parser: chumsky 0.13 combinators over the token stream, following the grammar of Python 3.12
//! (`Grammar/python.gram`) rule by rule, minus `async`/`await`, which parse only far enough to be
//! reported as unsupported.
//!
//! - [`expr`]: the expression precedence chain (`expression` down to `primary`), targets and call arguments;
//! - [`atom`]: literals, strings and f-strings, parenthesized forms, displays and comprehensions;
//! - [`params`]: parameter lists of `def` and `lambda`, and type parameters;
//! - [`stmt`]: simple statements; [`compound`]: compound statements, blocks and the module;
//! - [`targets`]: checks that assignment/deletion targets are assignable;
//! - [`error`]: turns chumsky's errors into one [`Diagnostic`] in plain words.
//! - here: the small combinators every rule shares (`tok`, `ident`, `comma_list`, `starred`, `custom` errors).
//!
//! The grammar is written so that nothing is parsed twice on the happy path (each alternative is decided by its
//! first token or after a shared prefix), which keeps parsing linear for ordinary code. Large parsers are
//! `.boxed()` to keep types (and compile times) small.

mod atom;
mod compound;
mod error;
mod expr;
mod params;
mod stmt;
mod targets;

use chumsky::input::{Input as _, MappedInput};
use chumsky::prelude::*;

use crate::ast::{Expr, ExprKind, Ident, Module};
use crate::diag::Diagnostic;
use crate::lexer::Lexed;
use crate::span::Span;
use crate::token::{Token, TokenKind};

/// The parser input: the lexer's tokens, split into kind and span.
pub(crate) type In<'t> = MappedInput<'t, TokenKind, Span, &'t [Token], fn(&'t Token) -> (&'t TokenKind, &'t Span)>;
/// Parse errors; errors the grammar itself raises (`async` is not supported, invalid targets...) carry a finished
/// [`Diagnostic`].
pub(crate) type Error<'t> = Rich<'t, TokenKind, Span, Diagnostic>;
pub(crate) type Extra<'t> = extra::Err<Error<'t>>;
/// A boxed parser producing `O`.
pub(crate) type P<'t, O> = Boxed<'t, 't, In<'t>, O, Extra<'t>>;

fn split(token: &Token) -> (&TokenKind, &Span) {
    (&token.kind, &token.span)
}

/// Parses the tokens of a whole module lexed from `source`.
pub(crate) fn parse_tokens<'t>(lexed: &'t Lexed, source: &str) -> Result<Module, Diagnostic> {
    let input =
        lexed.tokens.as_slice().map(Span::point(source.len()), split as fn(&'t Token) -> (&'t TokenKind, &'t Span));
    let parser = compound::module(source.len());
    parser.parse(input).into_result().map_err(|errors| error::report(errors, lexed, source))
}

/// The single token `kind`.
pub(crate) fn tok<'t>(kind: TokenKind) -> impl Parser<'t, In<'t>, TokenKind, Extra<'t>> + Clone {
    just(kind)
}

/// A name token as an [`Ident`].
pub(crate) fn ident<'t>() -> impl Parser<'t, In<'t>, Ident, Extra<'t>> + Clone {
    select_ref! { TokenKind::Name(name) = e => Ident { name: name.clone(), span: e.span() } }.labelled("a name")
}

/// A name token spelled `word` (a soft keyword such as `match`, `case` or `type`).
pub(crate) fn soft_keyword<'t>(word: &'static str) -> impl Parser<'t, In<'t>, Span, Extra<'t>> + Clone {
    select_ref! { TokenKind::Name(name) = e if name == word => e.span() }
}

/// The span of the token `kind`.
pub(crate) fn tok_span<'t>(kind: TokenKind) -> impl Parser<'t, In<'t>, Span, Extra<'t>> + Clone {
    just(kind).map_with(|_, e| e.span())
}

/// `*value`
pub(crate) fn starred<'t>(value: P<'t, Expr>) -> impl Parser<'t, In<'t>, Expr, Extra<'t>> + Clone {
    tok(TokenKind::Star).ignore_then(value).map_with(|value, e| Expr::new(ExprKind::Starred(Box::new(value)), e.span()))
}

/// `item (, item)* [,]`: the items and whether there was a trailing comma.
pub(crate) fn comma_list<'t, O: 't>(
    item: impl Parser<'t, In<'t>, O, Extra<'t>> + Clone + 't,
) -> impl Parser<'t, In<'t>, (Vec<O>, bool), Extra<'t>> + Clone {
    item.separated_by(tok(TokenKind::Comma))
        .at_least(1)
        .collect::<Vec<_>>()
        .then(tok(TokenKind::Comma).or_not().map(|c| c.is_some()))
}

/// A grammar error raised from a `validate` step (the parse carries on, and the earliest error in the file is the
/// one reported).
pub(crate) fn custom<'t>(diagnostic: Diagnostic) -> Error<'t> {
    Rich::custom(diagnostic.span, diagnostic)
}

/// The error for a Python construct tessel does not support (`await`, `async`).
pub(crate) fn unsupported<'t>(what: &str, span: Span, hint: &str) -> Error<'t> {
    custom(
        Diagnostic::error(format!("`{what}` is not supported in tessel kernels/modules"), span)
            .with_label(format!("`{what}` used here"))
            .with_hint(hint),
    )
}
