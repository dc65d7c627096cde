//! Programs run in parallel (rayon) when none can observe another, with exactly the sequential result.
//!
//! Each program reads the memory as it was before the launch and keeps its own stores private. Every element a
//! program touches is claimed in an ownership table as it runs: an element may be loaded by any number of
//! programs, or loaded and stored by one. The first claim that breaks this (two programs store one element, or
//! one loads what another stores), or an atomic, stops the run at once; nothing is committed and the caller
//! runs the programs again one at a time. Otherwise no program saw another's stores, so the sequential run
//! would have loaded the same values, computed the same results and stored the same bits (each element by at
//! most one program): a finished program's stores go straight into a staged copy of the buffers they touch,
//! which replaces the memory when every program is done, and the prints are joined in program order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use rayon::prelude::*;

use super::memory::{BufferId, Memory};
use super::{Fault, InterpError, Limits, Program, Value, budget};
use tessel_tile::eval::value::Val;
use tessel_tile::ir::{Func, Loc};
use tessel_tile::types::ScalarType;

/// Global memory as one program sees it.
pub(super) enum Mem<'a> {
    /// The memory itself (programs run one at a time).
    Shared(&'a mut Memory),
    /// The memory before the launch, read-only, plus this program's own stores (programs run in parallel).
    Private(Private<'a>),
    /// Lent to another partition of a `warp_specialize` (`partitions`), which runs while this one waits.
    Lent,
}

pub(super) struct Private<'a> {
    launch: &'a Launch<'a>,
    /// The program's position in grid order, plus one (its tag in the ownership table).
    tag: u32,
    /// Elements stored (slot -> latest bits).
    stored: HashMap<u64, u64>,
    /// Stores that changed an element (spin-wait detection compares it across a loop iteration).
    changes: u64,
}

/// An ownership entry: 0 untouched; a program's tag: loaded by that program only; the tag with `WRITTEN`:
/// stored (and perhaps loaded) by that program only; `MANY`: loaded by several programs, stored by none.
const WRITTEN: u32 = 1 << 31;
const MANY: u32 = u32::MAX;

/// Bytes per lock of a staged buffer: programs storing to different parts of one buffer rarely wait.
const STAGE_CHUNK: usize = 1 << 16;

/// A buffer's bytes after the launch, in chunks of [`STAGE_CHUNK`] locked one at a time.
type Staged = Vec<Mutex<Vec<u8>>>;

/// What the programs of one parallel launch share.
struct Launch<'a> {
    base: &'a Memory,
    grid: [u32; 3],
    /// Per buffer, made on first touch: an ownership entry per element (`None`: there was no memory for it).
    owners: Vec<OnceLock<Option<Box<[AtomicU32]>>>>,
    /// Per buffer, made on first commit into it: its bytes after the launch, in locked chunks (`None`: there
    /// was no memory for them).
    staged: Vec<OnceLock<Option<Staged>>>,
    /// Why the programs cannot run in parallel (the first reason found); set, it stops every program.
    conflict: OnceLock<String>,
    /// A program failed (the sequential run reports it exactly).
    failed: AtomicBool,
    /// The first program the caller stopped (`Limits::stop`): the run ends with its error, not run again.
    interrupted: OnceLock<InterpError>,
}

impl Launch<'_> {
    fn stopped(&self) -> bool {
        self.conflict.get().is_some() || self.failed.load(Ordering::Relaxed) || self.interrupted.get().is_some()
    }

    /// The ownership entry of `slot`; an error (which stops the parallel run) when there is no memory for the
    /// buffer's table (4 bytes per element).
    fn owner(&self, slot: u64) -> Result<&AtomicU32, Fault> {
        let (id, i) = Memory::split(slot);
        let table = self.owners[id.0 as usize].get_or_init(|| {
            let n = self.base.buffer(id).len();
            if super::memory::available_bytes().is_some_and(|a| a / 4 < n as u64) {
                return None;
            }
            let mut v: Vec<AtomicU32> = Vec::new();
            v.try_reserve_exact(n).ok()?;
            v.extend((0..n).map(|_| AtomicU32::new(0)));
            Some(v.into_boxed_slice())
        });
        match table {
            Some(t) => Ok(&t[i]),
            None => Err(self.conflict(format!(
                "no memory to track which program touches each element of buffer `{}`",
                self.base.buffer(id).name
            ))),
        }
    }

    fn pid(&self, tag: u32) -> String {
        let [x, y, z] = budget::program_at(self.grid, ((tag & !WRITTEN) - 1) as u64);
        format!("({x}, {y}, {z})")
    }

    /// Records a conflict (`why`, the note the caller gets); returns the fault that ends the program which found
    /// it.
    fn conflict(&self, why: String) -> Fault {
        let _ = self.conflict.set(format!("{why}: programs ran one at a time"));
        Fault::ParallelConflict
    }

    fn element(&self, slot: u64) -> String {
        let (id, i) = Memory::split(slot);
        format!("element {i} of buffer `{}`", self.base.buffer(id).name)
    }

    /// Program `tag` loads `slot`; `true` when the program stored it itself (the value is in its own stores).
    fn claim_load(&self, slot: u64, tag: u32) -> Result<bool, Fault> {
        let cell = self.owner(slot)?;
        let mut s = cell.load(Ordering::Acquire);
        loop {
            let new = match s {
                0 => tag,
                MANY => return Ok(false),
                x if x & !WRITTEN == tag => return Ok(x & WRITTEN != 0),
                x if x & WRITTEN != 0 => {
                    return Err(self.conflict(format!(
                        "a program loads an element another program stores (program {} loads {}, which program {} \
                         stores)",
                        self.pid(tag),
                        self.element(slot),
                        self.pid(x)
                    )));
                }
                _ => MANY,
            };
            match cell.compare_exchange_weak(s, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(false),
                Err(now) => s = now,
            }
        }
    }

    /// Program `tag` stores to `slot`; `true` when it had stored it before.
    fn claim_store(&self, slot: u64, tag: u32) -> Result<bool, Fault> {
        let cell = self.owner(slot)?;
        let mut s = cell.load(Ordering::Acquire);
        loop {
            if s == tag | WRITTEN {
                return Ok(true);
            }
            if s != 0 && s != tag {
                let why = if s == MANY || s & WRITTEN == 0 {
                    let other =
                        if s == MANY { "other programs load it".to_string() } else { self.pid(s) + " loads it" };
                    format!(
                        "a program loads an element another program stores (program {} stores {}, and {other})",
                        self.pid(tag),
                        self.element(slot)
                    )
                } else {
                    format!(
                        "two programs store to the same element (programs {} and {}, {})",
                        self.pid(s),
                        self.pid(tag),
                        self.element(slot)
                    )
                };
                return Err(self.conflict(why));
            }
            match cell.compare_exchange_weak(s, tag | WRITTEN, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(false),
                Err(now) => s = now,
            }
        }
    }

    /// A copy of buffer `id`'s bytes in locked chunks, or `None` when there is no memory for it.
    fn stage(&self, id: BufferId) -> Option<Staged> {
        let bytes = &self.base.buffer(id).bytes;
        if super::memory::available_bytes().is_some_and(|a| a < bytes.len() as u64) {
            return None;
        }
        let mut chunks = Vec::new();
        chunks.try_reserve_exact(bytes.len().div_ceil(STAGE_CHUNK)).ok()?;
        for c in bytes.chunks(STAGE_CHUNK) {
            let mut copy = Vec::new();
            copy.try_reserve_exact(c.len()).ok()?;
            copy.extend_from_slice(c);
            chunks.push(Mutex::new(copy));
        }
        Some(chunks)
    }

    /// Writes a finished program's stores into the staged buffers; an error (which stops the parallel run) when
    /// there is no memory to stage a buffer.
    fn commit(&self, stored: HashMap<u64, u64>) -> Result<(), Fault> {
        let mut writes: Vec<(u64, u64)> = stored.into_iter().collect();
        writes.sort_unstable();
        let mut held: Option<(usize, usize, std::sync::MutexGuard<'_, Vec<u8>>)> = None;
        for (slot, bits) in writes {
            let (id, i) = Memory::split(slot);
            let b = id.0 as usize;
            let n = self.base.buffer(id).elem.bytes() as usize;
            let (chunk, at) = ((i * n) / STAGE_CHUNK, (i * n) % STAGE_CHUNK);
            if held.as_ref().is_none_or(|&(hb, hc, _)| (hb, hc) != (b, chunk)) {
                // Unlock the chunk held before locking the next (writes are sorted, so locks go in one order).
                drop(held.take());
                let Some(chunks) = self.staged[b].get_or_init(|| self.stage(id)) else {
                    let name = &self.base.buffer(id).name;
                    return Err(self.conflict(format!("no memory to stage the stores into buffer `{name}`")));
                };
                held = Some((b, chunk, chunks[chunk].lock().expect("a committing thread panicked")));
            }
            let (_, _, bytes) = held.as_mut().expect("locked above");
            bytes[at..at + n].copy_from_slice(&bits.to_le_bytes()[..n]);
        }
        Ok(())
    }
}

impl Mem<'_> {
    pub(super) fn load(&mut self, addr: u64, elem: ScalarType) -> Result<Val, Fault> {
        match self {
            Mem::Shared(m) => Ok(m.load(addr, elem)?),
            Mem::Lent => unreachable!("a partition runs only while it holds the memory"),
            Mem::Private(p) => {
                let base = p.launch.base;
                let slot = base.slot(addr, elem)?;
                // The ownership entry says whether the program stored the element (only then is it in `stored`).
                let bits = if p.launch.claim_load(slot, p.tag)? { p.stored[&slot] } else { base.raw_at(slot) };
                Ok(base.decode_at(slot, bits, elem))
            }
        }
    }

    pub(super) fn store(&mut self, addr: u64, elem: ScalarType, v: Val) -> Result<(), Fault> {
        match self {
            Mem::Shared(m) => Ok(m.store(addr, elem, v)?),
            Mem::Lent => unreachable!("a partition runs only while it holds the memory"),
            Mem::Private(p) => {
                let base = p.launch.base;
                let slot = base.slot(addr, elem)?;
                let bits = base.encode_at(slot, elem, v);
                let old = if p.launch.claim_store(slot, p.tag)? { p.stored[&slot] } else { base.raw_at(slot) };
                if old != bits {
                    p.changes += 1;
                }
                p.stored.insert(slot, bits);
                Ok(())
            }
        }
    }

    /// An atomic is about to run (at `loc`, in program `pid`): programs that use atomics run one at a time.
    pub(super) fn atomic(&mut self, pid: [u32; 3], loc: Option<Loc>) -> Result<(), Fault> {
        match self {
            Mem::Shared(_) | Mem::Lent => Ok(()),
            Mem::Private(p) => {
                let [x, y, z] = pid;
                let at = loc.map_or(String::new(), |l| format!(" (bytes {}..{} of the source)", l.start, l.end));
                Err(p.launch.conflict(format!("program ({x}, {y}, {z}) runs an atomic{at}")))
            }
        }
    }

    pub(super) fn changes(&self) -> u64 {
        match self {
            Mem::Shared(m) => m.changes(),
            Mem::Private(p) => p.changes,
            Mem::Lent => 0,
        }
    }
}

/// How a parallel run ended.
pub(super) enum Outcome {
    /// Every program ran: the prints in program order (memory updated).
    Done(Vec<String>),
    /// Why the programs must run one at a time (memory as it was).
    Sequential(String),
    /// The caller stopped the run (`Limits::stop`; memory as it was).
    Stopped(InterpError),
}

/// Runs the programs of `grid` on `limits.threads` threads as the module's comment says. Program ids are made
/// from their position as each program starts, and only the prints of programs that printed are kept, so a large
/// grid costs no memory up front.
pub(super) fn run(func: &Func, env: &[Option<Value>], grid: [u32; 3], mem: &mut Memory, limits: &Limits) -> Outcome {
    let programs = budget::program_count(grid);
    if programs >= (WRITTEN - 1) as u64 {
        return Outcome::Sequential(format!(
            "{programs} programs are too many to run in parallel: programs ran one at a time"
        ));
    }
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(limits.threads).build() {
        Ok(pool) => pool,
        Err(e) => {
            return Outcome::Sequential(format!(
                "no threads to run programs in parallel ({e}): programs ran one at a time"
            ));
        }
    };
    let base: &Memory = mem;
    let buffers = base.buffer_count();
    let launch = Launch {
        base,
        grid,
        owners: (0..buffers).map(|_| OnceLock::new()).collect(),
        staged: (0..buffers).map(|_| OnceLock::new()).collect(),
        conflict: OnceLock::new(),
        failed: AtomicBool::new(false),
        interrupted: OnceLock::new(),
    };
    let logs: Vec<Vec<String>> = pool.install(|| {
        (0..programs as usize)
            .into_par_iter()
            .map(|n| {
                // `None` ends the iteration early (a stopped launch does not walk the rest of a large grid);
                // `Some(None)`: the program printed nothing.
                if launch.stopped() {
                    return None;
                }
                let mut prog = Program {
                    f: func,
                    env: env.to_vec(),
                    mem: Mem::Private(Private {
                        launch: &launch,
                        tag: n as u32 + 1,
                        stored: HashMap::new(),
                        changes: 0,
                    }),
                    grid,
                    pid: budget::program_at(grid, n as u64),
                    log: Vec::new(),
                    smem: Default::default(),
                    limits: limits.clone(),
                    iterations: 0,
                    smem_writes: 0,
                    work: 0,
                    task: None,
                };
                let ran = prog.region(func.body, &[]);
                let Mem::Private(p) = prog.mem else { unreachable!("a private view") };
                match ran {
                    Ok(_) if !launch.stopped() => match launch.commit(p.stored) {
                        Ok(()) => Some((!prog.log.is_empty()).then_some(prog.log)),
                        Err(_) => None,
                    },
                    Ok(_) => None,
                    Err(e) if e.interrupted() => {
                        let _ = launch.interrupted.set(e);
                        None
                    }
                    Err(_) => {
                        launch.failed.store(true, Ordering::Relaxed);
                        None
                    }
                }
            })
            .while_some()
            .flatten()
            .collect()
    });
    if let Some(e) = launch.interrupted.into_inner() {
        return Outcome::Stopped(e);
    }
    if let Some(why) = launch.conflict.into_inner() {
        return Outcome::Sequential(why);
    }
    if launch.failed.into_inner() {
        return Outcome::Sequential("a program failed: programs ran again one at a time".into());
    }
    for (b, staged) in launch.staged.into_iter().enumerate() {
        if let Some(Some(chunks)) = staged.into_inner() {
            for (c, chunk) in chunks.into_iter().enumerate() {
                let bytes = chunk.into_inner().expect("a committing thread panicked");
                mem.set_bytes_at(BufferId(b as u32), c * STAGE_CHUNK, &bytes);
            }
        }
    }
    Outcome::Done(logs.into_iter().flatten().collect())
}
