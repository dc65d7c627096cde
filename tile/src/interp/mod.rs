//! The reference interpreter: runs a tile-IR kernel over a grid of programs on the CPU.
//!
//! It defines what a kernel means. Every GPU result is checked against it, so it favours exactness over speed:
//! each op rounds to its result type, integer ops wrap, memory is bounds-checked, `device_assert` and
//! `assume` are checked, and `device_print` output is collected in Triton's format. Programs run one after the
//! other (in grid order), so atomics are trivially atomic; or, with `Limits::threads`, in parallel when none can
//! observe another, with exactly the sequential result (`run_with_limits`).

pub mod arith;
mod data_ops;
pub mod memory;
mod partitions;
mod shape_ops;
mod shared;
pub mod value;

use std::fmt;

use crate::interp::memory::{BufferId, Memory};
use crate::interp::value::{Tensor, Val, convert, from_bits, round_float, round_tf32, to_bits};
use crate::ir::{Func, Loc, OpId, RegionId, ValueId};
use crate::ops::{AtomicOp, BinOp, Const, InputPrecision, Op};
use crate::types::{Elem, ScalarType, Type};

/// A kernel argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg {
    Int(i64),
    Float(f64),
    Buffer(BufferId),
}

/// What went wrong, in which program and at which op.
#[derive(Clone, Debug, PartialEq)]
pub struct InterpError {
    pub message: String,
    pub program: [u32; 3],
    pub op: Option<OpId>,
    pub loc: Option<Loc>,
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.program;
        write!(f, "program ({x}, {y}, {z}): {}", self.message)
    }
}

impl std::error::Error for InterpError {}

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
    },
    Smem(shared::View),
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
/// of hanging the interpreter.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Loop iterations (of every `for` and `while`, nested ones included) one program may run.
    pub max_iterations: u64,
    /// Elements one program may compute (every op's results, counted in elements): a loop with few iterations
    /// over large tiles is bounded by this rather than by `max_iterations`.
    pub max_work: u64,
    /// Threads to run programs on (1: one at a time). Programs run in parallel only when none can observe
    /// another (see [`run_with_limits`]); the result is the same either way.
    pub threads: usize,
    /// Told why a parallel run fell back to running programs one at a time.
    pub notes: Option<fn(&str)>,
}

impl Default for Limits {
    /// 10^7 iterations and 10^9 computed elements per program (a 128x128 tile over K = 4096 in 64-wide steps is
    /// about 10^7): far more than any tiled kernel needs, and about a minute of interpretation; one thread.
    fn default() -> Limits {
        Limits { max_iterations: 10_000_000, max_work: 1_000_000_000, threads: 1, notes: None }
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
/// With `limits.threads > 1`, programs run in parallel, each against a private view of memory; their stores
/// are committed only if no program could have observed another (no atomics, no element stored by two programs,
/// none loaded by one and stored by another), so memory and prints end exactly as in the sequential run.
/// Otherwise the programs run again one at a time, and `limits.notes` is told why.
pub fn run_with_limits(
    func: &Func,
    args: &[Arg],
    grid: [u32; 3],
    mem: &mut Memory,
    limits: Limits,
) -> Result<Vec<String>, InterpError> {
    let fail = |message: String| InterpError { message, program: [0; 3], op: None, loc: None };
    if args.len() != func.args().len() {
        return Err(fail(format!("`{}` takes {} arguments, got {}", func.name, func.args().len(), args.len())));
    }
    let mut env: Vec<Option<Value>> = vec![None; func.values.len()];
    for (i, (&v, a)) in func.args().iter().zip(args).enumerate() {
        let Type::Scalar(elem) = func.ty(v) else { return Err(fail(format!("argument {i} must be a scalar"))) };
        let val = match (a, elem) {
            (Arg::Buffer(b), Elem::Ptr(pointee, _)) => {
                let buf = mem.buffer(*b);
                if buf.elem.bytes() != pointee.bytes() {
                    return Err(fail(format!(
                        "argument {i} points to {pointee} but buffer `{}` holds {}",
                        buf.name, buf.elem
                    )));
                }
                Val::Ptr(mem.base(*b))
            }
            (Arg::Int(x), Elem::Scalar(s)) if s.is_int() => Val::Int(value::wrap_int(*x, *s)),
            (Arg::Float(x), Elem::Scalar(s)) if s.is_float() => Val::Float(round_float(*x, *s)),
            (Arg::Int(x), Elem::Scalar(s)) if s.is_float() => Val::Float(value::int_to_float(*x as i128, *s)),
            _ => return Err(fail(format!("argument {i}: {a:?} does not fit type {elem}"))),
        };
        env[v.index()] = Some(Value::T(Tensor::scalar(*elem, val)));
    }
    let programs: Vec<[u32; 3]> =
        (0..grid[2]).flat_map(|z| (0..grid[1]).flat_map(move |y| (0..grid[0]).map(move |x| [x, y, z]))).collect();
    if limits.threads > 1 && programs.len() > 1 {
        match run_parallel(func, &env, grid, mem, limits, &programs) {
            Ok(log) => return Ok(log),
            Err(why) => {
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
    for &pid in &programs {
        prog.pid = pid;
        prog.smem = Default::default();
        prog.iterations = 0;
        prog.work = 0;
        prog.region(func.body, &[])?;
    }
    Ok(prog.log)
}

/// Runs the programs on `limits.threads` threads, each against a private view of memory (the memory before the
/// launch plus its own stores, every access recorded), and commits the stores in program order if no program
/// could have observed another: no atomics, no element written by two programs, none read by one program and
/// written by another. Then memory and the print log are exactly what the sequential run leaves. Otherwise, or
/// if a program fails, nothing is committed and the reason is returned (the caller runs sequentially, which
/// also reports the failure exactly).
fn run_parallel(
    func: &Func,
    env: &[Option<Value>],
    grid: [u32; 3],
    mem: &mut Memory,
    limits: Limits,
    programs: &[[u32; 3]],
) -> Result<Vec<String>, String> {
    if let Some(o) =
        func.all_ops().into_iter().find(|&o| matches!(func.op(o).op, Op::Atomic { .. } | Op::AtomicCas { .. }))
    {
        let at = func.op(o).loc.map_or(String::new(), |l| format!(" (bytes {}..{} of the source)", l.start, l.end));
        return Err(format!("the kernel uses atomics{at}: programs ran one at a time"));
    }
    struct Done {
        log: Vec<String>,
        /// Elements loaded (sorted, deduplicated) and stored (element, final bits; in first-store order).
        reads: Vec<u64>,
        writes: Vec<(u64, u64)>,
    }
    let shared: &Memory = mem;
    let chunk = programs.len().div_ceil(limits.threads);
    let results: Vec<Result<Done, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = programs
            .chunks(chunk)
            .map(|pids| {
                s.spawn(move || {
                    let mut out = Vec::with_capacity(pids.len());
                    for &pid in pids {
                        let mut prog = Program {
                            f: func,
                            env: env.to_vec(),
                            mem: Mem::Private(Private::default_over(shared)),
                            grid,
                            pid,
                            log: Vec::new(),
                            smem: Default::default(),
                            limits,
                            iterations: 0,
                            smem_writes: 0,
                            work: 0,
                            task: None,
                        };
                        let ran = prog.region(func.body, &[]);
                        let Mem::Private(p) = prog.mem else { unreachable!("a private view") };
                        let mut reads = p.reads;
                        reads.sort_unstable();
                        reads.dedup();
                        out.push(match ran {
                            Ok(_) => Ok(Done { log: prog.log, reads, writes: p.order }),
                            Err(e) => Err(format!("{e}")),
                        });
                        if out.last().is_some_and(Result::is_err) {
                            break;
                        }
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("an interpreter thread panicked")).collect()
    });
    let mut done = Vec::with_capacity(results.len());
    for r in results {
        done.push(r.map_err(|_| "a program failed: programs ran again one at a time".to_string())?);
    }
    // Every stored element with its program, sorted: a repeated element is a store by two programs.
    let mut writer: Vec<(u64, usize)> =
        done.iter().enumerate().flat_map(|(p, d)| d.writes.iter().map(move |&(slot, _)| (slot, p))).collect();
    writer.sort_unstable();
    if writer.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err("two programs store to the same element: programs ran one at a time".into());
    }
    for (p, d) in done.iter().enumerate() {
        let stored_by_other =
            |slot: &u64| writer.binary_search_by_key(slot, |&(s, _)| s).is_ok_and(|i| writer[i].1 != p);
        if d.reads.iter().any(stored_by_other) {
            return Err("a program loads an element another program stores: programs ran one at a time".into());
        }
    }
    let mut log = Vec::new();
    for d in done {
        for (slot, bits) in d.writes {
            mem.set_raw_at(slot, bits);
        }
        log.extend(d.log);
    }
    Ok(log)
}

/// Global memory as one program sees it.
enum Mem<'a> {
    /// The memory itself (programs run one at a time).
    Shared(&'a mut Memory),
    /// The memory before the launch, read-only, plus this program's own stores, with every element it reads
    /// and writes recorded (programs run in parallel).
    Private(Private<'a>),
    /// Lent to another partition of a `warp_specialize` (`partitions`), which runs while this one waits.
    Lent,
}

struct Private<'a> {
    base: &'a Memory,
    /// Elements stored, their latest bits (and in `order`, each element once, in first-store order).
    stored: std::collections::HashMap<u64, u64>,
    order: Vec<(u64, u64)>,
    /// Elements loaded from `base` (with repeats).
    reads: Vec<u64>,
    changes: u64,
}

impl<'a> Private<'a> {
    fn default_over(base: &'a Memory) -> Private<'a> {
        Private { base, stored: Default::default(), order: Vec::new(), reads: Vec::new(), changes: 0 }
    }
}

impl Mem<'_> {
    fn load(&mut self, addr: u64, elem: ScalarType) -> Result<Val, String> {
        match self {
            Mem::Shared(m) => m.load(addr, elem),
            Mem::Lent => unreachable!("a partition runs only while it holds the memory"),
            Mem::Private(p) => {
                let slot = p.base.slot(addr, elem)?;
                let own = if p.stored.is_empty() { None } else { p.stored.get(&slot).copied() };
                let bits = own.unwrap_or_else(|| {
                    p.reads.push(slot);
                    p.base.raw_at(slot)
                });
                Ok(p.base.decode_at(slot, bits, elem))
            }
        }
    }

    fn store(&mut self, addr: u64, elem: ScalarType, v: Val) -> Result<(), String> {
        match self {
            Mem::Shared(m) => m.store(addr, elem, v),
            Mem::Lent => unreachable!("a partition runs only while it holds the memory"),
            Mem::Private(p) => {
                let slot = p.base.slot(addr, elem)?;
                let bits = p.base.encode_at(slot, elem, v);
                let old = p.stored.get(&slot).copied().unwrap_or_else(|| p.base.raw_at(slot));
                if old != bits {
                    p.changes += 1;
                }
                if p.stored.insert(slot, bits).is_none() {
                    p.order.push((slot, bits));
                } else if let Some(entry) = p.order.iter_mut().rev().find(|(s, _)| *s == slot) {
                    entry.1 = bits;
                }
                Ok(())
            }
        }
    }

    fn changes(&self) -> u64 {
        match self {
            Mem::Shared(m) => m.changes(),
            Mem::Private(p) => p.changes,
            Mem::Lent => 0,
        }
    }
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
    fn error(&self, op: Option<OpId>, message: impl Into<String>) -> InterpError {
        InterpError { message: message.into(), program: self.pid, op, loc: op.and_then(|o| self.f.op(o).loc) }
    }

    fn tensor(&self, v: ValueId) -> &Tensor {
        tensor_in(&self.env, v)
    }

    /// Counts one iteration of loop `o` against the budget.
    fn iteration(&mut self, o: OpId) -> R<()> {
        self.iterations += 1;
        if self.iterations > self.limits.max_iterations {
            let kind = if matches!(self.f.op(o).op, Op::While) { "while" } else { "for" };
            return Err(self.error(
                Some(o),
                format!(
                    "this program ran more than {} loop iterations (stopped in this `{kind}` loop); raise the \
                     limit with --max-iterations if it is meant to",
                    self.limits.max_iterations
                ),
            ));
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
        let err = |p: &Self, m: String| p.error(Some(o), m);
        if self.task.is_some() && matches!(data.op, Op::MBarrierWait) {
            // Another partition may complete the phase: let it run until it does, or report a deadlock.
            self.wait_for_phase(o)?;
        }
        self.smem.check_ready(f, &self.env, o).map_err(|m| err(self, m))?;
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
                    return Err(err(self, format!("loop step must be positive, got {step}")));
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
                                    return Err(self.error(
                                        Some(o),
                                        "this `while` loop spins forever: an iteration changed neither its values \
                                         nor memory, and the interpreter runs one program at a time, so no other \
                                         program can release what it waits for",
                                    ));
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
                let out = self.reduce(data.regions[0], &inputs, *axis as usize)?;
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
            Op::MakeTensorDesc { rank, padding } => {
                let r = *rank as usize;
                let scalars: Vec<i64> = ins[1..].iter().map(|&v| self.tensor(v).data[0].as_i64()).collect();
                let Some(Elem::Ptr(elem, _)) = f.ty(ins[0]).elem() else { unreachable!() };
                if scalars[2 * r - 1] != 1 {
                    let msg = format!(
                        "a tensor descriptor's last dim must be contiguous (stride 1), got stride {}",
                        scalars[2 * r - 1]
                    );
                    return Err(self.error(Some(o), msg));
                }
                let desc = Value::Desc {
                    base: self.tensor(ins[0]).data[0].as_i64() as u64,
                    elem,
                    shape: scalars[..r].to_vec(),
                    strides: scalars[r..].to_vec(),
                    nan_padding: padding == "nan",
                };
                self.env[data.results[0].index()] = Some(desc);
            }
            Op::DescLoad | Op::DescStore => self.desc_access(o)?,
            op if op.is_shared_memory_op() => {
                // Everything but pure reads changes the program's shared state (what spin detection watches).
                if !matches!(data.op, Op::LocalLoad | Op::MemDescIndex | Op::MBarrierWait | Op::FenceAsyncShared) {
                    self.smem_writes += 1;
                }
                self.shared(o).map_err(|m| err(self, m))?
            }
            _ => {
                let result = self.compute(o).map_err(|m| err(self, m))?;
                self.work += result.iter().map(|t| t.data.len().max(1) as u64).sum::<u64>();
                if self.work > self.limits.max_work {
                    let msg = format!(
                        "this program computed more than {} elements (stopped at this op); raise the limit with \
                         --max-work if it is meant to",
                        self.limits.max_work
                    );
                    return Err(self.error(Some(o), msg));
                }
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
                    Value::Desc { .. } | Value::Smem(_) | Value::Token | Value::Pending { .. } => unreachable!(),
                })
                .collect()),
            _ => Err(self.error(None, "combine function must yield")),
        }
    }

    /// Reduces along `axis` pairwise (a balanced tree), as a GPU reduction tree does.
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
    pub(super) fn desc_read(&mut self, desc: ValueId, offsets: &[i64]) -> Result<Tensor, String> {
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
    pub(super) fn desc_write(&mut self, desc: ValueId, offsets: &[i64], value: &Tensor) -> Result<(), String> {
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

    #[allow(clippy::type_complexity)]
    fn desc_parts(&self, desc: ValueId) -> Result<(u64, ScalarType, Vec<i64>, Vec<i64>, bool, Vec<u32>), String> {
        let Some(Value::Desc { base, elem, shape, strides, nan_padding }) = self.env[desc.index()].clone() else {
            return Err(format!("{desc} is not a tensor descriptor"));
        };
        let Type::TensorDesc { block_shape, .. } = self.f.ty(desc) else { unreachable!("verified") };
        Ok((base, elem, shape, strides, nan_padding, block_shape.to_vec()))
    }

    /// Ops without regions: returns their results.
    fn compute(&mut self, o: OpId) -> Result<Vec<Tensor>, String> {
        let f = self.f;
        let data = f.op(o);
        let env = &self.env;
        let ins: Vec<&Tensor> = data.operands.iter().map(|&v| tensor_in(env, v)).collect();
        let rty = |i: usize| f.ty(data.results[i]);
        let relem = |i: usize| rty(i).elem().expect("tensor or scalar result");
        let scalar_of = |e: Elem| e.scalar().ok_or_else(|| "expected numbers, got pointers".to_string());
        let out = match &data.op {
            Op::Constant(c) => {
                let e = relem(0);
                let v = match (c, scalar_of(e)?) {
                    (Const::Int(i), s) if s.is_int() => Val::Int(value::wrap_int(*i, s)),
                    (Const::Int(i), s) => Val::Float(value::int_to_float(*i as i128, s)),
                    (Const::Float(x), s) if s.is_float() => Val::Float(round_float(*x, s)),
                    (Const::Float(x), s) => convert(Val::Float(*x), Elem::Scalar(ScalarType::F64), Elem::Scalar(s)),
                };
                vec![Tensor::splat(rty(0).shape(), e, v)]
            }
            Op::ProgramId(a) => vec![Tensor::scalar(relem(0), Val::Int(self.pid[*a as usize] as i64))],
            Op::NumPrograms(a) => vec![Tensor::scalar(relem(0), Val::Int(self.grid[*a as usize] as i64))],
            Op::Arange { start, end } => {
                vec![Tensor {
                    shape: vec![(end - start) as u32],
                    elem: relem(0),
                    data: (*start..*end).map(|i| Val::Int(i as i64)).collect(),
                }]
            }
            Op::Binary { op, propagate_nan } => {
                let t = scalar_of(ins[0].elem)?;
                let data = ins[0]
                    .data
                    .iter()
                    .zip(&ins[1].data)
                    .map(|(&a, &b)| arith::binary(*op, *propagate_nan, t, a, b))
                    .collect::<Result<_, _>>()?;
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::Unary(op) => {
                let t = scalar_of(ins[0].elem)?;
                let data = ins[0].data.iter().map(|&a| arith::unary(*op, t, a)).collect::<Result<_, _>>()?;
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::Cmp(p) => {
                let t = match ins[0].elem {
                    Elem::Scalar(s) => s,
                    Elem::Ptr(..) => ScalarType::U64,
                };
                let data = ins[0].data.iter().zip(&ins[1].data).map(|(&a, &b)| arith::compare(*p, t, a, b)).collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: relem(0), data }]
            }
            Op::Select => {
                let data = (0..ins[1].numel())
                    .map(|i| if ins[0].data[i].is_true() { ins[1].data[i] } else { ins[2].data[i] })
                    .collect();
                vec![Tensor { shape: ins[1].shape.clone(), elem: ins[1].elem, data }]
            }
            Op::Fma => {
                let t = scalar_of(ins[0].elem)?;
                let data = (0..ins[0].numel())
                    .map(|i| {
                        Val::Float(round_float(
                            ins[0].data[i].as_f64().mul_add(ins[1].data[i].as_f64(), ins[2].data[i].as_f64()),
                            t,
                        ))
                    })
                    .collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::Clamp { propagate_nan } => {
                let t = scalar_of(ins[0].elem)?;
                let data = (0..ins[0].numel())
                    .map(|i| {
                        let lo = arith::binary(BinOp::Max, *propagate_nan, t, ins[0].data[i], ins[1].data[i])?;
                        arith::binary(BinOp::Min, *propagate_nan, t, lo, ins[2].data[i])
                    })
                    .collect::<Result<_, _>>()?;
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::Cast => {
                let (from, to) = (ins[0].elem, relem(0));
                vec![Tensor {
                    shape: ins[0].shape.clone(),
                    elem: to,
                    data: ins[0].data.iter().map(|&v| convert(v, from, to)).collect(),
                }]
            }
            // A pointer reinterpreted as a pointer to another type: the same address.
            Op::Bitcast if ins[0].elem.is_ptr() && relem(0).is_ptr() => {
                vec![Tensor { shape: ins[0].shape.clone(), elem: relem(0), data: ins[0].data.clone() }]
            }
            Op::Bitcast => {
                let (from, to) = (scalar_of(ins[0].elem)?, scalar_of(relem(0))?);
                let data = ins[0].data.iter().map(|&v| from_bits(to_bits(v, from), to)).collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: relem(0), data }]
            }
            Op::AddPtr => {
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let size = pointee.bytes() as i64;
                let data = ins[0]
                    .data
                    .iter()
                    .zip(&ins[1].data)
                    .map(|(&p, &off)| Val::Ptr((p.as_i64() + off.as_i64() * size) as u64))
                    .collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::Load { .. } => {
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let mut data = Vec::with_capacity(ins[0].numel());
                for i in 0..ins[0].numel() {
                    let on = ins.get(1).is_none_or(|m| m.data[i].is_true());
                    data.push(if on {
                        self.mem.load(ins[0].data[i].as_i64() as u64, pointee)?
                    } else if let Some(other) = ins.get(2) {
                        other.data[i]
                    } else if pointee.is_float() {
                        Val::Float(0.0)
                    } else {
                        Val::Int(0)
                    });
                }
                vec![Tensor { shape: ins[0].shape.clone(), elem: Elem::Scalar(pointee), data }]
            }
            Op::Store { .. } => {
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let (ptrs, vals, mask) = (ins[0].clone(), ins[1].clone(), ins.get(2).map(|m| (*m).clone()));
                for i in 0..ptrs.numel() {
                    if mask.as_ref().is_none_or(|m| m.data[i].is_true()) {
                        self.mem.store(ptrs.data[i].as_i64() as u64, pointee, vals.data[i])?;
                    }
                }
                vec![]
            }
            Op::Atomic { op, .. } => {
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let (ptrs, vals, mask) = (ins[0].clone(), ins[1].clone(), ins.get(2).map(|m| (*m).clone()));
                let mut old = Vec::with_capacity(ptrs.numel());
                for i in 0..ptrs.numel() {
                    let addr = ptrs.data[i].as_i64() as u64;
                    if mask.as_ref().is_some_and(|m| !m.data[i].is_true()) {
                        old.push(if pointee.is_float() { Val::Float(0.0) } else { Val::Int(0) });
                        continue;
                    }
                    let prev = self.mem.load(addr, pointee)?;
                    let new = match op {
                        AtomicOp::Xchg => vals.data[i],
                        AtomicOp::Add => arith::binary(BinOp::Add, false, pointee, prev, vals.data[i])?,
                        AtomicOp::Max => arith::binary(BinOp::Max, false, pointee, prev, vals.data[i])?,
                        AtomicOp::Min => arith::binary(BinOp::Min, false, pointee, prev, vals.data[i])?,
                        AtomicOp::And => arith::binary(BinOp::And, false, pointee, prev, vals.data[i])?,
                        AtomicOp::Or => arith::binary(BinOp::Or, false, pointee, prev, vals.data[i])?,
                        AtomicOp::Xor => arith::binary(BinOp::Xor, false, pointee, prev, vals.data[i])?,
                    };
                    self.mem.store(addr, pointee, new)?;
                    old.push(prev);
                }
                vec![Tensor { shape: ptrs.shape.clone(), elem: Elem::Scalar(pointee), data: old }]
            }
            Op::AtomicCas { .. } => {
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let (ptrs, cmp, vals) = (ins[0].clone(), ins[1].clone(), ins[2].clone());
                let mut old = Vec::with_capacity(ptrs.numel());
                for i in 0..ptrs.numel() {
                    let addr = ptrs.data[i].as_i64() as u64;
                    let prev = self.mem.load(addr, pointee)?;
                    if arith::compare(crate::ops::CmpPred::Eq, pointee, prev, cmp.data[i]).is_true() {
                        self.mem.store(addr, pointee, vals.data[i])?;
                    }
                    old.push(prev);
                }
                vec![Tensor { shape: ptrs.shape.clone(), elem: Elem::Scalar(pointee), data: old }]
            }
            Op::Dot { precision, .. } => vec![dot(ins[0], ins[1], ins[2], *precision)?],
            Op::Assume => {
                if !ins[0].data[0].is_true() {
                    return Err("`assume` does not hold".into());
                }
                vec![]
            }
            Op::MultipleOf(_) | Op::MaxContiguous(_) | Op::MaxConstancy(_) | Op::ConvertLayout => vec![ins[0].clone()],
            Op::Print { prefix, hex } => {
                self.log.extend(print_lines(self.pid, prefix, *hex, &ins));
                vec![]
            }
            Op::Assert { message } => {
                if let Some(i) = ins[0].data.iter().position(|v| !v.is_true()) {
                    let idx = Tensor::unravel(&ins[0].shape, i);
                    return Err(format!("device_assert failed at index {idx:?}: {message}"));
                }
                vec![]
            }
            Op::DebugBarrier => vec![],
            op @ (Op::Gather { .. }
            | Op::Histogram { .. }
            | Op::InlineAsm { .. }
            | Op::GlobalTimer
            | Op::SmId
            | Op::GdcWait
            | Op::GdcLaunchDependents) => data_ops::eval(op, &ins)?,
            op => shape_ops::eval(op, &ins, rty(0))?,
        };
        Ok(out)
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

/// `device_print` lines in Triton's format: `pid (x, y, z) idx (i, j) prefix value`.
fn print_lines(pid: [u32; 3], prefix: &str, hex: bool, ins: &[&Tensor]) -> Vec<String> {
    let [x, y, z] = pid;
    let fmt_val = |v: Val, e: Elem| match (v, hex) {
        (Val::Float(f), false) => format!("{f}"),
        (Val::Float(f), true) => format!("{:#x}", to_bits(Val::Float(f), e.scalar().unwrap())),
        (Val::Int(i), true) => format!("{i:#x}"),
        (Val::Int(i), false) => format!("{i}"),
        (Val::Ptr(p), _) => format!("{p:#x}"),
    };
    if ins.is_empty() {
        return vec![format!("pid ({x}, {y}, {z}) {prefix}")];
    }
    let mut lines = Vec::new();
    for t in ins {
        for (i, &v) in t.data.iter().enumerate() {
            let idx: Vec<String> = Tensor::unravel(&t.shape, i).iter().map(|d| format!("{d:>3}")).collect();
            lines.push(format!("pid ({x}, {y}, {z}) idx ({}) {prefix}{}", idx.join(","), fmt_val(v, t.elem)));
        }
    }
    lines
}

/// `a @ b + acc`, with the operands rounded as `precision` says and products accumulated in the
/// accumulator's type (in K order).
pub(crate) fn dot(a: &Tensor, b: &Tensor, acc: &Tensor, precision: InputPrecision) -> Result<Tensor, String> {
    let r = a.shape.len();
    let (m, k, n) = (a.shape[r - 2] as usize, a.shape[r - 1] as usize, b.shape[r - 1] as usize);
    let batch = if r == 3 { a.shape[0] as usize } else { 1 };
    let acc_t = acc.elem.scalar().ok_or("dot accumulator must be numeric")?;
    let in_t = a.elem.scalar().ok_or("dot operands must be numeric")?;
    let prep = |v: Val| -> f64 {
        let x = v.as_f64();
        match (in_t, precision) {
            (ScalarType::F32, InputPrecision::Tf32) => round_tf32(x as f32) as f64,
            _ => x,
        }
    };
    let mut out = acc.clone();
    for bt in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let at = bt * m * n + i * n + j;
                if acc_t.is_int() {
                    let mut s = out.data[at].as_i64();
                    for kk in 0..k {
                        s = s.wrapping_add(
                            a.data[bt * m * k + i * k + kk]
                                .as_i64()
                                .wrapping_mul(b.data[bt * k * n + kk * n + j].as_i64()),
                        );
                    }
                    out.data[at] = Val::Int(value::wrap_int(s, acc_t));
                } else {
                    let mut s = out.data[at].as_f64();
                    for kk in 0..k {
                        let (x, y) = (prep(a.data[bt * m * k + i * k + kk]), prep(b.data[bt * k * n + kk * n + j]));
                        s = round_float(x.mul_add(y, s), acc_t);
                    }
                    out.data[at] = Val::Float(s);
                }
            }
        }
    }
    Ok(out)
}

/// The address of element `coords` of a descriptor's tensor, or `None` outside it.
fn element_address(base: u64, elem: ScalarType, shape: &[i64], strides: &[i64], coords: &[i64]) -> Option<u64> {
    let inside = coords.iter().zip(shape).all(|(&c, &s)| c >= 0 && c < s);
    let offset: i64 = coords.iter().zip(strides).map(|(&c, &s)| c * s).sum();
    inside.then(|| (base as i64 + offset * elem.bytes() as i64) as u64)
}
