//! The prelude: library functions of `triton.language` that Triton itself writes in its own language
//! (`tl.sum`, `tl.max`, `tl.argmax`, `tl.softmax`, `tl.cdiv`, `tl.rand`, Philox...), written in tessel's kernel
//! language (`prelude.py`) and elaborated like user code. Writing them this way keeps their semantics
//! identical to Triton's (the random numbers are bit-exact) and exercises the elaborator on real library code.
//! [`register`] says which of its functions are `tl`'s (and which are methods of tensors too).

use std::sync::OnceLock;

use crate::ast;
use crate::diag::Diagnostic;
use crate::elab::names::TL;
use crate::elab::registry::Registry;

/// The prelude's functions that are `tl`'s; `x.sum()` is `tl.sum(x)`.
pub(super) fn register(r: &mut Registry) {
    for name in [
        "cdiv",
        "_log2",
        "_is_power_of_two",
        "get_int_dtype",
        "swizzle2d",
        "rand",
        "randn",
        "randint",
        "randint4x",
        "philox",
        "philox_impl",
        "uint_to_uniform_float",
        "pair_uniform_to_normal",
        "dot_scaled",
    ] {
        r.prelude(TL, name);
    }
    for name in [
        "sigmoid",
        "softmax",
        "sum",
        "max",
        "min",
        "argmax",
        "argmin",
        "xor_sum",
        "reduce_or",
        "cumsum",
        "cumprod",
        "ravel",
        "interleave",
        "flip",
        "sort",
    ] {
        r.prelude(TL, name).method();
    }
}

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
