//! Compiles the hand-written layout-IR kernels under `tests/ir/` to PTX and checks structural facts of the
//! output; when `ptxas` is available (on PATH, or `$PTXAS`), assembles every kernel for sm_80, sm_90a and
//! sm_100a and fails on any error or warning.

use std::path::PathBuf;
use std::process::Command;

use tessel_codegen::{Kernel, Target, compile};
use tessel_tile::parse::parse_func;

fn kernel(name: &str, arch: Target) -> Kernel {
    let path = format!("{}/tests/ir/{name}.tir", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap();
    let mut f = parse_func(&src).unwrap_or_else(|e| panic!("{path}: {e}"));
    f.target = arch;
    tessel_tile::verify::verify(&f).unwrap_or_else(|e| panic!("{path}: {e}"));
    // The layouts are those auto mode would give (shape ops keep data in place, dot operands are
    // DotOperandLayouts of the accumulator's...), so codegen sees what the compiler produces.
    tessel_tile::verify::verify_layouts(&f).unwrap_or_else(|e| panic!("{path}: {e}"));
    compile(&f).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const KERNELS: &[&str] = &[
    "vector_add",
    "softmax_f16",
    "argmax",
    "loop_acc",
    "while_halve",
    "atomic_hist",
    "mixed",
    "convert",
    "int_ptr_casts",
    "if_arange",
    "dot_fma",
    "dot_tf32",
    "dot_types",
    "dot_batched",
    "permute",
    "reshape",
    "join_split",
    "cumsum",
    "scan_reverse",
    "print",
    "assert",
    "bytes",
    "fp8",
    "math",
    "shuffle",
    "shuffle8",
    "stores8",
    "halves",
    "trig_fmod",
    "int_div",
    "trig64",
    "libdevice",
    "libm64",
    "libm_more",
    "libm_special",
    "bessel64",
    "bessel_n",
    "fma_round",
    "cast_round",
    "cfmod",
    "rounding",
];

fn count(ptx: &str, pat: &str) -> usize {
    ptx.matches(pat).count()
}

#[test]
fn vector_add_uses_16_byte_masked_accesses() {
    let k = kernel("vector_add", Target::Sm90a);
    let ptx = &k.ptx;
    assert!(ptx.contains(".version 8.0\n.target sm_90a"), "{ptx}");
    assert!(ptx.contains(".reqntid 128, 1, 1"));
    assert_eq!(k.num_warps, 4);
    // 1024 elements, 128 threads: 8 per thread = two v4 loads per input and two v4 stores, all predicated.
    assert_eq!(count(ptx, "ld.global.v4.b32"), 2, "{ptx}");
    assert_eq!(count(ptx, "ld.global.cg.v4.b32"), 2, "{ptx}");
    assert_eq!(count(ptx, "st.global.v4.b32"), 2, "{ptx}");
    assert_eq!(count(ptx, "@%p"), 6, "{ptx}");
    assert_eq!(count(ptx, "add.rn.f32"), 8);
    assert!(ptx.contains(", %ctaid.x;"), "{ptx}");
    assert_eq!(k.shared_bytes, 0);
    assert!(!ptx.contains("global_smem"));
}

#[test]
fn targets_get_their_isa_versions() {
    for (arch, head) in [
        (Target::Sm80, ".version 7.8\n.target sm_80"),
        (Target::Sm90a, ".version 8.0\n.target sm_90a"),
        (Target::Sm100a, ".version 8.6\n.target sm_100a"),
    ] {
        assert!(kernel("vector_add", arch).ptx.contains(head));
    }
}

#[test]
fn softmax_reduces_with_shuffles_and_shared_memory() {
    let k = kernel("softmax_f16", Target::Sm90a);
    let ptx = &k.ptx;
    // 8 consecutive halves per thread along the row: one 16-byte load and store per row a thread owns.
    assert_eq!(count(ptx, "ld.global.v4.b32"), 1, "{ptx}");
    assert_eq!(count(ptx, "st.global.v4.b32"), 1, "{ptx}");
    // Each of the two reductions: 4 lane bits along the row (butterfly 8, 4, 2, 1), one warp bit via smem.
    assert_eq!(count(ptx, "shfl.sync.bfly.b32"), 8, "{ptx}");
    for m in [1, 2, 4, 8] {
        assert_eq!(count(ptx, &format!(", {m}, 31, -1;")), 2);
    }
    // Widest stride first, as Triton shuffles, so that float sums round as Triton's do.
    let strides: Vec<&str> = ptx
        .lines()
        .filter(|l| l.contains("shfl.sync.bfly.b32"))
        .map(|l| l.split(", ").nth(2).expect("a shuffle's lane mask"))
        .collect();
    assert_eq!(strides, ["8", "4", "2", "1", "8", "4", "2", "1"], "{ptx}");
    assert_eq!(count(ptx, "bar.sync 0"), 4);
    assert!(k.shared_bytes > 0);
    assert!(ptx.contains(".extern .shared .align 1024 .b8 global_smem[];"));
    assert_eq!(count(ptx, "ex2.approx.ftz.f32"), 8);
    // Widened per element; the 8 results of a thread narrowed in pairs.
    assert!(ptx.contains("cvt.f32.f16") && !ptx.contains("cvt.rn.f16.f32"), "{ptx}");
    assert_eq!(count(ptx, "cvt.rn.f16x2.f32"), 4, "{ptx}");
    assert!(ptx.contains("max.f32") && ptx.contains("div.full.f32"));
}

#[test]
fn argmax_shuffles_both_operands() {
    let ptx = kernel("argmax", Target::Sm90a).ptx;
    // 3 lane bits along the row, two operands each; the 4 warps along the row go through shared memory.
    assert_eq!(count(&ptx, "shfl.sync.bfly.b32"), 6, "{ptx}");
    assert!(ptx.contains("selp.b32"));
    assert!(ptx.contains("bar.sync 0"));
    // The 4 warp partials of each operand come back in one vector load (the row each thread holds: 1 group).
    assert_eq!(count(&ptx, "ld.shared.v4.b32"), 2, "{ptx}");
    assert_eq!(count(&ptx, "ld.shared.b32"), 0, "{ptx}");
}

#[test]
fn loops_and_conversions() {
    let ptx = kernel("loop_acc", Target::Sm90a).ptx;
    assert!(ptx.contains("$L_for_head_1:") && ptx.contains("bra.uni $L_for_head_1"), "{ptx}");
    assert!(ptx.contains("st.shared.b32") && ptx.contains("ld.shared.b32"), "{ptx}");
    let ptx = kernel("while_halve", Target::Sm90a).ptx;
    assert!(ptx.contains("$L_while_head_1:"), "{ptx}");
}

#[test]
fn vectors_need_alignment_and_contiguity_facts() {
    // Without `divisible_by_16` the pointers are not known to be 16-byte aligned: scalar accesses.
    let path = format!("{}/tests/ir/vector_add.tir", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).unwrap().replace(", divisible_by_16 = [0, 1, 2, 3]", "");
    let ptx = compile(&parse_func(&src).unwrap()).unwrap().ptx;
    assert!(!ptx.contains(".v4.") && !ptx.contains(".v2."), "{ptx}");
    assert_eq!(count(&ptx, "ld.global.b32"), 8);
    // bf16 pairs travel as one .b32 word; i64 pairs as .v2.b64; the mismatched convert goes through smem.
    let ptx = kernel("mixed", Target::Sm90a).ptx;
    assert_eq!(count(&ptx, "ld.global.b32"), 1, "{ptx}");
    assert_eq!(count(&ptx, "ld.global.v2.b32"), 1, "{ptx}");
    assert_eq!(count(&ptx, "st.global.v2.b64"), 1, "{ptx}");
    assert!(ptx.contains("cvt.f32.bf16") && ptx.contains("cvt.rzi.s64.f32") && ptx.contains("@!%p"));
    assert!(ptx.contains("st.shared.b32") && ptx.contains("fma.rn.f32") && ptx.contains("sqrt.rn.f32"));
}

#[test]
fn conversions_follow_the_planner() {
    let ptx = kernel("convert", Target::Sm90a).ptx;
    // The 32x32 f16 transpose goes through shared memory (one round trip); the 1-D register swap stays in
    // registers: exactly one round trip in the kernel.
    assert_eq!(count(&ptx, "convert_layout: shared-memory round trip"), 1, "{ptx}");
    assert_eq!(count(&ptx, "st.shared.b16"), 16, "{ptx}");
    assert_eq!(count(&ptx, "ld.shared.b16"), 16, "{ptx}");
    // Both sides keep 16-byte global accesses: rows of 8 halves in the source, columns in the destination;
    // the f32 load is 4-wide, but the swapped registers of the destination do not step by 1: scalar stores.
    assert_eq!(count(&ptx, "ld.global.v4.b32"), 3, "{ptx}");
    assert_eq!(count(&ptx, "st.global.v4.b32"), 2, "{ptx}");
    assert_eq!(count(&ptx, "st.global.b32"), 4, "{ptx}");
}

#[test]
fn half_arithmetic_is_native_and_packed() {
    // f16 tensors: two elements per instruction; scalars and 1-register tensors: one native instruction.
    // bf16 has `add/sub/mul.rn.bf16x2` from sm_90 only: sm_80 computes it in f32.
    let ptx = kernel("halves", Target::Sm90a).ptx;
    assert_eq!(count(&ptx, "mul.rn.f16x2"), 4, "{ptx}");
    assert_eq!(count(&ptx, "sub.rn.f16x2"), 2, "{ptx}");
    assert_eq!(count(&ptx, "add.rn.f16x2"), 2, "{ptx}");
    assert_eq!(count(&ptx, "mul.rn.bf16x2"), 2, "{ptx}");
    assert_eq!(count(&ptx, "mul.rn.f16 "), 1, "{ptx}");
    assert_eq!(count(&ptx, "add.rn.f16 "), 1, "{ptx}");
    assert_eq!(count(&ptx, "cvt.f32.f16"), 0, "{ptx}");
    let sm80 = kernel("halves", Target::Sm80).ptx;
    assert_eq!(count(&sm80, "bf16x2"), 0, "{sm80}");
    assert_eq!(count(&sm80, "mul.rn.f16x2"), 4, "{sm80}");
}

#[test]
fn thread_coordinates_are_computed_at_the_entry() {
    // The first `arange` sits in the then-branch; the else-branch and the store reuse its thread part, so
    // it must be computed before any branch, once: `lane * 2` is a single shift of %tid.x.
    let ptx = kernel("if_arange", Target::Sm90a).ptx;
    let first_branch = ptx.find("bra").unwrap();
    assert_eq!(count(&ptx, "shl.b32"), 1, "{ptx}");
    let shift = ptx.find("shl.b32").unwrap();
    assert!(shift < first_branch && ptx[shift..].starts_with("shl.b32 %r8, %r1, 1;"), "{ptx}");
}

#[test]
fn scalar_atomic_is_issued_by_one_thread() {
    let ptx = kernel("atomic_hist", Target::Sm90a).ptx;
    assert_eq!(count(&ptx, "atom.acq_rel.gpu.global.add.u32"), 1, "{ptx}");
    assert!(ptx.contains("and.b32 %r") && ptx.contains(", 63;"), "{ptx}");
}

#[test]
fn replicated_elements_are_stored_by_one_thread() {
    // A scalar is held by all 128 threads; the 32-element tensor by every warp (its warp bases are zero).
    let src = "func @k(%p: ptr<f32>, %q: ptr<i32>) attributes {num_warps = 4} {
  %c = constant {value = 1.5} : f32
  store %p, %c
  %r = arange {start = 0, end = 32} : tensor<32xi32, BlockedLayout([1],[32],[4],[0])>
  %qs = splat %q : tensor<32xptr<i32>, BlockedLayout([1],[32],[4],[0])>
  %qq = addptr %qs, %r : tensor<32xptr<i32>, BlockedLayout([1],[32],[4],[0])>
  store %qq, %r
  return
}";
    let ptx = compile(&parse_func(src).unwrap()).unwrap().ptx;
    // Owner predicates: tid & 127 == 0 for the scalar, tid & 96 == 0 (warp 0) for the tensor.
    assert!(ptx.contains(", %r1, 127;") && ptx.contains(", %r1, 96;"), "{ptx}");
    let stores: Vec<&str> = ptx.lines().filter(|l| l.contains("st.global")).collect();
    assert_eq!(stores.len(), 2, "{ptx}");
    assert!(stores.iter().all(|l| l.trim_start().starts_with("@%p")), "{ptx}");
}

#[test]
fn elementwise_results_equal_by_constancy_are_computed_once() {
    // `n` is a multiple of 16 and each thread holds 4 runs of 8 consecutive indices: `i < n` is one compare per
    // run, shared by its two 4-wide loads and stores and the selects.
    let src = "func @k(%x: ptr<f32>, %n: i32) attributes {num_warps = 4, divisible_by_16 = [0, 1]} {
  %i = arange {start = 0, end = 4096} : tensor<4096xi32, BlockedLayout([8],[32],[4],[0])>
  %ns = splat %n : tensor<4096xi32, BlockedLayout([8],[32],[4],[0])>
  %m = cmp {pred = lt} %i, %ns : tensor<4096xi1, BlockedLayout([8],[32],[4],[0])>
  %xs = splat %x : tensor<4096xptr<f32>, BlockedLayout([8],[32],[4],[0])>
  %p = addptr %xs, %i : tensor<4096xptr<f32>, BlockedLayout([8],[32],[4],[0])>
  %v = load %p, %m : tensor<4096xf32, BlockedLayout([8],[32],[4],[0])>
  %z = constant {value = 0.0} : tensor<4096xf32, BlockedLayout([8],[32],[4],[0])>
  %w = select %m, %v, %z : tensor<4096xf32, BlockedLayout([8],[32],[4],[0])>
  store %p, %w, %m
  return
}";
    let ptx = compile(&parse_func(src).unwrap()).unwrap().ptx;
    assert_eq!(count(&ptx, "setp.lt.s32"), 4, "{ptx}");
    assert_eq!(count(&ptx, "ld.global.v4.b32"), 8, "{ptx}");
    // Without the 16-divisibility of `n` nothing is known: one compare per element.
    let ptx = compile(&parse_func(&src.replace("[0, 1]", "[0]")).unwrap()).unwrap().ptx;
    assert_eq!(count(&ptx, "setp.lt.s32"), 32, "{ptx}");
}

#[test]
fn multiply_adds_contract_into_fma_as_in_triton() {
    let src = "func @k(%x: ptr<f32>, %h: ptr<f16>) attributes {num_warps = 1} {
  %i = arange {start = 0, end = 32} : tensor<32xi32, BlockedLayout([1],[32],[1],[0])>
  %xs = splat %x : tensor<32xptr<f32>, BlockedLayout([1],[32],[1],[0])>
  %p = addptr %xs, %i : tensor<32xptr<f32>, BlockedLayout([1],[32],[1],[0])>
  %a = load %p : tensor<32xf32, BlockedLayout([1],[32],[1],[0])>
  %m = mul %a, %a : tensor<32xf32, BlockedLayout([1],[32],[1],[0])>
  %s = add %m, %a : tensor<32xf32, BlockedLayout([1],[32],[1],[0])>
  %m2 = mul %s, %a : tensor<32xf32, BlockedLayout([1],[32],[1],[0])>
  %t = sub %a, %m2 : tensor<32xf32, BlockedLayout([1],[32],[1],[0])>
  %m3 = mul %t, %t : tensor<32xf32, BlockedLayout([1],[32],[1],[0])>
  %u = add %m3, %m3 : tensor<32xf32, BlockedLayout([1],[32],[1],[0])>
  store %p, %u
  %hs = splat %h : tensor<32xptr<f16>, BlockedLayout([1],[32],[1],[0])>
  %q = addptr %hs, %i : tensor<32xptr<f16>, BlockedLayout([1],[32],[1],[0])>
  %b = load %q : tensor<32xf16, BlockedLayout([1],[32],[1],[0])>
  %bm = mul %b, %b : tensor<32xf16, BlockedLayout([1],[32],[1],[0])>
  %bs = add %bm, %b : tensor<32xf16, BlockedLayout([1],[32],[1],[0])>
  store %q, %bs
  return
}";
    // a*a + a and a - s*a contract (the second with a negated product); m3 has two uses and the f16
    // product is rounded to f16 before its add, so neither contracts.
    let ptx = compile(&parse_func(src).unwrap()).unwrap().ptx;
    assert_eq!(count(&ptx, "fma.rn.f32"), 2, "{ptx}");
    assert_eq!(count(&ptx, "neg.f32"), 1, "{ptx}");
    assert_eq!(count(&ptx, "add.rn.f32"), 1, "{ptx}");
    assert_eq!(count(&ptx, "add.rn.f16 "), 1, "{ptx}");
    assert_eq!(count(&ptx, "fma.rn.f16"), 0, "{ptx}");
    let off = src.replace("attributes {num_warps = 1}", "attributes {num_warps = 1, enable_fp_fusion = false}");
    let ptx = compile(&parse_func(&off).unwrap()).unwrap().ptx;
    assert_eq!(count(&ptx, "fma.rn.f32"), 0, "{ptx}");
}

#[test]
fn unsupported_ops_are_errors_naming_the_op() {
    let src = "func @k(%p: ptr<f64>) attributes {num_warps = 1} {
  %r = arange {start = 0, end = 32} : tensor<32xi32, BlockedLayout([1],[32],[1],[0])>
  %f = cast %r : tensor<32xf64, BlockedLayout([1],[32],[1],[0])>
  %e = lg2_approx %f : tensor<32xf64, BlockedLayout([1],[32],[1],[0])>
  %ps = splat %p : tensor<32xptr<f64>, BlockedLayout([1],[32],[1],[0])>
  %pp = addptr %ps, %r : tensor<32xptr<f64>, BlockedLayout([1],[32],[1],[0])>
  store %pp, %e
  return
}";
    let f = parse_func(src).unwrap();
    let e = compile(&f).unwrap_err();
    assert!(e.to_string().contains("`lg2_approx` on f64"), "{e}");
    let no_layout = "func @k(%p: ptr<f32>) {
  %r = arange {start = 0, end = 32} : tensor<32xi32>
  return
}";
    let e = compile(&parse_func(no_layout).unwrap()).unwrap_err();
    assert!(e.to_string().contains("layout"), "{e}");
    let f16_arg = "func @k(%x: f16) attributes {num_warps = 1} {
  return
}";
    let e = compile(&parse_func(f16_arg).unwrap()).unwrap_err();
    assert!(e.to_string().contains("kernel argument 0: f16"), "{e}");
}

#[test]
fn bytes_move_sixteen_to_a_vector_access() {
    let ptx = kernel("bytes", Target::Sm90a).ptx;
    // 16 consecutive bytes per thread: one v4.b32 per byte tensor loaded (i8, u8, i1) and stored; the f32
    // output takes four v4.b32 stores.
    assert_eq!(count(&ptx, "ld.global.v4.b32"), 3, "{ptx}");
    assert_eq!(count(&ptx, "st.global.v4.b32"), 3 + 4, "{ptx}");
    assert!(!ptx.contains(".u8 ["), "{ptx}");
    // Bytes are unpacked with bfe (i8 sign-extended) and packed with bfi.
    let byte_fields =
        |ins: &str| ptx.lines().filter(|l| l.trim_start().starts_with(ins) && l.ends_with(", 8;")).count();
    assert_eq!(byte_fields("bfe.s32"), 16, "{ptx}");
    assert_eq!(byte_fields("bfe.u32"), 2 * 16, "{ptx}");
    assert!(ptx.contains("bfi.b32") && ptx.contains("cvt.s16.s8"), "{ptx}");
    // u8 umulhi takes the high byte of the 16-bit product; i1 bytes are tested against 0.
    assert!(ptx.contains("shr.u16") && ptx.contains("setp.ne.u16"), "{ptx}");
    // Float to i8/u8 saturates to the 8-bit range.
    assert!(ptx.contains("max.s16") && ptx.contains("min.u16"), "{ptx}");
    // Small scalar arguments: an i8 and an i1 (bit 0 of its byte).
    assert!(ptx.contains(".param .s8 bytes_param_8") && ptx.contains(".param .u8 bytes_param_9"), "{ptx}");
    assert!(ptx.contains("ld.param.s8") && ptx.contains("and.b16"), "{ptx}");
    // Without alignment facts every byte is its own access.
    let path = format!("{}/tests/ir/bytes.tir", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).unwrap().replace(", divisible_by_16 = [0, 1, 2, 3, 4, 5, 6, 7]", "");
    let ptx = compile(&parse_func(&src).unwrap()).unwrap().ptx;
    assert_eq!(count(&ptx, "ld.global.u8"), 3 * 16, "{ptx}");
    assert_eq!(count(&ptx, "st.global.u8"), 3 * 16, "{ptx}");
}

#[test]
fn fp8_uses_cvt_on_hopper_and_software_on_ampere() {
    let ptx = kernel("fp8", Target::Sm90a).ptx;
    assert!(ptx.contains("cvt.rn.satfinite.e4m3x2.f32") && ptx.contains("cvt.rn.satfinite.e5m2x2.f32"), "{ptx}");
    assert!(ptx.contains("cvt.rn.f16x2.e4m3x2") && ptx.contains("cvt.rn.f16x2.e5m2x2"), "{ptx}");
    // f64 -> fp8 rounds to odd in f32 first.
    assert!(ptx.contains("cvt.rz.f32.f64"), "{ptx}");
    // Four fp8 elements per thread: one .b32 word per access (the two fp8 loads and the two fp8 stores).
    assert_eq!(count(&ptx, "ld.global.b32"), 2, "{ptx}");
    assert_eq!(count(&ptx, "st.global.b32"), 2, "{ptx}");
    let ptx = kernel("fp8", Target::Sm80).ptx;
    assert!(!ptx.contains("e4m3") && !ptx.contains("e5m2"), "{ptx}");
    assert!(ptx.contains("cvt.rni.s32.f32") && ptx.contains("min.u32"), "{ptx}");
}

/// sin/cos are libdevice's sequence (no `.approx`: it is off by up to ~1e9 ulp for large arguments; the
/// Payne–Hanek reduction's 32×32 products and its one f64 step), float `%` is LLVM's `frem` expansion as Triton
/// gets it (IEEE division, truncation, one fma; f16 in f32, f64 in f64), floor/ceil flush subnormal inputs as
/// libdevice does.
#[test]
fn trig_is_accurate_and_percent_is_tritons_frem() {
    let ptx = kernel("trig_fmod", Target::Sm90a).ptx;
    assert!(!ptx.contains("sin.approx") && !ptx.contains("cos.approx"), "{ptx}");
    for ins in [
        "mul.hi.u32",
        "cvt.rn.f64.s64",
        "fma.rn.ftz.f32",
        "div.rn.f32",
        "cvt.rzi.f32.f32",
        "fma.rn.f32",
        "div.rn.f64",
        "cvt.rzi.f64.f64",
        "fma.rn.f64",
        "cvt.rmi.ftz.f32.f32",
        "cvt.rpi.ftz.f32.f32",
    ] {
        assert!(ptx.contains(ins), "missing {ins}\n{ptx}");
    }
}

/// libdevice's directed-rounding arithmetic is PTX's rounding modifiers, for f32 (flushing subnormals, as
/// libdevice under Triton) and f64.
/// libdevice's `fma_rn` ... `fma_ru`: one `fma` with the rounding modifier, `.ftz` at f32.
#[test]
fn directed_fma_uses_the_ptx_modifiers() {
    let ptx = kernel("fma_round", Target::Sm90a).ptx;
    for ins in ["fma.rz.ftz.f32", "fma.rp.ftz.f32", "fma.rm.f64", "fma.rn.f64"] {
        assert!(ptx.contains(ins), "missing {ins}\n{ptx}");
    }
    // The conversions with a rounding mode (`int2float_rz`...), f64 to f32 with libdevice's `.ftz`.
    let ptx = kernel("cast_round", Target::Sm90a).ptx;
    for ins in ["cvt.rz.f32.s64", "cvt.rp.f64.s64", "cvt.rm.ftz.f32.f64", "cvt.rz.f32.s32"] {
        assert!(ptx.contains(ins), "missing {ins}\n{ptx}");
    }
}

#[test]
fn directed_rounding_uses_the_ptx_modifiers() {
    let ptx = kernel("rounding", Target::Sm90a).ptx;
    for op in ["add", "sub", "mul", "div", "sqrt"] {
        for m in ["rz", "rm", "rp"] {
            for t in ["ftz.f32", "f64"] {
                assert!(ptx.contains(&format!("{op}.{m}.{t}")), "missing {op}.{m}.{t}\n{ptx}");
            }
        }
    }
}

/// 64-bit `/` and `%` take LLVM's 32-bit bypass when both high halves are zero (as Triton's code does), the
/// 64-bit instruction otherwise; 32-bit ones stay one instruction.
#[test]
fn wide_division_has_the_32_bit_bypass() {
    let ptx = kernel("int_div", Target::Sm90a).ptx;
    for ins in ["div.u32", "rem.u32", "div.s64", "rem.s64", "div.u64", "rem.u64", "div.s32", "rem.s32"] {
        assert!(ptx.contains(ins), "missing {ins}\n{ptx}");
    }
    assert_eq!(count(&ptx, "shr.u64"), count(&ptx, "div.u32") + count(&ptx, "rem.u32"), "{ptx}");
}

/// f64 acosh, hypot and pow are libdevice's own sequences (`tessel_math`): its approximate f64
/// reciprocal and reciprocal square root, refined by fmas, and its f64 division in log1p.
#[test]
fn f64_libm_uses_libdevices_instructions() {
    let ptx = kernel("libm64", Target::Sm90a).ptx;
    for ins in ["rsqrt.approx.ftz.f64", "rcp.approx.ftz.f64", "div.rn.f64", "min.f64"] {
        assert!(ptx.contains(ins), "missing {ins}\n{ptx}");
    }
    // sinpi/cospi/rcbrt/logb/erfinv: libdevice's sequences (its leading-zero count for logb's subnormals,
    // the approximate units for rcbrt and erfinv).
    let ptx = kernel("libm_more", Target::Sm90a).ptx;
    for ins in ["clz.b32", "rsqrt.approx.ftz.f32", "lg2.approx.ftz.f32", "ex2.approx.ftz.f32", "cvt.rni.f64.f64"] {
        assert!(ptx.contains(ins), "missing {ins}\n{ptx}");
    }
}

/// erfcx/erfcinv/normcdfinv/cyl_bessel_i0/i1/tgamma/lgamma/j0/j1/y0/y1 (f32 and f64), and norm/rnorm of three
/// and four operands: libdevice's sequences, with its instructions (`div.approx` in erfcx and tgamma,
/// `cvt.rmi.ftz` in tgamma/lgamma, sinf's 64-bit Payne–Hanek step in the f32 Bessel functions and the f64
/// reduction's 64×64-bit products and `clz.b64` in the f64 ones, the unrefined `rsqrt.approx.f64` of erfcinv's
/// far tail and the f64 Bessel functions' amplitude, min/max sorting in norm).
#[test]
fn libm_special_functions_use_libdevices_instructions() {
    let ptx = kernel("libm_special", Target::Sm90a).ptx;
    for ins in [
        "div.approx.ftz.f32",
        "cvt.rmi.ftz.f32.f32",
        "cvt.rn.f64.s64",
        "rsqrt.approx.f64",
        "rsqrt.approx.ftz.f64",
        "rcp.approx.ftz.f64",
        "sqrt.approx.ftz.f32",
        "max.f32",
        "max.f64",
        "ex2.approx.ftz.f32",
        "lg2.approx.ftz.f32",
        "mul.hi.u64",
        "clz.b64",
    ] {
        assert!(ptx.contains(ins), "missing {ins}\n{ptx}");
    }
    // Straight-line: every branch of libdevice's is a select here (and its loops are unrolled); the only jump
    // is the kernel's own exit.
    assert!(ptx.lines().filter(|l| l.contains("bra")).all(|l| l.contains("$L_exit")), "{ptx}");
}

/// jn/yn: the recurrence is a loop per element, uniform over the warp (`vote.sync.any` of the lanes that still
/// need a step), around libdevice's straight-line set-up (j0/j1/y0/y1) and finish; f32 M from `sqrt.approx`,
/// f64 from `sqrt.rn`, f64's rescaling test through an f32 `abs.ftz`.
#[test]
fn bessel_of_integer_order_loops_uniformly_over_the_warp() {
    let ptx = kernel("bessel_n", Target::Sm90a).ptx;
    // Four ops, two elements a lane: eight loops.
    assert_eq!(count(&ptx, "vote.sync.any.pred"), 8, "{ptx}");
    for ins in ["sqrt.approx.ftz.f32", "sqrt.rn.f64", "abs.ftz.f32", "cvt.s64.s32", "div.rn.f32", "div.rn.f64"] {
        assert!(ptx.contains(ins), "missing {ins}\n{ptx}");
    }
    // Every jump is a loop's: back to its head, or out of it, uniformly.
    for l in ptx.lines().filter(|l| l.contains("bra")) {
        assert!(l.contains("bra.uni") && (l.contains("besseln") || l.contains("$L_exit")), "{l}");
    }
}

#[test]
fn math_follows_tritons_instruction_choices() {
    let ptx = kernel("math", Target::Sm90a).ptx;
    for ins in [
        "div.full.f32",
        "div.rn.f32",
        "sqrt.approx.ftz.f32",
        "sqrt.rn.f32",
        "rsqrt.approx.ftz.f32",
        "ex2.approx.f32",
        "max.NaN.f32",
        "min.NaN.f32",
        "setp.nan.f64",
        "rsqrt.approx.f64",
    ] {
        assert!(ptx.contains(ins), "missing {ins}\n{ptx}");
    }
    // log/log2/pow/erf and f64 transcendentals are software routines (fma chains), not lg2.approx: f32 log,
    // log2 and erf are libdevice's own sequences (`fma.rn.ftz.f32`).
    assert!(!ptx.contains("lg2.approx"), "{ptx}");
    assert!(count(&ptx, "fma.rn.f64") > 100 && count(&ptx, "fma.rn.ftz.f32") > 20, "{ptx}");
}

#[test]
fn warp_local_conversions_use_shuffles() {
    let k = kernel("shuffle", Target::Sm90a);
    let ptx = &k.ptx;
    // Four rounds each: f32 one shuffle per round, i64 two halves, i1 as 0/1 words, f16 two rounds per
    // shuffle (the destination's first register bit does not change the source lane).
    assert_eq!(count(ptx, "shfl.sync.idx.b32"), 4 + 8 + 4 + 2, "{ptx}");
    assert_eq!(count(ptx, "convert_layout: 4 warp shuffle(s) for 4 round(s)"), 3, "{ptx}");
    assert_eq!(count(ptx, "convert_layout: 2 warp shuffle(s) for 4 round(s)"), 1, "{ptx}");
    assert!(!ptx.contains(".shared") && !ptx.contains("bar.sync") && k.shared_bytes == 0, "{ptx}");
    // Registers chosen per lane: the transpose of a register bit and a lane bit needs selects both sides.
    assert!(ptx.contains("selp.b32") && ptx.contains("selp.b64"), "{ptx}");
}

#[test]
fn byte_conversions_shuffle_four_bytes_a_word() {
    let ptx = kernel("shuffle8", Target::Sm90a).ptx;
    // i8 and fp8: two rounds to a word (one destination register bit keeps the source lane), the four
    // destination registers taken out of the two words by one lane-dependent `prmt`; u8: every destination
    // register bit moves the source lane, one byte a shuffle and a `selp` tree per register.
    assert_eq!(count(&ptx, "convert_layout: 2 warp shuffle(s) for 4 byte round(s)"), 2, "{ptx}");
    assert_eq!(count(&ptx, "convert_layout: 4 warp shuffle(s) for 4 byte round(s)"), 1, "{ptx}");
    assert_eq!(count(&ptx, "shfl.sync.idx.b32"), 2 + 4 + 2, "{ptx}");
    assert!(!ptx.contains(".shared") && !ptx.contains("bar.sync"), "{ptx}");
    // f32 -> fp8 two to a conversion.
    assert_eq!(count(&ptx, "cvt.rn.satfinite.e5m2x2.f32"), 2, "{ptx}");
}

#[test]
fn loaded_values_keep_their_register_class() {
    // An f64 load feeds a float-to-int conversion, which must read it as f64.
    let src = "func @k(%p: ptr<f64>, %q: ptr<i32>) attributes {num_warps = 1, divisible_by_16 = [0, 1]} {
  %r = arange {start = 0, end = 64} : tensor<64xi32, BlockedLayout([2],[32],[1],[0])>
  %ps = splat %p : tensor<64xptr<f64>, BlockedLayout([2],[32],[1],[0])>
  %pp = addptr %ps, %r : tensor<64xptr<f64>, BlockedLayout([2],[32],[1],[0])>
  %x = load %pp : tensor<64xf64, BlockedLayout([2],[32],[1],[0])>
  %i = cast %x : tensor<64xi32, BlockedLayout([2],[32],[1],[0])>
  %qs = splat %q : tensor<64xptr<i32>, BlockedLayout([2],[32],[1],[0])>
  %qq = addptr %qs, %r : tensor<64xptr<i32>, BlockedLayout([2],[32],[1],[0])>
  store %qq, %i
  return
}";
    let ptx = compile(&parse_func(src).unwrap()).unwrap().ptx;
    assert!(ptx.contains("ld.global.v2.b64 {%fd") && ptx.contains("cvt.rzi.s32.f64"), "{ptx}");
}

/// The bytes of the module string whose contents are `text` (with its NUL), as the PTX declares it.
fn string_decl(text: &str) -> String {
    let bytes: Vec<String> = text.bytes().chain([0]).map(|b| b.to_string()).collect();
    format!("[{}] = {{{}}};", bytes.len(), bytes.join(", "))
}

#[test]
fn print_calls_vprintf_once_per_owned_element() {
    let k = kernel("print", Target::Sm90a);
    let ptx = &k.ptx;
    assert_eq!(count(ptx, ".extern .func (.param .b32 func_retval0) vprintf"), 1, "{ptx}");
    // 1 (no operands) + 1 + 1 (s, s hex) + 2 (x, h) + 1 (z) + 3 (bits) + 2 (mixed) + 1 (scalar) + 2 (grid: two
    // registers per thread; its lanes and warps beyond the 4x8 tile hold copies and stay silent).
    assert_eq!(count(ptx, "call.uni (retval0), vprintf, (param0, param1);"), 14, "{ptx}");
    // The interpreter's line format; a `%` in the prefix is escaped; floats as round-tripping doubles; signed
    // hex as 64-bit two's complement; the 2-D index as `%3u,%3u`.
    for fmt in [
        "pid (%u, %u, %u)  start%%d\n",
        "pid (%u, %u, %u) idx (%3u)  s: %d\n",
        "pid (%u, %u, %u) idx (%3u)  s: 0x%llx\n",
        "pid (%u, %u, %u) idx (%3u)  x: %.17g\n",
        "pid (%u, %u, %u) idx (%3u)  bits: 0x%x\n",
        "pid (%u, %u, %u) idx (%3u)  mixed: %lld\n",
        "pid (%u, %u, %u) idx ()  scalar: %d\n",
        "pid (%u, %u, %u) idx (%3u,%3u)  grid: %d\n",
    ] {
        assert!(ptx.contains(&string_decl(fmt)), "missing format {fmt:?}\n{ptx}");
    }
    // Arguments: 3 pids + 1 index + an 8-byte value = 24 bytes; floats promoted to f64 before the store.
    assert!(ptx.contains(".local .align 8 .b8 __local_depot[24];"), "{ptx}");
    assert!(ptx.contains("cvt.f64.f32") && ptx.contains("st.local.f64 [%rd"), "{ptx}");
    // Replicated elements print once: the 32-element tensors are held by both warps (warp bit = tid bit 5).
    assert!(ptx.contains(", 32;\n    setp.eq.u32"), "{ptx}");
}

#[test]
fn assert_calls_assertfail_with_the_source_location() {
    let k = kernel("assert", Target::Sm90a);
    let ptx = &k.ptx;
    assert_eq!(count(ptx, "call.uni __assertfail, (param0, param1, param2, param3, param4);"), 2, "{ptx}");
    assert!(ptx.contains(&string_decl("x >= 0")) && ptx.contains(&string_decl("unknown")), "{ptx}");
    assert!(ptx.contains(&string_decl("assert_copy")), "{ptx}");
    // The tensor assert ORs the failures of the thread's two elements, calls once, then a CTA barrier.
    assert!(ptx.contains("or.pred") && ptx.contains("bar.sync 0"), "{ptx}");
    // With the source text, the op's byte offset becomes file and line.
    let path = format!("{}/tests/ir/assert.tir", env!("CARGO_MANIFEST_DIR"));
    let mut f = parse_func(&std::fs::read_to_string(path).unwrap()).unwrap();
    let text = "@jit\ndef k(x):\n    tl.device_assert(x >= 0, \"x >= 0\")\n";
    let at = text.find("tl.device_assert").unwrap() as u32;
    let o = (0..f.ops.len())
        .map(|i| tessel_tile::ir::OpId(i as u32))
        .find(|&o| matches!(f.op(o).op, tessel_tile::ops::Op::Assert { .. }))
        .unwrap();
    f.op_mut(o).loc = Some(tessel_tile::ir::Loc { start: at, end: at + 16 });
    let src = tessel_codegen::Source { file: "kernels/k.py", text };
    let ptx = tessel_codegen::compile_with_source(&f, src).unwrap().ptx;
    assert!(ptx.contains(&string_decl("kernels/k.py")), "{ptx}");
    assert!(ptx.contains("    .param .b32 param2;\n    st.param.b32 [param2], 3;\n"), "{ptx}");
}

#[test]
fn fma_dot_is_one_fma_per_accumulator_element_and_k() {
    let k = kernel("dot_fma", Target::Sm90a);
    let ptx = &k.ptx;
    // 32x32 accumulator, BlockedLayout([2,2],[4,8],[2,2]): 4 rows x 2 columns per thread; K tile 16.
    assert_eq!(count(ptx, "fma.rn.f32"), 8 * 16, "{ptx}");
    // Each A element (4 rows x 16 k) and B element (16 k x 2 columns) the thread needs is widened once.
    assert_eq!(count(ptx, "cvt.f32.f16"), 4 * 16 + 16 * 2, "{ptx}");
    // The FMAs sit in the K loop, after the operands' conversions to the dot-operand layouts.
    let (head, fma) = (ptx.find("$L_for_head_1:").unwrap(), ptx.find("fma.rn.f32").unwrap());
    let back = ptx.find("bra.uni $L_for_head_1").unwrap();
    assert!(head < fma && fma < back, "{ptx}");
    assert_eq!(count(ptx, "convert_layout: shared-memory round trip"), 2, "{ptx}");
    let ptx = kernel("dot_tf32", Target::Sm90a).ptx;
    assert_eq!(count(&ptx, "fma.rn.f32"), 4 * 8, "{ptx}");
    // tf32: the 8 A elements of the thread's row and the 8 x 4 B elements lose their low 13 bits.
    assert_eq!(count(&ptx, ", -8192;"), 8 + 8 * 4, "{ptx}");
    assert!(!ptx.contains("cvt.rna.tf32"), "{ptx}");
    assert!(!ptx.contains("shfl") && !ptx.contains("ld.shared"), "operands loaded in place: no data movement");
    // Integer, f16 and f64 accumulators: 8 elements per thread (16x16 over 32 threads) x 16 k each, i16
    // operands sign-extended to the i32 accumulator, f32 operands widened to f64.
    let types = kernel("dot_types", Target::Sm90a).ptx;
    for instr in ["mad.lo.s32", "fma.rn.f16", "fma.rn.f64"] {
        assert_eq!(count(&types, instr), 8 * 16, "{instr}\n{types}");
    }
    assert!(types.contains("cvt.s32.s16") && types.contains("cvt.f64.f32"), "{types}");
    // Batched: [2, 16, 8] x [2, 8, 16], the two warps on the two batches: 8 elements x 8 k per thread.
    assert_eq!(count(&kernel("dot_batched", Target::Sm90a).ptx, "fma.rn.f32"), 8 * 8);
    // Every accumulator is one chain of 8 FMAs in increasing k: the A operand of step k is the rounding of
    // the k-th element of the thread's row of A (the first two 4-wide loads, %f1..%f8).
    let defs: std::collections::HashMap<&str, Vec<&str>> = ptx
        .lines()
        .filter_map(|l| {
            let ops: Vec<&str> = l.trim().trim_end_matches(';').split([' ', ',']).filter(|x| !x.is_empty()).collect();
            (ops.len() >= 3 && ops[1].starts_with('%')).then(|| (ops[1], ops))
        })
        .collect();
    let fmas: Vec<&Vec<&str>> = defs.values().filter(|o| o[0] == "fma.rn.f32").collect();
    let ends: Vec<&&Vec<&str>> = fmas.iter().filter(|o| !fmas.iter().any(|p| p[4] == o[1])).collect();
    assert_eq!(ends.len(), 4, "{ptx}");
    for end in ends {
        let mut chain = vec![end[..].to_vec()];
        while let Some(prev) = defs.get(chain.last().unwrap()[4]).filter(|p| p[0] == "fma.rn.f32") {
            chain.push(prev.to_vec());
        }
        chain.reverse();
        assert_eq!(chain.len(), 8, "{ptx}");
        for (k, step) in chain.iter().enumerate() {
            // `mov.b32 a, r` after `and.b32 r, b, -8192` after `mov.b32 b, x`.
            let r = defs[step[2]][2];
            let b = defs[r][2];
            assert_eq!(defs[r][0], "and.b32", "step {k}: {step:?}\n{ptx}");
            let mov = ptx.lines().find(|l| l.trim().starts_with(&format!("mov.b32 {b},"))).unwrap();
            assert!(mov.trim().ends_with(&format!(" %f{};", k + 1)), "step {k}: {step:?}\n{ptx}");
        }
    }
}

#[test]
fn shape_ops_only_reindex_registers() {
    for name in ["permute", "reshape", "join_split"] {
        let k = kernel(name, Target::Sm90a);
        assert_eq!(k.shared_bytes, 0, "{name}");
        assert!(!k.ptx.contains("shfl") && !k.ptx.contains("bar.sync"), "{name}");
    }
    // Every output (join's [256, 2] pairs, split's halves, cat's two parts) keeps 8-byte stores: join puts
    // x[i] and y[i] in consecutive registers, split and cat hand back the operands' own register pairs.
    let ptx = kernel("join_split", Target::Sm90a).ptx;
    assert_eq!(count(&ptx, "st.global.v2.b32"), 4 + 2 * 2 + 4, "{ptx}");
    assert_eq!(count(&ptx, "st.global.b32"), 0, "{ptx}");
}

#[test]
fn scans_go_through_registers_lanes_and_warps() {
    let k = kernel("cumsum", Target::Sm90a);
    let ptx = &k.ptx;
    // Axis 1 of 4x512, BlockedLayout([1,4],[2,16],[2,2]): 4 registers, 16 lanes, 2 warps, 4 repetitions.
    // Per repetition: 4 Hillis-Steele steps and one shuffle for the exclusive prefix, over 4 scanned values
    // (i32, f32 and the two of the affine scan); axis 0 of 32x16 ([2,1],[4,8],[2,2]): 2 lane bits, 2 reps.
    assert_eq!(count(ptx, "shfl.sync.up.b32"), 4 * 5 * 4 + 2 * 3, "{ptx}");
    assert_eq!(count(ptx, "shfl.sync.down.b32"), 0);
    // Segment totals come from the last lane of the segment.
    assert_eq!(count(ptx, "shfl.sync.idx.b32"), 4 * 4 + 2, "{ptx}");
    // Each scan crosses warps once: store, barrier, load, barrier.
    assert_eq!(count(ptx, "bar.sync 0"), 2 * 4, "{ptx}");
    assert!(k.shared_bytes > 0);
    // The f32 sums stay in f32 with round-to-nearest adds (never contracted into FMAs).
    assert!(ptx.contains("add.rn.f32") && !ptx.contains("fma.rn"), "{ptx}");
    let ptx = kernel("scan_reverse", Target::Sm90a).ptx;
    assert!(ptx.contains("shfl.sync.down.b32") && !ptx.contains("shfl.sync.up"), "{ptx}");
}

/// A kernel in the text form around one op: `%x` is a constant tensor of `shape` in `layout`.
fn one_op(shape: &str, layout: &str, op: &str) -> tessel_tile::ir::Func {
    let src = format!(
        "func @k(%p: ptr<f32>) attributes {{num_warps = 2}} {{
  %x = constant {{value = 1.0}} : tensor<{shape}xf32, {layout}>
{op}
  return
}}"
    );
    parse_func(&src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

#[test]
fn ops_needing_data_movement_are_errors_not_wrong_code() {
    // A transpose whose result layout is the operand's blocked layout again: elements change threads.
    let b = "BlockedLayout([1,4],[8,4],[2,1],[1,0])";
    let f = one_op("32x64", b, &format!("  %t = permute {{order = [1, 0]}} %x : tensor<64x32xf32, {b}>"));
    let e = compile(&f).unwrap_err();
    assert!(e.to_string().contains("`permute`") && e.to_string().contains("convert_layout"), "{e}");
    // A dot whose operands are blocked, not dot-operand layouts: rows of A live in other lanes.
    let acc = "BlockedLayout([1,1],[4,8],[2,1],[1,0])";
    let dot = format!(
        "  %y = constant {{value = 2.0}} : tensor<64x32xf32, {b}>
  %c = constant {{value = 0.0}} : tensor<32x32xf32, {acc}>
  %d = dot {{precision = ieee}} %x, %y, %c : tensor<32x32xf32, {acc}>"
    );
    let e = compile(&one_op("32x64", b, &dot)).unwrap_err();
    assert!(e.to_string().contains("operand A"), "{e}");
    assert!(e.to_string().contains("= dot`") && e.to_string().contains("DotOperandLayout"), "{e}");
}

/// `$PTXAS`, else `ptxas` on PATH.
fn ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Some(PathBuf::from(p));
    }
    let ok = Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success());
    ok.then(|| PathBuf::from("ptxas"))
}

#[test]
fn ptxas_accepts_every_kernel() {
    let Some(ptxas) = ptxas() else {
        assert!(
            std::env::var_os("TESSEL_REQUIRE_PTXAS").is_none(),
            "TESSEL_REQUIRE_PTXAS is set but ptxas was not found"
        );
        eprintln!("ptxas not found (set PTXAS or put it on PATH): skipping the offline PTX check");
        return;
    };
    let dir = std::env::temp_dir().join(format!("tessel-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for name in KERNELS {
        for arch in [Target::Sm80, Target::Sm90a, Target::Sm100a] {
            let k = kernel(name, arch);
            let file = dir.join(format!("{name}.{}.ptx", arch.name()));
            std::fs::write(&file, &k.ptx).unwrap();
            let out = Command::new(&ptxas)
                .args(["-arch", arch.name(), "-o", "/dev/null"])
                .arg(&file)
                .output()
                .expect("running ptxas");
            let stderr = String::from_utf8_lossy(&out.stderr);
            eprintln!("ptxas -arch {} {name}: {}", arch.name(), if out.status.success() { "ok" } else { "FAILED" });
            if !out.status.success() || !stderr.trim().is_empty() {
                failures.push(format!("{name} {}: {stderr}", arch.name()));
            }
        }
    }
    assert!(failures.is_empty(), "ptxas rejected:\n{}", failures.join("\n"));
}
