//! Runs every test kernel of `codegen/tests/ir/` on the GPU and compares with the interpreter.
//!
//! `cargo run --release -p tessel-runtime --example gpu_check [-- --no-timing] [--only NAME]...`
//! (`--interpret-only` runs just the interpreter side of every case, without a GPU: a check of the cases'
//! inputs and kernels.)
//!
//! For each kernel: fresh random inputs (seeded by the clock; the seed is printed), outputs poisoned (0xFF
//! bytes: NaN for floats, -1 for ints) on the GPU and NaN/-1 in the interpreter, one launch, then
//! `err = ‖out − ref‖ / ‖ref‖` over the output buffers (elements that both leave untouched compare equal; an
//! element that only one side wrote is a failure; integers must match exactly; an output with no element
//! compared fails: `tessel_interp::compare` under `Rules::STRICT`). Prints `PASS/FAIL name err=..` and
//! exits non-zero on any failure. A self-test then turns one `add` of the vector add's PTX into `sub` and
//! requires the comparison to fail. `device_print` and a failing `device_assert` are checked in child processes
//! (see `gpu_check_support/debug.rs`): the printed lines against the interpreter's, the assert by its message
//! and the launch error. Last, it times the vector add at n = 2^28 with CUDA events (10 warm-up launches,
//! median of 100) and prints GB/s (12 bytes/element).

use std::time::{SystemTime, UNIX_EPOCH};

use tessel_codegen::{Target, compile};
use tessel_interp::compare::{Failure, Rules, compare_bytes};
use tessel_interp::memory::{BufferId, Memory};
use tessel_interp::{Arg, run};
use tessel_math::testing::Rng;
use tessel_runtime::{DeviceBuffer, Gpu, KArg};
use tessel_tile::types::ScalarType;

#[path = "gpu_check_support/debug.rs"]
mod debug;

/// How a buffer starts.
enum Init {
    /// Uniform floats in [-scale, scale), or integers in [0, scale).
    Random(f64),
    /// Uniform integers in [lo, hi).
    Ints(i64, i64),
    Zero,
    Poison,
}

enum Spec {
    Buf { elem: ScalarType, len: usize, init: Init, check: bool },
    Int(i64),
}

struct Case {
    name: &'static str,
    /// The kernel file under `codegen/tests/ir/` (without `.tir`).
    file: &'static str,
    grid: u32,
    args: Vec<Spec>,
    /// Relative error allowed for float outputs.
    tol: f64,
    /// Per checked buffer, in order, overriding `tol` (empty: `tol` for all).
    tols: &'static [f64],
    arch: Target,
    /// A text substitution applied to the kernel file (a variant of the kernel).
    patch: Option<(&'static str, &'static str)>,
}

fn case(name: &'static str, file: &'static str, grid: u32, args: Vec<Spec>, tol: f64) -> Case {
    Case { name, file, grid, args, tol, tols: &[], arch: Target::Sm90a, patch: None }
}

fn cases(rng: &mut Rng) -> Vec<Case> {
    use ScalarType::*;
    use Spec::*;
    let n_add = 1024 * (20 + rng.below(20) as usize) + 16 * (1 + rng.below(63) as usize);
    let sm_rows = 4 * (8 + rng.below(8) as usize);
    let sm_cols = 16 * (1 + rng.below(16) as i64);
    let am_rows = 4 * (4 + rng.below(8) as usize);
    let loop_rows = 16 * (1 + rng.below(6) as i64);
    let at_n = 1 + rng.below(5000) as i64;
    let dot_k = 16 * (1 + rng.below(8) as usize);
    let as_n = 1 + rng.below(3000) as i64;
    vec![
        case(
            "vector_add",
            "vector_add",
            n_add.div_ceil(1024) as u32,
            vec![
                Buf { elem: F32, len: n_add, init: Init::Random(4.0), check: false },
                Buf { elem: F32, len: n_add, init: Init::Random(4.0), check: false },
                Buf { elem: F32, len: n_add, init: Init::Poison, check: true },
                Int(n_add as i64),
            ],
            1e-6,
        ),
        case(
            "softmax_f16",
            "softmax_f16",
            (sm_rows / 4) as u32,
            vec![
                Buf { elem: F16, len: sm_rows * 256, init: Init::Random(4.0), check: false },
                Buf { elem: F16, len: sm_rows * 256, init: Init::Poison, check: true },
                Int(256),
                Int(sm_cols),
            ],
            2e-3,
        ),
        case(
            "argmax",
            "argmax",
            (am_rows / 4) as u32,
            vec![
                Buf { elem: F32, len: am_rows * 128, init: Init::Random(10.0), check: false },
                Buf { elem: F32, len: am_rows, init: Init::Poison, check: true },
                Buf { elem: I32, len: am_rows, init: Init::Poison, check: true },
            ],
            0.0,
        ),
        case(
            "loop_acc",
            "loop_acc",
            1,
            vec![
                Buf { elem: F32, len: loop_rows as usize * 512, init: Init::Random(1.0), check: false },
                Buf { elem: F32, len: 520, init: Init::Poison, check: true },
                Int(loop_rows),
            ],
            1e-5,
        ),
        case(
            "while_halve",
            "while_halve",
            1,
            vec![Buf { elem: F32, len: 256, init: Init::Random(100.0), check: true }, Int(1 + rng.below(9) as i64)],
            1e-6,
        ),
        case(
            "atomic_hist",
            "atomic_hist",
            (at_n as u32).div_ceil(256),
            vec![
                Buf { elem: I32, len: at_n as usize, init: Init::Random(1000.0), check: false },
                Buf { elem: I32, len: 1, init: Init::Zero, check: true },
                Int(at_n),
            ],
            0.0,
        ),
        case(
            "convert",
            "convert",
            1,
            vec![
                Buf { elem: F16, len: 1024, init: Init::Random(8.0), check: false },
                Buf { elem: F16, len: 1024, init: Init::Poison, check: true },
                Buf { elem: F32, len: 256, init: Init::Random(8.0), check: false },
                Buf { elem: F32, len: 256, init: Init::Poison, check: true },
            ],
            0.0,
        ),
        case(
            "if_arange(then)",
            "if_arange",
            1,
            vec![Buf { elem: I32, len: 64, init: Init::Poison, check: true }, Int(1)],
            0.0,
        ),
        case(
            "if_arange(else)",
            "if_arange",
            1,
            vec![Buf { elem: I32, len: 64, init: Init::Poison, check: true }, Int(0)],
            0.0,
        ),
        case("mixed(then)", "mixed", 1, mixed_args(1 + rng.below(100) as i64), 1e-6),
        case("mixed(else)", "mixed", 1, mixed_args(-(rng.below(100) as i64)), 1e-6),
        bytes_case("bytes", None, rng),
        // The same kernel without alignment facts: every byte is its own (masked) access.
        bytes_case("bytes(scalar)", Some((", divisible_by_16 = [0, 1, 2, 3, 4, 5, 6, 7]", "")), rng),
        fp8_case("fp8(sm_90a cvt)", Target::Sm90a),
        // sm_80 PTX (software fp8 conversions) JIT-compiled for this GPU.
        fp8_case("fp8(sm_80 software)", Target::Sm80),
        Case {
            // clamp/erf/pow; log/log2/sqrt/rsqrt/exp/exp2 (approximate by design: ~2^-21); f64 routines; f16 erf;
            // bf16 arithmetic; div/div_rn/sqrt_rn.
            tols: &[1e-6, 1e-5, 1e-12, 1e-3, 1e-2, 1e-6],
            ..case(
                "math",
                "math",
                1,
                vec![
                    Buf { elem: F32, len: 128, init: Init::Random(4.0), check: false },
                    Buf { elem: F32, len: 128, init: Init::Random(4.0), check: false },
                    Buf { elem: F32, len: 128, init: Init::Poison, check: true },
                    Buf { elem: F32, len: 128, init: Init::Poison, check: true },
                    Buf { elem: F64, len: 128, init: Init::Poison, check: true },
                    Buf { elem: F16, len: 128, init: Init::Poison, check: true },
                    Buf { elem: BF16, len: 128, init: Init::Poison, check: true },
                    Buf { elem: F32, len: 128, init: Init::Poison, check: true },
                ],
                0.0,
            )
        },
        // Native f16 (and, on sm_90, bf16) add/sub/mul, packed two per instruction: bit-equal to the
        // interpreter's single rounding.
        case(
            "halves",
            "halves",
            1,
            vec![
                Buf { elem: F16, len: 512, init: Init::Random(8.0), check: false },
                Buf { elem: F16, len: 512, init: Init::Random(8.0), check: false },
                Buf { elem: BF16, len: 512, init: Init::Random(8.0), check: false },
                Buf { elem: BF16, len: 512, init: Init::Random(8.0), check: false },
                Buf { elem: F16, len: 512, init: Init::Poison, check: true },
                Buf { elem: BF16, len: 512, init: Init::Poison, check: true },
                Buf { elem: F16, len: 1, init: Init::Poison, check: true },
                Buf { elem: F16, len: 128, init: Init::Poison, check: true },
            ],
            0.0,
        ),
        // f16 x f16 -> f32 on CUDA cores in a K loop: the interpreter's sequential fma in K order.
        case(
            "dot_fma",
            "dot_fma",
            1,
            vec![
                Buf { elem: F16, len: 32 * dot_k, init: Init::Random(1.0), check: false },
                Buf { elem: F16, len: dot_k * 32, init: Init::Random(1.0), check: false },
                Buf { elem: F32, len: 32 * 32, init: Init::Poison, check: true },
                Int(dot_k as i64),
            ],
            1e-6,
        ),
        // f32 operands rounded to tf32 (ties away): without the rounding the error is ~1e-4.
        case(
            "dot_tf32",
            "dot_tf32",
            1,
            vec![
                Buf { elem: F32, len: 16 * 8, init: Init::Random(1.0), check: false },
                Buf { elem: F32, len: 8 * 16, init: Init::Random(1.0), check: false },
                Buf { elem: F32, len: 16 * 16, init: Init::Random(1.0), check: true },
            ],
            1e-6,
        ),
        // i16 (shifted to [-1000, 1000) in the kernel) into i32, f16 into f16, f32 into f64 accumulators.
        case(
            "dot_types",
            "dot_types",
            1,
            vec![
                Buf { elem: I16, len: 256, init: Init::Random(2000.0), check: false },
                Buf { elem: I16, len: 256, init: Init::Random(2000.0), check: false },
                Buf { elem: I32, len: 256, init: Init::Random(1e6), check: true },
                Buf { elem: F16, len: 256, init: Init::Random(1.0), check: false },
                Buf { elem: F16, len: 256, init: Init::Random(1.0), check: false },
                Buf { elem: F16, len: 256, init: Init::Random(1.0), check: true },
                Buf { elem: F32, len: 256, init: Init::Random(1.0), check: false },
                Buf { elem: F32, len: 256, init: Init::Random(1.0), check: false },
                Buf { elem: F64, len: 256, init: Init::Random(1.0), check: true },
            ],
            1e-3,
        ),
        case(
            "dot_batched",
            "dot_batched",
            1,
            vec![
                Buf { elem: F16, len: 2 * 16 * 8, init: Init::Random(1.0), check: false },
                Buf { elem: F16, len: 2 * 8 * 16, init: Init::Random(1.0), check: false },
                Buf { elem: F32, len: 2 * 16 * 16, init: Init::Poison, check: true },
            ],
            1e-6,
        ),
        case(
            "permute",
            "permute",
            1,
            vec![
                Buf { elem: F16, len: 32 * 64, init: Init::Random(8.0), check: false },
                Buf { elem: F16, len: 64 * 32, init: Init::Poison, check: true },
                Buf { elem: F32, len: 4 * 8 * 16, init: Init::Random(8.0), check: false },
                Buf { elem: F32, len: 16 * 4 * 8, init: Init::Poison, check: true },
            ],
            0.0,
        ),
        case(
            "reshape",
            "reshape",
            1,
            vec![
                Buf { elem: F32, len: 1024, init: Init::Random(8.0), check: false },
                Buf { elem: F32, len: 1024, init: Init::Poison, check: true },
                Buf { elem: F16, len: 32 * 64, init: Init::Random(8.0), check: false },
                Buf { elem: F16, len: 4 * 8 * 64, init: Init::Poison, check: true },
            ],
            0.0,
        ),
        case(
            "join_split",
            "join_split",
            1,
            vec![
                Buf { elem: F32, len: 256, init: Init::Random(8.0), check: false },
                Buf { elem: F32, len: 256, init: Init::Random(8.0), check: false },
                Buf { elem: F32, len: 512, init: Init::Poison, check: true },
                Buf { elem: F32, len: 256, init: Init::Poison, check: true },
                Buf { elem: F32, len: 256, init: Init::Poison, check: true },
                Buf { elem: F32, len: 512, init: Init::Poison, check: true },
            ],
            0.0,
        ),
        // Forward scans over registers, lanes and warps: i32 and affine-map (non-commutative) scans exact,
        // the f32 cumsum within association error.
        case(
            "cumsum",
            "cumsum",
            1,
            vec![
                Buf { elem: I32, len: 4 * 512, init: Init::Random(1000.0), check: false },
                Buf { elem: F32, len: 4 * 512, init: Init::Random(1.0), check: false },
                Buf { elem: I32, len: 4 * 512, init: Init::Poison, check: true },
                Buf { elem: F32, len: 4 * 512, init: Init::Poison, check: true },
                Buf { elem: I32, len: 4 * 512, init: Init::Poison, check: true },
                Buf { elem: I32, len: 32 * 16, init: Init::Random(1000.0), check: false },
                Buf { elem: I32, len: 32 * 16, init: Init::Poison, check: true },
            ],
            1e-5,
        ),
        case(
            "scan_reverse",
            "scan_reverse",
            1,
            vec![
                Buf { elem: F32, len: 2048, init: Init::Random(1.0), check: false },
                Buf { elem: F32, len: 2048, init: Init::Poison, check: true },
                Buf { elem: I32, len: 2048, init: Init::Random(1000.0), check: false },
                Buf { elem: I32, len: 2048, init: Init::Poison, check: true },
                Buf { elem: I32, len: 32 * 16, init: Init::Random(1000.0), check: false },
                Buf { elem: I32, len: 32 * 16, init: Init::Poison, check: true },
            ],
            1e-5,
        ),
        case(
            "shuffle",
            "shuffle",
            1,
            vec![
                Buf { elem: F32, len: 256, init: Init::Random(4.0), check: false },
                Buf { elem: F16, len: 256, init: Init::Random(4.0), check: false },
                Buf { elem: F32, len: 256, init: Init::Poison, check: true },
                Buf { elem: F16, len: 256, init: Init::Poison, check: true },
                Buf { elem: I64, len: 256, init: Init::Poison, check: true },
                Buf { elem: I1, len: 256, init: Init::Poison, check: true },
            ],
            0.0,
        ),
        case(
            "assert(pass)",
            "assert",
            (as_n as u32).div_ceil(256),
            vec![
                Buf { elem: I32, len: as_n as usize, init: Init::Ints(0, 1 << 30), check: false },
                Buf { elem: I32, len: as_n as usize, init: Init::Poison, check: true },
                Int(as_n),
            ],
            0.0,
        ),
    ]
}

/// `bytes.tir`: i8/u8/i1 loads, arithmetic, casts and stores; `n` a multiple of 16 (the kernel says so).
fn bytes_case(name: &'static str, patch: Option<(&'static str, &'static str)>, rng: &mut Rng) -> Case {
    use ScalarType::*;
    use Spec::*;
    let n = 16 * (1 + rng.below(64) as i64);
    let buf = |elem, init| Buf { elem, len: 1024, init, check: false };
    let out = |elem| Buf { elem, len: 1024, init: Init::Poison, check: true };
    Case {
        patch,
        ..case(
            name,
            "bytes",
            1,
            vec![
                buf(I8, Init::Ints(-128, 128)),
                buf(U8, Init::Ints(0, 256)),
                buf(I1, Init::Ints(0, 2)),
                out(I8),
                out(U8),
                out(I1),
                out(F32),
                Int(n),
                Int(rng.below(256) as i64 - 128),
                Int(rng.below(2) as i64),
            ],
            0.0,
        )
    }
}

/// `fp8.tir`: fp8 loads, conversions from and to every float type and i32, fp8 arithmetic; exact.
fn fp8_case(name: &'static str, arch: Target) -> Case {
    use ScalarType::*;
    use Spec::*;
    let out = |elem| Buf { elem, len: 256, init: Init::Poison, check: true };
    Case {
        arch,
        ..case(
            name,
            "fp8",
            1,
            vec![
                Buf { elem: F32, len: 256, init: Init::Random(300.0), check: false },
                Buf { elem: F8E4M3, len: 256, init: Init::Random(400.0), check: false },
                Buf { elem: F8E5M2, len: 256, init: Init::Random(3000.0), check: false },
                out(F8E4M3),
                out(F8E5M2),
                out(F32),
                out(F16),
                out(BF16),
            ],
            0.0,
        )
    }
}

fn mixed_args(flag: i64) -> Vec<Spec> {
    use ScalarType::*;
    use Spec::*;
    vec![
        Buf { elem: BF16, len: 128, init: Init::Random(4.0), check: false },
        Buf { elem: F32, len: 128, init: Init::Random(4.0), check: false },
        Buf { elem: F32, len: 128, init: Init::Poison, check: true },
        Buf { elem: I64, len: 128, init: Init::Poison, check: true },
        Int(flag),
    ]
}

/// The test kernel file: in codegen's tests beside this crate, or under `codegen/tests/ir` of the current directory when the
/// binary runs on another machine.
fn ir_path(name: &str) -> String {
    let built = format!("{}/../codegen/tests/ir/{name}.tir", env!("CARGO_MANIFEST_DIR"));
    if std::path::Path::new(&built).exists() { built } else { format!("codegen/tests/ir/{name}.tir") }
}

fn bytes_of(mem: &Memory, id: BufferId) -> Vec<u8> {
    mem.buffer(id).bytes.clone()
}

/// Runs one case: on the GPU and in the interpreter, comparing the checked buffers; with no GPU, only the
/// interpreter (a check of the case itself).
fn check_case(gpu: Option<&Gpu>, case: &Case, rng: &mut Rng, corrupt: bool) -> Result<(bool, String), String> {
    let path = ir_path(case.file);
    let mut src = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    if let Some((from, to)) = case.patch {
        if !src.contains(from) {
            return Err(format!("{path}: the patch text {from:?} is not in the kernel"));
        }
        src = src.replace(from, to);
    }
    let mut f = tessel_tile::parse::parse_func(&src).map_err(|e| format!("{path}: {e}"))?;
    f.target = case.arch;
    let mut kernel = compile(&f).map_err(|e| e.to_string())?;
    if corrupt {
        // Harness self-test: a wrong kernel must fail the comparison.
        kernel.ptx = kernel.ptx.replacen("add.rn.f32", "sub.rn.f32", 1);
    }
    let mut mem = Memory::new();
    let mut iargs = Vec::new();
    let mut bufs = Vec::new();
    for (i, s) in case.args.iter().enumerate() {
        match s {
            Spec::Buf { elem, len, init, .. } => {
                let vals: Vec<f64> = (0..*len)
                    .map(|_| match init {
                        Init::Random(scale) if elem.is_float() => rng.uniform() * scale,
                        Init::Random(scale) => rng.below(*scale as u64) as f64,
                        Init::Ints(lo, hi) => (*lo + rng.below((hi - lo) as u64) as i64) as f64,
                        Init::Zero => 0.0,
                        Init::Poison if elem.is_float() => f64::NAN,
                        Init::Poison => -1.0,
                    })
                    .collect();
                let id = mem.alloc_from(format!("arg{i}"), *elem, &vals);
                bufs.push(Some(id));
                iargs.push(Arg::Buffer(id));
            }
            Spec::Int(v) => {
                bufs.push(None);
                iargs.push(Arg::Int(*v));
            }
        }
    }
    let Some(gpu) = gpu else {
        run(&f, &iargs, [case.grid, 1, 1], &mut mem).map_err(|e| format!("interpreter: {e}"))?;
        return Ok((true, format!("interpreter only, {} ({})", case.arch.name(), kernel.ptx.len())));
    };
    // Device copies of the inputs, outputs poisoned with 0xFF bytes.
    let mut dev: Vec<Option<DeviceBuffer>> = Vec::new();
    for (s, b) in case.args.iter().zip(&bufs) {
        dev.push(match (s, b) {
            (Spec::Buf { init: Init::Poison, .. }, Some(id)) => {
                Some(gpu.upload(&vec![0xFF; mem.buffer(*id).bytes.len()]).map_err(|e| e.to_string())?)
            }
            (_, Some(id)) => Some(gpu.upload(&bytes_of(&mem, *id)).map_err(|e| e.to_string())?),
            _ => None,
        });
    }
    // Integer arguments go out as 32-bit values; 8/16-bit parameters read their low bytes.
    let kargs: Vec<KArg> = case
        .args
        .iter()
        .zip(&dev)
        .map(|(s, d)| match (s, d) {
            (Spec::Int(v), _) => KArg::I32(*v as i32),
            (_, Some(b)) => KArg::Buf(b),
            _ => unreachable!(),
        })
        .collect();
    let loaded = gpu.load(&kernel).map_err(|e| e.to_string())?;
    loaded.launch(gpu, [case.grid, 1, 1], &kargs).map_err(|e| e.to_string())?;
    gpu.synchronize().map_err(|e| e.to_string())?;
    run(&f, &iargs, [case.grid, 1, 1], &mut mem).map_err(|e| format!("interpreter: {e}"))?;
    let mut worst: f64 = 0.0;
    let mut ok = true;
    let mut compared = 0;
    let mut checked = 0;
    for ((s, b), d) in case.args.iter().zip(&bufs).zip(&dev) {
        let (Spec::Buf { elem, check: true, .. }, Some(id), Some(d)) = (s, b, d) else { continue };
        let out = gpu.download(d).map_err(|e| e.to_string())?;
        let diff = compare_bytes(*elem, &mem.buffer(*id).bytes, &out);
        worst = worst.max(diff.rel_err);
        compared += diff.compared;
        let tol = case.tols.get(checked).copied().unwrap_or(case.tol);
        checked += 1;
        // Integer outputs match exactly whatever the tolerance; an output the kernel never wrote would compare
        // equal (poison on both sides), so an output must have data.
        match diff.check(tol, Rules::STRICT) {
            Ok(()) => {}
            Err(Failure::AboveTolerance { rel_err, tol }) => {
                ok = false;
                println!("  {} buffer {checked}: err={rel_err:.3e} > tol={tol:e}", case.name);
            }
            Err(why) => {
                ok = false;
                println!("  {} buffer {checked}: {why}", case.name);
            }
        }
    }
    Ok((ok, format!("err={worst:.3e} compared={compared} grid={} smem={}B", case.grid, kernel.shared_bytes)))
}

fn time_vector_add(gpu: &Gpu) -> Result<(), String> {
    let path = ir_path("vector_add");
    let f = tessel_tile::parse::parse_func(&std::fs::read_to_string(path).unwrap()).map_err(|e| e.to_string())?;
    let kernel = compile(&f).map_err(|e| e.to_string())?;
    let loaded = gpu.load(&kernel).map_err(|e| e.to_string())?;
    let n: usize = 1 << 28;
    let e = |x: tessel_runtime::RuntimeError| x.to_string();
    // Random finite inputs (METHOD.md: never time zeros): uniform in [-1, 1].
    let random_f32 = |seed: u64| -> Vec<u8> {
        let mut rng = Rng::new(seed);
        (0..n).flat_map(|_| (rng.uniform() as f32).to_le_bytes()).collect()
    };
    let x = gpu.upload(&random_f32(1)).map_err(e)?;
    let y = gpu.upload(&random_f32(2)).map_err(e)?;
    let o = gpu.upload(&vec![0xffu8; n * 4]).map_err(e)?;
    let args = [KArg::Buf(&x), KArg::Buf(&y), KArg::Buf(&o), KArg::I32(n as i32)];
    let grid = [(n / 1024) as u32, 1, 1];
    let times = loaded.time(gpu, grid, &args, 10, 100).map_err(e)?;
    let median = times[50];
    let gbs = (3 * 4 * n) as f64 / (median * 1e-3) / 1e9;
    println!("TIME vector_add n=2^28 median={median:.4}ms {gbs:.1} GB/s (min {:.4}ms)", times[0]);
    Ok(())
}

fn report(failed: &mut u32, name: &str, result: Result<(bool, String), String>) {
    match result {
        Ok((true, msg)) => println!("PASS {name} {msg}"),
        Ok((false, msg)) => {
            *failed += 1;
            println!("FAIL {name} {msg}");
        }
        Err(e) => {
            *failed += 1;
            println!("FAIL {name} error: {e}");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let result = match args.get(i + 1).map(String::as_str) {
            Some("print") => debug::print_child(args.get(i + 2).and_then(|s| s.parse().ok()).unwrap_or(1)),
            Some("assert-fail") => debug::assert_child(),
            other => Err(format!("unknown child {other:?}")),
        };
        if let Err(e) = result {
            eprintln!("child: {e}");
            std::process::exit(1);
        }
        return;
    }
    let only: Vec<&str> = args.windows(2).filter(|w| w[0] == "--only").map(|w| w[1].as_str()).collect();
    let selected = |name: &str| only.is_empty() || only.contains(&name);
    let interpret_only = flag("--interpret-only");
    let gpu = if interpret_only {
        None
    } else {
        match Gpu::new() {
            Ok(g) => Some(g),
            Err(e) => {
                eprintln!("gpu_check: no GPU: {e}");
                std::process::exit(2);
            }
        }
    };
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    println!("seed {seed}");
    let mut rng = Rng::new(seed);
    let mut failed = 0;
    for case in cases(&mut rng) {
        if selected(case.name) {
            report(&mut failed, case.name, check_case(gpu.as_ref(), &case, &mut rng, false));
        }
    }
    let Some(gpu) = gpu else {
        std::process::exit(if failed > 0 { 1 } else { 0 });
    };
    // The comparison must be able to fail: vector_add with one `add` turned into `sub` in its PTX.
    if selected("vector_add") {
        let cs = cases(&mut rng);
        match check_case(Some(&gpu), &cs[0], &mut rng, true) {
            Ok((false, msg)) => println!("PASS self-test: corrupted vector_add is caught ({msg})"),
            other => {
                failed += 1;
                println!("FAIL self-test: corrupted vector_add was not caught: {other:?}");
            }
        }
    }
    if selected("print") {
        report(&mut failed, "print", debug::check_print(rng.next_u64()).map(|m| (true, m)));
    }
    if selected("assert(fail)") {
        report(&mut failed, "assert(fail)", debug::check_assert_fail().map(|m| (true, m)));
    }
    if !flag("--no-timing") && selected("timing") {
        if let Err(e) = time_vector_add(&gpu) {
            failed += 1;
            println!("FAIL timing: {e}");
        }
    }
    if failed > 0 {
        std::process::exit(1);
    }
}
