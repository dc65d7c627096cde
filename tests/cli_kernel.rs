//! `tessel check`, `compile` and `run` on the example kernels, through the built binary.

mod cli_common;

use cli_common::{VECTOR_ADD_ARGS, tessel};

#[test]
fn check_lists_kernels_and_parameters() {
    let (code, out, err) = tessel(&["check", "examples/vector_add.py"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: constexpr)"), "{out}");
    // Launchable kernels and the jit helpers they call are told apart.
    let (code, out, err) = tessel(&["check", "examples/flash_attention.py"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("examples/flash_attention.py: 2 kernels, 2 helpers\n"), "{out}");
    assert!(out.contains("  Triton helper _attn_fwd_inner("), "{out}");
    assert!(out.contains("offs_m, offs_n)  (called by _attn_fwd)\n"), "{out}");
    assert!(out.contains("  Triton kernel _attn_fwd(Q, K, V,"), "{out}");
    // A parameter's default is shown.
    assert!(out.contains("N_CTX, WARP_SPECIALIZE: constexpr = False)  (called by _attn_fwd_tma)\n"), "{out}");
}

#[test]
fn compile_emits_tile_ir_that_parses_back() {
    let (code, out, err) = tessel(&[
        "compile",
        "examples/vector_add.py::add_kernel",
        "--signature",
        "*fp32,*fp32,*fp32,i32",
        "--const",
        "BLOCK_SIZE=1024",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("arange {start = 0, end = 1024} : tensor<1024xi32>"), "{out}");
    let f = tessel_tile::parse::parse_func(&out).expect("the printed IR parses");
    assert_eq!(tessel_tile::print::print_func(&f), out);
    let (code, out, _) = tessel(&["compile", "examples/vector_add.py::add_kernel", "--emit", "ast"]);
    assert_eq!(code, 0);
    assert!(out.contains("FunctionDef add_kernel"), "{out}");
}

/// `--no-fp-fusion` (Triton's `enable_fp_fusion=False`) reaches the tile IR's attributes and keeps `x * y + w`
/// a multiply and an add in the PTX; without it the two contract to one `fma`.
#[test]
fn no_fp_fusion_keeps_multiply_and_add_apart() {
    let compile = |emit: &str, extra: &[&str]| {
        let base = ["compile", "tests/kernels/mul_add.py::mul_add", "--signature", "*fp32,*fp32,*fp32,*fp32"];
        let (code, out, err) = tessel(&[&base[..], &["--const", "BLOCK=256", "--emit", emit], extra].concat());
        assert_eq!(code, 0, "{err}");
        out
    };
    let fused = compile("ptx", &[]);
    assert!(fused.contains("fma.rn.f32"), "{fused}");
    let apart = compile("ptx", &["--no-fp-fusion"]);
    assert!(!apart.contains("fma") && apart.contains("mul.rn.f32") && apart.contains("add.rn.f32"), "{apart}");
    assert!(!compile("tile", &[]).contains("enable_fp_fusion"));
    let tile = compile("tile", &["--no-fp-fusion"]);
    assert!(tile.contains("num_stages = 3, enable_fp_fusion = false}"), "{tile}");
    let (_, help, _) = tessel(&["compile", "--help"]);
    assert!(help.contains("--no-fp-fusion"), "{help}");
}

#[test]
fn run_computes_and_saves_buffers() {
    let dir = std::env::temp_dir().join(format!("tessel-cli-run-{}", std::process::id()));
    let (code, out, err) = tessel(&[
        "run",
        "examples/vector_add.py::add_kernel",
        "--const",
        "BLOCK_SIZE=256",
        "--grid",
        "4",
        "--arg",
        "x_ptr=arange:1000",
        "--arg",
        "y_ptr=fill:0.5:1000",
        "--arg",
        "output_ptr=fill:-1:1001",
        "--arg",
        "n_elements=1000",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("interpreter"), "the run says where it ran: {err}");
    assert!(out.contains("output_ptr: f32[1001] = [0.5, 1.5, 2.5, 3.5"), "{out}");
    let saved = tessel::npy::read(&std::fs::read(dir.join("output_ptr.npy")).unwrap()).unwrap();
    let want: Vec<f64> = (0..1000).map(|i| i as f64 + 0.5).chain([-1.0]).collect();
    assert_eq!(saved.to_f64(), want, "every element computed, the one past n untouched");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn mistakes_are_reported_with_their_source() {
    let (code, _, err) =
        tessel(&["run", "examples/vector_add.py::add_kernel", "--grid", "1", "--arg", "x_ptr=rand:10"]);
    assert_eq!(code, 2);
    assert!(err.contains("no value for"), "{err}");
    let (code, _, err) = tessel(&["compile", "examples/vector_add.py::nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("has no kernel `nope`; its kernels: add_kernel"), "{err}");
    let (code, _, err) = tessel(&[
        "compile",
        "examples/vector_add.py::add_kernel",
        "--signature",
        "*fp32,*fp32,*fp32,i32",
        "--const",
        "BLOCK_SIZE=1000",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("power of two") && err.contains("vector_add.py"), "a diagnostic against the source: {err}");
}

#[test]
fn run_passes_host_tensor_descriptors() {
    let dir = std::env::temp_dir().join(format!("tessel-cli-desc-{}", std::process::id()));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "examples/descriptor_copy.py::transpose_scale_kernel",
            "--signature",
            "tensordesc<fp16[16, 32]>, tensordesc<fp16[32, 16]>, tensordesc<fp32[16]>, fp32",
            "--grid",
            "3",
            "--arg",
            "x=rand:40x104",
            "--arg",
            "y=fill:-7:104x40",
            "--arg",
            "row_sum=fill:-7:41",
            "--arg",
            "y_desc=desc:y:block=32x16",
            "--arg",
            "sum_desc=desc:row_sum:40:block=16",
            "--arg",
            "scale=0.5",
            "--out-dir",
            dir.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        tessel(&args)
    };
    // 40 x 104 is ragged against 16 x 32 blocks: the last row block and column block hang over the edge.
    let (code, out, err) = run(&["--arg", "x_desc=desc:x:block=16x32"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("x: f16[4160]"), "x takes the declared descriptor's dtype: {out}");
    let read =
        |name: &str| tessel::npy::read(&std::fs::read(dir.join(format!("{name}.npy"))).unwrap()).unwrap().to_f64();
    let (x, y, sums) = (read("x"), read("y"), read("row_sum"));
    let (m, n) = (40, 104);
    for r in 0..m {
        for c in 0..n {
            let want = tessel::tile::eval::value::round_float(x[r * n + c] * 0.5, tessel::tile::ScalarType::F16);
            assert_eq!(y[c * m + r], want, "y[{c}][{r}]");
        }
        let want: f64 = x[r * n..(r + 1) * n].iter().sum();
        assert!((sums[r] - want).abs() <= 1e-5 * want.abs().max(1.0), "row_sum[{r}] = {} vs {want}", sums[r]);
    }
    assert_eq!(sums[m], -7.0, "the element past the descriptor's shape is not written");
    // Without --signature, each descriptor's dtype is its buffer's.
    let (code, out2, err) = tessel(&[
        "run",
        "examples/descriptor_copy.py::transpose_scale_kernel",
        "--grid",
        "3",
        "--arg",
        "x=rand:40x104:fp16",
        "--arg",
        "y=fill:-7:104x40:fp16",
        "--arg",
        "row_sum=fill:-7:41",
        "--arg",
        "y_desc=desc:y:block=32x16",
        "--arg",
        "sum_desc=desc:row_sum:40:block=16",
        "--arg",
        "scale=0.5",
        "--arg",
        "x_desc=desc:x:block=16x32",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out2, out, "the same run as with the signature");
    // Triton's TensorDescriptor rules: leading strides are 16-byte multiples (a row of 100 halves is not).
    let (code, _, err) = run(&["--arg", "x_desc=desc:x:40x100:block=16x32"]);
    assert_eq!(code, 2);
    assert!(err.contains("descriptor `x_desc` over `x`") && err.contains("16-byte aligned"), "{err}");
    let (code, _, err) = run(&["--arg", "x_desc=desc:x:block=32x32"]);
    assert_eq!(code, 2);
    assert!(err.contains("tensordesc<fp16[32, 32]>") && err.contains("tensordesc<fp16[16, 32]>"), "{err}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn compile_emits_layout_ir_with_coalesced_vectors() {
    let (code, out, err) = tessel(&[
        "compile",
        "examples/fused_softmax.py::softmax_kernel",
        "--signature",
        "*fp16,*fp16,i32:16,i32:16,i32,i32",
        "--const",
        "BLOCK_SIZE=1024",
        "--const",
        "num_stages=3",
        "--emit",
        "layout",
    ]);
    assert_eq!(code, 0, "{err}");
    // 16-byte accesses: 8 fp16 per thread once the row strides are known multiples of 16.
    assert!(out.contains("load %input_ptrs, %mask, %1 : tensor<1024xf16, BlockedLayout([8],[32],[4],[0])>"), "{out}");
    let f = tessel_tile::parse::parse_func(&out).expect("layout IR parses back");
    tessel_tile::verify::verify_layouts(&f).expect("every tensor has a consistent layout");
}

#[test]
fn compile_timings_cover_every_stage_to_ptx() {
    let (code, out, err) = tessel(&[
        "compile",
        "examples/vector_add.py::add_kernel",
        "--signature",
        "*fp32,*fp32,*fp32,i32",
        "--const",
        "BLOCK_SIZE=1024",
        "--emit",
        "ptx",
        "--timings",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(".entry add_kernel(") && !out.contains("timings"), "the PTX alone goes to stdout");
    let stages: Vec<&str> = err.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(stages, ["read", "elaborate", "canonicalize", "layout", "schedule", "TMA", "code", "total"], "{err}");
    assert!(err.lines().all(|l| !l.starts_with("  ") || l.contains(" ms")), "{err}");
}

#[test]
fn bench_checks_its_formulas_and_needs_a_gpu() {
    let base = [
        &["bench", "examples/vector_add.py::add_kernel", "--const", "BLOCK_SIZE=256", "--grid", "4"][..],
        &VECTOR_ADD_ARGS,
    ]
    .concat();
    // A formula naming no argument fails before anything runs, pointing into the formula.
    let (code, _, err) = tessel(&[&base[..], &["--bytes", "12 * n"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`n` is not an argument of the kernel; known: n_elements, x_ptr"), "{err}");
    assert!(err.contains("--bytes:1:6"), "{err}");
    if tessel_runtime::driver_present() {
        return;
    }
    let (code, _, err) = tessel(&[&base[..], &["--bytes", "12 * n_elements"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("tessel bench needs the kernel on a GPU: no GPU"), "{err}");
}

/// `fill` writes exact values of every dtype (u64 near 2^64, i64 near -2^63, a signalling NaN's bits), the
/// interpreter passes them through unchanged and `--out-dir` saves the same bytes.
#[test]
fn run_keeps_every_bit_of_wide_integers_and_nan_payloads() {
    let dir = std::env::temp_dir().join(format!("tessel-cli-exact-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let cases: [(&str, &str, &str, Vec<u8>); 3] = [
        ("add_zero_kernel", "18446744073709551613", "u64", (u64::MAX - 2).to_le_bytes().to_vec()),
        ("add_zero_kernel", "-9223372036854775807", "i64", (i64::MIN + 1).to_le_bytes().to_vec()),
        ("bitcast_round_trip_kernel", "0x7fa00001", "fp32", 0x7fa0_0001u32.to_le_bytes().to_vec()),
    ];
    for (kernel, value, dtype, bits) in cases {
        let target = format!("tests/kernels/exact_copy.py::{kernel}");
        let (x, y) = (format!("x_ptr=fill:{value}:5:{dtype}"), format!("y_ptr=zeros:5:{dtype}"));
        let (code, out, err) = tessel(&[
            "run",
            &target,
            "--const",
            "BLOCK=8",
            "--interpret",
            "--arg",
            &x,
            "--arg",
            &y,
            "--arg",
            "n=5",
            "--out-dir",
            d,
        ]);
        assert_eq!(code, 0, "{kernel} {dtype}: {err}");
        if dtype != "fp32" {
            assert!(out.contains(&format!("y_ptr: {dtype}[5] = [{value}, {value}")), "printed exactly: {out}");
        }
        let saved = tessel::npy::read(&std::fs::read(dir.join("y_ptr.npy")).unwrap()).unwrap();
        assert_eq!(saved.data, bits.repeat(5), "{kernel} on {value}:{dtype}");
    }
    std::fs::remove_dir_all(dir).ok();
}

/// A division whose divisor was loaded with a mask runs (masked-off lanes divide by 0 and are discarded,
/// as on the GPU) and the unmasked lanes are C's truncating quotient and remainder.
#[test]
fn masked_off_integer_division_by_zero_does_not_abort() {
    let dir = std::env::temp_dir().join(format!("tessel-cli-div-{}", std::process::id()));
    let (code, out, err) = tessel(&[
        "run",
        "tests/kernels/masked_div.py::masked_div_kernel",
        "--const",
        "BLOCK=16",
        "--interpret",
        "--arg",
        "x_ptr=fill:-7:10:i32",
        "--arg",
        "y_ptr=fill:2:10:i32",
        "--arg",
        "q_ptr=fill:99:16:i32",
        "--arg",
        "r_ptr=fill:99:16:i32",
        "--arg",
        "n=10",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("q_ptr: i32[16] = [-3, -3"), "{out}");
    let read =
        |name: &str| tessel::npy::read(&std::fs::read(dir.join(format!("{name}.npy"))).unwrap()).unwrap().to_f64();
    let want = |v: f64| -> Vec<f64> { [vec![v; 10], vec![99.0; 6]].concat() };
    assert_eq!(read("q_ptr"), want(-3.0), "quotients, and the masked-off tail untouched");
    assert_eq!(read("r_ptr"), want(-1.0));
    std::fs::remove_dir_all(dir).ok();
}

/// Launch parameters out of range are refused up front: an `i32` scalar that would wrap, a block of 32768
/// threads, a grid CUDA cannot launch, a name given twice.
#[test]
fn launch_parameters_are_checked_not_wrapped() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "examples/vector_add.py::add_kernel",
            "--const",
            "BLOCK_SIZE=256",
            "--arg",
            "x_ptr=rand:1000",
            "--arg",
            "y_ptr=rand:1000",
            "--arg",
            "output_ptr=zeros:1000",
        ];
        args.extend_from_slice(extra);
        tessel(&args)
    };
    let sig = ["--signature", "*fp32,*fp32,*fp32,i32"];
    let (code, _, err) = run(&[&sig[..], &["--arg", "n_elements=4294967306"]].concat());
    assert_eq!(code, 2);
    assert!(
        err.contains("--arg n_elements=4294967306: 4294967306 does not fit int32 (from -2147483648 to 2147483647)"),
        "{err}"
    );
    let (code, _, err) = run(&[&sig[..], &["--arg", "n_elements=-2147483649"]].concat());
    assert_eq!(code, 2, "{err}");
    // The edge of the range is fine.
    let (code, _, err) = run(&[&sig[..], &["--arg", "n_elements=2147483647", "--grid", "3"]].concat());
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&["--arg", "n_elements=1000", "--arg", "n_elements=10"]);
    assert_eq!(code, 2);
    assert!(err.contains("--arg n_elements is given twice"), "{err}");
    for (grid, message) in [("2147483648", "along x"), ("1,65536", "along y"), ("1,1,70000", "along z")] {
        let (code, _, err) = run(&["--arg", "n_elements=1000", "--grid", grid]);
        assert_eq!(code, 2);
        assert!(err.contains(message) && err.contains("more than CUDA allows"), "{err}");
    }
    for warps in ["1024", "3", "0", "64"] {
        let (code, _, err) = run(&["--arg", "n_elements=1000", "--num-warps", warps]);
        assert_eq!(code, 2);
        assert!(err.contains("--num-warps must be a power of two in 1..=32"), "{err}");
    }
    let (code, _, err) = tessel(&[
        "compile",
        "examples/vector_add.py::add_kernel",
        "--signature",
        "*fp32,*fp32,*fp32,i32",
        "--const",
        "BLOCK_SIZE=64",
        "--const",
        "BLOCK_SIZE=128",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--const BLOCK_SIZE is given twice"), "{err}");
}

/// A `dot` left on the FMA path (sm_80 has no tensor-core lowering yet) with too many multiply-adds per thread is
/// refused at its source in well under a second, instead of unrolling for minutes; one under the bound compiles.
#[test]
fn huge_fma_dots_are_refused_quickly() {
    let compile = |k: &str, warps: &str| {
        let start = std::time::Instant::now();
        let out = tessel(&[
            "compile",
            "tests/kernels/square_dot.py::k",
            "--signature",
            "*fp32,*fp32,*fp32",
            "--const",
            "M=64",
            "--const",
            "N=64",
            "--const",
            &format!("K={k}"),
            "--num-warps",
            warps,
            "--arch",
            "sm_80",
            "--emit",
            "layout",
        ]);
        (out, start.elapsed())
    };
    let ((code, _, err), elapsed) = compile("4096", "4");
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "this dot (64x4096 @ 4096x64) runs on FMAs on sm_80 and would unroll 131072 multiply-adds per \
                      thread, more than 65536"
        ),
        "{err}"
    );
    assert!(err.contains("c = tl.dot(a, b, input_precision=PRECISION)"), "points at the dot: {err}");
    assert!(elapsed < std::time::Duration::from_secs(20), "{elapsed:?}");
    // 64 * 64 / 256 threads * 2048 = 32768 multiply-adds per thread.
    let ((code, _, err), _) = compile("2048", "8");
    assert_eq!(code, 0, "{err}");
    // The same dot in tf32 or f16 runs on mma.sync, not FMAs: not refused (it was, before the check asked).
    for (signature, precision) in [("*fp32,*fp32,*fp32", "PRECISION='tf32'"), ("*fp16,*fp16,*fp32", "PRECISION='ieee'")]
    {
        let out = tessel(&[
            "compile",
            "tests/kernels/square_dot.py::k",
            "--signature",
            signature,
            "--const",
            "M=64",
            "--const",
            "N=64",
            "--const",
            "K=4096",
            "--const",
            precision,
            "--arch",
            "sm_80",
            "--emit",
            "layout",
        ]);
        assert_eq!(out.0, 0, "{signature}: {}", out.2);
        assert!(out.1.contains("NVMMADistributedLayout([2,0]"), "{signature}: {}", out.1);
    }
}

/// The interpreter never hangs: a spin-wait on a lock no program will release is reported at once, with the
/// program and the loop; a loop that makes progress but never ends stops at `--max-iterations`.
#[test]
fn interpreter_reports_loops_that_never_end() {
    let run = |kernel: &str, args: &[&str]| {
        let target = format!("tests/kernels/spin_lock.py::{kernel}");
        let mut all = vec!["run", target.as_str()];
        all.extend_from_slice(args);
        tessel(&all)
    };
    let lock = ["--grid", "3", "--arg", "Lock=zeros:1:i32", "--arg", "Out=zeros:3:i32"];
    let (code, _, err) = run("forgot_release", &lock);
    assert_eq!(code, 2);
    assert!(err.contains("program (1, 0, 0): this `while` loop spins forever"), "{err}");
    assert!(err.contains("while tl.atomic_cas(Lock, 0, 1) == 1:"), "points at the loop: {err}");
    let (code, out, err) = run("lock_released", &lock);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Out: i32[3] = [0, 1, 2]"), "{out}");

    let forever = ["--arg", "Out=zeros:1:i32", "--arg", "n=5", "--max-iterations", "1000"];
    let (code, _, err) = run("counts_forever", &forever);
    assert_eq!(code, 2);
    assert!(err.contains("program (0, 0, 0): this program ran more than 1000 loop iterations"), "{err}");
    let (code, _, err) =
        run("long_for", &["--arg", "Out=zeros:1:i64", "--arg", "n=1000000000", "--max-iterations", "1000"]);
    assert_eq!(code, 2);
    assert!(err.contains("ran more than 1000 loop iterations (stopped in this `for` loop)"), "{err}");
    let (code, out, err) =
        run("long_for", &["--arg", "Out=zeros:1:i32", "--arg", "n=1000", "--max-iterations", "1000"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Out: i32[1] = [499500]"), "{out}");
    // Few iterations over large tiles are bounded by the elements computed.
    let (code, _, err) = tessel(&[
        "run",
        "examples/vector_add.py::add_kernel",
        "--const",
        "BLOCK_SIZE=1024",
        "--arg",
        "x_ptr=rand:1024",
        "--arg",
        "y_ptr=rand:1024",
        "--arg",
        "output_ptr=zeros:1024",
        "--arg",
        "n_elements=1024",
        "--max-work",
        "3000",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("program (0, 0, 0): this op would take this program past 3000 units of work"), "{err}");
}

/// `ptrs:a,b` is an int64 buffer of other buffers' addresses (grouped GEMM's pointer arrays); the buffers it
/// names need not be parameters, and a name that is no buffer is an error.
#[test]
fn run_passes_tables_of_buffer_addresses() {
    let dir = std::env::temp_dir().join(format!("tessel-cli-ptrs-{}", std::process::id()));
    let run = |table: &str| {
        tessel(&[
            "run",
            "tests/kernels/pointer_table.py::scale_each",
            "--const",
            "BLOCK=8",
            "--grid",
            "3",
            "--interpret",
            "--arg",
            table,
            "--arg",
            "a=arange:6",
            "--arg",
            "b=fill:0.5:6",
            "--arg",
            "out=fill:-1:24",
            "--arg",
            "n=6",
            "--out-dir",
            dir.to_str().unwrap(),
        ])
    };
    let (code, _, err) = run("table=ptrs:b,a,b");
    assert_eq!(code, 0, "{err}");
    let out = tessel::npy::read(&std::fs::read(dir.join("out.npy")).unwrap()).unwrap().to_f64();
    // Rows 0 and 2 read b (0.5 each), row 1 reads a (0, 1, ..); the two elements past n stay -1.
    let src = |g: usize, i: usize| if g == 1 { i as f64 } else { 0.5 };
    let want: Vec<f64> =
        (0..24).map(|e| if e % 8 < 6 { src(e / 8, e % 8) * (e / 8 + 1) as f64 } else { -1.0 }).collect();
    assert_eq!(out, want, "each program read the buffer its table entry names");
    let (code, _, err) = run("table=ptrs:b,a,c");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`c` is not a buffer --arg"), "{err}");
    std::fs::remove_dir_all(dir).ok();
}

/// Sources are read as Python reads them, within bounds: at most 64 MiB (a device that never ends is refused
/// once past it), and as UTF-8, the first bad byte located by line and column.
#[test]
fn sources_are_read_with_a_cap_and_as_utf8() {
    let (code, _, err) = tessel(&["check", "/dev/zero"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot read /dev/zero: it is larger than 64 MiB"), "{err}");

    let dir = std::env::temp_dir().join(format!("tessel-cli-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("latin1.py");
    std::fs::write(&file, b"import triton\n\n@triton.jit\ndef k(x):  # caf\xe9\n    pass\n").unwrap();
    let name = file.display().to_string();
    let (code, _, err) = tessel(&["check", &name]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("{name}:4:17: byte 0xe9 (offset 43) is not valid UTF-8")), "{err}");
    // The report shows the line, the bad byte as U+FFFD.
    assert!(err.contains("def k(x):  # caf\u{fffd}") && err.contains("byte 0xe9 is not valid UTF-8"), "{err}");
    std::fs::remove_dir_all(dir).ok();
}

/// `TESSEL_PTX_DUMP=DIR` writes each compiled kernel's PTX to `DIR/NAME-HASH.ptx`, the name fixed by the input:
/// compiling one specialization twice writes one file (the PTX printed), another specialization a second.
#[test]
fn ptx_dump_names_each_kernel_by_its_input() {
    let dir = std::env::temp_dir().join(format!("tessel-ptx-dump-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let compile = |block: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tessel"))
            .args(["compile", "examples/vector_add.py::add_kernel", "--signature", "*fp32,*fp32,*fp32,i32"])
            .args(["--const", &format!("BLOCK_SIZE={block}"), "--emit", "ptx"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("TESSEL_PTX_DUMP", &dir)
            .output()
            .expect("the tessel binary runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let files = || {
        let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        names.sort();
        names
    };
    let ptx = compile("1024");
    compile("1024");
    let one = files();
    assert_eq!(one.len(), 1, "{one:?}");
    let name = one[0].file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("add_kernel-") && name.ends_with(".ptx") && name.len() == "add_kernel-.ptx".len() + 16);
    assert_eq!(ptx.trim(), std::fs::read_to_string(&one[0]).unwrap().trim());
    compile("512");
    assert_eq!(files().len(), 2, "another specialization, another file");
    let _ = std::fs::remove_dir_all(&dir);
}
