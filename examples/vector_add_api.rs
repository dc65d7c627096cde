//! The Rust API end to end: `examples/vector_add.py` compiled (through the disk cache), loaded, launched and
//! checked against the host, on the GPU when there is one and in the interpreter otherwise.
//!
//! `cargo run --release --example vector_add_api [-- N]`
//!
//! Prints where it ran, how the kernel was obtained (compiled, PTX or cubin from the cache) and the time each
//! stage took; exits non-zero when any element differs from `x + y` computed on the host.

use tessel::interp::{Arg, memory::Memory};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::runtime::cache::DiskCache;
use tessel::runtime::{Gpu, KArg};
use tessel::tile::ScalarType::{F32, I32};
use tessel::{Jit, KernelSource};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(1_000_003), |s| s.parse())?;
    let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/vector_add.py"))?;
    let ptr = ArgSpec::Pointer(F32, true);
    let block = 1024;
    let spec = Specialization::new(vec![
        ptr.clone(),
        ptr.clone(),
        ptr,
        ArgSpec::Int(I32, n % 16 == 0),
        ArgSpec::Constexpr(ConstValue::Int(block)),
    ]);
    // Inputs whose sums are exact in f32, so the comparison can be exact.
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let grid = [n.div_ceil(block as usize) as u32, 1, 1];

    let got: Vec<f32> = match Gpu::new() {
        Ok(gpu) => {
            // What `tessel::load` does, with the timings kept to print.
            let mut jit = Jit::new(DiskCache::from_env());
            let add = jit.load(
                &gpu,
                &KernelSource {
                    file: "vector_add.py",
                    source: &source,
                    kernel: "add_kernel",
                    spec: &spec,
                    module: None,
                },
                None,
            )?;
            print!("on the GPU ({}):\n{}", tessel::target_of(&gpu)?.name(), jit.timings);
            let (x, y, out) = (gpu.upload_slice(&xs)?, gpu.upload_slice(&ys)?, gpu.upload_slice(&vec![f32::NAN; n])?);
            add.launch(&gpu, grid, &[(&x).into(), (&y).into(), (&out).into(), KArg::I32(n as i32)])?;
            gpu.download_vec(&out)?
        }
        Err(e) => {
            println!("no GPU ({e}): running in the interpreter");
            let mut mem = Memory::new();
            let to64 = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
            let (x, y) = (mem.alloc_from("x", F32, &to64(&xs)), mem.alloc_from("y", F32, &to64(&ys)));
            let out = mem.alloc_from("out", F32, &vec![f64::NAN; n]);
            let args = [Arg::Buffer(x), Arg::Buffer(y), Arg::Buffer(out), Arg::Int(n as i64)];
            tessel::interpret(&source, "add_kernel", &spec, &args, grid, &mut mem)?;
            mem.read_f64(out).into_iter().map(|v| v as f32).collect()
        }
    };
    let wrong = (0..n).filter(|&i| got[i] != xs[i] + ys[i]).count();
    println!("n = {n}: {wrong} wrong elements");
    if wrong > 0 {
        return Err(format!("{wrong} of {n} elements differ from x + y").into());
    }
    Ok(())
}
