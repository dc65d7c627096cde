//! `warp_specialize` in the interpreter: the partitions run as cooperating tasks that share the program's
//! global memory, shared-memory buffers and mbarriers.
//!
//! Each partition runs on a thread of its own, but only one holds the program's state at a time (the baton),
//! so a run is deterministic: a partition runs until an `mbarrier_wait` whose phase has not completed, then
//! hands the baton to the next partition in order (default first, then the workers), and takes it back when its
//! turn comes round to check again. Running each partition as far as it can go is the most adversarial
//! schedule for a missing "buffer free" barrier: a producer overwrites what its consumer has not read yet. With
//! `Schedule::HandOff` a partition also hands the turn on after each arrival ([`Program::hand_off`]), so what the
//! arrival releases happens at once: a consumer's access to what the released partition then writes, without a
//! wait of its own, shows.
//! Each partition keeps its own asynchronous work (`cp.async` groups, wgmmas), as warps on the GPU do.
//!
//! A deadlock is every partition still running waiting on a phase that nothing changed since it last looked
//! (no partition got past a wait or finished since): it is reported with what each partition waits for
//! (the barrier, the phase parity, what the phase still lacks) instead of hanging. The op's results are the
//! default partition's, once every partition has finished.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::shared::{AsyncWork, Foreign, State};
use super::{Exit, Fault, InterpError, Mem, PartitionWait, Program, R, Value};
use tessel_tile::ir::{OpId, ValueId};

/// A partition's place in a `warp_specialize`.
pub(super) struct Task<'a> {
    baton: Arc<Baton<'a>>,
    pub(super) index: usize,
    /// Its warps: the kernel's for the default partition, the worker's own count for a worker.
    warps: u32,
    /// The partition's asynchronous work while another partition holds the shared state.
    own: AsyncWork,
    /// Whether this partition holds the shared state now.
    holding: bool,
}

struct Baton<'a> {
    inner: Mutex<Inner<'a>>,
    turn_changed: Condvar,
}

/// What the partitions share, and whose turn it is.
struct Inner<'a> {
    turn: usize,
    /// The program's shared state, when no partition holds it.
    held: Option<Held<'a>>,
    /// Bumped whenever a partition gets past a wait, starts or finishes: a partition found blocked at the
    /// current epoch is still blocked.
    epoch: u64,
    blocked: Vec<Option<(u64, PartitionWait)>>,
    done: Vec<bool>,
    /// What each partition still has in flight while it does not hold the state.
    pending: Vec<Foreign>,
    /// The first failure (a partition's error or the deadlock): every partition stops.
    failure: Option<InterpError>,
}

/// The state a partition needs to run ops, passed with the turn.
struct Held<'a> {
    mem: Mem<'a>,
    smem: State,
    log: Vec<String>,
    smem_writes: u64,
}

impl<'a> Inner<'a> {
    /// The next partition after `p`, in order, that has not finished.
    fn next_alive(&self, p: usize) -> Option<usize> {
        let n = self.done.len();
        (1..=n).map(|k| (p + k) % n).find(|&q| !self.done[q])
    }
}

impl<'a> Program<'a> {
    fn task(&self) -> &Task<'a> {
        self.task.as_ref().expect("inside a partition")
    }

    /// Moves the shared state out of this program (its asynchronous work stays with the partition).
    fn lend(&mut self) -> Held<'a> {
        let mut task = self.task.take().expect("inside a partition");
        self.smem.swap_async(&mut task.own);
        task.holding = false;
        self.task = Some(task);
        Held {
            mem: std::mem::replace(&mut self.mem, Mem::Lent),
            smem: std::mem::take(&mut self.smem),
            log: std::mem::take(&mut self.log),
            smem_writes: self.smem_writes,
        }
    }

    fn hold(&mut self, h: Held<'a>) {
        self.mem = h.mem;
        self.smem = h.smem;
        self.log = h.log;
        self.smem_writes = h.smem_writes;
        let mut task = self.task.take().expect("inside a partition");
        self.smem.swap_async(&mut task.own);
        task.holding = true;
        self.task = Some(task);
    }

    /// Waits for this partition's turn and takes the shared state; `Err` when another partition failed.
    fn acquire<'g>(&mut self, baton: &'g Baton<'a>, mut g: MutexGuard<'g, Inner<'a>>) -> R<MutexGuard<'g, Inner<'a>>> {
        let p = self.task().index;
        while g.turn != p && g.failure.is_none() {
            g = baton.turn_changed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        if let Some(e) = &g.failure {
            return Err(e.clone());
        }
        let mut held = g.held.take().expect("the turn comes with the state");
        let others = || g.pending.iter().enumerate().filter(|&(q, _)| q != p).map(|(_, w)| w);
        held.smem.foreign = others().flat_map(|w| w.copies.iter().copied()).collect();
        held.smem.foreign_dot_reads = others().flat_map(|w| w.dot_reads.iter().cloned()).collect();
        self.hold(held);
        Ok(g)
    }

    /// Gives the shared state back and the turn to the next partition still running.
    fn release(&mut self, g: &mut Inner<'a>) {
        if !self.task().holding {
            return;
        }
        let mut held = self.lend();
        held.smem.foreign.clear();
        held.smem.foreign_dot_reads.clear();
        let p = self.task().index;
        g.pending[p] = Foreign { copies: self.task().own.pending_copies(), dot_reads: self.task().own.dot_reads() };
        g.held = Some(held);
        if let Some(q) = g.next_alive(p) {
            g.turn = q;
        }
    }

    /// The warps of the partition running (the kernel's outside a `warp_specialize`).
    pub(super) fn partition_warps(&self) -> u32 {
        self.task.as_ref().map_or(self.f.config.num_warps, |t| t.warps)
    }

    /// Runs one partition's region to its end; returns what it yields.
    fn run_partition(&mut self, region: tessel_tile::ir::RegionId, args: &[Value]) -> R<Vec<Value>> {
        let baton = self.task().baton.clone();
        let p = self.task().index;
        {
            let g = baton.inner.lock().unwrap_or_else(|e| e.into_inner());
            let mut g = self.acquire(&baton, g)?;
            g.epoch += 1;
        }
        let ran = self.region(region, args);
        let mut g = baton.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.done[p] = true;
        g.epoch += 1;
        if let Err(e) = &ran
            && g.failure.is_none()
        {
            g.failure = Some(e.clone());
        }
        self.release(&mut g);
        baton.turn_changed.notify_all();
        match ran? {
            Exit::Yield(v) => Ok(v),
            Exit::Return | Exit::Condition(..) => Ok(Vec::new()),
        }
    }

    /// Blocks at `mbarrier_wait` `o` until its phase completes, letting the other partitions run meanwhile.
    pub(super) fn wait_for_phase(&mut self, o: OpId) -> R<()> {
        let f = self.f;
        let ins = &f.op(o).operands;
        let baton = self.task().baton.clone();
        let p = self.task().index;
        loop {
            let parity = self.tensor(ins[1]).data[0].as_i64();
            let lacks = match self.phase_pending(ins[0], parity) {
                // A bad phase or an uninitialized barrier: the wait itself reports it.
                _ if !(0..=1).contains(&parity) => return Ok(()),
                Err(_) => return Ok(()),
                Ok(None) => {
                    let mut g = baton.inner.lock().unwrap_or_else(|e| e.into_inner());
                    if g.blocked[p].take().is_some() {
                        g.epoch += 1;
                    }
                    return Ok(());
                }
                Ok(Some(lacks)) => lacks,
            };
            let what =
                PartitionWait { partition: p, loc: f.op(o).loc, parity, barrier: self.barrier_name(ins[0]), lacks };
            let mut g = baton.inner.lock().unwrap_or_else(|e| e.into_inner());
            let epoch = g.epoch;
            g.blocked[p] = Some((epoch, what));
            let stuck = (0..g.done.len()).all(|q| g.done[q] || g.blocked[q].as_ref().is_some_and(|(e, _)| *e == epoch));
            if stuck {
                let waits: Vec<PartitionWait> = g
                    .blocked
                    .iter()
                    .zip(&g.done)
                    .filter(|(_, d)| !**d)
                    .filter_map(|(b, _)| b.as_ref())
                    .map(|(_, w)| w.clone())
                    .collect();
                let finished: Vec<usize> = (0..g.done.len()).filter(|&q| g.done[q]).collect();
                let e = self.error(Some(o), Fault::Deadlock { waits, finished });
                g.failure = Some(e.clone());
                baton.turn_changed.notify_all();
                return Err(e);
            }
            self.release(&mut g);
            baton.turn_changed.notify_all();
            drop(self.acquire(&baton, g)?);
        }
    }

    /// Gives the turn to the next partition still running and waits for it to come back (`Schedule::HandOff`,
    /// after an arrival). Progress for the deadlock check: the arrival may have completed a phase.
    pub(super) fn hand_off(&mut self) -> R<()> {
        let baton = self.task().baton.clone();
        let mut g = baton.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.epoch += 1;
        self.release(&mut g);
        baton.turn_changed.notify_all();
        drop(self.acquire(&baton, g)?);
        Ok(())
    }

    /// `warp_specialize`: runs the default partition on this thread and each worker on a thread of its own,
    /// taking turns; binds the default partition's results.
    pub(super) fn warp_specialize(&mut self, o: OpId) -> R<()> {
        let f = self.f;
        let d = f.op(o);
        if self.task.is_some() {
            return Err(self.error(Some(o), Fault::NestedWarpSpecialize));
        }
        let n = d.regions.len();
        let captures = self.values(&d.operands);
        let baton = Arc::new(Baton {
            inner: Mutex::new(Inner {
                turn: 0,
                held: None,
                epoch: 0,
                blocked: vec![None; n],
                done: vec![false; n],
                pending: vec![Foreign::default(); n],
                failure: None,
            }),
            turn_changed: Condvar::new(),
        });
        let warps = |p: usize| match &d.op {
            tessel_tile::ops::Op::WarpSpecialize(w) if p > 0 => w.worker_num_warps[p - 1],
            _ => f.config.num_warps,
        };
        self.task =
            Some(Task { baton: baton.clone(), index: 0, warps: warps(0), own: AsyncWork::default(), holding: true });
        let held = self.lend();
        baton.inner.lock().unwrap_or_else(|e| e.into_inner()).held = Some(held);
        let (grid, pid) = (self.grid, self.pid);
        let (default, workers) = std::thread::scope(|s| {
            let handles: Vec<_> = (1..n)
                .map(|p| {
                    let (baton, captures, region) = (baton.clone(), captures.clone(), d.regions[p]);
                    let limits = self.limits.clone();
                    s.spawn(move || {
                        let mut w = Program {
                            f,
                            env: vec![None; f.values.len()],
                            mem: Mem::Lent,
                            grid,
                            pid,
                            log: Vec::new(),
                            smem: State::default(),
                            limits,
                            iterations: 0,
                            smem_writes: 0,
                            work: 0,
                            task: Some(Task {
                                baton,
                                index: p,
                                warps: warps(p),
                                own: AsyncWork::default(),
                                holding: false,
                            }),
                        };
                        w.run_partition(region, &captures).map(|_| ())
                    })
                })
                .collect();
            let default = self.run_partition(d.regions[0], &[]);
            let workers: Vec<R<()>> =
                handles.into_iter().map(|h| h.join().expect("an interpreter partition thread panicked")).collect();
            (default, workers)
        });
        let mut g = baton.inner.lock().unwrap_or_else(|e| e.into_inner());
        let held = g.held.take().expect("the state comes back when every partition has finished");
        let failure = g.failure.take();
        drop(g);
        self.hold(held);
        self.task = None;
        if let Some(e) = failure {
            return Err(e);
        }
        workers.into_iter().collect::<R<Vec<()>>>()?;
        let results = default?;
        self.bind_results(o, results);
        Ok(())
    }
}

impl Program<'_> {
    /// A barrier's name for messages: its source name when it has one, `name[i]` for buffer `i` of a batch.
    fn barrier_name(&self, v: ValueId) -> String {
        self.memdesc_name(v)
    }

    /// A buffer's name for messages: its source name when it has one, else the name of the buffer it views
    /// (`name[i]` for buffer `i` of a batch, `name[:, a:]` for columns from `a` on, `name as TYPE` for a
    /// reinterpretation), else its value.
    pub(super) fn memdesc_name(&self, v: ValueId) -> String {
        use tessel_tile::ops::Op;
        let f = self.f;
        if let Some(n) = &f.value(v).name {
            return n.clone();
        }
        let tessel_tile::ir::ValueDef::Result(o, 0) = f.value(v).def else { return v.to_string() };
        let d = f.op(o);
        match &d.op {
            Op::MemDescIndex => match &self.env[d.operands[1].index()] {
                Some(Value::T(i)) => format!("{}[{}]", self.memdesc_name(d.operands[0]), i.data[0].as_i64()),
                _ => format!("{}[?]", self.memdesc_name(d.operands[0])),
            },
            Op::MemDescSlice { dim, start } => {
                let lead = ":, ".repeat(*dim as usize);
                format!("{}[{lead}{start}:]", self.memdesc_name(d.operands[0]))
            }
            Op::MemDescReinterpret => format!("{} as {}", self.memdesc_name(d.operands[0]), f.ty(v)),
            _ => v.to_string(),
        }
    }
}
