//! The IR's element semantics: what one element of an op computes for each element type ([`arith`]), the
//! element values and number formats ([`value`]), and which math routine reproduces libdevice's code for an op
//! ([`routines`]). The interpreter runs them, folding evaluates constants with them, codegen materializes
//! constants with them, so a folded program computes exactly what the unfolded one would.

pub mod arith;
pub mod routines;
pub mod value;
