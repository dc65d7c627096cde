//! What the scheduler reports, as data: [`SchedError`] when it cannot do its work (a `warp_specialize` whose
//! partitions do not fit the CTA, [`PartitionError`], or an internal failure), and [`AsWritten`], why a loop is
//! not pipelined (which `--emit sched` prints; the loop still runs).

use std::fmt;

use tessel_tile::ir::{OpId, ValueId};
use tessel_tile::layout::shared_views::ViewError;
use tessel_tile::target::{Exhausted, Resource};
use tessel_tile::tma::TmaError;
use tessel_tile::types::Type;

/// Why scheduling failed.
#[derive(Clone, Debug, PartialEq)]
pub enum SchedError {
    /// A `warp_specialize` whose partitions ask for more than a CTA has.
    Partitions(PartitionError),
    /// A buffer that is not a memdesc (an internal error).
    NotAMemDesc(Type),
    /// A ring's or view's layout that is no layout (an internal error).
    Layout(tessel_layouts::LayoutError),
    View(Box<ViewError>),
    /// A descriptor's block without a TMA copy (an internal error: layout assignment leaves only those it has).
    Tma(TmaError),
    /// A TMA access (`desc_load` when `load`) of a value that is no descriptor.
    NotADescriptor {
        load: bool,
    },
    /// A loop that is the last op of its region (an internal error: a region ends in its terminator).
    LoopLast(OpId),
}

impl SchedError {
    /// The CTA resource the kernel asks too much of, if that is what went wrong.
    pub fn exhausted(&self) -> Option<Exhausted> {
        match self {
            SchedError::Partitions(p) => p.exhausted(),
            _ => None,
        }
    }
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedError::Partitions(e) => write!(f, "{e}"),
            SchedError::NotAMemDesc(t) => write!(f, "{t} is not a memdesc"),
            SchedError::Layout(e) => write!(f, "{e}"),
            SchedError::View(e) => write!(f, "{e}"),
            SchedError::Tma(e) => write!(f, "{e}"),
            SchedError::NotADescriptor { load: true } => f.write_str("desc_load of a non-descriptor"),
            SchedError::NotADescriptor { load: false } => f.write_str("desc_store to a non-descriptor"),
            SchedError::LoopLast(o) => write!(f, "loop {o} is the last op of its region"),
        }
    }
}

impl std::error::Error for SchedError {}

impl From<PartitionError> for SchedError {
    fn from(e: PartitionError) -> SchedError {
        SchedError::Partitions(e)
    }
}

impl From<TmaError> for SchedError {
    fn from(e: TmaError) -> SchedError {
        SchedError::Tma(e)
    }
}

/// Why the partitions of a `warp_specialize` cannot be placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartitionError {
    NotWarpSpecialize(OpId),
    /// More warps than a CTA can have (32).
    Warps {
        needed: u32,
    },
    /// The workers' registers (`asked` per thread) exceed the `pool` the CTA starts with (`entry` per thread over
    /// `threads` threads).
    Registers {
        asked: Vec<u32>,
        needed: u32,
        pool: u32,
        entry: u32,
        threads: u32,
    },
    /// What the workers leave the default partition is below `setmaxnreg`'s minimum of 24 per thread: the CTA's
    /// `pool` of registers would need to be `needed`.
    DefaultRegisters {
        asked: Vec<u32>,
        left: u32,
        needed: u32,
        pool: u32,
    },
}

/// The warps a CTA may have.
pub const MAX_WARPS: u32 = 32;

impl PartitionError {
    /// The CTA resource the partitions ask too much of.
    pub fn exhausted(&self) -> Option<Exhausted> {
        match self {
            PartitionError::Warps { needed } => {
                Some(Exhausted { resource: Resource::Warps, needed: *needed, capacity: MAX_WARPS })
            }
            PartitionError::Registers { needed, pool, .. } | PartitionError::DefaultRegisters { needed, pool, .. } => {
                Some(Exhausted { resource: Resource::Registers, needed: *needed, capacity: *pool })
            }
            PartitionError::NotWarpSpecialize(_) => None,
        }
    }
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionError::NotWarpSpecialize(o) => write!(f, "{o} is not a warp_specialize"),
            PartitionError::Warps { needed } => {
                write!(f, "warp_specialize needs {needed} warps, more than the {MAX_WARPS} a CTA can have")
            }
            PartitionError::Registers { asked, needed, pool, entry, threads } => write!(
                f,
                "the workers ask for {needed} registers in all ({asked:?} per thread), more than the {pool} the CTA \
                 starts with ({entry} per thread over {threads} threads)"
            ),
            PartitionError::DefaultRegisters { asked, left, .. } => write!(
                f,
                "after the workers take {asked:?} registers per thread, the default partition would have {left}, \
                 fewer than setmaxnreg's minimum of 24"
            ),
        }
    }
}

impl std::error::Error for PartitionError {}

/// Why a loop runs as written instead of pipelined.
#[derive(Clone, Debug, PartialEq)]
pub enum AsWritten {
    NotAFor,
    /// `num_stages` of 1 (or 0).
    Stages(u32),
    /// A gluon kernel: its author writes the schedule.
    Gluon,
    /// The loop holds a loop: only innermost loops are pipelined.
    Nested,
    /// No load the pipeliner can copy; `explicit` when the loop asked for stages, with the loads it passed over.
    NoLoads {
        explicit: bool,
        skipped: Vec<Skipped>,
    },
    /// Op `op` (named `name`) computes what a pipelined load needs but is not pure.
    ImpureStage0 {
        op: OpId,
        name: &'static str,
    },
    /// Op `op` needs the data of load `load` to load.
    NeedsLoadedData {
        op: OpId,
        name: &'static str,
        load: ValueId,
    },
    /// The mask or `other` of a pipelined load depends on loop-carried values (or is one, `carried`).
    CarriedMask {
        value: ValueId,
        carried: bool,
    },
    /// Op `op` uses a value stage 0 computes for a later iteration.
    UsesStage0 {
        op: OpId,
        name: &'static str,
        value: ValueId,
    },
    /// A pointer the loads advance is used after the loop.
    PointerUsedAfter(ValueId),
    /// The loads' loop-carried value is replaced by one from outside the loop.
    CarriedFromOutside(ValueId),
    /// The loop's result (read after it, or its carried value in the body) is computed by the loads' stage, for a
    /// later iteration, and not from the induction variable alone.
    CarriedFromStage0(ValueId),
}

/// A load the pipeliner passed over, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    pub load: ValueId,
    pub why: SkipReason,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SkipReason {
    /// The buffer the dot reads transposed has no permuted view.
    Permute(SchedError),
    /// Accesses narrower than cp.async's 4 bytes.
    Width(u32),
    /// Masked-off elements that are not 0 (cp.async fills them with 0).
    NonZeroOther,
    /// The descriptor's block has no TMA copy.
    Tma(TmaError),
    /// The wgmma stages the tile in another layout than its TMA copy writes.
    StagedLayout,
    /// The dots stage the tile in layouts that are not views of one buffer.
    Views,
    /// No swizzled shared layout holds the tile for its `mma.sync` dot.
    Swizzle(tessel_tile::layout::AssignError),
}

impl fmt::Display for AsWritten {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AsWritten::NotAFor => f.write_str("not a for loop"),
            AsWritten::Stages(n) => write!(f, "num_stages = {n}: the loop runs as written"),
            AsWritten::Gluon => {
                f.write_str("gluon mode: the kernel's author writes the schedule, the loop runs as written")
            }
            AsWritten::Nested => f.write_str("the loop contains a loop: only innermost loops are pipelined"),
            AsWritten::NoLoads { explicit, skipped } => {
                let what =
                    if *explicit { "no load in the loop" } else { "no load in the loop that feeds a tensor-core dot" };
                write!(f, "{what} can be copied with cp.async or TMA")?;
                if !skipped.is_empty() {
                    let skipped: Vec<String> = skipped.iter().map(|s| s.to_string()).collect();
                    write!(f, " ({})", skipped.join("; "))?;
                }
                Ok(())
            }
            AsWritten::ImpureStage0 { op, name } => {
                write!(f, "{op} ({name}) computes what a pipelined load needs but is not a pure op")
            }
            AsWritten::NeedsLoadedData { op, name, load } => {
                write!(f, "{op} ({name}) needs the data of the load {load} to load")
            }
            AsWritten::CarriedMask { value, carried: false } => {
                write!(f, "the mask or `other` {value} of a pipelined load depends on loop-carried values")
            }
            AsWritten::CarriedMask { value, carried: true } => {
                write!(f, "the mask or `other` {value} of a pipelined load is loop-carried")
            }
            AsWritten::UsesStage0 { op, name, value } => {
                write!(f, "{op} ({name}) uses {value}, which the pipelined loads' stage computes for a later iteration")
            }
            AsWritten::PointerUsedAfter(v) => {
                write!(f, "the loop's result {v} (a pointer the loads advance) is used after the loop")
            }
            AsWritten::CarriedFromOutside(v) => {
                write!(f, "the loads' loop-carried {v} is replaced by a value from outside the loop")
            }
            AsWritten::CarriedFromStage0(v) => write!(
                f,
                "the loop carries {v}, which the pipelined loads' stage computes for a later iteration (from more \
                 than the loop index)"
            ),
        }
    }
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.load;
        match &self.why {
            SkipReason::Permute(e) => write!(f, "{v}: {e}"),
            SkipReason::Width(w) => write!(f, "{v}: {w}-byte accesses (cp.async needs 4, 8 or 16)"),
            SkipReason::NonZeroOther => write!(f, "{v}: masked-off elements are not 0 (cp.async fills them with 0)"),
            SkipReason::Tma(e) => write!(f, "{v}: {e}"),
            SkipReason::Views => write!(f, "{v}: its dots stage it in layouts that are not views of one buffer"),
            SkipReason::Swizzle(e) => write!(f, "{v}: no shared layout for its mma.sync operand: {e}"),
            SkipReason::StagedLayout => {
                write!(f, "{v}: the wgmma stages it in another layout than its TMA copy writes")
            }
        }
    }
}
