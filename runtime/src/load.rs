//! Loading a kernel into a device's context: assembled by `ptxas` as whole-program code for the device when one
//! is at hand, else through the driver's JIT; or from a cubin the disk cache kept.

use std::ffi::{CString, c_void};

use cudarc::driver::sys;
use tessel_codegen::Kernel;

use crate::device::Gpu;
use crate::error::{RuntimeError, check};
use crate::launch::LoadedKernel;
use crate::ptxas::{find_ptxas, run_ptxas};

impl Gpu {
    /// Assembles the kernel's PTX and loads it (see [`Gpu::jit`]).
    pub fn load(&self, k: &Kernel) -> Result<LoadedKernel, RuntimeError> {
        Ok(self.jit(k)?.0)
    }

    /// The `-arch` to assemble `k` for on this device: the kernel's own target when it is an `a` (arch-
    /// specific) target, else the device's (sm_80 PTX assembles for any later GPU).
    fn ptxas_arch(&self, k: &Kernel) -> Result<String, RuntimeError> {
        let (major, minor) = self.ctx.compute_capability()?;
        Ok(match k.target {
            tessel_codegen::Target::Sm80 => format!("sm_{major}{minor}"),
            a => a.name().to_string(),
        })
    }

    /// Assembles the kernel's PTX and loads it. With a `ptxas` at hand ([`find_ptxas`]), as whole-program code
    /// for this device, returning the cubin for the disk cache; otherwise (or if that cubin does not load)
    /// through the driver's JIT (`cuModuleLoadDataEx`), which keeps its own cache and returns no cubin.
    ///
    /// Not `cuLink*`: the linker assembles PTX as relocatable code (`ptxas -c`), which on the H100 took layer
    /// norm's forward kernel from 32 to 55 registers and cost 7% of its bandwidth.
    pub fn jit(&self, k: &Kernel) -> Result<(LoadedKernel, Option<Vec<u8>>), RuntimeError> {
        if let Some(ptxas) = find_ptxas() {
            let arch = self.ptxas_arch(k)?;
            if let Ok(cubin) = run_ptxas(&ptxas, &arch, &k.ptx)
                && let Ok(loaded) = self.load_cubin(k, &cubin)
            {
                return Ok((loaded, Some(cubin)));
            }
        }
        Ok((self.driver_jit(k)?, None))
    }

    /// Loads the kernel's PTX through the driver's JIT; a failure reports what the driver's assembler said.
    pub fn driver_jit(&self, k: &Kernel) -> Result<LoadedKernel, RuntimeError> {
        self.ctx.bind_to_thread()?;
        let src = CString::new(k.ptx.as_str()).map_err(|_| RuntimeError::Argument("PTX contains a NUL byte".into()))?;
        let mut log = vec![0u8; 16384];
        let mut opts =
            [sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER, sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut vals: [*mut c_void; 2] = [log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `src` is NUL-terminated; the option arrays outlive the call; the log buffer has the size we pass.
        let r = unsafe {
            sys::cuModuleLoadDataEx(&mut module, src.as_ptr() as *const c_void, 2, opts.as_mut_ptr(), vals.as_mut_ptr())
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            return Err(RuntimeError::Driver(format!(
                "loading the PTX of `{}` failed ({r:?}): {}",
                k.name,
                String::from_utf8_lossy(&log[..end])
            )));
        }
        LoadedKernel::from_module(&self.ctx, k, module)
    }

    /// Loads a cubin built for this device (by [`Gpu::jit`], possibly in an earlier process) and looks up the
    /// kernel's entry; raises the dynamic shared memory limit when the kernel needs more than 48 KiB.
    pub fn load_cubin(&self, k: &Kernel, cubin: &[u8]) -> Result<LoadedKernel, RuntimeError> {
        self.ctx.bind_to_thread()?;
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `cubin` is a complete ELF image (the driver reads its size from the header).
        check(unsafe { sys::cuModuleLoadData(&mut module, cubin.as_ptr() as *const c_void) }, "cuModuleLoadData")?;
        LoadedKernel::from_module(&self.ctx, k, module)
    }
}
