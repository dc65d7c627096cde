//! One device: its primary context (made current, and the caller's restored, by [`ContextGuard`]), its default
//! stream, and device memory (buffers uploaded from and downloaded to host slices).

use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};

use crate::error::{RuntimeError, check};

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
            return Err(RuntimeError::Driver("no CUDA driver (libcuda) found".into()));
        }
        let ctx = std::panic::catch_unwind(|| CudaContext::new(ordinal))
            .map_err(|_| RuntimeError::Driver("creating a CUDA context panicked".into()))??;
        let stream = ctx.default_stream();
        Ok(Gpu { ctx, stream })
    }

    /// [`Gpu::open`], restoring the context that was current on the calling thread before: for a library
    /// that launches on another program's device (torch's), whose current device must not change under it.
    pub fn on_device(ordinal: usize) -> Result<Gpu, RuntimeError> {
        if !driver_present() {
            return Err(RuntimeError::Driver("no CUDA driver (libcuda) found".into()));
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
            return Err(RuntimeError::Argument(format!(
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
            return Err(RuntimeError::Argument("write: length mismatch".into()));
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
}

/// Untyped device memory.
pub struct DeviceBuffer {
    pub(crate) slice: CudaSlice<u8>,
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
