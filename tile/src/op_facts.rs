//! What every op is, in one table: [`Op::facts`] gives each op its textual name, its effects, its layout-rule
//! kind, whether it works on shared memory (and which buffers it reads and writes), whether its result is a view
//! of a buffer, whether it works on an mbarrier (and what its operands after the barrier are) and whether it
//! ends a region. [`Op::name`], [`Op::is_pure`], [`Op::is_shared_memory_op`], [`Op::is_memdesc_view`],
//! [`Op::is_terminator`], the layout rules' [`crate::layout::rules::kind`], the verifier's dispatch to the
//! shared-memory typing rules and its mbarrier operand rule, codegen's buffer accesses and its dispatch of the
//! mbarrier ops all read it, so adding an op is one entry here (its typing rule, semantics and lowering aside).
//! The ops written without attributes are listed once more ([`PLAIN`]) for the parser, which finds them by the
//! table's name; passes that build a wait on an mbarrier call [`Op::mbarrier_wait`].

use tessel_math::bessel::bessel_n;
use tessel_math::rounding::Dir;

use crate::ops::Op;

/// What an op does besides computing its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effects {
    /// It reads memory other ops may change (global or shared memory, a barrier's state).
    pub reads: bool,
    /// It writes memory.
    pub writes: bool,
    /// Anything else: control flow, synchronization, allocation, output, the hardware's state.
    pub side_effects: bool,
}

impl Effects {
    pub const NONE: Effects = Effects { reads: false, writes: false, side_effects: false };
    pub const READS: Effects = Effects { reads: true, ..Effects::NONE };
    pub const WRITES: Effects = Effects { writes: true, ..Effects::NONE };
    pub const READS_WRITES: Effects = Effects { reads: true, writes: true, side_effects: false };
    pub const SIDE_EFFECTS: Effects = Effects { side_effects: true, ..Effects::NONE };

    /// Both sets of effects.
    pub const fn and(self, other: Effects) -> Effects {
        Effects {
            reads: self.reads || other.reads,
            writes: self.writes || other.writes,
            side_effects: self.side_effects || other.side_effects,
        }
    }

    pub const fn is_none(self) -> bool {
        !self.reads && !self.writes && !self.side_effects
    }
}

/// What an op does with layouts (the rules themselves are [`crate::layout::rules`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutKind {
    /// Tensor operands and results share one layout (elementwise ops, memory ops, scans, hints).
    Same,
    /// Results take any layout; no tensor operands constrain them (`constant`, `splat`, `arange`).
    Source,
    /// Tensor operands take any layout and there are no tensor results (`print`, `assert`; the shared-memory ops
    /// that read or write buffers, tokens and barriers, not tensors in a layout).
    Sink,
    /// A rule of its own in [`crate::layout::rules`].
    Special,
    /// Regions decide (`for`, `if`, `while`, terminators): handled as tied groups.
    Structured,
}

/// How an op uses a shared-memory buffer operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferUse {
    Read,
    Write,
}

/// What follows the barrier (operand 0, a `memdesc<1xi64>`) among the operands of an op on an mbarrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierOperands {
    /// Nothing (`mbarrier_init`, `mbarrier_invalidate`).
    None,
    /// An optional `i1` predicate (`mbarrier_expect`, `mbarrier_arrive`).
    Predicate,
    /// The `i32` parity of the phase waited for (`mbarrier_wait`).
    Phase,
}

/// The facts of one op; see [`Op::facts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpFacts {
    /// The textual name, as the printer writes it and [`Op::from_parts`] reads it.
    pub name: &'static str,
    pub effects: Effects,
    pub layout: LayoutKind,
    /// On shared memory, asynchronous work or mbarriers: the interpreter runs it in `tessel_interp`'s `shared`,
    /// the verifier types it in `verify_smem`, codegen tracks its buffers.
    pub shared_memory: bool,
    /// Its result is a view of its first operand's shared-memory buffer.
    pub memdesc_view: bool,
    /// It ends a region.
    pub terminator: bool,
    /// The memdesc operands (by position) whose buffers it reads or writes, as codegen's allocation and barrier
    /// analysis see them (`smem::alloc::buffer_operands`). A barrier's (or ring counter's) initialization is a
    /// write every later use must follow; arrivals and waits are the hardware's atomic operations on it, ordered
    /// after it like reads.
    pub buffers: &'static [(usize, BufferUse)],
    /// It works on the mbarrier that is its operand 0; what its other operands are.
    pub barrier: Option<BarrierOperands>,
}

const fn op(name: &'static str, effects: Effects, layout: LayoutKind) -> OpFacts {
    OpFacts {
        name,
        effects,
        layout,
        shared_memory: false,
        memdesc_view: false,
        terminator: false,
        buffers: &[],
        barrier: None,
    }
}

impl OpFacts {
    const fn smem(self) -> OpFacts {
        OpFacts { shared_memory: true, ..self }
    }

    const fn view(self) -> OpFacts {
        OpFacts { shared_memory: true, memdesc_view: true, ..self }
    }

    const fn terminator(self) -> OpFacts {
        OpFacts { terminator: true, ..self }
    }

    const fn buffers(self, buffers: &'static [(usize, BufferUse)]) -> OpFacts {
        OpFacts { buffers, ..self }
    }

    const fn barrier(self, operands: BarrierOperands) -> OpFacts {
        OpFacts { barrier: Some(operands), ..self }
    }
}

impl Op {
    /// The facts of this op: the one table of them.
    pub fn facts(&self) -> OpFacts {
        use BarrierOperands::{Phase, Predicate};
        use BufferUse::{Read, Write};
        use LayoutKind::*;
        const PURE: Effects = Effects::NONE;
        const READS: Effects = Effects::READS;
        const WRITES: Effects = Effects::WRITES;
        const RW: Effects = Effects::READS_WRITES;
        const SIDE: Effects = Effects::SIDE_EFFECTS;
        let dir = |d: &Dir, names: [&'static str; 4]| match d {
            Dir::Nearest => names[0],
            Dir::Zero => names[1],
            Dir::Down => names[2],
            Dir::Up => names[3],
        };
        match self {
            Op::Constant(_) => op("constant", PURE, Source),
            Op::ProgramId(_) => op("program_id", PURE, Source),
            Op::NumPrograms(_) => op("num_programs", PURE, Source),
            Op::Arange { .. } => op("arange", PURE, Source),
            Op::Binary { op: b, .. } => op(b.word(), PURE, Same),
            Op::Unary(u) => op(u.word(), PURE, Same),
            Op::Cmp(_) => op("cmp", PURE, Same),
            Op::Select => op("select", PURE, Same),
            Op::Fma => op("fma", PURE, Same),
            Op::FmaRound(d) => op(dir(d, ["fma_rn", "fma_rz", "fma_rd", "fma_ru"]), PURE, Same),
            Op::CastRound(d) => op(dir(d, ["cast_rn", "cast_rz", "cast_rd", "cast_ru"]), PURE, Same),
            Op::Norm { recip: false } => op("norm", PURE, Same),
            Op::Norm { recip: true } => op("rnorm", PURE, Same),
            Op::BesselN(bessel_n::Kind::J) => op("jn", PURE, Same),
            Op::BesselN(bessel_n::Kind::Y) => op("yn", PURE, Same),
            Op::Clamp { .. } => op("clamp", PURE, Same),
            Op::Cast => op("cast", PURE, Same),
            Op::Bitcast => op("bitcast", PURE, Same),
            Op::AddPtr => op("addptr", PURE, Same),
            Op::Splat => op("splat", PURE, Source),
            Op::Broadcast => op("broadcast", PURE, Special),
            Op::ExpandDims { .. } => op("expand_dims", PURE, Special),
            Op::Reshape { .. } => op("reshape", PURE, Special),
            Op::Permute { .. } => op("permute", PURE, Special),
            Op::Join => op("join", PURE, Special),
            Op::Split => op("split", PURE, Special),
            Op::Cat => op("cat", PURE, Special),
            Op::Load { .. } => op("load", READS, Same),
            Op::Store { .. } => op("store", WRITES, Same),
            Op::Atomic { .. } => op("atomic", RW, Same),
            Op::AtomicCas { .. } => op("atomic_cas", RW, Same),
            Op::Dot { .. } => op("dot", PURE, Special),
            Op::DotScaled { .. } => op("dot_scaled", PURE, Special),
            Op::Reduce { .. } => op("reduce", PURE, Special),
            Op::Scan { .. } => op("scan", PURE, Same),
            Op::For(_) => op("for", SIDE, Structured),
            Op::If => op("if", SIDE, Structured),
            Op::While => op("while", SIDE, Structured),
            Op::Yield => op("yield", SIDE, Structured).terminator(),
            Op::Condition => op("condition", SIDE, Structured).terminator(),
            Op::Return => op("return", SIDE, Structured).terminator(),
            Op::Assume => op("assume", SIDE, Sink),
            Op::MultipleOf(_) => op("multiple_of", PURE, Same),
            Op::MaxContiguous(_) => op("max_contiguous", PURE, Same),
            Op::MaxConstancy(_) => op("max_constancy", PURE, Same),
            Op::Print { .. } => op("print", SIDE, Sink),
            Op::Assert { .. } => op("assert", SIDE, Sink),
            Op::DebugBarrier => op("debug_barrier", SIDE, Sink),
            Op::ClusterBarrier => op("cluster_barrier", SIDE, Sink),
            Op::MakeTensorDesc { .. } => op("make_tensor_desc", PURE, Source),
            Op::MakeTensorDescIm2col { .. } => op("make_tensor_desc_im2col", PURE, Source),
            Op::DescLoad => op("desc_load", READS, Source),
            Op::DescStore => op("desc_store", WRITES, Sink),
            Op::ConvertLayout => op("convert_layout", PURE, Special),
            // Its initial value, when it has one, is written into its result (codegen's allocator says so).
            Op::LocalAlloc => op("local_alloc", WRITES.and(SIDE), Sink).smem(),
            Op::LocalLoad => op("local_load", READS, Source).smem().buffers(&[(0, Read)]),
            Op::LocalStore => op("local_store", WRITES, Sink).smem().buffers(&[(1, Write)]),
            Op::LocalDealloc => op("local_dealloc", SIDE, Sink).smem(),
            // A and B, those that are memdescs (A may be a register tensor).
            Op::WarpGroupDot { .. } => op("warpgroup_dot", READS, Special).smem().buffers(&[(0, Read), (1, Read)]),
            Op::WarpGroupDotWait { .. } => op("warpgroup_dot_wait", SIDE, Special).smem(),
            Op::MemDescIndex => op("memdesc_index", PURE, Sink).view(),
            Op::AsyncCopy => op("async_copy", RW, Same).smem().buffers(&[(1, Write)]),
            Op::AsyncCommitGroup => op("async_commit_group", SIDE, Sink).smem(),
            Op::AsyncWait { .. } => op("async_wait", SIDE, Sink).smem(),
            Op::AsyncCopyMBarrierArrive { .. } => {
                op("async_copy_mbarrier_arrive", RW, Sink).smem().buffers(&[(0, Read)])
            }
            Op::FenceAsyncShared { .. } => op("fence_async_shared", SIDE, Sink).smem(),
            Op::MBarrierInit { .. } => {
                op("mbarrier_init", WRITES, Sink).smem().buffers(&[(0, Write)]).barrier(BarrierOperands::None)
            }
            Op::MBarrierExpect { .. } => {
                op("mbarrier_expect", RW, Sink).smem().buffers(&[(0, Read)]).barrier(Predicate)
            }
            Op::MBarrierArrive { .. } => {
                op("mbarrier_arrive", RW, Sink).smem().buffers(&[(0, Read)]).barrier(Predicate)
            }
            Op::MBarrierWait => op("mbarrier_wait", READS.and(SIDE), Sink).smem().buffers(&[(0, Read)]).barrier(Phase),
            Op::MBarrierInvalidate => {
                op("mbarrier_invalidate", WRITES, Sink).smem().buffers(&[(0, Write)]).barrier(BarrierOperands::None)
            }
            Op::TmaLoad { .. } => op("tma_load", RW, Sink).smem().buffers(&[(1, Write), (2, Read)]),
            Op::TmaLoadIm2col { .. } => op("tma_load_im2col", RW, Sink).smem().buffers(&[(1, Write), (2, Read)]),
            Op::TmaStore => op("tma_store", RW, Sink).smem().buffers(&[(1, Read)]),
            Op::TmaGather { .. } => op("tma_gather", RW, Sink).smem().buffers(&[(1, Write), (2, Read)]),
            Op::TmaScatter => op("tma_scatter", RW, Sink).smem().buffers(&[(1, Read)]),
            Op::TmaStoreWait { .. } => op("tma_store_wait", SIDE, Sink).smem(),
            Op::RingCounterInit => op("ring_counter_init", WRITES, Sink).smem().buffers(&[(0, Write)]),
            // Its atomic additions to the counter are ordered among themselves, after its initialization like
            // reads; the released buffers are not accessed (they are what the refill it elects may write).
            Op::RingRelease => op("ring_release", RW, Sink).smem().buffers(&[(0, Read)]),
            Op::Gather { .. } => op("gather", PURE, Special),
            // A histogram's bins take any layout (codegen counts through shared memory).
            Op::Histogram { .. } => op("histogram", PURE, Source),
            Op::InlineAsm { pure, .. } => op("inline_asm", if *pure { PURE } else { SIDE }, Same),
            Op::GlobalTimer => op("globaltimer", SIDE, Source),
            Op::SmId => op("smid", SIDE, Source),
            Op::GdcWait => op("gdc_wait", SIDE, Sink),
            Op::GdcLaunchDependents => op("gdc_launch_dependents", SIDE, Sink),
            Op::WarpSpecialize(_) => op("warp_specialize", SIDE, Structured),
            Op::MemDescPermute { .. } => op("memdesc_permute", PURE, Sink).view(),
            Op::MemDescReshape => op("memdesc_reshape", PURE, Sink).view(),
            Op::MemDescSlice { .. } => op("memdesc_slice", PURE, Sink).view(),
            Op::MemDescReinterpret => op("memdesc_reinterpret", PURE, Sink).view(),
            // Tensor memory: its buffers are not shared memory (`buffers` lists only A and B, the shared-memory
            // operands codegen's barrier analysis must see; a tensor-memory A is filtered out there).
            Op::TmemAlloc => op("tmem_alloc", WRITES.and(SIDE), Sink).smem(),
            Op::TmemLoad => op("tmem_load", READS, Source).smem(),
            Op::TmemStore => op("tmem_store", WRITES, Sink).smem(),
            Op::Tcgen05Mma => op("tcgen05_mma", RW.and(SIDE), Sink).smem().buffers(&[(0, Read), (1, Read)]),
            Op::Tcgen05Commit { .. } => op("tcgen05_commit", RW.and(SIDE), Sink).smem().buffers(&[(0, Read)]),
            Op::Tcgen05Copy => op("tcgen05_copy", RW.and(SIDE), Sink).smem().buffers(&[(0, Read)]),
            Op::Tcgen05MmaScaled { .. } => {
                op("tcgen05_mma_scaled", RW.and(SIDE), Sink).smem().buffers(&[(0, Read), (1, Read)])
            }
            // The response is written asynchronously (like a TMA load's data) and completes on the barrier.
            Op::ClcTryCancel => op("clc_try_cancel", RW.and(SIDE), Sink).smem().buffers(&[(0, Write), (1, Read)]),
            Op::ClcLoadResult => op("clc_load_result", READS, Sink).smem().buffers(&[(0, Read)]),
            Op::ClcIsCanceled => op("clc_is_canceled", PURE, Source),
            Op::ClcProgramId(_) => op("clc_program_id", PURE, Source),
        }
    }

    /// The wait on mbarrier operand 0 until the phase of parity operand 1 (an `i32`, 0 or 1) has completed: what
    /// gluon's `mbarrier.wait`, the pipeliner's rings and the TMA lowering build.
    pub const fn mbarrier_wait() -> Op {
        Op::MBarrierWait
    }

    /// The textual name.
    pub fn name(&self) -> &'static str {
        self.facts().name
    }

    /// Ops that end a region.
    pub fn is_terminator(&self) -> bool {
        self.facts().terminator
    }

    /// Ops whose only effect is their results: removable when unused, hoistable, CSE-able. Shared-memory ops
    /// never are, views included: an allocation is a distinct buffer, and loads and MMAs read memory that stores
    /// change.
    pub fn is_pure(&self) -> bool {
        let f = self.facts();
        f.effects.is_none() && !f.shared_memory
    }

    /// The ops on shared memory, asynchronous work and mbarriers (the interpreter runs them in
    /// `tessel_interp`'s `shared`, codegen tracks their buffers).
    pub fn is_shared_memory_op(&self) -> bool {
        self.facts().shared_memory
    }

    /// The ops whose result is a view of their first operand's shared-memory buffer.
    pub fn is_memdesc_view(&self) -> bool {
        self.facts().memdesc_view
    }
}

/// The ops whose text has no attributes, each its own spelling in the table ([`Op::name`]): [`Op::from_parts`]
/// finds them by name. (Binary and unary ops are found by their words, `BinOp`'s and `UnOp`'s.)
pub const PLAIN: &[Op] = &[
    Op::Select,
    Op::Fma,
    Op::FmaRound(Dir::Nearest),
    Op::FmaRound(Dir::Zero),
    Op::FmaRound(Dir::Down),
    Op::FmaRound(Dir::Up),
    Op::CastRound(Dir::Nearest),
    Op::CastRound(Dir::Zero),
    Op::CastRound(Dir::Down),
    Op::CastRound(Dir::Up),
    Op::Norm { recip: false },
    Op::Norm { recip: true },
    Op::BesselN(bessel_n::Kind::J),
    Op::BesselN(bessel_n::Kind::Y),
    Op::Cast,
    Op::Bitcast,
    Op::AddPtr,
    Op::Splat,
    Op::Broadcast,
    Op::Join,
    Op::Split,
    Op::Cat,
    Op::MemDescIndex,
    Op::AsyncCopy,
    Op::AsyncCommitGroup,
    Op::MBarrierWait,
    Op::MBarrierInvalidate,
    Op::TmaStore,
    Op::TmaScatter,
    Op::RingCounterInit,
    Op::RingRelease,
    Op::LocalAlloc,
    Op::LocalLoad,
    Op::LocalStore,
    Op::LocalDealloc,
    Op::If,
    Op::While,
    Op::Yield,
    Op::Condition,
    Op::Return,
    Op::Assume,
    Op::DebugBarrier,
    Op::ClusterBarrier,
    Op::DescLoad,
    Op::DescStore,
    Op::ConvertLayout,
    Op::GlobalTimer,
    Op::SmId,
    Op::GdcWait,
    Op::GdcLaunchDependents,
    Op::MemDescReshape,
    Op::MemDescReinterpret,
    Op::TmemAlloc,
    Op::TmemLoad,
    Op::TmemStore,
    Op::Tcgen05Mma,
    Op::Tcgen05Copy,
    Op::ClcTryCancel,
    Op::ClcLoadResult,
    Op::ClcIsCanceled,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Attr, BinOp, UnOp};

    /// One op of every variant (a new variant goes here too), built from its text form, so the table's names are
    /// checked against the parser's.
    fn every_op() -> Vec<Op> {
        let int = |k: &str, v: i64| (k.to_string(), Attr::Int(v));
        let ints = |k: &str, v: &[i64]| (k.to_string(), Attr::Ints(v.to_vec()));
        let word = |k: &str, v: &str| (k.to_string(), Attr::Word(v.to_string()));
        let plain = "select fma fma_rn fma_rz fma_rd fma_ru cast_rn cast_rz cast_rd cast_ru norm rnorm jn yn clamp
             cast bitcast addptr splat broadcast reshape join split cat load store atomic_cas for if while
             yield condition return assume print assert debug_barrier desc_load desc_store convert_layout
             local_alloc local_load local_store local_dealloc memdesc_index async_copy async_commit_group
             fence_async_shared mbarrier_wait mbarrier_invalidate tma_load tma_store ring_counter_init
             ring_release inline_asm globaltimer smid gdc_wait gdc_launch_dependents memdesc_reshape
             memdesc_reinterpret tmem_alloc tmem_load tmem_store tcgen05_mma tcgen05_commit tcgen05_copy
             clc_try_cancel clc_load_result clc_is_canceled";
        let with_attrs: Vec<(&str, Vec<(String, Attr)>)> = vec![
            ("constant", vec![int("value", 1)]),
            ("program_id", vec![int("axis", 0)]),
            ("num_programs", vec![int("axis", 0)]),
            ("arange", vec![int("start", 0), int("end", 4)]),
            ("cmp", vec![word("pred", "lt")]),
            ("expand_dims", vec![int("axis", 0)]),
            ("permute", vec![ints("order", &[1, 0])]),
            ("atomic", vec![word("op", "add")]),
            ("dot", vec![word("precision", "ieee")]),
            ("warpgroup_dot", vec![word("precision", "ieee")]),
            ("warpgroup_dot_wait", vec![int("pending", 0)]),
            ("async_wait", vec![int("pending", 0)]),
            ("async_copy_mbarrier_arrive", vec![int("arrivals", 0)]),
            ("mbarrier_init", vec![int("count", 1)]),
            ("mbarrier_expect", vec![int("bytes", 16)]),
            ("mbarrier_arrive", vec![int("count", 1)]),
            ("tma_load_im2col", vec![int("rank", 4)]),
            ("tma_store_wait", vec![int("pending", 0)]),
            ("reduce", vec![int("axis", 0)]),
            ("scan", vec![int("axis", 0)]),
            ("multiple_of", vec![ints("values", &[16])]),
            ("max_contiguous", vec![ints("values", &[16])]),
            ("max_constancy", vec![ints("values", &[16])]),
            ("make_tensor_desc", vec![int("rank", 2)]),
            ("make_tensor_desc_im2col", vec![int("rank", 4)]),
            ("gather", vec![int("axis", 0)]),
            ("histogram", vec![int("num_bins", 8)]),
            ("inline_asm", vec![("pure".to_string(), Attr::Bool(true))]),
            ("warp_specialize", vec![ints("worker_num_warps", &[4])]),
            ("memdesc_permute", vec![ints("order", &[1, 0])]),
            ("memdesc_slice", vec![int("dim", 0), int("start", 0)]),
            ("tcgen05_mma_scaled", vec![word("a_format", "e2m1"), word("b_format", "e4m3")]),
            ("clc_program_id", vec![int("axis", 0)]),
        ];
        let words = BinOp::WORDS.iter().chain(UnOp::WORDS);
        let named = plain.split_whitespace().chain(words.copied()).map(|n| (n, Vec::new()));
        named
            .chain(with_attrs)
            .map(|(name, attrs)| {
                let op = Op::from_parts(name, &attrs).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(op.name(), name, "the table's name of {op:?}");
                op
            })
            .collect()
    }

    #[test]
    fn every_shared_memory_op_is_impure_and_every_view_is_one() {
        for op in every_op() {
            let f = op.facts();
            if f.shared_memory {
                assert!(!op.is_pure(), "{}", f.name);
            }
            if f.memdesc_view {
                assert!(f.shared_memory && f.effects.is_none() && f.buffers.is_empty(), "{}", f.name);
            }
            // Only shared-memory ops touch buffers, and each one that is not a view does something.
            assert!(f.buffers.is_empty() || f.shared_memory, "{}", f.name);
            if f.shared_memory && !f.memdesc_view {
                assert!(!f.effects.is_none(), "{}", f.name);
            }
            // A buffer it reads or writes is memory it reads or writes.
            for &(_, u) in f.buffers {
                assert!(if u == BufferUse::Write { f.effects.writes } else { f.effects.reads }, "{}", f.name);
            }
        }
    }

    #[test]
    fn plain_ops_have_no_attributes_and_one_name_each() {
        let mut names: Vec<&str> = PLAIN
            .iter()
            .map(|op| {
                assert!(op.attrs().is_empty(), "{}", op.name());
                op.name()
            })
            .collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PLAIN.len());
    }

    #[test]
    fn terminators_end_regions_the_layout_rules_leave_to_their_ops() {
        let terminators: Vec<&str> = every_op().iter().filter(|op| op.is_terminator()).map(|op| op.name()).collect();
        assert_eq!(terminators, ["yield", "condition", "return"]);
        for op in every_op() {
            if op.is_terminator() {
                assert_eq!(op.facts().layout, LayoutKind::Structured);
                assert!(!op.is_pure());
            }
        }
    }

    #[test]
    fn the_derived_lists_are_the_ops_they_name() {
        let ops = every_op();
        let names = |keep: fn(&Op) -> bool| -> Vec<&'static str> {
            let mut v: Vec<&str> = ops.iter().filter(|op| keep(op)).map(|op| op.name()).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(
            names(Op::is_memdesc_view),
            ["memdesc_index", "memdesc_permute", "memdesc_reinterpret", "memdesc_reshape", "memdesc_slice"]
        );
        // The shared-memory ops are the ones named for shared memory, asynchronous work and barriers.
        let smem_names = [
            "local_",
            "memdesc_",
            "warpgroup_",
            "async_",
            "fence_async",
            "mbarrier_",
            "tma_",
            "ring_",
            "tmem_",
            "tcgen05_",
            "clc_try_cancel",
            "clc_load_result",
        ];
        for op in &ops {
            let named = smem_names.iter().any(|p| op.name().starts_with(p));
            assert_eq!(op.is_shared_memory_op(), named, "{}", op.name());
        }
        let impure = names(|op| !op.is_pure() && !op.is_shared_memory_op());
        for name in ["load", "store", "atomic", "for", "print", "inline_asm", "globaltimer", "warp_specialize"] {
            assert!(impure.contains(&name), "{name} must be impure");
        }
        for name in ["add", "exp", "dot", "reduce", "convert_layout", "make_tensor_desc", "gather", "histogram"] {
            assert!(!impure.contains(&name), "{name} must be pure");
        }
        // `inline_asm` follows its `pure` attribute.
        assert_eq!(ops.iter().filter(|op| matches!(op, Op::InlineAsm { .. }) && op.is_pure()).count(), 1);
        let tma_load = ops.iter().find(|op| op.name() == "tma_load").unwrap().facts();
        assert_eq!(tma_load.buffers, [(1, BufferUse::Write), (2, BufferUse::Read)]);
    }
}
