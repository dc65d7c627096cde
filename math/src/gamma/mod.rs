//! The gamma function and its logarithm: libdevice's f32 `tgammaf`, `lgammaf` and f64 `tgamma`, `lgamma`.

pub mod gamma32;
pub mod gamma64;
