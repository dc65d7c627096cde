//! tessel-sched owns loop scheduling and the layout-IR work that follows it: the latency model, the
//! CoarseSchedule (a stage and a cluster for every op of a loop body), loop expansion into prologue / steady
//! state / drain with multi-buffered shared memory, the partition plan of `warp_specialize` ([`warp_spec`]: warp
//! ranges, `setmaxnreg` counts), and the descriptor accesses the pipeliner did not take lowered to TMA copies
//! ([`tma_copies`]). It reads layout IR and writes layout IR; codegen runs after it. What goes wrong is data
//! ([`error`]): a `warp_specialize` asking for more than the CTA has names the resource.
//!
//! [`schedule`] decides, for every `for` loop, whether and how it is pipelined ([`plan`]); [`pipeline`] also
//! rewrites the loops it takes ([`expand`], with [`dot_waits`] placing the waits of a body whose dots all run
//! asynchronously, [`mma_flight`] keeping an auto-mode `tcgen05.mma` in flight across iterations, [`acc_overlap`]
//! running a fused loop's epilogue beside the next tile's MMAs, and [`ws`]
//! handing a loop's TMA copies to a producer partition where it asks for warp specialization, [`ws_mma`] its
//! tcgen05 MMAs on sm_100a); [`print`] is
//! `tessel compile --emit sched`; [`tma_copies::lower_tma_copies`] runs after [`pipeline`].

pub mod acc_overlap;
pub mod async_dot;
pub mod dot_waits;
pub mod error;
pub mod expand;
pub(crate) mod induction;
pub mod mma_flight;
pub mod plan;
pub mod ring;
pub mod staging;
pub mod tma_copies;
pub mod warp_spec;
pub mod ws;
pub mod ws_mma;

use std::fmt::Write;

use tessel_tile::ir::Func;
use tessel_tile::layout::axis;
use tessel_tile::ops::Op;

pub use async_dot::{AsyncDot, DotWait, Restart};
pub use error::{AsWritten, PartitionError, SchedError};
pub use plan::{CoarseSchedule, LoopPlan};

/// What the pipeliner may do beyond the plan of each loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Keep a tcgen05 MMA in flight across iterations ([`mma_flight`]), at the cost of a ring buffer more. The
    /// compile driver turns it off when the kernel then does not fit in shared memory.
    pub mma_in_flight: bool,
    /// Run a fused loop's epilogue one iteration late on two accumulators ([`acc_overlap`]), at the cost of the
    /// last tile's epilogue copied after the loop (its shared staging buffer too). The compile driver turns it
    /// off first when the kernel does not fit in shared memory.
    pub acc_overlap: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { mma_in_flight: true, acc_overlap: true }
    }
}

/// What [`pipeline_with`] did beyond the plans, for the compile driver's retries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Some loop keeps a tcgen05 MMA in flight.
    pub mma_in_flight: bool,
    /// Some fused loop's epilogue runs one iteration late on two accumulators.
    pub acc_overlap: bool,
}

/// A loop the pipeliner takes, and its split into partitions when it asks for one and can have it.
type Taken = (LoopPlan, Option<ws::WsPlan>);

fn plans(f: &Func, opts: Options) -> Vec<(CoarseSchedule, Option<Taken>)> {
    let axis = axis::analyze(f);
    let mut out = Vec::new();
    let mut split = false;
    for o in f.all_ops() {
        let Op::For(attrs) = &f.op(o).op else { continue };
        let requested = attrs.num_stages.unwrap_or(f.config.num_stages);
        out.push(match plan::plan(f, o, &axis) {
            Ok(mut p) => {
                let (w, why) = match attrs.warp_specialize.then(|| ws::plan(f, &p, split)) {
                    Some(Ok(w)) => {
                        // The producer's copies wait for the slot's release: no counters, no CTA barrier. A
                        // tcgen05 MMA is the default partition's, released by its commits ([`ws_mma`]).
                        (p.release, split) = (false, true);
                        if let Some(ws_mma::WsMma::InFlight(_)) = w.mma {
                            p.mma_flight = None;
                            // Without the MMA in flight (the retry for shared memory), a ring buffer less.
                            if !opts.mma_in_flight {
                                p.buffers = p.stages - 1;
                            }
                        }
                        let why = w.describe();
                        (Some(w), why)
                    }
                    Some(Err(why)) => (None, format!("; warp_specialize=True not applied: {why}")),
                    None => (None, String::new()),
                };
                // Without the MMA in flight the loop waits for it in the step that issues it: a ring buffer less.
                if !opts.mma_in_flight && p.mma_flight.take().is_some() {
                    p.buffers = p.stages - 1;
                }
                let mut s = plan::schedule_of(f, &p, requested);
                s.reason += &why;
                (s, Some((p, w)))
            }
            Err(why) if attrs.warp_specialize => {
                let why = format!("{why}; warp_specialize=True not applied: the loop is not pipelined");
                (plan::as_written(f, o, requested, why), None)
            }
            Err(why) => (plan::as_written(f, o, requested, why.to_string()), None),
        });
    }
    out
}

/// The schedule of every `for` loop of `f`, outermost first.
pub fn schedule(f: &Func) -> Vec<CoarseSchedule> {
    plans(f, Options::default()).into_iter().map(|(s, _)| s).collect()
}

/// Plans the partitions of every `warp_specialize` ([`warp_spec`]), schedules every loop and expands those the
/// pipeliner takes; returns the schedules (of the loops as they were).
pub fn pipeline(f: &mut Func) -> Result<Vec<CoarseSchedule>, SchedError> {
    pipeline_with(f, Options::default()).map(|(s, _)| s)
}

/// [`pipeline`] within `opts`; also says what it applied beyond the plans.
pub fn pipeline_with(f: &mut Func, opts: Options) -> Result<(Vec<CoarseSchedule>, Applied), SchedError> {
    let mut out = Vec::new();
    let mut applied = Applied::default();
    for (mut s, taken) in plans(f, opts) {
        if let Some((p, w)) = taken {
            if let Some(m) = &p.mma_flight {
                mma_flight::apply(f, p.loop_op, m)?;
                applied.mma_in_flight = true;
            }
            let ws_mma = w.as_ref().and_then(|w| w.mma.as_ref());
            if let Some(m) = ws_mma {
                ws_mma::prepare(f, p.loop_op, m);
                // An MMA in flight: the rings hold a buffer per stage, which the retry for shared memory gives up.
                applied.mma_in_flight |= opts.mma_in_flight && matches!(m, ws_mma::WsMma::InFlight(_));
            }
            expand::expand(f, &p, w.as_ref())?;
            let fused = match (&p.mma_flight, ws_mma) {
                (Some(m), _) | (None, Some(ws_mma::WsMma::InFlight(m))) => Some(m).filter(|m| !m.reads.is_empty()),
                _ => None,
            };
            if let Some(m) = fused.filter(|_| opts.acc_overlap) {
                s.reason += &match acc_overlap::apply(f, p.loop_op, m) {
                    Ok(()) => {
                        applied.acc_overlap = true;
                        "; the epilogue overlaps the next tile's MMAs (two accumulators)".to_string()
                    }
                    Err(why) => format!("; one accumulator: {why}"),
                };
            }
            if let Some(m) = &p.mma_flight {
                mma_flight::drain(f, p.loop_op, m);
            }
            if let Some(m) = ws_mma {
                ws_mma::drain(f, p.loop_op, m);
            }
        }
        out.push(s);
    }
    // The partitions: gluon's, or the one a split loop made.
    warp_spec::assign(f)?;
    Ok((out, applied))
}

/// The schedules as text: one block per loop, one line per op with its stage and cluster.
pub fn print(f: &Func, schedules: &[CoarseSchedule]) -> String {
    let mut s = String::new();
    for o in f.all_ops().into_iter().filter(|&o| matches!(f.op(o).op, Op::WarpSpecialize(_))) {
        match warp_spec::plan_of(f, o) {
            Ok(p) => writeln!(s, "// @{} warp_specialize {o}: {}", f.name, p.note),
            Err(e) => writeln!(s, "// @{} warp_specialize {o}: {e}", f.name),
        }
        .ok();
    }
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
