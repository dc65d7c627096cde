//! tessel-codegen owns the way from layout IR to the hardware: the shared-memory allocator and the barrier
//! analysis ([`smem`]), the per-thread lowering of every layout-IR op into PTX (elementwise math, memory ops,
//! reductions and scans, layout conversions, `dot` on CUDA cores, `mma.sync` and `wgmma`, control flow, debug
//! printing, thread-block clusters: CTA ranks in layouts, reductions across CTAs through distributed shared memory),
//! PTX per target (sm_80, sm_90a, sm_100a; [`ptx`]: typed instructions, each opcode a
//! [`ptx::Mnemonic`] enum and its dotted modifiers, printed to text once), and the [`Kernel`] a launch needs (its
//! PTX, launch facts and tensor-map parameters), or a [`CompileError`] naming the op and the [`Cause`] (the resource
//! that ran out, as data). It reads the target and launch configuration from the function
//! and decides nothing about layouts: every tensor arrives with one. It is pure: no CUDA driver, no `ptxas`, no
//! files (but the `TESSEL_PTX_DUMP` debugging aid); assembling, loading, launching and the disk cache are
//! tessel-runtime's.

mod lower;
pub mod ptx;
pub mod smem;

use std::fmt;

use tessel_tile::ir::{Func, OpId, ValueId};
use tessel_tile::layout::shared_access::NotHeld;
use tessel_tile::layout::shared_views::ViewError;
use tessel_tile::target::{ConfigError, Exhausted};
use tessel_tile::tma::TmaError;

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
    /// descriptors the kernel makes, 128 bytes each (for each CTA of a cluster). When nonzero the kernel takes one more parameter after the
    /// tensor maps, the address of `scratch_bytes` × (number of programs) bytes, 128-byte aligned, which the
    /// runtime allocates in the launch's stream order and keeps for the kernel's next launch on that stream.
    pub scratch_bytes: u32,
    /// CTAs per thread-block cluster (`num_ctas`). Above 1 a program is a cluster: the launch's grid is
    /// (programs × `num_ctas`) along x, with the cluster dimension `(num_ctas, 1, 1)` (the entry's
    /// `.reqnctapercluster`).
    pub num_ctas: u32,
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
    /// The block's layout when the host descriptor gives one other than the default
    /// (`tessel_tile::tma::block_in`: its swizzle; `fp4_padded` encodes the map with
    /// `CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B`).
    pub layout: Option<tessel_layouts::NvmmaSharedLayout>,
}

/// Why a kernel could not be compiled: the op it happened in, when known, and the cause.
#[derive(Clone, Debug, PartialEq)]
pub struct CompileError {
    pub at: Option<At>,
    pub cause: Cause,
}

/// The op a compile error happened in: its id, its first result (if it has one) and its name (`%3 = dot`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    pub op: OpId,
    pub result: Option<ValueId>,
    pub name: &'static str,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum Cause {
    /// The kernel needs more of a per-CTA resource than the target has; `detail` says what takes it (each shared
    /// buffer with its size and offset). The compile pipeline may then lower again with choices that take less
    /// (`StoreWaits::Immediate`).
    Exhausted { exhausted: Exhausted, detail: String },
    /// A launch option out of range.
    Config(ConfigError),
    /// A descriptor block without a TMA copy.
    Tma(TmaError),
    /// A shared-memory view without a layout.
    View(Box<ViewError>),
    /// A shared layout that does not hold a tensor it stores or loads.
    NotHeld(NotHeld),
    /// What code generation does not handle (yet), or layouts it cannot lower, in its words: one message per
    /// lowering that refuses, each said once where it is refused.
    Unsupported(String),
}

impl CompileError {
    pub fn new(message: impl Into<String>) -> CompileError {
        Cause::Unsupported(message.into()).into()
    }

    /// The resource the kernel needs more of than a CTA may have, when that is the cause.
    pub fn exhausted(&self) -> Option<Exhausted> {
        match &self.cause {
            Cause::Exhausted { exhausted, .. } => Some(*exhausted),
            _ => None,
        }
    }

    /// Names the op the error happened in (the innermost one, if it names one already).
    pub(crate) fn at(self, f: &Func, o: OpId) -> CompileError {
        if self.at.is_some() {
            return self;
        }
        let data = f.op(o);
        CompileError { at: Some(At { op: o, result: data.results.first().copied(), name: data.op.name() }), ..self }
    }
}

impl From<Cause> for CompileError {
    fn from(cause: Cause) -> CompileError {
        CompileError { at: None, cause }
    }
}

impl From<TmaError> for CompileError {
    fn from(e: TmaError) -> CompileError {
        Cause::Tma(e).into()
    }
}

impl From<ViewError> for CompileError {
    fn from(e: ViewError) -> CompileError {
        Cause::View(Box::new(e)).into()
    }
}

impl From<NotHeld> for CompileError {
    fn from(e: NotHeld) -> CompileError {
        Cause::NotHeld(e).into()
    }
}

impl From<String> for CompileError {
    fn from(message: String) -> CompileError {
        CompileError::new(message)
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Exhausted { detail, .. } => f.write_str(detail),
            Cause::Config(e) => write!(f, "{e}"),
            Cause::Tma(e) => write!(f, "{e}"),
            Cause::View(e) => write!(f, "{e}"),
            Cause::NotHeld(e) => write!(f, "{e}"),
            Cause::Unsupported(m) => f.write_str(m),
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at {
            Some(At { result: Some(r), name, .. }) => write!(f, "in `{r} = {name}`: {}", self.cause),
            Some(At { result: None, name, .. }) => write!(f, "in `{name}`: {}", self.cause),
            None => write!(f, "{}", self.cause),
        }
    }
}

impl std::error::Error for CompileError {}

/// The source text a kernel was elaborated from: the IR's op locations are byte ranges into `text`, which
/// `device_assert` turns into the `file:line` it reports.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

/// The rules of thread-block clusters (`num_ctas` > 1) a kernel of layout IR must keep for code generation:
/// the first op that breaks one (`None`: the kernel as a whole), and why (a target without clusters, an op on a tensor spread over
/// the CTAs that nothing lowers across CTAs yet...). The pipeline reports it at the op's source span;
/// [`compile`] checks it too.
pub fn check_clusters(f: &Func) -> Result<(), (Option<OpId>, String)> {
    lower::cluster::check(f)
}

/// Whether some tensor of `f` (layout IR) is spread over the CTAs of its cluster: code generation then runs the
/// program in every CTA, each doing its part, rather than in the first CTA alone (an auto-mode kernel's).
pub fn spread_over_ctas(f: &Func) -> bool {
    lower::cluster::spread(f)
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
/// `.maxnreg N`) must be in range.
fn check_launch_config(f: &Func) -> Result<(), CompileError> {
    if let Some(n) = f.config.maxnreg
        && !(24..=256).contains(&n)
    {
        return Err(Cause::Config(ConfigError::MaxNReg(n)).into());
    }
    Ok(())
}
