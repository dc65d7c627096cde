//! Error messages: each is one diagnostic at the offending expression, rendered by ariadne. The tests assert
//! the rendered text (message, the source line, the label's position) of each kind of mistake.

mod elab_common;

use elab_common::*;
use tessel_lang::elab::{ArgSpec, ConstValue};
use tessel_tile::ScalarType::{self, *};

const PRELUDE: &str = "import triton\nimport triton.language as tl\n\n";

fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, false)
}

fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

fn error(body: &str, args: Vec<ArgSpec>) -> String {
    let src = format!("{PRELUDE}@triton.jit\ndef k(X, n, BLOCK: tl.constexpr):\n{body}");
    let mut full = vec![ptr(F32), ArgSpec::Int(I32, false)];
    full.extend(args);
    elab_error(&src, "k", full)
}

/// The label line under the source: the column of its first `─` or `┬`.
fn label_column(rendered: &str, source_line: &str) -> usize {
    let lines: Vec<&str> = rendered.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.ends_with(source_line))
        .unwrap_or_else(|| panic!("no line `{source_line}` in\n{rendered}"));
    let src_col = lines[i].chars().count() - source_line.chars().count();
    let marks = lines[i + 1].chars().position(|ch| ch == '─' || ch == '┬').expect("a label under the line");
    marks - src_col
}

#[test]
fn non_power_of_two_block() {
    let msg = error("    offs = tl.arange(0, BLOCK)\n", vec![c(1000)]);
    assert!(msg.starts_with("Error: BLOCK must be a power of two, got 1000"), "{msg}");
    assert_eq!(label_column(&msg, "    offs = tl.arange(0, BLOCK)"), "    offs = tl.arange(0, ".len());
    assert!(msg.contains("use 1024 and mask the extra elements"), "{msg}");
    let msg = error("    x = tl.zeros((BLOCK, 48), dtype=tl.float32)\n", vec![c(32)]);
    assert!(msg.contains("shape[1] must be a power of two, got 48"), "{msg}");
}

/// Tiles past 2^20 elements, or past 8192 registers per thread, are refused at the op that would create them
/// (a broadcast, a `tl.zeros`, a `tl.full`), before the interpreter allocates or codegen unrolls them.
#[test]
fn oversized_tiles_are_refused_where_they_are_made() {
    let msg = error("    z = tl.zeros((65536, 65536), dtype=tl.float32)\n", vec![c(32)]);
    assert!(
        msg.starts_with("Error: this creates a tile of 4294967296 elements (65536x65536), more than 1048576"),
        "{msg}"
    );
    assert_eq!(label_column(&msg, "    z = tl.zeros((65536, 65536), dtype=tl.float32)"), "    z = ".len());
    let msg = error("    a = tl.arange(0, BLOCK)\n    z = a[:, None] + a[None, :]\n", vec![c(2048)]);
    assert!(msg.contains("a tile of 4194304 elements (2048x2048)"), "{msg}");
    assert_eq!(label_column(&msg, "    z = a[:, None] + a[None, :]"), "    z = ".len());
    let msg = error("    z = tl.full((4096, 4096, 4096), 1, tl.int32)\n", vec![c(32)]);
    assert!(msg.contains("68719476736 elements"), "{msg}");
    // 2^20 f64 over 4 warps: 16384 registers per thread.
    let msg = error("    z = tl.zeros((1024, 1024), dtype=tl.float64)\n", vec![c(32)]);
    assert!(msg.contains("needs 16384 registers per thread over 4 warps, more than 8192"), "{msg}");
    // A power-of-two dimension past the bound says so (it used to claim 2^30 is not a power of two).
    let msg = error("    offs = tl.arange(0, BLOCK)\n", vec![c(1 << 30)]);
    assert!(msg.contains("BLOCK is 1073741824, more than the 1048576 elements a tile may have"), "{msg}");
    // At the bounds, fine.
    let src = format!(
        "{PRELUDE}@triton.jit\ndef k(X, n, BLOCK: tl.constexpr):\n    z = tl.zeros((1024, 1024), dtype=tl.float32)\n    tl.store(X + tl.arange(0, BLOCK), tl.sum(tl.sum(z, 1), 0))\n"
    );
    elab("ok.py", &src, "k", vec![ptr(F32), ArgSpec::Int(I32, false), c(16)]);
}

/// A kernel is not a generator: `yield` inside one is refused where it is, while the module (whose host code
/// may use generators) still parses.
/// Compile-time work is bounded: a sequence repeated past 2^20 items is an error (it was an allocation failure
/// that aborted), and so is compile-time looping past 10^7 steps in all (nested loops are each bounded alone).
#[test]
fn compile_time_work_is_bounded() {
    let msg = error("    z = 'a' * (10**12)\n", vec![c(16)]);
    assert!(msg.contains("this makes a compile-time sequence of 1000000000000 items, more than 1048576"), "{msg}");
    let msg = error("    z = (1, 2) * (2**70)\n", vec![c(16)]);
    assert!(msg.contains("compile-time sequence of 2361183241434822606848 items"), "{msg}");
    // Under the bound, sequences are built as before.
    let msg = error("    z = [0] * 1000\n    z = z + z + z\n    tl.static_assert(len(z) == 3001)\n", vec![c(16)]);
    assert!(msg.contains("static_assert failed"), "{msg}");
    let start = std::time::Instant::now();
    let msg = error(
        "    for i in tl.static_range(60000):\n        for j in tl.static_range(60000):\n            pass\n",
        vec![c(16)],
    );
    assert!(msg.contains("elaboration took more than 10000000 steps"), "{msg}");
    assert!(start.elapsed() < std::time::Duration::from_secs(60), "{:?}", start.elapsed());
}

#[test]
fn match_in_a_kernel() {
    let msg = error("    match BLOCK:\n        case 16:\n            pass\n", vec![c(16)]);
    assert!(msg.starts_with("Error: `match` is not supported in kernels"), "{msg}");
    assert!(msg.contains("use an `if`/`elif` chain"), "{msg}");
}

#[test]
fn yield_in_a_kernel() {
    let msg = error("    yield tl.arange(0, BLOCK)\n", vec![c(16)]);
    assert!(msg.starts_with("Error: `yield` is not supported in kernels: a kernel is not a generator"), "{msg}");
    assert_eq!(label_column(&msg, "    yield tl.arange(0, BLOCK)"), "    ".len());
}

#[test]
fn other_without_mask() {
    let msg = error("    x = tl.load(X + tl.arange(0, BLOCK), other=0.0)\n", vec![c(64)]);
    assert!(msg.starts_with("Error: `other` given without `mask`"), "{msg}");
    assert_eq!(
        label_column(&msg, "    x = tl.load(X + tl.arange(0, BLOCK), other=0.0)"),
        "    x = tl.load(X + tl.arange(0, BLOCK), ".len()
    );
}

#[test]
fn shape_mismatch_names_both_shapes() {
    let msg = error(
        "    a = tl.zeros((BLOCK, 64), dtype=tl.float32)\n    b = tl.zeros((16, 64), dtype=tl.float32)\n    c = a + b\n",
        vec![c(32)],
    );
    assert!(msg.contains("incompatible shapes for broadcasting: [32, 64] and [16, 64] (dim 0: 32 vs 16)"), "{msg}");
    assert_eq!(label_column(&msg, "    c = a + b"), "    c = ".len());
}

#[test]
fn unknown_builtin_suggests_the_closest_name() {
    let msg = error("    offs = tl.arnage(0, BLOCK)\n", vec![c(64)]);
    assert!(msg.contains("unknown builtin `tl.arnage`"), "{msg}");
    assert!(msg.contains("did you mean `tl.arange`?"), "{msg}");
    let msg = error("    y = tl.math.exp3(tl.zeros((BLOCK,), dtype=tl.float32))\n", vec![c(64)]);
    assert!(msg.contains("unknown builtin `tl.math.exp3`") && msg.contains("did you mean `tl.math.exp`?"), "{msg}");
    let msg = error("    y = tl.load(X, msk=None)\n", vec![c(64)]);
    assert!(msg.contains("`tl.load` got an unexpected keyword argument `msk` (did you mean `mask`?)"), "{msg}");
    let msg = error("    y = BLOK + 1\n", vec![c(64)]);
    assert!(msg.contains("name `BLOK` is not defined") && msg.contains("did you mean `BLOCK`?"), "{msg}");
}

#[test]
fn runtime_value_where_a_constexpr_is_needed() {
    let msg = error("    offs = tl.arange(0, n)\n", vec![c(64)]);
    assert!(msg.contains("`end` of `tl.arange` must be a compile-time constant (tl.constexpr), but `n` is a runtime value of type i32"), "{msg}");
    assert!(msg.contains("declare it as `n: tl.constexpr`"), "{msg}");
    let msg = error("    for i in tl.static_range(n):\n        pass\n", vec![c(64)]);
    assert!(msg.contains("must be a compile-time constant"), "{msg}");
    // A runtime value passed to a helper's constexpr parameter stays runtime (as in Triton); it is refused where
    // the helper needs a constant.
    let src = format!(
        "{PRELUDE}@triton.jit\ndef f(x, N: tl.constexpr):\n    return tl.arange(0, N)\n\n@triton.jit\ndef k(X, n):\n    \
         f(X, n)\n"
    );
    let msg = elab_error(&src, "k", vec![ptr(F32), ArgSpec::Int(I32, false)]);
    assert!(
        msg.contains("`end` of `tl.arange` must be a compile-time constant (tl.constexpr), but `N` is a runtime value"),
        "{msg}"
    );
}

#[test]
fn wrong_argument_counts() {
    let src =
        format!("{PRELUDE}@triton.jit\ndef f(a, b, c=1):\n    return a\n\n@triton.jit\ndef k(X):\n    f(1, 2, 3, 4)\n");
    let msg = elab_error(&src, "k", vec![ptr(F32)]);
    assert!(msg.contains("`f()` takes 3 positional arguments but 4 were given"), "{msg}");
    let src = format!("{PRELUDE}@triton.jit\ndef f(a, b, c=1):\n    return a\n\n@triton.jit\ndef k(X):\n    f(1)\n");
    let msg = elab_error(&src, "k", vec![ptr(F32)]);
    assert!(msg.contains("`f()` is missing 1 required argument: `b`"), "{msg}");
    let msg = error("    x = tl.load()\n", vec![c(64)]);
    assert!(msg.contains("`tl.load` is missing the required argument `pointer`"), "{msg}");
    let msg = error("    x = tl.program_id(0, 1)\n", vec![c(64)]);
    assert!(msg.contains("`tl.program_id` takes at most 1 positional arguments, got 2"), "{msg}");
}

#[test]
fn loop_carried_type_change_names_the_variable_and_both_types() {
    let msg = error(
        "    acc = tl.zeros((BLOCK,), dtype=tl.float16)\n    for i in range(n):\n        acc += 1.0\n        acc = acc.to(tl.float32)\n",
        vec![c(64)],
    );
    assert!(
        msg.contains(
            "loop-carried variable `acc` changes type inside the `for` loop: tensor<64xf16> and tensor<64xf32>"
        ),
        "{msg}"
    );
}

#[test]
fn branch_type_mismatch_names_the_variable() {
    let msg = error("    if n > 0:\n        y = 1.0\n    else:\n        y = 1\n    tl.store(X, y)\n", vec![c(64)]);
    assert!(msg.contains("`y` has different types after the two branches of this `if`: f32 and i32"), "{msg}");
}

#[test]
fn dtype_and_dot_rules() {
    let msg = error("    x = tl.load(X + tl.arange(0, BLOCK)).to(tl.float16)\n    y = tl.exp(x)\n", vec![c(64)]);
    assert!(msg.contains("`tl.exp` expects float32 or float64, got float16"), "{msg}");
    assert!(msg.contains("convert first: `x.to(tl.float32)`"), "{msg}");
    let msg = error(
        "    a = tl.zeros((16, 8), dtype=tl.float16)\n    d = tl.dot(a, tl.zeros((8, 16), dtype=tl.float16))\n",
        vec![c(64)],
    );
    assert!(msg.contains("`tl.dot` needs K >= 16 for float16 operands, got K = 8"), "{msg}");
    let msg = error(
        "    a = tl.zeros((16, 16), dtype=tl.float16)\n    d = tl.dot(a, a, tl.zeros((16, 16), dtype=tl.float16))\n",
        vec![c(64)],
    );
    assert!(
        msg.contains("the accumulator of `tl.dot` is tensor<16x16xf16> but the product is tensor<16x16xf32>"),
        "{msg}"
    );
    assert!(msg.contains("pass `out_dtype=tl.float16`"), "{msg}");
}

#[test]
fn static_assert_and_return_in_loops() {
    let msg = error("    tl.static_assert(BLOCK % 128 == 0, \"BLOCK must be a multiple of 128\")\n", vec![c(64)]);
    assert!(msg.contains("static_assert failed: BLOCK must be a multiple of 128"), "{msg}");
    let msg = error("    for i in range(n):\n        if i > 3:\n            return\n", vec![c(64)]);
    assert!(msg.contains("a `return` inside a runtime `if` is not supported inside a loop"), "{msg}");
    let msg = error("    x: tl.constexpr = n\n", vec![c(64)]);
    assert!(msg.contains("`x` is declared tl.constexpr, but its value is a runtime value (i32)"), "{msg}");
    let msg = error("    BLOCK = 3\n", vec![c(64)]);
    assert!(msg.contains("`BLOCK` is a constexpr and cannot be reassigned"), "{msg}");
}

#[test]
fn kernel_and_specialization_mismatches() {
    let src = format!("{PRELUDE}@triton.jit\ndef add_kernel(X, BLOCK: tl.constexpr):\n    pass\n");
    let msg = elab_error(&src, "add_kernal", vec![ptr(F32), c(4)]);
    assert!(msg.contains("no kernel named `add_kernal`") && msg.contains("did you mean `add_kernel`?"), "{msg}");
    let msg = elab_error(&src, "add_kernel", vec![ptr(F32), ArgSpec::Int(I32, false)]);
    assert!(
        msg.contains("parameter `BLOCK` is declared tl.constexpr, but the specialization makes it a runtime i32"),
        "{msg}"
    );
    let msg = elab_error(&src, "add_kernel", vec![ptr(F32)]);
    assert!(msg.contains("the specialization gives no value for parameter `BLOCK`"), "{msg}");
}

#[test]
fn errors_inside_library_functions_point_at_the_call() {
    let msg = error("    x = tl.load(X + tl.arange(0, BLOCK)).to(tl.float16)\n    y = tl.sigmoid(x)\n", vec![c(64)]);
    assert!(msg.contains("`tl.exp` expects float32 or float64, got float16"), "{msg}");
    assert!(msg.contains("raised inside the library function `sigmoid`"), "{msg}");
    assert_eq!(label_column(&msg, "    y = tl.sigmoid(x)"), "    y = ".len());
}

/// Every kernel of the examples and of the parser's corpus, elaborated for many random (mostly wrong)
/// specializations: elaboration returns an IR that verifies or a diagnostic — it never panics.
#[test]
fn random_specializations_never_panic() {
    use tessel_lang::elab::{Specialization, elaborate, kernels};
    let root = env!("CARGO_MANIFEST_DIR");
    let mut files = Vec::new();
    for dir in [format!("{root}/../examples"), format!("{root}/tests/corpus")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "py") {
                files.push(path);
            }
        }
    }
    files.sort();
    let seed = std::env::var("ELAB_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(99);
    let mut rng = Rng::new(seed);
    let (mut ok, mut errors) = (0, 0);
    for path in &files {
        let src = std::fs::read_to_string(path).unwrap();
        let module = tessel_lang::parse_module(&src).unwrap();
        for k in kernels(&module) {
            for _ in 0..100 {
                let wild = rng.next_u64() % 3 == 0;
                let args = k
                    .params
                    .iter()
                    .map(|p| match if wild { rng.next_u64() % 12 } else { plausible(p, &mut rng) } {
                        0..=3 => ArgSpec::Pointer(
                            [F16, F32, I32, I8, U32][rng.next_u64() as usize % 5],
                            rng.next_u64() % 2 == 0,
                        ),
                        4..=5 => ArgSpec::Int([I32, I64][rng.next_u64() as usize % 2], false),
                        6 => ArgSpec::Float(F32),
                        7..=9 if wild => c([1, 2, 16, 32, 64, 100, -1, 0][rng.next_u64() as usize % 8]),
                        7..=9 => c([16, 32, 64][rng.next_u64() as usize % 3]),
                        10 => ArgSpec::Constexpr(ConstValue::Bool(rng.next_u64() % 2 == 0)),
                        _ => ArgSpec::Constexpr(
                            [ConstValue::None, ConstValue::Str("leaky_relu".into()), ConstValue::Dtype(F16)]
                                [rng.next_u64() as usize % 3]
                                .clone(),
                        ),
                    })
                    .collect();
                let mut spec = Specialization::new(args);
                spec.config.num_warps = [1, 2, 4, 8][rng.next_u64() as usize % 4];
                let result = std::panic::catch_unwind(|| elaborate(&module, &k.name, &spec).map_err(Box::new));
                match result {
                    Ok(Ok(f)) => {
                        check_ir(&f);
                        ok += 1
                    }
                    Ok(Err(d)) => {
                        assert!(!d.message.contains("internal error"), "{}: {}", k.name, d.render("f.py", &src));
                        errors += 1
                    }
                    Err(_) => panic!("elaborating `{}` of {} panicked for {spec:?}", k.name, path.display()),
                }
            }
        }
    }
    eprintln!("{ok} specializations elaborated, {errors} rejected with a diagnostic");
    assert!(ok > 100 && errors > 100, "{ok} elaborated, {errors} rejected");
}

/// A class of argument that fits the parameter's name (pointers for `*_ptr` and capitalized names, ints for
/// sizes and strides, floats for `eps`/`scale`, powers of two for constexprs), sometimes wrong on purpose.
fn plausible(p: &tessel_lang::elab::ParamInfo, rng: &mut Rng) -> u64 {
    let n = p.name.to_lowercase();
    let upper = p.name.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_')
        && !["M", "N", "K", "Z", "H"].contains(&p.name.as_str());
    if rng.next_u64() % 10 == 0 {
        return rng.next_u64() % 12;
    }
    if p.constexpr {
        if n == "activation" {
            11
        } else if n.contains("causal") || n.contains("flag") {
            10
        } else {
            7 + rng.next_u64() % 3
        }
    } else if n.contains("ptr") || n.contains("lock") || upper {
        rng.next_u64() % 4
    } else if n.contains("eps") || n.contains("scale") {
        6
    } else {
        4 + rng.next_u64() % 2
    }
}

/// `ﬁ` and `fi` are one name to Python (NFKC), so a kernel may spell it either way: no "not defined" error.
#[test]
fn names_equal_under_nfkc_are_one_name() {
    let src = format!("{PRELUDE}@triton.jit\ndef k(P):\n    ﬁ = tl.load(P)\n    tl.store(P, fi + 1.0)\n");
    let f = elab("k.py", &src, "k", vec![ptr(F32)]);
    assert!(f.to_string().contains("%fi = load"), "{f}");
}
