//! Tensor memory under the simulator's happens-before check (`ptx_sim/src/tmem_race.rs`), on hand-written PTX: a
//! warp's `tcgen05.st` read by an MMA another warp issues, or by another warp's `tcgen05.ld`, and an MMA's D read
//! by a warp that did not wait for its commit. Each pattern is refused without the synchronization the PTX ISA
//! asks for (the writer's `tcgen05.wait::st` and `tcgen05.fence::before_thread_sync`, a barrier, the reader's
//! `tcgen05.fence::after_thread_sync`) and runs with it.

use tessel_ptx_sim as ptx_sim;

/// Runs `body` (an entry's instructions) over one CTA of `threads` threads with 4 KiB of shared memory.
fn run(body: &str, threads: u32) -> Result<(), String> {
    let ptx = format!(".visible .entry k(\n    .param .u64 k_param_0\n)\n{{\n{body}\n}}\n");
    let prog = ptx_sim::Program::parse(&ptx)?;
    let mut global = ptx_sim::Global::default();
    let out = global.alloc(vec![0; 4]);
    ptx_sim::run(&prog, &mut global, &[out], [1, 1, 1], threads, 4096)
}

/// Warp 0 allocates 64 columns (the address lands at shared 0), thread 0 initializes the mbarrier at shared 16
/// and zeroes a flag at shared 32 (`%r41`), and everyone reads the address into `%r4` after a barrier; `%r1` is
/// the thread, `%r2` its warp.
const PROLOGUE: &str = "    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;
    setp.eq.u32 %p1, %r2, 0;
    mov.u32 %r3, 0;
    @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r3], 64;
    @%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
    mov.u32 %r10, 16;
    setp.eq.u32 %p3, %r1, 0;
    @%p3 mbarrier.init.shared.b64 [%r10], 1;
    mov.u32 %r41, 32;
    @%p3 st.shared.b32 [%r41], 0;
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    ld.shared.b32 %r4, [%r3];";

/// Warp 0 stores eight columns of A (f16 pairs) at column 32 of its lanes, then runs `after`.
fn store_a(after: &str) -> String {
    format!(
        "    add.u32 %r5, %r4, 32;
    mov.u32 %r20, 1006648320;
    tcgen05.st.sync.aligned.32x32b.x8.b32 [%r5], {{%r20, %r20, %r20, %r20, %r20, %r20, %r20, %r20}};
{after}"
    )
}

/// Waits for the MMA's commit on the mbarrier (so that a producer blocks there, before its part of [`EPILOGUE`]).
const WAIT_FOR_MMA: &str = "    mov.u32 %r7, 0;
$L_wait_0:
    mbarrier.try_wait.parity.shared::cta.b64 %p6, [%r10], %r7;
    @!%p6 bra $L_wait_0;";

/// Thread 32 issues `D = A B` (M 128, N 16, K 16, f16; A from tensor memory at column 32, B from shared memory
/// at 1024 with the 128-byte swizzle, D at column 0), commits to the mbarrier, and warp 1 waits for it.
const MMA_BY_WARP_1: &str = "    add.u32 %r5, %r4, 32;
    setp.eq.u32 %p5, %r1, 32;
    setp.ne.u32 %p4, %r1, %r1;
    mov.u32 %r6, 134479888;
    mov.b64 %rd1, 4611756662049538112;
    @%p5 tcgen05.mma.cta_group::1.kind::f16 [%r4], [%r5], %rd1, %r6, %p4;
    @%p5 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r10];
    mov.u32 %r8, 0;
$L_wait:
    mbarrier.try_wait.parity.shared::cta.b64 %p9, [%r10], %r8;
    @!%p9 bra $L_wait;";

/// Everyone done with tensor memory, warp 0 frees it.
const EPILOGUE: &str = "$L_end:
    tcgen05.fence::before_thread_sync;
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r4, 64;
    ret;";

/// Warp 0 runs `producer` and waits for the MMA, warp 1 `consumer`, the other warps nothing, then everyone
/// [`EPILOGUE`].
fn two_warps(producer: &str, consumer: &str) -> String {
    format!(
        "{PROLOGUE}
    setp.eq.u32 %p7, %r2, 1;
    @%p7 bra $L_consumer;
    @!%p1 bra $L_end;
{producer}
{WAIT_FOR_MMA}
    bra.uni $L_end;
$L_consumer:
{consumer}
{EPILOGUE}"
    )
}

/// The producer's part of the hand-off after its store, and the consumer's before its access: named barrier 1.
const WAIT_FENCE_ARRIVE: &str = "    tcgen05.wait::st.sync.aligned;
    tcgen05.fence::before_thread_sync;
    bar.arrive 1, 64;";
const SYNC_FENCE: &str = "    bar.sync 1, 64;
    tcgen05.fence::after_thread_sync;";

/// A `tcgen05.st` by warp 0, then an MMA issued by warp 1 reading it as A: ordered by the ISA's pattern (wait::st,
/// fence::before_thread_sync, a barrier, fence::after_thread_sync), refused without the barrier, without the
/// writer's wait or fence, or without the issuer's fence.
#[test]
fn an_mma_reads_another_warps_store_only_after_the_isa_s_synchronization() {
    let consumer = |sync: &str| format!("{sync}\n{MMA_BY_WARP_1}");
    assert_eq!(run(&two_warps(&store_a(WAIT_FENCE_ARRIVE), &consumer(SYNC_FENCE)), 64), Ok(()));

    // No barrier: whichever warp runs first, one access meets the other's.
    let err = run(&two_warps(&store_a(""), &consumer("")), 64).unwrap_err();
    assert!(err.contains("tensor memory of CTA 0, lane 0, column 32: "), "{err}");
    assert!(
        err.contains(
            "tcgen05.mma (tcgen05 op #1) issued by thread 32 reads what thread 0 (warp 0) wrote with tcgen05.st"
        ),
        "{err}"
    );
    // The barrier, but the store neither waited for nor fenced.
    let err = run(&two_warps(&store_a("    bar.arrive 1, 64;"), &consumer(SYNC_FENCE)), 64).unwrap_err();
    assert!(
        err.contains(
            "thread 32 reads what thread 0 (warp 0) wrote with tcgen05.st with no tcgen05.wait::st of that thread \
             since, then a barrier"
        ),
        "{err}"
    );
    // Waited for, not fenced.
    let waited = "    tcgen05.wait::st.sync.aligned;\n    bar.arrive 1, 64;";
    let err = run(&two_warps(&store_a(waited), &consumer(SYNC_FENCE)), 64).unwrap_err();
    assert!(
        err.contains("with no tcgen05.fence::before_thread_sync of that thread after its tcgen05.wait::st"),
        "{err}"
    );
    // The issuer's warp passes the barrier but issues without its fence.
    let err = run(&two_warps(&store_a(WAIT_FENCE_ARRIVE), &consumer("    bar.sync 1, 64;")), 64).unwrap_err();
    assert!(err.contains("after a barrier, but with no tcgen05.fence::after_thread_sync of warp 1 since"), "{err}");
}

/// Warp 0's `tcgen05.st` read by warp 4 (the same lane quarter) with `tcgen05.ld`: ordered by the same pattern,
/// refused without the barrier.
#[test]
fn a_load_reads_another_warps_store_only_after_a_barrier() {
    let load = |arrive: &str, sync: &str| {
        format!(
            "{PROLOGUE}
    setp.eq.u32 %p7, %r2, 4;
    @%p7 bra $L_consumer;
    @!%p1 bra $L_end;
{}
    bra.uni $L_end;
$L_consumer:
{sync}
    add.u32 %r5, %r4, 32;
    tcgen05.ld.sync.aligned.32x32b.x8.b32 {{%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}}, [%r5];
    tcgen05.wait::ld.sync.aligned;
{EPILOGUE}",
            store_a(arrive)
        )
    };
    assert_eq!(run(&load(WAIT_FENCE_ARRIVE, SYNC_FENCE), 160), Ok(()));
    let wait_fence = "    tcgen05.wait::st.sync.aligned;\n    tcgen05.fence::before_thread_sync;";
    let err = run(&load(wait_fence, "    tcgen05.fence::after_thread_sync;"), 160).unwrap_err();
    assert!(err.contains("tensor memory of CTA 0, lane "), "{err}");
    assert!(
        err.contains("thread 128 (warp 4)'s tcgen05.ld reads what thread 0 (warp 0) wrote with tcgen05.st"),
        "{err}"
    );
}

/// Warp 1 issues an MMA and waits for its commit; warp 4 reads D (lanes 0-31) with `tcgen05.ld`. After warp 1's
/// wait and a barrier with it, that is ordered; without the barrier it is not, though a wait (warp 1's) has
/// observed the commit: warp 4 reads once warp 1 has set a flag by an atomic, which orders execution but carries
/// no clock.
#[test]
fn a_warp_reads_an_mma_s_result_only_after_observing_its_commit() {
    let program = |sync_1: &str, sync_4: &str| {
        format!(
            "{PROLOGUE}
    setp.eq.u32 %p7, %r2, 1;
    @%p7 bra $L_mma;
    setp.eq.u32 %p8, %r2, 4;
    @%p8 bra $L_reader;
    bra.uni $L_end;
$L_mma:
{MMA_BY_WARP_1}
{sync_1}
    @%p5 atom.shared.exch.b32 %r40, [%r41], 1;
    bra.uni $L_end;
$L_reader:
{sync_4}
$L_spin:
    atom.shared.or.b32 %r42, [%r41], 0;
    setp.eq.u32 %p10, %r42, 0;
    @%p10 bra $L_spin;
    tcgen05.ld.sync.aligned.32x32b.x8.b32 {{%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}}, [%r4];
    tcgen05.wait::ld.sync.aligned;
{EPILOGUE}"
        )
    };
    let arrive = "    tcgen05.fence::before_thread_sync;\n    bar.arrive 1, 64;";
    assert_eq!(run(&program(arrive, SYNC_FENCE), 160), Ok(()));
    let err = run(&program("", ""), 160).unwrap_err();
    assert!(
        err.contains(
            "thread 128 (warp 4)'s tcgen05.ld reads what tcgen05 op #1 wrote without a barrier between (a wait that \
             observes a commit covering it)"
        ),
        "{err}"
    );
}
