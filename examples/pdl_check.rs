//! Programmatic dependent launch on the GPU (sm_90 or newer): `LaunchOptions { pdl: true }` (Python's
//! `launch_pdl=True`) lets a kernel start while the one before it on the stream still runs.
//!
//! `cargo run --release --example pdl_check [-- SPIN_MS]`
//!
//! A primary kernel calls `gdc_launch_dependents` at once and then spins on `%globaltimer` for SPIN_MS
//! milliseconds (default 5) before storing the time it ends. The secondary kernel stores the time it starts,
//! calls `gdc_wait`, and stores the time it passes the wait. Launched plainly, the secondary starts after the
//! primary ends; launched with PDL it must start before the primary ends and pass `gdc_wait` only after it.
//! Prints the three times of each launch and exits non-zero when either order is not the expected one.

use tessel::lang::elab::{ArgSpec, Specialization};
use tessel::runtime::{Gpu, KArg, LaunchOptions};
use tessel::tile::ScalarType::I64;

const SOURCE: &str = r#"
import triton
import triton.language as tl


@triton.jit
def primary(t_ptr, spin_ns):
    tl.extra.cuda.gdc_launch_dependents()
    start = tl.extra.cuda.globaltimer()
    now = start
    while now - start < spin_ns:
        now = tl.extra.cuda.globaltimer()
    tl.store(t_ptr, now)


@triton.jit
def secondary(t_ptr):
    started = tl.extra.cuda.globaltimer()
    tl.extra.cuda.gdc_wait()
    waited = tl.extra.cuda.globaltimer()
    tl.store(t_ptr + 1, started)
    tl.store(t_ptr + 2, waited)
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spin_ms: i64 = std::env::args().nth(1).map_or(Ok(5), |s| s.parse())?;
    let gpu = Gpu::new()?;
    let ptr = ArgSpec::Pointer(I64, true);
    let primary =
        tessel::load(&gpu, SOURCE, "primary", &Specialization::new(vec![ptr.clone(), ArgSpec::Int(I64, false)]))?;
    let secondary = tessel::load(&gpu, SOURCE, "secondary", &Specialization::new(vec![ptr]))?;
    println!("on {}", tessel::target_of(&gpu)?.name());
    let mut failures = 0;
    for pdl in [false, true] {
        let times = gpu.upload_slice(&[0i64; 3])?;
        // Warm both kernels up first (module loading and first-launch costs stay out of the timed pair).
        primary.launch(&gpu, [1, 1, 1], &[(&times).into(), KArg::I64(0)])?;
        secondary.launch(&gpu, [1, 1, 1], &[(&times).into()])?;
        gpu.synchronize()?;
        primary.launch(&gpu, [1, 1, 1], &[(&times).into(), KArg::I64(spin_ms * 1_000_000)])?;
        secondary.launch_with(&gpu, [1, 1, 1], &[(&times).into()], LaunchOptions { pdl })?;
        gpu.synchronize()?;
        let t = gpu.download_vec::<i64>(&times)?;
        let (primary_end, secondary_start, secondary_waited) = (t[0], t[1], t[2]);
        let overlap = secondary_start < primary_end;
        let waited = secondary_waited >= primary_end;
        println!(
            "launch_pdl={pdl}: the secondary started {:+.3} ms after the primary ended, passed gdc_wait {:+.3} ms \
             after it",
            (secondary_start - primary_end) as f64 / 1e6,
            (secondary_waited - primary_end) as f64 / 1e6
        );
        let ok = waited && overlap == pdl;
        if !ok {
            failures += 1;
            println!(
                "  FAIL: expected the secondary to start {} the primary ended and to pass gdc_wait after",
                if pdl { "before" } else { "after" }
            );
        }
    }
    if failures > 0 {
        std::process::exit(1);
    }
    println!("PASS");
    Ok(())
}
