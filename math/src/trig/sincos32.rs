//! libdevice's `sinf` and `cosf` (`tl.sin`, `tl.cos` on f32) as Triton 3.6 runs them, op for op (see
//! `exp_log::log32`): below |x| = 105615 a three-part Cody–Waite reduction by π/2 (`fma.rn.ftz`), above it
//! Payne–Hanek: the 24-bit significand times the 192 bits of 2/π (six 32-bit words, exact 32×32→64 products
//! carried through), the quadrant from the top bits and the remaining 64-bit fraction converted through f64;
//! then one of two polynomials in r² by quadrant. Branches are selects. Everything here is exact integer or
//! correctly rounded f32/f64 arithmetic, so the CPU model gives the GPU's bits.

use crate::FloatOps;
use crate::steps32::k;

/// 2/π from bit 191 down, the low word first (libdevice's `__cudart_i2opi_f`).
const TWO_OVER_PI: [u64; 6] = super::low_half_first();
/// π/2 · 2^-62, the scale of the 64-bit fraction.
const PIO2_2M62: u64 = 0x3bf9_21fb_5444_2d19;

/// The high word of `(b:a) << s` for s in [0, 31] (`shf.l.wrap`).
fn funnel<T: FloatOps>(o: &mut T, a: T::I, b: T::I, s: T::I) -> T::I {
    let hi = o.shl_v(b, s);
    let w = o.ic(32);
    let r = o.isub(w, s);
    let lo = o.shr_v(a, r);
    o.ior(hi, lo)
}

/// (quadrant, reduced argument) for |x| ≥ 105615 (computed for every x; the caller selects).
fn payne_hanek<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::F) {
    let xb = o.f_to_bits(x);
    let top = o.ic(0x8000_0000);
    let m = o.shl(xb, 8);
    let m = o.ior(m, top);
    // words[i] = low 32 bits of m·2/π's word i plus the carry; words[6] the last carry.
    let mut words = Vec::with_capacity(7);
    let mut carry = o.ic(0);
    for &w in &TWO_OVER_PI {
        let w = o.ic(w);
        let lo = o.imul(w, m);
        let s = o.iadd(lo, carry);
        let c = o.ult(s, carry);
        let (one, zero) = (o.ic(1), o.ic(0));
        let c = o.isel(c, one, zero);
        let hi = o.umulhi(w, m);
        carry = o.iadd(hi, c);
        words.push(s);
    }
    words.push(carry);
    // The window of three words at the exponent: idx = ((e & 0xe0) − 128)/32 in 0..=3 for e ≥ 128.
    let e = o.shr(xb, 23);
    let sel = o.ic(0xe0);
    let band = o.iand(e, sel);
    let pick = |o: &mut T, from: usize| -> T::I {
        let mut r = words[from];
        for idx in 1..4 {
            let want = o.ic(128 + 32 * idx as u64);
            let lt = o.ult(band, want);
            let gt = o.ult(want, band);
            let ne = o.or(lt, gt);
            let eq = o.not(ne);
            r = o.isel(eq, words[from - idx], r);
        }
        r
    };
    let w6 = pick(o, 6);
    let w5 = pick(o, 5);
    let w4 = pick(o, 4);
    let mask = o.ic(31);
    let s = o.iand(e, mask);
    let zero = o.ic(0);
    let one = o.ic(1);
    let aligned = o.ult(s, one);
    let f = funnel(o, w4, w5, s);
    let r53 = o.isel(aligned, w5, f);
    let r29 = funnel(o, w5, w6, s);
    let r30 = o.shr(r29, 30);
    let two = o.ic(2);
    let r31 = funnel(o, r53, r29, two);
    let r32 = o.shl(r53, 2);
    let r33 = o.shr(r31, 31);
    let q = o.iadd(r33, r30);
    let nq = o.isub(zero, q);
    let negx = o.slt(xb, zero);
    let q = o.isel(negx, nq, q);
    let r36 = o.ixor(r31, xb);
    let r37 = o.sar(r31, 31);
    let hi = o.ixor(r37, r31);
    let lo = o.ixor(r37, r32);
    let d = o.s64_scaled_to_f32(hi, lo, PIO2_2M62);
    let nd = o.neg(d);
    let neg = o.slt(r36, zero);
    (q, o.sel(neg, nd, d))
}

/// `sinf(x)`, or `cosf(x)` when `cos`.
pub fn sinf<T: FloatOps>(o: &mut T, x: T::F, cos: bool) -> T::F {
    let (q, r) = reduce(o, x);
    sin_cos_kernel(o, q, r, cos)
}

/// libdevice's `__internal_trig_reduction_kernel`: (quadrant, x − quadrant·π/2).
pub(crate) fn reduce<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::F) {
    // Cody–Waite: q = rni(x·2/π), r = x − q·π/2 in three parts.
    let two_pi = k(o, 0x3f22_f983);
    let t = o.mul(x, two_pi);
    let q = o.f2i(t);
    let qf = o.i2f(q);
    let c1 = k(o, 0xbfc9_0fda);
    let r = o.fma_ftz(qf, c1, x);
    let c2 = k(o, 0xb3a2_2168);
    let r = o.fma_ftz(qf, c2, r);
    let c3 = k(o, 0xa7c2_34c5);
    let r = o.fma_ftz(qf, c3, r);
    // |x| ≥ 105615: Payne–Hanek, or x·0 (NaN) and quadrant 0 for ±inf.
    let a = o.abs_ftz(x);
    let lim = k(o, 0x47ce_4780);
    let slow = o.le(lim, a);
    let inf = k(o, 0x7f80_0000);
    let is_inf = o.eq(a, inf);
    let (qs, rs) = payne_hanek(o, x);
    let zero_f = o.fc(0.0);
    let nan = o.mul_ftz(x, zero_f);
    let zero_i = o.ic(0);
    let qs = o.isel(is_inf, zero_i, qs);
    let rs = o.sel(is_inf, nan, rs);
    let q = o.isel(slow, qs, q);
    let r = o.sel(slow, rs, r);
    (q, r)
}

/// libdevice's `__internal_sin_cos_kernel`: sin(r + q·π/2) for |r| ≤ π/4 (cos when `cos`, through q + 1): the
/// sine or cosine polynomial in r² by the parity of the (cos-shifted) quadrant, negated by its bit 1.
pub(crate) fn sin_cos_kernel<T: FloatOps>(o: &mut T, q: T::I, r: T::F, cos: bool) -> T::F {
    let (zero_i, zero_f) = (o.ic(0), o.fc(0.0));
    // The polynomial: the cosine one when the (cos-shifted) quadrant is odd.
    let one_i = o.ic(1);
    let qc = if cos { o.iadd(q, one_i) } else { q };
    let odd_bit = o.iand(q, one_i);
    let odd_q = o.ult(zero_i, odd_bit);
    let use_cos = if cos { o.not(odd_q) } else { odd_q };
    let r2 = o.mul_ftz(r, r);
    let one = o.fc(1.0);
    let base = o.sel(use_cos, one, r);
    let r3 = o.fma_ftz(r2, base, zero_f);
    let (s0, s1, s2) = (k(o, 0xb94d_4153), k(o, 0x3c08_85e4), k(o, 0xbe2a_aaa8));
    let (ca, cb) = (k(o, 0x37cb_ac00), k(o, 0xbab6_07ed));
    let c0 = o.fma_ftz(ca, r2, cb);
    let (c1, c2) = (k(o, 0x3d2a_aabb), k(o, 0xbeff_ffff));
    let p0 = o.sel(use_cos, c0, s0);
    let p1 = o.sel(use_cos, c1, s1);
    let p2 = o.sel(use_cos, c2, s2);
    let p = o.fma_ftz(p0, r2, p1);
    let p = o.fma_ftz(p, r2, p2);
    let v = o.fma_ftz(p, r3, base);
    let two = o.ic(2);
    let flip_bit = o.iand(qc, two);
    let flip = o.ult(zero_i, flip_bit);
    let m1 = o.fc(-1.0);
    let nv = o.fma_ftz(v, m1, zero_f);
    o.sel(flip, nv, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M32;

    /// Triton's bits recorded on an H100 (`conformance/RESULTS.md`), on both reduction paths.
    #[test]
    fn triton_bits() {
        let b = f32::from_bits;
        assert_eq!(sinf(&mut M32, b(0x3f80_0000), false).to_bits(), 0x3f57_6aa5);
        assert_eq!(sinf(&mut M32, b(0x477f_e000), true).to_bits(), 0xbe61_d75a);
    }

    /// Within 1.5 ulp of float64 (libdevice's documented bound is 2 ulp) on [−1e10, 1e10] and special values.
    #[test]
    fn accuracy_and_special_values() {
        let mut rng = crate::testing::Rng::new(3);
        let mut worst = 0.0f64;
        for i in 0..300_000 {
            let x = if i % 2 == 0 {
                (rng.uniform() * 2e10 - 1e10) as f32
            } else {
                ((rng.uniform() * 40.0 - 20.0).exp2() * rng.normal().signum()) as f32
            };
            for cos in [false, true] {
                let got = sinf(&mut M32, x, cos) as f64;
                let want = if cos { (x as f64).cos() } else { (x as f64).sin() };
                let ulp = (want.abs() as f32).max(f32::MIN_POSITIVE);
                let ulp = (f32::from_bits(ulp.to_bits() + 1) - ulp) as f64;
                worst = worst.max((got - want).abs() / ulp);
            }
        }
        assert!(worst < 1.5, "{worst} ulp");
        for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            assert!(sinf(&mut M32, x, false).is_nan() && sinf(&mut M32, x, true).is_nan());
        }
        assert_eq!(sinf(&mut M32, -0.0, false).to_bits(), (-0.0f32).to_bits());
        assert_eq!(sinf(&mut M32, f32::from_bits(1), false), 0.0);
        assert_eq!(sinf(&mut M32, 0.0, true), 1.0);
    }
}
