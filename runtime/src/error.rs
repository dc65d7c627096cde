//! The runtime's one error type, and the check of a driver call's result every module shares. Imports nothing of
//! the crate.

use std::fmt;

use cudarc::driver::sys;
use tessel_tile::ScalarType;
use tessel_tile::tma::TmaError;

/// Why the runtime failed.
#[derive(Clone, Debug)]
pub enum RuntimeError {
    /// The CUDA driver: none found, or a call that failed (what was asked, and the driver's answer or log).
    Driver(String),
    /// `ptxas` or the disassembler: not found, failed (with what it printed), or its files.
    Tool(String),
    /// A descriptor whose tensor map cannot be encoded.
    TensorMap(TensorMapError),
    /// What the caller handed over does not fit (PTX with a NUL byte, a buffer of another length).
    Argument(String),
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::Driver(m) | RuntimeError::Tool(m) | RuntimeError::Argument(m) => f.write_str(m),
            RuntimeError::TensorMap(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RuntimeError {}

impl From<cudarc::driver::DriverError> for RuntimeError {
    fn from(e: cudarc::driver::DriverError) -> RuntimeError {
        RuntimeError::Driver(format!("CUDA driver: {e:?}"))
    }
}

impl From<TensorMapError> for RuntimeError {
    fn from(e: TensorMapError) -> RuntimeError {
        RuntimeError::TensorMap(e)
    }
}

pub(crate) fn check(r: sys::CUresult, what: &str) -> Result<(), RuntimeError> {
    if r == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(RuntimeError::Driver(format!("{what}: {r:?}"))) }
}

/// A tensor map that cannot be encoded: whose (the kernel argument its descriptor starts at, `None` for one the
/// kernel makes; an im2col map or a tiled one) and the field at fault.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMapError {
    pub base_arg: Option<u32>,
    pub im2col: bool,
    pub problem: TensorMapProblem,
}

/// What about a descriptor's values TMA cannot take.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorMapProblem {
    /// The block has no TMA copy.
    Block(TmaError),
    /// Shape and strides of another rank than the map's.
    Rank { rank: usize, shape: Vec<i64>, strides: Vec<i64> },
    /// A base address not 16-byte aligned.
    Base(u64),
    /// A last dim that is not contiguous.
    LastStride(Vec<i64>),
    /// A dim outside 1..=2^32.
    Dim { dim: usize, size: i64 },
    /// A stride (of all but the last dim) that is not a positive multiple of 16 bytes.
    Stride { dim: usize, elements: i64, element_bytes: u64 },
    /// NaN padding of a tensor that is not a 16-, 32- or 64-bit float.
    NanPadding(ScalarType),
    /// Pixel-box corners and element strides that do not match the rank.
    Im2colCounts { rank: usize },
    /// A pixel-box corner outside what the map's rank allows.
    Corner { rank: usize, lo: i64, hi: i64, got: i64 },
    /// An element stride outside 1..=8.
    ElementStride(i64),
    /// An im2col block of more pixels than one box.
    Pixels(u32),
    /// The driver refused the encoding.
    Encode { call: &'static str, result: sys::CUresult },
}

impl TensorMapProblem {
    /// The field of the descriptor (or its block) at fault, as `TensorDescriptor` names them.
    pub fn field(&self) -> &'static str {
        match self {
            TensorMapProblem::Block(_) | TensorMapProblem::Pixels(_) => "block_shape",
            TensorMapProblem::Rank { .. } | TensorMapProblem::Dim { .. } => "shape",
            TensorMapProblem::Base(_) => "base",
            TensorMapProblem::LastStride(_) | TensorMapProblem::Stride { .. } => "strides",
            TensorMapProblem::NanPadding(_) => "padding",
            TensorMapProblem::Im2colCounts { .. } | TensorMapProblem::Corner { .. } => "pixel_box",
            TensorMapProblem::ElementStride(_) => "element_strides",
            TensorMapProblem::Encode { .. } => "the tensor map",
        }
    }
}

impl fmt::Display for TensorMapProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorMapProblem::Block(e) => write!(f, "{e}"),
            TensorMapProblem::Rank { rank, shape, strides } => {
                write!(f, "expected {rank} dims, got shape {shape:?} and strides {strides:?}")
            }
            TensorMapProblem::Base(base) => write!(f, "TMA needs a 16-byte aligned base address, got {base:#x}"),
            TensorMapProblem::LastStride(strides) => {
                write!(f, "the last dim must be contiguous (stride 1), got strides {strides:?}")
            }
            TensorMapProblem::Dim { dim, size } => write!(f, "dim {dim} has size {size}; TMA takes 1 to 2^32"),
            TensorMapProblem::Stride { dim, elements, element_bytes } => write!(
                f,
                "TMA needs the strides of all but the last dim to be positive multiples of 16 bytes; stride {dim} is \
                 {elements} elements of {element_bytes} bytes"
            ),
            TensorMapProblem::NanPadding(elem) => {
                write!(f, "NaN padding needs a 16-, 32- or 64-bit float tensor, not {elem}")
            }
            TensorMapProblem::Im2colCounts { rank } => {
                write!(f, "expected {} lower and upper corners and {rank} element strides", rank - 2)
            }
            TensorMapProblem::Corner { rank, lo, hi, got } => {
                write!(f, "a pixel box corner of a rank-{rank} im2col map is within {lo}..={hi}, got {got}")
            }
            TensorMapProblem::ElementStride(e) => write!(f, "element strides are 1 to 8, got {e}"),
            TensorMapProblem::Pixels(n) => write!(f, "an im2col block of {n} pixels is more than one box"),
            TensorMapProblem::Encode { call, result } => write!(f, "{call} failed ({result:?})"),
        }
    }
}

impl fmt::Display for TensorMapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.im2col { "im2col descriptor" } else { "tensor descriptor" };
        let whose =
            self.base_arg.map_or_else(|| "made in the kernel".to_string(), |b| format!("of kernel argument {b}"));
        write!(f, "the {kind} {whose} cannot be copied by TMA: {}", self.problem)
    }
}

impl std::error::Error for TensorMapError {}
