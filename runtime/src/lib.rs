//! tessel-runtime owns everything between a compiled [`Kernel`] (PTX text and launch facts, from
//! tessel-codegen) and the GPU: the CUDA driver (the device's primary context, device memory, module loading,
//! launches and their timing), the `ptxas` and `nvdisasm` subprocesses (whole-program cubins, `--emit sass`), the
//! tensor maps a launch encodes for TMA copies ([`tensor_map`]), the global scratch of kernels that write tensor
//! maps, and the on-disk compile cache ([`cache`]). It is the only crate that links cudarc.
//!
//! cudarc loads `libcuda` at run time, so this builds and links with no CUDA installed; [`Gpu::new`] checks
//! for the library (and a device) before creating a context, because context creation panics without a
//! driver. The context is the device's primary context, the one the CUDA runtime (and so torch) uses: a
//! kernel loaded here can be launched on a stream torch owns ([`LoadedKernel::launch_on_stream`]), and
//! [`ContextGuard`] / [`Gpu::on_device`] leave the caller's current context as they found it. Module loading goes through `cuModuleLoadDataEx` with an error-log buffer so that a JIT failure
//! reports what the driver's assembler said.
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
mod scratch;
pub mod tensor_map;

use std::ffi::{CString, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};

use tessel_codegen::Kernel;

#[derive(Clone, Debug)]
pub struct RuntimeError {
    pub message: String,
}

impl RuntimeError {
    fn new(message: impl Into<String>) -> RuntimeError {
        RuntimeError { message: message.into() }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuntimeError {}

impl From<cudarc::driver::DriverError> for RuntimeError {
    fn from(e: cudarc::driver::DriverError) -> RuntimeError {
        RuntimeError::new(format!("CUDA driver: {e:?}"))
    }
}

pub(crate) fn check(r: sys::CUresult, what: &str) -> Result<(), RuntimeError> {
    if r == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(RuntimeError::new(format!("{what}: {r:?}"))) }
}

/// One GPU: the primary context of one device (the context the CUDA runtime, and so torch, uses on it) and
/// its default stream.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
}

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen libcuda.
    std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

/// Makes a context current on the calling thread for as long as it lives, then restores the context that was
/// current before (none included): a library sharing the thread with another CUDA user (torch) leaves that user's
/// current device as it found it.
pub struct ContextGuard {
    previous: Option<sys::CUcontext>,
}

impl ContextGuard {
    /// Makes `ctx` current (nothing to do, and nothing to restore, when it already is).
    pub fn enter(ctx: &CudaContext) -> Result<ContextGuard, RuntimeError> {
        let mut current: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle.
        check(unsafe { sys::cuCtxGetCurrent(&mut current) }, "cuCtxGetCurrent")?;
        if current == ctx.cu_ctx() {
            return Ok(ContextGuard { previous: None });
        }
        // SAFETY: `ctx` is a live (retained) context.
        check(unsafe { sys::cuCtxSetCurrent(ctx.cu_ctx()) }, "cuCtxSetCurrent")?;
        Ok(ContextGuard { previous: Some(current) })
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        if let Some(previous) = self.previous {
            // SAFETY: `previous` was current on this thread when the guard was made (or null: none).
            unsafe {
                sys::cuCtxSetCurrent(previous);
            }
        }
    }
}

impl Gpu {
    /// Device 0, or an error when there is no driver or no device. The context stays current on the thread.
    pub fn new() -> Result<Gpu, RuntimeError> {
        Gpu::open(0)
    }

    /// The primary context of device `ordinal` (shared with the CUDA runtime, so with torch), or an error when
    /// there is no driver or no such device. The context stays current on the calling thread (see
    /// [`Gpu::on_device`] for a variant that leaves the thread as it was).
    pub fn open(ordinal: usize) -> Result<Gpu, RuntimeError> {
        if !driver_present() {
            return Err(RuntimeError::new("no CUDA driver (libcuda) found"));
        }
        let ctx = std::panic::catch_unwind(|| CudaContext::new(ordinal))
            .map_err(|_| RuntimeError::new("creating a CUDA context panicked"))??;
        let stream = ctx.default_stream();
        Ok(Gpu { ctx, stream })
    }

    /// [`Gpu::open`], restoring the context that was current on the calling thread before: for a library
    /// that launches on another program's device (torch's), whose current device must not change under it.
    pub fn on_device(ordinal: usize) -> Result<Gpu, RuntimeError> {
        if !driver_present() {
            return Err(RuntimeError::new("no CUDA driver (libcuda) found"));
        }
        let mut previous: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: initializes the driver (idempotent), then writes one handle.
        check(unsafe { sys::cuInit(0) }, "cuInit")?;
        check(unsafe { sys::cuCtxGetCurrent(&mut previous) }, "cuCtxGetCurrent")?;
        let gpu = Gpu::open(ordinal);
        // SAFETY: `previous` was current on this thread (or null: none).
        unsafe {
            sys::cuCtxSetCurrent(previous);
        }
        gpu
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// Copies `bytes` into a fresh device buffer.
    pub fn upload(&self, bytes: &[u8]) -> Result<DeviceBuffer, RuntimeError> {
        let n = bytes.len().max(1);
        let mut s = self.stream.alloc_zeros::<u8>(n)?;
        if !bytes.is_empty() {
            self.stream.memcpy_htod(bytes, &mut s)?;
        }
        Ok(DeviceBuffer { slice: s, len: bytes.len() })
    }

    /// Copies `data` into a fresh device buffer.
    pub fn upload_slice<T: Element>(&self, data: &[T]) -> Result<DeviceBuffer, RuntimeError> {
        self.upload(as_bytes(data))
    }

    /// Copies a device buffer back as elements of `T` (its length must be a multiple of `T`'s size).
    pub fn download_vec<T: Element>(&self, buf: &DeviceBuffer) -> Result<Vec<T>, RuntimeError> {
        let size = std::mem::size_of::<T>();
        if buf.len % size != 0 {
            return Err(RuntimeError::new(format!(
                "a buffer of {} bytes is not a whole number of {size}-byte elements",
                buf.len
            )));
        }
        let bytes = self.download(buf)?;
        Ok(bytes.chunks_exact(size).map(T::from_le).collect())
    }

    /// Overwrites a device buffer with `bytes` (same length).
    pub fn write(&self, buf: &mut DeviceBuffer, bytes: &[u8]) -> Result<(), RuntimeError> {
        if bytes.len() != buf.len {
            return Err(RuntimeError::new("write: length mismatch"));
        }
        self.stream.memcpy_htod(bytes, &mut buf.slice)?;
        Ok(())
    }

    /// Copies a device buffer back.
    pub fn download(&self, buf: &DeviceBuffer) -> Result<Vec<u8>, RuntimeError> {
        let mut v = self.stream.clone_dtoh(&buf.slice)?;
        v.truncate(buf.len);
        Ok(v)
    }

    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        self.stream.synchronize()?;
        Ok(())
    }

    /// `sm90-drv13000`: what a cubin built by this driver for this device is valid for (a cache key part).
    pub fn device_tag(&self) -> Result<String, RuntimeError> {
        let (major, minor) = self.ctx.compute_capability()?;
        let mut version = 0;
        // SAFETY: writes one int.
        check(unsafe { sys::cuDriverGetVersion(&mut version) }, "cuDriverGetVersion")?;
        Ok(format!("sm{major}{minor}-drv{version}"))
    }

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
        let src = CString::new(k.ptx.as_str()).map_err(|_| RuntimeError::new("PTX contains a NUL byte"))?;
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
            return Err(RuntimeError::new(format!(
                "loading the PTX of `{}` failed ({r:?}): {}",
                k.name,
                String::from_utf8_lossy(&log[..end])
            )));
        }
        self.finish_load(k, module)
    }

    /// Loads a cubin built for this device (by [`Gpu::jit`], possibly in an earlier process) and looks up the
    /// kernel's entry; raises the dynamic shared memory limit when the kernel needs more than 48 KiB.
    pub fn load_cubin(&self, k: &Kernel, cubin: &[u8]) -> Result<LoadedKernel, RuntimeError> {
        self.ctx.bind_to_thread()?;
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `cubin` is a complete ELF image (the driver reads its size from the header).
        check(unsafe { sys::cuModuleLoadData(&mut module, cubin.as_ptr() as *const c_void) }, "cuModuleLoadData")?;
        self.finish_load(k, module)
    }

    /// Takes ownership of a loaded module and looks up the kernel's entry; raises the dynamic shared memory
    /// limit when the kernel needs more than 48 KiB.
    fn finish_load(&self, k: &Kernel, module: sys::CUmodule) -> Result<LoadedKernel, RuntimeError> {
        // Owns the module from here on: an error below unloads it.
        let mut loaded = LoadedKernel {
            module,
            func: std::ptr::null_mut(),
            threads: k.num_warps * 32,
            shared_bytes: k.shared_bytes,
            tensor_maps: k.tensor_maps.clone(),
            scratch_bytes: k.scratch_bytes,
            scratch: Default::default(),
            ctx: self.ctx.clone(),
        };
        let name = CString::new(k.name.as_str()).map_err(|_| RuntimeError::new("bad kernel name"))?;
        // SAFETY: `module` is loaded; `name` is NUL-terminated.
        check(unsafe { sys::cuModuleGetFunction(&mut loaded.func, module, name.as_ptr()) }, "cuModuleGetFunction")?;
        if k.shared_bytes > 48 * 1024 {
            // SAFETY: `func` is a valid function handle.
            check(
                unsafe {
                    sys::cuFuncSetAttribute(
                        loaded.func,
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        k.shared_bytes as i32,
                    )
                },
                "setting the dynamic shared memory limit",
            )?;
        }
        Ok(loaded)
    }
}

/// The `ptxas` to assemble with: `$PTXAS`, else `ptxas` on `PATH`, else under `$CUDA_HOME` or
/// `/usr/local/cuda`; `PTXAS=` (empty) means none (use the driver's JIT).
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return (!p.is_empty()).then(|| PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    let cuda = [std::env::var_os("CUDA_HOME").map(PathBuf::from), Some(PathBuf::from("/usr/local/cuda"))];
    on_path.chain(cuda.into_iter().flatten().map(|d| d.join("bin"))).map(|d| d.join("ptxas")).find(|p| p.is_file())
}

/// `ptxas -arch ARCH` over `ptx` (whole-program, default optimization), returning the cubin.
fn run_ptxas(ptxas: &Path, arch: &str, ptx: &str) -> Result<Vec<u8>, RuntimeError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let base = std::env::temp_dir().join(format!("tessel-{}-{n}", std::process::id()));
    let (src, out) = (base.with_extension("ptx"), base.with_extension("cubin"));
    let result = (|| {
        std::fs::write(&src, ptx).map_err(|e| RuntimeError::new(format!("writing {}: {e}", src.display())))?;
        let run = Command::new(ptxas)
            .args(["-arch", arch, "-o"])
            .arg(&out)
            .arg(&src)
            .output()
            .map_err(|e| RuntimeError::new(format!("running {}: {e}", ptxas.display())))?;
        if !run.status.success() {
            return Err(RuntimeError::new(format!("ptxas: {}", String::from_utf8_lossy(&run.stderr))));
        }
        std::fs::read(&out).map_err(|e| RuntimeError::new(format!("reading {}: {e}", out.display())))
    })();
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&out);
    result
}

/// Assembles `k` offline with `ptxas` for its own target (no GPU needed): the cubin.
pub fn assemble(k: &Kernel) -> Result<Vec<u8>, RuntimeError> {
    let ptxas = find_ptxas().ok_or_else(|| {
        RuntimeError::new("no ptxas found: set PTXAS, put it on PATH, or install CUDA (or the nvidia-cuda-nvcc wheel)")
    })?;
    run_ptxas(&ptxas, k.target.name(), &k.ptx)
}

/// The SASS of `k`: assembled by `ptxas`, disassembled by `nvdisasm` (or `cuobjdump -sass`) found next to
/// `ptxas`, on `PATH`, or under `$CUDA_HOME` / `/usr/local/cuda`.
pub fn sass(k: &Kernel) -> Result<String, RuntimeError> {
    let cubin = assemble(k)?;
    let near_ptxas = find_ptxas().and_then(|p| p.parent().map(Path::to_path_buf));
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    let cuda = [std::env::var_os("CUDA_HOME").map(PathBuf::from), Some(PathBuf::from("/usr/local/cuda"))];
    let dirs: Vec<PathBuf> =
        near_ptxas.into_iter().chain(on_path).chain(cuda.into_iter().flatten().map(|d| d.join("bin"))).collect();
    let tool = ["nvdisasm", "cuobjdump"].iter().find_map(|t| dirs.iter().map(|d| d.join(t)).find(|p| p.is_file()));
    let Some(tool) = tool else {
        return Err(RuntimeError::new(
            "--emit sass needs nvdisasm or cuobjdump (from a CUDA toolkit); neither is next to ptxas, on PATH or \
             under $CUDA_HOME",
        ));
    };
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let file = std::env::temp_dir().join(format!(
        "tessel-sass-{}-{}.cubin",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, &cubin).map_err(|e| RuntimeError::new(format!("writing {}: {e}", file.display())))?;
    let is_nvdisasm = tool.file_name().is_some_and(|n| n == "nvdisasm");
    let mut cmd = Command::new(&tool);
    if is_nvdisasm {
        cmd.arg("-c");
    } else {
        cmd.arg("-sass");
    }
    let out = cmd.arg(&file).output();
    let _ = std::fs::remove_file(&file);
    let out = out.map_err(|e| RuntimeError::new(format!("running {}: {e}", tool.display())))?;
    if !out.status.success() {
        return Err(RuntimeError::new(format!("{}: {}", tool.display(), String::from_utf8_lossy(&out.stderr))));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Untyped device memory.
pub struct DeviceBuffer {
    slice: CudaSlice<u8>,
    len: usize,
}

impl DeviceBuffer {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Element types a host slice can be uploaded from and downloaded to (plain numbers: no padding, every bit
/// pattern valid).
pub trait Element: Copy + sealed::Sealed {
    fn from_le(bytes: &[u8]) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one element's bytes"))
            }
        }
    )*};
}
element!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

fn as_bytes<T: Element>(data: &[T]) -> &[u8] {
    // SAFETY: `Element` types are plain numbers without padding; the length covers exactly the slice.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}

/// A kernel argument, in the order of the kernel's parameters. `I32` also passes i1/i8/i16 parameters: the
/// driver copies the parameter's size from the start of the (little-endian) value.
#[derive(Clone, Copy)]
pub enum KArg<'a> {
    Buf(&'a DeviceBuffer),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl<'a> From<&'a DeviceBuffer> for KArg<'a> {
    fn from(b: &'a DeviceBuffer) -> KArg<'a> {
        KArg::Buf(b)
    }
}

/// A kernel loaded into a context.
pub struct LoadedKernel {
    module: sys::CUmodule,
    func: sys::CUfunction,
    threads: u32,
    shared_bytes: u32,
    /// The tensor maps the kernel takes after its IR arguments, encoded at each launch.
    tensor_maps: Vec<tessel_codegen::TensorMapArg>,
    /// Global scratch bytes per program (`Kernel::scratch_bytes`), and the buffers kept per stream.
    scratch_bytes: u32,
    scratch: crate::scratch::ScratchCache,
    ctx: Arc<CudaContext>,
}

impl LoadedKernel {
    /// Times the kernel as METHOD.md asks: `warmup` launches, then `reps` launches each between two CUDA events
    /// on the stream; returns the times in milliseconds, sorted (the median is the middle one).
    ///
    /// Before each timed launch, outside its events, 256 MB are zeroed so that the launch starts with none of
    /// its data in the L2 (50 MB on the H100), as `triton.testing.do_bench` does: the numbers are comparable
    /// with Triton's, and a kernel whose inputs fit in the L2 is not timed on a warm cache.
    pub fn time(
        &self,
        gpu: &Gpu,
        grid: [u32; 3],
        args: &[KArg],
        warmup: u32,
        reps: u32,
    ) -> Result<Vec<f64>, RuntimeError> {
        const L2_CLEAR_BYTES: usize = 256_000_000;
        let mut scrub = gpu.stream.alloc_zeros::<u32>(L2_CLEAR_BYTES / 4)?;
        self.ctx.bind_to_thread()?;
        let scratch = self.scratch.get(self.scratch_bytes, grid, gpu.stream.cu_stream())?;
        for _ in 0..warmup {
            self.launch_args(gpu, grid, args, LaunchOptions::default(), scratch)?;
        }
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut times = Vec::with_capacity(reps as usize);
        for _ in 0..reps {
            let (start, stop) = (gpu.ctx.new_event(flags)?, gpu.ctx.new_event(flags)?);
            gpu.stream.memset_zeros(&mut scrub)?;
            start.record(&gpu.stream)?;
            self.launch_args(gpu, grid, args, LaunchOptions::default(), scratch)?;
            stop.record(&gpu.stream)?;
            stop.synchronize()?;
            times.push(start.elapsed_ms(&stop)? as f64);
        }
        times.sort_by(f64::total_cmp);
        Ok(times)
    }

    /// Launches over `grid` programs on `stream`, the `CUstream` handle (as an integer, the way torch's
    /// `cuda_stream` gives it) of a stream of this kernel's context that another library owns (torch's current
    /// stream): asynchronous, no synchronization. Each parameter's value is 8 little-endian
    /// bytes in `params`, one per kernel parameter in order (a device address, an integer sign-extended to 64
    /// bits, an f32's bits in the low half, an f64's bits): the driver reads each parameter's size from the start
    /// of its slot. The kernel's context is made current for the launch and the caller's restored after.
    ///
    /// # Safety
    /// `stream` must be null (the legacy default stream) or a live stream of this kernel's device's primary
    /// context, and `params` must hold exactly one slot per IR argument (the tensor maps are encoded from them and
    /// appended, then the global scratch, allocated on `stream` for this launch); addresses must be device memory the
    /// kernel may access (a wrong one faults on the device, which the driver reports on a later call).
    pub unsafe fn launch_on_stream(
        &self,
        stream: usize,
        grid: [u32; 3],
        params: &mut [u64],
        opts: LaunchOptions,
    ) -> Result<(), RuntimeError> {
        let _current = ContextGuard::enter(&self.ctx)?;
        let mut maps = self.encode_maps(|i| params[i] as i64)?;
        let mut scratch_ptr = self.scratch.get(self.scratch_bytes, grid, stream as sys::CUstream)?;
        let n = params.len() + maps.len() + scratch_ptr.is_some() as usize;
        let mut ptrs = [std::ptr::null_mut::<c_void>(); 64];
        let mut heap = Vec::new();
        let slots = params.iter_mut().map(|v| v as *mut u64 as *mut c_void);
        let all = slots
            .chain(maps.iter_mut().map(|m| m.as_mut_ptr() as *mut c_void))
            .chain(scratch_ptr.as_mut().map(|p| p as *mut u64 as *mut c_void));
        let ptrs: &mut [*mut c_void] = if n <= ptrs.len() {
            for (p, v) in ptrs.iter_mut().zip(all) {
                *p = v;
            }
            &mut ptrs[..n]
        } else {
            heap.extend(all);
            &mut heap
        };
        // SAFETY: one pointer per kernel parameter, each to 8 bytes (at least the parameter's size); the stream
        // belongs to this context (the caller's promise).
        unsafe { self.raw_launch(stream as sys::CUstream, grid, ptrs, opts) }
    }

    /// Launches over `grid` programs with `num_warps * 32` threads each (asynchronous on the default stream).
    pub fn launch(&self, gpu: &Gpu, grid: [u32; 3], args: &[KArg]) -> Result<(), RuntimeError> {
        self.launch_with(gpu, grid, args, LaunchOptions::default())
    }

    /// [`LoadedKernel::launch`] with launch attributes (programmatic dependent launch).
    pub fn launch_with(
        &self,
        gpu: &Gpu,
        grid: [u32; 3],
        args: &[KArg],
        opts: LaunchOptions,
    ) -> Result<(), RuntimeError> {
        self.ctx.bind_to_thread()?;
        let scratch = self.scratch.get(self.scratch_bytes, grid, gpu.stream.cu_stream())?;
        self.launch_args(gpu, grid, args, opts, scratch)
    }

    /// [`LoadedKernel::launch_with`] with the global scratch given (allocated by the caller when the kernel
    /// needs one), on the context bound to the thread.
    fn launch_args(
        &self,
        gpu: &Gpu,
        grid: [u32; 3],
        args: &[KArg],
        opts: LaunchOptions,
        mut scratch: Option<sys::CUdeviceptr>,
    ) -> Result<(), RuntimeError> {
        // Values first (stable addresses), then pointers to them.
        let mut storage: Vec<[u8; 8]> = Vec::with_capacity(args.len());
        let mut guards = Vec::new();
        for a in args {
            let bytes = match a {
                KArg::Buf(b) => {
                    let (ptr, guard) = b.slice.device_ptr(&gpu.stream);
                    guards.push(guard);
                    ptr.to_le_bytes()
                }
                KArg::I32(v) => (*v as i64 as u64).to_le_bytes(),
                KArg::I64(v) => v.to_le_bytes(),
                KArg::F32(v) => {
                    let mut b = [0u8; 8];
                    b[..4].copy_from_slice(&v.to_le_bytes());
                    b
                }
                KArg::F64(v) => v.to_le_bytes(),
            };
            storage.push(bytes);
        }
        let mut maps = self.encode_maps(|i| i64::from_le_bytes(storage[i]))?;
        let mut ptrs: Vec<*mut c_void> = storage.iter_mut().map(|s| s.as_mut_ptr() as *mut c_void).collect();
        ptrs.extend(maps.iter_mut().map(|m| m.as_mut_ptr() as *mut c_void));
        ptrs.extend(scratch.as_mut().map(|p| p as *mut u64 as *mut c_void));
        // SAFETY: one pointer per kernel parameter, each to at least as many bytes as the parameter's type
        // (little-endian, so a 4-byte parameter reads the low half); buffers stay alive through `guards`.
        let r = unsafe { self.raw_launch(gpu.stream.cu_stream(), grid, &mut ptrs, opts) };
        drop(guards);
        r
    }

    /// The launch itself: `cuLaunchKernel`, or `cuLaunchKernelEx` when `opts` asks for launch attributes.
    ///
    /// # Safety
    /// `ptrs` holds one pointer per kernel parameter, each to at least the parameter's size of bytes that stay
    /// valid for the call; `stream` is null or a live stream of this kernel's context.
    unsafe fn raw_launch(
        &self,
        stream: sys::CUstream,
        grid: [u32; 3],
        ptrs: &mut [*mut c_void],
        opts: LaunchOptions,
    ) -> Result<(), RuntimeError> {
        let mut attrs = opts.attributes();
        if attrs.is_empty() {
            // SAFETY: the caller's promise.
            let r = unsafe {
                sys::cuLaunchKernel(
                    self.func,
                    grid[0],
                    grid[1],
                    grid[2],
                    self.threads,
                    1,
                    1,
                    self.shared_bytes,
                    stream,
                    ptrs.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            return check(r, "cuLaunchKernel");
        }
        let config = sys::CUlaunchConfig {
            gridDimX: grid[0],
            gridDimY: grid[1],
            gridDimZ: grid[2],
            blockDimX: self.threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: self.shared_bytes,
            hStream: stream,
            attrs: attrs.as_mut_ptr(),
            numAttrs: attrs.len() as u32,
        };
        // SAFETY: the caller's promise for `ptrs` and `stream`; `config` and the attributes it points to outlive
        // the call.
        let r = unsafe { sys::cuLaunchKernelEx(&config, self.func, ptrs.as_mut_ptr(), std::ptr::null_mut()) };
        check(r, "cuLaunchKernelEx")
    }
}

/// How a kernel is launched, beyond its grid and arguments (Triton's launch keywords).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Programmatic dependent launch (Triton's `launch_pdl=True`): the launch may start while the kernel before
    /// it on the stream still runs, once every block of that kernel has executed `griddepcontrol.launch_dependents`
    /// (`tl.extra.cuda.gdc_launch_dependents`) or exited; this kernel's `griddepcontrol.wait`
    /// (`tl.extra.cuda.gdc_wait`) then waits for the earlier kernel to complete and its memory to be visible.
    /// Sets `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (sm_90 and newer; older devices run the
    /// kernels one after the other, as without it).
    pub pdl: bool,
}

impl LaunchOptions {
    /// The `cuLaunchKernelEx` attributes these options set (none: a plain `cuLaunchKernel`).
    pub fn attributes(&self) -> Vec<sys::CUlaunchAttribute> {
        let mut attrs = Vec::new();
        if self.pdl {
            // SAFETY: an all-zero launch attribute value is a valid bit pattern for every member of the union.
            let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
            value.programmaticStreamSerializationAllowed = 1;
            attrs.push(sys::CUlaunchAttribute {
                id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                pad: [0; 4],
                value,
            });
        }
        attrs
    }
}

impl LoadedKernel {
    /// The kernel's tensor maps, encoded from its IR arguments (`arg(i)`: argument `i` as an integer, a device
    /// address for pointers).
    fn encode_maps(&self, arg: impl Fn(usize) -> i64) -> Result<Vec<[u64; 16]>, RuntimeError> {
        self.tensor_maps
            .iter()
            .map(|m| {
                let Some(b) = m.base_arg.map(|b| b as usize) else {
                    // A descriptor the kernel makes: a template the kernel completes.
                    let (base, shape, strides) = crate::tensor_map::template_values(m);
                    let values = crate::tensor_map::DescriptorValues { base, shape: &shape, strides: &strides };
                    return crate::tensor_map::encode(m, &values);
                };
                let r = m.im2col_rank.map_or(m.block_shape.len(), |r| r as usize);
                let shape: Vec<i64> = (b + 1..b + 1 + r).map(|i| arg(i) as i32 as i64).collect();
                let strides: Vec<i64> = (b + 1 + r..b + 1 + 2 * r).map(&arg).collect();
                let values =
                    crate::tensor_map::DescriptorValues { base: arg(b) as u64, shape: &shape, strides: &strides };
                if m.im2col_rank.is_none() {
                    return crate::tensor_map::encode(m, &values);
                }
                // Lower corners, upper corners (spatial dims), element strides, as i32 arguments.
                let rest: Vec<i64> = (b + 1 + 2 * r..b + 5 * r - 3).map(|i| arg(i) as i32 as i64).collect();
                let s = r - 2;
                let im2col = crate::tensor_map::Im2colValues {
                    lower: &rest[..s],
                    upper: &rest[s..2 * s],
                    element_strides: &rest[2 * s..],
                };
                crate::tensor_map::encode_im2col(m, &values, &im2col)
            })
            .collect()
    }
}

impl Drop for LoadedKernel {
    fn drop(&mut self) {
        // The thread's current context is left as it was (a kernel may be dropped on a thread that uses another
        // device).
        if let Ok(_current) = ContextGuard::enter(&self.ctx) {
            self.scratch.free_all();
            // SAFETY: the module was loaded by us and is unloaded once.
            unsafe {
                sys::cuModuleUnload(self.module);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ptxas` (when there is one: CI installs it and sets TESSEL_REQUIRE_PTXAS) assembles whole-program code:
    /// an executable ELF, not the relocatable object `cuLink*` would build (more registers, slower kernels).
    /// `launch_pdl` is one attribute, programmatic stream serialization allowed; no options, no attributes (the
    /// plain `cuLaunchKernel` path).
    #[test]
    fn pdl_sets_programmatic_stream_serialization() {
        assert!(LaunchOptions::default().attributes().is_empty());
        let attrs = LaunchOptions { pdl: true }.attributes();
        assert_eq!(attrs.len(), 1);
        assert_eq!(attrs[0].id, sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
        assert_eq!(attrs[0].id as u32, 6, "CUDA's value of the attribute");
        // SAFETY: the member the attribute's id selects, written by `attributes`.
        assert_eq!(unsafe { attrs[0].value.programmaticStreamSerializationAllowed }, 1);
    }

    #[test]
    fn ptxas_builds_whole_program_cubins() {
        let Some(ptxas) = find_ptxas() else {
            assert!(std::env::var_os("TESSEL_REQUIRE_PTXAS").is_none(), "TESSEL_REQUIRE_PTXAS is set but no ptxas");
            return;
        };
        let ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n    \
                   .reg .b64 %rd<2>;\n    ld.param.u64 %rd1, [p];\n    st.global.u32 [%rd1], 7;\n    ret;\n}\n";
        let cubin = run_ptxas(&ptxas, "sm_90a", ptx).unwrap();
        assert!(cubin.starts_with(b"\x7fELF"));
        assert_eq!(u16::from_le_bytes([cubin[16], cubin[17]]), 2, "e_type must be ET_EXEC");
        let bad = run_ptxas(&ptxas, "sm_90a", "not ptx").unwrap_err();
        assert!(bad.message.starts_with("ptxas: "), "{}", bad.message);
    }
}
