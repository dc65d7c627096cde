//! Automatic warp specialization of tcgen05 K loops on sm_100a (`sched/src/ws_mma.rs`): `tma_matmul.py`'s
//! `matmul_kernel` with `WARP_SPECIALIZE=True` splits into a producer warp issuing the TMA copies and the
//! default partition issuing the MMAs, each committed to its ring slot's `empty` barrier, the accumulator waited
//! for once after the loop. On the PTX simulator against the interpreter (bit for bit, ragged M, N and K through
//! TMA bounds, outputs poisoned, fresh random inputs), the interpreter against the float64 product, ptxas when
//! there is one, and broken variants of the PTX refused by name. Loops the split does not take say why in
//! `--emit sched`.

mod common;
mod sim_common;

use std::path::Path;

use common::{assemble, c, int};
use sim_common::{RunOptions, V, run_on, simulate_broken, skip_wait};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::F16;
use tessel::tile::{KernelConfig, Target};

fn source() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tma_matmul.py")).unwrap()
}

fn desc(block: [u32; 2]) -> ArgSpec {
    ArgSpec::TensorDesc { elem: F16, block_shape: block.to_vec(), padding_nan: false, layout: None }
}

/// `matmul_kernel`'s specialization: A `[bm, bk]`, B `[bk, bn]`, C `[bm, bn]` blocks, M, N, K, GROUP_M 4 and
/// WARP_SPECIALIZE.
fn spec((bm, bn, bk): (u32, u32, u32), ws: bool) -> Vec<ArgSpec> {
    let mut s = vec![desc([bm, bk]), desc([bk, bn]), desc([bm, bn]), int(false), int(false), int(false), c(4)];
    s.push(ArgSpec::Constexpr(ConstValue::Bool(ws)));
    s
}

fn compiled(stage: Stage, tile: (u32, u32, u32), warps: u32, stages: u32) -> Output {
    let source = source();
    let sp = Specialization::with_config(
        spec(tile, true),
        KernelConfig { num_warps: warps, num_stages: stages, ..KernelConfig::DEFAULT },
    );
    let ks = tessel::KernelSource {
        file: "tma_matmul.py",
        source: &source,
        kernel: "matmul_kernel",
        spec: &sp,
        module: None,
    };
    tessel::pipeline::run(&ks, Target::Sm100a, stage, None, &mut Default::default())
        .unwrap_or_else(|e| panic!("{tile:?} on {warps} warps: {e}"))
}

fn ptx(tile: (u32, u32, u32), warps: u32, stages: u32) -> String {
    match compiled(Stage::Ptx, tile, warps, stages) {
        Output::Ptx { kernel, .. } => kernel.ptx,
        _ => unreachable!("the pipeline stops at the stage asked for"),
    }
}

fn count(ptx: &str, what: &str) -> usize {
    ptx.lines().filter(|l| !l.trim_start().starts_with("//") && l.contains(what)).count()
}

/// The inputs of an `m x n x k` product and the float64 product.
fn inputs(m: usize, n: usize, k: usize, seed: u64) -> ([V; 6], Vec<f64>) {
    let ([a, b, c], want) = sim_common::fp16_matmul_descs(m, n, k, seed);
    ([a, b, c, V::Int(m as i64), V::Int(n as i64), V::Int(k as i64)], want)
}

/// Ragged shapes (M, N and K not multiples of the tile: TMA reads zeros past the edges and writes nothing there),
/// K loops that wrap the ring several times, one shorter than the ring and one of a single step; several
/// programs; 128x128x64 on 4 warps and 128x256x64 on 8. The simulator runs the partitions as independent warps
/// (every shared-memory access checked by happens-before, every tcgen05 read of a slot against the copies and
/// the MMAs' commits) and equals the interpreter bit for bit; the interpreter equals the float64 product.
#[test]
fn warp_specialized_tcgen05_matmul_matches_the_interpreter_and_float64() {
    let cases = [
        (130, 200, 328, (128u32, 128u32, 64u32), 4u32, 3u32),
        (70, 264, 136, (128, 256, 64), 8, 3),
        (200, 72, 584, (128, 128, 64), 4, 4),
        (100, 120, 40, (128, 128, 64), 4, 3),
        (128, 64, 112, (128, 64, 32), 4, 2),
    ];
    for (i, (m, n, k, tile, warps, stages)) in cases.into_iter().enumerate() {
        let (vals, want) = inputs(m, n, k, 40 + i as u64);
        let opts = RunOptions {
            file: "tma_matmul.py",
            target: Target::Sm100a,
            num_warps: warps,
            num_stages: stages,
            poison: true,
        };
        let grid = (m.div_ceil(tile.0 as usize) * n.div_ceil(tile.1 as usize)) as u32;
        let what = format!("{m}x{n}x{k}, tile {tile:?}, {warps} warps, {stages} stages");
        let outs = run_on(&source(), "matmul_kernel", spec(tile, true), &opts, &vals, [grid, 1, 1])
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        sim_common::check_fp16_product(&what, sim, interp, &want, false);
    }
}

/// The PTX of the split: the producer warp (warp 4 of 5, or 8 of 9) and the default partition meet at the
/// hand-off; the K loop's MMAs commit to the ring's `empty` barriers (one `tcgen05.commit` per K step, none
/// waited for in the loop), the accumulator is committed and waited for once after it; in the loop only the
/// issuer's fence after its wait precedes the MMA (the partition synced once, before the loop). ptxas accepts it.
#[test]
fn warp_specialized_tcgen05_matmul_ptx() {
    for (tile, warps) in [((128u32, 128u32, 64u32), 4u32), ((128, 256, 64), 8)] {
        let p = ptx(tile, warps, 3);
        let what = format!("{tile:?} on {warps} warps");
        assert!(p.contains("$L_ws_default"), "{what}: no partitions");
        assert!(p.contains(&format!(".reqntid {}", 32 * (warps + 1))), "{what}: a producer warp more");
        assert_eq!(count(&p, "tcgen05.commit"), 2, "{what}: a commit per K step to its slot, one for the accumulator");
        assert!(count(&p, "tcgen05.mma.cta_group::1") >= 4, "{what}");
        // A and B (B in two boxes of 64 columns: a 128-byte swizzle's) in the producer's loop, C's store.
        assert!(count(&p, "cp.async.bulk.tensor") >= 3, "{what}");
        let default = &p[p.find("\n$L_ws_default").expect("the default partition")..];
        let loop_end = default.find("\n$L_for_end").expect("the default partition's loop");
        let body = &default[..loop_end];
        assert_eq!(count(body, "mbarrier.try_wait"), 1, "{what}: the loop waits for its data only");
        // The wait is the issuer's own: its `after_thread_sync` fence orders the MMA after it, with no barrier of
        // the partition in the loop (the one sync comes before it, once).
        let head = body.find("\n$L_for_head").expect("the loop's head");
        let (before, in_loop) = body.split_at(head);
        assert_eq!(count(in_loop, "bar.sync"), 0, "{what}: no partition barrier per K step");
        assert_eq!(count(in_loop, "tcgen05.fence::after_thread_sync"), 1, "{what}");
        assert_eq!(count(in_loop, "tcgen05.fence::before_thread_sync"), 0, "{what}");
        assert!(before.contains("tcgen05.fence::before_thread_sync"), "{what}: the sync before the loop");
        assemble(&format!("ws_tcgen05_{}x{}x{}_w{warps}", tile.0, tile.1, tile.2), &p, "sm_100a");
    }
}

/// The split's PTX broken four ways, each refused by the simulator: the default partition's wait for a filled
/// slot taken out (its MMA reads what the producer's copy writes, with nothing ordering the two), the producer's
/// wait for a released slot taken out (its copies overwrite slots before anything released them), the MMA's
/// commit to its slot's `empty` barrier taken out (no slot is ever released: the producer waits forever, a
/// deadlock naming it), and the commit after the loop taken out (the wait for the accumulator never completes).
#[test]
fn a_broken_warp_specialized_tcgen05_matmul_is_refused() {
    let tile = (128u32, 128u32, 64u32);
    let (m, n, k) = (128usize, 128usize, 320usize);
    let (vals, _) = inputs(m, n, k, 7);
    let opts = RunOptions { file: "tma_matmul.py", target: Target::Sm100a, num_warps: 4, num_stages: 3, poison: true };
    let source = source();
    let run = |edit: &dyn Fn(&str) -> String| {
        simulate_broken(&source, "matmul_kernel", spec(tile, true), &opts, &vals, [1, 1, 1], edit)
    };
    assert_eq!(run(&|p| p.to_string()), Ok(()), "the unbroken PTX");
    // The first `mbarrier.try_wait` after each label answers true at once.
    let err = run(&|p| skip_wait(p, "\n$L_ws_default", 0)).unwrap_err();
    assert!(
        err.contains("tcgen05.mma") && err.contains("completing on the mbarrier at shared"),
        "no ready wait: {err}"
    );
    let err = run(&|p| skip_wait(p, "\n$L_ws_worker", 0)).unwrap_err();
    assert!(err.contains("cp.async.bulk.tensor") && err.contains("without a barrier between"), "no empty wait: {err}");
    // The `n`-th `tcgen05.commit` of the kernel (the K step's, then the accumulator's) taken out.
    let no_commit = |ptx: &str, n: usize| {
        let at = ptx.match_indices("tcgen05.commit").nth(n).unwrap().0;
        let start = ptx[..at].rfind('\n').unwrap();
        let end = at + ptx[at..].find('\n').unwrap();
        format!("{}{}", &ptx[..start], &ptx[end..])
    };
    let err = run(&|p| no_commit(p, 0)).unwrap_err();
    assert!(err.contains("deadlock") && err.contains("warp 4"), "no release: {err}");
    let err = run(&|p| no_commit(p, 1)).unwrap_err();
    assert!(err.contains("deadlock") && err.contains("warps 0-3"), "no accumulator commit: {err}");
}

/// A public tutorial's source from `TESSEL_TUTORIALS` (python/tutorials of triton-lang/triton, not in this
/// repository), or `None` with a note.
fn tutorial(name: &str) -> Option<(String, String)> {
    sim_common::tutorial("TESSEL_TUTORIALS", name)
}

fn cb(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

/// `kernel` of `src` for sm_100a at `stage`.
fn compile_tutorial(file: &str, src: &str, kernel: &str, spec: Vec<ArgSpec>, warps: u32, stage: Stage) -> Output {
    let sp =
        Specialization::with_config(spec, KernelConfig { num_warps: warps, num_stages: 3, ..KernelConfig::DEFAULT });
    let ks = tessel::KernelSource { file, source: src, kernel, spec: &sp, module: None };
    tessel::pipeline::run(&ks, Target::Sm100a, stage, None, &mut Default::default())
        .unwrap_or_else(|e| panic!("{kernel}: {e}"))
}

/// Tutorial 09's three TMA kernels with WARP_SPECIALIZE=True (the persistent ones fused, `flatten=True`, their
/// epilogue in the loop's `if`; `_descriptor_persistent` making its descriptors on the device) split into
/// partitions at 128x128x64 on 4 warps, with and without EPILOGUE_SUBTILE, and 128x256x64 on 8 without (with it,
/// the fused loop does not fit in shared memory on 8 warps and the compile driver falls back to the nest, whose K
/// loop is not at the top level), and ptxas accepts them. On 4 warps the fused loops' epilogues run one iteration
/// late on two accumulators; on 8, the compile driver drops that first to fit shared memory and keeps the split.
/// (`tests/auto_tcgen05_tutorials.rs` runs the host-descriptor ones on the simulator.)
#[test]
fn tutorial_09_warp_specialized_kernels_split_and_assemble() {
    let Some((file, src)) = tutorial("09-persistent-matmul.py") else { return };
    let desc = |block: [u32; 2]| desc(block);
    for ((bm, bn, bk), warps) in [((128u32, 128u32, 64u32), 4u32), ((128, 256, 64), 8)] {
        for (kernel, subtile) in [
            ("matmul_kernel_tma", None),
            ("matmul_kernel_tma_persistent", Some(false)),
            ("matmul_kernel_tma_persistent", Some(true)),
            ("matmul_kernel_descriptor_persistent", Some(false)),
            ("matmul_kernel_descriptor_persistent", Some(true)),
        ] {
            if warps == 8 && subtile == Some(true) {
                continue;
            }
            let mut spec = if kernel == "matmul_kernel_descriptor_persistent" {
                vec![ArgSpec::Pointer(F16, true), ArgSpec::Pointer(F16, true), ArgSpec::Pointer(F16, true)]
            } else {
                let cn = if subtile == Some(true) { bn / 2 } else { bn };
                vec![desc([bm, bk]), desc([bn, bk]), desc([bm, cn])]
            };
            spec.extend([int(false), int(true), int(true)]);
            spec.extend([c(bm as i64), c(bn as i64), c(bk as i64), c(8)]);
            if kernel != "matmul_kernel_descriptor_persistent" {
                spec.push(cb(false));
            }
            if let Some(st) = subtile {
                spec.extend([cb(st), c(148)]);
            }
            spec.push(cb(true));
            if kernel == "matmul_kernel_descriptor_persistent" {
                spec.push(cb(true));
            }
            let what = format!("{kernel} {bm}x{bn}x{bk} on {warps} warps, subtile {subtile:?}");
            let sched = match compile_tutorial(&file, &src, kernel, spec.clone(), warps, Stage::Sched) {
                Output::Sched { schedule, .. } => schedule,
                _ => unreachable!("the pipeline stops at the stage asked for"),
            };
            assert!(sched.contains("warp-specialized: a producer warp issues the copies"), "{what}:\n{sched}");
            if subtile.is_some() && warps == 4 {
                // The fused loop's epilogue runs one iteration late on two accumulators (`acc_overlap`).
                let late = "the epilogue overlaps the next tile's MMAs (two accumulators)";
                assert!(sched.contains(late), "{what}:\n{sched}");
            }
            let p = match compile_tutorial(&file, &src, kernel, spec, warps, Stage::Ptx) {
                Output::Ptx { kernel, .. } => kernel.ptx,
                _ => unreachable!("the pipeline stops at the stage asked for"),
            };
            assert!(p.contains("$L_ws_default"), "{what}: no partitions in the PTX");
            let name = format!("{kernel}_{bn}_w{warps}_{}", subtile == Some(true));
            assemble(&name, &p, "sm_100a");
        }
    }
}

/// What the split refuses says why in `--emit sched`, and the loop is pipelined in one partition as before:
/// chained MMAs one of which is issued in an `if` of the body (attention's, at the body's top level, split:
/// `tests/auto_tcgen05_ws_attention.rs`). Tutorial 10's block-scaled matmul asked to warp-specialize, refused
/// until its scales got a tensor-memory buffer per ring slot, is split (on the simulator in
/// `tests/auto_tcgen05_tutorials.rs`).
#[test]
fn refused_loops_say_why() {
    let schedule = |file: &str, src: &str, kernel: &str, spec: Vec<ArgSpec>| match compile_tutorial(
        file,
        src,
        kernel,
        spec,
        4,
        Stage::Sched,
    ) {
        Output::Sched { schedule, .. } => schedule,
        _ => unreachable!("the pipeline stops at the stage asked for"),
    };
    let gated = "import triton\nimport triton.language as tl\n\n\n@triton.jit
def gated(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    acc = tl.zeros([BM, BN], tl.float32)
    acc2 = tl.zeros([BM, BN], tl.float32)
    for k in tl.range(0, K, BK, num_stages=3, warp_specialize=True):
        a = a_desc.load([0, k])
        b = b_desc.load([k, 0])
        acc = tl.dot(a, b, acc)
        if k >= BK:
            acc2 = tl.dot(a, b, acc2)
    c_desc.store([0, 0], (acc + acc2).to(tl.float16))
";
    let spec = || vec![desc([128, 64]), desc([64, 64]), desc([128, 64]), int(false), c(128), c(64), c(64)];
    let s = schedule("gated.py", gated, "gated", spec());
    assert!(
        s.contains("warp_specialize=True not applied: the loop issues 2 tcgen05 MMAs")
            && s.contains("is nested in an op of the body; chained MMAs are split only at the body's top level")
            && s.contains("2 load(s) pipelined"),
        "{s}"
    );
    match compile_tutorial("gated.py", gated, "gated", spec(), 4, Stage::Ptx) {
        Output::Ptx { kernel, .. } => {
            assert!(!kernel.ptx.contains("$L_ws_default") && kernel.ptx.contains("tcgen05.mma"), "unsplit");
            assemble("ws_refused_gated", &kernel.ptx, "sm_100a");
        }
        _ => unreachable!("the pipeline stops at the stage asked for"),
    }
    if let Some((file, src)) = tutorial("10-block-scaled-matmul.py") {
        let asked = "num_stages=NUM_STAGES, warp_specialize=True)";
        let src = src.replace("num_stages=NUM_STAGES)", asked);
        assert!(src.contains(asked), "tutorial 10's K loop");
        let (bm, bn, bk, rep_k) = (128u32, 256u32, 128u32, 1u32);
        let d = |elem, block: &[u32]| ArgSpec::TensorDesc {
            elem,
            block_shape: block.to_vec(),
            padding_nan: false,
            layout: None,
        };
        use tessel::tile::ScalarType::{F8E4M3, U8};
        let mut spec = vec![
            d(F8E4M3, &[bm, bk]),
            d(U8, &[1, 1, rep_k, 2, 256]),
            d(F8E4M3, &[bn, bk]),
            d(U8, &[1, 2, rep_k, 2, 256]),
            d(F16, &[bm, bn]),
        ];
        spec.extend([c(256), c(256), c(256), c(1), c(1), c(1)]);
        spec.extend([c(32), c(bm as i64), c(bn as i64), c(bk as i64), c(1), c(2), c(rep_k as i64), c(4)]);
        let s = schedule(&file, &src, "block_scaled_matmul_kernel", spec);
        assert!(s.contains("warp-specialized: a producer warp issues the copies"), "{s}");
    }
}
