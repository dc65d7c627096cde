//! `tessel run` under input that once crashed, hung or silently ran wrong (issue 31): each case ends in a clear
//! error naming the argument and the limit, or in a correct run; and a bounded property test over `--arg`,
//! `--grid` and `--threads` values asserts that nothing panics or aborts and that every failure says why.

mod cli_common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cli_common::{VECTOR_ADD_ARGS, tessel};

/// `tessel run examples/vector_add.py::add_kernel` in the interpreter with `extra` arguments (over 1000-element
/// buffers, n_elements = 1000, a grid of 4, unless `extra` gives them again: the last one wins only for the grid).
fn vector_add(extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["run", "examples/vector_add.py::add_kernel", "--const", "BLOCK_SIZE=256", "--interpret"];
    args.extend_from_slice(extra);
    tessel(&args)
}

/// The vector add's arguments but `x_ptr`.
const BUFFERS: &[&str] = VECTOR_ADD_ARGS.split_at(2).1;

/// A grid of 2^31 - 1 programs used to abort allocating their ids (25 GB); a grid of 65535 x 65535 grew to 24 GB.
/// The ids are computed as programs run, so the largest grids start at once (the first program's out-of-bounds
/// load ends the run here); grids beyond CUDA's limits, or below one program, are refused naming the axis.
#[test]
fn grids_run_lazily_and_are_checked_against_cuda() {
    // n_elements past the buffers: program 3 loads element 1000 of x (1000 elements).
    for grid in ["2147483647", "65535,65535", "2147483647,65535,65535"] {
        let start = Instant::now();
        let (code, _, err) = vector_add(&[
            "--grid",
            grid,
            "--arg",
            "x_ptr=rand:1000",
            "--arg",
            "y_ptr=rand:1000",
            "--arg",
            "output_ptr=zeros:1000",
            "--arg",
            "n_elements=100000",
        ]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("program (3, 0, 0): out-of-bounds access: element 1000 of buffer `x_ptr`"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(20), "--grid {grid}: {:?}", start.elapsed());
    }
    for (grid, want) in [
        ("2147483648", "--grid: 2147483648 programs along x is more than CUDA allows (2147483647)"),
        ("1,65536", "--grid: 65536 programs along y is more than CUDA allows (65535)"),
        ("1,1,99999999999999999999999", "programs along z is more than CUDA allows (65535)"),
        ("0", "--grid: 0 programs along x: each dimension of a grid must be at least 1"),
        ("4,-2", "--grid: -2 programs along y: each dimension of a grid must be at least 1"),
        ("4,x", "--grid expects N, N,M or N,M,K with positive integers, got `4,x`"),
        ("1,1,1,1", "--grid: a grid has 1 to 3 dimensions, got 4"),
    ] {
        let (code, _, err) = vector_add(&[&["--grid", grid, "--arg", "x_ptr=rand:1000"][..], BUFFERS].concat());
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(want), "--grid {grid}: {err}");
    }
}

/// `zeros:1099511627776` (4 TiB) and `rand:99999999999999` aborted allocating; sizes whose bytes overflow 64 bits
/// wrapped. Each is refused before anything is allocated, naming the argument, the size and the memory there is.
#[test]
fn buffers_larger_than_memory_are_refused_by_name() {
    for (spec, want) in [
        (
            "x_ptr=zeros:1099511627776",
            "--arg x_ptr: a buffer of 1099511627776 float32 elements: 4.0 TiB (4398046511104 bytes) is more than the",
        ),
        ("x_ptr=rand:99999999999999", "--arg x_ptr: a buffer of 99999999999999 float32 elements: 363.8 TiB"),
        (
            "x_ptr=rand:4611686018427387904",
            "--arg x_ptr: a buffer of 4611686018427387904 float32 elements is more than 2^64 bytes",
        ),
        (
            "x_ptr=zeros:4294967296x4294967296",
            "--arg x_ptr: a buffer of 4294967296x4294967296 float32 elements is more than 2^64 bytes",
        ),
        ("x_ptr=fill:1:99999999999999999999", "bad size `99999999999999999999` in `fill:1:99999999999999999999`"),
    ] {
        let (code, _, err) = vector_add(&[&["--arg", spec][..], BUFFERS].concat());
        assert_eq!(code, 2, "{spec}: {err}");
        assert!(err.contains(want), "{spec}: {err}");
        assert!(!err.contains("running"), "{spec}: refused before the run: {err}");
    }
}

/// A `.npy` file whose shape's size overflows 64 bits (4611686018427387908 x 4 is 16 modulo 2^64) loaded as 16
/// elements and was written back as `(16,)`; the error names the file.
#[test]
fn an_npy_header_that_lies_is_refused_naming_the_file() {
    let path = std::env::temp_dir().join(format!("tessel-cli-npy-{}.npy", std::process::id()));
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387908, 4), }\n";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0; 64]);
    std::fs::write(&path, bytes).unwrap();
    let x = format!("x_ptr={}", path.display());
    let (code, _, err) = vector_add(&[&["--arg", &x][..], BUFFERS].concat());
    std::fs::remove_file(&path).ok();
    assert_eq!(code, 2, "{err}");
    let want =
        format!("error: {}: the .npy shape (4611686018427387908, 4) of <f4 holds more than 2^64 bytes", path.display());
    assert!(err.contains(&want), "{err}");
}

/// `--threads 100000` spawned that many threads; it is capped at the machine's cores, with a note, and 0 is refused.
#[test]
fn threads_are_capped_at_the_machines_cores() {
    let args = [&["--arg", "x_ptr=rand:1000"][..], BUFFERS].concat();
    let (code, out, err) = vector_add(&[&args[..], &["--threads", "100000", "--show", "0"]].concat());
    assert_eq!(code, 0, "{err}");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let note = format!("note: --threads 100000 is more than the {cores} this machine runs at once: using {cores}");
    assert!(err.contains(&note), "{err}");
    assert!(out.contains("output_ptr: f32[1000]"), "{out}");
    let (code, _, err) = vector_add(&[&args[..], &["--threads", "0"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("expected a number of threads, at least 1, got `0`"), "{err}");
}

/// A loop of 64x64x64 dots is charged 262144 multiply-adds a dot: ten of them stop at the fourth under a budget
/// of 10^6 (counted by result elements, all ten once fit in 45000), and three run.
#[test]
fn max_work_counts_the_multiply_adds_of_dots() {
    let run = |n: &str| {
        tessel(&[
            "run",
            "tests/kernels/bounds.py::many_dots",
            "--const",
            "B=64",
            "--arg",
            "Out=zeros:4096",
            "--arg",
            n,
            "--max-work",
            "1000000",
            "--show",
            "2",
        ])
    };
    let (code, _, err) = run("n=10");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("this op would take this program past 1000000 units of work"), "{err}");
    assert!(err.contains("this op costs 262144"), "{err}");
    assert!(err.contains("acc = tl.dot(x, x, acc)"), "points at the dot: {err}");
    let (code, out, err) = run("n=3");
    assert_eq!(code, 0, "{err}");
    // Element (0, 0): 3 * sum_k k * k over k < 64.
    assert!(out.contains("Out: f32[4096] = [256032,"), "{out}");
}

/// A store at an int64 offset of 2^62 into 100 elements wrote elements 0 to 3 (4 * 2^62 bytes wrap to 0); now it
/// is out of bounds, at the store, and an offset inside the buffer still stores where it says.
#[test]
fn a_wrapping_address_is_out_of_bounds() {
    let run = |off: &str| {
        tessel(&[
            "run",
            "tests/kernels/bounds.py::store_at",
            "--const",
            "BLOCK=4",
            "--arg",
            "Out=fill:7:100:i32",
            "--arg",
            off,
            "--show",
            "100",
        ])
    };
    for off in ["off=4611686018427387904", "off=-4611686018427387904", "off=9223372036854775807"] {
        let (code, _, err) = run(off);
        assert_eq!(code, 2, "{off}: {err}");
        assert!(err.contains("out-of-bounds access: the pointer's address arithmetic overflowed 64 bits"), "{err}");
        assert!(err.contains("tl.store(Out + off + r, r)"), "{err}");
    }
    let (code, out, err) = run("off=96");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("7, 7, 0, 1, 2, 3]"), "{out}");
}

/// Scalars are read as written and checked against the parameter's type: an integer wider than 64 bits was read
/// as a float, and a float beyond fp32 became inf.
#[test]
fn scalars_are_range_checked_by_name() {
    let run = |sig: &str, s: &str, n: &str| {
        tessel(&[
            "run",
            "tests/kernels/bounds.py::scale",
            "--const",
            "BLOCK=16",
            "--arg",
            "X=rand:10",
            "--arg",
            "Out=zeros:10",
            "--arg",
            s,
            "--arg",
            n,
            "--signature",
            sig,
            "--show",
            "1",
        ])
    };
    for (sig, s, n, want) in [
        (
            "*fp32,*fp32,fp32,i32",
            "s=2",
            "n=99999999999999999999",
            "--arg n=99999999999999999999: the integer does not fit in 64 bits (from -2^63 to 2^64 - 1)",
        ),
        (
            "*fp32,*fp32,fp32,i64",
            "s=2",
            "n=9223372036854775808",
            "--arg n=9223372036854775808: 9223372036854775808 does not fit int64",
        ),
        (
            "*fp32,*fp32,fp32,u32",
            "s=2",
            "n=-1",
            "--arg n=-1: -1 does not fit uint32 (from 0 to 4294967295): it would wrap",
        ),
        (
            "*fp32,*fp32,fp32,i32",
            "s=2",
            "n=2.5",
            "--arg n=2.5: 2.5 is a float, and the parameter is int32: give an integer",
        ),
        ("*fp32,*fp32,fp32,i32", "s=1e39", "n=10", "--arg s=1e39: 1e39 does not fit float32: it would round to inf"),
        ("*fp32,*fp32,fp16,i32", "s=70000", "n=10", "--arg s=70000: 70000 does not fit float16: it would round to inf"),
    ] {
        let (code, _, err) = run(sig, s, n);
        assert_eq!(code, 2, "{s} {n}: {err}");
        assert!(err.contains(want), "{s} {n}: {err}");
    }
    // A number for a pointer, a buffer for a scalar (a parameter the kernel does not use, so that it compiles).
    for (sig, v, want) in [
        ("*i32,i32", "v=zeros:4", "--arg v: the parameter is a scalar (int32), not a pointer: give a number"),
        ("*i32,*fp32", "v=4", "--arg v: the parameter is a pointer to float32: give a buffer"),
    ] {
        let (code, _, err) = tessel(&[
            "run",
            "tests/kernels/bounds.py::ignores",
            "--arg",
            "Out=zeros:1:i32",
            "--arg",
            v,
            "--signature",
            sig,
        ]);
        assert_eq!(code, 2, "{v}: {err}");
        assert!(err.contains(want), "{v}: {err}");
    }
    // Inf as written stays inf; the largest u64 is a u64 (as Triton's launcher types it) and passes.
    let (code, out, err) = run("*fp32,*fp32,fp32,i32", "s=inf", "n=10");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Out: f32[10] = [-inf"), "{out}");
    let (code, _, err) = tessel(&[
        "run",
        "tests/kernels/bounds.py::ignores",
        "--arg",
        "Out=zeros:1:i32",
        "--arg",
        "v=18446744073709551615",
    ]);
    assert_eq!(code, 0, "{err}");
}

/// Ctrl-C during a long interpreter run stops it with a message and exit status 130 (it used to take effect only
/// when the run ended).
#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_interpreter_with_a_message() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessel"))
        .args(["run", "examples/vector_add.py::add_kernel", "--const", "BLOCK_SIZE=256", "--interpret"])
        .args(["--grid", "2147483647", "--threads", "1"])
        .args(VECTOR_ADD_ARGS)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("the tessel binary runs");
    // The handler is installed before this note is written.
    let mut err = BufReader::new(child.stderr.take().expect("piped"));
    let mut seen = String::new();
    while !seen.contains("in the interpreter") {
        let mut line = String::new();
        assert!(err.read_line(&mut line).expect("stderr") > 0, "ended early: {seen}");
        seen.push_str(&line);
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sends SIGINT to the child this test spawned (still running: it is waited for below).
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(sent, 0, "kill: {}", std::io::Error::last_os_error());
    let start = Instant::now();
    let status = child.wait().expect("the child ends");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).expect("stderr");
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert!(rest.contains("error: interrupted (Ctrl-C) while the interpreter ran program ("), "{rest}");
    assert!(rest.contains("of the grid 2147483647x1x1; no buffer was printed or saved"), "{rest}");
}

mod properties {
    use proptest::prelude::*;

    /// Values for one `--arg`: valid small buffers and scalars, and the sizes, dtypes, numbers and spellings that
    /// once crashed or wrapped.
    fn arg_spec() -> impl Strategy<Value = String> {
        let size = prop_oneof![
            (0u64..300).prop_map(|n| n.to_string()),
            Just("1099511627776".to_string()),
            Just("99999999999999".to_string()),
            Just("4611686018427387904".to_string()),
            Just("4294967296x4294967296".to_string()),
            Just("99999999999999999999".to_string()),
            (1u64..20, 1u64..20).prop_map(|(a, b)| format!("{a}x{b}")),
            Just("-5".to_string()),
            Just("".to_string()),
        ];
        let dtype = prop_oneof![
            Just(String::new()),
            Just(":fp16".to_string()),
            Just(":i64".to_string()),
            Just(":u8".to_string()),
            Just(":bf16".to_string()),
            Just(":nope".to_string()),
        ];
        let kind = prop_oneof![
            Just("rand"),
            Just("randn"),
            Just("zeros"),
            Just("ones"),
            Just("arange"),
            Just("fill:7"),
            Just("fill:1e999"),
            Just("fill:0xffffffffffffffffff")
        ];
        prop_oneof![
            (kind, size, dtype).prop_map(|(k, s, d)| format!("{k}:{s}{d}")),
            any::<i64>().prop_map(|i| i.to_string()),
            any::<u64>().prop_map(|i| i.to_string()),
            any::<f64>().prop_map(|x| format!("{x:?}")),
            Just("99999999999999999999".to_string()),
            Just("-99999999999999999999999999999999999999999".to_string()),
            Just("1e39".to_string()),
            Just("inf".to_string()),
            Just("nan".to_string()),
            Just("missing.npy".to_string()),
            "[ -~]{0,12}",
        ]
    }

    fn grid() -> impl Strategy<Value = String> {
        prop_oneof![
            (1u32..4).prop_map(|n| n.to_string()),
            (1u32..3, 1u32..3).prop_map(|(a, b)| format!("{a},{b}")),
            Just("0".to_string()),
            Just("2147483648".to_string()),
            Just("1,65536".to_string()),
            Just("1,1,-1".to_string()),
            Just("99999999999999999999999999999999999999999".to_string()),
            "[ -~]{0,8}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: tessel_tile::testing::campaign_cases(96), ..ProptestConfig::default() })]

        /// `tessel run` on the vector add with arbitrary argument values: it succeeds, or fails with status 2 and
        /// an error message, never a panic (run in this process, so a panic or an abort fails the test).
        #[test]
        fn run_never_panics_and_explains_every_failure(
            x in arg_spec(),
            y in arg_spec(),
            n in arg_spec(),
            grid in grid(),
            threads in prop_oneof![Just("1"), Just("2"), Just("100000"), Just("0"), Just("-1")],
            max_work in prop_oneof![Just("100000"), Just("1000000000"), Just("0")],
        ) {
            let args = [
                "tessel", "run", "examples/vector_add.py::add_kernel", "--const", "BLOCK_SIZE=256", "--interpret",
                "--max-iterations", "1000", "--grid", &grid, "--threads", threads, "--max-work", max_work,
                "--arg", &format!("x_ptr={x}"), "--arg", &format!("y_ptr={y}"), "--arg", "output_ptr=zeros:300",
                "--arg", &format!("n_elements={n}"), "--show", "0",
            ];
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let status = tessel::cli::run(args, &mut out, &mut err);
            let err = String::from_utf8_lossy(&err);
            prop_assert!(status == 0 || status == 2, "status {}: {}", status, err);
            if status != 0 {
                prop_assert!(err.to_lowercase().contains("error"), "no error message: {}", err);
            }
        }
    }
}
