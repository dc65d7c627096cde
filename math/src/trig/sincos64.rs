//! tessel's own accurate f64 `sin` and `cos`, which codegen emits for `tl.sin`/`tl.cos` on f64 (Triton calls
//! libdevice's `__nv_sin`/`__nv_cos`, which CUDA documents within 2 ulp over the whole range; the interpreter
//! computes the host's). Not libdevice's sequence: its reduction keeps a double-double where libdevice's
//! ([`super::reduce64`]) rounds to one double; both read the one table of 2/π ([`super::TWO_OVER_PI`]).
//!
//! - Range reduction (Payne–Hanek in 64-bit integers), for |x| ≥ π/4: |x| = M·2^E with a 53-bit integer M.
//!   Then |x|·2/π mod 4 = M·W·2^−190 mod 4, where W is the 192-bit window of the bits of 2/π starting at bit
//!   E − 1 (earlier bits contribute multiples of 4, later ones less than 2^−137 of a quadrant). The low 192 bits
//!   of M·W (three `mul.lo`, two `mul.hi`, carries) hold the quadrant n (rounded to nearest) in their top two
//!   bits and the signed fraction of a quadrant below. The window's four 64-bit words are selected from a
//!   20-word table (a zero word, then 1216 bits of 2/π) by compares, without memory.
//! - The fraction becomes a double-double: it is cut into four pieces each exact in f64 and summed by
//!   Fast2Sum steps (largest first), so that it keeps ~106 bits even at the closest approach of a double to a
//!   multiple of π/2 (about 2^−61 of a quadrant). r = fraction·π/2 as a double-double (π/2 in two parts, the
//!   product split exactly with an fma), renormalized to r + rr, |r| ≤ π/4.
//! - sin(r + rr) = r + (r·z·P(z) + rr·(1 − z/2)) and cos(r + rr) = 1 + (z·Q(z) − r·rr) with z = r², P and Q the
//!   Taylor polynomials to r^21/r^22 (truncation < 2^−80); picked and signed by the quadrant ([`finish`]).
//! - Below π/4 no reduction (n = 0, rr = 0). ±0 keep their sign in sin, ±inf and NaN give NaN; f64
//!   subnormals are kept (f64 never flushes).
//!
//! Accuracy: within 1 ulp of the correctly rounded value (the tests measure the worst case against the host's
//! `sin`/`cos` on ≥ 200k points from 1e-300 to 1e308 and on the hardest reduction cases).

use crate::FloatOps;

/// The table of 2/π preceded by a zero word (so that windows starting before t_1 read zeros): padded bit j is
/// t_(j−63).
const TWO_OVER_PI: [u64; 20] = super::zero_padded();
/// π/2 = PIO2_HI + PIO2_LO (to ~2^−107).
const PIO2_HI: u64 = 0x3ff9_21fb_5444_2d18;
const PIO2_LO: u64 = 0x3c91_a626_3314_5c07;
const MANT: u64 = (1 << 52) - 1;

/// `a + b = s + e` exactly, for |a| ≥ |b| (or a = 0).
fn fast2sum<T: FloatOps>(o: &mut T, a: T::F, b: T::F) -> (T::F, T::F) {
    let s = o.add(a, b);
    let z = o.sub(s, a);
    let e = o.sub(b, z);
    (s, e)
}

/// `a + b` with the carry out (0 or 1).
fn add_carry<T: FloatOps>(o: &mut T, a: T::I, b: T::I) -> (T::I, T::I) {
    let s = o.iadd(a, b);
    let c = o.ult(s, a);
    let (one, zero) = (o.ic(1), o.ic(0));
    (s, o.isel(c, one, zero))
}

/// `(n mod 4, r, rr)` with |x| = n·π/2 + r + rr, |r| ≤ π/4 (about), for x ≥ 0.
fn reduce<T: FloatOps>(o: &mut T, ax: T::F) -> (T::I, T::F, T::F) {
    let b = o.f_to_bits(ax);
    let mask = o.ic(MANT);
    let man = o.iand(b, mask);
    let implicit = o.ic(1 << 52);
    let m = o.ior(man, implicit);
    let field = o.shr(b, 52);
    // The window starts at t_(E−1), padded bit j0 = E − 1 + 63 with E = field − 1075; clamped at 0 for the small
    // arguments that take the other path.
    let bias = o.ic(1075 + 1 - 63);
    let j0 = o.isub(field, bias);
    let zero = o.ic(0);
    let neg = o.slt(j0, zero);
    let j0 = o.isel(neg, zero, j0);
    let q = o.shr(j0, 6);
    let m63 = o.ic(63);
    let sft = o.iand(j0, m63);
    let c64 = o.ic(64);
    let back = o.isub(c64, sft);
    // Words q .. q + 3 (q ≤ 16): the last select taken is the one for j = q.
    let words: Vec<T::I> = TWO_OVER_PI.iter().map(|&w| o.ic(w)).collect();
    let last = TWO_OVER_PI.len() - 4;
    let le: Vec<T::P> = (0..last)
        .map(|j| {
            let c = o.ic(j as u64 + 1);
            o.ult(q, c)
        })
        .collect();
    let pick = |o: &mut T, k: usize| (0..last).rev().fold(words[last + k], |v, j| o.isel(le[j], words[j + k], v));
    let w: Vec<T::I> = (0..4).map(|k| pick(o, k)).collect();
    let join = |o: &mut T, a: T::I, b: T::I| {
        let hi = o.shl_v(a, sft);
        let lo = o.shr_v(b, back);
        // A shift by 64 (sft = 0) gives 0 in PTX and in the model.
        o.ior(hi, lo)
    };
    let (w0, w1, w2) = (join(o, w[0], w[1]), join(o, w[1], w[2]), join(o, w[2], w[3]));
    // The low 192 bits of M·(w0, w1, w2).
    let p2 = o.imul(m, w2);
    let c2 = o.umulhi(m, w2);
    let l1 = o.imul(m, w1);
    let (p1, k1) = add_carry(o, l1, c2);
    let h1 = o.umulhi(m, w1);
    let c1 = o.iadd(h1, k1);
    let l0 = o.imul(m, w0);
    let p0 = o.iadd(l0, c1);
    // Nearest quadrant: n = the top two bits of p0 + 2^61; the rest, minus 2^61, is the signed fraction's top
    // word (units of 2^−62 of a quadrant).
    let half = o.ic(1 << 61);
    let g = o.iadd(p0, half);
    let n = o.shr(g, 62);
    let low62 = o.ic((1 << 62) - 1);
    let f = o.iand(g, low62);
    let f = o.isub(f, half);
    // Four pieces, each exact in f64, in decreasing order.
    let pw = |o: &mut T, e: i64| o.fbits(((1023 + e) as u64) << 52);
    let fa = o.sar(f, 11);
    let fa = o.i2f(fa);
    let s51 = pw(o, -51);
    let p_1 = o.mul(fa, s51);
    let m7ff = o.ic(0x7ff);
    let fb = o.iand(f, m7ff);
    let fb = o.i2f(fb);
    let s62 = pw(o, -62);
    let p_2 = o.mul(fb, s62);
    let ma = o.shr(p1, 11);
    let ma = o.i2f(ma);
    let s115 = pw(o, -115);
    let p_3 = o.mul(ma, s115);
    let mb = o.iand(p1, m7ff);
    let mb = o.i2f(mb);
    let lb = o.shr(p2, 11);
    let lb = o.i2f(lb);
    let (s126, s179) = (pw(o, -126), pw(o, -179));
    let lb = o.mul(lb, s179);
    let p_4 = o.fma(mb, s126, lb);
    let (a, ea) = fast2sum(o, p_3, p_4);
    let (bb, eb) = fast2sum(o, p_2, a);
    let (hi, ec) = fast2sum(o, p_1, bb);
    let lo = o.add(eb, ea);
    let lo = o.add(ec, lo);
    // (hi + lo)·π/2 as r + rr.
    let (ph, pl) = (o.fbits(PIO2_HI), o.fbits(PIO2_LO));
    let rh = o.mul(hi, ph);
    let nrh = o.neg(rh);
    let re = o.fma(hi, ph, nrh);
    let t = o.fma(lo, ph, re);
    let rl = o.fma(hi, pl, t);
    let r = o.add(rh, rl);
    let d = o.sub(r, rh);
    let rr = o.sub(rl, d);
    // Below π/4: no reduction.
    let pio4 = o.fc(std::f64::consts::FRAC_PI_4);
    let small = o.lt(ax, pio4);
    let n = o.isel(small, zero, n);
    let r = o.sel(small, ax, r);
    let fz = o.fc(0.0);
    let rr = o.sel(small, fz, rr);
    (n, r, rr)
}

/// sin(r + rr) and cos(r + rr) for |r| ≤ π/4 + a little, |rr| ≤ ulp(r).
fn kernels<T: FloatOps>(o: &mut T, r: T::F, rr: T::F) -> (T::F, T::F) {
    let z = o.mul(r, r);
    let (mut sc, mut cc, mut fact) = (Vec::new(), Vec::new(), 1.0f64);
    for k in 1..=22u32 {
        fact *= k as f64;
        let sign = if (k / 2) % 2 == 1 { -1.0 } else { 1.0 };
        if k % 2 == 1 && k >= 3 {
            sc.push(sign / fact);
        } else if k % 2 == 0 {
            cc.push(sign / fact);
        }
    }
    let sc: Vec<T::F> = sc.iter().map(|&c| o.fc(c)).collect();
    let cc: Vec<T::F> = cc.iter().map(|&c| o.fc(c)).collect();
    let horner = |o: &mut T, c: &[T::F]| {
        let (last, rest) = c.split_last().expect("coefficients");
        rest.iter().rev().fold(*last, |acc, &k| o.fma(acc, z, k))
    };
    // sin: r + (r·z·P(z) + rr·(1 − z/2)).
    let ps = horner(o, &sc);
    let rz = o.mul(r, z);
    let mhalf = o.fc(-0.5);
    let hz = o.mul(z, mhalf);
    let tail = o.fma(hz, rr, rr);
    let tail = o.fma(rz, ps, tail);
    let s = o.add(r, tail);
    // cos: 1 + (z·Q(z) − r·rr).
    let pc = horner(o, &cc);
    let nrr = o.neg(rr);
    let rrr = o.mul(r, nrr);
    let w = o.fma(z, pc, rrr);
    let one = o.fc(1.0);
    let c = o.add(one, w);
    (s, c)
}

/// f64 sin x (`cos = false`) or cos x.
pub fn sin_cos_f64<T: FloatOps>(o: &mut T, x: T::F, cos: bool) -> T::F {
    let ax = o.abs(x);
    let (n, r, rr) = reduce(o, ax);
    let (s, c) = kernels(o, r, rr);
    finish(o, x, n, s, c, cos)
}

/// sin x (or cos x) from the quadrant n of |x| and sin r, cos r of its reduced argument: picks and signs by
/// the quadrant, gives sin the sign of x (−0 stays −0), and NaN for ±inf and NaN.
fn finish<T: FloatOps>(o: &mut T, x: T::F, n: T::I, s: T::F, c: T::F, cos: bool) -> T::F {
    let ax = o.abs(x);
    // cos x = sin(x + π/2): one quadrant on.
    let n = if cos {
        let one = o.ic(1);
        o.iadd(n, one)
    } else {
        n
    };
    let (one, two, three) = (o.ic(1), o.ic(2), o.ic(3));
    let q = o.iand(n, three);
    let odd = o.iand(q, one);
    let zero = o.ic(0);
    let use_cos = o.ult(zero, odd);
    let v = o.sel(use_cos, c, s);
    let hi = o.iand(q, two);
    let flip = o.ult(zero, hi);
    let nv = o.neg(v);
    let v = o.sel(flip, nv, v);
    let v = if cos {
        v
    } else {
        // sin is odd: the sign of x (also for ±0).
        let fz = o.fc(0.0);
        let negx = o.lt(x, fz);
        let nv = o.neg(v);
        let xb = o.f_to_bits(x);
        let sign = o.ic(1 << 63);
        let sb = o.iand(xb, sign);
        let is_neg0 = o.ult(zero, sb);
        let zx = o.eq(x, fz);
        let neg0 = o.and(zx, is_neg0);
        let v = o.sel(negx, nv, v);
        o.sel(neg0, x, v)
    };
    let inf = o.fc(f64::INFINITY);
    let isinf = o.eq(ax, inf);
    let isnan = o.is_nan(x);
    let bad = o.or(isinf, isnan);
    let nan = o.fc(f64::NAN);
    o.sel(bad, nan, v)
}

pub fn tan<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let s = sin_cos_f64(o, x, false);
    let c = sin_cos_f64(o, x, true);
    o.div(s, c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M64;

    fn ulps(got: f64, want: f64) -> f64 {
        if got == want || (got.is_nan() && want.is_nan()) {
            return 0.0;
        }
        let ulp = f64::from_bits(want.abs().to_bits() + 1) - want.abs();
        (got - want).abs() / ulp
    }

    /// Within 1 ulp of the host's `sin`/`cos` (glibc's) on random magnitudes from 1e-300 to 1e300, ordinary
    /// arguments and multiples of π/2.
    #[test]
    fn sin_and_cos_are_within_1_ulp() {
        let mut rng = crate::testing::Rng::new(11);
        let mut xs: Vec<f64> = (0..200_000)
            .map(|_| {
                let e = rng.uniform() * 1000.0;
                let sign = if rng.uniform() < 0.0 { -1.0 } else { 1.0 };
                sign * (1.0 + (rng.uniform() + 1.0) / 2.0) * 2f64.powf(e.round())
            })
            .collect();
        xs.extend((0..100_000).map(|_| rng.uniform() * 10.0));
        xs.extend((1..2000).map(|k| k as f64 * std::f64::consts::FRAC_PI_2));
        xs.extend([1e22, 1e-300, std::f64::consts::FRAC_PI_4]);
        xs.extend([f64::MAX, f64::MIN_POSITIVE, 3e9, 1e10, 0.5, 1.0, 2.5]);
        let mut worst: f64 = 0.0;
        for &x in &xs {
            for (cos, want) in [(false, x.sin()), (true, x.cos())] {
                let got = sin_cos_f64(&mut M64, x, cos);
                let e = ulps(got, want);
                assert!(e <= 1.0, "{}({x:e}) = {got:e}, want {want:e} ({e} ulp)", if cos { "cos" } else { "sin" });
                worst = worst.max(e);
            }
        }
        eprintln!("f64 sin/cos: worst {worst} ulp over {} arguments", xs.len());
    }

    /// The double nearest to a multiple of π/2, 6381956970095103·2^797 (its reduced argument is 4.687e-19, about
    /// 2^−61 of a quadrant): the result against the value computed with 2000-bit arithmetic (mpmath), which
    /// glibc's `cos` misses by 8 ulp.
    #[test]
    fn hardest_reduction_is_exact() {
        let x = 6381956970095103.0 * 2f64.powi(797);
        let truth = -4.687_165_924_254_628e-19;
        assert!(ulps(sin_cos_f64(&mut M64, x, true), truth) <= 0.5);
        assert_eq!(sin_cos_f64(&mut M64, x, false), 1.0);
    }

    #[test]
    fn special_values() {
        let s = |x: f64| sin_cos_f64(&mut M64, x, false);
        let c = |x: f64| sin_cos_f64(&mut M64, x, true);
        assert_eq!(s(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(s(0.0).to_bits(), 0);
        assert_eq!(c(0.0), 1.0);
        assert_eq!(s(f64::from_bits(1)), f64::from_bits(1));
        for x in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            assert!(s(x).is_nan() && c(x).is_nan(), "{x}");
        }
    }
}
