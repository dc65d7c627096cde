//! libdevice's f64 trigonometric argument reduction (`__internal_trig_reduction_kerneld` and its
//! `__internal_trig_reduction_slowpathd`) as Triton 3.6 runs it (its PTX for sm_90), op for op: below |x| = 2^31
//! a three-part Cody–Waite reduction by π/2; above, Payne–Hanek: the 64-bit significand times a window of four
//! 64-bit words of 2/π (libdevice's loop over `__cudart_i2opi_d` in local memory, here the window picked by
//! selects and the four products carried straight-line), the quadrant from the top bits, the 128-bit fraction
//! normalized and multiplied by π/2 in fixed point, and the f64 assembled from its bits. Everything is exact
//! integer or correctly rounded f64 arithmetic, so the CPU model gives the GPU's bits.

use crate::FloatOps;

/// 2/π · 2^1152 rounded down, the low word first (libdevice's `__cudart_i2opi_d`; word 17 is the most
/// significant).
const TWO_OVER_PI: [u64; 18] = super::low_word_first();

/// π/2 · 2^63, rounded up: the fixed-point multiplier of the fraction.
const PIO2_2P63: u64 = 0xc90f_daa2_2168_c235;
/// 2/π, and π/2 in three parts (Cody–Waite).
const TWO_OVER_PI_F: u64 = 0x3fe4_5f30_6dc9_c883;
const PIO2: [u64; 3] = [0x3ff9_21fb_5444_2d18, 0x3c91_a626_3314_5c00, 0x397b_839a_2520_49c0];

/// Cody–Waite: (q, x − q·π/2) with q = rni(x·2/π) (`cvt.rni.s32.f64`: exact here for |x| < 2^31, where the
/// caller takes it).
pub(crate) fn reduce_small<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::F) {
    let c = o.fbits(TWO_OVER_PI_F);
    let t = o.mul(x, c);
    let q = o.f2i(t);
    let qf = o.i2f(q);
    let nq = o.neg(qf);
    let mut r = x;
    for p in PIO2 {
        let p = o.fbits(p);
        r = o.fma(nq, p, r);
    }
    (q, r)
}

/// `__internal_trig_reduction_kerneld`: Cody–Waite below |x| = 2^31 (and for NaN), Payne–Hanek from there on
/// (inf keeps x and the Cody–Waite quadrant, as libdevice's slow path returns it untouched).
pub(crate) fn reduce<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::F) {
    let (q, r) = reduce_small(o, x);
    let (qs, rs, special) = payne_hanek(o, x);
    let a = o.abs(x);
    let lim = o.fbits(0x41e0_0000_0000_0000);
    let slow = o.le(lim, a);
    let ns = o.not(special);
    let slow_ph = o.and(slow, ns);
    let q = o.isel(slow_ph, qs, q);
    let rs = o.sel(special, x, rs);
    let r = o.sel(slow, rs, r);
    (q, r)
}

/// A 64-bit word pair shifted left by `s` in [0, 63]: the high word of (hi:lo) << s, the low word's top bits
/// brought in as `(lo >> 1) >> (63 − s)` (which is 0 at s = 0, so no select is needed there).
fn shift_in<T: FloatOps>(o: &mut T, hi: T::I, lo: T::I, s: T::I, ns: T::I) -> T::I {
    let h = o.shl_v(hi, s);
    let l = o.shr(lo, 1);
    let l = o.shr_v(l, ns);
    o.ior(h, l)
}

/// `__internal_trig_reduction_slowpathd` for |x| ≥ 2^31: (quadrant, reduced argument, whether x is inf or NaN,
/// which libdevice returns unchanged). Computed for every x; the caller selects.
fn payne_hanek<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::F, T::P) {
    let xb = o.f_to_bits(x);
    let e = o.shr(xb, 52);
    let emask = o.ic(0x7ff);
    let e = o.iand(e, emask);
    let special = o.ieq(e, emask);
    let m = o.shl(xb, 11);
    let top = o.ic(1 << 63);
    let m = o.ior(m, top);
    // The window: words 15 − j .. 18 − j for j = (e − 1024) >> 6 (0..=15 for the exponents taken here), the
    // words past the table 0 (libdevice's loop stops there); the products carried from the window's low
    // word, nothing carried in from below it.
    let c1024 = o.ic(1024);
    let eb = o.isub(e, c1024);
    let j = o.shr(eb, 6);
    let is_j: Vec<T::P> = (0..16u64)
        .map(|v| {
            let v = o.ic(v);
            o.ieq(j, v)
        })
        .collect();
    let mut words = Vec::with_capacity(4);
    let mut carry = o.ic(0);
    for k in 0..4usize {
        let mut w = o.ic(0);
        for (jv, &p) in is_j.iter().enumerate() {
            let idx = 15 - jv + k;
            if idx < TWO_OVER_PI.len() {
                let c = o.ic(TWO_OVER_PI[idx]);
                w = o.isel(p, c, w);
            }
        }
        let lo = o.imul(w, m);
        let hi = o.umulhi(w, m);
        let s = o.iadd(lo, carry);
        let c = o.ult(s, carry);
        let (one, zero) = (o.ic(1), o.ic(0));
        let c = o.isel(c, one, zero);
        carry = o.iadd(hi, c);
        words.push(s);
    }
    // The fraction's 128 bits at the exponent: words 3:2 shifted left by e mod 64.
    let m63 = o.ic(63);
    let s = o.iand(e, m63);
    let ns = o.ixor(s, m63);
    let hi = shift_in(o, words[3], words[2], s, ns);
    let lo = shift_in(o, words[2], words[1], s, ns);
    // The quadrant: the top two bits, rounded by the next; the fraction below them, in [−1/2, 1/2).
    let q = o.shr(hi, 62);
    let h = o.shl(hi, 2);
    let lo62 = o.shr(lo, 62);
    let h = o.ior(h, lo62);
    let l = o.shl(lo, 2);
    let hb = o.shr(h, 63);
    let q = o.iadd(hb, q);
    let sign_mask = o.ic(1 << 63);
    let sign = o.iand(xb, sign_mask);
    let zero = o.ic(0);
    let nq = o.isub(zero, q);
    let negx = o.ult(zero, sign);
    let q = o.isel(negx, nq, q);
    // A negative fraction: negated (128-bit), and the result's sign flipped.
    let negf = o.slt(h, zero);
    let fs = o.ixor(sign, sign_mask);
    let sign = o.isel(negf, fs, sign);
    let nl = o.isub(zero, l);
    let borrow = o.ult(zero, l);
    let (one, z) = (o.ic(1), o.ic(0));
    let b = o.isel(borrow, one, z);
    let nh = o.isub(zero, h);
    let nh = o.isub(nh, b);
    let h = o.isel(negf, nh, h);
    let l = o.isel(negf, nl, l);
    // Normalized (the leading one at bit 63), times π/2 in fixed point; one more normalizing shift when the
    // product's top bit is clear.
    let lz = o.clz(h);
    let sh = o.iand(lz, m63);
    let nsh = o.ixor(sh, m63);
    let n = shift_in(o, h, l, sh, nsh);
    let pio2 = o.ic(PIO2_2P63);
    let plo = o.imul(n, pio2);
    let phi = o.umulhi(n, pio2);
    let one = o.ic(1);
    let short = o.slt(zero, phi);
    let lz1 = o.iadd(lz, one);
    let lz = o.isel(short, lz1, lz);
    let p2 = o.shl(phi, 1);
    let pl = o.shr(plo, 63);
    let p2 = o.ior(p2, pl);
    let phi = o.isel(short, p2, phi);
    // Rounded to 53 bits and given the exponent −lz (the significand's leading one adds 1 to 0x3fe).
    let r = o.iadd(phi, one);
    let r = o.shr(r, 10);
    let r = o.iadd(r, one);
    let r = o.shr(r, 1);
    let ez = o.shl(lz, 52);
    let r = o.isub(r, ez);
    let bias = o.ic(0x3fe0_0000_0000_0000);
    let r = o.iadd(r, bias);
    let r = o.ior(r, sign);
    let r = o.bits_to_f(r);
    (q, r, special)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M64;
    use crate::testing::Rng;
    use crate::testutil::{spread, ulps64};
    use crate::trig::sinpi64::kernel;

    fn sin(x: f64, cos: bool) -> f64 {
        let (q, r) = reduce(&mut M64, x);
        let q = if cos { q.wrapping_add(1) } else { q };
        kernel(&mut M64, q, r)
    }

    /// libdevice's `sin`/`cos` (this reduction and `__cudart_sin_cos_coeffs`' kernel) within 1 ulp of the host's
    /// correctly reduced ones (glibc's, themselves within an ulp) on both paths, up to the largest f64; CUDA
    /// states 2 ulp.
    #[test]
    fn reduction_against_host() {
        let mut rng = Rng::new(64);
        let mut xs = spread(&mut rng, 1e-3, 2f64.powi(31), 50_000, true);
        xs.extend(spread(&mut rng, 2f64.powi(31), f64::MAX, 200_000, true));
        xs.extend([2f64.powi(31), 2f64.powi(31) - 1.0, f64::MAX, -f64::MAX, 1e22, 6.381_956_970_095_103e297]);
        for &x in &xs {
            for cos in [false, true] {
                let got = sin(x, cos);
                let want = if cos { x.cos() } else { x.sin() };
                let d = ulps64(got, want);
                assert!(d <= 1, "{x:e} cos={cos}: {got:e} vs {want:e}, {d} ulp");
            }
        }
    }

    /// Every exponent from 2^31 up (each selects its own window), and the special values.
    #[test]
    fn each_window_and_special_values() {
        for e in 31..1024 {
            for m in [1.0, 1.234_567_890_123_456_7, 1.999_999_999_999_999_8] {
                let x = m * 2f64.powi(e);
                assert!(ulps64(sin(x, false), x.sin()) <= 1, "2^{e}·{m}");
            }
        }
        let (_, r) = reduce(&mut M64, f64::INFINITY);
        assert_eq!(r, f64::INFINITY);
        assert!(reduce(&mut M64, f64::NAN).1.is_nan());
        assert_eq!(reduce(&mut M64, -0.0).1.to_bits(), (-0.0f64).to_bits());
    }
}
