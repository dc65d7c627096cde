//! libdevice's `frsqrt_rn` (`__nv_frsqrt_rn`) as Triton 3.6 runs it (its PTX for sm_90 under `__CUDA_FTZ`),
//! op for op: `rsqrt.approx.ftz` refined to the correctly rounded result.

use crate::FloatOps;

/// `__nv_frsqrt_rn`: 1/√x correctly rounded. For a positive normal x, m = x's significand with the exponent's
/// parity (m in [0.5, 2)), y ≈ 1/√m from `rsqrt.approx.ftz` refined by one step with y² carried exactly, and
/// the halved exponent difference added back to the bits; others (0, subnormals, negatives, inf, NaN) give
/// `rsqrt.approx.ftz` of x.
pub fn rsqrt_rnf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let xb = o.f_to_bits(x);
    let off = o.ic(0xff80_0000);
    let xm = o.iadd(xb, off);
    let lim = o.ic(0x7eff_ffff);
    let special = o.ult(lim, xm);
    let keep = o.ic(0x00ff_ffff);
    let mb = o.iand(xb, keep);
    let half = o.ic(0x3f00_0000);
    let mb = o.ior(mb, half);
    let kk = o.isub(mb, xb);
    let m = o.bits_to_f(mb);
    let y = o.rsqrt_approx_ftz(m);
    let y2 = o.mul(y, y);
    let ny2 = o.neg(y2);
    let e2 = o.fma_ftz(y, y, ny2);
    let nm = o.neg(m);
    let one = o.fc(1.0);
    let h = o.fma_ftz(y2, nm, one);
    let h = o.fma_ftz(e2, nm, h);
    let (c38, c12) = (o.fc(0.375), o.fc(0.5));
    let p = o.fma_ftz(c38, h, c12);
    let yh = o.mul(y, h);
    let r = o.fma_ftz(p, yh, y);
    let sh = o.sar(kk, 1);
    let rb = o.f_to_bits(r);
    let rb = o.iadd(sh, rb);
    let v = o.bits_to_f(rb);
    let s = o.rsqrt_approx_ftz(x);
    o.sel(special, s, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M32;
    use crate::testing::Rng;
    use crate::testutil::spread;

    /// Correctly rounded for every positive normal x: within half an ulp of 1/√x (in f64).
    #[test]
    fn rsqrt_rn() {
        let r = |x: f32| rsqrt_rnf(&mut M32, x);
        assert_eq!(r(4.0), 0.5);
        assert_eq!(r(0.25), 2.0);
        assert_eq!(r(0.0), f32::INFINITY);
        assert_eq!(r(f32::from_bits(1)), f32::INFINITY);
        assert_eq!(r(f32::INFINITY), 0.0);
        assert!(r(-1.0).is_nan() && r(f32::NAN).is_nan());
        let mut rng = Rng::new(47);
        for x in spread(&mut rng, 1.2e-38, 3.4e38, 200_000, false) {
            let x = x as f32;
            let got = r(x);
            let want = 1.0 / (x as f64).sqrt();
            let ulp = (f32::from_bits(got.to_bits() + 1) - got) as f64;
            let off = (got as f64 - want).abs() / ulp;
            assert!(off <= 0.5 + 1e-6, "rsqrt_rn({x:e}) = {got:e}, {off} ulp from {want:e}");
        }
    }
}
