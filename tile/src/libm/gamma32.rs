//! libdevice's f32 `tgammaf` as Triton 3.6 runs it (its PTX for sm_90 under `__CUDA_FTZ`), op for op: its two
//! loops (the recurrence Γ(z + 1) = z·Γ(z) down to [0.5, 1.5], or up from a negative argument to there) are
//! unrolled to their largest trip counts with each step kept or dropped by a select, so every lane computes
//! libdevice's values; branches become selects. `div.approx` is the hardware's, which the CPU model takes from
//! the interpreter's approximation (`interp::approx::div`).

use super::FloatOps;
use super::libdevice32::{horner, k};

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

#[cfg(test)]
mod tests;
