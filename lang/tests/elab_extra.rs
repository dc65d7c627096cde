//! `tl.inline_asm_elementwise` (elaborated; refused by the interpreter at the call), the
//! `triton.language.extra.cuda` helpers, and the error for AMD-only modules.

mod elab_common;

use elab_common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, Specialization};
use tessel_tile::KernelConfig;
use tessel_tile::ScalarType::{self, *};

const PRELUDE: &str = "import triton\nimport triton.language as tl\n\n";

fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, false)
}

const ASM: &str = r#"
@triton.jit
def k(Out, X):
    offs = tl.arange(0, 8)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $2, $3;", "=r,r,r,r", [x, x, 3], dtype=tl.int32, is_pure=True, pack=1)
    lo, hi = tl.inline_asm_elementwise("mov.b64 {$0, $1}, $2;", "=r,=r,l", (x.to(tl.int64),), (tl.int32, tl.int32), True, 1)
    tl.store(Out + offs, y + lo + hi)
"#;

#[test]
fn inline_asm_elementwise_elaborates_and_the_interpreter_refuses_it_at_the_call() {
    let src = format!("{PRELUDE}{ASM}");
    let f = elab("test.py", &src, "k", vec![ptr(I32), ptr(I32)]);
    let ir = f.to_string();
    assert!(
        ir.contains(
            r#"inline_asm {asm = "shf.l.wrap.b32 $0, $1, $2, $3;", constraints = "=r,r,r,r", pure = true, pack = 1}"#
        ),
        "{ir}"
    );
    assert!(ir.contains(": tensor<8xi32>, tensor<8xi32>"), "a tuple of dtypes gives two results:\n{ir}");
    let mut mem = Memory::new();
    let (o, x) = (mem.alloc("out", I32, 8), mem.alloc("x", I32, 8));
    let e = tessel_interp::run(&f, &[Arg::Buffer(o), Arg::Buffer(x)], [1, 1, 1], &mut mem).unwrap_err();
    assert!(e.fault.to_string().contains("inline PTX cannot run in the interpreter"), "{e}");
    let loc = e.loc.expect("the op has the call's location");
    let d = tessel_lang::Diagnostic::error(e.to_string(), tessel_lang::Span::new(loc.start as usize, loc.end as usize));
    let shown = d.render("test.py", &src);
    assert!(shown.contains("y = tl.inline_asm_elementwise("), "{shown}");
}

#[test]
fn inline_asm_arguments_are_checked() {
    let err = |call: &str| {
        let src =
            format!("{PRELUDE}@triton.jit\ndef k(Out, X):\n    x = tl.load(X + tl.arange(0, 8))\n    y = {call}\n");
        elab_error(&src, "k", vec![ptr(I32), ptr(I32)])
    };
    let msg = err(r#"tl.inline_asm_elementwise("", "=r,r", [x], tl.int32, True, 3)"#);
    assert!(msg.contains("`pack` 3 must divide the 8 elements"), "{msg}");
    let msg = err(r#"tl.inline_asm_elementwise("", "=r,r", [x], tl.int32, x, 1)"#);
    assert!(msg.contains("`is_pure` of `tl.inline_asm_elementwise` must be a compile-time constant"), "{msg}");
}

#[test]
fn extra_cuda_helpers() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
from triton.language.extra import cuda
from triton.language.extra.cuda import gdc_wait, gdc_launch_dependents

@triton.jit
def k(Out, X):
    gdc_wait()
    t0 = tl.extra.cuda.globaltimer()
    sm = cuda.smid()
    x = tl.load(X + tl.arange(0, 4))
    y = cuda.convert_custom_float8_sm80(x, tl.float8e4nv)
    z = tl.extra.cuda.convert_custom_float8(y, tl.float32, fp_downcast_rounding="rtne")
    t1 = tl.extra.cuda.globaltimer()
    tl.store(Out + tl.arange(0, 4), z)
    tl.store(Out + 4, sm)
    tl.store(Out + 5, cuda.num_threads())
    tl.store(Out + 6, (t1 - t0 >= 0).to(tl.float32))
    gdc_launch_dependents()
"#
    );
    let spec =
        Specialization::with_config(vec![ptr(F32), ptr(F32)], KernelConfig { num_warps: 8, ..KernelConfig::DEFAULT });
    let f = elab_spec("test.py", &src, "k", &spec).func;
    check_ir(&f);
    let ir = f.to_string();
    for op in ["gdc_wait", "globaltimer : i64", "smid : i32", "gdc_launch_dependents"] {
        assert!(ir.contains(op), "{op}:\n{ir}");
    }
    let mut mem = Memory::new();
    let o = mem.alloc("out", F32, 7);
    let x = mem.alloc_from("x", F32, &[1.0, 0.3, -448.0, 1000.0]);
    run(&f, &[Arg::Buffer(o), Arg::Buffer(x)], [1, 1, 1], &mut mem);
    // e4m3 keeps 3 mantissa bits and saturates... as `.to(tl.float8e4nv)` does.
    let e4 = |v: f64| tessel_tile::eval::value::round_float(v, F8E4M3);
    assert_eq!(mem.read_f64(o), [1.0, e4(0.3), -448.0, e4(1000.0), 0.0, 256.0, 1.0]);
    let bad = format!(
        "{PRELUDE}@triton.jit\ndef k(Out, X):\n    y = tl.extra.cuda.convert_custom_float8(tl.load(X), tl.float16)\n"
    );
    let msg = elab_error(&bad, "k", vec![ptr(F32), ptr(F32)]);
    assert!(msg.contains("`tl.extra.cuda.convert_custom_float8` converts to or from a float8 type"), "{msg}");
}

#[test]
fn amd_only_modules_are_refused_with_a_clear_error() {
    let cases = [
        ("", "    y = tl.extra.hip.libdevice.exp(tl.load(X))\n", "tl.extra.hip"),
        ("from triton.language.extra.hip import libdevice\n", "    y = libdevice.exp(tl.load(X))\n", "libdevice"),
        (
            "from triton.experimental import gluon\nfrom triton.experimental.gluon import language as gl\n",
            "    y = gl.amd.cdna3.buffer_load(X, tl.arange(0, 4))\n",
            "gl.amd",
        ),
    ];
    for (imports, body, at) in cases {
        let src = format!("{PRELUDE}{imports}@triton.jit\ndef k(Out, X):\n{body}");
        let msg = elab_error(&src, "k", vec![ptr(F32), ptr(F32)]);
        assert!(msg.contains("AMD targets are not supported yet"), "{msg}");
        assert!(msg.contains("is AMD-only") && msg.contains("sm_90a"), "{msg}");
        let line = body.trim_end();
        let lines: Vec<&str> = msg.lines().collect();
        let i = lines.iter().position(|l| l.ends_with(line)).unwrap_or_else(|| panic!("{msg}"));
        let col = lines[i].chars().count() - line.chars().count();
        let mark = lines[i + 1].chars().position(|c| c == '─' || c == '┬').unwrap();
        assert_eq!(mark - col, line.find(at).unwrap(), "the label starts at `{at}`:\n{msg}");
    }
}
