//! tessel-runtime owns everything between a compiled [`Kernel`](tessel_codegen::Kernel) (PTX text and launch
//! facts, from tessel-codegen) and the GPU: the CUDA driver (the device's primary context, device memory, module
//! loading, launches (thread-block clusters among them) and their timing), the `ptxas` and `nvdisasm` subprocesses (whole-program cubins, `--emit
//! sass`), the tensor maps a launch encodes for TMA copies ([`tensor_map`]), the global scratch of kernels that
//! write tensor maps, and the on-disk compile cache ([`cache`]). It is the only crate that links cudarc.
//!
//! cudarc loads `libcuda` at run time, so this builds and links with no CUDA installed; [`Gpu::new`] checks
//! for the library (and a device) before creating a context, because context creation panics without a
//! driver. The context is the device's primary context, the one the CUDA runtime (and so torch) uses: a
//! kernel loaded here can be launched on a stream torch owns ([`LoadedKernel::launch_on_stream`]), and
//! [`ContextGuard`] / [`Gpu::on_device`] leave the caller's current context as they found it. Module loading
//! goes through `cuModuleLoadDataEx` with an error-log buffer so that a JIT failure reports what the driver's
//! assembler said.
//!
//! The modules depend one way: `error` (imports nothing of the crate) ← `device` (context, stream, buffers),
//! `ptxas` (subprocesses), `tensor_map`, `scratch` ← `launch` (a loaded kernel and its launches) ← `load`
//! (assembling and loading, `impl Gpu`), `timing`; `cache` stands apart (files only).
//!
//! ```no_run
//! # fn demo(f: &tessel_tile::ir::Func) -> Result<(), Box<dyn std::error::Error>> {
//! let kernel = tessel_codegen::compile(f)?;
//! let gpu = tessel_runtime::Gpu::new()?;
//! let x = gpu.upload(&[0u8; 4096])?;
//! gpu.load(&kernel)?.launch(&gpu, [1, 1, 1], &[tessel_runtime::KArg::Buf(&x)])?;
//! # Ok(()) }
//! ```

pub mod cache;
mod device;
mod error;
mod launch;
mod load;
mod ptxas;
mod scratch;
pub mod tensor_map;
mod timing;

pub use device::{ContextGuard, DeviceBuffer, Element, Gpu, driver_present};
pub use error::{RuntimeError, TensorMapError, TensorMapProblem};
pub use launch::{KArg, LaunchOptions, LoadedKernel};
pub use ptxas::{assemble, find_ptxas, sass};
