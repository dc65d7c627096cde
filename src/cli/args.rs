//! The `--arg NAME=SPEC` values of `tessel run` and `tessel bench` (scalars, generated or `.npy` buffers,
//! tensor descriptors over buffers, tables of other buffers' addresses), the signature they imply when none is given, and [`prepare`], which
//! elaborates the kernel for that signature and allocates and binds its arguments.

use std::path::Path;

use clap::Args;
use tessel_interp::memory::{self, BufferId, Memory};
use tessel_interp::{Arg, value};
use tessel_lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel_tile::{Func, ScalarType};

use super::buffers::{self, BufferInit};
use super::kernel::{
    Source, SpecArgs, dtype, elaborate, find_kernel, load, parse_sig_type, specialization, split_signature,
    split_target,
};
use super::{CliError, Failure};
use crate::{Timings, npy};

/// The arguments every launching command takes: the kernel and its specialization, the grid and the `--arg`
/// values.
#[derive(Debug, Clone, Args)]
pub struct LaunchArgs {
    #[command(flatten)]
    pub spec: SpecArgs,
    /// Programs to launch: N, or N,M or N,M,K
    #[arg(long, default_value = "1")]
    pub grid: String,
    /// A kernel argument: NAME=SPEC (see below); repeatable
    #[arg(long = "arg", value_name = "NAME=SPEC")]
    pub args: Vec<String>,
    /// Seed for rand/randn buffers
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Loop iterations one program may run in the interpreter before it is stopped as hung (a spin-wait that
    /// can never end is reported at once)
    #[arg(long, default_value_t = tessel_interp::Limits::default().max_iterations)]
    pub max_iterations: u64,
    /// Work one program may do in the interpreter before it is stopped as hung: one unit per element an op
    /// computes, loads or stores, and one per multiply-add of a dot (M·N·K)
    #[arg(long, default_value_t = tessel_interp::Limits::default().max_work)]
    pub max_work: u64,
    /// Threads the interpreter runs programs on (default, and at most: the machine's cores; more is capped, with a
    /// note). Programs run in parallel only when none can observe another (no atomics, disjoint stores, nothing
    /// loaded that another stores); the result is the same either way
    #[arg(long, value_parser = parse_threads)]
    pub threads: Option<u64>,
    /// How the interpreter answers cluster launch control's `clc.try_cancel`: `next` (the next program not
    /// started, in grid order), `none` (every request fails) or `random:SEED` (failures and programs drawn at
    /// random), so a kernel can be checked under any answer
    #[arg(long, default_value = "next", value_name = "POLICY")]
    pub clc_policy: tessel_interp::ClcPolicy,
    /// How the interpreter runs a `warp_specialize`'s partitions: `run-ahead` (each until it waits on a phase
    /// not yet completed: a producer as far ahead as its barriers allow) or `hand-off` (also handing the turn on
    /// after every mbarrier arrival, so the partitions it releases act at once). Each catches missing waits the
    /// other does not; a kernel should pass under both
    #[arg(long, default_value = "run-ahead", value_name = "SCHEDULE")]
    pub ws_schedule: tessel_interp::Schedule,
    /// Which tcgen05 ops of one thread the interpreter lets run in issue order without a wait between them: `isa`
    /// (the PTX ISA's rule: MMAs into one accumulator, a tcgen05_copy before an MMA; any other op touching cells an
    /// unfinished one uses is an error naming both) or `issue` (all of them, as sm_100's tensor cores are seen to
    /// run them), to check the rest of a kernel that relies on that
    #[arg(long, default_value = "isa", value_name = "ORDER")]
    pub mma_order: tessel_interp::MmaOrder,
}

/// `--threads N`: at least 1.
fn parse_threads(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("expected a number of threads, at least 1, got `{s}`")),
    }
}

/// The `--arg` grammar, for the commands' help (a macro so that `concat!` can build on it).
macro_rules! arg_specs {
    () => {
        "Argument specs (--arg NAME=SPEC):\n  \
    1000, -3, 0.5             a scalar\n  \
    rand:4096[:fp16]          uniform in [-1, 1), seeded by --seed (default dtype fp32, or the signature's);\n                            \
    integer dtypes: uniform over all values (rand:N:i64 spans -2^63..2^63)\n  \
    randn:64x128              standard normal (integers: round(100 N(0,1)))\n  \
    zeros:N, ones:N, arange:N a filled buffer\n  \
    fill:VALUE:N              every element VALUE, exact in its dtype (fill:nan poisons an output;\n                            \
    fill:0x7fa00000:N:fp32 gives the bits, e.g. a signalling NaN)\n  \
    x.npy[:DTYPE]             a NumPy file (converted to DTYPE as .to(dtype) would: fp8 arrays are\n                            \
    written as f32)\n  \
    ptrs:a0,a1,a2             an int64 buffer holding the addresses of --arg buffers a0, a1, a2 (a pointer\n                            \
    array, as grouped GEMM passes; a0.. need not be parameters; interpreter only)\n  \
    desc:x:block=16x32        a tensor descriptor (TensorDescriptor.from_tensor) over the buffer of --arg x,\n                            \
    row-major over x's SIZE (x need not be a parameter); desc:x:40x100:block=16x32\n                            \
    gives the shape; :padding=nan pads loads with NaN instead of zero\n  \
    desc_im2col:x:block=16x32:lower=-1x-1:upper=-1x-1[:element_strides=1x1x1x1]\n                            \
    an im2col descriptor (TensorDescriptorIm2Col.from_tensor) over the channels-last\n                            \
    buffer x (give its shape, e.g. desc_im2col:x:1x4x4x32:...): block = pixels x channels,\n                            \
    the pixel box's lower and upper corners one per spatial dim"
    };
}
pub(super) use arg_specs;

/// A `--arg` value: a scalar, a buffer to allocate, a tensor descriptor over another `--arg`'s buffer, or a
/// table of other `--arg` buffers' addresses.
enum ArgValue {
    /// An integer as written: from -2^63 to 2^64 - 1.
    Int(i128),
    Float(f64),
    Buffer {
        elem: Option<ScalarType>,
        values: BufferInit,
        shape: Vec<usize>,
    },
    Desc {
        buffer: String,
        shape: Option<Vec<usize>>,
        block: Vec<u32>,
        padding_nan: bool,
        im2col: Option<Im2col>,
    },
    Ptrs(Vec<String>),
}

/// An im2col descriptor's pixel box: corners per spatial dim, element strides per dim (default 1).
#[derive(Clone)]
struct Im2col {
    lower: Vec<i64>,
    upper: Vec<i64>,
    element_strides: Option<Vec<i64>>,
}

fn parse_arg_value(name: &str, spec: &str) -> Result<ArgValue, CliError> {
    // An integer is read as one, whatever its size: wider than 64 bits is an error, not a float.
    let digits = spec.replace('_', "");
    let magnitude = digits.strip_prefix(['-', '+']).unwrap_or(&digits);
    if !magnitude.is_empty() && magnitude.bytes().all(|b| b.is_ascii_digit()) {
        return match digits.parse::<i128>() {
            Ok(i) if (i64::MIN as i128..=u64::MAX as i128).contains(&i) => Ok(ArgValue::Int(i)),
            _ => Err(CliError::Usage(format!(
                "--arg {name}={spec}: the integer does not fit in 64 bits (from -2^63 to 2^64 - 1)"
            ))),
        };
    }
    if let Ok(x) = spec.parse::<f64>() {
        return Ok(ArgValue::Float(x));
    }
    // `x.npy`, or `x.npy:DTYPE` (the array converted as `.to(dtype)`: fp8 values NumPy writes as f32).
    let npy_dtype = spec.rsplit_once(':').filter(|(path, _)| path.ends_with(".npy"));
    if spec.ends_with(".npy") || npy_dtype.is_some() {
        let (path, elem) = match npy_dtype {
            Some((path, t)) => {
                (path, Some(dtype(t).ok_or_else(|| CliError::Usage(format!("unknown dtype `{t}` in `{spec}`")))?))
            }
            None => (spec, None),
        };
        let size = std::fs::metadata(path).map_err(|e| CliError::Usage(format!("cannot read {path}: {e}")))?.len();
        memory::check_available(size).map_err(|why| CliError::Usage(format!("cannot read {path}: {why}")))?;
        let bytes = std::fs::read(path).map_err(|e| CliError::Usage(format!("cannot read {path}: {e}")))?;
        let a = npy::read(&bytes).map_err(|e| CliError::Usage(format!("{path}: {e}")))?;
        let elem = elem.unwrap_or(a.elem);
        return Ok(ArgValue::Buffer { elem: Some(elem), shape: a.shape.clone(), values: BufferInit::Data(a) });
    }
    let parts: Vec<&str> = spec.split(':').collect();
    let (kind, rest) = parts.split_first().unwrap();
    if *kind == "desc_im2col" {
        return parse_desc_arg(spec, rest, true);
    }
    if *kind == "desc" {
        return parse_desc_arg(spec, rest, false);
    }
    if *kind == "ptrs" {
        let names: Vec<String> = rest.join(":").split(',').map(|n| n.trim().to_string()).collect();
        if names.iter().any(String::is_empty) {
            return Err(CliError::Usage(format!("cannot read `{spec}`: expected ptrs:BUFFER,BUFFER,..")));
        }
        return Ok(ArgValue::Ptrs(names));
    }
    let (init, rest) = match (*kind, rest) {
        ("fill", [v, rest @ ..]) => {
            buffers::check_fill(v)?;
            (BufferInit::Fill(v.to_string()), rest)
        }
        ("rand", rest) => (BufferInit::Rand, rest),
        ("randn", rest) => (BufferInit::Randn, rest),
        ("zeros", rest) => (BufferInit::Fill("0".into()), rest),
        ("ones", rest) => (BufferInit::Fill("1".into()), rest),
        ("arange", rest) => (BufferInit::Arange, rest),
        _ => {
            return Err(CliError::Usage(format!(
                "cannot read argument `{spec}`: expected a number, a .npy file, rand/randn/zeros/ones/arange/fill:V followed by :SIZE[:DTYPE], desc:BUFFER:block=BxB or ptrs:BUFFER,.."
            )));
        }
    };
    let Some(size) = rest.first() else {
        return Err(CliError::Usage(format!("`{spec}` needs a size, e.g. {kind}:1024")));
    };
    let shape = parse_dims(size, spec)?;
    let elem = match rest.get(1) {
        Some(t) => Some(dtype(t).ok_or_else(|| CliError::Usage(format!("unknown dtype `{t}` in `{spec}`")))?),
        None => None,
    };
    Ok(ArgValue::Buffer { elem, values: init, shape })
}

/// `64x128` in `spec`.
fn parse_dims(size: &str, spec: &str) -> Result<Vec<usize>, CliError> {
    size.split('x')
        .map(|d| d.parse::<usize>().map_err(|_| CliError::Usage(format!("bad size `{size}` in `{spec}`"))))
        .collect()
}

/// `desc:BUFFER[:SHAPE]:block=BxB[:padding=nan]`, `rest` being the parts after `desc`.
fn parse_desc_arg(spec: &str, rest: &[&str], im2col: bool) -> Result<ArgValue, CliError> {
    let usage = || {
        CliError::Usage(if im2col {
            format!(
                "cannot read `{spec}`: expected desc_im2col:BUFFER[:SHAPE]:block=PIXELSxCHANNELS:lower=LxL:upper=UxU\
                 [:element_strides=1x1x1x1][:padding=nan], e.g. desc_im2col:x:block=16x32:lower=-1x-1:upper=-1x-1"
            )
        } else {
            format!(
                "cannot read `{spec}`: expected desc:BUFFER[:SHAPE]:block=BxB[:padding=nan], e.g. desc:x:block=16x32"
            )
        })
    };
    let ints = |s: &str| -> Result<Vec<i64>, CliError> {
        s.split('x')
            .map(|d| d.parse::<i64>().map_err(|_| CliError::Usage(format!("bad list `{s}` in `{spec}`"))))
            .collect()
    };
    let (buffer, rest) = rest.split_first().filter(|(b, _)| !b.is_empty()).ok_or_else(usage)?;
    let (mut shape, mut block, mut padding_nan) = (None, None, false);
    let (mut lower, mut upper, mut element_strides) = (None, None, None);
    for part in rest {
        if let (true, Some(l)) = (im2col, part.strip_prefix("lower=")) {
            lower = Some(ints(l)?);
        } else if let (true, Some(u)) = (im2col, part.strip_prefix("upper=")) {
            upper = Some(ints(u)?);
        } else if let (true, Some(e)) = (im2col, part.strip_prefix("element_strides=")) {
            element_strides = Some(ints(e)?);
        } else if let Some(b) = part.strip_prefix("block=") {
            let dims = parse_dims(b, spec)?;
            block = Some(dims.iter().map(|&d| u32::try_from(d).map_err(|_| usage())).collect::<Result<_, _>>()?);
        } else if let Some(p) = part.strip_prefix("padding=") {
            padding_nan = match p {
                "zero" => false,
                "nan" => true,
                _ => return Err(CliError::Usage(format!("padding must be zero or nan, got `{p}` in `{spec}`"))),
            };
        } else if shape.is_none() {
            shape = Some(parse_dims(part, spec)?);
        } else {
            return Err(usage());
        }
    }
    let block = block.ok_or_else(usage)?;
    let im2col = match (im2col, lower, upper) {
        (false, ..) => None,
        (true, Some(lower), Some(upper)) => Some(Im2col { lower, upper, element_strides }),
        (true, ..) => return Err(usage()),
    };
    Ok(ArgValue::Desc { buffer: buffer.to_string(), shape, block, padding_nan, im2col })
}

fn parse_grid(s: &str) -> Result<[u32; 3], CliError> {
    let bad = || CliError::Usage(format!("--grid expects N, N,M or N,M,K with positive integers, got `{s}`"));
    let dims: Vec<i128> = s
        .split(',')
        .map(|d| {
            let d = d.trim();
            let digits = d.strip_prefix('-').unwrap_or(d);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            // Beyond i128 is beyond CUDA's limits too.
            Ok(d.parse::<i128>().unwrap_or(if d.starts_with('-') { i128::MIN } else { i128::MAX }))
        })
        .collect::<Result<_, _>>()?;
    // CUDA's limits on a launch's grid (gridDim.x < 2^31, y and z < 65536), and at least one program per axis.
    tessel_interp::check_grid(&dims).map_err(|why| CliError::Usage(format!("--grid: {why}")))
}

/// Everything a launch needs, built from the command line: the kernel's tile IR, its buffers allocated and
/// filled, and the argument values in the order of the IR's arguments.
pub(super) struct Prepared {
    pub src: Source,
    pub kernel: String,
    pub spec: Specialization,
    pub func: Func,
    pub mem: Memory,
    /// Every buffer an `--arg` allocated, by name.
    pub buffers: Vec<(String, BufferId)>,
    pub call_args: Vec<Arg>,
    pub grid: [u32; 3],
    /// What a `--bytes`/`--flops` formula may name: scalar arguments and integer constexprs by value, buffers
    /// by their size in bytes.
    pub names: Vec<(String, f64)>,
    /// The buffers of addresses (`ptrs:`): their contents are the interpreter's addresses, so the kernel runs
    /// there only.
    pub address_tables: Vec<String>,
    /// Bounds on the interpreter's run (`--max-iterations`).
    pub limits: tessel_interp::Limits,
    /// The compile stages done here (reading, parsing, elaborating), for `--timings`.
    pub timings: Timings,
}

/// The `--arg` values of `launch`, the specialization they imply (unless `--signature` gives it) and the
/// kernel elaborated for it.
pub(super) fn prepare(launch: &LaunchArgs) -> Result<Prepared, Failure> {
    let args = launch;
    let (file, kernel) = split_target(&args.spec.target)?;
    let mut timings = Timings::default();
    let src = timings.time("read + parse", || load(Path::new(file), &args.spec.path))?;
    let info = find_kernel(&src, kernel)?;
    let grid = parse_grid(&args.grid)?;
    let sig_types: Option<Vec<ArgSpec>> = match &args.spec.signature {
        Some(s) => Some(split_signature(s).into_iter().map(parse_sig_type).collect::<Result<_, _>>()?),
        None => None,
    };
    // Parse every --arg, and infer a signature entry for each.
    let mut values: Vec<(String, ArgValue)> = Vec::new();
    for a in &args.args {
        let (name, spec) =
            a.split_once('=').ok_or_else(|| CliError::Usage(format!("--arg expects NAME=SPEC, got `{a}`")))?;
        let name = name.trim();
        if values.iter().any(|(n, _)| n == name) {
            return Err(CliError::Usage(format!("--arg {name} is given twice")).into());
        }
        values.push((name.to_string(), parse_arg_value(name, spec.trim())?));
    }
    // A buffer that only descriptors or address tables use (TensorDescriptor.from_tensor(x, ...), a pointer
    // array) need not be a parameter.
    let viewed = |name: &str| {
        values.iter().any(|(_, v)| match v {
            ArgValue::Desc { buffer, .. } => buffer == name,
            ArgValue::Ptrs(names) => names.iter().any(|n| n == name),
            _ => false,
        })
    };
    for (name, v) in &values {
        let allowed =
            info.params.iter().any(|p| p.name == *name) || matches!(v, ArgValue::Buffer { .. }) && viewed(name);
        if !allowed {
            return Err(CliError::Usage(format!("`{}` has no parameter `{name}`", info.name)).into());
        }
    }
    let runtime: Vec<&str> = info.params.iter().filter(|p| !p.constexpr).map(|p| p.name.as_str()).collect();
    let declared = |name: &str| -> Option<ArgSpec> {
        let i = runtime.iter().position(|n| *n == name)?;
        sig_types.as_ref().and_then(|s| s.get(i).cloned())
    };
    // The dtype a declared descriptor gives the buffer it views.
    let desc_elem = |buf: &str| {
        values.iter().find_map(|(n, v)| match (v, declared(n)) {
            (ArgValue::Desc { buffer, .. }, Some(ArgSpec::TensorDesc { elem, .. }))
            | (ArgValue::Desc { buffer, .. }, Some(ArgSpec::TensorDescIm2col { elem, .. }))
                if buffer == buf =>
            {
                Some(elem)
            }
            _ => None,
        })
    };
    let buffer_elem = |name: &str| {
        let own = values.iter().find_map(|(n, v)| match v {
            ArgValue::Buffer { elem, .. } if n == name => Some(*elem),
            _ => None,
        })?;
        match declared(name) {
            Some(ArgSpec::Pointer(e, _)) => Some(e),
            _ => Some(own.or_else(|| desc_elem(name)).unwrap_or(ScalarType::F32)),
        }
    };
    let inferred: Vec<(String, ArgSpec)> = values
        .iter()
        .map(|(name, v)| {
            let spec = match v {
                // As Triton's launcher does: 1 becomes a constant (strides of 1 make accesses contiguous), else
                // i32 when it fits, and specialized as a multiple of 16 when it is one.
                ArgValue::Int(1) => ArgSpec::Constexpr(ConstValue::Int(1)),
                ArgValue::Int(i) => {
                    let t = if i32::try_from(*i).is_ok() {
                        ScalarType::I32
                    } else if i64::try_from(*i).is_ok() {
                        ScalarType::I64
                    } else {
                        ScalarType::U64
                    };
                    ArgSpec::Int(t, i % 16 == 0)
                }
                ArgValue::Float(_) => ArgSpec::Float(ScalarType::F32),
                ArgValue::Buffer { .. } => ArgSpec::Pointer(buffer_elem(name).unwrap_or(ScalarType::F32), true),
                ArgValue::Ptrs(_) => ArgSpec::Pointer(ScalarType::I64, true),
                ArgValue::Desc { buffer, block, padding_nan, im2col, shape } => {
                    let elem = buffer_elem(buffer).ok_or_else(|| {
                        CliError::Usage(format!("descriptor `{name}` views `{buffer}`, which is not a buffer --arg"))
                    })?;
                    match im2col {
                        // The block's layout is the signature's (a `--arg` descriptor gives none).
                        None => ArgSpec::TensorDesc {
                            elem,
                            block_shape: block.clone(),
                            padding_nan: *padding_nan,
                            layout: None,
                        },
                        Some(_) => {
                            let rank =
                                shape.clone().or_else(|| buffer_shape(&values, buffer)).map_or(4, |s| s.len() as u32);
                            ArgSpec::TensorDescIm2col {
                                elem,
                                block_shape: block.clone(),
                                rank,
                                padding_nan: *padding_nan,
                            }
                        }
                    }
                }
            };
            let is_desc = |a: &ArgSpec| matches!(a, ArgSpec::TensorDesc { .. } | ArgSpec::TensorDescIm2col { .. });
            // A descriptor value and its declaration agree when all but the declared block layout do.
            let without_layout = |a: &ArgSpec| match a {
                ArgSpec::TensorDesc { elem, block_shape, padding_nan, .. } => ArgSpec::TensorDesc {
                    elem: *elem,
                    block_shape: block_shape.clone(),
                    padding_nan: *padding_nan,
                    layout: None,
                },
                other => other.clone(),
            };
            let spec = match (declared(name), spec) {
                (Some(d), s) if is_desc(&d) && is_desc(&s) && without_layout(&d) != without_layout(&s) => {
                    return Err(CliError::Usage(format!(
                        "--arg {name} is a {} descriptor, but the signature declares {}",
                        desc_spelling(&s),
                        desc_spelling(&d)
                    )));
                }
                (Some(d), s) if is_desc(&d) != is_desc(&s) => {
                    return Err(CliError::Usage(format!(
                        "--arg {name}: the signature and the value disagree on whether it is a tensor descriptor"
                    )));
                }
                (d, s) => d.unwrap_or(s),
            };
            Ok((name.clone(), spec))
        })
        .collect::<Result<_, CliError>>()?;
    let spec_args = SpecArgs { signature: None, ..args.spec.clone() };
    let spec = specialization(&info, &spec_args, Some(&inferred))?;
    let (func, messages) = timings.time("elaborate + canonicalize", || elaborate(&src, kernel, &spec))?;
    timings.messages = messages;

    // Allocate buffers and bind arguments in the order of the function's (runtime) arguments.
    let mut mem = Memory::new();
    let mut buffers: Vec<(String, BufferId)> = Vec::new();
    let mut bound: Vec<(String, Vec<Arg>)> = Vec::new();
    // What the buffers take so far, against the memory available: a size that overflows, or that the machine does
    // not have, is an error naming the argument instead of an abort or the OOM killer.
    let mut total = 0u64;
    for (k, (name, v)) in values.iter().enumerate() {
        let Some((_, spec @ (ArgSpec::Pointer(elem, _) | ArgSpec::Int(elem, _) | ArgSpec::Float(elem)))) =
            inferred.get(k)
        else {
            continue;
        };
        let pointer = matches!(spec, ArgSpec::Pointer(..));
        let usage = |m: String| -> Failure { CliError::Usage(m).into() };
        let arg = match v {
            ArgValue::Int(_) | ArgValue::Float(_) if pointer => {
                return Err(usage(format!(
                    "--arg {name}: the parameter is a pointer to {}: give a buffer (rand:N, zeros:N, a .npy file..), \
                     not a number",
                    elem.triton_name()
                )));
            }
            ArgValue::Int(i) => value::int_arg(*i, *elem).map_err(|e| usage(format!("--arg {name}={i}: {e}")))?,
            ArgValue::Float(x) => value::float_arg(*x, *elem).map_err(|e| usage(format!("--arg {name}={x:?}: {e}")))?,
            ArgValue::Desc { .. } | ArgValue::Ptrs(_) => continue,
            ArgValue::Buffer { .. } if !pointer => {
                return Err(usage(format!(
                    "--arg {name}: the parameter is a scalar ({}), not a pointer: give a number",
                    elem.triton_name()
                )));
            }
            ArgValue::Buffer { values, shape, .. } => {
                let len = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
                let size = len.and_then(|n| n.checked_mul(elem.bytes() as usize)).ok_or_else(|| {
                    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
                    usage(format!(
                        "--arg {name}: a buffer of {} {} elements is more than 2^64 bytes",
                        dims.join("x"),
                        elem.triton_name()
                    ))
                })?;
                let len = len.expect("checked with the size");
                memory::check_available(size as u64).map_err(|why| {
                    usage(format!("--arg {name}: a buffer of {len} {} elements: {why}", elem.triton_name()))
                })?;
                total = total.saturating_add(size as u64);
                memory::check_available(total)
                    .map_err(|why| usage(format!("--arg {name}: with the buffers before it, {why}")))?;
                let seed = args.seed.wrapping_mul(1000).wrapping_add(k as u64);
                let bytes = buffers::bytes(values, *elem, len, seed)
                    .map_err(|e| prefix_usage(e, &format!("--arg {name}: ")))?;
                let id = mem.alloc_bytes(name.as_str(), *elem, bytes);
                buffers.push((name.clone(), id));
                Arg::Buffer(id)
            }
        };
        bound.push((name.clone(), vec![arg]));
    }
    // Address tables, over the buffers just allocated (an int64 parameter takes it as a plain buffer).
    let mut address_tables = Vec::new();
    for (k, (name, v)) in values.iter().enumerate() {
        let ArgValue::Ptrs(names) = v else { continue };
        if let Some((_, ArgSpec::Pointer(elem, _))) = inferred.get(k)
            && elem.bytes() != 8
        {
            return Err(CliError::Usage(format!(
                "--arg {name}=ptrs:..: the parameter must point to 64-bit integers, \
                 not {}",
                elem.triton_name()
            ))
            .into());
        }
        let mut bytes = Vec::with_capacity(8 * names.len());
        for n in names {
            let Some((_, id)) = buffers.iter().find(|(b, _)| b == n) else {
                return Err(CliError::Usage(format!("--arg {name}: `{n}` is not a buffer --arg")).into());
            };
            bytes.extend_from_slice(&mem.base(*id).to_le_bytes());
        }
        let id = mem.alloc_bytes(name.as_str(), ScalarType::I64, bytes);
        buffers.push((name.clone(), id));
        bound.push((name.clone(), vec![Arg::Buffer(id)]));
        address_tables.push(name.clone());
    }
    // Descriptors, over the buffers just allocated: base, shape (row-major) and strides, as Triton passes them.
    for (name, v) in &values {
        let ArgValue::Desc { buffer, shape, block, im2col, .. } = v else { continue };
        let Some((_, id)) = buffers.iter().find(|(n, _)| n == buffer) else {
            return Err(CliError::Usage(format!("descriptor `{name}` views `{buffer}`, which is not a buffer")).into());
        };
        let buf = mem.buffer(*id);
        let shape = shape.clone().unwrap_or_else(|| match values.iter().find(|(n, _)| n == buffer) {
            Some((_, ArgValue::Buffer { shape, .. })) => shape.clone(),
            _ => unreachable!("a buffer"),
        });
        // Checked: a shape whose product overflows is larger than any buffer (strides then are never used).
        let numel = |dims: &[usize]| dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let fits = numel(&shape).is_some_and(|n| n <= buf.len());
        let strides: Vec<usize> = (0..shape.len()).map(|d| numel(&shape[d + 1..]).unwrap_or(usize::MAX)).collect();
        let problem = if let Some(im) = im2col {
            let s = shape.len().saturating_sub(2);
            let es = im.element_strides.as_ref().map_or(shape.len(), Vec::len);
            if !(3..=5).contains(&shape.len()) || block.len() != 2 {
                Some(format!(
                    "an im2col descriptor views a tensor of rank 3 to 5 (got {shape:?}) with a block of \
                              [pixels, channels] (got {block:?})"
                ))
            } else if im.lower.len() != s || im.upper.len() != s || es != shape.len() {
                Some(format!(
                    "its tensor {shape:?} needs {s} lower and upper corners and {} element strides",
                    shape.len()
                ))
            } else if !fits {
                Some(format!("its shape {shape:?} needs more than the {} elements of `{buffer}`", buf.len()))
            } else {
                None
            }
        } else if shape.len() != block.len() {
            Some(format!("its shape {shape:?} and block {block:?} differ in rank"))
        } else if shape.iter().any(|&d| d == 0 || d > i32::MAX as usize) {
            Some(format!("its shape {shape:?} needs dims from 1 to 2^31 - 1"))
        } else if !fits {
            Some(format!("its shape {shape:?} needs more than the {} elements of `{buffer}`", buf.len()))
        } else if strides[..strides.len() - 1].iter().any(|&s| s * buf.elem.bytes() as usize % 16 != 0) {
            Some(format!(
                "the strides {strides:?} of {} must be 16-byte aligned (a row of {} x {} bytes)",
                buf.elem,
                shape[shape.len() - 1],
                buf.elem.bytes()
            ))
        } else {
            None
        };
        if let Some(p) = problem {
            return Err(CliError::Usage(format!("descriptor `{name}` over `{buffer}`: {p}")).into());
        }
        let mut ir_args = vec![Arg::Buffer(*id)];
        ir_args.extend(shape.iter().chain(&strides).map(|&d| Arg::Int(d as i64)));
        if let Some(im) = im2col {
            let ones = vec![1; shape.len()];
            let es = im.element_strides.as_ref().unwrap_or(&ones);
            ir_args.extend(im.lower.iter().chain(&im.upper).chain(es).map(|&d| Arg::Int(d)));
        }
        bound.push((name.clone(), ir_args));
    }
    // The IR's arguments are the runtime parameters that were not specialized as constants, in order.
    let mut call_args = Vec::new();
    for (p, a) in info.params.iter().zip(&spec.args) {
        if matches!(a, ArgSpec::Constexpr(_)) {
            continue;
        }
        let (_, ir_args) = bound
            .iter()
            .find(|(n, _)| *n == p.name)
            .ok_or_else(|| CliError::Usage(format!("no value for parameter `{}`", p.name)))?;
        debug_assert_eq!(ir_args.len(), a.ir_args());
        call_args.extend_from_slice(ir_args);
    }
    // Formula names: scalars by value, buffers by bytes, numeric constexprs by value.
    let mut names: Vec<(String, f64)> = Vec::new();
    for (name, v) in &values {
        match v {
            ArgValue::Int(i) => names.push((name.clone(), *i as f64)),
            ArgValue::Float(x) => names.push((name.clone(), *x)),
            ArgValue::Buffer { .. } | ArgValue::Desc { .. } | ArgValue::Ptrs(_) => {}
        }
    }
    for (name, id) in &buffers {
        let b = mem.buffer(*id);
        names.push((name.clone(), (b.len() * b.elem.bytes() as usize) as f64));
    }
    for (p, a) in info.params.iter().zip(&spec.args) {
        match a {
            ArgSpec::Constexpr(ConstValue::Int(i)) => names.push((p.name.clone(), *i as f64)),
            ArgSpec::Constexpr(ConstValue::Float(x)) => names.push((p.name.clone(), *x)),
            _ => {}
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match args.threads {
        Some(t) if t > cores as u64 => {
            eprintln!("note: --threads {t} is more than the {cores} this machine runs at once: using {cores}");
            cores
        }
        Some(t) => t as usize,
        None => cores,
    };
    let limits = tessel_interp::Limits {
        max_iterations: args.max_iterations,
        max_work: args.max_work,
        threads,
        notes: Some(|why| eprintln!("note: {why}")),
        stop: None,
        clc: args.clc_policy,
        schedule: args.ws_schedule,
        reduce_order: tessel_interp::ReduceOrder::Layout,
        mma_order: args.mma_order,
    };
    Ok(Prepared {
        src,
        kernel: kernel.to_string(),
        spec,
        func,
        mem,
        buffers,
        call_args,
        grid,
        names,
        address_tables,
        timings,
        limits,
    })
}

/// The shape of buffer `--arg name`.
fn buffer_shape(values: &[(String, ArgValue)], name: &str) -> Option<Vec<usize>> {
    values.iter().find_map(|(n, v)| match v {
        ArgValue::Buffer { shape, .. } if n == name => Some(shape.clone()),
        _ => None,
    })
}

/// `tensordesc<fp16[16, 32]>`, the signature spelling of a descriptor.
fn desc_spelling(a: &ArgSpec) -> String {
    let (elem, block_shape, padding_nan, kind) = match a {
        ArgSpec::TensorDesc { elem, block_shape, padding_nan, .. } => {
            (elem, block_shape, padding_nan, "tensordesc".to_string())
        }
        ArgSpec::TensorDescIm2col { elem, block_shape, padding_nan, rank } => {
            (elem, block_shape, padding_nan, format!("tensordesc_im2col(rank {rank})"))
        }
        _ => return format!("{a:?}"),
    };
    let dims: Vec<String> = block_shape.iter().map(u32::to_string).collect();
    let padding = if *padding_nan { ",padding=nan" } else { "" };
    // Triton's signature names of the element types.
    let elem = match elem.name() {
        "f16" => "fp16",
        "f32" => "fp32",
        "f64" => "fp64",
        "f8e4m3" => "fp8e4nv",
        "f8e5m2" => "fp8e5",
        other => other,
    };
    format!("{kind}<{elem}[{}]{padding}>", dims.join(", "))
}

/// `e` with `prefix` before its message (a usage error about one `--arg`).
fn prefix_usage(e: CliError, prefix: &str) -> CliError {
    match e {
        CliError::Usage(m) => CliError::Usage(format!("{prefix}{m}")),
        CliError::Failed(m) => CliError::Failed(format!("{prefix}{m}")),
        other => other,
    }
}
