//! libdevice's f32 `sinpif` and `cospif` as Triton 3.6 runs them (`__nv_sinpif`, `__nv_cospif` in its PTX for
//! sm_90 under `__CUDA_FTZ`), op for op: an exact reduction by half-turns and `sinf`'s polynomials; exact
//! arithmetic, bit-exact in the CPU model.

use crate::FloatOps;
use crate::steps32::k;
use crate::trig::sincos32::sin_cos_kernel;

/// The reduction of `sinpif`/`cospif`: n = rni(2x), r = (x − n/2)·π (π in two parts), quadrant n.
fn pi_reduce<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::F) {
    let t = o.add(x, x);
    let n = o.rni(t);
    let q = o.f2i(n);
    let nn = o.neg(n);
    let half = o.fc(0.5);
    let r = o.fma_ftz(nn, half, x);
    let lo = k(o, 0x3422_2169);
    let rl = o.mul(r, lo);
    let hi = k(o, 0x4049_0fda);
    let r = o.fma_ftz(r, hi, rl);
    (q, r)
}

/// `__nv_sinpif`: sin(πx); an integral x (infinities included) gives x·0 (±0, or NaN).
pub fn sinpif<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (q, r) = pi_reduce(o, x);
    let v = sin_cos_kernel(o, q, r, false);
    let t = o.trunc(x);
    let frac = o.ne(t, x);
    let zero = o.fc(0.0);
    let z = o.mul_ftz(x, zero);
    o.sel(frac, v, z)
}

/// `__nv_cospif`: cos(πx); |x| above 2^24 (every such f32 is an even integer) read as x·0.
pub fn cospif<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let lim = k(o, 0x4b80_0000);
    // Unordered: NaN keeps x.
    let big = o.lt(lim, a);
    let small = o.not(big);
    let zero = o.fc(0.0);
    let z = o.mul_ftz(x, zero);
    let x = o.sel(small, x, z);
    let (q, r) = pi_reduce(o, x);
    sin_cos_kernel(o, q, r, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M32;
    use crate::testing::Rng;
    use crate::testutil::{same32, spread, ulps32};

    /// sin(πx) and cos(πx) in f64 after the exact reduction x − 2·round(x/2) (an f32 in f64 loses nothing), the
    /// zeros exact.
    fn sinpi_ref(x: f64, cos: bool) -> f64 {
        let r = x - 2.0 * (x / 2.0).round();
        // The exact zeros (f64's π·r would leave 1e-16 there).
        if (cos && r.abs() == 0.5) || (!cos && r.fract() == 0.0) {
            return 0.0;
        }
        let a = std::f64::consts::PI * r;
        if cos { a.cos() } else { a.sin() }
    }

    #[test]
    fn sinpi_cospi() {
        let s = |x: f32| sinpif(&mut M32, x);
        let c = |x: f32| cospif(&mut M32, x);
        assert_eq!(s(0.5), 1.0);
        assert_eq!(s(-0.5), -1.0);
        assert!(same32(s(1.0), 0.0) && same32(s(-1.0), -0.0) && same32(s(-0.0), -0.0));
        assert!(same32(s(1e30), 0.0));
        assert!(s(f32::INFINITY).is_nan() && s(f32::NAN).is_nan());
        assert_eq!(c(0.0), 1.0);
        assert_eq!(c(1.0), -1.0);
        assert!(same32(c(0.5), 0.0));
        assert_eq!(c(1e30), 1.0);
        assert!(c(f32::INFINITY).is_nan() && c(f32::NAN).is_nan());
        let mut rng = Rng::new(41);
        let mut xs = spread(&mut rng, 1e-30, 1e7, 100_000, true);
        xs.extend(spread(&mut rng, 1e-3, 4.0, 50_000, true));
        for &x in &xs {
            let x = x as f32;
            for cos in [false, true] {
                let got = if cos { c(x) } else { s(x) };
                let want = sinpi_ref(x as f64, cos) as f32;
                let d = ulps32(got, want);
                let name = if cos { "cospif" } else { "sinpif" };
                assert!(
                    d <= 1 || got.abs() == 0.0 && want.abs() == 0.0,
                    "{name}({x:e}) = {got:e}, want {want:e}: {d} ulp"
                );
            }
        }
    }
}
