# Blackwell tensor memory and tcgen05 MMAs, written for tessel's tests: a tensor-memory round trip, one tcgen05
# MMA tile with A in shared or tensor memory, completing on an mbarrier through `mbarriers=` or `tcgen05_commit`,
# the same with its result read or an operand overwritten too early, two MMAs one after another (the orders the
# PTX ISA gives and the one it does not), a buffer the tensor-memory plan places on the columns of one an MMA in
# flight still reads, and a blocked matmul whose K loop runs over a ring of TMA-filled buffers.
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    allocate_tensor_memory,
    fence_async_shared,
    get_tmem_32x32b_reg_layout,
    get_tmem_reg_layout,
    mbarrier,
    tcgen05_commit,
    tma,
    tcgen05_mma,
)


@gluon.jit
def tmem_round_trip(X, Y, M: gl.constexpr, N: gl.constexpr, INIT: gl.constexpr):
    tmem_layout: gl.constexpr = TensorMemoryLayout((M, N), col_stride=1)
    regs: gl.constexpr = get_tmem_32x32b_reg_layout(M, N, [M, N], gl.num_warps())
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    offs = rows[:, None] * N + cols[None, :]
    x = gl.load(X + offs)
    if INIT:
        t = allocate_tensor_memory(gl.float32, [M, N], tmem_layout, value=x)
    else:
        t = allocate_tensor_memory(gl.float32, [M, N], tmem_layout)
        t.store(x)
    y = t.load(regs)
    gl.store(Y + offs, y)


@gluon.jit
def mma_tile(A, B, C, Out, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, A_IN_TMEM: gl.constexpr,
             USE_ACC: gl.constexpr, COMMIT: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    ra = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    ka = gl.arange(0, K, layout=gl.SliceLayout(0, L))
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, L))
    nb = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    a = gl.load(A + ra[:, None] * K + ka[None, :])
    b = gl.load(B + kb[:, None] * N + nb[None, :])
    b_s = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16), b)
    acc_layout: gl.constexpr = TensorMemoryLayout((M, N), col_stride=1)
    regs: gl.constexpr = get_tmem_32x32b_reg_layout(M, N, [M, N], gl.num_warps())
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    c = gl.load(C + rc[:, None] * N + nc[None, :])
    acc = allocate_tensor_memory(gl.float32, [M, N], acc_layout, value=c)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    if A_IN_TMEM:
        a_layout: gl.constexpr = TensorMemoryLayout((M, K), col_stride=1)
        a_regs: gl.constexpr = get_tmem_reg_layout(gl.float16, [M, K], a_layout, gl.num_warps())
        a_t = allocate_tensor_memory(gl.float16, [M, K], a_layout, value=gl.convert_layout(a, a_regs))
        fence_async_shared()
        if COMMIT:
            tcgen05_mma(a_t, b_s, acc, use_acc=USE_ACC)
            tcgen05_commit(bar)
        else:
            tcgen05_mma(a_t, b_s, acc, use_acc=USE_ACC, mbarriers=[bar])
    else:
        a_s = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16), a)
        fence_async_shared()
        if COMMIT:
            tcgen05_mma(a_s, b_s, acc, use_acc=USE_ACC)
            tcgen05_commit(bar)
        else:
            tcgen05_mma(a_s, b_s, acc, use_acc=USE_ACC, mbarriers=[bar])
    mbarrier.wait(bar, 0)
    mbarrier.invalidate(bar)
    gl.store(Out + rc[:, None] * N + nc[None, :], acc.load(regs))


@gluon.jit
def _staged_operands(A, B, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr):
    """A ([M, K] fp16, row-major) in registers and in shared memory, and B ([K, N]) in shared memory."""
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    ra = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    ka = gl.arange(0, K, layout=gl.SliceLayout(0, L))
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, L))
    nb = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    a = gl.load(A + ra[:, None] * K + ka[None, :])
    a_s = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16), a)
    b_s = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16),
                                    gl.load(B + kb[:, None] * N + nb[None, :]))
    return a, a_s, b_s


@gluon.jit
def mma_read_too_early(A, B, Out, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, OVERWRITE: gl.constexpr):
    a, a_s, b_s = _staged_operands(A, B, M, N, K)
    acc = allocate_tensor_memory(gl.float32, [M, N], TensorMemoryLayout((M, N), col_stride=1))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    fence_async_shared()
    tcgen05_mma(a_s, b_s, acc, use_acc=False, mbarriers=[bar])
    regs: gl.constexpr = get_tmem_32x32b_reg_layout(M, N, [M, N], gl.num_warps())
    if OVERWRITE:
        a_s.store(a)
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    gl.store(Out + rc[:, None] * N + nc[None, :], acc.load(regs))
    mbarrier.wait(bar, 0)


@gluon.jit
def mma_issue_order(A, B, Out, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, CASE: gl.constexpr):
    # Two MMAs issued back to back. CASE 0: both into `acc` (A B, then + A B: the ISA runs MMAs into one
    # accumulator in issue order), Out = 2 A B. CASE 1: the first reads A from tensor memory, the second writes
    # its result over those columns, with no wait between them (not ordered by the ISA: an error). CASE 2: the
    # same with the wait between them, Out = A B.
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, L))
    a, a_s, b_s = _staged_operands(A, B, M, N, K)
    acc_layout: gl.constexpr = TensorMemoryLayout((M, N), col_stride=1)
    regs: gl.constexpr = get_tmem_32x32b_reg_layout(M, N, [M, N], gl.num_warps())
    acc = allocate_tensor_memory(gl.float32, [M, N], acc_layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    fence_async_shared()
    if CASE == 0:
        tcgen05_mma(a_s, b_s, acc, use_acc=False)
        tcgen05_mma(a_s, b_s, acc, use_acc=True, mbarriers=[bar])
        mbarrier.wait(bar, 0)
    else:
        # A's fp16 elements in tensor memory, two to a 32-bit column: the columns of an f32 [M, K // 2] buffer.
        a_layout: gl.constexpr = TensorMemoryLayout((M, K), col_stride=1)
        a_regs: gl.constexpr = get_tmem_reg_layout(gl.float16, [M, K], a_layout, gl.num_warps())
        cols = allocate_tensor_memory(gl.float32, [M, K // 2], TensorMemoryLayout((M, K // 2), col_stride=1))
        a_t = cols._reinterpret(gl.float16, [M, K], a_layout)
        a_t.store(gl.convert_layout(a, a_regs))
        tcgen05_mma(a_t, b_s, acc, use_acc=False, mbarriers=[bar])
        if CASE == 2:
            mbarrier.wait(bar, 0)
        # A product of K // 2 columns (A times B's first ones) into the columns A was read from.
        nh = gl.arange(0, K // 2, layout=gl.SliceLayout(0, L))
        half_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([K, K // 2], gl.float16)
        b_half = gl.allocate_shared_memory(gl.float16, [K, K // 2], half_layout, gl.load(B + kb[:, None] * N + nh[None, :]))
        fence_async_shared()
        tcgen05_mma(a_s, b_half, cols, use_acc=False, mbarriers=[bar])
        mbarrier.wait(bar, 1)
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    gl.store(Out + rc[:, None] * N + nc[None, :], acc.load(regs))


@gluon.jit
def tmem_reuse(A, B, Out, Back, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, WAIT: gl.constexpr):
    # A in tensor memory (`a_t`) for an MMA into `acc`, then read back: that read is a_t's last use, so the
    # tensor-memory plan gives `later`, allocated after it, a_t's columns. `later` is stored with A read back
    # (Back = A). WAIT: the MMA, which reads those columns, is waited for before; else after, so the store
    # overwrites cells the MMA in flight may still read. Out = A B.
    a, a_s, b_s = _staged_operands(A, B, M, N, K)
    acc = allocate_tensor_memory(gl.float32, [M, N], TensorMemoryLayout((M, N), col_stride=1))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    a_layout: gl.constexpr = TensorMemoryLayout((M, K), col_stride=1)
    a_regs: gl.constexpr = get_tmem_reg_layout(gl.float16, [M, K], a_layout, gl.num_warps())
    a_t = allocate_tensor_memory(gl.float16, [M, K], a_layout, value=gl.convert_layout(a, a_regs))
    fence_async_shared()
    tcgen05_mma(a_t, b_s, acc, use_acc=False, mbarriers=[bar])
    back = a_t.load(a_regs)
    if WAIT:
        mbarrier.wait(bar, 0)
    later = allocate_tensor_memory(gl.float16, [M, K], a_layout)
    later.store(back)
    if not WAIT:
        mbarrier.wait(bar, 0)
    mbarrier.invalidate(bar)
    regs: gl.constexpr = get_tmem_32x32b_reg_layout(M, N, [M, N], gl.num_warps())
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    gl.store(Out + rc[:, None] * N + nc[None, :], acc.load(regs))
    ra = gl.arange(0, M, layout=gl.SliceLayout(1, a_regs))
    ka = gl.arange(0, K, layout=gl.SliceLayout(0, a_regs))
    gl.store(Back + ra[:, None] * K + ka[None, :], later.load(a_regs))


@gluon.jit
def tma_ring_matmul(a_desc, b_desc, C, M, N, K, STAGES: gl.constexpr):
    # C = A @ B, one BM x BN tile per program. Slot s of the ring has a `ready` barrier (its TMA copies landed) and
    # a `free` barrier (the MMA that read it is done). Step k waits for its slot, issues its MMA (which arrives on
    # the slot's `free` barrier when done), then refills the slot step k - 1 read with the copies of step
    # k + STAGES - 1, once that MMA is done: copies run STAGES - 1 steps ahead of the tensor cores.
    BM: gl.constexpr = a_desc.block_shape[0]
    BK: gl.constexpr = a_desc.block_shape[1]
    BN: gl.constexpr = b_desc.block_shape[1]
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    a_ring = gl.allocate_shared_memory(a_desc.dtype, [STAGES, BM, BK], a_desc.layout)
    b_ring = gl.allocate_shared_memory(b_desc.dtype, [STAGES, BK, BN], b_desc.layout)
    ready = mbarrier.allocate_mbarrier(batch=STAGES)
    free = mbarrier.allocate_mbarrier(batch=STAGES)
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(free.index(s), count=1)
    acc = allocate_tensor_memory(gl.float32, [BM, BN], TensorMemoryLayout((BM, BN), col_stride=1))
    n_k = gl.cdiv(K, BK)
    nbytes: gl.constexpr = a_desc.nbytes_per_cta + b_desc.nbytes_per_cta
    for s in gl.static_range(STAGES - 1):
        p = s < n_k
        mbarrier.expect(ready.index(s), nbytes, pred=p)
        tma.async_load(a_desc, [off_m, s * BK], ready.index(s), a_ring.index(s), pred=p)
        tma.async_load(b_desc, [s * BK, off_n], ready.index(s), b_ring.index(s), pred=p)
    for k in range(n_k):
        slot = k % STAGES
        mbarrier.wait(ready.index(slot), (k // STAGES) % 2)
        tcgen05_mma(a_ring.index(slot), b_ring.index(slot), acc, use_acc=k > 0, mbarriers=[free.index(slot)])
        nk = k + STAGES - 1
        ns = nk % STAGES
        refill = nk < n_k
        if refill & (k > 0):
            mbarrier.wait(free.index(ns), ((k - 1) // STAGES) % 2)
        mbarrier.expect(ready.index(ns), nbytes, pred=refill)
        tma.async_load(a_desc, [off_m, nk * BK], ready.index(ns), a_ring.index(ns), pred=refill)
        tma.async_load(b_desc, [nk * BK, off_n], ready.index(ns), b_ring.index(ns), pred=refill)
    last = n_k - 1
    mbarrier.wait(free.index(last % STAGES), (last // STAGES) % 2)
    for s in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(s))
        mbarrier.invalidate(free.index(s))
    regs: gl.constexpr = get_tmem_32x32b_reg_layout(BM, BN, [BM, BN], gl.num_warps())
    rows = off_m + gl.arange(0, BM, layout=gl.SliceLayout(1, regs))
    cols = off_n + gl.arange(0, BN, layout=gl.SliceLayout(0, regs))
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    gl.store(C + rows[:, None] * N + cols[None, :], acc.load(regs), mask=mask)


@gluon.jit
def tmem_slices(X, Y, M: gl.constexpr, N: gl.constexpr):
    # Stores an M x N tile to tensor memory and reads it back as two column halves (`slice`), each in the
    # 32x32b layout of its own shape, written to the two halves of Y.
    t = allocate_tensor_memory(gl.float32, [M, N], TensorMemoryLayout((M, N), col_stride=1))
    full: gl.constexpr = get_tmem_32x32b_reg_layout(M, N, [M, N], gl.num_warps())
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, full))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, full))
    t.store(gl.load(X + rows[:, None] * N + cols[None, :]))
    H: gl.constexpr = N // 2
    half: gl.constexpr = get_tmem_32x32b_reg_layout(M, H, [M, H], gl.num_warps())
    hr = gl.arange(0, M, layout=gl.SliceLayout(1, half))
    hc = gl.arange(0, H, layout=gl.SliceLayout(0, half))
    for i in gl.static_range(2):
        part = t.slice(i * H, H).load(half)
        gl.store(Y + hr[:, None] * N + i * H + hc[None, :], part)


@gluon.jit
def ring_matmul(A, B, C, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr):
    # C = A @ B with the K loop over a ring of STAGES shared-memory slots the threads fill with masked loads: step
    # k waits until the MMA that last read its slot (step k - STAGES) is done, stores its tiles, and issues its
    # MMA, which arrives on the slot's barrier when done; a final commit waits for all of them.
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    a_ring = gl.allocate_shared_memory(gl.float16, [STAGES, BM, BK], gl.NVMMASharedLayout.get_default_for([BM, BK], gl.float16))
    b_ring = gl.allocate_shared_memory(gl.float16, [STAGES, BK, BN], gl.NVMMASharedLayout.get_default_for([BK, BN], gl.float16))
    free = mbarrier.allocate_mbarrier(batch=STAGES)
    for s in gl.static_range(STAGES):
        mbarrier.init(free.index(s), count=1)
    done = mbarrier.allocate_mbarrier()
    mbarrier.init(done, count=1)
    acc = allocate_tensor_memory(gl.float32, [BM, BN], TensorMemoryLayout((BM, BN), col_stride=1))
    ra = off_m + gl.arange(0, BM, layout=gl.SliceLayout(1, L))
    ka = gl.arange(0, BK, layout=gl.SliceLayout(0, L))
    kb = gl.arange(0, BK, layout=gl.SliceLayout(1, L))
    nb = off_n + gl.arange(0, BN, layout=gl.SliceLayout(0, L))
    n_k = gl.cdiv(K, BK)
    for k in range(n_k):
        slot = k % STAGES
        if k >= STAGES:
            mbarrier.wait(free.index(slot), ((k - STAGES) // STAGES) % 2)
        kk = k * BK
        a = gl.load(A + ra[:, None] * K + (kk + ka)[None, :], mask=(ra[:, None] < M) & ((kk + ka)[None, :] < K), other=0.0)
        b = gl.load(B + (kk + kb)[:, None] * N + nb[None, :], mask=((kk + kb)[:, None] < K) & (nb[None, :] < N), other=0.0)
        a_ring.index(slot).store(a)
        b_ring.index(slot).store(b)
        fence_async_shared()
        tcgen05_mma(a_ring.index(slot), b_ring.index(slot), acc, use_acc=k > 0, mbarriers=[free.index(slot)])
    tcgen05_commit(done)
    mbarrier.wait(done, 0)
    regs: gl.constexpr = get_tmem_32x32b_reg_layout(BM, BN, [BM, BN], gl.num_warps())
    rows = off_m + gl.arange(0, BM, layout=gl.SliceLayout(1, regs))
    cols = off_n + gl.arange(0, BN, layout=gl.SliceLayout(0, regs))
    gl.store(C + rows[:, None] * N + cols[None, :], acc.load(regs), mask=(rows[:, None] < M) & (cols[None, :] < N))


@gluon.jit
def tmem_blocks(X, Y, M: gl.constexpr, N: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr):
    # An M x N round trip through tensor memory laid out in BM x BN blocks (block M 64 holds 16 rows per warp
    # quarter: the 16x32bx2 access), in the register layout `get_tmem_reg_layout` gives.
    layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    regs: gl.constexpr = get_tmem_reg_layout(gl.float32, (M, N), layout, gl.num_warps())
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    t = allocate_tensor_memory(gl.float32, [M, N], layout)
    t.store(gl.load(X + rows[:, None] * N + cols[None, :]))
    gl.store(Y + rows[:, None] * N + cols[None, :], t.load(regs))


@gluon.jit
def mma_grid(A, B, C, Out, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr,
             A_IN_TMEM: gl.constexpr):
    # Out = A @ B + C with the accumulator in BM x BN blocks (M 64 in one block of 64, M 256 in two of 128, N in
    # blocks of BN): tcgen05_mma issues one instruction per block and K step. A comes from shared or tensor
    # memory (packed f16, the accumulator's block M), C goes in and Out comes out in the accumulator's own
    # register layout.
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, L))
    nb = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    b_s = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16),
                                    gl.load(B + kb[:, None] * N + nb[None, :]))
    acc_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    acc = allocate_tensor_memory(gl.float32, [M, N], acc_layout)
    regs: gl.constexpr = acc.get_reg_layout()
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    acc.store(gl.load(C + rc[:, None] * N + nc[None, :]))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    if A_IN_TMEM:
        a_t = allocate_tensor_memory(gl.float16, [M, K], TensorMemoryLayout((BM, K), col_stride=1))
        a_regs: gl.constexpr = a_t.get_reg_layout()
        ra = gl.arange(0, M, layout=gl.SliceLayout(1, a_regs))
        ka = gl.arange(0, K, layout=gl.SliceLayout(0, a_regs))
        a_t.store(gl.load(A + ra[:, None] * K + ka[None, :]))
        fence_async_shared()
        tcgen05_mma(a_t, b_s, acc)
    else:
        ra = gl.arange(0, M, layout=gl.SliceLayout(1, L))
        ka = gl.arange(0, K, layout=gl.SliceLayout(0, L))
        a_s = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16),
                                        gl.load(A + ra[:, None] * K + ka[None, :]))
        fence_async_shared()
        tcgen05_mma(a_s, b_s, acc)
    tcgen05_commit(bar)
    mbarrier.wait(bar, 0)
    gl.store(Out + rc[:, None] * N + nc[None, :], acc.load())


@gluon.jit
def tmem_views(X, P, S1, M: gl.constexpr, N: gl.constexpr):
    # Two buffers of S (f32) in one allocation; buffer 1 is stored, then read back three ways through views of
    # the same cells: as P in f16 (one element in the low half of each 32-bit column, the older `unpacked=True`
    # spelling), and as its first two f32 columns.
    s_layout: gl.constexpr = TensorMemoryLayout((M, N), col_stride=1)
    bufs = allocate_tensor_memory(gl.float32, [2, M, N], s_layout)
    s = bufs.index(1)
    regs: gl.constexpr = s.get_reg_layout()
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    x = gl.load(X + rows[:, None] * N + cols[None, :])
    # f16 values stored as f32 reread as f16: store P's bits, the low half of each cell.
    p_layout: gl.constexpr = TensorMemoryLayout((M, N), unpacked=True)
    p = s._reinterpret(gl.float16, [M, N], p_layout)
    p.store(gl.convert_layout(x.to(gl.float16), p.get_reg_layout()))
    p_regs: gl.constexpr = p.get_reg_layout()
    pr = gl.arange(0, M, layout=gl.SliceLayout(1, p_regs))
    pc = gl.arange(0, N, layout=gl.SliceLayout(0, p_regs))
    gl.store(P + pr[:, None] * N + pc[None, :], p.load())
    s.store(x)
    two = s._reinterpret(gl.float32, [M, 2], TensorMemoryLayout((M, 2), col_stride=1))
    t_regs: gl.constexpr = two.get_reg_layout()
    tr = gl.arange(0, M, layout=gl.SliceLayout(1, t_regs))
    tc = gl.arange(0, 2, layout=gl.SliceLayout(0, t_regs))
    gl.store(S1 + tr[:, None] * 2 + tc[None, :], two.load())


@gluon.jit
def mma_broken_sync(A, B, Out, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, VARIANT: gl.constexpr):
    # Two broken ways to wait for a tcgen05_mma (the interpreter must name each): VARIANT 0 waits on a barrier no
    # commit tracks (the MMA was issued without `mbarriers=` and no tcgen05_commit follows); VARIANT 1 initializes
    # the barrier for two arrivals where the MMA's completion is one.
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    ra = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    ka = gl.arange(0, K, layout=gl.SliceLayout(0, L))
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, L))
    nb = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    a_s = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16),
                                    gl.load(A + ra[:, None] * K + ka[None, :]))
    b_s = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16),
                                    gl.load(B + kb[:, None] * N + nb[None, :]))
    acc = allocate_tensor_memory(gl.float32, [M, N], TensorMemoryLayout((M, N), col_stride=1))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    if VARIANT == 0:
        mbarrier.init(bar, count=1)
        fence_async_shared()
        tcgen05_mma(a_s, b_s, acc, use_acc=False)
    else:
        mbarrier.init(bar, count=2)
        fence_async_shared()
        tcgen05_mma(a_s, b_s, acc, use_acc=False, mbarriers=[bar])
    mbarrier.wait(bar, 0)
    regs: gl.constexpr = get_tmem_32x32b_reg_layout(M, N, [M, N], gl.num_warps())
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    gl.store(Out + rc[:, None] * N + nc[None, :], acc.load(regs))
