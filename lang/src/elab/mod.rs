//! Elaboration: one specialization of a `@triton.jit` / `@gluon.jit` / `@tessel.jit` kernel → tile IR.
//!
//! The elaborator is a partial evaluator of the Python subset kernels are written in. Everything known at
//! compile time (constexpr arguments, Python numbers, tuples, dtypes, functions, `@aggregate` instances, results
//! of `@constexpr_function` calls) is computed now; everything else becomes SSA values of one [`Func`]. `@jit`
//! callees are inlined at their call sites; `if` on a constexpr, `tl.static_range` and `static_assert` run at
//! compile time; runtime `if`/`for`/`while` become structured `if`/`for`/`while` ops whose loop-carried and
//! yielded values are the variables the body assigns. Types and broadcasting follow Triton 3.x
//! ([`promote`]). Library functions that Triton itself writes in its own language (`tl.sum`, `tl.softmax`,
//! `tl.rand`, ...) are written in tessel's language too, in `prelude.py`, and elaborated like user code.
//!
//! - [`value`]: compile-time and runtime values; [`scope`]: module globals, local frames; [`imports`]: what a
//!   module's top level binds; [`modules`]: the module set a kernel's module comes with;
//! - [`names`]: module paths' canonical spellings and did-you-mean hints, plain functions of strings;
//! - [`expr`] / [`pyops`]: expressions and Python semantics of compile-time values; [`stmt`]: statements and
//!   control flow, [`jumps`] its `break`/`continue`, [`blocks`] what a block holds (read off the AST); [`call`]:
//!   calls of user functions and aggregates;
//! - [`promote`]: type promotion, casts and broadcasting; [`arith`]: runtime arithmetic;
//! - [`registry`]: the builtin registry every builtin is declared in (lang's, and a plug-in's `gl.*`);
//!   [`lookup`]: finding and calling builtins through it; [`args`]: binding a call's arguments;
//! - [`builtins`]: lang's builtins (`tl.*`, `tl.math.*`, libdevice, Python's), registered into
//!   [`builtins::registry`].
//!
//! Where tessel knowingly differs from Triton 3.x:
//! - `min`/`max` of compile-time values stay compile-time (Triton maps them to `tl.minimum`/`tl.maximum` and
//!   returns tensors); on tensors they are `tl.minimum`/`tl.maximum` as in Triton. `print` of compile-time values
//!   is a static print, of tensors a `device_print`.
//! - Module-level constants may be plain Python values (`FACTOR = 2`), not only `tl.constexpr(...)`; functions
//!   without a decorator run at compile time like constexpr functions; any class can serve as an aggregate.
//! - `device_assert` and `assert` on tensors are always emitted (Triton drops them unless `debug=True`).
//! - Unary minus is a `neg` op (Triton computes `0 - x`, which differs only in the sign of zero).
//! - Kernel arguments the launcher knows to be 16-divisible are marked by a `multiple_of [16]` at entry.

pub mod args;
pub mod arith;
pub mod blocks;
pub mod builtins;
pub mod call;
pub mod expr;
pub mod file_loader;
pub mod imports;
pub mod jumps;
pub mod lookup;
pub mod modules;
pub mod names;
pub mod promote;
pub mod pyops;
pub mod registry;
pub mod roles;
pub mod scope;
pub mod stmt;
pub mod value;

use std::rc::Rc;

use tessel_tile::ops::{Const, Op};
use tessel_tile::{Elem, Func, KernelConfig, Loc, RegionId, ScalarType, Type};

use crate::ast;
use crate::diag::Diagnostic;
use crate::span::Span;
use registry::Registry;
use scope::{Frame, ModuleCtx};
use value::{Dtype, Tv, Value};

/// A compile-time argument value of a specialization.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Dtype(ScalarType),
    Tuple(Vec<ConstValue>),
    /// A Python expression, evaluated at compile time in the kernel's module as a default value would be: a
    /// Gluon layout (`gl.BlockedLayout([1], [32], [4], [0])`, or bare `BlockedLayout(...)` as `tessel layout`
    /// spells it), a list or tuple, an `@aggregate` class, a host-side factory call (`Scheduler(8)`). This is how
    /// the CLI passes what Triton's launcher receives as Python objects.
    Expr(String),
}

/// How one kernel parameter is specialized.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// Bound at compile time (a `tl.constexpr` parameter, or a value the launcher specialized on).
    Constexpr(ConstValue),
    /// A global pointer to elements of the type; `true` if the address is known to be a multiple of 16 bytes.
    Pointer(ScalarType, bool),
    /// An integer scalar; `true` if known to be a multiple of 16.
    Int(ScalarType, bool),
    Float(ScalarType),
    /// A tensor descriptor created on the host (Triton's `TensorDescriptor(base, shape, strides, block_shape,
    /// padding)` / `TensorDescriptor.from_tensor(t, block_shape)`), received as a `tl.tensor_descriptor`
    /// parameter. As in Triton (`tensordesc<fp16[16, 32]>`), the specialization fixes the element type and the
    /// block shape; the tensor's shape and strides are runtime values. It also fixes the padding of
    /// out-of-bounds loads (`padding_nan`: NaN instead of zero, floats only), which Triton encodes in the TMA map
    /// instead: tessel's descriptor ops carry it.
    ///
    /// The parameter takes `1 + 2 * rank` arguments of the IR function ([`ArgSpec::ir_args`]), in the order and
    /// types in which Triton flattens a host descriptor (with the base pointer where Triton's TMA path passes the
    /// encoded `CUtensorMap`): the base (`ptr<elem>`, 16-byte aligned, so marked `multiple_of [16]`), the `rank`
    /// dims of the shape (`i32`), the `rank` strides in elements (`i64`; the last must be 1). At kernel entry the
    /// elaborator re-forms the descriptor from them with a `make_tensor_desc` op, so a host descriptor behaves
    /// exactly like one made in the kernel with `tl.make_tensor_descriptor`.
    ///
    /// `layout`: the NVMMA layout the block is staged in, when the host descriptor gives one other than
    /// `NVMMASharedLayout.get_default_for(block_shape, dtype)` (another swizzle, `fp4_padded`); carried to the
    /// `make_tensor_desc` that re-forms the descriptor, and from there to TMA and the tensor map.
    TensorDesc {
        elem: ScalarType,
        block_shape: Vec<u32>,
        padding_nan: bool,
        layout: Option<tessel_layouts::NvmmaSharedLayout>,
    },
    /// An im2col tensor descriptor created on the host (Gluon's `TensorDescriptorIm2Col`), over a channels-last
    /// tensor of `rank` dims (`[N, spatial..., C]`, 3 to 5), whose block is `[pixels, channels]`
    /// (`tensordesc_im2col<fp16[64, 64]>`; `rank` 4 unless given). It takes `5 * rank - 3` IR arguments: the base,
    /// shape (`i32`) and strides (`i64`) as a `TensorDesc`'s, then the pixel box's lower corners, upper corners
    /// (one `i32` per spatial dim each) and the element strides (one `i32` per dim), from which a
    /// `make_tensor_desc_im2col` op at entry re-forms the descriptor.
    TensorDescIm2col {
        elem: ScalarType,
        block_shape: Vec<u32>,
        rank: u32,
        padding_nan: bool,
    },
}

impl ArgSpec {
    /// How many arguments of the elaborated IR function this parameter takes: 0 for a constexpr, 1 for a pointer
    /// or a scalar, `1 + 2 * rank` for a tensor descriptor (base, shape, strides). Launchers bind a kernel's
    /// parameters to the IR arguments with it.
    pub fn ir_args(&self) -> usize {
        match self {
            ArgSpec::Constexpr(_) => 0,
            ArgSpec::Pointer(..) | ArgSpec::Int(..) | ArgSpec::Float(_) => 1,
            ArgSpec::TensorDesc { block_shape, .. } => 1 + 2 * block_shape.len(),
            ArgSpec::TensorDescIm2col { rank, .. } => 5 * *rank as usize - 3,
        }
    }
}

/// One specialization of a kernel: an [`ArgSpec`] per parameter (trailing parameters with defaults may be left
/// out), and the launch configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Specialization {
    pub args: Vec<ArgSpec>,
    /// How the kernel is launched (warps, pipelining stages, CTAs per cluster, register cap): it becomes the
    /// elaborated function's [`Func::config`], which every later stage reads.
    pub config: KernelConfig,
}

impl Specialization {
    /// `args` under Triton's launch defaults ([`KernelConfig::DEFAULT`]).
    pub fn new(args: Vec<ArgSpec>) -> Specialization {
        Specialization { args, config: KernelConfig::DEFAULT }
    }

    /// `args` launched with `config`.
    pub fn with_config(args: Vec<ArgSpec>, config: KernelConfig) -> Specialization {
        Specialization { args, config }
    }
}

/// Which decorator made a function a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decorator {
    Triton,
    Gluon,
    Tessel,
}

/// A parameter of a kernel, as declared.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    pub name: String,
    pub constexpr: bool,
    /// The annotation as written (`tl.constexpr`), if any.
    pub annotation: Option<String>,
    /// The default as written, if any.
    pub default: Option<String>,
}

/// A kernel of a module: a function with a `jit` decorator.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelInfo {
    pub name: String,
    pub params: Vec<ParamInfo>,
    pub decorator: Decorator,
    pub span: Span,
    /// Whether it is meant to be launched or called (see [`roles`]).
    pub role: roles::Role,
}

/// The kernels (`@triton.jit`, `@gluon.jit`, `@tessel.jit` functions) defined at the top level of `module`.
pub fn kernels(module: &ast::Module) -> Vec<KernelInfo> {
    kernels_in(module, &modules::ModuleInfo::default())
}

/// [`kernels`] of a module with a known identity and host bindings (see [`modules::ModuleInfo`]): its top level
/// as Python ran it, its decorators read through its bindings.
pub fn kernels_in(module: &ast::Module, info: &modules::ModuleInfo) -> Vec<KernelInfo> {
    let ctx = ModuleCtx::in_set(module, info, &|_| false);
    let imports = &ctx.imports;
    let mut out = Vec::new();
    for def in ctx.defs() {
        let Some(decorator) = imports.jit_decorator(&def.decorators) else { continue };
        let params = def
            .params
            .iter()
            .map(|p| ParamInfo {
                name: p.name.name.clone(),
                constexpr: p.annotation.as_ref().is_some_and(|a| imports.is_constexpr_annotation(a)),
                annotation: p.annotation.as_ref().map(|a| a.to_string()),
                default: p.default.as_ref().map(|d| d.to_string()),
            })
            .collect();
        let role = roles::Role::Kernel;
        out.push(KernelInfo { name: def.name.name.clone(), params, decorator, span: def.name.span, role });
    }
    let names: Vec<String> = out.iter().map(|k| k.name.clone()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    for (k, role) in out.iter_mut().zip(roles::roles(module, &names)) {
        k.role = role;
    }
    out
}

/// The result of elaborating a kernel: the IR, what `tl.static_print` printed at compile time, and the warnings
/// about it (the driver adds those of the passes it runs on the elaborated IR).
#[derive(Clone, Debug)]
pub struct Elaborated {
    pub func: Func,
    pub static_prints: Vec<String>,
    pub warnings: Vec<Diagnostic>,
}

/// Elaborates `kernel` of `module` for one specialization into tile IR (verified), with lang's builtins only
/// ([`builtins::registry`]; no `gl.*` builtins: see [`elaborate_with`]).
#[allow(clippy::result_large_err)]
pub fn elaborate(module: &ast::Module, kernel: &str, spec: &Specialization) -> Result<Func, Diagnostic> {
    elaborate_with(module, kernel, spec, builtins::registry()).map(|e| e.func)
}

/// [`elaborate`], also returning the compile-time prints.
#[allow(clippy::result_large_err)]
pub fn elaborate_full(module: &ast::Module, kernel: &str, spec: &Specialization) -> Result<Elaborated, Diagnostic> {
    elaborate_with(module, kernel, spec, builtins::registry())
}

/// [`elaborate_full`] with the builtins of `registry`: lang's and a plug-in's (the gluon crate's, which starts
/// from [`builtins::registry`] and adds the `gl.*` builtins).
#[allow(clippy::result_large_err)]
pub fn elaborate_with(
    module: &ast::Module,
    kernel: &str,
    spec: &Specialization,
    registry: &Registry,
) -> Result<Elaborated, Diagnostic> {
    elaborate_in(module, &modules::ModuleSet::default(), kernel, spec, registry)
}

/// [`elaborate_with`] for a kernel whose module comes with a module set (see [`modules`]): its imports resolve
/// into the set's modules, and an error inside one of them is located in that module's file.
#[allow(clippy::result_large_err)]
pub fn elaborate_in(
    module: &ast::Module,
    set: &modules::ModuleSet,
    kernel: &str,
    spec: &Specialization,
    registry: &Registry,
) -> Result<Elaborated, Diagnostic> {
    let prelude = builtins::prelude::module()?;
    let const_exprs = parse_const_exprs(spec)?;
    let mut elab = Elab::new_in(module, set, prelude, registry);
    elab.const_exprs = const_exprs.iter().map(Option::as_ref).collect();
    match elab.kernel(kernel, spec) {
        Ok(()) => {}
        Err(e) if e.module > PRELUDE_MODULE => {
            let (file, source) = &elab.files[e.module - PRELUDE_MODULE - 1];
            return Err(e.diag.in_file(file, source.clone()));
        }
        Err(e) => return Err(e.diag),
    }
    let func = elab.func;
    if let Err(e) = tessel_tile::verify::verify(&func) {
        // The elaborator's own typing rules should make this impossible; report it at the op's source if known.
        let span = e.loc.map_or(Span::default(), |l| Span::new(l.start as usize, l.end as usize));
        return Err(Diagnostic::error(format!("internal error: the elaborated IR does not verify: {e}"), span));
    }
    Ok(Elaborated { func, static_prints: elab.static_prints, warnings: Vec::new() })
}

/// An elaboration error: the diagnostic, and the module whose source its span points into.
#[derive(Debug)]
pub struct ElabError {
    pub diag: Diagnostic,
    pub module: usize,
}

pub type R<T> = Result<T, Box<ElabError>>;

/// The most elements one tile (a tensor value) may have: Triton's `TRITON_MAX_TENSOR_NUMEL`, 2^20. Past it the
/// interpreter would allocate gigabytes and codegen would unroll for minutes.
pub const MAX_TILE_ELEMENTS: u64 = 1 << 20;
/// The most 32-bit registers one tile may take per thread (its elements spread over `num_warps * 32` threads).
/// The hardware has 255; ptxas spills the rest to local memory, which past this bound means unrolled code of
/// hundreds of thousands of instructions per op. 2^20 f32 elements over 4 warps is exactly at the bound.
pub const MAX_TILE_REGISTERS: u64 = 8192;

/// The user's module is module 0; the prelude is module 1.
pub const USER_MODULE: usize = 0;
pub const PRELUDE_MODULE: usize = 1;

/// The state of one elaboration.
pub struct Elab<'a> {
    pub func: Func,
    /// Where new ops go: the innermost region being built.
    pub regions: Vec<RegionId>,
    pub modules: Vec<ModuleCtx<'a>>,
    pub frames: Vec<Frame<'a>>,
    pub static_prints: Vec<String>,
    /// Set while elaborating prelude code called from user code: ops get the user's call site as location.
    pub loc_override: Option<Span>,
    /// `gluon` mode: tensors carry the layouts the author wrote.
    pub gluon: bool,
    /// The warp count of the worker partition being elaborated, `None` outside one; the kernel's own launch
    /// configuration is `func.config`. Set only by [`Elab::in_partition`], read through [`Elab::warps`].
    partition_warps: Option<u32>,
    /// Expressions evaluated so far (bounded by `expr::MAX_STEPS`).
    pub steps: u64,
    /// Every builtin: lang's and the plug-ins' ([`registry`]).
    pub registry: &'a Registry,
    /// The parsed [`ConstValue::Expr`] arguments of the kernel, by parameter index.
    pub const_exprs: Vec<Option<&'a ast::Expr>>,
    /// The modules of the module set by name (dotted, or the `importlib.import_module` string), and the kernel's
    /// module by its own name when it has one: the set's modules are modules `2..` (see [`modules`]).
    pub module_names: Vec<(&'a str, usize)>,
    /// The file and source of each module `2..`, for its diagnostics.
    pub files: Vec<(&'a str, std::sync::Arc<str>)>,
    /// Modules of the set that do not parse, by name: using one reports its parse error.
    pub broken: Vec<(&'a str, &'a Diagnostic)>,
    /// The shape then the strides of tensor descriptors that are no `make_tensor_desc` result in the region
    /// being built: a worker partition's descriptor arguments, whose dims gluon's `warp_specialize` passes in
    /// beside them (`desc.shape` reads them).
    pub desc_dims: std::collections::HashMap<tessel_tile::ValueId, Vec<Tv>>,
    /// The value each argument of a worker partition stands for (the capture it receives), while the worker is
    /// elaborated and the `warp_specialize` op that links them does not exist yet.
    pub worker_args: std::collections::HashMap<tessel_tile::ValueId, tessel_tile::ValueId>,
}

impl<'a> Elab<'a> {
    pub fn new(user: &'a ast::Module, prelude: &'a ast::Module, registry: &'a Registry) -> Elab<'a> {
        static EMPTY: std::sync::OnceLock<modules::ModuleSet> = std::sync::OnceLock::new();
        Elab::new_in(user, EMPTY.get_or_init(modules::ModuleSet::default), prelude, registry)
    }

    /// The elaborator of a kernel's module `user` with its module set.
    pub fn new_in(
        user: &'a ast::Module,
        set: &'a modules::ModuleSet,
        prelude: &'a ast::Module,
        registry: &'a Registry,
    ) -> Elab<'a> {
        let in_set = |name: &str| set.contains(name);
        let mut elab = Elab {
            func: Func::new("kernel", []),
            regions: Vec::new(),
            modules: vec![ModuleCtx::in_set(user, &set.main, &in_set), ModuleCtx::new(prelude)],
            frames: Vec::new(),
            static_prints: Vec::new(),
            loc_override: None,
            gluon: false,
            partition_warps: None,
            steps: 0,
            registry,
            const_exprs: Vec::new(),
            module_names: Vec::new(),
            files: Vec::new(),
            broken: Vec::new(),
            desc_dims: std::collections::HashMap::new(),
            worker_args: std::collections::HashMap::new(),
        };
        if !set.main.name.is_empty() {
            elab.module_names.push((set.main.name.as_str(), USER_MODULE));
        }
        for m in &set.modules {
            match &m.parsed {
                Ok(ast) => {
                    elab.module_names.push((m.info.name.as_str(), elab.modules.len()));
                    elab.modules.push(ModuleCtx::in_set(ast, &m.info, &in_set));
                    elab.files.push((m.file.as_str(), m.source.clone()));
                }
                Err(d) => elab.broken.push((m.info.name.as_str(), d)),
            }
        }
        for (i, m) in elab.modules.iter().enumerate() {
            m.collect(i);
        }
        elab
    }

    /// The module of the innermost frame.
    pub fn cur_module(&self) -> usize {
        self.frames.last().map_or(USER_MODULE, |f| f.module)
    }

    /// An error at `span` in the current module.
    pub fn err(&self, span: Span, message: impl Into<String>) -> Box<ElabError> {
        Box::new(ElabError { diag: Diagnostic::error(message, span), module: self.cur_module() })
    }

    /// An error with a hint.
    pub fn err_hint(&self, span: Span, message: impl Into<String>, hint: impl Into<String>) -> Box<ElabError> {
        let mut e = self.err(span, message);
        e.diag = e.diag.with_hint(hint);
        e
    }

    /// Wraps a finished diagnostic.
    pub fn diag(&self, diag: Diagnostic) -> Box<ElabError> {
        Box::new(ElabError { diag, module: self.cur_module() })
    }

    /// The region new ops are appended to.
    pub fn region(&self) -> RegionId {
        *self.regions.last().expect("inside a region")
    }

    /// Whether the innermost frame may emit IR (constexpr functions and global initializers may not).
    pub fn check_runtime_allowed(&self, span: Span) -> R<()> {
        match self.frames.last() {
            Some(f) if f.compile_time_only => Err(self.err_hint(
                span,
                format!("`{}` runs at compile time and cannot compute on tensors", f.fn_name),
                "only @jit functions may create or operate on tensors",
            )),
            _ => Ok(()),
        }
    }

    fn loc(&self, span: Span) -> Option<Loc> {
        let s = self.loc_override.unwrap_or(span);
        Some(Loc { start: s.start as u32, end: s.end as u32 })
    }

    /// Appends an op to the current region; returns its results.
    pub fn emit(&mut self, op: Op, operands: &[Tv], results: Vec<Type>, span: Span) -> R<Vec<Tv>> {
        self.check_runtime_allowed(span)?;
        self.check_tile_sizes(&results, span)?;
        let ids: Vec<_> = operands.iter().map(|t| t.v).collect();
        let loc = self.loc(span);
        let o = self.func.append(self.region(), op, &ids, results, &[], loc);
        Ok(self.results(o))
    }

    /// Appends an op with regions.
    pub fn emit_with_regions(
        &mut self,
        op: Op,
        operands: &[Tv],
        results: Vec<Type>,
        regions: &[RegionId],
        span: Span,
    ) -> R<Vec<Tv>> {
        self.check_runtime_allowed(span)?;
        self.check_tile_sizes(&results, span)?;
        let ids: Vec<_> = operands.iter().map(|t| t.v).collect();
        let loc = self.loc(span);
        let o = self.func.append(self.region(), op, &ids, results, regions, loc);
        Ok(self.results(o))
    }

    /// Refuses a tensor result past [`MAX_TILE_ELEMENTS`] elements or [`MAX_TILE_REGISTERS`] registers per thread,
    /// at `span`, the op that would create it (no IR, interpreter or codegen ever sees such a tile).
    fn check_tile_sizes(&self, results: &[Type], span: Span) -> R<()> {
        // Inside prelude code (`tl.zeros` and friends are written in Python), point at the user's call.
        let err = |message: String, hint: &str| match self.loc_override {
            Some(call) => {
                Box::new(ElabError { diag: Diagnostic::error(message, call).with_hint(hint), module: USER_MODULE })
            }
            None => self.err_hint(span, message, hint),
        };
        for ty in results.iter().filter(|t| t.is_tensor()) {
            let numel = ty.shape().iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64)).unwrap_or(u64::MAX);
            let shape = ty.shape().iter().map(u32::to_string).collect::<Vec<_>>().join("x");
            if numel > MAX_TILE_ELEMENTS {
                return Err(err(
                    format!("this creates a tile of {numel} elements ({shape}), more than {MAX_TILE_ELEMENTS}"),
                    "split the work over more programs, or loop over smaller blocks",
                ));
            }
            let bits = ty.elem().map_or(32, |e| e.bits()) as u64;
            let threads = self.warps().max(1) as u64 * 32;
            let registers = (numel * bits).div_ceil(32 * threads);
            if registers > MAX_TILE_REGISTERS {
                return Err(err(
                    format!(
                        "this tile ({shape}, {}) needs {registers} registers per thread over {} warps, more than \
                         {MAX_TILE_REGISTERS}",
                        ty.elem().map_or_else(String::new, |e| e.to_string()),
                        self.warps()
                    ),
                    "use smaller blocks, or more warps (--num-warps)",
                ));
            }
        }
        Ok(())
    }

    fn results(&self, o: tessel_tile::OpId) -> Vec<Tv> {
        self.func.op(o).results.iter().map(|&v| Tv::new(v, self.func.ty(v).clone())).collect()
    }

    /// One-result op.
    pub fn emit1(&mut self, op: Op, operands: &[Tv], ty: Type, span: Span) -> R<Tv> {
        Ok(self.emit(op, operands, vec![ty], span)?.remove(0))
    }

    /// A constant of type `ty` (a scalar, or a splat tensor).
    pub fn constant(&mut self, value: Const, ty: Type, span: Span) -> R<Tv> {
        let value = match (value, ty.elem().and_then(Elem::scalar)) {
            (Const::Int(i), Some(s)) if s.is_float() => Const::Float(i as f64),
            (Const::Float(f), Some(s)) if s.is_int() => Const::Int(f as i64),
            (v, _) => v,
        };
        self.emit1(Op::Constant(value), &[], ty, span)
    }

    /// Gives a runtime value a source name for printing, unless it has one.
    pub fn name_value(&mut self, t: &Tv, name: &str) {
        let data = &mut self.func.values[t.v.index()];
        if data.name.is_none() {
            data.name = Some(name.to_string());
        }
    }

    /// Builds a region: pushes it, runs `body`, pops it.
    pub fn in_region<T>(&mut self, r: RegionId, body: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.regions.push(r);
        let out = body(self);
        self.regions.pop();
        out
    }

    /// How many warps the code being elaborated runs on: inside a worker partition its own count, elsewhere the
    /// kernel's (its launch configuration's). Layouts are checked against it, and `gl.num_warps()` returns it.
    pub fn warps(&self) -> u32 {
        self.partition_warps.unwrap_or(self.func.config.num_warps)
    }

    /// Builds region `r` of a worker partition that runs on `warps` warps of its own: [`Elab::warps`] is
    /// `warps` inside `body` and what it was before once `body` returns, whether it failed or not.
    pub fn in_partition<T>(&mut self, r: RegionId, warps: u32, body: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let outer = self.partition_warps.replace(warps);
        let out = self.in_region(r, body);
        self.partition_warps = outer;
        out
    }

    /// Sets up the kernel's signature and elaborates its body.
    fn kernel(&mut self, name: &str, spec: &Specialization) -> R<()> {
        let user = self.modules[USER_MODULE].ast;
        let imports = self.modules[USER_MODULE].imports.clone();
        let def = self.modules[USER_MODULE].defs().filter(|d| d.name.name == name).last();
        let Some(def) = def else {
            let names: Vec<String> = kernels(user).into_iter().map(|k| k.name).collect();
            let mut d = Diagnostic::error(format!("no kernel named `{name}` in this module"), Span::default());
            if let Some(best) = names::closest(name, names.iter().map(String::as_str)) {
                d = d.with_hint(format!("did you mean `{best}`?"));
            } else if !names.is_empty() {
                d = d.with_note(format!("kernels: {}", names.join(", ")));
            }
            return Err(self.diag(d));
        };
        let Some(decorator) = imports.jit_decorator(&def.decorators) else {
            return Err(self.err(
                def.name.span,
                format!("`{name}` is not a kernel: it has no `@triton.jit`, `@gluon.jit` or `@tessel.jit` decorator"),
            ));
        };
        self.gluon = decorator == Decorator::Gluon;
        call::bind_kernel(self, def, &imports, spec)?;
        Ok(())
    }

    /// Emits the kernel's `return` and records what gluon mode means for the later stages.
    pub fn finish_kernel(&mut self, name: &str) {
        self.func.name = name.to_string();
        let body = self.func.body;
        self.func.append(body, Op::Return, &[], vec![], &[], None);
        // The author writes the schedule in gluon mode: the pipeliner leaves its loops as written.
        self.func.attrs.gluon = self.gluon;
    }
}

/// The [`ConstValue::Expr`] arguments of `spec` parsed, by parameter index; a layout in `tessel layout`'s
/// spelling that is not Python in scope (`BlockedLayout(...)` with no import) is bound later, see
/// [`call::bind_kernel`].
#[allow(clippy::result_large_err)]
fn parse_const_exprs(spec: &Specialization) -> Result<Vec<Option<ast::Expr>>, Diagnostic> {
    let parse = |a: &ArgSpec| match a {
        ArgSpec::Constexpr(ConstValue::Expr(src)) => crate::parse_expr(src).map(Some).map_err(|d| {
            Diagnostic::error(format!("cannot read the constant `{src}`: {}", d.message), Span::default())
        }),
        _ => Ok(None),
    };
    spec.args.iter().map(parse).collect()
}

/// A compile-time argument as a value; `None` for a [`ConstValue::Expr`] (or a tuple holding one), which only
/// the elaborator can evaluate ([`call::bind_kernel`] does, for a whole argument).
pub fn const_value<'a>(c: &ConstValue) -> Option<Value<'a>> {
    Some(match c {
        ConstValue::None => Value::None,
        ConstValue::Bool(b) => Value::Bool(*b),
        ConstValue::Int(i) => Value::Int(*i as i128),
        ConstValue::Float(f) => Value::Float(*f),
        ConstValue::Str(s) => Value::Str(Rc::from(s.as_str())),
        ConstValue::Dtype(s) => Value::Dtype(Dtype::Scalar(*s)),
        ConstValue::Tuple(items) => Value::tuple(items.iter().map(const_value).collect::<Option<_>>()?),
        ConstValue::Expr(_) => return None,
    })
}
