//! Parameter lists of `def` and `lambda`, and type parameter lists.
//!
//! A parameter list is parsed as a flat comma-separated list of items (`/`, `*`, `*args`, `**kwargs`, `name`,
//! `name: annotation = default`) and then checked against Python's ordering rules, which gives precise errors
//! ("parameter without a default follows parameter with a default") at the offending parameter.

use chumsky::prelude::*;

use super::{Error, P, custom, ident, starred, tok, tok_span};
use crate::ast::*;
use crate::diag::Diagnostic;
use crate::token::TokenKind as T;

#[derive(Clone)]
enum Item {
    Slash(Span),
    /// `*` (bare, span of the star) or `*args`.
    Star(Option<Param>, Span),
    DoubleStar(Param),
    Plain(Param),
}

/// The parameters between the parentheses of a `def` (`annotated`) or between `lambda` and `:` (no annotations,
/// since `:` ends the list). Possibly empty.
pub(crate) fn parameters<'t>(expression: P<'t, Expr>, annotated: bool) -> P<'t, Parameters> {
    let annotation: P<'t, Option<Expr>> = if annotated {
        tok(T::Colon).ignore_then(expression.clone()).or_not().boxed()
    } else {
        empty().to(None).boxed()
    };
    let param = ident().then(annotation.clone()).map_with(|(name, annotation), e| Param {
        name,
        annotation,
        default: None,
        span: e.span(),
    });
    // `*args: *Ts` is allowed: the annotation of `*args` may be starred.
    let star_annotation: P<'t, Option<Expr>> = if annotated {
        tok(T::Colon).ignore_then(starred(expression.clone()).or(expression.clone())).or_not().boxed()
    } else {
        empty().to(None).boxed()
    };
    let star_param = ident().then(star_annotation).map_with(|(name, annotation), e| Param {
        name,
        annotation,
        default: None,
        span: e.span(),
    });
    let item = choice((
        tok_span(T::Slash).map(Item::Slash),
        tok_span(T::Star).then(star_param.or_not()).map(|(star, p)| {
            let p = p.map(|p| Param { span: star.to(p.span), ..p });
            Item::Star(p, star)
        }),
        tok_span(T::DoubleStar)
            .then(param.clone())
            .map(|(star, p)| Item::DoubleStar(Param { span: star.to(p.span), ..p })),
        param
            .then(tok(T::Eq).ignore_then(expression).or_not())
            .map_with(|(p, default), e| Item::Plain(Param { default, span: e.span(), ..p })),
    ))
    .labelled("a parameter");
    item.separated_by(tok(T::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .validate(|items, _, emitter| assemble(items, emitter))
        .boxed()
}

/// Sorts the items into a [`Parameters`], reporting items out of Python's order.
fn assemble(items: Vec<Item>, emitter: &mut chumsky::input::Emitter<Error<'_>>) -> Parameters {
    let mut params = Parameters::default();
    let mut error = |message: &str, span: Span| emitter.emit(custom(Diagnostic::error(message, span)));
    let mut slash: Option<Span> = None;
    let mut star: Option<Span> = None;
    let mut bare_star: Option<Span> = None;
    let mut default_seen: Option<Span> = None;
    let mut names: Vec<Ident> = Vec::new();
    for item in items {
        if let Some(kwarg) = &params.kwarg {
            let span = match &item {
                Item::Slash(s) | Item::Star(_, s) => *s,
                Item::DoubleStar(p) | Item::Plain(p) => p.span,
            };
            error(&format!("parameters cannot follow `**{}`", kwarg.name.name), span);
        }
        match item {
            Item::Slash(span) => {
                if slash.is_some() {
                    error("`/` may appear only once", span);
                } else if star.is_some() {
                    error("`/` must come before `*`", span);
                } else if params.args.is_empty() {
                    error("at least one parameter must come before `/`", span);
                }
                slash = Some(span);
                params.posonly.append(&mut params.args);
            }
            Item::Star(param, span) => {
                if star.is_some() {
                    error("`*` may appear only once", span);
                }
                star = Some(span);
                match param {
                    Some(p) => {
                        names.push(p.name.clone());
                        params.vararg = Some(p);
                    }
                    None => bare_star = Some(span),
                }
            }
            Item::DoubleStar(p) => {
                names.push(p.name.clone());
                params.kwarg = Some(p);
            }
            Item::Plain(p) => {
                names.push(p.name.clone());
                if star.is_some() {
                    params.kwonly.push(p);
                    continue;
                }
                match (&p.default, default_seen) {
                    (Some(_), _) => default_seen = Some(p.span),
                    (None, Some(_)) => error("parameter without a default follows parameter with a default", p.span),
                    (None, None) => {}
                }
                params.args.push(p);
            }
        }
    }
    if let Some(span) = bare_star.filter(|_| params.kwonly.is_empty()) {
        error("named parameters must follow bare `*`", span);
    }
    for (i, name) in names.iter().enumerate() {
        if names[..i].iter().any(|prev| prev.name == name.name) {
            error(&format!("duplicate parameter `{}`", name.name), name.span);
        }
    }
    params
}

/// `[T, T: bound, *Ts, **P, T = default]` (Python 3.12/3.13 generics).
pub(crate) fn type_params<'t>(expression: P<'t, Expr>) -> P<'t, Vec<TypeParam>> {
    let default = tok(T::Eq).ignore_then(expression.clone()).or_not();
    let kind = choice((
        tok(T::Star).to(TypeParamKind::TypeVarTuple),
        tok(T::DoubleStar).to(TypeParamKind::ParamSpec),
        empty().to(TypeParamKind::TypeVar),
    ));
    kind.then(ident())
        .then(tok(T::Colon).ignore_then(expression).or_not())
        .then(default)
        .validate(|(((kind, name), bound), default), e, emitter| {
            if let Some(bound) = &bound
                && kind != TypeParamKind::TypeVar
            {
                emitter.emit(custom(Diagnostic::error("only a plain type variable can have a bound", bound.span)));
            }
            TypeParam { kind, name, bound, default, span: e.span() }
        })
        .separated_by(tok(T::Comma))
        .at_least(1)
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(tok(T::LBracket), tok(T::RBracket))
        .boxed()
}
