//! Compiles the hand-written layout-IR kernels under `tests/ir/` to PTX and checks structural facts of the
//! output; when `ptxas` is available (on PATH, or `$PTXAS`), assembles every kernel for sm_80, sm_90a and
//! sm_100a and fails on any error or warning.

use std::path::PathBuf;
use std::process::Command;

use tessel_codegen::{Arch, Kernel, compile};
use tessel_tile::parse::parse_func;

fn kernel(name: &str, arch: Arch) -> Kernel {
    let path = format!("{}/tests/ir/{name}.tir", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap();
    let f = parse_func(&src).unwrap_or_else(|e| panic!("{path}: {e}"));
    tessel_tile::verify::verify(&f).unwrap_or_else(|e| panic!("{path}: {e}"));
    // The layouts are those auto mode would give (shape ops keep data in place, dot operands are
    // DotOperandLayouts of the accumulator's...), so codegen sees what the compiler produces.
    tessel_tile::verify::verify_layouts(&f).unwrap_or_else(|e| panic!("{path}: {e}"));
    compile(&f, arch).unwrap_or_else(|e| panic!("{path}: {e}"))
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
];

fn count(ptx: &str, pat: &str) -> usize {
    ptx.matches(pat).count()
}

#[test]
fn vector_add_uses_16_byte_masked_accesses() {
    let k = kernel("vector_add", Arch::Sm90a);
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
        (Arch::Sm80, ".version 7.8\n.target sm_80"),
        (Arch::Sm90a, ".version 8.0\n.target sm_90a"),
        (Arch::Sm100a, ".version 8.6\n.target sm_100a"),
    ] {
        assert!(kernel("vector_add", arch).ptx.contains(head));
    }
}

#[test]
fn softmax_reduces_with_shuffles_and_shared_memory() {
    let k = kernel("softmax_f16", Arch::Sm90a);
    let ptx = &k.ptx;
    // 8 consecutive halves per thread along the row: one 16-byte load and store per row a thread owns.
    assert_eq!(count(ptx, "ld.global.v4.b32"), 1, "{ptx}");
    assert_eq!(count(ptx, "st.global.v4.b32"), 1, "{ptx}");
    // Each of the two reductions: 4 lane bits along the row (butterfly 1, 2, 4, 8), one warp bit via smem.
    assert_eq!(count(ptx, "shfl.sync.bfly.b32"), 8, "{ptx}");
    for m in [1, 2, 4, 8] {
        assert_eq!(count(ptx, &format!(", {m}, 31, -1;")), 2);
    }
    assert_eq!(count(ptx, "bar.sync 0"), 4);
    assert!(k.shared_bytes > 0);
    assert!(ptx.contains(".extern .shared .align 16 .b8 global_smem[];"));
    assert_eq!(count(ptx, "ex2.approx.f32"), 8);
    assert!(ptx.contains("cvt.f32.f16") && ptx.contains("cvt.rn.f16.f32"));
    assert!(ptx.contains("max.f32") && ptx.contains("div.full.f32"));
}

#[test]
fn argmax_shuffles_both_operands() {
    let ptx = kernel("argmax", Arch::Sm90a).ptx;
    // 3 lane bits along the row, two operands each; the 4 warps along the row go through shared memory.
    assert_eq!(count(&ptx, "shfl.sync.bfly.b32"), 6, "{ptx}");
    assert!(ptx.contains("selp.b32"));
    assert!(ptx.contains("bar.sync 0"));
}

#[test]
fn loops_and_conversions() {
    let ptx = kernel("loop_acc", Arch::Sm90a).ptx;
    assert!(ptx.contains("$L_for_head_1:") && ptx.contains("bra.uni $L_for_head_1"), "{ptx}");
    assert!(ptx.contains("st.shared.b32") && ptx.contains("ld.shared.b32"), "{ptx}");
    let ptx = kernel("while_halve", Arch::Sm90a).ptx;
    assert!(ptx.contains("$L_while_head_1:"), "{ptx}");
}

#[test]
fn vectors_need_alignment_and_contiguity_facts() {
    // Without `divisible_by_16` the pointers are not known to be 16-byte aligned: scalar accesses.
    let path = format!("{}/tests/ir/vector_add.tir", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).unwrap().replace(", divisible_by_16 = [0, 1, 2, 3]", "");
    let ptx = compile(&parse_func(&src).unwrap(), Arch::Sm90a).unwrap().ptx;
    assert!(!ptx.contains(".v4.") && !ptx.contains(".v2."), "{ptx}");
    assert_eq!(count(&ptx, "ld.global.b32"), 8);
    // bf16 pairs travel as one .b32 word; i64 pairs as .v2.b64; the mismatched convert goes through smem.
    let ptx = kernel("mixed", Arch::Sm90a).ptx;
    assert_eq!(count(&ptx, "ld.global.b32"), 1, "{ptx}");
    assert_eq!(count(&ptx, "ld.global.v2.b32"), 1, "{ptx}");
    assert_eq!(count(&ptx, "st.global.v2.b64"), 1, "{ptx}");
    assert!(ptx.contains("cvt.f32.bf16") && ptx.contains("cvt.rzi.s64.f32") && ptx.contains("@!%p"));
    assert!(ptx.contains("st.shared.b32") && ptx.contains("fma.rn.f32") && ptx.contains("sqrt.rn.f32"));
}

#[test]
fn conversions_follow_the_planner() {
    let ptx = kernel("convert", Arch::Sm90a).ptx;
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
fn thread_coordinates_are_computed_at_the_entry() {
    // The first `arange` sits in the then-branch; the else-branch and the store reuse its thread part, so
    // it must be computed before any branch.
    let ptx = kernel("if_arange", Arch::Sm90a).ptx;
    let first_branch = ptx.find("bra").unwrap();
    assert!(ptx.rfind("bfe.s32").unwrap() < first_branch, "{ptx}");
    assert_eq!(count(&ptx, "bfe.s32"), 5, "{ptx}");
}

#[test]
fn scalar_atomic_is_issued_by_one_thread() {
    let ptx = kernel("atomic_hist", Arch::Sm90a).ptx;
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
    let ptx = compile(&parse_func(src).unwrap(), Arch::Sm90a).unwrap().ptx;
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
    let ptx = compile(&parse_func(src).unwrap(), Arch::Sm90a).unwrap().ptx;
    assert_eq!(count(&ptx, "setp.lt.s32"), 4, "{ptx}");
    assert_eq!(count(&ptx, "ld.global.v4.b32"), 8, "{ptx}");
    // Without the 16-divisibility of `n` nothing is known: one compare per element.
    let ptx = compile(&parse_func(&src.replace("[0, 1]", "[0]")).unwrap(), Arch::Sm90a).unwrap().ptx;
    assert_eq!(count(&ptx, "setp.lt.s32"), 32, "{ptx}");
}

#[test]
fn unsupported_ops_are_errors_naming_the_op() {
    let src = "func @k(%p: ptr<f32>) attributes {num_warps = 1} {
  %r = arange {start = 0, end = 32} : tensor<32xi32, BlockedLayout([1],[32],[1],[0])>
  %f = cast %r : tensor<32xf32, BlockedLayout([1],[32],[1],[0])>
  %e = erf %f : tensor<32xf32, BlockedLayout([1],[32],[1],[0])>
  %ps = splat %p : tensor<32xptr<f32>, BlockedLayout([1],[32],[1],[0])>
  %pp = addptr %ps, %r : tensor<32xptr<f32>, BlockedLayout([1],[32],[1],[0])>
  store %pp, %e
  return
}";
    let f = parse_func(src).unwrap();
    let e = compile(&f, Arch::Sm90a).unwrap_err();
    assert!(e.message.contains("`erf`"), "{e}");
    let no_layout = "func @k(%p: ptr<f32>) {
  %r = arange {start = 0, end = 32} : tensor<32xi32>
  return
}";
    let e = compile(&parse_func(no_layout).unwrap(), Arch::Sm90a).unwrap_err();
    assert!(e.message.contains("layout"), "{e}");
}

#[test]
fn fma_dot_is_one_fma_per_accumulator_element_and_k() {
    let k = kernel("dot_fma", Arch::Sm90a);
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
    let ptx = kernel("dot_tf32", Arch::Sm90a).ptx;
    assert_eq!(count(&ptx, "fma.rn.f32"), 4 * 8, "{ptx}");
    // tf32: the 8 A elements of the thread's row and the 8 x 4 B elements are rounded, ties away from zero.
    assert_eq!(count(&ptx, "cvt.rna.tf32.f32"), 8 + 8 * 4, "{ptx}");
    assert!(!ptx.contains("shfl") && !ptx.contains("ld.shared"), "operands loaded in place: no data movement");
    // Integer, f16 and f64 accumulators: 8 elements per thread (16x16 over 32 threads) x 16 k each, i16
    // operands sign-extended to the i32 accumulator, f32 operands widened to f64.
    let types = kernel("dot_types", Arch::Sm90a).ptx;
    for instr in ["mad.lo.s32", "fma.rn.f16", "fma.rn.f64"] {
        assert_eq!(count(&types, instr), 8 * 16, "{instr}\n{types}");
    }
    assert!(types.contains("cvt.s32.s16") && types.contains("cvt.f64.f32"), "{types}");
    // Batched: [2, 16, 8] x [2, 8, 16], the two warps on the two batches: 8 elements x 8 k per thread.
    assert_eq!(count(&kernel("dot_batched", Arch::Sm90a).ptx, "fma.rn.f32"), 8 * 8);
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
            // `mov.b32 a, r` after `cvt.rna.tf32.f32 r, x` (and the masking `and.b32 r, r, -8192`).
            let r = defs[step[2]][2];
            let cvt = ptx.lines().find(|l| l.trim().starts_with(&format!("cvt.rna.tf32.f32 {r},"))).unwrap();
            assert!(cvt.trim().ends_with(&format!(" %f{};", k + 1)), "step {k}: {step:?}\n{ptx}");
        }
    }
}

#[test]
fn shape_ops_only_reindex_registers() {
    for name in ["permute", "reshape", "join_split"] {
        let k = kernel(name, Arch::Sm90a);
        assert_eq!(k.shared_bytes, 0, "{name}");
        assert!(!k.ptx.contains("shfl") && !k.ptx.contains("bar.sync"), "{name}");
    }
    // Every output (join's [256, 2] pairs, split's halves, cat's two parts) keeps 8-byte stores: join puts
    // x[i] and y[i] in consecutive registers, split and cat hand back the operands' own register pairs.
    let ptx = kernel("join_split", Arch::Sm90a).ptx;
    assert_eq!(count(&ptx, "st.global.v2.b32"), 4 + 2 * 2 + 4, "{ptx}");
    assert_eq!(count(&ptx, "st.global.b32"), 0, "{ptx}");
}

#[test]
fn scans_go_through_registers_lanes_and_warps() {
    let k = kernel("cumsum", Arch::Sm90a);
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
    let ptx = kernel("scan_reverse", Arch::Sm90a).ptx;
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
    let e = compile(&f, Arch::Sm90a).unwrap_err();
    assert!(e.message.contains("`permute`") && e.message.contains("convert_layout"), "{e}");
    // A dot whose operands are blocked, not dot-operand layouts: rows of A live in other lanes.
    let acc = "BlockedLayout([1,1],[4,8],[2,1],[1,0])";
    let dot = format!(
        "  %y = constant {{value = 2.0}} : tensor<64x32xf32, {b}>
  %c = constant {{value = 0.0}} : tensor<32x32xf32, {acc}>
  %d = dot {{precision = ieee}} %x, %y, %c : tensor<32x32xf32, {acc}>"
    );
    let e = compile(&one_op("32x64", b, &dot), Arch::Sm90a).unwrap_err();
    assert!(e.message.contains("operand A"), "{e}");
    assert!(e.message.contains("= dot`") && e.message.contains("DotOperandLayout"), "{e}");
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
        for arch in [Arch::Sm80, Arch::Sm90a, Arch::Sm100a] {
            let k = kernel(name, arch);
            let file = dir.join(format!("{name}.{}.ptx", arch.target()));
            std::fs::write(&file, &k.ptx).unwrap();
            let out = Command::new(&ptxas)
                .args(["-arch", arch.target(), "-o", "/dev/null"])
                .arg(&file)
                .output()
                .expect("running ptxas");
            let stderr = String::from_utf8_lossy(&out.stderr);
            eprintln!("ptxas -arch {} {name}: {}", arch.target(), if out.status.success() { "ok" } else { "FAILED" });
            if !out.status.success() || !stderr.trim().is_empty() {
                failures.push(format!("{name} {}: {stderr}", arch.target()));
            }
        }
    }
    assert!(failures.is_empty(), "ptxas rejected:\n{}", failures.join("\n"));
}
