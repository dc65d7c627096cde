//! Directive-driven file tests for passes over the textual IR, shared by every crate that has passes (Cranelift's
//! filetests, LLVM's lit/FileCheck in miniature).
//!
//! A test file is one function in the text form, preceded by `// RUN: <stage>` lines naming the stages to run
//! in order, and followed by what the output must be:
//! - `// CHECK: <text>` lines: each text must occur in the output, in order (each search starts after the
//!   previous match); `// CHECK-NOT: <text>`: the text occurs nowhere in the output; `// CHECK-COUNT-<n>: <text>`:
//!   it occurs exactly `n` times;
//! - or an `// EXPECT:` line, after which every line (with its leading `// ` removed) is the exact output.
//!   Running with `BLESS=1` rewrites that section from the actual output;
//! - or `// ERROR: <text>`: a stage must fail, with an error containing the text.
//!
//! Stages are looked up by name in the table the calling crate passes ([`Stage`]): a stage transforms the
//! function, and may instead produce text (PTX, a schedule) that becomes the output; otherwise the output is the
//! printed function. The verifier runs after every stage that transforms the function.

use std::path::{Path, PathBuf};

use crate::ir::Func;

/// What a stage did: changed the function in place, or produced the test's output text.
pub enum StageOutput {
    Func,
    Text(String),
}

/// Why a stage failed: the error of whichever crate's pass it runs (`// ERROR:` matches its text).
pub type StageError = Box<dyn std::error::Error>;

/// A named stage a test file can `RUN`.
pub type Stage<'a> = (&'a str, &'a dyn Fn(&mut Func) -> Result<StageOutput, StageError>);

/// A stage as a plain function.
pub type StageFn = fn(&mut Func) -> Result<StageOutput, StageError>;

/// The stages of this crate: `canonicalize`, `unroll`, `flatten`, `pointer-inductions`, `dce`, `sink`,
/// `wait-before-overwrite`, `assign-layouts`, `verify-layouts`.
pub fn tile_stages() -> Vec<(&'static str, StageFn)> {
    vec![
        ("canonicalize", |f| {
            crate::passes::canonicalize(f);
            Ok(StageOutput::Func)
        }),
        ("unroll", |f| {
            crate::passes::unroll_loops(f);
            Ok(StageOutput::Func)
        }),
        ("flatten", |f| {
            let (_, refused) = crate::passes::flatten_loops(f);
            match refused.first() {
                Some((o, why)) => Err(format!("{o}: {why}").into()),
                None => Ok(StageOutput::Func),
            }
        }),
        ("pointer-inductions", |f| {
            crate::passes::reassociate_pointer_inductions(f);
            Ok(StageOutput::Func)
        }),
        ("dce", |f| {
            crate::passes::dce(f);
            Ok(StageOutput::Func)
        }),
        ("sink", |f| {
            crate::passes::sink_into_branches(f);
            Ok(StageOutput::Func)
        }),
        ("wait-before-overwrite", |f| {
            crate::passes::wait_before_overwriting_dot_operands(f);
            Ok(StageOutput::Func)
        }),
        ("assign-layouts", |f| crate::layout::assign_layouts(f).map(|_| StageOutput::Func).map_err(|e| e.into())),
        ("verify-layouts", |f| crate::verify::verify_layouts(f).map(|_| StageOutput::Func).map_err(|e| e.into())),
    ]
}

/// Runs one test file; `Err` describes the first failure, for the test's output.
pub fn run_file(path: &Path, stages: &[Stage]) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut runs = Vec::new();
    let mut body = String::new();
    let mut checks: Vec<(String, String)> = Vec::new();
    let mut expect: Option<String> = None;
    let mut error: Option<String> = None;
    for line in text.lines() {
        if let Some(e) = expect.as_mut() {
            let l = line.strip_prefix("// ").or_else(|| line.strip_prefix("//")).unwrap_or(line);
            e.push_str(l);
            e.push('\n');
        } else if let Some(r) = line.strip_prefix("// RUN:") {
            runs.push(r.trim().to_string());
        } else if let Some(e) = line.strip_prefix("// ERROR:") {
            error = Some(e.trim().to_string());
        } else if line.trim() == "// EXPECT:" {
            expect = Some(String::new());
        } else if let Some(rest) = line.strip_prefix("// CHECK") {
            let (kind, pattern) = rest.split_once(':').ok_or_else(|| format!("malformed check line `{line}`"))?;
            checks.push((kind.to_string(), pattern.trim().to_string()));
        } else if !line.starts_with("//") {
            body.push_str(line);
            body.push('\n');
        }
    }
    if runs.is_empty() {
        return Err("no `// RUN:` line".into());
    }
    let mut f = crate::parse::parse_func(&body).map_err(|e| format!("parse: {e}"))?;
    crate::verify::verify(&f).map_err(|e| format!("input does not verify: {e}"))?;
    let mut output = None;
    for r in &runs {
        let (_, stage) = stages
            .iter()
            .find(|(n, _)| n == r)
            .ok_or_else(|| format!("unknown stage `{r}` (known: {})", names(stages)))?;
        let result = stage(&mut f);
        if let (Some(want), Err(e)) = (&error, &result) {
            return if e.to_string().contains(want.as_str()) {
                Ok(())
            } else {
                Err(format!("stage `{r}` failed with `{e}`, not with an error containing `{want}`"))
            };
        }
        match result.map_err(|e| format!("stage `{r}`: {e}"))? {
            StageOutput::Func => {
                crate::verify::verify(&f).map_err(|e| format!("after `{r}`: the IR does not verify: {e}"))?;
                output = None;
            }
            StageOutput::Text(t) => output = Some(t),
        }
    }
    if let Some(want) = error {
        return Err(format!("every stage succeeded; expected an error containing `{want}`"));
    }
    let output = output.unwrap_or_else(|| crate::print::print_func(&f));
    if let Some(want) = expect {
        if std::env::var_os("BLESS").is_some() {
            let head: String =
                text.lines().take_while(|l| l.trim() != "// EXPECT:").map(|l| format!("{l}\n")).collect();
            let tail: String =
                output.lines().map(|l| if l.is_empty() { "//\n".into() } else { format!("// {l}\n") }).collect();
            std::fs::write(path, format!("{head}// EXPECT:\n{tail}")).map_err(|e| e.to_string())?;
        } else if want.trim_end() != output.trim_end() {
            return Err(format!("output differs from the EXPECT section (BLESS=1 rewrites it):\n{output}"));
        }
    }
    let mut at = 0;
    for (kind, pattern) in &checks {
        let found = |from: usize| output[from..].find(pattern.as_str()).map(|i| from + i);
        match kind.as_str() {
            "" => match found(at) {
                Some(i) => at = i + pattern.len(),
                None => return Err(format!("CHECK: `{pattern}` not found after byte {at} of:\n{output}")),
            },
            "-NOT" if found(0).is_some() => return Err(format!("CHECK-NOT: `{pattern}` occurs in:\n{output}")),
            "-NOT" => {}
            k if k.starts_with("-COUNT-") => {
                let n: usize = k[7..].parse().map_err(|_| format!("bad check `CHECK{k}`"))?;
                let got = output.matches(pattern.as_str()).count();
                if got != n {
                    return Err(format!("CHECK{k}: `{pattern}` occurs {got} times, not {n}, in:\n{output}"));
                }
            }
            other => return Err(format!("unknown check `CHECK{other}`")),
        }
    }
    if checks.is_empty() && std::env::var_os("BLESS").is_none() && !text.contains("// EXPECT:") {
        return Err("no CHECK lines and no EXPECT section: the test checks nothing".into());
    }
    Ok(())
}

fn names(stages: &[Stage]) -> String {
    stages.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// Runs every `.tir` file of `dir` (sorted), and panics with all failures.
pub fn run_dir(dir: &Path, stages: &[Stage]) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tir"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .tir files in {}", dir.display());
    let failures: Vec<String> =
        files.iter().filter_map(|p| run_file(p, stages).err().map(|e| format!("{}: {e}", p.display()))).collect();
    assert!(
        failures.is_empty(),
        "{} of {} file tests failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}
