//! `tessel run` and `tessel bench`: a kernel launched on the GPU (or run in the interpreter) over buffers built
//! from `--arg` values.
//!
//! Both compile through [`Jit`]: source to PTX with the disk cache, the driver's JIT (or a cached cubin), then
//! upload, launch, download. `run` falls back to the interpreter, with a note saying why, when there is no
//! GPU or the code generator does not handle the kernel yet; `--check` compares every buffer with the
//! interpreter's. `bench` needs a GPU: it launches once (optionally checked), then times warm-up and measured
//! launches with CUDA events (each measured launch after clearing the L2, as `triton.testing.do_bench` does)
//! and reports the median with the bandwidth or FLOP rate of a `--bytes`/`--flops` formula.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use tessel_interp::Arg;
use tessel_interp::compare::{Diff, Failure as CompareFailure, Rules, compare_bytes};
use tessel_interp::memory::{BufferId, Memory};
use tessel_runtime::cache::DiskCache;
use tessel_runtime::{DeviceBuffer, Gpu, KArg, LoadedKernel, RuntimeError};
use tessel_tile::eval::value::Val;
use tessel_tile::{Func, ScalarType};

use super::args::{LaunchArgs, Prepared, arg_specs, prepare};
use super::{CliError, Failure, formula, interrupt};
use crate::{Jit, KernelSource, npy};

#[derive(Debug, Args)]
#[command(after_help = concat!(arg_specs!(), "\n\nExamples:\n  \
    tessel run examples/vector_add.py::add_kernel --const BLOCK_SIZE=256 --grid 4 \\\n      \
    --arg x_ptr=rand:1000 --arg y_ptr=rand:1000 --arg output_ptr=zeros:1000 --arg n_elements=1000\n  \
    tessel run examples/descriptor_copy.py::transpose_scale_kernel --grid 3 --arg x=rand:40x104:fp16 \\\n      \
    --arg y=zeros:104x40:fp16 --arg s=zeros:40 --arg x_desc=desc:x:block=16x32 --arg y_desc=desc:y:block=32x16 \\\n      \
    --arg sum_desc=desc:s:block=16 --arg scale=0.5"))]
pub struct RunArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Write every buffer to DIR/NAME.npy after the run
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// How many leading elements of each buffer to print
    #[arg(long, default_value_t = 8)]
    pub show: usize,
    /// Run in the interpreter even when a GPU is present
    #[arg(long)]
    pub interpret: bool,
    /// After a GPU run, run the interpreter on the same inputs and compare every buffer (fails when one differs
    /// by more than --tol, or has NaN on one side only)
    #[arg(long, conflicts_with = "interpret")]
    pub check: bool,
    /// --check's bound on ||gpu - interpreter|| / ||interpreter|| per buffer (the GPU may sum in another order
    /// and use approximate math, so floats rarely match bit for bit)
    #[arg(long, default_value_t = 1e-2, value_name = "REL")]
    pub tol: f64,
    #[command(flatten)]
    pub compile: CompileFlags,
}

#[derive(Debug, Args)]
#[command(after_help = concat!(arg_specs!(), "\n\nExample (vector add, 2^28 fp32 elements: 12 bytes each):\n  \
    tessel bench examples/vector_add.py::add_kernel --const BLOCK_SIZE=1024 --grid 262144 \\\n      \
    --arg x_ptr=rand:268435456 --arg y_ptr=rand:268435456 --arg output_ptr=zeros:268435456 \\\n      \
    --arg n_elements=268435456 --bytes '12 * n_elements'"))]
pub struct BenchArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Bytes the kernel must move, as a formula over the arguments (scalars by value, buffers by their size in
    /// bytes, integer constexprs): e.g. '12 * n_elements'. Default: every buffer read or written once
    #[arg(long, value_name = "EXPR")]
    pub bytes: Option<String>,
    /// Floating-point operations the kernel does, as a formula like --bytes: e.g. '2 * M * N * K'
    #[arg(long, value_name = "EXPR")]
    pub flops: Option<String>,
    /// Launches before timing
    #[arg(long, default_value_t = 10)]
    pub warmup: u32,
    /// Timed launches (each between two CUDA events, after clearing the L2 as do_bench does); the median is reported
    #[arg(long, default_value_t = 100)]
    pub reps: u32,
    /// Before timing, run the interpreter on the same inputs and compare the first launch's buffers
    #[arg(long)]
    pub check: bool,
    /// --check's bound on ||gpu - interpreter|| / ||interpreter|| per buffer
    #[arg(long, default_value_t = 1e-2, value_name = "REL")]
    pub tol: f64,
    #[command(flatten)]
    pub compile: CompileFlags,
}

#[derive(Debug, Args)]
pub struct CompileFlags {
    /// Compile for this target instead of the GPU's own: sm_80 runs the sm_80 code path (mma.sync) on a newer
    /// GPU through the driver's JIT
    #[arg(long, value_parser = super::kernel::parse_target)]
    pub arch: Option<tessel_tile::Target>,
    /// Print the time of each stage, source to loaded module, to stderr
    #[arg(long)]
    pub timings: bool,
    /// Compile from source even when the disk cache (~/.cache/tessel, $TESSEL_CACHE_DIR) has the kernel
    #[arg(long)]
    pub no_cache: bool,
}

/// The kernel loaded on the GPU, with every buffer its arguments name uploaded.
struct OnGpu {
    gpu: Gpu,
    kernel: LoadedKernel,
    device: Vec<(BufferId, DeviceBuffer)>,
    target: &'static str,
}

/// Why the GPU path was not taken: no GPU, or a kernel the code generator does not handle yet.
type NotOnGpu = String;

/// Compiles and loads `p` on the GPU and uploads its buffers; `Ok(Err(why))` when there is no GPU or the
/// kernel cannot be compiled for it yet.
fn to_gpu(p: &Prepared, flags: &CompileFlags, err: &mut dyn Write) -> Result<Result<OnGpu, NotOnGpu>, Failure> {
    if let Some(t) = p.address_tables.first() {
        return Ok(Err(format!("`{t}` holds the interpreter's addresses of buffers (ptrs:), not the GPU's")));
    }
    let start = Instant::now();
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => return Ok(Err(format!("no GPU ({e})"))),
    };
    let context = start.elapsed();
    let cache = if flags.no_cache { None } else { DiskCache::from_env() };
    let mut jit = Jit::new(cache);
    jit.target = flags.arch;
    jit.modules = Some(std::sync::Arc::new(p.src.modules.clone()));
    // Reading and elaborating the source happened while preparing the arguments: they count too.
    jit.timings.stages = p.timings.stages.clone();
    let ks = KernelSource {
        file: &p.src.name,
        source: &p.src.text,
        kernel: &p.kernel,
        spec: &p.spec,
        module: Some(&p.src.module),
    };
    let loaded = jit.load(&gpu, &ks, Some(&p.func));
    if flags.timings {
        write!(err, "timings: `{}` from source to a loaded module\n{}", p.kernel, jit.timings)?;
        writeln!(err, "  (CUDA context creation, not part of compiling: {:.3} ms)", context.as_secs_f64() * 1e3)?;
    }
    let kernel = match loaded {
        Ok(k) => k,
        Err(e) => match e.no_code() {
            Some(why) => return Ok(Err(format!("cannot generate GPU code for `{}` yet ({why})", p.kernel))),
            None => return Err(CliError::Failed(e.to_string()).into()),
        },
    };
    let target = match flags.arch {
        Some(t) => t.name(),
        None => crate::target_of(&gpu).map_err(|e| CliError::Failed(e.to_string()))?.name(),
    };
    let mut device: Vec<(BufferId, DeviceBuffer)> = Vec::new();
    for a in &p.call_args {
        if let Arg::Buffer(id) = a
            && !device.iter().any(|(d, _)| d == id)
        {
            device.push((*id, gpu.upload(&p.mem.buffer(*id).bytes).map_err(gpu_err)?));
        }
    }
    Ok(Ok(OnGpu { gpu, kernel, device, target }))
}

fn gpu_err(e: RuntimeError) -> CliError {
    CliError::Failed(format!("GPU: {e}"))
}

impl OnGpu {
    /// The launch arguments, or why a parameter of this type cannot be passed yet.
    fn kargs(&self, func: &Func, args: &[Arg]) -> Result<Vec<KArg<'_>>, NotOnGpu> {
        args.iter()
            .zip(func.args())
            .map(|(a, &v)| {
                let ty = func.ty(v).elem().and_then(|e| e.scalar());
                Ok(match (a, ty) {
                    (Arg::Buffer(id), _) => KArg::Buf(&self.device.iter().find(|(d, _)| d == id).expect("uploaded").1),
                    (Arg::Int(i), Some(ScalarType::I64 | ScalarType::U64)) => KArg::I64(*i),
                    // 1/8/16-bit parameters read the low bytes of the (little-endian) 32-bit value.
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
                        return Err(format!("GPU launches do not take {what} arguments yet"));
                    }
                })
            })
            .collect()
    }

    /// Launches once, waits, and copies every buffer back into `mem`.
    fn run_once(&self, kargs: &[KArg], grid: [u32; 3], mem: &mut Memory) -> Result<(), CliError> {
        self.kernel.launch(&self.gpu, grid, kargs).map_err(gpu_err)?;
        self.gpu.synchronize().map_err(gpu_err)?;
        for (id, buf) in &self.device {
            mem.set_bytes(*id, &self.gpu.download(buf).map_err(gpu_err)?);
        }
        Ok(())
    }
}

pub(super) fn run(args: RunArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Failure> {
    let mut p = prepare(&args.launch)?;
    for m in &p.timings.messages {
        err.write_all(m.as_bytes())?;
    }
    let [gx, gy, gz] = p.grid;
    let mut gpu_mem = None;
    if !args.interpret {
        match to_gpu(&p, &args.compile, err)? {
            Ok(g) => match g.kargs(&p.func, &p.call_args) {
                Ok(kargs) => {
                    writeln!(
                        err,
                        "note: running `{}` on the GPU ({}) over a grid of {gx}x{gy}x{gz}",
                        p.kernel, g.target
                    )?;
                    // --check runs the interpreter on the inputs afterwards: the results go to a copy.
                    let mut mem = if args.check { copy_buffers(&p.mem)? } else { std::mem::take(&mut p.mem) };
                    g.run_once(&kargs, p.grid, &mut mem)?;
                    gpu_mem = Some(mem);
                }
                Err(why) => writeln!(err, "note: {why}")?,
            },
            Err(why) => writeln!(err, "note: {why}")?,
        }
    }
    let on_gpu = gpu_mem.is_some();
    let (mem, log) = match gpu_mem {
        Some(mem) => (mem, Vec::new()),
        None => {
            // From here Ctrl-C stops the run with a message instead of ending the process.
            let _ctrl_c = interrupt::Guard::install();
            writeln!(err, "note: running `{}` in the interpreter over a grid of {gx}x{gy}x{gz}", p.kernel)?;
            let mut mem = std::mem::take(&mut p.mem);
            let log = interpret(&p, &mut mem, args.compile.timings.then_some(&mut *err))?;
            (mem, log)
        }
    };
    if args.check && on_gpu {
        compare_with_interpreter(&p, &mem, args.tol, out, args.compile.timings.then_some(err))?;
    }
    for line in log {
        writeln!(out, "{line}")?;
    }
    for (name, id) in &p.buffers {
        let b = mem.buffer(*id);
        let vals = mem.read_vals(*id);
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
            let bytes = npy::write(&npy::Array { elem: b.elem, shape: vec![vals.len()], data: b.bytes.clone() });
            std::fs::write(&path, bytes)
                .map_err(|e| CliError::Failed(format!("cannot write {}: {e}", path.display())))?;
        }
    }
    Ok(())
}

pub(super) fn bench(args: BenchArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Failure> {
    if args.reps == 0 {
        return Err(CliError::Usage("--reps must be at least 1".to_string()).into());
    }
    let mut p = prepare(&args.launch)?;
    for m in &p.timings.messages {
        err.write_all(m.as_bytes())?;
    }
    // Evaluate the formulas before spending time on the GPU: a typo should fail at once.
    let bytes = match &args.bytes {
        Some(e) => Some((formula::eval("--bytes", e, &p.names)?, e.clone())),
        None => None,
    };
    let flops = match &args.flops {
        Some(e) => Some((formula::eval("--flops", e, &p.names)?, e.clone())),
        None => None,
    };
    let g = match to_gpu(&p, &args.compile, err)? {
        Ok(g) => g,
        Err(why) => return Err(CliError::Usage(format!("tessel bench needs the kernel on a GPU: {why}")).into()),
    };
    let kargs = g.kargs(&p.func, &p.call_args).map_err(CliError::Usage)?;
    // --check runs the interpreter on the inputs afterwards: the results go to a copy.
    let mut mem = if args.check { copy_buffers(&p.mem)? } else { std::mem::take(&mut p.mem) };
    g.run_once(&kargs, p.grid, &mut mem)?;
    if args.check {
        compare_with_interpreter(&p, &mem, args.tol, out, args.compile.timings.then_some(err))?;
    }
    let times = g.kernel.time(&g.gpu, p.grid, &kargs, args.warmup, args.reps).map_err(gpu_err)?;
    let median = times[times.len() / 2];
    writeln!(
        out,
        "bench {} ({}): median {median:.4} ms (min {:.4}, max {:.4}) over {} launches after {} warm-up",
        p.kernel,
        g.target,
        times[0],
        times[times.len() - 1],
        args.reps,
        args.warmup
    )?;
    let (n_bytes, what) = match bytes {
        Some((b, expr)) => (b, expr),
        None => {
            let all: usize = g.device.iter().map(|(_, b)| b.len()).sum();
            (all as f64, "every buffer once".to_string())
        }
    };
    writeln!(out, "  {:.0} bytes ({what}): {:.0} GB/s", n_bytes, n_bytes / (median * 1e-3) / 1e9)?;
    if let Some((f, expr)) = flops {
        writeln!(out, "  {f:.0} FLOPs ({expr}): {:.2} TFLOP/s", f / (median * 1e-3) / 1e12)?;
    }
    Ok(())
}

/// `--check`'s rules ([`tessel_interp::compare`]): an element NaN on one side only fails; every other
/// element, integers included, is held to `--tol` through the buffer's relative error (integers are not held
/// exact); a buffer with nothing compared (an input holding only NaN) passes.
const CHECK_RULES: Rules = Rules::TOLERANCE_ONLY;

/// Runs the interpreter on the inputs of `p` and prints `‖gpu − interpreter‖ / ‖interpreter‖` per buffer (and,
/// given `timings`, how long the interpreter took); fails when a buffer differs by more than `tol` or has NaN where
/// the other side has a number ([`CHECK_RULES`]).
fn compare_with_interpreter(
    p: &Prepared,
    gpu: &Memory,
    tol: f64,
    out: &mut dyn Write,
    timings: Option<&mut dyn Write>,
) -> Result<(), Failure> {
    let mut bad = Vec::new();
    let mut reference = copy_buffers(&p.mem)?;
    interpret(p, &mut reference, timings)?;
    for (name, id) in &p.buffers {
        let (got, want) = (gpu.buffer(*id), reference.buffer(*id));
        let (line, pass) = check_line(name, &compare_bytes(got.elem, &want.bytes, &got.bytes), tol);
        if !pass {
            bad.push(name.clone());
        }
        writeln!(out, "{line}")?;
    }
    if !bad.is_empty() {
        return Err(Failure::Cli(CliError::Failed(format!(
            "the GPU's results differ from the interpreter's in {}",
            bad.join(", ")
        ))));
    }
    Ok(())
}

/// The `check NAME: ...` line `--check` prints for one buffer, and whether the buffer passes. Device scripts
/// (`bench/lib.sh`, the differential campaign's `run.sh`) grep `^check `, `MISMATCH` and the number after `= `:
/// keep the wording.
fn check_line(name: &str, d: &Diff, tol: f64) -> (String, bool) {
    let verdict = d.check(tol, CHECK_RULES);
    let shown = match verdict {
        Ok(()) => format!("{:.3e}", d.rel_err),
        Err(CompareFailure::NanOnOneSide(_)) => "MISMATCH: NaN on one side only".to_string(),
        Err(CompareFailure::AboveTolerance { rel_err, tol }) => format!("{rel_err:.3e} MISMATCH: above --tol {tol:e}"),
        // Not under CHECK_RULES (integers held to the tolerance, no data required).
        Err(other) => format!("MISMATCH: {other}"),
    };
    let line = format!(
        "check {name}: ||gpu - interpreter|| / ||interpreter|| = {shown} ({} of {} elements differ in their bits)",
        d.differ_in_bits, d.len
    );
    (line, verdict.is_ok())
}

/// The shortest decimal that reads back as the same value of the element's type (integers exactly, unsigned
/// ones by their unsigned value).
fn show_value(v: Val, elem: ScalarType) -> String {
    match (v, elem) {
        (_, ScalarType::U64) => format!("{}", v.as_i64() as u64),
        (Val::Int(i), _) => format!("{i}"),
        (_, ScalarType::F32) => format!("{}", v.as_f64() as f32),
        (_, ScalarType::F16) => format!("{}", half::f16::from_f64(v.as_f64())),
        (_, ScalarType::BF16) => format!("{}", half::bf16::from_f64(v.as_f64())),
        _ => format!("{}", v.as_f64()),
    }
}

/// A second copy of the buffers (a GPU run's results beside the inputs), or why there is no memory for it.
fn copy_buffers(mem: &Memory) -> Result<Memory, CliError> {
    mem.try_clone().map_err(|why| CliError::Failed(format!("no memory for a second copy of the buffers: {why}")))
}

/// Runs `p` in the interpreter on `mem`; given `timings`, writes how long that took and on how many threads.
/// Ctrl-C stops it (with an error saying so).
fn interpret(p: &Prepared, mem: &mut Memory, timings: Option<&mut dyn Write>) -> Result<Vec<String>, Failure> {
    let src = &p.src;
    let start = Instant::now();
    let ctrl_c = interrupt::Guard::install();
    let limits = tessel_interp::Limits { stop: Some(ctrl_c.flag()), ..p.limits.clone() };
    let ran = tessel_interp::run_with_limits(&p.func, &p.call_args, p.grid, mem, limits);
    drop(ctrl_c);
    if let Some(w) = timings {
        let programs: u64 = p.grid.iter().map(|&g| g as u64).product();
        writeln!(
            w,
            "timings: the interpreter ran {programs} programs on up to {} threads in {:.3} s",
            p.limits.threads,
            start.elapsed().as_secs_f64()
        )?;
    }
    ran.map_err(|e| {
        if e.interrupted() {
            let [x, y, z] = e.program;
            let [gx, gy, gz] = p.grid;
            return CliError::Interrupted(format!(
                "interrupted (Ctrl-C) while the interpreter ran program ({x}, {y}, {z}) of the grid {gx}x{gy}x{gz}; \
                 no buffer was printed or saved"
            ))
            .into();
        }
        // The message names the program (`program (x, y, z): ...`).
        let at = e.loc.map(|l| {
            tessel_lang::Diagnostic::error(e.to_string(), tessel_lang::Span::new(l.start as usize, l.end as usize))
        });
        match at {
            Some(d) => CliError::Diagnostic(d.render(&src.name, &src.text)),
            None => CliError::Usage(format!("the kernel failed: {e}")),
        }
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessel_interp::compare::compare_values;

    #[test]
    fn check_lines_keep_the_wording_the_device_scripts_grep() {
        let ok = compare_values(&[3.0, 4.0, f64::NAN], &[3.0, 4.0, f64::NAN], false);
        assert_eq!(
            check_line("y", &ok, 1e-2),
            (
                "check y: ||gpu - interpreter|| / ||interpreter|| = 0.000e0 (0 of 3 elements differ in their bits)"
                    .to_string(),
                true
            )
        );
        let nan = compare_values(&[3.0, 4.0], &[3.0, f64::NAN], false);
        assert_eq!(
            check_line("y", &nan, 1e-2),
            (
                "check y: ||gpu - interpreter|| / ||interpreter|| = MISMATCH: NaN on one side only (1 of 2 elements \
                 differ in their bits)"
                    .to_string(),
                false
            )
        );
        let far = compare_values(&[3.0, 4.0], &[3.0, 5.0], false);
        assert_eq!(
            check_line("out", &far, 1e-2),
            (
                "check out: ||gpu - interpreter|| / ||interpreter|| = 2.000e-1 MISMATCH: above --tol 1e-2 (1 of 2 \
                 elements differ in their bits)"
                    .to_string(),
                false
            )
        );
    }

    #[test]
    fn check_holds_integers_to_the_tolerance() {
        // 1 / ‖(1000, 2000)‖ ≈ 4.5e-4: within --tol 1e-2, though not exact.
        let ints = compare_values(&[1000.0, 2000.0], &[1000.0, 2001.0], true);
        let (line, pass) = check_line("idx", &ints, 1e-2);
        assert!(pass, "{line}");
        assert!(line.starts_with("check idx: ||gpu - interpreter|| / ||interpreter|| = 4.472e-4 ("), "{line}");
        // A buffer with nothing compared (an input of only NaN) passes.
        let empty = compare_values(&[f64::NAN], &[f64::NAN], false);
        assert!(check_line("x", &empty, 1e-2).1);
    }
}
