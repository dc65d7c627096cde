//! The compile pipeline, once: source → AST → tile IR → layout IR → schedule → PTX (→ SASS). The CLI
//! (`tessel compile --emit STAGE`, `run`, `bench`), the Rust API ([`crate::jit`], [`crate::load`], [`crate::Jit`])
//! and the tests all call [`run`], which stops after the stage asked for and times every stage it runs
//! ([`Timings`]).

use std::fmt;
use std::time::{Duration, Instant};

use tessel_lang::elab::Specialization;
use tessel_lang::elab::modules::ModuleSet;
use tessel_sched::tma_copies::{Lowered, StoreWaits};
use tessel_tile::layout::Spread;
use tessel_tile::target::Resource;
use tessel_tile::{Func, Target};

use crate::error::{Error, Internal};

/// A named stage of the pipeline, in order; `--emit` names the stage to stop after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// The parsed kernel definition.
    Ast,
    /// Tile IR: elaborated and canonicalized.
    Tile,
    /// Layout IR: every tensor with a layout (auto mode assigns them, gluon mode wrote them).
    Layout,
    /// The loop schedule (stage and cluster of every op of every loop).
    Sched,
    /// PTX text for the target.
    Ptx,
}

/// One kernel specialization to compile: the source it comes from (its file name is used in diagnostics and
/// by `device_assert`), the kernel's name and its specialization.
#[derive(Clone, Copy)]
pub struct KernelSource<'a> {
    pub file: &'a str,
    pub source: &'a str,
    pub kernel: &'a str,
    pub spec: &'a Specialization,
    /// The source already parsed, when the caller has it (the CLI parses to list the kernel's parameters).
    pub module: Option<&'a tessel_lang::ast::Module>,
}

/// What the pipeline produced at the stage it stopped after.
pub enum Output {
    Ast(String),
    Tile(Func),
    Layout(Func),
    Sched { func: Func, schedule: String },
    Ptx { func: Func, kernel: tessel_codegen::Kernel },
}

impl Output {
    /// The text `--emit` prints for this stage.
    pub fn text(&self) -> String {
        match self {
            Output::Ast(s) => s.clone(),
            Output::Tile(f) | Output::Layout(f) => tessel_tile::print::print_func(f),
            Output::Sched { schedule, .. } => schedule.clone(),
            Output::Ptx { kernel, .. } => kernel.ptx.clone(),
        }
    }
}

/// What the cache contributed to the last compilation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheUse {
    /// No cache.
    #[default]
    Off,
    /// Compiled from source (and stored).
    Miss,
    /// PTX from the cache, assembled again.
    Ptx,
    /// PTX and its cubin (assembled by ptxas in an earlier run) from the cache.
    Cubin,
}

/// What a compile reports besides its result: the wall-clock time of each stage, in order, and its messages.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    pub stages: Vec<(&'static str, Duration)>,
    pub cache: CacheUse,
    /// What the compile reported besides its result, rendered for the user: `tl.static_print` output and
    /// warnings (see [`crate::pipeline::messages`]).
    pub messages: Vec<String>,
}

impl Timings {
    /// Runs `f`, recording its wall-clock time as `stage`.
    pub fn time<T>(&mut self, stage: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let r = f();
        self.stages.push((stage, start.elapsed()));
        r
    }

    pub fn total(&self) -> Duration {
        self.stages.iter().map(|(_, d)| *d).sum()
    }
}

impl fmt::Display for Timings {
    /// One line per stage, then the total: `  elaborate        1.234 ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (stage, d) in &self.stages {
            writeln!(f, "  {stage:<22} {:>9.3} ms", d.as_secs_f64() * 1e3)?;
        }
        let cache = match self.cache {
            CacheUse::Off => "",
            CacheUse::Miss => " (cache miss: compiled and stored)",
            CacheUse::Ptx => " (PTX from the cache)",
            CacheUse::Cubin => " (cubin from the cache)",
        };
        writeln!(f, "  {:<22} {:>9.3} ms{cache}", "total", self.total().as_secs_f64() * 1e3)
    }
}

// The closures return tessel-lang's `Diagnostic`, large by design (see that crate).
#[allow(clippy::result_large_err)]
/// Runs the pipeline on `ks` for `target` up to and including `stop`, recording each stage in `t`. `tile`, when
/// given, is the kernel's tile IR already elaborated (the interpreter's), so elaboration is not repeated.
///
/// A loop nest fused by `flatten=True` keeps its rings and its epilogue's shared memory live together; when that
/// is more shared memory than the target has, the kernel is compiled again from its source with the nest as
/// written, and a warning says so (as Triton prunes configs that do not fit, the user asked for a schedule, not
/// for an error).
pub fn run(
    ks: &KernelSource,
    target: Target,
    stop: Stage,
    tile: Option<&Func>,
    t: &mut Timings,
) -> Result<Output, Error> {
    run_in(ks, None, target, stop, tile, t)
}

/// [`run`] for a kernel whose module comes with a module set (the modules its imports name, see
/// [`tessel_lang::elab::modules`]); without one, the set is read from disk beside `ks.file` ([`elaborate`]).
#[allow(clippy::result_large_err)]
pub fn run_in(
    ks: &KernelSource,
    modules: Option<&ModuleSet>,
    target: Target,
    stop: Stage,
    tile: Option<&Func>,
    t: &mut Timings,
) -> Result<Output, Error> {
    let mut fused = false;
    match run_with(ks, modules, target, stop, tile, t, true, &mut fused, Spread::WhereSupported) {
        Err(Error::OutOfResources { exhausted, message: msg })
            if fused && exhausted.resource == Resource::SharedMemory =>
        {
            let out = run_with(ks, modules, target, stop, None, t, false, &mut fused, Spread::WhereSupported)?;
            // The loop that asked, as the nest compiled as written still marks it.
            let func = match &out {
                Output::Tile(f) | Output::Layout(f) | Output::Sched { func: f, .. } | Output::Ptx { func: f, .. } => {
                    Some(f)
                }
                Output::Ast(_) => None,
            };
            let at = func.and_then(|f| {
                let o =
                    f.all_ops().into_iter().find(|&o| matches!(&f.op(o).op, tessel_tile::Op::For(a) if a.flatten))?;
                f.op(o).loc.map(|l| tessel_lang::Span::new(l.start as usize, l.end as usize))
            });
            let w = tessel_lang::Diagnostic::warning(
                "`flatten=True` is ignored: the fused loop does not fit in shared memory",
                at.unwrap_or_default(),
            )
            .with_label(format!(
                "fused, the loop keeps its rings and its epilogue's buffers live together: {msg}; the loop nest \
                 runs as written"
            ));
            t.messages.push(w.render(ks.file, ks.source));
            Ok(out)
        }
        r => r,
    }
}

#[allow(clippy::result_large_err, clippy::too_many_arguments)]
fn run_with(
    ks: &KernelSource,
    modules: Option<&ModuleSet>,
    target: Target,
    stop: Stage,
    tile: Option<&Func>,
    t: &mut Timings,
    flatten: bool,
    fused: &mut bool,
    spread: Spread,
) -> Result<Output, Error> {
    let render = |d: tessel_lang::Diagnostic| Error::Compile(d.render(ks.file, ks.source));
    let mut func = match tile {
        Some(f) => {
            *fused = f.attrs.flattened;
            f.clone()
        }
        None => {
            let parsed;
            let module = match ks.module {
                Some(m) => m,
                None => {
                    parsed = t.time("parse", || tessel_lang::parse_module(ks.source)).map_err(render)?;
                    &parsed
                }
            };
            if stop == Stage::Ast {
                return Ok(Output::Ast(ast_of(module, ks.kernel)));
            }
            let e =
                t.time("elaborate", || elaborate_in(module, ks.file, modules, ks.kernel, ks.spec)).map_err(render)?;
            t.messages.extend(messages(&e, ks.file, ks.source));
            let mut f = e.func;
            let refused = t.time("canonicalize", || {
                tessel_tile::passes::canonicalize(&mut f);
                // `tl.range(..., loop_unroll_factor=)` and `flatten=True`, before layouts and scheduling, as
                // Triton does.
                let unrolled = tessel_tile::passes::unroll_loops(&mut f);
                let (flattened, refused) =
                    if flatten { tessel_tile::passes::flatten_loops(&mut f) } else { Default::default() };
                *fused = flattened;
                if unrolled || flattened {
                    tessel_tile::passes::canonicalize(&mut f);
                }
                refused
            });
            for (o, why) in refused.into_iter().filter(|_| flatten) {
                let span = f
                    .op(o)
                    .loc
                    .map_or(tessel_lang::Span::default(), |l| tessel_lang::Span::new(l.start as usize, l.end as usize));
                let w = tessel_lang::Diagnostic::warning("`flatten=True` is ignored for this loop", span)
                    .with_label(format!("the loop nest runs as written: {why}"));
                t.messages.push(w.render(ks.file, ks.source));
            }
            // As Cranelift runs its verifier after each pass: a pass that breaks the IR is caught where it ran.
            tessel_tile::verify::verify(&f)
                .map_err(|error| Error::Internal(Internal::Verify { after: "canonicalize", error }))?;
            f
        }
    };
    func.target = target;
    if let Err((o, message)) = tessel_tile::verify_tmem::check_target(&func) {
        let span = func
            .op(o)
            .loc
            .map_or(tessel_lang::Span::default(), |l| tessel_lang::Span::new(l.start as usize, l.end as usize));
        return Err(render(tessel_lang::Diagnostic::error(message, span)));
    }
    if stop <= Stage::Tile {
        return Ok(Output::Tile(func));
    }
    // A cluster kernel whose spread over the CTAs code generation refuses is laid out again from here, unspread.
    let tile_ir = (func.config.num_ctas > 1 && spread == Spread::WhereSupported).then(|| func.clone());
    t.time("layout assignment", || tessel_tile::layout::assign_layouts_with(&mut func, spread))
        .map_err(Error::Layout)?;
    check_fma_dots(&func).map_err(render)?;
    if stop == Stage::Layout {
        return Ok(Output::Layout(func));
    }
    // assign_layouts ends with the verifier (types and layouts).
    let before = (stop == Stage::Sched).then(|| func.clone());
    let laid_out = (stop == Stage::Ptx).then(|| func.clone());
    // The pipeliner issues its loads ahead; the descriptor accesses it did not take become TMA copies then
    // (sm_90a+ host descriptors).
    let opts = tessel_sched::Options::default();
    let (schedule, applied) =
        t.time("schedule + pipeline", || tessel_sched::pipeline_with(&mut func, opts)).map_err(Error::from_sched)?;
    let pipelined = func.clone();
    let lowered = lower_descriptor_accesses(&mut func, StoreWaits::Deferred, t)?;
    if let Some(before) = before {
        // The schedule refers to the loops as they were; the expanded function follows it.
        let mut text = tessel_sched::print(&before, &schedule);
        text.push('\n');
        text += &tessel_tile::print::print_func(&func);
        return Ok(Output::Sched { func, schedule: text });
    }
    // What clusters cannot lower yet, at the op's span (or for the kernel as a whole).
    if let Err((o, message)) = tessel_codegen::check_clusters(&func) {
        if let Some(tile_ir) = tile_ir.filter(|_| tessel_codegen::spread_over_ctas(&func)) {
            // Auto mode spread the tensors, which Gluon leaves to the author: rather than refuse the kernel, run
            // its program in each cluster's first CTA, as at one CTA, and say why.
            let span = o.and_then(|o| func.op(o).loc).map(|l| tessel_lang::Span::new(l.start as usize, l.end as usize));
            let w = tessel_lang::Diagnostic::warning(
                format!("num_ctas = {}: the program runs in each cluster's first CTA alone", func.config.num_ctas),
                span.unwrap_or_default(),
            )
            .with_label(format!("its tensors are not spread over the cluster's CTAs: {message}"));
            t.messages.push(w.render(ks.file, ks.source));
            return run_with(ks, modules, target, stop, Some(&tile_ir), t, flatten, fused, Spread::Never);
        }
        let Some(loc) = o.and_then(|o| func.op(o).loc) else {
            return Err(Error::from_codegen(tessel_codegen::CompileError::new(message)));
        };
        let span = tessel_lang::Span::new(loc.start as usize, loc.end as usize);
        return Err(render(tessel_lang::Diagnostic::error(message, span)));
    }
    let source = tessel_codegen::Source { file: ks.file, text: ks.source };
    let (mut func, mut compiled) = generate(func, pipelined, &lowered, source, t)?;
    // Too much shared memory: first the late epilogue goes (its copy after the loop stages the last tile in a
    // buffer of its own), then the MMA kept in flight (it costs its loop a ring buffer; each K step waits for its
    // MMA instead). `--emit sched`, which runs before code generation, shows the first choice. If the last does
    // not fit either, its error is the one reported: what the kernel needs at the least.
    let ladder = [
        (applied.acc_overlap, tessel_sched::Options { mma_in_flight: true, acc_overlap: false }),
        (applied.mma_in_flight, tessel_sched::Options { mma_in_flight: false, acc_overlap: false }),
    ];
    for (worth, opts) in ladder {
        if !(worth && compiled.as_ref().is_err_and(out_of_smem)) {
            continue;
        }
        let Some(mut retry) = laid_out.clone() else { break };
        t.time("schedule + pipeline", || tessel_sched::pipeline_with(&mut retry, opts)).map_err(Error::from_sched)?;
        let pipelined = retry.clone();
        let lowered = lower_descriptor_accesses(&mut retry, StoreWaits::Deferred, t)?;
        (func, compiled) = generate(retry, pipelined, &lowered, source, t)?;
    }
    let kernel = compiled.map_err(Error::from_codegen)?;
    Ok(Output::Ptx { func, kernel })
}

/// Whether code generation failed for want of shared memory.
fn out_of_smem(e: &tessel_codegen::CompileError) -> bool {
    e.exhausted().is_some_and(|x| x.resource == Resource::SharedMemory)
}

/// Code for `func` (`pipelined` with its descriptor accesses lowered as `lowered` says, TMA stores waited for
/// lazily). When the stores' own buffers do not fit beside the rest, their waits come right after them instead
/// and their space is reused: `pipelined` lowered again that way. Returns the function compiled and the result.
fn generate(
    func: Func,
    pipelined: Func,
    lowered: &Lowered,
    source: tessel_codegen::Source,
    t: &mut Timings,
) -> Result<(Func, Result<tessel_codegen::Kernel, tessel_codegen::CompileError>), Error> {
    let compiled = t.time("code generation", || tessel_codegen::compile_with_source(&func, source));
    if !(compiled.as_ref().is_err_and(out_of_smem) && lowered.deferred_stores > 0) {
        return Ok((func, compiled));
    }
    let mut func = pipelined;
    lower_descriptor_accesses(&mut func, StoreWaits::Immediate, t)?;
    let compiled = t.time("code generation", || tessel_codegen::compile_with_source(&func, source));
    Ok((func, compiled))
}

/// The descriptor accesses the pipeliner did not take, as TMA copies (sm_90a+ host descriptors); then what the
/// pipeliner recomputes for a fused loop's epilogue sinks into the epilogue's branch, and the pointer tensors
/// loops advance become one running offset each. Verified.
fn lower_descriptor_accesses(func: &mut Func, waits: StoreWaits, t: &mut Timings) -> Result<Lowered, Error> {
    let lowered = t
        .time("TMA copies", || tessel_sched::tma_copies::lower_tma_copies(func, waits))
        .map_err(|e| Error::Internal(Internal::TmaCopies(e)))?;
    tessel_tile::passes::sink_into_branches(func);
    if tessel_tile::passes::reassociate_pointer_inductions(func) {
        tessel_tile::passes::dce(func);
    }
    tessel_tile::verify::verify(func)
        .map_err(|error| Error::Internal(Internal::Verify { after: "pipelining", error }))?;
    Ok(lowered)
}

/// Elaborates `kernel` of `module` (read from `file`) for `spec` with every builtin: lang's `tl.*` and the gluon
/// crate's `gl.*` (registered into lang's builtin registry here, the one place that wires them). The modules the
/// file imports are read from beside `file` (`importlib.import_module("NAME")` siblings, and imported modules
/// found there as Python would: see [`tessel_lang::elab::modules::load`]).
#[allow(clippy::result_large_err)]
pub fn elaborate(
    module: &tessel_lang::ast::Module,
    file: &str,
    kernel: &str,
    spec: &Specialization,
) -> Result<tessel_lang::elab::Elaborated, tessel_lang::Diagnostic> {
    elaborate_in(module, file, None, kernel, spec)
}

/// [`elaborate`] with the module set given (`None`: read from beside `file`).
#[allow(clippy::result_large_err)]
pub fn elaborate_in(
    module: &tessel_lang::ast::Module,
    file: &str,
    modules: Option<&ModuleSet>,
    kernel: &str,
    spec: &Specialization,
) -> Result<tessel_lang::elab::Elaborated, tessel_lang::Diagnostic> {
    let loaded;
    let set = match modules {
        Some(set) => set,
        None => {
            loaded = tessel_lang::elab::modules::load(module, std::path::Path::new(file), &[])?;
            &loaded
        }
    };
    let mut e = tessel_lang::elab::elaborate_in(module, set, kernel, spec, tessel_gluon::registry())?;
    // Gluon mode: an overwrite of a buffer an asynchronous wgmma still reads gets a wait before it, and a warning.
    for w in tessel_tile::passes::wait_before_overwriting_dot_operands(&mut e.func) {
        e.warnings.push(overwrite_warning(&e.func, w));
    }
    Ok(e)
}

/// What elaborating printed for the user: `tl.static_print` lines, then the warnings rendered against `source`.
pub fn messages(e: &tessel_lang::elab::Elaborated, file: &str, source: &str) -> Vec<String> {
    let prints = e.static_prints.iter().map(|p| format!("{p}\n"));
    prints.chain(e.warnings.iter().map(|w| w.render(file, source))).collect()
}

/// The warning for a `warpgroup_dot_wait` [`tessel_tile::passes::wait_before_overwriting_dot_operands`] inserted.
fn overwrite_warning(f: &Func, w: tessel_tile::passes::InsertedDotWait) -> tessel_lang::Diagnostic {
    let span = |o| {
        f.op(o).loc.map_or(tessel_lang::Span::default(), |l| tessel_lang::Span::new(l.start as usize, l.end as usize))
    };
    let what = match f.op(w.write).op {
        tessel_tile::Op::TmaLoad { .. } | tessel_tile::Op::TmaLoadIm2col { .. } => "this TMA load",
        tessel_tile::Op::AsyncCopy => "this async_copy",
        _ => "this store",
    };
    tessel_lang::Diagnostic::warning(
        format!("{what} overwrites shared memory that an asynchronous warpgroup_mma may still be reading"),
        span(w.write),
    )
    .with_label(format!("{what} writes the buffer the wgmma reads; a warpgroup_mma_wait(num_outstanding=0) is inserted before it"))
    .with_secondary(span(w.dot), "issued here, asynchronously: it reads its shared-memory operands until a warpgroup_mma_wait retires it")
    .with_hint("retire the wgmma before overwriting its operands (warpgroup_mma_wait before the write), or give the loads a ring of buffers")
}

/// The most multiply-adds one `dot` left on the FMA path may take per thread. Codegen unrolls them all (M*N*K
/// over the threads): 2^16 is about 400k lines of PTX and a few seconds; a 1024^3 f32 dot would be 8M per
/// thread, and compile for minutes before ptxas even starts.
pub const MAX_FMA_DOT_PER_THREAD: u64 = 1 << 16;

/// Refuses, at its source, a `dot` on the FMA path whose unrolled multiply-adds per thread exceed
/// [`MAX_FMA_DOT_PER_THREAD`]. Runs after layout assignment, which turns every `dot` a tensor-core instruction
/// runs on sm_90a into a `warpgroup_dot` (on sm_100a into a `tcgen05_mma`), and gives those `mma.sync` runs
/// (sm_80, sm_100a where tcgen05 cannot) an NVMMA accumulator
/// (`tessel_tile::layout::accelerate::runs_on_mma_sync`): the other `dot`s are those codegen lowers to FMAs (f32 with `input_precision="ieee"`, shapes or types no tensor-core instruction takes).
#[allow(clippy::result_large_err)]
fn check_fma_dots(func: &Func) -> Result<(), tessel_lang::Diagnostic> {
    let threads = func.config.num_warps.max(1) as u64 * 32;
    for o in func.all_ops() {
        let data = func.op(o);
        // mma.sync dots are Op::Dot too (sm_80, sm_100a); only the FMA ones unroll per element.
        if !matches!(data.op, tessel_tile::Op::Dot { .. })
            || tessel_tile::layout::accelerate::runs_on_mma_sync(func.ty(data.results[0]))
        {
            continue;
        }
        let acc = func.ty(data.results[0]).shape();
        let a = func.ty(data.operands[0]).shape();
        let (numel, k) = (acc.iter().map(|&d| d as u64).product::<u64>(), *a.last().unwrap_or(&1) as u64);
        let per_thread = numel.div_ceil(threads) * k;
        if per_thread > MAX_FMA_DOT_PER_THREAD {
            let span = data
                .loc
                .map_or(tessel_lang::Span::default(), |l| tessel_lang::Span::new(l.start as usize, l.end as usize));
            let dims = |s: &[u32]| s.iter().map(u32::to_string).collect::<Vec<_>>().join("x");
            return Err(tessel_lang::Diagnostic::error(
                format!(
                    "this dot ({} @ {}) runs on FMAs on {} and would unroll {per_thread} multiply-adds per thread, \
                     more than {MAX_FMA_DOT_PER_THREAD}",
                    dims(a),
                    dims(func.ty(data.operands[1]).shape()),
                    func.target
                ),
                span,
            )
            .with_hint("loop over K in smaller blocks (and tile M and N over programs), or use more warps")
            .with_note("dots of f16/bf16/fp8 (or f32 as tf32) operands run on wgmma on sm_90a; others on FMAs"));
        }
    }
    Ok(())
}

/// The syntax tree of the definition of `kernel` in `module` (what `--emit ast` prints).
pub fn ast_of(module: &tessel_lang::ast::Module, kernel: &str) -> String {
    let def = module
        .body
        .iter()
        .find(|s| matches!(&s.kind, tessel_lang::ast::StmtKind::FunctionDef(d) if d.name.name == kernel));
    let one = tessel_lang::ast::Module { body: def.into_iter().cloned().collect(), span: module.span };
    tessel_lang::ast::dump(&one, false)
}
