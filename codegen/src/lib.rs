//! tessel-codegen owns the way to the hardware: per-thread lowering of the layout IR, shared-memory allocation,
//! barrier insertion, PTX emission per target (sm_80, sm_90a, sm_100a) and the CUDA runtime (module load, launch,
//! TMA maps, kernel cache). Implemented so far: the PTX builder ([`ptx`]); the lowering ([`compile`]) of
//! elementwise ops over every element type (i1/i8/u8 stored as bytes, fp8 with `cvt` on sm_90a+ and software
//! conversions on sm_80, math routines with libdevice accuracy where PTX has no instruction), memory ops
//! (vectorized, masked), atomics, reductions, scans (registers, lane shuffles, warps through shared memory),
//! `dot` on CUDA cores (FMA, f16/bf16/f32/tf32/f64 and integer), the shape ops that keep data in place
//! (`permute`, `reshape`, `join`, `split`, `cat`), structured control flow, layout conversions (register
//! permutations, warp shuffles, shared-memory round trips), `device_print` (vprintf) and `device_assert`
//! (`__assertfail`); a driver-JIT runtime loaded at run time ([`runtime`]); and the on-disk kernel cache
//! ([`cache`]). Not yet: tensor-core MMAs (mma.sync, wgmma, tcgen05), TMA, mbarriers, f64 `sin`/`cos`/`erf`,
//! float `%`.

pub mod cache;
mod lower;
pub mod ptx;
pub mod runtime;
pub mod smem;

use std::fmt;

use tessel_tile::ir::{Func, OpId};

pub use tessel_tile::Target;

/// A compiled kernel: PTX text for one entry and what a launch needs to know.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub ptx: String,
    pub name: String,
    pub num_warps: u32,
    /// Dynamic shared memory (bytes) to pass at launch.
    pub shared_bytes: u32,
    pub target: Target,
}

/// Why a kernel could not be compiled (an unsupported op or type, inconsistent layouts...).
#[derive(Clone, Debug, PartialEq)]
pub struct CompileError {
    pub message: String,
}

impl CompileError {
    pub fn new(message: impl Into<String>) -> CompileError {
        CompileError { message: message.into() }
    }

    /// Prefixes the op the error happened in.
    pub(crate) fn at(self, f: &Func, o: OpId) -> CompileError {
        if self.message.starts_with("in `") {
            return self;
        }
        let data = f.op(o);
        let res = data.results.first().map(|v| format!("{v} = ")).unwrap_or_default();
        CompileError::new(format!("in `{res}{}`: {}", data.op.name(), self.message))
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CompileError {}

impl From<String> for CompileError {
    fn from(message: String) -> CompileError {
        CompileError::new(message)
    }
}

/// The source text a kernel was elaborated from: the IR's op locations are byte ranges into `text`, which
/// `device_assert` turns into the `file:line` it reports.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

/// Compiles a kernel whose tensors all carry layouts (layout IR) to PTX for its target (`f.target`).
pub fn compile(f: &Func) -> Result<Kernel, CompileError> {
    lower::compile(f, None)
}

/// [`compile`], with the source text the kernel came from (for the locations `device_assert` reports).
pub fn compile_with_source(f: &Func, source: Source) -> Result<Kernel, CompileError> {
    lower::compile(f, Some(source))
}
