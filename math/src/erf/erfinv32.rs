//! libdevice's f32 `erfinvf` as Triton 3.6 runs it (its PTX for sm_90 under `__CUDA_FTZ`), op for op; branches
//! become selects. It goes through `lg2`/`rsqrt.approx.ftz`, which the CPU model rounds correctly, so it can
//! differ from the GPU in the last bit.

use crate::FloatOps;
use crate::steps32::{horner, k};

/// `__nv_erfinvf`: with w = −log2(1 − x²) (the approximate log), below 8.2 a polynomial in w times x; beyond,
/// a polynomial in 1/√w (the approximate reciprocal square root) over its exactly rounded reciprocal, with x's
/// sign.
pub fn erfinvf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let nx = o.neg(x);
    let one = o.fc(1.0);
    let s = o.fma_ftz(x, nx, one);
    let l = o.lg2_approx_ftz(s);
    let w = o.neg(l);
    let lim = k(o, 0xc103_3333);
    let lt = o.lt(l, lim);
    // Far tail: l < −8.2.
    let t = o.rsqrt_approx_ftz(w);
    let p = horner(o, t, &[0xbf17_04a1, 0xbf29_baa5, 0x3fcc_6adc, 0xbf2c_daed, 0xbdc3_0537, 0x3f55_d9b9]);
    let rt = o.div(one, t);
    let v = o.mul(rt, p);
    let sign = o.ic(0x8000_0000);
    let xb = o.f_to_bits(x);
    let sb = o.iand(xb, sign);
    let vb = o.f_to_bits(v);
    let fb = o.ior(sb, vb);
    let far = o.bits_to_f(fb);
    // Central: l ≥ −8.2 (or NaN).
    let c = [
        0xaf8a_6370,
        0x3221_f645,
        0xb401_6fda,
        0x3468_f846,
        0x3707_42aa,
        0xb804_db4d,
        0xba4a_fea1,
        0x3bb5_c027,
        0x3e24_ae0f,
        0x3f62_dfc4,
    ];
    let p = horner(o, w, &c);
    let near = o.mul(p, x);
    o.sel(lt, far, near)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M32;
    use crate::testing::Rng;
    use crate::testutil::{same32, spread, ulps32};

    /// erfinv in f64 by Newton's method on the interpreter's erf (accurate to float64) from the routine's value.
    fn erfinv_ref(x: f64, start: f64) -> f64 {
        let mut y = start;
        for _ in 0..4 {
            let d = (crate::host::erf(y) - x) / (2.0 / std::f64::consts::PI.sqrt() * (-y * y).exp());
            if d.is_finite() {
                y -= d;
            }
        }
        y
    }

    #[test]
    fn erfinv() {
        let e = |x: f32| erfinvf(&mut M32, x);
        assert_eq!(e(0.0), 0.0);
        assert!(same32(e(-0.0), -0.0));
        assert_eq!(e(1.0), f32::INFINITY);
        assert_eq!(e(-1.0), f32::NEG_INFINITY);
        assert!(e(1.5).is_nan() && e(f32::NAN).is_nan());
        let mut rng = Rng::new(44);
        let mut xs = spread(&mut rng, 1e-30, 0.999_999, 100_000, true);
        xs.extend((0..2000).map(|i| 1.0 - (i as f64 + 1.0) * 2f64.powi(-24)));
        for &x in &xs {
            let x = x as f32;
            let got = e(x);
            let want = erfinv_ref(x as f64, got as f64) as f32;
            let d = ulps32(got, want);
            assert!(d <= 2, "erfinvf({x:e}) = {got:e}, want {want:e}: {d} ulp");
        }
    }
}
