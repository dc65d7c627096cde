//! Float64 attention, the reference the Blackwell attention tests compare against (one file, included by each).

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
