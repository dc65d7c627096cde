//! Hyperbolic functions: libdevice's f32 `tanhf`, `acoshf` and f64 `acosh`.

pub mod acosh32;
pub mod acosh64;
pub mod own64;
pub mod tanh32;
