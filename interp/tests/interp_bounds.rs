//! The interpreter's resource bounds (issue 31): grids as large as CUDA allows cost nothing before they run, an
//! address that overflows 64 bits is out of bounds instead of wrapping into a buffer, the work budget counts a
//! dot's multiply-adds, and a caller's stop flag ends a long run at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tessel_interp::memory::Memory;
use tessel_interp::{Arg, Fault, GridError, Limits, run, run_with_limits};
use tessel_tile::parse::parse_func;
use tessel_tile::types::ScalarType;
use tessel_tile::verify::verify;

fn kernel(text: &str) -> tessel_tile::Func {
    let f = parse_func(text).unwrap();
    verify(&f).unwrap();
    f
}

/// Program `pid` stores `pid` into `out[pid]` after asserting `pid < 3`: programs 3 and up fail.
const FAILS_AT_3: &str = r#"func @k(%out: ptr<i32>) {
  %pid = program_id {axis = 0} : i32
  %three = constant {value = 3} : i32
  %ok = cmp {pred = lt} %pid, %three : i1
  assert {message = "pid < 3"} %ok
  %p = addptr %out, %pid : ptr<i32>
  %ps = splat %p : tensor<1xptr<i32>>
  %v = splat %pid : tensor<1xi32>
  store %ps, %v
  return
}"#;

/// The largest grids CUDA launches run lazily: listing their program ids first took 12 bytes a program (25 GB for
/// 2^31 programs, an abort), in one thread and in parallel. The failure at program 3 is reported at once.
#[test]
fn huge_grids_allocate_nothing_up_front() {
    let f = kernel(FAILS_AT_3);
    for (grid, threads) in [([i32::MAX as u32, 65535, 65535], 1), ([i32::MAX as u32, 1, 1], 2), ([1 << 30, 1, 1], 2)] {
        let start = Instant::now();
        let mut mem = Memory::new();
        let out = mem.alloc("out", ScalarType::I32, 4);
        let limits = Limits { threads, ..Default::default() };
        let e = run_with_limits(&f, &[Arg::Buffer(out)], grid, &mut mem, limits).unwrap_err();
        assert_eq!(e.program, [3, 0, 0], "{e}");
        assert!(e.fault.to_string().contains("device_assert failed"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(20), "{grid:?} on {threads} threads: {:?}", start.elapsed());
    }
}

/// A grid CUDA cannot launch is refused by the interpreter too, naming the axis and the limit.
#[test]
fn grids_beyond_cuda_limits_are_refused() {
    let f = kernel(FAILS_AT_3);
    let mut mem = Memory::new();
    let out = mem.alloc("out", ScalarType::I32, 4);
    let e = run(&f, &[Arg::Buffer(out)], [1, 65536, 1], &mut mem).unwrap_err();
    assert_eq!(e.fault, Fault::Grid { grid: [1, 65536, 1], why: GridError::TooMany { axis: 1, n: 65536 } });
    assert_eq!(e.fault.to_string(), "grid [1, 65536, 1]: 65536 programs along y is more than CUDA allows (65535)");
    let e = run(&f, &[Arg::Buffer(out)], [1 << 31, 1, 1], &mut mem).unwrap_err();
    assert!(e.fault.to_string().contains("2147483648 programs along x is more than CUDA allows (2147483647)"), "{e}");
}

/// Stores 0, 1, 2, 3 at `out + off + [0, 4)` (`off` an i64 element offset).
const STORE_AT: &str = r#"func @k(%out: ptr<i32>, %off: i64) {
  %r = arange {start = 0, end = 4} : tensor<4xi32>
  %p0 = addptr %out, %off : ptr<i32>
  %ps = splat %p0 : tensor<4xptr<i32>>
  %p = addptr %ps, %r : tensor<4xptr<i32>>
  store %p, %r
  return
}"#;

/// An i64 offset of 2^62 elements of 4 bytes is 2^64 bytes: the byte address used to wrap around onto element
/// 0 and the store wrote elements 0 to 3. It is reported as out of bounds, and memory is left alone.
#[test]
fn address_arithmetic_that_overflows_is_out_of_bounds() {
    let f = kernel(STORE_AT);
    for off in [1i64 << 62, -(1 << 62), i64::MAX, i64::MIN, (1 << 62) + 5] {
        let mut mem = Memory::new();
        let out = mem.alloc_from("out", ScalarType::I32, &[7.0; 100]);
        let e = run(&f, &[Arg::Buffer(out), Arg::Int(off)], [1, 1, 1], &mut mem).unwrap_err();
        assert!(
            e.fault.to_string().contains("out-of-bounds access: the pointer's address arithmetic overflowed 64 bits"),
            "{e}"
        );
        assert_eq!(mem.read_f64(out), vec![7.0; 100], "offset {off}: memory changed");
    }
    // Offsets inside the buffer, and past its end by a little, behave as before.
    let mut mem = Memory::new();
    let out = mem.alloc_from("out", ScalarType::I32, &[7.0; 100]);
    run(&f, &[Arg::Buffer(out), Arg::Int(96)], [1, 1, 1], &mut mem).unwrap();
    assert_eq!(mem.read_f64(out)[95..], [7.0, 0.0, 1.0, 2.0, 3.0]);
    let e = run(&f, &[Arg::Buffer(out), Arg::Int(97)], [1, 1, 1], &mut mem).unwrap_err();
    assert!(e.fault.to_string().contains("element 100 of buffer `out`, which has 100 elements"), "{e}");
}

/// `n` dots of 64x64 @ 64x64 (262144 multiply-adds each, 4096 result elements) accumulated in a loop.
const DOTS: &str = r#"func @k(%out: ptr<f32>, %n: i32) {
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %a = constant {value = 1.0} : tensor<64x64xf32>
  %acc0 = constant {value = 0.0} : tensor<64x64xf32>
  %acc = for %zero, %n, %one, %acc0 : tensor<64x64xf32> {
  ^(%i: i32, %c: tensor<64x64xf32>):
    %d = dot {precision = ieee} %a, %a, %c : tensor<64x64xf32>
    yield %d
  }
  %s = reduce {axis = 1} %acc : tensor<64xf32> {
  ^(%x: f32, %y: f32):
    %z = add %x, %y : f32
    yield %z
  }
  %r = arange {start = 0, end = 64} : tensor<64xi32>
  %p0 = splat %out : tensor<64xptr<f32>>
  %p = addptr %p0, %r : tensor<64xptr<f32>>
  store %p, %s
  return
}"#;

/// The work budget charges a dot its M·N·K multiply-adds before it runs: counted by result elements, 2000 dots of
/// 256³ once ran for minutes inside a budget of 10^9 "elements".
#[test]
fn the_work_budget_counts_a_dots_multiply_adds() {
    let f = kernel(DOTS);
    let go = |n: i64, max_work: u64| {
        let mut mem = Memory::new();
        let out = mem.alloc("out", ScalarType::F32, 64);
        let limits = Limits { max_work, ..Default::default() };
        run_with_limits(&f, &[Arg::Buffer(out), Arg::Int(n)], [1, 1, 1], &mut mem, limits).map(|_| mem.read_f64(out))
    };
    // 3 dots (786432) and the rest (constants, the reduction's 4096 inputs and its combines, the store) fit in
    // 10^6; a fourth dot does not, whatever comes after it: it is refused before it runs.
    assert_eq!(go(3, 1_000_000).unwrap(), vec![3.0 * 64.0 * 64.0; 64]);
    let e = go(1000, 1_000_000).unwrap_err();
    assert!(e.fault.to_string().contains("this op would take this program past 1000000 units of work"), "{e}");
    assert!(e.fault.to_string().contains("this op costs 262144"), "{e}");
    assert!(e.fault.to_string().contains("--max-work"), "{e}");
}

/// Loops forever in steps that change memory (no spin to detect), until the iteration budget.
const FOREVER: &str = r#"func @k(%out: ptr<i64>, %n: i64) {
  %zero = constant {value = 0} : i64
  %one = constant {value = 1} : i64
  %pid = program_id {axis = 0} : i32
  %p = addptr %out, %pid : ptr<i64>
  %ps = splat %p : tensor<1xptr<i64>>
  %r = for %zero, %n, %one, %zero : i64 {
  ^(%i: i64, %c: i64):
    %v = splat %i : tensor<1xi64>
    store %ps, %v
    yield %i
  }
  return
}"#;

/// A caller's stop flag ends a run within moments, sequential or parallel, with an error that says so (and is
/// not mistaken for a failing program: the parallel run does not fall back to running the programs again).
#[test]
fn a_stop_flag_interrupts_a_long_run() {
    let f = kernel(FOREVER);
    for threads in [1, 2] {
        let stop = Arc::new(AtomicBool::new(false));
        let setter = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                stop.store(true, Ordering::Relaxed);
            })
        };
        let start = Instant::now();
        let mut mem = Memory::new();
        let out = mem.alloc("out", ScalarType::I64, 4);
        let limits = Limits { threads, stop: Some(stop), max_iterations: u64::MAX, ..Default::default() };
        let e = run_with_limits(&f, &[Arg::Buffer(out), Arg::Int(i64::MAX)], [4, 1, 1], &mut mem, limits).unwrap_err();
        setter.join().unwrap();
        assert_eq!(e.fault, Fault::Interrupted, "{e}");
        assert_eq!(e.fault.to_string(), "interrupted");
        assert!(start.elapsed() < Duration::from_secs(10), "{threads} threads: {:?}", start.elapsed());
    }
    // Set before the run: nothing runs.
    let mut mem = Memory::new();
    let out = mem.alloc("out", ScalarType::I64, 4);
    let limits = Limits { stop: Some(Arc::new(AtomicBool::new(true))), ..Default::default() };
    let e = run_with_limits(&f, &[Arg::Buffer(out), Arg::Int(5)], [4, 1, 1], &mut mem, limits).unwrap_err();
    assert!(e.interrupted() && e.program == [0, 0, 0], "{e}");
    assert_eq!(mem.read_f64(out), vec![0.0; 4]);
}
