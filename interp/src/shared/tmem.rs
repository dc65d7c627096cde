//! Tensor memory and the tcgen05 ops in the interpreter. A tensor-memory buffer is rows of 32-bit cells (its
//! `TensorMemoryLayout` or `TensorMemoryScalesLayout` places each element at a row and an element slot; 16- and
//! 8-bit elements share a cell; an element a layout places in several rows, as the lane quarters of scales, is
//! written to each and read from the first), so elements alias exactly as on the hardware. The tcgen05 ops
//! (`tcgen05_mma`, `tcgen05_mma_scaled`, `tcgen05_copy`) compute at issue, in issue order, against the cells as
//! the tensor cores see them (`shadow`: an MMA reads what an earlier copy or MMA wrote, as the hardware's
//! tcgen05 pipe runs them in order); their results land in the cells the program sees only when an
//! `mbarrier_wait` observes the phase of a barrier that a commit (an MMA's `mbarriers=` or a later
//! `tcgen05_commit`) made track them. Until then a `tmem_load` of cells one writes, a `tmem_store` over cells one
//! writes or reads (the scales of a block-scaled MMA), or a write into the shared memory one reads is an error
//! naming the op.

use std::collections::{HashMap, HashSet};

use tessel_tile::eval::value::{Val, from_bits, to_bits};
use tessel_tile::ir::{OpId, ValueId};
use tessel_tile::ops::{InputPrecision, Op};
use tessel_tile::types::{Elem, ScalarType};

use super::{Program, Tensor, Value, View, overlaps};
use crate::compute::dot;
use crate::error::{Fault, InFlight, SharedFault, TmemConflict};

/// One tensor-memory allocation: its rows of cells as the program sees them (`cells`), and as the tensor cores
/// see them, with the results of MMAs still in flight (`shadow`).
#[derive(Clone, Debug)]
struct Buf {
    cells: Vec<u32>,
    shadow: Vec<u32>,
}

/// The results of one tcgen05 op, in flight until a wait observes a commit that tracks it.
#[derive(Debug)]
struct Group {
    /// The barriers of the commits tracking it, with the phase each completed with (once it has).
    keys: Vec<((usize, usize), Option<u64>)>,
    /// (buffer, cell, bits).
    writes: Vec<(usize, usize, u32)>,
    /// The shared-memory operands it reads.
    reads: Vec<View>,
    /// The tensor-memory cells it reads (buffer, cell): an MMA's A in tensor memory, its scales.
    tmem_reads: Vec<(usize, usize)>,
    /// The op, as messages name it.
    op: InFlight,
    /// The CTAs (offsets from the issuer) holding copies of the shared memory it reads, which a multicast commit
    /// of it must reach (`tessel_tile::cluster::commit_ctas`).
    ctas: u16,
}

#[derive(Default)]
pub(in crate::shared) struct Tmem {
    bufs: Vec<Option<Buf>>,
    groups: Vec<Group>,
    /// The kernel's buffers were found to fit ([`tessel_tile::tmem::plan`]).
    planned: bool,
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
}

/// Per element of a tensor in tensor memory: the (cell, bit shift) of its first slot in each row holding it, the
/// first row's first.
type Places = Vec<Vec<(usize, u32)>>;

/// Where each element of a `shape` tensor of `bits`-bit elements laid out by `layout` (`row, col → dim0, dim1`)
/// sits, and the buffer's column count.
fn placement(layout: &tessel_tile::Layout, shape: &[u32], bits: u32) -> (Places, usize) {
    let cols = columns(layout, bits);
    (place_in(layout, shape, bits, cols, 0, 0), cols)
}

/// The CTA parts a tensor-memory layout splits its columns into (its last `col` bits; 1 without a split).
fn parts(layout: &tessel_tile::Layout) -> usize {
    tessel_tile::tmem::cta_parts(layout) as usize
}

/// The 32-bit columns a buffer laid out by `layout` takes.
fn columns(layout: &tessel_tile::Layout, bits: u32) -> usize {
    ((layout.linear.in_dim_size("col") as usize * bits as usize).div_ceil(32)).max(1)
}

/// [`placement`] in a buffer of `cols` cells per row, from column `col0` (a slice of it). A layout split over a
/// cluster's CTAs has each CTA's part at its last `col` bits; `part_cols` columns apart (0: the layout's own
/// columns per part, as in a whole buffer; a slice's parts stay as far apart as its buffer's).
fn place_in(
    layout: &tessel_tile::Layout,
    shape: &[u32],
    bits: u32,
    cols: usize,
    col0: usize,
    part_cols: usize,
) -> Places {
    let parts = parts(layout);
    let layout = &layout.linear;
    let (rows, slots) = (layout.in_dim_size("row"), layout.in_dim_size("col"));
    let part_slots = (slots as usize / parts).max(1);
    let stride = if part_cols == 0 { (part_slots * bits as usize).div_ceil(32) } else { part_cols };
    let n = shape.iter().map(|&d| d as usize).product();
    let mut at: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    // Slots first, then rows: each element's first slot comes first, and a row's later slots holding it again
    // (unpacked halves, empty slots repeating another) are not places of its own.
    for slot in 0..slots {
        for row in 0..rows {
            let idx = layout.apply(&[row, slot]);
            let e = idx.iter().zip(shape).fold(0, |e, (&i, &d)| e * d as usize + i as usize);
            let (part, local) = (slot as usize / part_slots, slot as usize % part_slots);
            let bit = local * bits as usize;
            let cell = row as usize * cols + col0 + part * stride + bit / 32;
            if at[e].iter().all(|&(c, _)| (c - col0) / cols != row as usize) {
                at[e].push((cell, (bit % 32) as u32));
            }
        }
    }
    assert!(at.iter().all(|p| !p.is_empty()), "a tensor-memory layout covers its tensor");
    at
}

impl Program<'_> {
    /// A tensor-memory view: its buffer, and (in `start`, `len`) its first column and the buffer's columns.
    fn tmem_view_of(&self, v: ValueId) -> &View {
        match &self.env[v.index()] {
            Some(Value::Smem(view)) => view,
            other => unreachable!("verified: {v} is a tensor-memory memdesc, found {other:?}"),
        }
    }

    fn tmem_view(&self, v: ValueId) -> usize {
        self.tmem_view_of(v).buf
    }

    /// The element placements and element type of tensor-memory value `v`.
    fn tmem_place(&self, v: ValueId) -> (Places, ScalarType, Vec<u32>) {
        let (shape, elem, layout) = self.f.ty(v).memdesc().expect("a memdesc");
        let view = self.tmem_view_of(v);
        (place_in(layout, shape, elem.bits(), view.len, view.start, view.part_cols), elem, shape.to_vec())
    }

    /// Every cell of tensor-memory value `v`.
    fn tmem_all_cells(&self, v: ValueId) -> Vec<usize> {
        self.tmem_place(v).0.iter().flatten().map(|&(c, _)| c).collect()
    }

    /// `mem.slice(start, length)` of tensor memory: the same buffer from a later column.
    pub(super) fn tmem_slice(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let Op::MemDescSlice { start, .. } = data.op else { unreachable!("a slice") };
        let (_, cols) = tessel_tile::tmem_types::slice_layout(
            self.f.ty(data.operands[0]),
            start,
            self.f.ty(data.results[0]).shape()[1],
        )
        .map_err(|_| Fault::Unverified("a tensor-memory slice the verifier accepts"))?;
        let whole = self.tmem_view_of(data.operands[0]).clone();
        // Each CTA's part of the slice starts `cols` into that CTA's part of the buffer.
        let (_, elem, layout) = self.f.ty(data.operands[0]).memdesc().expect("a memdesc");
        let part_cols = match whole.part_cols {
            0 => columns(layout, elem.bits()) / parts(layout),
            p => p,
        };
        let view = View { start: whole.start + cols as usize, part_cols, ..whole };
        self.env[data.results[0].index()] = Some(Value::Smem(view));
        Ok(())
    }

    /// The tensor `v` holds, from the program's cells or (`shadow`) the tensor cores' view.
    fn tmem_read(&self, v: ValueId, shadow: bool) -> Result<Tensor, SharedFault> {
        let b = self.tmem_view(v);
        let buf = self.smem.tmem.bufs[b].as_ref().ok_or(SharedFault::Deallocated(v))?;
        let (place, elem, shape) = self.tmem_place(v);
        let mask = if elem.bits() == 32 { u32::MAX } else { (1u32 << elem.bits()) - 1 };
        let cells = if shadow { &buf.shadow } else { &buf.cells };
        let data = place.iter().map(|p| from_bits(((cells[p[0].0] >> p[0].1) & mask) as u64, elem)).collect();
        Ok(Tensor { shape, elem: Elem::Scalar(elem), data })
    }

    /// The (cell, bits) writes that put `t` into `v`: whole cells, the other elements of a shared cell kept, an
    /// element placed in several rows written to each.
    fn tmem_cells(&self, v: ValueId, t: &Tensor, base: &[u32]) -> Vec<(usize, u32)> {
        let (place, elem, _) = self.tmem_place(v);
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
        out
    }

    /// The tcgen05 op in flight that writes a cell of buffer `b` among `cells` (or, `reads`, that writes or reads
    /// one), if one is: the op and whether it only reads them.
    fn tmem_pending(&self, b: usize, cells: &[usize], reads: bool) -> Option<(InFlight, bool)> {
        let touched: std::collections::HashSet<usize> = cells.iter().copied().collect();
        self.smem.tmem.groups.iter().find_map(|g| {
            if g.writes.iter().any(|&(wb, c, _)| wb == b && touched.contains(&c)) {
                Some((g.op, false))
            } else if reads && g.tmem_reads.iter().any(|&(rb, c)| rb == b && touched.contains(&c)) {
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
            for (b, c, bits) in g.writes {
                if let Some(buf) = self.smem.tmem.bufs[b].as_mut() {
                    buf.cells[c] = bits;
                }
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
        let bi = self.tmem_view(into);
        let shadow = self.smem.tmem.bufs[bi].as_ref().ok_or(SharedFault::Deallocated(into))?.shadow.clone();
        let cells = self.tmem_cells(into, out, &shadow);
        let mut read_cells = Vec::new();
        for &x in tmem_reads {
            let b = self.tmem_view(x);
            read_cells.extend(self.tmem_all_cells(x).into_iter().map(|c| (b, c)));
        }
        let op_in_flight = InFlight { op, into };
        if self.limits.mma_order == crate::MmaOrder::Isa {
            let written: HashSet<(usize, usize)> = cells.iter().map(|&(c, _)| (bi, c)).collect();
            self.check_issue_order(op_in_flight, &written, &read_cells)?;
        }
        let buf = self.smem.tmem.bufs[bi].as_mut().expect("checked");
        for &(c, bits) in &cells {
            buf.shadow[c] = bits;
        }
        let mut views = Vec::new();
        for &x in reads {
            views.push(self.view(x)?);
        }
        let writes = cells.into_iter().map(|(c, bits)| (bi, c, bits)).collect();
        let group = self.cta_group()?;
        let smem: Vec<&tessel_tile::Type> = reads.iter().map(|&x| self.f.ty(x)).collect();
        let ctas = tessel_tile::cluster::commit_ctas(&smem, group, self.f.config.num_ctas);
        self.smem.tmem.groups.push(Group {
            ctas,
            keys: Vec::new(),
            writes,
            reads: views,
            tmem_reads: read_cells,
            op: op_in_flight,
        });
        Ok(())
    }

    /// `MmaOrder::Isa`: tcgen05 op `op`, about to issue, writing the tensor-memory cells `written` and reading
    /// `read`, against every op still in flight. The ISA pipelines (runs in issue order) only an MMA after an MMA
    /// into the same accumulator (the same cells) and an MMA after a `tcgen05.cp`; any other pair touching the
    /// same cells, one of them writing, is an error naming both.
    fn check_issue_order(
        &self,
        op: InFlight,
        written: &HashSet<(usize, usize)>,
        read: &[(usize, usize)],
    ) -> Result<(), SharedFault> {
        let is_mma = |name: &str| name.starts_with("tcgen05_mma");
        let read: HashSet<(usize, usize)> = read.iter().copied().collect();
        for g in &self.smem.tmem.groups {
            let pipelined = is_mma(op.op)
                && (g.op.op == "tcgen05_copy"
                    || (is_mma(g.op.op)
                        && g.writes.len() == written.len()
                        && g.writes.iter().all(|&(b, c, _)| written.contains(&(b, c)))));
            if pipelined {
                continue;
            }
            let conflict = if g.tmem_reads.iter().any(|c| written.contains(c)) {
                TmemConflict::OverwritesOperand
            } else if g.writes.iter().any(|&(b, c, _)| written.contains(&(b, c))) {
                TmemConflict::OverwritesResult
            } else if g.writes.iter().any(|&(b, c, _)| read.contains(&(b, c))) {
                TmemConflict::ReadsResult
            } else {
                continue;
            };
            let names = Box::new((self.memdesc_name(op.into), self.memdesc_name(g.op.into)));
            return Err(SharedFault::TmemOrder { op, earlier: g.op, conflict, names });
        }
        Ok(())
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

    /// The tensor-memory ops.
    pub(super) fn tmem(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let ins = &data.operands;
        let on = |p: &Self, v: ValueId| p.tensor(v).data[0].is_true();
        match &data.op {
            Op::TmemAlloc => {
                // The budget, once per run: the buffers live at once must fit in the CTA's columns.
                if !self.smem.tmem.planned {
                    if let Err((at, m)) = tessel_tile::tmem::plan(self.f) {
                        if at == o {
                            return Err(SharedFault::TmemBudget(m).into());
                        }
                    } else {
                        self.smem.tmem.planned = true;
                    }
                }
                let r = data.results[0];
                let (shape, elem, layout) = self.f.ty(r).memdesc().expect("verified");
                let (_, cols) = placement(layout, shape, elem.bits());
                let rows = layout.linear.in_dim_size("row") as usize;
                // Fresh tensor memory holds garbage: NaN bits (for f16/bf16 in each half, for 8-bit scales in
                // each byte: e8m0 and e4m3 NaN) show reads before writes.
                let junk = match elem.bits() {
                    32 => 0x7fc0_0000,
                    16 => 0x7e00_7e00,
                    _ => u32::MAX,
                };
                let cells = vec![junk; rows * cols];
                self.smem.tmem.bufs.push(Some(Buf { cells: cells.clone(), shadow: cells }));
                let b = self.smem.tmem.bufs.len() - 1;
                // A tensor-memory view's `start` is its first column, `len` the buffer's columns.
                self.env[r.index()] =
                    Some(Value::Smem(View { buf: b, start: 0, len: cols, mapped: None, part_cols: 0 }));
                if let Some(&init) = ins.first() {
                    let t = self.tensor(init).clone();
                    self.tmem_write(r, &t)?;
                }
            }
            Op::TmemLoad => {
                let b = self.tmem_view(ins[0]);
                let cells: Vec<usize> = self.tmem_place(ins[0]).0.iter().map(|p| p[0].0).collect();
                if let Some((by, _)) = self.tmem_pending(b, &cells, false) {
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
        let b = self.tmem_view(v);
        let cells_now = self.smem.tmem.bufs[b].as_ref().ok_or(SharedFault::Deallocated(v))?;
        let writes = self.tmem_cells(v, t, &cells_now.shadow.clone());
        let touched: Vec<usize> = writes.iter().map(|&(c, _)| c).collect();
        if let Some((by, reads)) = self.tmem_pending(b, &touched, true) {
            let names = Box::new((self.memdesc_name(v), self.memdesc_name(by.into)));
            return Err(SharedFault::TmemInFlight { op: "tmem_store", buffer: v, by, reads, names });
        }
        let buf = self.smem.tmem.bufs[b].as_mut().expect("checked");
        for (c, bits) in writes {
            buf.cells[c] = bits;
            buf.shadow[c] = bits;
        }
        Ok(())
    }
}
