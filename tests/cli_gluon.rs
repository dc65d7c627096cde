//! Gluon kernels through the `tessel` binary: a deadlock the interpreter names instead of hanging, sibling modules
//! loaded by `importlib.import_module`, constants written as Python (layouts, tuples).

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
fn a_wrong_phase_is_reported_as_a_deadlock_naming_partitions_barriers_and_phases() {
    let (code, _, err) = tessel(&[
        "run",
        "--interpret",
        "examples/gluon_deadlock.py::pipeline_kernel",
        "--const",
        "TILES=4",
        "--const",
        "STAGES=2",
        "--arg",
        "x_ptr=rand:256x64:fp16",
        "--arg",
        "y_ptr=zeros:256x64:fp16",
    ]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("deadlock: every partition still running waits on an mbarrier"), "{err}");
    assert!(err.contains("the default partition waits"), "{err}");
    assert!(err.contains("for phase parity 0 of mbarrier `ready[0]`"), "{err}");
    assert!(err.contains("worker partition 0 waits"), "{err}");
    assert!(err.contains("for phase parity 0 of mbarrier `empty[0]`"), "{err}");
    assert!(err.contains("still lacks 1 arrival(s)"), "{err}");
    assert!(err.contains("examples/gluon_deadlock.py:"), "{err}");
}

/// A directory of its own per test, holding `files`.
fn scratch(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tessel-cli-gluon-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    dir
}

const HELPERS: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

SCALE: gl.constexpr = 3

@gluon.constexpr_function
def lanes(num_warps):
    return 32 * num_warps

@gluon.jit
def scaled(x):
    return x * SCALE
"#;

const MAIN: &str = r#"
import importlib
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

h = importlib.import_module("01-helpers")

@gluon.jit
def k(X, Y, layout: gl.constexpr):
    offs = gl.arange(0, h.lanes(4), layout=layout)
    gl.store(Y + offs, h.scaled(gl.load(X + offs)))
"#;

#[test]
fn sibling_modules_load_from_the_kernels_directory() {
    let dir = scratch("siblings", &[("01-helpers.py", HELPERS), ("main.py", MAIN)]);
    let target = format!("{}::k", dir.join("main.py").display());
    let run = |layout: &str| {
        tessel(&[
            "run",
            "--interpret",
            &target,
            "--const",
            layout,
            "--arg",
            "X=arange:128:i32",
            "--arg",
            "Y=zeros:128:i32",
            "--show",
            "3",
        ])
    };
    // The layout as the module spells it, and bare as `tessel layout` does.
    for layout in ["layout=gl.BlockedLayout([1], [32], [4], [0])", "layout=BlockedLayout([1], [32], [4], [0])"] {
        let (code, out, err) = run(layout);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("Y: i32[128] = [0, 3, 6, ...]"), "{out}");
    }
    // An error inside the sibling points into the sibling's file.
    std::fs::write(dir.join("01-helpers.py"), HELPERS.replace("x * SCALE", "x * SCALEE")).unwrap();
    let (code, _, err) = run("layout=gl.BlockedLayout([1], [32], [4], [0])");
    assert_ne!(code, 0);
    assert!(err.contains("name `SCALEE` is not defined"), "{err}");
    assert!(err.contains("01-helpers.py:13:"), "{err}");
    // A sibling that is not there is reported at the import.
    std::fs::remove_file(dir.join("01-helpers.py")).unwrap();
    let (code, _, err) = run("layout=gl.BlockedLayout([1], [32], [4], [0])");
    assert_ne!(code, 0);
    assert!(err.contains("cannot read the module `01-helpers`"), "{err}");
    assert!(err.contains("main.py:6:"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
