//! Per-thread lowering of the layout IR to PTX.
//!
//! Every tensor value becomes the registers of its layout's `register` in-dim: register `r` of the thread
//! (`lane`, `warp`) holds the element at `L(r, lane, warp)`. Scalars are one register. Ops that keep the
//! data in place (splat, broadcast, expand_dims, permute, reshape, join, split, cat, reduce results, register
//! permutations) only re-index registers; element coordinates are XORs of layout bases selected by thread-id
//! bits. One module per family: `arith` (elementwise), `memory`, `convert`, `reduce`, `scan`, `dot` (FMA),
//! `shape`, `control`; `coords` holds the coordinate and re-indexing helpers they share.

mod arith;
mod asynchronous;
mod bessel_n;
mod bytes;
mod cast;
mod cfmod;
mod clc;
pub(crate) mod cluster;
mod cluster_local;
mod control;
mod convert;
mod coords;
mod data;
mod debug;
mod device;
mod dot;
#[cfg(test)]
mod fmod;
mod fpops;
mod inline_asm;
mod intdiv;
mod libdevice;
mod local;
mod matrix;
mod memory;
mod mma;
mod occupancy;
mod partitions;
mod reduce;
mod scan;
mod shape;
mod shared;
mod shuffle;
mod tcgen05;
mod tma;
mod tma_gather;
mod tma_issue;
mod wgmma;
mod wgmma_desc;

use std::collections::HashMap;

use tessel_tile::ir::{Func, OpId, RegionId, ValueId};
use tessel_tile::layout::accelerate::runs_on_mma_sync;
use tessel_tile::layout::axis::{AxisAnalysis, analyze};
use tessel_tile::ops::Op;
use tessel_tile::target::{Exhausted, Resource};
use tessel_tile::types::{Elem, ScalarType, Type};

use crate::ptx::{Builder, Instr, Param, Reg, RegClass, mem_sym, module, special};
use crate::smem::{Access, Allocation, Hazards, Span};
use crate::{Cause, CompileError, Kernel, Source};

/// The PTX register class holding one element.
pub(crate) fn class_of(e: Elem) -> Result<RegClass, CompileError> {
    Ok(match e {
        Elem::Ptr(..) => RegClass::B64,
        Elem::Scalar(s) => match s {
            ScalarType::I1 => RegClass::Pred,
            // 8-bit integers sign- or zero-extended, fp8 in the low byte (PTX has no 8-bit registers).
            ScalarType::I8
            | ScalarType::U8
            | ScalarType::F8E4M3
            | ScalarType::F8E5M2
            | ScalarType::I16
            | ScalarType::U16
            | ScalarType::F16
            | ScalarType::BF16 => RegClass::B16,
            ScalarType::I32 | ScalarType::U32 => RegClass::B32,
            ScalarType::I64 | ScalarType::U64 => RegClass::B64,
            ScalarType::F32 => RegClass::F32,
            ScalarType::F64 => RegClass::F64,
        },
    })
}

/// Lowering state for one kernel.
pub(crate) struct Lower<'f> {
    pub f: &'f Func,
    pub arch: tessel_tile::Target,
    /// The source text, when the caller gave it (assert locations).
    pub source: Option<Source<'f>>,
    pub b: Builder,
    pub num_warps: u32,
    /// Registers of each lowered value (one per `register` index of its layout; 1 for scalars).
    pub vals: HashMap<ValueId, Vec<Reg>>,
    pub axis: AxisAnalysis,
    /// `%tid.x`, lane and warp ids.
    pub tid: Reg,
    pub lane: Reg,
    pub warp: Reg,
    /// Cached per-thread coordinate parts, keyed by the lane and warp bases of one out-dim.
    pub coord_cache: HashMap<coords::CoordKey, Reg>,
    /// `%cluster_ctarank`, once something asks for it (`cluster`).
    pub cta_rank: Option<Reg>,
    /// Where each CTA's part of a buffer or descriptor block spread over the cluster sits ([`cluster_local`]).
    pub cta_parts: cluster_local::Parts,
    /// The CTAs of a launched cluster: `f.config.num_ctas`, or more when only the first CTA runs the program
    /// ([`cluster::leader_only`]).
    pub launch_ctas: u32,
    /// The top-level `mbarrier_init` after which every CTA of the cluster meets at a cluster barrier, because a
    /// multicast TMA load later completes on other CTAs' barriers ([`cluster::multicast_init_point`]).
    pub cluster_init_after: Option<OpId>,
    /// Cached predicates `parity(lane & mask)`, keyed by the mask (register selection in shuffles).
    pub parity_cache: HashMap<u32, Reg>,
    /// Cached per-lane constants (a value for each of the 32 lanes, e.g. `prmt` selectors), computed at the entry.
    pub lane_tables: HashMap<Vec<u32>, Reg>,
    /// 8-bit element registers whose byte also sits in a packed register ([`bytes`]).
    pub bytes: HashMap<Reg, bytes::ByteOf>,
    /// Registers computed once at the kernel entry that per-thread addresses may be hoisted next to (the base
    /// addresses of whole shared-memory allocations).
    pub entry_regs: std::collections::HashSet<Reg>,
    /// What a tcgen05 op issued now must follow first ([`tcgen05::TmemNeed`]): nothing when, since the last
    /// [`tcgen05::thread_sync`], no thread has accessed tensor memory or waited on an mbarrier (the issuing
    /// thread's tcgen05 ops run in order), the issuer's fence after waits alone, else a sync of the partition.
    pub tmem_need: tcgen05::TmemNeed,
    /// Dynamic shared memory needed (bytes): the allocator's buffers and the highest scratch end.
    pub smem_bytes: u32,
    /// Where every shared-memory buffer sits, and the shared-memory accesses since the last barrier.
    pub alloc: Allocation,
    pub hazards: Hazards,
    /// The op being lowered (its scratch sits above the buffers live at it).
    pub cur_op: OpId,
    /// Asynchronous copies and wgmmas issued and not yet waited for.
    pub in_flight: asynchronous::InFlight,
    /// Loop-carried registers an asynchronous `warpgroup_dot` whose result a loop yields may accumulate in, so
    /// that the back edge does not copy registers the tensor cores are still writing (see `control::for_loop`).
    pub dot_dest: HashMap<ValueId, Vec<Reg>>,
    /// How many ops use each value, and the op defining each op result (for local pattern matches such as
    /// multiply-add contraction).
    pub uses: Vec<u32>,
    pub producer: HashMap<ValueId, OpId>,
    /// The tensor maps TMA copies use (kernel parameters after the IR's arguments).
    pub tensor_maps: Vec<crate::TensorMapArg>,
    /// Each tensor map's generic address, computed at the kernel entry (`tma::map_param`).
    pub tensor_map_addrs: HashMap<usize, Reg>,
    /// The descriptors the kernel makes once per program and TMA copies (`tma::kernel_desc_maker`), in program
    /// order: each one's tensor map is written into the program's global scratch, 128 bytes per maker.
    pub kernel_maps: Vec<OpId>,
    /// The scratch addresses of kernel-made maps written but not yet released and acquired (`tma::make_desc`).
    pub unpublished_maps: Vec<Reg>,
    /// Whether `a * b + c` on f32/f64 may become one `fma` (Triton's `enable_fp_fusion`, on by default; the
    /// kernel's [`tessel_tile::KernelConfig::fp_fusion`], `enable_fp_fusion = false` in the text, turns it off).
    pub fp_fusion: bool,
    /// The CTA barrier of the warps running the code being lowered: `(0, 0)` is `bar.sync 0` (every thread of
    /// the CTA); in a warp-specialized kernel, named barrier `id` over `threads` (see `partitions`).
    pub bar: (u32, u32),
    /// Scratch starts at least here (the scratch of partitions that run at the same time must not overlap).
    pub scratch_floor: u32,
    /// In a warp-specialized kernel: the per-thread values of each worker partition (`partitions`).
    pub ws: Option<partitions::Setup>,
    /// The kernel's tensor memory, when it has any (`tcgen05`).
    pub tmem: Option<tcgen05::Tmem>,
    /// The kernel's tcgen05 ops are a CTA pair's (`cta_group::2`: its tensor memory is
    /// `TensorMemoryLayout(two_ctas=True)`, `tessel_tile::cluster`).
    pub pairs: bool,
    /// The PTX ISA version of the module (`.version`): the target's, or newer where an instruction needs it.
    pub isa: &'static str,
    /// The CTA's first warp of the partition being lowered (0 outside worker partitions): `warp` counts from it.
    pub warp_base: u32,
}

impl<'f> Lower<'f> {
    pub fn get(&self, v: ValueId) -> Result<&[Reg], CompileError> {
        self.vals
            .get(&v)
            .map(|r| r.as_slice())
            .ok_or_else(|| CompileError::new(format!("value {v} used before definition")))
    }

    pub fn scalar_of(&self, v: ValueId) -> Result<ScalarType, CompileError> {
        self.f
            .ty(v)
            .elem()
            .and_then(|e| e.scalar())
            .ok_or_else(|| CompileError::new(format!("{v} is not a scalar type")))
    }

    pub fn elem_of(&self, v: ValueId) -> Result<Elem, CompileError> {
        self.f.ty(v).elem().ok_or_else(|| CompileError::new(format!("{v} has no element type")))
    }

    /// Number of registers a value of type `ty` occupies.
    pub fn num_regs(&self, ty: &Type) -> Result<usize, CompileError> {
        match ty {
            Type::Scalar(_) => Ok(1),
            Type::Tensor { layout: Some(l), .. } => Ok(l.linear.in_dim_size("register") as usize),
            Type::Tensor { layout: None, .. } => {
                Err(CompileError::new("tensor without a layout: codegen needs layout IR"))
            }
            Type::TensorDesc { .. } => Err(CompileError::new("tensor descriptors are not supported by codegen yet")),
            // A shared-memory buffer is its 32-bit shared-window address; a token orders, it holds nothing.
            Type::MemDesc { .. } => Ok(1),
            Type::Token => Ok(0),
            // A cluster launch control response: two b64 words (`clc`).
            Type::ClcResult => Ok(2),
        }
    }

    /// Lowers a combine region (of `reduce`, `scan`, the cluster reduction) once on `acc` and `x`, one register
    /// per operand each.
    pub(crate) fn combine(&mut self, r: RegionId, acc: &[Reg], x: &[Reg]) -> Result<Vec<Reg>, CompileError> {
        let args = self.f.region(r).args.clone();
        for (a, reg) in args.iter().zip(acc.iter().chain(x)) {
            self.vals.insert(*a, vec![*reg]);
        }
        let ys = self.region(r)?;
        ys.iter().map(|&y| self.get(y).map(|rs| rs[0])).collect()
    }

    pub fn region(&mut self, r: RegionId) -> Result<Vec<ValueId>, CompileError> {
        let ops = self.f.region(r).ops.clone();
        let mut yielded = Vec::new();
        for o in ops {
            let data = self.f.op(o);
            if data.op.is_terminator() {
                yielded = data.operands.to_vec();
                if data.op == Op::Return {
                    let exit = "$L_exit".to_string();
                    self.b.emit(Instr::bra_uni(&exit));
                }
                continue;
            }
            self.op(o).map_err(|e| e.at(self.f, o))?;
        }
        Ok(yielded)
    }

    /// Registers a tensor-core instruction may update in place to turn accumulator `acc` into its result: the
    /// accumulator's own when nothing else can see them (its only use is this op, and no other value holds any of
    /// them: then a K loop keeps one set of registers and needs no copies), else fresh copies (a splatted zero
    /// shares one register, a no-op conversion shares its source's).
    pub(crate) fn accumulator_registers(&mut self, acc: ValueId, class: RegClass) -> Result<Vec<Reg>, CompileError> {
        let regs = self.get(acc)?.to_vec();
        let own: std::collections::HashSet<Reg> = regs.iter().copied().collect();
        let private = own.len() == regs.len()
            && self.uses[acc.index()] == 1
            && regs.iter().all(|r| r.class == class)
            && !self.vals.iter().any(|(&x, rs)| x != acc && rs.iter().any(|r| own.contains(r)));
        if private {
            return Ok(regs);
        }
        Ok(regs
            .iter()
            .map(|&r| {
                let d = self.b.reg(class);
                self.mov(d, r);
                d
            })
            .collect())
    }

    /// Whether the current op may accumulate `acc` in registers `dest` (a loop's carried registers): the
    /// registers are of `class`, `acc`'s registers map onto them one to one (a register of `acc` sits in `dest`
    /// only at its own position), and no op after the current one in its region reads them.
    pub(crate) fn can_accumulate_in(&self, acc: ValueId, dest: &[Reg], class: RegClass) -> Result<bool, CompileError> {
        let src = self.get(acc)?;
        let shuffled = src.iter().enumerate().any(|(i, r)| dest.iter().position(|d| d == r).is_some_and(|j| j != i));
        if src.len() != dest.len() || dest.iter().any(|r| r.class != class) || shuffled {
            return Ok(false);
        }
        let Some(region) = self.f.op(self.cur_op).parent else { return Ok(false) };
        let ops = &self.f.region(region).ops;
        let at = ops.iter().position(|&x| x == self.cur_op).expect("an op of its region");
        let mut read = false;
        for &x in &ops[at + 1..] {
            self.f.walk_op(x, &mut |y| {
                read |= self.f.op(y).operands.iter().any(|v| {
                    *v != self.f.op(self.cur_op).results[0]
                        && self.vals.get(v).is_some_and(|rs| rs.iter().any(|r| dest.contains(r)))
                })
            });
        }
        Ok(!read)
    }

    /// The shared-memory buffer spans op `o` reads and writes (scratch is reported by its user).
    pub(crate) fn buffer_spans(&self, o: OpId) -> Vec<Span> {
        self.spans_of(o, false)
    }

    /// The spans of [`Lower::buffer_spans`] that the in-flight tracking follows: all but those reached through a
    /// `memdesc_index` view. A view's buffer is often chosen at run time (the pipeliner's rings), so a span per
    /// view would be the whole ring and every copy into one buffer would look like a race with a dot reading
    /// another; the interpreter checks those programs instead (it sees the actual buffers).
    pub(crate) fn tracked_spans(&self, o: OpId) -> Vec<Span> {
        self.spans_of(o, true)
    }

    /// The buffers a `tma_load` may write without a CTA barrier: those the `ring_release` electing its issuing
    /// thread released (every warp has counted itself done with them, after its own reads).
    fn released_spans(&self, o: OpId) -> Vec<(u32, u32)> {
        let d = self.f.op(o);
        let release = match (&d.op, d.operands.last()) {
            (Op::TmaLoad { .. }, Some(&p)) => match self.f.value(p).def {
                tessel_tile::ir::ValueDef::Result(r, _) if matches!(self.f.op(r).op, Op::RingRelease) => r,
                _ => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        self.f.op(release).operands[2..]
            .iter()
            .filter_map(|&v| self.alloc.buffer(v))
            .map(|b| (b.offset, b.offset + b.bytes))
            .collect()
    }

    fn spans_of(&self, o: OpId, skip_views: bool) -> Vec<Span> {
        let async_reads = matches!(
            self.f.op(o).op,
            Op::WarpGroupDot { .. }
                | Op::TmaStore
                | Op::TmaScatter
                | Op::Tcgen05Mma
                | Op::Tcgen05MmaScaled { .. }
                | Op::Tcgen05Copy
        );
        let async_writes = matches!(
            self.f.op(o).op,
            Op::TmaLoad { .. } | Op::TmaLoadIm2col { .. } | Op::TmaGather { .. } | Op::ClcTryCancel
        );
        let leader_writes =
            matches!(self.f.op(o).op, Op::MBarrierInit { .. } | Op::MBarrierInvalidate | Op::RingCounterInit);
        let released = self.released_spans(o);
        // One buffer of a ring (`memdesc_index`), or a view of one (the permuted ring buffer a dot reads a
        // transposed tile through).
        let is_view = |mut v: ValueId| loop {
            let tessel_tile::ir::ValueDef::Result(p, _) = self.f.value(v).def else { return false };
            match self.f.op(p).op {
                Op::MemDescIndex => return true,
                Op::MemDescPermute { .. } | Op::MemDescReshape | Op::MemDescReinterpret | Op::MemDescSlice { .. } => {
                    v = self.f.op(p).operands[0];
                }
                _ => return false,
            }
        };
        crate::smem::alloc::buffer_operands(self.f, o)
            .into_iter()
            .filter(|&(v, _)| !(skip_views && is_view(v)))
            .filter_map(|(v, write)| {
                let b = self.alloc.buffer(v)?;
                let kind = if write && async_writes {
                    Access::AsyncWrite
                } else if write && leader_writes {
                    Access::LeaderWrite
                } else if write {
                    Access::Write
                } else if async_reads {
                    Access::AsyncRead
                } else {
                    Access::Read
                };
                Some((b.offset, b.offset + b.bytes, kind))
            })
            .filter(|s| !(s.2 == Access::AsyncWrite && released.contains(&(s.0, s.1))))
            .collect()
    }

    /// The buffer spans of every op of region `r` and the regions nested in it.
    pub(crate) fn region_spans(&self, r: RegionId) -> Vec<Span> {
        let mut out = Vec::new();
        self.f.walk(r, &mut |o| out.extend(self.buffer_spans(o)));
        out
    }

    fn op(&mut self, o: OpId) -> Result<(), CompileError> {
        self.cur_op = o;
        let spans = self.buffer_spans(o);
        self.in_flight.check(&self.tracked_spans(o))?;
        self.sync_for(&spans);
        let structured = !self.f.op(o).regions.is_empty();
        if structured && !self.in_flight.is_empty() {
            return Err(CompileError::new(
                "asynchronous copies or wgmmas are still in flight at a loop or branch: wait for them before it",
            ));
        }
        let need = tcgen05::enter(self, o);
        self.lower_op(o)?;
        if structured {
            self.tmem_need = need;
        }
        advance(&mut self.hazards, &self.f.op(o).op, &spans);
        if self.cluster_init_after == Some(o) && !matches!(self.f.op(o).op, Op::WarpSpecialize(_)) {
            // Each CTA's initializations (fenced for the cluster by `mbarrier_init`) before any CTA's multicast.
            self.cluster_barrier();
        }
        Ok(())
    }

    /// What the barrier analysis will have pending after region `r` runs from `state`, without emitting code:
    /// the decisions [`Lower::op`] makes, with loops iterated to a fixed point. Scratch users are assumed to
    /// leave their accesses pending (they end with a barrier only when they use shared memory at all), so the
    /// result may over-approximate, never miss, what is pending.
    pub(crate) fn simulate(&self, r: RegionId, mut state: Hazards) -> Hazards {
        for &o in &self.f.region(r).ops {
            let spans = self.buffer_spans(o);
            match state.needs(&spans) {
                crate::smem::Sync::None => {}
                crate::smem::Sync::Barrier => state.clear(),
                crate::smem::Sync::FenceBarrier => state.clear_fenced(),
            }
            let d = self.f.op(o);
            match d.op {
                Op::For(_) | Op::While => state = self.loop_head(&d.regions, state),
                Op::If => {
                    let then = self.simulate(d.regions[0], state.clone());
                    let mut other = match d.regions.get(1) {
                        Some(&e) => self.simulate(e, state.clone()),
                        None => state.clone(),
                    };
                    other.merge(&then);
                    state = other;
                }
                _ => {}
            }
            advance(&mut state, &d.op, &spans);
        }
        state
    }

    /// The state at the head of a loop with body `regions` entered with `entry`: the entry state merged with
    /// what an iteration leaves pending, to a fixed point. It is also what is pending when the loop exits.
    pub(crate) fn loop_head(&self, regions: &[RegionId], entry: Hazards) -> Hazards {
        let mut head = entry;
        for _ in 0..8 {
            let mut end = head.clone();
            for &r in regions {
                end = self.simulate(r, end);
            }
            let mut next = head.clone();
            next.merge(&end);
            if next == head {
                return head;
            }
            head = next;
        }
        // Not settled (cannot happen with finitely many spans): assume every access of the body is pending.
        for &r in regions {
            head.record(&self.region_spans(r));
        }
        head
    }

    fn lower_op(&mut self, o: OpId) -> Result<(), CompileError> {
        let data = self.f.op(o).clone();
        let ops = &data.operands;
        let res = data.results.first().copied();
        match &data.op {
            Op::Constant(c) => {
                let v = res.unwrap();
                let regs = arith::constant(self, *c, self.elem_of(v)?, self.num_regs(self.f.ty(v))?)?;
                self.vals.insert(v, regs);
            }
            Op::ProgramId(axis) | Op::NumPrograms(axis) => {
                let count = matches!(data.op, Op::NumPrograms(_));
                let sreg = cluster::program_sreg(self.launch_ctas > 1, count, *axis as usize)
                    .ok_or_else(|| CompileError::new("axis must be 0..3"))?;
                let r = self.b.reg(RegClass::B32);
                self.b.op("mov.u32", r, special(sreg));
                self.vals.insert(res.unwrap(), vec![r]);
            }
            Op::Arange { start, .. } => {
                let v = res.unwrap();
                let regs = coords::arange(self, v, *start)?;
                self.vals.insert(v, regs);
            }
            Op::Binary { op, propagate_nan } => arith::binary(self, &data, *op, *propagate_nan)?,
            Op::Unary(op) => arith::unary(self, &data, *op)?,
            Op::Cmp(p) => arith::cmp(self, &data, *p)?,
            Op::Select => arith::select(self, &data)?,
            Op::Fma => arith::fma(self, &data)?,
            Op::FmaRound(dir) => arith::fma_round(self, &data, *dir)?,
            Op::CastRound(dir) => arith::cast_round(self, &data, *dir)?,
            Op::Clamp { propagate_nan } => arith::clamp(self, &data, *propagate_nan)?,
            Op::Norm { recip } => arith::norm(self, &data, *recip)?,
            Op::BesselN(kind) => bessel_n::bessel_n(self, &data, *kind)?,
            Op::Cast => arith::cast(self, &data)?,
            Op::Bitcast => arith::bitcast(self, &data)?,
            Op::AddPtr => memory::addptr(self, &data)?,
            Op::Splat => {
                let v = res.unwrap();
                let s = self.get(ops[0])?[0];
                let n = self.num_regs(self.f.ty(v))?;
                self.vals.insert(v, vec![s; n]);
            }
            Op::Broadcast | Op::ExpandDims { .. } => coords::relayout(self, &data)?,
            Op::ConvertLayout => convert::convert_layout(self, &data)?,
            Op::MultipleOf(_) | Op::MaxContiguous(_) | Op::MaxConstancy(_) => {
                let regs = self.get(ops[0])?.to_vec();
                self.vals.insert(res.unwrap(), regs);
            }
            Op::Assume => {}
            Op::Load { .. } => memory::load(self, &data)?,
            Op::Store { .. } => memory::store(self, &data)?,
            Op::Atomic { op, sem, scope } => memory::atomic(self, &data, *op, sem, scope)?,
            Op::AtomicCas { sem, scope } => memory::atomic_cas(self, &data, sem, scope)?,
            Op::Reduce { axis } => reduce::reduce(self, &data, *axis)?,
            Op::Scan { axis, reverse } => scan::scan(self, &data, *axis, *reverse)?,
            Op::Dot { precision, .. } if runs_on_mma_sync(self.f.ty(data.results[0])) => {
                if self.f.target == tessel_tile::Target::Sm100a
                    && let Some(why) = tessel_tile::layout::tcgen05::why_not(self.f, self.cur_op)
                {
                    self.b.comment(format!("mma.sync, not tcgen05: {why}"));
                }
                mma::mma_sync(self, &data, *precision)?
            }
            Op::Dot { precision, .. } => {
                if self.f.target == tessel_tile::Target::Sm100a
                    && let Some(why) = tessel_tile::layout::tcgen05::why_not(self.f, self.cur_op)
                {
                    self.b.comment(format!("FMA dot, not tcgen05: {why}"));
                }
                dot::dot(self, &data, *precision)?
            }
            Op::Permute { .. } | Op::Reshape { .. } | Op::Join | Op::Split | Op::Cat => shape::shape_op(self, &data)?,
            Op::For(_) => control::for_loop(self, &data)?,
            Op::If => control::if_op(self, &data)?,
            Op::While => control::while_loop(self, &data)?,
            // `tl.debug_barrier()` orders the memory accesses of all the program's threads: in an auto-mode kernel
            // spread over a cluster's CTAs (a one-CTA program otherwise: `cluster::leader_only`), every CTA's.
            Op::DebugBarrier if !self.f.attrs.gluon && self.f.config.num_ctas > 1 => self.cluster_barrier(),
            Op::DebugBarrier => self.barrier(),
            Op::ClusterBarrier if self.f.config.num_ctas > 1 => self.cluster_barrier(),
            Op::ClusterBarrier => self.barrier(),
            Op::LocalAlloc => local::alloc(self, &data)?,
            Op::LocalStore => local::store(self, &data)?,
            Op::LocalLoad => local::load(self, &data)?,
            Op::LocalDealloc => {}
            Op::WarpGroupDot { precision, is_async, .. } => wgmma::warpgroup_dot(self, &data, *precision, *is_async)?,
            Op::WarpGroupDotWait { pending } => asynchronous::dot_wait(self, &data, *pending)?,
            Op::MemDescIndex => asynchronous::memdesc_index(self, &data)?,
            Op::MemDescPermute { .. } | Op::MemDescReshape | Op::MemDescSlice { .. } | Op::MemDescReinterpret => {
                local::view(self, &data)?
            }
            Op::AsyncCopy => asynchronous::async_copy(self, &data)?,
            Op::AsyncCommitGroup => asynchronous::commit_group(self, &data)?,
            Op::AsyncWait { pending } => asynchronous::async_wait(self, &data, *pending)?,
            Op::AsyncCopyMBarrierArrive { arrivals } => asynchronous::copy_mbarrier_arrive(self, &data, *arrivals)?,
            Op::FenceAsyncShared { cluster: false } => self.b.effect("fence.proxy.async.shared::cta", ()),
            Op::FenceAsyncShared { cluster: true } => self.b.effect("fence.proxy.async.shared::cluster", ()),
            op if op.facts().barrier.is_some() => asynchronous::mbarrier(self, &data)?,
            // A descriptor the program makes holds its tensor map's address; a host descriptor's TMA copies reach
            // its arguments through the IR.
            Op::MakeTensorDesc { .. } if self.kernel_maps.contains(&o) => tma::make_desc(self, o, &data)?,
            Op::MakeTensorDesc { .. } | Op::MakeTensorDescIm2col { .. } => {
                self.vals.insert(data.results[0], vec![]);
            }
            Op::RingCounterInit => asynchronous::ring_counter_init(self, &data)?,
            Op::RingRelease => asynchronous::ring_release(self, &data)?,
            Op::TmaLoad { multicast } => tma::load(self, &data, *multicast)?,
            Op::TmaLoadIm2col { rank } => tma::load_im2col(self, &data, *rank as usize)?,
            Op::TmaStore => tma::store(self, &data)?,
            Op::TmaGather { multicast } => tma_gather::gather(self, &data, *multicast)?,
            Op::TmaScatter => tma_gather::scatter(self, &data)?,
            Op::TmaStoreWait { pending, writes } => tma::store_wait(self, *pending, *writes)?,
            Op::Print { prefix, hex } => debug::print(self, &data, prefix, *hex)?,
            Op::Assert { message } => debug::assert(self, &data, message)?,
            Op::GlobalTimer | Op::SmId | Op::GdcWait | Op::GdcLaunchDependents => device::lower(self, &data)?,
            Op::InlineAsm { .. } => inline_asm::lower(self, &data)?,
            Op::Gather { .. } => data::gather(self, &data)?,
            Op::Histogram { num_bins } => data::histogram(self, &data, *num_bins)?,
            Op::WarpSpecialize(_) => partitions::lower(self, &data)?,
            Op::TmemAlloc => tcgen05::alloc(self, &data)?,
            Op::TmemLoad => tcgen05::load(self, &data)?,
            Op::TmemStore => tcgen05::store(self, &data)?,
            Op::Tcgen05Mma => tcgen05::mma(self, &data)?,
            Op::Tcgen05Commit { .. } => tcgen05::commit_op(self, &data)?,
            Op::Tcgen05Copy => tcgen05::copy(self, &data)?,
            Op::Tcgen05MmaScaled { a_format, b_format } => tcgen05::mma_scaled(self, &data, *a_format, *b_format)?,
            Op::ClcTryCancel | Op::ClcLoadResult | Op::ClcIsCanceled | Op::ClcProgramId(_) => clc::lower(self, &data)?,
            other => return Err(CompileError::new(format!("op `{}` is not supported by codegen yet", other.name()))),
        }
        Ok(())
    }
}

/// The barrier analysis's state after op `op`, which accessed `spans`: TMA stores and `cp.async` copies join
/// their groups until a wait retires them, anything else leaves its accesses pending.
fn advance(state: &mut Hazards, op: &Op, spans: &[Span]) {
    match op {
        Op::TmaStore | Op::TmaScatter => state.bulk_issued(spans),
        Op::TmaStoreWait { pending, .. } => state.bulk_waited(*pending),
        Op::AsyncCopy => state.copy_issued(spans),
        Op::AsyncCommitGroup => state.copies_committed(),
        Op::AsyncWait { pending } => state.copies_waited(*pending),
        Op::FenceAsyncShared { .. } => state.proxy_fence(),
        Op::AsyncCopyMBarrierArrive { .. } => {
            state.copies_to_barrier();
            state.record(spans)
        }
        _ => state.record(spans),
    }
}

/// Compiles one kernel of layout IR to PTX for `arch`.
pub(crate) fn compile<'f>(f: &'f Func, source: Option<Source<'f>>) -> Result<Kernel, CompileError> {
    f.config.validate().map_err(Cause::Config)?;
    partitions::check_layout_warps(f)?;
    let at = |(o, message): (Option<OpId>, String)| match o {
        Some(o) => CompileError::new(message).at(f, o),
        None => CompileError::new(message),
    };
    cluster::check(f).map_err(at)?;
    if cluster::leader_only(f) {
        // Lowered as the one-CTA kernel it is; the cluster shows only in the launch shape, the program id and the
        // other CTAs' exit (`Lower::launch_ctas`).
        let mut one = f.clone();
        one.config.num_ctas = 1;
        return lower_kernel(&one, source, cluster_local::Parts::new(), f.config.num_ctas);
    }
    match cluster_local::localize(f).map_err(at)? {
        Some((local, parts)) => lower_kernel(&local, source, parts, f.config.num_ctas),
        None => lower_kernel(f, source, cluster_local::Parts::new(), f.config.num_ctas),
    }
}

/// [`compile`] of a kernel that keeps the cluster rules, with every buffer and descriptor block spread over the
/// CTAs already one CTA's part (`parts` says where each CTA's sits), launched as clusters of `launch_ctas` CTAs:
/// `f.config.num_ctas` of them run the program, the others exit at the entry ([`cluster::leader_only`]).
fn lower_kernel<'f>(
    f: &'f Func,
    source: Option<Source<'f>>,
    parts: cluster_local::Parts,
    launch_ctas: u32,
) -> Result<Kernel, CompileError> {
    let (arch, num_warps) = (f.target, f.config.num_warps);
    let mut b = Builder::new();
    let tid = b.reg(RegClass::B32);
    let lane = b.reg(RegClass::B32);
    let warp = b.reg(RegClass::B32);
    b.set_prologue(true);
    b.op("mov.u32", tid, special("%tid.x"));
    b.op("and.b32", lane, (tid, 31));
    b.op("shr.u32", warp, (tid, 5));
    if launch_ctas > f.config.num_ctas {
        // The CTAs past the program's leave at once (they touch nothing).
        let (rank, idle) = (b.reg(RegClass::B32), b.reg(RegClass::Pred));
        b.op("mov.u32", rank, special("%cluster_ctarank"));
        b.op("setp.ge.u32", idle, (rank, f.config.num_ctas));
        b.emit(crate::ptx::instr("exit").guard(idle));
    }
    b.set_prologue(false);
    let mut l = Lower {
        f,
        arch,
        source,
        b,
        num_warps,
        vals: HashMap::new(),
        axis: analyze(f),
        tid,
        lane,
        warp,
        coord_cache: HashMap::new(),
        cta_rank: None,
        cta_parts: parts,
        launch_ctas,
        cluster_init_after: None,
        parity_cache: HashMap::new(),
        lane_tables: HashMap::new(),
        bytes: HashMap::new(),
        smem_bytes: 0,
        alloc: Allocation::plan(f)?,
        hazards: Hazards::default(),
        cur_op: OpId(0),
        in_flight: Default::default(),
        dot_dest: HashMap::new(),
        entry_regs: Default::default(),
        tmem_need: tcgen05::TmemNeed::Sync,
        uses: f.use_counts(),
        producer: f.all_ops().into_iter().flat_map(|o| f.op(o).results.iter().map(move |&r| (r, o))).collect(),
        fp_fusion: f.config.fp_fusion,
        bar: (0, 0),
        scratch_floor: 0,
        ws: None,
        tmem: None,
        pairs: f.values.iter().any(|v| tessel_tile::cluster::two_ctas(&v.ty)),
        isa: [tcgen05::isa_needed(f), mma::isa_needed(f)]
            .into_iter()
            .flatten()
            .chain([arch.isa_version()])
            .max_by_key(|v| v.split('.').map(|p| p.parse::<u32>().unwrap_or(0)).collect::<Vec<_>>())
            .expect("the target's version"),
        warp_base: 0,
        tensor_maps: Vec::new(),
        tensor_map_addrs: HashMap::new(),
        kernel_maps: tma::kernel_made_maps(f),
        unpublished_maps: Vec::new(),
    };
    let mut params = Vec::new();
    for (i, &a) in f.args().iter().enumerate() {
        let name = format!("{}_param_{i}", f.name);
        // 8/16-bit integers are passed at their size; the launch writes the low bytes of the value.
        let (ty, class, ld) = match f.ty(a) {
            Type::Scalar(Elem::Ptr(..)) => (".u64", RegClass::B64, "u64"),
            Type::Scalar(Elem::Scalar(s)) => match s {
                ScalarType::I1 | ScalarType::U8 => (".u8", RegClass::B16, "u8"),
                ScalarType::I8 => (".s8", RegClass::B16, "s8"),
                ScalarType::I16 => (".s16", RegClass::B16, "s16"),
                ScalarType::U16 => (".u16", RegClass::B16, "u16"),
                ScalarType::I32 | ScalarType::U32 => (".u32", RegClass::B32, "u32"),
                ScalarType::I64 | ScalarType::U64 => (".u64", RegClass::B64, "u64"),
                ScalarType::F32 => (".f32", RegClass::F32, "f32"),
                ScalarType::F64 => (".f64", RegClass::F64, "f64"),
                other => {
                    return Err(CompileError::new(format!(
                        "kernel argument {i}: {other} scalars cannot be passed yet (the runtime passes integers, \
                         f32 and f64)"
                    )));
                }
            },
            other => return Err(CompileError::new(format!("kernel argument {i}: type {other} cannot be passed"))),
        };
        let mut r = l.b.reg(class);
        l.b.op(format!("ld.param.{ld}"), r, mem_sym(name.clone()));
        if f.ty(a).elem().is_some_and(|e| e.is_ptr()) {
            l.b.op("cvta.to.global.u64", r, r);
        }
        if f.ty(a).elem() == Some(Elem::Scalar(ScalarType::I1)) {
            // Bit 0 of the byte, as the interpreter wraps an integer argument to i1.
            let (t, p) = (l.b.reg(RegClass::B16), l.b.reg(RegClass::Pred));
            l.b.op("and.b16", t, (r, 1));
            l.b.op("setp.ne.u16", p, (t, 0));
            r = p;
        }
        l.vals.insert(a, vec![r]);
        params.push(Param { name, ty, bytes: None });
    }
    l.cluster_init_after = cluster::multicast_init_point(f)?;
    partitions::setup(&mut l)?;
    tcgen05::setup(&mut l)?;
    // Why a pass lowered an op otherwise than the target could (`dot_scaled, not block_scale: ...`).
    for note in &f.notes {
        l.b.comment(note.clone());
    }
    l.region(f.body)?;
    for k in 0..l.tensor_maps.len() {
        params.push(Param { name: tma::tensor_map_param(&f.name, k), ty: ".align 64 .b8", bytes: Some(128) });
    }
    // The maps of each CTA of a program (`tma::make_desc`).
    let scratch_bytes = tma::MAP_BYTES * l.kernel_maps.len() as u32 * l.launch_ctas;
    if scratch_bytes > 0 {
        params.push(Param { name: tma::scratch_param(&f.name), ty: ".u64", bytes: None });
    }
    l.b.label("$L_exit");
    if cluster::peers_reach_shared_memory(f) {
        // Other CTAs' copies and arrivals may still be on their way to this CTA's shared memory: no CTA leaves
        // the cluster before every CTA is done (threads that exited count as arrived).
        l.b.effect("barrier.cluster.arrive", ());
        l.b.effect("barrier.cluster.wait", ());
    }
    tcgen05::exit(&mut l);
    l.b.effect("ret", ());
    l.smem_bytes = l.smem_bytes.max(l.alloc.buffer_bytes());
    if l.tmem.is_some() {
        // The word tcgen05.alloc writes the tensor-memory address into, above everything else.
        let slot = l.smem_bytes.next_multiple_of(16);
        tcgen05::entry(&mut l, slot);
        l.smem_bytes = slot + 16;
    }
    let capacity = arch.smem_per_block();
    if l.smem_bytes > capacity {
        let mut msg = format!(
            "the kernel needs {} bytes of shared memory, more than the {capacity} one CTA can have on {arch}",
            l.smem_bytes
        );
        for b in &l.alloc.buffers {
            let name = f.value(b.value).name.clone().map_or_else(|| b.value.to_string(), |n| format!("%{n}"));
            msg += &format!("; {name}: {} bytes at offset {}", b.bytes, b.offset);
        }
        if l.smem_bytes > l.alloc.buffer_bytes() {
            msg += &format!("; scratch up to offset {}", l.smem_bytes);
        }
        if f.config.num_stages > 1 && l.alloc.buffers.iter().any(|b| f.ty(b.value).shape().len() > 2) {
            msg += &format!(
                " (the software pipeliner keeps num_stages - 1 or num_stages buffers in each ring, num_stages = {}: a smaller num_stages or tile fits)",
                f.config.num_stages
            );
        }
        let exhausted = Exhausted { resource: Resource::SharedMemory, needed: l.smem_bytes, capacity };
        return Err(Cause::Exhausted { exhausted, detail: msg }.into());
    }
    let mut table = l.alloc.table(f);
    if l.smem_bytes > 0 {
        table += &format!("// shared memory: {} bytes per CTA (buffers and scratch)\n", l.smem_bytes);
    }
    l.b.set_header(table);
    let total_warps = l.ws.as_ref().map_or(num_warps, |w| w.total_warps);
    let min_ctas = if l.ws.is_some() { None } else { occupancy::min_ctas_per_sm(&l, f, l.smem_bytes) };
    // `tensormap.replace` and the tensormap proxy fences are PTX 8.3.
    let isa = if scratch_bytes > 0 && arch == tessel_tile::Target::Sm90a { "8.3" } else { l.isa };
    let cluster = launch_ctas;
    let entry = crate::ptx::Directives { threads: total_warps * 32, maxnreg: f.config.maxnreg, min_ctas, isa, cluster };
    let ptx = module(arch, &f.name, &params, entry, l.smem_bytes > 0, &l.b);
    Ok(Kernel {
        ptx,
        name: f.name.clone(),
        num_warps: total_warps,
        shared_bytes: l.smem_bytes,
        target: arch,
        tensor_maps: l.tensor_maps,
        scratch_bytes,
        num_ctas: cluster,
    })
}
