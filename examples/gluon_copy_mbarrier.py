"""A cp.async ring waited for on mbarriers instead of commit groups: `async_copy.mbarrier_arrive` hands each tile's
copies to the barrier of its buffer, and the program waits on that barrier before reading the buffer.

Y[i] = 2 * X[i] for `T` tiles of `BM x N` halves. The copy of tile `i + 1` is in flight while tile `i` is read;
tile `i`'s barrier (buffer `i % 2`) completes once per use, so its phase is `(i // 2) % 2`. With
`INCREMENT=True` (Gluon's default) the copies' arrival is net zero and holds the phase open until they land, and
the barrier expects one ordinary arrival; with `INCREMENT=False` every thread arrives when its copies are done
(`.noinc`), so the barrier expects one arrival per thread.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import mbarrier


@gluon.jit
def hand_off(bufs, bars, slot, X, offs, mask, INCREMENT: gl.constexpr):
    """Starts the copies of one tile into buffer `slot` and hands them to its barrier."""
    async_copy.async_copy_global_to_shared(bufs.index(slot), X + offs, mask=mask)
    async_copy.mbarrier_arrive(bars.index(slot), increment_count=INCREMENT)
    if INCREMENT:
        mbarrier.arrive(bars.index(slot))


@gluon.jit
def copy_ring(X, Y, T, BM: gl.constexpr, N: gl.constexpr, INCREMENT: gl.constexpr, WAIT: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    bufs = gl.allocate_shared_memory(gl.float16, [2, BM, N], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))
    bars = mbarrier.allocate_mbarrier(batch=2)
    for j in gl.static_range(2):
        mbarrier.init(bars.index(j), count=1 if INCREMENT else 32 * gl.num_warps())
    r = gl.arange(0, BM, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    offs = r[:, None] * N + c[None, :]
    hand_off(bufs, bars, 0, X, offs, offs < T * BM * N, INCREMENT)
    for i in range(T):
        nxt = (i + 1) * BM * N
        hand_off(bufs, bars, (i + 1) % 2, X + nxt, offs, offs + nxt < T * BM * N, INCREMENT)
        if WAIT:
            mbarrier.wait(bars.index(i % 2), (i // 2) % 2)
        x = bufs.index(i % 2).load(L)
        gl.store(Y + i * BM * N + offs, x * 2)
    # The last hand-off (masked off entirely) still completes its barrier's phase; wait for it before leaving.
    mbarrier.wait(bars.index(T % 2), (T // 2) % 2)
    for j in gl.static_range(2):
        mbarrier.invalidate(bars.index(j))
