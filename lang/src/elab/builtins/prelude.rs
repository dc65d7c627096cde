//! The prelude: library functions of `triton.language` that Triton itself writes in its own language
//! (`tl.sum`, `tl.max`, `tl.argmax`, `tl.softmax`, `tl.cdiv`, `tl.rand`, Philox...), written in tessel's kernel
//! language (`prelude.py`) and elaborated like user code. Writing them this way keeps their semantics
//! identical to Triton's (the random numbers are bit-exact) and exercises the elaborator on real library code.

use std::sync::OnceLock;

use crate::ast;
use crate::diag::Diagnostic;

/// The prelude's source.
pub const SOURCE: &str = include_str!("prelude.py");

/// The parsed prelude (parsed once per process).
#[allow(clippy::result_large_err)]
pub fn module() -> Result<&'static ast::Module, Diagnostic> {
    static PRELUDE: OnceLock<Result<ast::Module, Diagnostic>> = OnceLock::new();
    match PRELUDE.get_or_init(|| crate::parse_module(SOURCE)) {
        Ok(m) => Ok(m),
        Err(d) => {
            Err(Diagnostic::error(format!("internal error: tessel's prelude does not parse: {}", d.message), d.span))
        }
    }
}
