//! The facade's one error type: why compiling or running a kernel failed, whichever entry point was called.

use std::fmt;

use tessel_interp::InterpError;

/// Why compiling or running a kernel failed.
#[derive(Debug)]
pub enum Error {
    /// The source does not parse or the kernel does not elaborate; the diagnostic is rendered against the
    /// source (file name `<source>`).
    Compile(String),
    /// Layout assignment or code generation does not handle the kernel (yet): what is missing.
    Codegen(String),
    /// The kernel needs more shared memory than one CTA may have on the target: the bytes it needs and the
    /// capacity, and code generation's message (which says what takes the space). Python raises it as Triton's
    /// `OutOfResources` (a `CompilationError` too).
    OutOfSharedMemory { message: String, needed: u32, capacity: u32 },
    /// The CUDA driver failed (no GPU, JIT error, launch failure).
    Gpu(String),
    /// The kernel failed while running in the interpreter (out-of-bounds access, failed `device_assert`, ...).
    Run(InterpError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Compile(rendered) => f.write_str(rendered),
            Error::Codegen(m) | Error::OutOfSharedMemory { message: m, .. } => write!(f, "cannot generate code: {m}"),
            Error::Gpu(m) => write!(f, "GPU: {m}"),
            Error::Run(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}
