//! Thread-block clusters on the GPU (sm_90 or newer): the multi-CTA softmax of `tests/kernels/gluon_clusters.py`
//! as clusters of 2, 4, 8 and 16 CTAs, and the auto-mode kernels of `tests/kernels/auto_clusters.py` spread over 2
//! and 4 CTAs, against the interpreter, on fresh random inputs with the outputs poisoned.
//!
//! `cargo run --release --example cluster_check [-- SEED]`; under compute-sanitizer:
//! `cargo build --release --example cluster_check` then
//! `compute-sanitizer --tool memcheck target/release/examples/cluster_check` (and `--tool racecheck`,
//! `--tool synccheck`). Exits non-zero on the first mismatch.

#[path = "../tests/cluster_gpu/mod.rs"]
mod cluster_gpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seed: u64 = std::env::args().nth(1).map_or(Ok(1), |s| s.parse())?;
    let gpu = tessel::runtime::Gpu::new()?;
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/gluon_clusters.py");
    let source = std::fs::read_to_string(file)?;
    println!("on {}", tessel::target_of(&gpu)?.name());
    let auto_file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/auto_clusters.py");
    let auto_source = std::fs::read_to_string(auto_file)?;
    let both = cluster_gpu::check(&gpu, &source, file, seed)
        .and_then(|gluon| Ok(gluon + &cluster_gpu::auto::check(&gpu, &auto_source, auto_file, seed)?));
    match both {
        Ok(report) => {
            print!("{report}");
            println!("PASS");
            Ok(())
        }
        Err(e) => {
            println!("FAIL: {e}");
            std::process::exit(1);
        }
    }
}
