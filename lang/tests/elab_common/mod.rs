//! Shared helpers of the elaboration tests: load and elaborate a kernel, check the textual IR round trip,
//! random inputs, and relative errors.
#![allow(dead_code)]

use tessel_lang::elab::{ArgSpec, Elaborated, Specialization, elaborate_full};
use tessel_tile::interp::Arg;
use tessel_tile::interp::memory::{BufferId, Memory};
use tessel_tile::parse::parse_func;
use tessel_tile::print::print_func;
use tessel_tile::verify::verify;
use tessel_tile::{Func, ScalarType};

pub fn example_source(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Elaborates `kernel` of `src` for `args`, panicking with the rendered diagnostic on failure.
pub fn elab_spec(file: &str, src: &str, kernel: &str, spec: &Specialization) -> Elaborated {
    let module = tessel_lang::parse_module(src).unwrap_or_else(|d| panic!("{}", d.render(file, src)));
    match elaborate_full(&module, kernel, spec) {
        Ok(e) => e,
        Err(d) => panic!("elaboration of `{kernel}` failed:\n{}", d.render(file, src)),
    }
}

pub fn elab(file: &str, src: &str, kernel: &str, args: Vec<ArgSpec>) -> Func {
    let f = elab_spec(file, src, kernel, &Specialization::new(args)).func;
    check_ir(&f);
    f
}

/// The rendered diagnostic of a failing elaboration.
pub fn elab_error(src: &str, kernel: &str, args: Vec<ArgSpec>) -> String {
    let module = tessel_lang::parse_module(src).unwrap_or_else(|d| panic!("{}", d.render("test.py", src)));
    match elaborate_full(&module, kernel, &Specialization::new(args)) {
        Ok(e) => panic!("expected an error, got\n{}", e.func),
        Err(d) => d.render("test.py", src),
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

pub fn assert_close(what: &str, out: &[f64], reference: &[f64], tol: f64) -> f64 {
    let e = rel_err(out, reference);
    eprintln!("{what}: relative error {e:.3e} (tolerance {tol:.0e})");
    assert!(e <= tol, "{what}: relative error {e:e} exceeds {tol:e}");
    e
}
