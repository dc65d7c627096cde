//! How the facade's errors reach Python: one exception class per kind of failure, chosen by the error's variant
//! (never by its message), with the error's data as attributes where code may act on it.
//!
//! - `CompilationError`: the kernel does not compile (a rendered diagnostic, layouts, code generation, an
//!   internal error). An out-of-resources error is `tessel._triton.interface.CompilationOutOfResources`, both a
//!   `CompilationError` and Triton's `OutOfResources` (`OutOfSharedMemory` for shared memory).
//! - `InterpreterError`: the kernel failed in the interpreter; `.program` is the `(x, y, z)` of the program. Its
//!   subclasses: `OutOfBoundsError` (an access outside every buffer; `.buffer`, `.index`, `.size` when it names
//!   one), `DeviceAssertionError` (`tl.device_assert` or `tl.assume`), `DeadlockError` (mbarrier waits nothing
//!   completes).
//! - `GPUError`: no usable GPU, or the CUDA driver, `ptxas` or a launch's tensor maps failed.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;

use tessel::Error;
use tessel::interp::memory::AccessError;
use tessel::interp::{Fault, InterpError};
use tessel::runtime::RuntimeError;
use tessel::tile::target::{Exhausted, Resource};

create_exception!(_tessel, CompilationError, PyException, "A kernel does not compile; the message shows the source.");
create_exception!(_tessel, InterpreterError, PyRuntimeError, "A kernel failed while running in the interpreter.");
create_exception!(
    _tessel,
    OutOfBoundsError,
    InterpreterError,
    "A kernel run in the interpreter accessed memory outside its buffers."
);
create_exception!(
    _tessel,
    DeviceAssertionError,
    InterpreterError,
    "A `tl.device_assert` (or `tl.assume`) failed in the interpreter."
);
create_exception!(
    _tessel,
    DeadlockError,
    InterpreterError,
    "Partitions (or a program) wait on mbarrier phases that nothing left can complete."
);
create_exception!(_tessel, GPUError, PyRuntimeError, "No usable GPU, or the CUDA driver failed.");

/// The Python exception of `e`.
pub(crate) fn to_py(e: Error) -> PyErr {
    match e {
        Error::Compile(rendered) => CompilationError::new_err(rendered),
        Error::OutOfResources { exhausted, message } => {
            out_of_resources(format!("cannot generate code: {message}"), exhausted)
        }
        Error::Run(e) => interpreter_error(e),
        e @ (Error::Gpu(_) | Error::UnsupportedDevice { .. } | Error::WrongTarget { .. }) => {
            // The class says it is the GPU's: the reason without the facade's `GPU: `.
            GPUError::new_err(e.gpu_failure().unwrap_or_else(|| e.to_string()))
        }
        e @ (Error::Layout(_) | Error::Codegen(_) | Error::Internal(_)) => CompilationError::new_err(e.to_string()),
    }
}

/// Python's `tessel._triton.interface.CompilationOutOfResources(message, required, limit, name)` (for shared
/// memory its subclass `OutOfSharedMemory(message, required, limit)`): a `CompilationError` that is also Triton's
/// `OutOfResources`, as code written for Triton catches the one Triton raises loading such a kernel.
fn out_of_resources(message: String, x: Exhausted) -> PyErr {
    Python::attach(|py| {
        let interface = py.import("tessel._triton.interface");
        let made = match x.resource {
            Resource::SharedMemory => interface
                .and_then(|m| m.getattr("OutOfSharedMemory"))
                .and_then(|c| c.call1((message.as_str(), x.needed, x.capacity))),
            other => interface
                .and_then(|m| m.getattr("CompilationOutOfResources"))
                .and_then(|c| c.call1((message.as_str(), x.needed, x.capacity, other.name()))),
        };
        match made {
            Ok(instance) => PyErr::from_value(instance),
            Err(_) => CompilationError::new_err(message),
        }
    })
}

/// The interpreter's error as the exception of its kind, with `.program` and, for an access outside a buffer,
/// `.buffer`, `.index` and `.size`.
fn interpreter_error(e: InterpError) -> PyErr {
    let message = e.to_string();
    let err = match &e.fault {
        Fault::Memory(a) if a.is_out_of_bounds() => OutOfBoundsError::new_err(message),
        Fault::AssertFailed { .. } | Fault::AssumeFailed => DeviceAssertionError::new_err(message),
        Fault::Deadlock { .. } | Fault::Stuck { .. } => DeadlockError::new_err(message),
        _ => InterpreterError::new_err(message),
    };
    Python::attach(|py| {
        let value = err.value(py);
        let [x, y, z] = e.program;
        let _ = value.setattr("program", (x, y, z));
        if let Fault::Memory(AccessError::OutOfBounds { buffer, index, len }) = &e.fault {
            let _ = value.setattr("buffer", buffer.as_str());
            let _ = value.setattr("index", *index);
            let _ = value.setattr("size", *len);
        }
    });
    err
}

/// A runtime error (a launch, a device that cannot be opened) as `GPUError`, with `what` before the message.
pub(crate) fn gpu_error(what: &str, e: &RuntimeError) -> PyErr {
    GPUError::new_err(format!("{what}: {e}"))
}

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CompilationError", py.get_type::<CompilationError>())?;
    m.add("InterpreterError", py.get_type::<InterpreterError>())?;
    m.add("OutOfBoundsError", py.get_type::<OutOfBoundsError>())?;
    m.add("DeviceAssertionError", py.get_type::<DeviceAssertionError>())?;
    m.add("DeadlockError", py.get_type::<DeadlockError>())?;
    m.add("GPUError", py.get_type::<GPUError>())?;
    Ok(())
}
