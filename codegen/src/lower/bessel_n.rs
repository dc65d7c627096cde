//! libdevice's `jn`/`yn` (`tessel_math::bessel::bessel_n`, which the interpreter runs too): the set-up and the finish
//! straight-line, the recurrence as a PTX loop. Each lane needs its own number of steps (it depends on its order
//! and on which recurrence its x takes), so the warp loops while any of its lanes needs a step (`vote.any`, a
//! uniform branch) and a lane with no step left goes through the iteration unchanged (the step's selects): every
//! lane runs exactly libdevice's steps.

use tessel_math::bessel::bessel_n::{Kind, State, finish, more, setup, step};
use tessel_tile::ir::OpData;
use tessel_tile::types::ScalarType::{F32, F64};

use super::arith::map_regs;
use super::fpops::Emit;
use super::{CompileError, Lower};
use crate::ptx::{Instr, Reg, RegClass};

/// `jn`/`yn` of the order (i32) and x (f32 or f64), element by element.
pub(crate) fn bessel_n(l: &mut Lower, data: &OpData, kind: Kind) -> Result<(), CompileError> {
    let s = l.scalar_of(data.results[0])?;
    if !matches!(s, F32 | F64) {
        let name = data.op.name();
        return Err(CompileError::new(format!("`{name}` is defined on f32 and f64 only, not {s}")));
    }
    let wide = s == F64;
    map_regs(l, data, |l, a| {
        let n = if wide {
            let d = l.b.reg(RegClass::B64);
            l.b.op("cvt.s64.s32", d, a[0]);
            d
        } else {
            a[0]
        };
        Ok(emit(l, kind, n, a[1], wide))
    })
}

/// A register of its own holding `r` (the loop writes its state registers, which must not be shared).
fn own(l: &mut Lower, r: Reg) -> Reg {
    let d = l.b.reg(r.class);
    l.mov(d, r);
    d
}

fn emit(l: &mut Lower, kind: Kind, n: Reg, x: Reg, wide: bool) -> Reg {
    let (f, s0) = setup(&mut Emit { l, wide }, kind, n, x, wide);
    let s = State {
        prev: own(l, s0.prev),
        cur: own(l, s0.cur),
        res: own(l, s0.res),
        sum: own(l, s0.sum),
        left: own(l, s0.left),
        kd: own(l, s0.kd),
    };
    let (head, end) = (l.b.new_label("besseln_head"), l.b.new_label("besseln_end"));
    l.b.label(&head);
    let go = more(&mut Emit { l, wide }, &s);
    let (m, any) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
    l.b.op("activemask.b32", m, ());
    l.b.op("vote.sync.any.pred", any, (go, m));
    l.b.emit(Instr::bra_uni(&end).unless(any));
    let next = step(&mut Emit { l, wide }, kind, &f, &s, go, wide);
    for (d, v) in [
        (s.prev, next.prev),
        (s.cur, next.cur),
        (s.res, next.res),
        (s.sum, next.sum),
        (s.left, next.left),
        (s.kd, next.kd),
    ] {
        l.mov(d, v);
    }
    l.b.emit(Instr::bra_uni(&head));
    l.b.label(&end);
    finish(&mut Emit { l, wide }, kind, &f, &s)
}
