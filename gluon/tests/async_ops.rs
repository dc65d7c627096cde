//! Asynchronous work in gluon kernels, run in the interpreter (which enforces the hardware's rules): a
//! double-buffered `cp.async` ring with commit/wait groups, and mbarrier arrive/wait round trips (a wait no
//! arrival can satisfy is reported as a deadlock, not a hang).

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_tile::ScalarType::*;

/// Copies `T` tiles of `BM x N` halves through a two-buffer ring: the copy of tile `i + 1` is in flight while
/// tile `i` is read (the last prefetch is masked off entirely).
const RING: &str = r#"
@gluon.jit
def ring_copy(X, Y, T, BM: gl.constexpr, N: gl.constexpr, WAIT: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    bufs = gl.allocate_shared_memory(gl.float16, [2, BM, N], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))
    r = gl.arange(0, BM, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    offs = r[:, None] * N + c[None, :]
    async_copy.async_copy_global_to_shared(bufs.index(0), X + offs)
    async_copy.commit_group()
    for i in range(T):
        nxt = (i + 1) * BM * N
        async_copy.async_copy_global_to_shared(bufs.index((i + 1) % 2), X + nxt + offs, mask=offs + nxt < T * BM * N)
        async_copy.commit_group()
        async_copy.wait_group(num_outstanding=WAIT)
        x = bufs.index(i % 2).load(L)
        gl.store(Y + i * BM * N + offs, x)
"#;

fn ring(wait: i64) -> (tessel_tile::Func, Memory, Vec<Arg>, Vec<f64>, tessel_interp::memory::BufferId) {
    let src = format!("{HEADER}{RING}");
    let f = elab(&src, "ring_copy", vec![ptr(F16), ptr(F16), int(), cint(16), cint(64), cint(wait)]);
    let t = 5;
    let n = t * 16 * 64;
    let mut rng = Rng::new(11);
    let x = rounded(F16, &rng.vec(n));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, &x);
    let by = poisoned(&mut mem, "y", F16, n);
    (f, mem, vec![Arg::Buffer(bx), Arg::Buffer(by), Arg::Int(t as i64)], x, by)
}

#[test]
fn a_double_buffered_cp_async_ring_copies_every_tile() {
    let (f, mut mem, args, x, by) = ring(1);
    let text = f.to_string();
    assert!(text.contains("memdesc<2x16x64xf16, SwizzledSharedLayout(8,1,8,[1,0])>"), "{text}");
    for op in ["async_copy", "async_commit_group", "async_wait {pending = 1}", "memdesc_index"] {
        assert!(text.contains(op), "{op} missing:\n{text}");
    }
    run(&f, &args, [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(by), x);
}

#[test]
fn reading_the_buffer_a_copy_still_fills_is_refused() {
    // wait_group(2) leaves the copy of the tile about to be read in flight.
    let (f, mut mem, args, _, _) = ring(2);
    let err = run_error(&f, &args, &mut mem);
    assert!(err.contains("is read while an async_copy or a TMA load into it is in flight"), "{err}");
}

const BARRIERS: &str = r#"
@gluon.jit
def round_trip(X, Y, N: gl.constexpr, BAD_PHASE: gl.constexpr, EXPECT: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    ring = mbarrier.allocate_mbarrier(batch=2)
    mbarrier.init(bar, count=1)
    for j in gl.static_range(2):
        mbarrier.init(ring.index(j), 2)
    offs = gl.arange(0, N, layout=L)
    phase = 0
    for i in range(3):
        mbarrier.arrive(bar)
        mbarrier.wait(bar, phase ^ BAD_PHASE)
        mbarrier.arrive(ring.index(i % 2), count=2, pred=i < 2)
        phase ^= 1
    mbarrier.expect(ring.index(0), EXPECT)
    mbarrier.arrive(ring.index(0))
    mbarrier.wait(ring.index(0), 1, deps=[bar])
    mbarrier.wait(ring.index(1), 0)
    mbarrier.invalidate(bar)
    gl.store(Y + offs, gl.load(X + offs))
"#;

fn barriers(bad_phase: i64, expect: i64) -> Result<(), String> {
    let src = format!("{HEADER}{BARRIERS}");
    let f = elab(&src, "round_trip", vec![ptr(F32), ptr(F32), cint(128), cint(bad_phase), cint(expect)]);
    let text = f.to_string();
    for op in ["mbarrier_init {count = 1}", "mbarrier_init {count = 2}", "mbarrier_arrive", "mbarrier_wait"] {
        assert!(text.contains(op), "{op} missing:\n{text}");
    }
    assert!(text.contains("mbarrier_expect {bytes = ") && text.contains("mbarrier_invalidate"), "{text}");
    let mut rng = Rng::new(2);
    let x = rounded(F32, &rng.vec(128));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, 128);
    tessel_interp::run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem).map_err(|e| e.to_string())?;
    assert_eq!(mem.read_f64(by), x);
    Ok(())
}

#[test]
fn mbarrier_arrive_and_wait_round_trip_through_phases() {
    barriers(0, 0).unwrap();
}

#[test]
fn waiting_on_the_wrong_phase_is_a_deadlock() {
    let err = barriers(1, 0).unwrap_err();
    assert!(err.contains("deadlock: waiting for phase parity 1"), "{err}");
}

#[test]
fn expected_bytes_that_never_arrive_are_a_deadlock() {
    let err = barriers(0, 64).unwrap_err();
    assert!(err.contains("deadlock") && err.contains("64 transaction byte(s)"), "{err}");
}

/// `examples/gluon_copy_mbarrier.py`: a cp.async ring waited for on mbarriers (`async_copy.mbarrier_arrive`),
/// with and without `increment_count`; `WAIT = 0` reads a buffer whose copies are still in flight.
fn copy_ring(increment: bool, wait: bool) -> Result<(), String> {
    let src = example_source("gluon_copy_mbarrier.py");
    let spec = vec![ptr(F16), ptr(F16), int(), cint(16), cint(64), cbool(increment), cbool(wait)];
    let f = elab(&src, "copy_ring", spec);
    let text = f.to_string();
    let arrivals = if increment { 0 } else { 128 };
    assert!(text.contains(&format!("async_copy_mbarrier_arrive {{arrivals = {arrivals}}}")), "{text}");
    let t = 5;
    let n = t * 16 * 64;
    let x = rounded(F16, &Rng::new(12).vec(n));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, &x);
    let by = poisoned(&mut mem, "y", F16, n);
    let args = [Arg::Buffer(bx), Arg::Buffer(by), Arg::Int(t as i64)];
    tessel_interp::run(&f, &args, [1, 1, 1], &mut mem).map_err(|e| e.to_string())?;
    assert_eq!(mem.read_f64(by), x.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
    Ok(())
}

#[test]
fn copies_handed_to_an_mbarrier_land_with_its_phase() {
    copy_ring(true, true).unwrap();
    copy_ring(false, true).unwrap();
}

#[test]
fn reading_copies_handed_to_an_mbarrier_before_waiting_on_it_is_refused() {
    let err = copy_ring(true, false).unwrap_err();
    assert!(err.contains("is read while an async_copy or a TMA load into it is in flight"), "{err}");
}
