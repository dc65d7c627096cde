"""A deliberately broken warp-specialized pipeline: the producer waits on the wrong phase of `empty`.

A ring of STAGES shared-memory buffers passes tiles from a producer (a worker partition) to the consumer (the
default partition): the producer waits until buffer s is free (`empty[s]`), fills it and arrives on `ready[s]`;
the consumer waits for `ready[s]`, reads the tile and arrives on `empty[s]`. The producer's first wait on a fresh
`empty` barrier must pass, so it waits for the parity of the phase *before* the first, `((i // STAGES) & 1) ^ 1`.
Here it waits for `(i // STAGES) & 1`, the phase the consumer only completes after reading the tile the producer
has not written yet: both partitions wait for each other forever.

On the GPU this kernel hangs. `tessel run --interpret` stops and names each partition, the barrier it waits on,
the phase parity and what that phase still lacks:

  tessel run --interpret examples/gluon_deadlock.py::pipeline_kernel --const TILES=4 --const STAGES=2 \
      --arg x_ptr=rand:256x64:fp16 --arg y_ptr=zeros:256x64:fp16
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

BLOCK_M: gl.constexpr = 64
N: gl.constexpr = 64


@gluon.jit
def tile_layout():
    return gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])


@gluon.jit
def producer(x_ptr, bufs, ready, empty, TILES: gl.constexpr, STAGES: gl.constexpr):
    layout: gl.constexpr = tile_layout()
    rows = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    for i in range(TILES):
        s = i % STAGES
        # The bug: the phase a fresh barrier has not completed. The right wait is `((i // STAGES) & 1) ^ 1`.
        mbarrier.wait(empty.index(s), (i // STAGES) & 1)
        async_copy.async_copy_global_to_shared(bufs.index(s), x_ptr + (i * BLOCK_M + rows[:, None]) * N + cols[None, :])
        async_copy.commit_group()
        async_copy.wait_group(0)
        gl.thread_barrier()
        mbarrier.arrive(ready.index(s))


@gluon.jit
def consumer(y_ptr, bufs, ready, empty, TILES: gl.constexpr, STAGES: gl.constexpr):
    layout: gl.constexpr = tile_layout()
    rows = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    for i in range(TILES):
        s = i % STAGES
        mbarrier.wait(ready.index(s), (i // STAGES) & 1)
        x = bufs.index(s).load(layout)
        gl.thread_barrier()
        mbarrier.arrive(empty.index(s))
        gl.store(y_ptr + (i * BLOCK_M + rows[:, None]) * N + cols[None, :], x * 2.0)


@gluon.jit
def pipeline_kernel(x_ptr, y_ptr, TILES: gl.constexpr, STAGES: gl.constexpr):
    bufs = gl.allocate_shared_memory(gl.float16, [STAGES, BLOCK_M, N], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))
    ready = mbarrier.allocate_mbarrier(batch=STAGES)
    empty = mbarrier.allocate_mbarrier(batch=STAGES)
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=1)
    gl.warp_specialize([
        (consumer, (y_ptr, bufs, ready, empty, TILES, STAGES)),
        (producer, (x_ptr, bufs, ready, empty, TILES, STAGES)),
    ], worker_num_warps=[4], worker_num_regs=[40])
