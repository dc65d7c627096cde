//! The one barrier analysis: which shared-memory accesses since the last `bar.sync` may still be in flight in
//! other threads, and so whether an access needs a CTA barrier first (a read after a write, a write after a
//! read or a write, by different threads) and, when the tensor cores read what threads wrote, a
//! `fence.proxy.async` too. Like Triton's Membar, it works on byte intervals and follows structured control
//! flow: a loop body starts with everything its iterations access pending (the previous iteration's accesses
//! reach the next one), a branch merges what either side leaves pending.

/// How an op touches shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// `ld.shared` (generic proxy).
    Read,
    /// `st.shared` (generic proxy).
    Write,
    /// Read by the async proxy (`wgmma` operands through matrix descriptors, TMA stores).
    AsyncRead,
    /// Written by the async proxy (a TMA load). It must wait for earlier accesses like any write, but leaves
    /// nothing pending: its readers learn it landed from its mbarrier, not from a CTA barrier.
    AsyncWrite,
}

impl Access {
    fn writes(self) -> bool {
        matches!(self, Access::Write | Access::AsyncWrite)
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

/// The accesses made since the last CTA barrier.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hazards {
    pending: Vec<Span>,
}

fn overlaps(a: &Span, b: &Span) -> bool {
    a.0 < b.1 && b.0 < a.1
}

impl Hazards {
    /// The synchronization `accesses` need against the pending ones. Reads never conflict with reads.
    pub fn needs(&self, accesses: &[Span]) -> Sync {
        let mut sync = Sync::None;
        for a in accesses {
            for p in &self.pending {
                if !overlaps(a, p) || (!a.2.writes() && !p.2.writes()) {
                    continue;
                }
                if a.2 == Access::AsyncRead && p.2 == Access::Write {
                    return Sync::FenceBarrier;
                }
                sync = Sync::Barrier;
            }
        }
        sync
    }

    /// Records accesses made after the last barrier.
    pub fn record(&mut self, accesses: &[Span]) {
        for a in accesses.iter().filter(|a| a.2 != Access::AsyncWrite) {
            if !self.pending.contains(a) {
                self.pending.push(*a);
            }
        }
    }

    /// A CTA barrier: nothing is pending any more.
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    /// What is pending after either of two paths (an `if`'s branches, a loop's entry and its back edge).
    pub fn merge(&mut self, other: &Hazards) {
        self.record(&other.pending);
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
}
