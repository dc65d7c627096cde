"""Attention forward for Blackwell (sm_100a) written in Gluon, in the FlashAttention-4 style: a program owns 256
query rows as two sub-tiles of 128, their scores and outputs accumulate in tensor memory, one warp issues every
MMA, one warp feeds the rings by TMA, a softmax warpgroup per sub-tile moves rows between tensor memory and
registers, a correction warpgroup rescales the outputs and stages them in shared memory, and two epilogue warps
store them by TMA. The same kernel runs on CTA pairs (`num_ctas=2`, "On a CTA pair" below): a program is two CTAs
owning 512 query rows, whose MMAs are the pair's.

    O = softmax(Q K^T * sm_scale) V     (causal: key j attends to query i only when j <= i)

Q, K, V and O are [Z * H * N_CTX, HEAD_DIM] host TensorDescriptors (fp16 or bf16, heads one after another); Q's
and O's blocks are a sub-tile (128 rows, 256 on a pair), K's and V's BLOCK_N rows. A tile is one (query block of
BLOCK_M = two sub-tiles, head). `attention_kernel` runs one program per tile: grid (cdiv(N_CTX, BLOCK_M), Z * H);
`attention_persistent_kernel` (one CTA per program) fewer programs, each walking tiles until its scheduler has
none left. N_CTX must be a multiple of a sub-tile and of BLOCK_N (the heads share the descriptors' rows, so a
block past a head's end would read the next head's): a head's last query block may be half past its end, and its
second sub-tile is then computed but not stored.

Partitions, on disjoint warps (`gl.warp_specialize`; 16 warps, registers moved by warpgroup with `setmaxnreg`):

| partition | warps | registers per thread |
|---|---|---|
| softmax 0 (the default partition) | 0-3 | 192 |
| softmax 1 | 4-7 | 192 |
| correction | 8-11 | 80 |
| mma, load, epilogue | 12, 13, 14-15 | 48 |

- **softmax 0 and softmax 1** (one query row of its sub-tile per thread). For key block j, softmax i waits for
  S_i in tensor memory, reads it into registers 64 columns at a time, masks the diagonal blocks (causal), and
  runs the online softmax in base 2 (`exp2` of scores pre-multiplied by `sm_scale * log2(e)`). It hands the
  factor `alpha = exp2(m_old - m_new)` to the correction warpgroup through shared memory, writes P_i as
  fp16/bf16 into the columns of S_i (P aliases S: 64 packed columns of S's 128) and signals the MMA warp. After
  the tile's last block it hands over the row sums l_i the same way.
- **correction**. For every block but a tile's first it takes alpha_i, waits until P_i V of the block before has
  finished, and rescales O_i in tensor memory (32 columns at a time), then lets the MMA warp accumulate into O_i.
  After the tile it takes l_i and writes O_i / l_i into the staging tile in shared memory, one sub-tile after
  the other.
- **mma** (one warp). Per key block: O_0 += P_0 V, S_0 = Q_0 K_next^T, O_1 += P_1 V, S_1 = Q_1 K_next^T, so the
  tensor cores compute one sub-tile's scores while the other sub-tile's softmax runs. Each MMA commits to the
  mbarriers its consumers wait on.
- **load** (one warp). Both Q sub-tiles once per tile, then K_j and V_j through rings of STAGES slots
  (`k_ready`/`v_ready`, released by `kv_empty`).
- **epilogue** (two warps, one issuing). Stores each staged sub-tile by TMA and hands the staging tile back
  (`o_full`/`o_empty`) once the store has read it.

Tensor memory (128 lanes x 512 columns of 32 bits), per CTA:

| buffer | shape | columns |
|---|---|---|
| S_0, S_1 | 2 x [128, BLOCK_N] f32 (on a pair, each CTA's rows of 2 x [256, BLOCK_N]) | 2 x BLOCK_N |
| P_i (aliases S_i) | [128, BLOCK_N] fp16/bf16, two to a column | (within S_i) |
| O_0, O_1 | 2 x [128, HEAD_DIM] f32 (on a pair, of 2 x [256, HEAD_DIM]) | 2 x HEAD_DIM |

At BLOCK_N = 128 and HEAD_DIM = 128 that is all 512 columns; at HEAD_DIM = 64, 384 (the allocation rounds to
512). Shared memory per CTA at HEAD_DIM = 128: Q 64 KiB, O's staging tile 32 KiB, alpha/l 1 KiB, and per ring
stage a K and a V block (32 KiB), or on a pair half of each (16 KiB): 2 stages on one CTA (225 KiB of the 227), 4
on a pair. At HEAD_DIM = 64 each of these is half as large.

Registers: ptxas holds each instruction to the registers a thread starts with (128 at 16 warps), whatever
`setmaxnreg` grants its warpgroup later, so tensor memory moves in pieces of at most 64 columns.

Ordering the PTX ISA does not give for free, and how the kernel gets it (`mbarrier` waits, each named below):

- Two MMAs run in issue order only when they share an accumulator. S_i of the next block is written into the
  columns P_i V reads, so the MMA warp waits for that P_i V (`o_ready[i]`) before it issues the next S_i; the
  tensor cores meanwhile work on the other sub-tile's MMAs. (That wait also makes the correction's own wait for
  P_i V before it rescales O_i one that has always passed, since alpha comes from the S issued after it; the
  correction keeps it so that it does not depend on the MMA warp's order.)
- O_i is rescaled between P_i V of one block (the correction waits `o_ready[i]`) and that of the next (the MMA
  warp waits `o_corr[i]`). The epilogue reads O_i before the correction arrives on `o_corr[i]` for the next
  tile's first block, whose P_i V overwrites O_i (`use_acc=False`).
- The staging tile passes from the correction to the epilogue warps and back (`o_full`/`o_empty`, message
  2t + i for sub-tile i of the program's t-th tile); the correction's proxy fence before `o_full` orders its
  stores before the TMA store.
- alpha_i and l_i pass through a one-slot mailbox per sub-tile (`xfer_ready[i]`/`xfer_free[i]`): message m of
  sub-tile i is block m's alpha, counted over the program's tiles, a tile's l taking the place of its first
  block's alpha (which the correction does not need: O_i starts from zero).

**Schedulers** (a constexpr class; every partition walks the same tiles, `_tile_coords` turns a tile into its
query block and head, causal tiles longest first):

- `OneTile`: one program per tile (`attention_kernel`).
- `StaticScheduler`: a grid of P programs, program p taking tiles p, p + P, p + 2P, ...
- `ClcScheduler` (cluster launch control): a grid of one program per tile. Starting a tile, the loader asks
  (`clc.try_cancel`) to cancel a program not launched yet; the answer lands in one of two 16-byte response slots
  (`landed[slot]`) while the tile runs. Each partition, done with the tile, reads it (`clc.load_result`) and
  takes the canceled program's tile or stops, then arrives on `consumed[slot]` (one arrival per partition); the
  loader asks into that slot again, two tiles later, only once every partition has read it.

Every ring's slot and phase is counted on across tiles (g = base + j, base the key blocks of the program's earlier
tiles); `q_bar` and `q_empty` go by the tile count.

**On a CTA pair** (`num_ctas=2`, host side `attention(..., ctas=2)`). A program is two CTAs and owns 512 query
rows: two sub-tiles of 256, each CTA holding 128 rows of each (Q's and O's descriptors split their 256-row blocks
along the rows, `cga_layout=[[1, 0]]`). S_i = Q_i K^T and O_i += P_i V are the pair's MMAs (tensor memory with
`two_ctas=True`: `tcgen05.mma.cta_group::2`, M = 256), issued by the lead (even) CTA's MMA warp over both CTAs'
operands: A (Q_i, or P_i read from each CTA's tensor memory) and D (S_i, O_i) split along M, each CTA's rows in its
own memory, and B split along N, so K's block is split by its keys (`[[1, 0]]` on [BLOCK_N, HEAD_DIM]) and V's by
the head dim (`[[0, 1]]`). Each CTA loads half of every K and V block: a block crosses from global memory once per
512 query rows instead of once per 256, and a ring stage takes half the shared memory (twice the stages fit). The
partitions are the one-CTA code, each CTA running them on its own 16 warps with the registers of the table above
and on its own rows: their tensors are the pair's ([256, ...] and [256]), each CTA's warpgroup holding its 128
rows, and the mailboxes and staging tile are split alike.

| barrier | on a pair | arrivals per phase |
|---|---|---|
| `q_bar`, `k_ready[s]`, `v_ready[s]` | the pair's, in the lead | each CTA's loader's `expect` of its part's bytes |
| `p_ready[i]`, `o_corr[i]` | the pair's, in the lead | each CTA's softmax i, each CTA's correction |
| `o_seen[i]` | the pair's, in the lead | each CTA's MMA warp (below) |
| `s_ready[i]`, `o_ready[i]`, `kv_empty[s]`, `q_empty` | each CTA's | the pair MMA's commit (it arrives in both CTAs) |
| `xfer_*[i]`, `o_full`, `o_empty` | each CTA's | that CTA's partitions |

A pair's barrier (`allocate_mbarrier(two_ctas=True)`) is one barrier in the lead CTA, initialized for both CTAs'
arrivals (`init(count=1)`: one per CTA), which each CTA's `arrive` and `expect` reach; only the lead waits on it.
So every barrier the MMA warp waits on for data (Q, K, V, P, a rescaled O) counts both CTAs: the lead issues
nothing before the odd CTA's part is there. The odd CTA's MMA warp runs the same code and issues nothing (tcgen05
ops are the lead's); its waits on the pair's barriers pass at once. Its wait for P_i V on its own `o_ready[i]`,
before the next S_i, is followed by an arrival on the pair's `o_seen[i]`, which the lead waits for with its own:
otherwise the odd warp, waiting on nothing else, could fall two phases behind `o_ready[i]`, where a parity wait
never returns. (No GPU has run it: ptxas, the interpreter and the PTX simulator check it, in
tests/blackwell_attention_pair.rs.)

Run it in the interpreter (no GPU needed; tests/blackwell_attention.rs has the float64 checks):

    tessel run --interpret --arch sm_100a examples/gluon/blackwell_attention.py::attention_kernel \\
        --signature 'fp32,tensordesc<fp16[128,64]>,tensordesc<fp16[128,64]>,tensordesc<fp16[128,64]>,tensordesc<fp16[128,64]>,i32' \\
        --const HEAD_DIM=64 --const BLOCK_M=256 --const BLOCK_N=128 --const CAUSAL=True --const STAGES=2 \\
        --grid 2,2 --arg sm_scale=0.125 --arg q=randn:1024x64:fp16 --arg k=randn:1024x64:fp16 \\
        --arg v=randn:1024x64:fp16 --arg o=fill:nan:1024x64:fp16 --arg q_desc=desc:q:block=128x64 \\
        --arg k_desc=desc:k:block=128x64 --arg v_desc=desc:v:block=128x64 --arg o_desc=desc:o:block=128x64 \\
        --arg N_CTX=512

and the persistent kernel the same way, with `::attention_persistent_kernel`, one more `i32` in the signature,
`--const SCHEDULER=ClcScheduler` (a grid of the tiles, here `--grid 4`; `--clc-policy next|none|random:SEED` picks
the interpreter's answers) or `--const SCHEDULER=StaticScheduler` (any grid, say `--grid 3`), and
`--arg num_heads=2`. On a CTA pair, the descriptors' layouts say what each CTA holds (two heads of 768 rows: each
head's second query block is half past its end):

    NV='NVMMASharedLayout(swizzle_byte_width=128,element_bitwidth=16,rank=2,cga_layout='
    NV64='NVMMASharedLayout(swizzle_byte_width=64,element_bitwidth=16,rank=2,cga_layout='
    tessel run --interpret --arch sm_100a --num-ctas 2 examples/gluon/blackwell_attention.py::attention_kernel \
        --signature "fp32,tensordesc<fp16[256,64],$NV[[1,0]])>,tensordesc<fp16[128,64],$NV[[1,0]])>,tensordesc<fp16[128,64],$NV64[[0,1]])>,tensordesc<fp16[256,64],$NV[[1,0]])>,i32" \
        --const HEAD_DIM=64 --const BLOCK_M=512 --const BLOCK_N=128 --const CAUSAL=True --const STAGES=4 \
        --grid 2,2 --arg sm_scale=0.125 --arg q=randn:1536x64:fp16 --arg k=randn:1536x64:fp16 \
        --arg v=randn:1536x64:fp16 --arg o=fill:nan:1536x64:fp16 --arg q_desc=desc:q:block=256x64 \
        --arg k_desc=desc:k:block=128x64 --arg v_desc=desc:v:block=128x64 --arg o_desc=desc:o:block=256x64 \
        --arg N_CTX=768
"""
import torch
import triton

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory, clc,
                                                                  tcgen05_commit, tcgen05_mma)
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

# A CTA's query rows of a sub-tile: one per thread of a softmax warpgroup, one per tensor-memory lane. (A sub-tile
# is CTA_M rows on one CTA, 2 * CTA_M on a CTA pair.)
CTA_M = gl.constexpr(128)
# The partitions every scheduler's answer is read by.
PARTITIONS = gl.constexpr(6)

# ---------------------------------------------------------------------------------------------------------------
# Schedulers: which tiles a program does.


@gluon.aggregate
class OneTile:
    """One program per tile: the tile is the program's place in the grid."""
    tile: gl.tensor
    has_work: gl.tensor

    @gluon.jit
    def initialize(num_tiles):
        return OneTile(gl.program_id(0) + gl.program_id(1) * gl.num_programs(0), gl.to_tensor(True))

    @gluon.jit
    def request(self):
        pass

    @gluon.jit
    def advance(self):
        return OneTile(self.tile, gl.to_tensor(False))


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
    two response slots while the tile runs, and each partition reads it when it is done with the tile (`advance`),
    then arrives on the slot's `consumed` barrier, so the loader asks into that slot again (two tiles later) only
    once all of them have read it."""
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
            mbarrier.init(consumed.index(i), count=PARTITIONS)
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
    """`tile`'s query block, the first row of its Q and O, the first row of its head's K and V, its key blocks. The
    head's last query block may reach past its end (N_CTX a multiple of a sub-tile, not of BLOCK_M): its key blocks
    stop at N_CTX."""
    num_m = gl.cdiv(N_CTX, BLOCK_M)
    if CAUSAL:
        # The longest tiles (the last query blocks, which see every key) first, of every head, so that the short
        # ones fill in at the end of the grid.
        start_m = num_m - 1 - tile // num_heads
        head = tile % num_heads
        n_blocks = gl.minimum((start_m + 1) * (BLOCK_M // BLOCK_N), N_CTX // BLOCK_N)
    else:
        # Neighbouring programs on one head's K and V.
        start_m = tile % num_m
        head = tile // num_m
        n_blocks = N_CTX // BLOCK_N
    return start_m, head * N_CTX + start_m * BLOCK_M, head * N_CTX, n_blocks


# ---------------------------------------------------------------------------------------------------------------
# The partitions.


@gluon.jit
def _load(sched, q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_bar, q_empty, k_ready, v_ready, kv_empty, N_CTX,
          num_heads, BLOCK_M: gl.constexpr, CAUSAL: gl.constexpr, STAGES: gl.constexpr):
    """On a CTA pair each CTA's loader copies its part of every block (the descriptors' `cga_layout` says which:
    its rows of Q, half of K's keys, half of V's columns) and announces its bytes (`nbytes_per_cta`) on the pair's
    barrier in the lead CTA, which counts both CTAs' arrivals."""
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    SUB_M: gl.constexpr = q_smem.shape[1]
    base = 0
    t = 0
    while sched.has_work:
        # Asked now, answered while the tile runs.
        sched.request()
        start_m, q_row, kv_row, n_blocks = _tile_coords(sched.tile, N_CTX, num_heads, BLOCK_M, BLOCK_N, CAUSAL)
        # The previous tile's last QK^T is done reading Q.
        mbarrier.wait(q_empty, (t & 1) ^ 1)
        mbarrier.expect(q_bar, 2 * q_desc.nbytes_per_cta)
        for i in gl.static_range(2):
            tma.async_load(q_desc, [q_row + i * SUB_M, 0], q_bar, q_smem.index(i))
        for j in range(n_blocks):
            g = base + j
            s = g % STAGES
            # The slot's previous tenant is released by the MMA that read its V last.
            mbarrier.wait(kv_empty.index(s), ((g // STAGES) & 1) ^ 1)
            mbarrier.expect(k_ready.index(s), k_desc.nbytes_per_cta)
            tma.async_load(k_desc, [kv_row + j * BLOCK_N, 0], k_ready.index(s), k_bufs.index(s))
            mbarrier.expect(v_ready.index(s), v_desc.nbytes_per_cta)
            tma.async_load(v_desc, [kv_row + j * BLOCK_N, 0], v_ready.index(s), v_bufs.index(s))
        base += n_blocks
        t += 1
        sched = sched.advance()


@gluon.jit
def _mma(sched, q_smem, k_bufs, v_bufs, s_tmem, o_tmem, q_bar, q_empty, k_ready, v_ready, kv_empty, s_ready, p_ready,
         o_ready, o_corr, o_seen, N_CTX, num_heads, BLOCK_M: gl.constexpr, CAUSAL: gl.constexpr, STAGES: gl.constexpr,
         p_layout: gl.constexpr):
    """On a CTA pair the MMAs are the pair's (`cta_group::2`, M = 2 x 128): only the lead CTA issues them, and their
    commits arrive on the barrier in both CTAs. The odd CTA's MMA warp runs the same code and issues nothing: its
    waits on the pair's barriers pass at once, and its waits on its own `o_ready` meet the lead's (`_meet`)."""
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    SUB_M: gl.constexpr = q_smem.shape[1]
    base = 0
    t = 0
    while sched.has_work:
        start_m, q_row, kv_row, n_blocks = _tile_coords(sched.tile, N_CTX, num_heads, BLOCK_M, BLOCK_N, CAUSAL)
        mbarrier.wait(q_bar, t & 1)
        mbarrier.wait(k_ready.index(base % STAGES), (base // STAGES) & 1)
        for i in gl.static_range(2):
            # S_i goes into the columns the previous tile's last P_i V read.
            mbarrier.wait(o_ready.index(i), (base - 1) & 1, pred=base > 0)
            _meet(o_seen.index(i), (base - 1) & 1, pred=base > 0)
            tcgen05_mma(q_smem.index(i), k_bufs.index(base % STAGES).permute((1, 0)), s_tmem.index(i), use_acc=False,
                        mbarriers=[s_ready.index(i)])
        # After the tile's last QK^T the loader may bring the next tile's Q.
        tcgen05_commit(q_empty, pred=n_blocks == 1)
        for j in range(n_blocks):
            g = base + j
            s = g % STAGES
            s1 = (g + 1) % STAGES
            mbarrier.wait(v_ready.index(s), (g // STAGES) & 1)
            for i in gl.static_range(2):
                # O_i is rescaled for block g (at a tile's first block: read out by the previous tile's epilogue),
                # and P_i is in tensor memory.
                mbarrier.wait(o_corr.index(i), g & 1)
                mbarrier.wait(p_ready.index(i), g & 1)
                p_tmem = s_tmem.index(i)._reinterpret(v_bufs.dtype, [SUB_M, BLOCK_N], p_layout)
                if i == 0:
                    tcgen05_mma(p_tmem, v_bufs.index(s), o_tmem.index(i), use_acc=j > 0, mbarriers=[o_ready.index(i)])
                else:
                    # The last MMA reading the slot (a commit covers every MMA issued before it) releases it.
                    tcgen05_mma(p_tmem, v_bufs.index(s), o_tmem.index(i), use_acc=j > 0,
                                mbarriers=[o_ready.index(i), kv_empty.index(s)])
                if j + 1 < n_blocks:
                    if i == 0:
                        mbarrier.wait(k_ready.index(s1), ((g + 1) // STAGES) & 1)
                    # The next S_i overwrites the P_i just issued: that P_i V must be done with it.
                    mbarrier.wait(o_ready.index(i), g & 1)
                    _meet(o_seen.index(i), g & 1)
                    tcgen05_mma(q_smem.index(i), k_bufs.index(s1).permute((1, 0)), s_tmem.index(i), use_acc=False,
                                mbarriers=[s_ready.index(i)])
            tcgen05_commit(q_empty, pred=j + 2 == n_blocks)
        base += n_blocks
        t += 1
        sched = sched.advance()


@gluon.jit
def _meet(o_seen, phase, pred=True):
    """On a CTA pair, after the MMA warp's wait for a P_i V on its own CTA's `o_ready[i]`: each CTA's MMA warp
    arrives on the pair's `o_seen[i]` (a barrier of the lead CTA, counting both) and the lead's waits for both. The
    odd CTA's MMA warp issues nothing and waits on nothing else that it could not pass at once; without this it
    could fall two phases behind `o_ready[i]`, where a parity wait never returns. One CTA: nothing."""
    if gl.num_ctas() > 1:
        mbarrier.arrive(o_seen, count=1, pred=pred)
        mbarrier.wait(o_seen, phase, pred=pred)


@gluon.jit
def _send(x, buf, ready, free, m):
    """Message m of a one-slot mailbox: wait until message m - 1 has been taken, put `x`, signal."""
    mbarrier.wait(free, (m & 1) ^ 1)
    buf.store(x)
    mbarrier.arrive(ready, count=1)


@gluon.jit
def _receive(buf, ready, free, m, layout: gl.constexpr):
    """Takes message m of a one-slot mailbox (see `_send`), in `layout`."""
    mbarrier.wait(ready, m & 1)
    x = buf.load(layout)
    mbarrier.arrive(free, count=1)
    return x


@gluon.jit
def _softmax(sched, s_tmem, s_ready, p_ready, xfer, xfer_ready, xfer_free, qk_scale, N_CTX, num_heads,
             BLOCK_M: gl.constexpr, CAUSAL: gl.constexpr, dtype: gl.constexpr, p_layout: gl.constexpr,
             SUB: gl.constexpr):
    """The online softmax of sub-tile SUB (rows SUB * SUB_M to SUB * SUB_M + SUB_M - 1 of every tile's query block; on
    a CTA pair the tensors here are the pair's, each CTA's warpgroup holding its 128 rows).

    S moves between tensor memory and registers in slices of 64 columns: ptxas holds every instruction to the
    registers the kernel starts with (128 per thread at 16 warps), whatever `setmaxnreg` grants the warpgroup
    afterwards, and a whole 128-column row would be 128 destination registers in one `tcgen05.ld`."""
    SUB_M: gl.constexpr = s_tmem.shape[1]
    BLOCK_N: gl.constexpr = s_tmem.shape[2]
    SLICES: gl.constexpr = BLOCK_N // 64
    s_layout: gl.constexpr = s_tmem.index(SUB).slice(0, 64).get_reg_layout()
    row_layout: gl.constexpr = gl.SliceLayout(1, s_layout)
    col_layout: gl.constexpr = gl.SliceLayout(0, s_layout)
    s_buf = s_tmem.index(SUB)
    p_tmem = s_buf._reinterpret(dtype, [SUB_M, BLOCK_N], p_layout)
    mail = xfer.index(SUB)
    base = 0
    while sched.has_work:
        start_m, q_row, kv_row, n_blocks = _tile_coords(sched.tile, N_CTX, num_heads, BLOCK_M, BLOCK_N, CAUSAL)
        first_row = start_m * BLOCK_M + SUB * SUB_M
        m_i = gl.full([SUB_M], float("-inf"), gl.float32, row_layout)
        l_i = gl.zeros([SUB_M], gl.float32, row_layout)
        for j in range(n_blocks):
            g = base + j
            mbarrier.wait(s_ready.index(SUB), g & 1)
            # Only blocks reaching past the sub-tile's first row have keys past a query (at the end of the query
            # block one of them may have none before them: its p is all zero).
            masked = CAUSAL and (j + 1) * BLOCK_N > first_row
            qks = ()
            m_new = m_i
            for c in gl.static_range(SLICES):
                qk = s_buf.slice(c * 64, 64).load(s_layout) * qk_scale
                if masked:
                    offs_m = first_row + gl.arange(0, SUB_M, layout=row_layout)
                    offs_n = j * BLOCK_N + c * 64 + gl.arange(0, 64, layout=col_layout)
                    qk = gl.where(offs_m[:, None] >= offs_n[None, :], qk, float("-inf"))
                m_new = gl.maximum(m_new, gl.max(qk, 1))
                qks = qks + (qk, )
            alpha = gl.exp2(m_i - m_new)
            if j > 0:
                _send(alpha, mail, xfer_ready.index(SUB), xfer_free.index(SUB), g - 1)
            for c in gl.static_range(SLICES):
                p = gl.exp2(qks[c] - m_new[:, None])
                if c == 0:
                    row_sum = gl.sum(p, 1)
                else:
                    row_sum += gl.sum(p, 1)
                p_part = p_tmem.slice(c * 64, 64)
                p_part.store(gl.convert_layout(p.to(dtype), p_part.get_reg_layout()))
            # One rounding: the code generator contracts `l_i * alpha + row_sum` into this fma anyway (as LLVM
            # does Triton's); spelled out, the interpreter, which does not contract, computes the GPU's bits.
            l_i = gl.fma(l_i, alpha, row_sum)
            m_i = m_new
            mbarrier.arrive(p_ready.index(SUB), count=1)
        base += n_blocks
        # The tile's row sums, in place of its first block's alpha.
        _send(l_i, mail, xfer_ready.index(SUB), xfer_free.index(SUB), base - 1)
        sched = sched.advance()


@gluon.jit
def _correction(sched, o_smem, o_tmem, o_ready, o_corr, o_full, o_empty, xfer, xfer_ready, xfer_free, N_CTX,
                num_heads, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr, dtype: gl.constexpr):
    HEAD_DIM: gl.constexpr = o_tmem.shape[2]
    part_layout: gl.constexpr = o_tmem.index(0).slice(0, 32).get_reg_layout()
    row_layout: gl.constexpr = gl.SliceLayout(1, part_layout)
    epi_layout: gl.constexpr = o_tmem.index(0).slice(0, 64).get_reg_layout()
    base = 0
    t = 0
    while sched.has_work:
        start_m, q_row, kv_row, n_blocks = _tile_coords(sched.tile, N_CTX, num_heads, BLOCK_M, BLOCK_N, CAUSAL)
        for j in range(n_blocks):
            g = base + j
            for i in gl.static_range(2):
                if j > 0:
                    alpha = _receive(xfer.index(i), xfer_ready.index(i), xfer_free.index(i), g - 1, row_layout)
                    # O_i is done accumulating P_i V of block g - 1.
                    mbarrier.wait(o_ready.index(i), (g - 1) & 1)
                    for c in gl.static_range(HEAD_DIM // 32):
                        o_part = o_tmem.index(i).slice(c * 32, 32)
                        o_part.store(o_part.load(part_layout) * alpha[:, None])
                mbarrier.arrive(o_corr.index(i), count=1)
        base += n_blocks

        # O_i / l_i into the staging tile, for the epilogue warps to store. O_i is read out before this partition
        # lets the next tile's first P_i V (which overwrites it) go, by its arrival on o_corr[i] there.
        for i in gl.static_range(2):
            e = 2 * t + i
            l_i = _receive(xfer.index(i), xfer_ready.index(i), xfer_free.index(i), base - 1, row_layout)
            mbarrier.wait(o_ready.index(i), (base - 1) & 1)
            # The epilogue has stored the last tile out of o_smem.
            mbarrier.wait(o_empty, (e & 1) ^ 1)
            # 64 columns at a time: one 128-byte swizzle tile of o_smem's rows.
            for c in gl.static_range(HEAD_DIM // 64):
                o = o_tmem.index(i).slice(c * 64, 64).load(epi_layout)
                o = o / gl.convert_layout(l_i, gl.SliceLayout(1, epi_layout))[:, None]
                o_smem.slice(c * 64, 64, dim=1).store(o.to(dtype))
            fence_async_shared()
            mbarrier.arrive(o_full, count=1)
        t += 1
        sched = sched.advance()


@gluon.jit
def _epilogue(sched, o_desc, o_smem, o_full, o_empty, N_CTX, num_heads, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
              CAUSAL: gl.constexpr):
    """Stores each sub-tile's O by TMA from the staging tile, and hands the tile back once the store has read it. A
    sub-tile past its head's end (the last query block of a head whose N_CTX is an odd number of sub-tiles) is not
    stored: its rows are the next head's."""
    SUB_M: gl.constexpr = o_smem.shape[0]
    t = 0
    while sched.has_work:
        start_m, q_row, kv_row, n_blocks = _tile_coords(sched.tile, N_CTX, num_heads, BLOCK_M, BLOCK_N, CAUSAL)
        for i in gl.static_range(2):
            mbarrier.wait(o_full, (2 * t + i) & 1)
            if start_m * BLOCK_M + i * SUB_M < N_CTX:
                tma.async_store(o_desc, [q_row + i * SUB_M, 0], o_smem)
                tma.store_wait(0)
            mbarrier.arrive(o_empty, count=1)
        t += 1
        sched = sched.advance()


# ---------------------------------------------------------------------------------------------------------------
# The kernels.


@gluon.jit
def _attention_program(sched, sm_scale, q_desc, k_desc, v_desc, o_desc, N_CTX, num_heads, HEAD_DIM: gl.constexpr,
                       BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr, STAGES: gl.constexpr):
    """One program's buffers and barriers, and its partitions over the tiles `sched` gives it. A program is one CTA,
    or a CTA pair (`num_ctas=2`), whose layouts the descriptors' `cga_layout`s give."""
    PAIR: gl.constexpr = gl.num_ctas() == 2
    gl.static_assert(gl.num_ctas() <= 2, "a program is one CTA or a CTA pair")
    SUB_M: gl.constexpr = q_desc.block_shape[0]
    gl.static_assert(SUB_M == CTA_M * gl.num_ctas(), "a Q block is a sub-tile: 128 rows per CTA")
    gl.static_assert(BLOCK_M == 2 * SUB_M, "a program's query block is two sub-tiles")
    gl.static_assert(SUB_M % BLOCK_N == 0, "a sub-tile is a whole number of key blocks")
    # The pair splits the MMAs' M (Q, S, P, O, the mailboxes: each CTA its 128 rows of a sub-tile).
    CGA: gl.constexpr = q_desc.layout.cga_layout
    dtype: gl.constexpr = q_desc.dtype
    q_smem = gl.allocate_shared_memory(dtype, [2, SUB_M, HEAD_DIM], q_desc.layout)
    k_bufs = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], k_desc.layout)
    v_bufs = gl.allocate_shared_memory(dtype, [STAGES, BLOCK_N, HEAD_DIM], v_desc.layout)
    o_smem = gl.allocate_shared_memory(dtype, [SUB_M, HEAD_DIM], o_desc.layout)
    # The softmax-to-correction mailboxes: alpha per block, l per tile, one row per thread.
    xfer_cga: gl.constexpr = [[0, 1]] if PAIR else []
    xfer = gl.allocate_shared_memory(gl.float32, [2, SUB_M], gl.SwizzledSharedLayout(1, 1, 1, [1, 0],
                                                                                     cga_layout=xfer_cga))

    # On a pair, the barriers the MMA warp waits on are the pair's: in the lead CTA, counting both CTAs' arrivals
    # (each CTA's loader's bytes, each CTA's softmax and correction); the MMAs' commits arrive on each CTA's own.
    q_bar = mbarrier.allocate_mbarrier(two_ctas=PAIR)
    q_empty = mbarrier.allocate_mbarrier()
    k_ready = mbarrier.allocate_mbarrier(batch=STAGES, two_ctas=PAIR)
    v_ready = mbarrier.allocate_mbarrier(batch=STAGES, two_ctas=PAIR)
    kv_empty = mbarrier.allocate_mbarrier(batch=STAGES)
    s_ready = mbarrier.allocate_mbarrier(batch=2)
    p_ready = mbarrier.allocate_mbarrier(batch=2, two_ctas=PAIR)
    o_ready = mbarrier.allocate_mbarrier(batch=2)
    o_corr = mbarrier.allocate_mbarrier(batch=2, two_ctas=PAIR)
    o_seen = mbarrier.allocate_mbarrier(batch=2, two_ctas=PAIR)
    xfer_ready = mbarrier.allocate_mbarrier(batch=2)
    xfer_free = mbarrier.allocate_mbarrier(batch=2)
    o_full = mbarrier.allocate_mbarrier()
    o_empty = mbarrier.allocate_mbarrier()
    mbarrier.init(q_bar, count=1)
    mbarrier.init(q_empty, count=1)
    mbarrier.init(o_full, count=1)
    mbarrier.init(o_empty, count=1)
    for i in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(kv_empty.index(i), count=1)
    for i in gl.static_range(2):
        mbarrier.init(s_ready.index(i), count=1)
        mbarrier.init(p_ready.index(i), count=1)
        mbarrier.init(o_ready.index(i), count=1)
        mbarrier.init(o_corr.index(i), count=1)
        mbarrier.init(o_seen.index(i), count=1)
        mbarrier.init(xfer_ready.index(i), count=1)
        mbarrier.init(xfer_free.index(i), count=1)

    s_layout: gl.constexpr = TensorMemoryLayout([CTA_M, BLOCK_N], col_stride=1, cga_layout=CGA, two_ctas=PAIR)
    o_layout: gl.constexpr = TensorMemoryLayout([CTA_M, HEAD_DIM], col_stride=1, cga_layout=CGA, two_ctas=PAIR)
    # P over S's columns: fp16/bf16, two to a 32-bit column.
    p_layout: gl.constexpr = TensorMemoryLayout([CTA_M, BLOCK_N], col_stride=1, cga_layout=CGA, two_ctas=PAIR)
    s_tmem = allocate_tensor_memory(gl.float32, [2, SUB_M, BLOCK_N], s_layout)
    o_tmem = allocate_tensor_memory(gl.float32, [2, SUB_M, HEAD_DIM], o_layout)
    qk_scale = sm_scale * 1.4426950408889634

    gl.warp_specialize([
        (_softmax, (sched, s_tmem, s_ready, p_ready, xfer, xfer_ready, xfer_free, qk_scale, N_CTX, num_heads, BLOCK_M,
                    CAUSAL, dtype, p_layout, 0)),
        (_softmax, (sched, s_tmem, s_ready, p_ready, xfer, xfer_ready, xfer_free, qk_scale, N_CTX, num_heads, BLOCK_M,
                    CAUSAL, dtype, p_layout, 1)),
        (_correction, (sched, o_smem, o_tmem, o_ready, o_corr, o_full, o_empty, xfer, xfer_ready, xfer_free, N_CTX,
                       num_heads, BLOCK_M, BLOCK_N, CAUSAL, dtype)),
        (_mma, (sched, q_smem, k_bufs, v_bufs, s_tmem, o_tmem, q_bar, q_empty, k_ready, v_ready, kv_empty, s_ready,
                p_ready, o_ready, o_corr, o_seen, N_CTX, num_heads, BLOCK_M, CAUSAL, STAGES, p_layout)),
        (_load, (sched, q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_bar, q_empty, k_ready, v_ready, kv_empty,
                 N_CTX, num_heads, BLOCK_M, CAUSAL, STAGES)),
        (_epilogue, (sched, o_desc, o_smem, o_full, o_empty, N_CTX, num_heads, BLOCK_M, BLOCK_N, CAUSAL)),
    ], [4, 4, 1, 1, 2], [192, 80, 48, 48, 48])


@gluon.jit
def attention_kernel(sm_scale, q_desc, k_desc, v_desc, o_desc, N_CTX, HEAD_DIM: gl.constexpr,
                     BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr, STAGES: gl.constexpr):
    """One program per tile: grid (N_CTX / BLOCK_M, heads)."""
    num_heads = gl.num_programs(1)
    sched = OneTile.initialize(gl.cdiv(N_CTX, BLOCK_M) * num_heads)
    _attention_program(sched, sm_scale, q_desc, k_desc, v_desc, o_desc, N_CTX, num_heads, HEAD_DIM, BLOCK_M, BLOCK_N,
                       CAUSAL, STAGES)


@gluon.jit
def attention_persistent_kernel(sm_scale, q_desc, k_desc, v_desc, o_desc, N_CTX, num_heads, HEAD_DIM: gl.constexpr,
                                BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr,
                                STAGES: gl.constexpr, SCHEDULER: gl.constexpr):
    """A persistent grid: SCHEDULER (StaticScheduler or ClcScheduler) hands each program its tiles."""
    # Not on CTA pairs yet: there every CTA's partitions would have to have read a response slot (a pair's
    # `consumed` barrier) before the lead asks into it again.
    gl.static_assert(gl.num_ctas() == 1, "the persistent grid runs one CTA a program")
    sched = SCHEDULER.initialize(gl.cdiv(N_CTX, BLOCK_M) * num_heads)
    _attention_program(sched, sm_scale, q_desc, k_desc, v_desc, o_desc, N_CTX, num_heads, HEAD_DIM, BLOCK_M, BLOCK_N,
                       CAUSAL, STAGES)


# ---------------------------------------------------------------------------------------------------------------
# The host side.


def _descriptors(q, k, v, o, BLOCK_N, ctas):
    """Q's, K's, V's and O's descriptors for programs of `ctas` CTAs (1, or 2: a pair, whose layouts split Q and O
    along the rows, K along the keys and V along the head dim)."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    if ctas not in (1, 2):
        raise ValueError(f"ctas = {ctas}: a program is one CTA or a pair")
    sub_m = 128 * ctas
    if N_CTX % sub_m or N_CTX % BLOCK_N:
        raise ValueError(f"N_CTX = {N_CTX} must be a multiple of {sub_m} and of BLOCK_N = {BLOCK_N}")
    if HEAD_DIM not in (64, 128):
        raise ValueError(f"HEAD_DIM = {HEAD_DIM}: this kernel takes 64 or 128")
    if BLOCK_N not in (64, 128):
        raise ValueError(f"BLOCK_N = {BLOCK_N}: this kernel takes 64 or 128")
    dt = gl.float16 if q.dtype == torch.float16 else gl.bfloat16
    rows, keys, dims = ([[1, 0]], [[1, 0]], [[0, 1]]) if ctas == 2 else ([], [], [])
    flat = lambda t: t.reshape(Z * H * N_CTX, HEAD_DIM)  # noqa: E731
    desc = lambda t, block, cga: TensorDescriptor.from_tensor(  # noqa: E731
        flat(t), block, gl.NVMMASharedLayout.get_default_for(block, dt, cga_layout=cga))
    return (desc(q, [sub_m, HEAD_DIM], rows), desc(k, [BLOCK_N, HEAD_DIM], keys), desc(v, [BLOCK_N, HEAD_DIM], dims),
            desc(o, [sub_m, HEAD_DIM], rows))


def attention(q, k, v, causal, sm_scale, BLOCK_N=128, STAGES=2, ctas=1):
    """O for q, k, v of shape [Z, H, N_CTX, HEAD_DIM] (fp16 or bf16), on a Blackwell GPU; `ctas=2` runs it on CTA
    pairs (where twice the K/V stages fit)."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    o = torch.empty_like(q)
    block_m = 256 * ctas
    grid = (triton.cdiv(N_CTX, block_m), Z * H)
    attention_kernel[grid](sm_scale, *_descriptors(q, k, v, o, BLOCK_N, ctas), N_CTX, HEAD_DIM, block_m, BLOCK_N,
                           causal, STAGES, num_warps=4, num_ctas=ctas)
    return o


def attention_persistent(q, k, v, causal, sm_scale, scheduler="clc", BLOCK_N=128, STAGES=2):
    """`attention` on a persistent grid: `scheduler` "clc" (one program per tile, cancelled by those running) or
    "static" (one program per SM, or per tile if there are fewer tiles)."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    if scheduler not in ("clc", "static"):
        raise ValueError(f"scheduler = {scheduler!r}: \"clc\" or \"static\"")
    o = torch.empty_like(q)
    tiles = triton.cdiv(N_CTX, 256) * Z * H
    if scheduler == "clc":
        grid, Scheduler = tiles, ClcScheduler
    else:
        grid, Scheduler = min(tiles, torch.cuda.get_device_properties(q.device).multi_processor_count), StaticScheduler
    attention_persistent_kernel[(grid, )](sm_scale, *_descriptors(q, k, v, o, BLOCK_N, 1), N_CTX, Z * H, HEAD_DIM, 256,
                                          BLOCK_N, causal, STAGES, Scheduler, num_warps=4)
    return o


if __name__ == "__main__":
    torch.manual_seed(0)
    q, k, v = (torch.randn((2, 4, 1024, 128), device="cuda", dtype=torch.float16) for _ in range(3))
    for causal in (False, True):
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.0883883)
        for name, run in [("one program per tile", attention),
                          ("one CTA pair per tile", lambda *a: attention(*a, STAGES=4, ctas=2)),
                          ("persistent, clc", lambda *a: attention_persistent(*a, scheduler="clc")),
                          ("persistent, static", lambda *a: attention_persistent(*a, scheduler="static"))]:
            o = run(q, k, v, causal, 0.0883883)
            diff = torch.max(torch.abs(o.float() - ref.float())).item()
            print(f"causal={causal}, {name}: max difference {diff:.4f}")
