//! Expressions: Python's precedence chain, from `expression` (conditional expressions and lambdas) down through
//! `disjunction`, `conjunction`, `inversion`, `comparison`, the binary operators `| ^ & << >> + - * / // % @`,
//! unary `+ - ~`, `**` and `primary` (attribute access, calls and subscripts), plus the shared pieces other rules
//! need: named and starred expressions, unparenthesized tuples, assignment targets, slices and call arguments.

use chumsky::prelude::*;

use super::atom::{self, Core};
use super::params;
use super::{Extra, In, P, comma_list, custom, ident, starred, tok, tok_span, unsupported};
use crate::ast::*;
use crate::diag::Diagnostic;
use crate::token::TokenKind as T;

/// The expression parsers the statement grammar uses.
#[derive(Clone)]
pub(crate) struct Exprs<'t> {
    /// `expression`: a conditional expression, a lambda or anything tighter.
    pub expression: P<'t, Expr>,
    /// `named_expression`: `name := expression` or an `expression`.
    pub named: P<'t, Expr>,
    /// `star_expressions`: a comma-separated list (a `Tuple` if there is a comma) of expressions and `*starred`.
    pub star_expressions: P<'t, Expr>,
    /// A single assignment target, possibly `*starred` (as after `with ... as`).
    pub star_target: P<'t, Expr>,
    /// `star_targets`: targets of `for` and comprehensions, a `Tuple` if there is a comma.
    pub star_targets: P<'t, Expr>,
    /// The contents of the parentheses of a call or class definition (possibly empty).
    pub arguments: P<'t, (Vec<Expr>, Vec<Keyword>)>,
    /// The contents of the parentheses of a `def` (possibly empty).
    pub parameters: P<'t, Parameters>,
    /// `[T, *Ts, **P]` after the name of a def, class or type alias.
    pub type_params: P<'t, Vec<TypeParam>>,
}

/// Builds the expression grammar.
///
/// `expression`, `bitwise_or` and `disjunction` are mutually recursive (atoms contain expressions, starred items
/// and comprehensions). They are tied with nested `recursive` calls, whose self-references are weak: a grammar tied
/// with `Recursive::declare` is a cycle of `Rc`s and would leak on every parse. So the nesting is `expression` ⊃
/// `bitwise_or`, the parsers that only need those two are built inside, and `disjunction` (a few small parsers)
/// is built once inside `bitwise_or` for comprehensions and once outside for the rest.
pub(crate) fn exprs<'t>() -> Exprs<'t> {
    let mut inner = None;
    let expression = recursive(|expression| {
        let expression: P<'t, Expr> = expression.boxed();
        let bitwise_or = recursive(|bitwise_or| {
            let bitwise_or: P<'t, Expr> = bitwise_or.boxed();
            let named = ident()
                .then_ignore(tok(T::Walrus))
                .then(expression.clone())
                .map_with(|(target, value), e| {
                    Expr::new(ExprKind::NamedExpr { target, value: Box::new(value) }, e.span())
                })
                .or(expression.clone())
                .labelled("an expression")
                .boxed();
            let star_named = starred(bitwise_or.clone()).or(named.clone()).boxed();
            let star_expression = starred(bitwise_or.clone()).or(expression.clone()).boxed();
            let star_expressions = tuple_or_single(star_expression).boxed();
            let star_target = starred(bitwise_or.clone()).or(bitwise_or.clone()).boxed();
            let star_targets = tuple_or_single(star_target.clone()).boxed();
            let comp_for = comprehension_clauses(star_targets.clone(), disjunction(bitwise_or.clone()));
            let core = Core {
                expression: expression.clone(),
                named: named.clone(),
                star_named,
                star_expressions: star_expressions.clone(),
                bitwise_or,
                comp_for,
            };
            let arguments = arguments(&core);
            let primary = primary(atom::atom(&core), arguments.clone(), slices(&core));
            inner = Some((named, star_expressions, star_target, star_targets, arguments));
            binary_chain(primary)
        })
        .boxed();
        let disjunction = disjunction(bitwise_or);
        let lambda = tok(T::Lambda)
            .ignore_then(params::parameters(expression.clone(), false).then_ignore(tok(T::Colon)))
            .then(expression.clone())
            .map_with(|(params, body), e| {
                Expr::new(ExprKind::Lambda { params: Box::new(params), body: Box::new(body) }, e.span())
            });
        let conditional = disjunction
            .clone()
            .then(tok(T::If).ignore_then(disjunction).then_ignore(tok(T::Else)).then(expression).or_not())
            .map_with(|(body, rest), e| match rest {
                None => body,
                Some((test, orelse)) => Expr::new(
                    ExprKind::IfExp { test: Box::new(test), body: Box::new(body), orelse: Box::new(orelse) },
                    e.span(),
                ),
            });
        lambda.or(conditional).labelled("an expression")
    })
    .boxed();
    let (named, star_expressions, star_target, star_targets, arguments) =
        inner.expect("`recursive` builds the grammar before returning");
    Exprs {
        expression: expression.clone(),
        named,
        star_expressions,
        star_target,
        star_targets,
        arguments,
        parameters: params::parameters(expression.clone(), true),
        type_params: params::type_params(expression),
    }
}

/// `disjunction`: `or` over `and` over `not` over comparisons of `bitwise_or`s.
fn disjunction<'t>(bitwise_or: P<'t, Expr>) -> P<'t, Expr> {
    let comparison = comparison(bitwise_or);
    let inversion = recursive(|inversion| {
        tok(T::Not)
            .ignore_then(inversion)
            .map_with(|operand, e| {
                Expr::new(ExprKind::UnaryOp { op: UnaryOpKind::Not, operand: Box::new(operand) }, e.span())
            })
            .or(comparison)
    })
    .boxed();
    bool_op(bool_op(inversion, T::And, BoolOpKind::And), T::Or, BoolOpKind::Or)
}

/// `item (, item)* [,]`: the item alone, or a `Tuple` if there is a comma.
pub(crate) fn tuple_or_single<'t>(item: P<'t, Expr>) -> impl Parser<'t, In<'t>, Expr, Extra<'t>> + Clone {
    comma_list(item).map_with(|(mut items, trailing), e| {
        if items.len() == 1 && !trailing {
            items.pop().expect("one item")
        } else {
            Expr::new(ExprKind::Tuple(items), e.span())
        }
    })
}

/// `(for targets in iter (if cond)*)+` (an `async for` is reported as unsupported).
fn comprehension_clauses<'t>(targets: P<'t, Expr>, disjunction: P<'t, Expr>) -> P<'t, Vec<Comprehension>> {
    let is_async = tok_span(T::Async).or_not().validate(|span, _, emitter| {
        if let Some(span) = span {
            emitter.emit(unsupported("async", span, "use a plain `for` in comprehensions"));
        }
    });
    is_async
        .ignore_then(tok(T::For))
        .ignore_then(targets.validate(|target, _, emitter| {
            super::targets::check_store(&target, emitter);
            target
        }))
        .then_ignore(tok(T::In))
        .then(disjunction.clone())
        .then(tok(T::If).ignore_then(disjunction).repeated().collect::<Vec<_>>())
        .map_with(|((target, iter), ifs), e| Comprehension { target, iter, ifs, span: e.span() })
        .repeated()
        .at_least(1)
        .collect()
        .boxed()
}

/// `atom` followed by `.name`, `(arguments)` and `[slices]`, left to right.
fn primary<'t>(atom: P<'t, Expr>, arguments: P<'t, (Vec<Expr>, Vec<Keyword>)>, slices: P<'t, Expr>) -> P<'t, Expr> {
    enum Trailer {
        Attr(Ident),
        Call(Vec<Expr>, Vec<Keyword>),
        Index(Expr),
    }
    let trailer = choice((
        tok(T::Dot).ignore_then(ident()).map(Trailer::Attr),
        arguments.delimited_by(tok(T::LParen), tok(T::RParen)).map(|(args, keywords)| Trailer::Call(args, keywords)),
        slices.delimited_by(tok(T::LBracket), tok(T::RBracket)).map(Trailer::Index),
    ));
    let primary = atom.foldl_with(trailer.repeated(), |value, trailer, e| {
        let value = Box::new(value);
        let kind = match trailer {
            Trailer::Attr(attr) => ExprKind::Attribute { value, attr },
            Trailer::Call(args, keywords) => ExprKind::Call { func: value, args, keywords },
            Trailer::Index(index) => ExprKind::Subscript { value, index: Box::new(index) },
        };
        Expr::new(kind, e.span())
    });
    // `await x` parses (so the error is precise) but is not supported.
    tok_span(T::Await)
        .then(primary.clone())
        .validate(|(span, value), _, emitter| {
            emitter.emit(unsupported("await", span, "kernels run synchronously; call the function directly"));
            value
        })
        .or(primary)
        .boxed()
}

/// `factor` and `power` (unary `+ - ~` bind looser than `**` on their right: `-x**2` is `-(x**2)`), then the
/// left-associative binary levels from `*` out to `|`.
fn binary_chain<'t>(primary: P<'t, Expr>) -> P<'t, Expr> {
    use BinOpKind::*;
    let factor = recursive(|factor| {
        let power = primary.clone().then(tok(T::DoubleStar).ignore_then(factor.clone()).or_not()).map_with(
            |(base, exponent), e| match exponent {
                None => base,
                Some(exp) => binop(base, Pow, exp, e.span()),
            },
        );
        let unary = op_table(vec![
            (T::Minus, UnaryOpKind::USub),
            (T::Plus, UnaryOpKind::UAdd),
            (T::Tilde, UnaryOpKind::Invert),
        ]);
        unary
            .then(factor)
            .map_with(|(op, operand), e| Expr::new(ExprKind::UnaryOp { op, operand: Box::new(operand) }, e.span()))
            .or(power)
            .labelled("an expression")
    })
    .boxed();
    let term = left_assoc(
        factor,
        vec![(T::Star, Mul), (T::Slash, Div), (T::DoubleSlash, FloorDiv), (T::Percent, Mod), (T::At, MatMul)],
    );
    let sum = left_assoc(term, vec![(T::Plus, Add), (T::Minus, Sub)]);
    let shift = left_assoc(sum, vec![(T::LShift, LShift), (T::RShift, RShift)]);
    let bitwise_and = left_assoc(shift, vec![(T::Amp, BitAnd)]);
    let bitwise_xor = left_assoc(bitwise_and, vec![(T::Caret, BitXor)]);
    left_assoc(bitwise_xor, vec![(T::Pipe, BitOr)])
}

fn binop(left: Expr, op: BinOpKind, right: Expr, span: Span) -> Expr {
    Expr::new(ExprKind::BinOp { left: Box::new(left), op, right: Box::new(right) }, span)
}

/// One of the tokens in `table`, as its value (each token is reported by name if none matches).
pub(crate) fn op_table<'t, O: Clone + 't>(table: Vec<(T, O)>) -> P<'t, O> {
    choice(table.into_iter().map(|(token, value)| tok(token).to(value).boxed()).collect::<Vec<_>>()).boxed()
}

/// `operand (op operand)*`, folded to the left.
fn left_assoc<'t>(operand: P<'t, Expr>, ops: Vec<(T, BinOpKind)>) -> P<'t, Expr> {
    operand
        .clone()
        .foldl_with(op_table(ops).then(operand).repeated(), |left, (op, right), e| binop(left, op, right, e.span()))
        .boxed()
}

/// `a < b <= c`: one `Compare` node for the whole chain.
fn comparison<'t>(operand: P<'t, Expr>) -> P<'t, Expr> {
    let op = choice((
        op_table(vec![
            (T::EqEq, CmpOp::Eq),
            (T::NotEq, CmpOp::NotEq),
            (T::Lt, CmpOp::Lt),
            (T::Le, CmpOp::LtE),
            (T::Gt, CmpOp::Gt),
            (T::Ge, CmpOp::GtE),
            (T::In, CmpOp::In),
        ]),
        tok(T::Not).then(tok(T::In)).to(CmpOp::NotIn),
        tok(T::Is).ignore_then(tok(T::Not).or_not()).map(|not| if not.is_some() { CmpOp::IsNot } else { CmpOp::Is }),
    ));
    operand
        .clone()
        .then(op.then(operand).repeated().collect::<Vec<_>>())
        .map_with(|(left, rest), e| {
            if rest.is_empty() {
                return left;
            }
            let (ops, comparators) = rest.into_iter().unzip();
            Expr::new(ExprKind::Compare { left: Box::new(left), ops, comparators }, e.span())
        })
        .boxed()
}

/// `operand (keyword operand)*` as one `BoolOp` over all operands.
fn bool_op<'t>(operand: P<'t, Expr>, keyword: T, op: BoolOpKind) -> P<'t, Expr> {
    operand
        .clone()
        .then(tok(keyword).ignore_then(operand).repeated().collect::<Vec<_>>())
        .map_with(move |(first, rest), e| {
            if rest.is_empty() {
                return first;
            }
            let mut values = vec![first];
            values.extend(rest);
            Expr::new(ExprKind::BoolOp { op, values }, e.span())
        })
        .boxed()
}

/// The index of a subscript: one slice or expression, or several (a `Tuple`).
fn slices<'t>(c: &Core<'t>) -> P<'t, Expr> {
    let bound = || c.expression.clone().or_not().map(|e| e.map(Box::new));
    // `:upper` and an optional `:step`, after the (optional) lower bound.
    let upper_step = tok(T::Colon).ignore_then(bound()).then(tok(T::Colon).ignore_then(bound()).or_not());
    let slice = |lower: Option<Box<Expr>>, (upper, step): (Option<Box<Expr>>, Option<Option<Box<Expr>>>), span| {
        Expr::new(ExprKind::Slice { lower, upper, step: step.flatten() }, span)
    };
    let item = choice((
        upper_step.clone().map_with(move |us, e| slice(None, us, e.span())),
        starred(c.bitwise_or.clone()).or(c.named.clone()).then(upper_step.or_not()).validate(
            move |(first, us), e, emitter| match us {
                None => first,
                Some(us) => {
                    if matches!(first.kind, ExprKind::Starred(_)) {
                        emitter.emit(custom(Diagnostic::error("a slice bound cannot be starred", first.span)));
                    }
                    slice(Some(Box::new(first)), us, e.span())
                }
            },
        ),
    ))
    .labelled("an index or slice")
    .boxed();
    // As in Python, a lone `*starred` index is a one-element tuple: `x[*idx]` is `x[(*idx,)]`.
    tuple_or_single(item)
        .map(|index| match index.kind {
            ExprKind::Starred(_) => Expr::new(ExprKind::Tuple(vec![index.clone()]), index.span),
            _ => index,
        })
        .boxed()
}

/// The arguments of a call: positional, `*iterable`, `name=value` and `**mapping`, in Python's order, or a single
/// generator expression (`sum(x for x in xs)`).
fn arguments<'t>(c: &Core<'t>) -> P<'t, (Vec<Expr>, Vec<Keyword>)> {
    #[derive(Clone)]
    enum Arg {
        Positional(Expr),
        /// `f(x for x in xs)`: a generator expression without its own parentheses.
        BareGenerator(Expr),
        Star(Expr),
        Keyword(Keyword),
        DoubleStar(Keyword),
    }
    let keyword = ident()
        .then_ignore(tok(T::Eq))
        .then(c.expression.clone())
        .map_with(|(name, value), e| Arg::Keyword(Keyword { arg: Some(name), value, span: e.span() }));
    let arg = choice((
        tok(T::DoubleStar)
            .ignore_then(c.expression.clone())
            .map_with(|value, e| Arg::DoubleStar(Keyword { arg: None, value, span: e.span() })),
        starred(c.expression.clone()).map(Arg::Star),
        keyword,
        c.named.clone().map(Arg::Positional),
    ))
    .labelled("an argument")
    .boxed();
    // The first argument may be followed by comprehension clauses, which make it a generator expression.
    let first = arg.clone().then(c.comp_for.clone().or_not()).validate(|(arg, generators), e, emitter| {
        match (arg, generators) {
            (arg, None) => arg,
            (Arg::Positional(elt), Some(generators)) => {
                Arg::BareGenerator(Expr::new(ExprKind::GeneratorExp { elt: Box::new(elt), generators }, e.span()))
            }
            (arg, Some(_)) => {
                emitter.emit(custom(Diagnostic::error("invalid generator expression argument", e.span())));
                arg
            }
        }
    });
    let rest = tok(T::Comma).ignore_then(arg).repeated().collect::<Vec<_>>();
    first
        .then(rest)
        .then_ignore(tok(T::Comma).or_not())
        .validate(|(first, rest), _, emitter| {
            let mut args = Vec::new();
            let mut keywords: Vec<Keyword> = Vec::new();
            let single = rest.is_empty();
            for arg in std::iter::once(first).chain(rest) {
                let is_bare_generator = matches!(arg, Arg::BareGenerator(_));
                match arg {
                    Arg::Positional(value) | Arg::BareGenerator(value) => {
                        if is_bare_generator && !single {
                            emitter.emit(custom(
                                Diagnostic::error("generator expression must be parenthesized", value.span).with_hint(
                                    "a generator expression is a call's argument only when it is the only one",
                                ),
                            ));
                        }
                        if let Some(kw) = keywords.last() {
                            let message = if kw.arg.is_some() {
                                "positional argument follows keyword argument"
                            } else {
                                "positional argument follows keyword argument unpacking"
                            };
                            emitter.emit(custom(
                                Diagnostic::error(message, value.span).with_secondary(kw.span, "the keyword argument"),
                            ));
                        }
                        args.push(value);
                    }
                    Arg::Star(value) => {
                        if let Some(kw) = keywords.iter().find(|k| k.arg.is_none()) {
                            emitter.emit(custom(
                                Diagnostic::error(
                                    "iterable argument unpacking follows keyword argument unpacking",
                                    value.span,
                                )
                                .with_secondary(kw.span, "the keyword argument unpacking"),
                            ));
                        }
                        args.push(value);
                    }
                    Arg::Keyword(kw) => {
                        let name = kw.arg.as_ref().expect("a keyword argument has a name");
                        if let Some(prev) =
                            keywords.iter().find(|k| k.arg.as_ref().is_some_and(|a| a.name == name.name))
                        {
                            emitter.emit(custom(
                                Diagnostic::error(format!("keyword argument repeated: `{}`", name.name), name.span)
                                    .with_secondary(prev.span, "first given here"),
                            ));
                        }
                        keywords.push(kw);
                    }
                    Arg::DoubleStar(kw) => keywords.push(kw),
                }
            }
            (args, keywords)
        })
        .or_not()
        .map(Option::unwrap_or_default)
        .boxed()
}
