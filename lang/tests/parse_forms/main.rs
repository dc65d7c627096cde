//! The grammar, form by form: one test per form of the kernel language (all of Python 3.12 bar
//! `async`/`await`), checking the shape of the tree as a span-free dump (which reads like Python's
//! `ast.dump`) and, for a few, the spans; and the errors for typical mistakes, checking the message, the span and the
//! rendered report.

#[path = "../common/mod.rs"]
mod common;

mod errors;
mod expressions;
mod statements;

use common::{dedent, expr, tree};

#[track_caller]
fn assert_expr(src: &str, expected: &str) {
    assert_eq!(expr(src), dedent(expected), "for `{src}`");
}

#[track_caller]
fn assert_tree(src: &str, expected: &str) {
    assert_eq!(tree(src), dedent(expected), "for:\n{src}");
}
