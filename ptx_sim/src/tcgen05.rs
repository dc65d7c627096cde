//! Tensor memory, `tcgen05` and mbarriers for the simulator, written from the PTX ISA independently of
//! tessel-codegen: the TMEM address (`lane << 16 | column`), the warp's lane quarter, the `32x32b` access
//! (thread l of a warp: lane quarter base + l, N consecutive columns) and `16x32bx2` (two halves of 16 lanes,
//! the second an immediate's columns on), the instruction descriptors of the dense kinds `f16`, `tf32`,
//! `f8f6f4` (e4m3, e5m2) and `i8` (s8, u8; s32 D) (M 64 and 128) with the
//! data path layouts of D and of A in TMEM, and the sm_100 shared-memory descriptor, decoded field by field as
//! the ISA defines them. `tcgen05.cp` and the block-scaled MMAs are [`super::tcgen05_scaled`]'s, a CTA pair's MMAs
//! and commits (`.cta_group::2`) [`super::tcgen05_pair`]'s; a pair allocates its tensor memory as two CTAs.
//!
//! The simulator completes an MMA when it is issued; `tcgen05.commit` then arrives on its mbarrier at once
//! (`mbarrier`), and a wait that observes the commit's phase retires the ops it covers. What the simulator checks:
//! the allocation (a power of two in [32, 512] columns, by one warp, freed before `ret`), every TMEM access
//! inside it and in the warp's quarter, one issuing thread per MMA, descriptors in the forms it knows,
//! tensor-core reads of shared bytes stored without a `fence.proxy.async` since, and the order of every tensor
//! memory access by happens-before (`tmem_race`: a commit releases the tensor cores' accesses into its mbarrier's
//! phase; the waits and fences move the threads' accesses on).

use std::collections::HashMap;

use super::tcgen05_dense::{Dense, a_from_smem, a_from_tmem, accumulate, b_from_smem};
use super::tmem_race::Reader;
use super::{Cta, Ins, Opnd};

/// Lanes and columns of a CTA's tensor memory.
const LANES: usize = 128;
const COLUMNS: usize = 512;

/// The simulator's tensor memory and its allocation.
pub(super) struct State {
    pub(super) cells: Vec<u32>,
    /// (first column, columns) of the live allocation.
    alloc: Option<(u32, u32)>,
    /// The CTA group (1, or 2: a CTA pair) of the tcgen05 ops so far: a kernel uses one (ptxas refuses a mix).
    group: Option<u8>,
    /// What is in flight (see [`InFlight`]).
    pub(super) flight: InFlight,
    /// Who accessed each cell, for the happens-before check (`tmem_race`).
    pub(super) hb: super::tmem_race::Shadow,
}

/// The op numbers a commit covers, of each CTA (by cluster rank) whose ops it tracks.
type Covers = Vec<(usize, u32)>;

/// The tcgen05 ops in flight. The simulator computes an op when it is issued, but the hardware lands it
/// later: only a wait that observes a `tcgen05.commit` tracking it (an `mbarrier.try_wait.parity` that finds the
/// commit's phase complete) says it has. Until then, reading or overwriting its destination cells
/// (`tcgen05.ld`/`tcgen05.st`), overwriting tensor-memory cells it reads (A or block scales) with `tcgen05.st`,
/// or overwriting shared bytes it reads (a store, `cp.async`, a TMA load), is an error. A `tcgen05.cp` over
/// cells an MMA in flight reads is one only on a thread that asked
/// ([`super::tcgen05_scaled::check_copy_order`]`(true)`): the ISA's list of pipelined tcgen05 pairs (PTX ISA
/// 9.7.16.6.2: mma then mma of the same accumulator, copy then mma, shift then mma, shift then `cp.4x256b`, mma
/// then shift) does not order an MMA before a later copy, but the public Gluon kernels that copy block scales
/// (tutorial 11, example 04) copy each K step's over the previous step's while that MMA may run, so the tests of
/// auto mode's own scale buffers ask for the check and those of the Gluon kernels do not (example 04's shows the
/// report, then compares its values). Ops are numbered in issue order; a commit covers every op issued before it
/// (the pipe runs them in order), so the observed ones are always a prefix: `retired`.
#[derive(Default)]
pub(super) struct InFlight {
    /// Ops issued so far (the number of the latest).
    seq: u32,
    /// Every op up to this number has landed and been observed.
    retired: u32,
    /// The latest op reading each shared byte (0: none).
    smem_reader: Vec<u32>,
    /// The latest op writing each tensor-memory cell (0: none).
    cell_writer: Vec<u32>,
    /// The latest op reading each tensor-memory cell (an MMA's A or scales; 0: none).
    cell_reader: Vec<u32>,
    /// Each mbarrier's pending commits: (the phase the commit arrives in, the ops it covers).
    commits: HashMap<u64, Vec<(u64, u32)>>,
    /// Commits of other CTAs' ops (a CTA pair's MMAs) arriving on this CTA's mbarriers: per barrier, (phase, the
    /// covered op number of each such CTA by rank).
    peer_commits: HashMap<u64, Vec<(u64, Covers)>>,
    /// Per cluster rank: every op of that CTA up to this number has landed, as a wait in this CTA observed (so a
    /// copy this CTA issues into that CTA may overwrite what they read).
    known: Vec<u32>,
    /// What each op issued so far is, for [`check_mma_order`]'s pipelining rule (ops not listed: neither).
    kinds: HashMap<u32, OpKind>,
}

/// What a tcgen05 op is, for the ISA's list of pipelined pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OpKind {
    /// A `tcgen05.cp`.
    Copy,
    /// A dense one-CTA MMA into the accumulator at this column, of this M and N.
    Mma(u32, u32, u32),
}

thread_local! {
    /// Whether an MMA touching tensor-memory cells an unfinished tcgen05 op uses, where the ISA does not pipeline
    /// the two, is an error: set per test thread by [`check_mma_order`].
    static MMA_ORDER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes this thread's simulations refuse (`true`) or allow (`false`, the default, as the tensor cores are seen to
/// run one thread's ops in issue order) a dense one-CTA MMA that writes tensor-memory cells an unfinished earlier
/// tcgen05 op reads or writes, or reads cells one writes, unless the ISA pipelines the pair (an MMA after an MMA
/// into the same accumulator, an MMA after a `tcgen05.cp`: PTX ISA 9.7.16.6.2). The interpreter's
/// `--mma-order isa` holds kernels to the same rule.
pub fn check_mma_order(strict: bool) {
    MMA_ORDER.with(|c| c.set(strict));
}

impl InFlight {
    /// A tcgen05 op is issued: its number.
    pub(super) fn issue(&mut self) -> u32 {
        self.seq += 1;
        self.seq
    }

    /// The op being issued reads shared byte `addr`.
    pub(super) fn reads(&mut self, addr: u64) {
        let a = addr as usize;
        if self.smem_reader.len() <= a {
            self.smem_reader.resize(a + 1, 0);
        }
        self.smem_reader[a] = self.seq;
    }

    /// The op being issued writes tensor-memory cell `cell`.
    pub(super) fn writes(&mut self, cell: usize) {
        self.written_by(cell, self.seq);
    }

    /// Op `op` (issued earlier: a pair MMA computed when its issuing CTA stopped) writes cell `cell`.
    pub(super) fn written_by(&mut self, cell: usize, op: u32) {
        if self.cell_writer.len() <= cell {
            self.cell_writer.resize(LANES * COLUMNS, 0);
        }
        self.cell_writer[cell] = op;
    }

    /// The number of the latest op issued.
    pub(super) fn latest(&self) -> u32 {
        self.seq
    }

    /// The op being issued reads tensor-memory cell `cell`.
    pub(super) fn reads_cell(&mut self, cell: usize) {
        if self.cell_reader.len() <= cell {
            self.cell_reader.resize(LANES * COLUMNS, 0);
        }
        self.cell_reader[cell] = self.seq;
    }

    /// What op `op` is, if recorded.
    pub(super) fn kind_of(&self, op: u32) -> Option<OpKind> {
        self.kinds.get(&op).copied()
    }

    /// Op `op` is `kind`.
    pub(super) fn set_kind(&mut self, op: u32, kind: OpKind) {
        self.kinds.insert(op, kind);
    }

    /// [`check_mma_order`]: MMA `op` (an [`OpKind::Mma`]) writes (`writes`) or reads tensor-memory cell `cell`.
    /// An unfinished earlier op that writes it, or (for a write) reads it, must be one the ISA runs before it.
    pub(super) fn check_mma_order(&self, op: u32, me: OpKind, cell: usize, writes: bool) -> Result<(), String> {
        if !MMA_ORDER.with(std::cell::Cell::get) {
            return Ok(());
        }
        let pipelined = |earlier: u32| match self.kinds.get(&earlier) {
            Some(OpKind::Copy) => true,
            Some(&k) => k == me,
            None => false,
        };
        let mut touched = vec![(&self.cell_writer, "writes")];
        if writes {
            touched.push((&self.cell_reader, "reads"));
        }
        for (ops, does) in touched {
            match ops.get(cell) {
                Some(&earlier) if earlier > self.retired && earlier != op && !pipelined(earlier) => {
                    return Err(format!(
                        "tcgen05.mma (op #{op}) {} lane {}, column {}, which tcgen05 op #{earlier} still {does}: the ISA \
                         runs two tcgen05 ops in issue order only when both are MMAs into the same accumulator or a \
                         tcgen05.cp comes first, and no wait has observed a commit tracking op #{earlier}",
                        if writes { "writes" } else { "reads" },
                        cell / COLUMNS,
                        cell % COLUMNS
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `what` (a `tcgen05.st` or `tcgen05.cp`) writes tensor-memory cell `cell`: no op in flight may read it.
    pub(super) fn check_cell_write(&self, cell: usize, what: &str) -> Result<(), String> {
        self.in_flight_at(&self.cell_reader, cell, what, "reads")
    }

    /// `what` writes shared bytes `addr..addr + n`: none may be read by an op in flight.
    pub(super) fn check_smem_write(&self, addr: u64, n: usize, what: &str) -> Result<(), String> {
        self.check_smem_write_known(addr, n, what, 0)
    }

    /// [`InFlight::check_smem_write`] for a write another CTA issued, which knew this CTA's ops up to `known` to
    /// have landed.
    pub(super) fn check_smem_write_known(&self, addr: u64, n: usize, what: &str, known: u32) -> Result<(), String> {
        let retired = self.retired.max(known);
        for a in addr as usize..addr as usize + n {
            if self.smem_reader.get(a).is_some_and(|&op| op > retired) {
                return Err(format!(
                    "{what} overwrites shared byte {a}, which tcgen05 op #{} still reads: no wait has observed a \
                     commit tracking it",
                    self.smem_reader[a]
                ));
            }
        }
        Ok(())
    }

    /// `what` touches tensor-memory cell `cell`: no op in flight may write it.
    fn check_cell(&self, cell: usize, what: &str) -> Result<(), String> {
        self.in_flight_at(&self.cell_writer, cell, what, "writes")
    }

    /// Refuses `what` at `cell` when `ops` (the latest op that `does` it, per cell) holds an op in flight there.
    fn in_flight_at(&self, ops: &[u32], cell: usize, what: &str, does: &str) -> Result<(), String> {
        match ops.get(cell) {
            Some(&op) if op > self.retired => Err(format!(
                "{what} lane {}, column {}, which tcgen05 op #{op} still {does}: no wait has observed a commit \
                 tracking it",
                cell / COLUMNS,
                cell % COLUMNS
            )),
            _ => Ok(()),
        }
    }

    /// A `tcgen05.commit` arrives on `bar` in its running phase `phase`, covering the ops up to `cover`.
    pub(super) fn commit(&mut self, bar: u64, phase: u64, cover: u32) {
        self.commits.entry(bar).or_default().push((phase, cover));
    }

    /// A wait finds every phase of `bar` before `running` complete: the ops their commits cover have landed.
    pub(super) fn observe(&mut self, bar: u64, running: u64) {
        if let Some(list) = self.commits.get_mut(&bar) {
            let done = list.iter().filter(|&&(p, _)| p < running).map(|&(_, cover)| cover).max();
            list.retain(|&(p, _)| p >= running);
            if let Some(cover) = done {
                self.retired = self.retired.max(cover);
                let retired = self.retired;
                self.kinds.retain(|&op, _| op > retired);
            }
        }
        if let Some(list) = self.peer_commits.get_mut(&bar) {
            for (_, covers) in list.iter().filter(|(p, _)| *p < running) {
                for &(rank, cover) in covers {
                    if self.known.len() <= rank {
                        self.known.resize(rank + 1, 0);
                    }
                    self.known[rank] = self.known[rank].max(cover);
                }
            }
            list.retain(|(p, _)| *p >= running);
        }
    }

    /// Another CTA's commit arrives on `bar` in phase `phase`, covering each listed CTA's ops up to its number.
    pub(super) fn peer_commit(&mut self, bar: u64, phase: u64, covers: Covers) {
        self.peer_commits.entry(bar).or_default().push((phase, covers));
    }

    /// What a wait of this CTA has observed of CTA `rank`'s ops: every op up to this number has landed.
    pub(super) fn knows(&self, rank: usize) -> u32 {
        self.known.get(rank).copied().unwrap_or(0)
    }
}

impl Default for State {
    fn default() -> Self {
        // Poisoned: tensor memory nobody wrote reads as NaN bits.
        State {
            cells: vec![0x7fc0_0001; LANES * COLUMNS],
            alloc: None,
            group: None,
            flight: InFlight::default(),
            hb: Default::default(),
        }
    }
}

fn threads(active: &[bool]) -> Vec<usize> {
    active.iter().enumerate().filter(|(_, a)| **a).map(|(t, _)| t).collect()
}

fn mem_addr(c: &Cta, t: usize, o: &Opnd) -> Result<u64, String> {
    c.addr(t, o)
}

impl State {
    /// Cell of (lane, column), checked against the allocation.
    pub(super) fn cell(&self, lane: u32, col: u32) -> Result<usize, String> {
        let (first, n) = self.alloc.ok_or("tensor memory accessed with nothing allocated")?;
        if lane as usize >= LANES || col < first || col >= first + n {
            return Err(format!("tensor memory lane {lane}, column {col} is outside the allocation ({n} columns)"));
        }
        Ok(lane as usize * COLUMNS + col as usize)
    }

    /// Checks nothing is left allocated when the CTA exits.
    pub(super) fn at_exit(&self) -> Result<(), String> {
        match self.alloc {
            Some((_, n)) => Err(format!("the CTA exits with {n} tensor-memory columns still allocated")),
            None => Ok(()),
        }
    }
}

/// Whether [`exec`] executes `op`: `tcgen05.*`.
pub(super) fn handles(op: &str) -> bool {
    op.starts_with("tcgen05")
}

/// Executes one `tcgen05.*` instruction for the active threads.
pub(super) fn exec(c: &mut Cta, ins: &Ins, active: &[bool]) -> Result<(), String> {
    let ts = threads(active);
    let op = ins.op.as_str();
    let a = &ins.args;
    let pair = op.contains(".cta_group::2");
    if pair || op.contains(".cta_group::1") {
        let group = if pair { 2 } else { 1 };
        if c.tmem.group.is_some_and(|g| g != group) {
            return Err(format!("`{op}` mixes .cta_group::{group} with .cta_group::{} in one kernel", 3 - group));
        }
        c.tmem.group = Some(group);
        if pair && (c.cluster.size % 2 != 0) {
            return Err(format!("`{op}` needs CTA pairs: the cluster has {} CTA(s)", c.cluster.size));
        }
    }
    // The ordering instructions (`tmem_race`): a wait completes the thread's loads or stores, the fence before a
    // thread synchronization publishes the waited stores, the fence after one orders the warp's tcgen05 ops after
    // what it acquired.
    if op.starts_with("tcgen05.wait::st") || op.starts_with("tcgen05.wait::ld") {
        ts.iter().for_each(|&t| c.tmem_wait(t, op.starts_with("tcgen05.wait::st")));
        return Ok(());
    }
    if op.starts_with("tcgen05.fence::before_thread_sync") {
        ts.iter().for_each(|&t| c.tmem_fence_before(t));
        return Ok(());
    }
    if op.starts_with("tcgen05.fence::after_thread_sync") {
        let warps: std::collections::BTreeSet<usize> = ts.iter().map(|t| t / 32).collect();
        warps.into_iter().for_each(|w| c.clocks.tc_fence(w));
        return Ok(());
    }
    if op.starts_with("tcgen05.relinquish") {
        return Ok(());
    }
    if op.starts_with("tcgen05.alloc") || op.starts_with("tcgen05.dealloc") {
        // One whole warp.
        let warp = ts.first().map(|t| t / 32).ok_or("no thread executes it")?;
        if ts.len() != 32 || ts.iter().any(|t| t / 32 != warp) {
            return Err(format!("`{op}` must be executed by exactly one whole warp"));
        }
        let n = c.val(ts[0], &a[1])? as u32;
        if !n.is_power_of_two() || !(32..=512).contains(&n) {
            return Err(format!("{n} columns: tcgen05 allocates a power of two in [32, 512]"));
        }
        if op.starts_with("tcgen05.alloc") {
            if c.tmem.alloc.is_some() {
                return Err("a second tcgen05.alloc while tensor memory is allocated is not simulated".into());
            }
            c.tmem.alloc = Some((0, n));
            c.tmem.hb.clear();
            // The address (lane 0, column 0) lands in shared memory, written as by the warp's first thread.
            let at = mem_addr(c, ts[0], &a[0])?;
            c.smem(ts[0], at, 4, Some(&0u32.to_le_bytes()))?.copy_from_slice(&0u32.to_le_bytes());
        } else {
            let addr = c.val(ts[0], &a[0])? as u32;
            if c.tmem.alloc != Some((addr & 0xffff, n)) || addr >> 16 != 0 {
                return Err(format!("tcgen05.dealloc of {addr:#x}, {n} columns does not match the allocation"));
            }
            c.tmem.alloc = None;
        }
        return Ok(());
    }
    if op.starts_with("tcgen05.ld") || op.starts_with("tcgen05.st") {
        let load = op.starts_with("tcgen05.ld");
        let parts: Vec<&str> = op.split('.').collect();
        // .32x32b: thread l of the warp, lane base + l. .16x32bx2: two 16-lane halves, threads 0-15 at lanes
        // base + l, threads 16-31 at lanes base + l - 16 from the column `half` (the immediate) further on.
        let split = parts.contains(&"16x32bx2");
        if !(parts.contains(&"32x32b") || split)
            || parts.iter().any(|p| p.starts_with("pack") || p.starts_with("unpack"))
        {
            return Err(format!("`{op}`: only the 32x32b and 16x32bx2 shapes without packing are simulated"));
        }
        let num: usize = parts.iter().find_map(|p| p.strip_prefix('x')?.parse().ok()).ok_or("no .xN")?;
        let (regs_op, mem_op) = match (load, split) {
            (true, _) => (&a[0], &a[1]),
            (false, false) => (&a[1], &a[0]),
            (false, true) => (&a[2], &a[0]),
        };
        let half_op = if split { Some(if load { &a[2] } else { &a[1] }) } else { None };
        let Opnd::Vec(regs) = regs_op else { return Err("registers must be a {..} list".into()) };
        if regs.len() != num {
            return Err(format!(".x{num} moves {num} registers, the list has {}", regs.len()));
        }
        let regs: Vec<usize> = regs.iter().map(|r| r.ok_or("`_` in the list")).collect::<Result<_, _>>()?;
        for warp in ts.iter().map(|t| t / 32).collect::<std::collections::BTreeSet<_>>() {
            let lanes: Vec<usize> = ts.iter().copied().filter(|t| t / 32 == warp).collect();
            if lanes.len() != 32 {
                return Err(format!("`{op}` is .sync.aligned: warp {warp} executes it with {} threads", lanes.len()));
            }
            let addr = c.addr(lanes[0], mem_op)? as u32;
            if lanes.iter().any(|&t| c.addr(t, mem_op).ok() != Some(addr as u64)) {
                return Err(format!("warp {warp}'s threads give different tensor-memory addresses"));
            }
            let (lane0, col0) = (addr >> 16, addr & 0xffff);
            if lane0 != 32 * (warp as u32 % 4) {
                return Err(format!("warp {warp} may access lanes {}.. only, not lane {lane0}", 32 * (warp % 4)));
            }
            let half = match half_op {
                Some(h) => c.val(lanes[0], h)? as u32,
                None => 0,
            };
            for &t in &lanes {
                let (lane, col) = match half_op {
                    None => (lane0 + (t % 32) as u32, col0),
                    Some(_) => (lane0 + (t % 16) as u32, col0 + if t % 32 >= 16 { half } else { 0 }),
                };
                for (j, &r) in regs.iter().enumerate() {
                    let cell = c.tmem.cell(lane, col + j as u32)?;
                    c.tmem.flight.check_cell(cell, if load { "tcgen05.ld reads" } else { "tcgen05.st writes" })?;
                    if !load {
                        c.tmem.flight.check_cell_write(cell, "tcgen05.st writes")?;
                    }
                    c.tmem_thread(t, cell, !load)?;
                    if load {
                        c.regs[t][r] = c.tmem.cells[cell] as u64;
                    } else {
                        c.tmem.cells[cell] = c.regs[t][r] as u32;
                    }
                }
            }
        }
        return Ok(());
    }
    if op.starts_with("tcgen05.commit") && pair {
        return super::tcgen05_pair::commit(c, &ts, op, a);
    }
    if op.starts_with("tcgen05.commit") {
        if !op.contains("mbarrier::arrive::one") || op.contains("multicast") {
            return Err(format!("`{op}` is not simulated"));
        }
        for &t in &ts {
            let bar = mem_addr(c, t, &a[0])?;
            let phase = c.mbar.bars.get(&bar).ok_or("a commit to an mbarrier that is not initialized")?.phase;
            let cover = c.tmem.flight.latest();
            c.tmem.flight.commit(bar, phase, cover);
            // Whoever observes the phase is ordered after the tensor cores' accesses of the ops it covers.
            let core = c.clocks.core_clock(cover);
            super::mbarrier::release(c, bar, &core)?;
            super::mbarrier::arrive(c, t, bar, 1)?;
        }
        return Ok(());
    }
    if op.starts_with("tcgen05.mma") && pair {
        if ts.len() > 1 {
            return Err(format!("`{op}` is issued by one thread; {} threads issue it here", ts.len()));
        }
        if let Some(&t) = ts.first() {
            c.tmem.flight.issue();
            if op.contains(".block_scale") {
                super::tcgen05_pair::issue_scaled(c, t, op, a)?;
            } else {
                super::tcgen05_pair::issue(c, t, op, a)?;
            }
        }
        return Ok(());
    }
    if op.starts_with("tcgen05.mma") || op.starts_with("tcgen05.cp") {
        let scaled = op.contains(".block_scale");
        let dense = ["f16", "tf32", "f8f6f4", "i8"].map(|k| format!("tcgen05.mma.cta_group::1.kind::{k}"));
        if !(dense.iter().any(|d| d == op) || scaled || op.starts_with("tcgen05.cp")) {
            return Err(format!("`{op}` is not simulated"));
        }
        if ts.len() > 1 {
            return Err(format!("`{op}` is issued by one thread; {} threads issue it here", ts.len()));
        }
        if let Some(&t) = ts.first() {
            let n = c.tmem.flight.issue();
            if op.starts_with("tcgen05.cp") {
                c.tmem.flight.set_kind(n, OpKind::Copy);
            }
            if op.starts_with("tcgen05.cp") && pair {
                super::tcgen05_pair::copy(c, t, op, a)?;
            } else if op.starts_with("tcgen05.cp") {
                super::tcgen05_scaled::copy(c, t, op, a)?;
            } else if scaled {
                super::tcgen05_scaled::mma(c, t, op, a)?;
            } else {
                mma(c, t, op, a)?;
            }
        }
        return Ok(());
    }
    Err(format!("`{op}` is not simulated"))
}

/// `tcgen05.mma.cta_group::1.kind::{f16,tf32,f8f6f4,i8} [d], a, b_desc, idesc, enable_input_d` by thread `t`:
/// 32 bytes of K (16 f16/bf16, 8 tf32, 32 fp8 or 8-bit integers) into f32 D (s32 for kind::i8).
fn mma(c: &mut Cta, t: usize, op: &str, a: &[Opnd]) -> Result<(), String> {
    let kind = op.strip_prefix("tcgen05.mma.cta_group::1.kind::").ok_or_else(|| format!("`{op}` is not simulated"))?;
    let s = Dense::decode(kind, c.val(t, &a[3])? as u32, false)?;
    let d_addr = c.addr(t, &a[0])? as u32;
    let (d_lane, d_col) = (d_addr >> 16, d_addr & 0xffff);
    if d_lane != 0 {
        return Err("the accumulator of a cta_group::1 MMA starts at lane 0".into());
    }
    let me = OpKind::Mma(d_col, s.m, s.n);
    c.tmem.flight.set_kind(c.tmem.flight.latest(), me);
    // A: M x K, from shared memory (a descriptor) or tensor memory (kind::f16: lane = row, K packed two per column).
    let av = match &a[1] {
        Opnd::Mem(..) => {
            let addr = c.addr(t, &a[1])? as u32;
            a_from_tmem(c, Reader::Thread(t), &s, addr, s.m)?
        }
        o => {
            let desc = c.val(t, o)?;
            a_from_smem(c, Reader::Thread(t), &s, desc, s.m)?
        }
    };
    let mut bv = vec![0f64; s.n as usize * s.k_elems()];
    let b_desc = c.val(t, &a[2])?;
    b_from_smem(c, Reader::Thread(t), &s, b_desc, s.n, (&mut bv, s.n as usize, 0))?;
    let enable = c.val(t, &a[4])? != 0;
    let op = c.tmem.flight.latest();
    accumulate(c, (&s, op, Some(Reader::Thread(t))), d_col, s.m, (&av, &bv), enable)
}
