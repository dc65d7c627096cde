//! tessel-lang owns the kernel language: the lexer (with INDENT/DEDENT), the chumsky parser for whole Python
//! modules, the AST, ariadne diagnostics, and the elaborator — a partial evaluator that turns one
//! specialization of a `@triton.jit` / `@gluon.jit` kernel into tile IR.
//!
//! The front end reads whole files. A kernel file is a Python module: imports, host code (torch calls, pytest
//! decorators, f-strings, comprehensions, classes, generators) and decorated kernels, so the parser accepts all of
//! Python 3.12 except `async`/`await`, which are reported as unsupported where they appear. `yield` and `match`
//! parse anywhere and are refused only inside kernels, by the elaborator.
//!
//! - [`source::read`] reads a source file from disk (at most 64 MiB, as UTF-8, a bad byte located);
//! - [`lex`] splits a source into [`Token`]s with byte spans ([`lexer`]);
//! - [`parse_module`] parses a source into an [`ast::Module`] (the private `parser` module: chumsky over the tokens);
//! - every error is one [`Diagnostic`], rendered with ariadne by [`Diagnostic::render`];
//! - [`ast::dump`] prints the tree (`--emit ast`) and `Display` on AST nodes prints Python source back;
//! - [`elab::elaborate`] runs a kernel's specialization at compile time and emits verified tile IR;
//! - every builtin a kernel calls (`tl.load`, `tl.math.exp`, `libdevice.tanh`, Python's `len`, a tensor's
//!   `x.to(...)`, gluon's `gl.*`) is declared once in the builtin registry ([`elab::registry`]): lang registers
//!   its own ([`elab::builtins::registry`]), a plug-in crate (gluon) adds its own to a copy, and the elaborator
//!   finds, names, suggests and calls builtins through it alone ([`elab::lookup`], binding with [`elab::args`]).

// Errors are `Diagnostic`s (message, labels, hint, notes), built once per failed compile on the cold path; boxing
// them to shrink `Result` would buy nothing and cost an indirection at every use.
#![allow(clippy::result_large_err)]

pub mod ast;
pub mod diag;
pub mod elab;
pub mod lexer;
mod parser;
pub mod source;
pub mod span;
pub mod token;

pub use diag::Diagnostic;
pub use span::Span;
pub use token::{Token, TokenKind};

/// Runs `f` with at least 256 KiB of stack left, moving to a fresh 2 MiB segment when less is (the `stacker` crate,
/// which chumsky already uses for its recursive parsers). The recursive walks over the syntax tree (elaboration,
/// unparsing, dumping) call this once per level: the lexer bounds how deep a tree can nest
/// ([`lexer::MAX_NESTING`]), but frames of the elaborator are large, and a test thread has 2 MiB of stack.
pub(crate) fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(256 * 1024, 2 * 1024 * 1024, f)
}

/// Splits `source` into tokens. Unlike [`parse_module`], a bracket left open at the end is an error here.
pub fn lex(source: &str) -> Result<Vec<Token>, Diagnostic> {
    let lexed = lexer::tokenize(source)?;
    if let Some(&(ch, span)) = lexed.unclosed.last() {
        return Err(Diagnostic::error(format!("`{ch}` was never closed"), span).with_label("opened here"));
    }
    Ok(lexed.tokens)
}

/// Parses a whole module. The error is the first problem in the file.
pub fn parse_module(source: &str) -> Result<ast::Module, Diagnostic> {
    let lexed = lexer::tokenize(source)?;
    parser::parse_tokens(&lexed, source)
}

/// Parses a single expression (as in `eval` mode), for tools and tests.
pub fn parse_expr(source: &str) -> Result<ast::Expr, Diagnostic> {
    let module = parse_module(source)?;
    match <[ast::Stmt; 1]>::try_from(module.body) {
        Ok([ast::Stmt { kind: ast::StmtKind::Expr(expr), .. }]) => Ok(expr),
        Ok([stmt]) => Err(Diagnostic::error("expected an expression, found a statement", stmt.span)),
        Err(body) => Err(Diagnostic::error(
            "expected a single expression",
            body.get(1).map_or(Span::point(source.len()), |s| s.span),
        )),
    }
}
