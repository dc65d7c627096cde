//! tessel-codegen owns the way from layout IR to the hardware: the shared-memory allocator and the barrier
//! analysis ([`smem`]), the per-thread lowering of every layout-IR op into PTX (elementwise math, memory ops,
//! reductions and scans, layout conversions, `dot` on CUDA cores, `mma.sync` and `wgmma`, control flow, debug
//! printing), PTX per target (sm_80, sm_90a, sm_100a; [`ptx`]: typed instructions, each opcode a
//! [`ptx::Mnemonic`] enum and its dotted modifiers, printed to text once), and the [`Kernel`] a launch needs (its
//! PTX, launch facts and tensor-map parameters). It reads the target and launch configuration from the function
//! and decides nothing about layouts: every tensor arrives with one. It is pure: no CUDA driver, no `ptxas`, no
//! files (but the `TESSEL_PTX_DUMP` debugging aid); assembling, loading, launching and the disk cache are
//! tessel-runtime's.

mod lower;
pub mod ptx;
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
    /// The tensor maps the kernel takes after the IR's arguments, in order: one 128-byte parameter each, which a
    /// launch encodes from the host descriptor's arguments (or, for a descriptor the kernel makes, as a
    /// template).
    pub tensor_maps: Vec<TensorMapArg>,
    /// Bytes of global scratch memory each program needs (Triton's `global_scratch`): the tensor maps of the
    /// descriptors the kernel makes, 128 bytes each. When nonzero the kernel takes one more parameter after the
    /// tensor maps, the address of `scratch_bytes` × (number of programs) bytes, 128-byte aligned, which the
    /// runtime allocates in the launch's stream order and keeps for the kernel's next launch on that stream.
    pub scratch_bytes: u32,
}

/// A tensor-map parameter: what the map's encoding follows from (`tessel_tile::tma::block` of the element type
/// and block shape; zero or NaN padding) and where its tensor comes from: the host descriptor whose arguments
/// start at IR argument `base_arg` (base pointer, then shape and strides, as the elaborator binds a
/// `TensorDescriptor`), or, for `base_arg: None`, a descriptor the kernel makes: the launch encodes the map over
/// a stand-in tensor and the kernel copies it into its scratch and replaces the address, dims and strides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapArg {
    pub base_arg: Option<u32>,
    pub elem: tessel_tile::ScalarType,
    pub block_shape: Vec<u32>,
    pub nan_padding: bool,
    /// An im2col map (`cuTensorMapEncodeIm2col`): the rank of its tensor, whose arguments follow the base as
    /// `ArgSpec::TensorDescIm2col` binds them; the block is `[pixels, channels]`. `None`: a tiled map.
    pub im2col_rank: Option<u32>,
}

/// Why a kernel could not be compiled (an unsupported op or type, inconsistent layouts...).
#[derive(Clone, Debug, PartialEq)]
pub struct CompileError {
    pub message: String,
    /// Set when the kernel needs more shared memory than a CTA may have: (bytes needed, capacity). The compile
    /// pipeline may then lower again with choices that take less (`StoreWaits::Immediate`).
    pub shared_memory: Option<(u32, u32)>,
}

impl CompileError {
    pub fn new(message: impl Into<String>) -> CompileError {
        CompileError { message: message.into(), shared_memory: None }
    }

    /// Prefixes the op the error happened in.
    pub(crate) fn at(self, f: &Func, o: OpId) -> CompileError {
        if self.message.starts_with("in `") {
            return self;
        }
        let data = f.op(o);
        let res = data.results.first().map(|v| format!("{v} = ")).unwrap_or_default();
        CompileError { message: format!("in `{res}{}`: {}", data.op.name(), self.message), ..self }
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
    check_launch_config(f)?;
    lower::compile(f, None).inspect(|k| dump_ptx(f, None, k))
}

/// [`compile`], with the source text the kernel came from (for the locations `device_assert` reports).
pub fn compile_with_source(f: &Func, source: Source) -> Result<Kernel, CompileError> {
    check_launch_config(f)?;
    lower::compile(f, Some(source)).inspect(|k| dump_ptx(f, Some(source.text), k))
}

/// With `TESSEL_PTX_DUMP=DIR` set, writes each kernel's PTX to `DIR/NAME-HASH.ptx`, HASH being an FNV-1a hash of
/// the layout IR it was compiled from (printed, with its target and launch config) and of the source text its
/// locations point into (`device_assert` prints them). The names depend only on the input, so running a test
/// suite on two commits and `diff -r` of the two directories shows every kernel whose PTX a change altered
/// (docs/testing.md, "PTX corpus"). Failures to write are ignored: this is a debugging aid, off unless asked for.
fn dump_ptx(f: &Func, source: Option<&str>, k: &Kernel) {
    let Some(dir) = std::env::var_os("TESSEL_PTX_DUMP") else { return };
    let key =
        format!("{:?}\n{:?}\n{}\n{}", f.target, f.config, tessel_tile::print::print_func(f), source.unwrap_or(""));
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let dir = std::path::Path::new(&dir);
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(dir.join(format!("{}-{hash:016x}.ptx", k.name)), &k.ptx);
}

/// Checks the parts of the launch configuration the code does not read: `maxnreg` (printed by the entry as
/// `.maxnreg N`) must be in range, and `num_ctas` > 1 (thread-block clusters) is refused: nothing lowers clusters
/// yet.
fn check_launch_config(f: &Func) -> Result<(), CompileError> {
    if f.config.num_ctas != 1 {
        return Err(CompileError::new(format!(
            "num_ctas = {}: thread-block clusters are not implemented; launch with num_ctas=1",
            f.config.num_ctas
        )));
    }
    if let Some(n) = f.config.maxnreg
        && !(24..=256).contains(&n)
    {
        return Err(CompileError::new(format!("maxnreg must be in 24..=256, got {n}")));
    }
    Ok(())
}
