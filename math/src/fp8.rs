//! The fp8 conversions in software, for sm_80, which has no fp8 `cvt`: f32 to e4m3/e5m2 rounded to nearest even
//! and saturating to the largest finite value like `cvt.rn.satfinite` (so infinities become ±max, as in the
//! interpreter), and back, exactly. Written over [`FloatOps`] at 32 bits.

use crate::FloatOps;

// ---------------------------------------------------------------------------------------------------------
// f32

/// An fp8 format: mantissa bits, exponent bias, largest finite code, and whether it has infinities.
#[derive(Clone, Copy)]
pub struct Fp8 {
    pub mant: u32,
    pub bias: u32,
    pub max_code: u32,
    pub has_inf: bool,
}

pub const E4M3: Fp8 = Fp8 { mant: 3, bias: 7, max_code: 0x7e, has_inf: false };

pub const E5M2: Fp8 = Fp8 { mant: 2, bias: 15, max_code: 0x7b, has_inf: true };

/// The fp8 code (low byte; NaN as 0x7f with the sign) of an f32, rounded to nearest even and saturated to
/// ±max (also for ±inf, as `cvt.rn.satfinite`). Normal results round the f32 bits at the fp8 mantissa width
/// and rebias; results below the smallest normal are `round(|x|·2^(bias−1+mant))`, which is the subnormal code
/// (and reaches the smallest normal's code exactly when it rounds up).
pub fn f32_to_fp8<T: FloatOps>(o: &mut T, x: T::F, f: Fp8) -> T::I {
    let shift = 23 - f.mant;
    let u = o.f_to_bits(x);
    let mask = o.ic(0x7fff_ffff);
    let a = o.iand(u, mask);
    let s = o.shr(u, 24);
    let m80 = o.ic(0x80);
    let sign = o.iand(s, m80);
    let lsb = o.shr(a, shift);
    let one = o.ic(1);
    let lsb = o.iand(lsb, one);
    let half = o.ic((1 << (shift - 1)) - 1);
    let bump = o.iadd(lsb, half);
    let rounded = o.iadd(a, bump);
    let code = o.shr(rounded, shift);
    let rebias = o.ic(((127 - f.bias) << f.mant) as u64);
    let normal = o.isub(code, rebias);
    let ax = o.abs(x);
    let k = o.fbits(((127 + f.bias - 1 + f.mant) << 23) as u64);
    let scaled = o.mul(ax, k);
    let r = o.rni(scaled);
    let sub = o.f2i(r);
    let min_normal = o.ic(((128 - f.bias) << 23) as u64);
    let is_sub = o.ult(a, min_normal);
    let c = o.isel(is_sub, sub, normal);
    let max = o.ic(f.max_code as u64);
    let c = o.umin(c, max);
    let inf_bits = o.ic(0x7f80_0000);
    let nan = o.ult(inf_bits, a);
    let nan_code = o.ic(0x7f);
    let c = o.isel(nan, nan_code, c);
    o.ior(c, sign)
}

/// The f32 value of an fp8 code (an integer holding the byte in its low 8 bits): the code's exponent and
/// mantissa fields placed in an f32, which reads them with bias 127, times 2^(127 − bias) (exact, and right
/// for subnormal codes too); NaN and inf codes are selected explicitly.
pub fn fp8_to_f32<T: FloatOps>(o: &mut T, b: T::I, f: Fp8) -> T::F {
    let m7f = o.ic(0x7f);
    let m = o.iand(b, m7f);
    let m80 = o.ic(0x80);
    let sign = o.iand(b, m80);
    let sign = o.shl(sign, 24);
    let placed = o.shl(m, 23 - f.mant);
    let v = o.bits_to_f(placed);
    let k = o.fbits(((254 - f.bias) << 23) as u64); // 2^(127 − bias)
    let mag = o.mul(v, k);
    let nan = o.fc(f64::NAN);
    let mag = if f.has_inf {
        // 0x7c is inf, above it NaN.
        let (c7c, c7d) = (o.ic(0x7c), o.ic(0x7d));
        let finite = o.ult(m, c7c);
        let inf = o.fc(f64::INFINITY);
        let is_inf = o.ult(m, c7d);
        let special = o.sel(is_inf, inf, nan);
        o.sel(finite, mag, special)
    } else {
        let c = o.ic(0x7f);
        let is_nan = o.ult(m, c);
        o.sel(is_nan, mag, nan)
    };
    let bits = o.f_to_bits(mag);
    let bits = o.ior(bits, sign);
    o.bits_to_f(bits)
}
