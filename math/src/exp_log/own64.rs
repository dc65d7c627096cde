//! tessel's own f64 `exp`, `exp2`, `log`, `log2`, `expm1`, `log1p`, `log10`, `exp10`, which codegen emits for those
//! ops on f64 (and, widened, on f32 for the libdevice functions without a sequence of libdevice's own here;
//! Triton reaches libdevice's `__nv_exp`, `__nv_log`..., which we do not link; the interpreter computes the host's).
//! Accuracy, measured by the tests here and in `codegen/src/lower/libdevice/tests.rs`: `exp`, `exp2`, `log`,
//! `log2` within 2 ulp; `expm1` 2 ulp, `log1p`, `log10`, `exp10` 1 ulp.
//!
//! Methods: `exp`/`exp2` by reduction to 2^n·2^f and a Taylor polynomial; `log`/`log2` from m ∈ [√2/2, √2] and
//! ln m = 2 atanh s; `expm1` by Cody–Waite reduction and the Taylor polynomial of e^r − 1 (no cancellation), put
//! back as 2·(2^(n−1)·p + (2^(n−1) − ½)); `log1p` as ln(1 + x) plus the correction (x − ((1 + x) − 1))/(1 + x);
//! `exp10` with the product x·ln10 split exactly (an fma) into a value and its error.

use crate::FloatOps;
use crate::steps64::{SIGN, is_finite, pair, poly};

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
pub fn exp_f64<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
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
pub fn exp2_f64<T: FloatOps>(o: &mut T, t: T::F) -> T::F {
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
pub fn log_f64<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (e, lnm) = log_parts(o, x);
    let (hi, lo) = (o.fbits(LN2_HI), o.fbits(LN2_LO));
    let h = o.mul(e, hi);
    let l = o.fma(e, lo, lnm);
    let r = o.add(h, l);
    log_specials(o, x, r)
}

/// log2 x = e + ln m·log2 e (one rounding: exact for powers of two).
pub fn log2_f64<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (e, lnm) = log_parts(o, x);
    let log2e = o.fbits(LOG2E);
    let r = o.fma(lnm, log2e, e);
    log_specials(o, x, r)
}

const LN10: (u64, u64) = (0x4002_6bb1_bbb5_5516, 0xbcaf_48ad_494e_a3e9);

const INV_LN10: (u64, u64) = (0x3fdb_cb7b_1526_e50e, 0x3c69_5355_baaa_fad3);

/// ln(f64::MAX): above it e^x overflows.
pub(crate) const LN_MAX: f64 = 709.782_712_893_384;

/// e^x − 1.
pub fn expm1<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (lo, hi) = (o.fc(-40.0), o.fc(LN_MAX));
    let p = o.lt(x, lo);
    let xc = o.sel(p, lo, x);
    let p = o.lt(hi, xc);
    let xc = o.sel(p, hi, xc);
    let log2e = o.fbits(LOG2E);
    let t = o.mul(xc, log2e);
    let n = o.rni(t);
    let (nhi, nlo) = (o.fbits(LN2_HI ^ SIGN), o.fbits(LN2_LO ^ SIGN));
    let r = o.fma(n, nhi, xc);
    let r = o.fma(n, nlo, r);
    // e^r − 1 = r + r²·(1/2! + r/3! + ... + r^14/16!).
    let mut c = vec![0.0; 15];
    let mut fact = 1.0f64;
    for (k, ck) in c.iter_mut().enumerate() {
        fact *= (k + 2) as f64;
        *ck = 1.0 / fact;
    }
    let q = poly(o, r, &c);
    let r2 = o.mul(r, r);
    let pm = o.fma(r2, q, r);
    // 2^n·(pm + 1) − 1 = 2·(s·pm + (s − 1/2)) with s = 2^(n−1) (a normal power: n − 1 ∈ [−59, 1023]).
    let ni = o.f2i(n);
    let bias = o.ic(1022);
    let e = o.iadd(ni, bias);
    let e = o.shl(e, 52);
    let s = o.bits_to_f(e);
    let half = o.fc(0.5);
    let u = o.sub(s, half);
    let v = o.fma(s, pm, u);
    let two = o.fc(2.0);
    let v = o.mul(v, two);
    let (m1, inf) = (o.fc(-1.0), o.fc(f64::INFINITY));
    let p = o.lt(x, lo);
    let v = o.sel(p, m1, v);
    let p = o.lt(hi, x);
    let v = o.sel(p, inf, v);
    // NaN, and ±0 (whose sign the reduction loses), are their own result.
    let nan = o.is_nan(x);
    let zero = o.fc(0.0);
    let z = o.eq(x, zero);
    let keep = o.or(nan, z);
    o.sel(keep, x, v)
}

/// ln(1 + x).
pub fn log1p<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let one = o.fc(1.0);
    let u = o.add(one, x);
    let l = log_f64(o, u);
    let um1 = o.sub(u, one);
    let d = o.sub(x, um1);
    let c = o.div(d, u);
    let fin = is_finite(o, c);
    let zero = o.fc(0.0);
    let c = o.sel(fin, c, zero);
    let r = o.add(l, c);
    // 1 + x rounds to 1: ln(1 + x) = x to within x²/2.
    let exact = o.eq(u, one);
    o.sel(exact, x, r)
}

pub fn log10<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let l = log_f64(o, x);
    let (h, lo) = pair(o, INV_LN10);
    let t = o.mul(l, lo);
    o.fma(l, h, t)
}

pub fn exp10<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (lo, hi) = (o.fc(-400.0), o.fc(400.0));
    let p = o.lt(x, lo);
    let xc = o.sel(p, lo, x);
    let p = o.lt(hi, xc);
    let xc = o.sel(p, hi, xc);
    let (h, l) = pair(o, LN10);
    // x·ln10 = p + e exactly enough: the rounding error of x·h by an fma, plus x·l.
    let p = o.mul(xc, h);
    let np = o.neg(p);
    let e = o.fma(xc, h, np);
    let e = o.fma(xc, l, e);
    let ep = exp_f64(o, p);
    let r = o.fma(ep, e, ep);
    let fin = is_finite(o, ep);
    let r = o.sel(fin, r, ep);
    let nan = o.is_nan(x);
    o.sel(nan, x, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M64;

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
        let mut rng = crate::testing::Rng::new(4);
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
}
