"""Warp specialization in Gluon: a producer partition streams tiles into shared memory while the default
partition consumes them.

Each program handles TILES consecutive BLOCK_M x N tiles of X. The producer (a worker partition of its own
warps, asking for few registers) copies tile i into buffer i % STAGES of a shared-memory ring with cp.async and
arrives on `ready[s]`; the consumer (the default partition, on the kernel's warps) waits for `ready[s]`, reads
the tile, arrives on `empty[s]` so the producer may refill the buffer, writes Y = X * scale + 1 and keeps a
running sum of its tiles, which warp_specialize returns and the kernel stores after the partitions join. The
phase of each barrier flips every STAGES tiles; the producer's first wait on a fresh `empty` barrier passes
(it waits for the phase before the first).
"""
import torch

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import mbarrier


@gluon.jit
def tile_offsets(BLOCK_M: gl.constexpr, N: gl.constexpr, layout: gl.constexpr):
    rows = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    return rows[:, None] * N + cols[None, :]


@gluon.jit
def producer(x_ptr, base, bufs, ready, empty, TILES: gl.constexpr, BLOCK_M: gl.constexpr, N: gl.constexpr,
             STAGES: gl.constexpr):
    # This partition's warps: gl.num_warps() is worker_num_warps[0] here.
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [32 // (N // 8), N // 8], [gl.num_warps(), 1], [1, 0])
    offs = tile_offsets(BLOCK_M, N, layout)
    for i in range(TILES):
        s = i % STAGES
        mbarrier.wait(empty.index(s), ((i // STAGES) & 1) ^ 1)
        async_copy.async_copy_global_to_shared(bufs.index(s), x_ptr + base + i * BLOCK_M * N + offs)
        async_copy.commit_group()
        async_copy.wait_group(num_outstanding=0)
        # Every thread's copy has landed before the one arrival says so.
        gl.thread_barrier()
        mbarrier.arrive(ready.index(s))


@gluon.jit
def consumer(y_ptr, scale, base, bufs, ready, empty, TILES: gl.constexpr, BLOCK_M: gl.constexpr, N: gl.constexpr,
             STAGES: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [32 // (N // 8), N // 8], [gl.num_warps(), 1], [1, 0])
    offs = tile_offsets(BLOCK_M, N, layout)
    total = gl.zeros([BLOCK_M, N], gl.float32, layout)
    for i in range(TILES):
        s = i % STAGES
        mbarrier.wait(ready.index(s), (i // STAGES) & 1)
        x = bufs.index(s).load(layout).to(gl.float32)
        # Every thread has read the buffer before the producer may refill it.
        gl.thread_barrier()
        mbarrier.arrive(empty.index(s))
        gl.store(y_ptr + base + i * BLOCK_M * N + offs, (x * scale + 1.0).to(gl.float16))
        total += x
    return total


@gluon.jit
def stream_kernel(x_ptr, y_ptr, sum_ptr, scale, TILES: gl.constexpr, BLOCK_M: gl.constexpr, N: gl.constexpr,
                  STAGES: gl.constexpr):
    bufs = gl.allocate_shared_memory(gl.float16, [STAGES, BLOCK_M, N], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))
    ready = mbarrier.allocate_mbarrier(batch=STAGES)
    empty = mbarrier.allocate_mbarrier(batch=STAGES)
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=1)
    # The first element of this program's tiles: the worker gets it from the default partition.
    base = gl.program_id(0) * TILES * BLOCK_M * N
    total = gl.warp_specialize([
        (consumer, (y_ptr, scale, base, bufs, ready, empty, TILES, BLOCK_M, N, STAGES)),
        (producer, (x_ptr, base, bufs, ready, empty, TILES, BLOCK_M, N, STAGES)),
    ], worker_num_warps=[4], worker_num_regs=[40])
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [32 // (N // 8), N // 8], [gl.num_warps(), 1], [1, 0])
    offs = tile_offsets(BLOCK_M, N, layout)
    gl.store(sum_ptr + gl.program_id(0) * BLOCK_M * N + offs, total)


def stream(x, scale, TILES=8, BLOCK_M=32, N=64, STAGES=2):
    assert x.is_contiguous() and x.shape[1] == N and x.shape[0] % (TILES * BLOCK_M) == 0
    programs = x.shape[0] // (TILES * BLOCK_M)
    y = torch.empty_like(x)
    sums = torch.empty((programs * BLOCK_M, N), device=x.device, dtype=torch.float32)
    stream_kernel[(programs, )](x, y, sums, scale, TILES, BLOCK_M, N, STAGES, num_warps=4)
    return y, sums


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4 * 8 * 32, 64, device="cuda", dtype=torch.float16)
    y, sums = stream(x, 2.0)
    torch.testing.assert_close(y, (x.float() * 2.0 + 1.0).half())
    want = x.float().reshape(4, 8, 32, 64).sum(dim=1).reshape(4 * 32, 64)
    torch.testing.assert_close(sums, want, atol=1e-3, rtol=1e-3)
    print("ok")
