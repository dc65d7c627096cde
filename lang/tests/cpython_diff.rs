//! Differential test against CPython: every corpus file must give the same tree as CPython's `ast` module (in the
//! span-free dump format; `tests/tools/cpython_dump.py` translates CPython's AST).
//!
//! It needs Python 3.12 or newer, so it is ignored by default:
//! `TESSEL_PYTHON=python3.12 cargo test -p tessel-lang --test cpython_diff -- --ignored`.

use std::path::PathBuf;
use std::process::Command;

use tessel_lang::{ast, parse_module};

#[test]
#[ignore = "needs CPython 3.12+ (set TESSEL_PYTHON)"]
fn corpus_matches_cpython() {
    let python = std::env::var("TESSEL_PYTHON").unwrap_or_else(|_| "python3".into());
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("corpus"))
        .expect("tests/corpus exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for file in files {
        let output = Command::new(&python)
            .arg(dir.join("tools/cpython_dump.py"))
            .arg(&file)
            .output()
            .unwrap_or_else(|e| panic!("cannot run `{python}`: {e}"));
        assert!(output.status.success(), "{}: {}", file.display(), String::from_utf8_lossy(&output.stderr));
        let expected = String::from_utf8(output.stdout).expect("UTF-8 dump");
        let src = std::fs::read_to_string(&file).expect("readable corpus file");
        let module = parse_module(&src).unwrap_or_else(|d| panic!("{}", d.render(&file.display().to_string(), &src)));
        let actual = ast::dump(&module, false);
        if let Some((i, (e, a))) = expected.lines().zip(actual.lines()).enumerate().find(|(_, (e, a))| e != a) {
            panic!("{}: line {} of the dumps differs\n  cpython: {e}\n  tessel:  {a}", file.display(), i + 1);
        }
        assert_eq!(expected.lines().count(), actual.lines().count(), "{}: dump lengths differ", file.display());
    }
}
