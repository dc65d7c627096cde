//! The error function and its relatives: libdevice's f32 and f64 `erf`, `erfc`, `normcdf`, `erfcx`, `erfinv`,
//! `erfcinv` and `normcdfinv`.

pub mod erf32;
pub mod erf64;
pub mod erfc32;
pub mod erfc64;
pub mod erfcinv64;
pub mod erfinv32;
pub mod erfinv64;
pub mod inverf32;
