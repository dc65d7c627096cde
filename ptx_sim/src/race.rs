//! Shared memory as the simulator's threads see it, checked for races by happens-before: every warp has a
//! vector clock over the CTA's threads and its mbarriers' asynchronous copies (an *agent* per barrier: the TMA
//! loads and cluster-launch-control responses completing on it). An access records who made it (thread and its
//! epoch and its warp's count of intra-warp barriers, or the agent and its epoch); a later access conflicts with
//! it unless it is ordered after it: the same thread, a thread of the same warp after a `bar.warp.sync` or barrier
//! of that warp since, or another warp's thread (or an agent) whose epoch the accessing warp's clock covers.
//! Clocks move by synchronization only (see [`Clocks`]): a warp *releases* its clock into a named barrier, an
//! mbarrier phase or a cluster barrier when it arrives, and *acquires* what was released when it passes a
//! completed barrier (a named barrier it syncs on, an mbarrier wait that finds the phase complete, a cluster
//! barrier wait); a copy's completion (`complete_tx`) releases its writes into the mbarrier's phase, a tcgen05
//! commit the tensor cores' accesses (`tmem_race`). So the order the scheduler happens to run warps in hides
//! nothing. Across a cluster, a clock travels as the cluster names its entries ([`Clocks::export`]): a thread's
//! arrival on a peer's mbarrier releases its warp's clock there, and a cluster barrier joins every CTA's
//! releases; a CTA holds the other CTAs' threads and agents it learned of as agents of its own. Also here:
//! atomics (ordered among themselves), and the proxy rule: a thread's stores are unfenced for the async proxy
//! until its warp runs a `fence.proxy.async`.

use std::collections::HashMap;

use super::Cta;

/// A vector clock: entry `i` is the epoch of agent `i` (threads first, then the agents: the mbarriers' copy
/// agents, the tensor cores, and the other CTAs' threads and agents this CTA learned of) that is known; missing
/// entries are 0.
pub(super) type VClock = Vec<u32>;

/// A copy that completes on a peer CTA's mbarrier (a pair's, `tma`) writes as the agent of that barrier's offset
/// with the peer's rank plus one at this bit: no thread of the writing CTA waits on it.
pub(super) const PEER_BAR: u32 = 40;

/// An agent of a CTA's own: the copies completing on an mbarrier (by its offset, with [`PEER_BAR`] for a peer's),
/// or the CTA's tensor cores (its tcgen05 MMAs and copies, whose epochs are their op numbers: a commit covering
/// op k releases epoch k).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Local {
    Bar(u64),
    Core,
}

/// A thread or an agent of the cluster, by its CTA's rank: what an entry of one CTA's clock stands for in
/// another's ([`Clocks::export`], [`Clocks::import`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Id {
    Thread(u32, u32),
    Agent(u32, Local),
}

/// A clock carried from one CTA of a cluster to another: the known epoch of each thread and agent.
pub(super) type Export = Vec<(Id, u32)>;

/// What a CTA's agent entry is: one of its own agents, or another CTA's thread or agent that it learned of through
/// a barrier the two share (a remote mbarrier arrival, a cluster barrier).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Key {
    Own(Local),
    Peer(Id),
}

/// `a` joined with `b` (entry-wise maximum).
pub(super) fn join(a: &mut VClock, b: &[u32]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, &y) in a.iter_mut().zip(b) {
        *x = (*x).max(y);
    }
}

/// The thread of an asynchronous copy's write (no thread of the CTA).
const ASYNC: u32 = u32::MAX;

/// One access to a shared byte: by `thread` at its `epoch` with its warp's intra-warp barrier count `wsync`, or
/// by a copy agent (`thread` [`ASYNC`], `agent`) at the agent's epoch.
#[derive(Clone, Copy, Debug)]
pub(super) struct Access {
    thread: u32,
    agent: u32,
    epoch: u32,
    wsync: u32,
}

/// The last write of one shared byte, and the reads since that are not ordered before another read of them (an
/// antichain: a write must be ordered after each): the first inline, the others (several threads reading at
/// once) in `more`.
#[derive(Clone, Default)]
pub(super) struct Shadow {
    write: Option<Access>,
    /// The last write was an atomic (atomics of different threads need no barrier between them).
    atomic: bool,
    read: Option<Access>,
    more: Vec<Access>,
}

impl Shadow {
    /// Whether anything (a thread's store, a copy) has written the byte.
    pub(super) fn written(&self) -> bool {
        self.write.is_some()
    }

    fn reads(&self) -> impl Iterator<Item = &Access> {
        self.read.iter().chain(&self.more)
    }

    /// A read `r`, dropping the reads ordered before it (`before`).
    fn add_read(&mut self, r: Access, before: impl Fn(&Access) -> bool) {
        self.more.retain(|a| !before(a));
        if self.read.as_ref().is_some_and(&before) {
            self.read = self.more.pop();
        }
        match self.read {
            None => self.read = Some(r),
            Some(_) => self.more.push(r),
        }
    }

    /// A write `w` (every read is ordered before it).
    fn set_write(&mut self, w: Access, atomic: bool) {
        self.write = Some(w);
        self.atomic = atomic;
        self.read = None;
        self.more.clear();
    }
}

/// The CTA's clocks. Entries are per thread (`0..n`) and per copy agent (`n..`): what a warp knows of each
/// thread's and agent's accesses. A warp's own threads are ordered among themselves by its intra-warp barriers
/// only (`wsync`): what one lane releases covers the other lanes' accesses up to their warp's last such barrier
/// (`synced`), not after it, so an elected thread's arrival does not carry its neighbours' unsynchronized
/// stores.
pub(super) struct Clocks {
    n: usize,
    /// Per warp: the epochs of the other warps' threads and of the agents it has acquired.
    know: Vec<VClock>,
    /// Per thread: its epoch now, and its epoch at its warp's last intra-warp barrier.
    epoch: Vec<u32>,
    synced: Vec<u32>,
    /// Per warp: intra-warp barriers passed.
    wsync: Vec<u32>,
    /// Threads that released during the instruction running (their epochs move on after it).
    released: Vec<usize>,
    /// Each agent's index past the threads, what each index stands for, and the copy agents' next epochs.
    agents: HashMap<Key, usize>,
    keys: Vec<Key>,
    agent_epoch: Vec<u32>,
    /// Per warp: what it knew at its last `tcgen05.fence::after_thread_sync`, which is what orders its tcgen05 ops
    /// (`tmem_race`) after the synchronization before that fence.
    tc_know: Vec<VClock>,
}

impl Clocks {
    pub(super) fn new(threads: usize) -> Clocks {
        let warps = threads.div_ceil(32);
        Clocks {
            n: threads,
            know: vec![vec![0; threads]; warps],
            epoch: vec![1; threads],
            synced: vec![0; threads],
            wsync: vec![0; warps],
            released: Vec::new(),
            agents: HashMap::new(),
            keys: Vec::new(),
            agent_epoch: Vec::new(),
            tc_know: vec![vec![0; threads]; warps],
        }
    }

    /// The index of agent `key`, a new one if it had none.
    fn agent(&mut self, key: Key) -> usize {
        if let Some(&i) = self.agents.get(&key) {
            return i;
        }
        self.keys.push(key);
        self.agents.insert(key, self.keys.len() - 1);
        self.keys.len() - 1
    }

    /// What lanes `lanes` (a bit each) of warp `w` release now: the warp's knowledge, their own epochs and the
    /// other lanes' up to the warp's last intra-warp barrier. Their epochs move on once the instruction is done.
    pub(super) fn release(&mut self, w: usize, lanes: u32) -> VClock {
        let mut c = self.know[w].clone();
        let lanes_of_w = 32 * w..(32 * w + 32).min(self.n);
        for (t, e) in c[lanes_of_w.clone()].iter_mut().enumerate().map(|(l, e)| (32 * w + l, e)) {
            *e = if lanes >> (t % 32) & 1 == 1 { self.epoch[t] } else { self.synced[t] };
        }
        self.released.extend(lanes_of_w.filter(|t| lanes >> (t % 32) & 1 == 1));
        c
    }

    /// Warp `w` acquires `c`.
    pub(super) fn acquire(&mut self, w: usize, c: &[u32]) {
        join(&mut self.know[w], c);
    }

    /// Warp `w` passes a barrier of all its threads (`bar.warp.sync`, a named or cluster barrier): its lanes are
    /// ordered among themselves.
    pub(super) fn warp_sync(&mut self, w: usize) {
        self.wsync[w] += 1;
        for t in 32 * w..(32 * w + 32).min(self.n) {
            self.synced[t] = self.epoch[t];
            self.epoch[t] += 1;
        }
    }

    /// After each instruction: the epochs of the threads that released move on.
    pub(super) fn step(&mut self) {
        for t in self.released.drain(..) {
            self.epoch[t] += 1;
        }
    }

    /// A new write of the copy agent of mbarrier `bar`: its access, and the clock its completion releases.
    pub(super) fn copy(&mut self, bar: u64) -> (Access, VClock) {
        let agent = self.agent(Key::Own(Local::Bar(bar)));
        if self.agent_epoch.len() <= agent {
            self.agent_epoch.resize(agent + 1, 1);
        }
        let epoch = self.agent_epoch[agent];
        self.agent_epoch[agent] += 1;
        let mut c = vec![0; self.n + agent + 1];
        c[self.n + agent] = epoch;
        (Access { thread: ASYNC, agent: agent as u32, epoch, wsync: 0 }, c)
    }

    /// Warp `w` runs `tcgen05.fence::after_thread_sync`: its tcgen05 ops from now on are ordered after what it
    /// has acquired so far.
    pub(super) fn tc_fence(&mut self, w: usize) {
        self.tc_know[w].clone_from(&self.know[w]);
    }

    /// What warp `w` knows of clock entry `entry` (a thread, or an agent past them): for its tcgen05 ops (`tc`: as
    /// of its last `tcgen05.fence::after_thread_sync`) or its other accesses.
    pub(super) fn knows(&self, w: usize, entry: usize, tc: bool) -> u32 {
        let know = if tc { &self.tc_know[w] } else { &self.know[w] };
        know.get(entry).copied().unwrap_or(0)
    }

    /// Thread `t`'s epoch now.
    pub(super) fn epoch(&self, t: usize) -> u32 {
        self.epoch[t]
    }

    /// Thread `t`'s epoch at its warp's last intra-warp barrier.
    pub(super) fn synced(&self, t: usize) -> u32 {
        self.synced[t]
    }

    /// The clock entry of the CTA's tensor cores (`None` before any commit released it).
    pub(super) fn core(&self) -> Option<usize> {
        self.agents.get(&Key::Own(Local::Core)).map(|&i| self.n + i)
    }

    /// The clock a commit covering the CTA's tcgen05 ops up to number `cover` releases: the tensor cores at `cover`.
    pub(super) fn core_clock(&mut self, cover: u32) -> VClock {
        let at = self.n + self.agent(Key::Own(Local::Core));
        let mut c = vec![0; at + 1];
        c[at] = cover;
        c
    }

    /// What thread `t` knows for its tcgen05 ops (as of its warp's last `tcgen05.fence::after_thread_sync`, its own
    /// epoch and its lanes' up to their last intra-warp barrier): what a pair MMA it issues is ordered after.
    pub(super) fn tc_view(&self, t: usize) -> VClock {
        let w = t / 32;
        let mut c = self.tc_know[w].clone();
        if c.len() < self.n {
            c.resize(self.n, 0);
        }
        let lanes = 32 * w..(32 * w + 32).min(self.n);
        for (x, u) in c[lanes.clone()].iter_mut().zip(lanes) {
            *x = if u == t { self.epoch[u] } else { self.synced[u] };
        }
        c
    }

    /// Clock `c` of this CTA (of rank `rank`) as the cluster names its entries.
    pub(super) fn export(&self, rank: u32, c: &[u32]) -> Export {
        c.iter()
            .enumerate()
            .filter(|&(_, &e)| e > 0)
            .map(|(i, &e)| {
                let id = if i < self.n {
                    Id::Thread(rank, i as u32)
                } else {
                    match self.keys[i - self.n] {
                        Key::Own(l) => Id::Agent(rank, l),
                        Key::Peer(id) => id,
                    }
                };
                (id, e)
            })
            .collect()
    }

    /// An exported clock ([`Clocks::export`]) as this CTA's (of rank `rank`): its own threads and agents where the
    /// clock names them, the other CTAs' as agents of theirs.
    pub(super) fn import(&mut self, rank: u32, ex: &Export) -> VClock {
        let mut c = vec![0; self.n];
        for &(id, e) in ex {
            let at = match id {
                Id::Thread(r, t) if r == rank => t as usize,
                Id::Agent(r, l) if r == rank => self.n + self.agent(Key::Own(l)),
                other => self.n + self.agent(Key::Peer(other)),
            };
            if c.len() <= at {
                c.resize(at + 1, 0);
            }
            c[at] = c[at].max(e);
        }
        c
    }

    /// Thread `t`'s access now.
    fn access(&self, t: usize) -> Access {
        Access { thread: t as u32, agent: 0, epoch: self.epoch[t], wsync: self.wsync[t / 32] }
    }

    /// Whether `a` is ordered before thread `t`'s access now.
    fn ordered(&self, a: &Access, t: usize) -> bool {
        let w = t / 32;
        let at = if a.thread == ASYNC {
            self.n + a.agent as usize
        } else if a.thread as usize == t {
            return true;
        } else if a.thread as usize / 32 == w {
            return self.wsync[w] > a.wsync;
        } else {
            a.thread as usize
        };
        self.know[w].get(at).is_some_and(|&e| e >= a.epoch)
    }

    /// Who made `a`, for an error.
    fn who(&self, a: &Access) -> String {
        if a.thread != ASYNC {
            return format!("thread {}", a.thread);
        }
        let bar = match self.keys.get(a.agent as usize) {
            Some(Key::Own(Local::Bar(b))) => *b,
            _ => 0,
        };
        match bar >> PEER_BAR {
            0 => format!("an asynchronous copy completing on the mbarrier at shared {bar:#x}"),
            peer => format!(
                "an asynchronous pair copy completing on CTA {}'s mbarrier at shared {:#x}",
                peer - 1,
                bar & ((1 << PEER_BAR) - 1)
            ),
        }
    }
}

impl Cta<'_> {
    /// A store of `n` shared bytes at `addr` by thread `t` (the generic proxy): unfenced until its warp runs a
    /// `fence.proxy.async`.
    pub(super) fn mark_generic(&mut self, t: usize, addr: u64, n: usize) {
        let a = addr as usize;
        if let Some(bytes) = self.unfenced.get_mut(a..a + n) {
            bytes.iter_mut().for_each(|b| *b = (t / 32 + 1) as u8);
            self.unfenced_warps |= 1 << (t / 32);
        }
    }

    /// `fence.proxy.async` by the warps of `warps` (a bit each): their stores are fenced.
    pub(super) fn proxy_fence(&mut self, warps: u64) {
        if self.unfenced_warps & warps == 0 {
            return;
        }
        for b in self.unfenced.iter_mut() {
            if *b != 0 && warps >> (*b - 1) & 1 == 1 {
                *b = 0;
            }
        }
        self.unfenced_warps &= !warps;
    }

    /// The async proxy (a tensor-core or TMA op, `what`) reads shared byte `addr`: a thread's store to it must have
    /// been fenced since.
    pub(super) fn async_read(&self, addr: u64, what: &str) -> Result<(), String> {
        match self.unfenced.get(addr as usize).copied().unwrap_or(0) {
            0 => Ok(()),
            w => Err(format!(
                "{what} reads shared byte {addr}, which warp {} stored without a fence.proxy.async since",
                w - 1
            )),
        }
    }

    fn in_bounds(&self, a: usize, n: usize, what: &str) -> Result<(), String> {
        let len = self.smem.len();
        if a + n > len {
            return Err(format!("shared {what} of {n} bytes at {a} past the {len} bytes allocated"));
        }
        Ok(())
    }

    /// Bytes `addr..addr + n` of shared memory for thread `t`, after checking the access against the earlier
    /// accesses not ordered before it (see the module): a read of another thread's unordered write, a write over
    /// another thread's unordered read, or a different value over another thread's unordered write is a race,
    /// reported as an error.
    pub(super) fn smem(&mut self, t: usize, addr: u64, n: usize, write: Option<&[u8]>) -> Result<&mut [u8], String> {
        let a = addr as usize;
        self.in_bounds(a, n, "access")?;
        if write.is_some() {
            self.tmem.flight.check_smem_write(addr, n, &format!("thread {t}'s store"))?;
        }
        let me = self.clocks.access(t);
        for i in 0..n {
            match write {
                None => {
                    let sh = &self.shadow[a + i];
                    if let Some(w) = sh.write
                        && !self.clocks.ordered(&w, t)
                    {
                        let who = self.clocks.who(&w);
                        return race(a + i, &format!("thread {t} reads what {who} wrote"));
                    }
                    let clocks = &self.clocks;
                    self.shadow[a + i].add_read(me, |r| clocks.ordered(r, t));
                }
                Some(new) => {
                    self.check_write(t, a + i, new[i], "")?;
                    self.shadow[a + i].set_write(me, false);
                    self.cluster.wrote(a + i);
                }
            }
        }
        Ok(&mut self.smem[a..a + n])
    }

    /// A write of `value` to shared byte `a` with thread `t`'s knowledge: every read since the last write must be
    /// ordered before it, and the last write too unless it wrote the same value.
    fn check_write(&self, t: usize, a: usize, value: u8, what: &str) -> Result<(), String> {
        let sh = &self.shadow[a];
        if let Some(r) = sh.reads().find(|r| !self.clocks.ordered(r, t)) {
            return race(a, &format!("thread {t}{what} overwrites what {} read", self.clocks.who(r)));
        }
        if let Some(w) = sh.write
            && !self.clocks.ordered(&w, t)
            && self.smem[a] != value
        {
            return race(a, &format!("{} and thread {t}{what} write different values", self.clocks.who(&w)));
        }
        Ok(())
    }

    /// An asynchronous copy's write of `bytes` at shared `at`, completing on the mbarrier `bar`: checked against
    /// the earlier accesses with the knowledge of the thread that issued it (`issuer`; none for a peer's
    /// multicast, ordered by the cluster barrier), then recorded as the barrier's copy agent's. Returns the clock
    /// the copy's completion releases into the barrier's phase.
    pub(super) fn async_write(
        &mut self,
        issuer: Option<usize>,
        bar: u64,
        writes: &[(usize, Vec<u8>)],
    ) -> Result<VClock, String> {
        let (me, clock) = self.clocks.copy(bar);
        for (s, bytes) in writes {
            self.in_bounds(*s, bytes.len(), "copy")?;
            for (i, &b) in bytes.iter().enumerate() {
                if let Some(t) = issuer {
                    self.check_write(t, s + i, b, "'s asynchronous copy")?;
                }
                self.smem[s + i] = b;
                self.shadow[s + i].set_write(me, false);
                self.cluster.wrote(s + i);
            }
        }
        Ok(clock)
    }

    /// Bytes `addr..addr + n` of shared memory for an atomic read-modify-write by thread `t`: ordered with
    /// other threads' atomics, but a race with their unordered plain reads and writes.
    pub(super) fn smem_atomic(&mut self, t: usize, addr: u64, n: usize) -> Result<&mut [u8], String> {
        let a = addr as usize;
        self.in_bounds(a, n, "atomic")?;
        self.tmem.flight.check_smem_write(addr, n, &format!("thread {t}'s atomic"))?;
        let me = self.clocks.access(t);
        for i in 0..n {
            let sh = &self.shadow[a + i];
            if let Some(w) = sh.write
                && !sh.atomic
                && !self.clocks.ordered(&w, t)
            {
                return race(a + i, &format!("thread {t}'s atomic meets {}'s write", self.clocks.who(&w)));
            }
            if let Some(r) = sh.reads().find(|r| !self.clocks.ordered(r, t)) {
                return race(a + i, &format!("thread {t}'s atomic meets {}'s read", self.clocks.who(r)));
            }
            self.shadow[a + i].set_write(me, true);
        }
        Ok(&mut self.smem[a..a + n])
    }
}

fn race<T>(byte: usize, what: &str) -> Result<T, String> {
    Err(format!("shared byte {byte}: {what} without a barrier between"))
}
