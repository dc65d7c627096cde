# Blackwell tensor memory and tcgen05 MMAs, written for tessel's tests: a tensor-memory round trip, and one
# tcgen05 MMA tile with A in shared or tensor memory, completing on an mbarrier through `mbarriers=` or
# `tcgen05_commit`.
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
def mma_read_too_early(A, B, Out, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, OVERWRITE: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    ra = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    ka = gl.arange(0, K, layout=gl.SliceLayout(0, L))
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, L))
    nb = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    a = gl.load(A + ra[:, None] * K + ka[None, :])
    a_s = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16), a)
    b_s = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16),
                                    gl.load(B + kb[:, None] * N + nb[None, :]))
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
