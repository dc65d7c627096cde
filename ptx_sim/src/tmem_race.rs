//! Tensor memory checked by happens-before, as `race` checks shared memory, from the PTX ISA's memory consistency
//! model for tcgen05 (9.7.16.6). Every cell of a CTA's tensor memory records its last write and the reads since:
//! by a thread (`tcgen05.st`, `tcgen05.ld`: the thread, and how far the access has been *published*, below), or
//! by the CTA's tensor cores (an MMA's reads of A from tensor memory and of block scales and its write of D, a
//! `tcgen05.cp`'s write: the tcgen05 op's number). The tensor cores are one agent of the CTA's clocks
//! (`race::Local::Core`) whose epochs are op numbers: a `tcgen05.commit` covering the ops up to k releases epoch k
//! into its mbarrier's phase, so a wait that observes it acquires them, as a TMA copy's completion releases its
//! writes.
//!
//! The rules (an access not ordered after a record it conflicts with is refused, both named: "... without a
//! barrier between"):
//!
//! - A tensor-core access (by the MMA or copy a thread *issued*: it reads and writes asynchronously after the
//!   issue) must be ordered after the thread writes of each cell it reads, and, for a write, after the thread
//!   reads too. Ordered: published by that thread (below), then released by it (a barrier arrival, `bar.sync`, a
//!   cluster barrier) and acquired by the issuing thread's warp before its last
//!   `tcgen05.fence::after_thread_sync`. The canonical pattern: `tcgen05.st; tcgen05.wait::st;
//!   tcgen05.fence::before_thread_sync; mbarrier.arrive` || `mbarrier.try_wait; tcgen05.fence::after_thread_sync;
//!   tcgen05.mma`. A thread of the issuing warp needs its access published and a barrier of the warp since.
//! - A pair MMA (`tcgen05_pair`) reads and writes the odd CTA's cells for the even CTA's issuing thread: what that
//!   thread knew at the issue (for its tcgen05 ops), carried into the odd CTA's clocks (`race::Clocks::export`),
//!   must cover the odd CTA's threads' accesses. It learns of them through the barriers the two CTAs share: the
//!   odd CTA's arrivals on the pair's barrier in the lead (`cluster::arrive` carries the arriving warp's clock),
//!   cluster barriers.
//! - A thread's `tcgen05.ld` must be ordered after the last write (another thread's, published and released, or
//!   the tensor cores', committed and the commit observed), and its `tcgen05.st` after the last write and every
//!   read, by what its warp acquired before its last `tcgen05.fence::after_thread_sync`.
//! - Publication: a thread's `tcgen05.st` counts for others once the thread has waited for it (`tcgen05.wait::st`)
//!   and then run a `tcgen05.fence::before_thread_sync`, at its epoch then (so a release before that does not
//!   carry it); a `tcgen05.ld` once the thread has waited for it (`tcgen05.wait::ld`: its registers hold what it
//!   read). For a read the simulator asks for no fence: CUTLASS's epilogues and our code generator's hand a buffer
//!   back with `tcgen05.ld; tcgen05.wait::ld; mbarrier.arrive`.
//!
//! Not modelled: a thread's own `tcgen05.st` and `tcgen05.ld` are in order (an MMA it issues over its own store
//! does need the `tcgen05.wait::st`); the tensor-core ops among themselves (the ISA's pipelined pairs are
//! `tcgen05::check_mma_order`'s, which ops a wait has seen complete `tcgen05::InFlight`'s); the scopes (`.cta`,
//! `.cluster`) of arrivals and waits, which count as cluster-wide; `tcgen05.shift`.

use super::Cta;
use super::race::VClock;

/// Lanes and columns of a CTA's tensor memory.
const CELLS: usize = 128 * 512;
const COLUMNS: usize = 512;

/// How far a thread's `tcgen05.ld`/`st` has got towards counting for other threads and the tensor cores.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    Issued,
    /// Its `tcgen05.wait::st` (a store's: it still needs a `tcgen05.fence::before_thread_sync`).
    Waited,
    /// At this epoch of the thread.
    Published(u32),
}

/// Who accessed a cell.
#[derive(Clone, Copy, Debug)]
enum By {
    Thread { t: u32, stage: Stage },
    Core { op: u32 },
}

/// A cell's last write and the reads since (an antichain: a read ordered before a later one of the same kind is
/// dropped; the tensor cores' latest read stands for their earlier ones).
#[derive(Clone, Default)]
struct Cell {
    write: Option<By>,
    reads: Vec<By>,
}

/// The CTA's tensor memory as the happens-before check sees it.
#[derive(Default)]
pub(super) struct Shadow {
    /// Per cell (lane * 512 + column); empty until the first access.
    cells: Vec<Cell>,
    /// Per thread: the cells where it has an access not published yet.
    pending: Vec<Vec<u32>>,
}

/// Who reads an MMA's shared-memory operands: the issuing thread of this CTA (its accesses checked by
/// happens-before, `race`), or a pair MMA issued by the peer CTA (checked for unfenced stores and recorded as read
/// by the op in flight, with no thread of this CTA to order it by). For tensor memory (this module) the peer's
/// issuing thread is given: what it knew, carried into this CTA's clocks.
#[derive(Clone, Copy)]
pub(super) enum Reader<'a> {
    Thread(usize),
    Peer(&'a Issuer),
}

/// The thread of another CTA that issued a pair's tcgen05 op: what it knew for its tcgen05 ops, as this CTA's
/// clock, and who it is (for an error).
pub(super) struct Issuer {
    pub(super) clock: VClock,
    pub(super) who: String,
}

/// Who makes an access being checked: a thread of this CTA (`tcgen05.ld`/`st`), or the tensor cores for the op
/// `op` (`what`: `tcgen05.mma`, `tcgen05.cp`) that a thread issued.
#[derive(Clone, Copy)]
enum Me<'a> {
    Thread(usize),
    Core(Reader<'a>, u32, &'a str),
}

impl Shadow {
    fn cell(&mut self, cell: usize) -> &mut Cell {
        if self.cells.is_empty() {
            self.cells = vec![Cell::default(); CELLS];
        }
        &mut self.cells[cell]
    }

    /// A new allocation: nothing has accessed it.
    pub(super) fn clear(&mut self) {
        self.cells.clear();
        self.pending.iter_mut().for_each(Vec::clear);
    }

    /// Whether thread `t` has an unpublished access recorded at `cell` (so the cell is on its pending list).
    fn pending_at(&self, t: usize, cell: usize) -> bool {
        let unpublished = |b: &By| match b {
            By::Thread { t: u, stage } => *u as usize == t && !matches!(stage, Stage::Published(_)),
            By::Core { .. } => false,
        };
        self.cells.get(cell).is_some_and(|c| c.write.iter().chain(&c.reads).any(unpublished))
    }

    fn note_pending(&mut self, t: usize, cell: usize) {
        if self.pending.len() <= t {
            self.pending.resize(t + 1, Vec::new());
        }
        self.pending[t].push(cell as u32);
    }
}

impl Cta<'_> {
    /// Whether `a` is ordered before the access of `me`.
    fn tmem_ordered(&self, a: &By, me: Me) -> bool {
        let issuer = match me {
            Me::Thread(t) => Some(t),
            Me::Core(Reader::Thread(t), ..) => Some(t),
            Me::Core(Reader::Peer(_), ..) => None,
        };
        match (*a, me) {
            // Tensor-core ops among themselves: not this check's.
            (By::Core { .. }, Me::Core(..)) => true,
            (By::Core { op }, Me::Thread(t)) => {
                self.clocks.core().is_some_and(|i| self.clocks.knows(t / 32, i, true) >= op)
            }
            (By::Thread { t: u, stage }, _) => {
                let u = u as usize;
                match (issuer, stage) {
                    // The same thread: in order, but the tensor cores' read of its store needs its wait::st.
                    (Some(t), _) if t == u => matches!(me, Me::Thread(_)) || stage != Stage::Issued,
                    // A thread of the same warp: published, then an intra-warp barrier.
                    (Some(t), Stage::Published(e)) if t / 32 == u / 32 => self.clocks.synced(u) >= e,
                    (Some(t), Stage::Published(e)) => self.clocks.knows(t / 32, u, true) >= e,
                    (None, Stage::Published(e)) => match me {
                        Me::Core(Reader::Peer(i), ..) => i.clock.get(u).is_some_and(|&k| k >= e),
                        _ => false,
                    },
                    _ => false,
                }
            }
        }
    }

    /// The error for `me` (reading, or writing when `write`) at `cell` meeting `a`, not ordered before it.
    fn tmem_race(&self, cell: usize, me: Me, write: bool, a: &By, a_wrote: bool) -> String {
        let me_is = match me {
            Me::Thread(t) => format!("thread {t} (warp {})'s tcgen05.{}", t / 32, if write { "st" } else { "ld" }),
            Me::Core(Reader::Thread(t), op, what) => format!("{what} (tcgen05 op #{op}) issued by thread {t}"),
            Me::Core(Reader::Peer(i), op, what) => format!("{what} (tcgen05 op #{op} here) issued by {}", i.who),
        };
        let (a_is, why) = match *a {
            By::Core { op } => {
                let did = if a_wrote { "wrote" } else { "read" };
                let seen = match me {
                    Me::Thread(t) => self.clocks.core().is_some_and(|i| self.clocks.knows(t / 32, i, false) >= op),
                    Me::Core(..) => false,
                };
                let why = match me {
                    Me::Thread(t) if seen => format!(
                        "after a wait that observed its commit, but with no tcgen05.fence::after_thread_sync of \
                         warp {} since",
                        t / 32
                    ),
                    _ => "without a barrier between (a wait that observes a commit covering it)".to_string(),
                };
                (format!("tcgen05 op #{op} {did}"), why)
            }
            By::Thread { t: u, stage, .. } => {
                let (did, wait) =
                    if a_wrote { ("wrote with tcgen05.st", "wait::st") } else { ("read with tcgen05.ld", "wait::ld") };
                let issuer = match me {
                    Me::Thread(t) | Me::Core(Reader::Thread(t), ..) => Some(t),
                    Me::Core(Reader::Peer(_), ..) => None,
                };
                let why = match (stage, issuer) {
                    (Stage::Issued, _) => format!("with no tcgen05.{wait} of that thread since, then a barrier"),
                    (Stage::Waited, _) => "with no tcgen05.fence::before_thread_sync of that thread after its \
                                           tcgen05.wait::st, then a barrier"
                        .to_string(),
                    (_, Some(t)) if t / 32 == u as usize / 32 => "without a barrier of their warp between".to_string(),
                    (Stage::Published(e), Some(t)) if self.clocks.knows(t / 32, u as usize, false) >= e => {
                        format!(
                            "after a barrier, but with no tcgen05.fence::after_thread_sync of warp {} since",
                            t / 32
                        )
                    }
                    _ => "without a barrier between".to_string(),
                };
                (format!("thread {u} (warp {}) {did}", u / 32), why)
            }
        };
        let verb = if write { "overwrites" } else { "reads" };
        format!(
            "tensor memory of CTA {}, lane {}, column {}: {me_is} {verb} what {a_is} {why}",
            self.cluster.rank,
            cell / COLUMNS,
            cell % COLUMNS
        )
    }

    /// Checks `me`'s access to `cell` (a write when `write`) against the earlier ones.
    fn tmem_check(&self, cell: usize, me: Me, write: bool) -> Result<(), String> {
        let Some(c) = self.tmem.hb.cells.get(cell) else { return Ok(()) };
        if let Some(w) = &c.write
            && !self.tmem_ordered(w, me)
        {
            return Err(self.tmem_race(cell, me, write, w, true));
        }
        if write && let Some(r) = c.reads.iter().find(|r| !self.tmem_ordered(r, me)) {
            return Err(self.tmem_race(cell, me, write, r, false));
        }
        Ok(())
    }

    /// Thread `t`'s `tcgen05.st` (`write`) or `tcgen05.ld` of `cell`: checked, then recorded as issued.
    pub(super) fn tmem_thread(&mut self, t: usize, cell: usize, write: bool) -> Result<(), String> {
        self.tmem_check(cell, Me::Thread(t), write)?;
        let listed = self.tmem.hb.pending_at(t, cell);
        let me = By::Thread { t: t as u32, stage: Stage::Issued };
        if write {
            let c = self.tmem.hb.cell(cell);
            c.write = Some(me);
            c.reads.clear();
        } else {
            // The reads ordered before this one (but the tensor cores': later writers learn of them by a commit).
            self.tmem.hb.cell(cell);
            let keep: Vec<By> = self.tmem.hb.cells[cell]
                .reads
                .iter()
                .filter(|r| matches!(r, By::Core { .. }) || !self.tmem_ordered(r, Me::Thread(t)))
                .copied()
                .collect();
            let c = self.tmem.hb.cell(cell);
            c.reads = keep;
            c.reads.push(me);
        }
        if !listed {
            self.tmem.hb.note_pending(t, cell);
        }
        Ok(())
    }

    /// The tensor cores' access to `cell` for op `op` (`what`), issued for `by`: checked, then recorded.
    pub(super) fn tmem_core(
        &mut self,
        by: Reader,
        op: u32,
        cell: usize,
        write: bool,
        what: &str,
    ) -> Result<(), String> {
        self.tmem_check(cell, Me::Core(by, op, what), write)?;
        let c = self.tmem.hb.cell(cell);
        if write {
            c.write = Some(By::Core { op });
            c.reads.clear();
        } else {
            c.reads.retain(|r| !matches!(r, By::Core { .. }));
            c.reads.push(By::Core { op });
        }
        Ok(())
    }

    /// `tcgen05.wait::st` (`store`) or `tcgen05.wait::ld` by thread `t`: its stores are waited for, or its loads
    /// published.
    pub(super) fn tmem_wait(&mut self, t: usize, store: bool) {
        let epoch = self.clocks.epoch(t);
        self.tmem_advance(t, |stage, wrote| match (stage, wrote, store) {
            (Stage::Issued, true, true) => Stage::Waited,
            (Stage::Issued, false, false) => Stage::Published(epoch),
            (s, ..) => s,
        });
    }

    /// `tcgen05.fence::before_thread_sync` by thread `t`: its waited stores are published.
    pub(super) fn tmem_fence_before(&mut self, t: usize) {
        let epoch = self.clocks.epoch(t);
        self.tmem_advance(
            t,
            |stage, wrote| if wrote && stage == Stage::Waited { Stage::Published(epoch) } else { stage },
        );
    }

    /// Moves thread `t`'s unpublished accesses on by `f` (stage, whether a write), and drops the cells where none is
    /// left from its pending list.
    fn tmem_advance(&mut self, t: usize, f: impl Fn(Stage, bool) -> Stage) {
        let Some(list) = self.tmem.hb.pending.get_mut(t).map(std::mem::take) else { return };
        let mut left = Vec::new();
        for cell in list {
            let c = &mut self.tmem.hb.cells[cell as usize];
            let mut open = false;
            let writes = c.write.iter_mut().map(|b| (b, true));
            for (b, wrote) in writes.chain(c.reads.iter_mut().map(|b| (b, false))) {
                if let By::Thread { t: u, stage, .. } = b
                    && *u as usize == t
                    && !matches!(stage, Stage::Published(_))
                {
                    *stage = f(*stage, wrote);
                    open |= !matches!(stage, Stage::Published(_));
                }
            }
            if open {
                left.push(cell);
            }
        }
        self.tmem.hb.pending[t] = left;
    }
}
