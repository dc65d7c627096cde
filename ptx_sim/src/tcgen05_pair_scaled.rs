//! Block-scaled MMAs of a CTA pair (`tcgen05.mma.cta_group::2.kind::<kind>.block_scale`) for the simulator, from
//! the PTX ISA, as [`super::tcgen05_pair`] runs the dense ones: the pair's M is 256, 128 rows in each CTA (row i
//! of a CTA's half in its lane i); each CTA holds its rows of A and half of B's N columns (the even CTA the
//! first N / 2) at the descriptors' addresses in its own shared memory, and its D, all N columns of its rows, in
//! its own tensor memory.
//!
//! The scale factors are read by each CTA's half of the data path from its own tensor memory at the
//! instruction's addresses: A's for its own rows (row i at lane i, column `sfa + i / 32`, as one CTA's MMA reads
//! them), B's for all N rows (row n at lane `32 q + n % 32`, column `sfb + n / 32`, in every lane quarter q),
//! since each CTA's rows meet every column of B. So a pair's B scales must be in both CTAs alike (Gluon's
//! `TensorMemoryScalesLayout(cga_layout=[[0, 0]])`, a broadcast), and A's split with A
//! (`cga_layout=[[1, 0]]`); a kernel that lays them out otherwise computes with the scales each CTA holds, which
//! the comparison with the interpreter catches.
//!
//! The even CTA's half is read at the issue (its operands checked with the issuing thread's knowledge) and its D
//! cells marked as written by the op in flight; the odd CTA's half is read, and both D halves computed, when the
//! even CTA stops (`tcgen05_pair::deliver`), after the pair's copies queued before it.

use super::tcgen05_dense::Reader;
use super::tcgen05_scaled::{Scaled, operands};
use super::{Cta, Opnd};

/// Rows of each CTA's half of a pair MMA (the pair's M 256).
const ROWS: u64 = 128;

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
    /// Read at the issue: the even CTA's rows of A (scaled), B's first N / 2 rows (unscaled) and the even CTA's
    /// scales of B's N rows.
    a_even: Vec<f32>,
    b_even: Vec<f32>,
    sb_even: Vec<f32>,
}

/// `tcgen05.mma.cta_group::2.kind::<kind>.block_scale[.<vector>] [d], adesc, bdesc, idesc, [sfa], [sfb],
/// enable_input_d` by thread `t` of the pair's even CTA.
pub(super) fn issue(c: &mut Cta, t: usize, op: &str, a: &[Opnd]) -> Result<(), String> {
    if c.cluster.rank % 2 != 0 {
        return Err(format!(
            "a cta_group::2 MMA issued by CTA {} (the odd CTA of its pair) is not simulated: the even CTA issues it",
            c.cluster.rank
        ));
    }
    let (d_col, a_desc, b_desc, sfa, sfb, enable) = operands(c, t, op, a)?;
    let s = Scaled::decode(op, c.val(t, &a[3])? as u32, true)?;
    let a_even = s.a(c, Reader::Thread(t), a_desc, ROWS, sfa)?;
    let b_even = s.b_values(c, Reader::Thread(t), b_desc, s.n / 2)?;
    let sb_even = s.b_scales(c, sfb)?;
    let op = c.tmem.flight.latest();
    for row in 0..ROWS as u32 {
        for col in 0..s.n as u32 {
            let cell = c.tmem.cell(row, d_col + col)?;
            c.tmem.flight.written_by(cell, op);
        }
    }
    let m = PairScaled { s, op, d_col, b_desc, a_desc, sfa, sfb, enable, a_even, b_even, sb_even };
    c.cluster.pair_ops.push(super::tcgen05_pair::PairOp::Scaled(Box::new(m)));
    Ok(())
}

/// The odd CTA's half of CTA `from`'s pair MMA `m`, and both halves of D.
pub(super) fn deliver(ctas: &mut [Cta], from: usize, exited: &[bool], m: PairScaled) -> Result<(), String> {
    let odd = super::tcgen05_pair::odd_of(ctas, from, exited, "block-scaled MMA")?;
    super::tcgen05_pair::after_copies(ctas, from, odd);
    let s = &m.s;
    let c = &mut ctas[odd];
    c.tmem.flight.issue();
    let in_odd = |e: String| format!("CTA {from}'s pair block-scaled MMA, in CTA {odd}: {e}");
    let a_odd = s.a(c, Reader::Peer, m.a_desc, ROWS, m.sfa).map_err(in_odd)?;
    let b_odd = s.b_values(c, Reader::Peer, m.b_desc, s.n / 2).map_err(in_odd)?;
    let sb_odd = s.b_scales(c, m.sfb).map_err(in_odd)?;
    // B's N rows: the even CTA's first, then the odd CTA's.
    let b: Vec<f32> = m.b_even.iter().chain(&b_odd).copied().collect();
    let op_odd = c.tmem.flight.latest();
    s.accumulate(c, op_odd, m.d_col, ROWS, &a_odd, &b, &sb_odd, m.enable).map_err(in_odd)?;
    s.accumulate(&mut ctas[from], m.op, m.d_col, ROWS, &m.a_even, &b, &m.sb_even, m.enable)
}
