//! Blackwell tensor memory and tcgen05 MMAs in gluon kernels (`tests/kernels/gluon_tcgen05.py`), in the
//! interpreter: a tensor-memory round trip, tcgen05 MMA tiles (A from shared or tensor memory, `use_acc` off and
//! on, completion through `mbarriers=` and through `tcgen05_commit`) against a float64 reference, the IR round
//! trip, a blocked matmul over a ring of TMA-filled buffers, two MMAs in the orders the ISA gives (one
//! accumulator) and does not (an MMA over the tensor memory an earlier one reads: an error without the wait), and
//! the errors: an accumulator read or an operand overwritten before the wait (also through a reinterpreting view), a wrong register layout, tensor memory over
//! the budget, and waits no commit completes (a missing commit, a wrong arrival count: named deadlocks).

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::ArgSpec;
use tessel_tile::ScalarType::*;

fn source() -> String {
    let path = format!("{}/../tests/kernels/gluon_tcgen05.py", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn a_tensor_memory_round_trip_gives_back_what_was_stored() {
    for init in [false, true] {
        let (m, n) = (128usize, 64usize);
        let f =
            elab(&source(), "tmem_round_trip", vec![ptr(F32), ptr(F32), cint(m as i64), cint(n as i64), cbool(init)]);
        let text = f.to_string();
        assert!(text.contains("tmem_alloc") && text.contains("tmem_load"), "{text}");
        assert!(text.contains("TensorMemoryLayout((128,64), 1)"), "{text}");
        let mut rng = Rng::new(33 + init as u64);
        let x = rng.vec(m * n);
        let mut mem = Memory::new();
        let bx = mem.alloc_from("x", F32, &x);
        let by = poisoned(&mut mem, "y", F32, m * n);
        run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
        let y = mem.read_f64(by);
        let x32: Vec<f64> = x.iter().map(|&v| v as f32 as f64).collect();
        assert_eq!(y, x32, "init = {init}");
    }
}

#[test]
fn tensor_memory_slices_read_their_columns() {
    let (m, n) = (128usize, 64usize);
    let f = elab(&source(), "tmem_slices", vec![ptr(F32), ptr(F32), cint(m as i64), cint(n as i64)]);
    let text = f.to_string();
    assert!(text.contains("memdesc_slice {dim = 1, start = 32}"), "{text}");
    assert!(text.contains("memdesc<128x32xf32, TensorMemoryLayout((128,32), 1)>"), "{text}");
    let x = Rng::new(3).vec(m * n);
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, m * n);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(by), x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
}

/// `A @ B (+ C when use_acc)` for one tile; `Err` with the interpreter's message.
fn mma(m: usize, n: usize, k: usize, a_in_tmem: bool, use_acc: bool, commit: bool) -> Result<(), String> {
    let args = vec![
        ptr(F16),
        ptr(F16),
        ptr(F32),
        ptr(F32),
        cint(m as i64),
        cint(n as i64),
        cint(k as i64),
        cbool(a_in_tmem),
        cbool(use_acc),
        cbool(commit),
    ];
    let f = elab(&source(), "mma_tile", args);
    let text = f.to_string();
    assert!(text.contains("tcgen05_mma"), "{text}");
    assert_eq!(text.contains("tcgen05_commit"), commit, "{text}");
    let mut rng = Rng::new((m * 7 + n * 3 + k) as u64 + a_in_tmem as u64 + 2 * use_acc as u64);
    let (a, b) = (rounded(F16, &rng.vec(m * k)), rounded(F16, &rng.vec(k * n)));
    let c = rounded(F32, &rng.vec(m * n));
    let mut mem = Memory::new();
    let (ba, bb, bc) = (mem.alloc_from("a", F16, &a), mem.alloc_from("b", F16, &b), mem.alloc_from("c", F32, &c));
    let bo = poisoned(&mut mem, "out", F32, m * n);
    let args = [Arg::Buffer(ba), Arg::Buffer(bb), Arg::Buffer(bc), Arg::Buffer(bo)];
    tessel_interp::run(&f, &args, [1, 1, 1], &mut mem).map_err(|e| e.to_string())?;
    let reference: Vec<f64> = (0..m * n)
        .map(|i| (0..k).map(|p| a[i / n * k + p] * b[p * n + i % n]).sum::<f64>() + if use_acc { c[i] } else { 0.0 })
        .collect();
    let what = format!("tcgen05 {m}x{n}x{k} a_in_tmem={a_in_tmem} use_acc={use_acc} commit={commit}");
    assert_close(&what, &mem.read_f64(bo), &reference, 1e-6);
    Ok(())
}

#[test]
fn tcgen05_mma_tiles_match_a_float64_reference() {
    for (m, n, k) in [(128, 64, 32), (64, 32, 16)] {
        for use_acc in [false, true] {
            for commit in [false, true] {
                mma(m, n, k, false, use_acc, commit).unwrap();
            }
        }
    }
}

#[test]
fn tcgen05_mma_reads_a_from_tensor_memory() {
    for use_acc in [false, true] {
        mma(128, 64, 32, true, use_acc, use_acc).unwrap();
    }
}

/// Runs `kernel(A, B, Out, M=128, N=64, K=32, last)` of the kernels file in the interpreter on fresh fp16
/// operands, which must fail: its error.
fn mma_error(kernel: &str, last: ArgSpec) -> String {
    let (m, n, k) = (128usize, 64usize, 32usize);
    let args = vec![ptr(F16), ptr(F16), ptr(F32), cint(m as i64), cint(n as i64), cint(k as i64), last];
    let f = elab(&source(), kernel, args);
    let mut rng = Rng::new(5);
    let mut mem = Memory::new();
    let ba = mem.alloc_from("a", F16, &rounded(F16, &rng.vec(m * k)));
    let bb = mem.alloc_from("b", F16, &rounded(F16, &rng.vec(k * n)));
    let bo = poisoned(&mut mem, "out", F32, m * n);
    run_error(&f, &[Arg::Buffer(ba), Arg::Buffer(bb), Arg::Buffer(bo)], &mut mem)
}

fn too_early(overwrite: bool) -> String {
    mma_error("mma_read_too_early", cbool(overwrite))
}

#[test]
fn an_accumulator_read_before_the_wait_is_refused() {
    let err = too_early(false);
    assert!(err.contains("tmem_load reads tensor-memory buffer") && err.contains("the tcgen05_mma into"), "{err}");
}

#[test]
fn an_operand_overwritten_before_the_wait_is_refused() {
    let err = too_early(true);
    assert!(err.contains("overwrites a shared-memory operand of the tcgen05_mma into"), "{err}");
}

/// `mma_issue_order` at 128x64x32 (`case` as its docstring says): the output, or the interpreter's error.
fn issue_order(case: i64) -> Result<Vec<f64>, String> {
    let (m, n, k) = (128usize, 64usize, 32usize);
    let args = vec![ptr(F16), ptr(F16), ptr(F32), cint(m as i64), cint(n as i64), cint(k as i64), cint(case)];
    let f = elab(&source(), "mma_issue_order", args);
    let mut rng = Rng::new(9 + case as u64);
    let (a, b) = (rounded(F16, &rng.vec(m * k)), rounded(F16, &rng.vec(k * n)));
    let mut mem = Memory::new();
    let (ba, bb) = (mem.alloc_from("a", F16, &a), mem.alloc_from("b", F16, &b));
    let bo = poisoned(&mut mem, "out", F32, m * n);
    let args = [Arg::Buffer(ba), Arg::Buffer(bb), Arg::Buffer(bo)];
    tessel_interp::run(&f, &args, [1, 1, 1], &mut mem).map_err(|e| e.to_string())?;
    let ab: Vec<f64> = (0..m * n).map(|i| (0..k).map(|p| a[i / n * k + p] * b[p * n + i % n]).sum::<f64>()).collect();
    let want: Vec<f64> = ab.iter().map(|x| if case == 0 { 2.0 * x } else { *x }).collect();
    let got = mem.read_f64(bo);
    assert_close(&format!("issue order case {case}"), &got, &want, 1e-6);
    Ok(got)
}

#[test]
fn mmas_into_one_accumulator_run_in_issue_order() {
    issue_order(0).unwrap();
}

#[test]
fn an_mma_overwriting_an_operand_of_one_in_flight_is_refused_unless_waited_for() {
    let err = issue_order(1).unwrap_err();
    assert!(err.contains("the tcgen05_mma into `cols` writes tensor-memory cells that the earlier tcgen05_mma into `acc`, still in flight, reads"), "{err}");
    assert!(err.contains("only when both are MMAs into the same accumulator"), "{err}");
    issue_order(2).unwrap();
}

/// `tmem_reuse` at 128x64x32: the tensor-memory plan places `later` on the columns of `a_t` (A, read back
/// after the MMA that reads it: its last use), and the interpreter puts both there as the compiled kernel does,
/// so `later`'s store while that MMA is in flight is refused, naming both; after the wait it runs (Out = A B,
/// Back = A).
#[test]
fn a_buffer_planned_on_the_columns_an_mma_in_flight_reads_is_not_written_before_the_wait() {
    let (m, n, k) = (128usize, 64usize, 32usize);
    let mut rng = Rng::new(12);
    let (a, b) = (rounded(F16, &rng.vec(m * k)), rounded(F16, &rng.vec(k * n)));
    let run_it = |wait: bool| -> Result<[Vec<f64>; 2], String> {
        let args = vec![ptr(F16), ptr(F16), ptr(F32), ptr(F16), cint(m as i64), cint(n as i64), cint(k as i64)];
        let f = elab(&source(), "tmem_reuse", [args, vec![cbool(wait)]].concat());
        let plan = tessel_tile::tmem::plan(&f).unwrap().expect("tensor memory");
        let column = |name: &str| {
            let v = (0..f.values.len())
                .map(|i| tessel_tile::ir::ValueId(i as u32))
                .find(|&v| f.value(v).name.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("no %{name}"));
            plan.columns[&v]
        };
        assert_eq!(column("a_t"), column("later"), "the plan shares the columns");
        assert_ne!(column("a_t"), column("acc"));
        let mut mem = Memory::new();
        let (ba, bb) = (mem.alloc_from("a", F16, &a), mem.alloc_from("b", F16, &b));
        let (bo, bback) = (poisoned(&mut mem, "out", F32, m * n), poisoned(&mut mem, "back", F16, m * k));
        let args = [Arg::Buffer(ba), Arg::Buffer(bb), Arg::Buffer(bo), Arg::Buffer(bback)];
        tessel_interp::run(&f, &args, [1, 1, 1], &mut mem).map_err(|e| e.to_string())?;
        Ok([mem.read_f64(bo), mem.read_f64(bback)])
    };
    let Err(err) = run_it(false) else { panic!("`later` stored while the MMA reading its columns is in flight ran") };
    assert!(
        err.contains(
            "tmem_store writes tensor-memory buffer `later` while the tcgen05_mma into `acc` reading it is in flight"
        ),
        "{err}"
    );
    let [out, back] = run_it(true).unwrap();
    let want: Vec<f64> = (0..m * n).map(|i| (0..k).map(|p| a[i / n * k + p] * b[p * n + i % n]).sum()).collect();
    assert_close("A B", &out, &want, 1e-6);
    assert_eq!(back, a, "Back = A");
}

/// A wait no commit will complete: `variant` 0 issues the MMA without `mbarriers=` and commits nothing, 1
/// initializes the barrier for two arrivals where the MMA's completion is one. Both are named deadlocks.
fn broken_wait(variant: i64) -> String {
    mma_error("mma_broken_sync", cint(variant))
}

#[test]
fn a_missing_commit_is_a_named_deadlock() {
    let err = broken_wait(0);
    assert!(err.contains("deadlock") && err.contains("lacks 1 arrival(s)"), "{err}");
}

#[test]
fn a_wrong_barrier_count_is_a_named_deadlock() {
    let err = broken_wait(1);
    assert!(err.contains("deadlock") && err.contains("lacks 1 arrival(s)"), "{err}");
}

#[test]
fn a_tensor_memory_load_in_a_blocked_layout_is_refused_at_its_argument() {
    let src = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout, allocate_tensor_memory

@gluon.jit
def wrong_layout(Y):
    t = allocate_tensor_memory(gl.float32, [128, 64], TensorMemoryLayout((128, 64), col_stride=1))
    y = t.load(gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]))
    gl.store(Y + gl.arange(0, 128)[:, None] * 64 + gl.arange(0, 64)[None, :], y)
"#;
    let err = elab_error(src, "wrong_layout", vec![ptr(F32)]);
    assert!(err.contains("must be an access layout of TensorMemoryLayout((128,64), 1) over 4 warps"), "{err}");
    assert!(
        err.contains("use `mem.get_reg_layout()` or `get_tmem_reg_layout(float32, [128, 64], layout, 4)`"),
        "{err}"
    );
    assert!(err.contains("t.load(gl.BlockedLayout"), "the span points at the layout argument: {err}");
}

fn desc(block: &[u32]) -> tessel_lang::elab::ArgSpec {
    tessel_lang::elab::ArgSpec::TensorDesc { elem: F16, block_shape: block.to_vec(), padding_nan: false, layout: None }
}

/// Runs `tma_ring_matmul` of `src` on 200x72x168; `Err` with the interpreter's message.
fn ring_matmul(src: &str) -> Result<(), String> {
    let (bm, bn, bk) = (128u32, 64u32, 32u32);
    let f =
        elab(src, "tma_ring_matmul", vec![desc(&[bm, bk]), desc(&[bk, bn]), ptr(F32), int(), int(), int(), cint(3)]);
    let text = f.to_string();
    for op in ["tma_load", "tcgen05_mma", "mbarrier_wait", "tmem_load"] {
        assert!(text.contains(op), "{op} missing:\n{text}");
    }
    // M, N, K not multiples of the blocks (K over several trips of the ring); rows padded to 16-byte multiples.
    let (m, n, k) = (200usize, 72usize, 168usize);
    let (lda, ldb) = (168usize, 72usize);
    let mut rng = Rng::new(19);
    let (a, b) = (rounded(F16, &rng.vec(m * lda)), rounded(F16, &rng.vec(k * ldb)));
    let mut mem = Memory::new();
    let (ba, bb) = (mem.alloc_from("a", F16, &a), mem.alloc_from("b", F16, &b));
    let bc = poisoned(&mut mem, "c", F32, m * n);
    let d = |buf, rows: usize, cols: usize, ld: usize| {
        [Arg::Buffer(buf), Arg::Int(rows as i64), Arg::Int(cols as i64), Arg::Int(ld as i64), Arg::Int(1)]
    };
    let mut args: Vec<Arg> = Vec::new();
    args.extend(d(ba, m, k, lda));
    args.extend(d(bb, k, n, ldb));
    args.extend([Arg::Buffer(bc), Arg::Int(m as i64), Arg::Int(n as i64), Arg::Int(k as i64)]);
    let grid = [m.div_ceil(bm as usize) as u32, n.div_ceil(bn as usize) as u32, 1];
    tessel_interp::run(&f, &args, grid, &mut mem).map_err(|e| e.to_string())?;
    let reference: Vec<f64> =
        (0..m * n).map(|i| (0..k).map(|p| a[i / n * lda + p] * b[p * ldb + i % n]).sum()).collect();
    assert_close("tcgen05 TMA ring matmul 200x72x168", &mem.read_f64(bc), &reference, 1e-6);
    Ok(())
}

#[test]
fn a_tma_ring_matmul_matches_a_float64_reference_on_ragged_sizes() {
    ring_matmul(&source()).unwrap();
}

#[test]
fn a_ring_refilled_before_its_mma_is_done_is_refused() {
    let src = source();
    let wait = "        if refill & (k > 0):\n            mbarrier.wait(free.index(ns), ((k - 1) // STAGES) % 2)\n";
    assert!(src.contains(wait));
    let err = ring_matmul(&src.replace(wait, "")).unwrap_err();
    assert!(
        err.contains("tma_load into") && err.contains("overwrites a shared-memory operand of the tcgen05_mma"),
        "{err}"
    );
}

const HEADER: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout, allocate_tensor_memory, fence_async_shared, mbarrier, tcgen05_commit, tcgen05_mma)
"#;

#[test]
fn a_reinterpreting_view_read_before_the_wait_is_refused_naming_the_mma() {
    // S = A @ B in flight; reading its cells as P (f16, the older unpacked spelling) before the wait is a read of
    // pending cells; with the wait it is fine.
    let body = r#"
@gluon.jit
def p_too_early(A, B, Out, WAIT: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, L))
    k = gl.arange(0, 32, layout=gl.SliceLayout(0, L))
    kr = gl.arange(0, 32, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, L))
    a_s = gl.allocate_shared_memory(gl.float16, [128, 32], gl.NVMMASharedLayout.get_default_for([128, 32], gl.float16),
                                    gl.load(A + r[:, None] * 32 + k[None, :]))
    b_s = gl.allocate_shared_memory(gl.float16, [32, 64], gl.NVMMASharedLayout.get_default_for([32, 64], gl.float16),
                                    gl.load(B + kr[:, None] * 64 + c[None, :]))
    s = allocate_tensor_memory(gl.float32, [128, 64], TensorMemoryLayout((128, 64), col_stride=1))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    fence_async_shared()
    tcgen05_mma(a_s, b_s, s, use_acc=False)
    tcgen05_commit(bar)
    if WAIT:
        mbarrier.wait(bar, 0)
    p = s._reinterpret(gl.float16, [128, 64], TensorMemoryLayout((128, 64), unpacked=True))
    x = p.load()
    regs: gl.constexpr = p.get_reg_layout()
    gl.store(Out + gl.arange(0, 128, layout=gl.SliceLayout(1, regs))[:, None] * 64
             + gl.arange(0, 64, layout=gl.SliceLayout(0, regs))[None, :], x)
    if not WAIT:
        mbarrier.wait(bar, 0)
"#;
    let src = format!("{HEADER}{body}");
    let run_it = |wait: bool| {
        let f = elab(&src, "p_too_early", vec![ptr(F16), ptr(F16), ptr(F16), cbool(wait)]);
        let text = f.to_string();
        assert!(text.contains("memdesc_reinterpret") && text.contains("TensorMemoryLayout((128,64), 2)"), "{text}");
        let mut rng = Rng::new(8);
        let mut mem = Memory::new();
        let ba = mem.alloc_from("a", F16, &rounded(F16, &rng.vec(128 * 32)));
        let bb = mem.alloc_from("b", F16, &rounded(F16, &rng.vec(32 * 64)));
        let bo = poisoned(&mut mem, "out", F16, 128 * 64);
        let args = [Arg::Buffer(ba), Arg::Buffer(bb), Arg::Buffer(bo)];
        tessel_interp::run(&f, &args, [1, 1, 1], &mut mem).map_err(|e| e.to_string())
    };
    run_it(true).unwrap();
    let err = run_it(false).unwrap_err();
    assert!(err.contains("tmem_load reads tensor-memory buffer") && err.contains("the tcgen05_mma into"), "{err}");
}

#[test]
fn tensor_memory_over_the_budget_is_an_interpreter_error_naming_the_buffers() {
    // Three 256-column buffers live at once do not fit; when each is done before the next but one is allocated,
    // they share columns.
    let body = r#"
@gluon.jit
def budget(X, Y, THIRD_LIVE: gl.constexpr):
    layout: gl.constexpr = TensorMemoryLayout((128, 256), col_stride=1)
    a = allocate_tensor_memory(gl.float32, [128, 256], layout)
    regs: gl.constexpr = a.get_reg_layout()
    offs = (gl.arange(0, 128, layout=gl.SliceLayout(1, regs))[:, None] * 256
            + gl.arange(0, 256, layout=gl.SliceLayout(0, regs))[None, :])
    a.store(gl.load(X + offs))
    b = allocate_tensor_memory(gl.float32, [128, 256], layout, value=a.load())
    if THIRD_LIVE:
        c = allocate_tensor_memory(gl.float32, [128, 256], layout, value=b.load())
        gl.store(Y + offs, a.load() + b.load() + c.load())
    else:
        c = allocate_tensor_memory(gl.float32, [128, 256], layout, value=b.load())
        gl.store(Y + offs, c.load() + c.load())
"#;
    let src = format!("{HEADER}{body}");
    let run_it = |third: bool| {
        let f = elab(&src, "budget", vec![ptr(F32), ptr(F32), cbool(third)]);
        let x = Rng::new(2).vec(128 * 256);
        let mut mem = Memory::new();
        let bx = mem.alloc_from("x", F32, &x);
        let by = poisoned(&mut mem, "y", F32, 128 * 256);
        tessel_interp::run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem).map_err(|e| e.to_string())
    };
    run_it(false).unwrap();
    let err = run_it(true).unwrap_err();
    assert!(
        err.contains("tmem_alloc: the kernel needs 768 tensor-memory columns, more than the 512 of a CTA"),
        "{err}"
    );
    for name in ["%a", "%b", "%c"] {
        assert!(err.contains(&format!("{name} (memdesc<128x256xf32")), "{name}: {err}");
    }
}

/// One buffer of a `[2, 128, 32]` tensor-memory buffer picked by a runtime index: buffer 1 holds what was stored
/// there (its own columns), and an index past the buffers is an error naming the view (not a crash).
#[test]
fn a_tensor_memory_buffer_index_out_of_range_is_an_error() {
    let body = r#"
@gluon.jit
def pick(X, Y, I):
    layout: gl.constexpr = TensorMemoryLayout((128, 32), col_stride=1)
    t = allocate_tensor_memory(gl.float32, [2, 128, 32], layout)
    regs: gl.constexpr = t.index(0).get_reg_layout()
    offs = (gl.arange(0, 128, layout=gl.SliceLayout(1, regs))[:, None] * 32
            + gl.arange(0, 32, layout=gl.SliceLayout(0, regs))[None, :])
    x = gl.load(X + offs)
    t.index(0).store(x)
    t.index(1).store(x + 1.0)
    gl.store(Y + offs, t.index(I).load())
"#;
    let src = format!("{HEADER}{body}");
    let f = elab(&src, "pick", vec![ptr(F32), ptr(F32), int()]);
    let x = Rng::new(3).vec(128 * 32);
    let run_it = |i: i64| {
        let mut mem = Memory::new();
        let bx = mem.alloc_from("x", F32, &x);
        let by = poisoned(&mut mem, "y", F32, 128 * 32);
        let args = [Arg::Buffer(bx), Arg::Buffer(by), Arg::Int(i)];
        tessel_interp::run(&f, &args, [1, 1, 1], &mut mem).map(|_| mem.read_f64(by)).map_err(|e| e.to_string())
    };
    let want: Vec<f64> = x.iter().map(|v| (*v as f32 + 1.0) as f64).collect();
    assert_eq!(run_it(1).unwrap(), want);
    let Err(err) = run_it(2) else { panic!("buffer 2 of 2 was read") };
    assert!(err.contains("is used, but it is memdesc_index 2 of 2 buffers, out of range"), "{err}");
}

#[test]
fn a_tensor_memory_scales_buffer_holds_8_bit_scales() {
    let body = |dtype: &str| {
        format!(
            r#"
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryScalesLayout

@gluon.jit
def scales(Y):
    layout: gl.constexpr = TensorMemoryScalesLayout()
    gl.static_print(layout)
    s = allocate_tensor_memory({dtype}, [128, 4], layout)
"#
        )
    };
    elab(&format!("{HEADER}{}", body("gl.uint8")), "scales", vec![ptr(F32)]);
    let err = elab_error(&format!("{HEADER}{}", body("gl.float32")), "scales", vec![ptr(F32)]);
    assert!(err.contains("block scales are 8-bit: u8 (e8m0) or float8e4nv (e4m3), got f32"), "{err}");
}
