//! libdevice's `logbf` and f64 `logb` as Triton 3.6 runs them (`__nv_logbf`, `__nv_logb`), op for op: exact
//! integer work on the bits.

use crate::FloatOps;
use crate::steps32::k;

/// `__nv_logbf`: the unbiased exponent as a float; subnormals (|x|'s bits at most 0x7fffff, so 0 too) from
/// the leading zeros (−118 − clz, with logb(±0) = −inf); inf and NaN give x·x.
pub fn logbf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let ab = o.f_to_bits(a);
    let lim = o.ic(0x007f_ffff);
    let normal = o.ult(lim, ab);
    let z = o.clz(ab);
    let base = o.ic(118u64.wrapping_neg());
    let e = o.isub(base, z);
    let ef = o.i2f(e);
    let zero = o.fc(0.0);
    let is_zero = o.eq(x, zero);
    let ninf = k(o, 0xff80_0000);
    let sub = o.sel(is_zero, ninf, ef);
    let eb = o.shr(ab, 23);
    let bias = o.ic(127u64.wrapping_neg());
    let e = o.iadd(eb, bias);
    let ef = o.i2f(e);
    let inf_lim = o.ic(0x7f7f_ffff);
    let special = o.ult(inf_lim, ab);
    let xx = o.mul(x, x);
    let norm = o.sel(special, xx, ef);
    o.sel(normal, norm, sub)
}

/// `__nv_logb`: the unbiased exponent as a double; subnormals from the leading zeros of the bits
/// (−1011 − clz); ±0 gives −inf, ±inf gives +inf, NaN gives x + x.
pub fn logb<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let ab = o.f_to_bits(a);
    let eb = o.shr(ab, 52);
    let bias = o.ic(1023u64.wrapping_neg());
    let e = o.iadd(eb, bias);
    let normal = o.i2f(e);
    let z = o.clz(ab);
    let base = o.ic(1011u64.wrapping_neg());
    let e = o.isub(base, z);
    let sub = o.i2f(e);
    let lim = o.ic(0x0010_0000_0000_0000);
    let is_sub = o.ult(ab, lim);
    let v = o.sel(is_sub, sub, normal);
    let zero = o.fc(0.0);
    let is_zero = o.eq(a, zero);
    let ninf = o.fbits(0xfff0_0000_0000_0000);
    let v = o.sel(is_zero, ninf, v);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let is_inf = o.eq(a, inf);
    let v = o.sel(is_inf, inf, v);
    let nan = o.is_nan(a);
    let xx = o.add(x, x);
    o.sel(nan, xx, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{M32, M64};
    use crate::testing::Rng;
    use crate::testutil::spread;

    #[test]
    fn exponents() {
        let l = |x: f64| logb(&mut M64, x);
        assert_eq!(l(1.0), 0.0);
        assert_eq!(l(-0.1), -4.0);
        assert_eq!(l(f64::MAX), 1023.0);
        assert_eq!(l(f64::MIN_POSITIVE), -1022.0);
        assert_eq!(l(5e-324), -1074.0);
        assert_eq!(l(2f64.powi(-1050) * 1.5), -1050.0);
        assert_eq!(l(0.0), f64::NEG_INFINITY);
        assert_eq!(l(-0.0), f64::NEG_INFINITY);
        assert_eq!(l(f64::NEG_INFINITY), f64::INFINITY);
        assert!(l(f64::NAN).is_nan());
        let mut rng = crate::testing::Rng::new(48);
        for _ in 0..20_000 {
            let x = f64::from_bits(rng.next_u64() & 0x7fef_ffff_ffff_ffff);
            if x == 0.0 {
                continue;
            }
            let want =
                if x.is_subnormal() { -1074.0 + (63 - x.to_bits().leading_zeros()) as f64 } else { x.log2().floor() };
            assert_eq!(l(x), want, "logb({x:e})");
        }
    }

    #[test]
    fn logbf_exponents() {
        let l = |x: f32| logbf(&mut M32, x);
        assert_eq!(l(1.0), 0.0);
        assert_eq!(l(-8.5), 3.0);
        assert_eq!(l(0.1), -4.0);
        assert_eq!(l(f32::MAX), 127.0);
        assert_eq!(l(f32::MIN_POSITIVE), -126.0);
        assert_eq!(l(0.0), f32::NEG_INFINITY);
        assert_eq!(l(-0.0), f32::NEG_INFINITY);
        // A subnormal is read as zero by abs.ftz but is not zero to the compare: its leading zeros are those of
        // 0 (32), so libdevice gives −150 for every subnormal.
        assert_eq!(l(f32::from_bits(1)), -150.0);
        assert_eq!(l(f32::from_bits(0x0040_0000)), -150.0);
        assert_eq!(l(f32::INFINITY), f32::INFINITY);
        assert_eq!(l(f32::NEG_INFINITY), f32::INFINITY);
        assert!(l(f32::NAN).is_nan());
        let mut rng = Rng::new(43);
        for x in spread(&mut rng, 1.2e-38, 3e38, 20_000, true) {
            let x = x as f32;
            assert_eq!(l(x), (x.abs() as f64).log2().floor() as f32, "logbf({x:e})");
        }
    }
}
