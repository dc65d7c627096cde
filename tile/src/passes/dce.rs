//! Dead-code elimination: pure ops whose results are never used are removed, innermost first, until none
//! are left (removing one can make its operands dead).

use crate::ir::Func;

pub fn dce(f: &mut Func) -> bool {
    let mut changed = false;
    loop {
        let uses = f.use_counts();
        let dead: Vec<_> = f
            .all_ops()
            .into_iter()
            .filter(|&o| {
                let d = f.op(o);
                d.op.is_pure() && d.regions.is_empty() && d.results.iter().all(|r| uses[r.index()] == 0)
            })
            .collect();
        if dead.is_empty() {
            return changed;
        }
        for o in dead {
            f.unlink(o);
        }
        changed = true;
    }
}
