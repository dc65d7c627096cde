//! Shared helpers of the gluon tests: elaborate a kernel with the gluon builtins registered, check the IR round
//! trip, run it in the interpreter on random inputs, and compare with references.
#![allow(dead_code)]

use tessel_lang::elab::{ArgSpec, ConstValue, Elaborated, Specialization, elaborate_with};
use tessel_tile::interp::Arg;
use tessel_tile::interp::memory::{BufferId, Memory};
use tessel_tile::parse::parse_func;
use tessel_tile::print::print_func;
use tessel_tile::verify::verify;
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
    match try_elab(src, kernel, &Specialization::new(args)) {
        Ok(e) => panic!("expected an error, got\n{}", e.func),
        Err(d) => d,
    }
}

/// The IR verifies, and prints → parses → prints to the same text.
pub fn check_ir(f: &Func) {
    verify(f).unwrap_or_else(|e| panic!("verifier: {e}\n{f}"));
    let text = print_func(f);
    let parsed = parse_func(&text).unwrap_or_else(|e| panic!("parse error {e} in\n{text}"));
    verify(&parsed).unwrap_or_else(|e| panic!("verifier (parsed): {e}"));
    assert_eq!(print_func(&parsed), text, "print(parse(print(f))) differs");
}

#[allow(unused_imports)]
pub use tessel_tile::testing::Rng;

/// The values as stored in `t` (rounded), so references are computed from exactly what the kernel reads.
pub fn rounded(t: ScalarType, v: &[f64]) -> Vec<f64> {
    v.iter().map(|&x| tessel_tile::interp::value::round_float(x, t)).collect()
}

/// A buffer filled with NaN (floats) or a sentinel (ints): what is not written shows.
pub fn poisoned(mem: &mut Memory, name: &str, t: ScalarType, n: usize) -> BufferId {
    let fill = if t.is_float() { f64::NAN } else { -7.0 };
    mem.alloc_from(name, t, &vec![fill; n])
}

/// ‖out − ref‖ / ‖ref‖ (infinite if any output is NaN).
pub fn rel_err(out: &[f64], reference: &[f64]) -> f64 {
    assert_eq!(out.len(), reference.len());
    if out.iter().any(|x| x.is_nan()) {
        return f64::INFINITY;
    }
    let num: f64 = out.iter().zip(reference).map(|(a, b)| (a - b) * (a - b)).sum();
    let den: f64 = reference.iter().map(|b| b * b).sum();
    (num / den).sqrt()
}

pub fn run(f: &Func, args: &[Arg], grid: [u32; 3], mem: &mut Memory) -> Vec<String> {
    tessel_tile::interp::run(f, args, grid, mem).unwrap_or_else(|e| panic!("interpreter: {e}"))
}

/// The interpreter's error for a program it must refuse.
pub fn run_error(f: &Func, args: &[Arg], mem: &mut Memory) -> String {
    match tessel_tile::interp::run(f, args, [1, 1, 1], mem) {
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
