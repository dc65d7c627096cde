//! libdevice's f32 `tanhf` (`__nv_tanhf`) as Triton 3.6 runs it (its PTX for sm_90 under `__CUDA_FTZ`), op for
//! op; branches become selects. Above |x| = 0.6 it goes through `ex2.approx.ftz`/`rcp.approx.ftz`, which the CPU
//! model rounds correctly, so it can differ from the GPU by the units' error there (within 2 ulp of the true
//! function, measured below).

use crate::FloatOps;
use crate::steps32::{horner, k, with_sign};

/// `__nv_tanhf`: an odd polynomial below |x| = 0.6 (and for NaN), else 1 − 2/(2^(2|x|·log2 e) + 1) with the
/// approximate reciprocal, 1 from |x| = 9.01 on.
pub fn tanhf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let split = k(o, 0x3f19_999a);
    let big = o.le(split, a);
    let sq = o.mul(x, x);
    let c = [0x3c80_f082, 0xbd56_3cae, 0x3e08_5941, 0xbeaa_a9ed, 0x0000_0000];
    let p = horner(o, sq, &c);
    let small = o.fma_ftz(p, x, x);
    let k2 = k(o, 0x4038_aa3b);
    let t = o.mul(a, k2);
    let e = o.ex2_approx_ftz(t);
    let one = o.fc(1.0);
    let d = o.add(e, one);
    let rc = o.rcp_approx_ftz(d);
    let m2 = o.fc(-2.0);
    let v = o.fma_ftz(rc, m2, one);
    let sat = k(o, 0x4110_2cb4);
    let is_one = o.le(sat, a);
    let v = o.sel(is_one, one, v);
    let v = with_sign(o, v, x);
    o.sel(big, v, small)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M32;
    use crate::testutil::worst_sampled32 as worst;

    #[test]
    fn triton_bits() {
        assert_eq!(tanhf(&mut M32, f32::from_bits(0x3dcc_cccd)).to_bits(), 0x3dcc_1ebd);
    }

    #[test]
    fn special_values() {
        let inf = f32::INFINITY;
        assert_eq!(tanhf(&mut M32, inf), 1.0);
        assert_eq!(tanhf(&mut M32, -inf), -1.0);
        assert!(tanhf(&mut M32, f32::NAN).is_nan());
        assert_eq!(tanhf(&mut M32, -0.0).to_bits(), (-0.0f32).to_bits());
        // Subnormal inputs flush (`abs.ftz`, `fma.rn.ftz`).
        assert_eq!(tanhf(&mut M32, f32::from_bits(1)), 0.0);
    }

    /// The bound the module states, against float64.
    #[test]
    fn accuracy_against_float64() {
        let (w, at) = worst(tanhf, f64::tanh, 1e-30, 20.0, true);
        assert!(w <= 2, "tanhf: {w} ulp at {at:e}");
    }
}
