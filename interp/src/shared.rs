//! Shared memory and asynchronous work in the interpreter, with the rules the hardware imposes made checkable:
//! a buffer holds a tensor (its shared layout moves elements around, not their values); `async_copy` data lands
//! in the buffer only at an `async_wait` that retires its group, and reading a buffer with a copy into it still
//! in flight is an error; an asynchronous `warpgroup_dot`'s result may only be read through a
//! `warpgroup_dot_wait`, and its operand buffers may not be written before then; an mbarrier counts arrivals
//! and transaction bytes per phase, and a wait that nothing left in the program can satisfy is reported as a
//! deadlock (the barrier, the phase waited for, what it still lacks) instead of hanging; a TMA load's data lands
//! when the barrier phase its bytes complete on completes, and a TMA store's buffer may not be written again
//! before a `tma_store_wait` retires the store.

mod barrier;
pub(crate) mod clc;
pub(crate) mod scaled;
mod tma_gather;
mod tmem;

use std::collections::{BTreeSet, HashMap, VecDeque};

use barrier::Barrier;

use super::compute::dot;
use super::value::Tensor;
use super::{Fault, Lacks, Program, SharedFault, Value};
use tessel_tile::eval::value::Val;
use tessel_tile::ir::{Func, OpId, ValueId};
use tessel_tile::ops::Op;
use tessel_tile::types::Elem;

/// `len` elements of buffer `buf` from flat (row-major) element `start`: a whole allocation or one buffer of a
/// multi-buffered one. A view that is not such a run (`memdesc_permute`, `memdesc_slice`, `memdesc_reinterpret`
/// and views of those) lists its buffer elements in `mapped`, in row-major order of the view (`start` is the
/// first). A tensor-memory view is a run of columns: `start` the first, `len` how many, in each CTA part (`buf`
/// tells allocations apart, nothing more: tensor memory is one array of cells, `tmem`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct View {
    buf: usize,
    start: usize,
    len: usize,
    mapped: Option<std::sync::Arc<Vec<usize>>>,
}

impl View {
    /// The view of buffer `buf` whose elements are `elements`, in row-major order.
    fn of(buf: usize, elements: Vec<usize>) -> View {
        let (start, len) = (elements.first().copied().unwrap_or(0), elements.len());
        let run = elements.iter().enumerate().all(|(i, &e)| e == start + i);
        View { buf, start, len, mapped: (!run).then(|| std::sync::Arc::new(elements)) }
    }

    /// The buffer element of each view element, in row-major order of the view.
    fn elements(&self) -> Vec<usize> {
        match &self.mapped {
            Some(m) => m.to_vec(),
            None => (self.start..self.start + self.len).collect(),
        }
    }

    fn contains(&self, e: usize) -> bool {
        match &self.mapped {
            None => e >= self.start && e < self.start + self.len,
            Some(m) => m.contains(&e),
        }
    }

    /// The view of shape `shape` whose element at index `i` is this view's (of shape `from`) at `to_from(i)`.
    fn derive(&self, from: &[u32], shape: &[u32], to_from: impl Fn(&[u32]) -> Vec<u32>) -> View {
        let mine = self.elements();
        let n: usize = shape.iter().map(|&d| d as usize).product();
        let elements = (0..n).map(|k| mine[ravel(from, &to_from(&Tensor::unravel(shape, k)))]).collect();
        View::of(self.buf, elements)
    }
}

/// `x` of type `from` read as the bits of type `to` (of the same size).
fn recast(x: Val, from: Elem, to: Elem) -> Val {
    match (from.scalar(), to.scalar()) {
        (Some(f), Some(t)) => tessel_tile::eval::value::from_bits(tessel_tile::eval::value::to_bits(x, f), t),
        _ => x,
    }
}

fn ravel(shape: &[u32], idx: &[u32]) -> usize {
    shape.iter().zip(idx).fold(0, |acc, (&d, &i)| acc * d as usize + i as usize)
}

/// One pending element write of an `async_copy`.
type Write = (usize, usize, Val);

/// Writes that complete on an mbarrier: the barrier's key, the index of the phase they completed with (once they
/// have), the element writes.
type BarrierWrites = ((usize, usize), Option<u64>, Vec<Write>);

#[derive(Default)]
pub(super) struct State {
    /// Buffers in allocation order; `None` once deallocated.
    buffers: Vec<Option<Tensor>>,
    /// Copies issued since the last commit, and committed groups, oldest first.
    uncommitted: Vec<Write>,
    groups: VecDeque<Vec<Write>>,
    /// Asynchronous `warpgroup_dot`s in flight (issue numbers), the buffers they read, and the next number.
    in_flight_dots: BTreeSet<u64>,
    dot_reads: Vec<(u64, View)>,
    next_dot: u64,
    /// The mbarriers, by the buffer element they live in.
    barriers: HashMap<(usize, usize), Barrier>,
    /// Elements the `async_copy`s of the other partitions of a `warp_specialize` still have in flight (`partitions`).
    pub(super) foreign: Vec<(usize, usize)>,
    /// The buffers the other partitions' asynchronous `warpgroup_dot`s still read: a write to them is a race
    /// too (a producer refilling a ring slot the consumer's wgmma in flight reads).
    pub(super) foreign_dot_reads: Vec<(u64, View)>,
    /// TMA loads in flight, and `async_copy`s an `async_copy_mbarrier_arrive` handed to a barrier: their element
    /// writes, keyed by the barrier, with the index of the barrier phase they completed with once it has. They
    /// land when an `mbarrier_wait` sees that phase complete: reading them before is a race, even when the
    /// phase happened to complete earlier in program order.
    tma_writes: Vec<BarrierWrites>,
    /// Buffers TMA stores may still read (oldest first), until a `tma_store_wait` retires them.
    tma_store_reads: VecDeque<View>,
    /// Tensor memory and the tcgen05 MMAs in flight (`tmem`).
    tmem: tmem::Tmem,
    /// Cluster launch control: the run's queue of programs not started, this program's responses (`clc`).
    pub(super) clc: clc::Clc,
}

/// The asynchronous work one partition of a `warp_specialize` has in flight (copy groups, wgmmas): each
/// partition waits only for its own, so it moves with the partition while another one runs (`partitions`).
#[derive(Default)]
pub(super) struct AsyncWork {
    uncommitted: Vec<Write>,
    groups: VecDeque<Vec<Write>>,
    in_flight_dots: BTreeSet<u64>,
    dot_reads: Vec<(u64, View)>,
}

impl AsyncWork {
    /// The buffer elements its copies will write.
    pub(super) fn pending_copies(&self) -> Vec<(usize, usize)> {
        self.uncommitted.iter().chain(self.groups.iter().flatten()).map(|&(b, i, _)| (b, i)).collect()
    }

    /// The buffers its asynchronous wgmmas still read.
    pub(super) fn dot_reads(&self) -> Vec<(u64, View)> {
        self.dot_reads.clone()
    }
}

/// What one partition has in flight, as the others see it while it waits for its turn.
#[derive(Clone, Default)]
pub(super) struct Foreign {
    pub copies: Vec<(usize, usize)>,
    pub dot_reads: Vec<(u64, View)>,
}

impl State {
    /// The asynchronous wgmma, of this partition or another, that still reads part of `view`.
    fn dot_reading(&self, view: &View) -> Option<u64> {
        self.dot_reads.iter().chain(&self.foreign_dot_reads).find(|(_, r)| overlaps(r, view)).map(|&(d, _)| d)
    }

    /// Exchanges the asynchronous work in flight with `w`.
    pub(super) fn swap_async(&mut self, w: &mut AsyncWork) {
        std::mem::swap(&mut self.uncommitted, &mut w.uncommitted);
        std::mem::swap(&mut self.groups, &mut w.groups);
        std::mem::swap(&mut self.in_flight_dots, &mut w.in_flight_dots);
        std::mem::swap(&mut self.dot_reads, &mut w.dot_reads);
    }
}

fn overlaps(a: &View, b: &View) -> bool {
    if a.mapped.is_some() || b.mapped.is_some() {
        return a.buf == b.buf && a.elements().iter().any(|&e| b.contains(e));
    }
    a.buf == b.buf && a.start < b.start + b.len && b.start < a.start + a.len
}

impl State {
    /// An operand of `o` that is an asynchronous result not yet waited for is an error, except where such a
    /// value may go: through `yield`, into a loop's initial values, through `warpgroup_dot_wait`, and as the
    /// accumulator of another asynchronous `warpgroup_dot` (the tensor cores accumulate in issue order).
    /// A pending value stays pending after its dot completes: only the wait's result may be read (the wait is
    /// what makes the registers usable on the GPU).
    pub(super) fn check_ready(&self, f: &Func, env: &[Option<Value>], o: OpId) -> Result<(), SharedFault> {
        let d = f.op(o);
        for (i, v) in d.operands.iter().enumerate() {
            if !matches!(env[v.index()], Some(Value::Pending { .. })) {
                continue;
            }
            let allowed = match d.op {
                Op::Yield | Op::WarpGroupDotWait { .. } => true,
                Op::For(_) => i >= 3,
                Op::WarpGroupDot { is_async, .. } => is_async && i == 2,
                _ => false,
            };
            if !allowed {
                return Err(SharedFault::PendingRead(*v));
            }
        }
        Ok(())
    }

    fn in_flight_copy(&self, v: &View) -> bool {
        self.uncommitted
            .iter()
            .chain(self.groups.iter().flatten())
            .chain(self.tma_writes.iter().flat_map(|(_, _, w)| w))
            .any(|&(b, i, _)| b == v.buf && v.contains(i))
            || self.foreign.iter().any(|&(b, i)| b == v.buf && v.contains(i))
    }
}

impl Program<'_> {
    /// The view `v` holds; an error for a view of a buffer index out of range (see [`Value::SmemOutOfRange`]).
    fn view(&self, v: ValueId) -> Result<View, SharedFault> {
        match &self.env[v.index()] {
            Some(Value::Smem(view)) => Ok(view.clone()),
            &Some(Value::SmemOutOfRange { index, count }) => Err(SharedFault::ViewOutOfRange { view: v, index, count }),
            other => unreachable!("verified: {v} is a memdesc, found {other:?}"),
        }
    }

    /// The contents of the buffer `v` views, checking it is allocated and has no copy in flight.
    fn read_buffer(&self, v: ValueId) -> Result<Tensor, SharedFault> {
        let view = self.view(v)?;
        let buf = self.smem.buffers[view.buf].as_ref().ok_or(SharedFault::Deallocated(v))?;
        if self.smem.in_flight_copy(&view) {
            return Err(SharedFault::ReadInFlight(v));
        }
        let shape = self.f.ty(v).shape().to_vec();
        let mut data = match view.mapped {
            None => buf.data[view.start..view.start + view.len].to_vec(),
            Some(_) => view.elements().into_iter().map(|e| buf.data[e]).collect(),
        };
        // Through a reinterpreting view: the element's bits as the view's type.
        let elem = Elem::Scalar(self.f.ty(v).memdesc().expect("a memdesc").1);
        if elem != buf.elem {
            data = data.into_iter().map(|x| recast(x, buf.elem, elem)).collect();
        }
        Ok(Tensor { shape, elem, data })
    }

    /// Writes `data` (row-major) into the buffer `v` views, checking no asynchronous reader still uses it.
    fn write_buffer(&mut self, v: ValueId, data: &[Val]) -> Result<(), SharedFault> {
        let view = self.view(v)?;
        self.check_tcgen05_reads(&view, v.to_string())?;
        if let Some(dot) = self.smem.dot_reading(&view) {
            return Err(SharedFault::WriteWhileDotReads { buffer: v, dot, op: None });
        }
        if self.smem.tma_store_reads.iter().any(|r| overlaps(r, &view)) {
            return Err(SharedFault::WriteWhileTmaStoreReads(v));
        }
        let elem = Elem::Scalar(self.f.ty(v).memdesc().expect("a memdesc").1);
        let buf = self.smem.buffers[view.buf].as_mut().ok_or(SharedFault::Deallocated(v))?;
        let converted: Vec<Val>;
        let data = if elem != buf.elem {
            converted = data.iter().map(|&x| recast(x, elem, buf.elem)).collect();
            &converted[..]
        } else {
            data
        };
        match view.mapped {
            None => buf.data[view.start..view.start + view.len].copy_from_slice(data),
            Some(_) => {
                for (e, &x) in view.elements().into_iter().zip(data) {
                    buf.data[e] = x;
                }
            }
        }
        Ok(())
    }

    /// A write (`what`) into `view` while a tcgen05 MMA in flight reads it is an error naming the MMA.
    fn check_tcgen05_reads(&self, view: &View, what: String) -> Result<(), SharedFault> {
        match self.smem.tmem.reader_of(view) {
            Some(mma) => Err(SharedFault::WriteWhileMmaReads { what, mma }),
            None => Ok(()),
        }
    }

    fn retire(&mut self, writes: Vec<Write>) {
        for (b, i, x) in writes {
            if let Some(buf) = self.smem.buffers[b].as_mut() {
                buf.data[i] = x;
            }
        }
    }

    /// Whether the phase of parity `parity` of barrier `bar` has completed: `Ok(None)` if so, else what the
    /// running phase still lacks. `Err` when the barrier is not initialized.
    pub(super) fn phase_pending(&self, bar: ValueId, parity: i64) -> Result<Option<Lacks>, SharedFault> {
        let v = self.view(bar)?;
        let b = self.smem.barriers.get(&(v.buf, v.start)).ok_or(SharedFault::Uninitialized(bar))?;
        if b.phase() % 2 != parity as u64 {
            return Ok(None);
        }
        Ok(Some(b.lacks()))
    }

    /// The shared-memory and asynchronous ops.
    pub(super) fn shared(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let ins = &data.operands;
        match &data.op {
            Op::LocalAlloc => {
                let (shape, elem, _) = self.f.ty(data.results[0]).memdesc().expect("verified");
                let init = match ins.first() {
                    Some(&v) => self.tensor(v).clone(),
                    // Fresh shared memory holds garbage; NaN (or 0 for integers) makes reads before writes show.
                    None => Tensor::splat(
                        shape,
                        Elem::Scalar(elem),
                        if elem.is_float() { Val::Float(f64::NAN) } else { Val::Int(0) },
                    ),
                };
                let len = init.data.len();
                self.smem.buffers.push(Some(init));
                let view = View { buf: self.smem.buffers.len() - 1, start: 0, len, mapped: None };
                self.env[data.results[0].index()] = Some(Value::Smem(view));
            }
            Op::MemDescIndex => {
                let i = self.tensor(ins[1]).data[0].as_i64();
                let n = self.f.ty(ins[0]).shape()[0] as i64;
                let whole = match self.view(ins[0]) {
                    Ok(w) if (0..n).contains(&i) => w,
                    // Not an error yet: `bars.index((i - 1) % n)` under a false predicate is never touched.
                    Ok(_) => {
                        self.env[data.results[0].index()] = Some(Value::SmemOutOfRange { index: i, count: n });
                        return Ok(());
                    }
                    Err(_) => {
                        self.env[data.results[0].index()] = self.env[ins[0].index()].clone();
                        return Ok(());
                    }
                };
                let shape = self.f.ty(ins[0]).shape();
                let view = match whole.mapped {
                    // Tensor memory: buffer i's columns.
                    None if self.f.ty(ins[0]).is_tmem() => self.tmem_index(&whole, i as usize, data.results[0]),
                    None => {
                        let len = whole.len / n as usize;
                        View { buf: whole.buf, start: whole.start + i as usize * len, len, mapped: None }
                    }
                    Some(_) => whole.derive(shape, &shape[1..], |idx| [&[i as u32], idx].concat()),
                };
                self.env[data.results[0].index()] = Some(Value::Smem(view));
            }
            Op::MemDescSlice { .. } if self.f.ty(ins[0]).is_tmem() => self.tmem_slice(o)?,
            // The same cells as other elements: placement follows the view's own layout.
            Op::MemDescReinterpret if self.f.ty(ins[0]).is_tmem() => {
                self.env[data.results[0].index()] = self.env[ins[0].index()].clone();
            }
            Op::MemDescPermute { .. } | Op::MemDescReshape | Op::MemDescSlice { .. } | Op::MemDescReinterpret => {
                let Ok(whole) = self.view(ins[0]) else {
                    // A view of an out-of-range view stays one (the error comes at a use).
                    self.env[data.results[0].index()] = self.env[ins[0].index()].clone();
                    return Ok(());
                };
                let (from, to) = (self.f.ty(ins[0]), self.f.ty(data.results[0]));
                let view = match &data.op {
                    Op::MemDescPermute { order } => whole.derive(from.shape(), to.shape(), |idx| {
                        let mut p = vec![0; idx.len()];
                        for (i, &d) in order.iter().enumerate() {
                            p[d as usize] = idx[i];
                        }
                        p
                    }),
                    Op::MemDescSlice { dim, start } => whole.derive(from.shape(), to.shape(), |idx| {
                        let mut p = idx.to_vec();
                        p[*dim as usize] += start;
                        p
                    }),
                    // Row-major order is kept: the same elements.
                    Op::MemDescReshape => whole.clone(),
                    _ => {
                        // The same bytes (of elements of one size): view element c sits at offset Lv⁻¹(c), which
                        // holds the buffer's element Lb(offset).
                        let ((_, _, lb), (_, _, lv)) =
                            (from.memdesc().expect("a memdesc"), to.memdesc().expect("a memdesc"));
                        let inv = lv.linear.invert().map_err(|_| SharedFault::NotInvertible(to.clone()))?;
                        whole.derive(from.shape(), to.shape(), |idx| {
                            let offset = inv.apply(idx);
                            lb.linear.apply(&offset).to_vec()
                        })
                    }
                };
                self.env[data.results[0].index()] = Some(Value::Smem(view));
            }
            Op::LocalLoad => {
                let t = self.read_buffer(ins[0])?;
                self.set(o, 0, t);
            }
            Op::LocalStore => {
                let value = self.tensor(ins[0]).data.clone();
                self.write_buffer(ins[1], &value)?;
            }
            Op::LocalDealloc => {
                let view = self.view(ins[0])?;
                self.read_buffer(ins[0])?;
                self.smem.buffers[view.buf] = None;
            }
            Op::AsyncCopy => {
                let view = self.view(ins[1])?;
                self.check_tcgen05_reads(&view, format!("async_copy into {}", ins[1]))?;
                if let Some(dot) = self.smem.dot_reading(&view) {
                    return Err(SharedFault::WriteWhileDotReads { buffer: ins[1], dot, op: Some("async_copy") }.into());
                }
                let ptrs = self.tensor(ins[0]).clone();
                let mask = ins.get(2).map(|&m| self.tensor(m).clone());
                let Elem::Ptr(elem, _) = ptrs.elem else { unreachable!("verified") };
                let elements = view.elements();
                for (i, p) in ptrs.data.iter().enumerate() {
                    let on = mask.as_ref().is_none_or(|m| m.data[i].is_true());
                    let x = if on {
                        self.mem.load(p.as_i64() as u64, elem)?
                    } else if elem.is_float() {
                        Val::Float(0.0)
                    } else {
                        Val::Int(0)
                    };
                    let x = match self.smem.buffers[view.buf].as_ref() {
                        Some(buf) if buf.elem != Elem::Scalar(elem) => recast(x, Elem::Scalar(elem), buf.elem),
                        _ => x,
                    };
                    self.smem.uncommitted.push((view.buf, elements[i], x));
                }
                self.env[data.results[0].index()] = Some(Value::Token);
            }
            Op::AsyncCommitGroup => {
                let group = std::mem::take(&mut self.smem.uncommitted);
                self.smem.groups.push_back(group);
                self.env[data.results[0].index()] = Some(Value::Token);
            }
            Op::AsyncWait { pending } => {
                while self.smem.groups.len() > *pending as usize {
                    let g = self.smem.groups.pop_front().expect("non-empty");
                    self.retire(g);
                }
                self.env[data.results[0].index()] = Some(Value::Token);
            }
            Op::AsyncCopyMBarrierArrive { arrivals } => {
                // Every copy not yet waited for, committed or not, now lands with the barrier's phase; the groups
                // keep their places (emptied), so later waits count as before.
                let v = self.view(ins[0])?;
                let key = (v.buf, v.start);
                if !self.smem.barriers.contains_key(&key) {
                    return Err(SharedFault::Uninitialized(ins[0]).into());
                }
                let mut writes = std::mem::take(&mut self.smem.uncommitted);
                for g in self.smem.groups.iter_mut() {
                    writes.append(g);
                }
                if !writes.is_empty() {
                    self.smem.tma_writes.push((key, None, writes));
                }
                let bar = self.smem.barriers.get_mut(&key).expect("checked");
                if *arrivals > 0 && bar.arrive(*arrivals)? {
                    self.land_tma(key);
                }
            }
            Op::FenceAsyncShared { .. } => {}
            Op::MBarrierInit { count } => {
                let v = self.view(ins[0])?;
                let group = tessel_tile::cluster::barrier_ctas(self.f.ty(ins[0]));
                self.smem.barriers.insert((v.buf, v.start), Barrier::new(*count, group, self.f.config.num_ctas));
            }
            Op::MBarrierExpect { .. } | Op::MBarrierArrive { .. } | Op::MBarrierWait | Op::MBarrierInvalidate => {
                let pred = ins
                    .get(1)
                    .filter(|_| !matches!(data.op, Op::MBarrierWait))
                    .is_none_or(|&p| self.tensor(p).data[0].is_true());
                if !pred {
                    // Predicated off: the barrier is not touched (it may even be an index past the buffers).
                    return Ok(());
                }
                let v = self.view(ins[0])?;
                let warpgroups = self.partition_warps() / 4;
                let arrivers = |per_warpgroup: bool| if per_warpgroup { warpgroups } else { 1 };
                let phase = match data.op {
                    Op::MBarrierWait => self.tensor(ins[1]).data[0].as_i64(),
                    _ => 0,
                };
                let bar = self.smem.barriers.get_mut(&(v.buf, v.start)).ok_or(SharedFault::Uninitialized(ins[0]))?;
                let key = (v.buf, v.start);
                match &data.op {
                    Op::MBarrierExpect { bytes } if pred && bar.expect(*bytes)? => self.land_tma(key),
                    Op::MBarrierArrive { count, per_warpgroup, cta_mask }
                        if pred && bar.arrive_masked(count * arrivers(*per_warpgroup), *cta_mask)? =>
                    {
                        self.land_tma(key)
                    }
                    Op::MBarrierWait => {
                        let p = phase;
                        if !(0..=1).contains(&p) {
                            return Err(SharedFault::Phase(p).into());
                        }
                        // Phase `phase` is running; the one of parity p has completed iff phase % 2 != p.
                        if bar.phase() % 2 == p as u64 {
                            return Err(Fault::Stuck { barrier: ins[0], parity: p, lacks: bar.lacks() });
                        }
                        // The latest phase of parity p (none on a fresh barrier waited for in parity 1).
                        if let Some(seen) = bar.phase().checked_sub(1) {
                            self.observe(key, seen);
                        }
                    }
                    Op::MBarrierInvalidate => {
                        if self.smem.tma_writes.iter().any(|(k, done, _)| *k == key && done.is_none()) {
                            return Err(SharedFault::InvalidatedInFlight(ins[0]).into());
                        }
                        // Done and never waited for: nothing may read them without a race; they land now.
                        self.observe(key, u64::MAX);
                        self.smem.barriers.remove(&key);
                    }
                    _ => {}
                }
            }
            Op::WarpGroupDot { precision, is_async, .. } => {
                let a = match &self.env[ins[0].index()] {
                    Some(Value::Smem(_)) => self.read_buffer(ins[0])?,
                    _ => self.tensor(ins[0]).clone(),
                };
                let acc = match &self.env[ins[2].index()] {
                    Some(Value::Pending { value, .. }) => match value.as_ref() {
                        Value::T(t) => t.clone(),
                        other => unreachable!("verified: an accumulator is a tensor, found {other:?}"),
                    },
                    _ => self.tensor(ins[2]).clone(),
                };
                // `use_acc` false: the product alone (wgmma's scale-d 0).
                let acc = match ins.get(3) {
                    Some(&u) if self.tensor(u).data[0].as_i64() == 0 => {
                        let float = acc.elem.scalar().is_some_and(|s| s.is_float());
                        Tensor::splat(&acc.shape, acc.elem, if float { Val::Float(0.0) } else { Val::Int(0) })
                    }
                    _ => acc,
                };
                let out = dot(&a, &self.read_buffer(ins[1])?, &acc, *precision)?;
                if *is_async {
                    let n = self.smem.next_dot;
                    self.smem.next_dot += 1;
                    self.smem.in_flight_dots.insert(n);
                    for &x in &ins[..2] {
                        if let Some(Value::Smem(v)) = &self.env[x.index()] {
                            let v = v.clone();
                            self.smem.dot_reads.push((n, v));
                        }
                    }
                    self.env[data.results[0].index()] = Some(Value::Pending { value: Box::new(Value::T(out)), dot: n });
                } else {
                    self.set(o, 0, out);
                }
            }
            Op::WarpGroupDotWait { pending } => {
                // In program order the interpreter's dots are complete; `pending` bounds how many may still run,
                // so all but the newest `pending` are retired (their buffers free, their results usable).
                let keep = self.smem.in_flight_dots.len().saturating_sub(*pending as usize);
                let retired: Vec<u64> = self.smem.in_flight_dots.iter().take(keep).copied().collect();
                for n in &retired {
                    self.smem.in_flight_dots.remove(n);
                }
                self.smem.dot_reads.retain(|(d, _)| self.smem.in_flight_dots.contains(d));
                for (i, &v) in ins.iter().enumerate() {
                    // A dependency the wait leaves in flight stays pending under its new name (Gluon's
                    // `acc = warpgroup_mma_wait(1, deps=[acc])` right after issuing `acc`): the next wgmma may
                    // accumulate into it; anything else must wait again first.
                    let value = match self.env[v.index()].clone().expect("defined before use") {
                        p @ Value::Pending { dot, .. } if self.smem.in_flight_dots.contains(&dot) => p,
                        Value::Pending { value, .. } => *value,
                        other => other,
                    };
                    self.env[data.results[i].index()] = Some(value);
                }
            }
            Op::TmaLoad { .. } | Op::TmaLoadIm2col { .. } | Op::TmaStore | Op::TmaStoreWait { .. } => self.tma(o)?,
            Op::TmaGather { .. } => self.tma_gather(o)?,
            Op::TmaScatter => self.tma_scatter(o)?,
            op if tessel_tile::verify_tmem::is_tmem_op(op) => self.tmem(o)?,
            Op::ClcTryCancel | Op::ClcLoadResult => self.clc(o)?,
            Op::RingCounterInit => {
                self.view(ins[0])?;
            }
            Op::RingRelease => {
                // One program stands for all its warps: its release is the last, and it refills when `pred`.
                for &b in &ins[2..] {
                    let view = self.view(b)?;
                    if let Some(dot) = self.smem.dot_reading(&view) {
                        return Err(SharedFault::ReleaseWhileDotReads { buffer: b, dot }.into());
                    }
                }
                let pred = self.tensor(ins[1]).clone();
                self.env[data.results[0].index()] = Some(Value::T(pred));
            }
            _ => unreachable!("not a shared-memory op"),
        }
        Ok(())
    }

    /// Barrier `key`'s phase has just completed: the TMA loads (and handed-over `async_copy`s) it waited for are
    /// done, tagged with that phase, to land at a wait that sees it.
    fn land_tma(&mut self, key: (usize, usize)) {
        let phase = self.smem.barriers[&key].phase() - 1;
        self.smem.tmem.complete(key, phase);
        for (k, done, _) in self.smem.tma_writes.iter_mut() {
            if *k == key && done.is_none() {
                *done = Some(phase);
            }
        }
    }

    /// A wait on barrier `key` saw phases up to `upto` complete: the writes done with them land.
    fn observe(&mut self, key: (usize, usize), upto: u64) {
        let (landed, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.smem.tma_writes)
            .into_iter()
            .partition(|(k, done, _)| *k == key && done.is_some_and(|p| p <= upto));
        self.smem.tma_writes = waiting;
        for (_, _, writes) in landed {
            self.retire(writes);
        }
        self.tmem_observe(key, upto);
    }

    /// The elements a TMA load into `ins[1]` (`tma_load`, `tma_load_im2col`, `tma_gather`) read at issue,
    /// pending until the phase of barrier `ins[2]` that their bytes complete is seen by a wait.
    fn tma_land_on_barrier(&mut self, o: OpId, block: Tensor) -> Result<(), Fault> {
        let data = self.f.op(o);
        let ins = &data.operands;
        let view = self.view(ins[1])?;
        self.check_tcgen05_reads(&view, format!("{} into {}", data.op.name(), ins[1]))?;
        if let Some(dot) = self.smem.dot_reading(&view) {
            return Err(SharedFault::WriteWhileDotReads { buffer: ins[1], dot, op: Some(data.op.name()) }.into());
        }
        let bar = self.view(ins[2])?;
        let key = (bar.buf, bar.start);
        let barrier = self.smem.barriers.get_mut(&key).ok_or(SharedFault::TmaUninitialized(ins[2]))?;
        // Each CTA's barrier counts the bytes landing in its own part of the buffer.
        let parts = match self.f.ty(ins[1]) {
            tessel_tile::Type::MemDesc { layout, .. } => tessel_tile::cluster::parts(&layout.linear) as usize,
            _ => 1,
        };
        let bytes = (block.data.len() * block.elem.scalar().map_or(8, |s| s.bytes() as usize) / parts) as i64;
        // Into the view's elements (a permuted, sliced or reinterpreted view's too), as the buffer's type.
        let into = self.smem.buffers[view.buf].as_ref().map(|b| b.elem);
        let writes = view
            .elements()
            .into_iter()
            .zip(block.data)
            .map(|(e, x)| (view.buf, e, into.filter(|&t| t != block.elem).map_or(x, |t| recast(x, block.elem, t))))
            .collect();
        self.smem.tma_writes.push((key, None, writes));
        if barrier.complete_tx(bytes) {
            self.land_tma(key);
        }
        Ok(())
    }

    /// `tma_load`, `tma_store` and `tma_store_wait`. A load's data is read at issue (the global memory a kernel
    /// reads through TMA is not written by the kernel while the copy runs) and lands when the phase of its barrier
    /// completes; its bytes count as that phase's transactions.
    fn tma(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let ins = &data.operands;
        let rank = || tessel_tile::tma::desc_block(self.f.ty(ins[0])).expect("verified: a tensordesc").1.len();
        match &data.op {
            Op::TmaLoad { .. } | Op::TmaLoadIm2col { .. } => {
                // Coordinates, then (im2col) one offset per spatial dim.
                let (rank, n_offsets) = match data.op {
                    Op::TmaLoadIm2col { rank } => (rank as usize, rank as usize - 2),
                    _ => (rank(), 0),
                };
                if let Some(&p) = ins.get(3 + rank + n_offsets)
                    && !self.tensor(p).data[0].is_true()
                {
                    return Ok(());
                }
                let scalars =
                    |r: &[ValueId]| -> Vec<i64> { r.iter().map(|&c| self.tensor(c).data[0].as_i64()).collect() };
                let coords = scalars(&ins[3..3 + rank]);
                let block = if n_offsets == 0 {
                    self.desc_read(ins[0], &coords)?
                } else {
                    let offsets = scalars(&ins[3 + rank..3 + rank + n_offsets]);
                    self.im2col_read(ins[0], &coords, &offsets)?
                };
                self.tma_land_on_barrier(o, block)?;
            }
            Op::TmaStore => {
                let rank = rank();
                let value = self.read_buffer(ins[1])?;
                let coords: Vec<i64> = ins[2..2 + rank].iter().map(|&c| self.tensor(c).data[0].as_i64()).collect();
                self.desc_write(ins[0], &coords, &value)?;
                let view = self.view(ins[1])?;
                self.smem.tma_store_reads.push_back(view);
            }
            // The interpreter writes global memory when the store is issued: waiting for the writes too is the
            // same as waiting for the reads.
            Op::TmaStoreWait { pending, .. } => {
                while self.smem.tma_store_reads.len() > *pending as usize {
                    self.smem.tma_store_reads.pop_front();
                }
            }
            _ => unreachable!("not a TMA op"),
        }
        Ok(())
    }
}
