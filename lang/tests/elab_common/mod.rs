//! Shared helpers of the elaboration tests: load and elaborate a kernel, check the textual IR round trip,
//! random inputs, and relative errors.
#![allow(dead_code)]

use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, Elaborated, Specialization, elaborate_full};
use tessel_tile::Func;

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
pub use tessel_interp::testing::poisoned;
#[allow(unused_imports)]
pub use tessel_math::testing::Rng;
#[allow(unused_imports)]
pub use tessel_tile::testing::{check_ir, rel_err, rounded};

pub fn run(f: &Func, args: &[Arg], grid: [u32; 3], mem: &mut Memory) -> Vec<String> {
    tessel_interp::testing::interpret(f, args, grid, mem)
}

pub fn assert_close(what: &str, out: &[f64], reference: &[f64], tol: f64) -> f64 {
    let e = rel_err(out, reference);
    eprintln!("{what}: relative error {e:.3e} (tolerance {tol:.0e})");
    assert!(e <= tol, "{what}: relative error {e:e} exceeds {tol:e}");
    e
}

/// `out = EXPR` of `x` and `y`, loaded from buffers of type `t` (with `tl` and `libdevice` imported), run in the
/// interpreter; the results as f64s.
pub fn elementwise2(expr: &str, t: tessel_tile::ScalarType, xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let n = xs.len().next_power_of_two();
    let src = format!(
        "import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n@triton.jit\ndef k(Out, X, Y):\n    offs = tl.arange(0, {n})\n    m = offs < {}\n    x = tl.load(X + offs, mask=m)\n    y = tl.load(Y + offs, mask=m)\n    tl.store(Out + offs, {expr}, mask=m)\n",
        xs.len()
    );
    let f = elab("test.py", &src, "k", vec![ArgSpec::Pointer(t, false); 3]);
    let mut mem = Memory::new();
    let (o, x, y) = (mem.alloc("out", t, xs.len()), mem.alloc_from("x", t, xs), mem.alloc_from("y", t, ys));
    run(&f, &[Arg::Buffer(o), Arg::Buffer(x), Arg::Buffer(y)], [1, 1, 1], &mut mem);
    mem.read_f64(o)
}
