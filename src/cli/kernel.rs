//! `tessel check`, `tessel compile` and `tessel run`: kernels from source files.
//!
//! A kernel is named `FILE.py::KERNEL`. Its specialization comes from `--signature` (Triton's spelling:
//! `*fp32,*fp32,*fp32,i32`, with `:16` marking values known to be multiples of 16; pointers are assumed
//! 16-byte aligned, as PyTorch allocations are), `--const NAME=VALUE` for `tl.constexpr` parameters, and
//! `--num-warps`. `tessel run` allocates every pointer argument from `--arg NAME=SPEC` and infers the signature
//! from those arguments when none is given. A host tensor descriptor parameter is `tensordesc<fp16[16, 32]>` in
//! the signature and `desc:BUFFER:block=16x32` in `--arg` (a descriptor over another `--arg`'s buffer).

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use tessel_lang::ast;
use tessel_lang::elab::{ArgSpec, ConstValue, KernelInfo, Specialization};
use tessel_tile::interp::memory::{BufferId, Memory};
use tessel_tile::interp::{self, Arg};
use tessel_tile::{Func, ScalarType};

use super::{CliError, Failure};
use crate::npy;

#[derive(Debug, Args)]
#[command(after_help = "Example:\n  tessel check examples/vector_add.py")]
pub struct CheckArgs {
    /// A Python file holding @triton.jit / @gluon.jit kernels
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct SpecArgs {
    /// The kernel, as FILE.py::KERNEL
    pub target: String,
    /// Types of the non-constexpr parameters in order, e.g. '*fp32,*fp32,*fp32,i32' (`:16` = multiple of 16;
    /// a tensor descriptor is 'tensordesc<fp16[16, 32]>', with ',padding=nan' before the '>' for NaN padding)
    #[arg(long)]
    pub signature: Option<String>,
    /// A compile-time parameter value: NAME=VALUE (an int, float, True/False, None, a dtype such as float16, or a
    /// quoted string); repeatable
    #[arg(long = "const", value_name = "NAME=VALUE")]
    pub consts: Vec<String>,
    /// Warps per program
    #[arg(long, default_value_t = 4)]
    pub num_warps: u32,
    /// Software-pipelining depth for loads feeding `dot`
    #[arg(long, default_value_t = 3)]
    pub num_stages: u32,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  tessel compile examples/vector_add.py::add_kernel --signature '*fp32,*fp32,*fp32,i32' \\\n      \
    --const BLOCK_SIZE=1024 --emit tile"
)]
pub struct CompileArgs {
    #[command(flatten)]
    pub spec: SpecArgs,
    /// What to print
    #[arg(long, value_enum, default_value_t = Emit::Tile)]
    pub emit: Emit,
    /// Target for --emit ptx
    #[arg(long, value_enum, default_value_t = Arch::Sm90a)]
    pub arch: Arch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The kernel's syntax tree
    Ast,
    /// Tile IR after elaboration and canonicalization
    Tile,
    /// Layout IR: every tensor with the layout auto mode assigned
    Layout,
    /// PTX for --arch
    Ptx,
}

#[derive(Debug, Args)]
#[command(after_help = "Argument specs (--arg NAME=SPEC):\n  \
    1000, -3, 0.5             a scalar\n  \
    rand:4096[:fp16]          uniform in [-1, 1), seeded by --seed (default dtype fp32, or the signature's)\n  \
    randn:64x128              standard normal\n  \
    zeros:N, ones:N, arange:N a filled buffer\n  \
    fill:VALUE:N              every element VALUE\n  \
    x.npy                     a NumPy file\n  \
    desc:x:block=16x32        a tensor descriptor (TensorDescriptor.from_tensor) over the buffer of --arg x,\n                            \
    row-major over x's SIZE (x need not be a parameter); desc:x:40x100:block=16x32\n                            \
    gives the shape; :padding=nan pads loads with NaN instead of zero\n\n\
Examples:\n  tessel run examples/vector_add.py::add_kernel --const BLOCK_SIZE=256 --grid 4 \\\n      \
    --arg x_ptr=rand:1000 --arg y_ptr=rand:1000 --arg output_ptr=zeros:1000 --arg n_elements=1000\n  \
tessel run examples/descriptor_copy.py::transpose_scale_kernel --grid 3 --arg x=rand:40x104:fp16 \\\n      \
    --arg y=zeros:104x40:fp16 --arg s=zeros:40 --arg x_desc=desc:x:block=16x32 --arg y_desc=desc:y:block=32x16 \\\n      \
    --arg sum_desc=desc:s:block=16 --arg scale=0.5")]
pub struct RunArgs {
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
    /// Write every buffer to DIR/NAME.npy after the run
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// How many leading elements of each buffer to print
    #[arg(long, default_value_t = 8)]
    pub show: usize,
    /// Run in the interpreter even when a GPU is present
    #[arg(long)]
    pub interpret: bool,
    /// After a GPU run, run the interpreter on the same inputs and compare every buffer
    #[arg(long, conflicts_with = "interpret")]
    pub check: bool,
    /// After a GPU run, time the kernel: 10 warm-up launches, then the median of 100 (CUDA events); GB/s counts
    /// every buffer argument read or written once
    #[arg(long, conflicts_with = "interpret")]
    pub bench: bool,
}

/// A parsed source file and the name it is reported under.
struct Source {
    name: String,
    text: String,
    module: ast::Module,
}

fn load(path: &Path) -> Result<Source, CliError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CliError::Usage(format!("cannot read {name}: {e}")))?;
    let module = tessel_lang::parse_module(&text).map_err(|d| CliError::Diagnostic(d.render(&name, &text)))?;
    Ok(Source { name, text, module })
}

fn split_target(target: &str) -> Result<(&str, &str), CliError> {
    target.rsplit_once("::").filter(|(f, k)| !f.is_empty() && !k.is_empty()).ok_or_else(|| {
        CliError::Usage(format!(
            "expected FILE.py::KERNEL, got `{target}` (run `tessel check FILE.py` to list kernels)"
        ))
    })
}

fn find_kernel(src: &Source, name: &str) -> Result<KernelInfo, CliError> {
    let kernels = tessel_lang::elab::kernels(&src.module);
    let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
    kernels.iter().find(|k| k.name == name).cloned().ok_or_else(|| {
        let list = if names.is_empty() {
            "it has no jit kernels".to_string()
        } else {
            format!("its kernels: {}", names.join(", "))
        };
        CliError::Usage(format!("{} has no kernel `{name}`; {list}", src.name))
    })
}

pub(super) fn check(args: CheckArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let src = load(&args.file)?;
    let kernels = tessel_lang::elab::kernels(&src.module);
    writeln!(out, "{}: {} kernel{}", src.name, kernels.len(), if kernels.len() == 1 { "" } else { "s" })?;
    for k in kernels {
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| {
                let mut s = p.name.clone();
                if p.constexpr {
                    s.push_str(": constexpr");
                }
                if let Some(d) = &p.default {
                    write!(s, " = {d}").unwrap();
                }
                s
            })
            .collect();
        writeln!(out, "  {:?} {}({})", k.decorator, k.name, params.join(", "))?;
    }
    Ok(())
}

pub(super) fn compile(args: CompileArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let (file, kernel) = split_target(&args.spec.target)?;
    let src = load(Path::new(file))?;
    let info = find_kernel(&src, kernel)?;
    if args.emit == Emit::Ast {
        let def =
            src.module.body.iter().find(|s| matches!(&s.kind, ast::StmtKind::FunctionDef(d) if d.name.name == kernel));
        let one = ast::Module { body: def.into_iter().cloned().collect(), span: src.module.span };
        out.write_all(ast::dump(&one, false).as_bytes())?;
        return Ok(());
    }
    let spec = specialization(&info, &args.spec, None)?;
    let mut func = elaborate(&src, kernel, &spec)?;
    if args.emit == Emit::Tile {
        out.write_all(tessel_tile::print::print_func(&func).as_bytes())?;
        return Ok(());
    }
    assign_layouts(&mut func, kernel, spec.num_warps)?;
    if args.emit == Emit::Layout {
        out.write_all(tessel_tile::print::print_func(&func).as_bytes())?;
        return Ok(());
    }
    let k = codegen(&src, &func, kernel, args.arch)?;
    out.write_all(k.ptx.as_bytes())?;
    Ok(())
}

fn assign_layouts(func: &mut Func, kernel: &str, num_warps: u32) -> Result<(), CliError> {
    tessel_tile::layout::assign_layouts(func, num_warps)
        .map_err(|e| CliError::Usage(format!("layout assignment failed for `{kernel}`: {e}")))
}

fn codegen(src: &Source, func: &Func, kernel: &str, arch: Arch) -> Result<tessel_codegen::Kernel, CliError> {
    tessel_codegen::compile_with_source(func, arch.into(), codegen_source(src))
        .map_err(|e| CliError::Usage(format!("cannot generate code for `{kernel}` yet: {}", e.message)))
}

/// The source text for codegen, which reports `device_assert` failures at `file:line`.
fn codegen_source(src: &Source) -> tessel_codegen::Source<'_> {
    tessel_codegen::Source { file: &src.name, text: &src.text }
}

/// A PTX target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Arch {
    Sm80,
    Sm90a,
    Sm100a,
}

impl From<Arch> for tessel_codegen::Arch {
    fn from(a: Arch) -> Self {
        match a {
            Arch::Sm80 => tessel_codegen::Arch::Sm80,
            Arch::Sm90a => tessel_codegen::Arch::Sm90a,
            Arch::Sm100a => tessel_codegen::Arch::Sm100a,
        }
    }
}

fn elaborate(src: &Source, kernel: &str, spec: &Specialization) -> Result<Func, CliError> {
    let mut func = tessel_lang::elab::elaborate(&src.module, kernel, spec)
        .map_err(|d| CliError::Diagnostic(d.render(&src.name, &src.text)))?;
    tessel_tile::passes::canonicalize(&mut func);
    Ok(func)
}

/// Builds the specialization: constexprs from `--const`, the rest from the signature (given, or inferred from
/// the run's arguments).
fn specialization(
    info: &KernelInfo,
    spec: &SpecArgs,
    inferred: Option<&[(String, ArgSpec)]>,
) -> Result<Specialization, CliError> {
    let mut consts = Vec::new();
    for c in &spec.consts {
        let (name, value) =
            c.split_once('=').ok_or_else(|| CliError::Usage(format!("--const expects NAME=VALUE, got `{c}`")))?;
        if !info.params.iter().any(|p| p.name == name.trim()) {
            return Err(CliError::Usage(format!("`{}` has no parameter `{}`", info.name, name.trim())));
        }
        consts.push((name.trim().to_string(), parse_const(value.trim())?));
    }
    let runtime: Vec<&str> = info
        .params
        .iter()
        .filter(|p| !p.constexpr && !consts.iter().any(|(n, _)| *n == p.name))
        .map(|p| p.name.as_str())
        .collect();
    let typed: Vec<ArgSpec> = match (&spec.signature, inferred) {
        (Some(sig), _) => {
            let parts = split_signature(sig);
            if parts.len() != runtime.len() {
                return Err(CliError::Usage(format!(
                    "the signature has {} types but `{}` has {} non-constexpr parameters ({})",
                    parts.len(),
                    info.name,
                    runtime.len(),
                    runtime.join(", ")
                )));
            }
            parts.into_iter().map(parse_sig_type).collect::<Result<_, _>>()?
        }
        (None, Some(args)) => runtime
            .iter()
            .map(|name| {
                args.iter().find(|(n, _)| n == name).map(|(_, s)| s.clone()).ok_or_else(|| {
                    CliError::Usage(format!("no value for parameter `{name}`: pass --arg {name}=... (or --const)"))
                })
            })
            .collect::<Result<_, _>>()?,
        (None, None) => {
            if runtime.is_empty() {
                Vec::new()
            } else {
                return Err(CliError::Usage(format!(
                    "--signature is needed for the non-constexpr parameters of `{}`: {}",
                    info.name,
                    runtime.join(", ")
                )));
            }
        }
    };
    let mut typed = typed.into_iter();
    let mut args = Vec::new();
    // Parameters left out must be trailing ones with defaults (the elaborator fills those in).
    let mut missing: Vec<(&str, bool)> = Vec::new();
    for p in &info.params {
        let arg = match consts.iter().find(|(n, _)| *n == p.name) {
            Some((_, v)) => Some(ArgSpec::Constexpr(v.clone())),
            None if p.constexpr => None,
            None => typed.next(),
        };
        match arg {
            Some(a) if missing.is_empty() => args.push(a),
            Some(_) | None => missing.push((p.name.as_str(), p.default.is_some())),
        }
    }
    let provided_after_gap = info.params.len() - args.len() > missing.len();
    if let Some((m, _)) = missing.iter().find(|(_, has_default)| !has_default || provided_after_gap) {
        return Err(CliError::Usage(format!("no value for constexpr `{m}` of `{}`: pass --const {m}=...", info.name)));
    }
    Ok(Specialization { args, num_warps: spec.num_warps, num_stages: spec.num_stages })
}

fn parse_const(v: &str) -> Result<ConstValue, CliError> {
    Ok(match v {
        "True" | "true" => ConstValue::Bool(true),
        "False" | "false" => ConstValue::Bool(false),
        "None" => ConstValue::None,
        _ if v.len() >= 2 && (v.starts_with('"') && v.ends_with('"') || v.starts_with('\'') && v.ends_with('\'')) => {
            ConstValue::Str(v[1..v.len() - 1].to_string())
        }
        _ => {
            if let Ok(i) = v.replace('_', "").parse::<i64>() {
                ConstValue::Int(i)
            } else if let Ok(x) = v.parse::<f64>() {
                ConstValue::Float(x)
            } else if let Some(t) = dtype(v) {
                ConstValue::Dtype(t)
            } else {
                return Err(CliError::Usage(format!(
                    "cannot read constant `{v}`: expected a number, True/False, None, a dtype or a quoted string"
                )));
            }
        }
    })
}

/// `fp32`, `float32`, `tl.float32`, `f32`, `bf16`, `i32`, `u8`, `fp8e4nv`, ...
fn dtype(s: &str) -> Option<ScalarType> {
    let s = s.trim_start_matches("tl.").trim_start_matches("gl.").trim_start_matches("torch.");
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

/// The types of a signature: split at the commas outside `<...>` and `[...]`.
fn split_signature(sig: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in sig.char_indices() {
        match c {
            '<' | '[' => depth += 1,
            '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(sig[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(sig[start..].trim());
    parts.retain(|p| !p.is_empty());
    parts
}

/// `tensordesc<fp16[16, 32]>` (Triton's spelling), `tensordesc<fp32[64],padding=nan>`.
fn parse_desc_type(s: &str) -> Option<Result<ArgSpec, CliError>> {
    let inner = s.strip_prefix("tensordesc<")?;
    let bad = || {
        CliError::Usage(format!(
            "cannot read `{s}`: expected tensordesc<DTYPE[BLOCK, ...]>, e.g. tensordesc<fp16[16, 32]> or \
             tensordesc<fp32[64],padding=nan>"
        ))
    };
    let parse = || -> Option<ArgSpec> {
        let inner = inner.strip_suffix('>')?;
        let (dtype_name, rest) = inner.split_once('[')?;
        let (block, rest) = rest.split_once(']')?;
        let padding_nan = match rest.trim().strip_prefix(',').map(str::trim) {
            None if rest.trim().is_empty() => false,
            Some("padding=zero") => false,
            Some("padding=nan") => true,
            _ => return None,
        };
        let block_shape = block.split(',').map(|d| d.trim().parse::<u32>().ok()).collect::<Option<Vec<_>>>()?;
        Some(ArgSpec::TensorDesc { elem: dtype(dtype_name.trim())?, block_shape, padding_nan })
    };
    Some(parse().ok_or_else(bad))
}

fn parse_sig_type(s: &str) -> Result<ArgSpec, CliError> {
    if let Some(desc) = parse_desc_type(s) {
        return desc;
    }
    let (ty, div) = match s.split_once(':') {
        Some((t, "16")) => (t, Some(true)),
        Some((t, "1")) => (t, Some(false)),
        Some((_, d)) => {
            return Err(CliError::Usage(format!("in `{s}`: the only divisibility markers are :16 and :1, got :{d}")));
        }
        None => (s, None),
    };
    let bad = || {
        CliError::Usage(format!(
            "unknown signature type `{s}` (e.g. *fp32, *fp16:16, i32, i64, fp32, tensordesc<fp16[16, 32]>)"
        ))
    };
    if let Some(p) = ty.strip_prefix('*') {
        return Ok(ArgSpec::Pointer(dtype(p).ok_or_else(bad)?, div.unwrap_or(true)));
    }
    let t = dtype(ty).ok_or_else(bad)?;
    Ok(if t.is_float() { ArgSpec::Float(t) } else { ArgSpec::Int(t, div.unwrap_or(false)) })
}

/// A `--arg` value: a scalar, a buffer to allocate, or a tensor descriptor over another `--arg`'s buffer.
enum ArgValue {
    Int(i64),
    Float(f64),
    Buffer { elem: Option<ScalarType>, values: BufferInit, shape: Vec<usize> },
    Desc { buffer: String, shape: Option<Vec<usize>>, block: Vec<u32>, padding_nan: bool },
}

enum BufferInit {
    Rand,
    Randn,
    Fill(f64),
    Arange,
    Data(Vec<f64>),
}

fn parse_arg_value(spec: &str) -> Result<ArgValue, CliError> {
    if let Ok(i) = spec.replace('_', "").parse::<i64>() {
        return Ok(ArgValue::Int(i));
    }
    if let Ok(x) = spec.parse::<f64>() {
        return Ok(ArgValue::Float(x));
    }
    if spec.ends_with(".npy") {
        let bytes = std::fs::read(spec).map_err(|e| CliError::Usage(format!("cannot read {spec}: {e}")))?;
        let a = npy::read(&bytes).map_err(|e| CliError::Usage(format!("{spec}: {e}")))?;
        return Ok(ArgValue::Buffer { elem: Some(a.elem), values: BufferInit::Data(a.values), shape: a.shape });
    }
    let parts: Vec<&str> = spec.split(':').collect();
    let (kind, rest) = parts.split_first().unwrap();
    if *kind == "desc" {
        return parse_desc_arg(spec, rest);
    }
    let (init, rest) = match (*kind, rest) {
        ("fill", [v, rest @ ..]) => (
            BufferInit::Fill(v.parse().map_err(|_| CliError::Usage(format!("fill value `{v}` is not a number")))?),
            rest,
        ),
        ("rand", rest) => (BufferInit::Rand, rest),
        ("randn", rest) => (BufferInit::Randn, rest),
        ("zeros", rest) => (BufferInit::Fill(0.0), rest),
        ("ones", rest) => (BufferInit::Fill(1.0), rest),
        ("arange", rest) => (BufferInit::Arange, rest),
        _ => {
            return Err(CliError::Usage(format!(
                "cannot read argument `{spec}`: expected a number, a .npy file, rand/randn/zeros/ones/arange/fill:V followed by :SIZE[:DTYPE], or desc:BUFFER:block=BxB"
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
fn parse_desc_arg(spec: &str, rest: &[&str]) -> Result<ArgValue, CliError> {
    let usage = || {
        CliError::Usage(format!(
            "cannot read `{spec}`: expected desc:BUFFER[:SHAPE]:block=BxB[:padding=nan], e.g. desc:x:block=16x32"
        ))
    };
    let (buffer, rest) = rest.split_first().filter(|(b, _)| !b.is_empty()).ok_or_else(usage)?;
    let (mut shape, mut block, mut padding_nan) = (None, None, false);
    for part in rest {
        if let Some(b) = part.strip_prefix("block=") {
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
    Ok(ArgValue::Desc { buffer: buffer.to_string(), shape, block, padding_nan })
}

fn parse_grid(s: &str) -> Result<[u32; 3], CliError> {
    let dims: Vec<u32> = s
        .split(',')
        .map(|d| d.trim().parse::<u32>().ok().filter(|&v| v > 0))
        .collect::<Option<_>>()
        .filter(|v: &Vec<u32>| (1..=3).contains(&v.len()))
        .ok_or_else(|| CliError::Usage(format!("--grid expects N, N,M or N,M,K with positive integers, got `{s}`")))?;
    Ok([dims[0], *dims.get(1).unwrap_or(&1), *dims.get(2).unwrap_or(&1)])
}

/// Deterministic uniform [-1, 1) values (splitmix64).
fn uniform(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

pub(super) fn run(args: RunArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Failure> {
    let (file, kernel) = split_target(&args.spec.target)?;
    let src = load(Path::new(file))?;
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
        values.push((name.trim().to_string(), parse_arg_value(spec.trim())?));
    }
    // A buffer that only descriptors use (TensorDescriptor.from_tensor(x, ...)) need not be a parameter.
    let viewed = |name: &str| values.iter().any(|(_, v)| matches!(v, ArgValue::Desc { buffer, .. } if buffer == name));
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
            (ArgValue::Desc { buffer, .. }, Some(ArgSpec::TensorDesc { elem, .. })) if buffer == buf => Some(elem),
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
                // As Triton's launcher does: i32 when it fits, and specialized as a multiple of 16 when it is one.
                ArgValue::Int(i) => {
                    ArgSpec::Int(if i32::try_from(*i).is_ok() { ScalarType::I32 } else { ScalarType::I64 }, i % 16 == 0)
                }
                ArgValue::Float(_) => ArgSpec::Float(ScalarType::F32),
                ArgValue::Buffer { .. } => ArgSpec::Pointer(buffer_elem(name).unwrap_or(ScalarType::F32), true),
                ArgValue::Desc { buffer, block, padding_nan, .. } => {
                    let elem = buffer_elem(buffer).ok_or_else(|| {
                        CliError::Usage(format!("descriptor `{name}` views `{buffer}`, which is not a buffer --arg"))
                    })?;
                    ArgSpec::TensorDesc { elem, block_shape: block.clone(), padding_nan: *padding_nan }
                }
            };
            let spec = match (declared(name), spec) {
                (Some(d @ ArgSpec::TensorDesc { .. }), s @ ArgSpec::TensorDesc { .. }) if d != s => {
                    return Err(CliError::Usage(format!(
                        "--arg {name} is a {} descriptor, but the signature declares {}",
                        desc_spelling(&s),
                        desc_spelling(&d)
                    )));
                }
                (Some(d), s) if matches!(d, ArgSpec::TensorDesc { .. }) != matches!(s, ArgSpec::TensorDesc { .. }) => {
                    return Err(CliError::Usage(format!(
                        "--arg {name}: the signature and the value disagree on whether it is a tensor descriptor"
                    )));
                }
                (d, s) => d.unwrap_or(s),
            };
            Ok((name.clone(), spec))
        })
        .collect::<Result<_, CliError>>()?;
    let spec_args = SpecArgs { signature: None, ..clone_spec(&args.spec) };
    let spec = specialization(&info, &spec_args, Some(&inferred))?;
    let func = elaborate(&src, kernel, &spec)?;

    // Allocate buffers and bind arguments in the order of the function's (runtime) arguments.
    let mut mem = Memory::new();
    let mut buffers: Vec<(String, BufferId)> = Vec::new();
    let mut bound: Vec<(String, Vec<Arg>)> = Vec::new();
    for (k, (name, v)) in values.iter().enumerate() {
        let Some((_, ArgSpec::Pointer(elem, _) | ArgSpec::Int(elem, _) | ArgSpec::Float(elem))) = inferred.get(k)
        else {
            continue;
        };
        let arg = match v {
            ArgValue::Int(i) => Arg::Int(*i),
            ArgValue::Float(x) => Arg::Float(*x),
            ArgValue::Desc { .. } => continue,
            ArgValue::Buffer { values, shape, .. } => {
                let len = shape.iter().product::<usize>();
                let seed = args.seed.wrapping_mul(1000).wrapping_add(k as u64);
                let data = match values {
                    BufferInit::Rand => uniform(seed, len),
                    BufferInit::Randn => {
                        let u = uniform(seed, 2 * len);
                        (0..len)
                            .map(|i| {
                                (-2.0 * (0.5 * (u[2 * i] + 1.0)).max(1e-300).ln()).sqrt()
                                    * (std::f64::consts::PI * u[2 * i + 1]).cos()
                            })
                            .collect()
                    }
                    BufferInit::Fill(x) => vec![*x; len],
                    BufferInit::Arange => (0..len).map(|i| i as f64).collect(),
                    BufferInit::Data(d) => d.clone(),
                };
                let id = mem.alloc_from(name.as_str(), *elem, &data);
                buffers.push((name.clone(), id));
                Arg::Buffer(id)
            }
        };
        bound.push((name.clone(), vec![arg]));
    }
    // Descriptors, over the buffers just allocated: base, shape (row-major) and strides, as Triton passes them.
    for (name, v) in &values {
        let ArgValue::Desc { buffer, shape, block, .. } = v else { continue };
        let Some((_, id)) = buffers.iter().find(|(n, _)| n == buffer) else {
            return Err(CliError::Usage(format!("descriptor `{name}` views `{buffer}`, which is not a buffer")).into());
        };
        let buf = mem.buffer(*id);
        let shape = shape.clone().unwrap_or_else(|| match values.iter().find(|(n, _)| n == buffer) {
            Some((_, ArgValue::Buffer { shape, .. })) => shape.clone(),
            _ => unreachable!("a buffer"),
        });
        let strides: Vec<usize> = (0..shape.len()).map(|d| shape[d + 1..].iter().product()).collect();
        let problem = if shape.len() != block.len() {
            Some(format!("its shape {shape:?} and block {block:?} differ in rank"))
        } else if shape.iter().any(|&d| d == 0 || d > i32::MAX as usize) {
            Some(format!("its shape {shape:?} needs dims from 1 to 2^31 - 1"))
        } else if shape.iter().product::<usize>() > buf.len() {
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
    let inputs = mem.clone();
    let launch = Launch { src: &src, func: &func, kernel, args: &call_args, grid };
    let on_gpu = !args.interpret && gpu_run(&launch, &mut mem, args.bench, out, err)?;
    let log = if on_gpu {
        Vec::new()
    } else {
        writeln!(
            err,
            "note: running `{kernel}` in the interpreter over a grid of {}x{}x{}",
            grid[0], grid[1], grid[2]
        )?;
        interpret(&src, &func, &call_args, grid, &mut mem)?
    };
    if args.check && on_gpu {
        let mut reference = inputs;
        interpret(&src, &func, &call_args, grid, &mut reference)?;
        for (name, id) in &buffers {
            let (got, want) = (mem.read_f64(*id), reference.read_f64(*id));
            let nan_mismatch = got.iter().zip(&want).any(|(a, b)| a.is_nan() != b.is_nan());
            let err2: f64 = got.iter().zip(&want).filter(|(a, _)| !a.is_nan()).map(|(a, b)| (a - b) * (a - b)).sum();
            let ref2: f64 = want.iter().filter(|b| !b.is_nan()).map(|b| b * b).sum();
            let rel = if ref2 > 0.0 { (err2 / ref2).sqrt() } else { err2.sqrt() };
            let verdict =
                if nan_mismatch { "MISMATCH: NaN on one side only".to_string() } else { format!("{rel:.3e}") };
            writeln!(out, "check {name}: ||gpu - interpreter|| / ||interpreter|| = {verdict}")?;
        }
    }
    for line in log {
        writeln!(out, "{line}")?;
    }
    for (name, id) in &buffers {
        let b = mem.buffer(*id);
        let vals = mem.read_f64(*id);
        let shown: Vec<String> = vals.iter().take(args.show).map(|&v| show_value(v, b.elem)).collect();
        let more = if vals.len() > args.show { ", ..." } else { "" };
        if args.show == 0 {
            writeln!(out, "{name}: {}[{}]", b.elem, vals.len())?;
        } else {
            writeln!(out, "{name}: {}[{}] = [{}{more}]", b.elem, vals.len(), shown.join(", "))?;
        }
        if let Some(dir) = &args.out_dir {
            std::fs::create_dir_all(dir)
                .map_err(|e| CliError::Failed(format!("cannot create {}: {e}", dir.display())))?;
            let path = dir.join(format!("{name}.npy"));
            let bytes = npy::write(&npy::Array { elem: b.elem, shape: vec![vals.len()], values: vals });
            std::fs::write(&path, bytes)
                .map_err(|e| CliError::Failed(format!("cannot write {}: {e}", path.display())))?;
        }
    }
    Ok(())
}

/// `tensordesc<fp16[16, 32]>`, the signature spelling of a descriptor.
fn desc_spelling(a: &ArgSpec) -> String {
    let ArgSpec::TensorDesc { elem, block_shape, padding_nan } = a else { return format!("{a:?}") };
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
    format!("tensordesc<{elem}[{}]{padding}>", dims.join(", "))
}

/// The shortest decimal that reads back as the same value of the element's type.
fn show_value(v: f64, elem: ScalarType) -> String {
    match elem {
        ScalarType::F32 => format!("{}", v as f32),
        ScalarType::F16 => format!("{}", half::f16::from_f64(v)),
        ScalarType::BF16 => format!("{}", half::bf16::from_f64(v)),
        _ => format!("{v}"),
    }
}

fn interpret(
    src: &Source,
    func: &Func,
    args: &[Arg],
    grid: [u32; 3],
    mem: &mut Memory,
) -> Result<Vec<String>, CliError> {
    interp::run(func, args, grid, mem).map_err(|e| {
        let at = e.loc.map(|l| {
            tessel_lang::Diagnostic::error(e.message.clone(), tessel_lang::Span::new(l.start as usize, l.end as usize))
        });
        match at {
            Some(d) => CliError::Diagnostic(d.render(&src.name, &src.text)),
            None => CliError::Usage(format!("the kernel failed: {e}")),
        }
    })
}

/// One kernel launch: the IR, its name, the argument values and the grid.
#[derive(Clone, Copy)]
struct Launch<'a> {
    src: &'a Source,
    func: &'a Func,
    kernel: &'a str,
    args: &'a [Arg],
    grid: [u32; 3],
}

/// Runs on the GPU when one is present and the kernel can be compiled for it; `false` (after a note saying why)
/// means the caller falls back to the interpreter. Buffers in `mem` are uploaded, and downloaded after the run.
fn gpu_run(
    launch: &Launch,
    mem: &mut Memory,
    bench: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<bool, Failure> {
    use tessel_codegen::runtime::{DeviceBuffer, Gpu, KArg};
    let Launch { src, func, kernel, args, grid } = *launch;
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            writeln!(err, "note: no GPU ({})", e.message)?;
            return Ok(false);
        }
    };
    let arch = match gpu.ctx.compute_capability() {
        Ok((9, _)) => tessel_codegen::Arch::Sm90a,
        Ok((10, _)) => tessel_codegen::Arch::Sm100a,
        _ => tessel_codegen::Arch::Sm80,
    };
    let mut laid = func.clone();
    let compiled = tessel_tile::layout::assign_layouts(&mut laid, func_num_warps(func))
        .map_err(|e| format!("layout assignment: {e}"))
        .and_then(|()| tessel_codegen::compile_with_source(&laid, arch, codegen_source(src)).map_err(|e| e.message));
    let k = match compiled {
        Ok(k) => k,
        Err(why) => {
            writeln!(err, "note: cannot generate GPU code for `{kernel}` yet ({why})")?;
            return Ok(false);
        }
    };
    let gpu_err = |e: tessel_codegen::runtime::RuntimeError| CliError::Failed(format!("GPU: {}", e.message));
    let loaded = gpu.load(&k).map_err(gpu_err)?;
    // Upload every buffer an argument names, once.
    let mut device: Vec<(BufferId, DeviceBuffer)> = Vec::new();
    for a in args {
        if let Arg::Buffer(id) = a
            && !device.iter().any(|(d, _)| d == id)
        {
            device.push((*id, gpu.upload(&mem.buffer(*id).bytes).map_err(gpu_err)?));
        }
    }
    let mut kargs = Vec::with_capacity(args.len());
    for (a, &v) in args.iter().zip(func.args()) {
        let ty = func.ty(v).elem().and_then(|e| e.scalar());
        kargs.push(match (a, ty) {
            (Arg::Buffer(id), _) => KArg::Buf(&device.iter().find(|(d, _)| d == id).expect("uploaded above").1),
            (Arg::Int(i), Some(ScalarType::I64 | ScalarType::U64)) => KArg::I64(*i),
            // 1/8/16-bit parameters read the low bytes of the 32-bit value.
            (
                Arg::Int(i),
                Some(
                    ScalarType::I32
                    | ScalarType::U32
                    | ScalarType::I16
                    | ScalarType::U16
                    | ScalarType::I8
                    | ScalarType::U8
                    | ScalarType::I1,
                ),
            ) => KArg::I32(*i as i32),
            (Arg::Float(x), Some(ScalarType::F64)) => KArg::F64(*x),
            (Arg::Float(x), Some(ScalarType::F32)) => KArg::F32(*x as f32),
            (Arg::Int(i), Some(ScalarType::F32)) => KArg::F32(*i as f32),
            (_, t) => {
                let what = t.map_or("this kind of".to_string(), |t| t.to_string());
                writeln!(err, "note: GPU launches do not take {what} arguments yet")?;
                return Ok(false);
            }
        });
    }
    writeln!(
        err,
        "note: running `{kernel}` on the GPU ({}) over a grid of {}x{}x{}",
        arch.target(),
        grid[0],
        grid[1],
        grid[2]
    )?;
    loaded.launch(&gpu, grid, &kargs).map_err(gpu_err)?;
    gpu.synchronize().map_err(gpu_err)?;
    for (id, buf) in &device {
        let bytes = gpu.download(buf).map_err(gpu_err)?;
        mem.set_bytes(*id, &bytes);
    }
    if bench {
        let times = loaded.time(&gpu, grid, &kargs, 10, 100).map_err(gpu_err)?;
        let median = times[times.len() / 2];
        let bytes: usize = device.iter().map(|(_, b)| b.len()).sum();
        let gbs = bytes as f64 / (median * 1e-3) / 1e9;
        writeln!(out, "bench {kernel}: median {median:.4} ms (min {:.4} ms), {bytes} bytes, {gbs:.0} GB/s", times[0])?;
    }
    Ok(true)
}

fn func_num_warps(f: &Func) -> u32 {
    match f.attr("num_warps") {
        Some(tessel_tile::ops::Attr::Int(n)) => *n as u32,
        _ => 4,
    }
}

fn clone_spec(s: &SpecArgs) -> SpecArgs {
    SpecArgs {
        target: s.target.clone(),
        signature: s.signature.clone(),
        consts: s.consts.clone(),
        num_warps: s.num_warps,
        num_stages: s.num_stages,
    }
}
