//! Views (`slice`, `permute`) of shared memory split over the CTAs of a cluster (`tests/kernels/
//! gluon_cluster_views.py`): the interpreter, which runs a cluster in its logical view, reads every element
//! through them; a slice along the dim the CTAs split is refused with its span; codegen lowers the column slices
//! and the transpose (each CTA the same view of its own part, `cluster_local`), and on the PTX simulator their
//! PTX writes every element the interpreter does. The same for the buffers of a multi-buffered allocation the
//! CTAs split (`.index(i)` of a `[2, 256]` buffer split along its values).

mod cli_common;
mod common;
mod sim_common;

use cli_common::{scratch, tessel};
use sim_common::{RunOptions, V, run_on_ctas};
use tessel::lang::elab::ArgSpec;
use tessel::tile::ScalarType::F32;
use tessel::tile::Target;

const FILE: &str = "tests/kernels/gluon_cluster_views.py";

/// `tessel run --interpret` of `kernel` on 2 CTAs over 4096 random inputs and `out` (`fill:nan:8192`, ...),
/// saving the buffers into `dir` when one is given: (exit status, stderr).
fn run(kernel: &str, out: &str, dir: Option<&std::path::Path>) -> (i32, String) {
    let kernel = format!("{FILE}::{kernel}");
    let mut args =
        vec!["run", "--interpret", &kernel, "--num-ctas", "2", "--arg", "x_ptr=randn:4096:fp32", "--arg", out];
    if let Some(d) = dir {
        args.extend(["--out-dir", d.to_str().unwrap()]);
    }
    let (code, _, err) = tessel(&args);
    (code, err)
}

#[test]
fn column_slices_and_the_transpose_of_a_split_buffer_read_every_element() {
    let dir = scratch("cluster-views-ok");
    let (code, err) = run("views", "out_ptr=fill:nan:8192:fp32", Some(&dir));
    assert_eq!(code, 0, "{err}");
    let read = |f: &str| tessel::npy::read(&std::fs::read(dir.join(f)).unwrap()).unwrap().to_f64();
    let (x, out) = (read("x_ptr.npy"), read("out_ptr.npy"));
    for r in 0..64 {
        for c in 0..64 {
            assert_eq!(out[r * 64 + c], x[r * 64 + c], "slices: [{r}, {c}]");
            assert_eq!(out[4096 + r * 64 + c], x[c * 64 + r], "transpose: [{r}, {c}]");
        }
    }
    std::fs::remove_dir_all(&dir).ok();

    // Codegen: each CTA slices and transposes its own part; the simulator against the interpreter.
    let src = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE)).unwrap();
    let x = tessel_math::testing::Rng::new(11).vec(4096);
    let vals = [V::Buf(F32, x), V::Out(F32, 8192)];
    let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 4, num_stages: 1, poison: true };
    let spec = vec![ArgSpec::Pointer(F32, true), ArgSpec::Pointer(F32, true)];
    let outs = run_on_ctas(&src, "views", spec, &opts, 2, &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    assert!(interp.iter().all(|v| v.is_finite()), "the interpreter wrote every element");
    assert_eq!(sim, interp, "the simulated PTX against the interpreter");
}

#[test]
fn a_slice_along_the_dim_the_ctas_split_is_refused() {
    let (code, err) = run("row_slice", "out_ptr=zeros:4096:fp32", None);
    assert_ne!(code, 0);
    assert!(err.contains("a slice along a dimension the CTAs of a cluster split"), "{err}");
    assert!(err.contains("smem.slice(0, 32, dim=0)"), "the span: {err}");
}

/// `.index(i)` of a `[2, 256]` allocation whose layout (of rank 2, the buffers' dim included) the CTAs split along
/// the values: each buffer keeps the split, each CTA its 128 values of both. (It was refused as a layout that
/// "does not hold its buffers one after another": the buffer's layout was taken from the offsets alone, which hold
/// one CTA's half.) The interpreter reads back every value, and the simulated PTX writes what it does.
#[test]
fn the_buffers_of_a_split_allocation_are_each_split_alike() {
    let dir = scratch("cluster-views-buffers");
    let (code, err) = run("buffers", "out_ptr=fill:nan:8192:fp32", Some(&dir));
    assert_eq!(code, 0, "{err}");
    let read = |f: &str| tessel::npy::read(&std::fs::read(dir.join(f)).unwrap()).unwrap().to_f64();
    let (x, out) = (read("x_ptr.npy"), read("out_ptr.npy"));
    for i in 0..2 {
        for r in 0..256 {
            assert_eq!(out[(1 - i) * 256 + r], x[i * 256 + r], "buffer {i}, value {r}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();

    let src = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE)).unwrap();
    let x = tessel_math::testing::Rng::new(12).vec(4096);
    let vals = [V::Buf(F32, x), V::Out(F32, 512)];
    let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 4, num_stages: 1, poison: true };
    let spec = vec![ArgSpec::Pointer(F32, true), ArgSpec::Pointer(F32, true)];
    let outs = run_on_ctas(&src, "buffers", spec, &opts, 2, &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    assert!(interp.iter().all(|v| v.is_finite()), "the interpreter wrote every element");
    assert_eq!(sim, interp, "the simulated PTX against the interpreter");
}
