//! The 2-CTA variant of `examples/gluon/blackwell_attention.py`: `attention_kernel` launched on CTA pairs
//! (`num_ctas=2`, descriptors whose `cga_layout`s split Q and O along the rows, K along the keys and V along the
//! head dim). S = Q K^T and O += P V are the pair's MMAs (`cta_group::2`, M = 256: each CTA's 128 rows of a
//! sub-tile), issued by the lead CTA; P is read from each CTA's tensor memory; the barriers the MMA warp waits on
//! are the pair's. No GPU here: the interpreter against float64 attention (causal and not, fp16 and bf16, head dims
//! 64 and 128, heads whose last query block is half past their end), ptxas for every specialization, the PTX
//! simulator against the interpreter bit for bit, and broken variants whose errors name what went wrong.

mod attention_ref;
mod cli_common;
mod common;
mod sim_common;

use cli_common::{scratch, tessel};
use sim_common::{RunOptions, V, run_on_ctas, simulate_broken_on_ctas};
use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::{self, BF16, F16};
use tessel::tile::Target;

const KERNEL: &str = "examples/gluon/blackwell_attention.py::attention_kernel";
const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/gluon/blackwell_attention.py");

/// Two heads of `n` keys.
const HEADS: usize = 2;

/// A pair's query rows: two sub-tiles of 256, each CTA 128 of each.
const BLOCK_M: usize = 512;

/// Rows of O after the last head, poisoned with NaN: a sub-tile past its head's end is not stored, so the last
/// head's would land here, and they must stay NaN.
const SPARE: usize = 256;

/// The K/V ring's stages: each CTA holds half of every K and V block, so 3 fit at head dim 128 (2 on one CTA).
const STAGES: usize = 3;

/// `NVMMASharedLayout` of a 16-bit block split by `cga`, whose per-CTA rows are `row_bytes` long.
fn nvmma(row_bytes: usize, cga: &str) -> String {
    let sw = row_bytes.min(128);
    format!("NVMMASharedLayout(swizzle_byte_width={sw},element_bitwidth=16,rank=2,cga_layout={cga})")
}

/// The descriptors' types at head dim `d`: Q and O blocks of a sub-tile (256 rows, each CTA 128), K's of 128 keys
/// split along the keys, V's split along the head dim.
fn descs(d: usize, dtype: &str) -> [String; 4] {
    let q = format!("tensordesc<{dtype}[256,{d}],{}>", nvmma(2 * d, "[[1,0]]"));
    let k = format!("tensordesc<{dtype}[128,{d}],{}>", nvmma(2 * d, "[[1,0]]"));
    let v = format!("tensordesc<{dtype}[128,{d}],{}>", nvmma(d, "[[0,1]]"));
    [q.clone(), k, v, q]
}

/// The target on a CTA pair for sm_100a and the specialization: head dim `d`, 512-row query blocks over 128-key
/// blocks, `causal`, [`STAGES`], `dtype` (`fp16`/`bf16`).
fn spec_args(target: &str, d: usize, causal: bool, dtype: &str) -> Vec<String> {
    let [q, k, v, o] = descs(d, dtype);
    let causal = if causal { "True" } else { "False" };
    let mut a = vec![target.to_string(), "--arch".into(), "sm_100a".into(), "--num-ctas".into(), "2".into()];
    a.extend(["--signature".into(), format!("fp32,{q},{k},{v},{o},i32")]);
    for c in [format!("HEAD_DIM={d}"), format!("BLOCK_M={BLOCK_M}"), "BLOCK_N=128".into(), format!("CAUSAL={causal}")] {
        a.extend(["--const".into(), c]);
    }
    a.extend(["--const".into(), format!("STAGES={STAGES}")]);
    a
}

/// `tessel run --interpret` of `target` over `HEADS` heads of `n` rows (one pair per query block and head): Q, K
/// and V random, O poisoned with NaN and [`SPARE`] rows longer; the buffers written to `out`.
fn run_args(target: &str, d: usize, n: usize, causal: bool, dtype: &str, out: &str) -> Vec<String> {
    let rows = HEADS * n;
    let mut a = vec!["run".to_string(), "--interpret".into()];
    a.extend(spec_args(target, d, causal, dtype));
    let grid = format!("{},{HEADS}", n.div_ceil(BLOCK_M));
    a.extend(["--grid".into(), grid, "--arg".into(), "sm_scale=0.125".into(), "--out-dir".into(), out.into()]);
    for t in ["q", "k", "v"] {
        a.extend(["--arg".into(), format!("{t}=randn:{rows}x{d}:{dtype}")]);
    }
    a.extend(["--arg".into(), format!("o=fill:nan:{}x{d}:{dtype}", rows + SPARE)]);
    for (t, r) in [("q", 256), ("k", 128), ("v", 128), ("o", 256)] {
        a.extend(["--arg".into(), format!("{t}_desc=desc:{t}:block={r}x{d}")]);
    }
    a.extend(["--arg".into(), format!("N_CTX={n}")]);
    a
}

/// Runs `tessel args` (which writes its buffers to `dir`) and checks its O against float64 attention over its Q,
/// K and V, and that the spare rows after the last head are still NaN; `what` names the case.
fn equals_float64(args: &[String], dir: &std::path::Path, d: usize, n: usize, causal: bool, dtype: &str, what: &str) {
    let (code, out, err) = tessel(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{what}: {err}");
    let read = |f: &str| tessel::npy::read(&std::fs::read(dir.join(f)).unwrap()).unwrap().to_f64();
    let (q, k, v, o) = (read("q.npy"), read("k.npy"), read("v.npy"), read("o.npy"));
    let (heads, spare) = o.split_at(HEADS * n * d);
    assert!(heads.iter().all(|x| x.is_finite()), "{what}: an output is not finite");
    assert!(spare.iter().all(|x| x.is_nan()), "{what}: a sub-tile past the last head's end was stored");
    let want = attention_ref::reference(&q, &k, &v, HEADS, d, n, causal);
    // P is rounded to the inputs' type before P V, and O once more at the end.
    let tol = if dtype == "fp16" { 2e-3 } else { 1.6e-2 };
    let worst = heads.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    assert!(worst <= tol, "{what}: largest error {worst} > {tol}\n{out}");
}

/// Head dims 64 and 128, fp16 and bf16, causal and not, under both of the interpreter's schedules of the
/// partitions. N_CTX 768: each head's second query block is half past its end (its second sub-tile computed, not
/// stored; causal, its key blocks stop at N_CTX); 256: one sub-tile of a block; 512: one whole block.
#[test]
fn pair_attention_matches_float64_in_the_interpreter() {
    let dir = scratch("bw-attention-pair-ref");
    for (d, causal, dtype, n, ws) in [
        (64, true, "fp16", 768, "hand-off"),
        (64, false, "bf16", 256, "run-ahead"),
        (128, false, "fp16", 768, "run-ahead"),
        (128, true, "bf16", 512, "hand-off"),
        (64, false, "fp16", 512, "hand-off"),
        (128, true, "fp16", 768, "run-ahead"),
    ] {
        let mut args = run_args(KERNEL, d, n, causal, dtype, dir.to_str().unwrap());
        args.extend(["--ws-schedule".into(), ws.into()]);
        equals_float64(&args, &dir, d, n, causal, dtype, &format!("d {d} causal {causal} {dtype} n {n} ({ws})"));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The lines of `ptx` that are code (not comments) and hold `s`.
fn code_lines(ptx: &str, s: &str) -> usize {
    ptx.lines().filter(|l| !l.trim_start().starts_with("//") && l.contains(s)).count()
}

/// Every specialization compiles for sm_100a on a CTA pair, every tcgen05 op is `cta_group::2` (no
/// `cta_group::1` anywhere), P V reads P from tensor memory, each CTA announces its bytes on the lead's barrier,
/// and ptxas takes it.
#[test]
fn pair_attention_assembles_for_sm_100a() {
    for d in [64, 128] {
        for causal in [true, false] {
            for dtype in ["fp16", "bf16"] {
                let what = format!("d {d} causal {causal} {dtype}");
                let mut args = vec!["compile".to_string()];
                args.extend(spec_args(KERNEL, d, causal, dtype));
                args.extend(["--emit".into(), "ptx".into()]);
                let (code, ptx, err) = tessel(&args.iter().map(String::as_str).collect::<Vec<_>>());
                assert_eq!(code, 0, "{what}: {err}");
                // S_0, S_1 before the loop, and in it P_0 V, P_1 V, the next S_0 and S_1.
                assert!(code_lines(&ptx, "tcgen05.mma.cta_group::2.kind::f16") >= 6, "{what}:\n{ptx}");
                assert_eq!(code_lines(&ptx, "cta_group::1"), 0, "{what}: a one-CTA tcgen05 op");
                assert!(ptx.contains("(A in tensor memory"), "{what}: P V reads P from tensor memory");
                let commit = "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster";
                assert!(code_lines(&ptx, commit) > 0, "{what}: the commits reach both CTAs");
                assert!(code_lines(&ptx, "mbarrier.arrive.expect_tx.shared::cluster.b64") > 0, "{what}");
                assert!(code_lines(&ptx, "cp.async.bulk.tensor.2d.cta_group::2") > 0, "{what}: pair copies");
                common::assemble(&format!("blackwell_attention_pair_d{d}_{causal}_{dtype}"), &ptx, "sm_100a");
            }
        }
    }
    // Each CTA's ring stage holds half a K and half a V block: at head dim 128 a pair fits 4 stages (225 KiB of
    // shared memory a CTA), where one CTA fits 2 and is refused 3, and a pair is refused 5.
    let compile = |pair: bool, stages: usize| {
        let mut args = vec!["compile".to_string()];
        if pair {
            args.extend(spec_args(KERNEL, 128, true, "fp16"));
            // Without its `--const STAGES=...`.
            args.truncate(args.len() - 2);
        } else {
            let desc = "tensordesc<fp16[128,128]>";
            args.extend([KERNEL.into(), "--arch".into(), "sm_100a".into(), "--signature".into()]);
            args.push(format!("fp32,{desc},{desc},{desc},{desc},i32"));
            for c in ["HEAD_DIM=128", "BLOCK_M=256", "BLOCK_N=128", "CAUSAL=True"] {
                args.extend(["--const".into(), c.into()]);
            }
        }
        args.extend(["--const".into(), format!("STAGES={stages}"), "--emit".into(), "ptx".into()]);
        tessel(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (code, ptx, err) = compile(true, 4);
    assert_eq!(code, 0, "a pair at 4 stages: {err}");
    common::assemble("blackwell_attention_pair_d128_4_stages", &ptx, "sm_100a");
    for (pair, stages) in [(false, 3), (true, 5)] {
        let (code, _, err) = compile(pair, stages);
        assert_ne!(code, 0, "pair {pair}, {stages} stages compiled");
        assert!(err.contains("bytes of shared memory, more than the 232448 one CTA can have on sm_100a"), "{err}");
    }
    assert_eq!(compile(false, 2).0, 0, "one CTA at 2 stages");
}

/// The specialization's arguments for the simulator: the descriptors as [`descs`] spells them.
fn sim_spec(d: u32, causal: bool, dtype: ScalarType) -> Vec<ArgSpec> {
    let desc = |rows: u32, row_bytes: usize, cga: &str| ArgSpec::TensorDesc {
        elem: dtype,
        block_shape: vec![rows, d],
        padding_nan: false,
        layout: Some(sim_common::scaled::nvmma(&nvmma(row_bytes, cga))),
    };
    let q = desc(256, 2 * d as usize, "[[1,0]]");
    let mut spec = vec![ArgSpec::Float(ScalarType::F32), q.clone()];
    spec.extend([desc(128, 2 * d as usize, "[[1,0]]"), desc(128, d as usize, "[[0,1]]"), q]);
    spec.push(ArgSpec::Int(ScalarType::I32, false));
    spec.extend([d as i64, BLOCK_M as i64, 128].map(|x| ArgSpec::Constexpr(ConstValue::Int(x))));
    spec.extend([ArgSpec::Constexpr(ConstValue::Bool(causal)), ArgSpec::Constexpr(ConstValue::Int(STAGES as i64))]);
    spec
}

/// Fresh random Q, K and V of one head of `n` rows, O poisoned and [`SPARE`] rows longer.
fn sim_values(d: u32, n: u32, dtype: ScalarType, seed: u64) -> Vec<V> {
    let mut rng = tessel_math::testing::Rng::new(seed);
    let mut input =
        || V::Desc(dtype, Some(tessel::tile::testing::vec_of(&mut rng, (n * d) as usize, dtype)), vec![n, d]);
    let (q, k, v) = (input(), input(), input());
    vec![V::F32(0.125), q, k, v, V::Desc(dtype, None, vec![n + SPARE as u32, d]), V::Int(n as i64)]
}

fn sim_opts() -> RunOptions<'static> {
    RunOptions {
        file: "examples/gluon/blackwell_attention.py",
        target: Target::Sm100a,
        num_warps: 4,
        num_stages: 1,
        poison: true,
    }
}

/// The kernel's PTX on the simulator (each CTA of the pair its own warps, shared and tensor memory; the pair's
/// MMAs run from the ISA, `ptx_sim/src/tcgen05_pair.rs`, held to the ISA's order) against the interpreter: one
/// head per case, head dims 64 and 128, causal and not, fp16 and bf16, 768 rows (a pair's second query block half
/// past the end) or 512. Every element of the head written and equal, bit for bit; the spare rows unwritten on
/// both sides.
#[test]
fn pair_attention_agrees_with_the_interpreter_on_the_simulator() {
    let src = std::fs::read_to_string(EXAMPLE).unwrap();
    for (d, causal, dtype, n, seed) in [
        (64u32, true, F16, 768u32, 1u64),
        (64, false, BF16, 512, 2),
        (128, false, F16, 768, 3),
        (128, true, BF16, 512, 4),
    ] {
        let what = format!("head dim {d}, causal {causal}, {dtype}, {n} rows");
        let grid = [n.div_ceil(BLOCK_M as u32), 1, 1];
        sim_common::ptx_sim::check_mma_order(true);
        let outs = run_on_ctas(
            &src,
            "attention_kernel",
            sim_spec(d, causal, dtype),
            &sim_opts(),
            2,
            &sim_values(d, n, dtype, seed),
            grid,
        );
        sim_common::ptx_sim::check_mma_order(false);
        let outs = outs.unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        let rows = (n * d) as usize;
        assert!(interp[..rows].iter().all(|x| x.is_finite()), "{what}: unwritten outputs");
        assert!(interp[rows..].iter().all(|x| x.is_nan()), "{what}: the interpreter stored past the head");
        assert!(sim[rows..].iter().all(|x| x.is_nan()), "{what}: the simulator stored past the head");
        attention_ref::assert_same_bits(&what, sim, interp, rows, d as usize);
    }
}

/// `examples/gluon/blackwell_attention.py` with its first `from` replaced by `to`, run on a CTA pair at head dim
/// 64, non-causal, fp16, 512 rows a head (`v_cga`: V's descriptor's split): the error.
fn broken(name: &str, from: &str, to: &str, v_cga: &str) -> String {
    let dir = scratch(name);
    let file = attention_ref::variant(EXAMPLE, &dir, "variant.py", from, to);
    let target = format!("{}::attention_kernel", file.display());
    let mut args = run_args(&target, 64, 512, false, "fp16", dir.to_str().unwrap());
    let v = args.iter().position(|a| a.starts_with("fp32,")).unwrap();
    args[v] = args[v].replacen(&nvmma(64, "[[0,1]]"), &nvmma(64, v_cga), 1);
    attention_ref::refused(name, &args, &dir)
}

#[test]
fn broken_pair_variants_name_the_partition_barrier_and_ctas() {
    // Each CTA announces the whole K block's bytes on the pair's barrier, where only its half lands: the lead's
    // copy, which counts both CTAs' bytes, waits for 16 KiB that never come.
    let nbytes = "mbarrier.expect(k_ready.index(s), k_desc.nbytes_per_cta)";
    let err = broken("pair-bytes", nbytes, "mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes)", "[[0,1]]");
    assert!(err.contains("deadlock") && err.contains("worker partition 2 waits"), "the MMA warp: {err}");
    assert!(
        err.contains(
            "mbarrier `k_ready[0]` (phase 0 running, which still lacks 0 arrival(s) and 16384 transaction byte(s) \
             in the pair's copy in CTA 0)"
        ),
        "{err}"
    );
    // The pair's P barrier given the pair's count: a two-CTA barrier's count is each CTA's (the lead's copy counts
    // both), so it waits for two softmax warpgroups more than the pair has.
    let init = "mbarrier.init(p_ready.index(i), count=1)";
    let err = broken("pair-count", init, "mbarrier.init(p_ready.index(i), count=2)", "[[0,1]]");
    assert!(err.contains("deadlock") && err.contains("worker partition 2 waits"), "the MMA warp: {err}");
    assert!(
        err.contains("mbarrier `p_ready[0]` (phase 0 running, which still lacks 2 arrival(s) and 0 transaction byte(s) in the pair's copy in CTA 0)"),
        "{err}"
    );
    // O's tensor memory not the pair's: P V would be a one-CTA MMA after the pair's S = Q K^T. Refused at P V.
    let o =
        "o_layout: gl.constexpr = TensorMemoryLayout([CTA_M, HEAD_DIM], col_stride=1, cga_layout=CGA, two_ctas=PAIR)";
    let single = "o_layout: gl.constexpr = TensorMemoryLayout([CTA_M, HEAD_DIM], col_stride=1, cga_layout=CGA)";
    let err = broken("pair-mixed", o, single, "[[0,1]]");
    assert!(err.contains("this MMA is `cta_group::1` but an earlier one of the kernel is `cta_group::2`"), "{err}");
    assert!(err.contains("tcgen05_mma(p_tmem, v_bufs.index(s), o_tmem.index(i)"), "the span, at P V: {err}");
    // V's descriptor split along the keys, as K's is: the pair's MMA takes B split along N (V's head dim).
    let err = broken("pair-v-split", "\n", "\n", "[[1,0]]");
    assert!(err.contains("a two-CTA MMA reads B split along N by the CTA pair"), "{err}");
    assert!(err.contains("tcgen05_mma(p_tmem, v_bufs.index(s), o_tmem.index(i)"), "the span, at P V: {err}");
}

/// On the simulator (which runs each CTA's warps and barriers on their own): the pair's K barrier made each CTA's
/// own (`allocate_mbarrier` without `two_ctas`), so the lead's wait no longer covers the odd CTA's half of K,
/// whose ring the odd CTA then refills under the pair's MMA; the commit of the first S = Q K^T reaching the
/// lead only (its PTX mask edited), so the odd CTA's softmax waits for S forever; and the pair's P and O barriers
/// made each CTA's own, so the pair's P V reads the odd CTA's P and O unordered after its threads wrote them.
/// (The interpreter runs a cluster in its logical view, where a wait needs the phase in every CTA's copy: it
/// accepts the first and the last two.)
#[test]
fn broken_pair_variants_are_refused_on_the_simulator() {
    let src = std::fs::read_to_string(EXAMPLE).unwrap();
    let (d, n) = (64u32, 768u32);
    let run = |src: &str, edit: &dyn Fn(&str) -> String| {
        let vals = sim_values(d, n, F16, 9);
        simulate_broken_on_ctas(
            src,
            "attention_kernel",
            sim_spec(d, false, F16),
            &sim_opts(),
            2,
            &vals,
            [2, 1, 1],
            edit,
        )
    };
    assert_eq!(run(&src, &|p| p.to_string()), Ok(()), "the unbroken PTX");
    let pair_k = "k_ready = mbarrier.allocate_mbarrier(batch=STAGES, two_ctas=PAIR)";
    assert!(src.contains(pair_k), "the example no longer holds `{pair_k}`");
    let own_k = src.replacen(pair_k, "k_ready = mbarrier.allocate_mbarrier(batch=STAGES)", 1);
    let err = run(&own_k, &|p| p.to_string()).unwrap_err();
    assert!(err.contains("CTA 1") && err.contains("cp.async.bulk.tensor"), "per-CTA K barrier: {err}");
    assert!(err.contains("without a barrier between"), "per-CTA K barrier: {err}");
    // The commit's mask is `1 << (rank ^ 0) | 1 << (rank ^ 1)`: the second offset made 0 leaves the issuer only.
    let lead_only = |p: &str| {
        let at = p.find("tcgen05.commit").unwrap();
        let xor = p[..at].rfind(", 1;").unwrap();
        assert!(p[..xor].rsplit('\n').next().unwrap().contains("xor.b32"), "the pair offset's xor");
        format!("{}, 0;{}", &p[..xor], &p[xor + 4..])
    };
    let err = run(&src, &lead_only).unwrap_err();
    assert!(err.contains("deadlock") && err.contains("CTA 1"), "commit to the lead only: {err}");
    // The pair's P and O barriers made each CTA's own: the lead's MMA warp waits for its own CTA's softmax (P
    // written) and correction (O rescaled) only, so the pair's P V reads the odd CTA's P, and accumulates into its
    // O, with nothing ordering them after the odd CTA's `tcgen05.st` there (tensor memory's happens-before,
    // `ptx_sim/src/tmem_race.rs`).
    for (bar, operand, writer) in [("p_ready", "A", "thread 0 (warp 0)"), ("o_corr", "D", "thread 256 (warp 8)")] {
        let pair = format!("{bar} = mbarrier.allocate_mbarrier(batch=2, two_ctas=PAIR)");
        assert!(src.contains(&pair), "the example no longer holds `{pair}`");
        let own = src.replacen(&pair, &format!("{bar} = mbarrier.allocate_mbarrier(batch=2)"), 1);
        let err = run(&own, &|p| p.to_string()).unwrap_err();
        assert!(
            err.contains(&format!("CTA 0's pair MMA, CTA 1's {operand}: tensor memory of CTA 1, lane ")),
            "{bar}: {err}"
        );
        assert!(
            err.contains("tcgen05.mma (tcgen05 op #") && err.contains("issued by CTA 0's thread 384"),
            "{bar}: {err}"
        );
        assert!(
            err.contains(&format!("what {writer} wrote with tcgen05.st without a barrier between")),
            "{bar}: {err}"
        );
    }
}
