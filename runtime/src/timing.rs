//! Timing a launch with CUDA events, the way the benchmarks (METHOD.md) and `tessel bench` measure.

use cudarc::driver::sys;

use crate::device::Gpu;
use crate::error::RuntimeError;
use crate::launch::{KArg, LaunchOptions, LoadedKernel};

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
        let scratch = self.prepare(gpu, grid)?;
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
}
