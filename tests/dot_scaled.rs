//! `tl.dot_scaled` (microscaling formats with e8m0 scales per 32 elements along K, NVFP4's e4m3 scales per 16,
//! operands as raw bits or in their fp8 dtype): the interpreter against a
//! reference computed here from the formats' definitions, the PTX (the upcast lowering: dequantize, scale,
//! an ordinary bf16/fp16 dot on wgmma or mma.sync) on the simulator against the interpreter for sm_90a and
//! sm_80, ptxas acceptance, and the errors.

#[allow(dead_code)]
mod common;
mod sim_common;

use common::{c, ptr};
use sim_common::{RunOptions, V};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::Stage;
use tessel::tile::ScalarType::{self, F32, U8, U16};
use tessel::tile::Target;
use tessel_tile::eval::value::from_bits;

const KERNEL: &str = r#"
import triton
import triton.language as tl


@triton.jit
def mx(Out, A, SA, B, SB, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr,
       AR: tl.constexpr, AC: tl.constexpr, BR: tl.constexpr, BC: tl.constexpr, A_PACK: tl.constexpr,
       B_PACK: tl.constexpr, SCALE_B: tl.constexpr, FAST: tl.constexpr):
    a = tl.load(A + tl.arange(0, AR)[:, None] * AC + tl.arange(0, AC)[None, :])
    b = tl.load(B + tl.arange(0, BR)[:, None] * BC + tl.arange(0, BC)[None, :])
    sa = tl.load(SA + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    if SCALE_B:
        sb = tl.load(SB + tl.arange(0, N)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    else:
        sb = None
    acc = tl.full((M, N), 0.5, tl.float32)
    c = tl.dot_scaled(a, sa, FA, b, sb, FB, acc, fast_math=FAST, lhs_k_pack=A_PACK, rhs_k_pack=B_PACK)
    tl.store(Out + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)
"#;

/// One operand: its format, whether packed along K, and its raw elements (bytes or 16-bit patterns).
struct Operand {
    fmt: &'static str,
    k_pack: bool,
    rows: usize,
    cols: usize,
    raw: Vec<u64>,
}

/// The value of an fp4 (e2m1) nibble.
fn e2m1(n: u64) -> f64 {
    let mag = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0][(n & 7) as usize];
    if n & 8 != 0 { -mag } else { mag }
}

impl Operand {
    /// Deterministic raw elements for a logical `[r, c]` operand (`lhs`: r = M, c = K; `rhs`: r = K, c = N).
    fn new(fmt: &'static str, k_pack: bool, lhs: bool, r: usize, c: usize, seed: u64) -> Operand {
        let (mut rows, mut cols) = (r, c);
        if fmt == "e2m1" {
            // Two values per byte along K (lhs columns, rhs rows), or along M / N without k_pack.
            if k_pack == lhs { cols /= 2 } else { rows /= 2 }
        }
        let elem = elem_of(fmt);
        let raw = (0..(rows * cols) as u64)
            .map(|i| {
                let h = (i * 2654435761 + seed * 40503) >> 7;
                match fmt {
                    "e2m1" => h & 0xff,
                    // fp8: exponents near 1 (no NaN, no overflow in the compute type).
                    "e4m3" => (h & 0x80) | (0x30 + (h % 0x20)),
                    "e5m2" => (h & 0x80) | (0x38 + (h % 0x0c)),
                    // bf16 / fp16 values with small exponents and short mantissas.
                    "bf16" => (h & 0x8000) | 0x3e00 | (h % 0x80) << 1,
                    _ => (h & 0x8000) | 0x3400 | (h % 0x100) << 2,
                }
            })
            .collect();
        let _ = elem;
        Operand { fmt, k_pack, rows, cols, raw }
    }

    /// Logical element `(i, j)` of the `[r, c]` operand (`lhs` packs along its columns, `rhs` along its rows).
    fn value(&self, lhs: bool, i: usize, j: usize) -> f64 {
        match self.fmt {
            "e2m1" => {
                let along_cols = self.k_pack == lhs;
                let (bi, bj, hi) = if along_cols { (i, j / 2, j % 2 == 1) } else { (i / 2, j, i % 2 == 1) };
                let byte = self.raw[bi * self.cols + bj];
                e2m1(if hi { byte >> 4 } else { byte & 15 })
            }
            "e4m3" => from_bits(self.raw[i * self.cols + j], ScalarType::F8E4M3).as_f64(),
            "e5m2" => from_bits(self.raw[i * self.cols + j], ScalarType::F8E5M2).as_f64(),
            "bf16" => from_bits(self.raw[i * self.cols + j], ScalarType::BF16).as_f64(),
            _ => from_bits(self.raw[i * self.cols + j], ScalarType::F16).as_f64(),
        }
    }
}

fn elem_of(fmt: &str) -> ScalarType {
    if matches!(fmt, "bf16" | "fp16") { U16 } else { U8 }
}

/// 2^(s - 127) as an e8m0 scale is read: s = 0 gives 0, 255 NaN.
fn scale(s: u64) -> f64 {
    match s {
        0 => 0.0,
        255 => f64::NAN,
        s => 2f64.powi(s as i32 - 127),
    }
}

struct Case {
    a: Operand,
    b: Operand,
    sa: Vec<u64>,
    sb: Option<Vec<u64>>,
    fast: bool,
}

fn case(fa: &'static str, fb: &'static str, packs: (bool, bool), scale_b: bool, m: usize, n: usize, k: usize) -> Case {
    let a = Operand::new(fa, packs.0, true, m, k, 1);
    let b = Operand::new(fb, packs.1, false, k, n, 2);
    // Scales near 1 (exact in either compute type); one row of A scaled by 0.
    let sa: Vec<u64> = (0..m * k / 32).map(|i| if i / (k / 32) == 3 { 0 } else { 124 + (i as u64 * 7) % 7 }).collect();
    let sb = scale_b.then(|| (0..n * k / 32).map(|i| 125 + (i as u64 * 5) % 5).collect());
    Case { a, b, sa, sb, fast: false }
}

impl Case {
    fn spec(&self, m: usize, n: usize, k: usize) -> Vec<ArgSpec> {
        let s = |x: &str| ArgSpec::Constexpr(ConstValue::Str(x.to_string()));
        let b = |x: bool| ArgSpec::Constexpr(ConstValue::Bool(x));
        vec![
            ptr(F32),
            ptr(elem_of(self.a.fmt)),
            ptr(U8),
            ptr(elem_of(self.b.fmt)),
            ptr(U8),
            c(m as i64),
            c(n as i64),
            c(k as i64),
            s(self.a.fmt),
            s(self.b.fmt),
            c(self.a.rows as i64),
            c(self.a.cols as i64),
            c(self.b.rows as i64),
            c(self.b.cols as i64),
            b(self.a.k_pack),
            b(self.b.k_pack),
            b(self.sb.is_some()),
            b(self.fast),
        ]
    }

    fn vals(&self, m: usize, n: usize) -> Vec<V> {
        let f = |v: &[u64]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
        vec![
            V::Out(F32, m * n),
            V::Buf(elem_of(self.a.fmt), f(&self.a.raw)),
            V::Buf(U8, f(&self.sa)),
            V::Buf(elem_of(self.b.fmt), f(&self.b.raw)),
            V::Buf(U8, f(self.sb.as_deref().unwrap_or(&[0]))),
        ]
    }

    /// `0.5 + sum_k a[i,k] 2^(sa) * b[k,j] 2^(sb)` in f64.
    fn reference(&self, m: usize, n: usize, k: usize) -> Vec<f64> {
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.5;
                for kk in 0..k {
                    let x = self.a.value(true, i, kk) * scale(self.sa[i * (k / 32) + kk / 32]);
                    let y = self.b.value(false, kk, j)
                        * self.sb.as_ref().map_or(1.0, |sb| scale(sb[j * (k / 32) + kk / 32]));
                    s += x * y;
                }
                out[i * n + j] = s;
            }
        }
        out
    }
}

/// The interpreter matches the reference (to f32 accumulation: the products are exact in the compute type),
/// and the simulated PTX matches the interpreter bit for bit, for every pair of formats and packing tested, on
/// sm_90a (wgmma), sm_80 (mma.sync) and sm_100a (the upcast operands on tcgen05); ptxas accepts all three.
#[test]
fn dot_scaled_matches_the_reference_and_the_simulator() {
    let (m, n, k) = (64usize, 32usize, 64usize);
    let cases = [
        ("e2m1", "e4m3", (true, true), true),
        ("e5m2", "bf16", (true, true), false),
        ("fp16", "e2m1", (true, false), true),
        ("e2m1", "e5m2", (false, true), true),
        ("e4m3", "e2m1", (true, true), true),
    ];
    for (fa, fb, packs, scale_b) in cases {
        let cs = case(fa, fb, packs, scale_b, m, n, k);
        let want = cs.reference(m, n, k);
        for target in [Target::Sm90a, Target::Sm80, Target::Sm100a] {
            let opts = RunOptions { file: "mx.py", target, num_warps: 4, num_stages: 3, poison: true };
            let outs = sim_common::run_on(KERNEL, "mx", cs.spec(m, n, k), &opts, &cs.vals(m, n), [1, 1, 1])
                .unwrap_or_else(|e| panic!("{fa} x {fb}, {}: {e}", target.name()));
            let (sim, interp) = &outs[0];
            assert_eq!(sim, interp, "{fa} x {fb}, {}: simulated PTX vs interpreter", target.name());
            for (e, (&got, &w)) in interp.iter().zip(&want).enumerate() {
                assert!((got - w).abs() <= 1e-6 * (1.0 + w.abs()), "{fa} x {fb}: element {e}: {got} vs {w}");
            }
            assert!(interp[3 * n..4 * n].iter().all(|&v| v == 0.5), "{fa} x {fb}: a zero scale zeroes row 3 of A");
            let spec = Specialization::new(cs.spec(m, n, k));
            let ks = tessel::KernelSource { file: "mx.py", source: KERNEL, kernel: "mx", spec: &spec, module: None };
            let Ok(tessel::pipeline::Output::Ptx { kernel, .. }) =
                tessel::pipeline::run(&ks, target, Stage::Ptx, None, &mut Default::default())
            else {
                panic!("no PTX");
            };
            // None of these forms takes the block-scaled MMA (M 64; bf16/fp16; packed along M or N; no scale for
            // B): sm_100a runs the upcast (16-bit) operands on tcgen05 (see
            // `dot_scaled_on_the_block_scaled_tcgen05_mma`).
            let mma = match target {
                Target::Sm90a => "wgmma.mma_async",
                Target::Sm100a => "tcgen05.mma.cta_group::1.kind::f16",
                _ => "mma.sync",
            };
            assert!(kernel.ptx.contains(mma), "{fa} x {fb}: the dot runs on {mma} for {}", target.name());
            // e2m1 beside fp8 with both scales would take the block-scaled MMA but for M 64; the PTX says so.
            let native = [fa, fb].contains(&"e2m1") && [fa, fb].contains(&"e4m3") && scale_b && packs == (true, true);
            let note = "// dot_scaled, not block_scale: the block-scaled MMA is M 128 per instruction";
            assert_eq!(
                kernel.ptx.contains(note),
                native && target == Target::Sm100a,
                "{fa} x {fb}, {}: the note `{note}`",
                target.name()
            );
            if tessel::runtime::find_ptxas().is_some() || std::env::var_os("TESSEL_REQUIRE_PTXAS").is_some() {
                tessel::runtime::assemble(&kernel).unwrap_or_else(|e| panic!("ptxas: {e}"));
            }
        }
    }
}

/// A scale of 255 (e8m0 NaN) makes its 32 products NaN, so every output of that row is NaN; with fast_math the
/// NaN check is skipped and the scale is taken as the exponent field it is (infinity).
#[test]
fn a_nan_scale_poisons_its_row_unless_fast_math() {
    let (m, n, k) = (64usize, 32usize, 64usize);
    let mut cs = case("e4m3", "e4m3", (true, true), false, m, n, k);
    cs.sa[5 * (k / 32) + 1] = 255;
    let opts = RunOptions { file: "mx.py", target: Target::Sm90a, num_warps: 4, num_stages: 3, poison: true };
    let outs = sim_common::run_on(KERNEL, "mx", cs.spec(m, n, k), &opts, &cs.vals(m, n), [1, 1, 1]).unwrap();
    let interp = &outs[0].1;
    assert!(interp[5 * n..6 * n].iter().all(|v| v.is_nan()), "row 5 is NaN");
    assert!(interp.iter().enumerate().all(|(e, v)| (e / n == 5) == v.is_nan()), "only row 5");
    cs.fast = true;
    let outs = sim_common::run_on(KERNEL, "mx", cs.spec(m, n, k), &opts, &cs.vals(m, n), [1, 1, 1]).unwrap();
    let same = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan());
    let differ = outs[0].0.iter().zip(&outs[0].1).position(|(&x, &y)| !same(x, y));
    assert_eq!(differ, None, "fast_math: simulated PTX vs interpreter (first differing element)");
    assert!(outs[0].1[5 * n..6 * n].iter().any(|v| v.is_infinite() || v.is_nan()), "fast_math: scale 255 is inf");
}

/// Unsupported formats, wrong element types and wrong scale shapes are errors at the call, naming the cause.
#[test]
fn dot_scaled_errors_point_at_the_call() {
    let kernel = |fa: &str, a_ty: &str, sa_cols: usize, k_pack: &str| {
        format!(
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(Out, A, S, B):\n    a = tl.load(A + \
             tl.arange(0, 16)[:, None] * 64 + tl.arange(0, 64)[None, :]).to({a_ty}, bitcast=True)\n    b = tl.load(B \
             + tl.arange(0, 64)[:, None] * 16 + tl.arange(0, 16)[None, :])\n    s = tl.load(S + tl.arange(0, \
             16)[:, None] * {sa_cols} + tl.arange(0, {sa_cols})[None, :])\n    c = tl.dot_scaled(a, s, \"{fa}\", b, \
             None, \"e4m3\"{k_pack})\n    tl.store(Out + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], \
             c)\n"
        )
    };
    let spec = Specialization::new(vec![ptr(F32), ptr(U8), ptr(U8), ptr(U8)]);
    let cases = [
        (kernel("e3m2", "tl.uint8", 2, ""), "lhs_format must be one of e2m1, e4m3, e5m2, bf16, fp16, got 'e3m2'"),
        (kernel("bf16", "tl.uint8", 2, ""), "a bf16 lhs must hold uint16 or bf16, got uint8"),
        (kernel("e4m3", "tl.uint8", 4, ""), "lhs_scale must have shape [16, 2], got [16, 4]"),
        (kernel("e4m3", "tl.uint8", 2, ", lhs_k_pack=False"), "only e2m1 operands can be packed along another dim"),
    ];
    for (src, want) in cases {
        let ks = tessel::KernelSource { file: "t.py", source: &src, kernel: "k", spec: &spec, module: None };
        let Err(e) = tessel::pipeline::run(&ks, Target::Sm90a, Stage::Tile, None, &mut Default::default()) else {
            panic!("`{want}`: elaborated");
        };
        let msg = e.to_string();
        assert!(msg.contains(want), "{msg}");
        assert!(msg.contains("c = tl.dot_scaled("), "the error points at the call:\n{msg}");
    }
}

const TYPED: &str = r#"
import triton
import triton.language as tl


@triton.jit
def mx_typed(Out, A, SA, B, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, FA: tl.constexpr, AC: tl.constexpr,
             G: tl.constexpr):
    a = tl.load(A + tl.arange(0, M)[:, None] * AC + tl.arange(0, AC)[None, :])
    sa = tl.load(SA + tl.arange(0, M)[:, None] * (K // G) + tl.arange(0, K // G)[None, :])
    b = tl.load(B + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    c = tl.dot_scaled(a, sa, FA, b, None, "e4m3")
    tl.store(Out + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)
"#;

/// Operands in their fp8 dtype (B is fp8e4nv, not raw bytes), and NVFP4 (e2m1 with fp8e4nv scales, one per 16
/// elements along K) beside e5m2 with e8m0 scales: the interpreter matches the reference and the simulated PTX
/// matches the interpreter on every target.
#[test]
fn typed_fp8_operands_and_nvfp4_scales() {
    use tessel::tile::ScalarType::{F8E4M3, F8E5M2};
    let (m, n, k) = (32usize, 32usize, 64usize);
    let fp8 = |bits: u64, t| from_bits(bits, t).as_f64();
    // B: fp8e4nv values with exponents near 1, both signs.
    let b: Vec<f64> = (0..(k * n) as u64).map(|i| fp8((i * 37 % 0x10) | 0x30 | (i & 1) << 7, F8E4M3)).collect();
    for (fa, group) in [("e2m1", 16usize), ("e5m2", 32)] {
        let (a_elem, ac) = if fa == "e2m1" { (U8, k / 2) } else { (F8E5M2, k) };
        let a_raw: Vec<u64> = (0..(m * ac) as u64)
            .map(|i| if fa == "e2m1" { ((i * 2654435761) >> 7) & 0xff } else { (i * 13 % 0x0c + 0x38) | (i & 1) << 7 })
            .collect();
        let a_val = |i: usize, kk: usize| {
            if fa == "e2m1" {
                let byte = a_raw[i * ac + kk / 2];
                e2m1(if kk % 2 == 1 { byte >> 4 } else { byte & 15 })
            } else {
                fp8(a_raw[i * ac + kk], F8E5M2)
            }
        };
        // NVFP4's scales are e4m3 values (both signs; row 3 zero), the MX scales e8m0 exponents.
        let (s_elem, s_vals): (ScalarType, Vec<f64>) = if group == 16 {
            let v = (0..(m * k / 16) as u64).map(|i| {
                if i as usize / (k / 16) == 3 { 0.0 } else { fp8((0x28 + i * 5 % 24) | (i % 3 / 2) << 7, F8E4M3) }
            });
            (F8E4M3, v.collect())
        } else {
            (U8, (0..m * k / 32).map(|i| (124 + i % 7) as f64).collect())
        };
        let scale_of = |i: usize, kk: usize| {
            let s = s_vals[i * (k / group) + kk / group];
            if group == 16 { s } else { scale(s as u64) }
        };
        let mut want = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                want[i * n + j] = (0..k).map(|kk| a_val(i, kk) * scale_of(i, kk) * b[kk * n + j]).sum();
            }
        }
        let str_arg = |x: &str| ArgSpec::Constexpr(ConstValue::Str(x.to_string()));
        let spec = vec![
            ptr(F32),
            ptr(a_elem),
            ptr(s_elem),
            ptr(F8E4M3),
            c(m as i64),
            c(n as i64),
            c(k as i64),
            str_arg(fa),
            c(ac as i64),
            c(group as i64),
        ];
        let a_buf = if fa == "e2m1" {
            a_raw.iter().map(|&r| r as f64).collect()
        } else {
            (0..m * ac).map(|e| a_val(e / ac, e % ac)).collect()
        };
        let vals =
            vec![V::Out(F32, m * n), V::Buf(a_elem, a_buf), V::Buf(s_elem, s_vals.clone()), V::Buf(F8E4M3, b.clone())];
        for target in [Target::Sm90a, Target::Sm80, Target::Sm100a] {
            let opts = RunOptions { file: "mx_typed.py", target, num_warps: 4, num_stages: 3, poison: true };
            let outs = sim_common::run_on(TYPED, "mx_typed", spec.clone(), &opts, &vals, [1, 1, 1])
                .unwrap_or_else(|e| panic!("{fa}, {}: {e}", target.name()));
            let (sim, interp) = &outs[0];
            assert_eq!(sim, interp, "{fa}, {}: simulated PTX vs interpreter", target.name());
            for (e, (&got, &w)) in interp.iter().zip(&want).enumerate() {
                assert!((got - w).abs() <= 1e-5 * (1.0 + w.abs()), "{fa}: element {e}: {got} vs {w}");
            }
        }
    }
}

/// NVFP4's e4m3 scales go with e2m1 operands only, as in Triton.
#[test]
fn e4m3_scales_need_e2m1_operands() {
    use tessel::tile::ScalarType::F8E4M3;
    let spec = vec![
        ptr(F32),
        ptr(F8E4M3),
        ptr(F8E4M3),
        ptr(F8E4M3),
        c(16),
        c(16),
        c(32),
        ArgSpec::Constexpr(ConstValue::Str("e4m3".into())),
        c(32),
        c(16),
    ];
    let spec = Specialization::new(spec);
    let ks = tessel::KernelSource { file: "t.py", source: TYPED, kernel: "mx_typed", spec: &spec, module: None };
    let Err(e) = tessel::pipeline::run(&ks, Target::Sm90a, Stage::Tile, None, &mut Default::default()) else {
        panic!("elaborated");
    };
    let msg = e.to_string();
    assert!(msg.contains("fp8e4nv scales go with e2m1 operands (NVFP4), not e4m3"), "{msg}");
    assert!(msg.contains("c = tl.dot_scaled("), "the error points at the call:\n{msg}");
}

const AUTO: &str = "tests/kernels/auto_dot_scaled.py";

/// `count` raw operand bytes of `fmt` (the kernel's buffers hold bits): e2m1 pairs (any byte), or fp8 values
/// without the NaN encodings.
fn raw_operand(fmt: &str, count: usize, rng: &mut tessel_math::testing::Rng) -> Vec<f64> {
    let nan = |b: u64| match fmt {
        "e4m3" => b & 0x7f == 0x7f,
        "e5m2" => b & 0x7c == 0x7c,
        _ => false,
    };
    (0..count).map(|_| rng.next_u64() & 0xff).map(|b| if nan(b) { b & 0xbb } else { b } as f64).collect()
}

/// Value `k` of row `r` of an operand `[rows, K / per_byte]` of `fmt` held as raw bytes in `buf`.
fn operand_value(fmt: &str, buf: &[f64], k_total: usize, r: usize, k: usize) -> f64 {
    match fmt {
        "e2m1" => {
            let byte = buf[r * k_total / 2 + k / 2] as u64;
            e2m1(if k % 2 == 1 { byte >> 4 } else { byte & 15 })
        }
        "e4m3" => from_bits(buf[r * k_total + k] as u64, ScalarType::F8E4M3).as_f64(),
        _ => from_bits(buf[r * k_total + k] as u64, ScalarType::F8E5M2).as_f64(),
    }
}

/// `tests/kernels/auto_dot_scaled.py` on sm_100a, a K loop of two steps over ragged 200 x 144 tiles: the forms the
/// block-scaled MMA takes (mxfp8, e5m2 x e4m3, mxfp4, nvfp4, mixed) hold its instruction in the PTX, ptxas accepts
/// them, the simulated PTX equals the interpreter bit for bit and the interpreter equals the float64 reference to f32
/// accumulation, scales read as the MMA reads them (e8m0 0 is 2^-127, e4m3 scales unsigned), and the tile IR in the
/// interpreter equals the lowered kernel. Mixed e4m3 x e2m1 runs with its e2m1 operand converted to e4m3 (the same
/// values: the MMA would read it padded to a byte per value).
#[test]
fn dot_scaled_on_the_block_scaled_tcgen05_mma() {
    use tessel::tile::ScalarType::F8E4M3;
    let src = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(AUTO)).unwrap();
    let (m, n, k, bm, bn, bk) = (200usize, 144usize, 256usize, 128usize, 128usize, 128usize);
    let cases = [
        ("e4m3", "e4m3", 32usize, "kind::mxf8f6f4.block_scale"),
        ("e5m2", "e4m3", 32, "kind::mxf8f6f4.block_scale"),
        ("e2m1", "e2m1", 32, "kind::mxf4.block_scale"),
        ("e2m1", "e2m1", 16, "kind::mxf4nvf4.block_scale"),
        ("e4m3", "e2m1", 32, "kind::mxf8f6f4.block_scale"),
    ];
    let mut rng = tessel_math::testing::Rng::new(7);
    for (fa, fb, vec, want_ptx) in cases {
        let what = format!("{fa} x {fb}, VEC {vec}");
        let per_byte = |f: &str| if f == "e2m1" { 2 } else { 1 };
        let a = raw_operand(fa, m * k / per_byte(fa), &mut rng);
        let b = raw_operand(fb, n * k / per_byte(fb), &mut rng);
        // Scales: e8m0 exponents 2^-4 .. 2^3, or positive e4m3 values near 1 (nvfp4).
        let s_elem = if vec == 16 { F8E4M3 } else { U8 };
        let mut scales = |rows: usize| -> Vec<f64> {
            (0..rows * k / vec)
                .map(|_| {
                    let r = rng.next_u64();
                    // nvfp4: some scales negative (the MMA reads e4m3 scales unsigned).
                    if vec == 16 {
                        from_bits(0x30 + r % 24 + (r & 1) * 0x80, F8E4M3).as_f64()
                    } else {
                        (123 + r % 8) as f64
                    }
                })
                .collect()
        };
        let (mut sa, sb) = (scales(m), scales(n));
        if vec == 32 {
            // Row 5 of A scaled by e8m0 0: 2^-127 on the MMA (the upcast operands' bf16 would make it 0).
            sa[5 * (k / vec)..6 * (k / vec)].fill(0.0);
        }
        let scale_value = |s: f64| if vec == 16 { s.abs() } else { 2f64.powi(s as i32 - 127) };
        // Each output's float64 value and the sum of its terms' magnitudes (what f32 accumulation errs against).
        let mut want = vec![(0.0, 0.0); m * n];
        for i in 0..m {
            for j in 0..n {
                for kk in 0..k {
                    let t = operand_value(fa, &a, k, i, kk)
                        * scale_value(sa[i * (k / vec) + kk / vec])
                        * operand_value(fb, &b, k, j, kk)
                        * scale_value(sb[j * (k / vec) + kk / vec]);
                    want[i * n + j].0 += t;
                    want[i * n + j].1 += t.abs();
                }
            }
        }
        let s = |x: &str| ArgSpec::Constexpr(ConstValue::Str(x.to_string()));
        let spec = vec![
            ptr(F32),
            ptr(elem_of(fa)),
            ptr(s_elem),
            ptr(elem_of(fb)),
            ptr(s_elem),
            ArgSpec::Int(tessel::tile::ScalarType::I32, false),
            ArgSpec::Int(tessel::tile::ScalarType::I32, true),
            c(k as i64),
            s(fa),
            s(fb),
            c(vec as i64),
            c(bm as i64),
            c(bn as i64),
            c(bk as i64),
        ];
        let specialization = Specialization::new(spec.clone());
        let ks =
            tessel::KernelSource { file: AUTO, source: &src, kernel: "mx_matmul", spec: &specialization, module: None };
        let Ok(tessel::pipeline::Output::Ptx { kernel, .. }) =
            tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default())
        else {
            panic!("{what}: no PTX");
        };
        assert!(kernel.ptx.contains(want_ptx), "{what}: wants `{want_ptx}` in\n{}", kernel.ptx);
        // In the K loop the scales reach tensor memory by tcgen05.cp from shared memory, stored in the copy's
        // order: no thread writes tensor memory, and one thread sync (fences around a CTA barrier) precedes the
        // copies and the MMA.
        let loop_body = &kernel.ptx[kernel.ptx.find("$L_for_head").expect("a K loop")..];
        let loop_body = &loop_body[..loop_body.find("bra.uni $L_for_head").expect("its back edge")];
        let count = |s: &str| loop_body.matches(s).count();
        assert!(count("tcgen05.cp.cta_group::1.32x128b.warpx4") >= 2 && count("tcgen05.st.") == 0, "{what}");
        assert_eq!(count("tcgen05.fence::before_thread_sync"), 1, "{what}:\n{loop_body}");
        if tessel::runtime::find_ptxas().is_some() || std::env::var_os("TESSEL_REQUIRE_PTXAS").is_some() {
            tessel::runtime::assemble(&kernel).unwrap_or_else(|e| panic!("{what}: ptxas: {e}"));
        }
        let vals = vec![
            V::Out(F32, m * n),
            V::Buf(elem_of(fa), a.clone()),
            V::Buf(s_elem, sa.clone()),
            V::Buf(elem_of(fb), b.clone()),
            V::Buf(s_elem, sb.clone()),
            V::Int(m as i64),
            V::Int(n as i64),
        ];
        // The tile IR in the interpreter (where `dot_scaled` is still one op) computes what the lowered kernel
        // computes: the scales as the MMA reads them.
        let Ok(tessel::pipeline::Output::Tile(tile_ir)) =
            tessel::pipeline::run(&ks, Target::Sm100a, Stage::Tile, None, &mut Default::default())
        else {
            panic!("{what}: no tile IR");
        };
        let mut mem = tessel::interp::memory::Memory::new();
        let out = mem.alloc_from("c", F32, &vec![f64::NAN; m * n]);
        let mut args = vec![tessel::interp::Arg::Buffer(out)];
        for (name, t, data) in
            [("a", elem_of(fa), &a), ("sa", s_elem, &sa), ("b", elem_of(fb), &b), ("sb", s_elem, &sb)]
        {
            args.push(tessel::interp::Arg::Buffer(mem.alloc_from(name, t, data)));
        }
        args.extend([tessel::interp::Arg::Int(m as i64), tessel::interp::Arg::Int(n as i64)]);
        let grid = [m.div_ceil(bm) as u32, n.div_ceil(bn) as u32, 1];
        tessel::interp::run(&tile_ir, &args, grid, &mut mem).unwrap_or_else(|e| panic!("{what}: tile IR: {e}"));
        let tile_out = mem.buffer(out).bytes.clone();
        let opts = RunOptions { file: AUTO, target: Target::Sm100a, num_warps: 4, num_stages: 3, poison: true };
        let grid = [m.div_ceil(bm) as u32, n.div_ceil(bn) as u32, 1];
        let outs =
            sim_common::run_on(&src, "mx_matmul", spec, &opts, &vals, grid).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        let differ = (0..sim.len()).filter(|&e| sim[e] != interp[e]).count();
        assert_eq!(differ, 0, "{what}: the simulated PTX differs from the interpreter in {differ} elements");
        let f32_bytes: Vec<u8> = interp.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
        assert!(f32_bytes == tile_out, "{what}: the tile IR in the interpreter differs from the lowered kernel");
        for (e, (&got, &(w, mag))) in interp.iter().zip(&want).enumerate() {
            assert!((got - w).abs() <= 2e-5 * mag, "{what}: element {e}: {got} vs {w}");
        }
    }
}

/// Scales TMA-loaded as packed 5-D blocks and unpacked by the kernel (`mx_matmul_tma`, tutorial 10's scheme,
/// written for this test): the scale descriptors get an unswizzled block layout (the default would swizzle
/// nvfp4's 2 KiB blocks), and the pipelined K loop copies each block into tensor memory by `tcgen05.cp` straight
/// from its TMA ring slot, seen through the unpacking's views, with no shared-memory load or store of scales.
/// The simulated PTX equals the interpreter bit for bit.
#[test]
fn tma_scale_blocks_reach_tensor_memory_from_their_ring() {
    let src = std::fs::read_to_string(AUTO).unwrap();
    let desc = |elem: ScalarType, block: &[u32]| ArgSpec::TensorDesc {
        elem,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    let s = |x: &str| ArgSpec::Constexpr(ConstValue::Str(x.to_string()));
    let mut rng = tessel_math::testing::Rng::new(34);
    // (formats, values per byte of A and B, VEC, BK): mxfp8 and nvfp4 (e4m3 scales, 2 KiB blocks).
    for (fmt, per_byte, vec, bk) in [("e4m3", 1u32, 32u32, 128u32), ("e2m1", 2, 16, 256)] {
        let (m, n, k, bm, bn) = (128usize, 256usize, 2 * bk as usize, 128u32, 256u32);
        let op_elem = if per_byte == 2 { U8 } else { tessel::tile::ScalarType::F8E4M3 };
        let s_elem = if vec == 16 { tessel::tile::ScalarType::F8E4M3 } else { U8 };
        let rk = bk / vec / 4;
        let mut operand = |rows: usize| -> Vec<f64> {
            let count = rows * k / per_byte as usize;
            if per_byte == 2 {
                (0..count).map(|_| rng.below(256) as f64).collect()
            } else {
                tessel::tile::testing::vec_of(&mut rng, count, op_elem)
            }
        };
        let (a, b) = (operand(m), operand(n));
        let mut scales = |rows: usize| -> (Vec<f64>, Vec<u32>) {
            let shape = vec![1, (rows / 128) as u32, k as u32 / vec / 4, 2, 256];
            let count = shape.iter().product::<u32>() as usize;
            let data = if vec == 16 {
                (0..count).map(|i| [0.5, 1.0, 2.0, 0.25][(i * 7 + rows) % 4]).collect()
            } else {
                (0..count).map(|_| (124 + rng.below(4)) as f64).collect()
            };
            (data, shape)
        };
        let ((sa, sa_shape), (sb, sb_shape)) = (scales(m), scales(n));
        let mut spec = vec![ptr(F32), desc(op_elem, &[bm, bk / per_byte])];
        spec.extend([desc(s_elem, &[1, 1, rk, 2, 256]), desc(op_elem, &[bn, bk / per_byte])]);
        spec.extend([desc(s_elem, &[1, 2, rk, 2, 256]), ArgSpec::Int(tessel::tile::ScalarType::I32, true)]);
        spec.extend([c(k as i64), c(vec as i64), c(bm as i64), c(bn as i64), c(bk as i64), s(fmt), s(fmt)]);
        spec.extend([c(per_byte as i64), c(per_byte as i64)]);
        let what = format!("{fmt} VEC {vec}");
        let specialization = Specialization::new(spec.clone());
        let ks = tessel::KernelSource {
            file: AUTO,
            source: &src,
            kernel: "mx_matmul_tma",
            spec: &specialization,
            module: None,
        };
        let Ok(tessel::pipeline::Output::Ptx { kernel, .. }) =
            tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default())
        else {
            panic!("{what}: no PTX");
        };
        let loop_body = &kernel.ptx[kernel.ptx.find("$L_for_head").expect("a K loop")..];
        let loop_body = &loop_body[..loop_body.find("bra.uni $L_for_head").expect("its back edge")];
        let count = |x: &str| loop_body.matches(x).count();
        assert!(count("tcgen05.cp.cta_group::1.32x128b.warpx4") >= 3, "{what}:\n{loop_body}");
        assert_eq!((count("ld.shared"), count("st.shared")), (0, 0), "{what}:\n{loop_body}");
        let vals = [
            V::Out(F32, m * n),
            V::Desc(op_elem, Some(a), vec![m as u32, (k / per_byte as usize) as u32]),
            V::Desc(s_elem, Some(sa), sa_shape),
            V::Desc(op_elem, Some(b), vec![n as u32, (k / per_byte as usize) as u32]),
            V::Desc(s_elem, Some(sb), sb_shape),
            V::Int(n as i64),
        ];
        let opts = RunOptions { file: AUTO, target: Target::Sm100a, num_warps: 4, num_stages: 3, poison: true };
        let outs = sim_common::run_on(&src, "mx_matmul_tma", spec, &opts, &vals, [1, 1, 1])
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: the interpreter left elements unwritten");
        assert!(sim == interp, "{what}: the simulated PTX differs from the interpreter");
    }
}
