//! The one barrier analysis: which shared-memory accesses since the last `bar.sync` may still be in flight in
//! other threads, and so whether an access needs a CTA barrier first (a read after a write, a write after a
//! read or a write, by different threads) and, when the tensor cores read what threads wrote, a
//! `fence.proxy.async` too. Like Triton's Membar, it works on byte intervals and follows structured control
//! flow: a loop body starts with everything its iterations access pending (the previous iteration's accesses
//! reach the next one), a branch merges what either side leaves pending.
//!
//! Asynchronous copies run until a wait retires their group, and a CTA barrier before that does not end them:
//! TMA stores read their buffer until a `tma_store_wait` retires their bulk group, `cp.async` copies write
//! theirs until an `async_wait` retires their commit group. Their spans are kept per group, apart from the
//! accesses a barrier clears, and become ordinary pending accesses at the wait (each thread waits for its own
//! copies; the other threads learn of it at the next barrier). A `cp.async` copy still in flight calls for no
//! barrier (none would order it: see [`Hazards::needs`]).
//!
//! The tensor cores and TMA read through the async proxy: a thread's store reaches them only through a
//! `fence.proxy.async` its writer makes before the barrier that orders it. Stores no fence has followed are kept
//! apart from the barriers' pending accesses, so that an async read of bytes a barrier published without the
//! fence (one placed for a thread's read) still gets a fence and a barrier. A landed `cp.async` copy needs the
//! wait that retires its group and a barrier, not the fence: NVIDIA's own sm_90 `cp.async` + GMMA mainloops
//! (CUTLASS's multistage collectives) and Triton's pipelined loops hand landed copies to `wgmma` that way, and
//! the fence is not free there: ptxas makes it a `MEMBAR.ALL.CTA`, which waits for the thread's copies still
//! queued to read their address registers (on the H200, 9% of tutorial 03's 64x128x64 matmul's stall samples
//! at 1536, ncu).

use std::collections::VecDeque;

/// How an op touches shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// `ld.shared` (generic proxy).
    Read,
    /// `st.shared` (generic proxy).
    Write,
    /// A `cp.async` copy's write: like `Write` for the threads, but the tensor cores see it once its wait and a
    /// barrier order it, with no proxy fence (see the module's documentation).
    CopyWrite,
    /// Read by the async proxy (`wgmma` operands through matrix descriptors, TMA stores).
    AsyncRead,
    /// Written by the async proxy (a TMA load). It must wait for earlier accesses like any write, but leaves
    /// nothing pending: its readers learn it landed from its mbarrier, not from a CTA barrier.
    AsyncWrite,
    /// Written by the program's first thread alone (`mbarrier.init`, `mbarrier.inval`): ordered after another
    /// such write by program order, after anything else by a barrier.
    LeaderWrite,
}

impl Access {
    fn writes(self) -> bool {
        matches!(self, Access::Write | Access::CopyWrite | Access::AsyncWrite | Access::LeaderWrite)
    }
}

/// A byte interval `[start, end)` of shared memory and how it is accessed.
pub type Span = (u32, u32, Access);

/// What must precede an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    None,
    /// `bar.sync`.
    Barrier,
    /// `fence.proxy.async.shared::cta` then `bar.sync`: generic writes made visible to the async proxy.
    FenceBarrier,
}

/// The accesses made since the last CTA barrier, and the asynchronous copies not yet waited for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hazards {
    pending: Vec<Span>,
    /// Threads' writes (stores, landed copies) that no proxy fence has followed, published or not.
    unfenced: Vec<Span>,
    /// TMA stores, by bulk group.
    bulk: Groups,
    /// `cp.async` copies, by commit group.
    copies: Groups,
}

/// Asynchronous copies issued and not yet waited for: the spans of the copies not yet committed, and of each
/// committed group, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Groups {
    open: Vec<Span>,
    committed: VecDeque<Vec<Span>>,
}

impl Groups {
    fn spans(&self) -> impl Iterator<Item = &Span> {
        self.open.iter().chain(self.committed.iter().flatten())
    }

    /// All but the newest `pending` committed groups are done: their spans.
    fn retire(&mut self, pending: u32) -> Vec<Span> {
        let mut done = Vec::new();
        while self.committed.len() > pending as usize {
            done.extend(self.committed.pop_front().expect("a group"));
        }
        done
    }

    /// Either path's copies, groups matched from the newest: a span stays in flight until a wait retires it on
    /// both paths.
    fn merge(&mut self, other: &Groups) {
        for s in &other.open {
            if !self.open.contains(s) {
                self.open.push(*s);
            }
        }
        let (mine, theirs) = (self.committed.len(), other.committed.len());
        for _ in mine..theirs {
            self.committed.push_front(Vec::new());
        }
        let n = self.committed.len();
        for (k, g) in other.committed.iter().enumerate() {
            let at = n - theirs + k;
            for s in g {
                if !self.committed[at].contains(s) {
                    self.committed[at].push(*s);
                }
            }
        }
    }
}

fn overlaps(a: &Span, b: &Span) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// `spans` less the bytes of `cut`.
fn subtract(spans: &[Span], cut: &Span) -> Vec<Span> {
    let mut out = Vec::new();
    for &s in spans {
        if !overlaps(&s, cut) {
            out.push(s);
            continue;
        }
        if s.0 < cut.0 {
            out.push((s.0, cut.0, s.2));
        }
        if cut.1 < s.1 {
            out.push((cut.1, s.1, s.2));
        }
    }
    out
}

impl Hazards {
    /// The synchronization `accesses` need against the pending ones. Reads never conflict with reads.
    ///
    /// `cp.async` copies still in flight are left out: a CTA barrier orders nothing against an asynchronous write
    /// (only the wait that retires its group does; from there its spans are pending like any thread's write). A
    /// program that touches bytes a copy may still be writing races whatever the barriers (a read of them is
    /// refused: by codegen's in-flight tracking for whole buffers, by the interpreter for ring buffers); what
    /// overlaps a copy in flight here is a ring's other buffers, whose spans cover the whole ring when the buffer
    /// is chosen at run time. So the pipeliner's loops read one buffer of a ring, and refill another, while copies
    /// into the rest are in flight, without a barrier per access.
    pub fn needs(&self, accesses: &[Span]) -> Sync {
        let mut sync = Sync::None;
        let others: Vec<&Span> = self.pending.iter().chain(self.bulk.spans()).collect();
        for a in accesses {
            for &p in &others {
                let same_thread = a.2 == Access::LeaderWrite && p.2 == Access::LeaderWrite;
                if !overlaps(a, p) || (!a.2.writes() && !p.2.writes()) || same_thread {
                    continue;
                }
                if a.2 == Access::AsyncRead && p.2 == Access::Write {
                    return Sync::FenceBarrier;
                }
                sync = Sync::Barrier;
            }
            // Published by a barrier, but without the fence: the async proxy may not see it yet.
            if a.2 == Access::AsyncRead && self.unfenced.iter().any(|u| overlaps(a, u)) {
                return Sync::FenceBarrier;
            }
        }
        sync
    }

    /// Records accesses made after the last barrier. A write through the async proxy (a TMA load) replaces the
    /// bytes threads wrote there: nothing of theirs is left to fence.
    pub fn record(&mut self, accesses: &[Span]) {
        for a in accesses {
            match a.2 {
                Access::AsyncWrite => self.unfenced = subtract(&self.unfenced, a),
                Access::Write if !self.unfenced.contains(a) => self.unfenced.push(*a),
                _ => {}
            }
            if a.2 != Access::AsyncWrite && !self.pending.contains(a) {
                self.pending.push(*a);
            }
        }
    }

    /// `fence.proxy.async` by every thread (a `fence_async_shared` op): the writes not yet published are fenced
    /// (the next barrier publishes them to the async proxy too); those a barrier already published without a
    /// fence are not (a writer's fence must come before the barrier that orders it).
    pub fn proxy_fence(&mut self) {
        let pending = &self.pending;
        self.unfenced.retain(|u| !pending.contains(u));
    }

    /// A TMA store's bulk group, reading `spans` until a `tma_store_wait` retires it.
    pub fn bulk_issued(&mut self, spans: &[Span]) {
        self.bulk.committed.push_back(spans.to_vec());
    }

    /// `tma_store_wait {pending}`: the groups older than the newest `pending` are done reading; their spans
    /// are pending like any read until the next barrier.
    pub fn bulk_waited(&mut self, pending: u32) {
        let done = self.bulk.retire(pending);
        self.record(&done);
    }

    /// A `cp.async` copy writing `spans` until the `async_wait` that retires its commit group.
    pub fn copy_issued(&mut self, spans: &[Span]) {
        let copy = |&(a, b, k): &Span| (a, b, if k == Access::Write { Access::CopyWrite } else { k });
        self.copies.open.extend(spans.iter().map(copy));
    }

    /// `async_commit_group`: the copies issued since the last one form a group.
    pub fn copies_committed(&mut self) {
        let group = std::mem::take(&mut self.copies.open);
        self.copies.committed.push_back(group);
    }

    /// `async_wait {pending}`: the groups older than the newest `pending` have landed; their writes are pending
    /// like any write until the next barrier.
    pub fn copies_waited(&mut self, pending: u32) {
        let done = self.copies.retire(pending);
        self.record(&done);
    }

    /// `async_copy_mbarrier_arrive`: the copies in flight complete on an mbarrier, whose wait orders them for
    /// every waiting thread as it orders TMA loads; they leave their groups (which stay, emptied, for the
    /// count of later waits).
    pub fn copies_to_barrier(&mut self) {
        self.copies.open.clear();
        for g in self.copies.committed.iter_mut() {
            g.clear();
        }
    }

    /// A CTA barrier: no access of a thread is pending any more (TMA stores still read until waited for).
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    /// `fence.proxy.async` by every thread, then a CTA barrier: besides [`Hazards::clear`], every write so far is
    /// visible to the async proxy.
    pub fn clear_fenced(&mut self) {
        self.pending.clear();
        self.unfenced.clear();
    }

    /// What is pending after either of two paths (an `if`'s branches, a loop's entry and its back edge), and
    /// unfenced after either. Bulk groups are matched from the newest: a span stays in flight until a wait
    /// retires it on both paths.
    pub fn merge(&mut self, other: &Hazards) {
        self.record(&other.pending);
        for u in &other.unfenced {
            if !self.unfenced.contains(u) {
                self.unfenced.push(*u);
            }
        }
        self.bulk.merge(&other.bulk);
        self.copies.merge(&other.copies);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Access::*;

    #[test]
    fn reads_share_writes_wait_and_the_tensor_cores_need_a_fence() {
        let mut h = Hazards::default();
        h.record(&[(0, 1024, Write)]);
        assert_eq!(h.needs(&[(1024, 2048, Write)]), Sync::None, "disjoint");
        assert_eq!(h.needs(&[(512, 600, Read)]), Sync::Barrier, "read after write");
        assert_eq!(h.needs(&[(0, 16, AsyncRead)]), Sync::FenceBarrier, "wgmma reads what threads wrote");
        h.clear();
        h.record(&[(0, 1024, AsyncRead), (0, 1024, Read)]);
        assert_eq!(h.needs(&[(0, 1024, Read)]), Sync::None, "reads after reads");
        assert_eq!(h.needs(&[(1000, 1100, Write)]), Sync::Barrier, "write after read");
        let mut other = Hazards::default();
        other.record(&[(4096, 8192, Write)]);
        h.merge(&other);
        assert_eq!(h.needs(&[(5000, 5001, Read)]), Sync::Barrier, "a merged path's write is pending");
    }

    #[test]
    fn a_tma_load_waits_for_earlier_readers_and_leaves_nothing_pending() {
        let mut h = Hazards::default();
        h.record(&[(0, 1024, AsyncRead)]);
        assert_eq!(h.needs(&[(0, 1024, AsyncWrite)]), Sync::Barrier, "the wgmma may still read the buffer");
        h.clear();
        h.record(&[(0, 1024, AsyncWrite)]);
        assert_eq!(h.needs(&[(0, 1024, Read)]), Sync::None, "its mbarrier orders the readers");
        assert_eq!(h.needs(&[(0, 1024, AsyncRead)]), Sync::None, "no generic write to fence");
    }

    #[test]
    fn the_first_threads_writes_are_ordered_among_themselves() {
        let mut h = Hazards::default();
        h.record(&[(0, 16, LeaderWrite)]);
        assert_eq!(h.needs(&[(0, 16, LeaderWrite)]), Sync::None, "initializing a ring's barriers one by one");
        assert_eq!(h.needs(&[(0, 8, Read)]), Sync::Barrier, "everyone waits on an initialized barrier");
        h.clear();
        h.record(&[(0, 8, Read)]);
        assert_eq!(h.needs(&[(0, 8, LeaderWrite)]), Sync::Barrier, "invalidated after every thread's wait");
    }

    #[test]
    fn a_tma_store_reads_until_its_wait_and_a_barrier_after_it() {
        let mut h = Hazards::default();
        h.bulk_issued(&[(0, 1024, AsyncRead)]);
        h.clear();
        assert_eq!(h.needs(&[(0, 16, Write)]), Sync::Barrier, "a barrier before the wait does not end the read");
        h.bulk_issued(&[(2048, 4096, AsyncRead)]);
        h.bulk_waited(1);
        h.clear();
        assert_eq!(h.needs(&[(0, 16, Write)]), Sync::None, "the older group was waited for, then a barrier");
        assert_eq!(h.needs(&[(2048, 2064, Write)]), Sync::Barrier, "the newer one still reads");
        h.bulk_waited(0);
        assert_eq!(h.needs(&[(2048, 2064, Write)]), Sync::Barrier, "waited, but the other threads need a barrier");
        h.clear();
        assert_eq!(h.needs(&[(2048, 2064, Write)]), Sync::None);
    }

    #[test]
    fn a_copy_lands_at_its_wait_and_a_barrier_publishes_it() {
        let mut h = Hazards::default();
        h.copy_issued(&[(0, 1024, Write)]);
        h.copies_committed();
        h.copy_issued(&[(1024, 2048, Write)]);
        h.copies_committed();
        assert_eq!(h.needs(&[(0, 16, Read)]), Sync::None, "in flight: no barrier orders it, only its wait");
        h.copies_waited(1);
        assert_eq!(h.needs(&[(0, 16, Read)]), Sync::Barrier, "landed, but other threads' copies need a barrier");
        assert_eq!(h.needs(&[(1024, 1040, Read)]), Sync::None, "the newer group is still in flight");
        h.clear();
        assert_eq!(h.needs(&[(0, 16, Read)]), Sync::None, "waited for, then a barrier");
        h.copies_waited(0);
        assert_eq!(h.needs(&[(1024, 1040, Read)]), Sync::Barrier, "landed, but other threads' copies need a barrier");
        assert_eq!(h.needs(&[(1024, 1040, AsyncRead)]), Sync::Barrier, "and the tensor cores: a barrier, no fence");
    }

    #[test]
    fn a_ring_is_read_and_refilled_with_one_barrier_each_while_copies_fly() {
        // A ring of four buffers at [0, 4096): every access's span is the whole ring (its buffer is chosen at run
        // time). Three copy groups in flight; the loop waits for the oldest and reads its buffer.
        let ring = [(0, 4096, Write)];
        let mut h = Hazards::default();
        for _ in 0..3 {
            h.copy_issued(&ring);
            h.copies_committed();
        }
        h.copies_waited(2);
        assert_eq!(h.needs(&[(0, 4096, AsyncRead)]), Sync::Barrier, "the landed buffer, to the tensor cores");
        h.clear();
        h.record(&[(0, 4096, AsyncRead)]);
        assert_eq!(h.needs(&[(0, 4096, AsyncRead)]), Sync::None, "more dots on the ring: the copies in flight");
        assert_eq!(h.needs(&[(0, 4096, Read)]), Sync::None, "and threads reading it: no barrier orders them");
        assert_eq!(h.needs(&ring), Sync::Barrier, "the refill, after the tensor cores read the ring");
        h.clear();
        h.copy_issued(&ring);
        h.copies_committed();
        assert_eq!(h.needs(&ring), Sync::None, "a barrier would not order two copies");
    }

    #[test]
    fn the_tensor_cores_see_a_write_only_through_a_fence_before_a_barrier() {
        let mut h = Hazards::default();
        h.record(&[(0, 1024, Write)]);
        h.clear();
        assert_eq!(h.needs(&[(0, 16, Read)]), Sync::None, "published to the threads");
        assert_eq!(h.needs(&[(0, 16, AsyncRead)]), Sync::FenceBarrier, "but the barrier had no fence");
        assert_eq!(h.needs(&[(1024, 2048, AsyncRead)]), Sync::None, "other bytes");
        h.clear_fenced();
        assert_eq!(h.needs(&[(0, 16, AsyncRead)]), Sync::None, "fenced and published");
        // Gluon's store, fence_async_shared, thread barrier, wgmma.
        h.record(&[(0, 1024, Write)]);
        h.proxy_fence();
        h.clear();
        assert_eq!(h.needs(&[(0, 16, AsyncRead)]), Sync::None, "the writers fenced before the barrier");
        h.record(&[(0, 1024, Write)]);
        h.clear();
        h.proxy_fence();
        assert_eq!(h.needs(&[(0, 16, AsyncRead)]), Sync::FenceBarrier, "a fence after the barrier orders nothing");
        h.record(&[(256, 512, AsyncWrite)]);
        assert_eq!(h.needs(&[(256, 512, AsyncRead)]), Sync::None, "a TMA load replaced those bytes");
        assert_eq!(h.needs(&[(0, 256, AsyncRead)]), Sync::FenceBarrier, "not these");
    }

    #[test]
    fn merged_paths_keep_a_store_in_flight_until_both_retire_it() {
        let mut waited = Hazards::default();
        waited.bulk_issued(&[(0, 1024, AsyncRead)]);
        let mut not = waited.clone();
        not.bulk_issued(&[(8192, 9000, AsyncRead)]);
        waited.bulk_waited(0);
        waited.clear();
        waited.bulk_issued(&[(4096, 5000, AsyncRead)]);
        not.merge(&waited);
        not.bulk_waited(1);
        not.clear();
        assert_eq!(not.needs(&[(0, 16, Write)]), Sync::None, "the older group is retired by wait(1) on both paths");
        not.bulk_waited(0);
        not.clear();
        assert_eq!(not.needs(&[(4096, 4100, Write)]), Sync::None);
        let mut a = Hazards::default();
        a.bulk_issued(&[(0, 1024, AsyncRead)]);
        let mut b = Hazards::default();
        b.bulk_issued(&[(0, 1024, AsyncRead)]);
        b.bulk_issued(&[(8192, 9000, AsyncRead)]);
        a.merge(&b);
        a.bulk_waited(1);
        a.clear();
        assert_eq!(a.needs(&[(0, 16, Write)]), Sync::Barrier, "on `a`'s path the store is the newest group");
    }
}
