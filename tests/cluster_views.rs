//! Views (`slice`, `permute`) of shared memory split over the CTAs of a cluster (`tests/kernels/
//! gluon_cluster_views.py`): the interpreter, which runs a cluster in its logical view, reads every element
//! through them; a slice along the dim the CTAs split is refused with its span; codegen refuses views of split
//! buffers at the op (`cluster_local`) until it lowers them.

mod cli_common;

use cli_common::{scratch, tessel};

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

    // Codegen: a clean refusal at the view, for now.
    let kernel = format!("{FILE}::views");
    let (code, _, err) =
        tessel(&["compile", &kernel, "--signature", "*fp32,*fp32", "--num-ctas", "2", "--emit", "ptx"]);
    assert_ne!(code, 0);
    assert!(err.contains("`memdesc_slice` on shared memory spread over the CTAs") && err.contains(":19:"), "{err}");
}

#[test]
fn a_slice_along_the_dim_the_ctas_split_is_refused() {
    let (code, err) = run("row_slice", "out_ptr=zeros:4096:fp32", None);
    assert_ne!(code, 0);
    assert!(err.contains("a slice along a dimension the CTAs of a cluster split"), "{err}");
    assert!(err.contains("smem.slice(0, 32, dim=0)"), "the span: {err}");
}
