//! libdevice's f32 Bessel functions of the first and second kinds, `j0f`, `j1f`, `y0f`, `y1f`, as Triton 3.6
//! runs them (their PTX for sm_90 under `__CUDA_FTZ`), op for op; branches become selects. j: up to |x| = 8, a
//! polynomial times the factors (|x| − zᵢ) of the zeros below 8 (each zero in two parts), so the zeros are
//! exact. y: a small range from the logarithmic singularity (y0 = (2/π)·ln x·j0 + P(x²), y1 likewise with −2/(πx)),
//! then three ranges, each (x − z)·P(x − z) around its zero. Beyond: Hankel's asymptotic form
//! √(2/(π|x|))·P(1/x²)·cos(|x| + Q(1/x²)/|x| − φ) (φ = π/4, 3π/4, 3π/4, 5π/4), with `sinf`'s reduction of the
//! modified argument (Payne–Hanek past 105615), φ added to the reduced remainder with its quadrant, and a second
//! reduction. `rcp`/`rsqrt`/`lg2.approx` are the hardware's, which the CPU model rounds correctly.

use crate::FloatOps;
use crate::steps32::{horner, k};
use crate::trig::sincos32::{reduce, sin_cos_kernel};

/// Per function: the polynomials of the asymptotic form (amplitude, phase) and of the range up to 8, the zeros
/// below 8 (high, low part), and −φ.
struct J {
    amp: &'static [u32],
    phase: &'static [u32],
    near: &'static [u32],
    zeros: &'static [(u32, u32)],
    shift: u32,
}

const J0: J = J {
    amp: &[0x4056_fe93, 0xbf03_b7c2, 0x3dd3_b3f3, 0xbd7f_ffb6, 0x3f80_0000],
    phase: &[0x3f91_e009, 0xbe52_412d, 0x3d85_4ed1, 0xbdff_ffff],
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
    amp: &[0xc082_cb37, 0x3f3f_f7e9, 0xbe45_8bae, 0x3e3f_ff8b, 0x3f80_0000],
    phase: &[0xbfca_3ba2, 0x3eb9_14ad, 0xbe27_f2ec, 0x3ebf_fffd],
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

/// `y0f`/`y1f` past their small range: three ranges, each a polynomial in a − z times (a − z) for the zero z
/// in it (two parts), by their upper ends; then the asymptotic form.
struct Y {
    ranges: [(u32, (u32, u32), &'static [u32]); 3],
    far: J,
}

const Y0: Y = Y {
    ranges: [
        (
            0x3ff6_7af8,
            (0xbf64_c176, 0x3265_7d03),
            &[
                0x3cdd_c8b3,
                0xbe02_574c,
                0x3e7f_2cc9,
                0xbe8b_f29b,
                0x3e5b_ce93,
                0xbe38_c4ff,
                0x3e42_774d,
                0xbe52_5cb2,
                0x3e60_f43d,
                0xbe67_9145,
                0x3e61_d24a,
                0xbefb_f1ad,
                0x3f61_21bb,
            ],
        ),
        (
            0x40b0_b31e,
            (0xc07d_4a9a, 0xb3d9_856a),
            &[
                0xb449_dd3f,
                0xb45e_2607,
                0xb685_7064,
                0x3855_4610,
                0x394a_ced7,
                0xbb0f_1a0c,
                0xbbe0_7f2e,
                0x3d6f_b6b5,
                0x3d50_4df1,
                0xbece_1a13,
            ],
        ),
        (
            0x410a_7798,
            (0xc0e2_c0ee, 0xb39c_e420),
            &[
                0x3510_cebe,
                0x3629_da6c,
                0xb840_54c0,
                0xb913_18ab,
                0x3b0e_9921,
                0x3b59_74d5,
                0xbd44_b4d7,
                0xbcad_7799,
                0x3e99_a665,
            ],
        ),
    ],
    far: J {
        amp: &[0xbecc_69f3, 0x3dd0_d5f0, 0xbd7f_f855, 0x3f80_0000],
        phase: &[0x3f8c_cd61, 0xbe50_d31c, 0x3d85_4783, 0xbdff_fffb],
        near: &[],
        zeros: &[],
        shift: 0xc016_cbe4,
    },
};

const Y1: Y = Y {
    ranges: [
        (
            0x4074_0eee,
            (0xc00c_9df7, 0x33b2_00dc),
            &[
                0xb789_e29d,
                0x3906_4a88,
                0xb9f0_ab0d,
                0x3a8f_6102,
                0xbb2c_7045,
                0x3bf3_5df7,
                0xbb9d_097c,
                0xbd06_968a,
                0xbdf2_b7df,
                0x3f05_5242,
            ],
        ),
        (
            0x40e0_6937,
            (0xc0ad_bff2, 0xb468_7b03),
            &[
                0x32be_57d0,
                0xb508_a416,
                0xb63f_8a14,
                0x3842_7e02,
                0x3919_bb1c,
                0xbb0d_f1fd,
                0xbb88_5189,
                0x3d50_aec1,
                0x3d00_5cfc,
                0xbeae_3e2b,
            ],
        ),
        (
            0x4122_c2e3,
            (0xc109_893d, 0xb4e6_169b),
            &[
                0x350c_f383,
                0x3602_902e,
                0xb837_5f71,
                0xb8d9_faa8,
                0x3b03_d19a,
                0x3b1e_736d,
                0xbd31_cae5,
                0xbc81_59b6,
                0x3e8a_fcca,
            ],
        ),
    ],
    far: J {
        amp: &[0x3f26_7f60, 0xbe44_ab90, 0x3e3f_febf, 0x3f80_0000],
        phase: &[0xbfe4_e1ab, 0x3ebb_73ab, 0xbe27_fb6e, 0x3ebf_ffff],
        near: &[],
        zeros: &[],
        shift: 0xc07b_53d1,
    },
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
    let amp = horner(o, r2, f.amp);
    let ph = horner(o, r2, f.phase);
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
    let near = j0_near(o, a);
    let f = is_far(o, a);
    o.sel(f, far, near)
}

/// j0's range up to 8: P(a − z₁)·(a − z₁)·(a − z₂)·(a − z₃).
fn j0_near<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let d1 = minus_zero(o, a, J0.zeros[0]);
    let p = horner(o, d1, J0.near);
    let p = o.mul(d1, p);
    let d2 = minus_zero(o, a, J0.zeros[1]);
    let p = o.mul(d2, p);
    let d3 = minus_zero(o, a, J0.zeros[2]);
    o.mul(d3, p)
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
    let cs = crate::steps32::with_sign(o, av, x);
    o.sel(small, cs, s)
}

/// The ranges of `y`: the small-range value `small` up to `lim`, each range's (a − z)·P(a − z) up to its end,
/// the asymptotic form beyond (and for NaN); NaN for x < 0.
fn y_ranges<T: FloatOps>(o: &mut T, x: T::F, a: T::F, lim: u32, small: T::F, y: &Y) -> T::F {
    let mut v = asymptotic(o, a, &y.far);
    for &(end, z, p) in y.ranges.iter().rev() {
        let d = minus_zero(o, a, z);
        let q = horner(o, d, p);
        let r = o.mul(d, q);
        let end = k(o, end);
        let inside = o.le(a, end);
        v = o.sel(inside, r, v);
    }
    let lim = k(o, lim);
    let inside = o.le(a, lim);
    let v = o.sel(inside, small, v);
    let zero = o.fc(0.0);
    let neg = o.lt(x, zero);
    let nan = k(o, 0x7fff_ffff);
    o.sel(neg, nan, v)
}

/// `__nv_y0f`: up to |x| = 0.447, (2/π)·ln|x|·j0(|x|) + P(x²) (`logf` and `j0f`'s first range, as libdevice
/// inlines them).
pub fn y0f<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let x2 = o.mul(a, a);
    let p = horner(o, x2, &[0x33db_e5ac, 0xb71f_49b6, 0x3a0d_3100, 0xbc83_ad8e, 0x3e35_de5a, 0xbd97_26b5]);
    let l = crate::exp_log::log32::logf(o, a);
    let c = k(o, 0x3f22_f983);
    let l = o.mul(l, c);
    let j = j0_near(o, a);
    let small = o.fma_ftz(l, j, p);
    y_ranges(o, x, a, 0x3ee4_c176, small, &Y0)
}

/// `__nv_y1f`: up to |x| = 0.697, (2/π)·(j1(|x|)·ln|x| − 1/|x|) + |x|·P(x²) (`j1f` and `logf` inlined); for
/// |x| below 2^−126 (zero or subnormal, read as 0), −(2/π)/|x| = −inf.
pub fn y1f<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let x2 = o.mul(a, a);
    let p = horner(o, x2, &[0x3214_62cc, 0xb585_27da, 0x3896_3e95, 0xbb41_adcb, 0x3d5e_9cbb, 0xbe48_c331]);
    let j = j1f(o, a);
    let l = crate::exp_log::log32::logf(o, a);
    let m1 = o.fc(-1.0);
    let r = o.div(m1, a);
    let t = o.fma_ftz(j, l, r);
    let c = k(o, 0x3f22_f983);
    let t = o.mul(t, c);
    let small = o.fma_ftz(p, a, t);
    let v = y_ranges(o, x, a, 0x3fd9_6ac4, small, &Y1);
    let tiny = k(o, 0x0080_0000);
    let is_tiny = o.lt(a, tiny);
    let nc = k(o, 0xbf22_f983);
    let z = o.div(nc, a);
    let zero = o.fc(0.0);
    let neg = o.lt(x, zero);
    let nan = k(o, 0x7fff_ffff);
    let z = o.sel(neg, nan, z);
    o.sel(is_tiny, z, v)
}

#[cfg(test)]
mod tests;
