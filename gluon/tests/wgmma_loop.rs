//! A K loop on one A and one B buffer, TMA loads and asynchronous wgmma: the wgmma an iteration issues reads the
//! buffers until a `warpgroup_mma_wait` retires it, so the next iteration's TMA loads may overwrite them only
//! after that wait. Waiting first (`WAIT_BEFORE_LOADS`) runs and matches float64; waiting only after the next
//! loads (after their mbarrier wait, before the next issue) is a write-after-read race across the back edge,
//! which the interpreter refuses at the second iteration's first load, naming the wgmma still in flight.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::ArgSpec;
use tessel_tile::ScalarType::*;

const ONE_BUFFER_LOOP: &str = r#"
from triton.experimental.gluon.language.nvidia.hopper import tma

@gluon.jit
def one_buffer_k_loop(a_desc, b_desc, c_ptr, K, WAIT_BEFORE_LOADS: gl.constexpr):
    BM: gl.constexpr = a_desc.block_shape[0]
    BK: gl.constexpr = a_desc.block_shape[1]
    BN: gl.constexpr = b_desc.block_shape[1]
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [gl.num_warps(), 1], [16, BN, 16])
    a_buf = gl.allocate_shared_memory(a_desc.dtype, [BM, BK], a_desc.layout)
    b_buf = gl.allocate_shared_memory(b_desc.dtype, [BK, BN], b_desc.layout)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    acc = warpgroup_mma_init(gl.zeros([BM, BN], gl.float32, layout=ACC))
    phase = 0
    for k in range(0, K, BK):
        if WAIT_BEFORE_LOADS:
            acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
        mbarrier.expect(bar, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
        tma.async_load(a_desc, [0, k], bar, a_buf)
        tma.async_load(b_desc, [k, 0], bar, b_buf)
        mbarrier.wait(bar, phase)
        phase ^= 1
        acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
        acc = warpgroup_mma(a_buf, b_buf, acc, is_async=True)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    mbarrier.invalidate(bar)
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    rows = gl.arange(0, BM, layout=gl.SliceLayout(1, L))
    cols = gl.arange(0, BN, layout=gl.SliceLayout(0, L))
    gl.store(c_ptr + rows[:, None] * BN + cols[None, :], gl.convert_layout(acc, L))
"#;

const BM: usize = 64;
const BN: usize = 64;
const BK: usize = 32;

fn desc(block: [usize; 2]) -> ArgSpec {
    ArgSpec::TensorDesc {
        elem: F16,
        block_shape: block.iter().map(|&b| b as u32).collect(),
        padding_nan: false,
        layout: None,
    }
}

/// Runs the loop over `k` (a multiple of BK): the product and its float64 reference, or the interpreter's error.
fn run_loop(k: usize, wait_before_loads: bool) -> Result<(Vec<f64>, Vec<f64>), String> {
    let src = format!("{HEADER}{ONE_BUFFER_LOOP}");
    let spec = vec![desc([BM, BK]), desc([BK, BN]), ptr(F32), int(), cint(wait_before_loads as i64)];
    let f = elab(&src, "one_buffer_k_loop", spec);
    let mut rng = Rng::new(23);
    let (a, b) = (rounded(F16, &rng.vec(BM * k)), rounded(F16, &rng.vec(k * BN)));
    let mut mem = Memory::new();
    let (ba, bb) = (mem.alloc_from("a", F16, &a), mem.alloc_from("b", F16, &b));
    let bc = poisoned(&mut mem, "c", F32, BM * BN);
    let d = |buf, rows: usize, cols: usize| {
        [Arg::Buffer(buf), Arg::Int(rows as i64), Arg::Int(cols as i64), Arg::Int(cols as i64), Arg::Int(1)]
    };
    let mut args: Vec<Arg> = Vec::new();
    args.extend(d(ba, BM, k));
    args.extend(d(bb, k, BN));
    args.extend([Arg::Buffer(bc), Arg::Int(k as i64)]);
    tessel_interp::run(&f, &args, [1, 1, 1], &mut mem).map_err(|e| e.to_string())?;
    let reference = (0..BM * BN).map(|i| (0..k).map(|p| a[i / BN * k + p] * b[p * BN + i % BN]).sum()).collect();
    Ok((mem.read_f64(bc), reference))
}

#[test]
fn waiting_for_the_wgmma_before_the_next_loads_matches_float64() {
    let (c, reference) = run_loop(3 * BK, true).unwrap();
    assert_close("one-buffer K loop, wait before loads", &c, &reference, 1e-6);
}

#[test]
fn loads_issued_while_the_previous_wgmma_is_in_flight_are_refused() {
    let err = run_loop(2 * BK, false).unwrap_err();
    assert!(
        err.contains("tma_load into")
            && err.contains("asynchronous warpgroup_dot number 0 (in issue order) may still read it"),
        "{err}"
    );
}

#[test]
fn one_iteration_has_no_next_load_to_race() {
    // The hazard is carried by the back edge: with a single iteration nothing overwrites the buffers.
    let (c, reference) = run_loop(BK, false).unwrap();
    assert_close("one-buffer K loop, one iteration", &c, &reference, 1e-6);
}
