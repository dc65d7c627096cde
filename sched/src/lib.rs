//! tessel-sched owns loop scheduling: the latency model, the CoarseSchedule (a stage and a cluster for every op
//! of a loop body), loop expansion into prologue / steady state / epilogue with multi-buffered shared memory and
//! mbarrier phases, and the lowering of warp-specialized partitions. It reads layout IR and writes layout IR;
//! codegen runs after it.
//!
//! The schedule is computed for every `for` loop ([`schedule`]) and printed by `tessel compile --emit sched`
//! ([`print`]). Loop expansion is not implemented yet, so every op is scheduled in stage 0 (the loop runs as
//! written) and the printout says so.

use std::fmt::Write;

use tessel_tile::ir::{Func, OpId};
use tessel_tile::ops::Op;

/// The schedule of one loop: for each op of its body, in program order, the stage (how many iterations ahead
/// of the loop's current one it runs) and the cluster (its order among the ops emitted together).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoarseSchedule {
    /// The `for` op.
    pub loop_op: OpId,
    /// The pipelining depth asked for: the loop's `num_stages` (from `tl.range`), else the kernel's.
    pub requested_stages: u32,
    /// `(op, stage, cluster)` for the ops of the body, terminator excluded.
    pub ops: Vec<(OpId, u32, u32)>,
    /// Why the loop is scheduled the way it is.
    pub reason: &'static str,
}

impl CoarseSchedule {
    /// The number of stages the schedule uses (1 + the largest stage).
    pub fn num_stages(&self) -> u32 {
        1 + self.ops.iter().map(|&(_, s, _)| s).max().unwrap_or(0)
    }
}

/// The schedule of every `for` loop of `f`, outermost first.
pub fn schedule(f: &Func) -> Vec<CoarseSchedule> {
    let mut out = Vec::new();
    for o in f.all_ops() {
        let d = f.op(o);
        let Op::For(attrs) = &d.op else { continue };
        let requested_stages = attrs.num_stages.unwrap_or(f.config.num_stages);
        let body = f.region(d.regions[0]);
        let ops = body.ops.iter().filter(|&&x| !f.op(x).op.is_terminator()).map(|&x| (x, 0, 0)).collect();
        let reason = if requested_stages <= 1 {
            "num_stages = 1: the loop runs as written"
        } else {
            "loop expansion (the software pipeliner) is not implemented yet: the loop runs as written"
        };
        out.push(CoarseSchedule { loop_op: o, requested_stages, ops, reason });
    }
    out
}

/// The schedules as text: one block per loop, one line per op with its stage and cluster.
pub fn print(f: &Func, schedules: &[CoarseSchedule]) -> String {
    let mut s = String::new();
    if schedules.is_empty() {
        let _ = writeln!(s, "// @{}: no loops to schedule", f.name);
    }
    for sch in schedules {
        let _ = writeln!(
            s,
            "// @{} loop {} (num_stages requested {}, scheduled {}): {}",
            f.name,
            sch.loop_op,
            sch.requested_stages,
            sch.num_stages(),
            sch.reason
        );
        for &(o, stage, cluster) in &sch.ops {
            let d = f.op(o);
            let res: Vec<String> = d
                .results
                .iter()
                .map(|&v| f.value(v).name.as_ref().map_or_else(|| v.to_string(), |n| format!("%{n}")))
                .collect();
            let lhs = if res.is_empty() { String::new() } else { format!("{} = ", res.join(", ")) };
            let _ = writeln!(s, "  stage {stage} cluster {cluster}  {o}: {lhs}{}", d.op.name());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = "func @k(%n: i32) attributes {num_stages = 4} {
  %lb = constant {value = 0} : i32
  %step = constant {value = 1} : i32
  %init = constant {value = 0.0} : f32
  %r = for %lb, %n, %step, %init : f32 {
  ^(%i: i32, %acc: f32):
    %one = constant {value = 1.0} : f32
    %next = add %acc, %one : f32
    yield %next
  }
  return
}
";

    #[test]
    fn every_body_op_of_every_loop_is_scheduled_in_order() {
        let f = tessel_tile::parse::parse_func(LOOP).unwrap();
        let s = schedule(&f);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].requested_stages, 4);
        assert_eq!(s[0].ops.len(), 2, "constant and add; the yield is not scheduled");
        assert_eq!(s[0].num_stages(), 1);
        let text = print(&f, &s);
        assert!(text.contains("num_stages requested 4, scheduled 1"), "{text}");
        assert!(text.contains("stage 0 cluster 0") && text.contains("= add"), "{text}");
    }
}
