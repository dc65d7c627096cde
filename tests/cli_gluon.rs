//! Gluon kernels through the `tessel` binary: a deadlock the interpreter names instead of hanging, sibling modules
//! loaded by `importlib.import_module`, constants written as Python (layouts, tuples).

mod cli_common;

use cli_common::tessel;

#[test]
fn a_wrong_phase_is_reported_as_a_deadlock_naming_partitions_barriers_and_phases() {
    let (code, _, err) = tessel(&[
        "run",
        "--interpret",
        "examples/gluon_deadlock.py::pipeline_kernel",
        "--const",
        "TILES=4",
        "--const",
        "STAGES=2",
        "--arg",
        "x_ptr=rand:256x64:fp16",
        "--arg",
        "y_ptr=zeros:256x64:fp16",
    ]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("deadlock: every partition still running waits on an mbarrier"), "{err}");
    assert!(err.contains("the default partition waits"), "{err}");
    assert!(err.contains("for phase parity 0 of mbarrier `ready[0]`"), "{err}");
    assert!(err.contains("worker partition 0 waits"), "{err}");
    assert!(err.contains("for phase parity 0 of mbarrier `empty[0]`"), "{err}");
    assert!(err.contains("still lacks 1 arrival(s)"), "{err}");
    assert!(err.contains("examples/gluon_deadlock.py:"), "{err}");
}

/// Partitions that ask for more registers than the CTA starts with are the kernel's error, reported as the
/// resource that ran out (the registers, needed against the capacity), with the exit status of a usage error:
/// not an internal error of the pipeliner. The worker asks for 40 registers per thread on its 128 threads;
/// `--maxnreg 24` gives the CTA's 256 threads 6144, which leaves the default partition 8 per thread, below
/// `setmaxnreg`'s minimum of 24.
#[test]
fn partitions_asking_for_more_registers_than_the_cta_has_name_the_resource() {
    let (code, _, err) = tessel(&[
        "compile",
        "examples/gluon_warp_specialize.py::stream_kernel",
        "--signature",
        "*fp16,*fp16,*fp32,fp32",
        "--const",
        "TILES=8",
        "--const",
        "BLOCK_M=32",
        "--const",
        "N=64",
        "--const",
        "STAGES=2",
        "--arch",
        "sm_90a",
        "--maxnreg",
        "24",
        "--emit",
        "ptx",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("internal error"), "{err}");
    assert!(err.contains("cannot generate code for `stream_kernel`"), "{err}");
    assert!(err.contains("the default partition would have 8, fewer than setmaxnreg's minimum of 24"), "{err}");
}

/// A directory of its own per test, holding `files`.
fn scratch(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tessel-cli-gluon-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    dir
}

const HELPERS: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

SCALE: gl.constexpr = 3

@gluon.constexpr_function
def lanes(num_warps):
    return 32 * num_warps

@gluon.jit
def scaled(x):
    return x * SCALE
"#;

const MAIN: &str = r#"
import importlib
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

h = importlib.import_module("01-helpers")

@gluon.jit
def k(X, Y, layout: gl.constexpr):
    offs = gl.arange(0, h.lanes(4), layout=layout)
    gl.store(Y + offs, h.scaled(gl.load(X + offs)))
"#;

#[test]
fn sibling_modules_load_from_the_kernels_directory() {
    let dir = scratch("siblings", &[("01-helpers.py", HELPERS), ("main.py", MAIN)]);
    let target = format!("{}::k", dir.join("main.py").display());
    let run = |layout: &str| {
        tessel(&[
            "run",
            "--interpret",
            &target,
            "--const",
            layout,
            "--arg",
            "X=arange:128:i32",
            "--arg",
            "Y=zeros:128:i32",
            "--show",
            "3",
        ])
    };
    // The layout as the module spells it, and bare as `tessel layout` does.
    for layout in ["layout=gl.BlockedLayout([1], [32], [4], [0])", "layout=BlockedLayout([1], [32], [4], [0])"] {
        let (code, out, err) = run(layout);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("Y: i32[128] = [0, 3, 6, ...]"), "{out}");
    }
    // An error inside the sibling points into the sibling's file.
    std::fs::write(dir.join("01-helpers.py"), HELPERS.replace("x * SCALE", "x * SCALEE")).unwrap();
    let (code, _, err) = run("layout=gl.BlockedLayout([1], [32], [4], [0])");
    assert_ne!(code, 0);
    assert!(err.contains("name `SCALEE` is not defined"), "{err}");
    assert!(err.contains("01-helpers.py:13:"), "{err}");
    // A sibling that is not there is reported at the import.
    std::fs::remove_file(dir.join("01-helpers.py")).unwrap();
    let (code, _, err) = run("layout=gl.BlockedLayout([1], [32], [4], [0])");
    assert_ne!(code, 0);
    assert!(err.contains("cannot read the module `01-helpers`"), "{err}");
    assert!(err.contains("main.py:6:"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A worker partition fills a two-buffer ring from a host descriptor with TMA; the default partition doubles each
/// tile, stores it with TMA and waits for the writes (`read_only=False`). The consumer releases the previous
/// tile's buffer, `(i - 1) % 2` under `pred=i >= 1`: at `i = 0` that is `index(-1)` (`%` truncates, as in
/// Triton), never touched.
const WORKER_TMA: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma

@gluon.jit
def loader(x_desc, bufs, ready, empty, T):
    for i in range(T):
        s = i % 2
        mbarrier.wait(empty.index(s), ((i // 2) & 1) ^ 1)
        mbarrier.expect(ready.index(s), x_desc.block_type.nbytes)
        tma.async_load(x_desc, [i * 32, 0], ready.index(s), bufs.index(s))

@gluon.jit
def doubler(y_desc, bufs, out, ready, empty, T):
    L: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [gl.num_warps(), 1], [1, 0])
    for i in range(T):
        s = i % 2
        mbarrier.wait(ready.index(s), (i // 2) & 1)
        x = bufs.index(s).load(L)
        mbarrier.arrive(empty.index((i - 1) % 2), pred=i >= 1)
        tma.store_wait(0, read_only=False)
        out.store(x * 2.0)
        fence_async_shared()
        tma.async_copy_shared_to_global(y_desc, [i * 32, 0], out)
    tma.store_wait(0, read_only=False)

@gluon.jit
def k(x_desc, y_desc, T):
    bufs = gl.allocate_shared_memory(gl.float32, [2] + x_desc.block_type.shape, x_desc.layout)
    out = gl.allocate_shared_memory(gl.float32, y_desc.block_type.shape, y_desc.layout)
    ready = mbarrier.allocate_mbarrier(batch=2)
    empty = mbarrier.allocate_mbarrier(batch=2)
    for s in gl.static_range(2):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=1)
    gl.warp_specialize([(doubler, (y_desc, bufs, out, ready, empty, T)),
                        (loader, (x_desc, bufs, ready, empty, T))], [1], [24])
"#;

#[test]
fn a_worker_partition_copies_with_a_host_descriptor() {
    let dir = scratch("worker-tma", &[("k.py", WORKER_TMA)]);
    let target = format!("{}::k", dir.join("k.py").display());
    let sig = "tensordesc<fp32[32, 32]>,tensordesc<fp32[32, 32]>,i32";
    let (code, out, err) = tessel(&[
        "run",
        "--interpret",
        &target,
        "--signature",
        sig,
        "--arg",
        "x=arange:128x32",
        "--arg",
        "y=fill:nan:128x32",
        "--arg",
        "x_desc=desc:x:block=32x32",
        "--arg",
        "y_desc=desc:y:block=32x32",
        "--arg",
        "T=4",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let y = tessel::npy::read(&std::fs::read(dir.join("y.npy")).unwrap()).unwrap().to_f64();
    assert_eq!(y, (0..4096).map(|i| 2.0 * i as f64).collect::<Vec<_>>(), "{out}");
    let (code, ptx, err) = tessel(&["compile", &target, "--signature", sig, "--emit", "ptx"]);
    assert_eq!(code, 0, "{err}");
    // The worker's loads and the default partition's stores, each with its tensor map.
    assert!(ptx.contains("cp.async.bulk.tensor.2d.shared::cluster.global"), "{ptx}");
    assert!(ptx.contains("cp.async.bulk.tensor.2d.global.shared::cta"), "{ptx}");
    // `read_only=False` waits for the writes, not only the reads of shared memory.
    assert!(ptx.contains("cp.async.bulk.wait_group 0;"), "{ptx}");
    assert!(!ptx.contains("wait_group.read"), "{ptx}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Four partitions of 4, 1, 2 and 1 warps, each writing its id over its own 128 elements.
const FOUR_PARTITIONS: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

@gluon.jit
def mark(out, ID: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    offs = gl.arange(0, 32 * gl.num_warps(), layout=L)
    gl.store(out + ID * 128 + offs, gl.full([32 * gl.num_warps()], ID, gl.int32, L))

@gluon.jit
def k(out):
    gl.warp_specialize([(mark, (out, 0)), (mark, (out, 1)), (mark, (out, 2)), (mark, (out, 3))],
                       [1, 2, 1], [24, 24, 24])
"#;

/// Follows the PTX's partition dispatch for warp `warp` (a worker's: at least the kernel's 4): from the branch
/// that sends the default partition away, through the `setp.lt.u32`/`bra.uni` chain, to the first worker label
/// reached by a branch or by falling through; returns that worker's position among the worker bodies.
fn dispatched_worker(ptx: &str, warp: u32) -> usize {
    let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
    let bodies: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("$L_ws_worker_") && l.ends_with(':'))
        .map(|l| l.trim_end_matches(':'))
        .collect();
    let start = lines.iter().position(|l| l.contains("bra.uni $L_ws_default_")).expect("a default dispatch");
    let mut preds = std::collections::HashMap::new();
    for l in &lines[start + 1..] {
        let l = l.trim_end_matches(';');
        let words: Vec<&str> = l.split([' ', ',']).filter(|w| !w.is_empty()).collect();
        let target = match words.as_slice() {
            ["setp.lt.u32", p, _, bound] => {
                preds.insert(p.to_string(), warp < bound.parse::<u32>().unwrap());
                continue;
            }
            [guard, "bra.uni", target] if guard.starts_with("@%p") => {
                if !preds[&guard[1..]] {
                    continue;
                }
                *target
            }
            ["bra.uni", target] => *target,
            [label] if label.ends_with(':') => label.trim_end_matches(':'),
            _ => continue,
        };
        return bodies.iter().position(|b| *b == target).unwrap_or_else(|| panic!("{target} is no worker body"));
    }
    panic!("warp {warp} reaches no worker body:\n{ptx}")
}

#[test]
fn each_worker_partition_runs_on_its_own_warps() {
    let dir = scratch("four-partitions", &[("k.py", FOUR_PARTITIONS)]);
    let target = format!("{}::k", dir.join("k.py").display());
    let (code, out, err) = tessel(&[
        "run",
        "--interpret",
        &target,
        "--signature",
        "*i32",
        "--arg",
        "out=fill:-1:512:i32",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let got = tessel::npy::read(&std::fs::read(dir.join("out.npy")).unwrap()).unwrap().to_f64();
    let want: Vec<f64> = (0..512)
        .map(|i| match (i / 128, i % 128) {
            (0, _) => 0.0,
            (1, j) if j < 32 => 1.0,
            (2, j) if j < 64 => 2.0,
            (3, j) if j < 32 => 3.0,
            _ => -1.0,
        })
        .collect();
    assert_eq!(got, want, "{out}");
    // In the PTX, warps 4, 5-6 and 7 reach workers 0, 1 and 2 (the last one once fell through into worker 0).
    let (code, ptx, err) = tessel(&["compile", &target, "--signature", "*i32", "--emit", "ptx"]);
    assert_eq!(code, 0, "{err}");
    assert!(ptx.contains(".reqntid 256, 1, 1"), "{ptx}");
    let reached: Vec<usize> = (4..8).map(|w| dispatched_worker(&ptx, w)).collect();
    assert_eq!(reached, [0, 1, 1, 2], "{ptx}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `examples/gluon/matmul.py` (persistent tiles, a TMA loader partition, asynchronous wgmma) in the interpreter
/// against a float64 product: ragged M, N and K (rows 16-byte aligned, as TMA needs), fewer programs than tiles, rings of 2 and 3 buffers, K
/// shorter than a block.
#[test]
fn the_persistent_warp_specialized_gemm_matches_a_float64_product() {
    let dir = scratch("persistent-gemm", &[]);
    for (m, n, k, stages, grid) in [(300, 600, 200, 3, 3), (130, 72, 40, 2, 2), (64, 128, 16, 2, 1)] {
        let (code, out, err) = tessel(&[
            "run",
            "--interpret",
            "examples/gluon/matmul.py::matmul_kernel",
            "--signature",
            "tensordesc<fp16[64, 32]>,tensordesc<fp16[32, 64]>,tensordesc<fp16[64, 64]>,i32,i32,i32",
            "--const",
            "GROUP_M=2",
            "--const",
            &format!("STAGES={stages}"),
            "--num-warps",
            "4",
            "--grid",
            &grid.to_string(),
            "--arg",
            &format!("a=randn:{m}x{k}:fp16"),
            "--arg",
            &format!("b=randn:{k}x{n}:fp16"),
            "--arg",
            &format!("c=fill:nan:{m}x{n}:fp16"),
            "--arg",
            "a_desc=desc:a:block=64x32",
            "--arg",
            "b_desc=desc:b:block=32x64",
            "--arg",
            "c_desc=desc:c:block=64x64",
            "--arg",
            &format!("M={m}"),
            "--arg",
            &format!("N={n}"),
            "--arg",
            &format!("K={k}"),
            "--out-dir",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let read = |f: &str| tessel::npy::read(&std::fs::read(dir.join(f)).unwrap()).unwrap().to_f64();
        let (a, b, c) = (read("a.npy"), read("b.npy"), read("c.npy"));
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                let got = c[i * n + j];
                // fp32 accumulation, one fp16 rounding of the result.
                assert!(
                    (got - want).abs() <= 1e-3 * want.abs() + 1e-2,
                    "{m}x{n}x{k}: c[{i}, {j}] = {got}, want {want}\n{out}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// One A buffer reloaded by TMA every iteration while the previous iteration's asynchronous wgmma may still
/// read it (waited for only after the loads): a race across the back edge. The driver inserts a wait before the
/// first load and warns, pointing at the load and the wgmma; the interpreter (which refuses the race at run time)
/// then runs it. Waiting before the loads, as written with WAIT_FIRST, needs nothing and gets no warning.
const RELOAD_UNDER_WGMMA: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma, warpgroup_mma_wait

@gluon.jit
def k(a_desc, b_desc, K, WAIT_FIRST: gl.constexpr):
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16])
    a_buf = gl.allocate_shared_memory(gl.float16, [64, 32], a_desc.layout)
    b_buf = gl.allocate_shared_memory(gl.float16, [32, 64], b_desc.layout)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    acc = gl.zeros([64, 64], gl.float32, layout=ACC)
    phase = 0
    for kk in range(0, K, 32):
        if WAIT_FIRST:
            acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
        mbarrier.expect(bar, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
        tma.async_copy_global_to_shared(a_desc, [0, kk], bar, a_buf)
        tma.async_copy_global_to_shared(b_desc, [kk, 0], bar, b_buf)
        mbarrier.wait(bar, phase)
        phase ^= 1
        acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
        acc = warpgroup_mma(a_buf, b_buf, acc, is_async=True)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
"#;

#[test]
fn reloading_a_buffer_an_in_flight_wgmma_reads_gets_a_wait_and_a_warning() {
    let dir = scratch("reload-under-wgmma", &[("k.py", RELOAD_UNDER_WGMMA)]);
    let target = format!("{}::k", dir.join("k.py").display());
    let sig = "tensordesc<fp16[64, 32]>,tensordesc<fp16[32, 64]>,i32";
    let compile = |wait_first: &str| {
        tessel(&[
            "compile",
            &target,
            "--signature",
            sig,
            "--const",
            &format!("WAIT_FIRST={wait_first}"),
            "--emit",
            "ptx",
        ])
    };
    let (code, ptx, err) = compile("False");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "Warning: this TMA load overwrites shared memory that an asynchronous warpgroup_mma may still be reading"
        ) && err.contains("tma.async_copy_global_to_shared(a_desc, [0, kk], bar, a_buf)")
            && err.contains("acc = warpgroup_mma(a_buf, b_buf, acc, is_async=True)"),
        "{err}"
    );
    // In the loop, the inserted wait comes before the first TMA load.
    let body = &ptx[ptx.find("mbarrier.arrive.expect_tx").expect("the loop's expect")..];
    let (wait, load) =
        (body.find("wgmma.wait_group.sync.aligned 0").unwrap(), body.find("cp.async.bulk.tensor").unwrap());
    assert!(wait < load, "{ptx}");
    let (code, _, err) = compile("True");
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("Warning"), "{err}");
    // The repaired kernel passes the interpreter's run-time check of the same race.
    let (code, _, err) = tessel(&[
        "run",
        "--interpret",
        &target,
        "--signature",
        sig,
        "--const",
        "WAIT_FIRST=False",
        "--arg",
        "a=randn:64x96:fp16",
        "--arg",
        "b=randn:96x64:fp16",
        "--arg",
        "a_desc=desc:a:block=64x32",
        "--arg",
        "b_desc=desc:b:block=32x64",
        "--arg",
        "K=96",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Warning: this TMA load overwrites"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

const DESC_LAYOUT: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

@gluon.jit
def k(desc):
    gl.static_print("layout", desc.layout, "ctas", gl.num_ctas())
"#;

/// A descriptor's block layout in the signature, as Triton mangles it: the default layout in any spelling, or
/// another NVMMA layout TMA can stage the block in (`desc.layout` is it); one for other elements, or not an NVMMA
/// layout, is refused.
/// `--num-ctas` reaches `gl.num_ctas()` and the entry's cluster shape.
#[test]
fn signature_descriptor_layouts_and_num_ctas() {
    let dir = scratch("desc-layout", &[("k.py", DESC_LAYOUT)]);
    let target = format!("{}::k", dir.join("k.py").display());
    let compile = |sig: &str, extra: &[&str]| {
        let mut args = vec!["compile", &target, "--signature", sig, "--emit", "tile"];
        args.extend(extra);
        tessel(&args)
    };
    let mangled = "tensordesc<fp16[64, 64],NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, \
                   transposed=False, fp4_padded=False, cga_layout=[])>";
    let (code, _, err) = compile(mangled, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("layout NVMMASharedLayout(128, 16) ctas 1"), "{err}");
    let (code, _, err) = compile("tensordesc<fp16[64, 64],NVMMASharedLayout(128, 16),padding=nan>", &[]);
    assert_eq!(code, 0, "{err}");
    // Another NVMMA layout with a TMA box is the host descriptor's own (tutorial 11's unswizzled scale blocks).
    let (code, _, err) = compile("tensordesc<fp16[64, 64],NVMMASharedLayout(64, 16)>", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("layout NVMMASharedLayout(64, 16) ctas 1"), "{err}");
    let (code, _, err) = compile("tensordesc<fp16[64, 64],NVMMASharedLayout(128, 32)>", &[]);
    assert_ne!(code, 0);
    assert!(err.contains("NVMMASharedLayout(128, 32)") && err.contains("[64, 64]"), "{err}");
    let (code, _, err) = compile("tensordesc<fp16[64, 64],BlockedLayout([1,1],[32,1],[4,1],[1,0])>", &[]);
    assert_ne!(code, 0);
    assert!(err.contains("is an NVMMASharedLayout(...)"), "{err}");
    let (code, _, err) = compile(mangled, &["--num-ctas", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("ctas 2"), "{err}");
    let (code, ptx, err) = tessel(&["compile", &target, "--signature", mangled, "--num-ctas", "2", "--emit", "ptx"]);
    assert_eq!(code, 0, "{err}");
    assert!(ptx.contains(".explicitcluster\n.reqnctapercluster 2, 1, 1\n"), "{ptx}");
    std::fs::remove_dir_all(&dir).ok();
}
