//! libdevice's f32 `erfcf` and `normcdff` as Triton 3.6 runs them (their PTX for sm_90 under `__CUDA_FTZ`), op
//! for op; branches become selects. `erfcf` goes through `rcp`/`ex2.approx.ftz`, which the CPU model rounds
//! correctly, so it can differ from the GPU in the last bit there.

use crate::FloatOps;
use crate::exp_log::pow32::exp_scaled;
use crate::rounding::{Arith, Dir};
use crate::steps32::{horner, k};

/// erfc(a)·e^(a²) for a = |x| as `erfcf` and `erfcxf` compute it: t = (a − 4)/(a + 4) (the approximate
/// reciprocal, corrected), p(t) a degree-10 polynomial, p/(1 + 2a) (corrected likewise).
pub(crate) fn erfcx_rational<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let (m4, four, one) = (o.fc(-4.0), o.fc(4.0), o.fc(1.0));
    let n = o.add(a, m4);
    let d = o.add(a, four);
    let rd = o.rcp_approx_ftz(d);
    let t = o.mul_ftz(n, rd);
    let t1 = o.add(t, one);
    let e = o.fma_ftz(m4, t1, a);
    let nt = o.neg(t);
    let e = o.fma_ftz(nt, a, e);
    let t = o.fma_ftz(rd, e, t);
    let c = [
        0x3a69_a091,
        0x3be6_e05b,
        0xbc81_fb4b,
        0x3d15_373b,
        0xbd88_7c5a,
        0x3dc0_21d5,
        0xbdce_d424,
        0x3d8b_74de,
        0x3c7b_f170,
        0xbe0e_f8d4,
        0x3f9d_d2c9,
    ];
    let p = horner(o, t, &c);
    let two = o.fc(2.0);
    let d2 = o.fma_ftz(two, a, one);
    let r2 = o.rcp_approx_ftz(d2);
    let q = o.mul_ftz(p, r2);
    let m2 = o.fc(-2.0);
    let m = o.mul(q, m2);
    let s = o.fma_ftz(a, m, p);
    let s = o.sub(s, q);
    o.fma_ftz(s, r2, q)
}

/// `__nv_erfcf`: for a = |x|, t = (a − 4)/(a + 4) (the approximate reciprocal, corrected), p(t) a degree-10
/// polynomial, erfc(a) = p/(1 + 2a) (corrected likewise) · e^(−a²) (the square's rounding error carried into
/// the exponential); 0 above a = 10.055; 2 − erfc(a) for negative x.
pub fn erfcf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let q = erfcx_rational(o, a);
    let two = o.fc(2.0);
    let na = o.neg(a);
    let sq = o.mul(a, na);
    let v = exp_scaled(o, sq);
    let nsq = o.neg(sq);
    let err = o.fma_ftz(na, a, nsq);
    let v = o.fma_ftz(v, err, v);
    let r = o.mul(v, q);
    let lim = k(o, 0x4120_e148);
    let far = o.lt(lim, a);
    let zero = o.fc(0.0);
    let r = o.sel(far, zero, r);
    let neg = o.lt(x, zero);
    let nr = o.sub(two, r);
    o.sel(neg, nr, r)
}

/// `__nv_normcdff`: Φ(x) = erfc(−x/√2)/2 with x clamped to ±14.5, −x/√2 carried as a head u and tail, `erfcf`
/// of the head, and below x = −1 the first-order correction for the tail (d/du erfc(u) = −2u·erfc(u)... as
/// libdevice scales it).
pub fn normcdff<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let lim = k(o, 0x4168_0000);
    let big = o.lt(lim, a);
    let cl = crate::steps32::with_sign(o, lim, x);
    let t = o.sel(big, cl, x);
    let c = k(o, 0xbf35_04f3);
    let h = o.mul_ftz(t, c);
    let nh = o.neg(h);
    let e = o.fma_ftz(t, c, nh);
    let cl = k(o, 0xb24f_e77a);
    let l = o.fma_ftz(t, cl, e);
    let u = o.arith_ftz(Arith::Add, Dir::Nearest, h, l);
    let v = erfcf(o, u);
    let d = o.sub(h, u);
    let d = o.arith_ftz(Arith::Add, Dir::Nearest, d, l);
    let m2 = o.fc(-2.0);
    let m = o.mul(u, m2);
    let m = o.mul(m, v);
    let w = o.fma_ftz(m, d, v);
    let m1 = o.fc(-1.0);
    let low = o.lt(t, m1);
    let v = o.sel(low, w, v);
    let half = o.fc(0.5);
    o.mul(v, half)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M32;
    use crate::testing::Rng;
    use crate::testutil::{spread, ulps32};

    /// erfc(x) in f64: 1 − erf(x) below 2 (erfc ≥ 0.0047 there, so erf's error grows at most 200-fold, far below
    /// an f32 ulp), the continued fraction e^(−x²)/√π / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) above.
    fn erfc_ref(x: f64) -> f64 {
        if x < 2.0 {
            return 1.0 - crate::host::erf(x);
        }
        let mut k = x;
        for n in (1..2000).rev() {
            k = x + (n as f64 / 2.0) / k;
        }
        (-x * x).exp() / std::f64::consts::PI.sqrt() / k
    }

    #[test]
    fn erfc() {
        let e = |x: f32| erfcf(&mut M32, x);
        assert_eq!(e(0.0), 1.0);
        assert_eq!(e(f32::INFINITY), 0.0);
        assert_eq!(e(f32::NEG_INFINITY), 2.0);
        assert_eq!(e(-20.0), 2.0);
        assert!(e(f32::NAN).is_nan());
        // Results below 2^-126 flush (the last fma is .ftz): erfc(9.5) = 2^-133.6.
        assert_eq!(e(9.5), 0.0);
        let mut rng = Rng::new(46);
        let mut worst = 0;
        for x in spread(&mut rng, 1e-20, 9.19, 100_000, true) {
            let x = x as f32;
            let got = e(x);
            let want = if x < 0.0 { 2.0 - erfc_ref(-x as f64) } else { erfc_ref(x as f64) } as f32;
            let d = ulps32(got, want);
            assert!(d <= 4, "erfcf({x:e}) = {got:e}, want {want:e}: {d} ulp");
            worst = worst.max(d);
        }
        eprintln!("erfcf: worst {worst} ulp");
    }

    /// normcdf against erfc(−x/√2)/2 in f64 (the reference above): within 4 ulp (libdevice's erfcf bound; the
    /// −x/√2 head and tail make the argument exact to first order).
    #[test]
    fn normcdf() {
        let n = |x: f32| normcdff(&mut M32, x);
        assert_eq!(n(0.0), 0.5);
        assert_eq!(n(f32::INFINITY), 1.0);
        assert_eq!(n(f32::NEG_INFINITY), 0.0);
        assert_eq!(n(-14.0), 0.0);
        assert!(n(f32::NAN).is_nan());
        let mut rng = Rng::new(49);
        let mut worst = 0;
        for x in spread(&mut rng, 1e-20, 13.0, 100_000, true) {
            let x = x as f32;
            let u = -(x as f64) / std::f64::consts::SQRT_2;
            let want = if u < 0.0 { 2.0 - erfc_ref(-u) } else { erfc_ref(u) } / 2.0;
            // erfc below 2^-126 flushes (its last fma is .ftz); the final halving keeps subnormals.
            if 2.0 * want < f32::MIN_POSITIVE as f64 {
                assert_eq!(n(x), 0.0, "normcdff({x:e})");
                continue;
            }
            if want < f32::MIN_POSITIVE as f64 {
                let err = (n(x) as f64 - want).abs();
                assert!(err <= 4.0 * f32::from_bits(1) as f64, "normcdff({x:e}) = {:e}, want {want:e}", n(x));
                continue;
            }
            let d = ulps32(n(x), want as f32);
            assert!(d <= 4, "normcdff({x:e}) = {:e}, want {want:e}: {d} ulp", n(x));
            worst = worst.max(d);
        }
        eprintln!("normcdff: worst {worst} ulp");
    }
}
