//! Tensor memory and tcgen05 MMAs in the interpreter. A tensor-memory buffer is rows of 32-bit cells (its
//! `TensorMemoryLayout` places each element at a row and an element slot; 16-bit elements share a cell), so
//! elements alias exactly as on the hardware. A `tcgen05_mma` computes at issue, but its result lands in the
//! cells only when an `mbarrier_wait` observes the phase of a barrier that a commit (its `mbarriers=` or a later
//! `tcgen05_commit`) made track it: until then a `tmem_load` of those cells, a `tmem_store` over them, or a write
//! into its shared-memory operands is an error naming the MMA. The tensor cores themselves see their own pending
//! results (`shadow`), so MMAs accumulate in issue order.

use std::collections::HashMap;

use tessel_tile::eval::value::{Val, from_bits, to_bits};
use tessel_tile::ir::{OpId, ValueId};
use tessel_tile::ops::{InputPrecision, Op};
use tessel_tile::types::{Elem, ScalarType};

use super::{Program, Tensor, Value, View, overlaps};
use crate::compute::dot;
use crate::error::{Fault, SharedFault};

/// One tensor-memory allocation: its rows of cells as the program sees them (`cells`), and as the tensor cores
/// see them, with the results of MMAs still in flight (`shadow`).
#[derive(Clone, Debug)]
struct Buf {
    cells: Vec<u32>,
    shadow: Vec<u32>,
}

/// The results of one `tcgen05_mma`, in flight until a wait observes a commit that tracks it.
#[derive(Debug)]
struct Group {
    /// The barriers of the commits tracking it, with the phase each completed with (once it has).
    keys: Vec<((usize, usize), Option<u64>)>,
    /// (buffer, cell, bits).
    writes: Vec<(usize, usize, u32)>,
    /// The shared-memory operands it reads.
    reads: Vec<View>,
    /// Its accumulator, which messages name it by.
    mma: ValueId,
}

#[derive(Default)]
pub(in crate::shared) struct Tmem {
    bufs: Vec<Option<Buf>>,
    groups: Vec<Group>,
    /// The kernel's buffers were found to fit ([`tessel_tile::tmem::plan`]).
    planned: bool,
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

    /// The MMA whose operand reads overlap `view`, if one is in flight.
    pub(super) fn reader_of(&self, view: &View) -> Option<ValueId> {
        self.groups.iter().find(|g| g.reads.iter().any(|r| overlaps(r, view))).map(|g| g.mma)
    }
}

/// Where each element of a `shape` tensor of `bits`-bit elements laid out by `layout` (`row, col → dim0, dim1`)
/// sits: (cell, bit shift), and the buffer's column count. An element reached by several slots (unpacked 16-bit
/// layouts repeat none, but zero bases would) sits at the first.
fn placement(layout: &tessel_tile::Layout, shape: &[u32], bits: u32) -> (Vec<(usize, u32)>, usize) {
    let cols = columns(layout, bits);
    (place_in(layout, shape, bits, cols, 0), cols)
}

/// The 32-bit columns a buffer laid out by `layout` takes.
fn columns(layout: &tessel_tile::Layout, bits: u32) -> usize {
    ((layout.linear.in_dim_size("col") as usize * bits as usize).div_ceil(32)).max(1)
}

/// [`placement`] in a buffer of `cols` cells per row, from column `col0` (a slice of it).
fn place_in(layout: &tessel_tile::Layout, shape: &[u32], bits: u32, cols: usize, col0: usize) -> Vec<(usize, u32)> {
    let layout = &layout.linear;
    let (rows, slots) = (layout.in_dim_size("row"), layout.in_dim_size("col"));
    let n = shape.iter().map(|&d| d as usize).product();
    let mut at: Vec<Option<(usize, u32)>> = vec![None; n];
    for row in 0..rows {
        for slot in 0..slots {
            let idx = layout.apply(&[row, slot]);
            let e = idx.iter().zip(shape).fold(0, |e, (&i, &d)| e * d as usize + i as usize);
            if at[e].is_none() {
                let bit = slot as usize * bits as usize;
                at[e] = Some((row as usize * cols + col0 + bit / 32, (bit % 32) as u32));
            }
        }
    }
    at.into_iter().map(|x| x.expect("a TensorMemoryLayout covers its tensor")).collect()
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

    /// The element placement and element type of tensor-memory value `v`.
    fn tmem_place(&self, v: ValueId) -> (Vec<(usize, u32)>, ScalarType, Vec<u32>) {
        let (shape, elem, layout) = self.f.ty(v).memdesc().expect("a memdesc");
        let view = self.tmem_view_of(v);
        (place_in(layout, shape, elem.bits(), view.len, view.start), elem, shape.to_vec())
    }

    /// `mem.slice(start, length)` of tensor memory: the same buffer from a later column.
    pub(super) fn tmem_slice(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let Op::MemDescSlice { start, .. } = data.op else { unreachable!("a slice") };
        let (_, cols) = tessel_tile::verify_tmem::slice_layout(
            self.f.ty(data.operands[0]),
            start,
            self.f.ty(data.results[0]).shape()[1],
        )
        .map_err(|_| Fault::Unverified("a tensor-memory slice the verifier accepts"))?;
        let whole = self.tmem_view_of(data.operands[0]).clone();
        let view = View { start: whole.start + cols as usize, ..whole };
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
        let data = place.iter().map(|&(c, s)| from_bits(((cells[c] >> s) & mask) as u64, elem)).collect();
        Ok(Tensor { shape, elem: Elem::Scalar(elem), data })
    }

    /// The (cell, bits) writes that put `t` into `v`: whole cells, the other half of a shared cell kept.
    fn tmem_cells(&self, v: ValueId, t: &Tensor, base: &[u32]) -> Vec<(usize, u32)> {
        let (place, elem, _) = self.tmem_place(v);
        let mask = if elem.bits() == 32 { u32::MAX } else { (1u32 << elem.bits()) - 1 };
        let mut cells: HashMap<usize, u32> = HashMap::new();
        for (&(c, s), &x) in place.iter().zip(&t.data) {
            let old = *cells.get(&c).unwrap_or(&base[c]);
            let bits = (to_bits(x, elem) as u32) & mask;
            cells.insert(c, (old & !(mask << s)) | (bits << s));
        }
        let mut out: Vec<(usize, u32)> = cells.into_iter().collect();
        out.sort_unstable();
        out
    }

    /// The MMA in flight that writes a cell of buffer `b` among `cells`, if one is.
    fn tmem_pending(&self, b: usize, cells: &[usize]) -> Option<ValueId> {
        let touched: std::collections::HashSet<usize> = cells.iter().copied().collect();
        self.smem
            .tmem
            .groups
            .iter()
            .find(|g| g.writes.iter().any(|&(wb, c, _)| wb == b && touched.contains(&c)))
            .map(|g| g.mma)
    }

    /// Barrier `key` was seen complete up to phase `upto`: the MMAs a commit on it tracked with those phases land.
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

    /// A commit on barrier `bar`: it tracks every MMA in flight and gets one arrival (they are done in the
    /// interpreter's program order).
    fn tcgen05_commit(&mut self, bar: ValueId) -> Result<(), SharedFault> {
        let v = self.view(bar)?;
        let key = (v.buf, v.start);
        if !self.smem.barriers.contains_key(&key) {
            return Err(SharedFault::CommitUninitialized(bar));
        }
        for g in &mut self.smem.tmem.groups {
            g.keys.push((key, None));
        }
        let b = self.smem.barriers.get_mut(&key).expect("checked");
        if b.arrive(1)? {
            self.land_tma(key);
        }
        Ok(())
    }

    /// The tensor-memory ops.
    pub(super) fn tmem(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let ins = &data.operands;
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
                // Fresh tensor memory holds garbage: NaN bits (for f16/bf16 in each half too) show reads
                // before writes.
                let junk = if elem.bits() == 32 { 0x7fc0_0000 } else { 0x7e00_7e00 };
                let cells = vec![junk; rows * cols];
                self.smem.tmem.bufs.push(Some(Buf { cells: cells.clone(), shadow: cells }));
                let b = self.smem.tmem.bufs.len() - 1;
                // A tensor-memory view's `start` is its first column, `len` the buffer's columns.
                self.env[r.index()] = Some(Value::Smem(View { buf: b, start: 0, len: cols, mapped: None }));
                if let Some(&init) = ins.first() {
                    let t = self.tensor(init).clone();
                    self.tmem_write(r, &t)?;
                }
            }
            Op::TmemLoad => {
                let b = self.tmem_view(ins[0]);
                let cells: Vec<usize> = self.tmem_place(ins[0]).0.iter().map(|&(c, _)| c).collect();
                if let Some(mma) = self.tmem_pending(b, &cells) {
                    return Err(SharedFault::TmemInFlight { op: "tmem_load", buffer: ins[0], mma }.into());
                }
                let t = self.tmem_read(ins[0], false)?;
                self.set(o, 0, t);
            }
            Op::TmemStore => {
                let t = self.tensor(ins[0]).clone();
                self.tmem_write(ins[1], &t)?;
            }
            Op::Tcgen05Mma => {
                let on = |p: &Self, v: ValueId| p.tensor(v).data[0].is_true();
                if !on(self, ins[4]) {
                    return Ok(());
                }
                let a =
                    if self.f.ty(ins[0]).is_tmem() { self.tmem_read(ins[0], true)? } else { self.read_buffer(ins[0])? };
                let b = self.read_buffer(ins[1])?;
                let acc = if on(self, ins[3]) {
                    self.tmem_read(ins[2], true)?
                } else {
                    let (shape, _, _) = self.f.ty(ins[2]).memdesc().expect("verified");
                    Tensor::splat(shape, Elem::Scalar(ScalarType::F32), Val::Float(0.0))
                };
                let out = dot(&a, &b, &acc, InputPrecision::Ieee)?;
                let bi = self.tmem_view(ins[2]);
                let shadow = self.smem.tmem.bufs[bi].as_ref().ok_or(SharedFault::Deallocated(ins[2]))?.shadow.clone();
                let cells = self.tmem_cells(ins[2], &out, &shadow);
                let buf = self.smem.tmem.bufs[bi].as_mut().expect("checked");
                for &(c, bits) in &cells {
                    buf.shadow[c] = bits;
                }
                let mut reads = Vec::new();
                for &x in &ins[..2] {
                    if !self.f.ty(x).is_tmem() {
                        reads.push(self.view(x)?);
                    }
                }
                let writes = cells.into_iter().map(|(c, bits)| (bi, c, bits)).collect();
                self.smem.tmem.groups.push(Group { keys: Vec::new(), writes, reads, mma: ins[2] });
                for pair in ins[5..].chunks(2) {
                    if on(self, pair[1]) {
                        self.tcgen05_commit(pair[0])?;
                    }
                }
            }
            Op::Tcgen05Commit => {
                if ins.get(1).is_none_or(|&p| self.tensor(p).data[0].is_true()) {
                    self.tcgen05_commit(ins[0])?;
                }
            }
            _ => unreachable!("not a tensor-memory op"),
        }
        Ok(())
    }

    /// `tmem_store` (and an initialized `tmem_alloc`): an error over cells an MMA in flight writes.
    fn tmem_write(&mut self, v: ValueId, t: &Tensor) -> Result<(), SharedFault> {
        let b = self.tmem_view(v);
        let cells_now = self.smem.tmem.bufs[b].as_ref().ok_or(SharedFault::Deallocated(v))?;
        let writes = self.tmem_cells(v, t, &cells_now.shadow.clone());
        let touched: Vec<usize> = writes.iter().map(|&(c, _)| c).collect();
        if let Some(mma) = self.tmem_pending(b, &touched) {
            return Err(SharedFault::TmemInFlight { op: "tmem_store", buffer: v, mma });
        }
        let buf = self.smem.tmem.bufs[b].as_mut().expect("checked");
        for (c, bits) in writes {
            buf.cells[c] = bits;
            buf.shadow[c] = bits;
        }
        Ok(())
    }
}
