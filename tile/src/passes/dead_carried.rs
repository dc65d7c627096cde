//! Loop-carried values nobody reads: a `for` slot whose result is unused after the loop and whose body argument is
//! unused in the body (or only handed back in its own slot) is dropped: its initial value, its argument, what the
//! body yields for it and its result.
//!
//! Python's scoping carries every name that exists before a loop and is assigned in it, whether or not anything
//! reads the previous iteration's value: a kernel that peels a loop's first iteration (`k = desc.load(...)`
//! before the loop and again in it) carries `k` through the loop. Triton's frontend makes the same `scf.for`
//! arguments and MLIR's canonicalization removes the dead ones. Left in place, such a slot keeps the iteration's
//! last tile alive across the back edge, and the load that makes it has a second use, the yield, so the software
//! pipeliner, which stages a load only when its every use is a dot's operand, leaves it as written.

use crate::ir::{Func, ValueDef};
use crate::ops::Op;

/// Drops the dead slots of every `for` (see the module comment); whether any was dropped. One count of uses for
/// the whole kernel: dropping a slot only lowers other values' counts, so a count left high can only keep a slot
/// that a later round of `canonicalize` drops, never drop a live one, and the pass stays linear in the kernel.
pub fn drop_dead_carried(f: &mut Func) -> bool {
    let mut changed = false;
    let uses = f.use_counts();
    for o in f.all_ops() {
        if !matches!(f.op(o).op, Op::For(_)) {
            continue;
        }
        let body = f.op(o).regions[0];
        let Some(&yield_op) = f.region(body).ops.last().filter(|&&y| matches!(f.op(y).op, Op::Yield)) else {
            continue;
        };
        let (args, yielded, results) =
            (f.region(body).args.clone(), f.op(yield_op).operands.clone(), f.op(o).results.clone());
        if yielded.len() != results.len() || args.len() != results.len() + 1 {
            continue;
        }
        let dead = |i: usize| {
            let (arg, result) = (args[1 + i], results[i]);
            let own_yield = u32::from(yielded[i] == arg);
            uses[result.index()] == 0 && uses[arg.index()] == own_yield
        };
        let keep: Vec<usize> = (0..results.len()).filter(|&i| !dead(i)).collect();
        if keep.len() == results.len() {
            continue;
        }
        let operands = f.op(o).operands.clone();
        let d = f.op_mut(o);
        d.operands = operands[..3].iter().copied().chain(keep.iter().map(|&i| operands[3 + i])).collect();
        d.results = keep.iter().map(|&i| results[i]).collect();
        f.op_mut(yield_op).operands = keep.iter().map(|&i| yielded[i]).collect();
        f.region_mut(body).args = std::iter::once(args[0]).chain(keep.iter().map(|&i| args[1 + i])).collect();
        for (k, &i) in keep.iter().enumerate() {
            f.values[results[i].index()].def = ValueDef::Result(o, k as u32);
            f.values[args[1 + i].index()].def = ValueDef::Arg(body, 1 + k as u32);
        }
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_func;
    use crate::print::print_func;
    use crate::verify::verify;

    fn run(text: &str) -> String {
        let mut f = parse_func(text).unwrap();
        super::drop_dead_carried(&mut f);
        crate::passes::dce(&mut f);
        verify(&f).unwrap_or_else(|e| panic!("{e}\n{}", print_func(&f)));
        print_func(&f)
    }

    #[test]
    fn a_slot_nobody_reads_is_dropped_and_the_others_renumbered() {
        // %k: assigned in the body before any read, unused after the loop: dropped. %s: read by the body and
        // after the loop. %t: only handed back to itself, unused after: dropped too.
        let out = run("func @f(%p: ptr<f32>, %n: i32) {
  %z = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %x = constant {value = 0.0} : f32
  %r_k, %r_s, %r_t = for %z, %n, %one, %x, %x, %x : f32, f32, f32 {
  ^(%i: i32, %k: f32, %s: f32, %t: f32):
    %q = addptr %p, %i : ptr<f32>
    %k2 = load %q : f32
    %s2 = add %s, %k2 : f32
    yield %k2, %s2, %t
  }
  store %p, %r_s
  return
}
");
        assert!(out.contains("for %z, %n, %one, %x : f32 {"), "{out}");
        assert!(out.contains("^(%i: i32, %s: f32):"), "{out}");
        assert!(out.contains("yield %s2"), "{out}");
        assert!(out.contains("store %p, %r_s"), "{out}");
        // The load stays: the sum reads it.
        assert!(out.contains("load %q"), "{out}");
    }

    #[test]
    fn slots_read_after_the_loop_or_in_the_body_stay() {
        let text = "func @f(%p: ptr<f32>, %n: i32) {
  %z = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %x = constant {value = 0.0} : f32
  %r_a, %r_b = for %z, %n, %one, %x, %x : f32, f32 {
  ^(%i: i32, %a: f32, %b: f32):
    %q = addptr %p, %i : ptr<f32>
    %v = load %q : f32
    store %q, %a
    yield %v, %v
  }
  store %p, %r_b
  return
}
";
        let mut f = parse_func(text).unwrap();
        assert!(!super::drop_dead_carried(&mut f));
    }
}
