//! IR types: scalars, pointers, tensors (with an optional layout), and their textual form.

use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;
use tessel_layouts::{AnyLayout, LinearLayout};

/// A scalar element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    I1,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F8E4M3,
    F8E5M2,
    F16,
    BF16,
    F32,
    F64,
}

use ScalarType::*;

impl ScalarType {
    /// The format the math crate's rounded arithmetic computes this type in: f64 for f64, f32 for the rest
    /// (narrower floats compute in f32 and round to their type afterwards).
    pub fn float_format(self) -> tessel_math::rounding::Format {
        if self == F64 { tessel_math::rounding::Format::F64 } else { tessel_math::rounding::Format::F32 }
    }
}

impl ScalarType {
    pub const ALL: [ScalarType; 15] = [I1, I8, I16, I32, I64, U8, U16, U32, U64, F8E4M3, F8E5M2, F16, BF16, F32, F64];

    pub fn bits(self) -> u32 {
        match self {
            I1 => 1,
            I8 | U8 | F8E4M3 | F8E5M2 => 8,
            I16 | U16 | F16 | BF16 => 16,
            I32 | U32 | F32 => 32,
            I64 | U64 | F64 => 64,
        }
    }

    /// Bytes one element occupies in memory (`i1` is stored as a byte).
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    pub fn is_float(self) -> bool {
        matches!(self, F8E4M3 | F8E5M2 | F16 | BF16 | F32 | F64)
    }

    pub fn is_int(self) -> bool {
        !self.is_float()
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, I8 | I16 | I32 | I64)
    }

    pub fn is_unsigned_int(self) -> bool {
        matches!(self, U8 | U16 | U32 | U64)
    }

    pub fn is_bool(self) -> bool {
        self == I1
    }

    /// The IR spelling (`i32`, `f16`, `f8e4m3`, ...).
    pub fn name(self) -> &'static str {
        match self {
            I1 => "i1",
            I8 => "i8",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            F8E4M3 => "f8e4m3",
            F8E5M2 => "f8e5m2",
            F16 => "f16",
            BF16 => "bf16",
            F32 => "f32",
            F64 => "f64",
        }
    }

    pub fn from_name(s: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The Triton dtype name (`int32`, `float16`, `float8e4nv`, ...).
    pub fn triton_name(self) -> &'static str {
        match self {
            I1 => "int1",
            I8 => "int8",
            I16 => "int16",
            I32 => "int32",
            I64 => "int64",
            U8 => "uint8",
            U16 => "uint16",
            U32 => "uint32",
            U64 => "uint64",
            F8E4M3 => "float8e4nv",
            F8E5M2 => "float8e5",
            F16 => "float16",
            BF16 => "bfloat16",
            F32 => "float32",
            F64 => "float64",
        }
    }

    /// Any of the spellings users write: tessel's (`f32`), Triton's (`float32`, `fp32`, `fp8e4nv`), torch's
    /// (`half`, `float8_e4m3fn`), with or without a `tl.`, `gl.`, `torch.` or `triton.language.` prefix.
    pub fn from_any_name(name: &str) -> Option<ScalarType> {
        let s = ["triton.language.", "torch.", "tl.", "gl."].iter().fold(name, |s, p| s.trim_start_matches(p));
        let alias = match s {
            "fp8e4nv" | "fp8e4m3" => "f8e4m3",
            "fp8e5" | "fp8e5m2" => "f8e5m2",
            "fp16" | "half" => "f16",
            "fp32" | "float" => "f32",
            "fp64" | "double" => "f64",
            other => other,
        };
        ScalarType::from_name(alias).or_else(|| ScalarType::from_triton_name(s))
    }

    pub fn from_triton_name(s: &str) -> Option<ScalarType> {
        let alias = match s {
            "float8_e4m3fn" => "float8e4nv",
            "float8_e5m2" => "float8e5",
            "bool" => "int1",
            other => other,
        };
        ScalarType::ALL.into_iter().find(|t| t.triton_name() == alias)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a pointer points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddrSpace {
    Global,
    Shared,
}

/// The element of a tensor: a scalar or a pointer to a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    Scalar(ScalarType),
    Ptr(ScalarType, AddrSpace),
}

impl Elem {
    pub fn scalar(self) -> Option<ScalarType> {
        match self {
            Elem::Scalar(s) => Some(s),
            Elem::Ptr(..) => None,
        }
    }

    pub fn is_ptr(self) -> bool {
        matches!(self, Elem::Ptr(..))
    }

    /// Bits of one element in registers (pointers are 64-bit).
    pub fn bits(self) -> u32 {
        match self {
            Elem::Scalar(s) => s.bits(),
            Elem::Ptr(..) => 64,
        }
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Elem::Scalar(s) => write!(f, "{s}"),
            Elem::Ptr(s, AddrSpace::Global) => write!(f, "ptr<{s}>"),
            Elem::Ptr(s, AddrSpace::Shared) => write!(f, "ptr<{s}, shared>"),
        }
    }
}

/// A layout attached to a tensor type: the linear layout, and the Gluon spelling it came from when it has
/// one (printed in preference, since that is what the author wrote).
#[derive(Clone, Debug)]
pub struct Layout {
    pub spec: Option<AnyLayout>,
    pub linear: LinearLayout,
}

impl PartialEq for Layout {
    fn eq(&self, other: &Self) -> bool {
        // Two spellings of the same map are the same layout.
        self.linear == other.linear
    }
}

impl Eq for Layout {}

/// Tensor shapes: dims in order, every one a power of two.
pub type Shape = SmallVec<[u32; 4]>;

/// A value's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    /// A scalar or a pointer held uniformly by the program.
    Scalar(Elem),
    /// A tile of elements, with a layout after layout assignment (auto mode) or as written (gluon mode).
    Tensor { shape: Shape, elem: Elem, layout: Option<Arc<Layout>> },
    /// A host-created TMA tensor descriptor for a block of `block_shape`.
    TensorDesc { elem: ScalarType, block_shape: Shape },
    /// A shared-memory buffer holding a tensor of `shape` and `elem`, laid out by a shared layout (its linear
    /// layout maps `offset`, in elements, to the tensor's coordinates). Made by `local_alloc`.
    MemDesc { shape: Shape, elem: ScalarType, layout: Arc<Layout> },
    /// A token of asynchronous work (a group of `async_copy`s): it orders an `async_wait` after the copies.
    Token,
    /// The 128-bit response of a cluster launch control request (`clc_load_result`), held uniformly by the
    /// program; opaque but for what `clc_is_canceled` and `clc_program_id` read from it.
    ClcResult,
}

impl Type {
    pub fn scalar(s: ScalarType) -> Type {
        Type::Scalar(Elem::Scalar(s))
    }

    pub fn ptr(s: ScalarType) -> Type {
        Type::Scalar(Elem::Ptr(s, AddrSpace::Global))
    }

    pub fn tensor(shape: &[u32], elem: Elem) -> Type {
        Type::Tensor { shape: Shape::from_slice(shape), elem, layout: None }
    }

    /// The element (the scalar itself for scalars). `None` for descriptors and shared-memory buffers.
    pub fn elem(&self) -> Option<Elem> {
        match self {
            Type::Scalar(e) | Type::Tensor { elem: e, .. } => Some(*e),
            Type::TensorDesc { .. } | Type::MemDesc { .. } | Type::Token | Type::ClcResult => None,
        }
    }

    pub fn is_memdesc(&self) -> bool {
        matches!(self, Type::MemDesc { .. })
    }

    /// A tensor-memory buffer (Blackwell TMEM): a memdesc laid out by a `TensorMemoryLayout` or (block scales) a
    /// `TensorMemoryScalesLayout`. Its memory space is its layout's kind; every other memdesc is shared memory.
    pub fn is_tmem(&self) -> bool {
        matches!(self, Type::MemDesc { layout, .. }
            if matches!(layout.spec, Some(AnyLayout::TensorMemory(_) | AnyLayout::TensorMemoryScales(_))))
    }

    /// A tensor-memory buffer of block scales: a memdesc laid out by a `TensorMemoryScalesLayout`.
    pub fn is_tmem_scales(&self) -> bool {
        matches!(self, Type::MemDesc { layout, .. } if matches!(layout.spec, Some(AnyLayout::TensorMemoryScales(_))))
    }

    /// A shared-memory buffer's shape, element type and shared layout.
    pub fn memdesc(&self) -> Option<(&[u32], ScalarType, &Layout)> {
        match self {
            Type::MemDesc { shape, elem, layout } => Some((shape, *elem, layout)),
            _ => None,
        }
    }

    /// The shape; empty for scalars.
    pub fn shape(&self) -> &[u32] {
        match self {
            Type::Tensor { shape, .. } | Type::MemDesc { shape, .. } => shape,
            _ => &[],
        }
    }

    pub fn is_tensor(&self) -> bool {
        matches!(self, Type::Tensor { .. })
    }

    pub fn layout(&self) -> Option<&Layout> {
        match self {
            Type::Tensor { layout, .. } => layout.as_deref(),
            _ => None,
        }
    }

    /// The same shape (or scalar-ness) with another element type; the layout is kept.
    pub fn with_elem(&self, elem: Elem) -> Type {
        match self {
            Type::Scalar(_) => Type::Scalar(elem),
            Type::Tensor { shape, layout, .. } => Type::Tensor { shape: shape.clone(), elem, layout: layout.clone() },
            Type::TensorDesc { .. } | Type::MemDesc { .. } | Type::Token | Type::ClcResult => self.clone(),
        }
    }

    /// A tensor's type with another layout (`None`: none yet); any other type unchanged.
    pub fn with_layout(&self, layout: Option<Arc<Layout>>) -> Type {
        match self {
            Type::Tensor { shape, elem, .. } => Type::Tensor { shape: shape.clone(), elem: *elem, layout },
            other => other.clone(),
        }
    }

    /// Number of elements (1 for scalars).
    pub fn numel(&self) -> u64 {
        self.shape().iter().map(|&d| d as u64).product()
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(e) => write!(f, "{e}"),
            Type::Tensor { shape, elem, layout } => {
                f.write_str("tensor<")?;
                for d in shape {
                    write!(f, "{d}x")?;
                }
                write!(f, "{elem}")?;
                if let Some(l) = layout {
                    match &l.spec {
                        Some(spec) => write!(f, ", {spec}")?,
                        None => write!(f, ", {}", linear_spelling(&l.linear))?,
                    }
                }
                f.write_str(">")
            }
            Type::TensorDesc { elem, block_shape } => {
                f.write_str("tensordesc<")?;
                for d in block_shape {
                    write!(f, "{d}x")?;
                }
                write!(f, "{elem}>")
            }
            Type::Token => f.write_str("token"),
            Type::ClcResult => f.write_str("clc_result"),
            Type::MemDesc { shape, elem, layout } => {
                f.write_str("memdesc<")?;
                for d in shape {
                    write!(f, "{d}x")?;
                }
                write!(f, "{elem}, ")?;
                match &layout.spec {
                    Some(spec) => write!(f, "{spec}>"),
                    None => write!(f, "{}>", shared_linear_spelling(&layout.linear)),
                }
            }
        }
    }
}

/// A distributed linear layout in Gluon spelling, for layouts that have no spec of their own.
pub fn linear_spelling(l: &LinearLayout) -> String {
    let dim = |name: &str| {
        let bases: Vec<String> = l
            .bases(name)
            .iter()
            .map(|b| format!("[{}]", b.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")))
            .collect();
        format!("[{}]", bases.join(","))
    };
    let shape: Vec<String> = l.out_dim_sizes().iter().map(|(_, s)| s.to_string()).collect();
    format!(
        "DistributedLinearLayout(reg_bases={}, lane_bases={}, warp_bases={}, block_bases={}, shape=[{}])",
        dim("register"),
        dim("lane"),
        dim("warp"),
        dim("block"),
        shape.join(",")
    )
}

/// A shared linear layout in Gluon spelling, for shared layouts that have no spec of their own.
pub fn shared_linear_spelling(l: &LinearLayout) -> String {
    let bases: Vec<String> = l
        .bases("offset")
        .iter()
        .map(|b| format!("[{}]", b.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")))
        .collect();
    format!("SharedLinearLayout(offset_bases=[{}])", bases.join(","))
}

#[cfg(test)]
mod tests {
    use super::ScalarType::{self, *};

    #[test]
    fn dtype_spellings_of_tessel_triton_and_torch() {
        for (s, t) in [
            ("f32", F32),
            ("float32", F32),
            ("tl.float32", F32),
            ("triton.language.float16", F16),
            ("torch.half", F16),
            ("fp16", F16),
            ("gl.bfloat16", BF16),
            ("fp8e4nv", F8E4M3),
            ("float8_e4m3fn", F8E4M3),
            ("fp8e5", F8E5M2),
            ("bool", I1),
            ("uint8", U8),
            ("double", F64),
        ] {
            assert_eq!(ScalarType::from_any_name(s), Some(t), "{s}");
        }
        assert_eq!(ScalarType::from_any_name("float128"), None);
    }
}
