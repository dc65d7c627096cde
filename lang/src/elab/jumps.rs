//! `break` and `continue`, desugared into flags so that the IR keeps only structured `if`/`for`/`while`.
//!
//! Every loop the elaborator runs (unrolled or runtime) has two flags, hidden variables of the frame: `skip`
//! (the rest of this iteration's body is skipped: set by `break` and `continue`) and `break` (no further
//! iteration runs). They are compile-time `bool`s while the jump is decided at compile time, and become `i1`
//! values once a runtime `if` joins a branch that jumped with one that did not. `exec_block` checks `skip`
//! before each statement: it stops if the flag is `True`, and puts the rest of the block under
//! `if not skip:` if it is a runtime value, so statements only ever run where `skip` is known to be `False`.
//!
//! Loops then consume the flags:
//! - unrolled loops (`tl.static_range`, tuples, compile-time `while`) start each iteration with `skip = break`
//!   and stop unrolling once `break` is `True`;
//! - a runtime `for` or `while` with a `break` becomes a `while` op that also carries the `break` flag (and the
//!   induction variable of a `for`): the loop exits once it is set, and a `while` condition is not evaluated
//!   again after a `break`, as in Python. `tl.range` attributes do not apply to such a loop;
//! - a `continue` alone needs no change of loop: the rest of the body sits under `if not skip:`.
//!
//! Triton's own frontend rejects `break` and `continue` in `@jit` code; this is Python's semantics.

use std::collections::HashMap;

use tessel_tile::ops::{CmpPred, Op};
use tessel_tile::{ScalarType, Type};

use crate::ast::{Expr, Stmt};
use crate::elab::scope::{FLAG_PREFIX, JumpFlags};
use crate::elab::stmt::Flow;
use crate::elab::value::{RangeVal, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

impl<'a> Elab<'a> {
    /// Enters a loop: fresh flags, both `False`.
    pub fn push_jumps(&mut self) {
        let n = self.frame().jumps.len();
        let flags = JumpFlags { skip: format!("{FLAG_PREFIX}skip{n}"), brk: format!("{FLAG_PREFIX}break{n}") };
        self.frame().vars.insert(flags.skip.clone(), Value::Bool(false));
        self.frame().vars.insert(flags.brk.clone(), Value::Bool(false));
        self.frame().jumps.push(flags);
    }

    /// Leaves a loop; returns its `break` flag.
    pub fn pop_jumps(&mut self) -> Value<'a> {
        let flags = self.frame().jumps.pop().expect("inside a loop");
        self.frame().vars.remove(&flags.skip);
        self.frame().vars.remove(&flags.brk).unwrap_or(Value::Bool(false))
    }

    fn flags(&self) -> Option<&JumpFlags> {
        self.frames.last().and_then(|f| f.jumps.last())
    }

    fn flag(&self, name: &str) -> Value<'a> {
        self.frames.last().and_then(|f| f.vars.get(name)).cloned().unwrap_or(Value::Bool(false))
    }

    /// The innermost loop's `skip` flag, if inside a loop.
    pub fn skip_flag(&self) -> Option<Value<'a>> {
        self.flags().map(|f| self.flag(&f.skip))
    }

    /// The innermost loop's `break` flag (`False` outside loops).
    pub fn break_flag(&self) -> Value<'a> {
        self.flags().map_or(Value::Bool(false), |f| self.flag(&f.brk))
    }

    /// `break` (`brk`) or `continue`: sets the innermost loop's flags; `false` if not inside a loop.
    pub fn jump(&mut self, brk: bool) -> bool {
        let Some(flags) = self.flags().cloned() else { return false };
        self.frame().vars.insert(flags.skip, Value::Bool(true));
        if brk {
            self.frame().vars.insert(flags.brk, Value::Bool(true));
        }
        true
    }

    /// In the branches of `if not skip:` the runtime `skip` flag is known: `False` in the then-branch, `True` in
    /// the else-branch. If `break` is the same runtime value (an unrolled iteration starts with
    /// `skip = break`), so is it.
    pub fn known_skip(&mut self, skip: bool) {
        let Some(flags) = self.flags().cloned() else { return };
        let cur = self.flag(&flags.skip);
        if let (Value::Tensor(s), Value::Tensor(b)) = (&cur, &self.flag(&flags.brk))
            && s.v == b.v
        {
            self.frame().vars.insert(flags.brk, Value::Bool(skip));
        }
        self.frame().vars.insert(flags.skip, Value::Bool(skip));
    }

    /// A flag as an `i1` value.
    pub fn flag_tensor(&mut self, v: &Value<'a>, span: Span) -> R<Tv> {
        let t = self.to_tensor(v, span)?;
        self.cast(t, crate::elab::value::Dtype::Scalar(ScalarType::I1), span)
    }

    /// `not t` for an `i1` scalar.
    pub fn negate(&mut self, t: Tv, span: Span) -> R<Tv> {
        let ty = t.ty.clone();
        self.emit1(Op::Unary(tessel_tile::ops::UnOp::Not), &[t], ty, span)
    }

    /// The rest of a loop body after a jump taken at run time: `if not skip: <stmts>`.
    pub fn guard_rest(&mut self, skip: Tv, stmts: &[&'a Stmt], span: Span) -> R<()> {
        let c = self.negate(skip, span)?;
        self.branches(c, stmts, &[], true, span)
    }

    /// Adds the innermost loop's flags to the values an `if` yields, where its branches leave them different.
    pub fn join_jump_flags(
        &mut self,
        then_vars: &HashMap<String, Value<'a>>,
        else_vars: &HashMap<String, Value<'a>>,
        joined: &mut Vec<String>,
        tv: &mut Vec<Value<'a>>,
        ev: &mut Vec<Value<'a>>,
        span: Span,
    ) -> R<()> {
        let Some(flags) = self.flags().cloned() else { return Ok(()) };
        for name in [flags.skip, flags.brk] {
            let a = then_vars.get(&name).cloned().unwrap_or(Value::Bool(false));
            let b = else_vars.get(&name).cloned().unwrap_or(Value::Bool(false));
            let same = match (&a, &b) {
                (Value::Bool(x), Value::Bool(y)) => x == y,
                (Value::Tensor(x), Value::Tensor(y)) => x.v == y.v,
                _ => false,
            };
            if same {
                self.frame().vars.insert(name, a);
                continue;
            }
            // Constants made here, before the `if` op, are visible in both branches.
            let (a, b) = (self.flag_tensor(&a, span)?, self.flag_tensor(&b, span)?);
            joined.push(name);
            tv.push(Value::Tensor(a));
            ev.push(Value::Tensor(b));
        }
        Ok(())
    }

    /// A loop unrolled at compile time over `items`.
    pub fn unrolled(
        &mut self,
        target: &'a Expr,
        items: Vec<Value<'a>>,
        body: &'a [Stmt],
        orelse: &'a [Stmt],
        span: Span,
    ) -> R<Flow<'a>> {
        let block: Vec<&'a Stmt> = body.iter().collect();
        self.push_jumps();
        for item in items {
            let brk = self.break_flag();
            if brk.truth() == Some(true) {
                break;
            }
            let skip = self.flags().expect("pushed").skip.clone();
            self.frame().vars.insert(skip, brk);
            self.assign(target, item, false)?;
            if let r @ Flow::Return(_) = self.exec_block(&block, None)? {
                self.pop_jumps();
                return Ok(r);
            }
        }
        let brk = self.pop_jumps();
        self.loop_else(brk, orelse, span)
    }

    /// A compile-time `while` (in code that runs at compile time only).
    pub fn unrolled_while(&mut self, test: &'a Expr, body: &'a [Stmt], span: Span) -> R<Flow<'a>> {
        let block: Vec<&'a Stmt> = body.iter().collect();
        self.push_jumps();
        for _ in 0..1_000_000 {
            let c = self.eval(test)?;
            match c.truth() {
                Some(true) => {}
                Some(false) => {
                    self.pop_jumps();
                    return Ok(Flow::Normal);
                }
                None => return Err(self.err(test.span, "a compile-time `while` needs a compile-time condition")),
            }
            let skip = self.flags().expect("pushed").skip.clone();
            self.frame().vars.insert(skip, Value::Bool(false));
            if let r @ Flow::Return(_) = self.exec_block(&block, None)? {
                self.pop_jumps();
                return Ok(r);
            }
            if self.break_flag().truth() == Some(true) {
                self.pop_jumps();
                return Ok(Flow::Normal);
            }
        }
        Err(self.err(span, "compile-time `while` loop did not finish after 1000000 iterations"))
    }

    /// The `else` block of an unrolled loop: it runs unless the loop was left by `break`.
    fn loop_else(&mut self, brk: Value<'a>, orelse: &'a [Stmt], span: Span) -> R<Flow<'a>> {
        let block: Vec<&'a Stmt> = orelse.iter().collect();
        match brk {
            Value::Tensor(b) if !block.is_empty() => {
                let c = self.negate(b, span)?;
                self.branches(c, &block, &[], false, span)?;
                Ok(Flow::Normal)
            }
            Value::Bool(true) | Value::Tensor(_) => Ok(Flow::Normal),
            _ => self.exec_block(&block, None),
        }
    }

    /// A runtime `for` whose body has a `break`: `while iv < ub and not broken`, carrying the induction
    /// variable, the flag and the body's variables.
    pub fn runtime_for_break(&mut self, target: &'a Expr, r: &RangeVal<'a>, body: &'a [Stmt], span: Span) -> R<()> {
        let Some(iv_name) = target.as_name() else {
            return Err(self.err(target.span, "the target of a runtime `for` loop must be a single name"));
        };
        let (bounds, iv_ty, negative) = self.loop_bounds(r, span)?;
        let carried = self.carried(body, Some(iv_name));
        let not_broken = self.constant(tessel_tile::ops::Const::Int(0), Type::scalar(ScalarType::I1), span)?;
        let mut inits = vec![bounds[0].clone(), not_broken];
        carried.iter().for_each(|(_, v)| v.flatten(&mut inits));
        let types: Vec<Type> = inits.iter().map(|t| t.ty.clone()).collect();
        let before = self.func.new_region();
        let after = self.func.new_region();
        let region_args = |this: &mut Self, region| {
            let iv = this.func.add_region_arg(region, Type::scalar(iv_ty), Some(iv_name.to_string()));
            let brk = this.func.add_region_arg(region, Type::scalar(ScalarType::I1), None);
            let rest = this.region_args(region, &carried);
            (Tv::new(iv, Type::scalar(iv_ty)), Tv::new(brk, Type::scalar(ScalarType::I1)), rest)
        };
        let (b_iv, b_brk, b_rest) = region_args(self, before);
        let (a_iv, _, a_rest) = region_args(self, after);
        let snapshot = self.frame().vars.clone();
        self.in_region(before, |this| {
            let lt = this.emit1(Op::Cmp(CmpPred::Lt), &[b_iv.clone(), bounds[1].clone()], b_brk.ty.clone(), span)?;
            let go = this.negate(b_brk.clone(), span)?;
            let c = this.arith(tessel_tile::ops::BinOp::And, lt, go, span)?;
            let mut operands = vec![c, b_iv.clone(), b_brk.clone()];
            operands.extend(b_rest.iter().cloned());
            this.emit(Op::Condition, &operands, vec![], span)?;
            Ok(())
        })?;
        self.in_region(after, |this| {
            let iv_value = this.iv_value(&a_iv, &bounds, negative, span)?;
            this.frame().vars.insert(iv_name.to_string(), Value::Tensor(iv_value));
            this.bind_carried(&carried, &a_rest);
            let leaves = this.loop_body(body, &carried, "`for`", span)?;
            let next = this.arith(tessel_tile::ops::BinOp::Add, a_iv.clone(), bounds[2].clone(), span)?;
            let mut yields = vec![next];
            yields.extend(leaves);
            this.emit(Op::Yield, &yields, vec![], span)
        })?;
        self.frame().vars = snapshot;
        let results = self.emit_with_regions(Op::While, &inits, types, &[before, after], span)?;
        self.rebind(&carried, results[2..].to_vec());
        Ok(())
    }

    /// A runtime `while` whose body has a `break`: the flag is carried, and the condition is
    /// `False if broken else <test>`.
    pub fn runtime_while_break(&mut self, test: &'a Expr, body: &'a [Stmt], span: Span) -> R<()> {
        let carried = self.carried(body, None);
        let i1 = Type::scalar(ScalarType::I1);
        let not_broken = self.constant(tessel_tile::ops::Const::Int(0), i1.clone(), span)?;
        let mut inits = vec![not_broken];
        carried.iter().for_each(|(_, v)| v.flatten(&mut inits));
        let types: Vec<Type> = inits.iter().map(|t| t.ty.clone()).collect();
        let before = self.func.new_region();
        let after = self.func.new_region();
        let b_brk = Tv::new(self.func.add_region_arg(before, i1.clone(), None), i1.clone());
        let b_rest = self.region_args(before, &carried);
        self.func.add_region_arg(after, i1.clone(), None);
        let a_rest = self.region_args(after, &carried);
        let snapshot = self.frame().vars.clone();
        self.in_region(before, |this| {
            this.bind_carried(&carried, &b_rest);
            let (stop, test_r) = (this.func.new_region(), this.func.new_region());
            this.in_region(stop, |this| {
                let f = this.constant(tessel_tile::ops::Const::Int(0), i1.clone(), span)?;
                this.emit(Op::Yield, &[f], vec![], span)
            })?;
            this.in_region(test_r, |this| {
                let c = this.eval(test)?;
                let c = this.condition(c, test.span)?;
                this.emit(Op::Yield, &[c], vec![], test.span)
            })?;
            let c = this.emit_with_regions(
                Op::If,
                std::slice::from_ref(&b_brk),
                vec![i1.clone()],
                &[stop, test_r],
                test.span,
            )?;
            let mut operands = c;
            operands.push(b_brk.clone());
            operands.extend(b_rest.iter().cloned());
            this.emit(Op::Condition, &operands, vec![], test.span)?;
            Ok(())
        })?;
        self.frame().vars = snapshot.clone();
        self.in_region(after, |this| {
            this.bind_carried(&carried, &a_rest);
            let leaves = this.loop_body(body, &carried, "`while`", span)?;
            this.emit(Op::Yield, &leaves, vec![], span)
        })?;
        self.frame().vars = snapshot;
        let results = self.emit_with_regions(Op::While, &inits, types, &[before, after], span)?;
        self.rebind(&carried, results[1..].to_vec());
        Ok(())
    }

    /// Runs the body of a runtime loop with a `break`; returns what it yields: the `break` flag, then the carried
    /// values' leaves.
    fn loop_body(&mut self, body: &'a [Stmt], carried: &[(String, Value<'a>)], kind: &str, span: Span) -> R<Vec<Tv>> {
        self.frame().runtime_loops += 1;
        self.push_jumps();
        let flow = self.exec_block(&body.iter().collect::<Vec<_>>(), None);
        let brk = self.pop_jumps();
        self.frame().runtime_loops -= 1;
        self.no_jump(flow?)?;
        let brk = self.flag_tensor(&brk, span)?;
        let mut leaves = vec![brk];
        leaves.extend(self.loop_yields(carried, kind, span)?);
        Ok(leaves)
    }
}
