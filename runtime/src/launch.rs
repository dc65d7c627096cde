//! Launching a loaded kernel: its arguments (typed, or raw 8-byte slots for a launch on another library's
//! stream), the tensor maps and global scratch appended after them, and launch attributes (programmatic
//! dependent launch, and the cluster dimension of a kernel whose program is a thread-block cluster).

use std::ffi::{CString, c_void};
use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::{CudaContext, DevicePtr};
use tessel_codegen::{Kernel, TensorMapArg};

use crate::device::{ContextGuard, DeviceBuffer, Gpu};
use crate::error::{RuntimeError, check};
use crate::scratch::ScratchCache;
use crate::tensor_map;

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
    tensor_maps: Vec<TensorMapArg>,
    /// Global scratch bytes per program (`Kernel::scratch_bytes`), and the buffers kept per stream.
    scratch_bytes: u32,
    scratch: ScratchCache,
    /// CTAs per cluster (`Kernel::num_ctas`): a program is a cluster of this many CTAs along x.
    num_ctas: u32,
    ctx: Arc<CudaContext>,
}

impl LoadedKernel {
    /// Takes ownership of a module loaded into `ctx` and looks up the kernel's entry; raises the dynamic shared
    /// memory limit when the kernel needs more than 48 KiB.
    pub(crate) fn from_module(
        ctx: &Arc<CudaContext>,
        k: &Kernel,
        module: sys::CUmodule,
    ) -> Result<LoadedKernel, RuntimeError> {
        // Owns the module from here on: an error below unloads it.
        let mut loaded = LoadedKernel {
            module,
            func: std::ptr::null_mut(),
            threads: k.num_warps * 32,
            shared_bytes: k.shared_bytes,
            tensor_maps: k.tensor_maps.clone(),
            scratch_bytes: k.scratch_bytes,
            scratch: Default::default(),
            num_ctas: k.num_ctas.max(1),
            ctx: ctx.clone(),
        };
        let name = CString::new(k.name.as_str()).map_err(|_| RuntimeError::Argument("bad kernel name".into()))?;
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
        if k.num_ctas > 8 {
            // Clusters of 16 CTAs are not portable: the function must opt in.
            // SAFETY: `func` is a valid function handle.
            check(
                unsafe {
                    sys::cuFuncSetAttribute(
                        loaded.func,
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                        1,
                    )
                },
                "allowing a non-portable cluster size",
            )?;
        }
        Ok(loaded)
    }

    /// CTAs per thread-block cluster: 1, or the `num_ctas` the kernel was compiled for.
    pub fn num_ctas(&self) -> u32 {
        self.num_ctas
    }

    /// How many of the kernel's programs (clusters of `num_ctas` CTAs, or single CTAs) the device holds at
    /// once, with the kernel's threads and shared memory (`cuOccupancyMaxActiveClusters`): the grid of a
    /// persistent kernel. For clusters this can be less than the SMs divided by `num_ctas`, since a cluster's
    /// CTAs must share one GPC (on the H200, 30 clusters of 4 CTAs using 208 KiB each, not 33), and programs
    /// launched beyond it wait for a whole program to finish.
    pub fn max_active_clusters(&self) -> Result<u32, RuntimeError> {
        let _current = ContextGuard::enter(&self.ctx)?;
        let mut attrs = vec![cluster_dimension(self.num_ctas)];
        let config = sys::CUlaunchConfig {
            gridDimX: self.num_ctas,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: self.threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: self.shared_bytes,
            hStream: std::ptr::null_mut(),
            attrs: attrs.as_mut_ptr(),
            numAttrs: attrs.len() as u32,
        };
        let mut n: i32 = 0;
        // SAFETY: `func` is a valid function handle of the current context; `config` and its attribute outlive
        // the call, which only reads them.
        check(
            unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, self.func, &config) },
            "cuOccupancyMaxActiveClusters",
        )?;
        Ok(n.max(0) as u32)
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
        let mut maps = tensor_map::encode_args(&self.tensor_maps, |i| params[i] as i64)?;
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
        let scratch = self.prepare(gpu, grid)?;
        self.launch_args(gpu, grid, args, opts, scratch)
    }

    /// Binds the kernel's context to the thread and returns the global scratch of launches over `grid` on
    /// `gpu`'s stream (`None` when the kernel needs none), for [`LoadedKernel::launch_args`].
    pub(crate) fn prepare(&self, gpu: &Gpu, grid: [u32; 3]) -> Result<Option<sys::CUdeviceptr>, RuntimeError> {
        self.ctx.bind_to_thread()?;
        self.scratch.get(self.scratch_bytes, grid, gpu.stream.cu_stream())
    }

    /// [`LoadedKernel::launch_with`] with the global scratch given (allocated by the caller when the kernel
    /// needs one), on the context bound to the thread.
    pub(crate) fn launch_args(
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
        let mut maps = tensor_map::encode_args(&self.tensor_maps, |i| i64::from_le_bytes(storage[i]))?;
        let mut ptrs: Vec<*mut c_void> = storage.iter_mut().map(|s| s.as_mut_ptr() as *mut c_void).collect();
        ptrs.extend(maps.iter_mut().map(|m| m.as_mut_ptr() as *mut c_void));
        ptrs.extend(scratch.as_mut().map(|p| p as *mut u64 as *mut c_void));
        // SAFETY: one pointer per kernel parameter, each to at least as many bytes as the parameter's type
        // (little-endian, so a 4-byte parameter reads the low half); buffers stay alive through `guards`.
        let r = unsafe { self.raw_launch(gpu.stream.cu_stream(), grid, &mut ptrs, opts) };
        drop(guards);
        r
    }

    /// The launch itself: `cuLaunchKernel`, or `cuLaunchKernelEx` when `opts` asks for launch attributes or the
    /// kernel's programs are clusters (`grid` counts programs: the CTA grid is `num_ctas` times wider along x, with
    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` (num_ctas, 1, 1)).
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
        let grid = cta_grid(grid, self.num_ctas)?;
        if self.num_ctas > 1 {
            attrs.push(cluster_dimension(self.num_ctas));
        }
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

/// The CTA grid of `grid` programs of `num_ctas` CTAs each (clusters along x), within CUDA's limit on x.
pub fn cta_grid(grid: [u32; 3], num_ctas: u32) -> Result<[u32; 3], RuntimeError> {
    match grid[0].checked_mul(num_ctas).filter(|&x| x <= i32::MAX as u32) {
        Some(x) => Ok([x, grid[1], grid[2]]),
        None => Err(RuntimeError::Argument(format!(
            "{} programs of {num_ctas} CTAs along x exceed CUDA's grid limit (2^31 - 1 CTAs)",
            grid[0]
        ))),
    }
}

/// The launch attribute of clusters of `num_ctas` CTAs along x.
fn cluster_dimension(num_ctas: u32) -> sys::CUlaunchAttribute {
    // SAFETY: an all-zero launch attribute value is a valid bit pattern for every member of the union.
    let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    value.clusterDim.x = num_ctas;
    value.clusterDim.y = 1;
    value.clusterDim.z = 1;
    sys::CUlaunchAttribute { id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, pad: [0; 4], value }
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

    /// A cluster launch: the cluster dimension attribute (CUDA's id 4) with (num_ctas, 1, 1), and a CTA grid
    /// num_ctas times wider along x, refused past CUDA's limit.
    #[test]
    fn clusters_set_the_cluster_dimension() {
        let a = cluster_dimension(4);
        assert_eq!(a.id, sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
        assert_eq!(a.id as u32, 4, "CUDA's value of the attribute");
        // SAFETY: the member the attribute's id selects, written by `cluster_dimension`.
        let d = unsafe { a.value.clusterDim };
        assert_eq!((d.x, d.y, d.z), (4, 1, 1));
        assert_eq!(cta_grid([3, 2, 1], 4).unwrap(), [12, 2, 1]);
        assert_eq!(cta_grid([3, 2, 1], 1).unwrap(), [3, 2, 1]);
        assert!(cta_grid([1 << 30, 1, 1], 4).is_err());
    }
}
