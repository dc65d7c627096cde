//! Every example kernel through the whole compiler: the ones the code generator handles produce PTX that ptxas
//! assembles for sm_90a and sm_80 (when ptxas is on hand: `.ci/run` installs it and sets TESSEL_REQUIRE_PTXAS);
//! the others must fail with an error naming what is missing, so that this list is updated when support lands.

mod common;

use std::path::Path;
use std::process::Command;

use common::{assemble, c, int, ptr};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{self, F16, F32, I32};
use tessel::tile::{KernelConfig, Target};

/// (file, kernel, specialization, num_warps)
fn supported() -> Vec<(&'static str, &'static str, Vec<ArgSpec>, u32)> {
    vec![
        ("vector_add.py", "add_kernel", vec![ptr(F32), ptr(F32), ptr(F32), int(false), c(1024)], 4),
        (
            "fused_softmax.py",
            "softmax_kernel",
            vec![ptr(F16), ptr(F16), int(true), int(true), int(false), int(true), c(4096), c(4)],
            8,
        ),
        (
            "fused_softmax.py",
            "softmax_kernel",
            vec![ptr(F32), ptr(F32), int(false), int(false), int(false), int(false), c(1024), c(2)],
            4,
        ),
        (
            "layer_norm.py",
            "_layer_norm_fwd_fused",
            vec![
                ptr(F16),
                ptr(F16),
                ptr(F16),
                ptr(F16),
                ptr(F32),
                ptr(F32),
                int(true),
                int(true),
                ArgSpec::Float(F32),
                c(4096),
            ],
            8,
        ),
        (
            "layer_norm.py",
            "_layer_norm_bwd_dx_fused",
            {
                let mut dx = vec![ptr(F16), ptr(F16), ptr(F32), ptr(F32), ptr(F16), ptr(F16), ptr(F32), ptr(F32)];
                dx.extend([ptr(I32), int(true), int(true), c(64), c(1024)]);
                dx
            },
            4,
        ),
        (
            "argmax.py",
            "argmax_kernel",
            vec![ptr(F16), ptr(F32), ptr(I32), int(false), int(false), int(false), c(4), c(1024)],
            4,
        ),
        (
            "layer_norm.py",
            "_layer_norm_bwd_dwdb",
            vec![ptr(F32), ptr(F32), ptr(F16), ptr(F16), int(false), int(false), c(32), c(128)],
            4,
        ),
        ("matmul.py", "matmul_kernel", matmul_f16(), 4),
        ("flash_attention.py", "_attn_fwd", attention(false), 4),
        ("flash_attention.py", "_attn_fwd", attention(true), 4),
        (
            "descriptor_copy.py",
            "transpose_scale_kernel",
            vec![desc(F16, &[16, 32]), desc(F16, &[32, 16]), desc(F32, &[16]), ArgSpec::Float(F32)],
            4,
        ),
        (
            "gluon_aggregate.py",
            "copy_rows_kernel",
            vec![ptr(F16), ptr(F16), ptr(F32), ptr(F32), int(false), int(false), int(false), int(false), c(16), c(64)],
            4,
        ),
        ("device_print.py", "debug_kernel", vec![ptr(F32), int(false), c(256)], 4),
        ("tma_matmul.py", "matmul_kernel", tma_matmul(), 8),
        ("tma_matmul.py", "matmul_kernel_device_desc", tma_matmul_device_desc(), 8),
        ("descriptor_copy.py", "tile_copy_device_desc", tile_copy_device_desc("nan"), 4),
        ("gluon_warp_specialize.py", "stream_kernel", warp_specialized(), 4),
    ]
}

/// `tma_matmul.py`'s persistent kernel, f16, 128x128x64 tiles over 132 programs, fused or not.
fn tma_persistent(flatten: bool) -> Vec<ArgSpec> {
    let mut args = vec![desc(F16, &[128, 64]), desc(F16, &[64, 128]), desc(F16, &[128, 128])];
    args.extend([int(false), int(false), int(false), c(8), c(132), ArgSpec::Constexpr(ConstValue::Bool(flatten))]);
    args
}

/// `flatten=True` on the persistent kernel: the tile's first K step restarts the accumulator through a scale-d
/// predicate on the first wgmma of each tile of the dot (the later K steps accumulate, scale-d 1); the one wait
/// for every group sits in the epilogue's branch. Without it, the nest's inner loop has no predicate at all.
#[test]
fn flattened_persistent_matmul_restarts_the_accumulator_through_scale_d() {
    let ptx = ptx_for("tma_matmul.py", "matmul_kernel_persistent", tma_persistent(true), 8, Target::Sm90a).unwrap();
    let wgmma: Vec<&str> = ptx.lines().map(str::trim).filter(|l| l.starts_with("wgmma.mma_async")).collect();
    let scale_d = |l: &str| l.rsplit('}').next().unwrap().split(',').nth(3).unwrap().trim().to_string();
    let predicated = wgmma.iter().filter(|l| scale_d(l).starts_with("%p")).count();
    // 128x128x64 over two warpgroups: 4 K steps of k16 per wgmma group, the first one predicated.
    assert_eq!((wgmma.len(), predicated), (4, 1), "{wgmma:#?}");
    let branch = ptx.find("wgmma.wait_group.sync.aligned 1;").unwrap();
    assert!(ptx[branch..].contains("wgmma.wait_group.sync.aligned 0;"), "the epilogue waits for the last group");
    let nested = ptx_for("tma_matmul.py", "matmul_kernel_persistent", tma_persistent(false), 8, Target::Sm90a).unwrap();
    assert!(
        nested
            .lines()
            .filter(|l| l.trim().starts_with("wgmma.mma_async"))
            .all(|l| !scale_d(l.trim()).starts_with("%p"))
    );
}

/// A TMA store inside a loop gets a buffer of its own beside the rings and is waited for only before the next
/// tile writes that buffer, so its read of shared memory overlaps the next tile's K loop (Triton's order): the
/// wait comes before the epilogue's `stmatrix`, and the store's commit is not followed by a wait. So in the fused
/// loop and in the nest (the store in the outer loop).
#[test]
fn stores_in_loops_are_waited_for_before_their_buffer_is_written_again() {
    for flatten in [true, false] {
        let ptx =
            ptx_for("tma_matmul.py", "matmul_kernel_persistent", tma_persistent(flatten), 8, Target::Sm90a).unwrap();
        let wait = ptx.find("cp.async.bulk.wait_group.read 0;").expect("a store wait");
        assert!(wait < ptx.find("stmatrix").expect("the epilogue's stores"), "flatten={flatten}");
        let commit = ptx.find("cp.async.bulk.commit_group;").expect("a store");
        let after = ptx[commit..].lines().nth(1).unwrap_or_default().trim();
        assert!(!after.starts_with("cp.async.bulk.wait_group"), "flatten={flatten}: waited at once");
    }
    // In the fused loop the refill's copies are issued before the epilogue's branch, so they fly while the tile
    // is stored: between the K step's last wgmma and the epilogue's first stmatrix lies a TMA load.
    let ptx = ptx_for("tma_matmul.py", "matmul_kernel_persistent", tma_persistent(true), 8, Target::Sm90a).unwrap();
    let epilogue = ptx.find("stmatrix").unwrap();
    let last_mma = ptx[..epilogue].rfind("wgmma.mma_async").unwrap();
    assert!(ptx[last_mma..epilogue].contains("cp.async.bulk.tensor.2d.shared::cluster"), "refill after the epilogue");
}

/// A fused loop keeps its rings and its epilogue's store buffer live together: at 128x256x64 with 4 stages that is
/// 256 KiB, more than an sm_90a CTA has, while the nest as written (rings dead by the epilogue) fits. The
/// pipeline compiles the nest and warns at the loop, rather than fail a config the user only asked to schedule.
/// The nest's store cannot keep a buffer of its own over the outer loop either (192 KiB of rings + 64 KiB): it is
/// lowered again with the wait right after the store, its buffer over the rings' space.
#[test]
fn a_fused_loop_over_shared_memory_falls_back_to_the_nest_with_a_warning() {
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tma_matmul.py")).unwrap();
    let mut args = vec![desc(F16, &[128, 64]), desc(F16, &[64, 256]), desc(F16, &[128, 256])];
    args.extend([int(false), int(false), int(false), c(8), c(132), ArgSpec::Constexpr(ConstValue::Bool(true))]);
    let spec = Specialization::with_config(args, KernelConfig { num_warps: 8, num_stages: 4, ..KernelConfig::DEFAULT });
    let ks = tessel::KernelSource {
        file: "tma_matmul.py",
        source: &source,
        kernel: "matmul_kernel_persistent",
        spec: &spec,
        module: None,
    };
    let mut t = tessel::Timings::default();
    let Ok(Output::Ptx { kernel, .. }) = tessel::pipeline::run(&ks, Target::Sm90a, Stage::Ptx, None, &mut t) else {
        panic!("the nest as written compiles")
    };
    let warning = t.messages.join("\n");
    assert!(warning.contains("`flatten=True` is ignored: the fused loop does not fit in shared memory"), "{warning}");
    assert!(warning.contains("flatten=FLATTEN") && warning.contains("262176 bytes"), "{warning}");
    assert!(kernel.shared_bytes <= 232448 && !kernel.ptx.contains("wgmma.wait_group.sync.aligned 0;\n    @"), "nested");
    let commit = kernel.ptx.find("cp.async.bulk.commit_group;").expect("a store");
    let after = kernel.ptx[commit..].lines().nth(1).unwrap_or_default().trim();
    assert_eq!(after, "cp.async.bulk.wait_group.read 0;", "the store waited for at once");
}

/// `tma_matmul.py`'s kernel with descriptors made in the kernel, f16, 128x128x64 tiles.
fn tma_matmul_device_desc() -> Vec<ArgSpec> {
    let mut args = vec![ptr(F16), ptr(F16), ptr(F16), int(false), int(false), int(false)];
    args.extend([int(true), int(true), int(true), c(128), c(128), c(64), c(8)]);
    args
}

/// `descriptor_copy.py`'s in-kernel descriptor copy, f16 tiles of 16 x 32.
fn tile_copy_device_desc(padding: &str) -> Vec<ArgSpec> {
    let mut args = vec![ptr(F16), ptr(F16), int(false), int(false), int(true), int(true), c(16), c(32)];
    args.push(ArgSpec::Constexpr(ConstValue::Str(padding.to_string())));
    args
}

/// A descriptor the kernel makes once per program gets a tensor map in the program's slot of the global scratch
/// on sm_90a: the launch's template copied there, the tensor's address, dims and byte strides replaced, released
/// to the tensormap proxy (once for both maps), a CTA barrier, acquired; then TMA copies through it. The PTX is 8.3 (for
/// `tensormap.replace`), a misaligned tensor traps (no call, which would serialize the wgmmas), and on sm_80 the
/// same kernel reads through pointers with no scratch at all.
#[test]
fn descriptors_made_in_the_kernel_get_tensor_maps_in_global_scratch() {
    let ptx =
        ptx_for("descriptor_copy.py", "tile_copy_device_desc", tile_copy_device_desc("nan"), 4, Target::Sm90a).unwrap();
    assert!(ptx.contains(".version 8.3"), "{ptx}");
    assert!(ptx.contains(".param .u64 tile_copy_device_desc_scratch"), "{ptx}");
    assert_eq!(
        ptx.matches(".param .align 64 .b8 tile_copy_device_desc_tmap_").count(),
        2,
        "two templates: x pads with NaN"
    );
    let order = [
        "[tile_copy_device_desc_scratch]",
        "trap;",
        "ld.param.v2.b64",
        "st.global.v2.b64",
        "tensormap.replace.tile.global_address.global.b1024.b64",
        "tensormap.replace.tile.global_dim.global.b1024.b32",
        "tensormap.replace.tile.global_stride.global.b1024.b64",
        "fence.proxy.tensormap::generic.release.gpu;",
        "bar.sync 0;",
        "fence.proxy.tensormap::generic.acquire.gpu",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
    ];
    let mut at = 0;
    for want in order {
        let Some(i) = ptx[at..].find(want) else { panic!("no `{want}` after byte {at}:\n{ptx}") };
        at += i;
    }
    assert!(!ptx.contains("__assertfail"), "a call would serialize wgmma");
    // Two dims and one byte stride per map, two maps, published together: one release, one acquire each.
    assert_eq!(ptx.matches("tensormap.replace.tile.global_dim").count(), 4);
    assert_eq!(ptx.matches("fence.proxy.tensormap::generic.release.gpu").count(), 1);
    assert_eq!(ptx.matches("fence.proxy.tensormap::generic.acquire.gpu").count(), 2);
    assert_eq!(ptx.matches("tensormap.replace.tile.global_stride").count(), 2);
    let sm80 =
        ptx_for("descriptor_copy.py", "tile_copy_device_desc", tile_copy_device_desc("zero"), 4, Target::Sm80).unwrap();
    assert!(!sm80.contains("tensormap") && !sm80.contains("_scratch"), "{sm80}");
}

/// `gluon_warp_specialize.py`'s kernel: 8 tiles of 32 x 64 per program through a two-buffer ring.
fn warp_specialized() -> Vec<ArgSpec> {
    vec![ptr(F16), ptr(F16), ptr(F32), ArgSpec::Float(F32), c(8), c(32), c(64), c(2)]
}

/// A warp-specialized kernel: the CTA has the default partition's 4 warps and the producer's 4; the workers
/// branch from the entry past the kernel's own code, registers move per warpgroup (`setmaxnreg`, with `.maxnreg`
/// on the entry), each partition synchronizes on a named barrier of its own threads, and every thread meets
/// at `bar.sync 0` only to hand over. At the end the workers count themselves at the join's barrier and exit,
/// never running into the default partition's code (ptxas would hold it to the workers' register count). The
/// producer's layouts are computed from its own thread index (`%tid.x - 128`).
#[test]
fn warp_specialized_partitions_run_on_their_own_warps() {
    let ptx = ptx_for("gluon_warp_specialize.py", "stream_kernel", warp_specialized(), 4, Target::Sm90a).unwrap();
    for want in [
        ".reqntid 256, 1, 1",
        ".maxnreg 248",
        "setmaxnreg.dec.sync.aligned.u32 40;",
        "setmaxnreg.inc.sync.aligned.u32 256;",
        "bar.sync 1, 128;",
        "bar.sync 2, 128;",
        "cp.async.cg.shared.global",
    ] {
        assert!(ptx.contains(want), "no `{want}` in\n{ptx}");
    }
    // Pointers and buffers are in registers every thread set at the entry; `base` (from program_id, computed by
    // the default partition) goes through shared memory: two hand-off barriers. The join is named barrier 3 (after
    // the default partition's 1 and the worker's 2), all 256 threads.
    assert_eq!(ptx.matches("bar.sync 0;").count(), 2, "hand-off (twice: a capture goes through shared memory)");
    assert_eq!(ptx.matches("bar.arrive 3, 256;").count(), 1, "the worker's arrival at the join");
    assert_eq!(ptx.matches("bar.sync 3, 256;").count(), 1, "the default partition's wait at the join");
    let handoff = &ptx[ptx.find("$L_ws_handoff_1:").unwrap()..ptx.find("$L_ws_default").unwrap()];
    assert_eq!(handoff.matches("ld.shared.b32").count(), 1, "one capture loaded by the workers:\n{handoff}");
    let entry = ptx.find("bra.uni $L_ws_handoff").expect("the workers' branch at the entry");
    let init = ptx.find("mbarrier.init").unwrap();
    assert!(entry < init, "the workers skip the kernel's code before the partitions");
    let worker = ptx.find("setmaxnreg.dec").unwrap();
    let default = ptx.find("setmaxnreg.inc").unwrap();
    let worker_code = &ptx[worker..default];
    assert!(worker_code.contains("bar.sync 2, 128;") && !worker_code.contains("bar.sync 1,"), "{worker_code}");
    assert!(worker_code.contains("bar.arrive 3, 256;\n    exit;\n$L_ws_default"), "{worker_code}");
    let tid = ptx.lines().find_map(|l| l.trim().strip_prefix("mov.u32 ")?.strip_suffix(", %tid.x;")).unwrap();
    assert!(
        ptx.lines().any(|l| l.trim().starts_with("sub.u32") && l.trim().ends_with(&format!(", {tid}, 128;"))),
        "the producer's thread index is rebased to its first warp"
    );
    // sm_80 has the partitions and named barriers but no setmaxnreg.
    let sm80 = ptx_for("gluon_warp_specialize.py", "stream_kernel", warp_specialized(), 4, Target::Sm80).unwrap();
    assert!(!sm80.contains("setmaxnreg") && !sm80.contains(".maxnreg") && sm80.contains("bar.sync 2, 128;"));
}

/// `matmul_kernel` on f16, 64x64x32 tiles, strides multiples of 16 (as in the tutorial's autotuning configs).
fn matmul_f16() -> Vec<ArgSpec> {
    matmul(F16, 64, 64, 32)
}

/// `_attn_fwd` on f16 with HEAD_DIM 32, BLOCK_M 32, BLOCK_N 16 (as in `lang/tests/examples.rs`).
fn attention(causal: bool) -> Vec<ArgSpec> {
    let mut args = vec![ptr(F16), ptr(F16), ptr(F16), ArgSpec::Float(F32), ptr(F32), ptr(F16)];
    args.extend((0..16 + 3).map(|_| int(false)));
    args.extend([c(32), c(32), c(16), ArgSpec::Constexpr(ConstValue::Bool(causal))]);
    args
}

/// `tma_matmul.py`'s kernel on f16 with 128x128x64 tiles (host descriptors: TMA on sm_90a).
fn tma_matmul() -> Vec<ArgSpec> {
    vec![desc(F16, &[128, 64]), desc(F16, &[64, 128]), desc(F16, &[128, 128]), int(false), int(false), int(false), c(8)]
}

fn desc(elem: ScalarType, block_shape: &[u32]) -> ArgSpec {
    ArgSpec::TensorDesc { elem, block_shape: block_shape.to_vec(), padding_nan: false, layout: None }
}

/// (file, kernel, specialization, target, what the error must name)
fn not_yet() -> Vec<(&'static str, &'static str, Vec<ArgSpec>, Target, &'static str)> {
    // (fp8 operands on sm_80 run on the FMA path: tests/examples_sim.rs compares them with the interpreter.)
    vec![
        // A gluon kernel's warpgroup_mma is wgmma, which sm_80 does not have.
        ("gluon_matmul.py", "matmul_kernel", gluon_matmul(64, 64, 32), Target::Sm80, "needs sm_90a"),
        // TMA (sm_90a and newer).
        (
            "gluon_tma_matmul.py",
            "matmul_kernel",
            vec![desc(F16, &[64, 32]), desc(F16, &[32, 64]), desc(F16, &[64, 64]), int(false)],
            Target::Sm80,
            "sm_90a",
        ),
    ]
}

/// `gluon/matmul.py`'s kernel with `bm x bn x bk` tiles through a ring of `stages` buffers.
fn gluon_persistent(bm: u32, bn: u32, bk: u32, stages: i64) -> Vec<ArgSpec> {
    vec![
        desc(F16, &[bm, bk]),
        desc(F16, &[bk, bn]),
        desc(F16, &[bm, bn]),
        int(false),
        int(false),
        int(false),
        c(8),
        c(stages),
    ]
}

/// `gluon_matmul.py`'s kernel with `bm x bn x bk` tiles; K, N and the strides multiples of 16 (the copies'
/// masks and addresses then vectorize to 16-byte cp.async).
fn gluon_matmul(bm: i64, bn: i64, bk: i64) -> Vec<ArgSpec> {
    let mut args = vec![ptr(F16), ptr(F16), ptr(F16), int(false)];
    args.extend((0..5).map(|_| int(true)));
    args.extend([c(bm), c(bn), c(bk)]);
    args
}

/// `matmul_kernel` on `t` operands with `bm x bn x bk` tiles, strides multiples of 16.
fn matmul(t: ScalarType, bm: i64, bn: i64, bk: i64) -> Vec<ArgSpec> {
    let mut mm = vec![ptr(t), ptr(t), ptr(F16)];
    mm.extend((0..9).map(|_| int(true)));
    mm.extend([c(bm), c(bn), c(bk), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    mm
}

/// `file` is in `examples/`, or in `tests/kernels/` when it starts with `kernels/`.
fn ptx_for(file: &str, kernel: &str, args: Vec<ArgSpec>, num_warps: u32, target: Target) -> Result<String, String> {
    let dir = if file.starts_with("kernels/") { "tests" } else { "examples" };
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(file)).unwrap();
    let spec = Specialization::with_config(args, KernelConfig { num_warps, ..KernelConfig::DEFAULT });
    let ks = tessel::KernelSource { file, source: &source, kernel, spec: &spec, module: None };
    match tessel::pipeline::run(&ks, target, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => Ok(kernel.ptx),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => Err(e.to_string()),
    }
}

/// Attention backward's inner loops (`tests/kernels/attn_bwd.py`, head dim 64, one warpgroup, 3 stages): each
/// iteration of the dk/dv loop meets at two barriers (after its copy wait, with the proxy fence; before its
/// refill), waits for wgmmas three times (where qkT is read, which retires the previous iteration's dk too;
/// before dpT is issued, retiring dv; where dpT is read) and loads nothing from global memory but through its
/// copies (M and D run ahead in rings, the causal loop's too), nor shuffles (each thread reads its rows of M
/// and D from the rings, in the dot's layout); the dq loop meets twice and waits twice. ptxas accepts them.
#[test]
fn attention_backward_loops_sync_twice_and_wait_for_wgmmas_where_read() {
    let loop_body = |ptx: &str| {
        let head = ptx.find("$L_for_head_").expect("a loop");
        ptx[head..ptx[head..].find("\n$L_for_end_").expect("its end") + head].to_string()
    };
    let count = |body: &str, op: &str| body.lines().filter(|l| l.trim_start().starts_with(op)).count();
    let mut dq = vec![ptr(F16), ptr(F16), ptr(F16), ptr(F16), ptr(F32), ptr(F32), ptr(F16)];
    dq.extend([int(true), c(64), c(64), c(32)]);
    let dkdv = |mask: bool| {
        let mut spec = vec![ptr(F16), ptr(F16), ptr(F16), ptr(F16), ptr(F32), ptr(F32), ptr(F16), ptr(F16)];
        spec.extend([ArgSpec::Float(F32), int(true), c(64), c(32), c(64), ArgSpec::Constexpr(ConstValue::Bool(mask))]);
        spec
    };
    for (kernel, spec, waits) in
        [("attn_bwd_dkdv", dkdv(false), 3), ("attn_bwd_dkdv", dkdv(true), 3), ("attn_bwd_dq", dq, 2)]
    {
        let ptx = ptx_for("kernels/attn_bwd.py", kernel, spec, 4, Target::Sm90a).unwrap();
        let body = loop_body(&ptx);
        let counts = [
            count(&body, "bar.sync"),
            count(&body, "fence.proxy.async"),
            count(&body, "wgmma.wait_group"),
            count(&body, "ld.global"),
            count(&body, "shfl.sync"),
        ];
        let what = "bar.sync, fences, wgmma waits, global loads, shuffles";
        assert_eq!(counts, [2, 1, waits, 0, 0], "{kernel}: {what}:\n{body}");
        assemble(kernel, &ptx, "sm_90a");
    }
}

fn ptxas() -> Option<String> {
    let found = std::env::var("PTXAS").ok().or_else(|| {
        Command::new("ptxas").arg("--version").output().ok().filter(|o| o.status.success()).map(|_| "ptxas".to_string())
    });
    if found.is_none() && std::env::var_os("TESSEL_REQUIRE_PTXAS").is_some() {
        panic!("TESSEL_REQUIRE_PTXAS is set but no ptxas was found (set PTXAS)");
    }
    found
}

#[test]
fn supported_examples_compile_to_ptx_that_ptxas_accepts() {
    let ptxas = ptxas();
    if ptxas.is_none() {
        eprintln!("note: no ptxas here; checking only that PTX is produced");
    }
    let dir = std::env::temp_dir().join(format!("tessel-examples-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (file, kernel, args, warps) in supported() {
        for (arch, name) in [(Target::Sm90a, "sm_90a"), (Target::Sm80, "sm_80")] {
            let ptx =
                ptx_for(file, kernel, args.clone(), warps, arch).unwrap_or_else(|e| panic!("{file}::{kernel}: {e}"));
            assert!(ptx.contains(&format!(".target {name}")), "{file}::{kernel}");
            let Some(ptxas) = &ptxas else { continue };
            let path = dir.join(format!("{kernel}_{warps}_{name}.ptx"));
            std::fs::write(&path, &ptx).unwrap();
            let out = Command::new(ptxas)
                .args(["-arch", name, "-o"])
                .arg(path.with_extension("cubin"))
                .arg(&path)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && stderr.trim().is_empty(), "ptxas -arch {name} {file}::{kernel}:\n{stderr}");
        }
    }
    std::fs::remove_dir_all(dir).ok();
}

/// `cp.async.bulk.tensor.4d...im2col` with its 16-bit offsets (sm_90a only: TMA).
#[test]
fn the_im2col_example_assembles_for_sm_90a() {
    let desc = ArgSpec::TensorDescIm2col { elem: F16, block_shape: vec![32, 16], rank: 4, padding_nan: false };
    let args = vec![desc, ptr(F16), int(false), int(false), int(false), int(false), c(1), c(2)];
    let ptx = ptx_for("gluon_tma_im2col.py", "im2col_copy", args.clone(), 4, Target::Sm90a).unwrap();
    let load = "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes";
    assert!(ptx.contains(load) && ptx.contains("], {%h"), "{ptx}");
    // Issued by an elected lane of warp 0 (ptxas predicates one copy), not by `%tid == 0` (a loop over the active
    // lanes around it): the guard is `warp == 0 && elected`.
    let line = ptx.lines().find(|l| l.contains(load)).unwrap();
    let guard = line.trim().strip_prefix('@').and_then(|l| l.split_whitespace().next()).expect("a guarded copy");
    let def =
        ptx.lines().find(|l| l.trim().starts_with("setp.eq.and.u32") && l.contains(&format!("{guard},"))).unwrap();
    let elected = def.trim().trim_end_matches(';').rsplit(", ").next().unwrap();
    assert!(ptx.lines().any(|l| l.trim().starts_with("elect.sync") && l.contains(&format!("|{elected},"))), "{ptx}");
    let err = ptx_for("gluon_tma_im2col.py", "im2col_copy", args, 4, Target::Sm80).unwrap_err();
    assert!(err.contains("sm_90a"), "{err}");
    assemble("im2col_copy", &ptx, "sm_90a");
}

/// `async_copy.mbarrier_arrive`: every thread's `cp.async.mbarrier.arrive`, `.noinc` when the barrier counts the
/// threads (`increment_count=False`), on sm_80 and sm_90a.
#[test]
fn copies_handed_to_an_mbarrier_assemble() {
    for (increment, form) in
        [(true, "cp.async.mbarrier.arrive.shared::cta.b64"), (false, "cp.async.mbarrier.arrive.noinc.shared::cta.b64")]
    {
        let args = vec![ptr(F16), ptr(F16), int(false), c(16), c(64), cb(increment), cb(true)];
        for (target, arch) in [(Target::Sm90a, "sm_90a"), (Target::Sm80, "sm_80")] {
            let ptx = ptx_for("gluon_copy_mbarrier.py", "copy_ring", args.clone(), 4, target).unwrap();
            assert!(ptx.contains(form), "{ptx}");
            assert!(!ptx.contains("cp.async.wait_group"), "the ring waits on its barriers only:\n{ptx}");
            assemble(&format!("copy_ring_{increment}"), &ptx, arch);
        }
    }
}

fn cb(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

#[test]
fn unsupported_examples_say_what_is_missing() {
    for (file, kernel, args, target, missing) in not_yet() {
        match ptx_for(file, kernel, args, 4, target) {
            Ok(_) => panic!("{file}::{kernel} now compiles: move it to supported()"),
            Err(e) => assert!(e.contains(missing), "{file}::{kernel}: expected an error naming {missing}, got: {e}"),
        }
    }
}

/// `_attn_fwd` on f16 at the tutorial's tile shapes: BLOCK_M 128, BLOCK_N 64, head dim `d`.
fn attention_big(d: i64, causal: bool) -> Vec<ArgSpec> {
    let mut args = vec![ptr(F16), ptr(F16), ptr(F16), ArgSpec::Float(F32), ptr(F32), ptr(F16)];
    args.extend((0..16 + 3).map(|_| int(false)));
    args.extend([c(d), c(128), c(64), ArgSpec::Constexpr(ConstValue::Bool(causal))]);
    args
}

/// `int8_matmul_kernel` with 128x128x64 tiles, unit inner strides specialized away.
fn int8_matmul() -> Vec<ArgSpec> {
    let mut args = vec![ptr(ScalarType::I8), ptr(ScalarType::I8), ptr(I32)];
    args.extend([int(false), int(false), int(false), int(true), ArgSpec::Constexpr(ConstValue::Int(1))]);
    args.extend([int(true), ArgSpec::Constexpr(ConstValue::Int(1)), int(true), ArgSpec::Constexpr(ConstValue::Int(1))]);
    args.extend([c(128), c(128), c(64)]);
    args
}

/// Compiles each case for `target`, checks that its PTX has the tensor-core form named, and assembles it.
fn tensor_core_cases(target: Target, cases: Vec<(&str, &str, Vec<ArgSpec>, u32, &str)>) {
    let ptxas = ptxas();
    let dir = std::env::temp_dir().join(format!("tessel-examples-mma-{}-{}", target.name(), std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (file, kernel, args, warps, form)) in cases.into_iter().enumerate() {
        let ptx = ptx_for(file, kernel, args, warps, target).unwrap_or_else(|e| panic!("{kernel} ({form}): {e}"));
        assert!(ptx.contains(form), "{kernel}: no {form} in the {} PTX", target.name());
        let Some(ptxas) = &ptxas else { continue };
        let path = dir.join(format!("{kernel}_{i}.ptx"));
        std::fs::write(&path, &ptx).unwrap();
        let out = Command::new(ptxas)
            .args(["-arch", target.name(), "-o"])
            .arg(path.with_extension("cubin"))
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.trim().is_empty(), "ptxas {kernel} ({form}):\n{stderr}");
    }
    std::fs::remove_dir_all(dir).ok();
}

/// On sm_90a, `tl.dot` runs on wgmma for every operand type it has a form for, at the tile shapes the
/// benchmarks use, in the matmul and in attention, and ptxas accepts the result.
#[test]
fn sm90a_dots_use_wgmma() {
    let mm = |t, bm, bn, bk, warps, form| ("matmul.py", "matmul_kernel", matmul(t, bm, bn, bk), warps, form);
    let at = |d, causal, form| ("flash_attention.py", "_attn_fwd", attention_big(d, causal), 8, form);
    tensor_core_cases(
        Target::Sm90a,
        vec![
            mm(F16, 128, 128, 64, 8, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
            mm(F16, 128, 256, 64, 8, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"),
            mm(F16, 64, 64, 32, 4, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"),
            mm(ScalarType::BF16, 128, 128, 64, 8, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"),
            mm(ScalarType::F8E4M3, 128, 128, 64, 8, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"),
            mm(F32, 64, 64, 32, 4, "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32"),
            (
                "int8_matmul.py",
                "int8_matmul_kernel",
                int8_matmul(),
                8,
                "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8",
            ),
            at(64, false, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"),
            // Gluon: the hand-written cp.async ring and asynchronous warpgroup_mma, one and two warpgroups.
            ("gluon_matmul.py", "matmul_kernel", gluon_matmul(64, 64, 32), 4, "wgmma.mma_async.sync.aligned.m64n64k16"),
            ("gluon_matmul.py", "matmul_kernel", gluon_matmul(128, 128, 64), 8, "cp.async.cg.shared.global"),
            // TMA: gluon's hand-written ring, and auto mode's descriptor loads pipelined into TMA rings.
            (
                "gluon_tma_matmul.py",
                "matmul_kernel",
                vec![desc(F16, &[128, 64]), desc(F16, &[64, 128]), desc(F16, &[128, 128]), int(false)],
                4,
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            ),
            (
                "tma_matmul.py",
                "matmul_kernel",
                tma_matmul(),
                8,
                "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
            ),
            // A persistent loop nest fused by `flatten=True`: one pipelined loop across tiles, the accumulator
            // restarted through wgmma's scale-d predicate, the epilogue's wait inside its branch; not serialized.
            ("tma_matmul.py", "matmul_kernel_persistent", tma_persistent(true), 8, "wgmma.wait_group.sync.aligned 1;"),
            // Descriptors made in the kernel: TMA through tensor maps in the global scratch, wgmma not serialized.
            (
                "tma_matmul.py",
                "matmul_kernel_device_desc",
                tma_matmul_device_desc(),
                8,
                "tensormap.replace.tile.global_address.global.b1024.b64",
            ),
            // Gluon's persistent, warp-specialized GEMM: two consumer warpgroups, and one.
            ("gluon/matmul.py", "matmul_kernel", gluon_persistent(128, 256, 64, 3), 8, "m64n256k16.f32.f16.f16"),
            ("gluon/matmul.py", "matmul_kernel", gluon_persistent(128, 128, 64, 4), 4, "m64n128k16.f32.f16.f16"),
            at(128, true, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
        ],
    );
}

/// On sm_80, `tl.dot` runs on mma.sync (f16, bf16, tf32), and ptxas accepts the result.
#[test]
fn sm80_dots_use_mma_sync() {
    let mm = |t, bm, bn, bk, warps, form| ("matmul.py", "matmul_kernel", matmul(t, bm, bn, bk), warps, form);
    tensor_core_cases(
        Target::Sm80,
        vec![
            mm(F16, 128, 128, 32, 4, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
            mm(F16, 64, 64, 32, 4, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
            mm(ScalarType::BF16, 64, 64, 32, 4, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
            mm(F32, 64, 64, 32, 4, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
            (
                "int8_matmul.py",
                "int8_matmul_kernel",
                int8_matmul(),
                8,
                "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
            ),
            ("flash_attention.py", "_attn_fwd", attention_big(64, true), 4, "mma.sync.aligned.m16n8k16"),
        ],
    );
}

/// The cp.async-pipelined matmul loop waits at two CTA barriers per iteration, as Triton's does: one after the
/// copy wait (before the wgmma reads what the copies wrote: no proxy fence, which landed copies do not need and
/// which costs a `MEMBAR.ALL.CTA`) and one before the ring's refill (every warpgroup has retired the wgmma that
/// read the buffer). The refill of B right after A's needs none: a barrier does not order it against the copies
/// still in flight into the ring's other buffers.
#[test]
fn the_pipelined_matmul_loop_has_two_barriers_per_iteration() {
    // As Triton specializes the tutorial's launch: the unit strides are constants, the rest multiples of 16.
    let mut args = vec![ptr(F16), ptr(F16), ptr(F16)];
    args.extend((0..9).map(|i| if [4, 6, 8].contains(&i) { c(1) } else { int(true) }));
    args.extend([c(128), c(256), c(64), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    let ptx = ptx_for("matmul.py", "matmul_kernel", args, 8, Target::Sm90a).unwrap();
    let dot = ptx.find("wgmma.mma_async").expect("a wgmma");
    let head = ptx[..dot].rfind("$L_for_head_").expect("the k loop");
    let label = &ptx[head..head + ptx[head..].find(':').unwrap()];
    let body = &ptx[head..head + ptx[head..].find(&format!("bra.uni {label};")).expect("its back edge")];
    assert!(body.contains("cp.async.cg.shared.global"), "{body}");
    assert_eq!(body.matches("bar.sync 0;").count(), 2, "{body}");
    assert_eq!(body.matches("fence.proxy.async").count(), 0, "{body}");
}

/// An asynchronous wgmma's result that enters a loop still in flight (`tests/kernels/gluon_wgmma_loop.py`, a
/// persistent matmul's shape) becomes the loop's carried value in its own registers: no copy reads them between
/// the issue and the loop, which would make ptxas serialize every wgmma of the kernel (C7511, which `assemble`
/// refuses as it refuses any ptxas output). The result is checked on the simulator in `examples_sim`.
#[test]
fn an_in_flight_wgmma_result_enters_a_loop_without_a_copy() {
    let args = vec![ptr(F16), ptr(F16), ptr(F32), int(false), int(false), c(64), c(128), c(32)];
    let ptx = ptx_for("kernels/gluon_wgmma_loop.py", "wgmma_into_loop", args, 4, Target::Sm90a).unwrap();
    let issued = ptx.find("wgmma.commit_group").expect("a wgmma before the K loop");
    let k_loop = ptx[issued..].find("$L_for_head_").expect("the K loop") + issued;
    let copies = ptx[issued..k_loop].lines().filter(|l| l.trim_start().starts_with("mov.f32")).count();
    assert_eq!(copies, 0, "accumulator copies between the wgmma and the loop:\n{}", &ptx[issued..k_loop]);
    assemble("wgmma_into_loop", &ptx, "sm_90a");
}
