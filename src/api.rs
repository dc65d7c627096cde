//! The library entry points: compile a kernel from source, run it in the interpreter, or compile it to PTX and
//! load it on the GPU through the disk cache.
//!
//! In the interpreter:
//!
//! ```
//! use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
//! use tessel::interp::{Arg, memory::Memory};
//! use tessel::tile::ScalarType::F32;
//!
//! let source = std::fs::read_to_string("examples/vector_add.py").unwrap();
//! let p = ArgSpec::Pointer(F32, true);
//! let spec = Specialization::new(vec![p.clone(), p.clone(), p, ArgSpec::Int(tessel::tile::ScalarType::I32, false),
//!     ArgSpec::Constexpr(ConstValue::Int(256))]);
//! let mut mem = Memory::new();
//! let (x, y, out) = (mem.alloc_from("x", F32, &[1.0; 1000]), mem.alloc_from("y", F32, &[2.0; 1000]), mem.alloc("out", F32, 1000));
//! let args = [Arg::Buffer(x), Arg::Buffer(y), Arg::Buffer(out), Arg::Int(1000)];
//! tessel::interpret(&source, "add_kernel", &spec, &args, [4, 1, 1], &mut mem).unwrap();
//! assert_eq!(mem.read_f64(out), vec![3.0; 1000]);
//! ```
//!
//! On the GPU, three lines: compile and load, allocate, launch.
//!
//! ```no_run
//! # use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
//! # use tessel::tile::ScalarType::{F32, I32};
//! use tessel::runtime::{Gpu, KArg};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let source = std::fs::read_to_string("examples/vector_add.py")?;
//! # let p = ArgSpec::Pointer(F32, true);
//! # let spec = Specialization::new(vec![p.clone(), p.clone(), p, ArgSpec::Int(I32, false),
//! #     ArgSpec::Constexpr(ConstValue::Int(1024))]);
//! # let (n, xs, ys) = (4096usize, vec![1.0f32; 4096], vec![2.0f32; 4096]);
//! let gpu = Gpu::new()?;
//! let add = tessel::load(&gpu, &source, "add_kernel", &spec)?;
//! let (x, y, out) = (gpu.upload_slice(&xs)?, gpu.upload_slice(&ys)?, gpu.upload_slice(&vec![0f32; n])?);
//! add.launch(&gpu, [n.div_ceil(1024) as u32, 1, 1], &[(&x).into(), (&y).into(), (&out).into(), KArg::I32(n as i32)])?;
//! assert_eq!(gpu.download_vec::<f32>(&out)?, vec![3.0; n]);
//! # Ok(()) }
//! ```

use tessel_codegen::Kernel;
use tessel_lang::elab::Specialization;
use tessel_lang::elab::modules::ModuleSet;
use tessel_runtime::cache::DiskCache;
use tessel_runtime::{Gpu, LoadedKernel};
use tessel_tile::{Func, Target};

use crate::error::Error;
use crate::pipeline::{self, CacheUse, KernelSource, Output, Stage, Timings};
use tessel_interp::Arg;
use tessel_interp::memory::Memory;

/// Parses `source`, elaborates `kernel` for `spec` and canonicalizes the result: the tile IR.
pub fn compile(source: &str, kernel: &str, spec: &Specialization) -> Result<Func, Error> {
    let ks = KernelSource { file: "<source>", source, kernel, spec, module: None };
    match pipeline::run(&ks, Target::Sm90a, Stage::Tile, None, &mut Timings::default())? {
        Output::Tile(f) => Ok(f),
        _ => unreachable!("the pipeline stops at the stage asked for"),
    }
}

/// Compiles `kernel` and runs it in the reference interpreter over `grid`; `args` are the values of the
/// non-constexpr parameters, in order, where a tensor-descriptor parameter of rank r takes `1 + 2r` values
/// (base buffer, shape, strides: see `ArgSpec::ir_args`). Returns the lines `device_print` printed.
pub fn interpret(
    source: &str,
    kernel: &str,
    spec: &Specialization,
    args: &[Arg],
    grid: [u32; 3],
    mem: &mut Memory,
) -> Result<Vec<String>, Error> {
    let func = compile(source, kernel, spec)?;
    // Programs run on every core when none can observe another; the result is the sequential one either way.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let limits = tessel_interp::Limits { threads, ..Default::default() };
    tessel_interp::run_with_limits(&func, args, grid, mem, limits).map_err(Error::Run)
}

/// Compiles `kernel` to PTX for `target` (elaborate, assign layouts, generate code), through the disk cache of
/// [`DiskCache::from_env`].
pub fn jit(source: &str, kernel: &str, spec: &Specialization, target: Target) -> Result<Kernel, Error> {
    Jit::new(DiskCache::from_env()).ptx(
        &KernelSource { file: "<source>", source, kernel, spec, module: None },
        target,
        None,
    )
}

/// Compiles `kernel` for the GPU `gpu` and loads it, through the disk cache (a hit skips compilation and the
/// driver's JIT).
pub fn load(gpu: &Gpu, source: &str, kernel: &str, spec: &Specialization) -> Result<LoadedKernel, Error> {
    Jit::new(DiskCache::from_env()).load(
        gpu,
        &KernelSource { file: "<source>", source, kernel, spec, module: None },
        None,
    )
}

/// The target the code generator uses for `gpu`: sm_90a on Hopper, sm_100a on Blackwell datacenter parts,
/// else sm_80 PTX (which the driver JIT-compiles for any newer GPU).
pub fn target_of(gpu: &Gpu) -> Result<Target, Error> {
    let (major, minor) = gpu.ctx.compute_capability().map_err(|e| Error::Gpu(e.into()))?;
    Target::for_compute_capability(major as u32, minor as u32).ok_or(Error::UnsupportedDevice { major, minor })
}

impl KernelSource<'_> {
    /// The cache key of this specialization compiled for `target` (the cache adds the compiler's identity).
    pub fn cache_key(&self, target: Target) -> String {
        self.cache_key_in(target, None)
    }

    /// [`KernelSource::cache_key`] of the kernel compiled with a module set: the other modules' sources (and
    /// host bindings) are part of the key, so editing a helper module compiles again.
    pub fn cache_key_in(&self, target: Target, modules: Option<&ModuleSet>) -> String {
        let spec = format!("{:?}", self.spec);
        let parts = [self.file, self.source, self.kernel, &spec, target.name()];
        match modules {
            None => DiskCache::key(&parts.map(str::as_bytes)),
            Some(set) => {
                let set = set.fingerprint();
                let mut all = parts.map(str::as_bytes).to_vec();
                all.push(set.as_bytes());
                DiskCache::key(&all)
            }
        }
    }
}

/// The compile driver: source → tile IR → layout IR → PTX → loaded module, consulting and filling a disk
/// cache, and timing each stage.
pub struct Jit {
    pub cache: Option<DiskCache>,
    pub timings: Timings,
    /// Compile for this target instead of the device's own (e.g. sm_80 PTX, which the driver JIT-compiles for
    /// newer GPUs, to run the `mma.sync` path on a Hopper part).
    pub target: Option<Target>,
    /// The module set the kernel's module comes with (see [`pipeline::run_in`]); part of the cache key.
    pub modules: Option<std::sync::Arc<ModuleSet>>,
}

impl Jit {
    pub fn new(cache: Option<DiskCache>) -> Jit {
        Jit { cache, timings: Timings::default(), target: None, modules: None }
    }

    /// The PTX of `ks` for `target`: from the cache, or compiled (from `tile`, its already elaborated tile IR,
    /// when the caller has it) and stored.
    pub fn ptx(&mut self, ks: &KernelSource, target: Target, tile: Option<&Func>) -> Result<Kernel, Error> {
        let key = ks.cache_key_in(target, self.modules.as_deref());
        if let Some(cache) = &self.cache
            && let Some(k) = self.timings.time("cache lookup", || cache.get(&key))
        {
            self.timings.cache = CacheUse::Ptx;
            return Ok(k);
        }
        let modules = self.modules.clone();
        let Output::Ptx { kernel, .. } =
            pipeline::run_in(ks, modules.as_deref(), target, Stage::Ptx, tile, &mut self.timings)?
        else {
            unreachable!("the pipeline stops at the stage asked for")
        };
        if let Some(cache) = &self.cache {
            self.timings.cache = CacheUse::Miss;
            // A cache that cannot be written only costs the next run its compile time.
            let _ = self.timings.time("cache store", || cache.put(&key, &kernel));
        }
        Ok(kernel)
    }

    /// `ks` compiled for `gpu` and loaded: the cached cubin when there is one for this device and driver,
    /// else the PTX (cached or compiled) assembled by `ptxas` when there is one (its cubin is then cached) or
    /// by the driver's JIT (see [`Gpu::jit`]).
    pub fn load(&mut self, gpu: &Gpu, ks: &KernelSource, tile: Option<&Func>) -> Result<LoadedKernel, Error> {
        let gpu_err = Error::Gpu;
        let native = target_of(gpu)?;
        let target = match self.target {
            // An `a` target's PTX runs only on its own architecture.
            Some(t) if t == native || t == Target::Sm80 => t,
            Some(t) => return Err(Error::WrongTarget { target: t, device: native }),
            None => native,
        };
        let kernel = self.ptx(ks, target, tile)?;
        let Some(cache) = self.cache.clone() else {
            return self.timings.time("assemble + load", || gpu.load(&kernel)).map_err(gpu_err);
        };
        let (key, device) = (ks.cache_key_in(target, self.modules.as_deref()), gpu.device_tag().map_err(gpu_err)?);
        if let Some(cubin) = cache.get_cubin(&key, &device) {
            let loaded = self.timings.time("module load (cubin)", || gpu.load_cubin(&kernel, &cubin));
            if let Ok(loaded) = loaded {
                self.timings.cache = CacheUse::Cubin;
                return Ok(loaded);
            }
        }
        let stage = if tessel_runtime::find_ptxas().is_some() { "ptxas + load" } else { "driver JIT + load" };
        let (loaded, cubin) = self.timings.time(stage, || gpu.jit(&kernel)).map_err(gpu_err)?;
        if let Some(cubin) = cubin {
            let _ = cache.put_cubin(&key, &device, &cubin);
        }
        Ok(loaded)
    }
}
