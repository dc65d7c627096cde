//! The example kernels (`examples/*.py`), elaborated for a specialization, checked (verifier, textual IR round
//! trip) and run in the reference interpreter on random inputs at sizes that are not multiples of the blocks;
//! outputs are poisoned first and compared against float64 references by ‖out − ref‖ / ‖ref‖.

mod elab_common;

use elab_common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, ConstValue};
use tessel_tile::ScalarType::{self, *};

fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, true)
}

fn int() -> ArgSpec {
    ArgSpec::Int(I32, false)
}

fn cint(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

fn tol(t: ScalarType) -> f64 {
    if t == F32 { 1e-5 } else { 1e-2 }
}

fn vector_add(t: ScalarType) {
    let src = example_source("vector_add.py");
    let f = elab("vector_add.py", &src, "add_kernel", vec![ptr(t), ptr(t), ptr(t), int(), cint(256)]);
    let n = 1000;
    let mut rng = Rng::new(1);
    let (x, y) = (rounded(t, &rng.normals(n)), rounded(t, &rng.normals(n)));
    let mut mem = Memory::new();
    let (bx, by) = (mem.alloc_from("x", t, &x), mem.alloc_from("y", t, &y));
    let out = poisoned(&mut mem, "out", t, n);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by), Arg::Buffer(out), Arg::Int(n as i64)], [4, 1, 1], &mut mem);
    let reference: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    assert_close(&format!("vector_add {t}"), &mem.read_f64(out), &reference, tol(t));
}

#[test]
fn vector_add_f32() {
    vector_add(F32);
}

#[test]
fn vector_add_f16() {
    vector_add(F16);
}

fn softmax(t: ScalarType) {
    let src = example_source("fused_softmax.py");
    let args = vec![ptr(t), ptr(t), int(), int(), int(), int(), cint(1024), cint(4)];
    let f = elab("fused_softmax.py", &src, "softmax_kernel", args);
    let text = f.to_string();
    assert!(text.contains("for {num_stages = 4}"), "tl.range's num_stages is recorded:\n{text}");
    let (rows, cols, in_stride) = (37usize, 1000usize, 1003usize);
    let mut rng = Rng::new(2);
    let x = rounded(t, &rng.normals(rows * in_stride));
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", t, &x);
    let out = poisoned(&mut mem, "y", t, rows * cols);
    let args = [
        Arg::Buffer(out),
        Arg::Buffer(bx),
        Arg::Int(in_stride as i64),
        Arg::Int(cols as i64),
        Arg::Int(rows as i64),
        Arg::Int(cols as i64),
    ];
    run(&f, &args, [8, 1, 1], &mut mem);
    let mut reference = Vec::new();
    for r in 0..rows {
        let row = &x[r * in_stride..r * in_stride + cols];
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = row.iter().map(|v| (v - m).exp()).sum();
        reference.extend(row.iter().map(|v| (v - m).exp() / s));
    }
    assert_close(&format!("softmax {t}"), &mem.read_f64(out), &reference, tol(t));
}

#[test]
fn fused_softmax_f32() {
    softmax(F32);
}

#[test]
fn fused_softmax_f16() {
    softmax(F16);
}

fn matmul(t: ScalarType, activation: &str, tolerance: f64) {
    let src = example_source("matmul.py");
    let mut args = vec![ptr(t), ptr(t), ptr(t)];
    args.extend((0..9).map(|_| int()));
    args.extend([cint(32), cint(32), cint(32), cint(4), ArgSpec::Constexpr(ConstValue::Str(activation.into()))]);
    let f = elab("matmul.py", &src, "matmul_kernel", args);
    let (m, n, k) = (100usize, 70usize, 90usize);
    let mut rng = Rng::new(3);
    let a = rounded(t, &rng.normals(m * k));
    let b = rounded(t, &rng.normals(k * n));
    let mut mem = Memory::new();
    let (ba, bb) = (mem.alloc_from("a", t, &a), mem.alloc_from("b", t, &b));
    let c = poisoned(&mut mem, "c", t, m * n);
    let ints = [m, n, k, k, 1, n, 1, n, 1];
    let mut argv = vec![Arg::Buffer(ba), Arg::Buffer(bb), Arg::Buffer(c)];
    argv.extend(ints.iter().map(|&v| Arg::Int(v as i64)));
    let grid = m.div_ceil(32) * n.div_ceil(32);
    run(&f, &argv, [grid as u32, 1, 1], &mut mem);
    let mut reference = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let s: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            reference[i * n + j] = if activation == "leaky_relu" && s < 0.0 { 0.01 * s } else { s };
        }
    }
    assert_close(&format!("matmul {t} {activation}"), &mem.read_f64(c), &reference, tolerance);
}

#[test]
fn matmul_f16() {
    matmul(F16, "", 1e-2);
}

#[test]
fn matmul_f32_tf32_with_leaky_relu() {
    // fp32 inputs go through tl.dot's default tf32 precision.
    matmul(F32, "leaky_relu", 1e-3);
}

#[test]
fn layer_norm_forward_and_backward() {
    let src = example_source("layer_norm.py");
    let t = F32;
    let (rows, n, block) = (33usize, 500usize, 128i64);
    let eps = 1e-5;
    let mut rng = Rng::new(4);
    let x = rounded(t, &rng.normals(rows * n));
    let w = rounded(t, &rng.normals(n));
    let b = rounded(t, &rng.normals(n));
    let dy = rounded(t, &rng.normals(rows * n));

    // Forward: BLOCK_SIZE 128 < N, so each of the three loops runs 4 times, the last one masked.
    let fwd_args =
        vec![ptr(t), ptr(t), ptr(t), ptr(t), ptr(F32), ptr(F32), int(), int(), ArgSpec::Float(F32), cint(block)];
    let fwd = elab("layer_norm.py", &src, "_layer_norm_fwd_fused", fwd_args);
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", t, &x);
    let by = poisoned(&mut mem, "y", t, rows * n);
    let bw = mem.alloc_from("w", t, &w);
    let bb = mem.alloc_from("b", t, &b);
    let bmean = poisoned(&mut mem, "mean", F32, rows);
    let brstd = poisoned(&mut mem, "rstd", F32, rows);
    let argv = [by, bw, bb, bmean, brstd].map(Arg::Buffer);
    let argv = [&[Arg::Buffer(bx)], &argv[..], &[Arg::Int(n as i64), Arg::Int(n as i64), Arg::Float(eps)]].concat();
    run(&fwd, &argv, [rows as u32, 1, 1], &mut mem);
    let (mut y_ref, mut mean_ref, mut rstd_ref) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rows {
        let row = &x[r * n..(r + 1) * n];
        let mean = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        let rstd = 1.0 / (var + eps as f32 as f64).sqrt();
        mean_ref.push(mean);
        rstd_ref.push(rstd);
        y_ref.extend(row.iter().enumerate().map(|(j, v)| (v - mean) * rstd * w[j] + b[j]));
    }
    assert_close("layer_norm fwd y", &mem.read_f64(by), &y_ref, 1e-5);
    assert_close("layer_norm fwd mean", &mem.read_f64(bmean), &mean_ref, 1e-5);
    assert_close("layer_norm fwd rstd", &mem.read_f64(brstd), &rstd_ref, 1e-5);
    let mean = mem.read_f64(bmean);
    let rstd = mem.read_f64(brstd);

    // Backward dx, with dw/db partial sums accumulated under per-group spin locks.
    let group = 8usize;
    let dx_args = vec![
        ptr(t),
        ptr(t),
        ptr(t),
        ptr(t),
        ptr(t),
        ptr(t),
        ptr(F32),
        ptr(F32),
        ptr(I32),
        int(),
        int(),
        cint(group as i64),
        cint(512),
    ];
    let bwd = elab("layer_norm.py", &src, "_layer_norm_bwd_dx_fused", dx_args);
    let text = bwd.to_string();
    assert!(text.contains("atomic_cas") && text.contains("while") && text.contains("atomic {op = xchg}"), "{text}");
    let bdx = poisoned(&mut mem, "dx", t, rows * n);
    let bdy = mem.alloc_from("dy", t, &dy);
    let bdw_part = mem.alloc_from("dw_partial", t, &vec![0.0; group * n]);
    let bdb_part = mem.alloc_from("db_partial", t, &vec![0.0; group * n]);
    let locks = mem.alloc_from("locks", I32, &vec![0.0; 2 * group]);
    let argv = [bdx, bdy, bdw_part, bdb_part, bx, bw, bmean, brstd, locks].map(Arg::Buffer);
    let argv = [&argv[..], &[Arg::Int(n as i64), Arg::Int(n as i64)]].concat();
    run(&bwd, &argv, [rows as u32, 1, 1], &mut mem);
    let (mut dx_ref, mut dw_ref, mut db_ref) = (Vec::new(), vec![0.0; n], vec![0.0; n]);
    for r in 0..rows {
        let xhat: Vec<f64> = (0..n).map(|j| (x[r * n + j] - mean[r]) * rstd[r]).collect();
        let wdy: Vec<f64> = (0..n).map(|j| w[j] * dy[r * n + j]).collect();
        let c1 = xhat.iter().zip(&wdy).map(|(a, b)| a * b).sum::<f64>() / n as f64;
        let c2 = wdy.iter().sum::<f64>() / n as f64;
        dx_ref.extend((0..n).map(|j| (wdy[j] - (xhat[j] * c1 + c2)) * rstd[r]));
        for j in 0..n {
            dw_ref[j] += dy[r * n + j] * xhat[j];
            db_ref[j] += dy[r * n + j];
        }
    }
    assert_close("layer_norm bwd dx", &mem.read_f64(bdx), &dx_ref, 1e-5);
    assert!(mem.read_f64(locks)[..group].iter().all(|&l| l == 0.0), "every lock is released");

    let dwdb_args = vec![ptr(t), ptr(t), ptr(t), ptr(t), int(), int(), cint(4), cint(128)];
    let dwdb = elab("layer_norm.py", &src, "_layer_norm_bwd_dwdb", dwdb_args);
    let (bdw, bdb) = (poisoned(&mut mem, "dw", t, n), poisoned(&mut mem, "db", t, n));
    let argv = [bdw_part, bdb_part, bdw, bdb].map(Arg::Buffer);
    let argv = [&argv[..], &[Arg::Int(group as i64), Arg::Int(n as i64)]].concat();
    run(&dwdb, &argv, [n.div_ceil(128) as u32, 1, 1], &mut mem);
    assert_close("layer_norm bwd dw", &mem.read_f64(bdw), &dw_ref, 1e-5);
    assert_close("layer_norm bwd db", &mem.read_f64(bdb), &db_ref, 1e-5);
}

fn attention(causal: bool) {
    let src = example_source("flash_attention.py");
    let t = F16;
    let (z, h, n_ctx, d) = (1usize, 2usize, 100usize, 32usize);
    let (bm, bn) = (32i64, 16i64);
    let mut args = vec![ptr(t), ptr(t), ptr(t), ArgSpec::Float(F32), ptr(F32), ptr(t)];
    args.extend((0..16 + 3).map(|_| int()));
    args.extend([cint(d as i64), cint(bm), cint(bn), ArgSpec::Constexpr(ConstValue::Bool(causal))]);
    let f = elab("flash_attention.py", &src, "_attn_fwd", args);
    let mut rng = Rng::new(5 + causal as u64);
    let len = z * h * n_ctx * d;
    let (q, k, v) = (rounded(t, &rng.normals(len)), rounded(t, &rng.normals(len)), rounded(t, &rng.normals(len)));
    let mut mem = Memory::new();
    let (bq, bk, bv) = (mem.alloc_from("q", t, &q), mem.alloc_from("k", t, &k), mem.alloc_from("v", t, &v));
    let bm_out = poisoned(&mut mem, "m", F32, z * h * n_ctx);
    let bo = poisoned(&mut mem, "o", t, len);
    let sm_scale = 1.0 / (d as f64).sqrt();
    let strides = [h * n_ctx * d, n_ctx * d, d, 1];
    let mut argv = vec![
        Arg::Buffer(bq),
        Arg::Buffer(bk),
        Arg::Buffer(bv),
        Arg::Float(sm_scale),
        Arg::Buffer(bm_out),
        Arg::Buffer(bo),
    ];
    for _ in 0..4 {
        argv.extend(strides.iter().map(|&s| Arg::Int(s as i64)));
    }
    argv.extend([Arg::Int(z as i64), Arg::Int(h as i64), Arg::Int(n_ctx as i64)]);
    run(&f, &argv, [n_ctx.div_ceil(bm as usize) as u32, (z * h) as u32, 1], &mut mem);
    let (mut o_ref, mut lse_ref) = (vec![0.0; len], vec![0.0; z * h * n_ctx]);
    let sm = sm_scale as f32 as f64;
    for bh in 0..z * h {
        let base = bh * n_ctx * d;
        for i in 0..n_ctx {
            let keys = if causal { i + 1 } else { n_ctx };
            let s: Vec<f64> = (0..keys)
                .map(|j| (0..d).map(|c| q[base + i * d + c] * k[base + j * d + c]).sum::<f64>() * sm)
                .collect();
            let mx = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = s.iter().map(|x| (x - mx).exp()).collect();
            let total: f64 = p.iter().sum();
            lse_ref[bh * n_ctx + i] = (mx + total.ln()) / std::f64::consts::LN_2;
            for c in 0..d {
                o_ref[base + i * d + c] = (0..keys).map(|j| p[j] * v[base + j * d + c]).sum::<f64>() / total;
            }
        }
    }
    let tag = if causal { "causal" } else { "non-causal" };
    assert_close(&format!("attention {tag} out"), &mem.read_f64(bo), &o_ref, 1e-2);
    assert_close(&format!("attention {tag} log-sum-exp"), &mem.read_f64(bm_out), &lse_ref, 1e-4);
}

#[test]
fn flash_attention_non_causal() {
    attention(false);
}

#[test]
fn flash_attention_causal() {
    attention(true);
}

/// Row-wise argmax over 3 column tiles (the last one masked) with many ties: values are small integers, so the
/// first-index tie-break inside a tile and the strict `>` across tiles are both exercised.
#[test]
fn argmax_rows_first_index_on_ties() {
    let src = example_source("argmax.py");
    let args = vec![ptr(F16), ptr(F32), ptr(I32), int(), int(), int(), cint(4), cint(128)];
    let f = elab("argmax.py", &src, "argmax_kernel", args);
    let (m, n, stride) = (37usize, 300usize, 301usize);
    let mut rng = Rng::new(7);
    let x: Vec<f64> = (0..m * stride).map(|_| (rng.uniform() * 8.0).floor()).collect();
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F16, &x);
    let bmax = poisoned(&mut mem, "max", F32, m);
    let bidx = poisoned(&mut mem, "idx", I32, m);
    let argv = [Arg::Buffer(bx), Arg::Buffer(bmax), Arg::Buffer(bidx), Arg::Int(m as i64), Arg::Int(n as i64)];
    let argv = [&argv[..], &[Arg::Int(stride as i64)]].concat();
    run(&f, &argv, [m.div_ceil(4) as u32, 1, 1], &mut mem);
    let (mut max_ref, mut idx_ref) = (Vec::new(), Vec::new());
    for r in 0..m {
        let row = &x[r * stride..r * stride + n];
        let best = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        max_ref.push(best);
        idx_ref.push(row.iter().position(|&v| v == best).unwrap() as f64);
    }
    assert_eq!(mem.read_f64(bmax), max_ref, "row maxima");
    assert_eq!(mem.read_f64(bidx), idx_ref, "first column of each row maximum");
    let ties = (0..m).filter(|&r| x[r * stride..r * stride + n].iter().filter(|&&v| v == max_ref[r]).count() > 1);
    assert!(ties.count() > m / 2, "the input must have ties to test the tie-break");
}
