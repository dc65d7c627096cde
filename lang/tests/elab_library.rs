//! The library: Philox random numbers (bit-exact against the Random123 known-answer vectors), reductions with
//! indices and ties, scans, shape ops, atomics, math, tensor descriptors and debugging ops, each run in the
//! interpreter.

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

fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

/// Philox4x32-10 known-answer vectors from Random123's `kat_vectors`: counter, key, result.
const PHILOX_KAT: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
    ([0, 0, 0, 0], [0, 0], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
    ([u32::MAX; 4], [u32::MAX; 2], [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
    (
        [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
        [0xa4093822, 0x299f31d0],
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
    ),
];

/// A reference Philox4x32-10 (the Random123 round function), checked against the vectors below.
fn philox(mut c: [u32; 4], mut k: [u32; 2]) -> [u32; 4] {
    for _ in 0..10 {
        let p0 = 0xD2511F53u64 * c[0] as u64;
        let p1 = 0xCD9E8D57u64 * c[2] as u64;
        c = [(p1 >> 32) as u32 ^ c[1] ^ k[0], p1 as u32, (p0 >> 32) as u32 ^ c[3] ^ k[1], p0 as u32];
        k = [k[0].wrapping_add(0x9E3779B9), k[1].wrapping_add(0xBB67AE85)];
    }
    c
}

#[test]
fn reference_philox_matches_random123() {
    for (ctr, key, want) in PHILOX_KAT {
        assert_eq!(philox(ctr, key), want);
    }
}

#[test]
fn tl_philox_is_bit_exact_with_random123() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(C, Out, seed):
    c0 = tl.load(C + 0)
    c1 = tl.load(C + 1)
    c2 = tl.load(C + 2)
    c3 = tl.load(C + 3)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3)
    tl.store(Out + 0, r0)
    tl.store(Out + 1, r1)
    tl.store(Out + 2, r2)
    tl.store(Out + 3, r3)
"#
    );
    let f = elab("test.py", &src, "k", vec![ptr(U32), ptr(U32), ArgSpec::Int(I64, false)]);
    let text = f.to_string();
    assert_eq!(text.matches("umulhi").count(), 20, "ten rounds of two multiplies:\n{text}");
    for (ctr, key, want) in PHILOX_KAT {
        let mut mem = Memory::new();
        let bc = mem.alloc_from("c", U32, &ctr.map(|x| x as f64));
        let out = poisoned(&mut mem, "out", U32, 4);
        let seed = ((key[1] as u64) << 32 | key[0] as u64) as i64;
        run(&f, &[Arg::Buffer(bc), Arg::Buffer(out), Arg::Int(seed)], [1, 1, 1], &mut mem);
        assert_eq!(mem.read_f64(out), want.map(|x| x as f64), "key {key:x?} counter {ctr:x?}");
    }
}

#[test]
fn tl_rand_is_bit_exact_and_randn_is_normal() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(U, N, I, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(U + offs, tl.rand(seed, offs), mask=mask)
    tl.store(N + offs, tl.randn(seed, offs), mask=mask)
    tl.store(I + offs, tl.randint(seed, offs), mask=mask)
"#
    );
    let f = elab(
        "test.py",
        &src,
        "k",
        vec![ptr(F32), ptr(F32), ptr(U32), ArgSpec::Int(I32, false), ArgSpec::Int(I32, false), c(256)],
    );
    let n = 1000;
    let seed = 1234i64;
    let mut mem = Memory::new();
    let (u, nrm, ints) =
        (poisoned(&mut mem, "u", F32, n), poisoned(&mut mem, "n", F32, n), poisoned(&mut mem, "i", U32, n));
    run(
        &f,
        &[Arg::Buffer(u), Arg::Buffer(nrm), Arg::Buffer(ints), Arg::Int(seed), Arg::Int(n as i64)],
        [4, 1, 1],
        &mut mem,
    );
    let (u, nrm, ints) = (mem.read_f64(u), mem.read_f64(nrm), mem.read_f64(ints));
    let key = [seed as u32, (seed as u64 >> 32) as u32];
    for i in 0..n {
        let r = philox([i as u32, 0, 0, 0], key);
        assert_eq!(ints[i], r[0] as f64, "randint at {i}");
        // uint_to_uniform_float: the int32 bits, folded to non-negative, times a float32 scale.
        let x = r[0] as i32;
        let x = if x < 0 { x.wrapping_neg().wrapping_sub(1) } else { x };
        let want = x as f32 * 4.6566127342e-10f64 as f32;
        assert_eq!(u[i], want as f64, "rand at {i}");
    }
    let mean = nrm.iter().sum::<f64>() / n as f64;
    let var = nrm.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
    assert!(mean.abs() < 0.1 && (var - 1.0).abs() < 0.15, "randn: mean {mean}, variance {var}");
    assert!(u.iter().all(|&x| (0.0..1.0).contains(&x)));
}

#[test]
fn reductions_with_indices_scans_and_keep_dims() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(X, Out, I):
    rows = tl.arange(0, 4)
    cols = tl.arange(0, 8)
    x = tl.load(X + rows[:, None] * 8 + cols[None, :])
    tl.store(I + rows, tl.argmax(x, axis=1))
    tl.store(I + 4 + cols, tl.argmin(x, axis=0))
    m = tl.max(x, axis=1, keep_dims=True)
    tl.static_assert(m.shape == (4, 1))
    tl.store(Out + rows, tl.sum(x - m, axis=1))
    tl.store(Out + 4, tl.sum(x))
    tl.store(Out + 5 + cols, tl.cumsum(tl.sum(x, axis=0), axis=0))
    ints = x.to(tl.int32)
    tl.store(I + 12, tl.xor_sum(tl.reshape(ints, (32,)), axis=0))
    tl.store(Out + 13, tl.max(x))
    mx, idx = tl.max(x, axis=0, return_indices=True)
    tl.store(Out + 14 + cols, mx)
    tl.store(I + 13 + cols, idx)
"#
    );
    let f = elab("test.py", &src, "k", vec![ptr(F32), ptr(F32), ptr(I32)]);
    // Ties everywhere: argmax/argmin must pick the smallest index.
    let x: Vec<f64> = (0..32).map(|i| ((i * 7) % 5) as f64).collect();
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let out = poisoned(&mut mem, "out", F32, 22);
    let idx = poisoned(&mut mem, "idx", I32, 21);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(out), Arg::Buffer(idx)], [1, 1, 1], &mut mem);
    let (out, idx) = (mem.read_f64(out), mem.read_f64(idx));
    let at = |r: usize, c: usize| x[r * 8 + c];
    for r in 0..4 {
        let best = (0..8).fold(0, |b, c| if at(r, c) > at(r, b) { c } else { b });
        assert_eq!(idx[r], best as f64, "argmax row {r}");
        let m = (0..8).map(|c| at(r, c)).fold(f64::MIN, f64::max);
        assert_eq!(out[r], (0..8).map(|c| at(r, c) - m).sum::<f64>());
    }
    for c in 0..8 {
        let best = (0..4).fold(0, |b, r| if at(r, c) < at(b, c) { r } else { b });
        assert_eq!(idx[4 + c], best as f64, "argmin col {c}");
        let best_max = (0..4).fold(0, |b, r| if at(r, c) > at(b, c) { r } else { b });
        assert_eq!(idx[13 + c], best_max as f64, "max index col {c}");
        assert_eq!(out[14 + c], at(best_max, c));
    }
    assert_eq!(out[4], x.iter().sum::<f64>());
    let col_sums: Vec<f64> = (0..8).map(|c| (0..4).map(|r| at(r, c)).sum()).collect();
    let cum: Vec<f64> = col_sums
        .iter()
        .scan(0.0, |s, v| {
            *s += v;
            Some(*s)
        })
        .collect();
    assert_eq!(out[5..13], cum[..]);
    assert_eq!(idx[12], x.iter().fold(0i64, |a, &v| a ^ v as i64) as f64);
    assert_eq!(out[13], 4.0);
}

#[test]
fn shape_ops_move_elements_as_triton_does() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(X, Out):
    i = tl.arange(0, 8)
    x = tl.load(X + i)
    pair = tl.join(x, x * 10)
    tl.static_assert(pair.shape == (8, 2))
    a, b = tl.split(pair)
    m = tl.reshape(x, 2, 4)
    t = tl.trans(m)
    p = tl.permute(tl.reshape(x, (2, 2, 2)), (2, 0, 1))
    cat = tl.cat(x, b, can_reorder=True)
    tl.store(Out + tl.arange(0, 16), tl.reshape(pair, (16,)))
    tl.store(Out + 16 + i, a + b)
    tl.store(Out + 24 + i, tl.reshape(t, (8,)))
    tl.store(Out + 32 + i, tl.ravel(p))
    tl.store(Out + 40 + tl.arange(0, 16), cat)
    tl.store(Out + 56 + i, tl.broadcast_to(x[None, :], (2, 8)).sum(axis=0))
    tl.store(Out + 64 + i, tl.interleave(x, -x).reshape(2, 8).sum(0))
"#
    );
    let f = elab("test.py", &src, "k", vec![ptr(F32), ptr(F32)]);
    let x: Vec<f64> = (1..=8).map(|v| v as f64).collect();
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let out = poisoned(&mut mem, "out", F32, 72);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(out)], [1, 1, 1], &mut mem);
    let out = mem.read_f64(out);
    let joined: Vec<f64> = x.iter().flat_map(|&v| [v, 10.0 * v]).collect();
    assert_eq!(out[..16], joined[..]);
    assert_eq!(out[16..24], x.iter().map(|v| 11.0 * v).collect::<Vec<_>>()[..]);
    let trans: Vec<f64> = (0..4).flat_map(|c| (0..2).map(move |r| (r * 4 + c + 1) as f64)).collect();
    assert_eq!(out[24..32], trans[..]);
    // permute (2, 0, 1): out[a][b][c] = in[b][c][a].
    let perm: Vec<f64> = (0..8)
        .map(|o| {
            let (a, b, c) = (o / 4, (o / 2) % 2, o % 2);
            x[b * 4 + c * 2 + a]
        })
        .collect();
    assert_eq!(out[32..40], perm[..]);
    let cat: Vec<f64> = x.iter().cloned().chain(x.iter().map(|v| 10.0 * v)).collect();
    assert_eq!(out[40..56], cat[..]);
    assert_eq!(out[56..64], x.iter().map(|v| 2.0 * v).collect::<Vec<_>>()[..]);
    // interleave(x, -x) = [x0, -x0, x1, -x1, ...]; as 2x8, column sums pair elements of the two halves.
    let inter: Vec<f64> = x.iter().flat_map(|&v| [v, -v]).collect();
    let sums: Vec<f64> = (0..8).map(|c| inter[c] + inter[8 + c]).collect();
    assert_eq!(out[64..72], sums[..]);
}

#[test]
fn atomics_math_and_descriptors() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(X, Acc, Out, Desc, n):
    i = tl.arange(0, 16)
    x = tl.load(X + i, mask=i < n, other=1.0)
    old = tl.atomic_add(Acc + (i % 4), x, mask=i < n)
    tl.atomic_max(Acc + 4, tl.max(x, axis=0))
    tl.store(Out + i, tl.fma(x, 2.0, 1.0))
    tl.store(Out + 16 + i, tl.clamp(x, -1.0, 3.0))
    tl.store(Out + 32 + i, tl.where(x > 2, tl.sqrt(tl.abs(x)), tl.exp2(x)))
    tl.store(Out + 48 + i, tl.maximum(x, 4) + tl.minimum(x, 2))
    tl.store(Out + 64, tl.cdiv(n, 4) + triton.cdiv(10, 4) + tl.umulhi(tl.to_tensor(0x80000000).to(tl.uint32), 6))
    desc = tl.make_tensor_descriptor(Desc, shape=[n, 4], strides=[4, 1], block_shape=[8, 4])
    tile = desc.load([8, 0])
    desc.store([0, 0], tile * 2)
    tl.device_print("x", x)
    tl.device_assert(x < 100, "x is small")
"#
    );
    let f = elab("test.py", &src, "k", vec![ptr(F32), ptr(F32), ptr(F32), ptr(F32), ArgSpec::Int(I32, false)]);
    let n = 10;
    let x: Vec<f64> = (0..16).map(|i| i as f64 * 0.5 - 1.0).collect();
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let acc = mem.alloc_from("acc", F32, &[0.0; 5]);
    let out = poisoned(&mut mem, "out", F32, 65);
    let desc: Vec<f64> = (0..40).map(|v| v as f64).collect();
    let bd = mem.alloc_from("desc", F32, &desc);
    let log = run(
        &f,
        &[Arg::Buffer(bx), Arg::Buffer(acc), Arg::Buffer(out), Arg::Buffer(bd), Arg::Int(n)],
        [1, 1, 1],
        &mut mem,
    );
    assert_eq!(log.len(), 16, "one line per element");
    assert!(log[3].starts_with("pid (0, 0, 0) idx (  3)  x: 0.5"), "{}", log[3]);
    let xs: Vec<f64> = (0..16).map(|i| if i < n as usize { x[i] } else { 1.0 }).collect();
    let acc = mem.read_f64(acc);
    for (j, &a) in acc[..4].iter().enumerate() {
        assert_eq!(a, (0..n as usize).filter(|i| i % 4 == j).map(|i| xs[i]).sum::<f64>());
    }
    assert_eq!(acc[4], 3.5);
    let out_v = mem.read_f64(out);
    for i in 0..16 {
        let v = xs[i];
        assert_eq!(out_v[i], v * 2.0 + 1.0);
        assert_eq!(out_v[16 + i], v.clamp(-1.0, 3.0));
        let w = if v > 2.0 { v.abs().sqrt() as f32 as f64 } else { v.exp2() as f32 as f64 };
        assert_eq!(out_v[32 + i], w);
        assert_eq!(out_v[48 + i], v.max(4.0) + v.min(2.0));
    }
    assert_eq!(out_v[64], 3.0 + 3.0 + 3.0);
    // The descriptor loaded rows 8..16 of a 10x4 tensor (rows past 10 read as 0) and stored them doubled at row 0.
    let d = mem.read_f64(bd);
    for r in 0..8 {
        for c in 0..4 {
            let src_row = r + 8;
            let want = if src_row < 10 { 2.0 * desc[src_row * 4 + c] } else { 0.0 };
            assert_eq!(d[r * 4 + c], want, "desc[{r}][{c}]");
        }
    }
}

#[test]
fn static_prints_and_specialization_values() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(X, DTYPE: tl.constexpr, FLAG: tl.constexpr, SCALE: tl.constexpr):
    tl.static_print(DTYPE, FLAG, SCALE, f"{SCALE:.2f}", DTYPE.is_floating(), tl.float8e4nv)
    y = tl.zeros((4,), dtype=DTYPE) + SCALE
    tl.static_print(y.dtype, "done")
"#
    );
    let spec = Specialization::new(vec![
        ptr(F32),
        ArgSpec::Constexpr(ConstValue::Dtype(BF16)),
        ArgSpec::Constexpr(ConstValue::Bool(true)),
        ArgSpec::Constexpr(ConstValue::Float(0.125)),
    ]);
    let e = elab_spec("test.py", &src, "k", &spec);
    check_ir(&e.func);
    assert_eq!(e.static_prints, ["bfloat16 True 0.125 0.12 True float8e4nv", "bfloat16 done"]);
}

/// Float `atomic_max`/`atomic_min` go through the integer atomics on the bits, as Triton builds them: the
/// maximum and minimum of mixed-sign values (−0 included), with the old values returned.
#[test]
fn float_atomic_max_min_order_the_bits() {
    let src = format!(
        "{PRELUDE}{}",
        r#"
@triton.jit
def k(X, Acc, Old):
    i = tl.arange(0, 8)
    x = tl.load(X + i)
    old = tl.atomic_max(Acc + (i % 2), x)
    tl.store(Old + i, old)
    tl.atomic_min(Acc + 2 + (i % 2), x)
"#
    );
    let f = elab("test.py", &src, "k", vec![ptr(F32), ptr(F32), ptr(F32)]);
    let x = [-3.0, 2.5, -0.5, -7.0, 1.0, -0.0, -2.0, 0.25];
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let acc = mem.alloc_from("acc", F32, &[-100.0, -100.0, 100.0, 100.0]);
    let old = poisoned(&mut mem, "old", F32, 8);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(acc), Arg::Buffer(old)], [1, 1, 1], &mut mem);
    let acc = mem.read_f64(acc);
    assert_eq!(acc, [1.0, 2.5, -3.0, -7.0]);
    // Each old value is what the slot held before that element's update: the atomic on the lanes with the
    // sign bit clear runs first, so lane 0 (−3) sees the 1.0 lane 4 left, lane 1 (2.5) the initial −100.
    let old = mem.read_f64(old);
    assert_eq!(old[..2], [1.0, -100.0]);
}
