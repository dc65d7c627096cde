//! Where a pipelined body whose dots all run asynchronously ([`DotWait::AtReads`](crate::DotWait::AtReads))
//! waits for them.
//!
//! `wgmma.wait_group N` (`warpgroup_dot_wait {pending = N}`) returns once at most the `N` newest groups are in
//! flight. The body is walked in its final order with the dots in flight, oldest first, starting with those the
//! previous iteration left in flight; a wait goes before an op that needs a dot retired, `N` being the number of
//! dots issued after the newest one needed. An op needs a dot retired when:
//! - it reads the dot's result (this iteration's, or the previous one's through the value the loop carries),
//!   except the dot's own next instance accumulating onto it (the tensor cores chain wgmmas on one accumulator)
//!   and the `yield`;
//! - it is the dot's next instance and the dot reads A from registers: the same registers are written for it;
//! - it is another dot of the same iteration and the dot reads A from registers: those registers stay allocated
//!   until the wait, and the new dot's accumulator would come on top of them, the body's register peak (tutorial
//!   06's attention backward at head dim 64 spills otherwise). Across the back edge the iteration's temporaries
//!   are dead, so the last dot stays in flight into the next iteration's first dot;
//! - it starts the refill of the rings: the buffer refilled is the one the previous iteration read (the rings
//!   have a buffer more than the stages in flight), so every dot of the previous iteration is retired first.
//!
//! A wait names the retired results that are read after it (the interpreter, like the GPU, makes a result readable
//! only through a wait), and those readers read the wait's results instead. The dots in flight at the end of the
//! body are the ones the next iteration starts with: the placement runs again from them until that set is stable.
//! Attention backward's dk/dv loop (`qkT`, `dv`, `dpT`, `dk`) gets three waits per iteration: where `qkT` is read
//! (retiring the previous iteration's `dk` too), before `dpT` is issued (retiring `dv`, whose result only goes
//! back to the loop), where `dpT` is read; its dq loop (`qk`, `dp`, `dq`) two.

use std::collections::HashMap;

use tessel_tile::ir::{Func, OpId, RegionId, ValueId};
use tessel_tile::ops::Op;

/// A dot in flight: this iteration's instance, or the previous iteration's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Instance {
    Prev(OpId),
    Cur(OpId),
}

/// A wait before `order[at]`, leaving `pending` groups in flight and naming `values`.
struct Wait {
    at: usize,
    pending: u32,
    values: Vec<ValueId>,
}

/// The dots of the body and what the loop carries of them.
struct Body<'a> {
    f: &'a Func,
    order: &'a [OpId],
    /// Each dot's result as the next iteration sees it: the region argument it is yielded to.
    carried: HashMap<OpId, ValueId>,
}

impl Body<'_> {
    fn is_dot(&self, x: OpId) -> bool {
        matches!(self.f.op(x).op, Op::WarpGroupDot { .. })
    }

    fn value(&self, d: Instance) -> Option<ValueId> {
        match d {
            Instance::Cur(d) => Some(self.f.op(d).results[0]),
            Instance::Prev(d) => self.carried.get(&d).copied(),
        }
    }

    /// Whether op `x` (or an op nested in it) reads `v` in a way that needs its dot retired.
    fn reads(&self, x: OpId, v: ValueId) -> bool {
        let d = self.f.op(x);
        if d.op == Op::Yield {
            return false;
        }
        // The dot's next instance accumulating onto its previous result (the value the loop carries).
        let chained = |y: OpId, i: usize| y == x && i == 2 && self.is_dot(x) && self.carried.get(&x) == Some(&v);
        let mut read = false;
        self.f.walk_op(x, &mut |y| {
            read |= self.f.op(y).operands.iter().enumerate().any(|(i, &o)| o == v && !chained(y, i));
        });
        read
    }

    /// Whether `x` is a dot whose A operand is a register tensor.
    fn a_in_registers(&self, x: OpId) -> bool {
        self.is_dot(x) && !self.f.ty(self.f.op(x).operands[0]).is_memdesc()
    }

    /// The waits for an iteration that starts with `head` in flight, and the dots in flight at its end.
    fn waits(&self, head: &[OpId], refill_at: usize) -> (Vec<Wait>, Vec<OpId>) {
        let mut flight: Vec<Instance> = head.iter().map(|&d| Instance::Prev(d)).collect();
        let mut waits = Vec::new();
        for (i, &x) in self.order.iter().enumerate() {
            // Nothing of the previous iteration is left at the refill, nor (without a refill) at the yield.
            let flush = i == refill_at || self.f.op(x).op == Op::Yield;
            let newest = flight.iter().rposition(|&e| {
                let reads = self.value(e).is_some_and(|v| self.reads(x, v));
                match e {
                    Instance::Prev(d) => reads || flush || (d == x && self.a_in_registers(x)),
                    Instance::Cur(d) => reads || (self.is_dot(x) && self.a_in_registers(d)),
                }
            });
            if let Some(k) = newest {
                let pending = (flight.len() - 1 - k) as u32;
                let retired: Vec<Instance> = flight.drain(..=k).collect();
                let values = retired
                    .into_iter()
                    .filter_map(|e| self.value(e))
                    .filter(|&v| self.order[i..].iter().any(|&y| self.reads(y, v)))
                    .collect();
                waits.push(Wait { at: i, pending, values });
            }
            if self.is_dot(x) {
                flight.push(Instance::Cur(x));
            }
        }
        let end = flight
            .into_iter()
            .map(|e| match e {
                Instance::Cur(d) | Instance::Prev(d) => d,
            })
            .collect();
        (waits, end)
    }
}

/// Places the waits in `order` (the body's ops in their final order, ending in its `yield`), whose refill starts
/// at `order[refill_at]`: inserts the wait ops into region `body` and rewrites the reads after each; returns the
/// new order.
pub(crate) fn place(f: &mut Func, body: RegionId, order: &[OpId], refill_at: usize) -> Vec<OpId> {
    let (args, yield_op) = (&f.region(body).args, *order.last().expect("a body ends in its yield"));
    let yields = &f.op(yield_op).operands;
    let mut carried = HashMap::new();
    for &x in order.iter().filter(|&&x| matches!(f.op(x).op, Op::WarpGroupDot { .. })) {
        if let Some(j) = yields.iter().position(|&y| y == f.op(x).results[0]) {
            carried.insert(x, args[j + 1]);
        }
    }
    let b = Body { f, order, carried };
    // From nothing in flight to the set an iteration leaves, until an iteration leaves what it started with.
    let (mut waits, mut head) = b.waits(&[], refill_at);
    for _ in 0..order.len() {
        let (w, end) = b.waits(&head, refill_at);
        waits = w;
        if end == head {
            break;
        }
        head = end;
    }
    let loc = f.op(yield_op).loc;
    let mut out = Vec::with_capacity(order.len() + waits.len());
    let mut rename: HashMap<ValueId, ValueId> = HashMap::new();
    let mut waits = waits.into_iter().peekable();
    for (i, &x) in order.iter().enumerate() {
        if let Some(w) = waits.next_if(|w| w.at == i) {
            let types = w.values.iter().map(|&v| f.ty(v).clone()).collect();
            let op = f.append(body, Op::WarpGroupDotWait { pending: w.pending }, &w.values, types, &[], loc);
            f.region_mut(body).ops.pop();
            for (&v, &r) in w.values.iter().zip(&f.op(op).results.clone()) {
                rename.insert(v, r);
            }
            out.push(op);
        }
        let mut nested = Vec::new();
        f.walk_op(x, &mut |y| nested.push(y));
        for y in nested {
            for v in f.op_mut(y).operands.iter_mut() {
                if let Some(&r) = rename.get(v) {
                    *v = r;
                }
            }
        }
        out.push(x);
    }
    out
}
