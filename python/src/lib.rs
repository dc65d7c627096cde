//! `tessel._tessel`: the native half of the `tessel` Python package. It owns no compiler logic: it lists a
//! module's kernels, elaborates one specialization through the facade's one pipeline
//! ([`tessel::pipeline::run`]), runs it in the reference interpreter over byte buffers the Python side hands
//! over, and compiles, loads and launches it on the GPU through the same runtime and disk cache as the CLI.
//! The Python side (`tessel/`) turns Triton-style launches into the specializations and arguments used here.
//! [`layouts`] exposes the F2 linear layouts, their conversion planner and its checker (`tessel.layouts`).

mod layouts;

use std::sync::{Mutex, OnceLock};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};

use tessel::codegen::cache::DiskCache;
use tessel::codegen::runtime::{Gpu, KArg, LoadedKernel};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{KernelSource, Output, Stage};
use tessel::tile::interp::Arg;
use tessel::tile::interp::memory::Memory;
use tessel::tile::{Func, ScalarType, Target};
use tessel::{Error, Jit, Timings};

create_exception!(_tessel, CompilationError, PyException, "A kernel does not compile; the message shows the source.");
create_exception!(_tessel, InterpreterError, PyRuntimeError, "A kernel failed while running in the interpreter.");
create_exception!(_tessel, GPUError, PyRuntimeError, "No usable GPU, or the CUDA driver failed.");

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Compile(rendered) => CompilationError::new_err(rendered),
        Error::Codegen(m) => CompilationError::new_err(format!("cannot generate code: {m}")),
        Error::Gpu(m) => GPUError::new_err(m),
        Error::Run(e) => InterpreterError::new_err(e.to_string()),
    }
}

/// `float32`, `fp32`, `f32`, `bfloat16`, `bool`, `float8_e4m3fn`, ... (Triton's, tessel's and torch's spellings).
fn dtype(name: &str) -> PyResult<ScalarType> {
    ScalarType::from_any_name(name).ok_or_else(|| PyTypeError::new_err(format!("tessel has no dtype `{name}`")))
}

/// The kernels (`@triton.jit`, `@gluon.jit`, `@tessel.jit` functions) of a module's source: for each its name,
/// its decorator (`triton`, `gluon`, `tessel`) and its parameters as (name, is constexpr, default as written).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn kernels(source: &str, file: &str) -> PyResult<Vec<(String, String, Vec<(String, bool, Option<String>)>)>> {
    let module = tessel::lang::parse_module(source).map_err(|d| CompilationError::new_err(d.render(file, source)))?;
    Ok(tessel::lang::elab::kernels(&module)
        .into_iter()
        .map(|k| {
            let params = k.params.into_iter().map(|p| (p.name, p.constexpr, p.default)).collect();
            (k.name, format!("{:?}", k.decorator).to_lowercase(), params)
        })
        .collect())
}

/// A compile-time value: None, bool, int, float, str, a tuple or list of those, or a dtype (an object with a
/// `_tessel_dtype` attribute naming it).
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
    if let Ok(name) = v.getattr("_tessel_dtype") {
        return Ok(ConstValue::Dtype(dtype(&name.extract::<String>()?)?));
    }
    Err(PyTypeError::new_err(format!("cannot pass {} as a compile-time constant", v.repr()?)))
}

/// One parameter's specialization, as the Python side spells it: `("const", value)`, `("ptr", dtype, aligned)`,
/// `("int", dtype, multiple_of_16)`, `("float", dtype)`, `("desc", dtype, block_shape, padding_nan)`.
fn arg_spec(t: &Bound<'_, PyAny>) -> PyResult<ArgSpec> {
    let kind: String = t.get_item(0)?.extract()?;
    let item = |i: usize| t.get_item(i);
    Ok(match kind.as_str() {
        "const" => ArgSpec::Constexpr(const_value(&item(1)?)?),
        "ptr" => ArgSpec::Pointer(dtype(&item(1)?.extract::<String>()?)?, item(2)?.extract()?),
        "int" => ArgSpec::Int(dtype(&item(1)?.extract::<String>()?)?, item(2)?.extract()?),
        "float" => ArgSpec::Float(dtype(&item(1)?.extract::<String>()?)?),
        "desc" => ArgSpec::TensorDesc {
            elem: dtype(&item(1)?.extract::<String>()?)?,
            block_shape: item(2)?.extract()?,
            padding_nan: item(3)?.extract()?,
        },
        other => return Err(PyValueError::new_err(format!("unknown argument kind `{other}`"))),
    })
}

/// A loaded module: CUDA handles are used from whichever thread launches (the launch binds the context first).
struct SendLoaded(LoadedKernel);
// SAFETY: a CUmodule/CUfunction may be used from any thread once its context is current, which
// `LoadedKernel::launch` ensures; the Mutex around it serializes the uses.
unsafe impl Send for SendLoaded {}

struct GpuState {
    gpu: Gpu,
    target: Target,
}

/// The GPU (device 0) and its target, opened once per process, or why there is none.
fn gpu() -> Result<&'static GpuState, String> {
    static GPU: OnceLock<Result<GpuState, String>> = OnceLock::new();
    GPU.get_or_init(|| {
        let gpu = Gpu::new().map_err(|e| e.message)?;
        let target = tessel::target_of(&gpu).map_err(|e| e.to_string())?;
        Ok(GpuState { gpu, target })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Whether a GPU can be used, and the target tessel compiles for it (`sm_90a`, ...), or why not.
#[pyfunction]
fn gpu_target() -> (Option<&'static str>, Option<String>) {
    match gpu() {
        Ok(g) => (Some(g.target.name()), None),
        Err(why) => (None, Some(why)),
    }
}

/// One specialization of a kernel, elaborated to tile IR; compiled to PTX and loaded on first GPU launch.
#[pyclass(module = "tessel._tessel")]
struct Compiled {
    file: String,
    source: String,
    kernel: String,
    spec: Specialization,
    func: Func,
    loaded: Mutex<Option<SendLoaded>>,
}

/// Elaborates `kernel` of `source` for one specialization: `params` gives each parameter's spelling (see
/// `arg_spec`), in order; trailing parameters left out take their defaults.
#[pyfunction]
#[pyo3(signature = (source, file, kernel, params, num_warps=4, num_stages=3))]
fn compile(
    py: Python<'_>,
    source: String,
    file: String,
    kernel: String,
    params: Vec<Bound<'_, PyAny>>,
    num_warps: u32,
    num_stages: u32,
) -> PyResult<Compiled> {
    let args = params.iter().map(arg_spec).collect::<PyResult<Vec<_>>>()?;
    let spec = Specialization { args, num_warps, num_stages };
    let func = py
        .detach(|| {
            let ks = KernelSource { file: &file, source: &source, kernel: &kernel, spec: &spec, module: None };
            tessel::pipeline::run(&ks, Target::Sm90a, Stage::Tile, None, &mut Timings::default())
        })
        .map_err(to_py)?;
    let Output::Tile(func) = func else { unreachable!("the pipeline stops at the stage asked for") };
    Ok(Compiled { file, source, kernel, spec, func, loaded: Mutex::new(None) })
}

#[pymethods]
impl Compiled {
    /// The kernel's tile IR, as text.
    fn tile_ir(&self) -> String {
        tessel::tile::print::print_func(&self.func)
    }

    /// The kernel's PTX for `target` (`sm_80`, `sm_90a`, `sm_100a`), through the disk cache.
    fn ptx(&self, py: Python<'_>, target: &str) -> PyResult<String> {
        let target =
            Target::parse(target).ok_or_else(|| PyValueError::new_err(format!("unknown target `{target}`")))?;
        let kernel = py.detach(|| Jit::new(DiskCache::from_env()).ptx(&self.source(), target, Some(&self.func)));
        Ok(kernel.map_err(to_py)?.ptx)
    }

    /// Runs the kernel in the interpreter over `grid`. `buffers` are (dtype, bytes) of each memory region;
    /// `args` the IR's arguments in order: `("buf", index)`, `("int", value)` or `("float", value)`. Returns the
    /// buffers' bytes afterwards and the lines `device_print` printed.
    fn interpret<'py>(
        &self,
        py: Python<'py>,
        buffers: Vec<(String, Vec<u8>)>,
        args: Vec<(String, Bound<'py, PyAny>)>,
        grid: [u32; 3],
    ) -> PyResult<(Vec<Bound<'py, PyBytes>>, Vec<String>)> {
        let mut mem = Memory::new();
        let mut ids = Vec::new();
        for (i, (dt, bytes)) in buffers.into_iter().enumerate() {
            let elem = dtype(&dt)?;
            if bytes.len() % elem.bytes() as usize != 0 {
                return Err(PyValueError::new_err(format!("buffer {i}: not a whole number of {elem} elements")));
            }
            ids.push(mem.alloc_bytes(format!("arg{i}"), elem, bytes));
        }
        let mut call = Vec::new();
        for (kind, v) in &args {
            call.push(match kind.as_str() {
                "buf" => {
                    Arg::Buffer(*ids.get(v.extract::<usize>()?).ok_or_else(|| PyValueError::new_err("no such buffer"))?)
                }
                "int" => Arg::Int(v.extract()?),
                "float" => Arg::Float(v.extract()?),
                other => return Err(PyValueError::new_err(format!("unknown argument kind `{other}`"))),
            });
        }
        let log = py
            .detach(|| tessel::tile::interp::run(&self.func, &call, grid, &mut mem))
            .map_err(|e| to_py(Error::Run(e)))?;
        let out = ids.iter().map(|&id| PyBytes::new(py, &mem.buffer(id).bytes)).collect();
        Ok((out, log))
    }

    /// Compiles (once), loads and launches the kernel on the GPU over `grid`, asynchronously on the runtime's
    /// stream. `args` are the IR's arguments: `("ptr", device address)`, `("int", value)`, `("float", value)`.
    fn launch_cuda(&self, py: Python<'_>, args: Vec<(String, Bound<'_, PyAny>)>, grid: [u32; 3]) -> PyResult<()> {
        let state = gpu().map_err(GPUError::new_err)?;
        let mut values = Vec::new();
        for (kind, v) in &args {
            values.push(match kind.as_str() {
                "ptr" => Arg::Int(v.extract::<u64>()? as i64),
                "int" => Arg::Int(v.extract()?),
                "float" => Arg::Float(v.extract()?),
                other => return Err(PyValueError::new_err(format!("unknown argument kind `{other}`"))),
            });
        }
        if values.len() != self.func.args().len() {
            return Err(PyValueError::new_err(format!(
                "`{}` takes {} arguments, got {}",
                self.kernel,
                self.func.args().len(),
                values.len()
            )));
        }
        let mut kargs = Vec::new();
        for (a, &v) in values.iter().zip(self.func.args()) {
            let elem = self.func.ty(v).elem();
            let is_ptr = matches!(elem, Some(tessel::tile::Elem::Ptr(..)));
            let ty = elem.and_then(|e| e.scalar());
            kargs.push(match (a, ty) {
                // A device address is 8 little-endian bytes, as a 64-bit integer is.
                (Arg::Int(p), _) if is_ptr => KArg::I64(*p),
                (Arg::Int(i), Some(ScalarType::I64 | ScalarType::U64)) => KArg::I64(*i),
                (Arg::Int(i), Some(t)) if t.is_int() => KArg::I32(*i as i32),
                (Arg::Float(x), Some(ScalarType::F64)) => KArg::F64(*x),
                (Arg::Float(x), Some(ScalarType::F32)) => KArg::F32(*x as f32),
                (Arg::Int(i), Some(ScalarType::F32)) => KArg::F32(*i as f32),
                (_, t) => {
                    let what = t.map_or("this kind of".to_string(), |t| t.to_string());
                    return Err(PyTypeError::new_err(format!("GPU launches do not take {what} arguments yet")));
                }
            });
        }
        let mut loaded = self.loaded.lock().map_err(|_| GPUError::new_err("a launch panicked"))?;
        if loaded.is_none() {
            let load = || Jit::new(DiskCache::from_env()).load(&state.gpu, &self.source(), Some(&self.func));
            *loaded = Some(py.detach(|| load().map(SendLoaded)).map_err(to_py)?);
        }
        let k = &loaded.as_ref().expect("loaded above").0;
        k.launch(&state.gpu, grid, &kargs).map_err(|e| GPUError::new_err(e.message))
    }

    /// Waits for the runtime's stream.
    #[staticmethod]
    fn synchronize() -> PyResult<()> {
        gpu().map_err(GPUError::new_err)?.gpu.synchronize().map_err(|e| GPUError::new_err(e.message))
    }

    /// The number of arguments the IR function takes (a tensor descriptor of rank r takes 1 + 2r).
    fn num_ir_args(&self) -> usize {
        self.func.args().len()
    }

    #[getter]
    fn name(&self) -> &str {
        &self.kernel
    }
}

impl Compiled {
    fn source(&self) -> KernelSource<'_> {
        KernelSource { file: &self.file, source: &self.source, kernel: &self.kernel, spec: &self.spec, module: None }
    }
}

#[pymodule]
fn _tessel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kernels, m)?)?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_target, m)?)?;
    m.add_class::<Compiled>()?;
    m.add("CompilationError", m.py().get_type::<CompilationError>())?;
    m.add("InterpreterError", m.py().get_type::<InterpreterError>())?;
    m.add("GPUError", m.py().get_type::<GPUError>())?;
    layouts::register(m)?;
    Ok(())
}
