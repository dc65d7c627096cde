//! The facade's one error type: why compiling or running a kernel failed, whichever entry point was called. Each
//! variant carries the error of the crate that reported it, so the CLI and Python choose their exit status and
//! exception class by the variant, never by the message.

use std::fmt;

use tessel_codegen::CompileError;
use tessel_interp::InterpError;
use tessel_runtime::RuntimeError;
use tessel_sched::SchedError;
use tessel_tile::Target;
use tessel_tile::layout::AssignError;
use tessel_tile::target::Exhausted;
use tessel_tile::verify::VerifyError;

/// Why compiling or running a kernel failed.
#[derive(Debug)]
pub enum Error {
    /// The source does not parse or the kernel does not elaborate; the diagnostic is rendered against the
    /// source (file name `<source>`).
    Compile(String),
    /// Layout assignment refuses the kernel (a gluon kernel's written layouts, a launch option out of range...).
    Layout(AssignError),
    /// Code generation does not handle the kernel (yet): what is missing.
    Codegen(CompileError),
    /// The kernel needs more of a per-CTA resource than the target has: which (shared memory, registers, warps),
    /// how much against the capacity, and the message of the stage that found it (which says what takes it).
    /// Python raises it as Triton's `OutOfResources` (a `CompilationError` too).
    OutOfResources { exhausted: Exhausted, message: String },
    /// A stage broke the IR or failed on IR it must take: a bug of tessel, not of the kernel.
    Internal(Internal),
    /// The CUDA driver, `ptxas` or a launch's tensor maps failed.
    Gpu(RuntimeError),
    /// A GPU of compute capability `major.minor`, older than tessel's oldest target (sm_80).
    UnsupportedDevice { major: i32, minor: i32 },
    /// Code for `target` asked of a device of architecture `device` (an `a` target's PTX runs only on its own).
    WrongTarget { target: Target, device: Target },
    /// The kernel failed while running in the interpreter (out-of-bounds access, failed `device_assert`, ...).
    Run(InterpError),
}

/// Where tessel itself failed.
#[derive(Debug)]
pub enum Internal {
    /// The IR does not verify after a stage (`canonicalize`, `pipelining`).
    Verify { after: &'static str, error: VerifyError },
    /// The software pipeliner failed on a loop it planned.
    Pipeliner(SchedError),
    /// The descriptor accesses left after the pipeliner did not lower to TMA copies.
    TmaCopies(SchedError),
}

impl Error {
    /// The error of the software pipeliner (`tessel_sched::pipeline`): a `warp_specialize` asking for more than
    /// the CTA has is the kernel's; anything else is tessel's.
    pub(crate) fn from_sched(e: SchedError) -> Error {
        match e.exhausted() {
            Some(exhausted) => Error::OutOfResources { exhausted, message: e.to_string() },
            None => Error::Internal(Internal::Pipeliner(e)),
        }
    }

    /// The error of code generation: the resource it ran out of, or what it does not handle.
    pub(crate) fn from_codegen(e: CompileError) -> Error {
        match e.exhausted() {
            Some(exhausted) => Error::OutOfResources { exhausted, message: e.to_string() },
            None => Error::Codegen(e),
        }
    }
}

impl Error {
    /// Why no code could be generated, when that is what failed (layout assignment, code generation, a resource, an
    /// internal error): the reason, without the `cannot generate code: ` that `Display` puts first.
    pub fn no_code(&self) -> Option<String> {
        match self {
            Error::Layout(e) => Some(format!("layout assignment: {e}")),
            Error::Codegen(e) => Some(e.to_string()),
            Error::OutOfResources { message, .. } => Some(message.clone()),
            Error::Internal(e) => Some(format!("internal error: {e}")),
            _ => None,
        }
    }
}

impl Error {
    /// What failed with the GPU, when that is what failed (the driver, `ptxas`, a tensor map, a device tessel
    /// cannot use): the reason, without the `GPU: ` that `Display` puts first.
    pub fn gpu_failure(&self) -> Option<String> {
        match self {
            Error::Gpu(e) => Some(e.to_string()),
            Error::UnsupportedDevice { major, minor } => {
                Some(format!("compute capability {major}.{minor}: tessel needs sm_80 or newer"))
            }
            Error::WrongTarget { target, device } => Some(format!("{target} code cannot run on this {device} device")),
            _ => None,
        }
    }
}

impl fmt::Display for Internal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Internal::Verify { after, error } => write!(f, "the IR does not verify after {after}: {error}"),
            Internal::Pipeliner(e) => write!(f, "the software pipeliner failed: {e}"),
            Internal::TmaCopies(e) => write!(f, "lowering descriptor accesses to TMA: {e}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Compile(rendered) => f.write_str(rendered),
            Error::Run(e) => write!(f, "{e}"),
            Error::Layout(_) | Error::Codegen(_) | Error::OutOfResources { .. } | Error::Internal(_) => {
                write!(f, "cannot generate code: {}", self.no_code().unwrap_or_default())
            }
            Error::Gpu(_) | Error::UnsupportedDevice { .. } | Error::WrongTarget { .. } => {
                write!(f, "GPU: {}", self.gpu_failure().unwrap_or_default())
            }
        }
    }
}

impl std::error::Error for Error {}
