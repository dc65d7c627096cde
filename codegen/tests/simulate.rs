//! Runs the PTX of the `tests/ir/` kernels on the CPU with the SIMT simulator of `ptx_sim` and compares every
//! output with the reference interpreter: random inputs, poisoned outputs, integers exact, floats within a
//! tolerance (`tessel_interp::compare` under `Rules::STRICT`), as `runtime/examples/gpu_check.rs` does on a GPU.
//! This checks what ptxas cannot: that the emitted code computes the right values and has its barriers. The
//! simulator follows the PTX ISA's instruction semantics; what it cannot vouch for is the hardware itself (run
//! `gpu_check` on a GPU for that).

use tessel_ptx_sim as ptx_sim;

use tessel_codegen::compile;
use tessel_interp::compare::{Failure, Rules, compare_bytes};
use tessel_interp::memory::Memory;
use tessel_interp::{Arg, run};
use tessel_math::testing::Rng;
use tessel_tile::types::ScalarType::{self, *};

/// A kernel argument: an input buffer (element type, length, scale: floats uniform in `[-scale, scale)`,
/// integers in `[0, scale)`), a random buffer the kernel also writes, a poisoned output, or an `i32`.
enum A {
    In(ScalarType, usize, f64),
    /// A buffer read and written (random initial values).
    InOut(ScalarType, usize, f64),
    Out(ScalarType, usize),
    Int(i64),
}

/// Runs `file` on the simulator and the interpreter; returns the worst relative error over float outputs and
/// fails on any integer difference or any output element written by only one side.
fn check(file: &str, grid: u32, args: &[A], seed: u64) -> f64 {
    compare(file, grid, args, seed, |ptx| ptx).unwrap_or_else(|e| panic!("{e}"))
}

/// [`check`] on the PTX as `edit` leaves it, with the failures as errors.
fn compare(file: &str, grid: u32, args: &[A], seed: u64, edit: impl Fn(String) -> String) -> Result<f64, String> {
    let path = format!("{}/tests/ir/{file}.tir", env!("CARGO_MANIFEST_DIR"));
    let f = tessel_tile::parse::parse_func(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let kernel = compile(&f).unwrap();
    let prog = ptx_sim::Program::parse(&edit(kernel.ptx)).unwrap();
    let mut rng = Rng::new(seed);
    let mut mem = Memory::new();
    let (mut iargs, mut sargs, mut outs) = (Vec::new(), Vec::new(), Vec::new());
    let mut global = ptx_sim::Global::default();
    for (i, a) in args.iter().enumerate() {
        match a {
            A::Int(v) => {
                iargs.push(Arg::Int(*v));
                sargs.push(*v as u64);
            }
            A::In(e, n, _) | A::InOut(e, n, _) | A::Out(e, n) => {
                let scale = match a {
                    A::In(.., s) | A::InOut(.., s) => Some(*s),
                    _ => None,
                };
                let vals: Vec<f64> = (0..*n)
                    .map(|_| match scale {
                        Some(s) if e.is_float() => rng.uniform() * s,
                        Some(s) => rng.below(s as u64) as f64,
                        None if e.is_float() => f64::NAN,
                        None => -1.0,
                    })
                    .collect();
                let id = mem.alloc_from(format!("arg{i}"), *e, &vals);
                let bytes = mem.buffer(id).bytes.clone();
                let dev = if scale.is_none() { vec![0xFF; bytes.len()] } else { bytes };
                let addr = global.alloc(dev);
                iargs.push(Arg::Buffer(id));
                sargs.push(addr);
                if !matches!(a, A::In(..)) {
                    outs.push((id, addr, *e));
                }
            }
        }
    }
    ptx_sim::run(&prog, &mut global, &sargs, [grid, 1, 1], kernel.num_warps * 32, kernel.shared_bytes)
        .map_err(|e| format!("{file}: simulator: {e}"))?;
    run(&f, &iargs, [grid, 1, 1], &mut mem).unwrap_or_else(|e| panic!("{file}: interpreter: {e}"));
    let mut worst: f64 = 0.0;
    for (id, addr, e) in outs {
        let d = compare_bytes(e, &mem.buffer(id).bytes, global.bytes(addr));
        match d.element_failure(Rules::STRICT) {
            Some(Failure::NanOnOneSide(x) | Failure::IntDiffers(x)) => {
                let (i, g, w) = (x.index, x.actual, x.expected);
                return Err(format!("{file}: output element {i}: simulated {g}, interpreter {w}"));
            }
            Some(_) => return Err(format!("{file}: an output with no element written")),
            None => {}
        }
        // Integer outputs are exact here (error 0); the callers bound the float error.
        worst = worst.max(d.rel_err);
    }
    Ok(worst)
}

fn seeds() -> impl Iterator<Item = u64> {
    [0x5eed, 0xbeef, 0x1234_5678].into_iter()
}

#[test]
fn fma_dots_match_the_interpreter() {
    for seed in seeds() {
        let k = 16 * (1 + seed as usize % 5);
        let args = [A::In(F16, 32 * k, 1.0), A::In(F16, k * 32, 1.0), A::Out(F32, 1024), A::Int(k as i64)];
        let err = check("dot_fma", 1, &args, seed);
        assert!(err < 1e-6, "dot_fma: {err}");
        let err = check("dot_tf32", 1, &[A::In(F32, 128, 1.0), A::In(F32, 128, 1.0), A::InOut(F32, 256, 1.0)], seed);
        assert!(err < 1e-6, "dot_tf32: {err}");
        // i16 operands (shifted to [-1000, 1000)) into i32, f16 into an f16 accumulator, f32 into f64.
        let t = [
            A::In(I16, 256, 2000.0),
            A::In(I16, 256, 2000.0),
            A::InOut(I32, 256, 1e6),
            A::In(F16, 256, 1.0),
            A::In(F16, 256, 1.0),
            A::InOut(F16, 256, 1.0),
            A::In(F32, 256, 1.0),
            A::In(F32, 256, 1.0),
            A::InOut(F64, 256, 1.0),
        ];
        let err = check("dot_types", 1, &t, seed);
        assert!(err < 1e-6, "dot_types: {err}");
        let err = check("dot_batched", 1, &[A::In(F16, 256, 1.0), A::In(F16, 256, 1.0), A::Out(F32, 512)], seed);
        assert!(err < 1e-6, "dot_batched: {err}");
    }
}

#[test]
fn shape_ops_match_the_interpreter() {
    for seed in seeds() {
        let p = [A::In(F16, 2048, 8.0), A::Out(F16, 2048), A::In(F32, 512, 8.0), A::Out(F32, 512)];
        assert_eq!(check("permute", 1, &p, seed), 0.0);
        let r = [A::In(F32, 1024, 8.0), A::Out(F32, 1024), A::In(F16, 2048, 8.0), A::Out(F16, 2048)];
        assert_eq!(check("reshape", 1, &r, seed), 0.0);
        let j = [
            A::In(F32, 256, 8.0),
            A::In(F32, 256, 8.0),
            A::Out(F32, 512),
            A::Out(F32, 256),
            A::Out(F32, 256),
            A::Out(F32, 512),
        ];
        assert_eq!(check("join_split", 1, &j, seed), 0.0);
    }
}

#[test]
fn scans_match_the_interpreter() {
    for seed in seeds() {
        let c = [
            A::In(I32, 2048, 1000.0),
            A::In(F32, 2048, 1.0),
            A::Out(I32, 2048),
            A::Out(F32, 2048),
            A::Out(I32, 2048),
            A::In(I32, 512, 1000.0),
            A::Out(I32, 512),
        ];
        let err = check("cumsum", 1, &c, seed);
        assert!(err < 1e-5, "cumsum: {err}");
        let r = [
            A::In(F32, 2048, 1.0),
            A::Out(F32, 2048),
            A::In(I32, 2048, 1000.0),
            A::Out(I32, 2048),
            A::In(I32, 512, 1000.0),
            A::Out(I32, 512),
        ];
        let err = check("scan_reverse", 1, &r, seed);
        assert!(err < 1e-5, "scan_reverse: {err}");
    }
}

#[test]
fn native_half_arithmetic_matches_the_interpreter() {
    // Packed and scalar f16/bf16 add/sub/mul round once, exactly as the interpreter's f32 route: bit-equal.
    for seed in seeds() {
        let args = [
            A::In(F16, 512, 8.0),
            A::In(F16, 512, 8.0),
            A::In(BF16, 512, 8.0),
            A::In(BF16, 512, 8.0),
            A::Out(F16, 512),
            A::Out(BF16, 512),
            A::Out(F16, 1),
            A::Out(F16, 128),
        ];
        assert_eq!(check("halves", 1, &args, seed), 0.0);
    }
}

#[test]
fn the_comparison_can_fail() {
    // One Hillis-Steele step reading the wrong lanes, one accumulator skipping a product: both must be caught.
    let c = [
        A::In(I32, 2048, 1000.0),
        A::In(F32, 2048, 1.0),
        A::Out(I32, 2048),
        A::Out(F32, 2048),
        A::Out(I32, 2048),
        A::In(I32, 512, 1000.0),
        A::Out(I32, 512),
    ];
    let wrong_lane = |p: String| p.replacen("shfl.sync.up.b32", "shfl.sync.down.b32", 1);
    let e = compare("cumsum", 1, &c, 1, wrong_lane).unwrap_err();
    assert!(e.contains("output element"), "integer outputs are held exact: {e}");
    // Dropping either barrier of the first warp exchange is a race the simulator reports, even though its
    // lockstep execution would compute the right values.
    for nth in [0, 1] {
        let drop_barrier = |p: String| {
            let at = p.match_indices("bar.sync 0;").nth(nth).unwrap().0;
            format!("{}{}", &p[..at], &p[at + "bar.sync 0;".len()..])
        };
        let e = compare("cumsum", 1, &c, 1, drop_barrier).unwrap_err();
        assert!(e.contains("without a barrier"), "{e}");
    }
    let d = [A::In(F16, 32 * 32, 1.0), A::In(F16, 32 * 32, 1.0), A::Out(F32, 1024), A::Int(32)];
    assert!(compare("dot_fma", 1, &d, 1, |p| p).unwrap() < 1e-6);
    let skip = |p: String| {
        let at = p.find("fma.rn.f32").unwrap();
        let end = at + p[at..].find('\n').unwrap();
        let (d, rest) = p[at + 11..end].split_once(',').unwrap();
        let acc = rest.rsplit(',').next().unwrap().trim_end_matches(';').trim();
        format!("{}mov.f32 {d}, {acc};{}", &p[..at], &p[end..])
    };
    let err = compare("dot_fma", 1, &d, 1, skip).unwrap();
    assert!(err > 1e-3, "a missing product must show in the float error: {err}");
}

/// Sums along the lanes, the warps and a thread's registers (axis 1 of a `[1,4],[4,8],[1,4]` blocked tile), a sum
/// of products the code generator contracts into `fma` steps, and a sum along the lanes alone (axis 0): the
/// interpreter reduces an operand that has a layout in the generated code's order (`tessel_interp`'s
/// `reduce_order.rs`), so every sum is the same float, though random f32 addends round differently in any other
/// order.
#[test]
fn reductions_match_the_interpreter_bit_for_bit() {
    for seed in seeds() {
        let args = [A::In(F32, 512, 1e3), A::In(F32, 512, 1.0), A::Out(F32, 4), A::Out(F32, 4), A::Out(F32, 128)];
        assert_eq!(check("reduce_order", 1, &args, seed), 0.0, "seed {seed:#x}");
    }
}

#[test]
fn earlier_kernels_match_the_interpreter() {
    let err = check("softmax_f16", 4, &[A::In(F16, 16 * 256, 4.0), A::Out(F16, 16 * 256), A::Int(256), A::Int(200)], 7);
    assert!(err < 2e-3, "softmax_f16: {err}");
    assert_eq!(check("argmax", 3, &[A::In(F32, 12 * 128, 10.0), A::Out(F32, 12), A::Out(I32, 12)], 7), 0.0);
    let c = [A::In(F16, 1024, 8.0), A::Out(F16, 1024), A::In(F32, 256, 8.0), A::Out(F32, 256)];
    assert_eq!(check("convert", 1, &c, 7), 0.0);
    let err = check("loop_acc", 1, &[A::In(F32, 48 * 512, 1.0), A::Out(F32, 520), A::Int(48)], 7);
    assert!(err < 1e-5, "loop_acc: {err}");
}

/// Integer <-> pointer casts: a pointer through an `i64` and back (with byte arithmetic in between), pointer to
/// pointer bitcasts, and an `i32` zero-extended to an address (`small + offs` from -5: negative values become
/// addresses below 2^32, as LLVM's `inttoptr` makes them).
#[test]
fn int_pointer_casts_match_the_interpreter() {
    for seed in seeds() {
        let args = [A::In(F32, 64, 4.0), A::Out(F32, 64), A::Out(I64, 64), A::Int(-5)];
        assert_eq!(check("int_ptr_casts", 1, &args, seed), 0.0);
    }
}

/// f32 sin/cos (libdevice's sequence, `tessel_math::trig::sincos32`, which the interpreter runs too) equal to
/// the interpreter's bit for bit, from small arguments to ±1e10; float `%` (f32, f16, f64: Triton's `frem` expansion) and FTZ
/// floor/ceil equal to the interpreter's.
#[test]
fn accurate_trig_and_tritons_frem_match_the_interpreter() {
    for (seed, scale) in seeds().zip([1e10, 1000.0, 3.0]) {
        let args = [
            A::In(F32, 128, scale),
            A::In(F32, 128, 10.0),
            A::Out(F32, 128),
            A::Out(F32, 128),
            A::Out(F32, 128),
            A::Out(F16, 128),
            A::Out(F64, 128),
            A::Out(F32, 128),
        ];
        let err = check("trig_fmod", 1, &args, seed);
        assert_eq!(err, 0.0, "trig_fmod at scale {scale}");
    }
}

/// Integer `/` and `%` with zero divisors, as Triton's code computes them on NVIDIA: all ones, except 64-bit
/// operands whose high halves are zero, which go through `div.u32`/`rem.u32` (LLVM's bypass of slow division)
/// and give 4294967295. Dividends in [0, 4) (bypassed), (a − 2)·3000000001 (negative or above 2^32: the 64-bit
/// instruction), as i64, u64 and i32; divisors in [0, 3).
#[test]
fn integer_division_by_zero_matches_the_interpreter() {
    for seed in seeds() {
        let mut args = vec![A::In(I64, 64, 4.0), A::In(I64, 64, 3.0)];
        args.extend([I64, I64, I64, I64, U64, U64, I32, I32].map(|t| A::Out(t, 64)));
        assert_eq!(check("int_div", 1, &args, seed), 0.0);
    }
}

/// f64 sin/cos (the Payne–Hanek routine of `tessel_math::trig::sincos64`) against the interpreter's (the host's) values, from
/// ordinary arguments to ±1e300.
#[test]
fn f64_trig_matches_the_interpreter() {
    for (seed, scale) in seeds().zip([1e300, 1e6, 3.0]) {
        let err = check("trig64", 1, &[A::In(F64, 64, scale), A::Out(F64, 64), A::Out(F64, 64)], seed);
        assert!(err < 1e-15, "trig64 at scale {scale}: {err}");
    }
}

/// libdevice's f64 j0/j1/y0/y1 (`tessel_math::bessel::bessel_j64`, with `trig::reduce64`'s Payne–Hanek reduction past 2^31)
/// equal to the interpreter's bit for bit: the same sequence, emitted as PTX and run on the CPU model (the
/// simulator's `rcp`/`rsqrt.approx` are the model's correctly rounded ones), over ±1e300, ±12 and ±3.
#[test]
fn f64_bessel_functions_match_the_interpreter() {
    for (seed, scale) in seeds().zip([1e300, 12.0, 3.0]) {
        let mut args = vec![A::In(F64, 64, scale)];
        args.extend((0..4).map(|_| A::Out(F64, 64)));
        assert_eq!(check("bessel64", 1, &args, seed), 0.0, "bessel64 at scale {scale}");
    }
}

/// libdevice's jn/yn (`tessel_math::bessel::bessel_n`: the recurrence as a loop over the warp, each lane frozen
/// once its own steps are done) equal to the interpreter's bit for bit, f32 and f64, for orders 0 to 11 (and 0
/// to 99) at x over ±30 and ±3: lanes of one warp on the forward and the backward recurrence, with different
/// trip counts (one warp, two elements a lane).
#[test]
fn bessel_functions_of_integer_order_match_the_interpreter() {
    for (seed, (scale, orders)) in seeds().zip([(30.0, 12.0), (3.0, 12.0), (30.0, 100.0)]) {
        let mut args = vec![A::In(F32, 64, scale), A::In(F64, 64, scale), A::In(I32, 64, orders)];
        args.extend([F32, F32, F64, F64].map(|t| A::Out(t, 64)));
        assert_eq!(check("bessel_n", 1, &args, seed), 0.0, "bessel_n at scale {scale}, orders below {orders}");
    }
}

/// The libdevice routines (libdevice.rs) against the interpreter's correctly rounded values: 20 f32 functions
/// (arguments in [-3, 3), transformed into each domain) within an f32 ulp, 5 f64 ones within 3 f64 ulps.
#[test]
fn libdevice_functions_match_the_interpreter() {
    for seed in seeds() {
        let mut args = vec![A::In(F32, 64, 3.0), A::In(F32, 64, 3.0)];
        args.extend((0..20).map(|_| A::Out(F32, 64)));
        args.extend((0..5).map(|_| A::Out(F64, 64)));
        let err = check("libdevice", 1, &args, seed);
        assert!(err < 1.2e-7, "libdevice: {err}");
    }
}

/// libdevice's exact `fmod` (the loop of cfmod.rs, uniform per warp through `vote.any`; one warp) equals the
/// interpreter's, bit for bit in effect (f32 and f64), from quotients near 1 to 1e10.
#[test]
fn exact_fmod_matches_the_interpreter() {
    for (seed, scale) in seeds().zip([1e10, 1000.0, 3.0]) {
        let args = [A::In(F32, 128, scale), A::In(F32, 128, 3.0), A::Out(F32, 128), A::Out(F64, 128)];
        assert_eq!(check("cfmod", 1, &args, seed), 0.0, "cfmod at scale {scale}");
    }
}

/// add/sub/mul/div/sqrt rounded toward zero, down and up (f32 and f64) equal the interpreter's exactly
/// rounded results.
#[test]
fn directed_rounding_matches_the_interpreter() {
    for (seed, scale) in seeds().zip([1e30, 1000.0, 3.0]) {
        let mut args = vec![A::In(F32, 64, scale), A::In(F32, 64, 3.0)];
        args.extend((0..15).map(|_| A::Out(F32, 64)));
        args.extend((0..15).map(|_| A::Out(F64, 64)));
        assert_eq!(check("rounding", 1, &args, seed), 0.0, "rounding at scale {scale}");
    }
}

#[test]
fn stmatrix_stores_match_the_interpreter() {
    let path = format!("{}/tests/ir/stmatrix.tir", env!("CARGO_MANIFEST_DIR"));
    let f = tessel_tile::parse::parse_func(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let ptx = compile(&f).unwrap().ptx;
    let count = |form: &str| ptx.lines().filter(|l| l.contains(form)).count();
    // 64x64 and 64x32 tiles: 32 and 16 registers a thread, so 4 and 2 x4 stores; 64x8: 4 registers, one x2.
    assert_eq!((count("stmatrix.sync.aligned.m8n8.x4"), count("stmatrix.sync.aligned.m8n8.x2")), (6, 1), "{ptx}");
    assert_eq!(count("st.shared"), 0, "{ptx}");
    for seed in seeds() {
        let args =
            [(64, 64), (64, 32), (64, 8)].into_iter().flat_map(|(r, c)| [A::In(F16, r * c, 8.0), A::Out(F16, r * c)]);
        assert_eq!(check("stmatrix", 1, &args.collect::<Vec<_>>(), seed), 0.0);
    }
}

/// Tiles read from swizzled buffers into mma.sync's operand layouts (`ldmatrix.tir`): plain `ldmatrix` where
/// the operand's K runs along the buffer's rows, `.trans` where M or N does, every element back in place.
#[test]
fn ldmatrix_loads_match_the_interpreter() {
    let path = format!("{}/tests/ir/ldmatrix.tir", env!("CARGO_MANIFEST_DIR"));
    let f = tessel_tile::parse::parse_func(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let ptx = compile(&f).unwrap().ptx;
    let count = |form: &str| ptx.lines().filter(|l| l.contains(form)).count();
    // Each warp holds a 32x32 share of each tile (2x2 warps; A is repeated along N, B along M): 32 elements a
    // thread, four x4 loads a tile.
    let (plain, trans) = (count("ldmatrix.sync.aligned.m8n8.x4.shared"), count("ldmatrix.sync.aligned.m8n8.x4.trans"));
    assert_eq!((plain, trans), (8, 8), "{ptx}");
    for seed in seeds() {
        let tiles = [(64, 32), (32, 64), (64, 32), (32, 64)];
        let args = tiles.into_iter().flat_map(|(r, c)| [A::In(F16, r * c, 8.0), A::Out(F16, r * c)]);
        assert_eq!(check("ldmatrix", 1, &args.collect::<Vec<_>>(), seed), 0.0);
    }
}

/// 8-bit elements shuffle four to a word (`shuffle8.tir`): an i8 register/lane transpose (sign-extended when
/// widened afterwards), a u8 conversion whose destination registers each come from another shuffle (the
/// per-register `selp` path), and fp8 made from f32 pairs and shuffled out of them; every value exact.
#[test]
fn byte_shuffles_match_the_interpreter() {
    for seed in seeds() {
        let args = [
            A::In(I8, 256, 256.0),
            A::In(U8, 256, 256.0),
            A::In(F32, 256, 100.0),
            A::Out(I32, 256),
            A::Out(I32, 256),
            A::Out(F32, 256),
            A::Out(F8E5M2, 256),
        ];
        assert_eq!(check("shuffle8", 1, &args, seed), 0.0);
    }
}

/// 8-bit tiles stored into shared memory two and four bytes at a time (`stores8.tir`): fp8 pairs straight from
/// their f32 -> fp8 conversions, loaded i8 packed by byte permutes; read back through the swizzle, exact.
#[test]
fn packed_byte_stores_match_the_interpreter() {
    let path = format!("{}/tests/ir/stores8.tir", env!("CARGO_MANIFEST_DIR"));
    let f = tessel_tile::parse::parse_func(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let ptx = compile(&f).unwrap().ptx;
    let count = |form: &str| ptx.lines().filter(|l| l.contains(form)).count();
    // 64x64 over 128 threads: 32 fp8 a thread in pairs (16 two-byte stores), 32 i8 in fours (8 four-byte ones).
    assert_eq!((count("st.shared.b8"), count("st.shared.b16"), count("st.shared.b32")), (0, 16, 8), "{ptx}");
    for seed in seeds() {
        let args = [
            A::In(F32, 64 * 64, 100.0),
            A::Out(F32, 64 * 64),
            A::Out(F8E5M2, 64 * 64),
            A::In(I8, 64 * 64, 256.0),
            A::Out(I8, 64 * 64),
        ];
        assert_eq!(check("stores8", 1, &args, seed), 0.0);
    }
}

/// Runs hand-written PTX (the body of an entry whose one parameter is an output of `n` u32, poisoned) over one
/// CTA of `threads` threads with 1 KiB of shared memory: the output, or the simulator's error.
fn run_ptx(body: &str, threads: u32, n: usize) -> Result<Vec<u32>, String> {
    let ptx = format!(".visible .entry k(\n    .param .u64 k_param_0\n)\n{{\n{body}\n}}\n");
    let prog = ptx_sim::Program::parse(&ptx)?;
    let mut global = ptx_sim::Global::default();
    let out = global.alloc(vec![0xff; 4 * n]);
    ptx_sim::run(&prog, &mut global, &[out], [1, 1, 1], threads, 1024)?;
    Ok(global.bytes(out).chunks(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect())
}

/// Stores `%r6` to `out[%r3]` and returns.
const STORE_AND_RET: &str = "    ld.param.u64 %rd1, [k_param_0];
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.b32 [%rd3], %r6;
    ret;";

/// Warp 0 produces a word a lane in shared memory, warp 1 consumes it: a hand-off at named barrier 1 (the
/// producer arrives and exits, the consumer syncs), the shape of a worker partition's hand-off.
fn named_handoff(arrive: &str, sync: &str) -> String {
    format!(
        "    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;
    and.b32 %r3, %r1, 31;
    shl.b32 %r4, %r3, 2;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra $L_consumer;
    mul.lo.u32 %r5, %r3, 3;
    st.shared.b32 [%r4], %r5;
    {arrive}
    exit;
$L_consumer:
    {sync}
    ld.shared.b32 %r6, [%r4];
{STORE_AND_RET}"
    )
}

/// Two warps on their own paths meet at a named barrier: the consumer reads what the producer wrote. Without
/// the barrier the read is a race, whichever warp runs first; with counts the warps never reach, a deadlock
/// naming the waiting warp, the barrier and what arrived.
#[test]
fn named_barriers_order_warps_on_their_own_paths() {
    let want: Vec<u32> = (0..32).map(|l| 3 * l).collect();
    assert_eq!(run_ptx(&named_handoff("bar.arrive 1, 64;", "bar.sync 1, 64;"), 64, 32).unwrap(), want);
    // The barrier id in a register, `barrier.sync`/`barrier.arrive` spellings.
    let reg =
        named_handoff("mov.u32 %r9, 1;\n    barrier.arrive %r9, 64;", "mov.u32 %r9, 1;\n    barrier.sync %r9, 64;");
    assert_eq!(run_ptx(&reg, 64, 32).unwrap(), want);
    let err = run_ptx(&named_handoff("", ""), 64, 32).unwrap_err();
    assert!(err.contains("shared byte 0: thread 32 reads what thread 0 wrote without a barrier between"), "{err}");
    let err = run_ptx(&named_handoff("bar.arrive 1, 96;", "bar.sync 1, 96;"), 64, 32).unwrap_err();
    assert!(err.contains("deadlock"), "{err}");
    assert!(
        err.contains(
            "warp 1 at line 16: named barrier 1 (`bar.sync`), which counts 96 threads; 64 arrived (warps 0-1)"
        ),
        "{err}"
    );
    let err = run_ptx(&named_handoff("bar.arrive 1, 64;", "bar.sync 1, 96;"), 64, 32).unwrap_err();
    assert!(err.contains("named barrier 1: warp 1 counts 96 threads, the arrivals before it 64"), "{err}");
}

/// Warp 0's lanes store, `bar.warp.sync`, and one lane arrives on an mbarrier; warp 1 spins on `try_wait` and
/// reads: ordered by the phase the arrival completes. Without the wait it is a race; without the warp's own
/// barrier too, as the elected lane's release carries only its own store; with a barrier that expects two
/// arrivals, a deadlock naming the barrier and its phase.
#[test]
fn an_mbarrier_hand_off_orders_a_producer_warp_before_its_consumer() {
    let body = |count: u32, sync: &str, wait: &str| {
        format!(
            "    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;
    and.b32 %r3, %r1, 31;
    shl.b32 %r4, %r3, 2;
    mov.u32 %r10, 512;
    setp.eq.u32 %p0, %r1, 0;
    @%p0 mbarrier.init.shared.b64 [%r10], {count};
    bar.sync 0;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra $L_consumer;
    mul.lo.u32 %r5, %r3, 3;
    st.shared.b32 [%r4], %r5;
    {sync}
    setp.eq.u32 %p2, %r3, 0;
    @%p2 mbarrier.arrive.release.cta.shared::cta.b64 _, [%r10], 1;
    exit;
$L_consumer:
    mov.u32 %r7, 0;
$L_wait:
    {wait}
    ld.shared.b32 %r6, [%r4];
{STORE_AND_RET}"
        )
    };
    let wait = "mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r10], %r7;\n    @!%p3 bra $L_wait;";
    let want: Vec<u32> = (0..32).map(|l| 3 * l).collect();
    assert_eq!(run_ptx(&body(1, "bar.warp.sync -1;", wait), 64, 32).unwrap(), want);
    let err = run_ptx(&body(1, "bar.warp.sync -1;", ""), 64, 32).unwrap_err();
    assert!(err.contains("shared byte 0: thread 32 reads what thread 0 wrote without a barrier between"), "{err}");
    let err = run_ptx(&body(1, "", wait), 64, 32).unwrap_err();
    assert!(err.contains("shared byte 4: thread 33 reads what thread 1 wrote without a barrier between"), "{err}");
    let err = run_ptx(&body(2, "bar.warp.sync -1;", wait), 64, 32).unwrap_err();
    assert!(
        err.contains(
            "warp 1 at line 24: mbarrier at shared 0x200, waiting for its phase of parity 0 (phase 0 running, which \
             still lacks 1 arrival(s)"
        ) && err.contains("deadlock"),
        "{err}"
    );
}

/// Predicated named barriers whose predicate is uniform within each warp but differs between warps (warps 0
/// and 2 meet at barrier 5, warps 1 and 3 at barrier 6), then barriers whose id is in a register (7 + warp % 2);
/// each warp's lane 0 writes a slot before each barrier and every lane reads the partner warp's after it. Then
/// warp 3 exits and the others meet at `bar.sync 0` without a count, which counts the live threads only (with
/// a count of 128 it never completes). Without the first barrier the partners race.
#[test]
fn predicated_named_barriers_pair_up_warps() {
    let body = |first: &str, last: &str| {
        format!(
            "    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;
    and.b32 %r11, %r2, 1;
    setp.eq.u32 %p1, %r11, 0;
    and.b32 %r12, %r1, 31;
    setp.eq.u32 %p5, %r12, 0;
    shl.b32 %r4, %r2, 2;
    xor.b32 %r5, %r2, 2;
    shl.b32 %r5, %r5, 2;
    add.u32 %r13, %r2, 1;
    @%p5 st.shared.b32 [%r4], %r13;
    {first}
    ld.shared.b32 %r6, [%r5];
    add.u32 %r8, %r11, 7;
    @%p5 st.shared.b32 [%r4+64], %r6;
    bar.sync %r8, 64;
    ld.shared.b32 %r7, [%r5+64];
    mul.lo.u32 %r6, %r6, 10;
    add.u32 %r6, %r6, %r7;
    mov.u32 %r3, %r1;
    ld.param.u64 %rd1, [k_param_0];
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.b32 [%rd3], %r6;
    setp.eq.u32 %p2, %r2, 3;
    @%p2 exit;
    {last}
    ret;"
        )
    };
    let pair = "@%p1 bar.sync 5, 64;\n    @!%p1 bar.sync 6, 64;";
    let want: Vec<u32> = (0..128).map(|t| t / 32).map(|w| 10 * ((w ^ 2) + 1) + w + 1).collect();
    assert_eq!(run_ptx(&body(pair, "bar.sync 0;"), 128, 128).unwrap(), want);
    let err = run_ptx(&body("@!%p1 bar.sync 6, 64;", "bar.sync 0;"), 128, 128).unwrap_err();
    assert!(err.contains("reads what thread 64 wrote without a barrier between"), "{err}");
    let err = run_ptx(&body(pair, "bar.sync 0, 128;"), 128, 128).unwrap_err();
    assert!(
        err.contains("warps 0-2 at line 32: named barrier 0 (`bar.sync`), which counts 128 threads; 96 arrived"),
        "{err}"
    );
}

/// A branch that diverges within a warp splits it; the two halves run converged again from where their paths
/// meet, so a shuffle there reads every lane, while a shuffle inside the `if` (half the warp on another path) is
/// refused.
#[test]
fn a_warp_split_by_a_branch_reconverges_and_shuffles_need_it_whole() {
    let body = |inside: &str| {
        format!(
            "    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra $L_skip;
    add.u32 %r2, %r1, 1;
    {inside}
$L_skip:
    shfl.sync.idx.b32 %r4, %r1, 5, 31, -1;
    add.u32 %r6, %r2, %r4;
    mov.u32 %r3, %r1;
{STORE_AND_RET}"
        )
    };
    let want: Vec<u32> = (0..32).map(|t| if t >= 16 { t + 1 } else { 0 } + 5).collect();
    assert_eq!(run_ptx(&body(""), 32, 32).unwrap(), want);
    let err = run_ptx(&body("shfl.sync.idx.b32 %r5, %r1, 5, 31, -1;"), 32, 32).unwrap_err();
    assert!(
        err.contains("line 10: `shfl.sync.idx.b32` needs warp 0 converged, but 16 of its 32 live threads"),
        "{err}"
    );
}
