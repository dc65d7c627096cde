//! libdevice's f32 `tgammaf` and `lgammaf` as Triton 3.6 runs them (their PTX for sm_90 under `__CUDA_FTZ`), op
//! for op. `lgammaf`: five ranges of |x| (a polynomial's log near 0, polynomials around the zeros 1 and 2, a
//! rational function to 7.8, Stirling's series beyond), and for negative x the reflection
//! ln π − ln|x·sin(πx)| − lgamma(|x|) with libdevice's `sinpif` kernel. `tgammaf`: its two loops (the recurrence Γ(z + 1) = z·Γ(z) down to [0.5, 1.5], or up from a negative argument to there) are
//! unrolled to their largest trip counts with each step kept or dropped by a select, so every lane computes
//! libdevice's values; branches become selects. `div.approx` is the hardware's, which the CPU model takes from
//! the interpreter's approximation (`crate::approx::div`).

use crate::FloatOps;
use crate::exp_log::log32::logf;
use crate::rounding::{Arith, Dir};
use crate::steps32::{horner, k};
use crate::trig::sincos32::sin_cos_kernel;

/// 1/Γ(1 + t) for t in [−0.5, 0.5], highest degree first (the last coefficient is 1).
const RGAMMA: [u32; 9] = [
    0xba8a_a19e,
    0x3be8_6aa4,
    0xbc1e_2998,
    0xbd2c_be4a,
    0x3e2a_8a17,
    0xbd2c_0cbb,
    0xbf27_e7a3,
    0x3f13_c468,
    0x3f80_0000,
];

/// The most steps either loop takes: from 35 down past 1.5, from −35.1 up past −0.5.
const STEPS: usize = 36;

/// `__nv_tgammaf`. x ≥ 0 (and −0): z = min(x, 36), one factor z − 1 kept aside above 34.03 (so the product
/// overflows only with the result), z reduced below 1.5 multiplying the factors, then the product over
/// 1/Γ's polynomial at z − 1 (or z·polynomial below 0.5) by `div.approx`. x < 0 (and NaN): integers give NaN,
/// x clamped to −41.1, six factors of the reflection taken apart below −34.03, the rest raised past −0.5
/// multiplying the factors, then the reciprocal (`rcp.rn`) of product × polynomial; below −42, the sign of an
/// even truncation becomes −0's (Γ underflows).
pub fn tgammaf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let zero = o.fc(0.0);
    let (one, m1) = (o.fc(1.0), o.fc(-1.0));
    // x ≥ 0.
    let c36 = k(o, 0x4210_0000);
    let big = o.lt(c36, x);
    let z = o.sel(big, c36, x);
    let lim = k(o, 0x4208_1eb8);
    let split = o.lt(lim, z);
    let z1 = o.add(z, m1);
    let mut r = o.sel(split, z1, z);
    let mut prod = one;
    let c15 = k(o, 0x3fc0_0000);
    for _ in 0..STEPS {
        let active = o.lt(c15, r);
        let rn = o.add(r, m1);
        let pn = o.mul(prod, rn);
        r = o.sel(active, rn, r);
        prod = o.sel(active, pn, prod);
    }
    let half = o.fc(0.5);
    let ge_half = o.le(half, z);
    let r1 = o.add(r, m1);
    let t = o.sel(ge_half, r1, r);
    let p = horner(o, t, &RGAMMA);
    let lt_half = o.lt(z, half);
    let zp = o.mul(z, p);
    let p = o.sel(lt_half, zp, p);
    let v = o.div_approx_ftz(prod, p);
    let vs = o.mul(z1, v);
    let pos = o.sel(split, vs, v);
    // x < 0 or NaN.
    let fl = o.floor_ftz(x);
    let int = o.eq(fl, x);
    let nan = k(o, 0x7fff_ffff);
    let v = o.sel(int, nan, x);
    let floor = k(o, 0xc224_6666);
    let low = o.lt(v, floor);
    let w = o.sel(low, floor, v);
    let lim = k(o, 0xc208_1eb8);
    let far = o.lt(w, lim);
    let c6 = o.fc(6.0);
    let w6 = o.add(w, c6);
    let mut acc = o.sel(far, w6, w);
    let mut r = acc;
    let mh = o.fc(-0.5);
    for _ in 0..STEPS {
        let active = o.lt(r, mh);
        let rn = o.add(r, one);
        let an = o.mul(acc, rn);
        r = o.sel(active, rn, r);
        acc = o.sel(active, an, acc);
    }
    let p = horner(o, r, &RGAMMA);
    let d = o.mul(acc, p);
    let g = o.div(one, d);
    // The six factors w·(w + 1)·...·(w + 5) taken apart below −34.03.
    let mut f = w;
    for i in 1..=5 {
        let c = o.fc(i as f64);
        let wi = o.add(w, c);
        f = if i == 1 { o.mul(w, wi) } else { o.mul(wi, f) };
    }
    let rf = o.div(one, f);
    let gf = o.mul(rf, g);
    let c42 = k(o, 0xc228_0000);
    let under = o.lt(x, c42);
    let tx = o.trunc(x);
    let ti = o.f2i(tx);
    let b1 = o.ic(1);
    let odd = o.iand(ti, b1);
    let i0 = o.ic(0);
    let even = o.ieq(odd, i0);
    let nz = o.fc(-0.0);
    let zero_it = o.and(under, even);
    let gf = o.sel(zero_it, nz, gf);
    let neg = o.sel(far, gf, g);
    let nonneg = o.le(zero, x);
    o.sel(nonneg, pos, neg)
}

/// lgamma(a) for a = |x| (NaN too): below 0.7, −ln(a + a²·P(a)); to 1.5, (1 − a)·P(1 − a); to 3, (a − 2)·P(a − 2);
/// to 7.8, (a − 3) + N(a − 3)/D(a − 3) (the approximate reciprocal of D); beyond, Stirling:
/// (a − 1/2)·ln a − a + ln√(2π) + S(1/a²)/a, inf at inf.
fn lgamma_pos<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let c = [0x3b6b_1c86, 0xbbb3_4878, 0xbd36_caef, 0x3e2b_5555, 0xbd2c_96c7, 0xbf27_e6eb, 0x3f13_c463];
    let p = horner(o, a, &c);
    let p = o.mul(a, p);
    let y = o.fma_ftz(p, a, a);
    let l = logf(o, y);
    let r0 = o.neg(l);
    let one = o.fc(1.0);
    let t = o.sub(one, a);
    let c = [
        0x3d3b_ef76,
        0x3dd4_7577,
        0x3dfb_8079,
        0x3e02_95b5,
        0x3e12_a765,
        0x3e2d_6867,
        0x3e54_62bf,
        0x3e8a_8a72,
        0x3ecd_26a4,
        0x3f52_8d32,
        0x3f13_c468,
    ];
    let p = horner(o, t, &c);
    let r1 = o.mul(t, p);
    let m2 = o.fc(-2.0);
    let t = o.add(a, m2);
    let c = [
        0x3850_07fa,
        0xb967_a002,
        0x3a0d_e6fc,
        0xba9d_e0e2,
        0x3b3d_05b7,
        0xbbf1_eb10,
        0x3ca8_9a28,
        0xbd89_f01a,
        0x3ea5_1a66,
        0x3ed8_7730,
    ];
    let p = horner(o, t, &c);
    let r2 = o.mul(t, p);
    let m3 = o.fc(-3.0);
    let t = o.add(a, m3);
    let n = horner(o, t, &[0xc43b_38fb, 0xc640_f6f8, 0xc720_6560, 0xc73c_b6aa, 0xc80b_ae5a]);
    let d0 = k(o, 0xc381_a020);
    let d = o.add(t, d0);
    let d = horner_from(o, d, t, &[0xc628_64b8, 0xc7b5_0686, 0xc849_8465]);
    let rd = o.rcp_approx_ftz(d);
    let r3 = o.fma_ftz(n, rd, t);
    // Stirling.
    let r = o.rcp_approx_ftz(a);
    let r2s = o.mul(r, r);
    let sp = horner(o, r2s, &[0x3a4b_e755, 0xbb36_0953, 0x3daa_aaa3]);
    let c = k(o, 0x3f6b_3f8e);
    let s = o.fma_ftz(sp, r, c);
    let l = logf(o, a);
    let half = o.fc(0.5);
    let hl = o.mul(l, half);
    let mh = o.fc(-0.5);
    let am = o.add(a, mh);
    let u = o.mul_ftz(hl, am);
    let v = o.sub(u, a);
    let w = o.arith_ftz(Arith::Add, Dir::Nearest, u, s);
    let r4 = o.add(v, w);
    let inf = k(o, 0x7f80_0000);
    let is_inf = o.eq(a, inf);
    let r4 = o.sel(is_inf, inf, r4);
    // The ranges, by their lower ends (NaN falls through to the first).
    let mut v = r4;
    for (lo, r) in [(0x40f9_999a, r3), (0x4040_0000, r2), (0x3fc0_0000, r1), (0x3f33_3333, r0)] {
        let lo = k(o, lo);
        let below = o.le(lo, a);
        let below = o.not(below);
        v = o.sel(below, r, v);
    }
    v
}

/// Horner's rule continued from an accumulator `acc` (`fma.rn.ftz`).
fn horner_from<T: FloatOps>(o: &mut T, mut acc: T::F, x: T::F, c: &[u32]) -> T::F {
    for &ci in c {
        let ci = k(o, ci);
        acc = o.fma_ftz(acc, x, ci);
    }
    acc
}

/// `__nv_lgammaf`: `lgamma_pos(|x|)` for x ≥ 0; for x < 0: +inf at the integers, −ln|x| below 4e−20, else
/// ln π − ln(|x|·|sin(π|x|)|) − lgamma(|x|), the sine from `sinpif`'s kernel (π·(|x| − rni(2|x|)/2) and the
/// quadrant).
pub fn lgammaf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let pos = lgamma_pos(o, a);
    let l = logf(o, a);
    let tiny_v = o.neg(l);
    let a2 = o.add(a, a);
    let t = o.rni(a2);
    let q = o.f2i(t);
    let nt = o.neg(t);
    let half = o.fc(0.5);
    let r = o.fma_ftz(nt, half, a);
    let pi = k(o, 0x4049_0fdb);
    let r = o.mul(r, pi);
    let sn = sin_cos_kernel(o, q, r, false);
    let sa = o.abs_ftz(sn);
    let u = o.mul(a, sa);
    let lu = logf(o, u);
    let lnpi = k(o, 0x3f92_8682);
    let d = o.sub(lnpi, lu);
    let zero = o.fc(0.0);
    let inf = k(o, 0x7f80_0000);
    let u_zero = o.eq(u, zero);
    let d = o.sel(u_zero, inf, d);
    let np = o.neg(pos);
    let one = o.fc(1.0);
    let refl = o.fma_ftz(d, one, np);
    let lim = k(o, 0x1fec_1e4a);
    let tiny = o.le(lim, a);
    let tiny = o.not(tiny);
    let v = o.sel(tiny, tiny_v, refl);
    let fl = o.floor_ftz(a);
    let int = o.eq(a, fl);
    let v = o.sel(int, inf, v);
    let nonneg = o.le(zero, x);
    o.sel(nonneg, pos, v)
}

#[cfg(test)]
mod tests;
