# Block-scaled MMAs and tcgen05_copy, written for tessel's tests: one 128 x N tile of (A · a_scale) @ (B · b_scale)
# with A and B loaded by TMA (fp8 e4m3, or e2m1 packed two per byte, padded in shared memory beside fp8), the
# scales stored into tensor memory from registers or copied there by tcgen05_copy from shared memory (in the
# unswizzled packed-block layout the test passes); and the broken variants the interpreter refuses: the scales
# read before the copy completes, or overwritten while the MMA reading them is in flight. Also a tcgen05_copy
# round trip of f32 through NVMMA shared memory.
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    TensorMemoryScalesLayout,
    allocate_tensor_memory,
    fence_async_shared,
    mbarrier,
    tcgen05_commit,
    tcgen05_copy,
    tcgen05_mma_scaled,
    tma,
)


@gluon.jit
def copy_round_trip(X, Y, M: gl.constexpr, N: gl.constexpr, SMEM: gl.constexpr, TMEM: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, gl.num_warps()], [1, 0])
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    x = gl.load(X + rows[:, None] * N + cols[None, :])
    smem = gl.allocate_shared_memory(gl.float32, [M, N], SMEM, x)
    tmem = allocate_tensor_memory(gl.float32, [M, N], TMEM)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    fence_async_shared()
    tcgen05_copy(smem, tmem)
    tcgen05_commit(bar)
    mbarrier.wait(bar, phase=0)
    mbarrier.invalidate(bar)
    y = gl.convert_layout(tmem.load(), L)
    gl.store(Y + rows[:, None] * N + cols[None, :], y)


@gluon.jit
def scaled_tile(a_desc, b_desc, SA, SB, Out, VEC: gl.constexpr, A_FMT: gl.constexpr, B_FMT: gl.constexpr,
                COPY_SCALES: gl.constexpr, SCALES_SMEM: gl.constexpr, BROKEN: gl.constexpr, STEPS: gl.constexpr):
    # STEPS K blocks, loaded at their K offsets (bytes of packed e2m1) into a ring of two operand buffers.
    M: gl.constexpr = 128
    N: gl.constexpr = b_desc.block_type.shape[0]
    K: gl.constexpr = a_desc.block_type.shape[1] * (2 if A_FMT == "e2m1" else 1)
    SK: gl.constexpr = K // VEC
    a_s = gl.allocate_shared_memory(a_desc.dtype, [2] + a_desc.block_type.shape, a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, [2] + b_desc.block_type.shape, b_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mma_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.init(mma_bar, count=1)

    scale_layout: gl.constexpr = TensorMemoryScalesLayout()
    sa_t = allocate_tensor_memory(SA.dtype.element_ty, [M, SK], scale_layout)
    sb_t = allocate_tensor_memory(SB.dtype.element_ty, [N, SK], scale_layout)
    acc = allocate_tensor_memory(gl.float32, [M, N], TensorMemoryLayout([M, N], col_stride=1))
    L: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [gl.num_warps(), 1], [1, 0])
    for s in gl.static_range(STEPS):
        a_cur = a_s.index(s % 2)
        b_cur = b_s.index(s % 2)
        mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_load(a_desc, [0, s * a_desc.block_type.shape[1]], bar, a_cur)
        tma.async_load(b_desc, [0, s * b_desc.block_type.shape[1]], bar, b_cur)
        mbarrier.wait(bar, s % 2)

        ks = s * SK + gl.arange(0, SK, layout=gl.SliceLayout(0, L))
        sa = gl.load(SA + gl.arange(0, M, layout=gl.SliceLayout(1, L))[:, None] * (SK * STEPS) + ks[None, :])
        sb = gl.load(SB + gl.arange(0, N, layout=gl.SliceLayout(1, L))[:, None] * (SK * STEPS) + ks[None, :])
        if COPY_SCALES:
            sa_s = gl.allocate_shared_memory(SA.dtype.element_ty, [M, SK], SCALES_SMEM, sa)
            sb_s = gl.allocate_shared_memory(SB.dtype.element_ty, [N, SK], SCALES_SMEM, sb)
            fence_async_shared()
            tcgen05_copy(sa_s, sa_t)
            tcgen05_copy(sb_s, sb_t)
            if BROKEN == 1:
                # Read before a commit tracking the copy is waited for.
                early = sa_t.load()
        else:
            sa_t.store(gl.convert_layout(sa, sa_t.get_reg_layout()))
            sb_t.store(gl.convert_layout(sb, sb_t.get_reg_layout()))

        tcgen05_mma_scaled(a_cur, b_cur.permute((1, 0)), acc, sa_t, sb_t, A_FMT, B_FMT, use_acc=s > 0)
        if BROKEN == 2:
            # Overwrite the scales while the MMA reading them is in flight.
            sa_t.store(gl.convert_layout(sa, sa_t.get_reg_layout()))
        tcgen05_commit(mma_bar)
        mbarrier.wait(mma_bar, s % 2)
    mbarrier.invalidate(bar)
    mbarrier.invalidate(mma_bar)
    O: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, gl.num_warps()], [1, 0])
    out = gl.convert_layout(acc.load(), O)
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, O))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, O))
    gl.store(Out + rows[:, None] * N + cols[None, :], out)


@gluon.jit
def scaled_loop(a_desc, b_desc, SA, SB, Out, VEC: gl.constexpr, SCALES_RING: gl.constexpr, STEPS: gl.constexpr,
                WAIT: gl.constexpr):
    # One fp8 tile of A and B (loaded once) times a different block of scales each of STEPS K steps, summed:
    # Out = sum_s (A · sa_s) @ (B · sb_s)^T. Each step stores its scales into a ring of two shared buffers, and,
    # as tutorial 11's pipelined kernels do, allocates their tensor memory inside the loop (the same columns every
    # step), copies them there by tcgen05_copy and issues the MMA, committing it to the step's barrier of two.
    # WAIT: the MMA of the previous step is waited for before the copies; else only after them, so the copies
    # overwrite the scales that MMA may still read (which the ISA does not order).
    M: gl.constexpr = 128
    N: gl.constexpr = b_desc.block_type.shape[0]
    K: gl.constexpr = a_desc.block_type.shape[1]
    SK: gl.constexpr = K // VEC
    a_s = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_type.shape, a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_type.shape, b_desc.layout)
    sa_ring = gl.allocate_shared_memory(SA.dtype.element_ty, [2, M, SK], SCALES_RING)
    sb_ring = gl.allocate_shared_memory(SB.dtype.element_ty, [2, N, SK], SCALES_RING)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mma_bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.init(mma_bars.index(0), count=1)
    mbarrier.init(mma_bars.index(1), count=1)
    mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
    tma.async_load(a_desc, [0, 0], bar, a_s)
    tma.async_load(b_desc, [0, 0], bar, b_s)
    mbarrier.wait(bar, 0)

    acc = allocate_tensor_memory(gl.float32, [M, N], TensorMemoryLayout([M, N], col_stride=1))
    L: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [gl.num_warps(), 1], [1, 0])
    for s in range(STEPS):
        slot = s % 2
        # The ring slot's last reader, the copy of step s - 2, was waited for in step s - 1.
        ks = s * SK + gl.arange(0, SK, layout=gl.SliceLayout(0, L))
        sa = gl.load(SA + gl.arange(0, M, layout=gl.SliceLayout(1, L))[:, None] * (SK * STEPS) + ks[None, :])
        sb = gl.load(SB + gl.arange(0, N, layout=gl.SliceLayout(1, L))[:, None] * (SK * STEPS) + ks[None, :])
        sa_ring.index(slot).store(sa)
        sb_ring.index(slot).store(sb)
        fence_async_shared()
        scale_layout: gl.constexpr = TensorMemoryScalesLayout()
        sa_t = allocate_tensor_memory(SA.dtype.element_ty, [M, SK], scale_layout)
        sb_t = allocate_tensor_memory(SB.dtype.element_ty, [N, SK], scale_layout)
        if WAIT:
            if s > 0:
                mbarrier.wait(mma_bars.index(1 - slot), ((s - 1) // 2) % 2)
        tcgen05_copy(sa_ring.index(slot), sa_t)
        tcgen05_copy(sb_ring.index(slot), sb_t)
        tcgen05_mma_scaled(a_s, b_s.permute((1, 0)), acc, sa_t, sb_t, "e4m3", "e4m3", use_acc=s > 0)
        tcgen05_commit(mma_bars.index(slot))
        if not WAIT:
            if s > 0:
                mbarrier.wait(mma_bars.index(1 - slot), ((s - 1) // 2) % 2)
    mbarrier.wait(mma_bars.index((STEPS - 1) % 2), ((STEPS - 1) // 2) % 2)
    mbarrier.invalidate(bar)
    mbarrier.invalidate(mma_bars.index(0))
    mbarrier.invalidate(mma_bars.index(1))
    O: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, gl.num_warps()], [1, 0])
    out = gl.convert_layout(acc.load(), O)
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, O))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, O))
    gl.store(Out + rows[:, None] * N + cols[None, :], out)
