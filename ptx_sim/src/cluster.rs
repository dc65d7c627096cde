//! Thread-block clusters in the simulator, from the PTX ISA: the CTAs of a cluster (`%cluster_ctarank` 0..n,
//! consecutive along x, a program per cluster: `%clusterid`, `%nclusterid`), `barrier.cluster.arrive`/`wait`,
//! distributed shared memory (`mapa.shared::cluster`, `ld.shared::cluster`), arrivals on a peer's mbarrier
//! (`mbarrier.arrive[.expect_tx].shared::cluster` at a `mapa` address), and the deliveries of what a CTA did to its
//! peers (multicast copies, pair copies' bytes, arrivals, a CTA pair's MMAs: `tcgen05_pair`) when it stops.
//!
//! The CTAs of a cluster run one at a time, each until none of its threads can move (`warps`); when every live
//! thread of the cluster has arrived at the cluster barrier (`barrier.cluster.arrive`, per warp), the phase ends
//! and the threads waiting at it continue. A remote read sees the peer's shared memory as it was
//! when the last phase ended (what the barrier's release/acquire guarantees), and reading a byte that its CTA
//! writes in the same phase is a race, reported when the phase ends. Reading the shared memory of a CTA that
//! has exited is an error. Local accesses keep the CTA's own race checks; a cluster barrier orders them as
//! `bar.sync` does.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::tma::Delivery;
use super::{Cta, Global, Program, Stop};

/// [`super::run`] for a kernel whose programs are clusters of `num_ctas` CTAs along x: `grid` counts clusters (the CTA
/// grid is `num_ctas` times wider along x), and each cluster's CTAs run together (see `cluster`).
pub fn run(
    prog: &Program,
    global: &mut Global,
    args: &[u64],
    grid: [u32; 3],
    threads: u32,
    smem_bytes: u32,
    num_ctas: u32,
) -> Result<(), String> {
    let params: HashMap<String, u64> = prog.params.iter().cloned().zip(args.iter().copied()).collect();
    let cta_grid = [grid[0] * num_ctas, grid[1], grid[2]];
    // Clusters launch in order, x fastest; cluster launch control cancels those not started (`clc`).
    let clusters = grid.iter().map(|&d| d as u64).product();
    let queue = Rc::new(RefCell::new(super::clc::Queue { clusters, ..Default::default() }));
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                let n = x as u64 + grid[0] as u64 * (y as u64 + grid[1] as u64 * z as u64);
                if queue.borrow().canceled.contains(&n) {
                    continue;
                }
                queue.borrow_mut().current = n;
                let mut ctas: Vec<Cta> = (0..num_ctas)
                    .map(|rank| Cta {
                        p: prog,
                        regs: vec![vec![0; prog.n_regs]; threads as usize],
                        params: &params,
                        ctaid: [x * num_ctas + rank, y, z],
                        grid: cta_grid,
                        // Poisoned: a read of shared memory nobody wrote shows up as garbage, not zeros.
                        smem: vec![0xA5; smem_bytes as usize],
                        shadow: vec![super::race::Shadow::default(); smem_bytes as usize],
                        clocks: super::race::Clocks::new(threads as usize),
                        unfenced: vec![0; smem_bytes as usize],
                        unfenced_warps: 0,
                        sched: super::warps::Sched::new(threads as usize),
                        mbar: Default::default(),
                        tmem: Default::default(),
                        cluster: Member {
                            rank,
                            size: num_ctas,
                            cluster_id: [x, y, z],
                            clusters: grid,
                            written: if num_ctas > 1 { vec![0; smem_bytes as usize] } else { Vec::new() },
                            clc: queue.clone(),
                            ..Default::default()
                        },
                    })
                    .collect();
                // Before the first cluster barrier a peer's shared memory is what it started as.
                ctas.iter_mut().for_each(|c| c.cluster.peers = Rc::new(vec![Some(c.smem.clone()); num_ctas as usize]));
                let mut stops = vec![None::<Stop>; num_ctas as usize];
                loop {
                    // Run every CTA not exited, in rank order, until none can go on; then end the cluster
                    // barrier's phase if every live thread has arrived, or else, when no CTA moved and no copy was
                    // delivered, report a deadlock.
                    let mut moved = false;
                    for k in 0..ctas.len() {
                        if stops[k] == Some(Stop::Exited) {
                            continue;
                        }
                        let (stop, ran) =
                            super::warps::run_cta(&mut ctas[k], global).map_err(|e| format!("CTA {k}: {e}"))?;
                        moved |= ran;
                        stops[k] = Some(stop);
                        let exited: Vec<bool> = stops.iter().map(|s| *s == Some(Stop::Exited)).collect();
                        moved |= deliver(&mut ctas, k, &exited)?;
                    }
                    let exited: Vec<bool> = stops.iter().map(|s| *s == Some(Stop::Exited)).collect();
                    if exited.iter().all(|&e| e) {
                        break;
                    }
                    let all_arrived = (0..ctas.len()).all(|k| exited[k] || ctas[k].sched.cluster_all_arrived());
                    if all_arrived {
                        if let Some(k) = exited.iter().position(|&e| e) {
                            return Err(format!(
                                "CTA {k} exited while its cluster's other CTAs wait at a cluster barrier"
                            ));
                        }
                        end_phase(&mut ctas, &exited)?;
                        continue;
                    }
                    if !moved {
                        let waiting: Vec<String> = (0..ctas.len())
                            .filter(|&k| !exited[k])
                            .map(|k| format!("CTA {k} waits: {}", ctas[k].sched.report(&ctas[k])))
                            .collect();
                        return Err(format!("{} (deadlock: no thread can move)", waiting.join("; ")));
                    }
                }
            }
        }
    }
    Ok(())
}

/// One CTA's place in its cluster.
#[derive(Default)]
pub(super) struct Member {
    pub rank: u32,
    pub size: u32,
    pub cluster_id: [u32; 3],
    pub clusters: [u32; 3],
    /// Every CTA's shared memory as the last phase ended (`None`: the CTA has exited).
    pub peers: Rc<Vec<Option<Vec<u8>>>>,
    /// This phase's remote reads: (rank, first byte, bytes).
    pub remote_reads: Vec<(u32, usize, usize)>,
    /// The phase in which each byte of this CTA's shared memory was last written, plus one (0: never).
    pub written: Vec<u32>,
    pub phase: u32,
    /// Multicast copies this CTA issued for its peers, by destination rank, not delivered yet.
    pub outbox: Vec<(u32, Delivery)>,
    /// Arrivals this CTA made on its peers' mbarriers, not delivered yet: (rank, barrier offset, count,
    /// transaction bytes expected first: `arrive.expect_tx`, and the clock the arriving warp released).
    pub arrivals: Vec<(u32, u64, u32, u32, super::race::Export)>,
    /// Bytes of this CTA's pair copies (`.cta_group::2`) that complete on a peer's mbarrier, not delivered yet:
    /// (rank, barrier offset, bytes).
    pub remote_tx: Vec<(u32, u64, u32)>,
    /// Pair copies (`.cta_group::2.multicast::cluster`) this CTA issued for its peers, by destination rank, not
    /// delivered yet (`tma::land_pair`).
    pub pair_outbox: Vec<(u32, Delivery)>,
    /// Pair MMAs and commits this CTA issued (`tcgen05_pair`), not done yet.
    pub pair_ops: Vec<super::tcgen05_pair::PairOp>,
    /// What this CTA's pair copies wrote (their clocks joined): they complete on the even CTA's barrier, which its
    /// MMA issuer waits for, so a pair MMA done after them is ordered after them, and so is whoever waits on its
    /// commit.
    pub pair_copies: super::race::VClock,
    /// The pair copies of this CTA that the pair MMAs done so far were ordered after: a pair commit releases them
    /// into this CTA's barrier.
    pub pair_mmas_after: super::race::VClock,
    /// The grid's cluster launch control queue (`clc`), and whether this CTA read a failed response.
    pub clc: Rc<RefCell<super::clc::Queue>>,
    pub clc_failed_seen: bool,
}

/// Delivers the multicast copies and the mbarrier arrivals CTA `from` queued to their destinations (when it
/// stopped: a later moment than the issue, which the ISA allows); whether there were any.
fn deliver(ctas: &mut [Cta], from: usize, exited: &[bool]) -> Result<bool, String> {
    let outbox = std::mem::take(&mut ctas[from].cluster.outbox);
    let arrivals = std::mem::take(&mut ctas[from].cluster.arrivals);
    let pair_outbox = std::mem::take(&mut ctas[from].cluster.pair_outbox);
    let any = !outbox.is_empty() || !arrivals.is_empty() || !pair_outbox.is_empty();
    // A pair multicast's parts land in their CTAs first; the bytes of an odd destination's go on to its even CTA.
    for (rank, d) in pair_outbox {
        if exited[rank as usize] {
            return Err(format!("CTA {from} multicasts into CTA {rank}, which has exited"));
        }
        let c = &mut ctas[rank as usize];
        super::tma::land_pair(c, d, None).map_err(|e| format!("CTA {from}'s pair multicast to CTA {rank}: {e}"))?;
        for (lead, bar, tx) in std::mem::take(&mut c.cluster.remote_tx) {
            super::mbarrier::complete_tx(&mut ctas[lead as usize], bar, tx, &[])
                .map_err(|e| format!("CTA {from}'s pair multicast on CTA {lead}'s mbarrier at {bar}: {e}"))?;
        }
    }
    let remote_tx = std::mem::take(&mut ctas[from].cluster.remote_tx);
    let any = any || !remote_tx.is_empty();
    let any = any || !ctas[from].cluster.pair_ops.is_empty();
    // In issue order as the copies and the MMAs that wait for them go: the copies' bytes first.
    for (rank, bar, tx) in remote_tx {
        if exited[rank as usize] {
            return Err(format!("CTA {from}'s pair copy completes on an mbarrier of CTA {rank}, which has exited"));
        }
        super::mbarrier::complete_tx(&mut ctas[rank as usize], bar, tx, &[])
            .map_err(|e| format!("CTA {from}'s pair copy on CTA {rank}'s mbarrier at {bar}: {e}"))?;
    }
    for (rank, d) in outbox {
        if exited[rank as usize] {
            return Err(format!("CTA {from} multicasts into CTA {rank}, which has exited"));
        }
        super::tma::land(&mut ctas[rank as usize], d, None)
            .map_err(|e| format!("CTA {from}'s multicast to CTA {rank}: {e}"))?;
    }
    for (rank, bar, n, tx, clock) in arrivals {
        if exited[rank as usize] {
            return Err(format!("CTA {from} arrives on an mbarrier of CTA {rank}, which has exited"));
        }
        let peer = &mut ctas[rank as usize];
        // The arrival releases the arriving warp's clock (its CTA's threads and agents as the peer names them).
        let clock = peer.clocks.import(rank, &clock);
        let expect = if tx > 0 { super::mbarrier::expect_tx(peer, bar, tx) } else { Ok(()) };
        expect
            .and_then(|()| super::mbarrier::release(peer, bar, &clock))
            .and_then(|()| super::mbarrier::arrive_from_peer(peer, bar, n))
            .map_err(|e| format!("CTA {from}'s arrival on CTA {rank}'s mbarrier at {bar}: {e}"))?;
    }
    // Last: a pair MMA reads what the copies above delivered.
    super::tcgen05_pair::deliver(ctas, from, exited)?;
    Ok(any)
}

/// Whether [`arrive`] executes `op`: an `mbarrier.arrive` (or `arrive.expect_tx`) at a `shared::cluster` address.
pub(super) fn handles_arrive(op: &str) -> bool {
    op.starts_with("mbarrier.arrive") && op.contains(".shared::cluster")
}

/// `mbarrier.arrive[.sem.scope].shared::cluster.b64 _, [addr][, n]` and `mbarrier.arrive.expect_tx[.sem.scope]
/// .shared::cluster.b64 _, [addr], tx` (tx bytes expected, then one arrival: a CTA of a pair announcing its copies
/// on the pair's barrier) for the active threads: at an address of this CTA (its own, or a `mapa` of its rank),
/// on its own barrier; at a peer's `mapa` address, queued and delivered when this CTA stops ([`deliver`]).
pub(super) fn arrive(c: &mut Cta, ins: &super::Ins, active: &[bool]) -> Result<(), String> {
    let a = &ins.args;
    let expect = ins.op.contains("expect_tx");
    for t in (0..active.len()).filter(|&t| active[t]) {
        let addr = c.addr(t, &a[1])?;
        let (n, tx) = match (expect, a.len() > 2) {
            (true, _) => (1, c.val(t, &a[2])? as u32),
            (false, true) => (c.val(t, &a[2])? as u32, 0),
            (false, false) => (1, 0),
        };
        let (rank, at) = super::cluster_addr::rank_and_offset(c, addr);
        if rank == c.cluster.rank as usize {
            if expect {
                super::mbarrier::expect_tx(c, at, tx)?;
            }
            super::mbarrier::arrive(c, t, at, n)?;
        } else {
            let clock = c.clocks.release(t / 32, 1 << (t % 32));
            let clock = c.clocks.export(c.cluster.rank, &clock);
            c.cluster.arrivals.push((rank as u32, at, n, tx, clock));
        }
    }
    Ok(())
}

impl Member {
    pub fn special(&self, s: &str) -> Option<u64> {
        let axis = |s: &str| match s.rsplit('.').next() {
            Some("y") => 1,
            Some("z") => 2,
            _ => 0,
        };
        Some(match s {
            "%cluster_ctarank" => self.rank as u64,
            "%cluster_nctarank" => self.size as u64,
            _ if s.starts_with("%clusterid.") => self.cluster_id[axis(s)] as u64,
            _ if s.starts_with("%nclusterid.") => self.clusters[axis(s)] as u64,
            _ => return None,
        })
    }

    /// Notes a write of byte `a` of this CTA's shared memory.
    pub fn wrote(&mut self, a: usize) {
        if self.size > 1 {
            self.written[a] = self.phase + 1;
        }
    }
}

/// `n` bytes at a shared::cluster address read by thread `t`: a `mapa` result (this CTA's own shared memory,
/// with its race checks, for its own rank).
pub(super) fn read(c: &mut Cta, t: usize, addr: u64, n: usize) -> Result<Vec<u8>, String> {
    if addr & super::cluster_addr::REMOTE == 0 {
        return Err(format!("ld.shared::cluster of {addr:#x}, which no mapa gave (not simulated)"));
    }
    let (rank, a) = ((addr >> 24 & 0x7f) as u32, (addr & 0xff_ffff) as usize);
    if rank == c.cluster.rank {
        return Ok(c.smem(t, a as u64, n, None)?.to_vec());
    }
    let mem = c.cluster.peers[rank as usize]
        .as_ref()
        .ok_or_else(|| format!("CTA {} reads the shared memory of CTA {rank}, which has exited", c.cluster.rank))?;
    if a + n > mem.len() {
        return Err(format!("shared::cluster access of {n} bytes at {a} past the {} bytes allocated", mem.len()));
    }
    c.cluster.remote_reads.push((rank, a, n));
    Ok(mem[a..a + n].to_vec())
}

/// Ends a phase: every CTA waits at a cluster barrier (or has exited). Checks the phase's remote reads against
/// the phase's writes, snapshots every CTA's shared memory and releases the waiters.
pub(super) fn end_phase(ctas: &mut [Cta], exited: &[bool]) -> Result<(), String> {
    for c in ctas.iter() {
        for &(r, a, n) in &c.cluster.remote_reads {
            let peer = &ctas[r as usize].cluster;
            if (a..a + n).any(|i| peer.written[i] == c.cluster.phase + 1) {
                return Err(format!(
                    "CTA {} reads shared byte {a} of CTA {r}, which CTA {r} writes in the same cluster phase (no \
                     cluster barrier between)",
                    c.cluster.rank
                ));
            }
        }
    }
    let snap: Rc<Vec<Option<Vec<u8>>>> =
        Rc::new(ctas.iter().zip(exited).map(|(c, &gone)| (!gone).then(|| c.smem.clone())).collect());
    // The barrier orders every CTA's threads after what every CTA's warps released at it.
    let released: Vec<super::race::Export> =
        ctas.iter().map(|c| c.clocks.export(c.cluster.rank, &c.sched.cluster_clock)).collect();
    for c in ctas.iter_mut() {
        for (_, clock) in released.iter().enumerate().filter(|&(r, _)| r != c.cluster.rank as usize && !exited[r]) {
            let clock = c.clocks.import(c.cluster.rank, clock);
            super::race::join(&mut c.sched.cluster_clock, &clock);
        }
    }
    for c in ctas.iter_mut() {
        c.cluster.peers = snap.clone();
        c.cluster.remote_reads.clear();
        c.cluster.phase += 1;
        // The waiting threads pass the barrier: it orders the CTA's own accesses too.
        super::warps::cluster_phase_ended(c);
    }
    Ok(())
}
