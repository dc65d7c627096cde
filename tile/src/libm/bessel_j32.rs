//! libdevice's f32 Bessel functions of the first kind `j0f` and `j1f` as Triton 3.6 runs them (their PTX for
//! sm_90 under `__CUDA_FTZ`), op for op; branches become selects. Up to |x| = 8: a polynomial times the factors
//! (|x| − zᵢ) of the zeros below 8 (each zero in two parts), so the zeros are exact. Beyond: Hankel's asymptotic
//! form √(2/(π|x|))·P(1/x²)·cos(|x| + Q(1/x²)/|x| − φ), φ = π/4 (3π/4 for j1), with `sinf`'s reduction of the
//! modified argument (Payne–Hanek past 105615), φ added to the reduced remainder with its quadrant, and a second
//! reduction. `rcp`/`rsqrt.approx` are the hardware's, which the CPU model rounds correctly.

use super::FloatOps;
use super::libdevice32::{horner, k};
use super::trig32::{reduce, sin_cos_kernel};

/// Per function: the polynomials of the asymptotic form (amplitude, phase) and of the range up to 8, the zeros
/// below 8 (high, low part), and −φ.
struct J {
    amp: [u32; 5],
    phase: [u32; 4],
    near: &'static [u32],
    zeros: &'static [(u32, u32)],
    shift: u32,
}

const J0: J = J {
    amp: [0x4056_fe93, 0xbf03_b7c2, 0x3dd3_b3f3, 0xbd7f_ffb6, 0x3f80_0000],
    phase: [0x3f91_e009, 0xbe52_412d, 0x3d85_4ed1, 0xbdff_ffff],
    near: &[
        0xa6b3_b8e7,
        0xa9ac_a9b3,
        0x2c3f_0e18,
        0xacd4_1781,
        0xafe9_0f38,
        0x3020_305b,
        0x3379_7143,
        0x30f7_6f85,
        0xb6b6_dfc6,
        0xb6f6_65c9,
        0x399e_2deb,
        0x3a4a_e334,
        0xbbee_aa1b,
        0xbcda_7747,
    ],
    zeros: &[(0xc019_e8a9, 0xb3e9_71b3), (0xc0b0_a47b, 0x339a_7a37), (0xc10a_75ab, 0xb4cc_cded)],
    shift: 0xbf49_0fdb,
};

const J1: J = J {
    amp: [0xc082_cb37, 0x3f3f_f7e9, 0xbe45_8bae, 0x3e3f_ff8b, 0x3f80_0000],
    phase: [0xbfca_3ba2, 0x3eb9_14ad, 0xbe27_f2ec, 0x3ebf_fffd],
    near: &[
        0x29af_3463,
        0x2b81_bf42,
        0xade2_1ec1,
        0xaf5d_deff,
        0x319b_0c9d,
        0x32e8_1173,
        0xb50f_8dc8,
        0xb61e_653d,
        0x382c_d9c5,
        0x38f9_eb10,
        0xbaec_eb9c,
        0xbb27_6ffd,
        0x3d07_3993,
    ],
    zeros: &[(0xc075_3aac, 0x33a5_090f), (0xc0e0_7fb0, 0x3444_b8db)],
    shift: 0xc016_cbe4,
};

/// a − z with z in two parts: (a + hi) + lo.
fn minus_zero<T: FloatOps>(o: &mut T, a: T::F, z: (u32, u32)) -> T::F {
    let hi = k(o, z.0);
    let d = o.add(a, hi);
    let lo = k(o, z.1);
    o.add(d, lo)
}

/// The asymptotic form for a = |x| (0 for inf).
fn asymptotic<T: FloatOps>(o: &mut T, a: T::F, f: &J) -> T::F {
    let r = o.rcp_approx_ftz(a);
    let r2 = o.mul(r, r);
    let amp = horner(o, r2, &f.amp);
    let ph = horner(o, r2, &f.phase);
    let xm = o.fma_ftz(ph, r, a);
    let rs = o.rsqrt_approx_ftz(a);
    let (q, red) = reduce(o, xm);
    let c = k(o, 0x3f4c_422a);
    let s = o.mul(rs, c);
    // The reduced remainder plus (q mod 4)·π/2 − φ, reduced again (two parts of π/2).
    let three = o.ic(3);
    let qm = o.iand(q, three);
    let qf = o.i2f(qm);
    let (pio2, shift) = (k(o, 0x3fc9_0fdb), k(o, f.shift));
    let off = o.fma_ftz(qf, pio2, shift);
    let t = o.add(red, off);
    let two_pi = k(o, 0x3f22_f983);
    let tq = o.mul(t, two_pi);
    let q2 = o.f2i(tq);
    let q2f = o.i2f(q2);
    let (c1, c2) = (k(o, 0xbfc9_0fda), k(o, 0xb3a2_2168));
    let t = o.fma_ftz(q2f, c1, t);
    let t = o.fma_ftz(q2f, c2, t);
    let cs = sin_cos_kernel(o, q2, t, true);
    let amp = o.mul(amp, s);
    let v = o.mul(amp, cs);
    let inf = k(o, 0x7f80_0000);
    let is_inf = o.eq(a, inf);
    let zero = o.fc(0.0);
    o.sel(is_inf, zero, v)
}

/// Whether a = |x| takes the asymptotic form: above 8, or NaN.
fn is_far<T: FloatOps>(o: &mut T, a: T::F) -> T::P {
    let eight = o.fc(8.0);
    let le = o.le(a, eight);
    o.not(le)
}

/// `__nv_j0f`: up to 8, P(a − z₁)·(a − z₁)·(a − z₂)·(a − z₃).
pub fn j0f<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let far = asymptotic(o, a, &J0);
    let d1 = minus_zero(o, a, J0.zeros[0]);
    let p = horner(o, d1, J0.near);
    let p = o.mul(d1, p);
    let d2 = minus_zero(o, a, J0.zeros[1]);
    let p = o.mul(d2, p);
    let d3 = minus_zero(o, a, J0.zeros[2]);
    let near = o.mul(d3, p);
    let f = is_far(o, a);
    o.sel(f, far, near)
}

/// `__nv_j1f`: up to 8, a·(a − z₁)·(a − z₂)·P(a − z₁); negated for x < 0, and below |x| = 1e−30 given x's
/// sign (±0 for a subnormal x, which `abs.ftz` reads as 0).
pub fn j1f<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let far = asymptotic(o, a, &J1);
    let d1 = minus_zero(o, a, J1.zeros[0]);
    let p = horner(o, d1, J1.near);
    let d2 = minus_zero(o, a, J1.zeros[1]);
    let p = o.mul(d2, p);
    let p = o.mul(d1, p);
    let near = o.mul(a, p);
    let f = is_far(o, a);
    let v = o.sel(f, far, near);
    let zero = o.fc(0.0);
    let neg = o.lt(x, zero);
    let nv = o.neg(v);
    let s = o.sel(neg, nv, v);
    let tiny = k(o, 0x0da2_4260);
    let small = o.lt(a, tiny);
    // copysign(v, x): |v| with x's sign bit.
    let av = o.abs(v);
    let cs = super::libdevice32::with_sign(o, av, x);
    o.sel(small, cs, s)
}

#[cfg(test)]
mod tests;
