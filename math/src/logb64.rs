//! libdevice's f64 `logb` as Triton 3.6 runs it (`__nv_logb`), op for op: exact integer work on the bits.

use super::FloatOps;

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
    use crate::model::M64;

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
}
