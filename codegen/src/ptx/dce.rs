//! Dead-code elimination over the typed statements.
//!
//! Lowering emits per-register work eagerly: the address of every element of a vectorized access (only the
//! first of each vector is used), the product that a multiply-add contraction folded into an `fma`, constants
//! that a later fold made redundant. ptxas deletes all of that, but `--emit ptx` should not show it and
//! ptxas should not have to parse it. This pass removes pure instructions whose results no instruction reads,
//! to a fixpoint.
//!
//! Registers are not in SSA form (loop-carried values are reassigned with `mov`), so liveness is global and
//! conservative: a register is live when any remaining instruction reads it, or names it at all if the
//! instruction is not removable; then every write to it is kept. Only instructions whose opcode is pure
//! ([`Opcode::is_pure`](super::Opcode::is_pure)) and that write at least one register are ever removed, and
//! only when every register they write is dead. A guarded instruction reads its guard; its destination is
//! not read (the old value flows through where the guard is false, but if nothing reads the register
//! afterwards, neither value matters). Anything else (memory, control flow, barriers, shuffles, calls,
//! labels, comments) is kept, and every register an instruction mentions counts as read.

use std::collections::HashMap;

use super::{Reg, Stmt};

/// The registers a removable instruction writes; `None` for a statement that must stay.
fn removable_defs(s: &Stmt) -> Option<Vec<Reg>> {
    let Stmt::Ins(i) = s else { return None };
    if !i.op.is_pure() {
        return None;
    }
    let mut defs = Vec::new();
    i.for_each_def(&mut |r| defs.push(r));
    (!defs.is_empty()).then_some(defs)
}

/// Calls `f` on every register statement `s` reads: for a removable instruction its guard and sources, for
/// any other instruction every register it names.
fn for_each_read(s: &Stmt, removable: bool, f: &mut impl FnMut(Reg)) {
    if let Stmt::Asm { regs, .. } = s {
        regs.iter().copied().for_each(f);
        return;
    }
    let Stmt::Ins(i) = s else { return };
    i.for_each_use(f);
    if !removable {
        i.for_each_def(f);
    }
}

/// Which of `stmts` stay: `false` for the dead pure instructions.
pub fn live(stmts: &[&Stmt]) -> Vec<bool> {
    let defs: Vec<Option<Vec<Reg>>> = stmts.iter().map(|s| removable_defs(s)).collect();
    let mut reads: HashMap<Reg, u32> = HashMap::new();
    for (s, d) in stmts.iter().zip(&defs) {
        for_each_read(s, d.is_some(), &mut |r| *reads.entry(r).or_insert(0) += 1);
    }
    let mut alive = vec![true; stmts.len()];
    loop {
        let mut changed = false;
        for (i, d) in defs.iter().enumerate() {
            let Some(d) = d else { continue };
            if alive[i] && d.iter().all(|r| reads.get(r).copied().unwrap_or(0) == 0) {
                alive[i] = false;
                changed = true;
                for_each_read(stmts[i], true, &mut |r| *reads.get_mut(&r).expect("counted above") -= 1);
            }
        }
        if !changed {
            return alive;
        }
    }
}

/// The instructions of `stmts` that [`live`] keeps (for tests and passes that want the list).
pub fn eliminate(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let refs: Vec<&Stmt> = stmts.iter().collect();
    let keep = live(&refs);
    stmts.into_iter().zip(keep).filter_map(|(s, k)| k.then_some(s)).collect()
}

#[cfg(test)]
mod tests {
    use super::eliminate;
    use crate::ptx::{Instr, Operand, Reg, RegClass, Stmt, instr, mem, special, vector};

    fn r(n: u32) -> Reg {
        Reg { class: RegClass::B32, num: n }
    }
    fn rd(n: u32) -> Reg {
        Reg { class: RegClass::B64, num: n }
    }
    fn f(n: u32) -> Reg {
        Reg { class: RegClass::F32, num: n }
    }
    fn p(n: u32) -> Reg {
        Reg { class: RegClass::Pred, num: n }
    }
    fn h(n: u32) -> Reg {
        Reg { class: RegClass::B16, num: n }
    }

    fn text(stmts: &[Stmt]) -> String {
        stmts.iter().map(|s| format!("{s}\n")).collect()
    }

    #[test]
    fn dead_chains_go_and_everything_else_stays() {
        let code = vec![
            Stmt::Ins(instr("mov.u32").dst(r(1)).src(special("%tid.x"))),
            Stmt::Ins(instr("shl.b32").dst(r(2)).srcs((r(1), 3))),
            Stmt::Ins(instr("mul.wide.s32").dst(rd(2)).srcs((r(2), 2))),
            Stmt::Ins(instr("add.s64").dst(rd(3)).srcs((rd(1), rd(2)))),
            Stmt::Ins(instr("mul.rn.f32").dst(f(3)).srcs((f(1), f(2)))),
            Stmt::Ins(instr("fma.rn.f32").dst(f(4)).srcs((f(1), f(2), f(0)))),
            Stmt::Ins(instr("setp.lt.s32").dst(p(1)).srcs((r(2), r(9)))),
            Stmt::Ins(instr("st.global.b32").guard(p(1)).srcs((mem(rd(1)), f(4)))),
            Stmt::Ins(instr("ld.shared.v4.b32").dst(vector(&[r(5), r(6), r(7), r(8)])).src(mem(r(3)))),
            Stmt::Ins(instr("mov.b32").dst(vector(&[h(1), h(2)])).src(r(10))),
            Stmt::Ins(instr("mov.b32").dst(vector(&[h(3), h(4)])).src(r(11))),
            Stmt::Ins(instr("st.global.b16").srcs((mem(rd(1)), h(4)))),
            Stmt::Label("$L_loop".into()),
            Stmt::Ins(instr("add.s32").dst(r(20)).srcs((r(20), 1))),
            Stmt::Ins(Instr::bra("$L_loop").guard(p(1))),
        ];
        let out = text(&eliminate(code));
        // Dead: the unused address (mul.wide + add.s64), the product folded into the fma, and the unpack
        // whose halves nobody reads. Live: everything feeding the store, the load (not pure), the unpack with
        // one half read, the self-updating counter (it reads itself), control flow.
        for gone in ["mul.wide.s32", "add.s64", "mul.rn.f32", "{%h1, %h2}"] {
            assert!(!out.contains(gone), "{gone} should be gone:\n{out}");
        }
        for kept in
            ["%tid.x", "shl.b32", "fma.rn.f32", "setp.lt", "st.global.b32", "ld.shared", "{%h3, %h4}", "add.s32"]
        {
            assert!(out.contains(kept), "{kept} should stay:\n{out}");
        }
        assert!(out.contains("$L_loop:") && out.contains("bra $L_loop"), "{out}");
    }

    #[test]
    fn a_register_written_twice_and_read_once_keeps_both_writes() {
        // Not SSA: the read after the branch may see either write.
        let code = vec![
            Stmt::Ins(instr("mov.b32").dst(r(1)).src(0)),
            Stmt::Ins(Instr::bra("$L_a").guard(p(1))),
            Stmt::Ins(instr("mov.b32").dst(r(1)).src(7)),
            Stmt::Label("$L_a".into()),
            Stmt::Ins(instr("st.global.b32").srcs((mem(rd(1)), r(1)))),
        ];
        assert_eq!(eliminate(code.clone()), code);
    }

    #[test]
    fn two_predicate_destinations_are_dead_only_together() {
        let code = vec![
            Stmt::Ins(instr("setp.lt.s32").dst(Operand::PredPair(p(1), p(2))).srcs((r(1), r(2)))),
            Stmt::Ins(Instr::bra("$L_x").guard(p(2))),
            Stmt::Label("$L_x".into()),
            Stmt::Ins(instr("setp.lt.s32").dst(Operand::PredPair(p(3), p(4))).srcs((r(1), r(2)))),
        ];
        let out = text(&eliminate(code));
        assert!(out.contains("%p1|%p2") && !out.contains("%p3|%p4"), "{out}");
    }

    #[test]
    fn guards_are_read_and_effects_stay() {
        // The guard of a dead instruction is read only while that instruction lives; `.cc` forms, `ld.param`
        // and a guarded dead write.
        let code = vec![
            Stmt::Ins(instr("setp.ne.u32").dst(p(1)).srcs((r(1), 0))),
            Stmt::Ins(instr("mov.b32").guard(p(1)).dst(r(2)).src(5)),
            Stmt::Ins(instr("add.cc.u32").dst(r(3)).srcs((r(1), 1))),
            Stmt::Ins(instr("ld.param.b32").dst(r(4)).src(crate::ptx::mem_sym("retval0"))),
            Stmt::Ins(instr("shfl.sync.idx.b32").dst(r(6)).srcs((r(1), 0, 31, -1))),
        ];
        let out = text(&eliminate(code));
        assert!(!out.contains("setp") && !out.contains("mov.b32") && !out.contains("ld.param"), "{out}");
        assert!(out.contains("add.cc.u32") && out.contains("shfl.sync"), "{out}");
    }
}
