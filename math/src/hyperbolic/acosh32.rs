//! libdevice's f32 `acoshf` as Triton 3.6 runs it (`__nv_acoshf` in the PTX Triton gives for sm_90 under
//! `__CUDA_FTZ`), op for op; branches become selects. Its small branch goes through `sqrt.approx.ftz`, so the CPU
//! model can differ from the GPU in the last bit there.

use crate::FloatOps;
use crate::exp_log::log32::logf;
use crate::rounding::{Arith, Dir};
use crate::steps32::{horner, k};

/// `__nv_acoshf`: with d = x − 1, for d in [+0, 2^23] log1p(d + √(d·x)) (`d·x` rounded toward zero, `√` the
/// approximate one, log1p by libdevice's own reduction), else (large d, d < 0, NaN) ln(d) + ln 2.
pub fn acoshf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let m1 = o.fc(-1.0);
    let d = o.add(x, m1);
    let db = o.f_to_bits(d);
    let lim = o.ic(0x4b00_0001);
    let small = o.ult(db, lim);
    // Large, negative or NaN d.
    let l = logf(o, d);
    let ln2 = k(o, 0x3f31_7218);
    let big = o.add(l, ln2);
    // Small d: u = d + √(x·d + d).
    let p = o.arith_ftz(Arith::Mul, Dir::Zero, x, d);
    let q = o.arith_ftz(Arith::Add, Dir::Nearest, p, d);
    let r = o.sqrt_approx_ftz(q);
    let u = o.add(d, r);
    let v = log1p_core(o, u);
    o.sel(small, v, big)
}

/// The log1p inside libdevice's `acoshf`: 1 + u = 2^e·m with e from (1 + u) rounded toward zero, m − 1 formed
/// as u·2^-e + (2^-e − 1) without cancellation (the 2^-e scalings done on the bits), a degree-8 polynomial.
fn log1p_core<T: FloatOps>(o: &mut T, u: T::F) -> T::F {
    let one = o.fc(1.0);
    let s = o.arith_ftz(Arith::Add, Dir::Zero, u, one);
    let sb = o.f_to_bits(s);
    let off = o.ic(0xc0c0_0000);
    let t = o.iadd(sb, off);
    let mask = o.ic(0xff80_0000);
    let eb = o.iand(t, mask);
    let ub = o.f_to_bits(u);
    let mb = o.isub(ub, eb);
    let mf = o.bits_to_f(mb);
    let four = o.ic(0x4080_0000);
    let qb = o.isub(four, eb);
    let qf = o.bits_to_f(qb);
    let (quarter, m1) = (o.fc(0.25), o.fc(-1.0));
    let a = o.fma_ftz(quarter, qf, m1);
    let f = o.add(a, mf);
    let ef = o.i2f(eb);
    let ulp = k(o, 0x3400_0000);
    let e = o.mul(ef, ulp);
    let c = [
        0xbd39_bf78,
        0x3dd8_0012,
        0xbe07_78e0,
        0x3e14_6475,
        0xbe2a_68dd,
        0x3e4c_af9e,
        0xbe80_0042,
        0x3eaa_aae6,
        0xbf00_0000,
    ];
    let p = horner(o, f, &c);
    let q = o.mul(f, p);
    let q = o.fma_ftz(q, f, f);
    let ln2 = k(o, 0x3f31_7218);
    let v = o.fma_ftz(e, ln2, q);
    // Specials, by the bits of u: below +inf's (u in [+0, inf)), v. Otherwise (+inf, NaN, negative): u in
    // [−1, −0] (bits, read as signed, below those of −1 − 2^-23) keeps v, the rest (+inf, NaN, u < −1) gives
    // u·inf + inf (inf or NaN); then −0 gives −0.
    let inf_b = o.ic(0x7f80_0000);
    let finite = o.ult(ub, inf_b);
    let low = o.ic(0xbf80_0001);
    let keep = o.slt(ub, low);
    let inf = k(o, 0x7f80_0000);
    let w = o.fma_ftz(u, inf, inf);
    let w = o.sel(keep, v, w);
    let zero = o.fc(0.0);
    let z = o.eq(u, zero);
    let nz = k(o, 0x8000_0000);
    let w = o.sel(z, nz, w);
    o.sel(finite, v, w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M32;
    use crate::testing::Rng;
    use crate::testutil::{same32, spread, worst_at32 as worst};

    #[test]
    fn triton_bits() {
        // acoshf(2.5) takes √5.25 from sqrt.approx: the model's correctly rounded root gives 0x3fc88ce1; the same
        // sequence with the root one ulp lower gives the H100's 0x3fc88ce0 (checked by hand, op for op).
        assert_eq!(acoshf(&mut M32, f32::from_bits(0x4020_0000)).to_bits(), 0x3fc8_8ce1);
    }

    #[test]
    fn specials() {
        let inf = f32::INFINITY;
        // acosh: 1 → 0, below 1 → NaN, inf → inf.
        assert_eq!(acoshf(&mut M32, 1.0).to_bits(), 0);
        assert!(acoshf(&mut M32, 0.5).is_nan());
        assert!(acoshf(&mut M32, -inf).is_nan());
        assert!(acoshf(&mut M32, f32::NAN).is_nan());
        assert_eq!(acoshf(&mut M32, inf), inf);
        assert!(same32(acoshf(&mut M32, f32::MAX), (f32::MAX as f64).acosh() as f32));
    }

    /// Within 2 ulp of float64 (the model's approximate root correctly rounded), on the points this bound was
    /// measured on (seed 31, after `log10f`'s draw, in `exp_log::explog32`'s tests).
    #[test]
    fn within_bounds() {
        let mut rng = Rng::new(31);
        let _log10f_points = spread(&mut rng, 1e-38, 3e38, 100_000, false);
        let xs: Vec<f64> = spread(&mut rng, 1e-7, 3e38, 100_000, false).iter().map(|x| x + 1.0).collect();
        let (w, at) = worst(acoshf, f64::acosh, &xs);
        assert!(w <= 2, "acoshf: {w} ulp at {at:e}");
    }
}
