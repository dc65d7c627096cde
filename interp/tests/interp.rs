//! The interpreter runs whole kernels written as textual IR and matches direct Rust computations.

use tessel_interp::memory::{AccessError, Memory};
use tessel_interp::{Arg, Fault, run};
use tessel_tile::parse::parse_func;
use tessel_tile::types::ScalarType;
use tessel_tile::verify::verify;

/// Deterministic pseudo-random numbers in [-1, 1).
fn randoms(seed: u64, n: usize) -> Vec<f64> {
    tessel_math::testing::Rng::new(seed).vec(n)
}

#[test]
fn vector_add_with_a_ragged_tail() {
    let f = parse_func(include_str!("../../tile/tests/ir/add_kernel.tir")).unwrap();
    verify(&f).unwrap();
    let n = 3000;
    let (x, y) = (randoms(1, n), randoms(2, n));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", ScalarType::F32, &x);
    let by = mem.alloc_from("y", ScalarType::F32, &y);
    // One element past `n` is poisoned and must stay untouched: the mask must hold it back.
    let bo = mem.alloc_from("out", ScalarType::F32, &vec![f64::NAN; n + 1]);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by), Arg::Buffer(bo), Arg::Int(n as i64)], [3, 1, 1], &mut mem).unwrap();
    let out = mem.read_f64(bo);
    for i in 0..n {
        let want = (x[i] as f32 + y[i] as f32) as f64;
        assert_eq!(out[i], want, "element {i}");
    }
    assert!(out[n].is_nan(), "the masked-off element was written");
}

#[test]
fn out_of_bounds_accesses_are_reported() {
    let f = parse_func(include_str!("../../tile/tests/ir/add_kernel.tir")).unwrap();
    let mut mem = Memory::new();
    let b = mem.alloc("x", ScalarType::F32, 100);
    // n larger than the buffers: the mask lets element 100 through.
    let e = run(&f, &[Arg::Buffer(b), Arg::Buffer(b), Arg::Buffer(b), Arg::Int(200)], [1, 1, 1], &mut mem).unwrap_err();
    let oob = AccessError::OutOfBounds { buffer: "x".into(), index: 100, len: 100 };
    assert_eq!(e.fault, Fault::Memory(oob), "{e}");
    assert!(
        e.fault.to_string().contains("out-of-bounds access: element 100 of buffer `x`, which has 100 elements"),
        "{e}"
    );
}

#[test]
fn loops_reductions_branches_and_prints() {
    let f = parse_func(include_str!("../../tile/tests/ir/row_max_loop.tir")).unwrap();
    verify(&f).unwrap();
    let (rows, stride) = (5usize, 300usize);
    let data = randoms(3, rows * stride);
    let mut mem = Memory::new();
    let bin = mem.alloc_from("in", ScalarType::F16, &data);
    let bout = mem.alloc_from("out", ScalarType::F32, &[f64::NAN; 2]);
    let log = run(
        &f,
        &[Arg::Buffer(bin), Arg::Buffer(bout), Arg::Int(rows as i64), Arg::Int(stride as i64)],
        [2, 1, 1],
        &mut mem,
    )
    .unwrap();
    let out = mem.read_f64(bout);
    let halves: Vec<f64> = data.iter().map(|&v| half::f16::from_f64(v).to_f64()).collect();
    for (pid, got) in out.iter().enumerate() {
        // Program `pid` visits rows pid, pid + 2, ... and keeps the largest of the first 256 columns.
        let want = (pid..rows)
            .step_by(2)
            .flat_map(|r| halves[r * stride..r * stride + 256].to_vec())
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(*got, want, "program {pid}");
    }
    assert_eq!(log.len(), 4, "{log:?}");
    // Two operands per program: the f32 maximum (as hex bits) and the while loop's count, 8.
    assert_eq!(log[1], "pid (0, 0, 0) idx () best \"row\":\n0x8");
    let bits = u32::from_str_radix(log[0].rsplit("0x").next().unwrap(), 16).unwrap();
    assert_eq!(f32::from_bits(bits) as f64, out[0]);
}

/// i64 values near ±2^63 and u64 values near 2^64 go through `add 0` exactly, and f32 NaNs (signalling ones
/// with payloads included) through a bitcast to i32 and back: buffers and the interpreter's values hold every
/// element in its own type, never rounded through f64.
#[test]
fn wide_integers_and_nan_payloads_pass_through_exactly() {
    let f = parse_func(include_str!("../../tile/tests/ir/exact_bits.tir")).unwrap();
    verify(&f).unwrap();
    let le = |v: &[u64], n: usize| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()[..n].to_vec()).collect() };
    let i64s = [i64::MAX, i64::MIN, i64::MAX - 1, i64::MIN + 1, (1 << 53) + 1, -(1 << 53) - 1, 1 << 62, -7];
    let u64s = [u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) + 1, (1 << 53) + 1, 0, 1, u64::MAX - 1024];
    let f32s =
        [0x7f80_0001u64, 0x7fa0_0000, 0xff80_0001, 0xffbf_ffff, 0x7fc0_0001, 0x0000_0001, 0x8000_0000, 0x7f80_0000];
    let mut mem = Memory::new();
    let a = mem.alloc_bytes("a", ScalarType::I64, le(&i64s.map(|v| v as u64), 8));
    let b = mem.alloc_bytes("b", ScalarType::U64, le(&u64s, 8));
    let fl = mem.alloc_bytes("f", ScalarType::F32, le(&f32s, 4));
    let outs = [ScalarType::I64, ScalarType::U64, ScalarType::F32].map(|t| mem.alloc("out", t, 8));
    let args = [a, b, fl].into_iter().chain(outs).map(Arg::Buffer).collect::<Vec<_>>();
    run(&f, &args, [1, 1, 1], &mut mem).unwrap();
    assert_eq!(mem.buffer(outs[0]).bytes, mem.buffer(a).bytes, "i64 + 0");
    assert_eq!(mem.buffer(outs[1]).bytes, mem.buffer(b).bytes, "u64 + 0");
    assert_eq!(mem.buffer(outs[2]).bytes, mem.buffer(fl).bytes, "f32 -> i32 -> f32 bitcasts");
}

/// Notes the parallel runs below gave (why they fell back to one program at a time).
static NOTES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn note(why: &str) {
    NOTES.lock().unwrap().push(why.to_string());
}

/// Runs `f` over `grid` on one thread and on four; both must leave the same bytes in every buffer. Returns the
/// buffers' bytes and the notes the parallel run gave.
fn sequential_and_parallel(
    f: &tessel_tile::Func,
    grid: u32,
    buffers: &[(ScalarType, Vec<f64>)],
) -> (Vec<Vec<u8>>, Vec<String>) {
    let (bytes, _, notes) = on_threads(f, [grid, 1, 1], buffers, &[1, 4]);
    (bytes, notes)
}

/// Runs `f` over `grid` on each number of `threads` in turn; every run must leave the same bytes in every
/// buffer and print the same lines. Returns the bytes, the prints and the notes of the last run.
fn on_threads(
    f: &tessel_tile::Func,
    grid: [u32; 3],
    buffers: &[(ScalarType, Vec<f64>)],
    threads: &[usize],
) -> (Vec<Vec<u8>>, Vec<String>, Vec<String>) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut outs = Vec::new();
    let mut logs = Vec::new();
    let mut notes = Vec::new();
    for &threads in threads {
        let mut mem = Memory::new();
        let args: Vec<Arg> =
            buffers.iter().enumerate().map(|(i, (t, v))| Arg::Buffer(mem.alloc_from(format!("b{i}"), *t, v))).collect();
        let limits = tessel_interp::Limits { threads, notes: Some(note), ..Default::default() };
        NOTES.lock().unwrap().clear();
        logs.push(tessel_interp::run_with_limits(f, &args, grid, &mut mem, limits).unwrap());
        notes = NOTES.lock().unwrap().clone();
        let bytes: Vec<Vec<u8>> =
            (0..buffers.len()).map(|i| mem.buffer(tessel_interp::memory::BufferId(i as u32)).bytes.clone()).collect();
        outs.push(bytes);
    }
    for (i, &t) in threads.iter().enumerate() {
        assert!(outs[i] == outs[0], "the run on {t} threads left other bytes than the one on {}", threads[0]);
        assert_eq!(logs[i], logs[0], "the run on {t} threads printed other lines than the one on {}", threads[0]);
    }
    (outs.remove(0), logs.remove(0), notes)
}

/// The tests that read NOTES run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Programs that cannot observe each other run in parallel (no note) with the sequential result; programs that
/// store to one element, or load what another stores, are detected and run again one at a time, with the
/// sequential result too.
#[test]
fn parallel_programs_give_the_sequential_result() {
    // The vector add with n fixed at 8000 (every argument a buffer); 200 elements past n must stay 7.
    let n = 8000;
    let mut out = vec![f64::NAN; n];
    out.extend([7.0; 200]);
    let fixed = include_str!("../../tile/tests/ir/add_kernel.tir")
        .replace(", %n_elements: i32)", ")")
        .replace("%3 = splat %n_elements", "%n_elements = constant {value = 8000} : i32\n  %3 = splat %n_elements");
    let fixed = parse_func(&fixed).unwrap();
    let bufs = [(ScalarType::F32, randoms(1, n)), (ScalarType::F32, randoms(2, n)), (ScalarType::F32, out)];
    let (bytes, notes) = sequential_and_parallel(&fixed, 8, &bufs);
    assert!(notes.is_empty(), "{notes:?}");
    assert!(bytes[2][n * 4..].chunks(4).all(|c| f32::from_le_bytes(c.try_into().unwrap()) == 7.0));

    let last_wins = "func @last_wins(%out: ptr<i32>) attributes {target = sm_90a, num_warps = 1, num_stages = 3} {
  %pid = program_id {axis = 0} : i32
  store %out, %pid
  return
}";
    let (bytes, notes) = sequential_and_parallel(&parse_func(last_wins).unwrap(), 6, &[(ScalarType::I32, vec![-1.0])]);
    assert_eq!(bytes[0], 5i32.to_le_bytes(), "program 5 stores last");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("two programs store to the same element (programs ("), "{notes:?}");
    assert!(notes[0].ends_with(", element 0 of buffer `b0`): programs ran one at a time"), "{notes:?}");

    let chain = "func @chain(%out: ptr<i32>) attributes {target = sm_90a, num_warps = 1, num_stages = 3} {
  %pid = program_id {axis = 0} : i32
  %one = constant {value = 1} : i32
  %a = addptr %out, %pid : ptr<i32>
  %x = load %a : i32
  %y = add %x, %one : i32
  %next = add %pid, %one : i32
  %b = addptr %out, %next : ptr<i32>
  store %b, %y
  return
}";
    let (bytes, notes) = sequential_and_parallel(&parse_func(chain).unwrap(), 5, &[(ScalarType::I32, vec![0.0; 6])]);
    let values: Vec<i32> = bytes[0].chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(values, [0, 1, 2, 3, 4, 5], "each program reads what the one before stored");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("a program loads an element another program stores (program ("), "{notes:?}");
}

/// A 2-D grid whose programs all load one shared row and each store their own row, and print: every thread
/// count gives the sequential bytes and the prints in grid order, without a note.
#[test]
fn parallel_runs_are_deterministic_across_thread_counts() {
    let rows = "func @rows(%w: ptr<f32>, %out: ptr<f32>) attributes {target = sm_90a, num_warps = 1, num_stages = 3} {
  %x = program_id {axis = 0} : i32
  %y = program_id {axis = 1} : i32
  %gx = num_programs {axis = 0} : i32
  %row = mul %y, %gx : i32
  %r = add %row, %x : i32
  %c16 = constant {value = 16} : i32
  %off = mul %r, %c16 : i32
  %i = arange {start = 0, end = 16} : tensor<16xi32>
  %wp0 = splat %w : tensor<16xptr<f32>>
  %wp = addptr %wp0, %i : tensor<16xptr<f32>>
  %wv = load %wp : tensor<16xf32>
  %rf = cast %r : f32
  %rs = splat %rf : tensor<16xf32>
  %v = mul %wv, %rs : tensor<16xf32>
  %offs0 = splat %off : tensor<16xi32>
  %offs = add %offs0, %i : tensor<16xi32>
  %op0 = splat %out : tensor<16xptr<f32>>
  %op = addptr %op0, %offs : tensor<16xptr<f32>>
  store %op, %v
  print {prefix = \" row \"} %r
  return
}";
    let f = parse_func(rows).unwrap();
    verify(&f).unwrap();
    let (gx, gy) = (7u32, 9u32);
    let n = (gx * gy * 16) as usize;
    let bufs = [(ScalarType::F32, randoms(5, 16)), (ScalarType::F32, vec![f64::NAN; n])];
    let (bytes, log, notes) = on_threads(&f, [gx, gy, 1], &bufs, &[1, 2, 3, 8, 16]);
    assert!(notes.is_empty(), "{notes:?}");
    let out: Vec<f32> = bytes[1].chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    for (k, v) in out.iter().enumerate() {
        assert_eq!(*v, bufs[0].1[k % 16] as f32 * (k / 16) as f32, "element {k}");
    }
    let want: Vec<String> =
        (0..gy).flat_map(|y| (0..gx).map(move |x| format!("pid ({x}, {y}, 0) idx ()  row {}", y * gx + x))).collect();
    assert_eq!(log, want, "prints in grid order");
}

/// An atomic that no program runs leaves the programs in parallel; one that runs sends them back to one at a
/// time, with a note naming the program, and the sequential result (every increment counted).
#[test]
fn atomics_send_programs_back_to_one_at_a_time_when_they_run() {
    let kernel = |which: i64| {
        format!(
            "func @count(%out: ptr<i32>) attributes {{target = sm_90a, num_warps = 1, num_stages = 3}} {{
  %pid = program_id {{axis = 0}} : i32
  %k = constant {{value = {which}}} : i32
  %hit = cmp {{pred = ge}} %pid, %k : i1
  %one = constant {{value = 1}} : i32
  %z = constant {{value = 0}} : i32
  %got = if %hit : i32 {{
    %old = atomic {{op = add}} %out, %one : i32
    yield %old
  }} else {{
    yield %z
  }}
  return
}}"
        )
    };
    let f = parse_func(&kernel(100)).unwrap();
    verify(&f).unwrap();
    let (bytes, _, notes) = on_threads(&f, [12, 1, 1], &[(ScalarType::I32, vec![0.0])], &[1, 4]);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(bytes[0], 0i32.to_le_bytes());

    let f = parse_func(&kernel(9)).unwrap();
    let (bytes, _, notes) = on_threads(&f, [12, 1, 1], &[(ScalarType::I32, vec![0.0])], &[1, 4]);
    assert_eq!(bytes[0], 3i32.to_le_bytes(), "programs 9, 10 and 11 add one each");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("program ("), "{notes:?}");
    assert!(notes[0].contains(") runs an atomic"), "{notes:?}");
    assert!(notes[0].ends_with(": programs ran one at a time"), "{notes:?}");
}

/// A program that fails in a parallel run is reported exactly as the sequential run reports it: the first
/// failing program in grid order, named, at the op.
#[test]
fn a_failing_program_is_named_in_parallel_runs_too() {
    let f = parse_func(include_str!("../../tile/tests/ir/add_kernel.tir")).unwrap();
    let mut errors = Vec::new();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for threads in [1, 4] {
        let mut mem = Memory::new();
        let b = mem.alloc("x", ScalarType::F32, 3000);
        let args = [Arg::Buffer(b), Arg::Buffer(b), Arg::Buffer(b), Arg::Int(3100)];
        NOTES.lock().unwrap().clear();
        let limits = tessel_interp::Limits { threads, notes: Some(note), ..Default::default() };
        errors.push(tessel_interp::run_with_limits(&f, &args, [4, 1, 1], &mut mem, limits).unwrap_err());
        if threads > 1 {
            assert_eq!(*NOTES.lock().unwrap(), ["a program failed: programs ran again one at a time"]);
        }
    }
    assert_eq!(errors[0], errors[1]);
    assert_eq!(errors[0].program, [2, 0, 0], "{}", errors[0]);
    assert!(
        errors[0].to_string().starts_with("program (2, 0, 0): out-of-bounds access: element 3000"),
        "{}",
        errors[0]
    );
    assert!(errors[0].op.is_some());
}

/// A dot with an f32 accumulator rounds once per step in f32, as the GPU's `fma.rn.f32`: with
/// x = 1 + 2^-12 and y = 2^-24·(1 − 2^-12 + 2^-24), x·y + 1 = 1 + 2^-24 + 2^-60 rounds up to 1 + 2^-23 (an f64
/// fma would stop at the tie 1 + 2^-24 and then round to 1).
#[test]
fn f32_dot_accumulates_with_one_rounding() {
    let f = parse_func(include_str!("../../tile/tests/ir/dot_f32_acc.tir")).unwrap();
    verify(&f).unwrap();
    let (mut a, mut b) = (vec![0.0; 256], vec![0.0; 256]);
    a[0] = 1.0 + 2f64.powi(-12);
    b[0] = 2f64.powi(-24) * (1.0 - 2f64.powi(-12) + 2f64.powi(-24));
    let mut mem = Memory::new();
    let (ba, bb) = (mem.alloc_from("a", ScalarType::F32, &a), mem.alloc_from("b", ScalarType::F32, &b));
    let bo = mem.alloc("o", ScalarType::F32, 256);
    run(&f, &[Arg::Buffer(ba), Arg::Buffer(bb), Arg::Buffer(bo)], [1, 1, 1], &mut mem).unwrap();
    let out = mem.read_f64(bo);
    assert_eq!(out[0], 1.0 + 2f64.powi(-23));
    assert_eq!(out[1], 1.0);
}

/// A tensor descriptor needs what TMA needs, as Triton's interpreter checks: rows whose stride is a multiple of
/// 16 bytes (and a 16-byte aligned base). An empty tensor is not checked: nothing of it can be read, and
/// frameworks give its rows any stride (torch: 1).
#[test]
fn descriptors_need_16_byte_strides_unless_empty() {
    let src = "func @k(%x: ptr<f16>, %m: i32, %n: i32, %s: i64, %one: i64) {
  %d = make_tensor_desc {rank = 2} %x, %m, %n, %s, %one : tensordesc<16x16xf16>
  %z = constant {value = 0} : i32
  %t = desc_load %d, %z, %z : tensor<16x16xf16>
  return
}";
    let f = parse_func(src).unwrap();
    verify(&f).unwrap();
    let go = |rows: i64, cols: i64, stride: i64| {
        let mut mem = Memory::new();
        let x = mem.alloc("x", ScalarType::F16, (rows * stride.max(1)).max(1) as usize);
        let args = [Arg::Buffer(x), Arg::Int(rows), Arg::Int(cols), Arg::Int(stride), Arg::Int(1)];
        run(&f, &args, [1, 1, 1], &mut mem).map_err(|e| e.to_string())
    };
    go(16, 24, 24).unwrap();
    let e = go(16, 20, 20).unwrap_err();
    assert!(e.contains("multiples of 16 bytes") && e.contains("20 elements of f16"), "{e}");
    go(16, 0, 1).unwrap();
}
