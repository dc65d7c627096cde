//! The operations of the tile IR and their attributes.
//!
//! Each op has a textual name and a list of attributes; [`Op::name`], [`Op::attrs`] and [`Op::from_parts`]
//! convert between the typed form and the generic `name {key = value, ...}` form the printer and parser use,
//! so the two cannot drift apart. What each op is (its name, effects, layout kind, whether it works on shared
//! memory, is a view or ends a region) is the one table of [`crate::op_facts`].

use std::fmt;

use tessel_math::bessel::bessel_n;
use tessel_math::rounding::{Arith, Dir};

/// A compile-time attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// A bare word: `cg`, `lt`, `ieee`.
    Word(String),
    Ints(Vec<i64>),
}

impl fmt::Display for Attr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Attr::Int(v) => write!(f, "{v}"),
            Attr::Float(v) => write!(f, "{}", fmt_float(*v)),
            Attr::Bool(v) => write!(f, "{v}"),
            Attr::Str(s) => write!(f, "{s:?}"),
            Attr::Word(w) => f.write_str(w),
            Attr::Ints(v) => {
                let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                write!(f, "[{}]", parts.join(", "))
            }
        }
    }
}

/// Floats print so that they parse back to the same bits (`1.0`, `inf`, `nan`, `1e-30`).
pub fn fmt_float(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else if v == v.trunc() && v.abs() < 1e16 {
        format!("{v:.1}")
    } else {
        format!("{v:?}")
    }
}

/// Elementwise binary arithmetic. Integer semantics follow the operand type: `div`/`rem` truncate toward zero
/// for signed integers (C semantics, as Triton), `shr` is arithmetic for signed and logical for unsigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    /// `maximum`/`minimum`: for floats, NaN-propagating only when `propagate_nan` is set on the op.
    Max,
    Min,
    /// High 32 (or 64) bits of the full product.
    UMulHi,
    /// The high half of the signed full product (libdevice's `mulhi`, `mul64hi`).
    MulHi,
    /// Float division rounded to nearest (`div_rn`); plain `Div` on floats may be approximate.
    DivRn,
    Pow,
    /// libdevice's `atan2(y, x)` and `hypot(x, y)` (floats).
    Atan2,
    Hypot,
    /// 1/√(x² + y²) (libdevice's `rhypot`).
    Rhypot,
    /// libdevice's `fmod`: C's exact remainder (float `Rem` is Triton's `%`, which is not exact).
    Fmod,
    /// libdevice's rounded arithmetic (`add_rn`, `add_rz`, ..., `div_ru`; f32 and f64): rounded to nearest,
    /// toward zero, down or up, f32 with subnormals flushed (`.ftz`) as libdevice does under Triton.
    /// `DivRnFtz` is libdevice's `div_rn` (and `rcp_rn`), `tl.div_rn` being `DivRn`.
    AddRn,
    SubRn,
    MulRn,
    DivRnFtz,
    /// libdevice's `fast_dividef` (f32): `div.approx.ftz.f32`, x·(1/y) by the hardware's reciprocal (2 ulp).
    DivApprox,
    AddRz,
    AddRd,
    AddRu,
    SubRz,
    SubRd,
    SubRu,
    MulRz,
    MulRd,
    MulRu,
    DivRz,
    DivRd,
    DivRu,
}

/// Elementwise unary math.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    Abs,
    Exp,
    Exp2,
    Log,
    Log2,
    Sqrt,
    SqrtRn,
    Rsqrt,
    Sin,
    Cos,
    Erf,
    Floor,
    Ceil,
    /// The libdevice functions (`triton.language.extra.libdevice`), floats only.
    Tanh,
    Sinh,
    Cosh,
    Tan,
    Asin,
    Acos,
    Atan,
    Asinh,
    Acosh,
    Atanh,
    Log1p,
    Expm1,
    Log10,
    Exp10,
    Cbrt,
    /// sin(πx), cos(πx), 1/∛x, the unbiased exponent as a float, the inverse of erf (libdevice's `sinpi`,
    /// `cospi`, `rcbrt`, `logb`, `erfinv`).
    Sinpi,
    Cospi,
    Rcbrt,
    Logb,
    Erfinv,
    /// erfc and the standard normal CDF, libdevice's correctly rounded `rsqrt_rn` (f32 with `.ftz` reads).
    Erfc,
    Normcdf,
    /// e^(x²)·erfc(x), the inverse of erfc, the inverse of the standard normal CDF (libdevice's `erfcx`,
    /// `erfcinv`, `normcdfinv`).
    Erfcx,
    Erfcinv,
    Normcdfinv,
    /// The modified Bessel functions of the first kind of orders 0 and 1 (libdevice's `cyl_bessel_i0`,
    /// `cyl_bessel_i1`).
    BesselI0,
    BesselI1,
    /// Γ(x) and ln|Γ(x)| (libdevice's `tgamma`, `lgamma`).
    Tgamma,
    Lgamma,
    /// The Bessel functions of the first and second kinds of orders 0 and 1 (libdevice's `j0`, `j1`, `y0`,
    /// `y1`; f32 only so far).
    J0,
    J1,
    Y0,
    Y1,
    RsqrtRnFtz,
    /// libdevice's `rcp64h` (f64): `rcp.approx.ftz.f64`, the hardware's approximate reciprocal.
    Rcp64h,
    /// Round toward zero, to nearest even, to nearest with ties away from zero.
    Trunc,
    Rint,
    Round,
    /// Bit counts of an integer, of its type (libdevice's `popc`, `clz`, `brev`; 32 and 64 bits): set bits,
    /// leading zeros, the bits in reverse order.
    Popc,
    Clz,
    Brev,
    /// The hardware's approximations libdevice's `fast_*f` functions use (f32): `lg2.approx.ftz`,
    /// `sin.approx.ftz`, `cos.approx.ftz`; and `saturatef`, `cvt.ftz.sat` (clamped to [0, 1], NaN to 0).
    Lg2Approx,
    SinApprox,
    CosApprox,
    Saturate,
    /// libdevice's square root rounded to nearest, toward zero, down or up (f32 with `.ftz`, and f64);
    /// `tl.sqrt_rn` is `SqrtRn`.
    SqrtRnFtz,
    SqrtRz,
    SqrtRd,
    SqrtRu,
}

impl BinOp {
    /// The operation and direction of a libdevice rounded-arithmetic op (`add_rz`, `mul_rn`...).
    pub fn directed(self) -> Option<(Arith, Dir)> {
        use BinOp::*;
        Some(match self {
            AddRn => (Arith::Add, Dir::Nearest),
            AddRz => (Arith::Add, Dir::Zero),
            AddRd => (Arith::Add, Dir::Down),
            AddRu => (Arith::Add, Dir::Up),
            SubRn => (Arith::Sub, Dir::Nearest),
            SubRz => (Arith::Sub, Dir::Zero),
            SubRd => (Arith::Sub, Dir::Down),
            SubRu => (Arith::Sub, Dir::Up),
            MulRn => (Arith::Mul, Dir::Nearest),
            MulRz => (Arith::Mul, Dir::Zero),
            MulRd => (Arith::Mul, Dir::Down),
            MulRu => (Arith::Mul, Dir::Up),
            DivRnFtz => (Arith::Div, Dir::Nearest),
            DivRz => (Arith::Div, Dir::Zero),
            DivRd => (Arith::Div, Dir::Down),
            DivRu => (Arith::Div, Dir::Up),
            _ => return None,
        })
    }
}

impl UnOp {
    /// The direction of libdevice's rounded square root (`sqrt_rn`, `sqrt_rz`...).
    pub fn directed(self) -> Option<Dir> {
        match self {
            UnOp::SqrtRnFtz => Some(Dir::Nearest),
            UnOp::SqrtRz => Some(Dir::Zero),
            UnOp::SqrtRd => Some(Dir::Down),
            UnOp::SqrtRu => Some(Dir::Up),
            _ => None,
        }
    }
}

/// Comparison predicates; signedness and ordering come from the operand type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpPred {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Max,
    Min,
    And,
    Or,
    Xor,
    Xchg,
}

/// How `dot` rounds its float32 inputs: `ieee` keeps them, `tf32` rounds to tf32 (Triton's default on
/// CUDA), `tf32x3` splits each into a tf32 pair for near-fp32 accuracy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputPrecision {
    Ieee,
    Tf32,
    Tf32x3,
}

macro_rules! word_enum {
    ($ty:ident { $($variant:ident => $word:literal),* $(,)? }) => {
        impl $ty {
            pub fn word(self) -> &'static str {
                match self { $($ty::$variant => $word),* }
            }
            pub fn from_word(w: &str) -> Option<$ty> {
                match w { $($word => Some($ty::$variant),)* _ => None }
            }
            pub const WORDS: &'static [&'static str] = &[$($word),*];
        }
    };
}

word_enum!(BinOp { Add => "add", Sub => "sub", Mul => "mul", Div => "div", Rem => "rem", And => "and", Or => "or",
    Xor => "xor", Shl => "shl", Shr => "shr", Max => "max", Min => "min", UMulHi => "umulhi", MulHi => "mulhi", DivRn => "div_rn",
    Pow => "pow", Atan2 => "atan2", Hypot => "hypot", Rhypot => "rhypot",
    Fmod => "fmod", AddRn => "add_rn", SubRn => "sub_rn", MulRn => "mul_rn", DivRnFtz => "div_rn_ftz", DivApprox => "div_approx",
    AddRz => "add_rz", AddRd => "add_rd", AddRu => "add_ru", SubRz => "sub_rz", SubRd => "sub_rd",
    SubRu => "sub_ru", MulRz => "mul_rz", MulRd => "mul_rd", MulRu => "mul_ru", DivRz => "div_rz", DivRd => "div_rd",
    DivRu => "div_ru" });
word_enum!(UnOp { Neg => "neg", Not => "not", Abs => "abs", Exp => "exp", Exp2 => "exp2", Log => "log",
    Log2 => "log2", Sqrt => "sqrt", SqrtRn => "sqrt_rn", Rsqrt => "rsqrt", Sin => "sin", Cos => "cos",
    Erf => "erf", Floor => "floor", Ceil => "ceil", Tanh => "tanh", Sinh => "sinh", Cosh => "cosh", Tan => "tan",
    Asin => "asin", Acos => "acos", Atan => "atan", Asinh => "asinh", Acosh => "acosh", Atanh => "atanh",
    Log1p => "log1p", Expm1 => "expm1", Log10 => "log10", Exp10 => "exp10", Cbrt => "cbrt", Sinpi => "sinpi", Cospi => "cospi",
    Rcbrt => "rcbrt", Logb => "logb", Erfinv => "erfinv", Erfc => "erfc", Normcdf => "normcdf",
    Erfcx => "erfcx", Erfcinv => "erfcinv", Normcdfinv => "normcdfinv",
    BesselI0 => "cyl_bessel_i0", BesselI1 => "cyl_bessel_i1",
    Tgamma => "tgamma", Lgamma => "lgamma", J0 => "j0", J1 => "j1", Y0 => "y0", Y1 => "y1",
    RsqrtRnFtz => "rsqrt_rn_ftz", Rcp64h => "rcp64h", Trunc => "trunc",
    Rint => "rint", Round => "round", Popc => "popc", Clz => "clz", Brev => "brev", Lg2Approx => "lg2_approx",
    SinApprox => "sin_approx", CosApprox => "cos_approx", Saturate => "saturate", SqrtRnFtz => "sqrt_rn_ftz", SqrtRz => "sqrt_rz", SqrtRd => "sqrt_rd", SqrtRu => "sqrt_ru" });
word_enum!(CmpPred { Eq => "eq", Ne => "ne", Lt => "lt", Le => "le", Gt => "gt", Ge => "ge" });
word_enum!(AtomicOp { Add => "add", Max => "max", Min => "min", And => "and", Or => "or", Xor => "xor",
    Xchg => "xchg" });
word_enum!(InputPrecision { Ieee => "ieee", Tf32 => "tf32", Tf32x3 => "tf32x3" });
word_enum!(MxFormat { E4m3 => "e4m3", E5m2 => "e5m2", E2m1 => "e2m1" });

/// Loop attributes recorded from `tl.range(...)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopAttrs {
    pub num_stages: Option<u32>,
    pub loop_unroll_factor: Option<u32>,
    pub warp_specialize: bool,
    pub flatten: bool,
    pub disallow_acc_multi_buffer: bool,
}

/// A constant: one scalar value, splatted when the result is a tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    Int(i64),
    Float(f64),
}

/// One operation. Operand and result counts are checked by the verifier.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `constant`: () → scalar or splat tensor.
    Constant(Const),
    /// `program_id` / `num_programs` along `axis` (0..3): () → i32.
    ProgramId(u32),
    NumPrograms(u32),
    /// `arange`: () → tensor<(end-start) x i32>.
    Arange {
        start: i32,
        end: i32,
    },
    /// `a op b` → same type (comparison results are i1).
    Binary {
        op: BinOp,
        propagate_nan: bool,
    },
    Unary(UnOp),
    Cmp(CmpPred),
    /// `select cond, a, b`.
    Select,
    /// `fma a, b, c` = a*b+c with one rounding.
    Fma,
    /// libdevice's `fma_rn`, `fma_rz`, `fma_rd`, `fma_ru`: a*b+c rounded once in the direction, f32 with
    /// `.ftz` (subnormal operands and results read as ±0), f64 as IEEE.
    FmaRound(Dir),
    /// libdevice's conversions with a rounding mode: an integer to f32/f64 (`int2float_rz`, `ull2double_ru`...)
    /// or f64 to f32 (`double2float_rd`..., flushing a subnormal result), rounded in the direction.
    CastRound(Dir),
    /// libdevice's `norm3d`/`norm4d` (√(x² + y² + z² [+ w²]) without overflow or underflow) and `rnorm3d`/`rnorm4d`
    /// (its reciprocal): three or four f32 or f64 operands, libdevice's own sequences (`tessel_math::roots::norm`).
    Norm {
        recip: bool,
    },
    /// libdevice's `jn`/`yn`: the Bessel function of integer order (an i32 operand) of an f32 or f64 operand, by
    /// libdevice's recurrences, whose trip count depends on the order (`tessel_math::bessel::bessel_n`).
    BesselN(bessel_n::Kind),
    /// `clamp x, lo, hi`.
    Clamp {
        propagate_nan: bool,
    },
    /// Value conversion to the result's element type (`.to(dtype)`), rounding to nearest even.
    Cast,
    /// Reinterpretation of the bits (`.to(dtype, bitcast=True)`).
    Bitcast,
    /// `addptr p, offset`: pointer arithmetic in elements.
    AddPtr,
    /// Shape ops.
    Splat,
    Broadcast,
    ExpandDims {
        axis: u32,
    },
    Reshape {
        can_reorder: bool,
    },
    Permute {
        order: Vec<u32>,
    },
    Join,
    Split,
    Cat,
    /// `load ptr [, mask [, other]]`.
    Load {
        cache: String,
        evict: String,
        volatile: bool,
    },
    /// `store ptr, value [, mask]`.
    Store {
        cache: String,
        evict: String,
    },
    /// `atomic ptr, value [, mask]` → old value.
    Atomic {
        op: AtomicOp,
        sem: String,
        scope: String,
    },
    /// `atomic_cas ptr, cmp, value` → old value.
    AtomicCas {
        sem: String,
        scope: String,
    },
    /// `dot a, b, acc` → acc type.
    Dot {
        precision: InputPrecision,
        max_num_imprecise_acc: u32,
    },
    /// `dot_scaled a, a_scale, b, b_scale, acc, a_up, b_up {a_format, b_format}` → acc type: `tl.dot_scaled`
    /// (auto mode), `acc + (a · a_scale) @ (b · b_scale)` with A `[M, K]` and B `[K, N]` of `a_format`/`b_format`
    /// values (e2m1 two per `u8` along K), the scales `[M, K / VEC]` and `[N, K / VEC]` (e8m0 in `u8`, or e4m3)
    /// in registers, `acc` f32. `a_up` `[M, K]` and `b_up` `[K, N]` are the same operands upcast and scaled by
    /// the prelude (bf16). Where the block-scaled MMA runs it (`layout::dot_scaled`) its value is that MMA's
    /// (scales as the hardware reads them: e8m0 0 is 2^-127, e4m3 unsigned); elsewhere it becomes, and its value
    /// is, `dot a_up, b_up, acc` (bf16 makes an e8m0 0 zero and keeps an e4m3 scale's sign).
    DotScaled {
        a_format: MxFormat,
        b_format: MxFormat,
    },
    /// Reduction along `axis` with a combine region `(a..., b...) -> yield`; N operands, N results.
    Reduce {
        axis: u32,
    },
    /// Inclusive scan along `axis` with a combine region.
    Scan {
        axis: u32,
        reverse: bool,
    },
    /// `for lb, ub, step, inits...` with region `(iv, iters...)`; results are the final iters.
    For(LoopAttrs),
    /// `if cond` with `then` and `else` regions yielding the results.
    If,
    /// `while inits...`: `before` region ends in `condition cond, args...`; `after` region yields new inits.
    While,
    /// Region terminators.
    Yield,
    Condition,
    Return,
    /// Hints.
    Assume,
    MultipleOf(Vec<i64>),
    MaxContiguous(Vec<i64>),
    MaxConstancy(Vec<i64>),
    /// Debugging.
    Print {
        prefix: String,
        hex: bool,
    },
    Assert {
        message: String,
    },
    DebugBarrier,
    /// `cluster_barrier`: every thread of every CTA of the cluster meets here (`gl.barrier(cluster=True)`), and
    /// each CTA's shared-memory accesses before it are ordered before every CTA's after it (release/acquire at
    /// cluster scope); in a one-CTA program, a CTA barrier.
    ClusterBarrier,
    /// `make_tensor_desc base, shape..., strides...` → tensordesc. `layout`: the shared layout TMA stages the
    /// block in, when a host descriptor gives one other than `NVMMASharedLayout.get_default_for(block, dtype)`
    /// ([`crate::tma::desc_layout`]).
    MakeTensorDesc {
        rank: u32,
        padding: String,
        layout: Option<tessel_layouts::NvmmaSharedLayout>,
    },
    /// `make_tensor_desc_im2col base, shape..., strides..., lower..., upper..., element_strides...` → tensordesc
    /// of a `[pixels, channels]` block: TMA's im2col mode over a channels-last tensor of `rank` dims (batch,
    /// `rank - 2` spatial dims, channels), with the pixel box's lower and upper corners (one per spatial dim) and
    /// the traversal strides (one per dim). Its only user is `tma_load_im2col`.
    MakeTensorDescIm2col {
        rank: u32,
        padding: String,
    },
    /// `desc_load desc, offsets...` / `desc_store desc, value, offsets...`.
    DescLoad,
    DescStore,
    /// Layout level: the same values in another layout.
    ConvertLayout,
    /// `local_alloc [value]` → memdesc: a shared-memory buffer, holding `value` when one is given.
    LocalAlloc,
    /// `local_load mem` → tensor: the buffer's contents in the result's (distributed) layout.
    LocalLoad,
    /// `local_store value, mem`: overwrites the buffer.
    LocalStore,
    /// `local_dealloc mem`: the buffer is not used after this point.
    LocalDealloc,
    /// `warpgroup_dot a, b, acc [, use_acc]` → acc type: `a @ b + acc` on the tensor cores with `b` (and `a`,
    /// when it is a memdesc rather than a tensor) read from shared memory; `wgmma` on sm_90a. With `is_async` the
    /// result may only be read through a `warpgroup_dot_wait`, and the operands' buffers stay in use until then.
    /// The optional `use_acc` (i1) is wgmma's scale-d: when false the product ignores `acc` (`a @ b`), which
    /// is how a loop restarts its accumulator without reading it (a flattened persistent loop's first K step).
    WarpGroupDot {
        precision: InputPrecision,
        max_num_imprecise_acc: u32,
        is_async: bool,
    },
    /// `warpgroup_dot_wait vals...` → the same values, usable: waits until at most `pending` asynchronous
    /// `warpgroup_dot`s are in flight (`wgmma.wait_group`).
    WarpGroupDotWait {
        pending: u32,
    },
    /// `memdesc_index mem, i` → buffer `i` of a multi-buffered allocation (the leading dim dropped).
    MemDescIndex,
    /// `async_copy ptrs, mem [, mask]` → token: copies the pointed-to elements into the buffer asynchronously
    /// (`cp.async`; masked-off elements are written as 0). The data lands at an `async_wait` that covers it.
    AsyncCopy,
    /// `async_commit_group tokens...` → token: closes a group of the copies issued since the last commit.
    AsyncCommitGroup,
    /// `async_wait tokens...` → token: waits until at most `pending` committed groups are in flight.
    AsyncWait {
        pending: u32,
    },
    /// `async_copy_mbarrier_arrive bar {arrivals}` (`cp.async.mbarrier.arrive`): mbarrier `bar` tracks every
    /// `async_copy` the program (partition) has issued and not waited for; their data lands when the barrier's
    /// phase completes, which cannot happen before they have. With `arrivals = 0` (Gluon's
    /// `increment_count=True`) the arrival is net zero: it only holds the phase open until the copies land;
    /// otherwise (`.noinc`) each of the partition's `arrivals` threads arrives once its copies are done.
    AsyncCopyMBarrierArrive {
        arrivals: u32,
    },
    /// `fence_async_shared [{cluster}]`: generic-proxy writes to shared memory become visible to the async proxy
    /// (TMA, tensor cores): the CTA's shared memory, or with `cluster` that of every CTA of the cluster.
    FenceAsyncShared {
        cluster: bool,
    },
    /// `mbarrier_init bar {count}`: a fresh barrier (`memdesc<1xi64>`) expecting `count` arrivals per phase.
    MBarrierInit {
        count: u32,
    },
    /// `mbarrier_expect bar [, pred] {bytes}`: one arrival, and `bytes` of transactions (TMA) the phase waits for.
    MBarrierExpect {
        bytes: u32,
    },
    /// `mbarrier_arrive bar [, pred] {count [, per_warpgroup]}`: `count` arrivals, made by one thread of the
    /// program once all of its threads are done with what the arrival releases. With `per_warpgroup`, each
    /// warpgroup of the program arrives `count` times on its own, without waiting for the others (the barrier
    /// expects `count` per warpgroup): only for what a warpgroup's own wgmmas read and its own wait retired, which
    /// the whole warpgroup is done with once one of its threads has passed the wait. With a nonzero `cta_mask`
    /// (a cluster), the arrivals reach the barrier at the same offset in every CTA whose rank differs from the
    /// arriving CTA's only in the mask's bits, the arriving CTA's own included (`arrive_barrier {ctaMask}` in
    /// Triton's IR): how a CTA tells its peers it is done with what their copies wrote into its shared memory.
    MBarrierArrive {
        count: u32,
        per_warpgroup: bool,
        cta_mask: u16,
    },
    /// `mbarrier_wait bar, phase`: waits until the phase of parity `phase` (0 or 1) has completed.
    MBarrierWait,
    /// `mbarrier_invalidate bar`: the barrier is not used after this point.
    MBarrierInvalidate,
    /// `tma_load desc, mem, bar, coords... [, pred]`: TMA copies the block of host descriptor `desc` at `coords`
    /// into buffer `mem` (out-of-bounds elements as the descriptor's padding) and completes its bytes as
    /// transactions on mbarrier `bar`: the data is there once a wait sees that phase complete. With `multicast`
    /// (a cluster whose CTAs all hold `mem`: its layout has no CTA bases), one CTA copies the block into every
    /// CTA's `mem` and completes the bytes on every CTA's `bar` (each at its own offset in its own CTA), so the
    /// block is read from global memory once per cluster instead of once per CTA.
    TmaLoad {
        multicast: bool,
    },
    /// `tma_load_im2col desc, mem, bar, coords..., offsets... [, pred] {rank}`: TMA's im2col load of im2col
    /// descriptor `desc` (over a rank-`rank` tensor): `coords` (one per dim, i32) start the walk of the pixel box,
    /// `offsets` (one per spatial dim, i16) shift the pixels read (the filter tap); the `[pixels, channels]` block
    /// lands in `mem` and completes its bytes on `bar` as for `tma_load`.
    TmaLoadIm2col {
        rank: u32,
    },
    /// `tma_store desc, mem, coords...`: TMA copies buffer `mem` to the block of `desc` at `coords` (the parts
    /// outside the tensor are dropped); the buffer may be written again after a `tma_store_wait`.
    TmaStore,
    /// `tma_gather desc, mem, bar, x, y [, pred]` (sm_100a): TMA reads rows `x[i]` (a `tensor<ROWSxi32>`),
    /// columns `y ..` of 2-d descriptor `desc` (block `[1, cols]`) into row `i` of buffer `mem` (`[ROWS, cols]`),
    /// four rows per `gather4`; rows and columns outside the tensor read its padding. The bytes complete on `bar`
    /// as for `tma_load`. With `multicast` (a cluster), the CTAs holding the same part of `mem` share the rows:
    /// each row lands in every one of them and completes its bytes on each one's `bar` (at its own offset), as a
    /// multicast `tma_load`. See [`crate::tma_gather`].
    TmaGather {
        multicast: bool,
    },
    /// `tma_scatter desc, mem, x, y` (sm_100a): TMA writes row `i` of `mem` to row `x[i]`, columns `y ..` of
    /// `desc`, dropping what falls outside the tensor; a bulk group, retired by `tma_store_wait` as `tma_store`.
    TmaScatter,
    /// `tma_store_wait {pending}`: waits until at most `pending` TMA stores still read their buffers; with
    /// `writes` (Gluon's `store_wait(read_only=False)`), until at most `pending` stores are still writing global
    /// memory (their writes are then visible to this thread, e.g. before a release that publishes them).
    TmaStoreWait {
        pending: u32,
        writes: bool,
    },
    /// `ring_counter_init counter`: zeroes a ring buffer's release counter (`memdesc<1xi32>`), from one thread.
    RingCounterInit,
    /// `%issue = ring_release counter, pred, buffers...`: every warp of the program is done reading `buffers` (one
    /// slot of the pipeliner's rings) and counts itself on the slot's `counter`; `%issue` is true in exactly one
    /// thread, the one that made the last release of the round, and only when `pred`. That thread alone refills
    /// the slot: `%issue` is only ever the predicate of the slot's `mbarrier_expect` and `tma_load`s, which then
    /// need no CTA barrier (the warps run apart instead of meeting before every refill). The program as a whole
    /// (the interpreter's view) releases the buffers, so `%issue` is `pred` there.
    RingRelease,
    /// `gather src, index {axis}` → a tensor shaped like `index` (same rank as `src`, equal dims but `axis`):
    /// `out[i] = src[i with i[axis] replaced by index[i]]`.
    Gather {
        axis: u32,
    },
    /// `histogram input [, mask] {num_bins}` → `tensor<num_bins x i32>`: how many (unmasked) elements of the 1-D
    /// integer `input` equal each of `0..num_bins`; other values are not counted.
    Histogram {
        num_bins: u32,
    },
    /// `inline_asm args... {asm, constraints, pure, pack}` → results of the operands' shape: inline PTX applied
    /// elementwise, `pack` elements per instance (Triton's `inline_asm_elementwise`).
    InlineAsm {
        asm: String,
        constraints: String,
        pure: bool,
        pack: u32,
    },
    /// `globaltimer` → i64 (nanoseconds), `smid` → i32 (the multiprocessor the program runs on).
    GlobalTimer,
    SmId,
    /// Programmatic dependent launch (`griddepcontrol`): `gdc_wait` waits for the grid this one depends on,
    /// `gdc_launch_dependents` lets the dependent grid start.
    GdcWait,
    GdcLaunchDependents,
    /// `warp_specialize captures... {worker_num_warps, worker_num_regs}` → the default partition's results.
    /// Region 0 is the default partition: it runs on the kernel's `num_warps` warps, may use values of the
    /// enclosing region and yields the results. Region `1 + i` is worker `i`: `worker_num_warps[i]` warps of
    /// its own (after the default's and the workers' before it), isolated from above (its arguments are the
    /// captures, the operands), yielding nothing. `worker_num_regs` (empty, or one per worker) asks for that
    /// many registers per thread (`setmaxnreg`). The partition plan (`sched::warp_spec`) fills `warp_starts`
    /// (the first warp of each partition, the default's 0 first) and `regs` (the registers each partition
    /// runs with, empty when none are reallocated).
    WarpSpecialize(WarpSpec),
    /// Views of a shared-memory buffer (the same bytes, another shape; `layout::shared_views`):
    /// `memdesc_permute mem {order}` (result dim `i` is dim `order[i]`), `memdesc_reshape mem` (the row-major
    /// reshape to the result's shape), `memdesc_slice mem {dim, start}` (the result's length of `dim` from `start`).
    MemDescPermute {
        order: Vec<u32>,
    },
    MemDescReshape,
    MemDescSlice {
        dim: u32,
        start: u32,
    },
    /// `memdesc_reinterpret mem`: the same bytes as the result's element type (of the same size), shape and
    /// layout (Gluon's `_reinterpret`).
    MemDescReinterpret,
    /// Blackwell tensor memory (`verify_tmem` types them, `tcgen05` in the interpreter and codegen runs them). A
    /// tensor-memory memdesc is a `memdesc` whose layout is a `TensorMemoryLayout` ([`crate::Type::is_tmem`]).
    /// `tmem_alloc [value]` → tensor-memory memdesc, holding `value` when one is given.
    TmemAlloc,
    /// `tmem_load mem` → tensor in the 32x32b register layout of the buffer's layout (`tcgen05.ld` + wait).
    TmemLoad,
    /// `tmem_store value, mem`: overwrites the buffer (`tcgen05.st` + wait).
    TmemStore,
    /// `tcgen05_mma a, b, acc, use_acc, pred, (bar, bar_pred)...`: `acc = a @ b (+ acc when use_acc)` issued to
    /// the tensor cores when `pred`; A is a shared- or tensor-memory memdesc, B a shared-memory one, `acc` a
    /// tensor-memory f32 memdesc. Asynchronous: it completes by an arrival on each barrier whose predicate (and
    /// `pred`) holds, which also tracks every earlier uncommitted tcgen05 op; its result is readable, and its
    /// operands writable, once a wait observes that phase.
    Tcgen05Mma,
    /// `tcgen05_commit bar [, pred] {multicast}`: barrier `bar` gets one arrival once every tcgen05 op issued
    /// before has completed. In a cluster, `multicast` (a mask of CTA offsets, bit `d`: the barrier at the same
    /// offset in CTA `issuer ^ d`; 0: the default, [`crate::cluster::default_commit_ctas`]) names the CTAs whose
    /// barrier gets it.
    Tcgen05Commit {
        multicast: u16,
    },
    /// `tcgen05_copy src, dst`: the shared-memory buffer `src` copied into the tensor-memory buffer `dst` of the
    /// same shape and element type (`tcgen05.cp`). Asynchronous like an MMA, and in order with the tcgen05 ops
    /// issued after it: an MMA issued later reads what it wrote; its data is readable by the threads, and `src`
    /// writable, once a wait observes a commit that tracks it.
    Tcgen05Copy,
    /// `tcgen05_mma_scaled a, b, acc, a_scale, b_scale, use_acc, pred, (bar, bar_pred)... {a_format, b_format}`:
    /// `acc = (a · a_scale) @ (b · b_scale) (+ acc when use_acc)`, a block-scaled MMA (`tcgen05.mma ...
    /// block_scale`): A `[M, K]` and B `[K, N]` in shared memory hold `a_format`/`b_format` values (e2m1 packed
    /// two per byte along K in `u8` elements), the scales `[M, K / VEC]` and `[N, K / VEC]` in tensor memory laid
    /// out by a `TensorMemoryScalesLayout` (e8m0 in `u8`, or e4m3), each multiplying a VEC-long block of K.
    /// Asynchronous as `tcgen05_mma`.
    Tcgen05MmaScaled {
        a_format: MxFormat,
        b_format: MxFormat,
    },
    /// Cluster launch control (sm_100a, `crate::verify_clc`). `clc_try_cancel result, bar`: asks the hardware to
    /// cancel a program of the grid that has not started; its 16-byte response lands in the shared-memory buffer
    /// `result` (16 bytes of integers) asynchronously and completes 16 transaction bytes on mbarrier `bar`, so it
    /// may be read once a wait sees that phase. The program makes the request once (codegen: one thread).
    ClcTryCancel,
    /// `clc_load_result result` → `clc_result`: the response, read from the buffer into the program's registers.
    ClcLoadResult,
    /// `clc_is_canceled r` → i1: whether the request the response answers canceled a program.
    ClcIsCanceled,
    /// `clc_program_id r {axis}` → i32: the canceled program's id along `axis` (0..3), which the program that
    /// canceled it now runs in its place; -1 when the response canceled nothing.
    ClcProgramId(u32),
}

/// The element format of a block-scaled MMA operand (`tcgen05_mma_scaled`'s `a_type`/`b_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MxFormat {
    /// fp8 e4m3 (`float8e4nv` elements).
    E4m3,
    /// fp8 e5m2 (`float8e5` elements).
    E5m2,
    /// fp4 e2m1, two per `u8` element (the lower nibble first along K).
    E2m1,
}

impl MxFormat {
    /// Bits per value.
    pub fn bits(self) -> u32 {
        if self == MxFormat::E2m1 { 4 } else { 8 }
    }

    /// The element type of a buffer holding values of this format.
    pub fn storage(self) -> crate::types::ScalarType {
        match self {
            MxFormat::E4m3 => crate::types::ScalarType::F8E4M3,
            MxFormat::E5m2 => crate::types::ScalarType::F8E5M2,
            MxFormat::E2m1 => crate::types::ScalarType::U8,
        }
    }
}

/// The attributes of [`Op::WarpSpecialize`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarpSpec {
    pub worker_num_warps: Vec<u32>,
    pub worker_num_regs: Vec<u32>,
    pub warp_starts: Vec<u32>,
    pub regs: Vec<u32>,
}
