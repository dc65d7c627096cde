//! TMA gathers in clusters (`tests/kernels/gluon_cluster_gather.py`), compiled for sm_100a: example 05's pattern
//! on a CTA pair (each CTA gathers its half of the rows from its half of the indices into its part of the
//! buffer, completing on the pair's barrier in the even CTA, then the pair's MMA reads the rows as B), with and
//! without `multicast=True` (the same code: no two CTAs hold the same part), and on two pairs holding the same
//! rows (a multicast across the pairs, each destination's bytes on its own pair's barrier); and rows gathered
//! into a buffer every CTA of a cluster holds whole, each CTA gathering its own copy or, multicast, the CTAs
//! dealing out the gather4s with each landing in all of them. On the PTX simulator against the interpreter, the
//! interpreter against float64, the PTX's forms through ptxas; the simulator catches a multicast mask that
//! misses a CTA, and the indices split otherwise than the rows are refused at the call.

mod common;
mod sim_common;

use std::path::Path;

use common::{assemble, c, int, ptr};
use sim_common::{RunOptions, V, run_on_ctas, simulate_broken_on_ctas};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{F16, I32};
use tessel::tile::{KernelConfig, Target};
use tessel_math::testing::Rng;

const FILE: &str = "gluon_cluster_gather.py";

fn source() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels").join(FILE)).unwrap()
}

fn opts() -> RunOptions<'static> {
    RunOptions { file: FILE, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true }
}

fn cbool(b: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(b))
}

/// An fp16 host descriptor of `block` staged in `layout` (an `NVMMASharedLayout(...)` spelling).
fn desc(block: [u32; 2], layout: &str) -> ArgSpec {
    ArgSpec::TensorDesc {
        elem: F16,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: Some(sim_common::scaled::nvmma(layout)),
    }
}

fn nvmma(swizzle: u32, cga: &str) -> String {
    format!("NVMMASharedLayout(swizzle_byte_width={swizzle}, element_bitwidth=16, rank=2, cga_layout={cga})")
}

/// The tensor the gathers read: X_ROWS rows of X_COLS fp16.
const X_ROWS: u32 = 40;
const X_COLS: u32 = 96;
/// The pair's tile: M rows of A, K columns (a gathered row: 128 bytes).
const M: u32 = 256;
const K: u32 = 64;

fn ptx(kernel: &str, spec: Vec<ArgSpec>, ctas: u32) -> Result<String, String> {
    let src = source();
    let config = KernelConfig { num_warps: 4, num_ctas: ctas, ..KernelConfig::DEFAULT };
    let sp = Specialization::with_config(spec, config);
    let ks = tessel::KernelSource { file: FILE, source: &src, kernel, spec: &sp, module: None };
    match tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => Ok(kernel.ptx),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => Err(e.to_string()),
    }
}

/// `pair_gather_tile` on `ctas` CTAs (2: one pair; 4: two pairs gathering the same rows) with ROWS gathered rows
/// (the MMA's N), the indices split by `idx_cga`.
fn pair_spec(ctas: u32, rows: u32, idx_cga: &str, multicast: bool) -> Vec<ArgSpec> {
    let c_swizzle = (rows * 2).min(128);
    let (cga, x_cga) = if ctas == 2 { ("[[1, 0]]", "[[1, 0]]") } else { ("[[1, 0], [2, 0]]", "[[1, 0], [0, 0]]") };
    vec![
        desc([M / 2 * ctas, K], &nvmma(128, cga)),
        desc([1, K], &nvmma(128, x_cga)),
        ptr(I32),
        desc([M / 2 * ctas, rows], &nvmma(c_swizzle, cga)),
        int(false),
        c(rows as i64),
        ArgSpec::Constexpr(ConstValue::Expr(idx_cga.into())),
        cbool(multicast),
    ]
}

fn pair_idx_cga(ctas: u32) -> &'static str {
    if ctas == 2 { "[[0, 1]]" } else { "[[0, 1], [0, 0]]" }
}

/// Row indices from before the tensor to past its end, shuffled.
fn indices(rng: &mut Rng, n: u32) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n).map(|i| (i as i64 * 3 % (X_ROWS as i64 + 6) - 3) as f64).collect();
    for i in (1..v.len()).rev() {
        v.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    v
}

/// Row `r`, columns `col ..` of `x` (X_ROWS x X_COLS), `n` of them: zero outside the tensor.
fn gathered(x: &[f64], r: f64, col: i64, n: u32) -> Vec<f64> {
    (0..n as i64)
        .map(|j| {
            let (r, cc) = (r as i64, col + j);
            let inside = (0..X_ROWS as i64).contains(&r) && (0..X_COLS as i64).contains(&cc);
            if inside { x[(r * X_COLS as i64 + cc) as usize] } else { 0.0 }
        })
        .collect()
}

fn random(len: usize, seed: u64) -> Vec<f64> {
    tessel::tile::testing::vec_of(&mut Rng::new(seed), len, F16)
}

/// Example 05's fused gather on a pair, at 16 and 32 gathered rows (the MMA's N; 16 is example 05's), with and
/// without `multicast=True`, at column offsets inside and across the tensor's end, and on two pairs gathering the
/// same rows (shared by a multicast across the pairs, or each pair gathering its own): the simulator equals the
/// interpreter bit for bit, and the interpreter the float64 product of A and the gathered rows.
#[test]
fn a_pair_gathers_its_halves_of_the_rows_for_its_mma() {
    let cases = [
        (2u32, 16u32, true, 0i64),
        (2, 32, false, 0),
        (2, 32, true, 8),
        (2, 16, false, 48),
        (4, 16, true, 0),
        (4, 32, false, 8),
    ];
    for (i, (ctas, rows, multicast, col)) in cases.into_iter().enumerate() {
        let what = format!("pair_gather_tile, {ctas} CTAs, {rows} rows, multicast {multicast}, column {col}");
        let m = M / 2 * ctas;
        let mut rng = Rng::new(90 + i as u64);
        let (a, x) = (random((m * K) as usize, 100 + i as u64), random((X_ROWS * X_COLS) as usize, 200 + i as u64));
        let idx = indices(&mut rng, rows);
        let g: Vec<Vec<f64>> = idx.iter().map(|&r| gathered(&x, r, col, K)).collect();
        let want: Vec<f64> = (0..(m * rows) as usize)
            .map(|e| {
                let (mi, n) = (e / rows as usize, e % rows as usize);
                (0..K as usize).map(|k| a[mi * K as usize + k] * g[n][k]).sum()
            })
            .collect();
        let vals = [
            V::Desc(F16, Some(a), vec![m, K]),
            V::Desc(F16, Some(x), vec![X_ROWS, X_COLS]),
            V::Buf(I32, idx),
            V::Desc(F16, None, vec![m, rows]),
            V::Int(col),
        ];
        let spec = pair_spec(ctas, rows, pair_idx_cga(ctas), multicast);
        let outs = run_on_ctas(&source(), "pair_gather_tile", spec, &opts(), ctas, &vals, [1, 1, 1])
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        sim_common::check_fp16_product(&what, sim, interp, &want, false);
    }
}

/// The pair's gather in PTX: each CTA's two gather4s complete on the pair's barrier in the even CTA
/// (`.cta_group::2` at its `mapa` address); `multicast=True` changes nothing (no two CTAs hold the same rows).
/// ptxas accepts it.
#[test]
fn a_pair_gather_completes_on_the_even_ctas_barrier() {
    let p = ptx("pair_gather_tile", pair_spec(2, 16, "[[0, 1]]", true), 2).unwrap();
    let form =
        "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes [";
    assert!(p.contains(form), "{p}");
    assert!(!p.contains("gather4.mbarrier::complete_tx::bytes.multicast"), "{p}");
    assert_eq!(p, ptx("pair_gather_tile", pair_spec(2, 16, "[[0, 1]]", false), 2).unwrap());
    assemble("pair_gather_tile", &p, "sm_100a");
    // Two pairs holding the same rows share them: each gather4 lands in both pairs' CTAs of its half.
    let four = ptx("pair_gather_tile", pair_spec(4, 16, "[[0, 1], [0, 0]]", true), 4).unwrap();
    assert!(
        four.contains(
            ".cta_group::2.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes.multicast::cluster"
        ),
        "{four}"
    );
    assemble("pair_gather_tile_4ctas", &four, "sm_100a");
}

fn shared_spec(rows: u32, cols: u32, ctas: u32, multicast: bool) -> Vec<ArgSpec> {
    shared_spec_split(rows, cols, ctas, "[]", multicast)
}

/// `gather_shared` with the indices split by `idx_cga`.
fn shared_spec_split(rows: u32, cols: u32, ctas: u32, idx_cga: &str, multicast: bool) -> Vec<ArgSpec> {
    let cga = match ctas {
        2 => "[[1, 0]]",
        4 => "[[1, 0], [2, 0]]",
        _ => "[]",
    };
    let swizzle = (cols * 2).min(128);
    vec![
        desc([1, cols], &nvmma(swizzle, "[]")),
        ptr(I32),
        ptr(F16),
        int(false),
        c(rows as i64),
        c(cols as i64),
        ArgSpec::Constexpr(ConstValue::Expr(idx_cga.into())),
        ArgSpec::Constexpr(ConstValue::Expr(cga.into())),
        cbool(multicast),
    ]
}

fn shared_vals(rows: u32, cols: u32, col: i64, seed: u64) -> ([V; 4], Vec<f64>) {
    let x = random((X_ROWS * X_COLS) as usize, seed);
    let idx = indices(&mut Rng::new(seed + 1), rows);
    let want = idx.iter().flat_map(|&r| gathered(&x, r, col, cols)).collect();
    let vals = [
        V::Desc(F16, Some(x), vec![X_ROWS, X_COLS]),
        V::Buf(I32, idx),
        V::Out(F16, (rows * cols) as usize),
        V::Int(col),
    ];
    (vals, want)
}

/// Rows gathered into a buffer every CTA holds whole, on 2 and 4 CTAs (each CTA writing back its quarter or half
/// of its own copy), each CTA gathering alone or the CTAs sharing a multicast gather: the simulator equals the
/// interpreter, and both the rows of the tensor.
#[test]
fn every_cta_holds_the_gathered_rows() {
    for (i, (ctas, rows, cols, multicast, col)) in
        [(2u32, 16u32, 64u32, true, 0i64), (2, 16, 64, false, 16), (4, 32, 32, true, 64), (4, 32, 64, false, 0)]
            .into_iter()
            .enumerate()
    {
        let what = format!("gather_shared, {ctas} CTAs, {rows}x{cols}, multicast {multicast}, column {col}");
        let (vals, want) = shared_vals(rows, cols, col, 300 + i as u64);
        let outs = run_on_ctas(
            &source(),
            "gather_shared",
            shared_spec(rows, cols, ctas, multicast),
            &opts(),
            ctas,
            &vals,
            [1, 1, 1],
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        assert_eq!(sim, interp, "{what}: simulator vs interpreter");
        assert_eq!(interp, &want, "{what}: interpreter vs the tensor's rows");
    }
}

/// A multicast gather into a buffer the cluster holds whole: the CTAs deal out the gather4s (each group of four
/// rows issued by one CTA, by its row over four, with the cluster's mask); ptxas accepts it. With the mask cut to
/// the issuer alone, the other CTAs wait
/// for rows that never come: the simulator reports the deadlock.
#[test]
fn a_multicast_gather_is_dealt_out_and_reaches_every_cta() {
    let spec = || shared_spec(16, 64, 2, true);
    let p = ptx("gather_shared", spec(), 2).unwrap();
    let form =
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes.multicast::cluster";
    assert!(p.contains(form), "{p}");
    let mask_line = p.lines().find(|l| l.contains("mov.b16 %h")).expect("a mask").to_string();
    assert!(mask_line.ends_with(", 3;"), "the cluster's mask: {mask_line}");
    assemble("gather_shared_multicast", &p, "sm_100a");
    let (vals, _) = shared_vals(16, 64, 0, 7);
    let run = |edit: &dyn Fn(&str) -> String| {
        simulate_broken_on_ctas(&source(), "gather_shared", spec(), &opts(), 2, &vals, [1, 1, 1], edit)
    };
    assert_eq!(run(&|p| p.to_string()), Ok(()), "the unbroken PTX");
    let alone = mask_line.replace(", 3;", ", 1;");
    let err = run(&|p| p.replace(&mask_line, &alone)).unwrap_err();
    assert!(err.contains("deadlock"), "{err}");
}

/// Indices split over the pair otherwise than the rows they gather, and indices split over CTAs that each hold
/// the whole buffer: refused at the call, naming why.
#[test]
fn indices_split_otherwise_than_the_rows_are_refused_at_the_call() {
    let run = |src: &str, kernel: &str, spec: Vec<ArgSpec>| {
        let config = KernelConfig { num_warps: 4, num_ctas: 2, ..KernelConfig::DEFAULT };
        let sp = Specialization::with_config(spec, config);
        let ks = tessel::KernelSource { file: FILE, source: src, kernel, spec: &sp, module: None };
        tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default())
            .err()
            .map(|e| e.to_string())
    };
    let err = run(&source(), "pair_gather_tile", pair_spec(2, 16, "[[0, 0]]", true)).expect("refused");
    assert!(
        err.contains(
            "`tma.async_gather` in a cluster of 2 CTAs: CTA bit 0 moves the buffer by 8 rows but the row indices by 0"
        ) && err.contains("offs, col, loaded, x_buf"),
        "{err}"
    );
    let err = run(&source(), "gather_shared", shared_spec_split(16, 64, 2, "[[0, 1]]", true)).expect("refused");
    assert!(err.contains("CTA bit 0 splits the row indices (8..) over CTAs that each hold the whole buffer"), "{err}");
}
