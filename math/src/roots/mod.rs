//! Roots: libdevice's cube roots and their reciprocals, `hypot` and `rhypot`, the correctly rounded reciprocal
//! square root `frsqrt_rn`, and `norm3d`/`norm4d` and their reciprocals.

pub mod cbrt;
pub mod hypot;
pub mod norm;
pub mod rsqrt;
