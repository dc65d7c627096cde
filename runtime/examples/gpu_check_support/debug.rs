//! `device_print` and `device_assert` on the GPU, each in a child process of `gpu_check` (`--child print SEED`,
//! `--child assert-fail`): vprintf output reaches the process's stdout only when the context synchronizes, and
//! a failed device assert leaves the CUDA context unusable, so neither can share the parent's process.
//!
//! Print: the child runs `print.tir` on fresh inputs derived from SEED; the parent collects the child's
//! `pid (...` lines and compares them, as a multiset (threads print in any order), with the lines the
//! interpreter prints for the same inputs. Floats differ in spelling only (`%.17g` on the GPU, Rust's shortest
//! round-trip decimal in the interpreter), so a trailing number is compared as the f64 it denotes; everything
//! else, hex values included, must match character for character. The comparison is then repeated against
//! the interpreter's lines for other inputs, which must differ (the check can fail).
//!
//! Assert: the child runs `assert.tir` with one negative input; the launch must fail at the synchronize and
//! the device runtime must have printed the assert's message.

use std::process::Command;

use tessel_codegen::compile;
use tessel_interp::memory::Memory;
use tessel_interp::{Arg, Fault, run};
use tessel_math::testing::Rng;
use tessel_runtime::{Gpu, KArg};
use tessel_tile::ir::Func;
use tessel_tile::types::ScalarType;

use super::ir_path;

const PRINT_GRID: u32 = 2;

fn parse(name: &str) -> Result<Func, String> {
    let path = ir_path(name);
    let src = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    tessel_tile::parse::parse_func(&src).map_err(|e| format!("{path}: {e}"))
}

/// The print kernel's inputs: 32 f32 values (integers, fractions, a negative zero, a tiny and a huge value)
/// and the scalar `n`.
fn print_inputs(seed: u64) -> (Vec<f32>, i64) {
    let mut rng = Rng::new(seed);
    let mut x: Vec<f32> = (0..32).map(|_| (rng.uniform() * 100.0) as f32).collect();
    x[0] = -0.0;
    x[1] = 3.0;
    x[2] = 1e-30 * (1.0 + rng.uniform() as f32);
    x[3] = 3e30;
    let n = rng.below(1000) as i64 - 500;
    (x, n)
}

fn f32_bytes(x: &[f32]) -> Vec<u8> {
    x.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Child side: runs the print kernel; its lines reach stdout at the synchronize.
pub fn print_child(seed: u64) -> Result<(), String> {
    let gpu = Gpu::new().map_err(|e| e.to_string())?;
    let (x, n) = print_inputs(seed);
    let kernel = compile(&parse("print")?).map_err(|e| e.to_string())?;
    let buf = gpu.upload(&f32_bytes(&x)).map_err(|e| e.to_string())?;
    let loaded = gpu.load(&kernel).map_err(|e| e.to_string())?;
    loaded.launch(&gpu, [PRINT_GRID, 1, 1], &[KArg::Buf(&buf), KArg::I32(n as i32)]).map_err(|e| e.to_string())?;
    gpu.synchronize().map_err(|e| e.to_string())
}

/// The interpreter's print lines for the inputs of `seed`.
fn interpreter_lines(seed: u64) -> Result<Vec<String>, String> {
    let (x, n) = print_inputs(seed);
    let mut mem = Memory::new();
    let vals: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let id = mem.alloc_from("in", ScalarType::F32, &vals);
    run(&parse("print")?, &[Arg::Buffer(id), Arg::Int(n)], [PRINT_GRID, 1, 1], &mut mem)
        .map_err(|e| format!("interpreter: {e}"))
}

/// The line with a trailing decimal number rewritten as Rust prints the f64 it denotes (hex values and other
/// text stay as they are).
fn canonical(line: &str) -> String {
    match line.rsplit_once(' ') {
        Some((head, last)) if !last.starts_with("0x") => match last.parse::<f64>() {
            Ok(v) => format!("{head} {v}"),
            Err(_) => line.to_string(),
        },
        _ => line.to_string(),
    }
}

fn sorted(lines: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = lines.into_iter().map(|l| canonical(&l)).collect();
    v.sort();
    v
}

/// Up to 5 lines of `a` that `b` lacks (as multisets).
fn missing(a: &[String], b: &[String]) -> Vec<String> {
    let mut rest = b.to_vec();
    let mut out = Vec::new();
    for l in a {
        match rest.iter().position(|x| x == l) {
            Some(i) => {
                rest.swap_remove(i);
            }
            None if out.len() < 5 => out.push(l.clone()),
            None => {}
        }
    }
    out
}

/// Parent side: the child's lines against the interpreter's.
pub fn check_print(seed: u64) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe).args(["--child", "print", &seed.to_string()]).output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("the child failed: {}{}", String::from_utf8_lossy(&out.stderr), stdout));
    }
    let got = sorted(stdout.lines().filter(|l| l.starts_with("pid (")).map(str::to_string));
    let want = sorted(interpreter_lines(seed)?);
    if got != want {
        return Err(format!(
            "{} GPU lines, {} interpreter lines; only on the GPU: {:?}; only in the interpreter: {:?}",
            got.len(),
            want.len(),
            missing(&got, &want),
            missing(&want, &got)
        ));
    }
    // Other inputs must print differently, or the comparison above proves nothing.
    if sorted(interpreter_lines(seed.wrapping_add(2))?) == got {
        return Err("the lines for other inputs compare equal: the comparison cannot fail".into());
    }
    Ok(format!("{} lines match", got.len()))
}

const ASSERT_LEN: usize = 1000;

/// Child side: the assert kernel with one negative element. Exits 3 when the synchronize fails, as it should.
pub fn assert_child() -> Result<(), String> {
    let gpu = Gpu::new().map_err(|e| e.to_string())?;
    let mut x: Vec<i32> = (0..ASSERT_LEN as i32).collect();
    x[777] = -5;
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let kernel = compile(&parse("assert")?).map_err(|e| e.to_string())?;
    let (inp, out) = (gpu.upload(&bytes).map_err(|e| e.to_string())?, gpu.upload(&bytes).map_err(|e| e.to_string())?);
    let loaded = gpu.load(&kernel).map_err(|e| e.to_string())?;
    let grid = ASSERT_LEN.div_ceil(256) as u32;
    loaded
        .launch(&gpu, [grid, 1, 1], &[KArg::Buf(&inp), KArg::Buf(&out), KArg::I32(ASSERT_LEN as i32)])
        .map_err(|e| e.to_string())?;
    match gpu.synchronize() {
        Ok(()) => Err("the launch succeeded: the assert did not fire".into()),
        Err(e) => {
            println!("synchronize failed as expected: {e}");
            std::process::exit(3);
        }
    }
}

/// Parent side: the child must fail with the assert's message, as the interpreter does.
pub fn check_assert_fail() -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe).args(["--child", "assert-fail"]).output().map_err(|e| e.to_string())?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.code() != Some(3) {
        return Err(format!("the child exited with {:?}: {text}", out.status.code()));
    }
    let Some(line) = text.lines().find(|l| l.contains("Assertion `x >= 0` failed")) else {
        return Err(format!("no assert message in the child's output: {text}"));
    };
    // The interpreter must reject the same input.
    let mut mem = Memory::new();
    let mut x: Vec<f64> = (0..ASSERT_LEN).map(|i| i as f64).collect();
    x[777] = -5.0;
    let (inp, out_id) = (mem.alloc_from("in", ScalarType::I32, &x), mem.alloc("out", ScalarType::I32, ASSERT_LEN));
    let args = [Arg::Buffer(inp), Arg::Buffer(out_id), Arg::Int(ASSERT_LEN as i64)];
    match run(&parse("assert")?, &args, [ASSERT_LEN.div_ceil(256) as u32, 1, 1], &mut mem) {
        Err(e) if matches!(&e.fault, Fault::AssertFailed { message, .. } if message.contains("x >= 0")) => {
            Ok(format!("device: {}", line.trim()))
        }
        other => Err(format!("the interpreter did not fail the same way: {other:?}")),
    }
}
