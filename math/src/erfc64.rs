//! libdevice's f64 `erfc`, `normcdf` and `rcbrt` (`__nv_erfc`, `__nv_normcdf`, `__nv_rcbrt`) as Triton 3.6 runs
//! them (their PTX for sm_90), op for op; branches become selects, and the 32-bit halves libdevice works on are
//! the same bits of the 64-bit integers here. `erfc` and `normcdf` use exact arithmetic and
//! `rcp.approx.ftz.f64` (refined by Newton steps to the correctly rounded reciprocal's neighbourhood, so the
//! CPU model's correctly rounded start lands on the same bits except in rare ties); `rcbrt` starts from
//! f32 `lg2`/`ex2.approx`, which the CPU model rounds correctly, then refines in f64.

use super::FloatOps;

/// Horner's rule with `fma.rn`: ((c0·x + c1)·x + c2)... with `c` from the highest degree down.
pub(super) fn horner<T: FloatOps>(o: &mut T, x: T::F, c: &[u64]) -> T::F {
    let mut acc = o.fbits(c[0]);
    for &ci in &c[1..] {
        let k = o.fbits(ci);
        acc = o.fma(acc, x, k);
    }
    acc
}

/// The high 32 bits of x's bits with the sign cleared (libdevice's `hi & 0x7fffffff`), and x's bits.
pub(super) fn hi_abs<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::I) {
    let xb = o.f_to_bits(x);
    let h = o.shr(xb, 32);
    let m = o.ic(0x7fff_ffff);
    (o.iand(h, m), xb)
}

/// 1/d from `rcp.approx.ftz.f64` and libdevice's refinement: e = 1 − d·r, e + e², r + r·(e + e²).
pub(super) fn recip<T: FloatOps>(o: &mut T, d: T::F) -> T::F {
    let one = o.fc(1.0);
    let r = o.rcp_approx_ftz(d);
    let nd = o.neg(d);
    let e = o.fma(nd, r, one);
    let e = o.fma(e, e, e);
    o.fma(e, r, r)
}

/// erfc c polynomial in t = (a − 4)/(a + 4), highest degree first.
const C: [u64; 23] = [
    0xbdf8_774a_d4e0_bfd7,
    0xbe44_e1c6_fd03_d328,
    0xbe43_3014_9f7a_56b6,
    0x3e7b_edde_d837_6273,
    0x3e6f_9254_c3ab_f22b,
    0xbeab_9068_c214_8cf0,
    0x3e94_c645_4db3_4009,
    0x3ed7_f1c3_78f2_311d,
    0xbee7_8e05_1c6d_5c58,
    0xbef9_95b4_ead1_4a90,
    0x3f23_be27_cf0a_29b2,
    0xbf2a_1def_3e81_672e,
    0xbf48_d4ab_e68c_1713,
    0x3f74_9c67_210d_d6b4,
    0xbf90_9623_8568_e357,
    0x3fa3_079e_df8c_2dc9,
    0xbfb0_fb06_dff6_01fc,
    0x3fb7_fee0_04df_bcdc,
    0xbfb9_ddb2_3c3d_b8c6,
    0x3fb1_6ece_fcfa_5fda,
    0x3f8f_7f5d_f66f_b6d6,
    0xbfc1_df1a_d154_a29d,
    0x3ff3_ba59_16e9_fd7f,
];

/// `__nv_exp`'s e^r for |r| ≤ ln2/2, highest degree first (the last two steps add 1 twice: e^r = 1 + r·(1 +
/// r·(...))); `pow`'s accurate core evaluates it too.
pub(super) const EXP_POLY: [u64; 12] = [
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
pub(super) fn exp_parts<T: FloatOps>(o: &mut T, s: T::F) -> (T::F, T::I) {
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
pub(super) fn exp_neg<T: FloatOps>(o: &mut T, s: T::F) -> T::F {
    let (e, n) = exp_parts(o, s);
    scale_halves(o, e, n)
}

/// `__nv_exp`: `exp_parts`, 2^n put on the exponent directly while |s|'s high word (compared as an f32, as
/// libdevice does) is below 0x4086232b (708.4), in two halves below 0x40874800 (745), else 0 for negative s
/// and s + inf (inf, or NaN) otherwise.
pub(super) fn exp_full<T: FloatOps>(o: &mut T, s: T::F) -> T::F {
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
pub(super) fn scale_halves<T: FloatOps>(o: &mut T, e: T::F, n: T::I) -> T::F {
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

/// erfc(a)·e^(a²) for a = |x| as `erfc` and `erfcx` compute it: t = (a − 4)/(a + 4) (corrected once), p(t) of
/// degree 22, p/(1 + 2a) (corrected once).
pub(super) fn erfcx_rational<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let (m4, p4, one, two) = (o.fc(-4.0), o.fc(4.0), o.fc(1.0), o.fc(2.0));
    let n = o.add(a, m4);
    let d = o.add(a, p4);
    let r = recip(o, d);
    let t = o.mul(n, r);
    let t1 = o.add(t, one);
    let e = o.fma(m4, t1, a);
    let nt = o.neg(t);
    let e = o.fma(nt, a, e);
    let t = o.fma(r, e, t);
    let p = horner(o, t, &C);
    let d2 = o.fma(two, a, one);
    let r2 = recip(o, d2);
    let q = o.mul(r2, p);
    let m2 = o.fc(-2.0);
    let m = o.mul(q, m2);
    let s = o.fma(a, m, p);
    let nq = o.neg(q);
    let s = o.add(s, nq);
    o.fma(s, r2, q)
}

/// `__nv_erfc`: for a = |x|, t = (a − 4)/(a + 4), p(t) of degree 22, erfc(a) = p/(1 + 2a) (corrected once) ·
/// e^(−a²) (the square's rounding error carried in); 0 above |x| = 27.3 (hi word 0x403b4000); 2 − erfc(a) for
/// negative x; ±inf give 0 and 2, NaN gives x + x.
pub fn erfc<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (ha, xb) = hi_abs(o, x);
    let a = o.abs(x);
    let q = erfcx_rational(o, a);
    let two = o.fc(2.0);
    let na = o.neg(a);
    let sq = o.mul(a, na);
    let v = exp_neg(o, sq);
    let nsq = o.neg(sq);
    let err = o.fma(na, a, nsq);
    let v = o.fma(v, err, v);
    let res = o.mul(v, q);
    let lim = o.ic(0x403b_4000);
    let far = o.ult(lim, ha);
    let zero = o.fc(0.0);
    let res = o.sel(far, zero, res);
    let izero = o.ic(0);
    let neg = o.slt(xb, izero);
    let nres = o.sub(two, res);
    let res = o.sel(neg, nres, res);
    // inf and NaN.
    let ilim = o.ic(0x7fef_ffff);
    let special = o.ult(ilim, ha);
    let mag = o.ic(0x7fff_ffff_ffff_ffff);
    let ab = o.iand(xb, mag);
    let inf = o.ic(0x7ff0_0000_0000_0000);
    let is_inf = o.ieq(ab, inf);
    let lim_v = o.sel(neg, two, zero);
    let xx = o.add(x, x);
    let sp = o.sel(is_inf, lim_v, xx);
    o.sel(special, sp, res)
}

/// `__nv_normcdf`: Φ(x) = erfc(−x/√2)/2 with x clamped to ±38.5, −x/√2 carried as h + l (1/√2 in two parts),
/// `erfc` of u = h + l, and for x < −1 (x's high word at least 0xbff00001) the first-order correction for
/// the part of h + l that u lost: erfc(u) − 2u·erfc(u)·((h − u) + l).
pub fn normcdf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let lim = o.fc(38.5);
    let big = o.lt(lim, a);
    let xb = o.f_to_bits(x);
    let sign = o.ic(1 << 63);
    let sb = o.iand(xb, sign);
    let lb = o.f_to_bits(lim);
    let cb = o.ior(sb, lb);
    let cl = o.bits_to_f(cb);
    let t = o.sel(big, cl, x);
    let c = o.fbits(0xbfe6_a09e_667f_3bcd);
    let h = o.mul(t, c);
    let nh = o.neg(h);
    let e = o.fma(t, c, nh);
    let cl = o.fbits(0x3c8b_dd34_13b2_6456);
    let l = o.fma(t, cl, e);
    let u = o.add(h, l);
    let v = erfc(o, u);
    let tb = o.f_to_bits(t);
    let th = o.shr(tb, 32);
    let ilim = o.ic(0xbff0_0001);
    let small = o.ult(th, ilim);
    let d = o.sub(h, u);
    let d = o.add(d, l);
    let m2 = o.fc(-2.0);
    let m = o.mul(u, m2);
    let m = o.mul(m, v);
    let w = o.fma(m, d, v);
    let v = o.sel(small, v, w);
    let half = o.fc(0.5);
    o.mul(v, half)
}

/// `__nv_rcbrt`: for finite nonzero x, |x| (subnormals scaled by 2^54) = 2^(3q)·m with q = rni((e − 1022)/3)
/// in f32, y = 2^(−log2 m / 3) from the f32 approximations, one f64 correction of y from the residual
/// 1 − m·y³ (carried with its rounding errors), then 2^−q (2^(18−q) for subnormals) put back by the
/// exponent; 0 gives inf, inf gives 0, NaN gives x + x; x's sign bit OR'd on.
pub fn rcbrt<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (ha, xb) = hi_abs(o, x);
    let zero = o.fc(0.0);
    let is_zero = o.eq(x, zero);
    let ilim = o.ic(0x7fef_ffff);
    let non_finite = o.ult(ilim, ha);
    let special = o.or(is_zero, non_finite);
    // 0 ↔ inf by flipping the exponent bits; NaN gives x + x.
    let lo_mask = o.ic(0xffff_ffff);
    let lo = o.iand(xb, lo_mask);
    let ebits = o.ic(0x7ff0_0000);
    let fh = o.ixor(ha, ebits);
    let fh = o.shl(fh, 32);
    let fb = o.ior(fh, lo);
    let flip = o.bits_to_f(fb);
    let nan = o.is_nan(x);
    let xx = o.add(x, x);
    let sp = o.sel(nan, xx, flip);
    let a = o.abs(x);
    let sub_lim = o.ic(0x0010_0000);
    let sub = o.ult(ha, sub_lim);
    let big = o.fbits(0x4350_0000_0000_0000);
    let sa = o.mul(a, big);
    let m0 = o.sel(sub, sa, a);
    let (i18, i0) = (o.ic(18), o.ic(0));
    let base = o.isel(sub, i18, i0);
    let mb = o.f_to_bits(m0);
    let e = o.shr(mb, 52);
    let bias = o.ic(1022u64.wrapping_neg());
    let e = o.iadd(e, bias);
    let ef = o.i2f(e);
    let qf = o.f32_rni_scaled(ef, 0x3eaa_aaab);
    let q = o.f2i(qf);
    let step = o.ic((3u64 << 52).wrapping_neg());
    let off = o.imul(q, step);
    let mb = o.iadd(mb, off);
    let m = o.bits_to_f(mb);
    let y = o.f32_exp2_scaled_log2(m, 0xbeaa_aaab);
    let one = o.fc(1.0);
    let y2 = o.mul(y, y);
    let my = o.mul(m, y);
    let nmy = o.neg(my);
    let r = o.fma(y2, nmy, one);
    let emy = o.fma(m, y, nmy);
    let nemy = o.neg(emy);
    let r = o.fma(y2, nemy, r);
    let ny2 = o.neg(y2);
    let ey2 = o.fma(y, y, ny2);
    let ney2 = o.neg(ey2);
    let r = o.fma(my, ney2, r);
    let (c3, c9) = (o.fbits(0x3fd5_5555_5555_5555), o.fbits(0x3fcc_71c7_1c71_c71c));
    let p = o.fma(c9, r, c3);
    let yr = o.mul(r, y);
    let v = o.fma(p, yr, y);
    let sh = o.isub(base, q);
    let sh = o.shl(sh, 52);
    let vb = o.f_to_bits(v);
    let vb = o.iadd(vb, sh);
    let v = o.bits_to_f(vb);
    let v = o.sel(special, sp, v);
    let sign = o.ic(1 << 63);
    let sb = o.iand(xb, sign);
    let vb = o.f_to_bits(v);
    let vb = o.ior(vb, sb);
    o.bits_to_f(vb)
}

/// `__nv_erfcx`: e^(x²)·erfc(x). Below |x| = 32 (the high word of |x| below 0x40400000) `erfc`'s rational part;
/// beyond (and NaN) the asymptotic series r/√π·(1 − r²/2 + 3r⁴/4 − 15r⁶/8 + 105r⁸/16 − 945r¹⁰/32) in r = 1/x
/// (correctly rounded). For x < 0 (x's sign bit), 2·e^(x²)·(1 + err) − erfcx(|x|) with err the square's rounding
/// error and `__nv_exp` of x² (2^n put on the exponent directly, in two halves from x² = 708.4 on, inf from 745);
/// inf where 2·e^(x²) overflows.
pub fn erfcx<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (ha, xb) = hi_abs(o, x);
    let a = o.abs(x);
    let near = erfcx_rational(o, a);
    let one = o.fc(1.0);
    let r = o.div(one, x);
    let r2 = o.mul(r, r);
    let c = [
        0xc03d_8800_0000_0000,
        0x401a_4000_0000_0000,
        0xbffe_0000_0000_0000,
        0x3fe8_0000_0000_0000,
        0xbfe0_0000_0000_0000,
        0x3ff0_0000_0000_0000,
    ];
    let p = horner(o, r2, &c);
    let k = o.fbits(0x3fe2_0dd7_5042_9b6d);
    let rk = o.mul(r, k);
    let far = o.mul(rk, p);
    let lim = o.ic(0x4040_0000);
    let small = o.ult(ha, lim);
    let pos = o.sel(small, near, far);
    // x < 0.
    let s = o.mul(x, x);
    let ns = o.neg(s);
    let err = o.fma(x, x, ns);
    let v = exp_full(o, s);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let v2 = o.add(v, v);
    let w = o.fma(v2, err, v2);
    let neg = o.sub(w, pos);
    let is_inf = o.eq(v2, inf);
    let neg = o.sel(is_inf, inf, neg);
    let izero = o.ic(0);
    let is_neg = o.slt(xb, izero);
    o.sel(is_neg, neg, pos)
}

#[cfg(test)]
mod tests;
