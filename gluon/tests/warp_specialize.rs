//! `gl.warp_specialize` in the interpreter: a producer partition feeds a consumer through a ring of shared-memory
//! buffers guarded by mbarriers (both spellings of the builtin), a wrong phase is reported as a deadlock naming
//! each partition's barrier and phase, and bad partition settings are refused with a span.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::ArgSpec;
use tessel_tile::ScalarType::*;

/// The worker copies tile `i` into buffer `i % STAGES` once the consumer has freed it (`empty`), and says so on
/// `ready`; the default partition waits for each tile, writes `2x + 1`, frees the buffer and returns the sum of
/// the tiles, which the kernel stores after the partitions join. `SKEW` breaks the producer's first wait.
const PIPELINE: &str = r#"
@gluon.jit
def producer(X, bufs, ready, empty, T, BM: gl.constexpr, N: gl.constexpr, STAGES: gl.constexpr, SKEW: gl.constexpr,
             WAIT: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, BM, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    offs = r[:, None] * N + c[None, :]
    for i in range(T):
        s = i % STAGES
        phase = (i // STAGES) & 1
        mbarrier.wait(empty.index(s), phase ^ 1 ^ SKEW)
        async_copy.async_copy_global_to_shared(bufs.index(s), X + i * BM * N + offs)
        async_copy.commit_group()
        if WAIT:
            async_copy.wait_group(0)
        mbarrier.arrive(ready.index(s))

@gluon.jit
def consumer(Y, bufs, ready, empty, T, BM: gl.constexpr, N: gl.constexpr, STAGES: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, BM, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    offs = r[:, None] * N + c[None, :]
    acc = gl.zeros([BM, N], gl.float32, L)
    for i in range(T):
        s = i % STAGES
        mbarrier.wait(ready.index(s), (i // STAGES) & 1)
        x = bufs.index(s).load(L).to(gl.float32)
        gl.thread_barrier()
        mbarrier.arrive(empty.index(s))
        gl.store(Y + i * BM * N + offs, (x * 2.0 + 1.0).to(gl.float16))
        acc += x
    return acc

@gluon.jit
def pipeline(X, Y, S, T, BM: gl.constexpr, N: gl.constexpr, STAGES: gl.constexpr, SKEW: gl.constexpr,
             OLD: gl.constexpr, WAIT: gl.constexpr):
    bufs = gl.allocate_shared_memory(gl.float16, [STAGES, BM, N], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))
    ready = mbarrier.allocate_mbarrier(batch=STAGES)
    empty = mbarrier.allocate_mbarrier(batch=STAGES)
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=1)
    if OLD:
        acc = gl.warp_specialize((Y, bufs, ready, empty, T, BM, N, STAGES), consumer,
                                 [(X, bufs, ready, empty, T, BM, N, STAGES, SKEW, WAIT)], [producer], [1], [24])
    else:
        acc = gl.warp_specialize([(consumer, (Y, bufs, ready, empty, T, BM, N, STAGES)),
                                  (producer, (X, bufs, ready, empty, T, BM, N, STAGES, SKEW, WAIT))], [1], [24])
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, BM, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    gl.store(S + r[:, None] * N + c[None, :], acc)
"#;

const BM: usize = 16;
const N: usize = 64;

fn spec(skew: i64, old: bool, wait: bool) -> Vec<ArgSpec> {
    let mut s = vec![ptr(F16), ptr(F16), ptr(F32), int(), cint(BM as i64), cint(N as i64), cint(2), cint(skew)];
    s.extend([cint(old as i64), cint(wait as i64)]);
    s
}

type Pipeline = (tessel_tile::Func, Memory, Vec<Arg>, Vec<f64>, [tessel_interp::memory::BufferId; 2]);

fn pipeline(skew: i64, old: bool, wait: bool) -> Pipeline {
    let f = elab(&format!("{HEADER}{PIPELINE}"), "pipeline", spec(skew, old, wait));
    let t = 5;
    let x = rounded(F16, &Rng::new(7).vec(t * BM * N));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, &x);
    let by = poisoned(&mut mem, "y", F16, t * BM * N);
    let bs = poisoned(&mut mem, "s", F32, BM * N);
    (f, mem, vec![Arg::Buffer(bx), Arg::Buffer(by), Arg::Buffer(bs), Arg::Int(t as i64)], x, [by, bs])
}

#[test]
fn a_producer_partition_feeds_the_default_partition_through_an_mbarrier_ring() {
    for old in [false, true] {
        let (f, mut mem, args, x, [by, bs]) = pipeline(0, old, true);
        let text = f.to_string();
        assert!(text.contains("warp_specialize {worker_num_warps = [1], worker_num_regs = [24]}"), "{text}");
        run(&f, &args, [1, 1, 1], &mut mem);
        let want_y: Vec<f64> = x.iter().map(|v| rounded(F16, &[v * 2.0 + 1.0])[0]).collect();
        assert_eq!(mem.read_f64(by), want_y, "old spelling: {old}");
        let want_s: Vec<f64> = (0..BM * N).map(|j| (0..5).map(|i| x[i * BM * N + j]).sum::<f64>()).collect();
        assert_close("tile sums", &mem.read_f64(bs), &want_s, 1e-6);
    }
}

#[test]
fn a_wrong_phase_is_a_deadlock_naming_each_partition_barrier_and_phase() {
    let (f, mut mem, args, _, _) = pipeline(1, false, true);
    let err = run_error(&f, &args, &mut mem);
    assert!(err.contains("deadlock: every partition still running waits on an mbarrier"), "{err}");
    // The producer waits for a phase of `empty` the consumer can only complete after `ready`, which waits for it.
    assert!(err.contains("worker partition 0 waits"), "{err}");
    assert!(err.contains("for phase parity 0 of mbarrier `empty[0]`"), "{err}");
    assert!(err.contains("the default partition waits"), "{err}");
    assert!(err.contains("for phase parity 0 of mbarrier `ready[0]`"), "{err}");
    assert!(err.contains("lacks 1 arrival(s)"), "{err}");
}

#[test]
fn reading_a_tile_another_partition_still_copies_is_refused() {
    // The producer arrives without waiting for its copy: the consumer's read races with it.
    let (f, mut mem, args, _, _) = pipeline(0, false, false);
    let err = run_error(&f, &args, &mut mem);
    assert!(err.contains("is read while an async_copy or a TMA load into it is in flight"), "{err}");
}

const BAD: &str = r#"
@gluon.jit
def worker(x, bar):
    mbarrier.arrive(bar)

@gluon.jit
def default(bar):
    mbarrier.wait(bar, 0)

@gluon.jit
def bad(X, CASE: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    x = gl.load(X + gl.arange(0, 128, layout=L))
    if CASE == 0:
        gl.warp_specialize([(default, (bar,)), (worker, (x, bar))], [1], [24])
    elif CASE == 1:
        gl.warp_specialize([(default, (bar,)), (worker, (X, bar))], [1], [20])
    elif CASE == 2:
        gl.warp_specialize([(default, (bar,)), (worker, (X, bar))], [3])
    elif CASE == 3:
        gl.warp_specialize([(default, (bar,)), (worker, (X, bar))], [32])
    else:
        for i in range(2):
            gl.warp_specialize([(default, (bar,)), (worker, (X, bar))], [1])
"#;

fn bad(case: i64) -> String {
    elab_error(&format!("{HEADER}{BAD}"), "bad", vec![ptr(F32), cint(case)])
}

#[test]
fn bad_partitions_are_refused_with_a_span() {
    // The report's location (`test.py:LINE:COL`) is where `sub` starts on the source line holding `line`.
    let src = format!("{HEADER}{BAD}");
    let at = |line: &str, sub: &str| {
        let (i, text) = src.lines().enumerate().find(|(_, l)| l.contains(line)).unwrap();
        format!("test.py:{}:{}", i + 1, text.find(line).unwrap() + line.find(sub).unwrap() + 1)
    };
    let e = bad(0);
    assert!(e.contains("worker partition `worker` is passed a value of type tensor<128xf32"), "{e}");
    assert!(e.contains(&at("(worker, (x, bar))", "(worker")), "the span is the partition's pair:\n{e}");
    let e = bad(1);
    assert!(e.contains("a worker's register count must be a multiple of 8 in 24..=256, got 20"), "{e}");
    assert!(e.contains(&at("[1], [20]", "20")), "the span is the count:\n{e}");
    assert!(bad(2).contains("a worker's warp count must be a power of two, got 3"));
    assert!(bad(3).contains("the partitions need 36 warps"));
    assert!(bad(4).contains("must be called at the top level of the kernel"));
}

/// `examples/gluon_warp_specialize.py` as its author runs it (4 + 4 warps, registers moved): three programs of
/// eight tiles each, every output checked against a float64 reference.
#[test]
fn the_warp_specialize_example_streams_every_tile() {
    let spec = vec![ptr(F16), ptr(F16), ptr(F32), ArgSpec::Float(F32), cint(8), cint(32), cint(64), cint(2)];
    let f = elab(&example_source("gluon_warp_specialize.py"), "stream_kernel", spec);
    let (programs, tile) = (3, 32 * 64);
    let x = rounded(F16, &Rng::new(3).vec(programs * 8 * tile));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, &x);
    let by = poisoned(&mut mem, "y", F16, x.len());
    let bs = poisoned(&mut mem, "sums", F32, programs * tile);
    let args = [Arg::Buffer(bx), Arg::Buffer(by), Arg::Buffer(bs), Arg::Float(0.5)];
    run(&f, &args, [programs as u32, 1, 1], &mut mem);
    let want_y: Vec<f64> = x.iter().map(|v| rounded(F16, &[v * 0.5 + 1.0])[0]).collect();
    assert_eq!(mem.read_f64(by), want_y);
    let want: Vec<f64> =
        (0..programs * tile).map(|j| (0..8).map(|i| x[(j / tile * 8 + i) * tile + j % tile]).sum()).collect();
    assert_close("tile sums", &mem.read_f64(bs), &want, 1e-6);
}
