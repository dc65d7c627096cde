//! Math routines PTX has no instruction for, written once over [`FloatOps`] so that the emitted sequence is
//! the one the unit tests below run on the CPU: f64 `exp`, `exp2`, `log`, `log2`; f32 `erf`; and the
//! software fp8 conversions used on sm_80 (which has no fp8 `cvt`).
//!
//! Accuracy (measured by the tests against Rust's libm and the interpreter's `erf`): `exp`, `exp2`, `log`,
//! `log2` within 2 ulp; f32 `erf` within 1 ulp. The fp8 conversions are exact: round to nearest even, saturating to the largest
//! finite value like `cvt.rn.satfinite` (so infinities become ±max, as in the interpreter).
//!
//! Triton reaches the same functions through libdevice (`__nv_exp`, `__nv_log`, `__nv_erff`), which we do not
//! link; these are our own implementations of the same accuracy class (`pow` is libdevice's own sequence, in
//! `tessel_tile::libm`).

use super::fpops::FloatOps;

/// `c[0] + x·(c[1] + x·(c[2] + ...))` with one fma per step.
fn horner<T: FloatOps>(o: &mut T, x: T::F, c: &[T::F]) -> T::F {
    let (last, rest) = c.split_last().expect("a polynomial has coefficients");
    rest.iter().rev().fold(*last, |acc, &k| o.fma(acc, x, k))
}

fn consts<T: FloatOps>(o: &mut T, vals: &[f64]) -> Vec<T::F> {
    vals.iter().map(|&v| o.fc(v)).collect()
}

fn bit_consts<T: FloatOps>(o: &mut T, bits: &[u64]) -> Vec<T::F> {
    bits.iter().map(|&b| o.fbits(b)).collect()
}

// ---------------------------------------------------------------------------------------------------------
// f64

/// ln 2 split so that `n·LN2_HI` is exact for |n| < 2^21 (fdlibm's split).
pub(crate) const LN2_HI: u64 = 0x3fe6_2e42_fee0_0000;
pub(crate) const LN2_LO: u64 = 0x3dea_39ef_3579_3c76;
pub(crate) const LOG2E: u64 = 0x3ff7_1547_652b_82fe;
/// The mantissa field of √2: mantissas above it are halved, so `log` reduces to m ∈ [√2/2, √2].
const SQRT2_MANT: u64 = 0x0006_a09e_667f_3bcd;
const MANT_MASK: u64 = (1 << 52) - 1;
/// ln(2)^k / k!, k = 0..13: 2^f on |f| ≤ 1/2 to 4e-18 relative.
const EXP2_C: [u64; 14] = [
    0x3ff0000000000000,
    0x3fe62e42fefa39ef,
    0x3fcebfbdff82c58f,
    0x3fac6b08d704a0c0,
    0x3f83b2ab6fba4e77,
    0x3f55d87fe78a6731,
    0x3f2430912f86c787,
    0x3eeffcbfc588b0c7,
    0x3eb62c0223a5c824,
    0x3e7b5253d395e7c4,
    0x3e3e4cf5158b8eca,
    0x3dfe8cac7351bb25,
    0x3dbc3bd650fc2986,
    0x3d7816193166d0f9,
];

/// 1/k!, k = 0..13: e^r on |r| ≤ ln2/2 to 4e-18 relative.
fn exp_coeffs() -> [f64; 14] {
    let mut c = [1.0; 14];
    let mut fact = 1.0f64;
    for (k, ck) in c.iter_mut().enumerate().skip(1) {
        fact *= k as f64;
        *ck = 1.0 / fact;
    }
    c
}

/// `x·2^n` for an integer n in [-1076, 1025] and x in [1/2, 2]: two exact scalings by normal powers of two,
/// the second of which rounds once (to a subnormal, or overflows to inf).
fn ldexp64<T: FloatOps>(o: &mut T, x: T::F, n: T::I) -> T::F {
    let h = o.sar(n, 1);
    let r = o.isub(n, h);
    let mut y = x;
    for k in [h, r] {
        let bias = o.ic(1023);
        let e = o.iadd(k, bias);
        let e = o.shl(e, 52);
        let p = o.bits_to_f(e);
        y = o.mul(y, p);
    }
    y
}

/// e^x: n = round(x·log2 e), r = x − n·ln2 (Cody–Waite, two fmas), e^r by its Taylor polynomial, times 2^n.
pub(crate) fn exp_f64<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (lo, hi) = (o.fc(-746.0), o.fc(710.0));
    let p = o.lt(x, lo);
    let x = o.sel(p, lo, x);
    let p = o.lt(hi, x);
    let x = o.sel(p, hi, x);
    let log2e = o.fbits(LOG2E);
    let t = o.mul(x, log2e);
    let n = o.rni(t);
    let (nhi, nlo) = (o.fbits(LN2_HI ^ 1 << 63), o.fbits(LN2_LO ^ 1 << 63));
    let r = o.fma(n, nhi, x);
    let r = o.fma(n, nlo, r);
    let c = consts(o, &exp_coeffs());
    let p = horner(o, r, &c);
    let ni = o.f2i(n);
    ldexp64(o, p, ni)
}

/// 2^t: n = round(t), 2^(t−n) by its Taylor polynomial (t − n is exact), times 2^n.
pub(crate) fn exp2_f64<T: FloatOps>(o: &mut T, t: T::F) -> T::F {
    let (lo, hi) = (o.fc(-1076.0), o.fc(1025.0));
    let p = o.lt(t, lo);
    let t = o.sel(p, lo, t);
    let p = o.lt(hi, t);
    let t = o.sel(p, hi, t);
    let n = o.rni(t);
    let f = o.sub(t, n);
    let c = bit_consts(o, &EXP2_C);
    let p = horner(o, f, &c);
    let ni = o.f2i(n);
    ldexp64(o, p, ni)
}

/// For finite x > 0: `(e, ln m)` with x = 2^e·m, m ∈ [√2/2, √2]. ln m = f − s·(f − R(s²)) with f = m − 1
/// (exact), s = f/(2 + f) and R(z) = Σ_{k≥1} 2z^k/(2k+1) (so that ln m = 2 atanh s = 2s + s·R); subnormals are
/// scaled by 2^54 first.
fn log_parts<T: FloatOps>(o: &mut T, x: T::F) -> (T::F, T::F) {
    let tiny_limit = o.fbits(0x0010_0000_0000_0000);
    let tiny = o.lt(x, tiny_limit);
    let scale = o.fbits(0x4350_0000_0000_0000); // 2^54
    let scaled = o.mul(x, scale);
    let xs = o.sel(tiny, scaled, x);
    let (adj, zero) = (o.fc(-54.0), o.fc(0.0));
    let eadj = o.sel(tiny, adj, zero);
    let b = o.f_to_bits(xs);
    let mask = o.ic(MANT_MASK);
    let mant = o.iand(b, mask);
    let lim = o.ic(SQRT2_MANT);
    let big = o.ult(lim, mant);
    let field = o.shr(b, 52);
    let (b1022, b1023) = (o.ic(1022), o.ic(1023));
    let bias = o.isel(big, b1022, b1023);
    let e = o.isub(field, bias);
    let ebits = o.shl(bias, 52);
    let mb = o.ior(mant, ebits);
    let m = o.bits_to_f(mb);
    let one = o.fc(1.0);
    let f = o.sub(m, one);
    let two = o.fc(2.0);
    let d = o.add(f, two);
    let s = o.div(f, d);
    let z = o.mul(s, s);
    let rc: Vec<f64> = (1..=11).map(|k| 2.0 / (2 * k + 1) as f64).collect();
    let rc = consts(o, &rc);
    let r = horner(o, z, &rc);
    let r = o.mul(z, r);
    let fr = o.sub(f, r);
    let sfr = o.mul(s, fr);
    let lnm = o.sub(f, sfr);
    let ef = o.i2f(e);
    let ef = o.add(ef, eadj);
    (ef, lnm)
}

/// Replaces the result of a log for x = 0 (−inf), +inf, x < 0 and NaN (NaN).
fn log_specials<T: FloatOps>(o: &mut T, x: T::F, r: T::F) -> T::F {
    let (zero, inf, ninf, nan) = (o.fc(0.0), o.fc(f64::INFINITY), o.fc(f64::NEG_INFINITY), o.fc(f64::NAN));
    let p = o.eq(x, zero);
    let r = o.sel(p, ninf, r);
    let p = o.eq(x, inf);
    let r = o.sel(p, inf, r);
    let p = o.lt(x, zero);
    let r = o.sel(p, nan, r);
    let p = o.is_nan(x);
    o.sel(p, x, r)
}

/// ln x = e·ln2_hi + (e·ln2_lo + ln m).
pub(crate) fn log_f64<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (e, lnm) = log_parts(o, x);
    let (hi, lo) = (o.fbits(LN2_HI), o.fbits(LN2_LO));
    let h = o.mul(e, hi);
    let l = o.fma(e, lo, lnm);
    let r = o.add(h, l);
    log_specials(o, x, r)
}

/// log2 x = e + ln m·log2 e (one rounding: exact for powers of two).
pub(crate) fn log2_f64<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (e, lnm) = log_parts(o, x);
    let log2e = o.fbits(LOG2E);
    let r = o.fma(lnm, log2e, e);
    log_specials(o, x, r)
}

// ---------------------------------------------------------------------------------------------------------
// f32

/// An fp8 format: mantissa bits, exponent bias, largest finite code, and whether it has infinities.
#[derive(Clone, Copy)]
pub(crate) struct Fp8 {
    pub mant: u32,
    pub bias: u32,
    pub max_code: u32,
    pub has_inf: bool,
}

pub(crate) const E4M3: Fp8 = Fp8 { mant: 3, bias: 7, max_code: 0x7e, has_inf: false };
pub(crate) const E5M2: Fp8 = Fp8 { mant: 2, bias: 15, max_code: 0x7b, has_inf: true };

/// The fp8 code (low byte; NaN as 0x7f with the sign) of an f32, rounded to nearest even and saturated to
/// ±max (also for ±inf, as `cvt.rn.satfinite`). Normal results round the f32 bits at the fp8 mantissa width
/// and rebias; results below the smallest normal are `round(|x|·2^(bias−1+mant))`, which is the subnormal code
/// (and reaches the smallest normal's code exactly when it rounds up).
pub(crate) fn f32_to_fp8<T: FloatOps>(o: &mut T, x: T::F, f: Fp8) -> T::I {
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
pub(crate) fn fp8_to_f32<T: FloatOps>(o: &mut T, b: T::I, f: Fp8) -> T::F {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::fpops::model::{M32, M64};
    use tessel_tile::eval::value::{decode_fp8, encode_fp8};
    use tessel_tile::types::ScalarType;

    /// Distance in units in the last place (of `want`'s binade).
    fn ulps64(got: f64, want: f64) -> f64 {
        if got == want || (got.is_nan() && want.is_nan()) {
            return 0.0;
        }
        if !got.is_finite() || !want.is_finite() {
            return f64::INFINITY;
        }
        let ulp = if want == 0.0 { f64::from_bits(1) } else { (f64::from_bits(want.abs().to_bits() + 1)) - want.abs() };
        (got - want).abs() / ulp
    }

    /// A deterministic spread of test points in [lo, hi].
    fn points(lo: f64, hi: f64, n: usize) -> Vec<f64> {
        let mut rng = tessel_math::testing::Rng::new(4);
        (0..n).map(|_| lo + (hi - lo) * (rng.uniform() + 1.0) / 2.0).collect()
    }

    #[test]
    fn exp_and_exp2_are_within_2_ulp() {
        let mut worst: f64 = 0.0;
        for x in points(-745.0, 709.7, 200_000).into_iter().chain(points(-1.0, 1.0, 50_000)) {
            worst = worst.max(ulps64(exp_f64(&mut M64, x), x.exp()));
            let t = x * 1.4;
            worst = worst.max(ulps64(exp2_f64(&mut M64, t), t.exp2()));
        }
        assert!(worst <= 2.0, "worst {worst} ulp");
        for (x, want) in [
            (0.0, 1.0),
            (f64::INFINITY, f64::INFINITY),
            (f64::NEG_INFINITY, 0.0),
            (710.0, f64::INFINITY),
            (-746.0, 0.0),
            (-745.0, (-745.0f64).exp()),
        ] {
            assert_eq!(exp_f64(&mut M64, x), want, "exp({x})");
        }
        assert!(exp_f64(&mut M64, f64::NAN).is_nan());
        assert_eq!(exp2_f64(&mut M64, -1074.0), f64::from_bits(1));
        assert_eq!(exp2_f64(&mut M64, 1023.0), 2f64.powi(1023));
        assert_eq!(exp2_f64(&mut M64, 1024.0), f64::INFINITY);
    }

    #[test]
    fn log_and_log2_are_within_2_ulp() {
        let mut worst: f64 = 0.0;
        let mut xs: Vec<f64> = points(-700.0, 700.0, 200_000).into_iter().map(f64::exp).collect();
        xs.extend(points(0.5, 2.0, 100_000));
        xs.extend(points(-1e-6, 1e-6, 10_000).into_iter().map(|d| 1.0 + d));
        xs.extend([f64::from_bits(1), f64::from_bits(0x000f_ffff_ffff_ffff), f64::MAX, 1.0, 2.0, 0.5]);
        for x in xs {
            worst = worst.max(ulps64(log_f64(&mut M64, x), x.ln()));
            worst = worst.max(ulps64(log2_f64(&mut M64, x), x.log2()));
        }
        assert!(worst <= 2.0, "worst {worst} ulp");
        assert_eq!(log2_f64(&mut M64, 8.0), 3.0);
        assert_eq!(log_f64(&mut M64, 0.0), f64::NEG_INFINITY);
        assert_eq!(log_f64(&mut M64, f64::INFINITY), f64::INFINITY);
        assert!(log_f64(&mut M64, -1.0).is_nan() && log2_f64(&mut M64, f64::NAN).is_nan());
    }

    #[test]
    fn software_fp8_matches_the_interpreter() {
        for (f, t) in [(E4M3, ScalarType::F8E4M3), (E5M2, ScalarType::F8E5M2)] {
            for b in 0..=255u32 {
                let got = fp8_to_f32(&mut M32, b, f);
                let want = decode_fp8(b as u8, t);
                assert!(got as f64 == want || (got.is_nan() && want.is_nan()), "{t} {b:#x}: {got} vs {want}");
            }
            let mut xs: Vec<f32> = Vec::new();
            for b in 0..=255u8 {
                let v = decode_fp8(b, t);
                let next = decode_fp8(b.wrapping_add(1), t);
                if v.is_finite() {
                    let v = v as f32;
                    xs.extend([v, f32::from_bits(v.to_bits() + 1), f32::from_bits(v.to_bits().saturating_sub(1))]);
                    if next.is_finite() && (b & 0x7f) != 0x7f {
                        let mid = ((v as f64 + next) / 2.0) as f32;
                        xs.extend([mid, f32::from_bits(mid.to_bits() + 1), f32::from_bits(mid.to_bits() - 1)]);
                    }
                }
            }
            xs.extend(points(-70000.0, 70000.0, 20_000).into_iter().map(|x| x as f32));
            xs.extend(points(-1.0, 1.0, 20_000).into_iter().map(|x| (x * 1e-3) as f32));
            xs.extend([0.0, -0.0, f32::MAX, f32::MIN, f32::from_bits(1)]);
            for x in xs {
                let got = f32_to_fp8(&mut M32, x, f);
                let want = encode_fp8(x as f64, t) as u32;
                // NaN codes may differ (0x7f here and in the hardware; the interpreter uses 0x7e for e5m2).
                let both_nan = decode_fp8(got as u8, t).is_nan() && decode_fp8(want as u8, t).is_nan();
                assert!(got == want || both_nan, "{t}: encode({x:e}) = {got:#x}, want {want:#x}");
            }
            let max = f.max_code;
            assert_eq!(f32_to_fp8(&mut M32, f32::INFINITY, f), max);
            assert_eq!(f32_to_fp8(&mut M32, f32::NEG_INFINITY, f), max | 0x80);
            assert_eq!(f32_to_fp8(&mut M32, f32::NAN, f) & 0x7f, 0x7f);
        }
    }
}
