//! Bessel functions: libdevice's modified Bessel functions of the first kind `i0`/`i1`, the functions of the
//! first and second kinds `j0`/`j1`/`y0`/`y1` (f32 and f64), and of integer order `jn`/`yn`, whose recurrences
//! are written in parts so that a warp can loop over them ([`bessel_n`]).

pub mod bessel_i32;
pub mod bessel_i64;
pub mod bessel_j32;
pub mod bessel_j64;
pub mod bessel_n;
