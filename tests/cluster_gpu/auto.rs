//! The GPU check of auto-mode kernels spread over a cluster's CTAs (`tests/kernels/auto_clusters.py`), shared by
//! `tests/auto_clusters.rs` (skipped without a GPU) and `examples/cluster_check.rs`: an elementwise kernel, a row
//! softmax whose rows the CTAs split (its maximum and sum meet in distributed shared memory), a tile spread by
//! rows that is reduced both ways and goes through global memory across `tl.debug_barrier()`, and a pipelined
//! `wgmma` dot (from pointers, and through TMA descriptors the kernel makes), each at 2 and 4 CTAs on fresh random inputs with the outputs poisoned (NaN), against the
//! interpreter on the same inputs. Masked-off elements must keep their poison on both sides.

use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::runtime::{Gpu, KArg};
use tessel::tile::KernelConfig;
use tessel::tile::ScalarType::{F16, F32, I32};
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_math::testing::Rng;

/// One argument of a case: an input buffer (f32, or f16 from values it holds exactly), an output buffer of `n`
/// floats, or an i32 (specialized on divisibility by 16, as Triton's launcher does).
enum A {
    In(Vec<f32>),
    In16(Vec<f32>),
    Out(usize),
    Int(i32),
}

/// A kernel of the file, its constexprs, grid, warps and arguments.
struct Case {
    kernel: &'static str,
    consts: Vec<i64>,
    grid2: [u32; 2],
    warps: u32,
    args: Vec<A>,
    /// Errors are relative to `max(|want|, floor)`: sums of random values cancel (a dot's, a tile's row sums),
    /// so they are measured against 1 there.
    floor: f32,
    /// The largest error allowed: a dot's products add up in another order on the tensor cores.
    tol: f64,
}

fn cases(seed: u64) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let mut floats =
        |n: usize, scale: f64| -> Vec<f32> { rng.vec(n).into_iter().map(|v| (scale * v) as f32).collect() };
    let (n, rows, cols, stride) = (100_003usize, 37usize, 12_000usize, 16_384usize);
    let (tr, tc, tiles) = (128usize, 128usize, 50usize);
    let (m, n2, k) = (1000usize, 528usize, 320usize);
    let mut halves =
        |n: usize| -> Vec<f32> { floats(n, 1.0).into_iter().map(|v| half::f16::from_f32(v).to_f32()).collect() };
    let (a, b) = (halves(m * k), halves(k * n2));
    vec![
        Case {
            kernel: "add_masked",
            consts: vec![1024],
            grid2: [n.div_ceil(1024) as u32, 1],
            warps: 4,
            args: vec![A::In(floats(n, 1.0)), A::In(floats(n, 1.0)), A::Out(n), A::Int(n as i32)],
            floor: 1e-30,
            tol: 1e-5,
        },
        Case {
            kernel: "row_softmax",
            consts: vec![16384],
            grid2: [rows as u32, 1],
            warps: 8,
            args: vec![
                A::In(floats(rows * stride, 4.0)),
                A::Out(rows * stride),
                A::Int(cols as i32),
                A::Int(stride as i32),
            ],
            floor: 1e-30,
            tol: 1e-5,
        },
        Case {
            kernel: "rows_then_columns",
            consts: vec![tr as i64, tc as i64],
            grid2: [tiles as u32, 1],
            warps: 4,
            args: vec![
                A::In(floats(tiles * tr * tc, 1.0)),
                A::Out(tiles * tr),
                A::Out(tiles * tc),
                A::Out(tiles * tr * tc),
                A::Out(tiles * tr * tc),
            ],
            floor: 1.0,
            tol: 1e-5,
        },
        // A pipelined wgmma dot: each CTA takes its rows of the 128x128 tile (4 CTAs: rows and columns halved).
        dot_case("dot_tiles", 128, (&a, &b), [m, n2, k]),
        // The same through TMA, with tensor maps the kernel makes in each CTA's scratch slots: each CTA copies
        // its 64 rows of A and the columns of B it needs into its ring.
        dot_case("device_desc_dot_tiles", 64, (&a, &b), [m, n2, k]),
    ]
}

/// A `C = A @ B` kernel of the file (`dot_tiles`'s arguments) over 128 x `bn` tiles, K in steps of 32.
fn dot_case(kernel: &'static str, bn: usize, (a, b): (&[f32], &[f32]), [m, n, k]: [usize; 3]) -> Case {
    Case {
        kernel,
        consts: vec![128, bn as i64, 32],
        grid2: [m.div_ceil(128) as u32, n.div_ceil(bn) as u32],
        warps: 4,
        args: vec![
            A::In16(a.to_vec()),
            A::In16(b.to_vec()),
            A::Out(m * n),
            A::Int(m as i32),
            A::Int(n as i32),
            A::Int(k as i32),
        ],
        floor: 1.0,
        tol: 1e-4,
    }
}

/// Runs every case at 2 and 4 CTAs on `gpu` and in the interpreter; a line per run, or the first mismatch.
pub fn check(gpu: &Gpu, source: &str, file: &str, seed: u64) -> Result<String, String> {
    let mut report = String::new();
    for ctas in [2u32, 4] {
        for case in cases(seed + ctas as u64) {
            let mut spec_args: Vec<ArgSpec> = case
                .args
                .iter()
                .map(|a| match a {
                    A::In(_) | A::Out(_) => ArgSpec::Pointer(F32, true),
                    A::In16(_) => ArgSpec::Pointer(F16, true),
                    A::Int(x) => ArgSpec::Int(I32, x % 16 == 0),
                })
                .collect();
            spec_args.extend(case.consts.iter().map(|&c| ArgSpec::Constexpr(ConstValue::Int(c))));
            let config = KernelConfig { num_warps: case.warps, num_ctas: ctas, ..KernelConfig::DEFAULT };
            let spec = Specialization::with_config(spec_args, config);
            let what = format!("{} ({ctas} CTAs)", case.kernel);
            let kernel = tessel::load(gpu, source, case.kernel, &spec).map_err(|e| format!("{file}: {what}: {e}"))?;
            let mut bufs = Vec::new();
            let mut mem = Memory::new();
            let mut iargs = Vec::new();
            let mut outs = Vec::new();
            for (i, a) in case.args.iter().enumerate() {
                match a {
                    A::In(_) | A::In16(_) | A::Out(_) => {
                        let (host, elem) = match a {
                            A::In(v) => (v.clone(), F32),
                            A::In16(v) => (v.clone(), F16),
                            A::Out(n) => (vec![f32::NAN; *n], F32),
                            A::Int(_) => unreachable!("matched above"),
                        };
                        let buf = if elem == F16 {
                            let bits: Vec<u16> = host.iter().map(|&x| half::f16::from_f32(x).to_bits()).collect();
                            gpu.upload_slice(&bits)
                        } else {
                            gpu.upload_slice(&host)
                        };
                        bufs.push(Some(buf.map_err(|e| e.to_string())?));
                        let id =
                            mem.alloc_from(format!("a{i}"), elem, &host.iter().map(|&x| x as f64).collect::<Vec<_>>());
                        iargs.push(Arg::Buffer(id));
                        if matches!(a, A::Out(_)) {
                            outs.push((i, id));
                        }
                    }
                    A::Int(x) => {
                        bufs.push(None);
                        iargs.push(Arg::Int(*x as i64));
                    }
                }
            }
            let kargs: Vec<KArg> = case
                .args
                .iter()
                .zip(&bufs)
                .map(|(a, b)| match (a, b) {
                    (A::Int(x), _) => KArg::I32(*x),
                    (_, Some(b)) => b.into(),
                    _ => unreachable!("every buffer argument was uploaded"),
                })
                .collect();
            let grid = [case.grid2[0], case.grid2[1], 1];
            kernel.launch(gpu, grid, &kargs).map_err(|e| format!("{what}: launch: {e}"))?;
            gpu.synchronize().map_err(|e| format!("{what}: {e}"))?;
            tessel::interpret(source, case.kernel, &spec, &iargs, grid, &mut mem)
                .map_err(|e| format!("{what}: interpreter: {e}"))?;
            let mut worst = 0.0f64;
            for (i, id) in outs {
                let got: Vec<f32> =
                    gpu.download_vec(bufs[i].as_ref().expect("an output buffer")).map_err(|e| e.to_string())?;
                let want = mem.buffer(id).bytes.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                for (k, (g, w)) in got.iter().zip(want).enumerate() {
                    // Masked-off elements keep their poison on both sides.
                    if g.is_nan() && w.is_nan() {
                        continue;
                    }
                    if g.is_nan() || w.is_nan() {
                        return Err(format!("{what}: argument {i}, element {k}: GPU {g}, interpreter {w}"));
                    }
                    let err = ((g - w).abs() / w.abs().max(case.floor)) as f64;
                    worst = worst.max(err);
                    if err > case.tol {
                        return Err(format!("{what}: argument {i}, element {k}: GPU {g}, interpreter {w}"));
                    }
                }
            }
            report += &format!("{what}: equal to the interpreter (largest relative error {worst:.1e})\n");
        }
    }
    Ok(report)
}
