//! Arithmetic with a rounding mode, as libdevice's `add_rz`, `mul_rd`, `div_ru`, `sqrt_rz`, `fma_rn`... compute
//! it (PTX's `add.rz.ftz.f32`, `div.rp.f64`, `sqrt.rm.ftz.f32`, `fma.rn.ftz.f32`...): the exact result rounded to
//! nearest even, toward zero, down or up, for f32 and f64.
//!
//! Method: the operands' significands as integers and the exact result (`×`, `+`, `fma`) or its leading
//! 60+ bits and whether anything is left (`÷`, `√`) computed in `u128`, then rounded once to the format's grid
//! (subnormals included) in the asked direction ([`round_exact`]). Overflow gives ±max or ±inf as the mode
//! says; an exact zero sum is −0 when rounding down, as IEEE 754 asks.
//!
//! libdevice's f32 versions flush subnormals (Triton compiles libdevice with `__CUDA_FTZ`: `add.rz.ftz.f32`,
//! measured on an H100 as `add_rz(1, −2^-149) = 1`): [`libdevice`] reads subnormal f32 operands as ±0 and
//! flushes a subnormal f32 result to ±0; f64 keeps subnormals. [`directed`] is the IEEE operation itself
//! (the PTX instruction without `.ftz`), which the PTX simulator uses.

impl Dir {
    /// PTX's rounding modifier.
    pub fn ptx(self) -> &'static str {
        match self {
            Dir::Nearest => "rn",
            Dir::Zero => "rz",
            Dir::Down => "rm",
            Dir::Up => "rp",
        }
    }
}

/// The rounding direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// To nearest, ties to even.
    Nearest,
    Zero,
    Down,
    Up,
}

/// An operation of libdevice's rounded arithmetic (`add_rz`, `sqrt_ru`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Sqrt,
}

/// The binary format an operation rounds to (the callers' narrower floats compute in f32, and round to their
/// own type afterwards).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    F32,
    F64,
}

/// libdevice's `x op y` (y unused for `Sqrt`) of type `t` (f32 or f64) rounded in direction `dir`; f32 reads
/// subnormal operands as ±0 and flushes a subnormal result to ±0 (`.ftz`).
pub fn libdevice(op: Arith, dir: Dir, t: Format, x: f64, y: f64) -> f64 {
    if t == Format::F64 {
        return directed(op, dir, t, x, y);
    }
    flush_f32(directed(op, dir, t, flush_f32(x), flush_f32(y)))
}

/// libdevice's `fma_rn`, `fma_rz`...: `x·y + z` rounded once in direction `dir`, f32 with `.ftz`.
pub fn libdevice_fma(dir: Dir, t: Format, x: f64, y: f64, z: f64) -> f64 {
    if t == Format::F64 {
        return fma(dir, t, x, y, z);
    }
    flush_f32(fma(dir, t, flush_f32(x), flush_f32(y), flush_f32(z)))
}

/// libdevice's conversions with a rounding mode (`int2float_rz`, `ull2double_ru`...: `cvt.rz.f32.s32`...): the
/// integer −mag (when `neg`) or mag rounded to `t` (f32 or f64) in direction `dir`.
pub fn int_to_float(dir: Dir, t: Format, neg: bool, mag: u64) -> f64 {
    round_exact(Grid::of(t), dir, neg, mag as u128, 0, false)
}

/// libdevice's `double2float_rn` ... `double2float_ru` (`cvt.rz.ftz.f32.f64`...): `x` rounded to f32 in
/// direction `dir`, a subnormal result flushed to ±0; NaN and infinities carried over.
pub fn f64_to_f32(dir: Dir, x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x as f32 as f64;
    }
    let (neg, m, e) = split(x);
    flush_f32(round_exact(Grid::of(Format::F32), dir, neg, m, e, false))
}

/// An f32 value (held in an f64) with a subnormal read as zero of its sign.
pub fn flush_f32(v: f64) -> f64 {
    if v != 0.0 && v.abs() < f32::MIN_POSITIVE as f64 { 0f64.copysign(v) } else { v }
}

/// The IEEE operation `x op y` (y unused for `Sqrt`) of type `t` (f32 or f64; operands are rounded to `t`
/// first) rounded in direction `dir`, subnormals kept.
pub fn directed(op: Arith, dir: Dir, t: Format, x: f64, y: f64) -> f64 {
    let f = Grid::of(t);
    let (x, y) = (f.operand(x), f.operand(y));
    match op {
        Arith::Add => add(f, dir, x, y),
        Arith::Sub => add(f, dir, x, -y),
        Arith::Mul => mul(f, dir, x, y),
        Arith::Div => div(f, dir, x, y),
        Arith::Sqrt => sqrt(f, dir, x),
    }
}

/// The IEEE `fma(x, y, z)` of type `t` rounded once in direction `dir`, subnormals kept.
pub fn fma(dir: Dir, t: Format, x: f64, y: f64, z: f64) -> f64 {
    let f = Grid::of(t);
    let (x, y, z) = (f.operand(x), f.operand(y), f.operand(z));
    if !(x.is_finite() && y.is_finite() && z.is_finite()) || x == 0.0 || y == 0.0 {
        // NaN, infinities and a zero product: the exact result is what f64 computes (x·y is ±0 or not finite),
        // a sum of zeros signed as `add` signs it.
        let p = x * y;
        return if p == 0.0 && z.is_finite() { add(f, dir, p, z) } else { x.mul_add(y, z) };
    }
    let (sx, mx, ex) = split(x);
    let (sy, my, ey) = split(y);
    if z == 0.0 {
        return round_exact(f, dir, sx != sy, mx * my, ex + ey, false);
    }
    let (sz, mz, ez) = split(z);
    sum(f, dir, (sx != sy, mx * my, ex + ey), (sz, mz, ez))
}

/// A binary float format: precision (with the hidden bit), exponent of the smallest subnormal's unit, largest
/// exponent.
#[derive(Clone, Copy)]
struct Grid {
    p: u32,
    emin: i32,
    emax: i32,
}

impl Grid {
    fn of(t: Format) -> Grid {
        if t == Format::F64 { Grid { p: 53, emin: -1074, emax: 1023 } } else { Grid { p: 24, emin: -149, emax: 127 } }
    }

    /// An operand as a value of the format.
    fn operand(self, v: f64) -> f64 {
        if self.p == 24 { v as f32 as f64 } else { v }
    }
}

/// A finite nonzero f64 as (negative, m, e): |x| = m·2^e, m < 2^53.
fn split(x: f64) -> (bool, u128, i32) {
    let b = x.to_bits();
    let exp = ((b >> 52) & 0x7ff) as i32;
    let frac = (b & ((1 << 52) - 1)) as u128;
    if exp == 0 { (x < 0.0, frac, -1074) } else { (x < 0.0, frac | 1 << 52, exp - 1075) }
}

/// 2^k for k in [−1074, 1023], exactly.
fn pow2(k: i32) -> f64 {
    if k < -1022 {
        return pow2(k + 100) * pow2(-100);
    }
    f64::from_bits(((k + 1023) as u64) << 52)
}

fn bits(m: u128) -> i32 {
    128 - m.leading_zeros() as i32
}

/// (−1)^neg · (m + δ)·2^e, where δ ∈ (0, 1) when `sticky` and 0 otherwise, rounded to format `f` in direction
/// `dir`. With `sticky`, m must have at least `p + 2` bits (so δ lies below the rounding position).
fn round_exact(f: Grid, dir: Dir, neg: bool, m: u128, e: i32, sticky: bool) -> f64 {
    let sign = |v: f64| if neg { -v } else { v };
    if m == 0 {
        debug_assert!(!sticky);
        return sign(0.0);
    }
    debug_assert!(!sticky || bits(m) >= f.p as i32 + 2);
    let lead = e + bits(m) - 1;
    let q = (lead - (f.p as i32 - 1)).max(f.emin);
    let (mut n, half, below) = if q > e {
        let s = (q - e) as u32;
        let n = if s >= 128 { 0 } else { m >> s };
        let half = s <= 128 && (m >> (s - 1)) & 1 == 1;
        let below = sticky || (s >= 2 && (if s > 128 { m } else { m & ((1u128 << (s - 1)) - 1) }) != 0);
        (n, half, below)
    } else {
        (m << (e - q), false, sticky)
    };
    let inexact = half || below;
    let up = match dir {
        Dir::Nearest => half && (below || n & 1 == 1),
        Dir::Zero => false,
        Dir::Up => inexact && !neg,
        Dir::Down => inexact && neg,
    };
    n += up as u128;
    let (n, q) = if n >> f.p == 1 { (n >> 1, q + 1) } else { (n, q) };
    if q > f.emax - f.p as i32 + 1 {
        let to_inf = match dir {
            Dir::Nearest => true,
            Dir::Zero => false,
            Dir::Up => !neg,
            Dir::Down => neg,
        };
        let max = ((1u64 << f.p) - 1) as f64 * pow2(f.emax - f.p as i32 + 1);
        return sign(if to_inf { f64::INFINITY } else { max });
    }
    sign(n as f64 * pow2(q))
}

/// A sum that is exactly zero: the sign of two zeros of one sign, else −0 when rounding down, +0 otherwise.
fn zero_sum(dir: Dir, x: f64, y: f64) -> f64 {
    if x == 0.0 && y == 0.0 && x.is_sign_negative() == y.is_sign_negative() {
        return x;
    }
    if dir == Dir::Down { -0.0 } else { 0.0 }
}

fn add(f: Grid, dir: Dir, x: f64, y: f64) -> f64 {
    if !(x.is_finite() && y.is_finite()) {
        return x + y;
    }
    if x == 0.0 || y == 0.0 {
        // x + 0 is x exactly (a value of the format); 0 + 0 is signed.
        return if y == 0.0 && x != 0.0 {
            x
        } else if x == 0.0 && y != 0.0 {
            y
        } else {
            zero_sum(dir, x, y)
        };
    }
    let r = sum(f, dir, split(x), split(y));
    if r == 0.0 { zero_sum(dir, x, y) } else { r }
}

/// The rounded sum of two nonzero values given as (negative, m, e), m below 2^107.
fn sum(f: Grid, dir: Dir, a: (bool, u128, i32), b: (bool, u128, i32)) -> f64 {
    // `a` the one reaching higher, moved left to 125 bits; `b` aligned to its unit, what falls off sticky.
    let (a, b) = if a.2 + bits(a.1) >= b.2 + bits(b.1) { (a, b) } else { (b, a) };
    let h = 125 - bits(a.1);
    let (ma, ea) = (a.1 << h, a.2 - h);
    let (mb, sticky) = if b.2 >= ea {
        (b.1 << (b.2 - ea), false)
    } else {
        let s = (ea - b.2) as u32;
        if s >= 128 { (0, true) } else { (b.1 >> s, b.1 & ((1u128 << s) - 1) != 0) }
    };
    if a.0 == b.0 {
        return round_exact(f, dir, a.0, ma + mb, ea, sticky);
    }
    if sticky {
        // a − (mb + δ) = (ma − mb − 1) + (1 − δ): mb is far below ma, so this keeps 120+ bits.
        return round_exact(f, dir, a.0, ma - mb - 1, ea, true);
    }
    if ma == mb {
        // An exact cancellation is +0, or −0 when rounding down (IEEE 754 §6.3).
        return if dir == Dir::Down { -0.0 } else { 0.0 };
    }
    if ma > mb { round_exact(f, dir, a.0, ma - mb, ea, false) } else { round_exact(f, dir, b.0, mb - ma, ea, false) }
}

fn mul(f: Grid, dir: Dir, x: f64, y: f64) -> f64 {
    if !(x.is_finite() && y.is_finite()) || x == 0.0 || y == 0.0 {
        return x * y;
    }
    let ((sx, mx, ex), (sy, my, ey)) = (split(x), split(y));
    round_exact(f, dir, sx != sy, mx * my, ex + ey, false)
}

fn div(f: Grid, dir: Dir, x: f64, y: f64) -> f64 {
    if !(x.is_finite() && y.is_finite()) || x == 0.0 || y == 0.0 {
        // NaN, ∞/∞, 0/0, x/0 = ±∞, 0/x and x/∞ = ±0, ∞/x = ±∞: all exact.
        return x / y;
    }
    let ((sx, mx, ex), (sy, my, ey)) = (split(x), split(y));
    let k = 125 - bits(mx);
    let num = mx << k;
    round_exact(f, dir, sx != sy, num / my, ex - k - ey, num % my != 0)
}

fn sqrt(f: Grid, dir: Dir, x: f64) -> f64 {
    if !x.is_finite() || x <= 0.0 {
        // NaN, +∞, ±0 are their own root; a negative number's is NaN.
        return x.sqrt();
    }
    let (_, mut m, mut e) = split(x);
    if e % 2 != 0 {
        m <<= 1;
        e -= 1;
    }
    let j = (124 - bits(m)) / 2;
    let big = m << (2 * j);
    let mut s = (big as f64).sqrt() as u128 + (1 << 12);
    loop {
        let t = (s + big / s) >> 1;
        if t >= s {
            break;
        }
        s = t;
    }
    while s * s > big {
        s -= 1;
    }
    while (s + 1) * (s + 1) <= big {
        s += 1;
    }
    round_exact(f, dir, false, s, (e - 2 * j) / 2, s * s != big)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Format::{F32, F64};

    /// The next f32 up (or down), through zero and to ±inf.
    fn next32(v: f32, up: bool) -> f32 {
        if v == 0.0 {
            let tiny = f32::from_bits(1);
            return if up { tiny } else { -tiny };
        }
        let away = (v > 0.0) == up;
        f32::from_bits(if away { v.to_bits() + 1 } else { v.to_bits() - 1 })
    }

    fn next64(v: f64, up: bool) -> f64 {
        if v == 0.0 {
            let tiny = f64::from_bits(1);
            return if up { tiny } else { -tiny };
        }
        let away = (v > 0.0) == up;
        f64::from_bits(if away { v.to_bits() + 1 } else { v.to_bits() - 1 })
    }

    /// Random values of every binade, subnormals, zeros, infinities and NaN included, as f64 (`wide`) or f32.
    fn any_value(rng: &mut crate::testing::Rng, wide: bool) -> f64 {
        match rng.below(16) {
            0 => 0.0,
            1 => -0.0,
            2 => f64::INFINITY,
            3 => f64::NAN,
            4 if wide => f64::from_bits(rng.below(1 << 52)).copysign(rng.normal()),
            4 => (f32::from_bits(rng.below(1 << 23) as u32) as f64).copysign(rng.normal()),
            _ if wide => f64::from_bits(rng.below(1 << 52) | rng.below(0x7ff) << 52).copysign(rng.normal()),
            _ => (f32::from_bits(rng.below(1 << 31) as u32 & 0x7f7f_ffff) as f64).copysign(rng.normal()),
        }
    }

    /// To nearest, the exact rounding is the host's IEEE arithmetic (subnormals, zeros, overflow, NaN).
    #[test]
    fn nearest_is_ieee() {
        let mut rng = crate::testing::Rng::new(7);
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for _ in 0..200_000 {
            let (x, y, z) = (any_value(&mut rng, true), any_value(&mut rng, true), any_value(&mut rng, true));
            let n = |op| directed(op, Dir::Nearest, F64, x, y);
            for (got, want) in [
                (n(Arith::Add), x + y),
                (n(Arith::Sub), x - y),
                (n(Arith::Mul), x * y),
                (n(Arith::Div), x / y),
                (n(Arith::Sqrt), x.sqrt()),
                (fma(Dir::Nearest, F64, x, y, z), x.mul_add(y, z)),
            ] {
                assert!(same(got, want), "f64 {x:e} {y:e} {z:e}: {got:e} want {want:e}");
            }
            let (x, y, z) = (any_value(&mut rng, false), any_value(&mut rng, false), any_value(&mut rng, false));
            let (a, b, c) = (x as f32, y as f32, z as f32);
            let n = |op| directed(op, Dir::Nearest, F32, x, y);
            for (got, want) in [
                (n(Arith::Add), a + b),
                (n(Arith::Sub), a - b),
                (n(Arith::Mul), a * b),
                (n(Arith::Div), a / b),
                (n(Arith::Sqrt), a.sqrt()),
                (fma(Dir::Nearest, F32, x, y, z), a.mul_add(b, c)),
            ] {
                assert!(same(got, want as f64), "f32 {x:e} {y:e} {z:e}: {got:e} want {want:e}");
            }
        }
    }

    /// An exact cancellation is +0 in every direction but down, where it is −0 (Triton's fma_rn(1, −1, 1) is +0,
    /// its fma_rd(−1, −1, −1) is −0, measured on an H100: conformance/RESULTS.md).
    #[test]
    fn exact_cancellations_are_signed_by_the_direction() {
        for t in [F32, F64] {
            for dir in [Dir::Nearest, Dir::Zero, Dir::Up, Dir::Down] {
                let want = if dir == Dir::Down { (-0.0f64).to_bits() } else { 0 };
                assert_eq!(fma(dir, t, 1.0, -1.0, 1.0).to_bits(), want, "{t:?} {dir:?} fma(1, -1, 1)");
                assert_eq!(fma(dir, t, -1.0, -1.0, -1.0).to_bits(), want, "{t:?} {dir:?} fma(-1, -1, -1)");
                assert_eq!(directed(Arith::Add, dir, t, 2.5, -2.5).to_bits(), want, "{t:?} {dir:?} 2.5 + -2.5");
                assert_eq!(directed(Arith::Sub, dir, t, -0.75, -0.75).to_bits(), want, "{t:?} {dir:?} -0.75 - -0.75");
            }
        }
    }

    /// The f64 cases where the previous (error-free transformation) method was 1 ulp off, measured against
    /// Triton on an H100 (`conformance/RESULTS.md`): subnormal products and roots, and x/0 = ±∞ in every mode.
    #[test]
    fn f64_subnormal_results_and_infinite_quotients() {
        let b = f64::from_bits;
        let d = |op, dir, x: u64, y: u64| directed(op, dir, F64, b(x), b(y)).to_bits();
        assert_eq!(d(Arith::Mul, Dir::Zero, 0x4004_0000_0000_0000, 0x000f_ffff_ffff_ffff), 0x0023_ffff_ffff_fffe);
        assert_eq!(d(Arith::Mul, Dir::Up, 0x4004_0000_0000_0000, 1), 3);
        assert_eq!(d(Arith::Div, Dir::Zero, 0x3ff0_0000_0000_0000, 0), 0x7ff0_0000_0000_0000);
        assert_eq!(d(Arith::Div, Dir::Up, 0x3ff0_0000_0000_0000, 1 << 63), 0xfff0_0000_0000_0000);
        assert_eq!(d(Arith::Sqrt, Dir::Zero, 2, 0), 0x1e66_a09e_667f_3bcc);
    }

    /// libdevice's f32 versions flush subnormal operands and results (measured against Triton on an H100).
    #[test]
    fn libdevice_f32_flushes_subnormals() {
        let f = |x: u32| f32::from_bits(x) as f64;
        let l = |op, dir, x: u32, y: u32| libdevice(op, dir, F32, f(x), f(y)) as f32;
        assert_eq!(l(Arith::Add, Dir::Zero, 0x3f80_0000, 0x8000_0001), 1.0);
        assert_eq!(l(Arith::Sub, Dir::Up, 0x3f80_0000, 0x8000_0001), 1.0);
        assert_eq!(l(Arith::Mul, Dir::Zero, 0x3f80_0000, 1).to_bits(), 0);
        assert_eq!(l(Arith::Div, Dir::Zero, 0x3f80_0000, 0x7e96_7699).to_bits(), 0);
        assert_eq!(l(Arith::Div, Dir::Nearest, 0x3f80_0000, 0x7e96_7699).to_bits(), 0);
        assert_eq!(l(Arith::Sqrt, Dir::Zero, 1, 0).to_bits(), 0);
        assert_eq!(l(Arith::Div, Dir::Nearest, 0x3f80_0000, 0x8000_0001), f32::NEG_INFINITY);
        assert_eq!(libdevice_fma(Dir::Zero, F32, 1.0, f(1), 0.0).to_bits(), 0);
        // f64 keeps them.
        assert_eq!(libdevice(Arith::Mul, Dir::Zero, F64, 1.0, f64::from_bits(1)).to_bits(), 1);
    }

    /// Directed results bracket the exact value: RD ≤ exact ≤ RU, adjacent (or equal when exact), RZ is one
    /// of them; checked on f32 against exact rational arithmetic in i128 for products and sums of small
    /// integers scaled by powers of two, and on known cases.
    #[test]
    fn known_cases() {
        let d = |op, dir, t, x, y| directed(op, dir, t, x, y);
        let third = 1.0f64 / 3.0;
        // 1/3 in f32: nearest is below (0x3eaaaaab is above? 1/3 = 0x3eaaaaab rounded up).
        let (lo, hi) = (f32::from_bits(0x3eaa_aaaa) as f64, f32::from_bits(0x3eaa_aaab) as f64);
        assert_eq!(d(Arith::Div, Dir::Down, F32, 1.0, 3.0), lo);
        assert_eq!(d(Arith::Div, Dir::Zero, F32, 1.0, 3.0), lo);
        assert_eq!(d(Arith::Div, Dir::Up, F32, 1.0, 3.0), hi);
        assert_eq!(d(Arith::Div, Dir::Zero, F32, -1.0, 3.0), -lo);
        assert_eq!(d(Arith::Div, Dir::Down, F32, -1.0, 3.0), -hi);
        assert_eq!(d(Arith::Div, Dir::Down, F64, 1.0, 3.0), third);
        assert_eq!(d(Arith::Div, Dir::Up, F64, 1.0, 3.0), next64(third, true));
        // 1 + 2^-30 in f32: RU steps to 1 + 2^-23, RD and RZ stay at 1.
        let e = 2f64.powi(-30);
        assert_eq!(d(Arith::Add, Dir::Up, F32, 1.0, e), 1.0 + 2f64.powi(-23));
        assert_eq!(d(Arith::Add, Dir::Down, F32, 1.0, e), 1.0);
        assert_eq!(d(Arith::Sub, Dir::Down, F32, 1.0, e), 1.0 - 2f64.powi(-24));
        assert_eq!(d(Arith::Add, Dir::Zero, F64, 1.0, 1e-300), 1.0);
        assert_eq!(d(Arith::Add, Dir::Up, F64, 1.0, 1e-300), next64(1.0, true));
        // sqrt(2): RD below, RU above, RZ = RD.
        let s = 2f64.sqrt();
        let (sd, su) = (d(Arith::Sqrt, Dir::Down, F64, 2.0, 0.0), d(Arith::Sqrt, Dir::Up, F64, 2.0, 0.0));
        assert!(sd < su && (sd == s || su == s) && next64(sd, true) == su);
        assert_eq!(d(Arith::Sqrt, Dir::Zero, F64, 2.0, 0.0), sd);
        assert_eq!(d(Arith::Sqrt, Dir::Up, F32, 4.0, 0.0), 2.0);
        // Overflow: RZ and the inward direction give ±max, the outward one ±inf.
        let m = f32::MAX as f64;
        assert_eq!(d(Arith::Mul, Dir::Zero, F32, m, 2.0), m);
        assert_eq!(d(Arith::Mul, Dir::Up, F32, m, 2.0), f64::INFINITY);
        assert_eq!(d(Arith::Mul, Dir::Up, F32, -m, 2.0), -m);
        assert_eq!(d(Arith::Mul, Dir::Down, F64, f64::MAX, 2.0), f64::MAX);
        assert_eq!(d(Arith::Mul, Dir::Down, F64, -f64::MAX, 2.0), f64::NEG_INFINITY);
        // Exact zero sums: −0 only when rounding down.
        assert_eq!(d(Arith::Sub, Dir::Down, F32, 1.5, 1.5).to_bits(), (-0.0f64).to_bits());
        assert_eq!(d(Arith::Sub, Dir::Up, F32, 1.5, 1.5).to_bits(), 0);
        assert_eq!(d(Arith::Add, Dir::Down, F64, 0.0, 0.0).to_bits(), 0);
        // The IEEE operation keeps subnormal results: RU of a positive product below the smallest f32 subnormal.
        assert_eq!(d(Arith::Mul, Dir::Up, F32, 1e-30, 1e-30), f32::from_bits(1) as f64);
        assert_eq!(d(Arith::Mul, Dir::Zero, F32, 1e-30, 1e-30), 0.0);
        assert!(d(Arith::Add, Dir::Zero, F32, f64::NAN, 1.0).is_nan());
        assert_eq!(d(Arith::Add, Dir::Zero, F32, f64::INFINITY, 1.0), f64::INFINITY);
    }

    /// On random f32 operands, RD ≤ RN ≤ RU with RU the next float after RD whenever the result is inexact
    /// (exactness decided in f64, where f32 products are exact), and RZ equal to RD or RU by sign.
    #[test]
    fn directed_results_bracket_the_nearest() {
        let mut rng = crate::testing::Rng::new(31);
        for _ in 0..100_000 {
            let x = (rng.normal() * 2f64.powi((rng.below(40) as i32) - 20)) as f32 as f64;
            let y = (rng.normal() * 2f64.powi((rng.below(40) as i32) - 20)) as f32 as f64;
            for op in [Arith::Add, Arith::Sub, Arith::Mul, Arith::Div] {
                let (dn, up, z) = (
                    directed(op, Dir::Down, F32, x, y),
                    directed(op, Dir::Up, F32, x, y),
                    directed(op, Dir::Zero, F32, x, y),
                );
                let rn = match op {
                    Arith::Add => (x + y) as f32,
                    Arith::Sub => (x - y) as f32,
                    Arith::Mul => (x * y) as f32,
                    _ => (x as f32) / (y as f32),
                } as f64;
                assert!(dn <= rn && rn <= up, "{op:?} {x:e} {y:e}: {dn:e} {rn:e} {up:e}");
                assert!(dn == up || next32(dn as f32, true) as f64 == up, "{op:?} {x:e} {y:e}: {dn:e} {up:e}");
                assert_eq!(z, if rn > 0.0 || dn > 0.0 { dn } else { up }, "{op:?} {x:e} {y:e}");
                if op == Arith::Mul {
                    let exact = x * y;
                    assert_eq!(dn == up, exact as f32 as f64 == exact, "{x:e} * {y:e}");
                }
            }
        }
    }
}
