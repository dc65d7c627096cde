//! Partial evaluation and control flow: constexpr folding, `static_range`, callees (defaults, keywords, tuple
//! returns), constexpr functions, module constants, aggregates, loop-carried values of `for`/`while`, runtime
//! `if` joins, early returns.

mod elab_common;

use elab_common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel_tile::ScalarType::{self, *};

const PRELUDE: &str = "import triton\nimport triton.language as tl\n\n";

fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, false)
}

fn i32() -> ArgSpec {
    ArgSpec::Int(I32, false)
}

fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

/// Elaborates, runs one program with `out` (f32, `n` elements) as the first argument, returns `out`.
fn run_out(src: &str, kernel: &str, args: Vec<ArgSpec>, runtime: &[Arg], n: usize) -> (String, Vec<f64>) {
    let src = format!("{PRELUDE}{src}");
    let f = elab("test.py", &src, kernel, args);
    let mut mem = Memory::new();
    let out = poisoned(&mut mem, "out", F32, n);
    let mut argv = vec![Arg::Buffer(out)];
    argv.extend_from_slice(runtime);
    run(&f, &argv, [1, 1, 1], &mut mem);
    (f.to_string(), mem.read_f64(out))
}

/// Triton's 06 fused attention passes runtime values (`offs_m`, a tensor, and `N_CTX`, an int) to parameters
/// of `_attn_fwd_inner` annotated `tl.constexpr`. As in Triton, the annotation of a called function does not
/// make its argument compile-time: the values stay runtime, and constants passed there stay constants.
#[test]
fn runtime_values_bound_to_constexpr_parameters_of_helpers() {
    let src = r#"
@triton.jit
def inner(acc, offs_m: tl.constexpr, N_CTX: tl.constexpr, STAGE: tl.constexpr):
    if STAGE == 2:
        acc = acc * 10
    return tl.where(offs_m < N_CTX, acc + offs_m, acc)

@triton.jit
def k(Out, n, BLOCK: tl.constexpr):
    offs_m = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32) + 1
    acc = inner(acc, offs_m, n, 2)
    tl.store(Out + offs_m, acc)
"#;
    let (ir, out) = run_out(src, "k", vec![ptr(F32), i32(), c(8)], &[Arg::Int(5)], 8);
    assert_eq!(out, [10.0, 11.0, 12.0, 13.0, 14.0, 10.0, 10.0, 10.0]);
    assert!(!ir.contains("if "), "STAGE stays a constant: the `if` folds away\n{ir}");
}

#[test]
fn constexpr_if_and_static_range_fold_away() {
    let src = r#"
@triton.jit
def k(Out, BLOCK: tl.constexpr, N: tl.constexpr):
    if BLOCK > 64:
        x = 1.0
    elif BLOCK > 16:
        x = 2.0
    else:
        x = 3.0
    for i in tl.static_range(N):
        x = x + i
    tl.store(Out, x)
"#;
    let (ir, out) = run_out(src, "k", vec![ptr(F32), c(32), c(4)], &[], 1);
    assert_eq!(out, [2.0 + 0.0 + 1.0 + 2.0 + 3.0]);
    assert!(!ir.contains("if ") && !ir.contains("for "), "compile-time control flow leaves no ops:\n{ir}");
    assert_eq!(ir.matches(" add ").count(), 4, "static_range unrolls 4 times:\n{ir}");
}

#[test]
fn callees_take_defaults_keywords_and_return_tuples() {
    let src = r#"
@triton.jit
def scale_shift(x, scale=2.0, shift: tl.constexpr = 1):
    return x * scale + shift, shift

@triton.jit
def k(Out, X):
    x = tl.load(X)
    a, s = scale_shift(x, shift=3)
    b, _ = scale_shift(x, 0.5)
    tl.static_assert(s.dtype == tl.int32)
    tl.store(Out + 0, a)
    tl.store(Out + 1, b)
    tl.store(Out + 2, s)
"#;
    let f = format!("{PRELUDE}{src}");
    let func = elab("test.py", &f, "k", vec![ptr(F32), ptr(F32)]);
    let mut mem = Memory::new();
    let out = poisoned(&mut mem, "out", F32, 3);
    let x = mem.alloc_from("x", F32, &[5.0]);
    run(&func, &[Arg::Buffer(out), Arg::Buffer(x)], [1, 1, 1], &mut mem);
    // A returned Python number becomes a tensor (int32), as in Triton.
    assert_eq!(mem.read_f64(out), [13.0, 3.5, 3.0]);
}

#[test]
fn constexpr_functions_globals_and_the_assignment_rule() {
    let src = r#"
FACTOR = 2
LOG: tl.constexpr = tl.constexpr(3)

@triton.constexpr_function
def widened(n):
    sizes = [n * FACTOR for _ in range(2)]
    return max(sizes) + 2 ** LOG - 8

@triton.jit
def k(Out, BLOCK: tl.constexpr):
    N: tl.constexpr = widened(BLOCK)
    offs = tl.arange(0, N)
    total = tl.sum(offs, axis=0)
    tl.static_print(N, total.dtype)
    tl.store(Out, total)
"#;
    let full = format!("{PRELUDE}{src}");
    let e = elab_spec("test.py", &full, "k", &Specialization::new(vec![ptr(F32), c(8)]));
    check_ir(&e.func);
    assert_eq!(e.static_prints, ["16 int32"]);
    // A plain assignment of a constexpr makes a runtime scalar (Triton's rule), which arange rejects.
    let bad =
        format!("{PRELUDE}@triton.jit\ndef k(Out, BLOCK: tl.constexpr):\n    n = BLOCK\n    offs = tl.arange(0, n)\n");
    let msg = elab_error(&bad, "k", vec![ptr(F32), c(8)]);
    assert!(msg.contains("`end` of `tl.arange` must be a compile-time constant"), "{msg}");
    assert!(msg.contains("runtime value of type i32"), "{msg}");
}

#[test]
fn python_math_and_copy_compute_at_compile_time() {
    let src = r#"
import copy
import math

@triton.constexpr_function
def splits(n):
    return [[0, 1 << i] for i in range(int(math.log2(n)))]

@triton.constexpr_function
def edited(bases):
    out = copy.deepcopy(bases)
    out[0][1] = 99
    return out

@triton.jit
def k(Out, N: tl.constexpr):
    b: tl.constexpr = splits(N)
    tl.static_print(b, edited(b), b, math.log2(N), math.ceil(2.5), math.floor(-2.5), math.gcd(12, N))
    tl.static_print(math.log(8, 2), math.sqrt(16), math.isqrt(17), copy.copy((1, [2])))
"#;
    let full = format!("{PRELUDE}{src}");
    let e = elab_spec("test.py", &full, "k", &Specialization::new(vec![ptr(F32), c(8)]));
    assert_eq!(
        e.static_prints,
        [
            "[[0, 1], [0, 2], [0, 4]] [[0, 99], [0, 2], [0, 4]] [[0, 1], [0, 2], [0, 4]] 3.0 3 -3 4",
            "3.0 4.0 4 (1, [2])",
        ]
    );
    let bad = format!("{PRELUDE}import math\n@triton.jit\ndef k(Out, n):\n    x = math.log2(n)\n");
    let msg = elab_error(&bad, "k", vec![ptr(F32), i32()]);
    assert!(msg.contains("`math.log2` computes at compile time, but its argument is a runtime value"), "{msg}");
    assert!(msg.contains("use `tl.log2` on tensors"), "{msg}");
}

#[test]
fn for_loops_carry_values_and_run_negative_steps() {
    let src = r#"
@triton.jit
def k(Out, n):
    acc = 0.0
    vec = tl.zeros([4], dtype=tl.float32)
    for i in range(0, n):
        acc += i
        vec = vec + tl.arange(0, 4).to(tl.float32)
    down = 0
    for j in range(10, 0, -3):
        down = down * 100 + j
    tl.store(Out + 0, acc)
    tl.store(Out + 1, tl.sum(vec, axis=0))
    tl.store(Out + 2, down)
"#;
    let (ir, out) = run_out(src, "k", vec![ptr(F32), i32()], &[Arg::Int(5)], 3);
    assert_eq!(out, [10.0, 5.0 * 6.0, 10070401.0]);
    assert!(
        ir.contains("%acc_1, %vec_1 = for %0, %n, %1, %acc, %vec : f32, tensor<4xf32>"),
        "both carried values become loop results:\n{ir}"
    );
}

#[test]
fn tl_range_records_loop_attributes() {
    let src = r#"
@triton.jit
def k(Out, n):
    acc = 0
    for i in tl.range(0, n, 2, num_stages=2, loop_unroll_factor=4, flatten=True, disallow_acc_multi_buffer=True):
        acc += i
    tl.store(Out, acc)
"#;
    let (ir, out) = run_out(src, "k", vec![ptr(F32), i32()], &[Arg::Int(7)], 1);
    assert_eq!(out, [0.0 + 2.0 + 4.0 + 6.0]);
    assert!(
        ir.contains("for {num_stages = 2, loop_unroll_factor = 4, flatten = true, disallow_acc_multi_buffer = true}"),
        "{ir}"
    );
}

#[test]
fn while_loops_carry_values() {
    let src = r#"
@triton.jit
def k(Out, n):
    i = 0
    steps = 0
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    tl.store(Out, steps)
"#;
    let (ir, out) = run_out(src, "k", vec![ptr(F32), i32()], &[Arg::Int(27)], 1);
    assert_eq!(out, [111.0], "the Collatz sequence of 27 takes 111 steps");
    assert!(ir.contains("while") && ir.contains("condition"), "{ir}");
}

#[test]
fn runtime_if_joins_assigned_variables() {
    let src = r#"
@triton.jit
def k(Out, X):
    x = tl.load(X)
    if x > 0:
        y = x * 2
        z = 1.0
    else:
        y = -x
        z = 2.0
    only_then = 0.0
    if x > 100:
        only_then = 5.0
    w = 3.0 if x > 0 else 4.0
    tl.store(Out + 0, y)
    tl.store(Out + 1, z)
    tl.store(Out + 2, only_then)
    tl.store(Out + 3, w)
"#;
    for (x, want) in [(3.0, [6.0, 1.0, 0.0, 3.0]), (-2.0, [2.0, 2.0, 0.0, 4.0]), (200.0, [400.0, 1.0, 5.0, 3.0])] {
        let src_full = format!("{PRELUDE}{src}");
        let f = elab("test.py", &src_full, "k", vec![ptr(F32), ptr(F32)]);
        let mut mem = Memory::new();
        let out = poisoned(&mut mem, "out", F32, 4);
        let bx = mem.alloc_from("x", F32, &[x]);
        run(&f, &[Arg::Buffer(out), Arg::Buffer(bx)], [1, 1, 1], &mut mem);
        assert_eq!(mem.read_f64(out), want, "x = {x}");
    }
}

#[test]
fn early_return_in_a_runtime_if() {
    let src = r#"
@triton.jit
def k(Out, n):
    pid = tl.program_id(0)
    if pid >= n:
        return
    tl.store(Out + pid, pid * 10)
"#;
    let full = format!("{PRELUDE}{src}");
    let f = elab("test.py", &full, "k", vec![ptr(F32), i32()]);
    let mut mem = Memory::new();
    let out = poisoned(&mut mem, "out", F32, 6);
    run(&f, &[Arg::Buffer(out), Arg::Int(4)], [6, 1, 1], &mut mem);
    let got = mem.read_f64(out);
    assert_eq!(&got[..4], [0.0, 10.0, 20.0, 30.0]);
    assert!(got[4].is_nan() && got[5].is_nan(), "programs past n returned before storing: {got:?}");
}

#[test]
fn aggregates_are_passed_returned_and_carried() {
    let src = r#"
from triton.language.core import _aggregate as aggregate

@aggregate
class Stats:
    total: tl.tensor
    count: tl.tensor
    scale: tl.constexpr

    @triton.jit
    def add(self, x):
        return Stats(self.total + x * self.scale, self.count + 1, self.scale)

    @triton.jit
    def mean(self):
        return self.total / self.count

@triton.jit
def k(Out, X, n, SCALE: tl.constexpr):
    s = Stats(tl.to_tensor(0.0), tl.to_tensor(0), SCALE)
    for i in range(n):
        s = s.add(tl.load(X + i))
    tl.static_assert(isinstance(s, Stats))
    tl.store(Out, s.mean())
"#;
    let full = format!("{PRELUDE}{src}");
    let f = elab("test.py", &full, "k", vec![ptr(F32), ptr(F32), i32(), c(3)]);
    let mut mem = Memory::new();
    let out = poisoned(&mut mem, "out", F32, 1);
    let x = mem.alloc_from("x", F32, &[1.0, 2.0, 3.0, 6.0]);
    run(&f, &[Arg::Buffer(out), Arg::Buffer(x), Arg::Int(4)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(out), [3.0 * 12.0 / 4.0]);
    // Fields holding Python numbers are compile-time values: they cannot become tensors in the loop.
    let numbers = full.replace("Stats(tl.to_tensor(0.0), tl.to_tensor(0), SCALE)", "Stats(0.0, 0, SCALE)");
    let msg = elab_error(&numbers, "k", vec![ptr(F32), ptr(F32), i32(), c(3)]);
    assert!(msg.contains("loop-carried variable `s` changes type inside the `for` loop: 0.0 and f32"), "{msg}");
}

#[test]
fn compile_time_python_inside_kernels() {
    let src = r#"
@triton.jit
def k(Out, SHAPE: tl.constexpr, NAME: tl.constexpr):
    dims: tl.constexpr = [d * 2 for d in SHAPE if d > 1]
    x = tl.zeros(dims, dtype=tl.float16)
    tl.static_assert(x.shape == (4, 8), f"got {x.shape}")
    tl.static_assert(isinstance(x, tl.tensor) and not isinstance(x, tl.constexpr))
    tl.static_assert(len(x.shape) == 2 and x.dtype.is_fp16() and x.dtype.primitive_bitwidth == 16)
    tl.static_print(NAME.upper(), "{}x{}".format(*dims), min(dims), sum(dims), x.T.shape, x.dtype)
    tl.static_print((dims[1]).bit_length(), (0).bit_length(), (-5).bit_length(), SHAPE[2].bit_length())
    total = 0
    for i, d in enumerate(dims):
        total = total + i * d
    tl.store(Out, total)
"#;
    let shape = ArgSpec::Constexpr(ConstValue::Tuple(vec![ConstValue::Int(2), ConstValue::Int(1), ConstValue::Int(4)]));
    let name = ArgSpec::Constexpr(ConstValue::Str("tile".into()));
    let full = format!("{PRELUDE}{src}");
    let e = elab_spec("test.py", &full, "k", &Specialization::new(vec![ptr(F32), shape, name]));
    check_ir(&e.func);
    assert_eq!(e.static_prints, ["TILE 4x8 4 12 (8, 4) float16", "4 0 3 3"]);
}

#[test]
fn kernels_lists_jit_functions_of_every_flavour() {
    use tessel_lang::elab::{Decorator, kernels};
    let src = r#"
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tessel

@triton.autotune(configs=[], key=[])
@triton.jit
def a(X, n, BLOCK: tl.constexpr = 128, dtype: "tl.constexpr" = tl.float16):
    pass

@gluon.jit
def b(X, BLOCK: gl.constexpr):
    pass

@tessel.jit(do_not_specialize=["n"])
def c(X, n):
    pass

def host(x):
    return a[(1,)](x)
"#;
    let m = tessel_lang::parse_module(src).unwrap();
    let ks = kernels(&m);
    let names: Vec<(&str, Decorator)> = ks.iter().map(|k| (k.name.as_str(), k.decorator)).collect();
    assert_eq!(names, [("a", Decorator::Triton), ("b", Decorator::Gluon), ("c", Decorator::Tessel)]);
    let a = &ks[0].params;
    assert_eq!(a.iter().map(|p| p.constexpr).collect::<Vec<_>>(), [false, false, true, true]);
    assert_eq!(a[2].annotation.as_deref(), Some("tl.constexpr"));
    assert_eq!(a[2].default.as_deref(), Some("128"));
    assert_eq!(a[3].default.as_deref(), Some("tl.float16"));
    assert!(ks[1].params[1].constexpr);
}

/// The deepest expressions the lexer lets through (just under `MAX_NESTING`) elaborate on a test thread's 2 MiB
/// stack: the elaborator's recursion moves to fresh stack segments as it goes.
#[test]
fn deepest_accepted_expressions_elaborate() {
    for expr in [
        format!("x{}", " + 1".repeat(2900)),
        format!("{}x", "-".repeat(2900)),
        format!("{}x{}", "tl.abs(".repeat(190), ")".repeat(190)),
    ] {
        let src = format!(
            "{PRELUDE}@triton.jit\ndef k(X, n, BLOCK: tl.constexpr):\n    x = tl.load(X + tl.arange(0, BLOCK))\n    \
             tl.store(X + tl.arange(0, BLOCK), {expr})\n"
        );
        let f = elab("deep.py", &src, "k", vec![ptr(F32), i32(), c(16)]);
        assert!(f.to_string().contains("store"));
    }
}

/// `kernels` says which jit functions are meant to be launched (launched from host code, or called by no other
/// jit function and returning nothing) and which are helpers (called by jit functions, or returning a value).
#[test]
fn kernels_are_told_apart_from_helpers() {
    use tessel_lang::elab::roles::Role;
    let src = r#"
import triton
import triton.language as tl

@triton.jit
def square(x):
    return x * x

@triton.jit
def store_sq(Out, x):
    tl.store(Out, square(x))

@triton.jit
def main(Out, X):
    store_sq(Out, tl.load(X))

@triton.jit
def also_called(Out):
    tl.store(Out, 1.0)

@triton.jit
def outer(Out):
    also_called(Out)

def host(out):
    also_called[(1,)](out)
"#;
    let module = tessel_lang::parse_module(src).unwrap();
    let roles: Vec<(String, Role)> =
        tessel_lang::elab::kernels(&module).into_iter().map(|k| (k.name, k.role)).collect();
    let helper = |c: &[&str]| Role::Helper { callers: c.iter().map(|s| s.to_string()).collect() };
    assert_eq!(
        roles,
        [
            ("square".into(), helper(&["store_sq"])),
            ("store_sq".into(), helper(&["main"])),
            ("main".into(), Role::Kernel),
            ("also_called".into(), Role::Kernel),
            ("outer".into(), Role::Kernel),
        ]
    );
}
