from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma, warpgroup_mma_wait


@gluon.jit
def wgmma_into_loop(A, B, Out, n_tiles, n_k, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr):
    # A persistent matmul's shape: each tile's first K step is issued before its K loop, so an asynchronous
    # wgmma's result enters the loop still in flight, and the tile loop carries the accumulator, which each tile's
    # first K step discards through a runtime use_acc. Tile t of Out is n_k * (A @ B) + t.
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [gl.num_warps(), 1], [16, N, 16])
    ra = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    ka = gl.arange(0, K, layout=gl.SliceLayout(0, L))
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, L))
    nb = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    # Operands in rings of one buffer, read through views, as a pipelined kernel's are.
    a_ring = gl.allocate_shared_memory(gl.float16, [1, M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16))
    b_ring = gl.allocate_shared_memory(gl.float16, [1, K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16))
    a_s = a_ring.index(0)
    b_s = b_ring.index(0)
    a_s.store(gl.load(A + ra[:, None] * K + ka[None, :]))
    b_s.store(gl.load(B + kb[:, None] * N + nb[None, :]))
    fence_async_shared()
    acc = gl.zeros([M, N], gl.float32, ACC)
    fresh = n_k < 0  # false, but only at run time: the first K step's use_acc is wgmma's scale-d predicate
    for t in range(n_tiles):
        acc = warpgroup_mma(a_s, b_s, acc, use_acc=fresh, is_async=True)
        for _ in range(1, n_k):
            acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
            acc = warpgroup_mma(a_s, b_s, acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
        out = gl.convert_layout(acc, L) + t
        gl.store(Out + t * M * N + ra[:, None] * N + nb[None, :], out)
