//! Loop-carried buffers that never change: a `for` or `while` that carries a shared- or tensor-memory buffer
//! (a memdesc) and hands it back unchanged every iteration (Gluon's aggregates carry their barriers and buffers
//! through a loop this way: `scheduler = scheduler.advance()`) has every use of that carried value, inside the
//! loop and after it, replaced by the buffer it starts with. The buffer is then named directly wherever it is
//! used, so the analyses that follow a buffer from its allocation (shared-memory allocation, barriers, tensor
//! memory's plan) see every access to it. The carried slot stays, unused.

use std::collections::HashMap;

use crate::ir::{Func, OpId, ValueId};
use crate::ops::Op;

/// Forwards the unchanged memdescs loops carry (see the module comment); whether any use changed.
pub fn forward_unchanged_buffers(f: &mut Func) -> bool {
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    for o in f.all_ops() {
        let d = f.op(o);
        let (inits, pairs) = match d.op {
            // Body args: the induction variable, then the carried values; the yield hands them back.
            Op::For(_) => {
                let body = d.regions[0];
                let args = &f.region(body).args;
                let yielded = terminator_operands(f, body);
                let pairs: Vec<Vec<(ValueId, ValueId)>> = (0..d.results.len())
                    .map(|i| vec![(args[1 + i], yielded.get(i).copied().unwrap_or(args[1 + i]))])
                    .collect();
                (&d.operands[3..], pairs)
            }
            // Before args go to the condition (after its flag), which passes them to the after args and the
            // results; the after region yields the next before args.
            Op::While => {
                let (before, after) = (d.regions[0], d.regions[1]);
                let (bargs, aargs) = (&f.region(before).args, &f.region(after).args);
                let cond = terminator_operands(f, before);
                let yielded = terminator_operands(f, after);
                if bargs.len() != d.operands.len() || aargs.len() != d.results.len() || aargs.len() != bargs.len() {
                    continue;
                }
                let pairs = (0..bargs.len())
                    .map(|i| {
                        let passed = cond.get(1 + i).copied().unwrap_or(bargs[i]);
                        let back = yielded.get(i).copied().unwrap_or(aargs[i]);
                        vec![(bargs[i], passed), (aargs[i], back)]
                    })
                    .collect();
                (&d.operands[..], pairs)
            }
            _ => continue,
        };
        for (i, (&init, pair)) in inits.iter().zip(&pairs).enumerate() {
            if !f.ty(init).is_memdesc() || !pair.iter().all(|&(arg, passed)| arg == passed) {
                continue;
            }
            for &(arg, _) in pair {
                map.insert(arg, init);
            }
            map.insert(d.results[i], init);
        }
    }
    if map.is_empty() {
        return false;
    }
    let before = f.use_counts();
    let changed = map.keys().any(|v| before[v.index()] > 0);
    f.replace_uses(&map);
    changed
}

/// The operands of the op ending region `r` (its `yield` or `condition`).
fn terminator_operands(f: &Func, r: crate::ir::RegionId) -> Vec<ValueId> {
    let last: Option<&OpId> = f.region(r).ops.last();
    last.map(|&o| f.op(o).operands.to_vec()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_while_that_hands_a_barrier_back_unchanged_names_the_barrier_inside() {
        let text = "func @k(%n: i32) {
  %bar = local_alloc : memdesc<1xi64, SwizzledSharedLayout(1,1,1,[0])>
  %z = constant {value = 0} : i32
  %i, %b = while %z, %bar : i32, memdesc<1xi64, SwizzledSharedLayout(1,1,1,[0])> {
  ^(%i0: i32, %b0: memdesc<1xi64, SwizzledSharedLayout(1,1,1,[0])>):
    %go = cmp {pred = lt} %i0, %n : i1
    condition %go, %i0, %b0
  } do {
  ^(%i1: i32, %b1: memdesc<1xi64, SwizzledSharedLayout(1,1,1,[0])>):
    mbarrier_init {count = 1} %b1
    %one = constant {value = 1} : i32
    %j = add %i1, %one : i32
    yield %j, %b1
  }
  mbarrier_invalidate %b
  return
}
";
        let mut f = crate::parse::parse_func(text).unwrap();
        assert!(forward_unchanged_buffers(&mut f));
        let printed = crate::print::print_func(&f);
        assert!(printed.contains("mbarrier_init {count = 1} %bar"), "{printed}");
        assert!(printed.contains("mbarrier_invalidate %bar"), "{printed}");
        // The counter changes every iteration: it stays carried.
        assert!(printed.contains("add %i1, %one"), "{printed}");
        crate::verify::verify(&f).unwrap();
        assert!(!forward_unchanged_buffers(&mut f), "a second run finds nothing left to forward");
    }
}
