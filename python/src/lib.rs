//! `tessel._tessel`: the native half of the `tessel` Python package. It owns no compiler logic: it lists a
//! module's kernels, elaborates one specialization through the facade's one pipeline
//! ([`tessel::pipeline::run`]), runs it in the reference interpreter over byte buffers the Python side hands
//! over, and compiles, loads and launches it on the GPU through the same runtime and disk cache as the CLI.
//! The Python side (`tessel/`) turns Triton-style launches into the specializations and arguments used here.
//! [`layouts`] exposes the F2 linear layouts, their conversion planner and its checker (`tessel.layouts`).

mod errors;
mod layouts;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};

use tessel::interp::memory::{self, Memory};
use tessel::interp::{Arg, value};
use tessel::lang::elab::modules::{ModuleInfo, ModuleSet, SourceModule};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{KernelSource, Output, Stage};
use tessel::runtime::cache::DiskCache;
use tessel::runtime::{ContextGuard, Gpu, LaunchOptions, LoadedKernel, RuntimeError};
use tessel::tile::Elem;
use tessel::tile::{Func, KernelConfig, ScalarType, Target};
use tessel::{Error, Jit, Timings};

use errors::{CompilationError, GPUError, InterpreterError, to_py};

/// `float32`, `fp32`, `f32`, `bfloat16`, `bool`, `float8_e4m3fn`, ... (Triton's, tessel's and torch's spellings).
fn dtype(name: &str) -> PyResult<ScalarType> {
    ScalarType::from_any_name(name).ok_or_else(|| PyTypeError::new_err(format!("tessel has no dtype `{name}`")))
}

/// One module of a kernel's module set as the Python side passes it: `(dotted_name, file, source, is_package,
/// bindings)`, `bindings` a dict of global name → dotted path (what Python bound it to) or None.
type ModuleTuple = (String, String, String, bool, Option<HashMap<String, String>>);

/// The module set of the kernel's module `file` from the Python side's list (see `python/tessel/_modules.py`):
/// the entry whose file is `file` is the kernel's own module (its name, kind and bindings; its source is the one
/// compiled), the others are the modules its imports reach.
fn module_set(file: &str, modules: Vec<ModuleTuple>) -> ModuleSet {
    let mut set = ModuleSet::default();
    for (name, path, source, is_package, bindings) in modules {
        let info = ModuleInfo { name, is_package, bindings };
        if path == file && set.main.name.is_empty() {
            set.main = info;
        } else {
            set.modules.push(SourceModule::new(info, path, source.into()));
        }
    }
    set
}

/// The kernels (`@triton.jit`, `@gluon.jit`, `@tessel.jit` functions) of a module's source: for each its name,
/// its decorator (`triton`, `gluon`, `tessel`) and its parameters as (name, is constexpr, default as written).
/// `modules`: the module set (see `compile`); the kernel's own entry gives its bindings.
#[pyfunction]
#[pyo3(signature = (source, file, modules=None))]
#[allow(clippy::type_complexity)]
fn kernels(
    source: &str,
    file: &str,
    modules: Option<Vec<ModuleTuple>>,
) -> PyResult<Vec<(String, String, Vec<(String, bool, Option<String>)>)>> {
    let module = tessel::lang::parse_module(source).map_err(|d| CompilationError::new_err(d.render(file, source)))?;
    let main = modules.map(|m| module_set(file, m).main).unwrap_or_default();
    Ok(tessel::lang::elab::kernels_in(&module, &main)
        .into_iter()
        .map(|k| {
            let params = k.params.into_iter().map(|p| (p.name, p.constexpr, p.default)).collect();
            (k.name, format!("{:?}", k.decorator).to_lowercase(), params)
        })
        .collect())
}

/// A compile-time value: None, bool, int, float, str, a tuple or list of those, a dtype (an object with a
/// `_tessel_dtype` attribute naming it), or a host object the compiler rebuilds from Python source in the
/// kernel's module (an object with a `_tessel_const_expr` attribute, its source: the host-side Gluon layouts).
fn const_value(v: &Bound<'_, PyAny>) -> PyResult<ConstValue> {
    if v.is_none() {
        return Ok(ConstValue::None);
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(ConstValue::Bool(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(ConstValue::Int(v.extract()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(ConstValue::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(ConstValue::Str(v.extract()?));
    }
    if v.is_instance_of::<PyTuple>() || v.is_instance_of::<PyList>() {
        return Ok(ConstValue::Tuple(v.try_iter()?.map(|x| const_value(&x?)).collect::<PyResult<_>>()?));
    }
    if let Ok(src) = v.getattr("_tessel_const_expr") {
        return Ok(ConstValue::Expr(src.extract()?));
    }
    if let Ok(name) = v.getattr("_tessel_dtype") {
        return Ok(ConstValue::Dtype(dtype(&name.extract::<String>()?)?));
    }
    Err(PyTypeError::new_err(format!("cannot pass {} as a compile-time constant", v.repr()?)))
}

/// One parameter's specialization, as the Python side spells it: `("const", value)`, `("ptr", dtype, aligned)`,
/// `("int", dtype, multiple_of_16)`, `("float", dtype)`, `("desc", dtype, block_shape, padding_nan[, layout])`,
/// `("desc_im2col", dtype, block_shape, rank, padding_nan[, layout])`. A tiled descriptor's `layout` (the spelling
/// of its block's NVMMA layout, which the Python side checked is the block's default with any `cga_layout`) is
/// carried as a signature's is (`tessel_tile::tma::given_layout`); an im2col descriptor's is the default.
fn arg_spec(t: &Bound<'_, PyAny>) -> PyResult<ArgSpec> {
    let kind: String = t.get_item(0)?.extract()?;
    let item = |i: usize| t.get_item(i);
    Ok(match kind.as_str() {
        "const" => ArgSpec::Constexpr(const_value(&item(1)?)?),
        "ptr" => ArgSpec::Pointer(dtype(&item(1)?.extract::<String>()?)?, item(2)?.extract()?),
        "int" => ArgSpec::Int(dtype(&item(1)?.extract::<String>()?)?, item(2)?.extract()?),
        "float" => ArgSpec::Float(dtype(&item(1)?.extract::<String>()?)?),
        "desc" => {
            let (elem, block_shape): (ScalarType, Vec<u32>) =
                (dtype(&item(1)?.extract::<String>()?)?, item(2)?.extract()?);
            let layout = match t.len()? {
                5 => desc_layout(elem, &block_shape, &item(4)?.extract::<String>()?)?,
                _ => None,
            };
            ArgSpec::TensorDesc { elem, block_shape, padding_nan: item(3)?.extract()?, layout }
        }
        "desc_im2col" => ArgSpec::TensorDescIm2col {
            elem: dtype(&item(1)?.extract::<String>()?)?,
            block_shape: item(2)?.extract()?,
            rank: item(3)?.extract()?,
            padding_nan: item(4)?.extract()?,
        },
        other => return Err(PyValueError::new_err(format!("unknown argument kind `{other}`"))),
    })
}

/// A host descriptor's block layout, from its spelling: `None` for the block's default.
fn desc_layout(
    elem: ScalarType,
    block: &[u32],
    spelling: &str,
) -> PyResult<Option<tessel::layouts::NvmmaSharedLayout>> {
    use tessel::layouts::{AnyLayout, SharedLayout};
    let bad = |why: String| PyValueError::new_err(format!("a descriptor's block layout `{spelling}`: {why}"));
    match tessel::layouts::expr::parse_layout(spelling).map_err(|e| bad(e.to_string()))? {
        AnyLayout::Shared(SharedLayout::Nvmma(given)) => {
            tessel::tile::tma::given_layout(elem, block, &given).map_err(|e| bad(e.to_string()))
        }
        _ => Err(bad("not an NVMMASharedLayout".into())),
    }
}

/// A loaded module: CUDA handles are used from whichever thread launches (each use makes the kernel's context
/// current first).
struct SendLoaded(LoadedKernel);
// SAFETY: a CUmodule/CUfunction may be used from any thread once its context is current, which
// `LoadedKernel::launch_on_stream` and its `Drop` ensure; the driver's launch and unload calls are thread-safe.
unsafe impl Send for SendLoaded {}
// SAFETY: as above; launching one CUfunction from several threads at once is allowed by the driver.
unsafe impl Sync for SendLoaded {}

struct GpuState {
    gpu: Gpu,
    target: Target,
}

/// CUDA devices tessel launches on (ordinals 0..MAX_DEVICES).
const MAX_DEVICES: usize = 64;

/// Why there is no GPU to launch on.
#[derive(Clone, Debug)]
enum NoGpu {
    /// A device ordinal past [`MAX_DEVICES`].
    Ordinal(usize),
    /// No driver, or the device cannot be opened.
    Runtime(RuntimeError),
    /// A GPU older than sm_80.
    Unsupported { major: i32, minor: i32 },
}

impl std::fmt::Display for NoGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoGpu::Ordinal(d) => write!(f, "CUDA device {d}: tessel launches on devices 0..{MAX_DEVICES}"),
            NoGpu::Runtime(e) => write!(f, "{e}"),
            NoGpu::Unsupported { major, minor } => {
                write!(f, "GPU: compute capability {major}.{minor}: tessel needs sm_80 or newer")
            }
        }
    }
}

/// The primary context of CUDA device `device` (the one torch uses) and its target, opened once per process, or
/// why there is none. Opening it leaves the calling thread's current context as it was.
fn gpu(device: usize) -> Result<&'static GpuState, NoGpu> {
    static GPUS: [OnceLock<Result<GpuState, NoGpu>>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];
    let slot = GPUS.get(device).ok_or(NoGpu::Ordinal(device))?;
    slot.get_or_init(|| {
        let gpu = Gpu::on_device(device).map_err(NoGpu::Runtime)?;
        let target = tessel::target_of(&gpu).map_err(|e| match e {
            Error::Gpu(e) => NoGpu::Runtime(e),
            Error::UnsupportedDevice { major, minor } => NoGpu::Unsupported { major, minor },
            other => unreachable!("target_of fails with the driver or the device: {other}"),
        })?;
        Ok(GpuState { gpu, target })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The compiler's identity in compile-cache keys: it names this extension module's file (path, size, time), so a
/// reinstalled or rebuilt tessel never reads the kernels an earlier one cached.
#[pyfunction]
fn compiler_id() -> &'static str {
    tessel::runtime::cache::compiler_id()
}

/// The names `triton.language` has inside kernels (`tl.load`, `tl.make_tensor_descriptor`...): host code may
/// ask whether one exists (`hasattr(tl, "make_tensor_descriptor")`, as the tutorials do), not call it.
#[pyfunction]
fn kernel_language_names() -> Vec<&'static str> {
    kernel_module_names(tessel::lang::elab::names::TL, false)
}

/// The functions the compiler registers in the kernel-language module `module` (`triton.language.math`,
/// `triton.language.extra.libdevice`...), its own and not those it re-exports; with `prelude`, only those
/// written in the kernel language itself (what Triton keeps in `triton.language.standard`). The host side's
/// modules list exactly these, so a name exists on the host when a kernel can call it.
#[pyfunction]
#[pyo3(signature = (module, prelude=false))]
fn kernel_module_names(module: &str, prelude: bool) -> Vec<&'static str> {
    use tessel::lang::elab::registry::Kind;
    let registry = tessel::lang::elab::builtins::registry();
    registry
        .members(module)
        .filter(|e| match e.kind {
            Kind::Builtin(_) => !prelude,
            Kind::Prelude => prelude,
            Kind::Dtype(_) => false,
        })
        .map(|e| e.name)
        .collect()
}

/// Whether a GPU can be used, and the target tessel compiles for it (`sm_90a`, ...), or why not.
#[pyfunction]
#[pyo3(signature = (device=0))]
fn gpu_target(device: usize) -> (Option<&'static str>, Option<String>) {
    match gpu(device) {
        Ok(g) => (Some(g.target.name()), None),
        Err(why) => (None, Some(why.to_string())),
    }
}

/// How one IR argument travels in its 8-byte launch slot (see `LoadedKernel::launch_on_stream`).
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A device address.
    Ptr,
    /// An integer of at most 32 bits (i1/i8/i16/i32/u32...), sign-extended: the driver reads its low bytes.
    I32(ScalarType),
    /// A 64-bit integer.
    I64(ScalarType),
    /// A Python float (or int) passed as f32.
    F32,
    F64,
    /// A parameter type the GPU launch does not pass yet (the message says which).
    Unsupported(ScalarType),
}

fn slots(func: &Func) -> Vec<Slot> {
    func.args()
        .iter()
        .map(|&v| {
            let elem = func.ty(v).elem();
            match (elem, elem.and_then(|e| e.scalar())) {
                (Some(Elem::Ptr(..)), _) => Slot::Ptr,
                (_, Some(t @ (ScalarType::I64 | ScalarType::U64))) => Slot::I64(t),
                (_, Some(t)) if t.is_int() => Slot::I32(t),
                (_, Some(ScalarType::F32)) => Slot::F32,
                (_, Some(ScalarType::F64)) => Slot::F64,
                (_, Some(t)) => Slot::Unsupported(t),
                (_, None) => Slot::Ptr,
            }
        })
        .collect()
}

/// One launch argument as its 8-byte slot; an integer outside its parameter's type is an error (raised naming
/// the argument by the caller), never wrapped.
fn slot_value(slot: Slot, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(match slot {
        Slot::Ptr => v.extract::<u64>()?,
        Slot::I32(t) | Slot::I64(t) => match int_value(v, t)? {
            Arg::Int(i) => i as u64,
            _ => unreachable!("an integer parameter takes an integer"),
        },
        Slot::F32 => (v.extract::<f64>()? as f32).to_bits() as u64,
        Slot::F64 => v.extract::<f64>()?.to_bits(),
        Slot::Unsupported(t) => {
            return Err(PyTypeError::new_err(format!("GPU launches do not take {t} arguments yet")));
        }
    })
}

/// A Python int for a parameter of type `t`: `OverflowError` when it does not fit (wider than 64 bits, or outside
/// `t`: a u64 takes 2^63..2^64, an i32 does not take 2^31).
fn int_value(v: &Bound<'_, PyAny>, t: ScalarType) -> PyResult<Arg> {
    let i: i128 = match v.extract::<i64>() {
        Ok(i) => i.into(),
        Err(e) => match v.extract::<u64>() {
            Ok(u) => u.into(),
            Err(_) if v.is_instance_of::<PyInt>() => {
                return Err(PyOverflowError::new_err(format!("{} does not fit in 64 bits", v.repr()?)));
            }
            Err(_) => return Err(e),
        },
    };
    value::int_arg(i, t).map_err(|e| PyOverflowError::new_err(e.to_string()))
}

/// IR argument `i` of `func` from the Python side's `(kind, value)`: a buffer's index into `ids`, or a scalar
/// checked against the parameter's type (the error names the parameter).
fn ir_arg(func: &Func, i: usize, kind: &str, v: &Bound<'_, PyAny>, ids: &[memory::BufferId]) -> PyResult<Arg> {
    let ty = func.args().get(i).map(|&a| func.ty(a));
    let scalar = ty.and_then(|t| t.elem()).and_then(|e| e.scalar()).filter(|_| ty.is_some_and(|t| !t.is_tensor()));
    let name = || {
        let a = func.args().get(i).and_then(|&a| func.value(a).name.clone());
        a.map_or(format!("argument {i}"), |n| format!("argument `{n}`"))
    };
    let named = |e: PyErr, py: Python<'_>| {
        let message = format!("`{}`: {}: {}", func.name, name(), e.value(py));
        if e.is_instance_of::<PyOverflowError>(py) {
            PyOverflowError::new_err(message)
        } else {
            PyTypeError::new_err(message)
        }
    };
    let py = v.py();
    match (kind, scalar) {
        ("buf", _) => {
            Ok(Arg::Buffer(*ids.get(v.extract::<usize>()?).ok_or_else(|| PyValueError::new_err("no such buffer"))?))
        }
        ("int", Some(t)) => int_value(v, t).map_err(|e| named(e, py)),
        ("float", Some(t)) if t.is_float() => {
            value::float_arg(v.extract()?, t).map_err(|m| named(PyOverflowError::new_err(m.to_string()), py))
        }
        ("int" | "float", _) => {
            let what = ty.map_or("nothing".to_string(), |t| t.to_string());
            Err(named(PyTypeError::new_err(format!("a {kind} for a parameter of type {what}")), py))
        }
        (other, _) => Err(PyValueError::new_err(format!("unknown argument kind `{other}`"))),
    }
}

/// A grid as the Python side passes it (a tuple or list of 1 to 3 ints), checked against CUDA's limits:
/// `ValueError` naming the axis and the limit, `TypeError` for what is not an int.
fn grid_of(grid: &Bound<'_, PyAny>) -> PyResult<[u32; 3]> {
    let dims = grid.extract::<Vec<Bound<'_, PyAny>>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "grid: expected a tuple of 1 to 3 ints, got {}",
            grid.repr().map_or(String::new(), |r| r.to_string())
        ))
    })?;
    let mut n = Vec::with_capacity(dims.len());
    for d in &dims {
        n.push(match d.extract::<i64>() {
            Ok(v) => v.into(),
            Err(_) if d.is_instance_of::<PyInt>() => match d.extract::<i128>() {
                Ok(v) => v,
                // Past 2^127 either way: past CUDA's limits too.
                Err(_) if d.gt(0)? => i128::MAX,
                Err(_) => i128::MIN,
            },
            Err(_) => return Err(PyTypeError::new_err(format!("grid: expected ints, got {}", d.repr()?))),
        });
    }
    tessel::interp::check_grid(&n).map_err(|why| PyValueError::new_err(format!("grid: {why}")))
}

/// How often a running interpreter launch looks for Ctrl-C (`Python::check_signals`, with the GIL).
const SIGNAL_CHECK: Duration = Duration::from_millis(20);

/// One specialization of a kernel, elaborated to tile IR; compiled to PTX and loaded on first GPU launch.
#[pyclass(module = "tessel._tessel")]
struct Compiled {
    file: String,
    source: String,
    kernel: String,
    spec: Specialization,
    /// The module set the kernel's module came with (None: read from beside `file`).
    modules: Option<Arc<ModuleSet>>,
    func: Func,
    /// How each IR argument is passed to a GPU launch.
    slots: Vec<Slot>,
    /// The loaded module per CUDA device ordinal (loaded on the first launch there).
    loaded: Mutex<Vec<Option<Arc<SendLoaded>>>>,
}

/// Elaborates `kernel` of `source` for one specialization: `params` gives each parameter's spelling (see
/// `arg_spec`), in order; trailing parameters left out take their defaults. `maxnreg` caps the registers per
/// thread of the GPU code (`.maxnreg`); `num_ctas` is what `gl.num_ctas()` returns and, above 1, the CTAs of the
/// thread-block cluster each program is (gluon kernels; `launch` then launches clusters). `fp_fusion`: whether
/// `a * b + c` on f32/f64 may become one `fma` (Triton's `enable_fp_fusion`; the Python side resolves Triton's
/// `TRITON_DEFAULT_FP_FUSION` default before calling).
/// `modules`: the kernel's module set, a list of `(dotted_name, file, source, is_package, bindings)` holding the
/// kernel's own module (the entry whose file is `file`) and the modules its imports reach; `bindings` maps global
/// names to the dotted path of what Python bound them to (None: the imports are read from the source). Without
/// it, imported modules are read from beside `file`. The other modules' sources are part of the cache key.
#[pyfunction]
#[pyo3(signature = (
    source, file, kernel, params, num_warps=KernelConfig::DEFAULT.num_warps,
    num_stages=KernelConfig::DEFAULT.num_stages, maxnreg=None, num_ctas=KernelConfig::DEFAULT.num_ctas, *, modules=None,
    fp_fusion=KernelConfig::DEFAULT.fp_fusion
))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    source: String,
    file: String,
    kernel: String,
    params: Vec<Bound<'_, PyAny>>,
    num_warps: u32,
    num_stages: u32,
    maxnreg: Option<u32>,
    num_ctas: u32,
    modules: Option<Vec<ModuleTuple>>,
    fp_fusion: bool,
) -> PyResult<Compiled> {
    let args = params.iter().map(arg_spec).collect::<PyResult<Vec<_>>>()?;
    // Triton takes `num_stages=0` and runs such loops as written, as it does with 1.
    let config = KernelConfig { num_warps, num_stages: num_stages.max(1), num_ctas, maxnreg, fp_fusion };
    config.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let spec = Specialization::with_config(args, config);
    let modules = modules.map(|m| Arc::new(module_set(&file, m)));
    let mut t = Timings::default();
    // The tile IR is the same for every target, and code for a GPU is compiled (and checked) for that GPU's target
    // at launch. Here it is checked for the newest target, so that Blackwell kernels (tensor memory, tcgen05)
    // run in the interpreter too; a kernel that needs nothing of sm_100a names Hopper's.
    let func = py.detach(|| {
        let ks = KernelSource { file: &file, source: &source, kernel: &kernel, spec: &spec, module: None };
        let out = tessel::pipeline::run_in(&ks, modules.as_deref(), Target::Sm100a, Stage::Tile, None, &mut t);
        out.map(|out| match out {
            Output::Tile(mut f) => {
                if !tessel::tile::verify_tmem::needs_sm100a(&f) {
                    f.target = Target::Sm90a;
                }
                Output::Tile(f)
            }
            other => other,
        })
    });
    write_messages(py, &t.messages)?;
    let func = func.map_err(to_py)?;
    let Output::Tile(func) = func else { unreachable!("the pipeline stops at the stage asked for") };
    let slots = slots(&func);
    Ok(Compiled { file, source, kernel, spec, modules, func, slots, loaded: Mutex::new(Vec::new()) })
}

/// `tl.static_print` output and compiler warnings, as the CLI shows them (through Python's sys.stderr, so that
/// pytest and notebooks capture them).
fn write_messages(py: Python<'_>, messages: &[String]) -> PyResult<()> {
    if messages.is_empty() {
        return Ok(());
    }
    let stderr = py.import("sys")?.getattr("stderr")?;
    for m in messages {
        stderr.call_method1("write", (m,))?;
    }
    Ok(())
}

#[pymethods]
impl Compiled {
    /// The target the kernel's tile IR was checked for: `sm_100a` when it uses Blackwell's tensor memory,
    /// tcgen05, cluster launch control or TMA gather/scatter, else `sm_90a`.
    #[getter]
    fn tile_target(&self) -> &'static str {
        self.func.target.name()
    }

    /// The kernel's tile IR, as text.
    fn tile_ir(&self) -> String {
        tessel::tile::print::print_func(&self.func)
    }

    /// The kernel's PTX for `target` (`sm_80`, `sm_90a`, `sm_100a`), through the disk cache.
    fn ptx(&self, py: Python<'_>, target: &str) -> PyResult<String> {
        let target =
            Target::parse(target).ok_or_else(|| PyValueError::new_err(format!("unknown target `{target}`")))?;
        Ok(self.compiled_for(py, target)?.ptx)
    }

    /// The dynamic shared memory (bytes) the kernel's code for `target` launches with, through the disk cache
    /// (Triton's `metadata.shared`).
    fn shared_bytes(&self, py: Python<'_>, target: &str) -> PyResult<u32> {
        let target =
            Target::parse(target).ok_or_else(|| PyValueError::new_err(format!("unknown target `{target}`")))?;
        Ok(self.compiled_for(py, target)?.shared_bytes)
    }

    /// Runs the kernel in the interpreter over `grid`. `buffers` are (dtype, bytes) of each memory region;
    /// `args` the IR's arguments in order: `("buf", index)`, `("int", value)` or `("float", value)`, each scalar
    /// checked against its parameter's type. Returns the buffers' bytes afterwards and the lines `device_print`
    /// printed. The run happens on another thread while this one looks for Ctrl-C every 20 ms: a signal handler
    /// that raises (`KeyboardInterrupt`) stops the run at its next op and its exception is raised here.
    fn interpret<'py>(
        &self,
        py: Python<'py>,
        buffers: Vec<(String, Vec<u8>)>,
        args: Vec<(String, Bound<'py, PyAny>)>,
        grid: Bound<'py, PyAny>,
    ) -> PyResult<(Vec<Bound<'py, PyBytes>>, Vec<String>)> {
        let grid = grid_of(&grid)?;
        let mut mem = Memory::new();
        let mut ids = Vec::new();
        for (i, (dt, bytes)) in buffers.into_iter().enumerate() {
            let elem = dtype(&dt)?;
            if bytes.len() % elem.bytes() as usize != 0 {
                return Err(PyValueError::new_err(format!("buffer {i}: not a whole number of {elem} elements")));
            }
            ids.push(mem.alloc_bytes(format!("arg{i}"), elem, bytes));
        }
        let call = args
            .iter()
            .enumerate()
            .map(|(i, (kind, v))| ir_arg(&self.func, i, kind, v, &ids))
            .collect::<PyResult<Vec<_>>>()?;
        // Programs run in parallel when none can observe another (the result is the sequential one either way).
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let stop = Arc::new(AtomicBool::new(false));
        let limits = tessel::interp::Limits { threads, stop: Some(stop.clone()), ..Default::default() };
        let done = AtomicBool::new(false);
        let caller = std::thread::current();
        let log = std::thread::scope(|s| {
            let worker = s.spawn(|| {
                let ran = tessel::interp::run_with_limits(&self.func, &call, grid, &mut mem, limits);
                done.store(true, Ordering::Release);
                caller.unpark();
                ran
            });
            let mut raised = None;
            while !done.load(Ordering::Acquire) {
                py.detach(|| {
                    if !done.load(Ordering::Acquire) {
                        std::thread::park_timeout(SIGNAL_CHECK);
                    }
                });
                if raised.is_none()
                    && let Err(e) = py.check_signals()
                {
                    // Stop the run and wait for it (it ends at its next op), then raise what the handler raised.
                    stop.store(true, Ordering::Relaxed);
                    raised = Some(e);
                }
            }
            let ran = worker.join().map_err(|_| InterpreterError::new_err("the interpreter panicked"))?;
            match raised {
                Some(e) => Err(e),
                None => ran.map_err(|e| to_py(Error::Run(e))),
            }
        })?;
        let out = ids.iter().map(|&id| PyBytes::new(py, &mem.buffer(id).bytes)).collect();
        Ok((out, log))
    }

    /// Compiles (once per process, through the disk cache) and loads the kernel on CUDA device `device`, unless
    /// it is loaded there already. `launch` does this on its first call; the launcher calls it ahead so that
    /// compile errors surface before any argument is packed.
    fn load(&self, py: Python<'_>, device: usize) -> PyResult<()> {
        self.loaded_on(py, device).map(|_| ())
    }

    /// Launches the kernel over `grid` on CUDA device `device`, on `stream` (a `CUstream` handle of that
    /// device's primary context: torch's `torch.cuda.current_stream(device).cuda_stream`; 0 is the legacy
    /// default stream), asynchronously: nothing waits for the kernel, as with Triton. `args` are the IR's
    /// arguments in order: device addresses for pointers, ints, floats. Errors of the launch call itself
    /// (bad configuration, too many resources, an earlier asynchronous fault) raise `GPUError`. `pdl` is
    /// Triton's `launch_pdl`: a programmatic dependent launch (`LaunchOptions::pdl`).
    #[pyo3(signature = (device, stream, grid, args, pdl = false))]
    fn launch(
        &self,
        py: Python<'_>,
        device: usize,
        stream: usize,
        grid: &Bound<'_, PyAny>,
        args: &Bound<'_, PyList>,
        pdl: bool,
    ) -> PyResult<()> {
        let grid = grid_of(grid)?;
        if args.len() != self.slots.len() {
            return Err(PyValueError::new_err(format!(
                "`{}` takes {} arguments, got {}",
                self.kernel,
                self.slots.len(),
                args.len()
            )));
        }
        let mut params = Vec::with_capacity(self.slots.len());
        for (i, (slot, v)) in self.slots.iter().zip(args.iter()).enumerate() {
            match slot_value(*slot, &v) {
                Ok(p) => params.push(p),
                // Named only on failure: the launch path stays as fast as it was.
                Err(e) if matches!(slot, Slot::I32(_) | Slot::I64(_)) => {
                    return Err(ir_arg(&self.func, i, "int", &v, &[]).err().unwrap_or(e));
                }
                Err(e) => return Err(e),
            }
        }
        let k = self.loaded_on(py, device)?;
        // SAFETY: the stream is the caller's stream of `device` (the launcher passes torch's current stream of the
        // device the tensors live on, or 0); `params` has one slot per kernel parameter (checked above).
        let launched =
            py.detach(move || unsafe { k.0.launch_on_stream(stream, grid, &mut params, LaunchOptions { pdl }) });
        launched.map_err(|e| errors::gpu_error(&format!("launching `{}`", self.kernel), &e))
    }

    /// How many programs of the kernel (its clusters, or CTAs) CUDA device `device` holds at once: the grid of
    /// a persistent kernel (`LoadedKernel::max_active_clusters`; Triton's `cuOccupancyMaxActiveClusters`).
    fn max_active_clusters(&self, py: Python<'_>, device: usize) -> PyResult<u32> {
        let k = self.loaded_on(py, device)?;
        py.detach(move || k.0.max_active_clusters())
            .map_err(|e| errors::gpu_error(&format!("the occupancy of `{}`", self.kernel), &e))
    }

    /// The number of arguments the IR function takes (a tensor descriptor of rank r takes 1 + 2r).
    fn num_ir_args(&self) -> usize {
        self.func.args().len()
    }

    #[getter]
    fn name(&self) -> &str {
        &self.kernel
    }

    /// The CTAs of each program's thread-block cluster (1 without clusters).
    #[getter]
    fn num_ctas(&self) -> u32 {
        self.spec.config.num_ctas.max(1)
    }
}

impl Compiled {
    /// The compile driver for this kernel: the disk cache, and the module set (part of the cache key).
    fn jit(&self) -> Jit {
        let mut jit = Jit::new(DiskCache::from_env());
        jit.modules = self.modules.clone();
        jit
    }

    /// The kernel's code for `target`, through the disk cache; what its compile warned (the code-generation
    /// stages' warnings: a `flatten=True` loop run as written, a cluster kernel run in its first CTA) goes to
    /// sys.stderr, once per compile.
    fn compiled_for(&self, py: Python<'_>, target: Target) -> PyResult<tessel::codegen::Kernel> {
        let mut jit = self.jit();
        let kernel = py.detach(|| jit.ptx(&self.source(), target, Some(&self.func)));
        write_messages(py, &jit.timings.messages)?;
        kernel.map_err(to_py)
    }

    fn source(&self) -> KernelSource<'_> {
        KernelSource { file: &self.file, source: &self.source, kernel: &self.kernel, spec: &self.spec, module: None }
    }

    /// The kernel loaded on `device`: from the table, else compiled and loaded without the GIL (and without
    /// holding the table's lock, which a thread holding the GIL may be waiting for). Two threads loading at once
    /// both load; the first to finish is kept.
    fn loaded_on(&self, py: Python<'_>, device: usize) -> PyResult<Arc<SendLoaded>> {
        let lock_err = || GPUError::new_err("a launch panicked");
        if let Some(Some(k)) = self.loaded.lock().map_err(|_| lock_err())?.get(device) {
            return Ok(k.clone());
        }
        let state = gpu(device).map_err(|e| GPUError::new_err(e.to_string()))?;
        let mut jit = self.jit();
        let load = || -> Result<SendLoaded, Error> {
            // The driver loads the module into the current context: make the device's current for the load only.
            let _current = ContextGuard::enter(&state.gpu.ctx).map_err(Error::Gpu)?;
            jit.load(&state.gpu, &self.source(), Some(&self.func)).map(SendLoaded)
        };
        let loaded = py.detach(load);
        write_messages(py, &jit.timings.messages)?;
        let k = Arc::new(loaded.map_err(to_py)?);
        let mut table = self.loaded.lock().map_err(|_| lock_err())?;
        if table.len() <= device {
            table.resize(device + 1, None);
        }
        Ok(table[device].get_or_insert(k).clone())
    }
}

#[pymodule]
fn _tessel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kernels, m)?)?;
    m.add_function(wrap_pyfunction!(compiler_id, m)?)?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_target, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_language_names, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_module_names, m)?)?;
    m.add_class::<Compiled>()?;
    // The launch options' defaults (Triton's), for the Python side's signatures: written once, in `KernelConfig`.
    let d = pyo3::types::PyDict::new(m.py());
    d.set_item("num_warps", KernelConfig::DEFAULT.num_warps)?;
    d.set_item("num_stages", KernelConfig::DEFAULT.num_stages)?;
    d.set_item("num_ctas", KernelConfig::DEFAULT.num_ctas)?;
    d.set_item("maxnreg", KernelConfig::DEFAULT.maxnreg)?;
    m.add("DEFAULT_LAUNCH", d)?;
    errors::register(m)?;
    layouts::register(m)?;
    Ok(())
}
