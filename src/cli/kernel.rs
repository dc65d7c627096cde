//! `tessel check` and `tessel compile`, and what every kernel command shares: loading a source file, finding a
//! kernel, and building its specialization from the command line (`run` and `bench` are in `run.rs`, their
//! `--arg` values in `args.rs`).
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
use tessel_lang::elab::modules::ModuleSet;
use tessel_lang::elab::roles::Role;
use tessel_lang::elab::{ArgSpec, ConstValue, KernelInfo, Specialization};
use tessel_tile::{Func, KernelConfig, ScalarType, Target};

use super::{CliError, Failure};
use crate::Timings;
use crate::pipeline::{KernelSource, Output, Stage};

#[derive(Debug, Args)]
#[command(after_help = "Example:\n  tessel check examples/vector_add.py")]
pub struct CheckArgs {
    /// A Python file holding @triton.jit / @gluon.jit kernels
    pub file: PathBuf,
    /// A directory searched for the modules the file imports, as Python searches sys.path (repeatable)
    #[arg(long = "path", value_name = "DIR")]
    pub path: Vec<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct SpecArgs {
    /// The kernel, as FILE.py::KERNEL
    pub target: String,
    /// Types of the non-constexpr parameters in order, e.g. '*fp32,*fp32,*fp32,i32' (`:16` = multiple of 16;
    /// a tensor descriptor is 'tensordesc<fp16[16, 32]>', with ',padding=nan' before the '>' for NaN padding)
    #[arg(long)]
    pub signature: Option<String>,
    /// A compile-time parameter value: NAME=VALUE (an int, float, True/False, None, a dtype such as float16, a
    /// quoted string, or a Python expression evaluated in the kernel's module: a layout such as
    /// 'gl.BlockedLayout([1], [32], [4], [0])' or 'BlockedLayout(...)', a tuple, a class); repeatable
    #[arg(long = "const", value_name = "NAME=VALUE")]
    pub consts: Vec<String>,
    /// Warps per program
    #[arg(long, default_value_t = KernelConfig::DEFAULT.num_warps)]
    pub num_warps: u32,
    /// Software-pipelining depth for loads feeding `dot` (1: loops run as written)
    #[arg(long, default_value_t = KernelConfig::DEFAULT.num_stages)]
    pub num_stages: u32,
    /// Register cap per thread (`.maxnreg`, Triton's `maxnreg`), 24..=256
    #[arg(long)]
    pub maxnreg: Option<u32>,
    /// CTAs per thread-block cluster (Triton's `num_ctas`, `gl.num_ctas()`): above 1 each program is a cluster
    /// (sm_90a+; gluon kernels spread tiles over the CTAs with cga_layout; auto mode splits each tensor over them,
    /// slowest dim first, and each wgmma dot's tile, TMA copying each CTA's part of a descriptor's block; a
    /// kernel with tcgen05 dots, or with reductions or transposes across the CTAs too small to pay, runs in each
    /// cluster's first CTA while the others exit)
    #[arg(long, default_value_t = KernelConfig::DEFAULT.num_ctas)]
    pub num_ctas: u32,
    /// Triton's `enable_fp_fusion=False`: no `a*b+c` contraction to `fma`, so every multiply and add rounds on
    /// its own and results match the interpreter bit for bit
    #[arg(long)]
    pub no_fp_fusion: bool,
    /// A directory searched for the modules the kernel's file imports (`a/b.py` or `a/b/__init__.py` for
    /// `import a.b`), as Python searches sys.path; repeatable. The file's own directory is searched first, and
    /// the file's dotted name is its path under the first DIR holding it (for its relative imports). Kernels
    /// may use the @jit functions, constexpr globals and classes of the modules found
    #[arg(long = "path", value_name = "DIR")]
    pub path: Vec<PathBuf>,
}

impl SpecArgs {
    /// The compile options the flags ask for (unchecked: [`KernelConfig::validate`]).
    pub fn config(&self) -> KernelConfig {
        KernelConfig {
            num_warps: self.num_warps,
            num_stages: self.num_stages,
            num_ctas: self.num_ctas,
            maxnreg: self.maxnreg,
            fp_fusion: !self.no_fp_fusion,
        }
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  tessel compile examples/vector_add.py::add_kernel --signature '*fp32,*fp32,*fp32,i32' \\\n      \
    --const BLOCK_SIZE=1024 --emit ptx --timings"
)]
pub struct CompileArgs {
    #[command(flatten)]
    pub spec: SpecArgs,
    /// What to print
    #[arg(long, value_enum, default_value_t = Emit::Tile)]
    pub emit: Emit,
    /// Target architecture: sm_80, sm_90a or sm_100a (dots run on mma.sync on sm_80, wgmma on sm_90a, and tcgen05
    /// with a tensor-memory accumulator on sm_100a, where a tile tcgen05 cannot take runs on mma.sync)
    #[arg(long, value_parser = parse_target, default_value = "sm_90a")]
    pub arch: Target,
    /// Print the time of each compiler stage to stderr (source to PTX; `tessel run/bench --timings` adds the
    /// driver's JIT and the disk cache)
    #[arg(long)]
    pub timings: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The kernel's syntax tree
    Ast,
    /// Tile IR after elaboration and canonicalization
    Tile,
    /// Layout IR: every tensor with the layout auto mode assigned
    Layout,
    /// The loop schedule: the (stage, cluster) of every op of every loop
    Sched,
    /// PTX for --arch
    Ptx,
    /// SASS for --arch (assembled by ptxas, disassembled by nvdisasm or cuobjdump; needs a CUDA toolkit)
    Sass,
}

pub(super) fn parse_target(s: &str) -> Result<Target, tessel_tile::target::UnknownTarget> {
    s.parse()
}

/// A parsed source file, the name it is reported under, and the modules it imports that were found (in its
/// directory and under `--path`).
pub(super) struct Source {
    pub name: String,
    pub text: String,
    pub module: ast::Module,
    pub modules: ModuleSet,
}

pub(super) fn load(path: &Path, search: &[PathBuf]) -> Result<Source, CliError> {
    let name = path.display().to_string();
    let text = tessel_lang::source::read(path).map_err(|e| match e {
        tessel_lang::source::ReadError::NotUtf8(d) => CliError::Diagnostic(d.render(&name, "")),
        e => CliError::Usage(format!("cannot read {name}: {e}")),
    })?;
    let module = tessel_lang::parse_module(&text).map_err(|d| CliError::Diagnostic(d.render(&name, &text)))?;
    if let Some(dir) = search.iter().find(|d| !d.is_dir()) {
        return Err(CliError::Usage(format!("--path {}: not a directory", dir.display())));
    }
    let modules = tessel_lang::elab::modules::load(&module, path, search)
        .map_err(|d| CliError::Diagnostic(d.render(&name, &text)))?;
    Ok(Source { name, text, module, modules })
}

pub(super) fn split_target(target: &str) -> Result<(&str, &str), CliError> {
    target.rsplit_once("::").filter(|(f, k)| !f.is_empty() && !k.is_empty()).ok_or_else(|| {
        CliError::Usage(format!(
            "expected FILE.py::KERNEL, got `{target}` (run `tessel check FILE.py` to list kernels)"
        ))
    })
}

pub(super) fn find_kernel(src: &Source, name: &str) -> Result<KernelInfo, CliError> {
    let kernels = tessel_lang::elab::kernels_in(&src.module, &src.modules.main);
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
    let src = load(&args.file, &args.path)?;
    let kernels = tessel_lang::elab::kernels_in(&src.module, &src.modules.main);
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let helpers = kernels.iter().filter(|k| matches!(k.role, Role::Helper { .. })).count();
    let mut head = format!("{}: {}", src.name, plural(kernels.len() - helpers, "kernel"));
    if helpers > 0 {
        head.push_str(&format!(", {}", plural(helpers, "helper")));
    }
    writeln!(out, "{head}")?;
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
        let role = match &k.role {
            Role::Kernel => "kernel".to_string(),
            Role::Helper { callers } if callers.is_empty() => "helper".to_string(),
            Role::Helper { callers } => format!("helper (called by {})", callers.join(", ")),
        };
        let (role, note) = role.split_once(' ').map_or((role.as_str(), ""), |(r, n)| (r, n));
        let note = if note.is_empty() { String::new() } else { format!("  {note}") };
        writeln!(out, "  {:?} {role:<6} {}({}){note}", k.decorator, k.name, params.join(", "))?;
    }
    Ok(())
}

pub(super) fn compile(args: CompileArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Failure> {
    let (file, kernel) = split_target(&args.spec.target)?;
    let mut t = Timings::default();
    let src = t.time("read + parse", || load(Path::new(file), &args.spec.path))?;
    let info = find_kernel(&src, kernel)?;
    if args.emit == Emit::Ast {
        out.write_all(crate::pipeline::ast_of(&src.module, kernel).as_bytes())?;
        return Ok(());
    }
    let spec = specialization(&info, &args.spec, None)?;
    let stop = match args.emit {
        Emit::Ast => Stage::Ast,
        Emit::Tile => Stage::Tile,
        Emit::Layout => Stage::Layout,
        Emit::Sched => Stage::Sched,
        Emit::Ptx | Emit::Sass => Stage::Ptx,
    };
    let ks = KernelSource { file: &src.name, source: &src.text, kernel, spec: &spec, module: Some(&src.module) };
    let output = crate::pipeline::run_in(&ks, Some(&src.modules), args.arch, stop, None, &mut t);
    for m in &t.messages {
        err.write_all(m.as_bytes())?;
    }
    let output = output.map_err(|e| match e {
        crate::Error::Compile(rendered) => CliError::Diagnostic(rendered),
        // tessel failed, not the kernel.
        crate::Error::Internal(e) => {
            CliError::Failed(format!("cannot generate code for `{kernel}`: internal error: {e}"))
        }
        other => match other.no_code() {
            Some(why) => CliError::Usage(format!("cannot generate code for `{kernel}`: {why}")),
            None => CliError::Failed(other.to_string()),
        },
    })?;
    let text = match (&output, args.emit) {
        (Output::Ptx { kernel: k, .. }, Emit::Sass) => {
            t.time("ptxas + disassemble", || tessel_runtime::sass(k)).map_err(|e| CliError::Failed(e.to_string()))?
        }
        _ => output.text(),
    };
    out.write_all(text.as_bytes())?;
    if args.timings {
        let stage = args.emit.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default();
        write!(err, "timings: `{kernel}` from {} to --emit {stage}\n{t}", src.name)?;
    }
    Ok(())
}

/// The tile IR of `kernel`, elaborated and canonicalized, and what elaborating it printed for the user
/// (`tl.static_print`, warnings).
pub(super) fn elaborate(src: &Source, kernel: &str, spec: &Specialization) -> Result<(Func, Vec<String>), CliError> {
    let e = crate::pipeline::elaborate_in(&src.module, &src.name, Some(&src.modules), kernel, spec)
        .map_err(|d| CliError::Diagnostic(d.render(&src.name, &src.text)))?;
    let messages = crate::pipeline::messages(&e, &src.name, &src.text);
    let mut func = e.func;
    tessel_tile::passes::canonicalize(&mut func);
    Ok((func, messages))
}

/// Builds the specialization: constexprs from `--const`, the rest from the signature (given, or inferred from
/// the run's arguments).
pub(super) fn specialization(
    info: &KernelInfo,
    spec: &SpecArgs,
    inferred: Option<&[(String, ArgSpec)]>,
) -> Result<Specialization, CliError> {
    let config = spec.config();
    config
        .validate()
        .map_err(|e| CliError::Usage(format!("--{} {}", e.option().replace('_', "-"), e.requirement())))?;
    let mut consts = Vec::new();
    for c in &spec.consts {
        let (name, value) =
            c.split_once('=').ok_or_else(|| CliError::Usage(format!("--const expects NAME=VALUE, got `{c}`")))?;
        if !info.params.iter().any(|p| p.name == name.trim()) {
            return Err(CliError::Usage(format!("`{}` has no parameter `{}`", info.name, name.trim())));
        }
        if consts.iter().any(|(n, _)| n == name.trim()) {
            return Err(CliError::Usage(format!("--const {} is given twice", name.trim())));
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
    Ok(Specialization::with_config(args, config))
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
            } else if v.trim().is_empty() {
                return Err(CliError::Usage("a constant needs a value: NAME=VALUE".into()));
            } else {
                // Anything else is Python, evaluated in the kernel's module: a layout, a tuple or list, a class.
                ConstValue::Expr(v.to_string())
            }
        }
    })
}

/// `fp32`, `float32`, `tl.float32`, `f32`, `bf16`, `i32`, `u8`, `fp8e4nv`, ...
pub(super) fn dtype(s: &str) -> Option<ScalarType> {
    ScalarType::from_any_name(s)
}

/// The types of a signature: split at the commas outside `<...>`, `[...]` and `(...)`.
pub(super) fn split_signature(sig: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in sig.char_indices() {
        match c {
            '<' | '[' | '(' => depth += 1,
            '>' | ']' | ')' => depth -= 1,
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

/// `tensordesc<fp16[16, 32]>` (Triton's spelling), `tensordesc<fp32[64],padding=nan>`, and with the block's shared
/// layout as Triton mangles it into a Gluon kernel's signature:
/// `tensordesc<bf16[1, 128],NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, ...)>`.
fn parse_desc_type(s: &str) -> Option<Result<ArgSpec, CliError>> {
    if let Some(inner) = s.strip_prefix("tensordesc_im2col<") {
        return Some(parse_im2col_type(s, inner));
    }
    let inner = s.strip_prefix("tensordesc<")?;
    let bad = || {
        CliError::Usage(format!(
            "cannot read `{s}`: expected tensordesc<DTYPE[BLOCK, ...]>, e.g. tensordesc<fp16[16, 32]>, \
             tensordesc<fp32[64],padding=nan> or tensordesc<fp16[64, 64],NVMMASharedLayout(128, 16)>"
        ))
    };
    let parse = || -> Result<ArgSpec, CliError> {
        let inner = inner.strip_suffix('>').ok_or_else(bad)?;
        let (dtype_name, rest) = inner.split_once('[').ok_or_else(bad)?;
        let (block, rest) = rest.split_once(']').ok_or_else(bad)?;
        let elem = dtype(dtype_name.trim()).ok_or_else(bad)?;
        let block_shape =
            block.split(',').map(|d| d.trim().parse::<u32>().ok()).collect::<Option<Vec<_>>>().ok_or_else(bad)?;
        let rest = rest.trim();
        let options = if rest.is_empty() { "" } else { rest.strip_prefix(',').ok_or_else(bad)? };
        let (mut padding_nan, mut layout) = (false, None);
        for option in split_signature(options) {
            match option {
                "padding=zero" => padding_nan = false,
                "padding=nan" => padding_nan = true,
                given => layout = desc_layout(s, elem, &block_shape, given)?,
            }
        }
        Ok(ArgSpec::TensorDesc { elem, block_shape, padding_nan, layout })
    };
    Some(parse())
}

/// A descriptor's shared layout given in its signature (as Triton mangles a Gluon descriptor's `layout`): the
/// NVMMA layout TMA stages the block in (`tessel_tile::tma::given_layout`: `None` for the block's default).
fn desc_layout(
    s: &str,
    elem: ScalarType,
    block: &[u32],
    layout: &str,
) -> Result<Option<crate::layouts::NvmmaSharedLayout>, CliError> {
    use crate::layouts::{AnyLayout, SharedLayout};
    let given = crate::layouts::expr::parse_layout(layout)
        .map_err(|e| CliError::Usage(format!("cannot read the layout of `{s}`: {e}")))?;
    let AnyLayout::Shared(SharedLayout::Nvmma(given)) = given else {
        return Err(CliError::Usage(format!(
            "`{s}`: a descriptor's block layout is an NVMMASharedLayout(...), not `{layout}`"
        )));
    };
    tessel_tile::tma::given_layout(elem, block, &given).map_err(|e| CliError::Usage(format!("`{s}`: {e}")))
}

/// `tensordesc_im2col<fp16[64, 64]>` (the block is `[pixels, channels]`; the tensor is NHWC, rank 4, unless
/// `,rank=3` or `,rank=5`), with `,padding=nan` as for `tensordesc`.
fn parse_im2col_type(s: &str, inner: &str) -> Result<ArgSpec, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "cannot read `{s}`: expected tensordesc_im2col<DTYPE[PIXELS, CHANNELS]>, e.g. \
             tensordesc_im2col<fp16[64, 64]> or tensordesc_im2col<fp32[16, 32],rank=3,padding=nan>"
        ))
    };
    let inner = inner.strip_suffix('>').ok_or_else(bad)?;
    let (dtype_name, rest) = inner.split_once('[').ok_or_else(bad)?;
    let (block, rest) = rest.split_once(']').ok_or_else(bad)?;
    let (mut rank, mut padding_nan) = (4, false);
    for opt in rest.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        match opt {
            "padding=zero" => padding_nan = false,
            "padding=nan" => padding_nan = true,
            o => match o.strip_prefix("rank=").and_then(|r| r.parse::<u32>().ok()) {
                Some(r @ 3..=5) => rank = r,
                _ => return Err(bad()),
            },
        }
    }
    let block_shape = block.split(',').map(|d| d.trim().parse::<u32>().ok()).collect::<Option<Vec<_>>>();
    let block_shape = block_shape.filter(|b| b.len() == 2).ok_or_else(bad)?;
    Ok(ArgSpec::TensorDescIm2col { elem: dtype(dtype_name.trim()).ok_or_else(bad)?, block_shape, rank, padding_nan })
}

pub(super) fn parse_sig_type(s: &str) -> Result<ArgSpec, CliError> {
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
