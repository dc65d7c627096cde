//! Shared helpers of the elaboration tests: load and elaborate a kernel, check the textual IR round trip,
//! random inputs, and relative errors.
#![allow(dead_code)]

use tessel_lang::elab::{ArgSpec, Elaborated, Specialization, elaborate_full};
use tessel_tile::Func;
use tessel_tile::interp::Arg;
use tessel_tile::interp::memory::Memory;

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

#[allow(unused_imports)]
pub use tessel_tile::testing::{Rng, check_ir, poisoned, rel_err, rounded};

pub fn run(f: &Func, args: &[Arg], grid: [u32; 3], mem: &mut Memory) -> Vec<String> {
    tessel_tile::testing::interpret(f, args, grid, mem)
}

pub fn assert_close(what: &str, out: &[f64], reference: &[f64], tol: f64) -> f64 {
    let e = rel_err(out, reference);
    eprintln!("{what}: relative error {e:.3e} (tolerance {tol:.0e})");
    assert!(e <= tol, "{what}: relative error {e:e} exceeds {tol:e}");
    e
}
