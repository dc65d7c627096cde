//! The public Gluon tutorials' Blackwell entry kernels on the PTX simulator against the interpreter. The
//! tutorials are not part of this repository: set `TESSEL_GLUON_TUTORIALS` to the directory holding them
//! (python/tutorials/gluon of triton-lang/triton, as `bench/gluon_tutorials.py` takes it); without it the test
//! says so and passes. Each kernel runs unmodified at the configurations its tests use (the matmuls on
//! 208x416x304, ragged tiles), compiled for sm_100a, with the outputs poisoned on both sides; the interpreter's
//! results are checked against float64 by `bench/gluon_tutorials.py`.

#[path = "sim_common/mod.rs"]
mod sim_common;

use sim_common::{RunOptions, SimAndInterp, V, run_on};
use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::{self, *};
use tessel::tile::Target;
use tessel_math::testing::Rng;

fn tutorial(name: &str) -> Option<(String, String)> {
    let Some(dir) = std::env::var_os("TESSEL_GLUON_TUTORIALS") else {
        eprintln!("note: TESSEL_GLUON_TUTORIALS is not set; {name} is not simulated");
        return None;
    };
    let path = std::path::Path::new(&dir).join(name);
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some((path.display().to_string(), src))
}

fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

fn cb(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

fn desc(elem: ScalarType, block: &[u32]) -> ArgSpec {
    ArgSpec::TensorDesc { elem, block_shape: block.to_vec(), padding_nan: false, layout: None }
}

fn opts(file: &str, num_warps: u32) -> RunOptions<'_> {
    RunOptions { file, target: Target::Sm100a, num_warps, num_stages: 1, poison: true }
}

/// Asserts the simulator and the interpreter wrote the same, and every element.
fn check(what: &str, outs: Result<Vec<SimAndInterp>, String>) {
    let outs = outs.unwrap_or_else(|e| panic!("{what}: {e}"));
    for (i, (sim, interp)) in outs.iter().enumerate() {
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: output {i} has unwritten elements");
        assert_eq!(sim, interp, "{what}: output {i}, simulated PTX vs interpreter");
    }
}

#[test]
fn tcgen05_tutorial_kernels_agree_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("06-tcgen05.py") else { return };
    let ptr = ArgSpec::Pointer(F32, true);
    for m in [64u32, 128, 256] {
        for n in [64u32, 128] {
            for w in [4, 8] {
                let args = vec![ptr.clone(), ptr.clone(), c(m as i64), c(n as i64), c(w)];
                let x = Rng::new((m + n) as u64).vec((m * n) as usize);
                let vals = [V::Buf(F32, x), V::Out(F32, (m * n) as usize)];
                let what = format!("tmem_example_kernel {m}x{n}, {w} warps");
                check(&what, run_on(&src, "tmem_example_kernel", args, &opts(&file, w as u32), &vals, [1, 1, 1]));
            }
        }
    }
    for (m, n, k) in [(128u32, 128u32, 128u32), (64, 128, 128), (64, 256, 256), (256, 64, 64)] {
        for lhs_in_tmem in [false, true] {
            for commit in [false, true] {
                for w in [4u32, 8] {
                    let block = ConstValue::Tuple(vec![ConstValue::Int(m.min(128) as i64), ConstValue::Int(n as i64)]);
                    let args = vec![
                        desc(F16, &[m, k]),
                        desc(F16, &[k, n]),
                        desc(F32, &[m, n]),
                        desc(F32, &[m, n]),
                        ArgSpec::Constexpr(block),
                        cb(lhs_in_tmem),
                        cb(commit),
                        c(w as i64),
                    ];
                    let mut rng = Rng::new((m + n + k) as u64);
                    let vals = [
                        V::Desc(F16, Some(rng.vec((m * k) as usize)), vec![m, k]),
                        V::Desc(F16, Some(rng.vec((k * n) as usize)), vec![k, n]),
                        V::Desc(F32, Some(rng.vec((m * n) as usize)), vec![m, n]),
                        V::Desc(F32, None, vec![m, n]),
                    ];
                    let what = format!(
                        "small_mma_kernel {m}x{n}x{k}, LHS_IN_TMEM={lhs_in_tmem}, USE_COMMIT={commit}, {w} warps"
                    );
                    check(&what, run_on(&src, "small_mma_kernel", args, &opts(&file, w), &vals, [1, 1, 1]));
                }
            }
        }
    }
    let (m, n, k) = (208u32, 416u32, 304u32);
    for b in [64u32, 128] {
        for w in [4u32, 8] {
            for transpose_b in [false, true] {
                let b_shape = if transpose_b { [n, k] } else { [k, n] };
                let args =
                    vec![desc(F16, &[b, b]), desc(F16, &[b, b]), desc(F16, &[b, b]), cb(transpose_b), c(w as i64)];
                let mut rng = Rng::new(b as u64 + transpose_b as u64);
                let vals = [
                    V::Desc(F16, Some(rng.vec((m * k) as usize)), vec![m, k]),
                    V::Desc(F16, Some(rng.vec((k * n) as usize)), b_shape.to_vec()),
                    V::Desc(F16, None, vec![m, n]),
                ];
                let grid = [m.div_ceil(b), n.div_ceil(b), 1];
                let what = format!("blocked_matmul_kernel {b}^3, {w} warps, TRANSPOSE_B={transpose_b}");
                check(&what, run_on(&src, "blocked_matmul_kernel", args, &opts(&file, w), &vals, grid));
            }
            let args = vec![desc(F16, &[b, b]), desc(F16, &[b, b]), desc(F16, &[b, b]), c(w as i64)];
            let mut rng = Rng::new(3 * b as u64);
            let vals = [
                V::Desc(F16, Some(rng.vec((m * k) as usize)), vec![m, k]),
                V::Desc(F16, Some(rng.vec((k * n) as usize)), vec![k, n]),
                V::Desc(F16, None, vec![m, n]),
            ];
            let grid = [m.div_ceil(2 * b), n.div_ceil(b), 1];
            let what = format!("blocked_matmul_pipelined_kernel {b}^3, {w} warps");
            check(&what, run_on(&src, "blocked_matmul_pipelined_kernel", args, &opts(&file, w), &vals, grid));
        }
    }
}
