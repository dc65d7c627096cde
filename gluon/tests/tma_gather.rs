//! Blackwell's TMA gather and scatter (`tma.async_gather` / `tma.async_scatter`): the interpreter's rows against
//! a reference on rows and columns partly outside the tensor, the IR round trip, `multicast=True` (in a cluster
//! only; clusters end to end: `tests/cluster_gather.rs`), the refusals at the call (a
//! row-index layout gather4 cannot issue from, too few rows, a descriptor that is not `[1, cols]`, a buffer in
//! another layout), a gather from a one-warp `warp_specialize` worker, and the interpreter's errors for what the
//! GPU stops on (a misaligned column, a negative scatter row).

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::ArgSpec;
use tessel_layouts::NvmmaSharedLayout;
use tessel_tile::ScalarType::*;

const SRC: &str = r#"
import triton.experimental.gluon as gluon
import triton.experimental.gluon.language as gl
from triton.experimental.gluon.language.nvidia.blackwell import tma, mbarrier, fence_async_shared


@gluon.jit
def gather_rows(desc, idx_ptr, out_ptr, col, ROWS: gl.constexpr, COLS: gl.constexpr):
    idx_layout: gl.constexpr = gl.SliceLayout(0, gl.BlockedLayout([1, 4], [32, 1], [1, gl.num_warps()], [1, 0]))
    rows = gl.load(idx_ptr + gl.arange(0, ROWS, idx_layout))
    buf = gl.allocate_shared_memory(desc.dtype, [ROWS, COLS], desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, ROWS * desc.block_type.nbytes)
    tma.async_gather(desc, rows, col, bar, buf)
    mbarrier.wait(bar, 0)
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, ROWS, gl.SliceLayout(1, layout))
    c = gl.arange(0, COLS, gl.SliceLayout(0, layout))
    gl.store(out_ptr + r[:, None] * COLS + c[None, :], buf.load(layout))


@gluon.jit
def scatter_rows(desc, idx_ptr, src_ptr, col, ROWS: gl.constexpr, COLS: gl.constexpr):
    idx_layout: gl.constexpr = gl.SliceLayout(0, gl.BlockedLayout([1, 4], [32, 1], [1, gl.num_warps()], [1, 0]))
    rows = gl.load(idx_ptr + gl.arange(0, ROWS, idx_layout))
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, ROWS, gl.SliceLayout(1, layout))
    c = gl.arange(0, COLS, gl.SliceLayout(0, layout))
    x = gl.load(src_ptr + r[:, None] * COLS + c[None, :])
    buf = gl.allocate_shared_memory(desc.dtype, [ROWS, COLS], desc.layout, x)
    fence_async_shared()
    tma.async_scatter(desc, rows, col, buf)
    tma.store_wait(0)


@gluon.jit
def _load(desc, idx_ptr, col, buf, bar, ROWS: gl.constexpr):
    idx_layout: gl.constexpr = gl.SliceLayout(0, gl.BlockedLayout([1, 4], [32, 1], [1, 1], [1, 0]))
    rows = gl.load(idx_ptr + gl.arange(0, ROWS, idx_layout))
    mbarrier.expect(bar, ROWS * desc.block_type.nbytes)
    tma.async_gather(desc, rows, col, bar, buf)


@gluon.jit
def _consume(out_ptr, buf, bar, ROWS: gl.constexpr, COLS: gl.constexpr):
    mbarrier.wait(bar, 0)
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, ROWS, gl.SliceLayout(1, layout))
    c = gl.arange(0, COLS, gl.SliceLayout(0, layout))
    gl.store(out_ptr + r[:, None] * COLS + c[None, :], buf.load(layout))


@gluon.jit
def ws_gather(desc, idx_ptr, out_ptr, col, ROWS: gl.constexpr, COLS: gl.constexpr):
    buf = gl.allocate_shared_memory(desc.dtype, [ROWS, COLS], desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    gl.warp_specialize([(_consume, (out_ptr, buf, bar, ROWS, COLS)), (_load, (desc, idx_ptr, col, buf, bar, ROWS))],
                       [1], [24])
"#;

const ROWS: u32 = 16;
const COLS: u32 = 16;
/// The tensor the descriptor covers: 40 x 24 f32 (rows of 96 bytes, a multiple of 16 as TMA needs).
const DIMS: (i64, i64) = (40, 24);

fn spec(block: &[u32], rows: u32) -> Vec<ArgSpec> {
    let layout = Some(NvmmaSharedLayout::default_for(&[rows, COLS], 32));
    let desc = ArgSpec::TensorDesc { elem: F32, block_shape: block.to_vec(), padding_nan: false, layout };
    vec![desc, ptr(I32), ptr(F32), int(), cint(rows as i64), cint(COLS as i64)]
}

fn desc_args(buf: tessel_interp::memory::BufferId) -> [Arg; 5] {
    [Arg::Buffer(buf), Arg::Int(DIMS.0), Arg::Int(DIMS.1), Arg::Int(DIMS.1), Arg::Int(1)]
}

/// Rows past both ends and in the middle, shuffled.
const INDICES: [i64; 16] = [3, -1, 39, 40, 0, 17, -40, 100, 5, 6, 7, 38, 12, 2, 1, 20];

#[test]
fn gathered_rows_match_the_tensor_with_zeros_outside_it() {
    let f = elab(SRC, "gather_rows", spec(&[1, COLS], ROWS));
    assert!(f.to_string().contains("tma_gather"), "{f}");
    let x = rounded(F32, &Rng::new(9).vec((DIMS.0 * DIMS.1) as usize));
    for col in [0i64, 8, -4, 12] {
        let mut mem = Memory::new();
        let bx = mem.alloc_from("x", F32, &x);
        let idx = mem.alloc_from("idx", I32, &INDICES.map(|i| i as f64));
        let out = poisoned(&mut mem, "out", F32, (ROWS * COLS) as usize);
        let mut args = desc_args(bx).to_vec();
        args.extend([Arg::Buffer(idx), Arg::Buffer(out), Arg::Int(col)]);
        run(&f, &args, [1, 1, 1], &mut mem);
        let want: Vec<f64> = (0..(ROWS * COLS) as usize)
            .map(|k| {
                let (r, c) = (INDICES[k / COLS as usize], col + (k % COLS as usize) as i64);
                let inside = (0..DIMS.0).contains(&r) && (0..DIMS.1).contains(&c);
                if inside { x[(r * DIMS.1 + c) as usize] } else { 0.0 }
            })
            .collect();
        assert_eq!(mem.read_f64(out), want, "column {col}");
    }
}

#[test]
fn scattered_rows_land_in_the_tensor_and_drop_outside_it() {
    let f = elab(SRC, "scatter_rows", spec(&[1, COLS], ROWS));
    assert!(f.to_string().contains("tma_scatter"), "{f}");
    let x = rounded(F32, &Rng::new(4).vec((DIMS.0 * DIMS.1) as usize));
    let src = rounded(F32, &Rng::new(5).vec((ROWS * COLS) as usize));
    let rows: Vec<i64> = INDICES.iter().map(|&i| i.rem_euclid(64)).collect();
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let idx = mem.alloc_from("idx", I32, &rows.iter().map(|&i| i as f64).collect::<Vec<_>>());
    let bs = mem.alloc_from("src", F32, &src);
    let mut args = desc_args(bx).to_vec();
    args.extend([Arg::Buffer(idx), Arg::Buffer(bs), Arg::Int(12)]);
    run(&f, &args, [1, 1, 1], &mut mem);
    let mut want = x.clone();
    for (i, &r) in rows.iter().enumerate() {
        for j in 0..COLS as i64 {
            if r < DIMS.0 && 12 + j < DIMS.1 {
                want[(r * DIMS.1 + 12 + j) as usize] = src[i * COLS as usize + j as usize];
            }
        }
    }
    assert_eq!(mem.read_f64(bx), want);
}

#[test]
fn what_the_gpu_stops_on_is_an_interpreter_error() {
    let f = elab(SRC, "gather_rows", spec(&[1, COLS], ROWS));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &vec![0.0; (DIMS.0 * DIMS.1) as usize]);
    let idx = mem.alloc_from("idx", I32, &INDICES.map(|i| i as f64));
    let out = poisoned(&mut mem, "out", F32, (ROWS * COLS) as usize);
    let mut args = desc_args(bx).to_vec();
    args.extend([Arg::Buffer(idx), Arg::Buffer(out), Arg::Int(2)]);
    let err = run_error(&f, &args, &mut mem);
    assert!(err.contains("`tma.async_gather` at column 2: the column offset must be 16-byte aligned"), "{err}");
    let f = elab(SRC, "scatter_rows", spec(&[1, COLS], ROWS));
    let bs = mem.alloc_from("src", F32, &vec![1.0; (ROWS * COLS) as usize]);
    let mut args = desc_args(bx).to_vec();
    args.extend([Arg::Buffer(idx), Arg::Buffer(bs), Arg::Int(0)]);
    let err = run_error(&f, &args, &mut mem);
    assert!(err.contains("`tma.async_scatter` to row -1, column 0: scatter offsets must not be negative"), "{err}");
}

#[test]
fn broken_variants_are_refused_at_the_call() {
    // Four indices per thread, but lanes holding different ones: BlockedLayout([4], [32], [4], [0]) on 512.
    let lanes = SRC.replacen(
        "gl.SliceLayout(0, gl.BlockedLayout([1, 4], [32, 1], [1, gl.num_warps()], [1, 0]))",
        "gl.BlockedLayout([4], [32], [gl.num_warps()], [0])",
        1,
    );
    let err = elab_error(&lanes, "gather_rows", spec(&[1, COLS], 512));
    assert!(err.contains("the layout of `x_offsets` cannot feed `tma.async_gather`"), "{err}");
    assert!(err.contains("lane bases all [0]") && err.contains("desc, rows, col, bar, buf"), "{err}");
    // One index per thread.
    let one = SRC.replacen(
        "gl.SliceLayout(0, gl.BlockedLayout([1, 4], [32, 1], [1, gl.num_warps()], [1, 0]))",
        "gl.BlockedLayout([1], [32], [gl.num_warps()], [0])",
        1,
    );
    let err = elab_error(&one, "gather_rows", spec(&[1, COLS], 128));
    assert!(err.contains("first register bases [1] and [2]"), "{err}");
    // Four rows: fewer than gather4's two instructions.
    let err = elab_error(SRC, "gather_rows", spec(&[1, COLS], 4));
    assert!(err.contains("moves a power of two of at least 8 rows, but `x_offsets` has 4"), "{err}");
    // A tile descriptor's block.
    let err = elab_error(SRC, "scatter_rows", spec(&[16, COLS], ROWS));
    assert!(
        err.contains("cannot use this descriptor") && err.contains("whose block is [1, cols], got [16, 16]"),
        "{err}"
    );
    // A buffer in another layout than the descriptor's.
    let other = SRC.replacen(
        "buf = gl.allocate_shared_memory(desc.dtype, [ROWS, COLS], desc.layout)",
        "buf = gl.allocate_shared_memory(desc.dtype, [ROWS, COLS], gl.NVMMASharedLayout(32, 32))",
        1,
    );
    let err = elab_error(&other, "gather_rows", spec(&[1, COLS], ROWS));
    assert!(err.contains("`result` of `tma.async_gather` is not in the descriptor's layout"), "{err}");
    // The row offsets as a list of numbers, not a tensor.
    let list =
        SRC.replacen("tma.async_gather(desc, rows, col, bar, buf)", "tma.async_gather(desc, [0, 1], col, bar, buf)", 1);
    let err = elab_error(&list, "gather_rows", spec(&[1, COLS], ROWS));
    assert!(err.contains("`x_offsets` of `tma.async_gather` must be a"), "{err}");
    // Row offsets of another rank or type.
    for (offsets, got) in [("rows[None, :]", "tensor<1x16xi32"), ("rows.to(gl.int64)", "tensor<16xi64")] {
        let call = format!("tma.async_gather(desc, {offsets}, col, bar, buf)");
        let bad = SRC.replacen("tma.async_gather(desc, rows, col, bar, buf)", &call, 1);
        let err = elab_error(&bad, "gather_rows", spec(&[1, COLS], ROWS));
        assert!(
            err.contains("`x_offsets` of `tma.async_gather` must be a 1-d int32 tensor, got") && err.contains(got),
            "{err}"
        );
    }
}

#[test]
fn a_one_warp_worker_partition_gathers_through_the_descriptor_it_was_passed() {
    let f = elab(SRC, "ws_gather", spec(&[1, COLS], ROWS));
    assert!(f.to_string().contains("tma_gather"), "{f}");
    let x = rounded(F32, &Rng::new(3).vec((DIMS.0 * DIMS.1) as usize));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let idx = mem.alloc_from("idx", I32, &INDICES.map(|i| i as f64));
    let out = poisoned(&mut mem, "out", F32, (ROWS * COLS) as usize);
    let mut args = desc_args(bx).to_vec();
    args.extend([Arg::Buffer(idx), Arg::Buffer(out), Arg::Int(8)]);
    run(&f, &args, [1, 1, 1], &mut mem);
    let want: Vec<f64> = (0..(ROWS * COLS) as usize)
        .map(|k| {
            let (r, c) = (INDICES[k / COLS as usize], 8 + (k % COLS as usize) as i64);
            if (0..DIMS.0).contains(&r) && c < DIMS.1 { x[(r * DIMS.1 + c) as usize] } else { 0.0 }
        })
        .collect();
    assert_eq!(mem.read_f64(out), want);
}

fn with_ctas(args: Vec<ArgSpec>, ctas: u32) -> tessel_lang::elab::Specialization {
    let config = tessel_tile::KernelConfig { num_ctas: ctas, num_warps: 4, ..tessel_tile::KernelConfig::DEFAULT };
    tessel_lang::elab::Specialization::with_config(args, config)
}

/// `multicast=True`: an ordinary gather in a one-CTA program, `tma_gather {multicast}` in a cluster (every CTA
/// holding the whole buffer shares the rows), which the interpreter runs as the same rows landing in the buffer
/// (its logical view of the cluster); a `multicast` that is not a constexpr bool is refused at the argument.
#[test]
fn a_multicast_gather_is_one_in_a_cluster_only() {
    let mc = SRC.replacen(
        "tma.async_gather(desc, rows, col, bar, buf)",
        "tma.async_gather(desc, rows, col, bar, buf, multicast=True)",
        1,
    );
    let one = elab(&mc, "gather_rows", spec(&[1, COLS], ROWS)).to_string();
    assert!(one.contains("tma_gather %") && !one.contains("multicast"), "{one}");
    let f = elab_with(&mc, "gather_rows", &with_ctas(spec(&[1, COLS], ROWS), 2));
    assert!(f.to_string().contains("tma_gather {multicast = true}"), "{f}");
    let x = rounded(F32, &Rng::new(12).vec((DIMS.0 * DIMS.1) as usize));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let idx = mem.alloc_from("idx", I32, &INDICES.map(|i| i as f64));
    let out = poisoned(&mut mem, "out", F32, (ROWS * COLS) as usize);
    let mut args = desc_args(bx).to_vec();
    args.extend([Arg::Buffer(idx), Arg::Buffer(out), Arg::Int(4)]);
    run(&f, &args, [1, 1, 1], &mut mem);
    let want: Vec<f64> = (0..(ROWS * COLS) as usize)
        .map(|k| {
            let (r, c) = (INDICES[k / COLS as usize], 4 + (k % COLS as usize) as i64);
            if (0..DIMS.0).contains(&r) && c < DIMS.1 { x[(r * DIMS.1 + c) as usize] } else { 0.0 }
        })
        .collect();
    assert_eq!(mem.read_f64(out), want);
    let bad = SRC.replacen(
        "tma.async_gather(desc, rows, col, bar, buf)",
        "tma.async_gather(desc, rows, col, bar, buf, multicast=col > 0)",
        1,
    );
    let err = elab_error_with(&bad, "gather_rows", &with_ctas(spec(&[1, COLS], ROWS), 2));
    assert!(err.contains("`multicast` of `tma.async_gather` must be a compile-time constant"), "{err}");
    assert!(err.contains("multicast=col > 0"), "{err}");
}
