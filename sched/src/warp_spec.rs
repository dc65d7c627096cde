//! Warp specialization: where each partition of a `warp_specialize` runs and with how many registers.
//!
//! The default partition keeps warps `0..num_warps`; worker `i` takes the next `worker_num_warps[i]` warps, so
//! the CTA has `num_warps + Σ worker_num_warps` warps. Registers move between partitions with `setmaxnreg`,
//! which whole warpgroups execute together: the plan reallocates only when the default partition and the
//! workers fill whole warpgroups and the workers sharing a warpgroup ask for one count (workers on warpgroups of
//! their own may ask for different ones: FlashAttention-4's softmax, correction and loader warpgroups). Then the
//! kernel starts with `R0`
//! registers per thread (`.maxnreg`: the register file split evenly over the CTA's threads, or the kernel's own
//! `maxnreg`), the workers drop to what they asked for, and the default partition takes what the workers
//! released (at most 256). The plan is written on the op (`warp_starts`, `regs`) for codegen.

use tessel_tile::ir::{Func, OpId};
use tessel_tile::ops::Op;

use crate::error::{MAX_WARPS, PartitionError};

/// Registers per SM (and so per CTA at one CTA per SM) on sm_90a.
pub const REGISTER_FILE: u32 = 65536;

/// Where the partitions run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The first warp of each partition (the default's first).
    pub starts: Vec<u32>,
    pub total_warps: u32,
    /// Registers per thread at the entry, then in each partition; empty when none are reallocated.
    pub entry_regs: Option<u32>,
    pub regs: Vec<u32>,
    /// What the plan decided, for `--emit sched`.
    pub note: String,
}

fn floor8(x: u32) -> u32 {
    x / 8 * 8
}

/// The plan of `warp_specialize` op `o` of `f`.
pub fn plan_of(f: &Func, o: OpId) -> Result<Plan, PartitionError> {
    let Op::WarpSpecialize(w) = &f.op(o).op else { return Err(PartitionError::NotWarpSpecialize(o)) };
    let nw = f.config.num_warps;
    let mut starts = vec![0];
    let mut next = nw;
    for &n in &w.worker_num_warps {
        starts.push(next);
        next += n;
    }
    let total_warps = next;
    if total_warps > MAX_WARPS {
        return Err(PartitionError::Warps { needed: total_warps });
    }
    let mut plan = Plan { starts, total_warps, entry_regs: None, regs: Vec::new(), note: String::new() };
    let layout: Vec<String> = plan
        .starts
        .iter()
        .zip(std::iter::once(&nw).chain(&w.worker_num_warps))
        .enumerate()
        .map(|(i, (s, n))| {
            let who = if i == 0 { "default".to_string() } else { format!("worker {}", i - 1) };
            format!("{who}: warps {s}..{}", s + n)
        })
        .collect();
    plan.note = format!("{} warps ({})", total_warps, layout.join(", "));
    if w.worker_num_regs.is_empty() {
        plan.note += "; no register reallocation requested";
        return Ok(plan);
    }
    let why_not = if f.target == tessel_tile::Target::Sm80 {
        Some("sm_80 has no setmaxnreg")
    } else if nw % 4 != 0 || (total_warps - nw) % 4 != 0 {
        Some("setmaxnreg works on whole warpgroups and the partitions do not fill whole warpgroups")
    } else if let Some(g) = mixed_warpgroup(&plan.starts[1..], &w.worker_num_warps, &w.worker_num_regs) {
        plan.note += &format!("; registers not reallocated: workers sharing warpgroup {g} ask for different counts");
        return Ok(plan);
    } else {
        None
    };
    if let Some(why) = why_not {
        plan.note += &format!("; registers not reallocated: {why}");
        return Ok(plan);
    }
    let threads = total_warps * 32;
    let entry = f.config.maxnreg.unwrap_or_else(|| floor8(REGISTER_FILE / threads).min(248));
    let pool = entry * threads;
    let workers: u32 = w.worker_num_warps.iter().zip(&w.worker_num_regs).map(|(n, r)| n * 32 * r).sum();
    let Some(left) = pool.checked_sub(workers) else {
        return Err(PartitionError::Registers {
            asked: w.worker_num_regs.clone(),
            needed: workers,
            pool,
            entry,
            threads,
        });
    };
    let default = floor8(left / (nw * 32)).min(256);
    if default < 24 {
        let needed = workers + 24 * nw * 32;
        return Err(PartitionError::DefaultRegisters { asked: w.worker_num_regs.clone(), left: default, needed, pool });
    }
    plan.entry_regs = Some(entry);
    plan.regs = std::iter::once(default).chain(w.worker_num_regs.iter().copied()).collect();
    plan.note += &format!("; registers per thread: {entry} at the entry, then {:?} (default first)", plan.regs);
    Ok(plan)
}

/// The first warpgroup whose workers (worker `i` on warps `starts[i]..starts[i] + warps[i]`, asking for
/// `regs[i]` registers) ask for different counts, if one does: `setmaxnreg` sets one count for a whole warpgroup.
fn mixed_warpgroup(starts: &[u32], warps: &[u32], regs: &[u32]) -> Option<u32> {
    let mut asked: Vec<(u32, u32)> = Vec::new(); // (warpgroup, count)
    for ((&start, &n), &r) in starts.iter().zip(warps).zip(regs) {
        for g in start / 4..=(start + n.max(1) - 1) / 4 {
            match asked.iter().find(|&&(h, _)| h == g) {
                Some(&(_, c)) if c != r => return Some(g),
                Some(_) => {}
                None => asked.push((g, r)),
            }
        }
    }
    None
}

/// Plans every `warp_specialize` of `f` and writes the plan on the op (and the entry's `maxnreg` when registers
/// are reallocated); returns the plans' notes.
pub fn assign(f: &mut Func) -> Result<Vec<String>, PartitionError> {
    let ops: Vec<OpId> = f.all_ops().into_iter().filter(|&o| matches!(f.op(o).op, Op::WarpSpecialize(_))).collect();
    let mut notes = Vec::new();
    for o in ops {
        let plan = plan_of(f, o)?;
        if let Op::WarpSpecialize(w) = &mut f.op_mut(o).op {
            w.warp_starts = plan.starts.clone();
            w.regs = plan.regs.clone();
        }
        if let Some(r) = plan.entry_regs {
            f.config.maxnreg = Some(r);
        }
        notes.push(format!("// @{} warp_specialize {o}: {}", f.name, plan.note));
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(num_warps: u32, workers: &str, regs: &str) -> Func {
        let text = format!(
            "func @k() attributes {{num_warps = {num_warps}}} {{
  warp_specialize {{worker_num_warps = {workers}{regs}}} {{
    yield
  }}, {{
    yield
  }}
  return
}}
"
        );
        tessel_tile::parse::parse_func(&text).unwrap()
    }

    #[test]
    fn workers_follow_the_default_warps_and_registers_move_by_warpgroup() {
        let mut f = kernel(8, "[4]", ", worker_num_regs = [40]");
        let notes = assign(&mut f).unwrap();
        let Op::WarpSpecialize(w) = &f.op(f.all_ops()[0]).op else { panic!() };
        assert_eq!(w.warp_starts, [0, 8]);
        // 384 threads: 168 registers each at the entry (64512 in all); the producer keeps 40, the consumers 232.
        assert_eq!(w.regs, [232, 40]);
        assert_eq!(f.config.maxnreg, Some(168));
        assert!(notes[0].contains("12 warps (default: warps 0..8, worker 0: warps 8..12)"), "{notes:?}");
    }

    #[test]
    fn partitions_that_share_a_warpgroup_keep_their_registers() {
        let mut f = kernel(4, "[1]", ", worker_num_regs = [24]");
        let notes = assign(&mut f).unwrap();
        let Op::WarpSpecialize(w) = &f.op(f.all_ops()[0]).op else { panic!() };
        assert_eq!(w.warp_starts, [0, 4]);
        assert!(w.regs.is_empty());
        assert_eq!(f.config.maxnreg, None);
        assert!(notes[0].contains("do not fill whole warpgroups"), "{notes:?}");
    }

    #[test]
    fn workers_on_warpgroups_of_their_own_may_ask_for_different_counts() {
        // FlashAttention-4's plan: softmax (the default and worker 0), correction (worker 1), and the MMA, load
        // and epilogue warps sharing the last warpgroup. 512 threads start with 128 registers each.
        let mut f = kernel(4, "[4, 4, 1, 1, 2]", ", worker_num_regs = [192, 80, 48, 48, 48]");
        let notes = assign(&mut f).unwrap();
        let Op::WarpSpecialize(w) = &f.op(f.all_ops()[0]).op else { panic!() };
        assert_eq!(w.warp_starts, [0, 4, 8, 12, 13, 14]);
        assert_eq!(w.regs, [192, 192, 80, 48, 48, 48]);
        assert_eq!(f.config.maxnreg, Some(128));
        // Workers sharing a warpgroup must agree.
        let mut f = kernel(4, "[4, 4, 1, 1, 2]", ", worker_num_regs = [192, 80, 48, 56, 48]");
        let notes_mixed = assign(&mut f).unwrap();
        let Op::WarpSpecialize(w) = &f.op(f.all_ops()[0]).op else { panic!() };
        assert!(w.regs.is_empty());
        assert!(notes_mixed[0].contains("workers sharing warpgroup 3 ask for different counts"), "{notes_mixed:?}");
        // A worker spanning two warpgroups joins both.
        let mut f = kernel(4, "[2, 4, 2]", ", worker_num_regs = [40, 40, 56]");
        let notes_span = assign(&mut f).unwrap();
        assert!(notes_span[0].contains("workers sharing warpgroup 2 ask for different counts"), "{notes_span:?}");
        assert!(notes[0].contains("then [192, 192, 80, 48, 48, 48] (default first)"), "{notes:?}");
    }

    #[test]
    fn workers_asking_for_more_than_the_register_file_are_refused() {
        let mut f = kernel(4, "[4]", ", worker_num_regs = [256]");
        f.config.maxnreg = Some(64);
        let e = assign(&mut f).unwrap_err();
        assert!(e.to_string().contains("more than the 16384 the CTA starts with"), "{e}");
        let exhausted = e.exhausted().expect("a resource");
        assert_eq!(exhausted.resource, tessel_tile::target::Resource::Registers);
        assert_eq!((exhausted.needed, exhausted.capacity), (4 * 32 * 256, 16384));
    }
}
