//! Fuzzing the whole compiler: the example kernels, mutated, through what `tessel check` does (parse, list the
//! kernels, render any diagnostic) and what `tessel compile --emit ptx` does (elaborate, canonicalize, assign
//! layouts, schedule, generate PTX for sm_90a or sm_80). No input may panic, abort (a stack overflow, an
//! allocation failure) or hang; an error must be a diagnostic, never an "internal error".
//!
//! Cases run in child processes (this test binary again, in child mode, under a 4 GiB address-space limit), one
//! per worker, fed case numbers on stdin: a panic is caught and reported by the child, an abort kills it, a hang
//! is a case that takes longer than `TESSEL_FUZZ_TIMEOUT` seconds; the child is then replaced and the campaign
//! goes on. Each failing case is saved under the target directory (`fuzz-failures/`) for replay.
//!
//! In `cargo test` it runs for about 40 s. A longer campaign (see docs/testing.md, "Fuzzing"):
//!
//! ```text
//! TESSEL_FUZZ_SECONDS=1200 TESSEL_FUZZ_SEED=7 cargo test --release --test fuzz_pipeline -- --nocapture
//! ```
//!
//! `TESSEL_FUZZ_JOBS` sets the number of workers (default 2), `TESSEL_FUZZ_CASES` caps the number of cases, and
//! `TESSEL_FUZZ_REPLAY=N` runs case N of the seed in this process and prints its source and outcome.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{c, int, ptr};
use tessel::lang::elab::{ArgSpec, ConstValue, KernelInfo, Specialization, kernels};
use tessel::pipeline::{KernelSource, Output, Stage};
use tessel::tile::ScalarType::{self, F16, F32, I32};
use tessel::tile::{KernelConfig, Target};
use tessel_math::testing::Rng;

const CHILD_ENV: &str = "TESSEL_FUZZ_CHILD";
const TEST_NAME: &str = "mutated_examples_never_panic_abort_or_hang";

/// An example kernel and a specialization that compiles (as in `tests/examples_ptx.rs`).
struct Known {
    file: &'static str,
    kernel: &'static str,
    args: Vec<ArgSpec>,
    warps: u32,
}

fn known() -> Vec<Known> {
    let k = |file, kernel, args, warps| Known { file, kernel, args, warps };
    let mut matmul = vec![ptr(F16), ptr(F16), ptr(F16)];
    matmul.extend((0..9).map(|_| int(true)));
    matmul.extend([c(64), c(64), c(32), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    let mut attention = vec![ptr(F16), ptr(F16), ptr(F16), ArgSpec::Float(F32), ptr(F32), ptr(F16)];
    attention.extend((0..19).map(|_| int(false)));
    attention.extend([c(32), c(32), c(16), ArgSpec::Constexpr(ConstValue::Bool(true))]);
    let mut dx = vec![ptr(F16), ptr(F16), ptr(F32), ptr(F32), ptr(F16), ptr(F16), ptr(F32), ptr(F32)];
    dx.extend([ptr(I32), int(true), int(true), c(64), c(1024)]);
    let desc = |block: &[u32], elem| ArgSpec::TensorDesc {
        elem,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    vec![
        k("vector_add.py", "add_kernel", vec![ptr(F32), ptr(F32), ptr(F32), int(false), c(1024)], 4),
        k(
            "fused_softmax.py",
            "softmax_kernel",
            vec![ptr(F16), ptr(F16), int(true), int(true), int(false), int(true), c(1024), c(2)],
            4,
        ),
        k(
            "layer_norm.py",
            "_layer_norm_fwd_fused",
            vec![
                ptr(F16),
                ptr(F16),
                ptr(F16),
                ptr(F16),
                ptr(F32),
                ptr(F32),
                int(true),
                int(true),
                ArgSpec::Float(F32),
                c(1024),
            ],
            4,
        ),
        k("layer_norm.py", "_layer_norm_bwd_dx_fused", dx, 4),
        k(
            "layer_norm.py",
            "_layer_norm_bwd_dwdb",
            vec![ptr(F32), ptr(F32), ptr(F16), ptr(F16), int(false), int(false), c(32), c(128)],
            4,
        ),
        k(
            "argmax.py",
            "argmax_kernel",
            vec![ptr(F16), ptr(F32), ptr(I32), int(false), int(false), int(false), c(4), c(1024)],
            4,
        ),
        k("matmul.py", "matmul_kernel", matmul, 4),
        k("flash_attention.py", "_attn_fwd", attention, 4),
        k(
            "descriptor_copy.py",
            "transpose_scale_kernel",
            vec![desc(&[16, 32], F16), desc(&[32, 16], F16), desc(&[16], F32), ArgSpec::Float(F32)],
            4,
        ),
        k(
            "gluon_aggregate.py",
            "copy_rows_kernel",
            vec![ptr(F16), ptr(F16), ptr(F32), ptr(F32), int(false), int(false), int(false), int(false), c(16), c(64)],
            4,
        ),
        k("device_print.py", "debug_kernel", vec![ptr(F32), int(false), c(256)], 4),
    ]
}

/// The example files the cases start from.
fn sources() -> Vec<(&'static str, String)> {
    let mut files: Vec<&'static str> = known().iter().map(|k| k.file).collect();
    files.dedup();
    files
        .into_iter()
        .map(|f| {
            let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples").join(f);
            (f, std::fs::read_to_string(path).expect("the examples are readable"))
        })
        .collect()
}

/// Pieces a mutation writes into the kernel: tokens, builtins, shapes and numbers at the edges.
const WORDS: &[&str] = &[
    "0",
    "1",
    "-1",
    "3",
    "None",
    "True",
    "x",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "+",
    "-",
    "*",
    "//",
    "%",
    "**",
    "~",
    "<<",
    ">>",
    "not ",
    " and ",
    " or ",
    "==",
    "<",
    " if x else ",
    "[0]",
    "[:, None]",
    "[None, :]",
    "()",
    ".T",
    "1.5",
    "1e38",
    "float('nan')",
    "'s'",
    "lambda: 0",
    "tl.float16",
    "tl.float64",
    "tl.int8",
    "tl.int64",
    "tl.uint32",
    "tl.float8e4nv",
    ".to(tl.int8)",
    ".to(tl.float32)",
    ".to(tl.pointer_type(tl.int32))",
    "tl.arange(0, 4)",
    "tl.arange(0, 1024)",
    "tl.zeros((4, 4), tl.float32)",
    "tl.zeros((64, 64), tl.float16)",
    "tl.full((16,), 2, tl.int32)",
    "tl.sum(",
    "tl.max(",
    "tl.argmax(",
    "tl.cumsum(",
    "tl.dot(",
    "tl.trans(",
    "tl.reshape(",
    "tl.broadcast_to(",
    "tl.where(",
    "tl.exp(",
    "tl.sqrt(",
    "tl.atomic_add(",
    "tl.atomic_cas(",
    "tl.load(",
    "tl.store(",
    "tl.program_id(0)",
    "tl.num_programs(1)",
    "tl.static_range(2)",
    "range(3)",
    "tl.multiple_of(",
    "tl.max_contiguous(",
    "axis=0",
    "axis=1",
    "mask=",
    "other=0.0",
    "acc",
    "offs",
    "mask",
    "pid",
    "1024",
    "65536",
    "1 << 20",
    "2 ** 31",
    "4294967296",
    " * (10**12)",
    "tl.static_range(60000)",
    "\n    match x:\n        case 1:\n            ",
    "\n    yield ",
    "\n    while tl.load(x) == 0:\n        ",
    "\n    ",
    "\n        ",
    "\n    return\n",
    "\n    for i in range(4):\n        ",
    "\n    while x < 4:\n        ",
    "\n    if pid == 0:\n        ",
    "é",
    "\t",
];

/// Numbers a mutation puts in place of a number literal.
const NUMBERS: &[&str] =
    &["0", "1", "2", "3", "7", "16", "64", "1000", "1024", "4096", "65536", "1048576", "2147483648", "-1", "0.5"];

/// One case: which example, and its source after one to three mutations inside the kernels.
struct Case {
    file: &'static str,
    source: String,
    target: Target,
    /// CTAs per cluster (sm_90a only): auto mode spreads the kernel's tensors over them, or runs it in each
    /// cluster's first CTA; either way it compiles wherever it compiles at one CTA.
    num_ctas: u32,
}

fn case(seed: u64, index: u64, sources: &[(&'static str, String)]) -> Case {
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (file, original) = rng.pick(sources);
    let mut src = original.clone();
    for _ in 0..1 + rng.below(3) {
        // Edit between the first kernel decorator and the host code.
        let start = src.find("@triton.jit").or_else(|| src.find("@gluon.jit")).unwrap_or(0);
        let end = src.find("if __name__").unwrap_or(src.len()).max(start + 1).min(src.len());
        let floor = |s: &str, mut i: usize| {
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let pos = floor(&src, start + rng.below((end - start).max(1) as u64) as usize);
        let line_start = src[..pos].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[pos..].find('\n').map_or(src.len(), |i| pos + i + 1);
        match rng.below(11) {
            // A word repeated: nesting and length at and past the front end's limits.
            10 => {
                let word =
                    *rng.pick(&["-", "(", "x + ", "[", "tl.abs(", "not ", "lambda: ", "    ", "a.", "1 if x else "]);
                let times = *rng.pick(&[2, 30, 199, 201, 2999, 3001, 20000]);
                src.insert_str(pos, &word.repeat(times));
            }
            // Replace up to six bytes with a word.
            0..=3 => {
                let to = floor(&src, (pos + rng.below(7) as usize).min(src.len()));
                src.replace_range(pos..to, rng.pick::<&str>(WORDS));
            }
            // Insert a word.
            4 | 5 => src.insert_str(pos, rng.pick::<&str>(WORDS)),
            // Put another number in place of a number literal on this line.
            6 | 7 => {
                let line = &src[line_start..line_end];
                let digits: Vec<usize> = line
                    .char_indices()
                    .filter(|&(i, ch)| {
                        ch.is_ascii_digit()
                            && (i == 0 || !line[..i].ends_with(|p: char| p.is_alphanumeric() || p == '_'))
                    })
                    .map(|(i, _)| i)
                    .collect();
                if !digits.is_empty() {
                    let at = line_start + *rng.pick(&digits);
                    let len = src[at..].find(|ch: char| !ch.is_ascii_alphanumeric() && ch != '.').unwrap_or(0);
                    src.replace_range(at..at + len, rng.pick::<&str>(NUMBERS));
                }
            }
            // Duplicate or delete the line.
            8 => {
                let line = src[line_start..line_end].to_string();
                src.insert_str(line_start, &line);
            }
            _ => src.replace_range(line_start..line_end, ""),
        }
    }
    let target = if rng.below(2) == 0 { Target::Sm90a } else { Target::Sm80 };
    let num_ctas = if target == Target::Sm90a { [1, 1, 2, 4][rng.below(4) as usize] } else { 1 };
    Case { file, source: src, target, num_ctas }
}

/// What happened to a case (in the child).
enum Outcome {
    /// Parsed; every kernel compiled to PTX or was rejected with a diagnostic. (kernels compiled, rejected)
    Parsed(usize, usize),
    /// The source does not parse (a diagnostic).
    Unparsed,
    /// An error that says "internal error": a bug, not the input's fault.
    Internal(String),
}

/// The specialization a kernel of a mutated file gets: the example's when the kernel and its parameter count
/// are unchanged, else one guessed from the parameter names.
fn specialization(info: &KernelInfo, file: &str, num_ctas: u32) -> Specialization {
    if let Some(k) =
        known().into_iter().find(|k| k.file == file && k.kernel == info.name && k.args.len() == info.params.len())
    {
        let config = KernelConfig { num_warps: k.warps, num_ctas, ..KernelConfig::DEFAULT };
        return Specialization::with_config(k.args, config);
    }
    let args = info
        .params
        .iter()
        .map(|p| {
            if p.constexpr {
                ArgSpec::Constexpr(ConstValue::Int(32))
            } else if p.name.starts_with(|ch: char| ch.is_ascii_uppercase()) || p.name.contains("ptr") {
                ptr(F16)
            } else {
                ArgSpec::Int(ScalarType::I32, false)
            }
        })
        .collect();
    Specialization::with_config(args, KernelConfig { num_ctas, ..KernelConfig::DEFAULT })
}

fn run_case(c: &Case) -> Outcome {
    // `tessel check`: parse, list the kernels; a parse error must render.
    let module = match tessel::lang::parse_module(&c.source) {
        Ok(m) => m,
        Err(d) => {
            let _ = d.render(c.file, &c.source);
            return Outcome::Unparsed;
        }
    };
    let infos = kernels(&module);
    let (mut compiled, mut rejected) = (0, 0);
    // `tessel compile --emit ptx` of each kernel (at most three per file, to keep cases short).
    for info in infos.iter().take(3) {
        let spec = specialization(info, c.file, c.num_ctas);
        let ks =
            KernelSource { file: c.file, source: &c.source, kernel: &info.name, spec: &spec, module: Some(&module) };
        match tessel::pipeline::run(&ks, c.target, Stage::Ptx, None, &mut Default::default()) {
            Ok(Output::Ptx { kernel, .. }) => {
                assert!(kernel.ptx.contains(".entry"), "PTX without an entry");
                compiled += 1;
                if let Some(m) = interpret(&ks) {
                    return Outcome::Internal(format!("{}: {m}", info.name));
                }
            }
            Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
            Err(e) => {
                let text = e.to_string();
                // tessel's own failures are `Error::Internal`; lang's are diagnostics that say so.
                let internal = matches!(e, tessel::Error::Internal(_))
                    || matches!(&e, tessel::Error::Compile(d) if d.contains("internal error"));
                if internal {
                    return Outcome::Internal(format!("{}: {}", info.name, text.lines().next().unwrap_or("")));
                }
                // A cluster must not refuse what one CTA compiles: a split that code generation cannot do is
                // laid out again unsplit.
                if c.num_ctas > 1 {
                    let one = specialization(info, c.file, 1);
                    let ks1 = KernelSource { spec: &one, ..ks };
                    if tessel::pipeline::run(&ks1, c.target, Stage::Ptx, None, &mut Default::default()).is_ok() {
                        let first = text.lines().next().unwrap_or("");
                        return Outcome::Internal(format!(
                            "{}: compiles at one CTA, not at {}: {first}",
                            info.name, c.num_ctas
                        ));
                    }
                }
                rejected += 1;
            }
        }
    }
    Outcome::Parsed(compiled, rejected)
}

/// Runs a kernel that compiled in the interpreter over four programs, with 4096-element buffers, integers 64 and
/// floats 0.5, and a budget of 10^4 loop iterations and 10^7 units of work (elements, a dot's multiply-adds), on
/// one thread and on two: any error is fine (out of bounds, a failed assert, the budget), a panic, a hang or a
/// difference between the two runs is not. Returns an internal error's message. Kernels with descriptors are
/// skipped.
fn interpret(ks: &KernelSource) -> Option<String> {
    use tessel::interp::{self, Arg, Limits, memory::Memory};
    if ks.spec.args.iter().any(|a| matches!(a, ArgSpec::TensorDesc { .. })) {
        return None;
    }
    let Ok(Output::Tile(func)) = tessel::pipeline::run(ks, Target::Sm90a, Stage::Tile, None, &mut Default::default())
    else {
        return None;
    };
    // Sequentially, then on two threads: the parallel interpreter must leave the same bytes and give the same
    // outcome (it commits only what the sequential order would, or runs the programs again one at a time).
    let mut runs = Vec::new();
    for threads in [1, 2] {
        let mut mem = Memory::new();
        let mut args = Vec::new();
        for (i, a) in ks.spec.args.iter().enumerate() {
            args.push(match a {
                ArgSpec::Pointer(t, _) => Arg::Buffer(mem.alloc(format!("p{i}"), *t, 4096)),
                ArgSpec::Int(..) => Arg::Int(64),
                ArgSpec::Float(_) => Arg::Float(0.5),
                _ => continue,
            });
        }
        args.truncate(func.args().len());
        let limits = Limits { max_iterations: 10_000, max_work: 10_000_000, threads, ..Default::default() };
        let result = interp::run_with_limits(&func, &args, [4, 1, 1], &mut mem, limits);
        if let Err(e) = &result
            && e.fault.is_internal()
        {
            return Some(format!("internal error: {e}"));
        }
        let bytes: Vec<Vec<u8>> = args
            .iter()
            .filter_map(|a| match a {
                Arg::Buffer(b) => Some(mem.buffer(*b).bytes.clone()),
                _ => None,
            })
            .collect();
        runs.push((result.map_err(|e| e.to_string()), bytes));
    }
    (runs[0] != runs[1]).then(|| "internal error: the parallel interpreter differs from the sequential one".into())
}

/// Child mode: reads case numbers from stdin, runs each, answers `FUZZ <n> <outcome> <ms> <detail>`.
fn child(seed: u64) {
    let sources = sources();
    let last_panic: Arc<Mutex<String>> = Arc::default();
    let slot = last_panic.clone();
    std::panic::set_hook(Box::new(move |info| *slot.lock().unwrap() = info.to_string().replace('\n', " ")));
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(index) = line.unwrap().trim().parse::<u64>() else { break };
        let c = case(seed, index, &sources);
        let start = Instant::now();
        let result = std::panic::catch_unwind(|| run_case(&c));
        let ms = start.elapsed().as_millis();
        let (kind, detail) = match result {
            Ok(Outcome::Parsed(compiled, rejected)) => ("parsed", format!("{compiled} {rejected}")),
            Ok(Outcome::Unparsed) => ("unparsed", String::new()),
            Ok(Outcome::Internal(m)) => ("internal", m.replace('\n', " ")),
            Err(_) => ("panic", last_panic.lock().unwrap().clone()),
        };
        writeln!(out, "FUZZ {index} {kind} {ms} {detail}").unwrap();
        out.flush().unwrap();
    }
}

/// A child process and the lines of its stdout.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Worker {
    fn spawn(seed: u64) -> Worker {
        let exe = std::env::current_exe().unwrap();
        // 4 GiB of address space: an input that makes the compiler allocate without bound ends as an abort.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"ulimit -v 4194304 2>/dev/null; exec "$0" "$@""#)
            .arg(exe)
            .args([TEST_NAME, "--exact", "--nocapture", "--test-threads", "1"])
            .env(CHILD_ENV, seed.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the test binary runs as a fuzz worker");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            // libtest writes `test NAME ... ` before the test's own output, on the same line.
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(at) = line.find("FUZZ ")
                    && tx.send(line[at..].to_string()).is_err()
                {
                    break;
                }
            }
        });
        Worker { child, stdin, lines }
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Default)]
struct Tally {
    cases: u64,
    unparsed: u64,
    parsed: u64,
    compiled: u64,
    rejected: u64,
    slowest: (u128, u64),
    /// (kind, case, detail) of every failure.
    failures: Vec<(String, u64, String)>,
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn mutated_examples_never_panic_abort_or_hang() {
    let seed = env_u64("TESSEL_FUZZ_SEED", 1);
    if std::env::var_os(CHILD_ENV).is_some() {
        return child(env_u64(CHILD_ENV, 1));
    }
    if let Ok(n) = std::env::var("TESSEL_FUZZ_REPLAY") {
        let c = case(seed, n.parse().expect("a case number"), &sources());
        println!("--- case {n} of seed {seed}: {} on {} x{}\n{}", c.file, c.target, c.num_ctas, c.source);
        let outcome = match run_case(&c) {
            Outcome::Parsed(compiled, rejected) => format!("parsed: {compiled} compiled, {rejected} rejected"),
            Outcome::Unparsed => "does not parse".into(),
            Outcome::Internal(m) => format!("internal error: {m}"),
        };
        println!("--- {outcome}");
        return;
    }
    let seconds = env_u64("TESSEL_FUZZ_SECONDS", 40);
    let max_cases = env_u64("TESSEL_FUZZ_CASES", u64::MAX);
    let timeout = Duration::from_secs(env_u64("TESSEL_FUZZ_TIMEOUT", 20));
    let jobs = env_u64("TESSEL_FUZZ_JOBS", 2).max(1);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let next = AtomicU64::new(0);
    let tally = Mutex::new(Tally::default());
    let sources = sources();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                let mut worker = Worker::spawn(seed);
                while Instant::now() < deadline {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= max_cases {
                        break;
                    }
                    let answer = writeln!(worker.stdin, "{index}")
                        .ok()
                        .and_then(|()| worker.stdin.flush().ok())
                        .map_or(Err(RecvTimeoutError::Disconnected), |()| worker.lines.recv_timeout(timeout));
                    let failure = match answer {
                        Ok(line) => {
                            let mut parts = line.splitn(5, ' ').skip(2);
                            let (kind, ms, detail) = (parts.next().unwrap(), parts.next().unwrap(), parts.next());
                            let ms: u128 = ms.parse().unwrap();
                            let mut t = tally.lock().unwrap();
                            t.cases += 1;
                            t.slowest = t.slowest.max((ms, index));
                            match kind {
                                "unparsed" => t.unparsed += 1,
                                "parsed" => {
                                    let mut n = detail.unwrap_or("0 0").split(' ').map(|x| x.parse::<u64>().unwrap());
                                    t.parsed += 1;
                                    t.compiled += n.next().unwrap();
                                    t.rejected += n.next().unwrap();
                                }
                                _ => t.failures.push((kind.to_string(), index, detail.unwrap_or("").to_string())),
                            }
                            None
                        }
                        Err(RecvTimeoutError::Timeout) => Some(("hang", format!("no answer in {timeout:?}"))),
                        Err(RecvTimeoutError::Disconnected) => {
                            let status = worker.child.wait().map(|s| s.to_string()).unwrap_or_default();
                            Some(("abort", status))
                        }
                    };
                    if let Some((kind, detail)) = failure {
                        let mut t = tally.lock().unwrap();
                        t.cases += 1;
                        t.failures.push((kind.to_string(), index, detail));
                        drop(t);
                        worker.stop();
                        worker = Worker::spawn(seed);
                    }
                }
                worker.stop();
            });
        }
    });
    let t = tally.into_inner().unwrap();
    let count = |kind: &str| t.failures.iter().filter(|(k, ..)| k == kind).count();
    eprintln!(
        "fuzz (seed {seed}, {jobs} workers, {seconds} s): {} cases; {} did not parse, {} parsed: {} kernels compiled to \
         PTX, {} rejected with a diagnostic; {} panics, {} aborts, {} hangs, {} internal errors; slowest case {} ({} ms)",
        t.cases,
        t.unparsed,
        t.parsed,
        t.compiled,
        t.rejected,
        count("panic"),
        count("abort"),
        count("hang"),
        count("internal"),
        t.slowest.1,
        t.slowest.0,
    );
    if t.failures.is_empty() {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    std::fs::create_dir_all(&dir).unwrap();
    for (kind, index, detail) in &t.failures {
        let c = case(seed, *index, &sources);
        let path = dir.join(format!("seed{seed}-case{index}-{kind}.py"));
        std::fs::write(&path, format!("# {kind} on {} x{} ({}): {detail}\n{}", c.target, c.num_ctas, c.file, c.source))
            .unwrap();
        eprintln!("{kind}: case {index} ({}): {detail}\n  saved as {}", c.file, path.display());
    }
    panic!(
        "{} of {} cases failed; replay one with TESSEL_FUZZ_SEED={seed} TESSEL_FUZZ_REPLAY=N cargo test --test \
         fuzz_pipeline -- --nocapture",
        t.failures.len(),
        t.cases
    );
}
