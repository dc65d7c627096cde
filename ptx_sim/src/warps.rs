//! The threads of a CTA as the simulator schedules them: *groups* of threads that run in lockstep, each with its
//! own pc, and the control instructions that split, block, release and merge them. From the PTX ISA:
//!
//! - A branch the threads of a group disagree on splits it (taken, not taken); `bra.uni` must not disagree
//!   within a warp. The part at the lower pc runs first, and groups that come to the same pc while runnable (or
//!   are released together at it) merge again, so a warp split by an `if` runs converged after it.
//!   Instructions that need their warp converged (`.sync`/`.aligned` ones: shuffles, votes, `ldmatrix`, `mma.sync`,
//!   tcgen05's loads...) are refused in a warp whose live threads are on different paths.
//! - Named barriers (`bar.sync`/`barrier.sync`/`bar.arrive`/`barrier.arrive a{, b}`, `a` immediate or in a
//!   register, 16 of them): a warp's arrival counts once all its non-exited threads have executed the
//!   instruction, as 32 threads (a thread count `b` must be a multiple of 32; without one, every non-exited
//!   thread of the CTA takes part); the barrier completes when the count is reached, releasing the syncing
//!   groups (which merge where they stand at the same pc). Every arrival releases its warp's clock into the
//!   barrier, every syncing warp acquires the join (`race`).
//! - `exit`/`ret` retire threads: exited threads count as gone for every barrier (a barrier without a count then
//!   needs fewer, and a warp partly exited arrives with the rest).
//! - `mbarrier.try_wait` failing in every thread of its group blocks the group at the wait until the barrier's
//!   phase moves; `barrier.cluster.arrive`/`wait` per warp: a group waits until the cluster's phase ends
//!   (`cluster`).
//! - Warpgroup-collective instructions (`wgmma.mma_async`, `setmaxnreg`) wait until every live warp of the
//!   warpgroup has reached the same one, then run once for the warpgroup.
//!
//! The scheduler runs one group until it blocks, exits or has run a while, then the next. When none can move and
//! some wait, the CTA stops ([`super::Stop::Blocked`]): another CTA of the cluster may free it, or it is a
//! deadlock, which [`Sched::report`] describes (which warps wait where, for which barrier and phase).

use super::race::{VClock, join};
use super::{Cta, Global, Ins, Opnd, Stop};

/// A set of a CTA's threads (at most 1024).
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub(super) struct Mask([u64; 16]);

impl Mask {
    fn first(n: usize) -> Mask {
        let mut m = Mask::default();
        (0..n).for_each(|t| m.set(t));
        m
    }

    pub(super) fn of(active: &[bool]) -> Mask {
        let mut m = Mask::default();
        active.iter().enumerate().filter(|(_, a)| **a).for_each(|(t, _)| m.set(t));
        m
    }

    pub(super) fn has(&self, t: usize) -> bool {
        self.0[t / 64] >> (t % 64) & 1 == 1
    }

    fn set(&mut self, t: usize) {
        self.0[t / 64] |= 1 << (t % 64);
    }

    fn zip(&self, o: &Mask, f: impl Fn(u64, u64) -> u64) -> Mask {
        Mask(std::array::from_fn(|i| f(self.0[i], o.0[i])))
    }

    fn and(&self, o: &Mask) -> Mask {
        self.zip(o, |a, b| a & b)
    }

    fn or(&self, o: &Mask) -> Mask {
        self.zip(o, |a, b| a | b)
    }

    fn minus(&self, o: &Mask) -> Mask {
        self.zip(o, |a, b| a & !b)
    }

    fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The lanes of warp `w` in the set.
    fn lanes(&self, w: usize) -> u32 {
        (self.0[w / 2] >> (32 * (w % 2))) as u32
    }

    /// The warps with a thread in the set, a bit each.
    pub(super) fn warps(&self) -> u64 {
        (0..32).filter(|&w| self.lanes(w) != 0).fold(0, |m, w| m | 1 << w)
    }
}

/// `warps` (a bit each) as `warps 0-3, 8`.
fn warp_list(warps: u64) -> String {
    let ws: Vec<usize> = (0..64).filter(|w| warps >> w & 1 == 1).collect();
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let mut j = i;
        while j + 1 < ws.len() && ws[j + 1] == ws[j] + 1 {
            j += 1;
        }
        runs.push(if j > i { format!("{}-{}", ws[i], ws[j]) } else { ws[i].to_string() });
        i = j + 1;
    }
    format!("warp{} {}", if ws.len() == 1 { "" } else { "s" }, runs.join(", "))
}

/// What a group waits for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wait {
    Run,
    /// Named barrier `id` (its pc is after the `bar.sync`).
    Bar(u32),
    /// The mbarrier at this shared address to complete the phase of this parity (its pc is at the wait).
    Mbar(u64, u64),
    /// The cluster barrier's phase to end (its pc is after the `barrier.cluster.wait`).
    Cluster,
    /// The other warps of its warpgroup at this warpgroup-collective instruction (its pc is at it).
    Warpgroup,
}

#[derive(Clone, Debug)]
struct Group {
    threads: Mask,
    pc: usize,
    wait: Wait,
}

/// One named barrier's running generation: the threads that arrived, the count they gave (`None`: every
/// non-exited thread of the CTA), the clock their warps released, and the line of the first arrival.
#[derive(Clone, Default)]
struct Named {
    arrived: Mask,
    count: Option<Option<u32>>,
    clock: VClock,
    line: usize,
}

/// A CTA's groups, barriers and exited threads.
pub(super) struct Sched {
    n: usize,
    groups: Vec<Group>,
    exited: Mask,
    named: Vec<Named>,
    /// Threads that arrived at the cluster barrier in the running phase, and the clock their warps released.
    cluster_arrived: Mask,
    pub(super) cluster_clock: VClock,
    steps: u64,
}

/// Instructions a group runs before the scheduler turns to the next one.
const QUANTUM: usize = 20_000;

impl Sched {
    pub(super) fn new(threads: usize) -> Sched {
        Sched {
            n: threads,
            groups: vec![Group { threads: Mask::first(threads), pc: 0, wait: Wait::Run }],
            exited: Mask::default(),
            named: vec![Named::default(); 16],
            cluster_arrived: Mask::default(),
            cluster_clock: Vec::new(),
            steps: 0,
        }
    }

    fn live(&self) -> Mask {
        Mask::first(self.n).minus(&self.exited)
    }

    /// Whether every live thread has arrived at the cluster barrier (and some thread lives).
    pub(super) fn cluster_all_arrived(&self) -> bool {
        !self.groups.is_empty() && self.live().minus(&self.cluster_arrived).is_empty()
    }

    /// Merges the groups that are runnable (or wait at the same warpgroup-collective instruction) at the same pc;
    /// returns where group `keep` went.
    fn merge(&mut self, mut keep: Option<usize>) -> Option<usize> {
        let mut i = 0;
        while i < self.groups.len() {
            let mut j = i + 1;
            while j < self.groups.len() {
                let (a, b) = (&self.groups[i], &self.groups[j]);
                if a.pc == b.pc && a.wait == b.wait && matches!(a.wait, Wait::Run | Wait::Warpgroup) {
                    let t = b.threads;
                    self.groups[i].threads = self.groups[i].threads.or(&t);
                    self.groups.remove(j);
                    keep = keep.map(|k| match k {
                        _ if k == j => i,
                        _ if k > j => k - 1,
                        _ => k,
                    });
                } else {
                    j += 1;
                }
            }
            i += 1;
        }
        // A warpgroup-collective wait ends once the group holds every live warp of its warpgroups.
        let live = self.live();
        for g in &mut self.groups {
            if g.wait == Wait::Warpgroup && whole_warpgroups(&g.threads, &live) {
                g.wait = Wait::Run;
            }
        }
        keep
    }

    /// Describes every waiting group (for a deadlock): which warps wait where, and for what.
    pub(super) fn report(&self, c: &Cta) -> String {
        let mut out = Vec::new();
        for g in &self.groups {
            let line = |pc: usize| c.p.ins.get(pc).map_or(0, |i| i.line);
            let who = warp_list(g.threads.warps());
            let what = match g.wait {
                Wait::Run => format!("{who} at line {}: could still run", line(g.pc)),
                Wait::Bar(id) => {
                    let b = &self.named[id as usize];
                    let want = match b.count {
                        Some(Some(n)) => format!("{n} threads"),
                        _ => format!("all {} live threads", self.live().count()),
                    };
                    format!(
                        "{who} at line {}: named barrier {id} (`{}`), which counts {want}; {} arrived ({})",
                        line(g.pc - 1),
                        c.p.ins[g.pc - 1].op,
                        counted(&b.arrived, &self.live()).0,
                        warp_list(b.arrived.warps())
                    )
                }
                Wait::Mbar(bar, parity) => format!(
                    "{who} at line {}: mbarrier at shared {bar:#x}, waiting for its phase of parity {parity} ({})",
                    line(g.pc),
                    c.mbar.describe(bar)
                ),
                Wait::Cluster => format!("{who} at line {}: the cluster barrier", line(g.pc - 1)),
                Wait::Warpgroup => format!(
                    "{who} at line {}: `{}`, waiting for the other warps of their warpgroup",
                    line(g.pc),
                    c.p.ins[g.pc].op
                ),
            };
            out.push(what);
        }
        out.join("; ")
    }
}

/// The threads counted at a barrier by `arrived`: 32 (the warp's size) for each warp all of whose live threads
/// arrived; and whether a warp arrived only in part.
fn counted(arrived: &Mask, live: &Mask) -> (u32, bool) {
    let (mut n, mut partial) = (0, false);
    for w in 0..32 {
        let (a, l) = (arrived.lanes(w), live.lanes(w));
        if a == 0 {
            continue;
        }
        if l & !a == 0 {
            n += 32;
        } else {
            partial = true;
        }
    }
    (n, partial)
}

fn whole_warpgroups(threads: &Mask, live: &Mask) -> bool {
    (0..8).all(|g| {
        let (t, l) = ((4 * g..4 * g + 4).map(|w| threads.lanes(w)), (4 * g..4 * g + 4).map(|w| live.lanes(w)));
        let (t, l): (Vec<u32>, Vec<u32>) = (t.collect(), l.collect());
        t.iter().all(|&x| x == 0) || t == l
    })
}

/// Runs the CTA's groups until none can move: where it stopped, and whether any instruction ran.
pub(super) fn run_cta(c: &mut Cta, g: &mut Global) -> Result<(Stop, bool), String> {
    let mut moved = false;
    let mut next = 0;
    loop {
        // Groups whose mbarrier phase moved try their wait again.
        for gr in &mut c.sched.groups {
            if let Wait::Mbar(bar, parity) = gr.wait
                && c.mbar.passes(bar, parity)
            {
                gr.wait = Wait::Run;
            }
        }
        c.sched.merge(None);
        let n = c.sched.groups.len();
        let Some(mut i) = (0..n).map(|k| (next + k) % n.max(1)).find(|&k| c.sched.groups[k].wait == Wait::Run) else {
            break;
        };
        for _ in 0..QUANTUM {
            moved = true;
            match step(c, g, i)? {
                Some(k) => i = k,
                None => break,
            }
        }
        next = i + 1;
    }
    if c.sched.groups.is_empty() {
        return Ok((Stop::Exited, moved));
    }
    let all_cluster = c.sched.groups.iter().all(|g| g.wait == Wait::Cluster);
    Ok((if all_cluster { Stop::ClusterWait } else { Stop::Blocked }, moved))
}

/// The cluster barrier's phase ended: the groups waiting at it acquire what the CTA's warps released and go on.
pub(super) fn cluster_phase_ended(c: &mut Cta) {
    let clock = std::mem::take(&mut c.sched.cluster_clock);
    c.sched.cluster_arrived = Mask::default();
    let mut released = 0u64;
    for g in &mut c.sched.groups {
        if g.wait == Wait::Cluster {
            g.wait = Wait::Run;
            released |= g.threads.warps();
        }
    }
    for w in (0..32).filter(|w| released >> w & 1 == 1) {
        c.clocks.acquire(w, &clock);
        c.clocks.warp_sync(w);
    }
    c.sched.merge(None);
}

/// Runs one instruction of group `i`: the group to go on with (`None`: it blocked or exited).
fn step(c: &mut Cta, g: &mut Global, i: usize) -> Result<Option<usize>, String> {
    c.sched.steps += 1;
    let Group { threads: members, pc, .. } = c.sched.groups[i].clone();
    let Some(ins) = c.p.ins.get(pc).cloned() else {
        exit(c, i, members)?;
        return Ok(None);
    };
    if c.sched.steps > 50_000_000 {
        return Err(format!("too many steps (at line {} of CTA {:?})", ins.line, c.ctaid));
    }
    let active: Vec<bool> = (0..c.sched.n)
        .map(|t| members.has(t) && ins.pred.is_none_or(|(p, want)| (c.regs[t][p] != 0) == want))
        .collect();
    let act = Mask::of(&active);
    let op = ins.op.as_str();
    let at = |e: String| format!("line {}: `{op}`: {e}", ins.line);
    let go_on = match op.split('.').next().unwrap() {
        "bra" => branch(c, i, &ins, act)?,
        "ret" | "exit" => {
            let rest = members.minus(&act);
            if !rest.is_empty() {
                c.sched.groups[i].pc += 1;
            }
            if !act.is_empty() {
                exit(c, i, act)?;
            }
            (!rest.is_empty()).then_some(i)
        }
        "bar" if op.starts_with("bar.warp.sync") => {
            converged(c, members, act, &ins)?;
            for w in (0..32).filter(|w| act.warps() >> w & 1 == 1) {
                c.clocks.warp_sync(w);
            }
            c.sched.groups[i].pc += 1;
            Some(i)
        }
        "bar" | "barrier" if !op.starts_with("barrier.cluster") => named(c, i, &ins, act).map_err(at)?,
        "barrier" => cluster(c, i, &ins, act).map_err(at)?,
        "setmaxnreg" | "wgmma" if op.starts_with("setmaxnreg") || op.starts_with("wgmma.mma_async") => {
            if act.is_empty() {
                c.sched.groups[i].pc += 1;
                return Ok(Some(i));
            }
            if act != members {
                return Err(at("executed by part of its group (a predicate that differs between threads)".into()));
            }
            converged(c, members, act, &ins)?;
            if !whole_warpgroups(&members, &c.sched.live()) {
                c.sched.groups[i].wait = Wait::Warpgroup;
                c.sched.merge(None);
                return Ok(None);
            }
            if op.starts_with("setmaxnreg") {
                let n = match ins.args.first() {
                    Some(Opnd::Imm(n)) => *n,
                    other => return Err(at(format!("{other:?} is not an immediate register count"))),
                };
                if !(24..=256).contains(&n) || n % 8 != 0 {
                    return Err(at(format!("{n} registers: setmaxnreg takes a multiple of 8 in [24, 256]")));
                }
            } else {
                super::step(c, g, &ins, &active)?;
            }
            c.sched.groups[i].pc += 1;
            Some(i)
        }
        _ => {
            if op.split('.').any(|p| p == "sync" || p == "aligned") || op.starts_with("activemask") {
                converged(c, members, act, &ins)?;
            }
            super::step(c, g, &ins, &active)?;
            c.clocks.step();
            if op.starts_with("mbarrier.try_wait")
                && let Some(Opnd::Reg(p)) = ins.args.first()
                && let Some(t) = (0..c.sched.n).find(|&t| active[t])
                && (0..c.sched.n).all(|u| !active[u] || c.regs[u][*p] == 0)
            {
                // Failed in every thread: wait for the phase to move (the first thread's barrier and parity).
                let bar = c.addr(t, &ins.args[1]).map_err(at)?;
                let parity = c.val(t, &ins.args[2]).map_err(at)?;
                c.sched.groups[i].wait = Wait::Mbar(bar, parity);
                return Ok(None);
            }
            c.sched.groups[i].pc += 1;
            Some(i)
        }
    };
    c.clocks.step();
    Ok(c.sched.merge(go_on).filter(|&k| c.sched.groups[k].wait == Wait::Run))
}

/// Refuses an instruction that needs its warps converged in a warp whose live threads are not all in the group.
fn converged(c: &Cta, members: Mask, act: Mask, ins: &Ins) -> Result<(), String> {
    let live = c.sched.live();
    for w in (0..32).filter(|w| act.warps() >> w & 1 == 1) {
        if members.lanes(w) != live.lanes(w) {
            return Err(format!(
                "line {}: `{}` needs warp {w} converged, but {} of its {} live threads are on another path (a \
                 branch that diverged within the warp)",
                ins.line,
                ins.op,
                (live.lanes(w) & !members.lanes(w)).count_ones(),
                live.lanes(w).count_ones()
            ));
        }
    }
    Ok(())
}

/// `bra`: the group goes to the target, on, or splits; the part at the lower pc keeps the group's place.
fn branch(c: &mut Cta, i: usize, ins: &Ins, taken: Mask) -> Result<Option<usize>, String> {
    let Some(Opnd::Sym(target)) = ins.args.first() else { return Err(format!("line {}: bad branch", ins.line)) };
    let to = *c.p.labels.get(target).ok_or_else(|| format!("line {}: no label {target}", ins.line))?;
    let g = &mut c.sched.groups[i];
    let rest = g.threads.minus(&taken);
    if rest.is_empty() {
        g.pc = to;
    } else if taken.is_empty() {
        g.pc += 1;
    } else {
        if ins.op.contains(".uni")
            && let Some(w) = (0..32).find(|&w| taken.lanes(w) != 0 && rest.lanes(w) != 0)
        {
            return Err(format!("line {}: `bra.uni` diverges within warp {w}", ins.line));
        }
        let (first, second) =
            if to < g.pc + 1 { ((taken, to), (rest, g.pc + 1)) } else { ((rest, g.pc + 1), (taken, to)) };
        (g.threads, g.pc) = first;
        c.sched.groups.push(Group { threads: second.0, pc: second.1, wait: Wait::Run });
    }
    Ok(Some(i))
}

/// Threads `gone` of group `i` exit (`i` is removed or keeps the rest): the barriers count without them.
fn exit(c: &mut Cta, i: usize, gone: Mask) -> Result<(), String> {
    c.sched.exited = c.sched.exited.or(&gone);
    let left = c.sched.groups[i].threads.minus(&gone);
    if left.is_empty() {
        c.sched.groups.remove(i);
    } else {
        c.sched.groups[i].threads = left;
    }
    c.sched.cluster_arrived = c.sched.cluster_arrived.minus(&gone);
    for id in 0..16 {
        if c.sched.named[id].count.is_some() {
            complete(c, id as u32)?;
        }
    }
    if c.sched.groups.is_empty() {
        c.tmem.at_exit()?;
    }
    Ok(())
}

/// A named barrier instruction: each active warp arrives (at the id and with the count its threads give), the
/// syncing ones wait; the barriers it completes release their waiters. The group to go on with.
fn named(c: &mut Cta, i: usize, ins: &Ins, act: Mask) -> Result<Option<usize>, String> {
    let op = ins.op.as_str();
    let sync = op.split('.').any(|p| p == "sync");
    if !(sync || op.split('.').any(|p| p == "arrive")) {
        return Err("not simulated".into());
    }
    let members = c.sched.groups[i].threads;
    let pc = c.sched.groups[i].pc;
    let mut waiting: Vec<(u32, Mask)> = Vec::new();
    for w in (0..32).filter(|w| act.warps() >> w & 1 == 1) {
        let lanes: Vec<usize> = (0..32).filter(|l| act.lanes(w) >> l & 1 == 1).map(|l| 32 * w + l).collect();
        if act.lanes(w) != members.lanes(w) {
            return Err(format!(
                "warp {w} executes it with {} of the {} threads on its path (a predicate that differs within the \
                 warp; `.aligned` forbids it, and the simulator counts warps)",
                lanes.len(),
                members.lanes(w).count_ones()
            ));
        }
        let id = c.val(lanes[0], &ins.args[0])?;
        let count = ins.args.get(1).map(|o| c.val(lanes[0], o)).transpose()?;
        for &t in &lanes {
            if c.val(t, &ins.args[0])? != id || ins.args.get(1).map(|o| c.val(t, o)).transpose()? != count {
                return Err(format!("the threads of warp {w} give different barriers or counts"));
            }
        }
        if id >= 16 {
            return Err(format!("barrier {id}: a CTA has 16 (0 to 15)"));
        }
        match count {
            Some(n) if n == 0 || n % 32 != 0 => return Err(format!("a thread count of {n}, not a multiple of 32")),
            None if !sync => return Err("`bar.arrive` needs a thread count".into()),
            _ => {}
        }
        let count = count.map(|n| n as u32);
        let clock = c.clocks.release(w, act.lanes(w));
        let b = &mut c.sched.named[id as usize];
        match b.count {
            Some(before) if before != count => {
                return Err(format!(
                    "named barrier {id}: warp {w} counts {} threads, the arrivals before it {}",
                    count.map_or("all".into(), |n| n.to_string()),
                    before.map_or("all".into(), |n| n.to_string())
                ));
            }
            Some(_) => {}
            None => {
                b.count = Some(count);
                b.line = ins.line;
            }
        }
        let mut m = Mask::default();
        lanes.iter().for_each(|&t| m.set(t));
        b.arrived = b.arrived.or(&m);
        join(&mut b.clock, &clock);
        if sync {
            match waiting.iter_mut().find(|(x, _)| *x == id as u32) {
                Some((_, ts)) => *ts = ts.or(&m),
                None => waiting.push((id as u32, m)),
            }
        }
    }
    c.clocks.step();
    // The threads that do not wait go on; each barrier's waiters become a group of their own.
    let stay = waiting.iter().fold(members, |m, (_, w)| m.minus(w));
    let mut go_on = None;
    if stay.is_empty() {
        c.sched.groups.remove(i);
    } else {
        c.sched.groups[i] = Group { threads: stay, pc: pc + 1, wait: Wait::Run };
        go_on = Some(i);
    }
    for &(id, threads) in &waiting {
        c.sched.groups.push(Group { threads, pc: pc + 1, wait: Wait::Bar(id) });
    }
    let mut ids: Vec<u32> = waiting.iter().map(|(id, _)| *id).collect();
    ids.extend((0..16).filter(|&id| c.sched.named[id as usize].count.is_some()));
    ids.dedup();
    for id in ids {
        complete(c, id)?;
    }
    Ok(go_on)
}

/// Completes named barrier `id` if its count is reached: its waiting groups acquire what was released and go on.
fn complete(c: &mut Cta, id: u32) -> Result<(), String> {
    let live = c.sched.live();
    let b = &c.sched.named[id as usize];
    let Some(count) = b.count else { return Ok(()) };
    let want = count.unwrap_or_else(|| 32 * live.warps().count_ones());
    let (got, partial) = counted(&b.arrived, &live);
    if got < want {
        return Ok(());
    }
    if got > want || partial {
        return Err(format!(
            "named barrier {id} (first arrival at line {}): {got} threads arrived{}, for a count of {want}",
            b.line,
            if partial { " and a warp in part" } else { "" }
        ));
    }
    let b = std::mem::take(&mut c.sched.named[id as usize]);
    let mut released = 0u64;
    for g in &mut c.sched.groups {
        if g.wait == Wait::Bar(id) {
            g.wait = Wait::Run;
            released |= g.threads.warps();
        }
    }
    for w in (0..32).filter(|w| released >> w & 1 == 1) {
        c.clocks.acquire(w, &b.clock);
        c.clocks.warp_sync(w);
    }
    Ok(())
}

/// `barrier.cluster.arrive*` (the active warps arrive, releasing their clocks unless `.relaxed`) or
/// `barrier.cluster.wait*` (they wait for the phase to end). The group to go on with.
fn cluster(c: &mut Cta, i: usize, ins: &Ins, act: Mask) -> Result<Option<usize>, String> {
    let op = ins.op.as_str();
    let members = c.sched.groups[i].threads;
    let live = c.sched.live();
    if (0..32).any(|w| act.lanes(w) != 0 && act.lanes(w) != live.lanes(w)) || act != members {
        return Err("executed by part of a warp (`.aligned` needs every thread of each warp)".into());
    }
    let pc = c.sched.groups[i].pc;
    if op.starts_with("barrier.cluster.arrive") {
        if !c.sched.cluster_arrived.and(&act).is_empty() {
            return Err("`barrier.cluster.arrive` twice without a wait".into());
        }
        c.sched.cluster_arrived = c.sched.cluster_arrived.or(&act);
        if !op.contains(".relaxed") {
            for w in (0..32).filter(|w| act.warps() >> w & 1 == 1) {
                let clock = c.clocks.release(w, act.lanes(w));
                join(&mut c.sched.cluster_clock, &clock);
            }
        }
        c.sched.groups[i].pc += 1;
        Ok(Some(i))
    } else if op.starts_with("barrier.cluster.wait") {
        if !act.minus(&c.sched.cluster_arrived).is_empty() {
            return Err("`barrier.cluster.wait` without an arrive".into());
        }
        c.sched.groups[i] = Group { threads: act, pc: pc + 1, wait: Wait::Cluster };
        Ok(None)
    } else {
        Err("not simulated".into())
    }
}
