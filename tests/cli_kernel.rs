//! `tessel check`, `compile` and `run` on the example kernels, through the built binary.

use std::process::Command;

fn tessel(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tessel"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the tessel binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn check_lists_kernels_and_parameters() {
    let (code, out, err) = tessel(&["check", "examples/vector_add.py"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: constexpr)"), "{out}");
}

#[test]
fn compile_emits_tile_ir_that_parses_back() {
    let (code, out, err) = tessel(&[
        "compile",
        "examples/vector_add.py::add_kernel",
        "--signature",
        "*fp32,*fp32,*fp32,i32",
        "--const",
        "BLOCK_SIZE=1024",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("arange {start = 0, end = 1024} : tensor<1024xi32>"), "{out}");
    let f = tessel_tile::parse::parse_func(&out).expect("the printed IR parses");
    assert_eq!(tessel_tile::print::print_func(&f), out);
    let (code, out, _) = tessel(&["compile", "examples/vector_add.py::add_kernel", "--emit", "ast"]);
    assert_eq!(code, 0);
    assert!(out.contains("FunctionDef add_kernel"), "{out}");
}

#[test]
fn run_computes_and_saves_buffers() {
    let dir = std::env::temp_dir().join(format!("tessel-cli-run-{}", std::process::id()));
    let (code, out, err) = tessel(&[
        "run",
        "examples/vector_add.py::add_kernel",
        "--const",
        "BLOCK_SIZE=256",
        "--grid",
        "4",
        "--arg",
        "x_ptr=arange:1000",
        "--arg",
        "y_ptr=fill:0.5:1000",
        "--arg",
        "output_ptr=fill:-1:1001",
        "--arg",
        "n_elements=1000",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("interpreter"), "the run says where it ran: {err}");
    assert!(out.contains("output_ptr: f32[1001] = [0.5, 1.5, 2.5, 3.5"), "{out}");
    let saved = tessel::npy::read(&std::fs::read(dir.join("output_ptr.npy")).unwrap()).unwrap();
    let want: Vec<f64> = (0..1000).map(|i| i as f64 + 0.5).chain([-1.0]).collect();
    assert_eq!(saved.values, want, "every element computed, the one past n untouched");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn mistakes_are_reported_with_their_source() {
    let (code, _, err) =
        tessel(&["run", "examples/vector_add.py::add_kernel", "--grid", "1", "--arg", "x_ptr=rand:10"]);
    assert_eq!(code, 2);
    assert!(err.contains("no value for"), "{err}");
    let (code, _, err) = tessel(&["compile", "examples/vector_add.py::nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("has no kernel `nope`; its kernels: add_kernel"), "{err}");
    let (code, _, err) = tessel(&[
        "compile",
        "examples/vector_add.py::add_kernel",
        "--signature",
        "*fp32,*fp32,*fp32,i32",
        "--const",
        "BLOCK_SIZE=1000",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("power of two") && err.contains("vector_add.py"), "a diagnostic against the source: {err}");
}
