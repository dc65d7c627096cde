//! libdevice's f64 `__nv_exp` as its f64 sequences inline it (`erfc`, `erfcx`, the Bessel and gamma functions):
//! Cody–Waite reduction by ln 2, the polynomial, 2^n put back in one or two halves so that a product overflows
//! only where the result does.

use crate::FloatOps;
use crate::steps64::{hi_abs, horner};

/// `__nv_exp`'s e^r for |r| ≤ ln2/2, highest degree first (the last two steps add 1 twice: e^r = 1 + r·(1 +
/// r·(...))); `pow`'s accurate core evaluates it too.
pub(crate) const EXP_POLY: [u64; 12] = [
    0x3e5a_de15_69ce_2bdf,
    0x3e92_8af3_fca2_13ea,
    0x3ec7_1dee_6240_1315,
    0x3efa_0199_7c89_eb71,
    0x3f2a_01a0_1476_1f65,
    0x3f56_c16c_1852_b7af,
    0x3f81_1111_1112_2322,
    0x3fa5_5555_5555_02a1,
    0x3fc5_5555_5555_5511,
    0x3fe0_0000_0000_000b,
    0x3ff0_0000_0000_0000,
    0x3ff0_0000_0000_0000,
];

/// `__nv_exp`'s core: n = rni(s·log2 e) by the 1.5·2^52 shifter (the shifter's low word, signed), r = s − n·ln 2
/// (ln 2 in two parts), e^r by its polynomial; (e^r, n).
pub(crate) fn exp_parts<T: FloatOps>(o: &mut T, s: T::F) -> (T::F, T::I) {
    let shifter = o.fbits(0x4338_0000_0000_0000);
    let l2e = o.fbits(0x3ff7_1547_652b_82fe);
    let sh = o.fma(s, l2e, shifter);
    // n: the shifter's low word, signed.
    let nb = o.f_to_bits(sh);
    let nb = o.shl(nb, 32);
    let n = o.sar(nb, 32);
    let unshift = o.fbits(0xc338_0000_0000_0000);
    let kf = o.add(sh, unshift);
    let (l2h, l2l) = (o.fbits(0xbfe6_2e42_fefa_39ef), o.fbits(0xbc7a_bc9e_3b39_803f));
    let r = o.fma(kf, l2h, s);
    let r = o.fma(kf, l2l, r);
    (horner(o, r, &EXP_POLY), n)
}

/// e^s for s ≤ 0 (s = −a², down to about −750): `exp_parts`, 2^n applied in two halves so that neither
/// overflows nor goes subnormal early.
pub(crate) fn exp_neg<T: FloatOps>(o: &mut T, s: T::F) -> T::F {
    let (e, n) = exp_parts(o, s);
    scale_halves(o, e, n)
}

/// `__nv_exp`: `exp_parts`, 2^n put on the exponent directly while |s|'s high word (compared as an f32, as
/// libdevice does) is below 0x4086232b (708.4), in two halves below 0x40874800 (745), else 0 for negative s
/// and s + inf (inf, or NaN) otherwise.
pub(crate) fn exp_full<T: FloatOps>(o: &mut T, s: T::F) -> T::F {
    let (e, n) = exp_parts(o, s);
    let eb = o.f_to_bits(e);
    let nb = o.shl(n, 52);
    let eb = o.iadd(eb, nb);
    let direct = o.bits_to_f(eb);
    let halves = scale_halves(o, e, n);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let over = o.add(s, inf);
    let zero = o.fc(0.0);
    let neg = o.lt(s, zero);
    let over = o.sel(neg, zero, over);
    let (sh, _) = hi_abs(o, s);
    let (l1, l2) = (o.ic(0x4086_232b), o.ic(0x4087_4800));
    let below1 = o.ult(sh, l1);
    let below2 = o.ult(sh, l2);
    let big = o.sel(below2, halves, over);
    o.sel(below1, direct, big)
}

/// e·2^n as e·2^half times 2^(n − half), half = n/2 rounded toward zero.
pub(crate) fn scale_halves<T: FloatOps>(o: &mut T, e: T::F, n: T::I) -> T::F {
    let sign = o.shr(n, 63);
    let h = o.iadd(n, sign);
    let half = o.sar(h, 1);
    let eb = o.f_to_bits(e);
    let hs = o.shl(half, 52);
    let eb = o.iadd(eb, hs);
    let e = o.bits_to_f(eb);
    let rest = o.isub(n, half);
    let bias = o.ic(1023);
    let rest = o.iadd(rest, bias);
    let sb = o.shl(rest, 52);
    let sc = o.bits_to_f(sb);
    o.mul(sc, e)
}
