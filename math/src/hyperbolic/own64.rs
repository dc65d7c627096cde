//! tessel's own f64 `tanh`, `sinh`, `cosh`, `asinh`, `atanh` (codegen's, for those libdevice functions on f64 and,
//! widened, f32; Triton reaches libdevice's, which we do not link): through `expm1`, `exp`, `log1p` and `log` of
//! [`crate::exp_log::own64`] without cancellation. Within 3 ulp (`tanh`, `sinh`, `cosh`) and 2 ulp (`asinh`,
//! `atanh`, measured at 1) of the correctly rounded value (`codegen/src/lower/libdevice/tests.rs`).

use crate::FloatOps;
use crate::exp_log::own64::{LN_MAX, LN2_HI, LN2_LO, exp_f64, expm1, log_f64, log1p};
use crate::steps64::copysign;

pub fn tanh<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let m2 = o.fc(-2.0);
    let t = o.mul(a, m2);
    let em = expm1(o, t);
    let two = o.fc(2.0);
    let d = o.add(em, two);
    let q = o.div(em, d);
    let q = o.neg(q);
    copysign(o, q, x)
}

/// (e^a)·(1/2) for a up to past the overflow threshold of e^a alone: (e^(a/2)/2)·e^(a/2).
fn half_exp_big<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let half = o.fc(0.5);
    let ah = o.mul(a, half);
    let e = exp_f64(o, ah);
    let eh = o.mul(e, half);
    o.mul(eh, e)
}

pub fn sinh<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let e = expm1(o, a);
    let one = o.fc(1.0);
    let e1 = o.add(e, one);
    let q = o.div(e, e1);
    let s = o.add(e, q);
    let half = o.fc(0.5);
    let s = o.mul(s, half);
    let big = o.fc(LN_MAX);
    let p = o.lt(big, a);
    let b = half_exp_big(o, a);
    let s = o.sel(p, b, s);
    copysign(o, s, x)
}

pub fn cosh<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let e = exp_f64(o, a);
    let half = o.fc(0.5);
    let h = o.mul(e, half);
    let inv = o.div(half, e);
    let c = o.add(h, inv);
    let big = o.fc(LN_MAX);
    let p = o.lt(big, a);
    let b = half_exp_big(o, a);
    o.sel(p, b, c)
}

/// log(a) + ln 2, for a beyond 2^28 (where √(a² ± 1) = a in f64).
fn log_twice<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let l = log_f64(o, a);
    let (h, lo) = (o.fbits(LN2_HI), o.fbits(LN2_LO));
    let l = o.add(l, lo);
    o.add(l, h)
}

pub fn asinh<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let one = o.fc(1.0);
    let a2 = o.mul(a, a);
    let s = o.add(a2, one);
    let s = o.sqrt(s);
    let d = o.add(one, s);
    let q = o.div(a2, d);
    let t = o.add(a, q);
    let r = log1p(o, t);
    let big = o.fc(268_435_456.0);
    let p = o.lt(big, a);
    let b = log_twice(o, a);
    let r = o.sel(p, b, r);
    copysign(o, r, x)
}

pub fn atanh<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let one = o.fc(1.0);
    let d = o.sub(one, a);
    let a2 = o.add(a, a);
    let q = o.div(a2, d);
    let l = log1p(o, q);
    let half = o.fc(0.5);
    let r = o.mul(l, half);
    copysign(o, r, x)
}
