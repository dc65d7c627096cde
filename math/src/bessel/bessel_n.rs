//! libdevice's Bessel functions of integer order, `jn` and `yn` (`__nv_jnf`, `__nv_jn`, `__nv_ynf`, `__nv_yn`),
//! as Triton 3.6 runs them (their PTX for sm_90), op for op. Orders 0 and 1 are `j0`/`j1`/`y0`/`y1`; a negative
//! order is NaN. Otherwise a three-term recurrence whose trip count depends on the order n:
//! - `yn`, and `jn` for |x| past about n (f32: n + 1 from n = 5 on, else n; f64: n − 1): forward from orders 0
//!   and 1, v = (2k/x)·y_k − y_(k−1), n − 1 steps (`yn` turns a NaN result, from inf − inf, into −inf);
//! - `jn` otherwise: Miller's backward recurrence from M = n + ⌊√(40n)⌋ (f64: √(60n)) rounded down to even, seeded
//!   with 1 and 0, every value past 1e15 rescaling the lot by 1e−15, normalized by j0 + 2·Σ j_2i = 1.
//!
//! The routine is written in parts, [`setup`], [`more`], [`step`], [`finish`], so that the interpreter runs the
//! loop one element at a time and codegen emits it as a PTX loop over a warp, where each lane runs exactly its
//! own steps: a step that `more` says the lane does not need leaves its state unchanged (selects), and a lane's
//! forward or backward step is chosen by select too. The 32-bit order is carried at the float's width (sign
//! extended at 64 bits), with libdevice's 32-bit wrapping reproduced where it shows (n·40, n·60, n + ⌊√⌋).

use crate::FloatOps;

/// `jn` or `yn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    J,
    Y,
}

/// What stays fixed over the loop: x, the order, 2/x, whether this lane runs the backward recurrence, and the
/// result of the lanes that run no recurrence (orders below 2, the special cases) with whether it applies.
#[derive(Clone, Copy)]
pub struct Fixed<F, I, P> {
    pub n: I,
    pub x: F,
    pub t: F,
    pub backward: P,
    pub special: P,
    pub special_value: F,
}

/// The loop state: the two latest values of the recurrence, the backward recurrence's value at order n and its
/// normalizing sum, the steps left (the backward recurrence's current order), and the f64 forward step's order
/// as a float.
#[derive(Clone, Copy)]
pub struct State<F, I> {
    pub prev: F,
    pub cur: F,
    pub res: F,
    pub sum: F,
    pub left: I,
    pub kd: F,
}

/// The fixed part and the state over a [`FloatOps`]'s types.
pub type FixedOf<T> = Fixed<<T as FloatOps>::F, <T as FloatOps>::I, <T as FloatOps>::P>;
pub type StateOf<T> = State<<T as FloatOps>::F, <T as FloatOps>::I>;

/// Order 0 and 1 (the functions' own sequences) at either width.
fn order01<T: FloatOps>(o: &mut T, kind: Kind, x: T::F, wide: bool) -> (T::F, T::F) {
    use super::{bessel_j32 as f32s, bessel_j64 as f64s};
    match (kind, wide) {
        (Kind::J, false) => (f32s::j0f(o, x), f32s::j1f(o, x)),
        (Kind::J, true) => (f64s::j0(o, x), f64s::j1(o, x)),
        (Kind::Y, false) => (f32s::y0f(o, x), f32s::y1f(o, x)),
        (Kind::Y, true) => (f64s::y0(o, x), f64s::y1(o, x)),
    }
}

/// Sign-extends the low 32 bits (at 64 bits; the value itself at 32).
fn sext32<T: FloatOps>(o: &mut T, v: T::I, wide: bool) -> T::I {
    if !wide {
        return v;
    }
    let s = o.shl(v, 32);
    o.sar(s, 32)
}

/// The low 32 bits as an unsigned value (at 64 bits; the value itself at 32).
fn low32<T: FloatOps>(o: &mut T, v: T::I, wide: bool) -> T::I {
    if !wide {
        return v;
    }
    let m = o.ic(0xffff_ffff);
    o.iand(v, m)
}

/// Everything before the loop: the orders 0 and 1, the special cases, which recurrence, and its start.
pub fn setup<T: FloatOps>(o: &mut T, kind: Kind, n: T::I, x: T::F, wide: bool) -> (FixedOf<T>, StateOf<T>) {
    let (v0, v1) = order01(o, kind, x, wide);
    let izero = o.ic(0);
    let (one_i, two_i) = (o.ic(1), o.ic(2));
    let is0 = o.ieq(n, izero);
    let is1 = o.ieq(n, one_i);
    let negn = o.slt(n, izero);
    let nan = o.fbits(if wide { 0xfff8_0000_0000_0000 } else { 0x7fff_ffff });
    let (zero, two) = (o.fc(0.0), o.fc(2.0));
    let t = o.div(two, x);
    let a = if wide { o.abs(x) } else { o.abs_ftz(x) };
    // Which recurrence (`jn`): backward where |x| is at most the threshold (or NaN).
    let backward = match kind {
        Kind::Y => o.lt(zero, zero),
        Kind::J if wide => {
            let nu = low32(o, n, wide);
            let nf = o.u2f(nu);
            let m1 = o.fc(-1.0);
            let lim = o.add(nf, m1);
            let past = o.lt(lim, a);
            o.not(past)
        }
        Kind::J => {
            let four = o.ic(4);
            let gt4 = o.ult(four, n);
            let inc = o.isel(gt4, one_i, izero);
            let m = o.iadd(n, inc);
            let mf = o.u2f(m);
            let past = o.lt(mf, a);
            o.not(past)
        }
    };
    // The backward recurrence's start: M = n + ⌊√(40n)⌋ (f32, `sqrt.approx`) or n + ⌊√(60n)⌋ (f64, `sqrt.rn`), in
    // 32-bit arithmetic; below 2 (only by wrapping) the result is −0.
    let c = o.ic(if wide { 60 } else { 40 });
    let nc = o.imul(n, c);
    let nc = low32(o, nc, wide);
    let ncf = o.u2f(nc);
    let r = if wide { o.sqrt(ncf) } else { o.sqrt_approx_ftz(ncf) };
    let r = o.trunc(r);
    let ri = o.f2i(r);
    let m = o.iadd(n, ri);
    let m = sext32(o, m, wide);
    let short = o.slt(m, two_i);
    let even = o.ic(0x7fff_fffe);
    let kstart = o.iand(m, even);
    // The forward recurrence: n − 1 steps.
    let fsteps = o.isub(n, one_i);
    // yn: x < 0 or NaN gives NaN, and |x| below the smallest normal (f32) or 1.0e−308 (f64) −1e9/|x| (f32) or
    // −(2/π)/x (f64).
    let (special, special_value) = match kind {
        Kind::J => {
            let sp = o.and(backward, short);
            let nz = o.fbits(if wide { 1 << 63 } else { 0x8000_0000 });
            let bad = o.or(sp, negn);
            let v = o.sel(negn, nan, nz);
            (bad, v)
        }
        Kind::Y => {
            let ge = o.le(zero, x);
            let bad_x = o.not(ge);
            let bad = o.or(negn, bad_x);
            let tiny = o.fbits(if wide { 0x0007_30d6_7819_e8d2 } else { 0x0080_0000 });
            let big_enough = o.le(tiny, a);
            let is_tiny = o.not(big_enough);
            let (c, d) = if wide { (o.fbits(0xbfe4_5f30_6dc9_c883), x) } else { (o.fbits(0xce6e_6b28), a) };
            let pole = o.div(c, d);
            let v = o.sel(bad, nan, pole);
            (o.or(bad, is_tiny), v)
        }
    };
    // Orders 0 and 1 take the functions themselves (checked first, as libdevice does).
    let low = o.or(is0, is1);
    let vl = o.sel(is0, v0, v1);
    let special_value = o.sel(low, vl, special_value);
    let special = o.or(low, special);
    let left = o.isel(backward, kstart, fsteps);
    let left = o.isel(special, izero, left);
    // Forward: y_0, y_1; backward: j_(M+1) = 0, j_M = 1.
    let one = o.fc(1.0);
    let prev = o.sel(backward, zero, v0);
    let cur = o.sel(backward, one, v1);
    let fixed = Fixed { n, x, t, backward, special, special_value };
    (fixed, State { prev, cur, res: zero, sum: zero, left, kd: one })
}

/// Whether the lane needs another step.
pub fn more<T: FloatOps>(o: &mut T, s: &StateOf<T>) -> T::P {
    let zero = o.ic(0);
    o.ult(zero, s.left)
}

/// One step of the lane's recurrence where `go`, else the state unchanged.
pub fn step<T: FloatOps>(o: &mut T, kind: Kind, f: &FixedOf<T>, s: &StateOf<T>, go: T::P, wide: bool) -> StateOf<T> {
    let one_i = o.ic(1);
    let np = o.neg(s.prev);
    // Forward, at order k = n − left (f32; f64 counts k in a float).
    let fwd = if wide {
        let p = o.mul(f.t, s.kd);
        o.fma(p, s.cur, np)
    } else {
        let k = o.isub(f.n, s.left);
        let kf = o.u2f(k);
        match kind {
            Kind::J => {
                let p = o.mul(s.cur, kf);
                o.fma_ftz(p, f.t, np)
            }
            Kind::Y => {
                let p = o.mul(f.t, kf);
                o.fma_ftz(p, s.cur, np)
            }
        }
    };
    let one = o.fc(1.0);
    let kd = o.add(s.kd, one);
    let left = o.isub(s.left, one_i);
    let mut next = State { prev: s.cur, cur: fwd, res: s.res, sum: s.sum, left, kd };
    if kind == Kind::J {
        // Backward, at order k = left: j_(k−1) = (2k/x)·j_k − j_(k+1) (f32: 2k/x by `div.rn`; f64: (2/x)·k).
        let kf = o.u2f(s.left);
        let v = if wide {
            let p = o.mul(f.t, kf);
            o.fma(p, s.cur, np)
        } else {
            let k2 = o.add(kf, kf);
            let q = o.div(k2, f.x);
            o.fma(s.cur, q, np)
        };
        // Past 1e15 (f64: as an f32), the four values times 1e−15.
        let m = if wide { o.abs_as_f32(v) } else { o.abs_ftz(v) };
        let lim = o.fbits(if wide { 0x430c_6bf5_2634_0000 } else { 0x5863_5fa9 });
        let big = o.lt(lim, m);
        let scale = o.fbits(if wide { 0x3cd2_03af_9ee7_5616 } else { 0x2690_1d7d });
        let mut scaled = [v, s.cur, s.res, s.sum];
        for w in &mut scaled {
            let ws = o.mul(*w, scale);
            *w = o.sel(big, ws, *w);
        }
        let [v, j, res, sum] = scaled;
        // The value at order n kept, and the even orders summed twice (k odd: order k − 1 is even).
        let n1 = o.iadd(f.n, one_i);
        let at_n = o.ieq(n1, s.left);
        let res = o.sel(at_n, v, res);
        let odd_bit = o.iand(s.left, one_i);
        let zero_i = o.ic(0);
        let odd = o.ult(zero_i, odd_bit);
        let two = o.fc(2.0);
        let sum2 = o.fma(v, two, sum);
        let sum = o.sel(odd, sum2, sum);
        let b = f.backward;
        next = State {
            prev: o.sel(b, j, next.prev),
            cur: o.sel(b, v, next.cur),
            res: o.sel(b, res, next.res),
            sum: o.sel(b, sum, next.sum),
            left,
            kd,
        };
    }
    State {
        prev: o.sel(go, next.prev, s.prev),
        cur: o.sel(go, next.cur, s.cur),
        res: o.sel(go, next.res, s.res),
        sum: o.sel(go, next.sum, s.sum),
        left: o.isel(go, next.left, s.left),
        kd: o.sel(go, next.kd, s.kd),
    }
}

/// The result: the special value, or `jn`'s backward value at order n normalized by j0 + 2·Σ j_2i (the sum
/// holds j0 twice), or the forward recurrence's last value (`yn`: −inf for NaN).
pub fn finish<T: FloatOps>(o: &mut T, kind: Kind, f: &FixedOf<T>, s: &StateOf<T>) -> T::F {
    let v = match kind {
        Kind::J => {
            let d = o.sub(s.sum, s.cur);
            let q = o.div(s.res, d);
            o.sel(f.backward, q, s.cur)
        }
        Kind::Y => {
            let nan = o.is_nan(s.cur);
            let ninf = o.fc(f64::NEG_INFINITY);
            o.sel(nan, ninf, s.cur)
        }
    };
    o.sel(f.special, f.special_value, v)
}

/// The CPU model of the loop codegen emits: `jnf`/`ynf` of an int32 order.
pub fn model32(kind: Kind, n: i32, x: f32) -> f32 {
    let o = &mut crate::model::M32;
    let (f, mut s) = setup(o, kind, n as u32, x, false);
    while more(o, &s) {
        s = step(o, kind, &f, &s, true, false);
    }
    finish(o, kind, &f, &s)
}

/// `jn`/`yn` on f64.
pub fn model64(kind: Kind, n: i32, x: f64) -> f64 {
    let o = &mut crate::model::M64;
    let (f, mut s) = setup(o, kind, n as i64 as u64, x, true);
    while more(o, &s) {
        s = step(o, kind, &f, &s, true, true);
    }
    finish(o, kind, &f, &s)
}

#[cfg(test)]
mod tests;
