//! Trigonometric functions and their argument reductions: libdevice's f32 `sinf`/`cosf` (Payne–Hanek in 32-bit
//! words), `sinpif`/`cospif`, f64 `sinpi`/`cospi`, and its f64 reduction (Cody–Waite, then Payne–Hanek), which its
//! f64 Bessel functions inline.

pub mod reduce64;
pub mod sincos32;
pub mod sinpi32;
pub mod sinpi64;
