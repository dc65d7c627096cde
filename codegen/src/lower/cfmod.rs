//! libdevice's `fmod` (C's exact remainder, `tessel_math::remainder::fmod`) emitted as a PTX loop over its step:
//! the warp loops while any of its lanes needs a step, so the branch is uniform.

use super::Lower;
use super::fpops::Emit;
use crate::ptx::{Instr, Reg, RegClass};
use tessel_math::remainder::fmod::{finish, more, setup, step};

/// Emits `fmod(x, y)` for f64 registers holding values whose mantissas fit in `p` bits (53 for f64 operands,
/// 24 for anything narrower), as a loop over [`step`].
pub(crate) fn emit(l: &mut Lower, x: Reg, y: Reg, p: u32) -> Reg {
    let s = setup(&mut Emit { l, wide: true }, x, y, p);
    let (head, end) = (l.b.new_label("fmod_head"), l.b.new_label("fmod_end"));
    l.b.label(&head);
    // The warp loops while any of its lanes needs a step (a lane with no gap left steps by 0 bits, which
    // leaves it unchanged), so the branch is uniform.
    let go = more(&mut Emit { l, wide: true }, &s);
    let (m, any) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
    l.b.op("activemask.b32", m, ());
    l.b.op("vote.sync.any.pred", any, (go, m));
    l.b.emit(Instr::bra_uni(&end).unless(any));
    let (r, gap) = step(&mut Emit { l, wide: true }, &s, p);
    l.mov(s.r, r);
    l.mov(s.gap, gap);
    l.b.emit(Instr::bra_uni(&head));
    l.b.label(&end);
    let d = finish(&mut Emit { l, wide: true }, &s);
    debug_assert_eq!(d.class, RegClass::F64);
    d
}

#[cfg(test)]
mod tests {
    use tessel_math::remainder::fmod::model;

    /// Bits equal, or both NaN.
    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    fn edge_values_f32() -> Vec<f32> {
        let mut v = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.5,
            -2.5,
            0.1,
            3.0,
            7.0,
            1e-45,
            -1e-45,
            f32::MIN_POSITIVE,
            1.1754942e-38,
            3e-39,
            f32::MAX,
            f32::MIN,
            1e38,
            1e-30,
            16777216.0,
            16777217.0,
            std::f32::consts::PI,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let mut rng = tessel_math::testing::Rng::new(2);
        for _ in 0..300 {
            let f = f32::from_bits(rng.next_u64() as u32);
            if !f.is_nan() {
                v.push(f);
            }
        }
        v
    }

    /// Every pair of edge values (zeros, subnormals, extremes, infinities, NaN, random bit patterns) against
    /// Rust's `%` on f32, which is C's `fmodf` (exact).
    #[test]
    fn f32_fmod_is_exact_on_edge_values() {
        let vals = edge_values_f32();
        for &x in &vals {
            for &y in &vals {
                let got = model(x as f64, y as f64, 24);
                let want = (x % y) as f64;
                assert!(same(got, want), "fmod({x:e}, {y:e}) = {got:e}, want {want:e}");
            }
        }
        // The example of the issue: the sign follows the dividend.
        assert_eq!(model(1.0, -2.5, 24), 1.0);
        assert_eq!(model(-1.0, 2.5, 24), -1.0);
        assert_eq!(model(-5.0, 2.5, 24).to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn f64_fmod_is_exact_on_edge_values() {
        let mut vals: Vec<f64> = vec![
            0.0,
            -0.0,
            1.0,
            -2.5,
            0.1,
            f64::from_bits(1),
            -f64::from_bits(3),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            f64::MIN_POSITIVE,
            f64::MAX,
            -f64::MAX,
            1e300,
            1e-300,
            9007199254740993.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut rng = tessel_math::testing::Rng::new(1);
        for _ in 0..150 {
            vals.push(f64::from_bits(rng.next_u64()));
        }
        for &x in &vals {
            for &y in &vals {
                let (got, want) = (model(x, y, 53), x % y);
                assert!(same(got, want), "fmod({x:e}, {y:e}) = {got:e}, want {want:e}");
            }
        }
    }

    /// f16 and bf16 operands go through the 24-bit path (their mantissas fit); results are exact in the type.
    #[test]
    fn half_fmod_is_exact() {
        use tessel_tile::eval::value::{from_bits, round_float};
        use tessel_tile::types::ScalarType::{BF16, F16};
        let mut n = 0;
        for xb in (0..=0xffffu64).step_by(97) {
            for yb in (0..=0xffffu64).step_by(331) {
                for t in [F16, BF16] {
                    let (x, y) = (from_bits(xb, t).as_f64(), from_bits(yb, t).as_f64());
                    let got = model(x, y, 24);
                    // Exact: the remainder is a value of the type already.
                    assert!(
                        same(got, x % y) && (got.is_nan() || round_float(got, t) == got),
                        "{t} fmod({x}, {y}) = {got}"
                    );
                }
                n += 1;
            }
        }
        assert!(n > 100_000);
    }
}
