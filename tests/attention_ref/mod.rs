//! What the Blackwell attention tests share (one file, included by each, beside `cli_common`): the float64
//! attention they compare against, broken variants of the example run through the CLI, and the bit-for-bit
//! comparison of the simulator's output with the interpreter's.

use std::path::{Path, PathBuf};

/// Float64 attention over `heads` heads of `n` rows: `[heads * n, d]` each.
pub fn reference(q: &[f64], k: &[f64], v: &[f64], heads: usize, d: usize, n: usize, causal: bool) -> Vec<f64> {
    let mut o = vec![0.0; heads * n * d];
    for h in 0..heads {
        let row = |x: &[f64], i: usize| -> Vec<f64> { x[(h * n + i) * d..(h * n + i + 1) * d].to_vec() };
        for i in 0..n {
            let qi = row(q, i);
            let keys = if causal { i + 1 } else { n };
            let s: Vec<f64> =
                (0..keys).map(|j| row(k, j).iter().zip(&qi).map(|(a, b)| a * b).sum::<f64>() * 0.125).collect();
            let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
            let l: f64 = p.iter().sum();
            for (j, pj) in p.iter().enumerate() {
                let vj = row(v, j);
                for c in 0..d {
                    o[(h * n + i) * d + c] += pj / l * vj[c];
                }
            }
        }
    }
    o
}

/// `example` (a source file) with its first `from` replaced by `to`, written as `dir/name`: its path.
pub fn variant(example: &str, dir: &Path, name: &str, from: &str, to: &str) -> PathBuf {
    let src = std::fs::read_to_string(example).unwrap();
    assert!(src.contains(from), "{name}: the example no longer holds `{from}`");
    let file = dir.join(name);
    std::fs::write(&file, src.replacen(from, to, 1)).unwrap();
    file
}

/// `tessel ARGS` run on a broken variant (`what` names it), which must fail cleanly (no panic, no internal
/// error); its files in `dir` are removed: the error.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn refused(what: &str, args: &[String], dir: &Path) -> String {
    let (code, _, err) = crate::cli_common::tessel(&args.iter().map(String::as_str).collect::<Vec<_>>());
    std::fs::remove_dir_all(dir).ok();
    assert_ne!(code, 0, "{what}: the broken variant ran");
    assert!(!err.contains("internal error") && !err.contains("panicked"), "{what}: {err}");
    err
}

/// The simulator's output equals the interpreter's bit for bit over its first `n` elements (rows of `d`); a
/// failure names the first few (row, column) that differ.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn assert_same_bits(what: &str, sim: &[f64], interp: &[f64], n: usize, d: usize) {
    let differ: Vec<_> = (0..n).filter(|&j| sim[j].to_bits() != interp[j].to_bits()).collect();
    let first: Vec<_> = differ.iter().take(4).map(|&j| (j / d, j % d, sim[j], interp[j])).collect();
    assert!(
        differ.is_empty(),
        "{what}: {} of {n} differ: (row, column, simulated, interpreted) {first:?}",
        differ.len()
    );
}
