//! Helpers shared by the integration tests.

#![allow(dead_code)]

use tessel_lang::ast::{self, Module};
use tessel_lang::{Diagnostic, parse_module};

/// Parses `src`, panicking with the rendered diagnostic if it does not parse.
pub fn parse(src: &str) -> Module {
    parse_module(src).unwrap_or_else(|d| panic!("parse failed:\n{}", d.render("test.py", src)))
}

/// The span-free dump of a module's statements (without the `Module` line, dedented one level).
pub fn tree(src: &str) -> String {
    let dump = ast::dump(&parse(src), false);
    dump.lines().skip(1).map(|l| l.strip_prefix("  ").unwrap_or(l)).collect::<Vec<_>>().join("\n")
}

/// The span-free dump of a single expression.
pub fn expr(src: &str) -> String {
    let e = tessel_lang::parse_expr(src).unwrap_or_else(|d| panic!("parse failed:\n{}", d.render("test.py", src)));
    ast::dump_expr(&e, false).trim_end().to_string()
}

/// Removes the common leading indentation and surrounding blank lines from an expected tree written inline.
pub fn dedent(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let indent = lines.iter().map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    lines.iter().map(|l| &l[indent..]).collect::<Vec<_>>().join("\n")
}

/// The error for `src`, which must not parse.
pub fn error(src: &str) -> Diagnostic {
    match parse_module(src) {
        Ok(m) => panic!("expected a parse error, got:\n{}", ast::dump(&m, false)),
        Err(d) => d,
    }
}

/// The error for `src` and the source text its primary span covers.
pub fn error_at(src: &str) -> (Diagnostic, &str) {
    let d = error(src);
    assert!(d.span.start <= d.span.end && d.span.end <= src.len(), "span {:?} outside the source", d.span);
    let text = &src[d.span.start..d.span.end];
    (d, text)
}
