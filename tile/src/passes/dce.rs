//! Dead-code elimination: pure ops whose results are never used are removed, and then those only they used,
//! until none are left. One count of uses and a worklist: removing an op decrements the counts of its operands,
//! and an operand's op whose results all reach zero is next, so a dead chain of n ops costs O(n), not n walks.

use std::collections::HashSet;

use crate::ir::{Func, OpId, ValueDef};

pub fn dce(f: &mut Func) -> bool {
    let mut uses = f.use_counts();
    let all = f.all_ops();
    let mut linked = vec![false; f.ops.len()];
    for &o in &all {
        linked[o.index()] = true;
    }
    let dead = |f: &Func, uses: &[u32], o: OpId| {
        let d = f.op(o);
        d.op.is_pure() && d.regions.is_empty() && d.results.iter().all(|r| uses[r.index()] == 0)
    };
    let mut work: Vec<OpId> = all.into_iter().filter(|&o| dead(f, &uses, o)).collect();
    let mut removed = HashSet::new();
    while let Some(o) = work.pop() {
        if !removed.insert(o) {
            continue;
        }
        for &v in &f.op(o).operands {
            uses[v.index()] -= 1;
            if uses[v.index()] == 0
                && let ValueDef::Result(p, _) = f.value(v).def
                && linked[p.index()]
                && dead(f, &uses, p)
            {
                work.push(p);
            }
        }
    }
    f.unlink_all(&removed);
    !removed.is_empty()
}
