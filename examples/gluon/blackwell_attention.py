"""Attention forward for Blackwell (sm_100a) written in Gluon, in the FlashAttention-4 style: the scores and the
output accumulate in tensor memory, one warp issues every MMA, one warp feeds the rings by TMA, and the softmax
warps only move rows between tensor memory and registers.

    O = softmax(Q K^T * sm_scale) V     (causal: key j attends to query i only when j <= i)

Q, K, V and O are [Z * H * N_CTX, HEAD_DIM] host TensorDescriptors (fp16 or bf16, heads one after another).
`attention_kernel` runs one program per (query block, head): grid (N_CTX / BLOCK_M, Z * H); the persistent
`attention_persistent_kernel` (below) fewer programs, each doing several. N_CTX must be a multiple of BLOCK_M and
BLOCK_N (the heads share the descriptors' rows, so a block past a head's end would read the next head).

Partitions, on disjoint warps (`gl.warp_specialize`):

- **softmax** (the default partition, 4 warps: one query row per thread). For key block j it waits for S_j in
  tensor memory, reads it into registers, applies the causal mask on the diagonal block, and runs the online
  softmax in base 2 (`exp2` of scores pre-multiplied by `sm_scale * log2(e)`). Once the MMA of P_{j-1} V has
  finished it rescales O in tensor memory by `exp2(m_old - m_new)` (the correction step), then writes P_j as
  fp16/bf16 into the columns of S_j (P aliases S: 64 packed columns of S's 128) and signals the MMA warp. After
  the last block it divides O by the row sums and stores it by TMA.
- **mma** (one warp). Issues S_{j+1} = Q K_{j+1}^T into the other S buffer while the softmax works on S_j, then
  O += P_j V_j with P read from tensor memory. Each MMA commits to the mbarriers its consumers wait on: S_j to
  `s_ready[j % 2]`, P_j V_j to `kv_empty` (the K/V slot may be refilled) and to `o_ready`.
- **load** (one warp). Q once, then K_j and V_j through rings of STAGES slots (`k_ready`/`v_ready`, released by
  `kv_empty`), so S_{j+1} can start as soon as K_{j+1} lands.

Tensor memory (128 lanes x 512 columns of 32 bits), per program:

| buffer | shape | columns |
|---|---|---|
| S (two, ping-pong) | 2 x [128, BLOCK_N] f32 | 2 x BLOCK_N |
| P_j (aliases S_j) | [128, BLOCK_N] fp16, packed | (within S_j) |
| O | [128, HEAD_DIM] f32 | HEAD_DIM |

At BLOCK_N = 128 and HEAD_DIM = 128 that is 384 columns (the allocation rounds to 512).

Ordering the PTX ISA does not give for free, and how the kernel gets it: S_{j+1} is written into the buffer P_{j-1}
was read from, and the ISA runs two MMAs in issue order only when they share an accumulator; so the MMA warp
waits for P_{j-1} V_{j-1} to finish (`o_ready`) before it issues S_{j+1}. The rescale of O reads and writes O
between P_{j-1} V_{j-1} (waited for) and P_j V_j (issued only after `p_ready`).

**The persistent grid** (`attention_persistent_kernel`, launched by `attention_persistent`): the same three
partitions, each looping over tiles (a tile is one (query block, head); tile ids are linear, causal ones ordered
longest first, the last query blocks of every head before the first) until its scheduler has none left. The
scheduler is a constexpr class:

- `StaticScheduler`: a grid of P programs (the SM count, or the tiles if fewer), program p taking tiles p, p + P,
  p + 2P, ... Every partition walks that sequence by itself.
- `ClcScheduler` (cluster launch control): a grid of one program per tile. Starting a tile, the loader asks
  (`clc.try_cancel`) to cancel a program not launched yet; the answer lands in one of two 16-byte response slots
  (`landed[slot]`) while the tile runs. Each partition, done with the tile, reads it (`clc.load_result`:
  `is_canceled()`, `program_id(0)`) and takes the canceled program's tile, or stops, then arrives on
  `consumed[slot]` (3 arrivals); the loader asks into that slot again, two tiles later, only once all three read it.

Phases across tiles: every ring (the K/V stages, the S/P ping-pong, `o_ready`) is indexed by g = base + j, base the
key blocks of the partition's earlier tiles, so a tile of an odd number of blocks hands the next one the right
slot and phase; `q_bar` and `q_empty` go by the tile count. The loader refills Q once the MMA warp has committed
`q_empty` after the tile's last QK^T. What orders one tile against the next:

- The first S of a tile goes into the columns of P_{base-2}, and the MMA warp issues it without waiting on
  `o_ready`: it has seen `p_ready` for P_{base-1}, which the softmax writes only after it has seen P_{base-2} V done
  (in its correction, or in its epilogue when P_{base-1} starts a tile). The second goes into P_{base-1}'s columns
  after `o_ready` of the previous tile's last P V, as within a tile.
- The epilogue reads O (after `o_ready` of the tile's last P V) before the softmax writes the next tile's P_0, and
  the MMA warp issues the next tile's P_0 V, which overwrites O (`use_acc=False`), only after `p_ready` for P_0:
  `p_ready` orders the epilogue's read before the next tile's write of O, with no barrier of its own.
- `o_smem`: the epilogue waits for the previous tile's TMA store (`tma.store_wait(0)`) just before it writes the
  next O there, so the store runs under the next tile's work.

Run it in the interpreter (no GPU needed; see tests/blackwell_attention.rs for the float64 check):

    tessel run --interpret --arch sm_100a examples/gluon/blackwell_attention.py::attention_kernel \\
        --signature 'fp32,tensordesc<fp16[128,64]>,tensordesc<fp16[128,64]>,tensordesc<fp16[128,64]>,tensordesc<fp16[128,64]>,i32' \\
        --const HEAD_DIM=64 --const BLOCK_M=128 --const BLOCK_N=128 --const CAUSAL=True --const STAGES=2 \\
        --grid 2,2 --arg sm_scale=0.125 --arg q=randn:512x64:fp16 --arg k=randn:512x64:fp16 \\
        --arg v=randn:512x64:fp16 --arg o=fill:nan:512x64:fp16 --arg q_desc=desc:q:block=128x64 \\
        --arg k_desc=desc:k:block=128x64 --arg v_desc=desc:v:block=128x64 --arg o_desc=desc:o:block=128x64 \\
        --arg N_CTX=256

and the persistent kernel the same way, with `::attention_persistent_kernel`, one more `i32` in the signature,
`--const SCHEDULER=ClcScheduler` (a grid of the tiles, here `--grid 4`; `--clc-policy next|none|random:SEED` picks
the interpreter's answers) or `--const SCHEDULER=StaticScheduler` (any grid, say `--grid 3`), and
`--arg num_heads=2`.
"""
import torch
import triton

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory, clc,
                                                                  tcgen05_commit, tcgen05_mma)
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor


@gluon.jit
def _load_partition(q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_bar, k_ready, v_ready, kv_empty, q_row,
                    kv_row, n_blocks, BLOCK_N: gl.constexpr, STAGES: gl.constexpr):
    mbarrier.expect(q_bar, q_desc.block_type.nbytes)
    tma.async_load(q_desc, [q_row, 0], q_bar, q_smem)
    for j in range(n_blocks):
        s = j % STAGES
        # The slot's previous tenant, block j - STAGES, is released by the MMA that read its V.
        mbarrier.wait(kv_empty.index(s), ((j // STAGES) & 1) ^ 1)
        mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes)
        tma.async_load(k_desc, [kv_row + j * BLOCK_N, 0], k_ready.index(s), k_bufs.index(s))
        mbarrier.expect(v_ready.index(s), v_desc.block_type.nbytes)
        tma.async_load(v_desc, [kv_row + j * BLOCK_N, 0], v_ready.index(s), v_bufs.index(s))


@gluon.jit
def _mma_partition(q_smem, k_bufs, v_bufs, s_tmem, o_tmem, q_bar, k_ready, v_ready, kv_empty, s_ready, p_ready,
                   o_ready, n_blocks, STAGES: gl.constexpr):
    BLOCK_M: gl.constexpr = s_tmem.shape[1]
    BLOCK_N: gl.constexpr = s_tmem.shape[2]
    p_layout: gl.constexpr = TensorMemoryLayout([BLOCK_M, BLOCK_N], col_stride=1)
    mbarrier.wait(q_bar, 0)
    mbarrier.wait(k_ready.index(0), 0)
    tcgen05_mma(q_smem, k_bufs.index(0).permute((1, 0)), s_tmem.index(0), use_acc=False,
                mbarriers=[s_ready.index(0)])
    for j in range(n_blocks):
        s = j % STAGES
        if j + 1 < n_blocks:
            s1 = (j + 1) % STAGES
            # S_{j+1} overwrites P_{j-1}'s columns: P_{j-1} V_{j-1} must be done reading them.
            mbarrier.wait(o_ready, (j - 1) & 1, pred=j > 0)
            mbarrier.wait(k_ready.index(s1), ((j + 1) // STAGES) & 1)
            tcgen05_mma(q_smem, k_bufs.index(s1).permute((1, 0)), s_tmem.index((j + 1) % 2), use_acc=False,
                        mbarriers=[s_ready.index((j + 1) % 2)])
        # P_j is in tensor memory and O has been rescaled for it.
        mbarrier.wait(p_ready.index(j % 2), (j // 2) & 1)
        mbarrier.wait(v_ready.index(s), (j // STAGES) & 1)
        p_tmem = s_tmem.index(j % 2)._reinterpret(v_bufs.dtype, [BLOCK_M, BLOCK_N], p_layout)
        tcgen05_mma(p_tmem, v_bufs.index(s), o_tmem, use_acc=j > 0, mbarriers=[kv_empty.index(s), o_ready])


@gluon.jit
def _softmax_partition(o_desc, o_smem, s_tmem, o_tmem, s_ready, p_ready, o_ready, qk_scale, q_row, start_m,
                       n_blocks, CAUSAL: gl.constexpr):
    BLOCK_M: gl.constexpr = s_tmem.shape[1]
    BLOCK_N: gl.constexpr = s_tmem.shape[2]
    HEAD_DIM: gl.constexpr = o_tmem.shape[1]
    dtype: gl.constexpr = o_desc.dtype
    s_layout: gl.constexpr = s_tmem.index(0).get_reg_layout()
    o_layout: gl.constexpr = o_tmem.get_reg_layout()
    part_layout: gl.constexpr = o_tmem.slice(0, 32).get_reg_layout()
    row_layout: gl.constexpr = gl.SliceLayout(1, s_layout)
    p_tmem_layout: gl.constexpr = TensorMemoryLayout([BLOCK_M, BLOCK_N], col_stride=1)

    offs_m = start_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=row_layout)
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, row_layout)
    l_i = gl.zeros([BLOCK_M], gl.float32, row_layout)
    for j in range(n_blocks):
        b = j % 2
        mbarrier.wait(s_ready.index(b), (j // 2) & 1)
        qk = s_tmem.index(b).load(s_layout) * qk_scale
        if CAUSAL:
            # Only the diagonal block (the last one) has keys past its queries.
            offs_n = j * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
            qk = gl.where(offs_m[:, None] >= offs_n[None, :], qk, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(qk, 1))
        alpha = gl.exp2(m_i - m_new)
        p = gl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + gl.sum(p, 1)
        m_i = m_new
        if j > 0:
            # The correction: O (done accumulating P_{j-1} V_{j-1}) scaled to the new row maxima, 32 columns at
            # a time so that S's registers and O's do not have to be live at once.
            mbarrier.wait(o_ready, (j - 1) & 1)
            for c in gl.static_range(HEAD_DIM // 32):
                o_part = o_tmem.slice(c * 32, 32)
                o = o_part.load(part_layout)
                o_part.store(o * gl.convert_layout(alpha, gl.SliceLayout(1, part_layout))[:, None])
        p_tmem = s_tmem.index(b)._reinterpret(dtype, [BLOCK_M, BLOCK_N], p_tmem_layout)
        p_tmem.store(gl.convert_layout(p.to(dtype), p_tmem.get_reg_layout()))
        mbarrier.arrive(p_ready.index(b), count=1)

    mbarrier.wait(o_ready, (n_blocks - 1) & 1)
    o = o_tmem.load(o_layout) / gl.convert_layout(l_i, gl.SliceLayout(1, o_layout))[:, None]
    o_smem.store(o.to(dtype))
    fence_async_shared()
    tma.async_store(o_desc, [q_row, 0], o_smem)
    tma.store_wait(0)


@gluon.jit
def _allocate(q_desc, k_desc, v_desc, o_desc, HEAD_DIM: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
              STAGES: gl.constexpr):
    """The buffers and barriers both kernels share: Q, the K/V rings and O's staging tile in shared memory, the
    barriers (initialized, one arrival each), and S (two, ping-pong) and O in tensor memory."""
    dtype: gl.constexpr = q_desc.dtype
    q_smem = gl.allocate_shared_memory(dtype, [BLOCK_M, HEAD_DIM], q_desc.layout)
    k_bufs = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], k_desc.layout)
    v_bufs = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], v_desc.layout)
    o_smem = gl.allocate_shared_memory(dtype, [BLOCK_M, HEAD_DIM], o_desc.layout)

    q_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    kv_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    s_ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    p_ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    o_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(q_bar, count=1)
    mbarrier.init(o_ready, count=1)
    for i in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(kv_empty.index(i), count=1)
    for i in gl.static_range(2):
        mbarrier.init(s_ready.index(i), count=1)
        mbarrier.init(p_ready.index(i), count=1)

    s_tmem = allocate_tensor_memory(gl.float32, [2, BLOCK_M, BLOCK_N], TensorMemoryLayout([BLOCK_M, BLOCK_N],
                                                                                          col_stride=1))
    o_tmem = allocate_tensor_memory(gl.float32, [BLOCK_M, HEAD_DIM], TensorMemoryLayout([BLOCK_M, HEAD_DIM],
                                                                                        col_stride=1))
    return (q_smem, k_bufs, v_bufs, o_smem, q_bar, k_ready, v_ready, kv_empty, s_ready, p_ready, o_ready, s_tmem,
            o_tmem)


@gluon.jit
def attention_kernel(sm_scale, q_desc, k_desc, v_desc, o_desc, N_CTX, HEAD_DIM: gl.constexpr,
                     BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr, STAGES: gl.constexpr):
    gl.static_assert(BLOCK_M == 128, "one query row per thread of the softmax's 4 warps")
    gl.static_assert(not CAUSAL or BLOCK_N == BLOCK_M, "the causal mask assumes square blocks")
    dtype: gl.constexpr = q_desc.dtype
    start_m = gl.program_id(0)
    head = gl.program_id(1)
    q_row = head * N_CTX + start_m * BLOCK_M
    kv_row = head * N_CTX
    if CAUSAL:
        n_blocks = start_m + 1
    else:
        n_blocks = N_CTX // BLOCK_N

    (q_smem, k_bufs, v_bufs, o_smem, q_bar, k_ready, v_ready, kv_empty, s_ready, p_ready, o_ready, s_tmem,
     o_tmem) = _allocate(q_desc, k_desc, v_desc, o_desc, HEAD_DIM, BLOCK_M, BLOCK_N, STAGES)
    qk_scale = sm_scale * 1.4426950408889634

    gl.warp_specialize([
        (_softmax_partition, (o_desc, o_smem, s_tmem, o_tmem, s_ready, p_ready, o_ready, qk_scale, q_row, start_m,
                              n_blocks, CAUSAL)),
        (_mma_partition, (q_smem, k_bufs, v_bufs, s_tmem, o_tmem, q_bar, k_ready, v_ready, kv_empty, s_ready, p_ready,
                          o_ready, n_blocks, STAGES)),
        (_load_partition, (q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_bar, k_ready, v_ready, kv_empty, q_row,
                           kv_row, n_blocks, BLOCK_N, STAGES)),
    ], [1, 1], [48, 48])



# The persistent grid: each program walks tiles (a tile is one (query block, head)) until its scheduler has none left.


@gluon.aggregate
class StaticScheduler:
    """Program p of a grid of P takes tiles p, p + P, p + 2P, ...: every partition walks that sequence on its own,
    nothing is shared between them."""
    tile: gl.tensor
    has_work: gl.tensor
    num_tiles: gl.tensor

    @gluon.jit
    def initialize(num_tiles):
        tile = gl.program_id(0)
        return StaticScheduler(tile, tile < num_tiles, num_tiles)

    @gluon.jit
    def request(self):
        pass

    @gluon.jit
    def advance(self):
        tile = self.tile + gl.num_programs(0)
        return StaticScheduler(tile, tile < self.num_tiles, self.num_tiles)


@gluon.aggregate
class ClcScheduler:
    """Cluster launch control: a grid of one program per tile, where a running program cancels one not yet
    launched and does its tile instead. The loader asks as it starts a tile (`request`); the answer lands in one of
    two response slots while the tile runs, and each of the three partitions reads it when it is done with the
    tile (`advance`), then arrives on the slot's `consumed` barrier, so the loader asks into that slot again (two
    tiles later) only once all three have read it."""
    tile: gl.tensor
    has_work: gl.tensor
    taken: gl.tensor  # tiles this partition took before the one at hand: the slot is taken % 2, its phase taken // 2
    responses: gl.shared_memory_descriptor
    landed: gl.shared_memory_descriptor
    consumed: gl.shared_memory_descriptor

    @gluon.jit
    def initialize(num_tiles):
        responses = gl.allocate_shared_memory(gl.int64, [2, 2], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
        landed = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
        consumed = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
        for i in gl.static_range(2):
            mbarrier.init(landed.index(i), count=1)
            mbarrier.init(consumed.index(i), count=3)
        return ClcScheduler(gl.program_id(0), gl.to_tensor(True), gl.to_tensor(0), responses, landed, consumed)

    @gluon.jit
    def request(self):
        slot = self.taken % 2
        mbarrier.wait(self.consumed.index(slot), ((self.taken // 2) & 1) ^ 1)
        clc.try_cancel(self.responses.index(slot), self.landed.index(slot))
        mbarrier.expect(self.landed.index(slot), 16)

    @gluon.jit
    def advance(self):
        slot = self.taken % 2
        mbarrier.wait(self.landed.index(slot), (self.taken // 2) & 1)
        result = clc.load_result(self.responses.index(slot))
        mbarrier.arrive(self.consumed.index(slot), count=1)
        return ClcScheduler(result.program_id(0), result.is_canceled(), self.taken + 1, self.responses, self.landed,
                            self.consumed)


@gluon.jit
def _tile_coords(tile, N_CTX, num_heads, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    """`tile`'s query block, the first row of its Q and O, the first row of its head's K and V, its key blocks."""
    num_m = N_CTX // BLOCK_M
    if CAUSAL:
        # The longest tiles (the last query blocks, which see every key) first, of every head, so that the short
        # ones fill in at the end of the grid.
        start_m = num_m - 1 - tile // num_heads
        head = tile % num_heads
        n_blocks = start_m + 1
    else:
        # Neighbouring programs on one head's K and V.
        start_m = tile % num_m
        head = tile // num_m
        n_blocks = N_CTX // BLOCK_N
    return start_m, head * N_CTX + start_m * BLOCK_M, head * N_CTX, n_blocks


@gluon.jit
def _persistent_load(sched, q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_bar, q_empty, k_ready, v_ready, kv_empty,
                     N_CTX, num_heads, CAUSAL: gl.constexpr, STAGES: gl.constexpr):
    BLOCK_M: gl.constexpr = q_smem.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    base = 0  # key blocks of the tiles before this one: the rings' slots and phases count on across tiles
    t = 0
    while sched.has_work:
        # Asked now, answered while the tile runs.
        sched.request()
        start_m, q_row, kv_row, n_blocks = _tile_coords(sched.tile, N_CTX, num_heads, BLOCK_M, BLOCK_N, CAUSAL)
        # The previous tile's last QK^T is done reading Q.
        mbarrier.wait(q_empty, (t & 1) ^ 1)
        mbarrier.expect(q_bar, q_desc.block_type.nbytes)
        tma.async_load(q_desc, [q_row, 0], q_bar, q_smem)
        for j in range(n_blocks):
            g = base + j
            s = g % STAGES
            mbarrier.wait(kv_empty.index(s), ((g // STAGES) & 1) ^ 1)
            mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes)
            tma.async_load(k_desc, [kv_row + j * BLOCK_N, 0], k_ready.index(s), k_bufs.index(s))
            mbarrier.expect(v_ready.index(s), v_desc.block_type.nbytes)
            tma.async_load(v_desc, [kv_row + j * BLOCK_N, 0], v_ready.index(s), v_bufs.index(s))
        base += n_blocks
        t += 1
        sched = sched.advance()


@gluon.jit
def _persistent_mma(sched, q_smem, k_bufs, v_bufs, s_tmem, o_tmem, q_bar, q_empty, k_ready, v_ready, kv_empty, s_ready,
                    p_ready, o_ready, N_CTX, num_heads, CAUSAL: gl.constexpr, STAGES: gl.constexpr):
    BLOCK_M: gl.constexpr = s_tmem.shape[1]
    BLOCK_N: gl.constexpr = s_tmem.shape[2]
    p_layout: gl.constexpr = TensorMemoryLayout([BLOCK_M, BLOCK_N], col_stride=1)
    base = 0
    t = 0
    while sched.has_work:
        start_m, q_row, kv_row, n_blocks = _tile_coords(sched.tile, N_CTX, num_heads, BLOCK_M, BLOCK_N, CAUSAL)
        mbarrier.wait(q_bar, t & 1)
        mbarrier.wait(k_ready.index(base % STAGES), (base // STAGES) & 1)
        # S of the tile's first block goes into the columns the previous tile's P_{base-2} was read from, with no
        # wait on o_ready: this warp has seen P_{base-1} (p_ready), which the softmax writes only once it has seen
        # P_{base-2} V done (for its correction, or for the epilogue when P_{base-1} starts a tile).
        tcgen05_mma(q_smem, k_bufs.index(base % STAGES).permute((1, 0)), s_tmem.index(base % 2), use_acc=False,
                    mbarriers=[s_ready.index(base % 2)])
        tcgen05_commit(q_empty, pred=n_blocks == 1)
        for j in range(n_blocks):
            g = base + j
            s = g % STAGES
            if j + 1 < n_blocks:
                s1 = (g + 1) % STAGES
                # S_{g+1} overwrites P_{g-1}'s columns (at j = 0: the previous tile's last P).
                mbarrier.wait(o_ready, (g - 1) & 1, pred=g > 0)
                mbarrier.wait(k_ready.index(s1), ((g + 1) // STAGES) & 1)
                tcgen05_mma(q_smem, k_bufs.index(s1).permute((1, 0)), s_tmem.index((g + 1) % 2), use_acc=False,
                            mbarriers=[s_ready.index((g + 1) % 2)])
                # After the tile's last QK^T the loader may bring the next tile's Q.
                tcgen05_commit(q_empty, pred=j + 2 == n_blocks)
            # P_g is in tensor memory and O has been rescaled for it (at j = 0: the previous tile's O has been read
            # out by the epilogue, which the softmax finished before it wrote P_g).
            mbarrier.wait(p_ready.index(g % 2), (g // 2) & 1)
            mbarrier.wait(v_ready.index(s), (g // STAGES) & 1)
            p_tmem = s_tmem.index(g % 2)._reinterpret(v_bufs.dtype, [BLOCK_M, BLOCK_N], p_layout)
            tcgen05_mma(p_tmem, v_bufs.index(s), o_tmem, use_acc=j > 0, mbarriers=[kv_empty.index(s), o_ready])
        base += n_blocks
        t += 1
        sched = sched.advance()


@gluon.jit
def _persistent_softmax(sched, o_desc, o_smem, s_tmem, o_tmem, s_ready, p_ready, o_ready, qk_scale, N_CTX, num_heads,
                        CAUSAL: gl.constexpr):
    BLOCK_M: gl.constexpr = s_tmem.shape[1]
    BLOCK_N: gl.constexpr = s_tmem.shape[2]
    HEAD_DIM: gl.constexpr = o_tmem.shape[1]
    dtype: gl.constexpr = o_desc.dtype
    s_layout: gl.constexpr = s_tmem.index(0).get_reg_layout()
    o_layout: gl.constexpr = o_tmem.get_reg_layout()
    part_layout: gl.constexpr = o_tmem.slice(0, 32).get_reg_layout()
    row_layout: gl.constexpr = gl.SliceLayout(1, s_layout)
    p_tmem_layout: gl.constexpr = TensorMemoryLayout([BLOCK_M, BLOCK_N], col_stride=1)
    base = 0
    while sched.has_work:
        start_m, q_row, kv_row, n_blocks = _tile_coords(sched.tile, N_CTX, num_heads, BLOCK_M, BLOCK_N, CAUSAL)
        offs_m = start_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=row_layout)
        m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, row_layout)
        l_i = gl.zeros([BLOCK_M], gl.float32, row_layout)
        for j in range(n_blocks):
            g = base + j
            b = g % 2
            mbarrier.wait(s_ready.index(b), (g // 2) & 1)
            qk = s_tmem.index(b).load(s_layout) * qk_scale
            if CAUSAL:
                offs_n = j * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
                qk = gl.where(offs_m[:, None] >= offs_n[None, :], qk, float("-inf"))
            m_new = gl.maximum(m_i, gl.max(qk, 1))
            alpha = gl.exp2(m_i - m_new)
            p = gl.exp2(qk - m_new[:, None])
            # One rounding: the code generator contracts `l_i * alpha + sum` into this fma anyway (as LLVM does
            # Triton's); spelled out, the interpreter, which does not contract, computes the GPU's bits.
            l_i = gl.fma(l_i, alpha, gl.sum(p, 1))
            m_i = m_new
            if j > 0:
                mbarrier.wait(o_ready, (g - 1) & 1)
                for c in gl.static_range(HEAD_DIM // 32):
                    o_part = o_tmem.slice(c * 32, 32)
                    o = o_part.load(part_layout)
                    o_part.store(o * gl.convert_layout(alpha, gl.SliceLayout(1, part_layout))[:, None])
            p_tmem = s_tmem.index(b)._reinterpret(dtype, [BLOCK_M, BLOCK_N], p_tmem_layout)
            p_tmem.store(gl.convert_layout(p.to(dtype), p_tmem.get_reg_layout()))
            mbarrier.arrive(p_ready.index(b), count=1)
        base += n_blocks

        # The epilogue. O is read out before this partition writes the next tile's P_0, and the MMA warp waits for
        # that P (p_ready) before its P_0 V overwrites O: the next tile cannot race with this read.
        mbarrier.wait(o_ready, (base - 1) & 1)
        o = o_tmem.load(o_layout) / gl.convert_layout(l_i, gl.SliceLayout(1, o_layout))[:, None]
        # The previous tile's store has finished reading o_smem.
        tma.store_wait(0)
        o_smem.store(o.to(dtype))
        fence_async_shared()
        tma.async_store(o_desc, [q_row, 0], o_smem)
        sched = sched.advance()
    tma.store_wait(0)


@gluon.jit
def attention_persistent_kernel(sm_scale, q_desc, k_desc, v_desc, o_desc, N_CTX, num_heads, HEAD_DIM: gl.constexpr,
                                BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr,
                                STAGES: gl.constexpr, SCHEDULER: gl.constexpr):
    gl.static_assert(BLOCK_M == 128, "one query row per thread of the softmax's 4 warps")
    gl.static_assert(not CAUSAL or BLOCK_N == BLOCK_M, "the causal mask assumes square blocks")
    dtype: gl.constexpr = q_desc.dtype
    num_tiles = (N_CTX // BLOCK_M) * num_heads

    (q_smem, k_bufs, v_bufs, o_smem, q_bar, k_ready, v_ready, kv_empty, s_ready, p_ready, o_ready, s_tmem,
     o_tmem) = _allocate(q_desc, k_desc, v_desc, o_desc, HEAD_DIM, BLOCK_M, BLOCK_N, STAGES)
    q_empty = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(q_empty, count=1)
    qk_scale = sm_scale * 1.4426950408889634
    sched = SCHEDULER.initialize(num_tiles)

    gl.warp_specialize([
        (_persistent_softmax, (sched, o_desc, o_smem, s_tmem, o_tmem, s_ready, p_ready, o_ready, qk_scale, N_CTX,
                               num_heads, CAUSAL)),
        (_persistent_mma, (sched, q_smem, k_bufs, v_bufs, s_tmem, o_tmem, q_bar, q_empty, k_ready, v_ready, kv_empty,
                           s_ready, p_ready, o_ready, N_CTX, num_heads, CAUSAL, STAGES)),
        (_persistent_load, (sched, q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_bar, q_empty, k_ready, v_ready,
                            kv_empty, N_CTX, num_heads, CAUSAL, STAGES)),
    ], [1, 1], [48, 48])

def attention(q, k, v, causal, sm_scale, BLOCK_N=128, STAGES=2):
    """O for q, k, v of shape [Z, H, N_CTX, HEAD_DIM] (fp16 or bf16), on a Blackwell GPU."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    BLOCK_M = 128
    if N_CTX % BLOCK_M or N_CTX % BLOCK_N:
        raise ValueError(f"N_CTX = {N_CTX} must be a multiple of the blocks ({BLOCK_M} and {BLOCK_N})")
    if HEAD_DIM not in (64, 128):
        raise ValueError(f"HEAD_DIM = {HEAD_DIM}: this kernel takes 64 or 128")
    o = torch.empty_like(q)
    dt = gl.float16 if q.dtype == torch.float16 else gl.bfloat16
    flat = lambda t: t.reshape(Z * H * N_CTX, HEAD_DIM)  # noqa: E731
    desc = lambda t, rows: TensorDescriptor.from_tensor(  # noqa: E731
        flat(t), [rows, HEAD_DIM], gl.NVMMASharedLayout.get_default_for([rows, HEAD_DIM], dt))
    grid = (N_CTX // BLOCK_M, Z * H)
    attention_kernel[grid](sm_scale, desc(q, BLOCK_M), desc(k, BLOCK_N), desc(v, BLOCK_N), desc(o, BLOCK_M), N_CTX,
                           HEAD_DIM, BLOCK_M, BLOCK_N, causal, STAGES, num_warps=4)
    return o


def attention_persistent(q, k, v, causal, sm_scale, scheduler="clc", BLOCK_N=128, STAGES=2):
    """`attention` on a persistent grid: `scheduler` "clc" (one program per tile, cancelled by those running) or
    "static" (one program per SM, or per tile if there are fewer tiles)."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    BLOCK_M = 128
    if N_CTX % BLOCK_M or N_CTX % BLOCK_N:
        raise ValueError(f"N_CTX = {N_CTX} must be a multiple of the blocks ({BLOCK_M} and {BLOCK_N})")
    if HEAD_DIM not in (64, 128):
        raise ValueError(f"HEAD_DIM = {HEAD_DIM}: this kernel takes 64 or 128")
    if scheduler not in ("clc", "static"):
        raise ValueError(f"scheduler = {scheduler!r}: \"clc\" or \"static\"")
    o = torch.empty_like(q)
    dt = gl.float16 if q.dtype == torch.float16 else gl.bfloat16
    flat = lambda t: t.reshape(Z * H * N_CTX, HEAD_DIM)  # noqa: E731
    desc = lambda t, rows: TensorDescriptor.from_tensor(  # noqa: E731
        flat(t), [rows, HEAD_DIM], gl.NVMMASharedLayout.get_default_for([rows, HEAD_DIM], dt))
    tiles = N_CTX // BLOCK_M * Z * H
    if scheduler == "clc":
        grid, Scheduler = tiles, ClcScheduler
    else:
        grid, Scheduler = min(tiles, torch.cuda.get_device_properties(q.device).multi_processor_count), StaticScheduler
    attention_persistent_kernel[(grid, )](sm_scale, desc(q, BLOCK_M), desc(k, BLOCK_N), desc(v, BLOCK_N),
                                          desc(o, BLOCK_M), N_CTX, Z * H, HEAD_DIM, BLOCK_M, BLOCK_N, causal, STAGES,
                                          Scheduler, num_warps=4)
    return o


if __name__ == "__main__":
    torch.manual_seed(0)
    q, k, v = (torch.randn((2, 4, 1024, 128), device="cuda", dtype=torch.float16) for _ in range(3))
    for causal in (False, True):
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.0883883)
        for name, run in [("one program per tile", attention),
                          ("persistent, clc", lambda *a: attention_persistent(*a, scheduler="clc")),
                          ("persistent, static", lambda *a: attention_persistent(*a, scheduler="static"))]:
            o = run(q, k, v, causal, 0.0883883)
            diff = torch.max(torch.abs(o.float() - ref.float())).item()
            print(f"causal={causal}, {name}: max difference {diff:.4f}")
