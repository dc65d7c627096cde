//! Turns chumsky's errors into one [`Diagnostic`] in plain words.
//!
//! chumsky reports the furthest point the parse reached, the token found there and every token some alternative
//! would have accepted. After an expression that set includes every binary operator, `.`, `(`, `[` and so on,
//! which says nothing useful; so the tokens that could merely *continue* an expression are dropped when anything
//! else was expected, and the rest is listed. Then a few situations get their own wording (unexpected indent, a
//! missing indented block, `=` where a comparison was meant, a keyword used as a name) and unclosed brackets are
//! pointed at.

use chumsky::error::{RichPattern, RichReason};

use super::Error;
use crate::diag::Diagnostic;
use crate::lexer::Lexed;
use crate::span::Span;
use crate::token::TokenKind as T;

/// The one diagnostic for a failed parse: the earliest error in the file.
pub(crate) fn report(errors: Vec<Error<'_>>, lexed: &Lexed, source: &str) -> Diagnostic {
    let error = errors.into_iter().min_by_key(|e| e.span().start).expect("a failed parse has at least one error");
    let span = *error.span();
    let diagnostic = match error.into_reason() {
        RichReason::Custom(diagnostic) => diagnostic,
        RichReason::ExpectedFound { expected, found } => {
            let expected: Vec<Expected> = expected.iter().filter_map(Expected::from_pattern).collect();
            expected_found(expected, found.as_deref(), span, lexed, source)
        }
    };
    point_at_unclosed(diagnostic, lexed)
}

/// The label of the `INDENT` that starts a block (see `compound::statement`).
pub(crate) const INDENTED_BLOCK: &str = "an indented block";

/// One thing the parser would have accepted.
#[derive(Clone, Debug, PartialEq)]
enum Expected {
    Token(T),
    Label(String),
    EndOfInput,
}

impl Expected {
    fn from_pattern(pattern: &RichPattern<'_, T>) -> Option<Expected> {
        match pattern {
            RichPattern::Token(t) => Some(Expected::Token((**t).clone())),
            RichPattern::Label(l) => Some(Expected::Label(l.to_string())),
            RichPattern::EndOfInput => Some(Expected::EndOfInput),
            _ => None,
        }
    }

    fn is(&self, t: &T) -> bool {
        matches!(self, Expected::Token(k) if k == t)
    }

    fn words(&self) -> String {
        match self {
            Expected::Token(T::Newline) => "end of line".into(),
            Expected::Token(T::Indent) => "an indented block".into(),
            Expected::Token(T::Dedent) => "the end of the block".into(),
            Expected::Token(T::Name(_)) => "a name".into(),
            Expected::Token(t) => format!("`{t}`"),
            Expected::Label(l) => l.clone(),
            Expected::EndOfInput => "end of input".into(),
        }
    }
}

/// Tokens that would only continue the expression before the error: operators, trailers, `if`/`for` of a
/// conditional expression or comprehension, another string to concatenate.
fn continues_expression(t: &T) -> bool {
    use T::*;
    matches!(
        t,
        Plus | Minus
            | Star
            | DoubleStar
            | Slash
            | DoubleSlash
            | Percent
            | At
            | LShift
            | RShift
            | Amp
            | Pipe
            | Caret
            | Lt
            | Gt
            | Le
            | Ge
            | EqEq
            | NotEq
            | Not
            | Is
            | And
            | Or
            | If
            | For
            | Async
            | Dot
            | LParen
            | LBracket
            | Walrus
            // A string may be followed by more strings (implicit concatenation).
            | Str(_)
            | Bytes(_)
            | FStringStart
    )
}

fn is_augmented_assign(t: &T) -> bool {
    use T::*;
    matches!(
        t,
        PlusEq
            | MinusEq
            | StarEq
            | DoubleStarEq
            | SlashEq
            | DoubleSlashEq
            | PercentEq
            | AtEq
            | LShiftEq
            | RShiftEq
            | AmpEq
            | PipeEq
            | CaretEq
    )
}

/// Narrows the expected set to what a reader needs (see the module docs).
fn simplify(expected: Vec<Expected>) -> Vec<Expected> {
    let mut expected: Vec<Expected> = expected.into_iter().fold(Vec::new(), |mut acc, e| {
        if !acc.contains(&e) {
            acc.push(e);
        }
        acc
    });
    let comparison_context = expected.iter().any(|e| e.is(&T::EqEq));
    let after_expression = expected.iter().any(|e| matches!(e, Expected::Token(t) if continues_expression(t)));
    let statement_could_end = expected.iter().any(|e| e.is(&T::Newline));
    let essential: Vec<Expected> = expected
        .iter()
        .filter(|e| match e {
            Expected::Token(t) if continues_expression(t) => false,
            Expected::Token(T::In) => !comparison_context,
            Expected::Token(T::Eq) => !after_expression,
            Expected::Token(t) if is_augmented_assign(t) => false,
            // After an expression statement, `:`, `,` and `;` would continue it into an annotation, tuple or
            // another statement; "end of line" is the useful word.
            Expected::Token(T::Colon | T::Comma | T::Semi) => !statement_could_end,
            _ => true,
        })
        .cloned()
        .collect();
    if essential.is_empty() {
        expected.retain(|e| !matches!(e, Expected::Token(t) if is_augmented_assign(t)));
        if after_expression {
            return vec![Expected::Label("an operator".into())];
        }
        return expected;
    }
    essential
}

fn list(words: &[String]) -> String {
    match words {
        [] => "something else".into(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The line (1-based) of a byte offset.
fn line_of(source: &str, offset: usize) -> usize {
    source.as_bytes()[..offset.min(source.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

fn expected_found(expected: Vec<Expected>, found: Option<&T>, span: Span, lexed: &Lexed, source: &str) -> Diagnostic {
    let found_words = found.map_or_else(|| "end of input".to_string(), T::describe);
    let tokens = &lexed.tokens;
    let index = tokens.iter().position(|t| t.span.start >= span.start && found.is_some_and(|f| *f == t.kind));

    if found == Some(&T::Indent) {
        return Diagnostic::error("unexpected indent", span)
            .with_label("this line is indented, but no block starts here")
            .with_hint("indent only the body of a statement that ends in `:`");
    }
    if expected.iter().any(|e| e.is(&T::Indent) || *e == Expected::Label(INDENTED_BLOCK.into())) {
        // `header:` NEWLINE, then no indented block. Name the statement whose block is missing.
        let header = index.and_then(|i| {
            let before = tokens[..i].iter().rposition(|t| t.kind == T::Colon)?;
            let start = tokens[..before]
                .iter()
                .rposition(|t| matches!(t.kind, T::Newline | T::Indent | T::Dedent))
                .map_or(0, |p| p + 1);
            let first = &tokens[start];
            first.kind.is_keyword().then(|| (first.kind.clone(), first.span))
        });
        // Widened by one character (not one byte: the next one may be `é`) so that the caret has something to mark.
        let next = source.get(span.start..).and_then(|rest| rest.chars().next()).map_or(0, char::len_utf8);
        let at = if span.is_empty() { Span::new(span.start, span.start + next) } else { span };
        let mut diag = Diagnostic::error("expected an indented block", at).with_label("this should be indented");
        if let Some((keyword, header_span)) = header {
            diag.message =
                format!("expected an indented block after `{keyword}` on line {}", line_of(source, header_span.start));
            diag = diag.with_secondary(header_span, format!("`{keyword}` block starts here"));
        }
        return diag;
    }

    let words: Vec<String> = simplify(expected).iter().map(Expected::words).collect();
    let expected_words = list(&words);
    let mut diag = Diagnostic::error(format!("expected {expected_words}, found {found_words}"), span)
        .with_label(format!("expected {expected_words}"));
    match found {
        Some(T::Eq) if !words.iter().any(|w| w == "end of line") => {
            diag = diag.with_hint("to compare, use `==`; to assign inside an expression, use `:=`");
        }
        Some(k) if k.is_keyword() && words.iter().any(|w| w == "a name") => {
            diag = diag.with_hint(format!("`{k}` is a keyword and cannot be used as a name"));
        }
        Some(k @ (T::Else | T::Elif | T::Except | T::Finally)) if words.iter().any(|w| w == "a statement") => {
            diag = diag.with_hint(format!(
                "`{k}` must line up with the statement it continues (`if`, `for`, `while` or `try`)"
            ));
        }
        Some(T::Str(_)) if index.is_some_and(|i| i > 0 && tokens[i - 1].kind == T::Name("print".into())) => {
            diag = diag.with_hint("`print` is a function: write `print(...)`");
        }
        _ => {}
    }
    diag
}

/// Points at the innermost bracket that is never closed, if any opens before the error.
fn point_at_unclosed(mut diag: Diagnostic, lexed: &Lexed) -> Diagnostic {
    if let Some((ch, open)) = lexed.unclosed.iter().rev().find(|(_, open)| open.start <= diag.span.start) {
        diag.secondary.push((*open, format!("unclosed `{ch}` opened here")));
        if diag.hint.is_none() {
            let close = match ch {
                '(' => ')',
                '[' => ']',
                _ => '}',
            };
            diag.hint = Some(format!("close it with `{close}`"));
        }
    }
    diag
}
