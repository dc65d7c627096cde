//! The PTX simulator's MMAs of a CTA pair (`tcgen05.mma.cta_group::2`, `ptx_sim/src/tcgen05_pair.rs`), on a
//! kernel written here from the PTX ISA (codegen emits no pair MMA yet): a cluster of two CTAs computes a
//! 256 x N x K product, each CTA loading its 128 rows of A and half of Bᵀ's N rows with `.cta_group::2` TMA copies
//! that complete on the even CTA's mbarrier, as Gluon's two-CTA barriers have it (initialized by the even CTA for
//! the pair's two arrivals, each CTA announcing its own bytes there with `mbarrier.arrive.expect_tx` at a `mapa`
//! address); the even CTA's thread 0 waits for all of them, issues the pair's
//! MMAs (M 256) and commits them to both CTAs' mbarriers (`multicast::cluster`); each CTA reads its 128 rows of D
//! from its own tensor memory. Checked against the float64 product, through ptxas for sm_100a, and broken three
//! ways (a commit reaching one CTA, an operand overwritten while the MMA may read it, the even CTA not waiting
//! for the odd CTA's copies), each refused by name.

mod common;
mod sim_common;

use sim_common::ptx_sim::{Global, Program, TensorMap, run_clusters};
use tessel_math::testing::Rng;

/// Bytes of one CTA's A block (128 rows of 64 fp16) and of one row of a 64-wide fp16 block.
const A_BLOCK: u32 = 128 * 128;
const ROW: u32 = 128;

/// A pair product: N columns (each CTA holds N / 2 rows of Bᵀ), K in blocks of 64.
#[derive(Clone, Copy)]
struct Shape {
    n: u32,
    k_blocks: u32,
}

impl Shape {
    fn b_block(self) -> u32 {
        self.n / 2 * ROW
    }
    fn a_at(self, kb: u32) -> u32 {
        kb * A_BLOCK
    }
    fn b_at(self, kb: u32) -> u32 {
        self.k_blocks * A_BLOCK + kb * self.b_block()
    }
    /// The mbarriers and the tensor-memory address slot, after the blocks.
    fn bars(self) -> u32 {
        self.b_at(self.k_blocks)
    }
    fn smem(self) -> u32 {
        self.bars() + 32
    }
    /// Tensor-memory columns: N, at least 32.
    fn cols(self) -> u32 {
        self.n.max(32)
    }
}

/// The kernel's PTX: `.cta_group::2` everywhere (alloc, copies, MMA, commit, dealloc).
fn ptx(s: Shape) -> String {
    let (tma_bar, mma_bar, slot) = (s.bars(), s.bars() + 8, s.bars() + 16);
    let tx = s.k_blocks * (A_BLOCK + s.b_block());
    // f16 x f16 -> f32, both K-major, N, the pair's M 256 (PTX ISA: instruction descriptor, kind::f16).
    let idesc = 1 << 4 | (s.n >> 3) << 17 | (256 >> 4) << 24;
    let mut p = format!(
        "\
.version 8.8
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 global_smem[];
.visible .entry pair_mma(
    .param .u64 pair_mma_out,
    .param .align 64 .b8 pair_mma_tmap_a[128],
    .param .align 64 .b8 pair_mma_tmap_b[128]
)
.reqntid 128, 1, 1
.reqnctapercluster 2, 1, 1
{{
    .reg .pred %p<16>;
    .reg .b16 %rs<4>;
    .reg .b32 %r<64>;
    .reg .b64 %rd<32>;
    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;
    mov.u32 %r3, %cluster_ctarank;
    setp.eq.u32 %p1, %r3, 0;
    setp.eq.u32 %p2, %r2, 0;
    setp.eq.u32 %p3, %r1, 0;
    setp.eq.u32 %p6, %r1, %r1;
    setp.ne.u32 %p7, %r1, %r1;
    and.pred %p9, %p1, %p3;
    mov.u32 %r4, global_smem;
    add.u32 %r5, %r4, {tma_bar};
    add.u32 %r6, %r4, {mma_bar};
    add.u32 %r7, %r4, {slot};
    @!%p2 bra $A1;
    tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r7], {cols};
    tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
$A1:
    @%p9 mbarrier.init.shared::cta.b64 [%r5], 2;
    @%p3 mbarrier.init.shared::cta.b64 [%r6], 1;
    @%p3 fence.mbarrier_init.release.cluster;
    tcgen05.fence::before_thread_sync;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    tcgen05.fence::after_thread_sync;
    ld.shared.b32 %r8, [%r7];
    mov.b64 %rd1, pair_mma_tmap_a;
    cvta.param.u64 %rd2, %rd1;
    mov.b64 %rd3, pair_mma_tmap_b;
    cvta.param.u64 %rd4, %rd3;
    @!%p3 bra $T1;
    and.b32 %r9, %r3, -2;
    mapa.shared::cluster.u32 %r10, %r5, %r9;
    mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%r10], {tx};
    shl.b32 %r11, %r3, 7;
    mul.lo.u32 %r12, %r3, {half};
",
        cols = s.cols(),
        half = s.n / 2,
    );
    for kb in 0..s.k_blocks {
        p += &format!(
            "\
    add.u32 %r20, %r4, {a};
    mov.u32 %r21, {k};
    cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r20], [%rd2, {{%r21, %r11}}], [%r10];
    add.u32 %r22, %r4, {b};
    cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r22], [%rd4, {{%r21, %r12}}], [%r10];
",
            a = s.a_at(kb),
            b = s.b_at(kb),
            k = 64 * kb,
        );
    }
    p += &format!(
        "\
$T1:
    @!%p1 bra $M1;
    @!%p3 bra $M1;
$W0:
    mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p4, [%r5], 0;
    @!%p4 bra $W0;
    tcgen05.fence::after_thread_sync;
    mov.u32 %r30, {idesc};
"
    );
    // Four K steps of 16 per 64-wide block: the descriptors' start moves 32 bytes within the 128-byte swizzle.
    for kb in 0..s.k_blocks {
        for kk in 0..4 {
            let first = if kb == 0 && kk == 0 { "%p7" } else { "%p6" };
            p += &format!(
                "\
    add.u32 %r31, %r4, {a};
    shr.u32 %r31, %r31, 4;
    cvt.u64.u32 %rd10, %r31;
    or.b64 %rd10, %rd10, 0x4000404000010000;
    add.u32 %r32, %r4, {b};
    shr.u32 %r32, %r32, 4;
    cvt.u64.u32 %rd11, %r32;
    or.b64 %rd11, %rd11, 0x4000404000010000;
    tcgen05.mma.cta_group::2.kind::f16 [%r8], %rd10, %rd11, %r30, {first};
",
                a = s.a_at(kb) + 32 * kk,
                b = s.b_at(kb) + 32 * kk,
            );
        }
    }
    p += &format!(
        "\
    mov.u16 %rs1, 3;
    tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r6], %rs1;
$M1:
$W1:
    mbarrier.try_wait.parity.shared::cta.b64 %p8, [%r6], 0;
    @!%p8 bra $W1;
    tcgen05.fence::after_thread_sync;
    shl.b32 %r40, %r2, 21;
    add.u32 %r41, %r8, %r40;
    ld.param.u64 %rd20, [pair_mma_out];
    shl.b32 %r42, %r3, 7;
    add.u32 %r43, %r42, %r1;
    mul.wide.u32 %rd21, %r43, {row_bytes};
    add.s64 %rd22, %rd20, %rd21;
",
        row_bytes = 4 * s.n,
    );
    for chunk in 0..s.n / 4 {
        p += &format!(
            "\
    add.u32 %r44, %r41, {col};
    tcgen05.ld.sync.aligned.32x32b.x4.b32 {{%r50, %r51, %r52, %r53}}, [%r44];
    tcgen05.wait::ld.sync.aligned;
    add.s64 %rd23, %rd22, {byte};
    st.global.b32 [%rd23], %r50;
    add.s64 %rd24, %rd23, 4;
    st.global.b32 [%rd24], %r51;
    add.s64 %rd25, %rd23, 8;
    st.global.b32 [%rd25], %r52;
    add.s64 %rd26, %rd23, 12;
    st.global.b32 [%rd26], %r53;
",
            col = 4 * chunk,
            byte = 16 * chunk,
        );
    }
    p += &format!(
        "\
    tcgen05.fence::before_thread_sync;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    @!%p2 bra $D1;
    tcgen05.fence::after_thread_sync;
    tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r8, {cols};
$D1:
    ret;
}}
",
        cols = s.cols()
    );
    p
}

fn f16_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|&x| half::f16::from_f64(x).to_le_bytes()).collect()
}

/// Random fp16 values (exactly representable), `n` of them.
fn random(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| half::f16::from_f64(rng.uniform()).to_f64()).collect()
}

/// Runs `ptx` over A (256 x K) and Bᵀ (N x K); D (256 x N, f32) as the simulator leaves it.
fn simulate(ptx: &str, s: Shape, a: &[f64], bt: &[f64]) -> Result<Vec<f32>, String> {
    let prog = Program::parse(ptx)?;
    let k = (64 * s.k_blocks) as u64;
    let mut g = Global::default();
    let map = |g: &mut Global, base: u64, rows: u64, box_rows: u32| {
        g.map(TensorMap {
            base,
            elem_bytes: 2,
            dims: vec![rows, k],
            strides: vec![2 * k, 2],
            box_dims: vec![box_rows, 64],
            swizzle: 128,
            fp4_padded: false,
        })
    };
    let (ab, bb) = (g.alloc(f16_bytes(a)), g.alloc(f16_bytes(bt)));
    let out = g.alloc(vec![0xFF; 256 * s.n as usize * 4]);
    let (ma, mb) = (map(&mut g, ab, 256, 128), map(&mut g, bb, s.n as u64, s.n / 2));
    run_clusters(&prog, &mut g, &[out, ma, mb], [1, 1, 1], 128, s.smem(), 2)?;
    Ok(g.bytes(out).chunks(4).map(|w| f32::from_le_bytes(w.try_into().unwrap())).collect())
}

/// The float64 product D = A Bᵀ.
fn product(s: Shape, a: &[f64], bt: &[f64]) -> Vec<f64> {
    let (n, k) = (s.n as usize, 64 * s.k_blocks as usize);
    (0..256 * n).map(|i| (0..k).map(|j| a[i / n * k + j] * bt[i % n * k + j]).sum()).collect()
}

fn inputs(s: Shape, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let k = 64 * s.k_blocks as usize;
    (random(256 * k, seed), random(s.n as usize * k, seed + 1))
}

/// Both CTAs' rows of D equal the float64 product (f32 accumulation), at N 128 and 64 over one and two K
/// blocks; ptxas accepts the kernel.
#[test]
fn a_pair_mma_computes_both_ctas_rows() {
    for (i, s) in [Shape { n: 128, k_blocks: 1 }, Shape { n: 64, k_blocks: 2 }, Shape { n: 256, k_blocks: 1 }]
        .into_iter()
        .enumerate()
    {
        let (a, bt) = inputs(s, 10 + i as u64);
        let text = ptx(s);
        let d = simulate(&text, s, &a, &bt).unwrap_or_else(|e| panic!("N {}: {e}", s.n));
        for (j, (&got, want)) in d.iter().zip(product(s, &a, &bt)).enumerate() {
            assert!(
                (got as f64 - want).abs() <= 1e-5 * (1.0 + want.abs()),
                "N {}, K {}: D[{}][{}] = {got}, float64 {want}",
                s.n,
                64 * s.k_blocks,
                j / s.n as usize,
                j % s.n as usize
            );
        }
        common::assemble(&format!("pair_mma_n{}_k{}", s.n, s.k_blocks), &text, "sm_100a");
    }
}

/// A commit that reaches only the even CTA leaves the odd one waiting: a deadlock naming CTA 1.
#[test]
fn a_commit_that_misses_the_odd_cta_deadlocks() {
    let s = Shape { n: 64, k_blocks: 1 };
    let (a, bt) = inputs(s, 3);
    let text = ptx(s).replace("mov.u16 %rs1, 3;", "mov.u16 %rs1, 1;");
    let err = simulate(&text, s, &a, &bt).unwrap_err();
    assert!(err.contains("deadlock") && err.contains("CTA 1 waits"), "{err}");
}

/// The even CTA stores over its A block right after the commit, before a wait observed it: the MMA may still read
/// it. The odd CTA storing there before its wait races with its own pair copy, which completes on the even CTA's
/// mbarrier (nothing orders the odd CTA's threads after it).
#[test]
fn an_operand_overwritten_before_the_wait_is_refused() {
    let s = Shape { n: 64, k_blocks: 1 };
    let (a, bt) = inputs(s, 4);
    let commit =
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r6], %rs1;\n";
    let text = ptx(s).replace(commit, &format!("{commit}    st.shared.b32 [%r4], %r1;\n"));
    let err = simulate(&text, s, &a, &bt).unwrap_err();
    assert!(
        err.contains("CTA 0") && err.contains("overwrites shared byte 0, which tcgen05 op #1 still reads"),
        "{err}"
    );
    let text = ptx(s).replace("$M1:\n", "$M1:\n    @!%p1 st.shared.b32 [%r4], %r1;\n");
    let err = simulate(&text, s, &a, &bt).unwrap_err();
    assert!(
        err.contains("CTA 1")
            && err.contains("an asynchronous pair copy completing on CTA 0's mbarrier at shared 0x5000 and thread 0"),
        "{err}"
    );
}

/// The pair's barrier initialized for one CTA's arrival (not the pair's two): the even CTA's own copies complete
/// its phase and the MMA goes before the odd CTA's copies, reading shared memory of CTA 1 nothing has written.
#[test]
fn an_mma_before_the_odd_ctas_copies_is_refused() {
    let s = Shape { n: 64, k_blocks: 1 };
    let (a, bt) = inputs(s, 5);
    let text = ptx(s).replace("mbarrier.init.shared::cta.b64 [%r5], 2;", "mbarrier.init.shared::cta.b64 [%r5], 1;");
    let err = simulate(&text, s, &a, &bt).unwrap_err();
    assert!(err.contains("CTA 1's A") && err.contains("nothing has written"), "{err}");
}
