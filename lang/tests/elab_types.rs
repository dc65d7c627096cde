//! Typing: Triton's promotion rules, Python-number dtypes, integer division semantics, casts, broadcasting and
//! pointer arithmetic.

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

fn prints(src: &str, kernel: &str, args: Vec<ArgSpec>) -> Vec<String> {
    let src = format!("{PRELUDE}{src}");
    let e = elab_spec("test.py", &src, kernel, &Specialization::new(args));
    check_ir(&e.func);
    e.static_prints
}

#[test]
fn promotion_follows_triton() {
    let src = r#"
@triton.jit
def k(I8, I32, U32, I64, F16, BF16, F32):
    i8 = tl.load(I8)
    i32 = tl.load(I32)
    u32 = tl.load(U32)
    i64 = tl.load(I64)
    f16 = tl.load(F16)
    bf16 = tl.load(BF16)
    f32 = tl.load(F32)
    tl.static_print((i8 + 3).dtype, (i8 + i32).dtype, (u32 + i32).dtype, (i64 + u32).dtype, (i8 + 1.5).dtype)
    tl.static_print((f16 + f16).dtype, (f16 / f16).dtype, (f16 + 2.0).dtype, (f16 + f32).dtype, (bf16 + f16).dtype, (bf16 * bf16).dtype)
    tl.static_print((i32 / i32).dtype, (i32 // i32).dtype, (f16 % f16).dtype, (i8 < 3).dtype, (u32 & 1).dtype, (i8 << 2).dtype)
    tl.static_print(tl.to_tensor(3000000000).dtype, tl.to_tensor(2**40).dtype, tl.to_tensor(1.5).dtype, tl.to_tensor(1e300).dtype, tl.to_tensor(True).dtype)
    tl.static_print((bf16 + bf16 * 0.5).dtype, (f16 * 2).dtype, (i32 + f16).dtype, (u32 // 2).dtype)
"#;
    let args = vec![ptr(I8), ptr(I32), ptr(U32), ptr(I64), ptr(F16), ptr(BF16), ptr(F32)];
    let p = prints(src, "k", args);
    assert_eq!(
        p,
        [
            // A Python scalar of a kind no higher than the tensor's does not take part.
            "int8 int32 uint32 int64 float32",
            // fp16 wins over bf16 (Triton checks fp16 first); `/` and `%` on halves compute in fp32.
            "float16 float32 float16 float32 float16 bfloat16",
            "float32 int32 float32 int1 uint32 int32",
            "uint32 int64 float32 float64 int1",
            "bfloat16 float16 float16 uint32",
        ]
    );
}

#[test]
fn integer_division_truncates_at_runtime_and_floors_at_compile_time() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(Out, a, b, A: tl.constexpr, B: tl.constexpr):
    tl.store(Out + 0, a // b)
    tl.store(Out + 1, a % b)
    tl.store(Out + 2, A // B)
    tl.store(Out + 3, A % B)
    tl.store(Out + 4, a // 2)
    tl.store(Out + 5, (a / b).to(tl.int32))
"#
    );
    let c = |v| ArgSpec::Constexpr(ConstValue::Int(v));
    let f = elab("test.py", &src, "k", vec![ptr(I32), ArgSpec::Int(I32, false), ArgSpec::Int(I32, false), c(-7), c(2)]);
    let mut mem = Memory::new();
    let out = poisoned(&mut mem, "out", I32, 6);
    run(&f, &[Arg::Buffer(out), Arg::Int(-7), Arg::Int(2)], [1, 1, 1], &mut mem);
    // C semantics on tensors (as Triton), Python semantics on constexprs; `/` on ints is float division.
    assert_eq!(mem.read_f64(out), [-3.0, -1.0, -4.0, 1.0, -3.0, -3.0]);
}

#[test]
fn broadcasting_follows_numpy() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def outer(X, Y, Out, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M))
    y = tl.load(Y + tl.arange(0, N))
    s = x[:, None] + y[None, :]
    tl.static_print(s.shape, (tl.zeros([N], tl.float32) + s).shape, x[None, :, None].shape, s.T.shape)
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(Out + offs, s * 2)
"#
    );
    let c = |v| ArgSpec::Constexpr(ConstValue::Int(v));
    let e = elab_spec("test.py", &src, "outer", &Specialization::new(vec![ptr(F32), ptr(F32), ptr(F32), c(4), c(8)]));
    check_ir(&e.func);
    assert_eq!(e.static_prints, ["(4, 8) (4, 8) (1, 4, 1) (8, 4)"]);
    let mut mem = Memory::new();
    let x: Vec<f64> = (0..4).map(|i| i as f64).collect();
    let y: Vec<f64> = (0..8).map(|j| 10.0 * j as f64).collect();
    let (bx, by) = (mem.alloc_from("x", F32, &x), mem.alloc_from("y", F32, &y));
    let out = poisoned(&mut mem, "out", F32, 32);
    run(&e.func, &[Arg::Buffer(bx), Arg::Buffer(by), Arg::Buffer(out)], [1, 1, 1], &mut mem);
    let want: Vec<f64> = (0..4).flat_map(|i| (0..8).map(move |j| 2.0 * (i as f64 + 10.0 * j as f64))).collect();
    assert_eq!(mem.read_f64(out), want);
}

#[test]
fn casts_round_saturate_and_reinterpret() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(X, I, H, B):
    x = tl.load(X)
    tl.store(I + 0, x.to(tl.int32, bitcast=True))
    tl.store(I + 1, x.to(tl.int8).to(tl.int32))
    tl.store(I + 2, (x != 0).to(tl.int32))
    tl.store(I + 3, x.to(tl.int1).to(tl.int32))
    tl.store(H, x.to(tl.float16))
    tl.store(B, x)
"#
    );
    let f = elab("test.py", &src, "k", vec![ptr(F32), ptr(I32), ptr(F16), ptr(I8)]);
    let text = f.to_string();
    assert!(text.contains("bitcast"), "{text}");
    let mut mem = Memory::new();
    let x = mem.alloc_from("x", F32, &[300.7]);
    let i = poisoned(&mut mem, "i", I32, 4);
    let h = poisoned(&mut mem, "h", F16, 1);
    let b = poisoned(&mut mem, "b", I8, 1);
    run(&f, &[Arg::Buffer(x), Arg::Buffer(i), Arg::Buffer(h), Arg::Buffer(b)], [1, 1, 1], &mut mem);
    let bits = 300.7f32.to_bits() as i32 as f64;
    assert_eq!(mem.read_f64(i), [bits, 127.0, 1.0, 1.0]);
    assert_eq!(mem.read_f64(h), [300.75]); // nearest fp16
    assert_eq!(mem.read_f64(b), [127.0]); // the store converts to the pointee type
}

#[test]
fn pointer_arithmetic() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(X, Out, n):
    p = X + 3
    p -= 1
    p += n
    q = 1 + X
    tl.store(Out, tl.load(p) + tl.load(q))
    tl.static_print(p.dtype, (X + tl.arange(0, 4)).dtype)
"#
    );
    let e = elab_spec("test.py", &src, "k", &Specialization::new(vec![ptr(F32), ptr(F32), ArgSpec::Int(I32, false)]));
    check_ir(&e.func);
    assert_eq!(e.static_prints, ["pointer<float32> pointer<float32>"]);
    let mut mem = Memory::new();
    let x = mem.alloc_from("x", F32, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let out = poisoned(&mut mem, "out", F32, 1);
    run(&e.func, &[Arg::Buffer(x), Arg::Buffer(out), Arg::Int(2)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(out), [4.0 + 1.0]);
}

#[test]
fn unsigned_and_negative_python_numbers_do_not_mix() {
    let src = format!("{PRELUDE}@triton.jit\ndef k(X):\n    x = tl.load(X)\n    y = x + -1\n");
    let msg = elab_error(&src, "k", vec![ptr(U32)]);
    assert!(msg.contains("cannot combine an unsigned tensor with a negative Python number"), "{msg}");
}

/// `...` stands for as many `:` as the dims the other indices leave out (`x[..., None]`, `x[None, ...]`,
/// `x[..., None, :]`); a second ellipsis is an error.
#[test]
fn ellipsis_indexing() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(Out):
    x = tl.zeros([4, 8], dtype=tl.float32)
    a = x[..., None]
    b = x[None, ...]
    c = x[..., None, :]
    d = x[:, ..., None]
    e = x[...]
    tl.static_assert(a.shape == (4, 8, 1) and b.shape == (1, 4, 8) and c.shape == (4, 1, 8))
    tl.static_assert(d.shape == (4, 8, 1) and e.shape == (4, 8))
    tl.store(Out + tl.arange(0, 8)[None, :] + tl.arange(0, 4)[..., None] * 8, x + 1.0)
"#
    );
    let f = elab("test.py", &src, "k", vec![ArgSpec::Pointer(F32, false)]);
    let mut mem = Memory::new();
    let o = mem.alloc("out", F32, 32);
    run(&f, &[Arg::Buffer(o)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(o), vec![1.0; 32]);
    let bad = format!("{PRELUDE}@triton.jit\ndef k(Out):\n    x = tl.zeros([4], dtype=tl.float32)[..., None, ...]\n");
    let msg = elab_error(&bad, "k", vec![ArgSpec::Pointer(F32, false)]);
    assert!(msg.contains("an index can only have a single ellipsis"), "{msg}");
}
