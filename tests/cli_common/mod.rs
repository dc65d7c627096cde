//! Running the built `tessel` binary from the CLI tests.

use std::process::Command;

/// The buffers and size of `examples/vector_add.py::add_kernel` on 1000 elements, as `--arg` pairs.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub const VECTOR_ADD_ARGS: [&str; 8] = [
    "--arg",
    "x_ptr=rand:1000",
    "--arg",
    "y_ptr=rand:1000",
    "--arg",
    "output_ptr=zeros:1000",
    "--arg",
    "n_elements=1000",
];

/// `tessel ARGS...` in the repository root: (exit status, stdout, stderr).
pub fn tessel(args: &[&str]) -> (i32, String, String) {
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

/// A fresh directory under the system's temporary one for a test's files, named by `name` and this process.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tessel-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
