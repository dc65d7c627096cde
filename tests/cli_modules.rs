//! `--path`: `tessel check|compile|run` find the modules a kernel's file imports as Python finds them on
//! `sys.path` (packages, relative imports), and an import that is not found is an error only where a kernel
//! uses it, naming `--path`.

mod cli_common;

use std::path::{Path, PathBuf};

use cli_common::tessel;

const UTILS: &str = "\
import operator
import triton
import triton.language as tl

SCALE: tl.constexpr = tl.constexpr(3.0)


def compare_version(package, op, version):
    return True


if compare_version(\"triton\", operator.ge, \"3.0.0\"):
    try:
        from triton.language.extra.libdevice import rsqrt
    except ModuleNotFoundError:
        from triton.language.extra.cuda.libdevice import rsqrt
else:
    from triton.language.math import rsqrt


@triton.jit
def helper(x):
    return rsqrt(x) * SCALE
";

const KERNEL: &str = "\
import triton
import triton.language as tl
from ..utils import helper as h
from .. import utils
import cli_pkg.utils as pu
from cli_pkg.missing import nothing_here


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, h(x) + utils.SCALE + pu.helper(x), mask=mask)


@triton.jit
def uses_missing(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, nothing_here(tl.load(x_ptr + offs)))
";

/// A package `cli_pkg` (with `utils` and `ops/kern.py`) under a fresh directory; (the directory, the kernel file).
fn package(tag: &str) -> (PathBuf, String) {
    let root = std::env::temp_dir().join(format!("tessel-cli-modules-{tag}-{}", std::process::id()));
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("cli_pkg/__init__.py", "");
    write("cli_pkg/utils.py", UTILS);
    write("cli_pkg/ops/__init__.py", "");
    write("cli_pkg/ops/kern.py", KERNEL);
    let kern = root.join("cli_pkg/ops/kern.py").display().to_string();
    (root, kern)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn run_finds_a_package_and_its_relative_imports_under_path() {
    let (root, kern) = package("run");
    let target = format!("{kern}::k");
    let (code, out, err) = tessel(&[
        "run",
        &target,
        "--path",
        s(&root),
        "--const",
        "BLOCK=8",
        "--grid",
        "1",
        "--arg",
        "x_ptr=fill:4:8",
        "--arg",
        "y_ptr=fill:-1:8",
        "--arg",
        "n=8",
    ]);
    assert_eq!(code, 0, "{err}");
    // rsqrt(4) * 3 + 3 + rsqrt(4) * 3
    assert!(out.contains("y_ptr: f32[8] = [6, 6, 6"), "{out}");
    let (code, out, err) = tessel(&["check", &kern, "--path", s(&root)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Triton kernel k(x_ptr, y_ptr, n, BLOCK: constexpr)"), "{out}");
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn imports_not_found_are_errors_where_a_kernel_uses_them() {
    let (root, kern) = package("missing");
    // The module is not found: an error at the use, naming --path.
    let target = format!("{kern}::uses_missing");
    let (code, _, err) =
        tessel(&["compile", &target, "--path", s(&root), "--signature", "*fp32", "--const", "BLOCK=8"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`cli_pkg.missing.nothing_here` cannot be used in a kernel"), "{err}");
    assert!(err.contains("kern.py:20:28"), "{err}");
    assert!(err.contains("--path"), "{err}");
    // Without --path the file is a script: its relative imports cannot be resolved.
    let target = format!("{kern}::k");
    let (code, _, err) = tessel(&["compile", &target, "--signature", "*fp32,*fp32,i32", "--const", "BLOCK=8"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`h` comes from `from ..utils import helper`, a relative import that cannot be resolved"),
        "{err}"
    );
    // A --path that is not a directory.
    let (code, _, err) = tessel(&["check", &kern, "--path", "/nonexistent/dir"]);
    assert_eq!(code, 2);
    assert!(err.contains("--path /nonexistent/dir: not a directory"), "{err}");
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn help_describes_path() {
    for cmd in ["check", "compile", "run"] {
        let (code, out, _) = tessel(&[cmd, "--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("--path <DIR>"), "{cmd}: {out}");
    }
}

#[test]
fn the_cache_key_holds_the_other_modules_sources() {
    use tessel::lang::elab::modules::{ModuleInfo, ModuleSet, SourceModule};
    let spec = tessel::lang::elab::Specialization::new(vec![]);
    let ks = tessel::KernelSource { file: "k.py", source: KERNEL, kernel: "k", spec: &spec, module: None };
    let set = |helper: &str| ModuleSet {
        main: ModuleInfo { name: "cli_pkg.ops.kern".into(), is_package: false, bindings: None },
        modules: vec![SourceModule::new(
            ModuleInfo { name: "cli_pkg.utils".into(), is_package: false, bindings: None },
            "cli_pkg/utils.py".into(),
            helper.into(),
        )],
    };
    let target = tessel::tile::Target::Sm90a;
    let (a, b) = (set(UTILS), set(&UTILS.replace("3.0", "4.0")));
    assert_eq!(ks.cache_key_in(target, Some(&a)), ks.cache_key_in(target, Some(&set(UTILS))));
    assert_ne!(ks.cache_key_in(target, Some(&a)), ks.cache_key_in(target, Some(&b)), "editing a helper recompiles");
    assert_ne!(ks.cache_key_in(target, Some(&a)), ks.cache_key(target));
}

/// A module on the path that is not UTF-8 is found and reported, inside it, where a kernel uses it.
#[test]
fn a_module_that_is_not_utf8_is_reported_where_it_is_used() {
    let root = std::env::temp_dir().join(format!("tessel-cli-modules-latin1-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("latin1_helpers.py"), b"import triton\n\n@triton.jit\ndef f(x):\n    return x  # \xb0C\n")
        .unwrap();
    let kern = root.join("kern.py");
    let src = "import triton\nimport triton.language as tl\nfrom latin1_helpers import f\n\n@triton.jit\ndef k(p):\n    \
               tl.store(p, f(tl.load(p)))\n";
    std::fs::write(&kern, src).unwrap();
    let target = format!("{}::k", kern.display());
    let (code, _, err) = tessel(&["compile", &target, "--signature", "*fp32"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("latin1_helpers.py:5:17: byte 0xb0 (offset 53) is not valid UTF-8"), "{err}");
    assert!(err.contains("the kernel uses the module `latin1_helpers`, which does not parse"), "{err}");
    std::fs::remove_dir_all(root).ok();
}
