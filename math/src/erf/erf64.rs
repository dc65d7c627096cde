//! libdevice's f64 `erf` (`__nv_erf`, `tl.erf` on f64) as Triton 3.6 runs it, op for op: erf |x| = 1 − e^(−q)
//! with q = |x| + |x|·P(|x|) (P of degree 23) carried as a double-double (hi, lo); e^(−q) by the reduction
//! n = rni(f32(hi)·(−log2 e)) (in f32), r = −n·ln 2 − hi, a degree-9 polynomial, and 2^n from `ex2.approx.ftz.f32`
//! (exact: n is an integer); 1 from |x| = 5.92 on; the sign of x put back by bits. No branch, no approximation
//! that is not exact, so the interpreter (which runs this too) gives the GPU's bits.

use crate::FloatOps;
use crate::steps64::horner;

/// P, highest degree first.
const P: [u64; 24] = [
    0xbcf0_679a_fba6_f279,
    0x3d47_088f_db46_fa5f,
    0xbd8d_f9f9_b976_a9b2,
    0x3dc7_f1f5_590c_c332,
    0xbdfa_28a3_cd2d_56c4,
    0x3e24_85ee_6783_5925,
    0xbe47_6db4_5919_f583,
    0x3e62_d698_d98c_8d71,
    0xbe72_0a2c_7155_d5c6,
    0xbe41_d29b_37ca_1397,
    0x3ea2_ef6c_c0f6_7a49,
    0xbec1_02b8_9233_3b6f,
    0x3eca_3037_5ba9_a84e,
    0x3eca_ad18_dede_a43e,
    0xbeff_0535_5bc5_b225,
    0x3f10_e37a_3108_bc8b,
    0x3efb_292d_828e_5cb2,
    0xbf43_5662_6ebf_9bfa,
    0x3f5b_ca68_f73d_6afc,
    0xbf2b_6b69_ebbc_280b,
    0xbf93_9668_5912_a453,
    0x3fba_4f4e_2a1a_bef8,
    0x3fe4_5f30_6dc9_c8bb,
    0x3fc0_6eba_8214_db69,
];

/// (e^r − 1 − r)/r², highest degree first.
const E: [u64; 10] = [
    0x3e5a_e904_a474_1b81,
    0x3e92_8a27_f89b_6999,
    0x3ec7_1de7_15ff_7e07,
    0x3efa_019a_6b0a_c45a,
    0x3f2a_01a0_17ee_d94f,
    0x3f56_c16c_17f2_a71b,
    0x3f81_1111_1111_73c4,
    0x3fa5_5555_5555_211a,
    0x3fc5_5555_5555_5540,
    0x3fe0_0000_0000_0005,
];

/// `erf(x)` of an f64.
pub fn erf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let p = horner(o, a, &P);
    let hi = o.fma(p, a, a);
    let d = o.sub(a, hi);
    let lo = o.fma(p, a, d);
    let (nhi, nlo) = (o.neg(hi), o.neg(lo));
    // n = rni(f32(hi)·(−log2 e)) in f32, as an f64.
    let n = o.f32_rni_scaled(hi, 0xbfb8_aa3b);
    let nn = o.neg(n);
    let ln2 = o.fbits(0x3fe6_2e42_fefa_39ef);
    let r = o.fma(nn, ln2, nhi);
    let q = horner(o, r, &E);
    let s = o.mul(r, q);
    let u = o.fma(s, r, nlo);
    let v = o.add(r, u);
    let e = o.ex2_f32_widened(n);
    let one = o.fc(1.0);
    let w = o.sub(one, e);
    let nv = o.neg(v);
    let y = o.fma(nv, e, w);
    let sat = o.fbits(0x4017_afb4_8dc9_6626);
    let big = o.le(sat, a);
    let y = o.sel(big, one, y);
    // |erf| with the sign bit of x.
    let xb = o.f_to_bits(x);
    let sign = o.ic(1 << 63);
    let sb = o.iand(xb, sign);
    let yb = o.f_to_bits(y);
    let r = o.ior(yb, sb);
    o.bits_to_f(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M64;

    /// Within 1 ulp of erf computed to 200 bits (mpmath) at points over [−6, 6] and tiny arguments (CUDA
    /// documents 2 ulp for `erf`); special values.
    #[test]
    fn accuracy_and_special_values() {
        for (x, bits) in [
            (1e-300, 0x01a8_2e6d_9871_1d3au64),
            (3e-09, 0x3e2d_13fe_ffa9_194b),
            (0.1, 0x3fbc_ca5e_a24f_b334),
            (0.75, 0x3fe6_c1c9_759d_0e5f),
            (1.5, 0x3fee_ea55_5713_7ae0),
            (2.693964520074733, 0x3fef_fedc_60d2_f5a4),
            (3.25, 0x3fef_fff6_f9f6_7e55),
            (4.75, 0x3fef_ffff_fffd_759d),
            (4.811362303127918, 0x3fef_ffff_fffe_9ab7),
            (5.9, 0x3fef_ffff_ffff_ffff),
            (-3.144424, 0xbfef_ffed_ba96_35f9),
            (0.530751, 0x3fe1_81df_acc6_3752),
            (-1.560538, 0xbfef_2034_9887_cb4a),
            (1.24704, 0x3fed_82a4_2fd4_7bd2),
            (1.508644, 0x3fee_f2a5_8415_417c),
            (-5.213654, 0xbfef_ffff_ffff_fa24),
            (-5.841984, 0xbfef_ffff_ffff_ffff),
            (4.049629, 0x3fef_ffff_fa83_6704),
            (-2.887752, 0xbfef_ffa3_1fe2_33e4),
            (-3.188028, 0xbfef_fff2_4fc4_2dcd),
            (5.947738, 0x3ff0_0000_0000_0000),
            (-0.356838, 0xbfd8_b75e_3b74_6f9c),
            (4.037537, 0x3fef_ffff_f9ee_b74c),
            (-0.283761, 0xbfd3_f486_ec08_1b36),
        ] {
            let got = erf(&mut M64, x).to_bits();
            assert!(got.abs_diff(bits) <= 1, "erf({x}): {got:#x}, want {bits:#x}");
        }
        assert_eq!(erf(&mut M64, f64::INFINITY), 1.0);
        assert_eq!(erf(&mut M64, f64::NEG_INFINITY), -1.0);
        assert!(erf(&mut M64, f64::NAN).is_nan());
        assert_eq!(erf(&mut M64, -0.0).to_bits(), (-0.0f64).to_bits());
    }
}
