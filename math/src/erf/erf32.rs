//! libdevice's f32 `erff` (`__nv_erff`, `tl.erf` on f32) as Triton 3.6 runs it (its PTX for sm_90 under
//! `__CUDA_FTZ`), op for op; branches become selects. Above |x| ≈ 1.003 it goes through `ex2.approx.ftz`, which
//! the CPU model rounds correctly, so it can differ from the GPU by the unit's error there (within 2 ulp of the
//! true function, measured below).

use crate::FloatOps;
use crate::steps32::{k, with_sign};

/// `__nv_erff` (`tl.erf` on f32): an odd polynomial in x² below |x| = 1.00296, above it 1 − 2^p(|x|).
pub fn erff<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let split = k(o, 0x3f80_60fe);
    let big = o.le(split, a);
    let near = [0x38b1_e96a, 0xba57_4d20, 0x3baa_d5ea, 0xbcdc_1be7, 0x3de7_18af, 0xbec0_93ac, 0x3e03_75d3];
    let far = [0x3789_ca3c, 0xb9f5_60b9, 0x3bac_840b, 0xbd0c_8162, 0x3e1c_f906, 0x3f6a_937e, 0x3f20_d842];
    let sq = o.mul(x, x);
    let t = o.sel(big, a, sq);
    let mut acc = {
        let (n, f) = (k(o, near[0]), k(o, far[0]));
        o.sel(big, f, n)
    };
    for i in 1..7 {
        let (n, f) = (k(o, near[i]), k(o, far[i]));
        let c = o.sel(big, f, n);
        acc = o.fma_ftz(acc, t, c);
    }
    let nt = o.neg(t);
    let m = o.sel(big, nt, x);
    let r = o.fma_ftz(acc, m, m);
    let e = o.ex2_approx_ftz(r);
    let one = o.fc(1.0);
    let d = o.sub(one, e);
    let d = with_sign(o, d, x);
    // Below the split, or NaN (an unordered compare keeps the polynomial's NaN).
    o.sel(big, d, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::M32;
    use crate::testutil::{Routine32 as Routine, worst_sampled32 as worst};

    #[test]
    fn triton_bits() {
        let b = f32::from_bits;
        let cases: [(Routine, u32, u32); 2] = [(erff, 0xbed6_f00b, 0xbee5_01b1), (erff, 0x0080_0000, 0x0090_6eba)];
        for (f, x, want) in cases {
            assert_eq!(f(&mut M32, b(x)).to_bits(), want, "{x:#x}");
        }
    }

    #[test]
    fn special_values() {
        let inf = f32::INFINITY;
        assert_eq!(erff(&mut M32, inf), 1.0);
        assert_eq!(erff(&mut M32, -inf), -1.0);
        assert!(erff(&mut M32, f32::NAN).is_nan());
        assert_eq!(erff(&mut M32, -0.0).to_bits(), (-0.0f32).to_bits());
        // Subnormal inputs flush (`abs.ftz`, `fma.rn.ftz`).
        assert_eq!(erff(&mut M32, f32::from_bits(1)), 0.0);
    }

    /// The bound the module states, against float64.
    #[test]
    fn accuracy_against_float64() {
        let (w, at) = worst(erff, crate::host::erf, 1e-30, 12.0, true);
        assert!(w <= 2, "erff: {w} ulp at {at:e}");
    }
}
