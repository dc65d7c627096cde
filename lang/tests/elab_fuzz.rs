//! Robustness: the example kernels with random small edits (tokens replaced by others). Whatever still parses
//! must elaborate to IR that verifies and round-trips, or fail with a diagnostic — never panic, never produce
//! an IR the verifier rejects. `ELAB_FUZZ_SEED` picks another seed.

mod elab_common;

use elab_common::*;
use tessel_lang::elab::{ArgSpec, ConstValue, Specialization, elaborate, kernels};
use tessel_tile::ScalarType::*;

const FILES: [&str; 6] =
    ["vector_add.py", "fused_softmax.py", "matmul.py", "layer_norm.py", "flash_attention.py", "gluon_aggregate.py"];

const WORDS: &[&str] = &[
    "0",
    "1",
    "None",
    "tl.float16",
    "x",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "+",
    "*",
    "//",
    "-1",
    "True",
    "tl.arange(0, 4)",
    "[:, None]",
    "axis=1",
    ".to(tl.int8)",
    "tl.zeros((4, 4), tl.float32)",
    "if",
    "return",
    "1.5",
    "mask",
    "'s'",
    "tl.sum(",
    ".T",
    "acc",
    "range(3)",
    "tl.static_range(2)",
    "**",
    "~",
    "not ",
    " and ",
    " or ",
    "==",
    "<",
    "[0]",
    "()",
    "self",
    "lambda: 0",
];

#[test]
fn edited_kernels_elaborate_or_report_never_panic() {
    let seed = std::env::var("ELAB_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut rng = Rng::new(seed);
    let sources: Vec<String> = FILES.iter().map(|f| example_source(f)).collect();
    let (mut parsed, mut ok, mut rejected) = (0, 0, 0);
    for _ in 0..400 {
        let mut src = sources[rng.next_u64() as usize % FILES.len()].clone();
        // Edit between the first kernel decorator and the host code.
        let start = src.find("@triton.jit").or_else(|| src.find("@gluon")).unwrap();
        let end = src.find("if __name__").unwrap_or(src.len());
        for _ in 0..1 + rng.next_u64() % 2 {
            let pos = start + rng.next_u64() as usize % (end - start);
            let to = (pos + (rng.next_u64() % 6) as usize).min(src.len());
            if src.is_char_boundary(pos) && src.is_char_boundary(to) {
                src.replace_range(pos..to, WORDS[rng.next_u64() as usize % WORDS.len()]);
            }
        }
        let Ok(module) = tessel_lang::parse_module(&src) else { continue };
        parsed += 1;
        for k in kernels(&module) {
            let args: Vec<ArgSpec> = k
                .params
                .iter()
                .map(|p| {
                    if p.constexpr {
                        ArgSpec::Constexpr(ConstValue::Int(32))
                    } else if p.name.starts_with(|c: char| c.is_ascii_uppercase()) || p.name.contains("ptr") {
                        ArgSpec::Pointer(F16, true)
                    } else {
                        ArgSpec::Int(I32, false)
                    }
                })
                .collect();
            let spec = Specialization::new(args);
            match std::panic::catch_unwind(|| elaborate(&module, &k.name, &spec).map_err(Box::new)) {
                Ok(Ok(f)) => {
                    check_ir(&f);
                    ok += 1;
                }
                Ok(Err(d)) => {
                    assert!(!d.message.contains("internal error"), "{}\nin\n{src}", d.render("edited.py", &src));
                    rejected += 1;
                }
                Err(_) => panic!("elaborating `{}` panicked on\n{src}", k.name),
            }
        }
    }
    eprintln!("{parsed} edited files parsed: {ok} kernels elaborated, {rejected} rejected with a diagnostic");
    assert!(ok > 10 && rejected > 10);
}
