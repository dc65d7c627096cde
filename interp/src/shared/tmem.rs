//! Tensor memory and the tcgen05 ops in the interpreter. Tensor memory is what a CTA has: 128 lanes of 32-bit
//! cells, [`COLUMNS`] per lane (per CTA of a cluster: a buffer split over a CTA pair has each CTA's part in that
//! CTA's cells), and each `tmem_alloc` takes the columns [`tessel_tile::tmem::plan`] gives it, as the compiled
//! kernel does: an allocation run again (in a loop) gets the same cells, and allocations the plan puts on the same
//! columns share them. Every allocation fills its cells with junk. A buffer's `TensorMemoryLayout` or
//! `TensorMemoryScalesLayout` places each element at a lane and an element slot; 16- and 8-bit elements share a
//! cell; an element a layout places in several lanes, as the lane quarters of scales, is written to each and read
//! from the first; so views alias exactly as on the hardware. The tcgen05 ops (`tcgen05_mma`,
//! `tcgen05_mma_scaled`, `tcgen05_copy`) compute at issue, in issue order, against the cells as the tensor cores
//! see them (`shadow`: an MMA reads what an earlier copy or MMA wrote, as the hardware's tcgen05 pipe runs them in
//! order); their results land in the cells the program sees only when an `mbarrier_wait` observes the phase of a
//! barrier that a commit (an MMA's `mbarriers=` or a later `tcgen05_commit`) made track them. Until then a
//! `tmem_load` of cells one writes, a `tmem_store` over cells one writes or reads (the scales of a block-scaled
//! MMA), or a write into the shared memory one reads is an error naming the op; so is, under `MmaOrder::Isa`, a
//! tcgen05 op over cells one reads or writes where the ISA does not run the two in issue order, whichever
//! allocations the cells belong to.

use std::collections::{HashMap, HashSet};

use tessel_tile::eval::value::{Val, from_bits, to_bits};
use tessel_tile::ir::{OpId, ValueId};
use tessel_tile::ops::{InputPrecision, Op};
use tessel_tile::types::{Elem, ScalarType};

use super::{Program, Tensor, Value, View, overlaps};
use crate::compute::dot;
use crate::error::{Fault, InFlight, SharedFault, TmemConflict};

/// Lanes of tensor memory: a buffer's rows.
const LANES: usize = 128;

/// Columns of a CTA's tensor memory.
const COLUMNS: usize = tessel_tile::tmem::COLUMNS as usize;

/// The results of one tcgen05 op, in flight until a wait observes a commit that tracks it.
#[derive(Debug)]
struct Group {
    /// The barriers of the commits tracking it, with the phase each completed with (once it has).
    keys: Vec<((usize, usize), Option<u64>)>,
    /// (cell, bits).
    writes: Vec<(usize, u32)>,
    /// The shared-memory operands it reads.
    reads: Vec<View>,
    /// The tensor-memory cells it reads: an MMA's A in tensor memory, its scales.
    tmem_reads: Vec<usize>,
    /// The op, as messages name it.
    op: InFlight,
    /// The CTAs (offsets from the issuer) holding copies of the shared memory it reads, which a multicast commit
    /// of it must reach (`tessel_tile::cluster::commit_ctas`).
    ctas: u16,
}

/// Where the kernel's allocations go: each `tmem_alloc` result's first column, and the columns of a lane.
struct Placed {
    columns: HashMap<ValueId, usize>,
    width: usize,
    /// The allocation that does not fit in a CTA's columns, with the budget message naming the buffers live with
    /// it: running it is an error.
    over: Option<(OpId, String)>,
}

/// The tensor memory of the CTAs a program runs.
#[derive(Default)]
pub(in crate::shared) struct Tmem {
    /// Lane after lane of `width` cells, CTA part after CTA part (a buffer split over a CTA pair: its part `p` in
    /// the cells of part `p`), as the program sees them.
    cells: Vec<u32>,
    /// The same cells as the tensor cores see them, with the results of tcgen05 ops still in flight.
    shadow: Vec<u32>,
    groups: Vec<Group>,
    /// The allocations' columns, once the first `tmem_alloc` ran.
    placed: Option<Placed>,
    /// The allocations made so far (a view's `buf`: which one, for nothing but telling them apart).
    allocs: usize,
    /// The kernel's tensor-core mode (`cta_group::1` or `::2`), once a tcgen05 op asked.
    group: Option<u32>,
}

impl Tmem {
    /// Barrier `key`'s phase `phase` has just completed: the MMAs its commits track are done with it.
    pub(super) fn complete(&mut self, key: (usize, usize), phase: u64) {
        for g in &mut self.groups {
            for (k, done) in &mut g.keys {
                if *k == key && done.is_none() {
                    *done = Some(phase);
                }
            }
        }
    }

    /// The tcgen05 op in flight whose shared-memory reads overlap `view`, if one is.
    pub(super) fn reader_of(&self, view: &View) -> Option<InFlight> {
        self.groups.iter().find(|g| g.reads.iter().any(|r| overlaps(r, view))).map(|g| g.op)
    }

    /// The columns of a lane (0 before the first allocation).
    fn width(&self) -> usize {
        self.placed.as_ref().map_or(0, |p| p.width)
    }

    /// Room for `parts` CTA parts of tensor memory.
    fn reserve(&mut self, parts: usize) {
        let n = parts * LANES * self.width();
        if self.cells.len() < n {
            self.cells.resize(n, 0);
            self.shadow.resize(n, 0);
        }
    }
}

/// Per element of a tensor in tensor memory: the (cell, bit shift) of its first slot in each lane holding it (of
/// each CTA part), the first lane's first.
type Places = Vec<Vec<(usize, u32)>>;

/// The CTA parts a tensor-memory layout splits its columns into (1 without a split; a broadcast's copies are
/// parts too).
fn parts(layout: &tessel_tile::Layout) -> usize {
    tessel_tile::tmem::cta_parts(layout) as usize
}

/// Where the kernel's allocations go: [`tessel_tile::tmem::plan`]'s columns. A kernel over the budget does not
/// compile; here its allocations each get columns of their own past one another (the one that does not fit is
/// refused when it runs, as before), so that a run reaching only those that fit goes on.
fn place_allocations(f: &tessel_tile::ir::Func) -> Placed {
    match tessel_tile::tmem::plan(f) {
        Ok(plan) => Placed {
            columns: plan.map(|p| p.columns.into_iter().map(|(v, c)| (v, c as usize)).collect()).unwrap_or_default(),
            width: COLUMNS,
            over: None,
        },
        Err(over) => {
            let mut columns = HashMap::new();
            let mut next = 0usize;
            for o in f.all_ops().into_iter().filter(|&o| f.op(o).op == Op::TmemAlloc) {
                let v = f.op(o).results[0];
                let size = tessel_tile::tmem::buffer_columns(f, v).next_power_of_two() as usize;
                next = next.next_multiple_of(size);
                columns.insert(v, next);
                next += size;
            }
            Placed { columns, width: next.max(COLUMNS), over: Some(over) }
        }
    }
}

/// Where each element of a `shape` tensor of `bits`-bit elements laid out by `layout` (`row, col → dims`) sits in
/// tensor memory of `width` columns a lane, its first column `col0`; `None` when a place falls outside the lanes
/// and columns (or past `parts` CTA parts).
///
/// A layout split over a cluster's CTAs has the CTA bits right after one buffer's column slots (before the index
/// bits of a `[buffers, ...]` buffer, `tessel_tile::cluster_part::local_tmem`): each CTA holds its part of every
/// buffer, the buffers one after another in its columns, as codegen lays out each CTA's part.
fn place_in(
    layout: &tessel_tile::Layout,
    shape: &[u32],
    bits: u32,
    col0: usize,
    width: usize,
    parts_held: usize,
) -> Option<Places> {
    let parts = parts(layout);
    let layout = &layout.linear;
    let (rows, slots) = (layout.in_dim_size("row") as usize, layout.in_dim_size("col") as usize);
    let lead = shape[..shape.len().saturating_sub(2)].iter().product::<u32>().next_power_of_two() as usize;
    // Slots of one buffer in one CTA.
    let one = (slots / parts / lead).max(1);
    let n = shape.iter().map(|&d| d as usize).product();
    let mut at: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    // Slots first, then rows: each element's first slot comes first, and a lane's later slots holding it again
    // (unpacked halves, empty slots repeating another) are not places of its own.
    for slot in 0..slots {
        let (local, rest) = (slot % one, slot / one);
        let (part, index) = (rest % parts, rest / parts);
        let bit = (index * one + local) * bits as usize;
        let col = col0 + bit / 32;
        if col >= width || part >= parts_held {
            return None;
        }
        for row in 0..rows.min(LANES) {
            let idx = layout.apply(&[row as u32, slot as u32]);
            let e = idx.iter().zip(shape).fold(0, |e, (&i, &d)| e * d as usize + i as usize);
            let line = part * LANES + row;
            if at[e].iter().all(|&(c, _)| c / width != line) {
                at[e].push((line * width + col, (bit % 32) as u32));
            }
        }
    }
    (rows <= LANES && at.iter().all(|p| !p.is_empty())).then_some(at)
}

impl Program<'_> {
    /// A tensor-memory view: its allocation (`buf`), its first column (`start`) and its columns (`len`), in each
    /// CTA part. A view past its buffers (`memdesc_index` out of range) is an error here.
    fn tmem_view_of(&self, v: ValueId) -> Result<&View, SharedFault> {
        match &self.env[v.index()] {
            Some(Value::Smem(view)) => Ok(view),
            &Some(Value::SmemOutOfRange { index, count }) => Err(SharedFault::ViewOutOfRange { view: v, index, count }),
            other => unreachable!("verified: {v} is a tensor-memory memdesc, found {other:?}"),
        }
    }

    /// The element placements, element type and shape of tensor-memory value `v`.
    fn tmem_place(&self, v: ValueId) -> Result<(Places, ScalarType, Vec<u32>), SharedFault> {
        let (shape, elem, layout) = self.f.ty(v).memdesc().expect("a memdesc");
        let view = self.tmem_view_of(v)?;
        let t = &self.smem.tmem;
        let held = t.cells.len() / (LANES * t.width()).max(1);
        let place = place_in(layout, shape, elem.bits(), view.start, t.width(), held)
            .ok_or_else(|| SharedFault::TmemOutside { view: v, column: view.start })?;
        Ok((place, elem, shape.to_vec()))
    }

    /// Every cell of tensor-memory value `v`.
    fn tmem_all_cells(&self, v: ValueId) -> Result<Vec<usize>, SharedFault> {
        Ok(self.tmem_place(v)?.0.iter().flatten().map(|&(c, _)| c).collect())
    }

    /// `mem.slice(start, length)` of tensor memory: the same cells from a later column (in each CTA's part).
    pub(super) fn tmem_slice(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let Op::MemDescSlice { start, .. } = data.op else { unreachable!("a slice") };
        let (_, cols) = tessel_tile::tmem_types::slice_layout(
            self.f.ty(data.operands[0]),
            start,
            self.f.ty(data.results[0]).shape()[1],
        )
        .map_err(|_| Fault::Unverified("a tensor-memory slice the verifier accepts"))?;
        let whole = self.tmem_view_of(data.operands[0])?.clone();
        let len = tessel_tile::tmem::buffer_columns(self.f, data.results[0]) as usize;
        let view = View { start: whole.start + cols as usize, len, ..whole };
        self.env[data.results[0].index()] = Some(Value::Smem(view));
        Ok(())
    }

    /// `mem.index(i)` of a `[buffers, ...]` tensor-memory buffer, `i` in range: buffer `i`'s columns, one
    /// buffer's columns after another (in each CTA's part), as codegen places them.
    pub(super) fn tmem_index(&self, whole: &View, i: usize, result: ValueId) -> View {
        let cols = tessel_tile::tmem::buffer_columns(self.f, result) as usize;
        View { start: whole.start + i * cols, len: cols, ..whole.clone() }
    }

    /// The tensor `v` holds, from the program's cells or (`shadow`) the tensor cores' view.
    fn tmem_read(&self, v: ValueId, shadow: bool) -> Result<Tensor, SharedFault> {
        let (place, elem, shape) = self.tmem_place(v)?;
        let mask = if elem.bits() == 32 { u32::MAX } else { (1u32 << elem.bits()) - 1 };
        let cells = if shadow { &self.smem.tmem.shadow } else { &self.smem.tmem.cells };
        let data = place.iter().map(|p| from_bits(((cells[p[0].0] >> p[0].1) & mask) as u64, elem)).collect();
        Ok(Tensor { shape, elem: Elem::Scalar(elem), data })
    }

    /// The (cell, bits) writes that put `t` into `v`, over the tensor cores' view of the cells: whole cells, the
    /// other elements of a shared cell kept, an element placed in several lanes written to each.
    fn tmem_cells(&self, v: ValueId, t: &Tensor) -> Result<Vec<(usize, u32)>, SharedFault> {
        let (place, elem, _) = self.tmem_place(v)?;
        let base = &self.smem.tmem.shadow;
        let mask = if elem.bits() == 32 { u32::MAX } else { (1u32 << elem.bits()) - 1 };
        let mut cells: HashMap<usize, u32> = HashMap::new();
        for (places, &x) in place.iter().zip(&t.data) {
            let bits = (to_bits(x, elem) as u32) & mask;
            for &(c, s) in places {
                let old = *cells.get(&c).unwrap_or(&base[c]);
                cells.insert(c, (old & !(mask << s)) | (bits << s));
            }
        }
        let mut out: Vec<(usize, u32)> = cells.into_iter().collect();
        out.sort_unstable();
        Ok(out)
    }

    /// The tcgen05 op in flight that writes one of `cells` (or, `reads`, that writes or reads one), whichever
    /// allocation it names them by, if one is: the op and whether it only reads them.
    fn tmem_pending(&self, cells: &[usize], reads: bool) -> Option<(InFlight, bool)> {
        let touched: HashSet<usize> = cells.iter().copied().collect();
        self.smem.tmem.groups.iter().find_map(|g| {
            if g.writes.iter().any(|(c, _)| touched.contains(c)) {
                Some((g.op, false))
            } else if reads && g.tmem_reads.iter().any(|c| touched.contains(c)) {
                Some((g.op, true))
            } else {
                None
            }
        })
    }

    /// Barrier `key` was seen complete up to phase `upto`: the tcgen05 ops a commit on it tracked with those
    /// phases land.
    pub(super) fn tmem_observe(&mut self, key: (usize, usize), upto: u64) {
        let groups = std::mem::take(&mut self.smem.tmem.groups);
        let (landed, waiting): (Vec<Group>, Vec<Group>) = groups
            .into_iter()
            .partition(|g| g.keys.iter().any(|(k, done)| *k == key && done.is_some_and(|p| p <= upto)));
        self.smem.tmem.groups = waiting;
        for g in landed {
            for (c, bits) in g.writes {
                self.smem.tmem.cells[c] = bits;
            }
        }
    }

    /// A commit on barrier `bar`: it tracks every tcgen05 op in flight and gets one arrival (they are done in the
    /// interpreter's program order).
    ///
    /// In a cluster the arrival reaches the barrier in each CTA of the commit's multicast set (`multicast`, or by
    /// default the issuer and, in `cta_group::2` mode, its pair) from every issuing CTA. A multicast set that
    /// misses a CTA holding a copy of what a newly tracked MMA reads is an error: that CTA could refill its copy
    /// (a multicast TMA load writes the whole group) before learning the MMA is done with it.
    fn tcgen05_commit(&mut self, bar: ValueId, multicast: u16) -> Result<(), SharedFault> {
        let v = self.view(bar)?;
        let key = (v.buf, v.start);
        if !self.smem.barriers.contains_key(&key) {
            return Err(SharedFault::CommitUninitialized(bar));
        }
        let group = self.cta_group()?;
        let mask = if multicast == 0 { tessel_tile::cluster::default_commit_ctas(group) } else { multicast };
        if multicast != 0
            && let Some(g) = self.smem.tmem.groups.iter().find(|g| g.keys.is_empty() && g.ctas & !mask != 0)
        {
            return Err(SharedFault::CommitMulticast { barrier: bar, op: g.op, mask, missing: g.ctas & !mask });
        }
        for g in &mut self.smem.tmem.groups {
            g.keys.push((key, None));
        }
        let n = self.f.config.num_ctas;
        let issuers: Vec<u32> = tessel_tile::cluster::issuers(group, n).collect();
        let b = self.smem.barriers.get_mut(&key).expect("checked");
        if b.commit(&issuers, mask)? {
            self.land_tma(key);
        }
        Ok(())
    }

    /// The kernel's tensor-core mode; an error naming the MMA that mixes `cta_group::1` and `::2`.
    fn cta_group(&mut self) -> Result<u32, SharedFault> {
        if let Some(g) = self.smem.tmem.group {
            return Ok(g);
        }
        let g =
            tessel_tile::cluster::cta_group(self.f).map_err(|(o, m)| SharedFault::CtaGroup { op: o, message: m })?;
        self.smem.tmem.group = Some(g);
        Ok(g)
    }

    /// Issues a tcgen05 op that writes `out` into tensor-memory value `into` (in the tensor cores' view at once,
    /// in the program's when a commit tracking it is observed), reading the shared-memory views `reads` and the
    /// tensor-memory values `tmem_reads`.
    fn tcgen05_issue(
        &mut self,
        op: &'static str,
        into: ValueId,
        out: &Tensor,
        reads: &[ValueId],
        tmem_reads: &[ValueId],
    ) -> Result<(), SharedFault> {
        let cells = self.tmem_cells(into, out)?;
        let mut read_cells = Vec::new();
        for &x in tmem_reads {
            read_cells.extend(self.tmem_all_cells(x)?);
        }
        let op_in_flight = InFlight { op, into };
        if self.limits.mma_order == crate::MmaOrder::Isa {
            let written: HashSet<usize> = cells.iter().map(|&(c, _)| c).collect();
            self.check_issue_order(op_in_flight, &written, &read_cells)?;
        }
        for &(c, bits) in &cells {
            self.smem.tmem.shadow[c] = bits;
        }
        let mut views = Vec::new();
        for &x in reads {
            views.push(self.view(x)?);
        }
        let group = self.cta_group()?;
        let smem: Vec<&tessel_tile::Type> = reads.iter().map(|&x| self.f.ty(x)).collect();
        let ctas = tessel_tile::cluster::commit_ctas(&smem, group, self.f.config.num_ctas);
        self.smem.tmem.groups.push(Group {
            ctas,
            keys: Vec::new(),
            writes: cells,
            reads: views,
            tmem_reads: read_cells,
            op: op_in_flight,
        });
        Ok(())
    }

    /// `MmaOrder::Isa`: tcgen05 op `op`, about to issue, writing the tensor-memory cells `written` and reading
    /// `read`, against every op still in flight, whichever allocations name the cells (the plan puts allocations
    /// whose lives do not overlap, and an allocation run again, on the same columns). The ISA pipelines (runs in
    /// issue order) only an MMA after an MMA into the same accumulator (the same cells) and an MMA after a
    /// `tcgen05.cp`; any other pair touching the same cells, one of them writing, is an error naming both: the
    /// overwrite of cells an op in flight reads first (a copy over the scales an MMA reads, rather than over the
    /// earlier copy of them), then of cells one writes, then the read of cells one writes.
    fn check_issue_order(&self, op: InFlight, written: &HashSet<usize>, read: &[usize]) -> Result<(), SharedFault> {
        let is_mma = |name: &str| name.starts_with("tcgen05_mma");
        let read: HashSet<usize> = read.iter().copied().collect();
        let unordered = self.smem.tmem.groups.iter().filter(|g| {
            let pipelined = is_mma(op.op)
                && (g.op.op == "tcgen05_copy"
                    || (is_mma(g.op.op)
                        && g.writes.len() == written.len()
                        && g.writes.iter().all(|(c, _)| written.contains(c))));
            !pipelined
        });
        let conflict_with = |g: &Group| {
            if g.tmem_reads.iter().any(|c| written.contains(c)) {
                Some(TmemConflict::OverwritesOperand)
            } else if g.writes.iter().any(|(c, _)| written.contains(c)) {
                Some(TmemConflict::OverwritesResult)
            } else if g.writes.iter().any(|(c, _)| read.contains(c)) {
                Some(TmemConflict::ReadsResult)
            } else {
                None
            }
        };
        let rank = |c: TmemConflict| match c {
            TmemConflict::OverwritesOperand => 0,
            TmemConflict::OverwritesResult => 1,
            TmemConflict::ReadsResult => 2,
        };
        let found = unordered.filter_map(|g| conflict_with(g).map(|c| (c, g.op))).min_by_key(|&(c, _)| rank(c));
        match found {
            Some((conflict, earlier)) => {
                let names = Box::new((self.memdesc_name(op.into), self.memdesc_name(earlier.into)));
                Err(SharedFault::TmemOrder { op, earlier, conflict, names })
            }
            None => Ok(()),
        }
    }

    /// The commits an MMA makes to its `(barrier, predicate)` operands.
    fn mma_commits(&mut self, pairs: &[ValueId]) -> Result<(), SharedFault> {
        for pair in pairs.chunks(2) {
            if self.tensor(pair[1]).data[0].is_true() {
                self.tcgen05_commit(pair[0], 0)?;
            }
        }
        Ok(())
    }

    /// `tmem_alloc`: the columns the plan gives the buffer (the same each time the allocation runs), filled with
    /// junk, then with its initial value if it has one. The budget is checked at the allocation that does not
    /// fit.
    fn tmem_alloc(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let r = data.results[0];
        if self.smem.tmem.placed.is_none() {
            self.smem.tmem.placed = Some(place_allocations(self.f));
        }
        let placed = self.smem.tmem.placed.as_ref().expect("placed");
        if let Some((at, m)) = &placed.over
            && *at == o
        {
            return Err(SharedFault::TmemBudget(m.clone()).into());
        }
        let col0 = *placed.columns.get(&r).ok_or(Fault::Unverified("a tmem_alloc the tensor-memory plan places"))?;
        let width = placed.width;
        let (_, elem, layout) = self.f.ty(r).memdesc().expect("verified");
        let cols = tessel_tile::tmem::buffer_columns(self.f, r) as usize;
        let parts = parts(layout);
        self.smem.tmem.reserve(parts);
        // Fresh tensor memory holds garbage: NaN bits (for f16/bf16 in each half, for 8-bit scales in each byte:
        // e8m0 and e4m3 NaN) show reads before writes. Each allocation run again is fresh again.
        let junk = match elem.bits() {
            32 => 0x7fc0_0000,
            16 => 0x7e00_7e00,
            _ => u32::MAX,
        };
        let t = &mut self.smem.tmem;
        for line in 0..parts * LANES {
            let at = line * width + col0;
            t.cells[at..at + cols].fill(junk);
            t.shadow[at..at + cols].fill(junk);
        }
        let buf = t.allocs;
        t.allocs += 1;
        self.env[r.index()] = Some(Value::Smem(View { buf, start: col0, len: cols, mapped: None }));
        if let Some(&init) = data.operands.first() {
            let t = self.tensor(init).clone();
            self.tmem_write(r, &t)?;
        }
        Ok(())
    }

    /// The tensor-memory ops.
    pub(super) fn tmem(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let ins = &data.operands;
        let on = |p: &Self, v: ValueId| p.tensor(v).data[0].is_true();
        match &data.op {
            Op::TmemAlloc => self.tmem_alloc(o)?,
            Op::TmemLoad => {
                let cells: Vec<usize> = self.tmem_place(ins[0])?.0.iter().map(|p| p[0].0).collect();
                if let Some((by, _)) = self.tmem_pending(&cells, false) {
                    let names = Box::new((self.memdesc_name(ins[0]), self.memdesc_name(by.into)));
                    return Err(
                        SharedFault::TmemInFlight { op: "tmem_load", buffer: ins[0], by, reads: false, names }.into()
                    );
                }
                let t = self.tmem_read(ins[0], false)?;
                self.set(o, 0, t);
            }
            Op::TmemStore => {
                let t = self.tensor(ins[0]).clone();
                self.tmem_write(ins[1], &t)?;
            }
            Op::Tcgen05Mma => {
                if !on(self, ins[4]) {
                    return Ok(());
                }
                let a =
                    if self.f.ty(ins[0]).is_tmem() { self.tmem_read(ins[0], true)? } else { self.read_buffer(ins[0])? };
                let b = self.read_buffer(ins[1])?;
                let acc = self.accumulator(ins[2], on(self, ins[3]))?;
                // kind::tf32 reads f32 operands as tf32 (the low 13 mantissa bits dropped); the other kinds'
                // products are exact.
                let precision =
                    if a.elem.scalar() == Some(ScalarType::F32) { InputPrecision::Tf32 } else { InputPrecision::Ieee };
                let out = dot(&a, &b, &acc, precision)?;
                let smem_reads: Vec<ValueId> = ins[..2].iter().copied().filter(|&x| !self.f.ty(x).is_tmem()).collect();
                let tmem_reads: Vec<ValueId> = ins[..1].iter().copied().filter(|&x| self.f.ty(x).is_tmem()).collect();
                self.tcgen05_issue("tcgen05_mma", ins[2], &out, &smem_reads, &tmem_reads)?;
                self.mma_commits(&ins[5..])?;
            }
            Op::Tcgen05MmaScaled { a_format, b_format } => {
                if !on(self, ins[6]) {
                    return Ok(());
                }
                let (a, b) = (self.read_buffer(ins[0])?, self.read_buffer(ins[1])?);
                let (sa, sb) = (self.tmem_read(ins[3], true)?, self.tmem_read(ins[4], true)?);
                let (a, b) = super::scaled::dequantize(&a, &b, &sa, &sb, *a_format, *b_format);
                let acc = self.accumulator(ins[2], on(self, ins[5]))?;
                let out = dot(&a, &b, &acc, InputPrecision::Ieee)?;
                self.tcgen05_issue("tcgen05_mma_scaled", ins[2], &out, &ins[..2], &ins[3..5])?;
                self.mma_commits(&ins[7..])?;
            }
            Op::Tcgen05Copy => {
                let src = self.read_buffer(ins[0])?;
                self.tcgen05_issue("tcgen05_copy", ins[1], &src, &ins[..1], &[])?;
            }
            Op::Tcgen05Commit { multicast } => {
                if ins.get(1).is_none_or(|&p| self.tensor(p).data[0].is_true()) {
                    self.tcgen05_commit(ins[0], *multicast)?;
                }
            }
            _ => unreachable!("not a tensor-memory op"),
        }
        Ok(())
    }

    /// An MMA's accumulator as the tensor cores see it (`use_acc`), else zeros.
    fn accumulator(&self, acc: ValueId, use_acc: bool) -> Result<Tensor, SharedFault> {
        if use_acc {
            return self.tmem_read(acc, true);
        }
        let (shape, elem, _) = self.f.ty(acc).memdesc().expect("verified");
        let zero = if elem.is_int() { Val::Int(0) } else { Val::Float(0.0) };
        Ok(Tensor::splat(shape, Elem::Scalar(elem), zero))
    }

    /// `tmem_store` (and an initialized `tmem_alloc`): an error over cells a tcgen05 op in flight writes or
    /// reads.
    fn tmem_write(&mut self, v: ValueId, t: &Tensor) -> Result<(), SharedFault> {
        let writes = self.tmem_cells(v, t)?;
        let touched: Vec<usize> = writes.iter().map(|&(c, _)| c).collect();
        if let Some((by, reads)) = self.tmem_pending(&touched, true) {
            let names = Box::new((self.memdesc_name(v), self.memdesc_name(by.into)));
            return Err(SharedFault::TmemInFlight { op: "tmem_store", buffer: v, by, reads, names });
        }
        let tm = &mut self.smem.tmem;
        for (c, bits) in writes {
            tm.cells[c] = bits;
            tm.shadow[c] = bits;
        }
        Ok(())
    }
}
