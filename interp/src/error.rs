//! What can go wrong running a kernel, as data: [`InterpError`] says in which program and at which op, [`Fault`]
//! what happened. Their `Display` is the message the CLI and Python show.

use std::fmt;

use tessel_tile::eval::arith::EvalError;
use tessel_tile::ir::{Loc, OpId, ValueId};
use tessel_tile::tma_im2col::PixelBoxError;
use tessel_tile::types::{Elem, ScalarType, Type};

use crate::Arg;
use crate::budget::GridError;
use crate::memory::{AccessError, Shortage};

/// What went wrong, in which program and at which op.
#[derive(Clone, Debug, PartialEq)]
pub struct InterpError {
    pub fault: Fault,
    pub program: [u32; 3],
    /// The `warp_specialize` partition that failed (0: the default one), inside one.
    pub partition: Option<usize>,
    pub op: Option<OpId>,
    pub loc: Option<Loc>,
}

impl InterpError {
    /// The caller stopped the run (`Limits::stop`): nothing is wrong with the kernel.
    pub fn interrupted(&self) -> bool {
        self.fault == Fault::Interrupted
    }
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.program;
        match self.partition {
            // A deadlock names every partition itself.
            Some(p) if !matches!(self.fault, Fault::Deadlock { .. }) => {
                write!(f, "program ({x}, {y}, {z}), {}: {}", role(p), self.fault)
            }
            _ => write!(f, "program ({x}, {y}, {z}): {}", self.fault),
        }
    }
}

impl std::error::Error for InterpError {}

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    // The launch.
    /// A grid CUDA could not launch.
    Grid {
        grid: [u32; 3],
        why: GridError,
    },
    ArgumentCount {
        kernel: String,
        expected: usize,
        got: usize,
    },
    /// A kernel parameter that is not a scalar.
    ArgumentNotScalar(usize),
    /// A buffer of other elements than the pointer parameter's.
    ArgumentBuffer {
        index: usize,
        pointee: ScalarType,
        buffer: String,
        holds: ScalarType,
    },
    /// An argument of another kind than its parameter.
    ArgumentType {
        index: usize,
        arg: Arg,
        ty: Elem,
    },

    // What the kernel does.
    /// A global-memory access outside the kernel's buffers (or misaligned, or of another element type).
    Memory(AccessError),
    /// `device_assert` failed at `index` of its condition.
    AssertFailed {
        index: Vec<u32>,
        message: String,
    },
    /// `tl.assume` does not hold.
    AssumeFailed,
    /// A `gather` index out of range for the source's dim.
    GatherIndex {
        index: i64,
        at: Vec<u32>,
        axis: usize,
        size: u32,
    },
    /// A `for` loop with a step that is not positive.
    LoopStep(i64),
    /// A tensor descriptor TMA (and Triton) cannot take.
    Descriptor(DescriptorFault),
    /// A rule of shared memory and its asynchronous work broken.
    Shared(SharedFault),
    /// A wait on an mbarrier phase nothing left in the program can complete.
    Stuck {
        barrier: ValueId,
        parity: i64,
        lacks: Lacks,
    },
    /// Every partition of a `warp_specialize` still running waits on an mbarrier.
    Deadlock {
        waits: Vec<PartitionWait>,
        finished: Vec<usize>,
    },

    // The run's bounds.
    /// More loop iterations than `Limits::max_iterations` (stopped in a `while` loop when `while_loop`).
    Iterations {
        limit: u64,
        while_loop: bool,
    },
    /// More work than `Limits::max_work`: the op's `cost` after the program's `done`.
    Work {
        limit: u64,
        cost: u64,
        done: u64,
    },
    /// A `jn`/`yn` whose recurrences would run `steps`, more than the `left` work.
    BesselWork {
        steps: u64,
        left: u64,
    },
    /// A `while` iteration that changed nothing: it would spin forever.
    Spins,
    /// The caller stopped the run (`Limits::stop`).
    Interrupted,
    /// No host memory for what the run needs.
    HostMemory(Shortage),

    // What the interpreter cannot run.
    /// An op on an element type its semantics do not cover.
    Eval(EvalError),
    InlineAsm,
    /// An op the interpreter cannot run where it is.
    CannotRun(&'static str),
    NestedWarpSpecialize,
    /// What the verifier refuses (an internal error when it reaches the interpreter).
    Unverified(&'static str),
    /// A parallel run stopped this program: the programs run again one at a time (never reported).
    ParallelConflict,
}

impl Fault {
    /// An error of the interpreter itself (IR the verifier should have refused, a conflict the parallel run
    /// should have handled), not of the kernel.
    pub fn is_internal(&self) -> bool {
        matches!(self, Fault::Unverified(_) | Fault::ParallelConflict | Fault::Shared(SharedFault::NotInvertible(_)))
    }
}

/// A tensor descriptor that TMA cannot take, as Triton checks every descriptor.
#[derive(Clone, Debug, PartialEq)]
pub enum DescriptorFault {
    /// A last dim that is not contiguous.
    LastStride(i64),
    /// A base not 16-byte aligned.
    Base(u64),
    /// A stride of all but the last dim that is not a multiple of 16 bytes.
    Stride {
        dim: usize,
        elements: i64,
        elem: ScalarType,
    },
    /// An im2col descriptor whose channels are not contiguous.
    Channels(i64),
    NotIm2col(ValueId),
    NotADescriptor(ValueId),
    /// An im2col descriptor read by an op other than `tma_load_im2col`.
    Im2colRead(ValueId),
    /// An im2col load the pixel box does not allow.
    PixelBox(PixelBoxError),
    /// A TMA gather or scatter (`op`) whose column offset is not 16-byte aligned: an illegal instruction on the
    /// GPU.
    GatherColumn {
        op: &'static str,
        column: i64,
        elem: ScalarType,
    },
    /// A TMA scatter to a negative row or column: an illegal instruction on the GPU.
    ScatterNegative {
        row: i64,
        column: i64,
    },
}

/// How shared memory or its asynchronous work is misused.
#[derive(Clone, Debug, PartialEq)]
pub enum SharedFault {
    /// More arrivals than the barrier's phase expects.
    Arrivals {
        n: u32,
        pending: u32,
    },
    /// The result of an asynchronous `warpgroup_dot` read before a `warpgroup_dot_wait`.
    PendingRead(ValueId),
    /// A view past its buffers (`memdesc_index` out of range) used.
    ViewOutOfRange {
        view: ValueId,
        index: i64,
        count: i64,
    },
    Deallocated(ValueId),
    /// A buffer read while a copy into it is in flight.
    ReadInFlight(ValueId),
    /// A buffer written (by `op`, or a store when `None`) while asynchronous `warpgroup_dot` number `dot` may read it.
    WriteWhileDotReads {
        buffer: ValueId,
        dot: u64,
        op: Option<&'static str>,
    },
    /// A buffer written while a TMA store may still read it.
    WriteWhileTmaStoreReads(ValueId),
    /// A buffer released for a refill while asynchronous `warpgroup_dot` number `dot` may read it.
    ReleaseWhileDotReads {
        buffer: ValueId,
        dot: u64,
    },
    /// An mbarrier used before `mbarrier_init`.
    Uninitialized(ValueId),
    /// A TMA load completing on an mbarrier that is not initialized.
    TmaUninitialized(ValueId),
    /// A phase parity other than 0 or 1.
    Phase(i64),
    /// An mbarrier invalidated while a copy it tracks is in flight.
    InvalidatedInFlight(ValueId),
    /// A reinterpreting view whose layout cannot be inverted (an internal error).
    NotInvertible(Type),
    /// A shared-memory buffer written (by `what`: the buffer, or the op and the buffer) while the tcgen05 MMA
    /// into accumulator `mma` may still read it.
    WriteWhileMmaReads {
        what: String,
        mma: InFlight,
    },
    /// A tensor-memory buffer read or written by `op` while the tcgen05 op `by`, which writes it (or, `reads`,
    /// reads it), is in flight.
    TmemInFlight {
        op: &'static str,
        buffer: ValueId,
        by: InFlight,
        reads: bool,
        /// The buffer's and the in-flight op's destination's names (`Program::memdesc_name`).
        names: Box<(String, String)>,
    },
    /// A tcgen05 op (`op`) that touches tensor-memory cells an earlier one (`earlier`), still in flight, reads
    /// or writes, where the ISA does not run the two in issue order (`MmaOrder::Isa`): `conflict` says how.
    TmemOrder {
        op: InFlight,
        earlier: InFlight,
        conflict: TmemConflict,
        /// The two ops' destinations' names (`Program::memdesc_name`).
        names: Box<(String, String)>,
    },
    /// A `tcgen05_commit` (or an MMA's `mbarriers=`) on an mbarrier that is not initialized.
    CommitUninitialized(ValueId),
    /// A multicast `tcgen05_commit` whose CTA set (`mask`, offsets from the issuer) misses CTAs (`missing`) that
    /// hold copies of the shared memory an MMA it tracks reads.
    CommitMulticast {
        barrier: ValueId,
        op: InFlight,
        mask: u16,
        missing: u16,
    },
    /// The kernel mixes `cta_group::1` and `cta_group::2` MMAs (`tessel_tile::cluster::cta_group`'s message, at
    /// the MMA that differs).
    CtaGroup {
        op: tessel_tile::ir::OpId,
        message: String,
    },
    /// The kernel's tensor-memory buffers live at once do not fit in a CTA's 512 columns (`tessel_tile::tmem`'s
    /// message, naming them), found at the allocation that does not fit.
    TmemBudget(String),
    /// A tensor-memory view (from column `column`) that reaches past the lanes and columns of tensor memory (an
    /// internal error: the verifier keeps views in their buffers, the plan buffers in the columns).
    TmemOutside {
        view: ValueId,
        column: usize,
    },
    /// Cluster launch control used in a way the hardware does not define, or that loses a program's work.
    Clc(ClcFault),
}

/// What goes wrong with cluster launch control (`clc_try_cancel`, `clc_load_result`).
#[derive(Clone, Debug, PartialEq)]
pub enum ClcFault {
    /// A response read (`clc_load_result` of `buffer`) before a wait saw the barrier phase it completes on.
    ReadEarly(ValueId),
    /// A `clc_try_cancel` after the program read a response that canceled nothing (undefined on the hardware).
    AfterFailure,
    /// A `clc_try_cancel` into `buffer`, whose response canceled `program` and was never read: that program's
    /// work is lost.
    Overwritten { buffer: ValueId, program: [u32; 3] },
    /// The program ended with a response that canceled `program` unread: that program's work is lost.
    Unread { program: [u32; 3] },
    /// A `clc_try_cancel` completing on an mbarrier that is not initialized.
    Uninitialized(ValueId),
}

impl fmt::Display for ClcFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pid = |p: &[u32; 3]| format!("({}, {}, {})", p[0], p[1], p[2]);
        match self {
            ClcFault::ReadEarly(v) => write!(
                f,
                "clc_load_result reads response buffer {v} before an mbarrier_wait saw the phase its clc_try_cancel \
                 completes on (the response may not have landed)"
            ),
            ClcFault::AfterFailure => write!(
                f,
                "clc_try_cancel after this program read a response that canceled nothing: a request after a failed \
                 one is undefined on the hardware (stop asking once is_canceled() is false)"
            ),
            ClcFault::Overwritten { buffer, program } => write!(
                f,
                "clc_try_cancel into {buffer} overwrites an unread response that canceled program {}: that \
                 program's work is lost (read it with clc.load_result first)",
                pid(program)
            ),
            ClcFault::Unread { program } => write!(
                f,
                "the program ends with an unread cluster launch control response that canceled program {}: that \
                 program's work is lost",
                pid(program)
            ),
            ClcFault::Uninitialized(b) => {
                write!(f, "clc_try_cancel completes on mbarrier {b}, which is not initialized")
            }
        }
    }
}

/// How a tcgen05 op touches the cells of an earlier one in flight ([`SharedFault::TmemOrder`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmemConflict {
    /// It writes cells the earlier op reads (an MMA's A, its scales).
    OverwritesOperand,
    /// It writes cells the earlier op writes (a different accumulator over the same columns).
    OverwritesResult,
    /// It reads cells the earlier op writes.
    ReadsResult,
}

/// A tcgen05 op in flight, as messages name it: `tcgen05_mma into %acc`, `tcgen05_copy into %scales`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlight {
    pub op: &'static str,
    /// The tensor-memory buffer it writes.
    pub into: ValueId,
}

impl fmt::Display for InFlight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} into {}", self.op, self.into)
    }
}

/// What the running phase of an mbarrier still lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lacks {
    pub phase: u64,
    pub arrivals: u32,
    pub bytes: i64,
    /// In a cluster, whose copy of the barrier that is (the slowest).
    pub copy: Option<CopyAt>,
}

/// Which copy of a cluster's barrier a [`Lacks`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyAt {
    /// Every CTA's own copy, all in the same state.
    Every,
    /// This CTA's own copy, which lags the others.
    Cta(u32),
    /// A two-CTA barrier's: the one in this CTA, a pair's lead, that both CTAs of the pair arrive on.
    Pair(u32),
}

impl Lacks {
    /// ` in CTA 1's copy`, ` in the pair's copy in CTA 0`, ` in every CTA's copy`, or nothing outside a cluster.
    fn copy_words(&self) -> String {
        match self.copy {
            None => String::new(),
            Some(CopyAt::Every) => " in every CTA's copy".into(),
            Some(CopyAt::Cta(cta)) => format!(" in CTA {cta}'s copy"),
            Some(CopyAt::Pair(cta)) => format!(" in the pair's copy in CTA {cta}"),
        }
    }
}

/// A partition blocked on an mbarrier: partition 0 is the default one, `1 + i` worker `i`.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionWait {
    pub partition: usize,
    pub loc: Option<Loc>,
    pub parity: i64,
    /// The barrier's source name (`ready[1]` for buffer 1 of a batch).
    pub barrier: String,
    pub lacks: Lacks,
}

/// `the default partition`, `worker partition 0`.
pub(crate) fn role(p: usize) -> String {
    if p == 0 { "the default partition".into() } else { format!("worker partition {}", p - 1) }
}

impl fmt::Display for Lacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Lacks { phase, arrivals, bytes, .. } = self;
        let at = self.copy_words();
        write!(f, "phase {phase} running, which still lacks {arrivals} arrival(s) and {}{at}", tx_words(*bytes))
    }
}

/// What a phase's transaction count says: bytes still expected, or (negative) bytes completed that no
/// `mbarrier_expect` armed the phase for (a copy or a cluster launch control response whose barrier nobody armed).
fn tx_words(bytes: i64) -> String {
    if bytes >= 0 {
        format!("{bytes} transaction byte(s)")
    } else {
        format!("0 transaction byte(s), with {} byte(s) completed that no mbarrier_expect armed it for", -bytes)
    }
}

impl fmt::Display for PartitionWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.loc.map_or(String::new(), |l| format!(" (bytes {}..{} of the source)", l.start, l.end));
        let (who, parity, barrier, lacks) = (role(self.partition), self.parity, &self.barrier, &self.lacks);
        write!(f, "{who} waits{at} for phase parity {parity} of mbarrier `{barrier}` ({lacks})")
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Grid { grid, why } => write!(f, "grid {grid:?}: {why}"),
            Fault::ArgumentCount { kernel, expected, got } => {
                write!(f, "`{kernel}` takes {expected} arguments, got {got}")
            }
            Fault::ArgumentNotScalar(i) => write!(f, "argument {i} must be a scalar"),
            Fault::ArgumentBuffer { index, pointee, buffer, holds } => {
                write!(f, "argument {index} points to {pointee} but buffer `{buffer}` holds {holds}")
            }
            Fault::ArgumentType { index, arg, ty } => write!(f, "argument {index}: {arg:?} does not fit type {ty}"),
            Fault::Memory(e) => write!(f, "{e}"),
            Fault::AssertFailed { index, message } => write!(f, "device_assert failed at index {index:?}: {message}"),
            Fault::AssumeFailed => f.write_str("`assume` does not hold"),
            Fault::GatherIndex { index, at, axis, size } => write!(
                f,
                "gather index {index} (at {at:?} of the indices) is out of range for dim {axis} of size {size}"
            ),
            Fault::LoopStep(step) => write!(f, "loop step must be positive, got {step}"),
            Fault::Descriptor(e) => write!(f, "{e}"),
            Fault::Shared(e) => write!(f, "{e}"),
            Fault::Stuck { barrier, parity, lacks } => write!(
                f,
                "deadlock: waiting for phase parity {parity} of mbarrier {barrier} (phase {} running), which still \
                 lacks {} arrival(s) and {}{}, and nothing left in the program can complete it",
                lacks.phase,
                lacks.arrivals,
                tx_words(lacks.bytes),
                lacks.copy_words()
            ),
            Fault::Deadlock { waits, finished } => {
                let waits: Vec<String> = waits.iter().map(|w| w.to_string()).collect();
                write!(f, "deadlock: every partition still running waits on an mbarrier: {}", waits.join("; "))?;
                if !finished.is_empty() {
                    let finished: Vec<String> = finished.iter().map(|&p| role(p)).collect();
                    write!(f, "; finished: {}", finished.join(", "))?;
                }
                Ok(())
            }
            Fault::Iterations { limit, while_loop } => write!(
                f,
                "this program ran more than {limit} loop iterations (stopped in this `{}` loop); raise the limit with \
                 --max-iterations if it is meant to",
                if *while_loop { "while" } else { "for" }
            ),
            Fault::Work { limit, cost, done } => write!(
                f,
                "this op would take this program past {limit} units of work (one per element an op computes, loads \
                 or stores, and one per multiply-add of a dot; this op costs {cost}, the program had done {done}); \
                 raise the limit with --max-work if it is meant to"
            ),
            Fault::BesselWork { steps, left } => write!(
                f,
                "this op's recurrences over the orders would run about {steps} steps, more than the {left} elements \
                 of work left to this program; raise the limit with --max-work if it is meant to"
            ),
            Fault::Spins => f.write_str(
                "this `while` loop spins forever: an iteration changed neither its values nor memory, and the \
                 interpreter runs one program at a time, so no other program can release what it waits for",
            ),
            Fault::Interrupted => f.write_str("interrupted"),
            Fault::HostMemory(e) => write!(f, "{e}"),
            Fault::Eval(e) => write!(f, "{e}"),
            Fault::InlineAsm => f.write_str("inline PTX cannot run in the interpreter"),
            Fault::CannotRun(op) => write!(f, "the interpreter cannot run `{op}` here"),
            Fault::NestedWarpSpecialize => f.write_str("a warp_specialize cannot run inside a partition"),
            Fault::Unverified(what) => f.write_str(what),
            Fault::ParallelConflict => f.write_str("stopped: the programs cannot run in parallel"),
        }
    }
}

impl fmt::Display for DescriptorFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DescriptorFault::LastStride(s) => {
                write!(f, "a tensor descriptor's last dim must be contiguous (stride 1), got stride {s}")
            }
            DescriptorFault::Base(base) => {
                write!(f, "a tensor descriptor's base must be 16-byte aligned, got {base:#x}")
            }
            DescriptorFault::Stride { dim, elements, elem } => write!(
                f,
                "a tensor descriptor's strides must be multiples of 16 bytes in all but the last dim; stride {dim} is \
                 {elements} elements of {elem}"
            ),
            DescriptorFault::Channels(s) => {
                write!(f, "an im2col descriptor's channels must be contiguous (stride 1), got stride {s}")
            }
            DescriptorFault::NotIm2col(d) => write!(f, "{d} is not an im2col tensor descriptor"),
            DescriptorFault::NotADescriptor(d) => write!(f, "{d} is not a tensor descriptor"),
            DescriptorFault::Im2colRead(d) => {
                write!(f, "{d} is an im2col descriptor, which only `tma_load_im2col` reads")
            }
            DescriptorFault::PixelBox(e) => write!(f, "{e}"),
            DescriptorFault::GatherColumn { op, column, elem } => write!(
                f,
                "`{op}` at column {column}: the column offset must be 16-byte aligned (a multiple of {} {elem} \
                 elements); the GPU stops with an illegal instruction",
                16 / elem.bytes()
            ),
            DescriptorFault::ScatterNegative { row, column } => write!(
                f,
                "`tma.async_scatter` to row {row}, column {column}: scatter offsets must not be negative; the GPU \
                 stops with an illegal instruction"
            ),
        }
    }
}

impl fmt::Display for SharedFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SharedFault::Arrivals { n, pending } => {
                write!(f, "{n} arrivals on a barrier phase that expects only {pending} more")
            }
            SharedFault::PendingRead(v) => {
                write!(f, "{v}, the result of an asynchronous warpgroup_dot, is read before a warpgroup_dot_wait")
            }
            SharedFault::ViewOutOfRange { view, index, count } => write!(
                f,
                "view {view} (shared or tensor memory) is used, but it is memdesc_index {index} of {count} buffers, \
                 out of range"
            ),
            SharedFault::Deallocated(v) => write!(f, "shared-memory buffer {v} is used after local_dealloc"),
            SharedFault::ReadInFlight(v) => write!(
                f,
                "shared-memory buffer {v} is read while an async_copy or a TMA load into it is in flight (no \
                 async_wait retired it, in this partition or the one that issued it, or no mbarrier_wait saw its \
                 barrier's phase complete)"
            ),
            SharedFault::WriteWhileDotReads { buffer, dot, op: None } => write!(
                f,
                "shared-memory buffer {buffer} is written while asynchronous warpgroup_dot number {dot} (in issue \
                 order) may still read it (no warpgroup_dot_wait before)"
            ),
            SharedFault::WriteWhileDotReads { buffer, dot, op: Some(op) } => write!(
                f,
                "{op} into {buffer} while asynchronous warpgroup_dot number {dot} (in issue order) may still read it \
                 (no warpgroup_dot_wait before)"
            ),
            SharedFault::WriteWhileTmaStoreReads(v) => write!(
                f,
                "shared-memory buffer {v} is written while a TMA store may still read it (no tma_store_wait before)"
            ),
            SharedFault::ReleaseWhileDotReads { buffer, dot } => write!(
                f,
                "shared-memory buffer {buffer} is released for a refill while asynchronous warpgroup_dot number {dot} \
                 (in issue order) may still read it (no warpgroup_dot_wait before)"
            ),
            SharedFault::Uninitialized(b) => write!(f, "mbarrier {b} is used before mbarrier_init"),
            SharedFault::TmaUninitialized(b) => {
                write!(f, "tma_load completes on mbarrier {b}, which is not initialized")
            }
            SharedFault::Phase(p) => write!(f, "mbarrier_wait phase must be 0 or 1, got {p}"),
            SharedFault::InvalidatedInFlight(b) => {
                write!(f, "mbarrier {b} is invalidated while a TMA load or an async_copy it tracks is in flight")
            }
            SharedFault::NotInvertible(view) => write!(f, "{view}'s layout is not invertible"),
            SharedFault::WriteWhileMmaReads { what, mma } => write!(
                f,
                "{what} overwrites a shared-memory operand of the {mma}, which may still read it (no mbarrier_wait \
                 observed the phase of a commit tracking it)"
            ),
            SharedFault::TmemInFlight { op, by, reads, names, .. } => write!(
                f,
                "{op} {} tensor-memory buffer `{}` while the {} into `{}` {} it is in flight (no mbarrier_wait \
                 observed the phase of a commit tracking it)",
                if *op == "tmem_load" { "reads" } else { "writes" },
                names.0,
                by.op,
                names.1,
                if *reads { "reading" } else { "writing" }
            ),
            SharedFault::TmemOrder { op, earlier, conflict, names } => {
                let (verb, its) = match conflict {
                    TmemConflict::OverwritesOperand => ("writes", "reads"),
                    TmemConflict::OverwritesResult => ("writes", "writes"),
                    TmemConflict::ReadsResult => ("reads", "writes"),
                };
                write!(
                    f,
                    "the {} into `{}` {verb} tensor-memory cells that the earlier {} into `{}`, still in flight, \
                     {its} (no mbarrier_wait observed the phase of a commit tracking it): the PTX ISA runs two tcgen05 \
                     ops in issue order only when both are MMAs into the same accumulator or a tcgen05_copy comes \
                     before an MMA, so wait for the earlier op's commit first (`--mma-order issue` checks the rest of \
                     a kernel that relies on the tensor cores' issue order)",
                    op.op, names.0, earlier.op, names.1
                )
            }
            SharedFault::CommitUninitialized(b) => {
                write!(f, "tcgen05_commit arrives on mbarrier {b}, which is not initialized")
            }
            SharedFault::CommitMulticast { barrier, op, mask, missing } => write!(
                f,
                "the multicast tcgen05_commit on {barrier} reaches the CTAs {mask:#b} (offsets from the issuer) but \
                 not {missing:#b}, which hold copies of the shared memory {op} reads: they could refill them before \
                 it is done"
            ),
            SharedFault::CtaGroup { message, .. } => write!(f, "{message}"),
            SharedFault::TmemBudget(m) => write!(f, "tmem_alloc: {m}"),
            SharedFault::TmemOutside { view, column } => write!(
                f,
                "tensor-memory view {view} (from column {column}) reaches past the 128 lanes and the columns of tensor \
                 memory"
            ),
            SharedFault::Clc(e) => write!(f, "{e}"),
        }
    }
}

impl From<AccessError> for Fault {
    fn from(e: AccessError) -> Fault {
        Fault::Memory(e)
    }
}

impl From<SharedFault> for Fault {
    fn from(e: SharedFault) -> Fault {
        Fault::Shared(e)
    }
}

impl From<DescriptorFault> for Fault {
    fn from(e: DescriptorFault) -> Fault {
        Fault::Descriptor(e)
    }
}

impl From<EvalError> for Fault {
    fn from(e: EvalError) -> Fault {
        Fault::Eval(e)
    }
}
