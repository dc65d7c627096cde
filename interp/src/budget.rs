//! What one run may spend, and how it is stopped: the grid CUDA could launch, the programs' ids in grid order
//! (computed from a position, never listed: a grid of 2^31 programs costs nothing before it runs), each op's cost
//! against the work budget (`Limits::max_work`), and the caller's stop flag (`Limits::stop`: Ctrl-C).

use std::sync::atomic::Ordering;

use super::{Fault, InterpError, Program, R};
use tessel_tile::ir::{OpId, ValueId};
use tessel_tile::ops::Op;
use tessel_tile::types::Type;

/// CUDA's limits on a launch's grid: `gridDim.x` < 2^31, `gridDim.y` and `gridDim.z` < 2^16.
pub const MAX_GRID: [u64; 3] = [(1 << 31) - 1, 65535, 65535];

const AXES: [&str; 3] = ["x", "y", "z"];

/// Why a grid cannot be launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridError {
    /// Fewer than 1 or more than 3 dims.
    Dims(usize),
    /// A dim below 1 along `axis` (0, 1, 2: x, y, z).
    Empty { axis: usize, n: i128 },
    /// More programs along `axis` than CUDA allows ([`MAX_GRID`]).
    TooMany { axis: usize, n: i128 },
}

impl std::fmt::Display for GridError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            GridError::Dims(n) => write!(f, "a grid has 1 to 3 dimensions, got {n}"),
            GridError::Empty { axis, n } => {
                write!(f, "{n} programs along {}: each dimension of a grid must be at least 1", AXES[axis])
            }
            GridError::TooMany { axis, n } => {
                write!(f, "{n} programs along {} is more than CUDA allows ({})", AXES[axis], MAX_GRID[axis])
            }
        }
    }
}

impl std::error::Error for GridError {}

/// Why `n` programs along `axis` (0, 1, 2) cannot be launched, if they cannot: more than CUDA allows.
fn too_many(axis: usize, n: i128) -> Option<GridError> {
    (n > MAX_GRID[axis] as i128).then_some(GridError::TooMany { axis, n })
}

/// A grid as the user gave it (1 to 3 dims, any integers): the `[x, y, z]` CUDA would launch, or why it cannot
/// (a dim below 1, or above [`MAX_GRID`]), naming the axis and the limit.
pub fn check_grid(dims: &[i128]) -> Result<[u32; 3], GridError> {
    if !(1..=3).contains(&dims.len()) {
        return Err(GridError::Dims(dims.len()));
    }
    let mut grid = [1u32; 3];
    for (axis, &n) in dims.iter().enumerate() {
        if n < 1 {
            return Err(GridError::Empty { axis, n });
        }
        if let Some(why) = too_many(axis, n) {
            return Err(why);
        }
        grid[axis] = n as u32;
    }
    Ok(grid)
}

/// Why the interpreter refuses `grid`: a dim above CUDA's limits (a dim of 0 runs no program, as an empty launch).
pub(super) fn grid_error(grid: [u32; 3]) -> Option<GridError> {
    (0..3).find_map(|axis| too_many(axis, grid[axis] as i128))
}

/// How many programs `grid` runs.
pub(super) fn program_count(grid: [u32; 3]) -> u64 {
    grid.iter().map(|&d| d as u64).product()
}

/// The id of program `n` in grid order (x fastest, then y, then z).
pub(super) fn program_at(grid: [u32; 3], n: u64) -> [u32; 3] {
    let (x, y) = (grid[0] as u64, grid[1] as u64);
    [(n % x) as u32, (n / x % y) as u32, (n / (x * y)) as u32]
}

impl Program<'_> {
    /// Whether the caller asked the run to stop (`Limits::stop`).
    pub(super) fn stop_requested(&self) -> bool {
        self.limits.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// The error that ends a program the caller stopped, at `op`.
    pub(super) fn interrupted(&self, op: Option<OpId>) -> InterpError {
        self.error(op, Fault::Interrupted)
    }

    /// The work op `o` does, from its types alone (so that it is charged before it runs): a dot's M·N·K
    /// multiply-adds (times the batch), a TMA copy's block, else the larger of the elements it computes and the
    /// elements of its largest operand (a store's values, a reduction's input). Ops with regions cost nothing
    /// themselves: the ops inside count.
    pub(super) fn op_cost(&self, o: OpId) -> u64 {
        let f = self.f;
        let d = f.op(o);
        // Shared-memory buffers are views of what other ops wrote: only values held in registers count.
        let elements = |v: &ValueId| match f.ty(*v) {
            t @ (Type::Tensor { .. } | Type::Scalar(_)) => t.numel(),
            _ => 1,
        };
        match &d.op {
            Op::For(_) | Op::If | Op::While | Op::Yield | Op::Condition | Op::Return | Op::WarpSpecialize(_) => 0,
            Op::Dot { .. } | Op::WarpGroupDot { .. } => {
                let k = f.ty(d.operands[0]).shape().last().copied().unwrap_or(1) as u64;
                f.ty(d.operands[2]).numel().saturating_mul(k)
            }
            Op::DotScaled { .. } => {
                let k = f.ty(d.operands[5]).shape().last().copied().unwrap_or(1) as u64;
                f.ty(d.operands[4]).numel().saturating_mul(k)
            }
            Op::TmaLoad { .. } | Op::TmaLoadIm2col { .. } | Op::TmaStore | Op::TmaGather { .. } | Op::TmaScatter => {
                d.operands.iter().map(|&v| f.ty(v).numel()).max().unwrap_or(1)
            }
            _ => {
                let made = d.results.iter().map(elements).fold(0u64, u64::saturating_add);
                let read = d.operands.iter().map(elements).max().unwrap_or(0);
                made.max(read).max(1)
            }
        }
    }

    /// Charges `cost` units of work for op `o` before it runs: an error when that would take the program past
    /// `Limits::max_work`.
    pub(super) fn charge(&mut self, o: OpId, cost: u64) -> R<()> {
        let after = self.work.saturating_add(cost);
        if after > self.limits.max_work {
            return Err(self.error(Some(o), Fault::Work { limit: self.limits.max_work, cost, done: self.work }));
        }
        self.work = after;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_checked_against_cuda_limits() {
        assert_eq!(check_grid(&[4]), Ok([4, 1, 1]));
        assert_eq!(check_grid(&[(1 << 31) - 1, 65535, 65535]), Ok([i32::MAX as u32, 65535, 65535]));
        assert_eq!(
            check_grid(&[1 << 31]).unwrap_err().to_string(),
            "2147483648 programs along x is more than CUDA allows (2147483647)"
        );
        assert_eq!(check_grid(&[1, 65536]), Err(GridError::TooMany { axis: 1, n: 65536 }));
        assert_eq!(check_grid(&[1, 1, 1 << 70]), Err(GridError::TooMany { axis: 2, n: 1 << 70 }));
        assert_eq!(
            check_grid(&[0]).unwrap_err().to_string(),
            "0 programs along x: each dimension of a grid must be at least 1"
        );
        assert_eq!(check_grid(&[3, -1]), Err(GridError::Empty { axis: 1, n: -1 }));
        assert_eq!(check_grid(&[]), Err(GridError::Dims(0)));
        assert_eq!(check_grid(&[1, 1, 1, 1]), Err(GridError::Dims(4)));
        assert_eq!(
            grid_error([3, 65536, 1]).unwrap().to_string(),
            "65536 programs along y is more than CUDA allows (65535)"
        );
        assert_eq!(grid_error([3, 0, 1]), None);
    }

    #[test]
    fn program_ids_follow_grid_order() {
        let grid = [3, 2, 4];
        let listed: Vec<[u32; 3]> =
            (0..4).flat_map(|z| (0..2).flat_map(move |y| (0..3).map(move |x| [x, y, z]))).collect();
        let computed: Vec<[u32; 3]> = (0..program_count(grid)).map(|n| program_at(grid, n)).collect();
        assert_eq!(computed, listed);
        let big = [(1 << 31) - 1, 65535, 65535];
        assert_eq!(program_count(big), ((1u64 << 31) - 1) * 65535 * 65535);
        assert_eq!(program_at(big, program_count(big) - 1), [(1 << 31) - 2, 65534, 65534]);
    }
}
