//! tessel's own f64 `atan`, `atan2`, `asin`, `acos` (codegen's, for those libdevice functions on f64 and, widened,
//! f32; Triton reaches libdevice's, which we do not link): `atan` reduced to [0, tan(π/12)] (1/x above 1, then
//! (x√3 − 1)/(x + √3) around π/6) and its Taylor polynomial, π/6 and π/2 carried in two parts; `asin`, `acos`
//! and `atan2` through `atan`. Within 2 ulp of the correctly rounded value
//! (`codegen/src/lower/libdevice/tests.rs`).

use crate::FloatOps;
use crate::steps64::{SIGN, copysign, pair, poly};

const PIO2: (u64, u64) = (0x3ff9_21fb_5444_2d18, 0x3c91_a626_3314_5c07);

const PI: (u64, u64) = (0x4009_21fb_5444_2d18, 0x3ca1_a626_3314_5c07);

const PIO6: (u64, u64) = (0x3fe0_c152_382d_7366, 0xbc8e_e691_3347_c2a6);

const SQRT3: u64 = 0x3ffb_b67a_e858_4caa;

const TAN_PI_12: f64 = 0.267_949_192_431_122_7;

/// atan of a ≥ 0 (or NaN).
fn atan_pos<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let one = o.fc(1.0);
    let inv = o.lt(one, a);
    let ra = o.div(one, a);
    let t = o.sel(inv, ra, a);
    // Around π/6: atan t = π/6 + atan((t√3 − 1)/(t + √3)).
    let k = o.fc(TAN_PI_12);
    let mid = o.lt(k, t);
    let s3 = o.fbits(SQRT3);
    let m1 = o.fc(-1.0);
    let num = o.fma(t, s3, m1);
    let den = o.add(t, s3);
    let tm = o.div(num, den);
    let u = o.sel(mid, tm, t);
    // atan u = u + u·z·(−1/3 + z/5 − ...), z = u², |u| ≤ tan(π/12).
    let c: Vec<f64> = (1..=17).map(|k| if k % 2 == 1 { -1.0 } else { 1.0 } / (2 * k + 1) as f64).collect();
    let z = o.mul(u, u);
    let q = poly(o, z, &c);
    let uz = o.mul(u, z);
    let p = o.fma(uz, q, u);
    let (bh, bl) = pair(o, PIO6);
    let zero = o.fc(0.0);
    let bh = o.sel(mid, bh, zero);
    let bl = o.sel(mid, bl, zero);
    let pl = o.add(p, bl);
    let r = o.add(bh, pl);
    // Above 1: π/2 − atan(1/a).
    let (ph, plo) = pair(o, PIO2);
    let d = o.sub(ph, r);
    let d = o.add(d, plo);
    o.sel(inv, d, r)
}

pub fn atan<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let r = atan_pos(o, a);
    copysign(o, r, x)
}

/// atan2(y, x) with C99's special cases (signed zeros and infinities pick the quadrant). For x < 0:
/// π − atan(|y/x|) when |y| ≤ |x|, else π/2 + atan(|x/y|), so that no result is a difference of nearly equal
/// terms.
pub fn atan2<T: FloatOps>(o: &mut T, y: T::F, x: T::F) -> T::F {
    let (ay, ax) = (o.abs(y), o.abs(x));
    let q = o.div(ay, ax);
    let a = atan_pos(o, q);
    let zero = o.fc(0.0);
    let y0 = o.eq(ay, zero);
    let a = o.sel(y0, zero, a);
    let (ph, pl) = pair(o, PI);
    let d = o.sub(ph, a);
    let near_pi = o.add(d, pl);
    let qi = o.div(ax, ay);
    let t = atan_pos(o, qi);
    let (h2, l2) = pair(o, PIO2);
    let t = o.add(t, l2);
    let past_half = o.add(h2, t);
    let big = o.lt(ax, ay);
    let neg_r = o.sel(big, past_half, near_pi);
    // Both infinite: π/4 or 3π/4.
    let inf = o.fc(f64::INFINITY);
    let yi = o.eq(ay, inf);
    let xi = o.eq(ax, inf);
    let both = o.and(yi, xi);
    let (q1, q3) = (o.fbits(0x3fe9_21fb_5444_2d18), o.fbits(0x4002_d97c_7f33_21d2));
    let a = o.sel(both, q1, a);
    let neg_r = o.sel(both, q3, neg_r);
    // x negative (−0 included).
    let xb = o.f_to_bits(x);
    let sm = o.ic(SIGN);
    let xs = o.iand(xb, sm);
    let iz = o.ic(0);
    let xneg = o.ult(iz, xs);
    let r = o.sel(xneg, neg_r, a);
    let r = copysign(o, r, y);
    let xn = o.is_nan(x);
    let yn = o.is_nan(y);
    let n = o.or(xn, yn);
    let nan = o.fc(f64::NAN);
    o.sel(n, nan, r)
}

pub fn asin<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let one = o.fc(1.0);
    let d1 = o.sub(one, a);
    let d2 = o.add(one, a);
    let p = o.mul(d1, d2);
    let s = o.sqrt(p);
    let q = o.div(a, s);
    let r = atan_pos(o, q);
    copysign(o, r, x)
}

pub fn acos<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let one = o.fc(1.0);
    let n = o.sub(one, x);
    let d = o.add(one, x);
    let q = o.div(n, d);
    let s = o.sqrt(q);
    let r = atan_pos(o, s);
    o.add(r, r)
}
