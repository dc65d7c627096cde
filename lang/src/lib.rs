//! tessel-lang owns the kernel language: the lexer (with INDENT/DEDENT), the chumsky parser for whole Python
//! modules, the AST, ariadne diagnostics, and the elaborator — a partial evaluator that turns one
//! specialization of a `@triton.jit` / `@gluon.jit` kernel into tile IR. Nothing is implemented here yet.
