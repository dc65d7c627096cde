//! Two-CTA tensor-core MMAs (`tests/kernels/gluon_two_cta.py`) in the interpreter: a CTA pair's tile and a K loop
//! of two pairs with multicast loads and a multicast completion against a float64 reference; the IR they elaborate
//! to (the pair's barrier, the commit's multicast set, `tcgen05_mma_barrier_count`'s count); and what must be
//! caught (and `tcgen05_commit(descs=...)` reaching the same CTAs as `multicast=True`): a wrong arrival count for the MMA barrier (named deadlocks), a multicast set that misses a CTA holding
//! an operand's copy, one-CTA and two-CTA MMAs mixed in a kernel, a pair barrier in a kernel of one CTA.

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel_tile::ScalarType::*;

fn source() -> String {
    let path = format!("{}/../tests/kernels/gluon_two_cta.py", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A host descriptor of fp16 `block` staged in the 128-byte swizzle with `cga` (the CTAs' parts).
fn desc(block: [u32; 2], cga: &str) -> ArgSpec {
    let text = format!("NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, cga_layout={cga})");
    let layout = match tessel_layouts::expr::parse_layout(&text) {
        Ok(tessel_layouts::AnyLayout::Shared(tessel_layouts::SharedLayout::Nvmma(l))) => l,
        other => panic!("{text}: {other:?}"),
    };
    ArgSpec::TensorDesc { elem: F16, block_shape: block.to_vec(), padding_nan: false, layout: Some(layout) }
}

fn spec(args: Vec<ArgSpec>, ctas: u32) -> Specialization {
    let mut config = tessel_tile::KernelConfig { num_ctas: ctas, ..tessel_tile::KernelConfig::DEFAULT };
    config.num_warps = 4;
    Specialization::with_config(args, config)
}

fn layout(expr: &str) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Expr(expr.into()))
}

/// A descriptor's runtime arguments: base, rows, columns, row stride, column stride.
fn desc_args(buf: tessel_interp::memory::BufferId, rows: usize, cols: usize) -> [Arg; 5] {
    [Arg::Buffer(buf), Arg::Int(rows as i64), Arg::Int(cols as i64), Arg::Int(cols as i64), Arg::Int(1)]
}

/// Runs `f` (C = A @ B of [m, k] x [k, n], fp16) and gives C and its float64 reference, or the interpreter's error.
fn matmul(f: &tessel_tile::Func, m: usize, n: usize, k: usize) -> Result<(Vec<f64>, Vec<f64>), String> {
    let mut rng = Rng::new(41);
    let (a, b) = (rounded(F16, &rng.vec(m * k)), rounded(F16, &rng.vec(k * n)));
    let mut mem = Memory::new();
    let (ba, bb) = (mem.alloc_from("a", F16, &a), mem.alloc_from("b", F16, &b));
    let bc = poisoned(&mut mem, "c", F16, m * n);
    let mut args: Vec<Arg> = Vec::new();
    args.extend(desc_args(ba, m, k));
    args.extend(desc_args(bb, k, n));
    args.extend(desc_args(bc, m, n));
    tessel_interp::run(f, &args, [1, 1, 1], &mut mem).map_err(|e| e.to_string())?;
    let reference = (0..m * n).map(|i| (0..k).map(|p| a[i / n * k + p] * b[p * n + i % n]).sum()).collect();
    Ok((mem.read_f64(bc), reference))
}

#[test]
fn a_pair_tile_matches_a_float64_reference() {
    let args = vec![desc([256, 64], "[[1, 0]]"), desc([64, 128], "[[0, 1]]"), desc([256, 128], "[[1, 0]]")];
    let f = elab_with(&source(), "pair_tile", &spec(args, 2));
    let text = f.to_string();
    // The pair's barrier, and each CTA's expect of its own halves (A's 128x64 and B's 64x64 in fp16).
    assert!(text.contains("SwizzledSharedLayout(1,1,1,[0],cga_layout=[[0]])"), "{text}");
    assert!(text.contains("mbarrier_expect {bytes = 24576}"), "{text}");
    assert!(text.contains("two_ctas=True"), "{text}");
    let (c, reference) = matmul(&f, 256, 128, 64).unwrap();
    assert_close("two-CTA tile 256x128x64", &c, &reference, 2e-3);
}

fn loop_spec(arrivals: i64, by_hand: bool) -> Specialization {
    let acc = "TensorMemoryLayout(block=(128, 128), col_stride=1, cga_layout=[[1, 0], [2, 0]], two_ctas=True)";
    let args = vec![
        desc([512, 64], "[[1, 0], [2, 0]]"),
        desc([64, 128], "[[0, 1], [0, 0]]"),
        desc([512, 128], "[[1, 0], [2, 0]]"),
        cint(3),
        layout(acc),
        cint(arrivals),
        cint(by_hand as i64),
    ];
    spec(args, 4)
}

#[test]
fn a_k_loop_over_two_pairs_with_multicast_matches_a_float64_reference() {
    let f = elab_with(&source(), "pair_k_loop", &loop_spec(0, false));
    let text = f.to_string();
    // Pair 0's MMA reads B's halves that pair 1 holds too: its completion goes to all four CTAs, and each CTA's
    // barrier hears from both pairs.
    assert!(text.contains("tcgen05_commit {multicast = 15}"), "{text}");
    assert!(text.contains("mbarrier_init {count = 2}"), "{text}");
    let (c, reference) = matmul(&f, 512, 128, 192).unwrap();
    assert_close("two pairs, 512x128x192 in K blocks of 64", &c, &reference, 2e-3);
}

#[test]
fn a_commit_with_descs_reaches_every_copy_holder() {
    let f = elab_with(&source(), "pair_k_loop", &loop_spec(0, true));
    let text = f.to_string();
    assert!(text.contains("tcgen05_commit {multicast = 15}"), "{text}");
    let (c, reference) = matmul(&f, 512, 128, 192).unwrap();
    assert_close("two pairs, the commit by hand", &c, &reference, 2e-3);
}

#[test]
fn a_wrong_mma_barrier_count_is_a_named_deadlock() {
    // Two arrivals a round on a barrier of one complete two phases: the wait for the first sees the third running.
    for arrivals in [1, 3] {
        let f = elab_with(&source(), "pair_k_loop", &loop_spec(arrivals, false));
        let err = matmul(&f, 512, 128, 192).unwrap_err();
        assert!(err.contains("deadlock: waiting for phase parity 0 of mbarrier"), "count {arrivals}: {err}");
    }
}

#[test]
fn a_multicast_commit_that_misses_a_copy_holder_is_named() {
    let f = elab_with(&source(), "pair_k_loop", &loop_spec(0, false));
    // The commit told to reach only the issuing pair: the other pair holds the same B halves and refills them.
    let text = f.to_string().replace("tcgen05_commit {multicast = 15}", "tcgen05_commit {multicast = 3}");
    let broken = tessel_tile::parse::parse_func(&text).unwrap();
    tessel_tile::verify::verify(&broken).unwrap();
    let err = matmul(&broken, 512, 128, 192).unwrap_err();
    assert!(err.contains("multicast tcgen05_commit") && err.contains("reaches the CTAs 0b11"), "{err}");
    assert!(err.contains("but not 0b1100"), "{err}");
    // A set without the issuer is not a commit the hardware makes.
    let text = f.to_string().replace("tcgen05_commit {multicast = 15}", "tcgen05_commit {multicast = 14}");
    let err = tessel_tile::verify::verify(&tessel_tile::parse::parse_func(&text).unwrap()).unwrap_err().to_string();
    assert!(err.contains("must hold the issuing CTA"), "{err}");
}

#[test]
fn one_cta_and_two_cta_mmas_do_not_mix() {
    let pair = "TensorMemoryLayout(block=(128, 128), col_stride=1, cga_layout=[[1, 0]], two_ctas=True)";
    let single = "TensorMemoryLayout(block=(128, 128), col_stride=1, cga_layout=[[1, 0]])";
    let args = vec![desc([256, 64], "[[1, 0]]"), desc([64, 128], "[[0, 1]]"), layout(pair), layout(single)];
    let mut f = elab_with(&source(), "mixed_groups", &spec(args, 2));
    f.target = tessel_tile::Target::Sm100a;
    let (at, m) = tessel_tile::verify_tmem::check_target(&f).unwrap_err();
    assert!(m.contains("`cta_group::1` but an earlier one of the kernel is `cta_group::2`"), "{m}");
    // Reported at the second MMA (the pipeline renders its span).
    let mmas: Vec<_> = f.all_ops().into_iter().filter(|&o| f.op(o).op == tessel_tile::Op::Tcgen05Mma).collect();
    assert_eq!(at, mmas[1]);
    // The interpreter finds it running the first MMA, and reports it at the second too, for the kernel (no
    // partition): it used to name the op that was running.
    let mut mem = Memory::new();
    let (a, b) = (mem.alloc_from("a", F16, &[0.0; 256 * 64]), mem.alloc_from("b", F16, &[0.0; 64 * 128]));
    let args: Vec<Arg> = desc_args(a, 256, 64).into_iter().chain(desc_args(b, 64, 128)).collect();
    let err = tessel_interp::run(&f, &args, [1, 1, 1], &mut mem).unwrap_err();
    assert!(err.to_string().contains("`cta_group::1` but an earlier one"), "{err}");
    assert_eq!((err.op, err.partition), (Some(mmas[1]), None), "{err}");
}

#[test]
fn a_pair_barrier_needs_a_cluster() {
    let args = vec![desc([256, 64], "[]"), desc([64, 128], "[]"), desc([256, 128], "[]")];
    let err = elab_error_with(&source(), "pair_tile", &spec(args, 1));
    assert!(err.contains("a two-CTA barrier is shared by a pair of CTAs, but the kernel has num_ctas = 1"), "{err}");
    assert!(err.contains("mbarrier.allocate_mbarrier(two_ctas=True)"), "the span shows the call: {err}");
}

#[test]
fn a_pairs_accumulator_counts_each_ctas_columns() {
    // 512 columns in each CTA fit the budget (the pair's 1024 are two CTAs' 512); 1024 in each do not.
    let f = elab_with(&source(), "pair_columns", &spec(vec![ptr(F32), cint(512)], 2));
    assert_eq!(tessel_tile::tmem::plan(&f).unwrap().unwrap().total, 512);
    let mut mem = Memory::new();
    let out = poisoned(&mut mem, "out", F32, 1);
    run(&f, &[Arg::Buffer(out)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(out), vec![256.0 * 512.0]);
    let f = elab_with(&source(), "pair_columns", &spec(vec![ptr(F32), cint(1024)], 2));
    let (_, m) = tessel_tile::tmem::plan(&f).unwrap_err();
    assert!(m.contains("512"), "{m}");
}

/// Attention's two chained MMAs on a CTA pair (`pair_chain`): S = Q K^T through the transposed view of K's
/// buffer, which the pair splits along N (a view of a buffer split over CTAs), then O = P V with P = fp16(S) from
/// tensor memory aliasing S, and from shared memory; both against float64.
#[test]
fn chained_pair_mmas_through_a_split_view_match_a_float64_reference() {
    let (m, n, d, k) = (256, 128, 128, 64);
    for from_tmem in [true, false] {
        let args = vec![
            desc([256, 64], "[[1, 0]]"),
            desc([128, 64], "[[1, 0]]"),
            desc([128, 128], "[[0, 1]]"),
            desc([256, 128], "[[1, 0]]"),
            ArgSpec::Constexpr(ConstValue::Bool(from_tmem)),
        ];
        let f = elab_with(&source(), "pair_chain", &spec(args, 2));
        let mut rng = Rng::new(43);
        let (q, kk, v) = (rounded(F16, &rng.vec(m * k)), rounded(F16, &rng.vec(n * k)), rounded(F16, &rng.vec(n * d)));
        let mut mem = Memory::new();
        let (bq, bk, bv) = (mem.alloc_from("q", F16, &q), mem.alloc_from("k", F16, &kk), mem.alloc_from("v", F16, &v));
        let bo = poisoned(&mut mem, "o", F16, m * d);
        let mut a: Vec<Arg> = Vec::new();
        a.extend(desc_args(bq, m, k));
        a.extend(desc_args(bk, n, k));
        a.extend(desc_args(bv, n, d));
        a.extend(desc_args(bo, m, d));
        tessel_interp::run(&f, &a, [1, 1, 1], &mut mem).unwrap_or_else(|e| panic!("{e}"));
        // P: S in fp32, rounded once to fp16.
        let s: Vec<f64> = (0..m * n)
            .map(|i| (0..k).map(|p| q[i / n * k + p] * kk[i % n * k + p]).sum::<f64>() as f32 as f64)
            .collect();
        let p = rounded(F16, &s);
        let reference: Vec<f64> =
            (0..m * d).map(|i| (0..n).map(|j| p[i / d * n + j] * v[j * d + i % d]).sum()).collect();
        assert_close(&format!("pair chain, P from tensor memory: {from_tmem}"), &mem.read_f64(bo), &reference, 2e-3);
    }
}

/// Column slices of a pair's tensor memory (each CTA's part of the buffer at its last column bits): every
/// element read back where it was written, for halves and quarters. (Each CTA's part of a slice lies within the
/// CTA's part of the buffer; the slice once took the buffer's next columns instead, so the second CTA's rows of
/// the first slice read the first CTA's later columns.)
#[test]
fn column_slices_of_a_pairs_tensor_memory_keep_each_ctas_part() {
    for halves in [2, 4] {
        let args = vec![ArgSpec::Pointer(F32, true), ArgSpec::Pointer(F32, true), cint(halves)];
        let f = elab_with(&source(), "pair_column_slices", &spec(args, 2));
        let x: Vec<f64> = (0..256 * 128).map(|i| i as f64).collect();
        let mut mem = Memory::new();
        let bx = mem.alloc_from("x", F32, &x);
        let bo = poisoned(&mut mem, "out", F32, 256 * 128);
        tessel_interp::run(&f, &[Arg::Buffer(bx), Arg::Buffer(bo)], [1, 1, 1], &mut mem)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mem.read_f64(bo), x, "{halves} slices");
    }
}
