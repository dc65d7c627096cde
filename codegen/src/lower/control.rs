//! Structured control flow: `for`, `if`, `while` become branches; loop-carried values live in registers that
//! the loop owns (fresh registers, copied in before the loop and at every `yield` through temporaries, so a
//! yield that permutes carried values is a correct parallel copy). `for` runs while `iv < ub` (signed for signed
//! types), i.e. it assumes a positive step, as Triton's `range` lowering does for non-constant steps.

use tessel_tile::ir::{OpData, ValueId};
use tessel_tile::ops::Op;
use tessel_tile::types::ScalarType;

use super::Lower;
use super::arith::ty;
use crate::CompileError;
use crate::ptx::{Instr, Reg, RegClass};

impl Lower<'_> {
    pub(crate) fn mov(&mut self, d: Reg, s: Reg) {
        let t = match d.class {
            RegClass::Pred => "pred".to_string(),
            RegClass::F32 => "f32".to_string(),
            RegClass::F64 => "f64".to_string(),
            c => format!("b{}", c.bits()),
        };
        self.b.op(format!("mov.{t}"), d, s);
    }

    /// Fresh registers shaped like `regs`.
    fn fresh_like(&mut self, regs: &[Reg]) -> Vec<Reg> {
        regs.iter().map(|r| self.b.reg(r.class)).collect()
    }

    fn all_regs(&self, vs: &[ValueId]) -> Result<Vec<Vec<Reg>>, CompileError> {
        vs.iter().map(|&v| self.get(v).map(|r| r.to_vec())).collect()
    }

    /// `dst := src` for every register, through temporaries.
    fn parallel_copy(&mut self, dst: &[Vec<Reg>], src: &[Vec<Reg>]) {
        let mut temps = Vec::new();
        for (d, s) in dst.iter().zip(src) {
            for (&dr, &sr) in d.iter().zip(s) {
                if dr != sr {
                    let t = self.b.reg(dr.class);
                    self.mov(t, sr);
                    temps.push((dr, t));
                }
            }
        }
        for (d, t) in temps {
            self.mov(d, t);
        }
    }
}

pub(crate) fn for_loop(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let body = data.regions[0];
    let iv_ty = l.scalar_of(data.operands[0])?;
    if !matches!(iv_ty, ScalarType::I32 | ScalarType::I64 | ScalarType::U32 | ScalarType::U64) {
        return Err(CompileError::new(format!("loop bounds of type {iv_ty} are not supported")));
    }
    let t = ty(iv_ty);
    let (lb, ub, step) = (l.get(data.operands[0])?[0], l.get(data.operands[1])?[0], l.get(data.operands[2])?[0]);
    let inits = l.all_regs(&data.operands[3..])?;
    // An asynchronous dot's result that only this loop reads enters it in its own registers: copying them would
    // read registers the tensor cores may still be writing, and ptxas then serializes every wgmma of the kernel
    // (C7511). Every other value is copied into fresh registers.
    let carried: Vec<Vec<Reg>> = data.operands[3..]
        .iter()
        .zip(&inits)
        .map(|(&v, r)| {
            let in_flight =
                l.producer.get(&v).is_some_and(|&p| matches!(l.f.op(p).op, Op::WarpGroupDot { is_async: true, .. }));
            if in_flight && l.uses[v.index()] == 1 { r.clone() } else { l.fresh_like(r) }
        })
        .collect();
    let iv = l.b.reg(lb.class);
    l.mov(iv, lb);
    for (c, i) in carried.iter().zip(&inits) {
        for (&d, &s) in c.iter().zip(i) {
            if d != s {
                l.mov(d, s);
            }
        }
    }
    let (head, end) = (l.b.new_label("for_head"), l.b.new_label("for_end"));
    l.b.label(&head);
    // Shared memory: an iteration starts with what the previous one left pending.
    l.hazards = l.loop_head(&[body], l.hazards.clone());
    let at_head = l.hazards.clone();
    let p = l.b.reg(RegClass::Pred);
    l.b.op(format!("setp.ge.{t}"), p, (iv, ub));
    l.b.emit(Instr::bra(&end).guard(p));
    let args = l.f.region(body).args.clone();
    l.vals.insert(args[0], vec![iv]);
    for (a, c) in args[1..].iter().zip(&carried) {
        l.vals.insert(*a, c.clone());
    }
    // An asynchronous dot whose result goes back to a carried value accumulates in that value's registers:
    // copying its result at the back edge would read registers the tensor cores may still be writing.
    let yields = l.f.op(*l.f.region(body).ops.last().expect("verified: a body ends in yield")).operands.clone();
    for (y, c) in yields.iter().zip(&carried) {
        if let Some(&p) = l.producer.get(y)
            && matches!(l.f.op(p).op, Op::WarpGroupDot { is_async: true, .. })
            && l.f.op(p).parent == Some(body)
        {
            l.dot_dest.insert(*y, c.clone());
        }
    }
    let ys = l.region(body)?;
    l.in_flight.check_back_edge(l, body)?;
    let yregs = l.all_regs(&ys)?;
    l.parallel_copy(&carried, &yregs);
    l.b.op(format!("add.{t}"), iv, (iv, step));
    l.b.emit(Instr::bra_uni(&head));
    l.b.label(&end);
    l.hazards.merge(&at_head);
    for (r, c) in data.results.iter().zip(carried) {
        l.vals.insert(*r, c);
    }
    Ok(())
}

pub(crate) fn if_op(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let cond = l.get(data.operands[0])?[0];
    let mut outs: Vec<Vec<Reg>> = Vec::new();
    for &r in &data.results {
        let n = l.num_regs(l.f.ty(r))?;
        let class = super::class_of(l.elem_of(r)?)?;
        outs.push((0..n).map(|_| l.b.reg(class)).collect());
    }
    let (els, end) = (l.b.new_label("else"), l.b.new_label("endif"));
    l.b.emit(Instr::bra(&els).unless(cond));
    let before = l.hazards.clone();
    let ys = l.region(data.regions[0])?;
    let yregs = l.all_regs(&ys)?;
    l.parallel_copy(&outs, &yregs);
    l.b.emit(Instr::bra_uni(&end));
    l.b.label(&els);
    let after_then = std::mem::replace(&mut l.hazards, before);
    if let Some(&r) = data.regions.get(1) {
        let ys = l.region(r)?;
        let yregs = l.all_regs(&ys)?;
        l.parallel_copy(&outs, &yregs);
    }
    l.b.label(&end);
    l.hazards.merge(&after_then);
    for (r, o) in data.results.iter().zip(outs) {
        l.vals.insert(*r, o);
    }
    Ok(())
}

pub(crate) fn while_loop(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (before, after) = (data.regions[0], data.regions[1]);
    let inits = l.all_regs(&data.operands)?;
    let carried: Vec<Vec<Reg>> = inits.iter().map(|r| l.fresh_like(r)).collect();
    l.parallel_copy(&carried, &inits);
    let (head, end) = (l.b.new_label("while_head"), l.b.new_label("while_end"));
    l.b.label(&head);
    l.hazards = l.loop_head(&[before, after], l.hazards.clone());
    let at_head = l.hazards.clone();
    for (a, c) in l.f.region(before).args.clone().iter().zip(&carried) {
        l.vals.insert(*a, c.clone());
    }
    let cv = l.region(before)?;
    let Some((&cond, rest)) = cv.split_first() else {
        return Err(CompileError::new("`while` before-region must end in `condition`"));
    };
    let c = l.get(cond)?[0];
    let rest_regs = l.all_regs(rest)?;
    // The results (and the after region's arguments) are shaped like what the condition passes: registers of any
    // value, memdescs and cluster launch control responses included.
    let outs: Vec<Vec<Reg>> = rest_regs.iter().map(|r| l.fresh_like(r)).collect();
    l.parallel_copy(&outs, &rest_regs);
    l.b.emit(Instr::bra(&end).unless(c));
    for (a, o) in l.f.region(after).args.clone().iter().zip(&outs) {
        l.vals.insert(*a, o.clone());
    }
    let ys = l.region(after)?;
    let yregs = l.all_regs(&ys)?;
    l.parallel_copy(&carried, &yregs);
    l.b.emit(Instr::bra_uni(&head));
    l.b.label(&end);
    l.hazards.merge(&at_head);
    for (r, o) in data.results.iter().zip(outs) {
        l.vals.insert(*r, o);
    }
    Ok(())
}
