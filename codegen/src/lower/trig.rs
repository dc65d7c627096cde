//! Accurate f32 `sin` and `cos` (Triton calls libdevice's `__nv_sinf`/`__nv_cosf`, within 1–2 ulp of the
//! true value for every argument; `sin.approx` is off by up to ~1e9 ulp for |x| ≥ 1e5).
//!
//! Method: the f32 argument is widened to f64 (exact) and everything runs in f64 over [`FloatOps`], so the CPU
//! model in the tests executes the emitted instruction sequence; the f64 result rounds once to f32.
//!
//! - Range reduction, exact enough for every f32 (Payne–Hanek, in 64-bit integers): |x| = M·2^e with a 24-bit
//!   integer M. Then |x|·2/π mod 4 = M·W·2^−126 mod 4, where W is the 128-bit window of the bits of 2/π that
//!   starts at bit e − 1 (earlier bits contribute multiples of 4; later ones less than 2^−102 of a quadrant).
//!   The low 128 bits of M·W (two `mul.lo.u64`, one `mul.hi.u64`) hold the quadrant n in their top two bits
//!   (rounded to nearest) and the reduced argument's fraction of a quadrant below, which becomes an f64 from
//!   its two halves (an error of ~2^−52 relative even at the closest approach of an f32 to a multiple of π/2,
//!   about 2^−30 away). The window is cut from a 5-word table (a zero word, then 256 bits of 2/π) with
//!   variable shifts. Arguments below 1/2 are not reduced (n = 0, r = |x|).
//! - r·π/2 ∈ [−π/4, π/4], then sin/cos by their Taylor polynomials to r^15/r^16 (truncation < 2^−54
//!   relative), picked and signed by the quadrant; sin is odd, cos even.
//! - Specials: ±0 keep their sign in sin (cos(±0) = 1), ±inf and NaN give NaN. Subnormal inputs are flushed
//!   to ±0 first (the caller emits a `.ftz` multiply), as libdevice does under Triton's FTZ setting.
//!
//! Accuracy: the f64 result is within ~2^−50 relative of the true value, so the f32 result is the correctly
//! rounded one except next to a tie (then 1 ulp); the tests check ≤ 1 ulp against f64 `sin`/`cos` on
//! ≥ 100k points over ±1e10 plus the hardest reduction cases, and ≤ 1 ulp beyond up to f32::MAX.

use super::Lower;
use super::fpops::{Emit, FloatOps};
use crate::ptx::{Reg, RegClass, f32_imm};

/// The bits of 2/π after the binary point, t_1 ... t_256, preceded by a zero word (so that windows starting
/// before t_1 read zeros).
const TWO_OVER_PI: [u64; 5] =
    [0, 0xa2f9_836e_4e44_1529, 0xfc27_57d1_f534_ddc0, 0xdb62_9599_3c43_9041, 0xfe51_63ab_debb_c561];
const PI_OVER_2: f64 = std::f64::consts::FRAC_PI_2;
const MANT: u64 = (1 << 52) - 1;

/// `(n mod 4, r)` with |x| = n·π/2 + r, |r| ≤ π/4 (about), for x ≥ 0 an f32 value held in an f64.
fn reduce<T: FloatOps>(o: &mut T, ax: T::F) -> (T::I, T::F) {
    let b = o.f_to_bits(ax);
    let mask = o.ic(MANT);
    let man = o.iand(b, mask);
    let implicit = o.ic(1 << 52);
    let man = o.ior(man, implicit);
    let m = o.shr(man, 29); // the f32 mantissa, 24 bits
    let field = o.shr(b, 52);
    // The window starts at bit t_(e−1) of 2/π, i.e. at bit j0 = e + 62 of the padded table (whose bit j is
    // t_(j−63)), with e = field − 1075 + 29. Clamped at 0 for the small arguments that take the other path.
    let bias = o.ic(1075 - 29 - 62);
    let j0 = o.isub(field, bias);
    let zero = o.ic(0);
    let neg = o.slt(j0, zero);
    let j0 = o.isel(neg, zero, j0);
    let q = o.shr(j0, 6);
    let m63 = o.ic(63);
    let sft = o.iand(j0, m63);
    let c64 = o.ic(64);
    let back = o.isub(c64, sft);
    // Words q, q + 1, q + 2 (q ≤ 2 for every f32), selected without memory.
    let words: Vec<T::I> = TWO_OVER_PI.iter().map(|&w| o.ic(w)).collect();
    let (one, two) = (o.ic(1), o.ic(2));
    let is0 = o.ult(q, one);
    let is1 = o.ult(q, two);
    let pick = |o: &mut T, k: usize| {
        let a = o.isel(is1, words[k + 1], words[k + 2]);
        o.isel(is0, words[k], a)
    };
    let (w0, w1, w2) = (pick(o, 0), pick(o, 1), pick(o, 2));
    let join = |o: &mut T, a: T::I, b: T::I| {
        let hi = o.shl_v(a, sft);
        let lo = o.shr_v(b, back);
        o.ior(hi, lo)
    };
    let whi = join(o, w0, w1);
    let wlo = join(o, w1, w2);
    // The low 128 bits of M·W: (M·W_hi mod 2^64 + hi(M·W_lo))·2^64 + lo(M·W_lo).
    let plo = o.imul(m, wlo);
    let carry = o.umulhi(m, wlo);
    let phi = o.imul(m, whi);
    let phi = o.iadd(phi, carry);
    // Round to the nearest quadrant: n = top two bits of (F + 2^125); the rest, minus 2^125, is the signed
    // fraction of a quadrant (units of 2^−126).
    let half = o.ic(1 << 61);
    let g = o.iadd(phi, half);
    let n = o.shr(g, 62);
    let low62 = o.ic((1 << 62) - 1);
    let f = o.iand(g, low62);
    let fhi = o.isub(f, half); // signed, |fhi| ≤ 2^61
    let hi = o.i2f(fhi);
    let lo_bits = o.shr(plo, 11);
    let lo = o.i2f(lo_bits);
    let (s62, s115) = (o.fbits(0x3c10_0000_0000_0000), o.fbits(0x38c0_0000_0000_0000)); // 2^−62, 2^−115
    let lo = o.mul(lo, s115);
    let frac = o.fma(hi, s62, lo);
    let pio2 = o.fc(PI_OVER_2);
    let r = o.mul(frac, pio2);
    // Below 1/2: no reduction.
    let halff = o.fc(0.5);
    let small = o.lt(ax, halff);
    let n = o.isel(small, zero, n);
    let r = o.sel(small, ax, r);
    (n, r)
}

/// sin r and cos r for |r| ≤ π/4 + a little.
fn kernels<T: FloatOps>(o: &mut T, r: T::F) -> (T::F, T::F) {
    let z = o.mul(r, r);
    // sin r = r + r·z·(−1/3! + z/5! − ...), cos r = 1 + z·(−1/2! + z/4! − ...).
    let mut sc = Vec::new();
    let mut cc = Vec::new();
    let mut fact = 1.0f64;
    for k in 1..=16u32 {
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
    let ps = horner(o, &sc);
    let rz = o.mul(r, z);
    let s = o.fma(rz, ps, r);
    let pc = horner(o, &cc);
    let one = o.fc(1.0);
    let c = o.fma(z, pc, one);
    (s, c)
}

/// sin x (`cos = false`) or cos x for an f64 holding an f32 value (already flushed if subnormal).
pub(crate) fn sin_cos<T: FloatOps>(o: &mut T, x: T::F, cos: bool) -> T::F {
    let ax = o.abs(x);
    let (n, r) = reduce(o, ax);
    let (s, c) = kernels(o, r);
    finish(o, x, n, s, c, cos)
}

/// sin x (or cos x) from the quadrant n of |x| and sin r, cos r of its reduced argument: picks and signs by
/// the quadrant, gives sin the sign of x (−0 stays −0), and NaN for ±inf and NaN. Shared with `trig64.rs`.
pub(crate) fn finish<T: FloatOps>(o: &mut T, x: T::F, n: T::I, s: T::F, c: T::F, cos: bool) -> T::F {
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

/// Emits f32 `sin`/`cos` of the f32 register `x`.
pub(crate) fn emit(l: &mut Lower, x: Reg, cos: bool) -> Reg {
    // Flush a subnormal input to ±0 (the only effect of multiplying by 1 with .ftz).
    let flushed = l.b.reg(RegClass::F32);
    l.b.op("mul.rn.ftz.f32", flushed, (x, f32_imm(1.0)));
    let w = l.b.reg(RegClass::F64);
    l.b.op("cvt.f64.f32", w, flushed);
    let r = sin_cos(&mut Emit { l, wide: true }, w, cos);
    let d = l.b.reg(RegClass::F32);
    l.b.op("cvt.rn.f32.f64", d, r);
    d
}

/// The CPU model of [`emit`].
#[cfg(test)]
pub(crate) fn model(x: f32, cos: bool) -> f32 {
    let x = if x.is_subnormal() { 0.0f32.copysign(x) } else { x };
    sin_cos(&mut super::fpops::model::M64, x as f64, cos) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// |got − want| in ulps of f32 at `want` (want computed in f64: sin/cos of an f32 in f64 is within
    /// 2^−52 relative, far below an f32 ulp).
    fn ulps(got: f32, want: f64) -> f64 {
        if got.is_nan() || want.is_nan() {
            return if got.is_nan() && want.is_nan() { 0.0 } else { f64::INFINITY };
        }
        let w = want as f32;
        let ulp = (f32::from_bits(w.abs().to_bits() + 1) - w.abs()) as f64;
        (got as f64 - want).abs() / ulp
    }

    fn check(xs: impl IntoIterator<Item = f32>) -> (f64, usize) {
        let (mut worst, mut n) = (0.0f64, 0);
        for x in xs {
            // The reference sees the input as the routine does: a subnormal flushed to ±0.
            let xf = if x.is_subnormal() { 0.0f32.copysign(x) } else { x } as f64;
            for cos in [false, true] {
                let want = if cos { xf.cos() } else { xf.sin() };
                let e = ulps(model(x, cos), want);
                assert!(
                    e <= 1.0,
                    "{}({x:e}) = {:e}, want {want:e} ({e} ulp)",
                    if cos { "cos" } else { "sin" },
                    model(x, cos)
                );
                worst = worst.max(e);
                n += 1;
            }
        }
        (worst, n)
    }

    fn xorshift(n: usize, seed: u64) -> impl Iterator<Item = u64> {
        let mut rng = tessel_tile::testing::Rng::new(seed);
        (0..n).map(move |_| rng.next_u64())
    }

    /// ≥ 100k points over ±1e10 (uniform in value and in exponent), within 1 ulp of f64 sin/cos.
    #[test]
    fn within_one_ulp_over_ten_to_the_ten() {
        let uniform = xorshift(60_000, 1).map(|s| ((s >> 11) as f64 / (1u64 << 53) as f64 * 2e10 - 1e10) as f32);
        let log = xorshift(60_000, 2).map(|s| {
            let mag = 10f64.powf((s >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0); // 1e-10 .. 1e10
            (if s & 1 == 1 { -mag } else { mag }) as f32
        });
        let near = (0..4000).flat_map(|k| {
            let c = (k as f64 * std::f64::consts::FRAC_PI_4) as f32;
            [c, f32::from_bits(c.to_bits() + 1), f32::from_bits(c.to_bits().saturating_sub(1))]
        });
        let (worst, n) = check(uniform.chain(log).chain(near));
        assert!(n >= 200_000, "{n} evaluations");
        assert!(worst <= 1.0, "worst {worst} ulp");
    }

    /// The whole f32 range, and the arguments closest to multiples of π/2 (where reduction loses the most).
    #[test]
    fn large_arguments_and_hard_reductions() {
        let any =
            xorshift(50_000, 3).map(|s| f32::from_bits(s as u32 & 0x7f7f_ffff) * if s >> 63 == 1 { -1.0 } else { 1.0 });
        // A few large bit patterns, the 1e5 and 3e9, the ends of the range and of the unreduced path.
        let hard = [
            f32::from_bits(0x5922_aa80),
            f32::from_bits(0x6a1f_1ed8),
            f32::from_bits(0x4b7f_ffff),
            1e5,
            3e9,
            1e10,
            f32::MAX,
            -f32::MAX,
            0.5,
            f32::from_bits(0x3eff_ffff),
            std::f32::consts::FRAC_PI_4,
            std::f32::consts::PI,
            105_414_350.0,
        ];
        check(any.chain(hard).filter(|x| x.is_finite()));
        // A sweep of every 4001st bit pattern: about a million f32s of both signs and all exponents.
        let (_, n) = check((0..=u32::MAX).step_by(4001).map(f32::from_bits).filter(|x| x.is_finite()));
        assert!(n > 2_000_000, "{n}");
        // The example: sin(3e9) is about 0.244, not 0 (3e9 is exact in f32).
        assert_eq!(model(3e9, false), (3e9f64).sin() as f32);
    }

    #[test]
    fn special_values() {
        assert_eq!(model(0.0, false).to_bits(), 0);
        assert_eq!(model(-0.0, false).to_bits(), (-0.0f32).to_bits());
        assert_eq!(model(0.0, true), 1.0);
        assert_eq!(model(-0.0, true), 1.0);
        for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            assert!(model(x, false).is_nan() && model(x, true).is_nan(), "{x}");
        }
        // Subnormals flush to ±0 first (libdevice under FTZ): sin keeps the sign, cos is 1.
        assert_eq!(model(1e-45, false).to_bits(), 0);
        assert_eq!(model(-1e-45, false).to_bits(), (-0.0f32).to_bits());
        assert_eq!(model(1e-40, true), 1.0);
        // Tiny normals: sin x = x exactly.
        assert_eq!(model(1.5e-38, false), 1.5e-38);
    }
}
