//! Tensor memory and tcgen05 on sm_100a: the static tensor-memory plan, `tcgen05.alloc` at the entry and
//! `tcgen05.dealloc` at the exit (every partition of a warp-specialized kernel meets there), `tmem_load`/
//! `tmem_store` as `tcgen05.ld/st` (`32x32b`, or `16x32bx2` for layouts of 16 rows per warp quarter; 32-, 16- and
//! 8-bit elements, 8-bit scales four to a column) with their waits; `tcgen05_mma` and `tcgen05_commit` are
//! [`mma`], `tcgen05_mma_scaled` [`scaled`], `tcgen05_copy` [`copy`].
//!
//! Tensor memory is 128 lanes of 512 32-bit columns; an address is `lane << 16 | column`. Each `tmem_alloc` gets
//! the columns `tessel_tile::tmem::plan` gives it. Warp w reaches lanes `32 (w % 4)..`: a `tcgen05.ld/st.32x32b.xN`
//! moves N consecutive columns of the warp's lane per thread. The lowering reads every register's (row, column)
//! off the register layout composed with the inverse tensor-memory layout and checks the access pattern for
//! every thread, so a layout the instruction cannot move is an error, not wrong code.

use std::collections::HashMap;

use tessel_layouts::LinearLayout;
use tessel_tile::ir::{OpData, ValueId};

use super::Lower;
use crate::CompileError;
use crate::ptx::{Reg, RegClass, instr, mem, sym, vector};

mod copy;
mod mma;
mod scaled;
pub(crate) use copy::copy;
pub(crate) use mma::{commit_op, mma};
pub(crate) use scaled::{isa_needed, mma_scaled};

/// The kernel's tensor memory: each `tmem_alloc`'s first column, the columns allocated, and the registers
/// holding the allocation's base address and whether this thread's warp is warp 0 (which allocates).
pub(crate) struct Tmem {
    pub columns: HashMap<ValueId, u32>,
    pub total: u32,
    pub base: Reg,
    pub warp0: Reg,
}

/// Sets up the plan at the start of lowering (the entry code comes at the end, [`entry`], when the shared-memory
/// size is known).
pub(crate) fn setup(l: &mut Lower) -> Result<(), CompileError> {
    let Some(tessel_tile::tmem::Plan { columns, total }) =
        tessel_tile::tmem::plan(l.f).map_err(|(_, m)| CompileError::new(m))?
    else {
        return Ok(());
    };
    if l.arch != tessel_tile::Target::Sm100a {
        return Err(CompileError::new(format!("tensor memory needs sm_100a, the kernel targets {}", l.arch)));
    }
    let (base, warp0) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
    l.tmem = Some(Tmem { columns, total, base, warp0 });
    Ok(())
}

/// What a tcgen05 op issued now must follow first ([`thread_sync`]), since the partition's last sync: the PTX
/// ISA orders a thread's tcgen05 ops after other threads' tensor-memory accesses only through a thread
/// synchronization bracketed by `tcgen05.fence::before_thread_sync` (theirs) and `after_thread_sync` (the
/// issuer's), and after the issuer's own waits only through its `after_thread_sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum TmemNeed {
    /// Nothing: no thread has accessed tensor memory or waited since.
    Nothing,
    /// The issuer's `tcgen05.fence::after_thread_sync`: the partition's threads, the issuer among them, waited on
    /// an mbarrier (a partition's threads all run its waits) and did nothing else the tensor cores must follow.
    /// The wait is the issuer's own acquire of what was released into the barrier (another partition's
    /// tensor-memory stores, fenced before their arrival); the fence orders its tcgen05 ops after it.
    Fence,
    /// Fence, the partition's barrier, fence: a thread may have accessed tensor memory (or done something this
    /// account does not follow).
    Sync,
}

/// The fences and CTA barrier that order tcgen05 operations of some threads before those of others, as far as
/// [`Lower::tmem_need`] asks. When the barrier analysis has just placed a barrier (for the MMA's shared-memory
/// operands), that barrier serves: the `before_thread_sync` fence goes in front of it rather than a second
/// barrier after it.
pub(super) fn thread_sync(l: &mut Lower) {
    let need = std::mem::replace(&mut l.tmem_need, TmemNeed::Nothing);
    match need {
        TmemNeed::Nothing => return,
        TmemNeed::Fence => {}
        TmemNeed::Sync if l.b.ends_with_barrier() => {
            l.b.emit_before_last(instr("tcgen05.fence::before_thread_sync").srcs(()));
        }
        TmemNeed::Sync => {
            l.b.effect("tcgen05.fence::before_thread_sync", ());
            l.barrier();
        }
    }
    l.b.effect("tcgen05.fence::after_thread_sync", ());
}

/// What op `d` (one without regions) adds to [`Lower::tmem_need`]: nothing for the ops
/// [`keeps_tmem_quiet`] names and for terminators, the issuer's fence for an mbarrier wait, a sync for anything
/// else (tensor-memory loads and stores above all).
pub(crate) fn need_of(d: &tessel_tile::ir::OpData) -> TmemNeed {
    if keeps_tmem_quiet(d) || d.op.is_terminator() {
        TmemNeed::Nothing
    } else if d.op == tessel_tile::ops::Op::mbarrier_wait() {
        TmemNeed::Fence
    } else {
        TmemNeed::Sync
    }
}

/// What the ops of region `r`, at any depth, add to [`Lower::tmem_need`] ([`need_of`]; a `warp_specialize`, whose
/// partitions are other threads, a sync). A structured op whose regions add at most the fence leaves that need
/// at its start (a loop's previous iteration) and at its end.
pub(crate) fn region_need(f: &tessel_tile::ir::Func, r: tessel_tile::ir::RegionId) -> TmemNeed {
    let mut need = TmemNeed::Nothing;
    f.walk(r, &mut |o| {
        let d = f.op(o);
        let here = match d.op {
            tessel_tile::ops::Op::WarpSpecialize(_) => TmemNeed::Sync,
            _ if !d.regions.is_empty() => TmemNeed::Nothing,
            _ => need_of(d),
        };
        need = need.max(here);
    });
    need
}

/// [`Lower::tmem_need`] as op `o` is about to be lowered, and, for a structured op, what it leaves after it. A
/// structured op's regions start (a loop's iterations after the first: where the last one ended) and it ends
/// with what came before or what its regions add, whichever asks more ([`region_need`]); a loop whose body adds
/// less than what came before and issues tcgen05 ops gets the sync once before it, not in every iteration.
pub(crate) fn enter(l: &mut Lower, o: tessel_tile::ir::OpId) -> TmemNeed {
    use tessel_tile::ops::Op;
    if l.tmem.is_none() {
        return l.tmem_need;
    }
    let d = l.f.op(o);
    let need = match d.op {
        // Its partitions are other threads: nothing is known of what they did.
        Op::WarpSpecialize(_) => TmemNeed::Sync,
        _ if d.regions.is_empty() => l.tmem_need.max(need_of(d)),
        _ => {
            let inner = d.regions.iter().map(|&r| region_need(l.f, r)).max().unwrap_or(TmemNeed::Nothing);
            if matches!(d.op, Op::For(_) | Op::While) && inner < l.tmem_need && issues_in(l.f, o) {
                thread_sync(l);
            }
            l.tmem_need.max(inner)
        }
    };
    l.tmem_need = need;
    need
}

/// Whether op `o` issues tcgen05 ops (MMAs, copies) at any depth: the ops [`thread_sync`] goes before.
pub(crate) fn issues_in(f: &tessel_tile::ir::Func, o: tessel_tile::ir::OpId) -> bool {
    use tessel_tile::ops::Op;
    let mut any = false;
    f.walk_op(o, &mut |x| {
        any |= matches!(f.op(x).op, Op::Tcgen05Mma | Op::Tcgen05MmaScaled { .. } | Op::Tcgen05Copy);
    });
    any
}

/// Whether op `d` leaves [`Lower::tmem_need`] as it is: pure and memdesc-view ops, shared-memory stores
/// (ordered for the tensor cores by the barrier analysis, not by thread syncs), tensor memory taken without a
/// value, and the one-thread tcgen05 issues themselves. Anything else (tensor-memory loads and stores, mbarrier
/// waits, structured ops) may be a thread's tensor-memory access or wait that a later issue must follow.
pub(crate) fn keeps_tmem_quiet(d: &tessel_tile::ir::OpData) -> bool {
    use tessel_tile::ops::Op;
    d.regions.is_empty()
        && (d.op.is_pure()
            || d.op.is_memdesc_view()
            || matches!(d.op, Op::LocalAlloc | Op::Tcgen05Copy | Op::Tcgen05Mma | Op::Tcgen05MmaScaled { .. })
            || matches!(d.op, Op::Tcgen05Commit { .. })
            || (d.op == Op::TmemAlloc && d.operands.is_empty()))
}

/// The entry: warp 0 allocates the columns and publishes the address through a shared-memory word placed at
/// `slot`; every thread reads it after a barrier.
pub(crate) fn entry(l: &mut Lower, slot: u32) {
    let Some(t) = &l.tmem else { return };
    let (base, warp0, total) = (t.base, t.warp0, t.total);
    l.b.set_prologue(true);
    let addr = l.b.reg(RegClass::B32);
    l.b.op("mov.u32", addr, sym("global_smem"));
    l.b.op("add.u32", addr, (addr, slot));
    l.b.op("setp.eq.u32", warp0, (l.warp, 0));
    let g = group(l);
    l.b.emit(instr(format!("tcgen05.alloc.{g}.sync.aligned.shared::cta.b32")).guard(warp0).srcs((mem(addr), total)));
    l.b.emit(instr(format!("tcgen05.relinquish_alloc_permit.{g}.sync.aligned")).guard(warp0));
    l.b.effect("tcgen05.fence::before_thread_sync", ());
    l.b.effect("bar.sync", 0);
    l.b.effect("tcgen05.fence::after_thread_sync", ());
    l.b.op("ld.shared.b32", base, mem(addr));
    l.b.set_prologue(false);
}

/// The exit (every return branches here): once every warp is done with tensor memory, warp 0 frees it.
pub(crate) fn exit(l: &mut Lower) {
    let Some(t) = &l.tmem else { return };
    let (base, warp0, total) = (t.base, t.warp0, t.total);
    l.b.effect("tcgen05.fence::before_thread_sync", ());
    l.b.effect("bar.sync", 0);
    l.b.effect("tcgen05.fence::after_thread_sync", ());
    let g = group(l);
    l.b.emit(instr(format!("tcgen05.dealloc.{g}.sync.aligned.b32")).guard(warp0).srcs((base, total)));
}

/// The kernel's CTA group qualifier: `cta_group::2` for a CTA pair's tcgen05 ops (each CTA of the pair allocates
/// and frees its own columns with it), else `cta_group::1`. ptxas refuses a kernel that mixes the two.
pub(crate) fn group(l: &Lower) -> &'static str {
    if l.pairs { "cta_group::2" } else { "cta_group::1" }
}

/// The thread that issues the tcgen05 ops (MMAs, copies, commits), under the predicate `pred` when there is one:
/// the CTA's first thread, or in `cta_group::2` mode the pair's even CTA's (it issues over both CTAs).
pub(crate) fn issuer(l: &mut Lower, pred: Option<ValueId>) -> Result<Reg, CompileError> {
    let p = super::asynchronous::first_thread(l, pred)?;
    if !l.pairs {
        return Ok(p);
    }
    let (odd, even) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
    let rank = l.cta_rank();
    l.b.op("and.b32", odd, (rank, 1));
    l.b.op("setp.eq.and.u32", even, (odd, 0, p));
    Ok(even)
}

fn tmem_of<'a>(l: &'a Lower) -> Result<&'a Tmem, CompileError> {
    l.tmem.as_ref().ok_or_else(|| CompileError::new("a tensor-memory op in a kernel without a tensor-memory plan"))
}

/// `tmem_alloc [value]`: the buffer's address, `base + column`.
pub(crate) fn alloc(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let v = data.results[0];
    let t = tmem_of(l)?;
    let (base, col) = (t.base, t.columns[&v]);
    let a = l.b.reg(RegClass::B32);
    l.b.op("add.u32", a, (base, col));
    l.vals.insert(v, vec![a]);
    if let Some(&x) = data.operands.first() {
        store_regs(l, x, v)?;
    }
    Ok(())
}

/// Where each register of a tensor in `regs` (a distributed layout) sits in a tensor-memory buffer laid out by
/// `tmem` (`row, col → dims`): per register, its column and bit shift in the cell; per warp bit, the column
/// offset of that warp's registers; and the access shape. Checked for every thread.
///
/// * `32x32b`: lane l of warp w reaches row `32 (w % 4) + l`, register r column `cells[r]`.
/// * `16x32bx2` (a layout holding 16 rows per warp quarter, block M 64): lanes 0-15 reach rows
///   `32 (w % 4) + l` at `cells[r]`, lanes 16-31 the same rows `half` columns further on.
struct Access {
    /// (column, shift) of each register for warp 0, lane 0.
    cells: Vec<(u32, u32)>,
    /// The column offset added by each warp bit (0 for the bits that pick the lane quarter).
    warp_cols: Vec<u32>,
    /// `Some(offset)` for the 16x32bx2 shape: the columns lanes 16-31 are past lanes 0-15.
    half: Option<u32>,
}

impl Access {
    fn shape(&self) -> &'static str {
        if self.half.is_some() { "16x32bx2" } else { "32x32b" }
    }
}

fn access(regs: &LinearLayout, tmem: &LinearLayout, bits: u32, num_warps: u32) -> Result<Access, CompileError> {
    let bad = |m: String| {
        CompileError::new(format!(
            "the register layout is not a tcgen05.ld/st 32x32b or 16x32bx2 access (tessel lowers those; the 16x64b, \
             16x128b and 16x256b shapes run in the interpreter only): {m}"
        ))
    };
    // Every (row, slot) holding each tensor coordinate (the lane quarters of scales hold copies).
    let place = tessel_tile::tmem::placements(tmem);
    // The (row, column, bit shift) places of register r of `lane` in `warp`.
    let at = |r: u32, lane: u32, warp: u32| -> Result<Vec<(u32, u32, u32)>, CompileError> {
        let c = regs.apply_named(&[("register", r), ("lane", lane), ("warp", warp)]);
        let places = place
            .get(&(c[0].1, c[1].1))
            .ok_or_else(|| bad(format!("({}, {}) is not in the buffer", c[0].1, c[1].1)))?;
        Ok(places.iter().map(|&(row, slot)| (row, slot * bits / 32, slot * bits % 32)).collect())
    };
    // The place of register r of `lane` in `warp` in tensor-memory row `row`.
    let in_row =
        |r: u32, lane: u32, warp: u32, row: u32| -> Result<(u32, u32), CompileError> {
            at(r, lane, warp)?.into_iter().find(|p| p.0 == row).map(|p| (p.1, p.2)).ok_or_else(|| {
                bad(format!("register {r} of lane {lane} in warp {warp} is not in tensor-memory row {row}"))
            })
        };
    let n_regs = regs.in_dim_size("register");
    let cells: Vec<(u32, u32)> = (0..n_regs).map(|r| in_row(r, 0, 0, 0)).collect::<Result<_, _>>()?;
    // Lane 16: the next row at the same column (32x32b), or the same row further on (16x32bx2).
    let lane16 = at(0, 16, 0)?;
    let half = if lane16.contains(&(16, cells[0].0, cells[0].1)) {
        None
    } else {
        let (col16, _) = in_row(0, 16, 0, 0)?;
        Some(col16.wrapping_sub(cells[0].0))
    };
    if half.is_some_and(|h| h == 0 || h >= 1 << 15) {
        return Err(bad("lanes 16-31 do not reach columns after lanes 0-15".into()));
    }
    let warp_bits = num_warps.trailing_zeros();
    let mut warp_cols = Vec::new();
    for i in 0..warp_bits {
        let w = 1 << i;
        warp_cols.push(if w < 4 { 0 } else { in_row(0, 0, w, 0)?.0 ^ cells[0].0 });
    }
    for warp in 0..num_warps {
        let wc = (0..warp_bits).filter(|i| warp >> i & 1 == 1).fold(0, |a, i| a ^ warp_cols[i as usize]);
        for lane in 0..32 {
            for r in 0..n_regs {
                let (lane_row, lane_col) = match half {
                    None => (lane, 0),
                    Some(h) => (lane % 16, if lane >= 16 { h } else { 0 }),
                };
                let want = (32 * (warp % 4) + lane_row, (cells[r as usize].0 ^ wc) + lane_col, cells[r as usize].1);
                let places = at(r, lane, warp)?;
                if !places.contains(&want) {
                    return Err(bad(format!(
                        "register {r} of lane {lane} in warp {warp} sits at {places:?} (row, column, bit); the access \
                         reaches row {}, column {} (bit {})",
                        want.0, want.1, want.2
                    )));
                }
            }
        }
    }
    Ok(Access { cells, warp_cols, half })
}

/// Runs of consecutive columns: (first column, count, power of two at most `max`), each aligned to its count.
fn runs(cols: &[u32], max: usize) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cols.len() {
        let mut n = 1;
        while n < max.min(128)
            && i + 2 * n <= cols.len()
            && cols[i] % (2 * n as u32) == 0
            && (0..2 * n).all(|j| cols[i + j] == cols[i] + j as u32)
        {
            n *= 2;
        }
        out.push((cols[i], n as u32));
        i += n;
    }
    out
}

/// The most columns one `tcgen05.ld`/`st` moves, and whether each waits before the next: 128 and no, unless an
/// auto-mode kernel caps its registers (`maxnreg`). A load's destinations (a store's sources) stay allocated
/// until its wait, so under a cap a whole tile moved at once may not fit (tutorial 06's 80 registers with a
/// 64-column tile and the accumulator live: ptxas refuses the instruction); moved a quarter of the cap at a
/// time, each piece waited for, the registers of the pieces done can be spilled. Gluon kernels move what
/// their authors wrote.
fn move_pieces(l: &Lower) -> (usize, bool) {
    match l.f.config.maxnreg {
        Some(r) if !l.f.attrs.gluon => (1 << (r / 4).max(1).ilog2(), true),
        _ => (128, false),
    }
}

/// The per-thread address of this warp's lanes of buffer `mem`: `buf + (32 (warp % 4)) << 16 + warp columns`.
fn warp_address(l: &mut Lower, mem_addr: Reg, warp_cols: &[u32]) -> Reg {
    let a = l.b.reg(RegClass::B32);
    let q = l.b.reg(RegClass::B32);
    l.b.op("and.b32", q, (l.warp, 3));
    l.b.op("shl.b32", q, (q, 21));
    l.b.op("add.u32", a, (mem_addr, q));
    if let Some(x) = l.thread_xor(vec![0; 5], warp_cols.to_vec()) {
        l.b.op("add.u32", a, (a, x));
    }
    a
}

/// The registers, access and cells of moving `tensor` to or from buffer `mem`.
fn plan_move(l: &Lower, tensor: ValueId, mem_v: ValueId) -> Result<(Access, Vec<u32>, u32), CompileError> {
    let (_, elem, tl) = l.f.ty(mem_v).memdesc().expect("verified: a memdesc");
    // Warp w of the partition reaches lane quarter w % 4 only when the partition starts a warpgroup.
    if l.warp_base % 4 != 0 {
        return Err(CompileError::new(format!(
            "tensor-memory loads and stores in a worker partition that starts at warp {} (not a multiple of 4): its \
             warps would reach other lane quarters than their layout says; give them to the default partition or \
             reorder the workers",
            l.warp_base
        )));
    }
    let regs = super::coords::layout_of(l.f.ty(tensor))?.clone();
    let acc = access(&regs, &tl.linear, elem.bits(), l.num_warps)?;
    let mut cols: Vec<u32> = acc.cells.iter().map(|&(c, _)| c).collect();
    cols.sort_unstable();
    cols.dedup();
    Ok((acc, cols, elem.bits()))
}

/// `tcgen05.st` of the registers of `x` into buffer `mem_v`, then the wait and the CTA sync that make the data
/// visible to the MMA-issuing thread.
fn store_regs(l: &mut Lower, x: ValueId, mem_v: ValueId) -> Result<(), CompileError> {
    let (acc, cols, bits) = plan_move(l, x, mem_v)?;
    let src = l.get(x)?.to_vec();
    let base = l.get(mem_v)?[0];
    let addr = warp_address(l, base, &acc.warp_cols);
    // The 32-bit cell of each column: one register, two 16-bit halves or four bytes packed.
    let mut cell_regs = Vec::new();
    for &c in &cols {
        let parts: Vec<(u32, Reg)> =
            acc.cells.iter().zip(&src).filter(|((cc, _), _)| *cc == c).map(|(&(_, s), &r)| (s, r)).collect();
        let cell = if bits == 32 {
            let r = l.b.reg(RegClass::B32);
            l.b.op("mov.b32", r, parts[0].1);
            r
        } else if bits == 8 {
            // Bytes in the low 8 bits of 16-bit registers: (byte 0 | byte 1 << 8, byte 2 | byte 3 << 8).
            let mut half = |s: u32| {
                let h = l.b.reg(RegClass::B16);
                l.b.op("mov.b16", h, 0);
                for &(ps, r) in parts.iter().filter(|(ps, _)| ps / 16 == s / 16) {
                    let t = l.b.reg(RegClass::B16);
                    l.b.op("and.b16", t, (r, 0xff));
                    if ps % 16 != 0 {
                        l.b.op("shl.b16", t, (t, 8));
                    }
                    l.b.op("or.b16", h, (h, t));
                }
                h
            };
            let (lo, hi) = (half(0), half(16));
            let r = l.b.reg(RegClass::B32);
            l.b.op("mov.b32", r, vector(&[lo, hi]));
            r
        } else {
            // An unpacked layout (col_stride 2) leaves the high half of each cell unused: zeros there.
            let mut half = |s: u32| match parts.iter().find(|p| p.0 == s) {
                Some(p) => p.1,
                None => {
                    let z = l.b.reg(RegClass::B16);
                    l.b.op("mov.b16", z, 0);
                    z
                }
            };
            let (lo, hi) = (half(0), half(16));
            let r = l.b.reg(RegClass::B32);
            l.b.op("mov.b32", r, vector(&[lo, hi]));
            r
        };
        cell_regs.push(cell);
    }
    let mut k = 0;
    let (max, wait_each) = move_pieces(l);
    let pieces = runs(&cols, max);
    for (i, &(first, n)) in pieces.iter().enumerate() {
        let a = l.b.reg(RegClass::B32);
        l.b.op("add.u32", a, (addr, first));
        let op = format!("tcgen05.st.sync.aligned.{}.x{n}.b32", acc.shape());
        let regs = vector(&cell_regs[k..k + n as usize]);
        l.b.emit(match acc.half {
            None => instr(op).srcs((mem(a), regs)),
            Some(h) => instr(op).srcs((mem(a), h, regs)),
        });
        k += n as usize;
        if wait_each && i + 1 < pieces.len() {
            l.b.effect("tcgen05.wait::st.sync.aligned", ());
        }
    }
    l.b.effect("tcgen05.wait::st.sync.aligned", ());
    thread_sync(l);
    Ok(())
}

/// `tmem_store value, mem`.
pub(crate) fn store(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    // Earlier tcgen05 reads and MMAs of the buffer were waited for through an mbarrier; order after them.
    l.b.effect("tcgen05.fence::after_thread_sync", ());
    store_regs(l, data.operands[0], data.operands[1])
}

/// `tmem_load mem`: `tcgen05.ld` + `tcgen05.wait::ld`.
pub(crate) fn load(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (mem_v, v) = (data.operands[0], data.results[0]);
    let (acc, cols, bits) = plan_move(l, v, mem_v)?;
    let base = l.get(mem_v)?[0];
    // After the mbarrier wait that saw the MMA complete.
    l.b.effect("tcgen05.fence::after_thread_sync", ());
    let addr = warp_address(l, base, &acc.warp_cols);
    let class = if bits == 32 { super::class_of(l.elem_of(v)?)? } else { RegClass::B32 };
    let cell_regs: Vec<Reg> = cols.iter().map(|_| l.b.reg(class)).collect();
    let mut k = 0;
    let (max, wait_each) = move_pieces(l);
    let pieces = runs(&cols, max);
    for (i, &(first, n)) in pieces.iter().enumerate() {
        let a = l.b.reg(RegClass::B32);
        l.b.op("add.u32", a, (addr, first));
        let op = format!("tcgen05.ld.sync.aligned.{}.x{n}.b32", acc.shape());
        let ld = instr(op).dst(vector(&cell_regs[k..k + n as usize]));
        l.b.emit(match acc.half {
            None => ld.srcs(mem(a)),
            Some(h) => ld.srcs((mem(a), h)),
        });
        k += n as usize;
        if wait_each && i + 1 < pieces.len() {
            l.b.effect("tcgen05.wait::ld.sync.aligned", ());
        }
    }
    l.b.effect("tcgen05.wait::ld.sync.aligned", ());
    let out_class = super::class_of(l.elem_of(v)?)?;
    let mut out = Vec::with_capacity(acc.cells.len());
    let mut halves: HashMap<u32, (Reg, Reg)> = HashMap::new();
    for &(c, s) in &acc.cells {
        let i = cols.binary_search(&c).expect("a column of the access");
        if bits == 32 {
            out.push(cell_regs[i]);
            continue;
        }
        if bits == 8 {
            // The byte at bit `s`, zero-extended into a 16-bit register.
            let (lo, hi) = *halves.entry(c).or_insert_with(|| {
                let (lo, hi) = (l.b.reg(RegClass::B16), l.b.reg(RegClass::B16));
                l.b.op("mov.b32", vector(&[lo, hi]), cell_regs[i]);
                (lo, hi)
            });
            let x = l.b.reg(out_class);
            l.b.op("shr.u16", x, (if s < 16 { lo } else { hi }, s % 16));
            l.b.op("and.b16", x, (x, 0xff));
            out.push(x);
            continue;
        }
        let (lo, hi) = *halves.entry(c).or_insert_with(|| {
            let (lo, hi) = (l.b.reg(out_class), l.b.reg(out_class));
            l.b.op("mov.b32", vector(&[lo, hi]), cell_regs[i]);
            (lo, hi)
        });
        out.push(if s == 0 { lo } else { hi });
    }
    l.vals.insert(v, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_runs_are_aligned_powers_of_two() {
        assert_eq!(runs(&(0..64).collect::<Vec<_>>(), 128), [(0, 64)]);
        assert_eq!(runs(&[0, 1, 2, 3, 4, 5], 128), [(0, 4), (4, 2)]);
        assert_eq!(runs(&[1, 2, 3, 4], 128), [(1, 1), (2, 2), (4, 1)]);
        // Under a register cap: pieces of at most `max` columns.
        assert_eq!(runs(&(0..64).collect::<Vec<_>>(), 16), [(0, 16), (16, 16), (32, 16), (48, 16)]);
    }
}
