//! MMAs of a CTA pair (`.cta_group::2`) for the simulator, from the PTX ISA: the two CTAs of ranks 2i and 2i + 1
//! of a cluster compute one MMA of the pair's M (256: 128 rows in each CTA, row i of a CTA's half in its lane i)
//! and N. Each CTA holds its rows of A (at the descriptor's address in its own shared memory, or, kind::f16, at
//! the instruction's address in its own tensor memory) and half of B's
//! columns (the even CTA the first N / 2, the odd one the rest, each at the descriptor's address in its own
//! shared memory); each CTA's D is its rows by all N columns, in its own tensor memory at the instruction's
//! address. One thread of the pair issues it (here: of the even CTA, as CUTLASS and Triton do).
//! `tcgen05.commit.cta_group::2...multicast::cluster [bar], mask` arrives on the mbarrier at `bar`'s offset in
//! each CTA of the mask once the pair's earlier tcgen05 ops are done.
//!
//! The simulator runs a cluster's CTAs one at a time (`cluster`), so the peer's operands and tensor memory are out
//! of reach while the even CTA runs. At the issue the even CTA's operands are read (checked with the issuing
//! thread's knowledge, as a `cta_group::1` MMA's are) and its D cells marked as written by the op in flight; the
//! rest is queued ([`PairOp`]) and done when the CTA stops (`cluster::deliver`), in issue order: the odd CTA's
//! operands are read as they are then (recorded as read by the op, so that overwriting them before a wait has
//! observed a commit covering it is an error, but with no thread of that CTA to order the read by: that the
//! issuing thread waited for the odd CTA's copies is checked only as far as bytes nothing wrote go), both D
//! halves are computed, and the commits arrive. A pair commit releases into each barrier it reaches what the
//! MMAs before it were ordered after: that CTA's pair copies (which completed on the barrier the issuer waited
//! for), so the odd CTA's threads that wait for the MMA may reuse the buffers those copies wrote; and the tensor
//! cores' accesses to that CTA's tensor memory. A pair's copies complete on the even CTA's mbarrier (`tma`:
//! `.cta_group::2` with a peer's barrier); the even CTA's wait for them is what orders the MMA after both halves
//! landed. The odd CTA's tensor memory is another matter: its threads write it (P, a rescaled O), and the MMA's
//! reads and writes there are checked against them with what the issuing thread knew at the issue ([`IssuedBy`],
//! `tmem_race`).
//!
//! Block-scaled pair MMAs (`tcgen05.mma.cta_group::2...block_scale`, [`issue_scaled`]), the same way: each CTA
//! holds its 128 rows of A and half of B's N columns, and its D. The scale factors are read by each CTA's half of
//! the data path from its own tensor memory at the instruction's addresses: A's for its own rows (row i at lane
//! i, column `sfa + i / 32`), B's for all N rows (row n at lane `32 q + n % 32`, column `sfb + n / 32`, in every
//! lane quarter q), since each CTA's rows meet every column of B. So a pair's B scales must be in both CTAs alike
//! (Gluon's `TensorMemoryScalesLayout(cga_layout=[[0, 0]])`) and A's split with A (`[[1, 0]]`); a kernel laying
//! them out otherwise computes with the scales each CTA holds, which the comparison with the interpreter catches.
//! A pair copy (`tcgen05.cp.cta_group::2`, [`copy`]) copies each CTA's shared memory at the descriptor's address
//! into that CTA's tensor memory: the even CTA's at the issue, the odd CTA's when the even one stops.

use super::tcgen05_dense::{Dense, a_from_smem, a_from_tmem, accumulate, b_from_smem};
use super::tcgen05_scaled::{Scaled, operands};
use super::tmem_race::Issuer;
use super::tmem_race::Reader;
use super::{Cta, Opnd};

/// Rows of each CTA's half of a pair MMA (the pair's M 256).
const ROWS: u32 = 128;

/// A pair MMA, copy or commit the even CTA issued, done when it stops.
pub(super) enum PairOp {
    Mma(Box<PairMma>),
    Scaled(Box<PairScaled>),
    /// The odd CTA's half of a `tcgen05.cp.cta_group::2`: its shared memory through `desc` into its tensor memory
    /// at `taddr` (the even CTA's half was done at the issue).
    Copy {
        shape: super::tcgen05_scaled::CopyShape,
        taddr: u32,
        desc: u64,
        by: IssuedBy,
    },
    /// A commit arriving on the mbarrier at offset `bar` in each CTA of `mask` (cluster ranks); `cover`: the even
    /// CTA's latest tcgen05 op at the commit; `clock`: what the issuing thread released (its MMAs' reads of the
    /// even CTA's operands are its accesses), for the even CTA's barrier.
    Commit {
        bar: u64,
        mask: u32,
        cover: u32,
        clock: super::race::VClock,
    },
}

/// The thread of the even CTA that issued a pair op: what it knew for its tcgen05 ops at the issue, as the cluster
/// names it, and who it is. The odd CTA's half of the op is ordered after what it knew (`tmem_race`).
pub(super) struct IssuedBy {
    clock: super::race::Export,
    who: String,
}

impl IssuedBy {
    /// Thread `t` of CTA `c`, issuing now.
    fn now(c: &Cta, t: usize) -> IssuedBy {
        let rank = c.cluster.rank;
        IssuedBy { clock: c.clocks.export(rank, &c.clocks.tc_view(t)), who: format!("CTA {rank}'s thread {t}") }
    }

    /// As CTA `c` (the odd one) sees it.
    fn into(self, c: &mut Cta) -> Issuer {
        Issuer { clock: c.clocks.import(c.cluster.rank, &self.clock), who: self.who }
    }
}

/// Where a pair MMA's A is, at the same address in both CTAs.
#[derive(Clone, Copy)]
enum ASource {
    /// A shared-memory descriptor.
    Smem(u64),
    /// A tensor-memory address.
    Tmem(u32),
}

/// What a pair MMA needs once the odd CTA's operands are in reach.
pub(super) struct PairMma {
    dense: Dense,
    /// The op's number in the even CTA's tcgen05 ops.
    op: u32,
    d_col: u32,
    a_src: ASource,
    b_desc: u64,
    enable: bool,
    by: IssuedBy,
    /// The even CTA's rows of A (row-major) and B's first N / 2 columns, read at the issue.
    a_even: Vec<f64>,
    b_even: Vec<f64>,
}

/// `tcgen05.mma.cta_group::2.kind::{f16,tf32,f8f6f4,i8} [d], a_desc, b_desc, idesc, enable_input_d` by thread `t`.
pub(super) fn issue(c: &mut Cta, t: usize, op: &str, a: &[Opnd]) -> Result<(), String> {
    let kind = op.strip_prefix("tcgen05.mma.cta_group::2.kind::").ok_or_else(|| format!("`{op}` is not simulated"))?;
    if c.cluster.rank % 2 != 0 {
        return Err(format!(
            "a cta_group::2 MMA issued by CTA {} (the odd CTA of its pair) is not simulated: the even CTA issues it",
            c.cluster.rank
        ));
    }
    let dense = Dense::decode(kind, c.val(t, &a[3])? as u32, true)?;
    let d_addr = c.addr(t, &a[0])? as u32;
    if d_addr >> 16 != 0 {
        return Err("the accumulator of a cta_group::2 MMA starts at lane 0".into());
    }
    // A from shared memory (a descriptor), or from tensor memory (kind::f16: each CTA's rows in its own tensor
    // memory at the instruction's address).
    let (a_src, a_even) = match &a[1] {
        Opnd::Mem(..) => {
            let addr = c.addr(t, &a[1])? as u32;
            (ASource::Tmem(addr), a_from_tmem(c, Reader::Thread(t), &dense, addr, ROWS)?)
        }
        o => {
            let desc = c.val(t, o)?;
            (ASource::Smem(desc), a_from_smem(c, Reader::Thread(t), &dense, desc, ROWS)?)
        }
    };
    let b_desc = c.val(t, &a[2])?;
    let half = dense.n / 2;
    let mut b_even = vec![0f64; dense.k_elems() * half as usize];
    b_from_smem(c, Reader::Thread(t), &dense, b_desc, half, (&mut b_even, half as usize, 0))?;
    // The even CTA's D cells: written by this op from now on (a read before a wait observes a commit covering it
    // is an error), computed when the CTA stops.
    let op = c.tmem.flight.latest();
    for row in 0..ROWS {
        for col in 0..dense.n {
            let cell = c.tmem.cell(row, (d_addr & 0xffff) + col)?;
            c.tmem.flight.written_by(cell, op);
            c.tmem_core(Reader::Thread(t), op, cell, true, "tcgen05.mma")?;
        }
    }
    let enable = c.val(t, &a[4])? != 0;
    let by = IssuedBy::now(c, t);
    let mma = PairMma { dense, op, d_col: d_addr & 0xffff, a_src, b_desc, enable, by, a_even, b_even };
    c.cluster.pair_ops.push(PairOp::Mma(Box::new(mma)));
    Ok(())
}

/// `tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster[.multicast::cluster].b64 [bar][, mask]` by
/// the active threads (each one commits).
pub(super) fn commit(c: &mut Cta, ts: &[usize], op: &str, a: &[Opnd]) -> Result<(), String> {
    if !op.contains("mbarrier::arrive::one") {
        return Err(format!("`{op}` is not simulated"));
    }
    for &t in ts {
        let (rank, bar) = super::cluster_addr::rank_and_offset(c, c.addr(t, &a[0])?);
        let mask = super::cluster_addr::cta_mask(c, t, op, a, 1, rank as u32)?;
        let cover = c.tmem.flight.latest();
        let clock = c.clocks.release(t / 32, 1 << (t % 32));
        c.cluster.pair_ops.push(PairOp::Commit { bar, mask, cover, clock });
    }
    Ok(())
}

/// `tcgen05.cp.cta_group::2.<shape> [taddr], sdesc` by thread `t` of the pair's even CTA: its own half now, the
/// odd CTA's queued (see [`PairOp::Copy`]).
pub(super) fn copy(c: &mut Cta, t: usize, op: &str, a: &[Opnd]) -> Result<(), String> {
    if c.cluster.rank % 2 != 0 {
        return Err(format!(
            "a cta_group::2 tcgen05.cp issued by CTA {} (the odd CTA of its pair) is not simulated: the even CTA \
             issues it",
            c.cluster.rank
        ));
    }
    let shape = super::tcgen05_scaled::copy_shape(op)?;
    let taddr = c.addr(t, &a[0])? as u32;
    let desc = c.val(t, &a[1])?;
    super::tcgen05_scaled::copy_into(c, Reader::Thread(t), shape, taddr, desc)?;
    let by = IssuedBy::now(c, t);
    c.cluster.pair_ops.push(PairOp::Copy { shape, taddr, desc, by });
    Ok(())
}

/// The odd CTA of CTA `from`'s pair, when it is still running.
pub(super) fn odd_of(ctas: &[Cta], from: usize, exited: &[bool], what: &str) -> Result<usize, String> {
    let odd = from + 1;
    if odd >= ctas.len() || exited[odd] {
        return Err(format!("CTA {from}'s pair {what}: its odd CTA {odd} has exited or does not exist"));
    }
    Ok(odd)
}

/// Orders the pair's tcgen05 ops after the copies of both CTAs so far (they completed on the barrier the issuer
/// waited for), for the waits that observe their commits.
pub(super) fn after_copies(ctas: &mut [Cta], from: usize, odd: usize) {
    for i in [odd, from] {
        let copies = ctas[i].cluster.pair_copies.clone();
        super::race::join(&mut ctas[i].cluster.pair_mmas_after, &copies);
    }
}

/// Does the pair ops CTA `from` queued (see the module); `exited` says which CTAs have exited.
pub(super) fn deliver(ctas: &mut [Cta], from: usize, exited: &[bool]) -> Result<(), String> {
    for p in std::mem::take(&mut ctas[from].cluster.pair_ops) {
        match p {
            PairOp::Copy { shape, taddr, desc, by } => {
                let odd = odd_of(ctas, from, exited, "copy")?;
                let c = &mut ctas[odd];
                c.tmem.flight.issue();
                let by = by.into(c);
                super::tcgen05_scaled::copy_into(c, Reader::Peer(&by), shape, taddr, desc)
                    .map_err(|e| format!("CTA {from}'s pair copy into CTA {odd}: {e}"))?;
            }
            PairOp::Scaled(m) => deliver_scaled(ctas, from, exited, *m)?,
            PairOp::Mma(m) => {
                let odd = odd_of(ctas, from, exited, "MMA")?;
                let s = &m.dense;
                let (n, half) = (s.n as usize, s.n / 2);
                after_copies(ctas, from, odd);
                let c = &mut ctas[odd];
                c.tmem.flight.issue();
                let op_odd = c.tmem.flight.latest();
                let by = m.by.into(c);
                let by = Reader::Peer(&by);
                let a_odd = match m.a_src {
                    ASource::Smem(desc) => a_from_smem(c, by, s, desc, ROWS),
                    ASource::Tmem(addr) => a_from_tmem(c, by, s, addr, ROWS),
                }
                .map_err(|e| format!("CTA {from}'s pair MMA, CTA {odd}'s A: {e}"))?;
                let mut b = vec![0f64; s.k_elems() * n];
                for k in 0..s.k_elems() {
                    b[k * n..k * n + half as usize]
                        .copy_from_slice(&m.b_even[k * half as usize..(k + 1) * half as usize]);
                }
                b_from_smem(c, by, s, m.b_desc, half, (&mut b, n, half as usize))
                    .map_err(|e| format!("CTA {from}'s pair MMA, CTA {odd}'s B: {e}"))?;
                accumulate(c, (s, op_odd, Some(by)), m.d_col, ROWS, (&a_odd, &b), m.enable)
                    .map_err(|e| format!("CTA {from}'s pair MMA, CTA {odd}'s D: {e}"))?;
                accumulate(&mut ctas[from], (s, m.op, None), m.d_col, ROWS, (&m.a_even, &b), m.enable)?;
            }
            PairOp::Commit { bar, mask, cover, clock } => {
                let cover_even = cover;
                for rank in (0..ctas.len()).filter(|&r| mask >> r & 1 == 1) {
                    if exited[rank] {
                        return Err(format!("CTA {from} commits to an mbarrier of CTA {rank}, which has exited"));
                    }
                    // What the commit covers of the pair's two CTAs, for waits in other CTAs.
                    let odd_cover = ctas.get(from + 1).map_or(0, |o| o.tmem.flight.latest());
                    let c = &mut ctas[rank];
                    // The pair's own ops (the odd CTA's parts of the pair's MMAs are in its own numbering); a CTA
                    // outside the pair learns only what the commit covers of the pair's.
                    let own = match rank {
                        r if r == from => Some(cover),
                        r if r == from + 1 => Some(c.tmem.flight.latest()),
                        _ => None,
                    };
                    let phase = c.mbar.bars.get(&bar).map(|b| b.phase).ok_or_else(|| {
                        format!("CTA {from} commits to the mbarrier at {bar} of CTA {rank}, which is not initialized")
                    })?;
                    if let Some(cover) = own {
                        c.tmem.flight.commit(bar, phase, cover);
                        // Its waiters are ordered after the tensor cores' accesses of the CTA's ops it covers.
                        let core = c.clocks.core_clock(cover);
                        super::mbarrier::release(c, bar, &core)?;
                    }
                    c.tmem.flight.peer_commit(bar, phase, vec![(from, cover_even), (from + 1, odd_cover)]);
                    // Whoever waits on this phase is ordered after the MMAs, and so after the copies they read.
                    let after = c.cluster.pair_mmas_after.clone();
                    super::mbarrier::release(c, bar, &after)?;
                    if rank == from {
                        super::mbarrier::release(c, bar, &clock)?;
                    }
                    super::mbarrier::arrive_from_peer(c, bar, 1)
                        .map_err(|e| format!("CTA {from}'s commit to CTA {rank}'s mbarrier at {bar}: {e}"))?;
                }
            }
        }
    }
    Ok(())
}

/// [`ROWS`] as the block-scaled reads count them.
const ROWS_SCALED: u64 = ROWS as u64;

/// What a pair's block-scaled MMA needs once the odd CTA's operands are in reach.
pub(super) struct PairScaled {
    s: Scaled,
    /// The op's number in the even CTA's tcgen05 ops.
    op: u32,
    d_col: u32,
    b_desc: u64,
    a_desc: u64,
    sfa: u32,
    sfb: u32,
    enable: bool,
    by: IssuedBy,
    /// Read at the issue: the even CTA's rows of A (scaled), B's first N / 2 rows (unscaled) and the even CTA's
    /// scales of B's N rows.
    a_even: Vec<f32>,
    b_even: Vec<f32>,
    sb_even: Vec<f32>,
}

/// `tcgen05.mma.cta_group::2.kind::<kind>.block_scale[.<vector>] [d], adesc, bdesc, idesc, [sfa], [sfb],
/// enable_input_d` by thread `t` of the pair's even CTA.
pub(super) fn issue_scaled(c: &mut Cta, t: usize, op: &str, a: &[Opnd]) -> Result<(), String> {
    if c.cluster.rank % 2 != 0 {
        return Err(format!(
            "a cta_group::2 MMA issued by CTA {} (the odd CTA of its pair) is not simulated: the even CTA issues it",
            c.cluster.rank
        ));
    }
    let (d_col, a_desc, b_desc, sfa, sfb, enable) = operands(c, t, op, a)?;
    let s = Scaled::decode(op, c.val(t, &a[3])? as u32, true)?;
    let a_even = s.a(c, Reader::Thread(t), a_desc, ROWS_SCALED, sfa)?;
    let b_even = s.b_values(c, Reader::Thread(t), b_desc, s.n / 2)?;
    let sb_even = s.b_scales(c, Reader::Thread(t), sfb)?;
    let op = c.tmem.flight.latest();
    for row in 0..ROWS_SCALED as u32 {
        for col in 0..s.n as u32 {
            let cell = c.tmem.cell(row, d_col + col)?;
            c.tmem.flight.written_by(cell, op);
            c.tmem_core(Reader::Thread(t), op, cell, true, "tcgen05.mma")?;
        }
    }
    let by = IssuedBy::now(c, t);
    let m = PairScaled { s, op, d_col, b_desc, a_desc, sfa, sfb, enable, by, a_even, b_even, sb_even };
    c.cluster.pair_ops.push(PairOp::Scaled(Box::new(m)));
    Ok(())
}

/// The odd CTA's half of CTA `from`'s pair MMA `m`, and both halves of D.
fn deliver_scaled(ctas: &mut [Cta], from: usize, exited: &[bool], m: PairScaled) -> Result<(), String> {
    let odd = odd_of(ctas, from, exited, "block-scaled MMA")?;
    after_copies(ctas, from, odd);
    let s = &m.s;
    let c = &mut ctas[odd];
    c.tmem.flight.issue();
    let in_odd = |e: String| format!("CTA {from}'s pair block-scaled MMA, in CTA {odd}: {e}");
    let by = m.by.into(c);
    let by = Reader::Peer(&by);
    let a_odd = s.a(c, by, m.a_desc, ROWS_SCALED, m.sfa).map_err(in_odd)?;
    let b_odd = s.b_values(c, by, m.b_desc, s.n / 2).map_err(in_odd)?;
    let sb_odd = s.b_scales(c, by, m.sfb).map_err(in_odd)?;
    // B's N rows: the even CTA's first, then the odd CTA's.
    let b: Vec<f32> = m.b_even.iter().chain(&b_odd).copied().collect();
    let op_odd = c.tmem.flight.latest();
    s.accumulate(c, (op_odd, Some(by)), m.d_col, ROWS_SCALED, &a_odd, &b, &sb_odd, m.enable).map_err(in_odd)?;
    s.accumulate(&mut ctas[from], (m.op, None), m.d_col, ROWS_SCALED, &m.a_even, &b, &m.sb_even, m.enable)
}
