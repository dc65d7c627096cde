//! What the tests of every crate share around the interpreter: poisoned buffers and a run that panics with the
//! interpreter's error (the IR helpers are `tessel_tile::testing`).

use tessel_tile::ir::Func;
use tessel_tile::types::ScalarType;

use crate::memory::{BufferId, Memory};
use crate::{Arg, run};

/// A buffer filled with NaN (floats) or a sentinel (ints): what is not written shows.
pub fn poisoned(mem: &mut Memory, name: &str, t: ScalarType, n: usize) -> BufferId {
    let fill = if t.is_float() { f64::NAN } else { -7.0 };
    mem.alloc_from(name, t, &vec![fill; n])
}

/// Runs `f` in the interpreter, panicking with its error; returns the printed lines.
pub fn interpret(f: &Func, args: &[Arg], grid: [u32; 3], mem: &mut Memory) -> Vec<String> {
    run(f, args, grid, mem).unwrap_or_else(|e| panic!("interpreter: {e}"))
}
