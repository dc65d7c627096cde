//! The software pipeliner changes when work happens, never what it computes: example kernels are compiled to
//! layout IR, pipelined with several stage counts, and both versions run in the interpreter on the same random
//! inputs. The interpreter enforces the asynchronous rules (data lands at the wait that retires its copy
//! group, no buffer is overwritten while an asynchronous wgmma may read it), so a wrong ring index, wait depth
//! or predicate shows up as an error or as different bits; the dots accumulate in the same order, so the
//! results must be identical.

mod common;

use std::path::Path;

use common::{c, int, ptr};
use tessel::interp::memory::{BufferId, Memory};
use tessel::interp::{Arg, Limits, Schedule, run_with_limits};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{F16, F32, I32};
use tessel::tile::ir::Func;
use tessel::tile::types::ScalarType;
use tessel::tile::{KernelConfig, Target};

fn random(n: usize, seed: u64) -> Vec<f64> {
    tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(seed), n, F16)
}

/// The kernel in layout IR (before scheduling) for `stages` stages on sm_90a; `file` is in `examples/`, or in
/// `tests/kernels/` when it starts with `kernels/`.
fn layout_ir(file: &str, kernel: &str, args: Vec<ArgSpec>, warps: u32, stages: u32) -> Func {
    let dir = if file.starts_with("kernels/") { "tests" } else { "examples" };
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(file)).unwrap();
    let spec = Specialization::with_config(
        args,
        KernelConfig { num_warps: warps, num_stages: stages, ..KernelConfig::DEFAULT },
    );
    let ks = tessel::KernelSource { file, source: &source, kernel, spec: &spec, module: None };
    match tessel::pipeline::run(&ks, Target::Sm90a, Stage::Layout, None, &mut Default::default()) {
        Ok(Output::Layout(f)) => f,
        Ok(_) => unreachable!("stopped at layout"),
        Err(e) => panic!("{file}::{kernel}: {e}"),
    }
}

enum V {
    Buf(ScalarType, Vec<f64>),
    Out(ScalarType, usize),
    Int(i64),
    F32(f32),
}

/// Runs `f` on `vals`; returns the bytes of the outputs.
fn outputs(f: &Func, vals: &[V], grid: [u32; 3]) -> Vec<Vec<u8>> {
    outputs_under(f, vals, grid, Schedule::default())
}

/// [`outputs`] with the partitions of a `warp_specialize` taking turns as `schedule` says.
fn outputs_under(f: &Func, vals: &[V], grid: [u32; 3], schedule: Schedule) -> Vec<Vec<u8>> {
    let mut mem = Memory::new();
    let mut args = Vec::new();
    let mut outs: Vec<BufferId> = Vec::new();
    for (i, v) in vals.iter().enumerate() {
        match v {
            V::Buf(t, data) => args.push(Arg::Buffer(mem.alloc_from(format!("a{i}"), *t, data))),
            V::Out(t, n) => {
                let id = mem.alloc_from(format!("a{i}"), *t, &vec![f64::NAN; *n]);
                outs.push(id);
                args.push(Arg::Buffer(id));
            }
            V::Int(x) => args.push(Arg::Int(*x)),
            V::F32(x) => args.push(Arg::Float(*x as f64)),
        }
    }
    let limits = Limits { schedule, ..Limits::default() };
    run_with_limits(f, &args, grid, &mut mem, limits).unwrap_or_else(|e| panic!("{}: interpreter: {e}", f.name));
    outs.into_iter().map(|id| mem.buffer(id).bytes.clone()).collect()
}

/// Pipelines `f` and checks the loops it expected to be taken were, and the result verifies.
fn pipelined(f: &Func, expect_taken: usize) -> Func {
    let mut p = f.clone();
    let schedules = tessel::sched::pipeline(&mut p).unwrap();
    let taken = schedules.iter().filter(|s| s.num_stages() > 1).count();
    assert_eq!(taken, expect_taken, "{}", tessel::sched::print(f, &schedules));
    tessel::tile::verify::verify(&p).unwrap_or_else(|e| panic!("pipelined IR does not verify: {e}"));
    p
}

/// The tutorial matmul with the specialization Triton's launcher gives real shapes: N, K, the leading dims and
/// the pointers divisible by 16, unit strides constant (so the loads are 16-byte vectors cp.async can copy; the
/// tutorial's `offs_bn % N` keeps B's contiguity only when N is). M is arbitrary.
fn matmul(m: usize, n: usize, k: usize, (bm, bn, bk): (i64, i64, i64), warps: u32, stages: u32) {
    matmul_of(F16, m, n, k, (bm, bn, bk), warps, stages, 2);
}

#[allow(clippy::too_many_arguments)]
fn matmul_of(
    t: ScalarType,
    m: usize,
    n: usize,
    k: usize,
    (bm, bn, bk): (i64, i64, i64),
    warps: u32,
    stages: u32,
    pipelined_loads: usize,
) -> String {
    assert!(k % 16 == 0 && n % 16 == 0);
    let (lda, ldb) = (k.next_multiple_of(16).max(16), n.next_multiple_of(16));
    let mut spec = vec![ptr(t), ptr(t), ptr(F16), int(false), int(true), int(true)];
    spec.extend([int(true), c(1), int(true), c(1), int(true), c(1)]);
    spec.extend([c(bm), c(bn), c(bk), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    let f = layout_ir("matmul.py", "matmul_kernel", spec, warps, stages);
    let p = pipelined(&f, 1);
    let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
    assert!(schedule.contains(&format!("{pipelined_loads} load(s) pipelined")), "{schedule}");
    let mut vals = vec![V::Buf(t, random(m * lda, 1)), V::Buf(t, random(k * ldb, 2)), V::Out(F16, m * ldb)];
    vals.extend([m, n, k, lda, ldb, ldb].map(|x| V::Int(x as i64)));
    let grid = [(m.div_ceil(bm as usize) * n.div_ceil(bn as usize)) as u32, 1, 1];
    let (want, got) = (outputs(&f, &vals, grid), outputs(&p, &vals, grid));
    assert!(want == got, "matmul {m}x{n}x{k} tile {bm}x{bn}x{bk} stages {stages}: pipelined result differs");
    schedule
}

#[test]
fn pipelined_matmul_computes_what_the_loop_as_written_does() {
    // Trip counts 0 (K = 0), 1, 2 (fewer than the stages in flight), 3 and 5 with a ragged last block; 2, 3
    // and 4 stages (rings of 2, 4 and 4 buffers); one and two warpgroups.
    for (k, stages) in [(0, 3), (16, 3), (64, 3), (80, 2), (80, 3), (144, 4), (144, 2)] {
        matmul(70, 48, k, (64, 32, 32), 4, stages);
    }
    matmul(130, 80, 208, (128, 64, 32), 8, 3);
}

/// fp8 wgmma reads both operands K-major: B, loaded along N, would be scattered byte by byte in its buffer, so
/// only A goes through cp.async; B is stored into one buffer every iteration, so the dot may not stay in
/// flight across the back edge (the next iteration's store would overwrite what it reads).
#[test]
fn fp8_matmul_pipelines_a_only_and_keeps_the_dot_synchronous() {
    let schedule = matmul_of(tessel::tile::ScalarType::F8E4M3, 70, 48, 144, (64, 32, 32), 4, 3, 1);
    assert!(!schedule.contains("asynchronously"), "{schedule}");
}

fn attention(n_ctx: usize, d: usize, causal: bool, stages: u32) {
    let (z, h, (bm, bn)) = (1usize, 2usize, (64usize, 32usize));
    let mut spec = vec![ptr(F16), ptr(F16), ptr(F16), ArgSpec::Float(F32), ptr(F32), ptr(F16)];
    for _ in 0..4 {
        spec.extend([int(true), int(true), int(true), c(1)]);
    }
    spec.extend([int(false), int(false), int(false)]);
    spec.extend([c(d as i64), c(bm as i64), c(bn as i64), ArgSpec::Constexpr(ConstValue::Bool(causal))]);
    let f = layout_ir("flash_attention.py", "_attn_fwd", spec, 4, stages);
    let p = pipelined(&f, if causal { 2 } else { 1 });
    // The second dot (P @ V) stays in flight into the next iteration, retired before `acc * alpha`.
    let schedules = tessel::sched::pipeline(&mut f.clone()).unwrap();
    let printed = tessel::sched::print(&f, &schedules);
    assert!(printed.contains("runs asynchronously, waited for before"), "{printed}");
    let len = z * h * n_ctx * d;
    let mut vals = vec![
        V::Buf(F16, random(len, 3)),
        V::Buf(F16, random(len, 4)),
        V::Buf(F16, random(len, 5)),
        V::F32(0.125),
        V::Out(F32, z * h * n_ctx),
        V::Out(F16, len),
    ];
    for _ in 0..4 {
        vals.extend([h * n_ctx * d, n_ctx * d, d].map(|s| V::Int(s as i64)));
    }
    vals.extend([z, h, n_ctx].map(|x| V::Int(x as i64)));
    let grid = [n_ctx.div_ceil(bm) as u32, (z * h) as u32, 1];
    let (want, got) = (outputs(&f, &vals, grid), outputs(&p, &vals, grid));
    assert!(want == got, "attention n_ctx {n_ctx} d {d} causal {causal} stages {stages}: pipelined result differs");
}

#[test]
fn pipelined_attention_computes_what_the_loop_as_written_does() {
    attention(100, 64, true, 3);
    attention(100, 64, false, 2);
    // One key block (the wait at the top of the only iteration retires nothing), and none (zero-trip stage 1).
    attention(30, 64, false, 4);
    attention(20, 64, true, 2);
}

/// A tile two dots read, one of them transposed (attention backward's `dot(k, qT)` and `dot(p, tl.trans(qT))`):
/// one ring serves both, the second dot through a permuted view of the buffer the first reads. Trip counts 0
/// to 5, 2 to 4 stages.
#[test]
fn a_load_staged_for_two_dots_pipelines_through_one_ring() {
    let (block, d) = (64usize, 64usize);
    for (steps, stages) in [(0usize, 3u32), (1, 3), (2, 4), (5, 3), (5, 2), (3, 4)] {
        let spec = vec![ptr(F16), ptr(F16), ptr(F32), int(true), c(block as i64), c(d as i64)];
        let f = layout_ir("kernels/staged_twice.py", "staged_twice", spec, 4, stages);
        let p = pipelined(&f, 1);
        let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
        assert!(schedule.contains("1 load(s) pipelined"), "{schedule}");
        let n = steps * block;
        let vals = [
            V::Buf(F16, random(block * d, 6)),
            V::Buf(F16, random(n.max(1) * d, 7)),
            V::Out(F32, block * d),
            V::Int(n as i64),
        ];
        let (want, got) = (outputs(&f, &vals, [1, 1, 1]), outputs(&p, &vals, [1, 1, 1]));
        assert!(want == got, "{steps} steps, {stages} stages: pipelined result differs");
    }
}

/// Attention backward's inputs for `heads` heads of `n_ctx` x 64: Q, K, V, dO (f16), then the rows' log-sum-exp M
/// (around 16, so that `exp2(qk - m)` stays in range) and delta D (f32).
fn attention_backward_inputs(heads: usize, n_ctx: usize, seed: u64) -> Vec<V> {
    let len = heads * n_ctx * 64;
    let mut vals: Vec<V> = (0..4).map(|i| V::Buf(F16, random(len, seed + i))).collect();
    let rows = random(heads * n_ctx, seed + 4);
    vals.push(V::Buf(F32, rows.iter().map(|x| 16.0 + 4.0 * x).collect()));
    vals.push(V::Buf(F32, random(heads * n_ctx, seed + 5)));
    vals
}

/// Attention backward's two inner loops (`tests/kernels/attn_bwd.py`, the tutorial's shapes at head dim 64): the
/// dk/dv loop pipelines its two tiles and its two row vectors (M, D) and runs its four dots asynchronously, the
/// causal one too (its mask reads the rows the vectors are loaded for, from the row offset stage 0 carries ahead:
/// the last stage takes it back), the dq loop its two tiles with three asynchronous dots. 2 to 5 stages, 2 to 6 iterations (fewer than the copies in flight too).
#[test]
fn attention_backward_loops_pipelined_compute_what_they_do_as_written() {
    let heads = 2usize;
    for (n_ctx, stages) in [(64usize, 3u32), (64, 5), (192, 2), (192, 4), (128, 5)] {
        for mask in [false, true] {
            let spec = common::attn_bwd_dkdv_spec(mask);
            let f = layout_ir("kernels/attn_bwd.py", "attn_bwd_dkdv", spec, 4, stages);
            let p = pipelined(&f, 1);
            let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
            let pipelined = schedule.contains("4 load(s) pipelined");
            assert!(pipelined && schedule.contains("every dot runs asynchronously"), "{schedule}");
            let mut vals = attention_backward_inputs(heads, n_ctx, 11);
            vals.extend([V::Out(F16, heads * n_ctx * 64), V::Out(F16, heads * n_ctx * 64), V::F32(0.125)]);
            vals.push(V::Int(n_ctx as i64));
            let grid = [(n_ctx / 64) as u32, heads as u32, 1];
            let (want, got) = (outputs(&f, &vals, grid), outputs(&p, &vals, grid));
            assert!(want == got, "dk/dv, n_ctx {n_ctx}, mask {mask}, {stages} stages: pipelined result differs");
        }
        let mut spec = vec![ptr(F16), ptr(F16), ptr(F16), ptr(F16), ptr(F32), ptr(F32), ptr(F16)];
        spec.extend([int(true), c(64), c(64), c(32)]);
        let f = layout_ir("kernels/attn_bwd.py", "attn_bwd_dq", spec, 4, stages);
        let p = pipelined(&f, 1);
        let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
        assert!(schedule.contains("2 load(s) pipelined") && schedule.contains("asynchronously"), "{schedule}");
        let mut vals = attention_backward_inputs(heads, n_ctx, 17);
        vals.extend([V::Out(F16, heads * n_ctx * 64), V::Int(n_ctx as i64)]);
        let grid = [(n_ctx / 64) as u32, heads as u32, 1];
        let (want, got) = (outputs(&f, &vals, grid), outputs(&p, &vals, grid));
        assert!(want == got, "dq, n_ctx {n_ctx}, {stages} stages: pipelined result differs");
    }
}

/// A value computed for the pipelined load and carried out of the loop (`offs`) holds the last iteration's after
/// it, not the one stage 0 computed ahead: from the loop index it is computed again in the last stage, and so it
/// is from a counter the loop advances by a constant step (taken back by the stages in flight); from a counter
/// that wraps around it cannot be, and the loop runs as written. 0 to 5 iterations, 2 to 4 stages.
#[test]
fn values_carried_out_of_a_pipelined_loop_are_the_last_iterations() {
    for (kernel, pipelines) in [("last_offsets", true), ("last_offsets_counted", true), ("last_offsets_wrapped", false)]
    {
        for (k, stages) in [(0usize, 3u32), (64, 3), (128, 2), (128, 4), (320, 3)] {
            let spec = vec![ptr(F16), ptr(F16), ptr(F32), ptr(I32), int(true), c(64)];
            let f = layout_ir("kernels/carried_offsets.py", kernel, spec, 4, stages);
            let p = pipelined(&f, usize::from(pipelines));
            if !pipelines {
                let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
                assert!(schedule.contains("which the pipelined loads' stage computes for a later"), "{schedule}");
            }
            let vals = [
                V::Buf(F16, random(64 * k.max(1), 8)),
                V::Buf(F16, random(64 * 64, 9)),
                V::Out(F32, 64 * 64),
                V::Out(I32, 64),
                V::Int(k as i64),
            ];
            let (want, got) = (outputs(&f, &vals, [1, 1, 1]), outputs(&p, &vals, [1, 1, 1]));
            assert!(want == got, "{kernel}, K {k}, {stages} stages: pipelined result differs");
        }
    }
}

/// Five stages of 128x256x64 fp16 tiles need 240 KiB of rings, more than a CTA may have on the H100: the error
/// names each ring and its size and says what to change, instead of failing at launch.
#[test]
fn rings_over_the_shared_memory_budget_are_an_error_naming_them() {
    let mut spec = vec![ptr(F16), ptr(F16), ptr(F16), int(false), int(true), int(true)];
    spec.extend([int(true), c(1), int(true), c(1), int(true), c(1)]);
    spec.extend([c(128), c(256), c(64), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/matmul.py")).unwrap();
    let spec = Specialization::with_config(spec, KernelConfig { num_warps: 8, num_stages: 5, ..KernelConfig::DEFAULT });
    let ks =
        tessel::KernelSource { file: "matmul.py", source: &source, kernel: "matmul_kernel", spec: &spec, module: None };
    let err = match tessel::pipeline::run(&ks, Target::Sm90a, Stage::Ptx, None, &mut Default::default()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("240 KiB of rings compiled"),
    };
    for want in ["245760 bytes of shared memory", "%a_ring: 81920 bytes", "%b_ring: 163840 bytes", "num_stages = 5"] {
        assert!(err.contains(want), "`{want}` missing from: {err}");
    }
}

/// The persistent softmax asks for stages on its row loop (`tl.range(..., num_stages=)`): its row load, which
/// feeds no dot, runs ahead as a cp.async into a ring and is read back into registers, masked-off columns set to
/// the load's `other` (-inf) after the read. Ragged rows and columns, fewer rows than programs × stages.
#[test]
fn pipelined_softmax_rows_compute_what_the_loop_as_written_does() {
    for (rows, cols, stages, programs) in [(37usize, 1000usize, 3i64, 4u32), (5, 130, 2, 2), (2, 64, 4, 3)] {
        let block = cols.next_power_of_two() as i64;
        let ld = cols.next_multiple_of(16);
        let spec = vec![ptr(F32), ptr(F32), int(true), int(true), int(false), int(false), c(block), c(stages)];
        let f = layout_ir("fused_softmax.py", "softmax_kernel", spec, 4, 3);
        let p = pipelined(&f, 1);
        let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
        assert!(schedule.contains(&format!("num_stages requested {stages}")), "{schedule}");
        let vals = vec![
            V::Out(F32, rows * ld),
            V::Buf(F32, tessel_math::testing::Rng::new(9).vec(rows * ld)),
            V::Int(ld as i64),
            V::Int(ld as i64),
            V::Int(rows as i64),
            V::Int(cols as i64),
        ];
        let (want, got) = (outputs(&f, &vals, [programs, 1, 1]), outputs(&p, &vals, [programs, 1, 1]));
        assert!(want == got, "softmax {rows}x{cols} stages {stages}: pipelined result differs");
    }
}

/// `g` with its descriptor accesses lowered to TMA copies (there must be some) as the compile pipeline first
/// lowers them (stores in loops waited for lazily), verified.
fn tma_lowered(mut g: Func) -> Func {
    let waits = tessel::sched::tma_copies::StoreWaits::Deferred;
    let lowered = tessel::sched::tma_copies::lower_tma_copies(&mut g, waits).unwrap();
    assert!(lowered.accesses > 0, "no descriptor access left");
    tessel::tile::verify::verify(&g).unwrap_or_else(|e| panic!("TMA-lowered IR does not verify: {e}"));
    g
}

/// A host descriptor's IR arguments over a row-major `rows x cols` matrix with leading dim `ld`: base, shape,
/// strides.
fn desc_args(buf: V, rows: usize, cols: usize, ld: usize) -> Vec<V> {
    vec![buf, V::Int(rows as i64), V::Int(cols as i64), V::Int(ld as i64), V::Int(1)]
}

/// `examples/tma_matmul.py` on sm_90a: its descriptor loads become TMA copies. Three programs must give the same
/// bits: the layout IR with `desc_load`/`desc_store` (the interpreter's TMA semantics: zero padding past the
/// edges), the loop as written with each access lowered to a TMA copy waited on at once, and the loop pipelined
/// with TMA rings and one mbarrier per ring buffer (phases tracked across iterations).
fn tma_matmul(m: usize, n: usize, k: usize, (bm, bn, bk): (u32, u32, u32), warps: u32, stages: u32) {
    let f = layout_ir("tma_matmul.py", "matmul_kernel", tma_matmul_spec((bm, bn, bk), None), warps, stages);
    let as_written = tma_lowered(f.clone());
    let p = tma_lowered(pipelined(&f, if stages > 1 { 1 } else { 0 }));
    if stages > 1 {
        let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
        assert!(schedule.contains("2 load(s) pipelined") && schedule.contains("through TMA"), "{schedule}");
    }
    let vals = tma_matmul_inputs(m, n, k, 5);
    let grid = [(m.div_ceil(bm as usize) * n.div_ceil(bn as usize)) as u32, 1, 1];
    let want = outputs(&f, &vals, grid);
    assert!(want == outputs(&as_written, &vals, grid), "{m}x{n}x{k}: TMA as written differs from desc_load");
    assert!(want == outputs(&p, &vals, grid), "{m}x{n}x{k} stages {stages}: pipelined TMA differs");
}

/// `tma_matmul.py::matmul_kernel`'s specialization for f16 blocks `bm` x `bk` of A, `bk` x `bn` of B; with `ws`,
/// its WARP_SPECIALIZE too.
fn tma_matmul_spec((bm, bn, bk): (u32, u32, u32), ws: Option<bool>) -> Vec<ArgSpec> {
    let desc = |block: &[u32]| ArgSpec::TensorDesc {
        elem: F16,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    let mut spec = vec![desc(&[bm, bk]), desc(&[bk, bn]), desc(&[bm, bn]), int(false), int(false), int(false), c(4)];
    spec.extend(ws.map(|w| ArgSpec::Constexpr(ConstValue::Bool(w))));
    spec
}

/// Its arguments for C = A (`m` x `k`) B (`k` x `n`): A and B random from `seed` on, C poisoned. Row-major with
/// leading dims that are 16-byte multiples (TMA's rule); the padding beyond the logical sizes holds data the edges
/// must not read.
fn tma_matmul_inputs(m: usize, n: usize, k: usize, seed: u64) -> Vec<V> {
    let (lda, ldb, ldc) = (k.next_multiple_of(8).max(8), n.next_multiple_of(8), n.next_multiple_of(8));
    let mut vals = desc_args(V::Buf(F16, random(m * lda, seed)), m, k, lda);
    vals.extend(desc_args(V::Buf(F16, random(k.max(1) * ldb, seed + 1)), k, n, ldb));
    vals.extend(desc_args(V::Out(F16, m * ldc), m, n, ldc));
    vals.extend([m, n, k].map(|x| V::Int(x as i64)));
    vals
}

#[test]
fn tma_matmul_pipelined_and_as_written_compute_what_the_descriptors_say() {
    // Trip counts 0, 1, 2 and 5 with ragged edges in every dim; 1 to 4 stages; B's block two TMA boxes wide.
    for (k, stages) in [(0, 3), (24, 3), (72, 2), (136, 4), (136, 1)] {
        tma_matmul(70, 56, k, (64, 64, 32), 4, stages);
    }
    tma_matmul(130, 200, 100, (128, 128, 64), 8, 3);
}

/// `tma_matmul.py`'s kernel with descriptors made in the kernel from pointers and row strides: on sm_90a they are
/// made once per program, so their accesses are TMA copies and pipelined into rings exactly as a host
/// descriptor's (the three forms compute the same bits).
#[test]
fn descriptors_made_in_the_kernel_pipeline_through_tma() {
    for (m, n, k, stages) in [(70usize, 56usize, 72usize, 3u32), (130, 200, 100, 2), (64, 64, 0, 3)] {
        let (bm, bn, bk) = (64u32, 64u32, 32u32);
        let mut spec = vec![ptr(F16), ptr(F16), ptr(F16), int(false), int(false), int(false)];
        spec.extend([int(true), int(true), int(true), c(bm as i64), c(bn as i64), c(bk as i64), c(4)]);
        let f = layout_ir("tma_matmul.py", "matmul_kernel_device_desc", spec, 4, stages);
        let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
        assert!(schedule.contains("2 load(s) pipelined") && schedule.contains("through TMA"), "{schedule}");
        let as_written = tma_lowered(f.clone());
        let p = tma_lowered(pipelined(&f, 1));
        let (lda, ldb, ldc) = (k.next_multiple_of(16).max(16), n.next_multiple_of(16), n.next_multiple_of(16));
        let mut vals =
            vec![V::Buf(F16, random(m * lda, 5)), V::Buf(F16, random(k.max(1) * ldb, 6)), V::Out(F16, m * ldc)];
        vals.extend([m, n, k, lda, ldb, ldc].map(|x| V::Int(x as i64)));
        let grid = [(m.div_ceil(bm as usize) * n.div_ceil(bn as usize)) as u32, 1, 1];
        let want = outputs(&f, &vals, grid);
        assert!(want == outputs(&as_written, &vals, grid), "{m}x{n}x{k}: TMA as written differs from desc_load");
        assert!(want == outputs(&p, &vals, grid), "{m}x{n}x{k} stages {stages}: pipelined TMA differs");
    }
}

/// `tma_matmul.py`'s persistent kernel: each of a few programs walks several tiles. Fused (`flatten=True`), the
/// tile loop and the K loop become one loop the pipeliner takes whole: loads run ahead across tile boundaries,
/// the dot restarts its accumulator through `use_acc` and stays in flight, the epilogue waits for it inside its
/// `if`. The nest as written, the fused loop, and the fused loop pipelined (TMA lowered in both) compute the same
/// bits, for trip counts that leave some programs a tile fewer, K = 0 (the no-inner-iteration form), K below
/// one block, and ragged edges.
#[test]
fn flattened_persistent_matmul_pipelines_across_tiles() {
    let desc = |block: &[u32]| ArgSpec::TensorDesc {
        elem: F16,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    let (bm, bn, bk, sms) = (64u32, 64u32, 32u32, 3i64);
    for (m, n, k, stages) in [(150usize, 130usize, 72usize, 3u32), (64, 192, 100, 4), (100, 70, 0, 3), (70, 64, 16, 2)]
    {
        let spec = |flatten: bool| {
            let mut s = vec![desc(&[bm, bk]), desc(&[bk, bn]), desc(&[bm, bn]), int(false), int(false), int(false)];
            s.extend([c(4), c(sms), ArgSpec::Constexpr(ConstValue::Bool(flatten))]);
            s
        };
        let nested = layout_ir("tma_matmul.py", "matmul_kernel_persistent", spec(false), 4, stages);
        let fused = layout_ir("tma_matmul.py", "matmul_kernel_persistent", spec(true), 4, stages);
        let schedule = tessel::sched::print(&fused, &tessel::sched::schedule(&fused));
        assert!(
            schedule.contains("through TMA") && schedule.contains("restarting its accumulator through use_acc"),
            "{schedule}"
        );
        assert!(schedule.contains("waited for inside"), "{schedule}");
        // The epilogue branch runs after the refill (cluster 2), so the next copies fly while the tile is stored.
        assert!(schedule.lines().any(|l| l.contains("cluster 2") && l.ends_with(": if")), "{schedule}");
        // The tile offsets are computed on a tile's first step only, in stage 0, and carried.
        assert!(schedule.lines().any(|l| l.contains("stage 0") && l.ends_with("= if")), "{schedule}");
        // The fused loop (inside the `n2 > 0` branch) is pipelined; the other branch's loop has no loads.
        let p = tma_lowered(pipelined(&fused, 1));
        let as_written = tma_lowered(fused.clone());
        let (lda, ldb, ldc) = (k.next_multiple_of(8).max(8), n.next_multiple_of(8), n.next_multiple_of(8));
        let mut vals = desc_args(V::Buf(F16, random(m * lda, 15)), m, k, lda);
        vals.extend(desc_args(V::Buf(F16, random(k.max(1) * ldb, 16)), k, n, ldb));
        vals.extend(desc_args(V::Out(F16, m * ldc), m, n, ldc));
        vals.extend([m, n, k].map(|x| V::Int(x as i64)));
        let grid = [sms as u32, 1, 1];
        let want = outputs(&nested, &vals, grid);
        // Every tile was written (the output starts as NaN).
        let c_bits: Vec<u16> = want[0].chunks(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        let nan = |x: u16| x & 0x7c00 == 0x7c00 && x & 0x3ff != 0;
        assert!((0..m * n).all(|i| !nan(c_bits[i / n * ldc + i % n])), "{m}x{n}x{k}: C has unwritten elements");
        assert!(want == outputs(&fused, &vals, grid), "{m}x{n}x{k}: the fused loop differs from the nest");
        assert!(want == outputs(&as_written, &vals, grid), "{m}x{n}x{k}: fused with TMA differs");
        assert!(want == outputs(&p, &vals, grid), "{m}x{n}x{k} stages {stages}: fused and pipelined differs");
    }
}

/// The tutorial's Hopper attention through descriptors: K is loaded `[BLOCK_N, HEAD_DIM]` and read transposed
/// by the first dot, so the pipeliner copies it into its ring as TMA writes it and gives the dot a permuted view;
/// V goes to a ring as is; the second dot stays in flight into the next iteration. The three forms (desc_load,
/// TMA waited at once, pipelined) compute the same bits, causal (two loops, the diagonal one a single
/// iteration) and not.
fn tma_attention(n_ctx: usize, d: u32, causal: bool, stages: u32) {
    let f = layout_ir("flash_attention.py", "_attn_fwd_tma", tma_attention_spec(d, causal, None), 4, stages);
    let as_written = tma_lowered(f.clone());
    let p = tma_lowered(pipelined(&f, if causal { 2 } else { 1 }));
    let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
    assert!(schedule.contains("2 load(s) pipelined") && schedule.contains("through TMA"), "{schedule}");
    assert!(schedule.contains("waited for before"), "{schedule}");
    let (vals, grid) = tma_attention_inputs(n_ctx, d, 7);
    let want = outputs(&f, &vals, grid);
    assert!(want == outputs(&as_written, &vals, grid), "n_ctx {n_ctx} causal {causal}: TMA as written differs");
    assert!(want == outputs(&p, &vals, grid), "n_ctx {n_ctx} causal {causal} stages {stages}: pipelined differs");
}

/// The blocks of the attention tests: 64 rows of Q, 32 of K and V per step, over one batch of two heads.
const ATTN_BLOCKS: (u32, u32) = (64, 32);
const ATTN_HEADS: (usize, usize) = (1, 2);

/// `flash_attention.py::_attn_fwd_tma`'s specialization at head dim `d` ([`ATTN_BLOCKS`]); with `ws`, its
/// WARP_SPECIALIZE too.
fn tma_attention_spec(d: u32, causal: bool, ws: Option<bool>) -> Vec<ArgSpec> {
    let (bm, bn) = ATTN_BLOCKS;
    let desc =
        |rows: u32| ArgSpec::TensorDesc { elem: F16, block_shape: vec![rows, d], padding_nan: false, layout: None };
    let mut spec = vec![ArgSpec::Float(F32), ptr(F32), int(false), int(false)];
    spec.extend([desc(bm), desc(bn), desc(bn), desc(bm), int(false)]);
    spec.extend([c(d as i64), c(bm as i64), c(bn as i64), c(if causal { 3 } else { 1 })]);
    spec.extend(ws.map(|w| ArgSpec::Constexpr(ConstValue::Bool(w))));
    spec
}

/// Its arguments for sequences of `n_ctx` ([`ATTN_HEADS`]): Q, K and V random from `seed` on, the outputs poisoned;
/// and its grid.
fn tma_attention_inputs(n_ctx: usize, d: u32, seed: u64) -> (Vec<V>, [u32; 3]) {
    let ((z, h), (bm, _)) = (ATTN_HEADS, ATTN_BLOCKS);
    let rows = z * h * n_ctx;
    let mat = |buf: V| vec![buf, V::Int(rows as i64), V::Int(d as i64), V::Int(d as i64), V::Int(1)];
    let mut vals = vec![V::F32(0.125), V::Out(F32, rows), V::Int(z as i64), V::Int(h as i64)];
    for s in seed..seed + 3 {
        vals.extend(mat(V::Buf(F16, random(rows * d as usize, s))));
    }
    vals.extend(mat(V::Out(F16, rows * d as usize)));
    vals.push(V::Int(n_ctx as i64));
    (vals, [(n_ctx / bm as usize) as u32, (z * h) as u32, 1])
}

#[test]
fn tma_attention_pipelined_and_as_written_compute_what_the_descriptors_say() {
    tma_attention(192, 64, false, 3);
    tma_attention(192, 64, true, 2);
    tma_attention(64, 64, false, 4);
}

/// fp8 operands with B given as an N x K matrix and read transposed (`bt.T`): the 8-bit wgmma needs both
/// operands K-major, so B^T's copy lands as TMA writes it and the dot reads a permuted view. Pipelined and
/// as written compute the same bits, ragged edges and a K that is not a multiple of BLOCK_K included.
#[test]
fn fp8_tma_matmul_with_transposed_b_pipelines_both_operands() {
    let e4m3 = tessel::tile::ScalarType::F8E4M3;
    let (m, n, k, (bm, bn, bk)) = (150usize, 100usize, 208usize, (64u32, 64u32, 64u32));
    let desc = |elem, block: &[u32]| ArgSpec::TensorDesc {
        elem,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    let spec = vec![
        desc(e4m3, &[bm, bk]),
        desc(e4m3, &[bn, bk]),
        desc(F16, &[bm, bn]),
        int(false),
        int(false),
        int(false),
        c(4),
    ];
    let f = layout_ir("tma_matmul.py", "matmul_kernel_bt", spec, 4, 3);
    let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
    assert!(schedule.contains("2 load(s) pipelined") && schedule.contains("through TMA"), "{schedule}");
    let (as_written, p) = (tma_lowered(f.clone()), tma_lowered(pipelined(&f, 1)));
    let fp8 =
        |len: usize, seed: u64| tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(seed), len, e4m3);
    let mut vals = desc_args(V::Buf(e4m3, fp8(m * k, 11)), m, k, k);
    vals.extend(desc_args(V::Buf(e4m3, fp8(n * k, 12)), n, k, k));
    vals.extend(desc_args(V::Out(F16, m * n.next_multiple_of(8)), m, n.next_multiple_of(8), n.next_multiple_of(8)));
    vals.extend([m, n, k].map(|x| V::Int(x as i64)));
    let grid = [(m.div_ceil(bm as usize) * n.div_ceil(bn as usize)) as u32, 1, 1];
    let want = outputs(&f, &vals, grid);
    assert!(want == outputs(&as_written, &vals, grid), "fp8 TMA as written differs from desc_load");
    assert!(want == outputs(&p, &vals, grid), "fp8 pipelined TMA differs");
}

/// A pointer load the dot reads transposed (`bt.T`): cp.async copies the tile as loaded into its ring and the
/// dot reads a permuted view; the dot then stays asynchronous like any matmul's. Same bits as the loop as
/// written, with masked edges, over 1, 2 and 5 iterations.
#[test]
fn transposed_pointer_loads_pipeline_through_a_permuted_view() {
    for (m, n, k, stages) in [(70usize, 50usize, 40usize, 3u32), (64, 64, 64, 2), (100, 30, 150, 4)] {
        let spec = vec![ptr(F16), ptr(F16), ptr(F16), int(false), int(false), int(true), c(64), c(32), c(32)];
        let f = layout_ir("kernels/bt_matmul.py", "bt_matmul", spec, 4, stages);
        let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
        assert!(schedule.contains("2 load(s) pipelined") && schedule.contains("asynchronously"), "{schedule}");
        let p = pipelined(&f, 1);
        let vals = vec![
            V::Buf(F16, random(m * k, 21)),
            V::Buf(F16, random(n * k, 22)),
            V::Out(F16, m * n),
            V::Int(m as i64),
            V::Int(n as i64),
            V::Int(k as i64),
        ];
        let grid = [m.div_ceil(64) as u32, n.div_ceil(32) as u32, 1];
        assert!(outputs(&f, &vals, grid) == outputs(&p, &vals, grid), "{m}x{n}x{k} stages {stages}: pipelined differs");
    }
}

/// A pipelined loop split into a TMA producer partition and the default partition (`warp_specialize=True`) runs
/// in the interpreter's partitions, under both of its schedules: the producer as far ahead as its `empty`
/// barriers let it, and each arrival handing the turn on at once. A slot refilled before the consumer released
/// it, a wrong parity or a missing arrival is an error (the interpreter's asynchronous rules) or a deadlock
/// report; the bits must equal the loop as written.
fn ws_outputs(written: &Func, split: &Func, vals: &[V], grid: [u32; 3], what: &str) {
    let text = tessel::tile::print::print_func(split);
    assert!(text.contains("warp_specialize {worker_num_warps = ["), "{what}: not split:\n{text}");
    let want = outputs(written, vals, grid);
    for schedule in [Schedule::RunAhead, Schedule::HandOff] {
        assert!(want == outputs_under(split, vals, grid, schedule), "{what}: split under {schedule:?} differs");
    }
}

#[test]
fn warp_specialized_tma_matmul_computes_what_the_loop_as_written_does() {
    // Trip counts 0, 1, 2, 3, 5 and 13 (rings of 2 to 4 buffers wrapping up to four times), ragged edges; one
    // and two warpgroups.
    for (m, n, k, (bm, bn, bk), warps, stages) in [
        (70usize, 56usize, 0usize, (64u32, 64u32, 32u32), 4u32, 3u32),
        (70, 56, 24, (64, 64, 32), 4, 3),
        (70, 56, 400, (64, 64, 32), 4, 3),
        (70, 56, 72, (64, 64, 32), 4, 2),
        (70, 56, 136, (64, 64, 32), 4, 4),
        (130, 200, 100, (128, 128, 64), 8, 3),
        (130, 264, 200, (128, 256, 64), 8, 3),
    ] {
        let f = layout_ir("tma_matmul.py", "matmul_kernel", tma_matmul_spec((bm, bn, bk), Some(true)), warps, stages);
        let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
        // Room for two CTAs per SM: a producer warp and no register reallocation; else (128x256x64 in three
        // stages: 144 KiB) a producer warpgroup that gives the consumers its registers.
        let producer = if bn == 256 { "a producer warpgroup issues the copies" } else { "a producer warp issues" };
        assert!(schedule.contains(&format!("warp-specialized: {producer}")), "{schedule}");
        let split = tma_lowered(pipelined(&f, 1));
        let vals = tma_matmul_inputs(m, n, k, 25);
        let grid = [(m.div_ceil(bm as usize) * n.div_ceil(bn as usize)) as u32, 1, 1];
        ws_outputs(&f, &split, &vals, grid, &format!("matmul {m}x{n}x{k} stages {stages}"));
    }
}

/// Attention's loop split: the producer copies K and V, the default partition runs both dots (the second in
/// flight into the next iteration) and the softmax between them, releasing each slot once the dots reading it
/// are retired. Causal attention's two loops: the first one split, the diagonal one pipelined as before (one
/// `warp_specialize` per kernel).
#[test]
fn warp_specialized_tma_attention_computes_what_the_loop_as_written_does() {
    for (n_ctx, causal, stages) in [(192usize, false, 3u32), (64, false, 2), (256, true, 3)] {
        let f = layout_ir("flash_attention.py", "_attn_fwd_tma", tma_attention_spec(64, causal, Some(true)), 4, stages);
        let schedule = tessel::sched::print(&f, &tessel::sched::schedule(&f));
        assert!(schedule.contains("warp-specialized"), "{schedule}");
        let split = tma_lowered(pipelined(&f, if causal { 2 } else { 1 }));
        let (vals, grid) = tma_attention_inputs(n_ctx, 64, 27);
        ws_outputs(&f, &split, &vals, grid, &format!("attention n_ctx {n_ctx} causal {causal} stages {stages}"));
    }
}
