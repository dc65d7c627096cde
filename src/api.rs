//! The library entry points: compile a kernel from source, and run it in the interpreter.
//!
//! ```
//! use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
//! use tessel::tile::interp::{Arg, memory::Memory};
//! use tessel::tile::ScalarType::F32;
//!
//! let source = std::fs::read_to_string("examples/vector_add.py").unwrap();
//! let p = ArgSpec::Pointer(F32, true);
//! let spec = Specialization::new(vec![p.clone(), p.clone(), p, ArgSpec::Int(tessel::tile::ScalarType::I32, false),
//!     ArgSpec::Constexpr(ConstValue::Int(256))]);
//! let mut mem = Memory::new();
//! let (x, y, out) = (mem.alloc_from("x", F32, &[1.0; 1000]), mem.alloc_from("y", F32, &[2.0; 1000]), mem.alloc("out", F32, 1000));
//! let args = [Arg::Buffer(x), Arg::Buffer(y), Arg::Buffer(out), Arg::Int(1000)];
//! tessel::interpret(&source, "add_kernel", &spec, &args, [4, 1, 1], &mut mem).unwrap();
//! assert_eq!(mem.read_f64(out), vec![3.0; 1000]);
//! ```

use std::fmt;

use tessel_lang::elab::Specialization;
use tessel_tile::Func;
use tessel_tile::interp::memory::Memory;
use tessel_tile::interp::{Arg, InterpError};

/// Why compiling or running a kernel failed.
#[derive(Debug)]
pub enum Error {
    /// The source does not parse or the kernel does not elaborate; the diagnostic is rendered against the
    /// source (file name `<source>`).
    Compile(String),
    /// The kernel failed while running (out-of-bounds access, failed `device_assert`, ...).
    Run(InterpError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Compile(rendered) => f.write_str(rendered),
            Error::Run(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

/// Parses `source`, elaborates `kernel` for `spec` and canonicalizes the result: the tile IR.
pub fn compile(source: &str, kernel: &str, spec: &Specialization) -> Result<Func, Error> {
    let render = |d: tessel_lang::Diagnostic| Error::Compile(d.render("<source>", source));
    let module = tessel_lang::parse_module(source).map_err(render)?;
    let mut func = tessel_lang::elab::elaborate(&module, kernel, spec).map_err(render)?;
    tessel_tile::passes::canonicalize(&mut func);
    Ok(func)
}

/// Compiles `kernel` and runs it in the reference interpreter over `grid`; `args` are the values of the
/// non-constexpr parameters, in order, where a tensor-descriptor parameter of rank r takes `1 + 2r` values
/// (base buffer, shape, strides: see `ArgSpec::ir_args`). Returns the lines `device_print` printed.
pub fn interpret(
    source: &str,
    kernel: &str,
    spec: &Specialization,
    args: &[Arg],
    grid: [u32; 3],
    mem: &mut Memory,
) -> Result<Vec<String>, Error> {
    let func = compile(source, kernel, spec)?;
    tessel_tile::interp::run(&func, args, grid, mem).map_err(Error::Run)
}
