//! `break` and `continue`: in runtime `for` and `while` loops (flags carried by the loop, the rest of the body
//! under `if not skip`), in unrolled loops (`tl.static_range`) with compile-time and runtime conditions, nested
//! loops, `for ... else`, and the errors where a jump would change a carried value's type.

mod elab_common;

use elab_common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, ConstValue};
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

/// Elaborates `k(Out, X, n, ...)`, runs one program with `x` as `X` (f32) and `n`; returns the IR and `Out`
/// (f32, `n_out` elements).
fn run_k(src: &str, extra: Vec<ArgSpec>, x: &[f64], n: i64, n_out: usize) -> (String, Vec<f64>) {
    let src = format!("{PRELUDE}{src}");
    let mut args = vec![ptr(F32), ptr(F32), i32()];
    args.extend(extra);
    let f = elab("test.py", &src, "k", args);
    let mut mem = Memory::new();
    let out = poisoned(&mut mem, "out", F32, n_out);
    let xb = mem.alloc_from("x", F32, x);
    run(&f, &[Arg::Buffer(out), Arg::Buffer(xb), Arg::Int(n)], [1, 1, 1], &mut mem);
    (f.to_string(), mem.read_f64(out))
}

const FIND_FIRST: &str = r#"
@triton.jit
def k(Out, X, n):
    first = -1
    total = 0.0
    for i in range(0, n):
        x = tl.load(X + i)
        if x > 10.0:
            first = i
            break
        total += x
    tl.store(Out, first)
    tl.store(Out + 1, total)
"#;

#[test]
fn break_leaves_a_runtime_for_loop() {
    let x = [1.0, 2.0, 30.0, 4.0, 50.0];
    let (ir, out) = run_k(FIND_FIRST, vec![], &x, 5, 2);
    assert_eq!(out, [2.0, 3.0], "stops at the first element over 10:\n{ir}");
    assert!(ir.contains("while") && !ir.contains(" for "), "a `for` with a `break` becomes a `while`:\n{ir}");
    let (_, out) = run_k(FIND_FIRST, vec![], &[1.0, 2.0, 3.0], 3, 2);
    assert_eq!(out, [-1.0, 6.0], "no break: every iteration runs");
    let (_, out) = run_k(FIND_FIRST, vec![], &[], 0, 2);
    assert_eq!(out, [-1.0, 0.0], "an empty range runs no iteration");
}

#[test]
fn continue_skips_the_rest_of_a_runtime_for_body() {
    let src = r#"
@triton.jit
def k(Out, X, n):
    pos = 0.0
    count = 0
    for i in range(n):
        x = tl.load(X + i)
        if x < 0.0:
            continue
        pos += x
        if x == 0.0:
            continue
        count += 1
    tl.store(Out, pos)
    tl.store(Out + 1, count)
"#;
    let (ir, out) = run_k(src, vec![], &[1.0, -2.0, 0.0, 4.0, -5.0], 5, 2);
    assert_eq!(out, [5.0, 2.0], "{ir}");
    assert!(ir.contains(" for ") && !ir.contains("while"), "`continue` alone keeps the `for`:\n{ir}");
}

#[test]
fn break_and_continue_in_a_while_loop() {
    // The condition is not evaluated again after a `break`: the atomic counter shows how often it ran.
    let src = r#"
@triton.jit
def k(Out, X, n):
    i = 0
    acc = 0.0
    while tl.atomic_add(Out + 2, 1.0) < n:
        x = tl.load(X + i)
        i += 1
        if x < 0.0:
            continue
        if x > 100.0:
            break
        acc += x
    tl.store(Out, acc)
    tl.store(Out + 1, i)
"#;
    let src = format!("{PRELUDE}{src}");
    let f = elab("test.py", &src, "k", vec![ptr(F32), ptr(F32), i32()]);
    let mut mem = Memory::new();
    let out = mem.alloc_from("out", F32, &[0.0; 3]);
    let xb = mem.alloc_from("x", F32, &[1.0, -1.0, 2.0, 200.0, 5.0, 6.0]);
    run(&f, &[Arg::Buffer(out), Arg::Buffer(xb), Arg::Int(6)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(out), [3.0, 4.0, 4.0], "{f}");
    // Without a break the loop ends on its condition.
    let mut mem = Memory::new();
    let out = mem.alloc_from("out", F32, &[0.0; 3]);
    let xb = mem.alloc_from("x", F32, &[1.0, -1.0, 2.0]);
    run(&f, &[Arg::Buffer(out), Arg::Buffer(xb), Arg::Int(3)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(out), [3.0, 3.0, 4.0]);
}

#[test]
fn break_in_a_counting_down_loop() {
    let src = r#"
@triton.jit
def k(Out, X, n):
    last = -1
    for i in range(n - 1, -1, -1):
        if tl.load(X + i) > 0.0:
            last = i
            break
    tl.store(Out, last)
"#;
    let (_, out) = run_k(src, vec![], &[1.0, 5.0, -1.0, -2.0], 4, 1);
    assert_eq!(out, [1.0], "the last positive element");
}

#[test]
fn nested_loops_break_only_the_inner_one() {
    let src = r#"
@triton.jit
def k(Out, X, n):
    hits = 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            hits += 1
        if i == 2:
            continue
        hits += 100
    tl.store(Out, hits)
"#;
    // Inner loop runs i+1 times; +100 for every i except 2.
    let (_, out) = run_k(src, vec![], &[], 4, 1);
    assert_eq!(out, [(1 + 2 + 3 + 4 + 300) as f64]);
}

#[test]
fn static_range_with_compile_time_and_runtime_jumps() {
    let src = r#"
@triton.jit
def k(Out, X, n, N: tl.constexpr):
    acc = 0.0
    for i in tl.static_range(N):
        if i == 1:
            continue
        if i == 6:
            break
        x = tl.load(X + i)
        if x < 0.0:
            break
        acc += x
    tl.store(Out, acc)
"#;
    let (ir, out) = run_k(src, vec![c(8)], &[1.0, 10.0, 2.0, 3.0, 4.0, 5.0, 7.0, 8.0], 0, 1);
    assert_eq!(out, [1.0 + 2.0 + 3.0 + 4.0 + 5.0], "{ir}");
    assert!(!ir.contains(" for ") && !ir.contains("while"), "the loop is unrolled:\n{ir}");
    assert_eq!(ir.matches("load").count(), 5, "iterations 1, 6 and 7 are dropped at compile time:\n{ir}");
    let (_, out) = run_k(src, vec![c(8)], &[1.0, 10.0, 2.0, -3.0, 4.0, 5.0, 7.0, 8.0], 0, 1);
    assert_eq!(out, [3.0], "a runtime break skips the later iterations");
}

#[test]
fn for_else_runs_unless_the_loop_breaks() {
    let src = r#"
@triton.jit
def k(Out, X, n):
    found = 0
    for i in tl.static_range(4):
        if tl.load(X + i) > 5.0:
            found = 1
            break
    else:
        found = 2
    tl.store(Out, found)
"#;
    let (_, out) = run_k(src, vec![], &[1.0, 9.0, 0.0, 0.0], 0, 1);
    assert_eq!(out, [1.0]);
    let (_, out) = run_k(src, vec![], &[1.0, 2.0, 0.0, 0.0], 0, 1);
    assert_eq!(out, [2.0]);
}

#[test]
fn break_in_a_runtime_loop_inside_a_helper() {
    let src = r#"
@triton.jit
def count_below(X, n, limit):
    c = 0
    for i in range(n):
        if tl.load(X + i) >= limit:
            break
        c += 1
    return c

@triton.jit
def k(Out, X, n):
    tl.store(Out, count_below(X, n, 3.0))
    tl.store(Out + 1, count_below(X, n, 100.0))
"#;
    let (_, out) = run_k(src, vec![], &[0.0, 1.0, 2.0, 3.0, 4.0], 5, 2);
    assert_eq!(out, [3.0, 5.0]);
}

#[test]
fn a_jump_that_changes_a_carried_type_is_an_error() {
    let src = format!(
        "{PRELUDE}@triton.jit\ndef k(Out, X, n):\n    acc = 0\n    for i in range(n):\n        if i > 3:\n            acc = 1.5\n            break\n        acc += 1\n    tl.store(Out, acc)\n"
    );
    let msg = elab_error(&src, "k", vec![ptr(F32), ptr(F32), i32()]);
    assert!(msg.contains("`acc` has different types after the two branches of this `if`"), "{msg}");
    assert!(msg.contains("if i > 3:"), "points at the `if`:\n{msg}");
}

#[test]
fn a_jump_outside_a_loop_is_an_error() {
    let src =
        format!("{PRELUDE}@triton.jit\ndef k(Out, X, n):\n    if n > 0:\n        break\n    tl.store(Out, 1.0)\n");
    let msg = match tessel_lang::parse_module(&src) {
        Err(d) => d.render("test.py", &src),
        Ok(_) => elab_error(&src, "k", vec![ptr(F32), ptr(F32), i32()]),
    };
    assert!(msg.contains("outside"), "{msg}");
    assert!(msg.contains("break"), "{msg}");
}
