//! Exponentials, logarithms and powers: libdevice's f32 `logf`/`log2f`, `exp10f`/`log10f`, `logbf`, `powf`
//! and f64 `logb`, `pow`, and the f64 `__nv_exp`/`__nv_log` its other sequences inline.

pub mod exp64;
pub mod explog32;
pub mod log32;
pub mod log64;
pub mod logb;
pub mod own64;
pub mod pow32;
pub mod pow64;
