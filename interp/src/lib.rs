//! tessel-interp owns the reference interpreter: it runs a tile-IR kernel over a grid of programs on the CPU,
//! with its memory ([`memory`]), runtime tensors and scalar arguments ([`value`]), shared memory, asynchronous
//! copies and mbarriers, warp-specialized partitions, the bounds of a run, the parallel run, what goes wrong as
//! data ([`error`]: the program, the op and the [`Fault`]), and the comparison of outputs computed two ways
//! ([`compare`]). What one element of an op computes is the IR's (`tessel_tile::eval`,
//! which folding shares); the math routines it runs are `tessel_math`'s.
//!
//! The interpreter defines what a kernel means. Every GPU result is checked against it, so it favours exactness over speed:
//! each op rounds to its result type, integer ops wrap, memory is bounds-checked, `device_assert` and
//! `assume` are checked, and `device_print` output is collected in Triton's format. Programs run one after the
//! other (in grid order), so atomics are trivially atomic; or, with `Limits::threads`, in parallel when none can
//! observe another, with exactly the sequential result (`run_with_limits`). [`compare`] holds the one set of
//! rules by which a GPU's or the PTX simulator's outputs are compared with the interpreter's.

mod budget;
pub mod compare;
mod compute;
mod data_ops;
pub mod error;
pub mod memory;
mod parallel;
mod partitions;
mod reduce_order;
mod shape_ops;
mod shared;
pub mod testing;
pub mod value;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use budget::{GridError, MAX_GRID, check_grid};
pub use error::{
    ClcFault, CopyAt, DescriptorFault, Fault, InFlight, InterpError, Lacks, PartitionWait, SharedFault, TmemConflict,
};
pub use shared::clc::ClcPolicy;

use crate::memory::{BufferId, Memory};
use crate::parallel::Mem;
use crate::value::Tensor;
use tessel_tile::eval::value::{Val, round_float};
use tessel_tile::ir::{Func, OpId, RegionId, ValueId};
use tessel_tile::ops::Op;
use tessel_tile::types::{Elem, ScalarType, Type};

/// A kernel argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg {
    Int(i64),
    Float(f64),
    Buffer(BufferId),
}

/// A runtime value: a tensor (or scalar), a tensor descriptor, a view of a shared-memory buffer (every memdesc
/// value naming the buffer sees its stores), or an async token.
#[derive(Clone, Debug)]
enum Value {
    T(Tensor),
    Desc {
        base: u64,
        elem: ScalarType,
        shape: Vec<i64>,
        strides: Vec<i64>,
        nan_padding: bool,
        /// An im2col descriptor's pixel box: lower and upper corners, element strides.
        im2col: Option<[Vec<i64>; 3]>,
    },
    Smem(shared::View),
    /// `memdesc_index` past the buffers (Gluon computes the view's address; a predicated-off use never touches
    /// it): an error when something reads, writes or waits through it. It holds the index and the number of
    /// buffers.
    SmemOutOfRange {
        index: i64,
        count: i64,
    },
    Token,
    /// The result of asynchronous `warpgroup_dot` number `dot` (in issue order), not yet retired by a
    /// `warpgroup_dot_wait`: it may flow through `yield` and loop arguments, accumulate into the next
    /// asynchronous dot, or go through a wait, and nothing else may read it.
    Pending {
        value: Box<Value>,
        dot: u64,
    },
}

/// Bounds on one run, so that a kernel that never finishes is reported (with the program and the loop) instead
/// of hanging the interpreter, and the caller's way to stop it.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Loop iterations (of every `for` and `while`, nested ones included) one program may run.
    pub max_iterations: u64,
    /// Work one program may do, charged before each op runs: one unit per element an op computes, loads or
    /// stores (a reduction's input, a store's values), and one per multiply-add of a dot (M·N·K): a loop with
    /// few iterations over large tiles, or one over large dots, is bounded by this rather than by
    /// `max_iterations`.
    pub max_work: u64,
    /// Threads to run programs on (1: one at a time). Programs run in parallel only when none can observe
    /// another (see [`run_with_limits`]); the result is the same either way.
    pub threads: usize,
    /// Told why a parallel run fell back to running programs one at a time.
    pub notes: Option<fn(&str)>,
    /// Set by the caller (from another thread, or a signal handler) to stop the run: every program checks it
    /// before each op, and the run ends with an error whose `interrupted` is set. Ctrl-C, in the CLI and Python.
    pub stop: Option<Arc<AtomicBool>>,
    /// How cluster launch control's `clc_try_cancel` is answered (`next`, `none`, `random:SEED`).
    pub clc: ClcPolicy,
    /// How `warp_specialize` partitions take turns ([`Schedule`]).
    pub schedule: Schedule,
    /// The order reductions combine in ([`ReduceOrder`]).
    pub reduce_order: ReduceOrder,
    /// Which tcgen05 ops of one thread run in issue order ([`MmaOrder`]).
    pub mma_order: MmaOrder,
}

/// Which asynchronous tcgen05 ops (MMAs and copies into tensor memory) of one thread the interpreter lets run in
/// issue order without a wait between them. It computes every op at issue, in issue order; the question is only
/// which orders a kernel may rely on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MmaOrder {
    /// The PTX ISA's: two such ops run in issue order only when both are MMAs into the same accumulator (same
    /// cells, same shape) or a `tcgen05.cp` comes before an MMA. Any other op that writes tensor-memory cells an
    /// unfinished earlier op reads or writes, or reads cells it writes, is an error naming both: the kernel must
    /// wait for the earlier op's commit first.
    #[default]
    Isa,
    /// Every op in issue order, as the tensor cores of sm_100 are seen to run one thread's ops. For kernels that
    /// rely on it (the public Gluon attention example overwrites P with the next S while P V may still read it),
    /// to check the rest of what they do.
    Issue,
}

impl std::str::FromStr for MmaOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<MmaOrder, String> {
        match s {
            "isa" => Ok(MmaOrder::Isa),
            "issue" => Ok(MmaOrder::Issue),
            _ => Err(format!("expected `isa` or `issue`, got `{s}`")),
        }
    }
}

/// The order a reduction combines its elements in, which decides how a floating-point sum rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReduceOrder {
    /// An operand with a layout in the generated code's order (`reduce_order.rs`), so that sums round as the
    /// kernel's do; one without, by a balanced tree.
    #[default]
    Layout,
    /// Every operand by a balanced tree, its layout ignored: the same values whatever layouts were assigned.
    Tree,
}

/// How the partitions of a `warp_specialize` take turns (`partitions.rs`). Each schedule is deterministic and
/// catches its own class of missing synchronization; a kernel should pass under both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// A partition runs until it waits on a phase not yet completed: a producer runs as far ahead of its
    /// consumer as its barriers let it, so a missing "buffer free" wait shows.
    #[default]
    RunAhead,
    /// As `RunAhead`, and a partition also hands the turn on after each `mbarrier_arrive`, so the partitions its
    /// arrival releases act at once: an access to what they then write (a tensor-memory accumulator an MMA
    /// issued right away updates) without its own wait shows.
    HandOff,
}

impl std::str::FromStr for Schedule {
    type Err = String;
    fn from_str(s: &str) -> Result<Schedule, String> {
        match s {
            "run-ahead" => Ok(Schedule::RunAhead),
            "hand-off" => Ok(Schedule::HandOff),
            _ => Err(format!("expected `run-ahead` or `hand-off`, got `{s}`")),
        }
    }
}

impl Default for Limits {
    /// 10^7 iterations and 10^9 units of work per program (a 128x128 tile over K = 4096 in 64-wide steps is about
    /// 7·10^7 multiply-adds): far more than any tiled kernel needs, and about a minute of interpretation; one
    /// thread; cluster launch control hands out the next program.
    fn default() -> Limits {
        Limits {
            max_iterations: 10_000_000,
            max_work: 1_000_000_000,
            threads: 1,
            notes: None,
            stop: None,
            clc: ClcPolicy::Next,
            schedule: Schedule::RunAhead,
            reduce_order: ReduceOrder::Layout,
            mma_order: MmaOrder::Isa,
        }
    }
}

/// Runs `func` over `grid` programs. Returns the `device_print` lines.
pub fn run(func: &Func, args: &[Arg], grid: [u32; 3], mem: &mut Memory) -> Result<Vec<String>, InterpError> {
    run_with_limits(func, args, grid, mem, Limits::default())
}

/// [`run`] under `limits`.
///
/// Two ways a loop that would never end is caught. A `while` iteration that changes neither its carried values
/// nor memory (nor prints) will repeat forever, since programs run one at a time and nothing else can change
/// what it reads: a spin-wait on a lock another program holds, or on a flag another program would set, is
/// reported at once. Anything else stops at `limits.max_iterations`.
///
/// With `limits.threads > 1`, programs run in parallel (rayon), each against a private view of memory; every
/// element loaded or stored is claimed as they run, and their stores are committed only if no program could
/// have observed another (no atomic ran, no element stored by two programs, none loaded by one and stored by
/// another), so memory and prints end exactly as in the sequential run (`parallel.rs`). The first conflict stops
/// the parallel run; the programs then run again one at a time, and `limits.notes` is told why.
pub fn run_with_limits(
    func: &Func,
    args: &[Arg],
    grid: [u32; 3],
    mem: &mut Memory,
    limits: Limits,
) -> Result<Vec<String>, InterpError> {
    let fail = |fault: Fault| InterpError { fault, program: [0; 3], partition: None, op: None, loc: None };
    if let Some(why) = budget::grid_error(grid) {
        return Err(fail(Fault::Grid { grid, why }));
    }
    if args.len() != func.args().len() {
        let (kernel, expected, got) = (func.name.clone(), func.args().len(), args.len());
        return Err(fail(Fault::ArgumentCount { kernel, expected, got }));
    }
    let mut env: Vec<Option<Value>> = vec![None; func.values.len()];
    for (i, (&v, a)) in func.args().iter().zip(args).enumerate() {
        let Type::Scalar(elem) = func.ty(v) else { return Err(fail(Fault::ArgumentNotScalar(i))) };
        let val = match (a, elem) {
            (Arg::Buffer(b), Elem::Ptr(pointee, _)) => {
                let buf = mem.buffer(*b);
                if buf.elem.bytes() != pointee.bytes() {
                    let (buffer, holds) = (buf.name.clone(), buf.elem);
                    return Err(fail(Fault::ArgumentBuffer { index: i, pointee: *pointee, buffer, holds }));
                }
                Val::Ptr(mem.base(*b))
            }
            (Arg::Int(x), Elem::Scalar(s)) if s.is_int() => Val::Int(tessel_tile::eval::value::wrap_int(*x, *s)),
            (Arg::Float(x), Elem::Scalar(s)) if s.is_float() => Val::Float(round_float(*x, *s)),
            (Arg::Int(x), Elem::Scalar(s)) if s.is_float() => {
                Val::Float(tessel_tile::eval::value::int_to_float(*x as i128, *s))
            }
            _ => return Err(fail(Fault::ArgumentType { index: i, arg: *a, ty: *elem })),
        };
        env[v.index()] = Some(Value::T(Tensor::scalar(*elem, val)));
    }
    // Program ids are computed from their position in grid order as the programs run: a grid of 2^31 programs
    // allocates nothing up front.
    let programs = budget::program_count(grid);
    // Programs that cancel others (cluster launch control) observe which have started: they run one at a time.
    let clc = func.all_ops().into_iter().any(|o| func.op(o).op == Op::ClcTryCancel);
    if limits.threads > 1 && programs > 1 && !clc {
        match parallel::run(func, &env, grid, mem, &limits) {
            parallel::Outcome::Done(log) => return Ok(log),
            parallel::Outcome::Stopped(e) => return Err(e),
            parallel::Outcome::Sequential(why) => {
                if let Some(note) = limits.notes {
                    note(&why);
                }
            }
        }
    }
    let mut prog = Program {
        f: func,
        env,
        mem: Mem::Shared(mem),
        grid,
        pid: [0; 3],
        log: Vec::new(),
        smem: Default::default(),
        limits,
        iterations: 0,
        smem_writes: 0,
        work: 0,
        task: None,
    };
    for n in 0..programs {
        if prog.smem.clc.taken(n) {
            // A response canceled it: the program that read the response ran its work.
            continue;
        }
        prog.pid = budget::program_at(grid, n);
        let queue = std::mem::take(&mut prog.smem.clc).started(n);
        prog.smem = Default::default();
        prog.smem.clc = queue;
        prog.iterations = 0;
        prog.work = 0;
        prog.region(func.body, &[])?;
        if let Some(lost) = prog.smem.clc.lost() {
            let program = budget::program_at(grid, lost);
            return Err(prog.error(None, SharedFault::Clc(ClcFault::Unread { program })));
        }
    }
    Ok(prog.log)
}

struct Program<'a> {
    f: &'a Func,
    env: Vec<Option<Value>>,
    mem: Mem<'a>,
    grid: [u32; 3],
    pid: [u32; 3],
    log: Vec<String>,
    /// The shared-memory buffers and pending asynchronous work of the current program.
    smem: shared::State,
    limits: Limits,
    /// Loop iterations the current program has run.
    iterations: u64,
    /// Ops that wrote the program's shared memory, so far.
    smem_writes: u64,
    /// Elements the current program has computed.
    work: u64,
    /// Set while the program runs one partition of a `warp_specialize` (`partitions`).
    task: Option<partitions::Task<'a>>,
}

/// How a region ended.
enum Exit {
    Yield(Vec<Value>),
    Condition(bool, Vec<Value>),
    Return,
}

type R<T> = Result<T, InterpError>;

impl Program<'_> {
    fn error(&self, op: Option<OpId>, fault: impl Into<Fault>) -> InterpError {
        let fault = fault.into();
        // A kernel mixing `cta_group::1` and `::2` MMAs is found at whichever tcgen05 op runs first, maybe in
        // another partition: it is reported at the MMA that differs, for the kernel.
        let (op, partition) = match &fault {
            Fault::Shared(SharedFault::CtaGroup { op: at, .. }) => (Some(*at), None),
            _ => (op, self.task.as_ref().map(|t| t.index)),
        };
        InterpError { fault, program: self.pid, partition, op, loc: op.and_then(|o| self.f.op(o).loc) }
    }

    fn tensor(&self, v: ValueId) -> &Tensor {
        tensor_in(&self.env, v)
    }

    /// Counts one iteration of loop `o` against the budget.
    fn iteration(&mut self, o: OpId) -> R<()> {
        self.iterations += 1;
        if self.iterations > self.limits.max_iterations {
            let while_loop = matches!(self.f.op(o).op, Op::While);
            return Err(self.error(Some(o), Fault::Iterations { limit: self.limits.max_iterations, while_loop }));
        }
        Ok(())
    }

    fn region(&mut self, r: RegionId, args: &[Value]) -> R<Exit> {
        for (&a, v) in self.f.region(r).args.iter().zip(args) {
            self.env[a.index()] = Some(v.clone());
        }
        for &o in &self.f.region(r).ops {
            if let Some(exit) = self.op(o)? {
                return Ok(exit);
            }
        }
        Ok(Exit::Yield(Vec::new()))
    }

    fn values(&self, vs: &[ValueId]) -> Vec<Value> {
        vs.iter().map(|v| self.env[v.index()].clone().expect("value defined before use")).collect()
    }

    fn set(&mut self, o: OpId, i: usize, t: Tensor) {
        let v = self.f.op(o).results[i];
        self.env[v.index()] = Some(Value::T(t));
    }

    /// Runs one op; returns `Some` when it ends the region.
    fn op(&mut self, o: OpId) -> R<Option<Exit>> {
        let f = self.f;
        let data = f.op(o);
        let ins = &data.operands;
        let err = |p: &Self, m: Fault| p.error(Some(o), m);
        if self.stop_requested() {
            return Err(self.interrupted(Some(o)));
        }
        self.charge(o, self.op_cost(o))?;
        if self.task.is_some() && matches!(data.op, Op::MBarrierWait) {
            // Another partition may complete the phase: let it run until it does, or report a deadlock.
            self.wait_for_phase(o)?;
        }
        self.smem.check_ready(f, &self.env, o).map_err(|m| err(self, m.into()))?;
        match &data.op {
            Op::WarpSpecialize(_) => return self.warp_specialize(o).map(|()| None),
            Op::Yield => return Ok(Some(Exit::Yield(self.values(ins)))),
            Op::Condition => {
                let c = self.tensor(ins[0]).data[0].is_true();
                return Ok(Some(Exit::Condition(c, self.values(&ins[1..]))));
            }
            Op::Return => return Ok(Some(Exit::Return)),
            Op::For(_) => {
                let (lb, ub, step) = (
                    self.tensor(ins[0]).data[0].as_i64(),
                    self.tensor(ins[1]).data[0].as_i64(),
                    self.tensor(ins[2]).data[0].as_i64(),
                );
                if step <= 0 {
                    return Err(err(self, Fault::LoopStep(step)));
                }
                let iv_elem = self.tensor(ins[0]).elem;
                let mut carried = self.values(&ins[3..]);
                let mut i = lb;
                while i < ub {
                    self.iteration(o)?;
                    let mut args = vec![Value::T(Tensor::scalar(iv_elem, Val::Int(i)))];
                    args.extend(carried);
                    match self.region(data.regions[0], &args)? {
                        Exit::Yield(v) => carried = v,
                        Exit::Return => return Ok(Some(Exit::Return)),
                        Exit::Condition(..) => unreachable!("verified: for bodies end in yield"),
                    }
                    i += step;
                }
                self.bind_results(o, carried);
            }
            Op::If => {
                let c = self.tensor(ins[0]).data[0].is_true();
                let r = data.regions[if c { 0 } else { 1 }];
                match self.region(r, &[])? {
                    Exit::Yield(v) => self.bind_results(o, v),
                    Exit::Return => return Ok(Some(Exit::Return)),
                    Exit::Condition(..) => unreachable!(),
                }
            }
            Op::While => {
                let mut carried = self.values(ins);
                loop {
                    self.iteration(o)?;
                    let before = (self.mem.changes(), self.smem_writes, self.log.len());
                    match self.region(data.regions[0], &carried)? {
                        Exit::Condition(true, v) => match self.region(data.regions[1], &v)? {
                            Exit::Yield(v) => {
                                let still = (self.mem.changes(), self.smem_writes, self.log.len()) == before;
                                if still && same_values(&v, &carried) {
                                    return Err(self.error(Some(o), Fault::Spins));
                                }
                                carried = v;
                            }
                            _ => unreachable!(),
                        },
                        Exit::Condition(false, v) => {
                            self.bind_results(o, v);
                            break;
                        }
                        Exit::Return => return Ok(Some(Exit::Return)),
                        Exit::Yield(_) => unreachable!(),
                    }
                }
            }
            Op::Reduce { axis } => {
                let inputs: Vec<Tensor> = ins.iter().map(|&v| self.tensor(v).clone()).collect();
                let by_layout = match self.limits.reduce_order {
                    ReduceOrder::Layout => self.reduce_by_layout(o, &inputs, *axis as usize)?,
                    ReduceOrder::Tree => None,
                };
                let out = match by_layout {
                    Some(out) => out,
                    None => self.reduce(data.regions[0], &inputs, *axis as usize)?,
                };
                for (i, t) in out.into_iter().enumerate() {
                    self.set(o, i, t);
                }
            }
            Op::Scan { axis, reverse } => {
                let inputs: Vec<Tensor> = ins.iter().map(|&v| self.tensor(v).clone()).collect();
                let out = self.scan(data.regions[0], &inputs, *axis as usize, *reverse)?;
                for (i, t) in out.into_iter().enumerate() {
                    self.set(o, i, t);
                }
            }
            Op::MakeTensorDesc { rank, padding, .. } => {
                let r = *rank as usize;
                let scalars: Vec<i64> = ins[1..].iter().map(|&v| self.tensor(v).data[0].as_i64()).collect();
                let Some(Elem::Ptr(elem, _)) = f.ty(ins[0]).elem() else { unreachable!() };
                if scalars[2 * r - 1] != 1 {
                    return Err(self.error(Some(o), DescriptorFault::LastStride(scalars[2 * r - 1])));
                }
                // What TMA needs, and Triton checks of every descriptor whether TMA copies it or not; an empty
                // tensor has nothing to misread (torch gives its rows a stride of 1), so it is not checked.
                let base = self.tensor(ins[0]).data[0].as_i64() as u64;
                let empty = scalars[..r].iter().any(|&d| d < 1);
                if base % 16 != 0 && !empty {
                    return Err(self.error(Some(o), DescriptorFault::Base(base)));
                }
                if let Some(d) = (0..r - 1).find(|&d| (scalars[r + d] * elem.bytes() as i64) % 16 != 0 && !empty) {
                    let fault = DescriptorFault::Stride { dim: d, elements: scalars[r + d], elem };
                    return Err(self.error(Some(o), fault));
                }
                let desc = Value::Desc {
                    base,
                    elem,
                    shape: scalars[..r].to_vec(),
                    strides: scalars[r..].to_vec(),
                    nan_padding: padding == "nan",
                    im2col: None,
                };
                self.env[data.results[0].index()] = Some(desc);
            }
            Op::MakeTensorDescIm2col { rank, padding } => {
                let (r, s) = (*rank as usize, *rank as usize - 2);
                let scalars: Vec<i64> = ins[1..].iter().map(|&v| self.tensor(v).data[0].as_i64()).collect();
                let Some(Elem::Ptr(elem, _)) = f.ty(ins[0]).elem() else { unreachable!() };
                if scalars[2 * r - 1] != 1 {
                    return Err(self.error(Some(o), DescriptorFault::Channels(scalars[2 * r - 1])));
                }
                let corners = &scalars[2 * r..];
                let desc = Value::Desc {
                    base: self.tensor(ins[0]).data[0].as_i64() as u64,
                    elem,
                    shape: scalars[..r].to_vec(),
                    strides: scalars[r..2 * r].to_vec(),
                    nan_padding: padding == "nan",
                    im2col: Some([corners[..s].to_vec(), corners[s..2 * s].to_vec(), corners[2 * s..].to_vec()]),
                };
                self.env[data.results[0].index()] = Some(desc);
            }
            Op::DescLoad | Op::DescStore => self.desc_access(o)?,
            Op::ClcIsCanceled | Op::ClcProgramId(_) => self.clc(o).map_err(|m| err(self, m))?,
            op if op.is_shared_memory_op() => {
                // Everything but pure reads changes the program's shared state (what spin detection watches).
                if !matches!(data.op, Op::LocalLoad | Op::MemDescIndex | Op::MBarrierWait | Op::FenceAsyncShared { .. })
                {
                    self.smem_writes += 1;
                }
                self.shared(o).map_err(|m| err(self, m))?;
                if self.task.is_some()
                    && self.limits.schedule == Schedule::HandOff
                    && matches!(data.op, Op::MBarrierArrive { .. })
                {
                    self.hand_off()?;
                }
            }
            _ => {
                if let Op::BesselN(_) = data.op {
                    // jn/yn loop over the order inside one element: their steps count against the work budget
                    // before they run (a huge order would otherwise run for hours in one op).
                    let steps: u64 = self.tensor(data.operands[0]).data.iter().map(|n| bessel_steps(n.as_i64())).sum();
                    if self.work.saturating_add(steps) > self.limits.max_work {
                        let left = self.limits.max_work - self.work.min(self.limits.max_work);
                        return Err(self.error(Some(o), Fault::BesselWork { steps, left }));
                    }
                    self.work += steps;
                }
                let result = self.compute(o).map_err(|m| err(self, m))?;
                for (i, t) in result.into_iter().enumerate() {
                    self.set(o, i, t);
                }
            }
        }
        Ok(None)
    }

    fn bind_results(&mut self, o: OpId, vals: Vec<Value>) {
        for (&r, v) in self.f.op(o).results.iter().zip(vals) {
            self.env[r.index()] = Some(v);
        }
    }

    /// Calls a combine region on scalars.
    fn combine(&mut self, r: RegionId, elems: &[Elem], args: &[Val]) -> R<Vec<Val>> {
        let vals: Vec<Value> =
            args.iter().zip(elems.iter().cycle()).map(|(&v, &e)| Value::T(Tensor::scalar(e, v))).collect();
        match self.region(r, &vals)? {
            Exit::Yield(out) => Ok(out
                .into_iter()
                .map(|v| match v {
                    Value::T(t) => t.data[0],
                    Value::Desc { .. }
                    | Value::Smem(_)
                    | Value::SmemOutOfRange { .. }
                    | Value::Token
                    | Value::Pending { .. } => unreachable!(),
                })
                .collect()),
            _ => Err(self.error(None, Fault::Unverified("combine function must yield"))),
        }
    }

    /// Reduces along `axis` pairwise (a balanced tree): the order for an operand without a layout (one with a
    /// layout reduces in the generated code's order, `reduce_order.rs`).
    fn reduce(&mut self, r: RegionId, inputs: &[Tensor], axis: usize) -> R<Vec<Tensor>> {
        let shape = &inputs[0].shape;
        let elems: Vec<Elem> = inputs.iter().map(|t| t.elem).collect();
        let n = shape[axis] as usize;
        let strides = Tensor::strides(shape);
        let out_shape: Vec<u32> = shape.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, &d)| d).collect();
        let out_len: usize = out_shape.iter().map(|&d| d as usize).product();
        let mut outs: Vec<Tensor> = elems
            .iter()
            .map(|&e| Tensor { shape: out_shape.clone(), elem: e, data: Vec::with_capacity(out_len) })
            .collect();
        for j in 0..out_len {
            let idx = Tensor::unravel(&out_shape, j);
            let mut full: Vec<u32> = idx.clone();
            full.insert(axis, 0);
            let base: usize = full.iter().zip(&strides).map(|(&i, &s)| i as usize * s).sum();
            let mut level: Vec<Vec<Val>> =
                (0..n).map(|k| inputs.iter().map(|t| t.data[base + k * strides[axis]]).collect()).collect();
            while level.len() > 1 {
                let mut next = Vec::with_capacity(level.len() / 2);
                for pair in level.chunks(2) {
                    if pair.len() == 2 {
                        let args: Vec<Val> = pair[0].iter().chain(&pair[1]).copied().collect();
                        next.push(self.combine(r, &elems, &args)?);
                    } else {
                        next.push(pair[0].clone());
                    }
                }
                level = next;
            }
            for (t, v) in outs.iter_mut().zip(&level[0]) {
                t.data.push(*v);
            }
        }
        Ok(outs)
    }

    fn scan(&mut self, r: RegionId, inputs: &[Tensor], axis: usize, reverse: bool) -> R<Vec<Tensor>> {
        let shape = inputs[0].shape.clone();
        let elems: Vec<Elem> = inputs.iter().map(|t| t.elem).collect();
        let strides = Tensor::strides(&shape);
        let n = shape[axis] as usize;
        let mut outs: Vec<Tensor> = inputs.to_vec();
        for flat in 0..inputs[0].numel() {
            if Tensor::unravel(&shape, flat)[axis] != 0 {
                continue;
            }
            let order: Vec<usize> = if reverse { (0..n).rev().collect() } else { (0..n).collect() };
            let mut acc: Vec<Val> = inputs.iter().map(|t| t.data[flat + order[0] * strides[axis]]).collect();
            for &k in &order[1..] {
                let at = flat + k * strides[axis];
                let args: Vec<Val> = acc.iter().copied().chain(inputs.iter().map(|t| t.data[at])).collect();
                acc = self.combine(r, &elems, &args)?;
                for (t, v) in outs.iter_mut().zip(&acc) {
                    t.data[at] = *v;
                }
            }
        }
        Ok(outs)
    }

    fn desc_access(&mut self, o: OpId) -> R<()> {
        let data = self.f.op(o);
        let is_load = matches!(data.op, Op::DescLoad);
        let first_offset = if is_load { 1 } else { 2 };
        let offsets: Vec<i64> =
            data.operands[first_offset..].iter().map(|&v| self.tensor(v).data[0].as_i64()).collect();
        if is_load {
            let out = self.desc_read(data.operands[0], &offsets).map_err(|m| self.error(Some(o), m))?;
            self.set(o, 0, out);
        } else {
            let value = self.tensor(data.operands[1]).clone();
            self.desc_write(data.operands[0], &offsets, &value).map_err(|m| self.error(Some(o), m))?;
        }
        Ok(())
    }

    /// The elements of a descriptor's block at `offsets` (TMA's semantics: elements outside the tensor read as
    /// the descriptor's padding, zero or NaN).
    pub(crate) fn desc_read(&mut self, desc: ValueId, offsets: &[i64]) -> Result<Tensor, Fault> {
        let (base, elem, shape, strides, nan_padding, block) = self.desc_parts(desc)?;
        let n: usize = block.iter().map(|&d| d as usize).product();
        let mut out = Tensor::splat(&block, Elem::Scalar(elem), Val::Float(0.0));
        for i in 0..n {
            let idx = Tensor::unravel(&block, i);
            let coords: Vec<i64> = idx.iter().zip(offsets).map(|(&a, &b)| a as i64 + b).collect();
            out.data[i] = match element_address(base, elem, &shape, &strides, &coords) {
                Some(addr) => self.mem.load(addr, elem)?,
                None if elem.is_float() => Val::Float(if nan_padding { f64::NAN } else { 0.0 }),
                None => Val::Int(0),
            };
        }
        Ok(out)
    }

    /// Writes `value` to a descriptor's block at `offsets`; the parts outside the tensor are dropped.
    pub(crate) fn desc_write(&mut self, desc: ValueId, offsets: &[i64], value: &Tensor) -> Result<(), Fault> {
        let (base, elem, shape, strides, _, block) = self.desc_parts(desc)?;
        for (i, &v) in value.data.iter().enumerate() {
            let idx = Tensor::unravel(&block, i);
            let coords: Vec<i64> = idx.iter().zip(offsets).map(|(&a, &b)| a as i64 + b).collect();
            if let Some(addr) = element_address(base, elem, &shape, &strides, &coords) {
                self.mem.store(addr, elem, v)?;
            }
        }
        Ok(())
    }

    /// An im2col descriptor's `[pixels, channels]` block for a load at `coords` with `offsets`
    /// ([`tessel_tile::tma_im2col::pixels`]); positions outside the tensor read the padding value.
    pub(crate) fn im2col_read(&mut self, desc: ValueId, coords: &[i64], offsets: &[i64]) -> Result<Tensor, Fault> {
        let Some(Value::Desc { base, elem, shape, strides, nan_padding, im2col: Some([lower, upper, es]) }) =
            self.env[desc.index()].clone()
        else {
            return Err(DescriptorFault::NotIm2col(desc).into());
        };
        let Type::TensorDesc { block_shape, .. } = self.f.ty(desc) else { unreachable!("verified") };
        let block = block_shape.to_vec();
        let b = tessel_tile::tma_im2col::PixelBox { shape: &shape, lower: &lower, upper: &upper, element_strides: &es };
        let pixels =
            tessel_tile::tma_im2col::pixels(&b, coords, offsets, block[0]).map_err(DescriptorFault::PixelBox)?;
        let mut out = Tensor::splat(&block, Elem::Scalar(elem), Val::Float(0.0));
        let channels = block[1] as usize;
        for (p, at) in pixels.iter().enumerate() {
            for c in 0..channels {
                let mut coords = at.clone();
                *coords.last_mut().expect("rank 3 or more") += c as i64;
                out.data[p * channels + c] = match element_address(base, elem, &shape, &strides, &coords) {
                    Some(addr) => self.mem.load(addr, elem)?,
                    None if elem.is_float() => Val::Float(if nan_padding { f64::NAN } else { 0.0 }),
                    None => Val::Int(0),
                };
            }
        }
        Ok(out)
    }

    #[allow(clippy::type_complexity)]
    fn desc_parts(&self, desc: ValueId) -> Result<(u64, ScalarType, Vec<i64>, Vec<i64>, bool, Vec<u32>), Fault> {
        let Some(Value::Desc { base, elem, shape, strides, nan_padding, im2col }) = self.env[desc.index()].clone()
        else {
            return Err(DescriptorFault::NotADescriptor(desc).into());
        };
        if im2col.is_some() {
            return Err(DescriptorFault::Im2colRead(desc).into());
        }
        let Type::TensorDesc { block_shape, .. } = self.f.ty(desc) else { unreachable!("verified") };
        Ok((base, elem, shape, strides, nan_padding, block_shape.to_vec()))
    }
}

/// Whether two lists of runtime values are identical, bit for bit (NaNs with their payloads, -0 apart from 0).
fn same_values(a: &[Value], b: &[Value]) -> bool {
    let same_val = |x: &Val, y: &Val| match (x, y) {
        (Val::Float(x), Val::Float(y)) => x.to_bits() == y.to_bits(),
        (x, y) => x == y,
    };
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Value::T(x), Value::T(y)) => {
                x.shape == y.shape && x.elem == y.elem && x.data.iter().zip(&y.data).all(|(p, q)| same_val(p, q))
            }
            (Value::Smem(x), Value::Smem(y)) => x == y,
            // Descriptors are made from scalars and never change inside a loop; compare them as different.
            _ => false,
        })
}

fn tensor_in(env: &[Option<Value>], v: ValueId) -> &Tensor {
    match &env[v.index()] {
        Some(Value::T(t)) => t,
        other => panic!("value {v} is {other:?}, not a tensor (the verifier should have caught this)"),
    }
}

/// The address of element `coords` of a descriptor's tensor, or `None` outside it.
fn element_address(base: u64, elem: ScalarType, shape: &[i64], strides: &[i64], coords: &[i64]) -> Option<u64> {
    let inside = coords.iter().zip(shape).all(|(&c, &s)| c >= 0 && c < s);
    // In i128: no product of an i64 coordinate and stride (and no sum of a few) overflows, and an address past the
    // 64 bits is reported by the access rather than wrapped into another buffer.
    let offset: i128 = coords.iter().zip(strides).map(|(&c, &s)| c as i128 * s as i128).sum();
    inside.then(|| memory::offset_address(base, offset.saturating_mul(elem.bytes() as i128)))
}

/// An upper bound on the recurrence steps libdevice's `jn`/`yn` run for order `n` (an i32; the backward
/// recurrence starts at most ⌊√(60·n)⌋ above it, its 32-bit wrapping included).
fn bessel_steps(n: i64) -> u64 {
    let n = (n as i32).unsigned_abs() as u64;
    n + ((60 * n) as f64).sqrt() as u64 + 2
}
