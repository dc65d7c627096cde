//! Shared helpers of the gluon tests: elaborate a kernel with the gluon builtins registered, check the IR round
//! trip, run it in the interpreter on random inputs, and compare with references.
#![allow(dead_code)]

use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, ConstValue, Elaborated, Specialization, elaborate_with};
use tessel_tile::{Func, ScalarType};

pub const HEADER: &str = "\
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier
from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma, warpgroup_mma_init, warpgroup_mma_wait
";

pub fn example_source(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, true)
}

pub fn int() -> ArgSpec {
    ArgSpec::Int(ScalarType::I32, false)
}

pub fn cint(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

#[allow(dead_code)]
pub fn cbool(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

fn try_elab(src: &str, kernel: &str, spec: &Specialization) -> Result<Elaborated, String> {
    let module = tessel_lang::parse_module(src).unwrap_or_else(|d| panic!("{}", d.render("test.py", src)));
    elaborate_with(&module, kernel, spec, tessel_gluon::registry()).map_err(|d| d.render("test.py", src))
}

/// Elaborates `kernel` of `src` (checked: verifier and textual round trip), panicking with the diagnostic.
pub fn elab(src: &str, kernel: &str, args: Vec<ArgSpec>) -> Func {
    let f =
        try_elab(src, kernel, &Specialization::new(args)).unwrap_or_else(|d| panic!("elaboration failed:\n{d}")).func;
    check_ir(&f);
    f
}

/// The rendered diagnostic of a failing elaboration.
pub fn elab_error(src: &str, kernel: &str, args: Vec<ArgSpec>) -> String {
    elab_error_with(src, kernel, &Specialization::new(args))
}

/// [`elab`] with a whole specialization (a launch configuration: `num_ctas`, ...).
pub fn elab_with(src: &str, kernel: &str, spec: &Specialization) -> Func {
    let f = try_elab(src, kernel, spec).unwrap_or_else(|d| panic!("elaboration failed:\n{d}")).func;
    check_ir(&f);
    f
}

/// [`elab_error`] with a whole specialization.
pub fn elab_error_with(src: &str, kernel: &str, spec: &Specialization) -> String {
    match try_elab(src, kernel, spec) {
        Ok(e) => panic!("expected an error, got\n{}", e.func),
        Err(d) => d,
    }
}

#[allow(unused_imports)]
pub use tessel_interp::testing::poisoned;
#[allow(unused_imports)]
pub use tessel_math::testing::Rng;
#[allow(unused_imports)]
pub use tessel_tile::testing::{check_ir, rel_err, rounded};

pub fn run(f: &Func, args: &[Arg], grid: [u32; 3], mem: &mut Memory) -> Vec<String> {
    tessel_interp::testing::interpret(f, args, grid, mem)
}

/// The interpreter's error for a program it must refuse.
pub fn run_error(f: &Func, args: &[Arg], mem: &mut Memory) -> String {
    match tessel_interp::run(f, args, [1, 1, 1], mem) {
        Ok(_) => panic!("expected the interpreter to refuse\n{f}"),
        Err(e) => e.to_string(),
    }
}

pub fn assert_close(what: &str, out: &[f64], reference: &[f64], tol: f64) -> f64 {
    let e = rel_err(out, reference);
    eprintln!("{what}: relative error {e:.3e} (tolerance {tol:.0e})");
    assert!(e <= tol, "{what}: relative error {e:e} exceeds {tol:e}");
    e
}
