"""Auto-mode kernels launched as clusters (`num_ctas` > 1): tests/auto_clusters.rs runs them on the PTX
simulator's clusters against the interpreter and float64."""
import triton
import triton.language as tl


@triton.jit
def add_masked(X, Y, Out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    tl.store(Out + offs, x * 2.0 + y, mask=mask)


@triton.jit
def program_ids(Out):
    """Each program writes its id and the grid's size along both axes."""
    p = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
    tl.store(Out + 4 * p, tl.program_id(0))
    tl.store(Out + 4 * p + 1, tl.program_id(1))
    tl.store(Out + 4 * p + 2, tl.num_programs(0))
    tl.store(Out + 4 * p + 3, tl.num_programs(1))


@triton.jit
def locked_total(Lock, Total, Tickets, X, n, BLOCK: tl.constexpr):
    """Every program adds its block's integer sum to Total under a spin lock (an atomic whose old value is used,
    in a loop) and draws a ticket (another); Total and the set of tickets do not depend on the programs' order."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(X + offs, mask=offs < n, other=0), axis=0)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    tl.store(Total, tl.load(Total, volatile=True) + s)
    tl.atomic_xchg(Lock, 0)
    t = tl.atomic_add(Tickets + tl.num_programs(0), 1)
    tl.store(Tickets + pid, t)


@triton.jit
def row_softmax(X, Out, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + offs, mask=offs < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(Out + row * stride + offs, e / tl.sum(e, axis=0), mask=offs < n)


@triton.jit
def dot_tiles(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B over row-major fp16 operands, one BM x BN tile a program, a pipelined K loop."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(B + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def descriptor_tiles(a_desc, c_desc, BM: tl.constexpr, BN: tl.constexpr):
    """c = a + 1 tile by tile through tensor descriptors (TMA on sm_90a)."""
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    a = a_desc.load([om, on])
    c_desc.store([om, on], a + 1.0)


@triton.jit
def device_descriptor_tiles(a, c, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """descriptor_tiles with descriptors made in the kernel (each program's tensor map in its scratch slot)."""
    a_desc = tl.make_tensor_descriptor(a, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    c_desc = tl.make_tensor_descriptor(c, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    c_desc.store([om, on], a_desc.load([om, on]) + 1.0)


@triton.jit
def printing(X, BLOCK: tl.constexpr):
    """device_print names the program (the cluster's id)."""
    tl.device_print("x", tl.load(X + tl.arange(0, BLOCK)))


@triton.jit
def rows_then_columns(X, RowSums, ColMax, Scratch, Flipped, R: tl.constexpr, C: tl.constexpr):
    """One R x C tile a program, spread over the CTAs by rows: row sums stay in each CTA, column maxima combine
    across them; then the tile goes through global memory and comes back upside down, each CTA reading rows
    another wrote before `tl.debug_barrier()`."""
    base = tl.program_id(0) * R * C
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(X + base + r[:, None] * C + c[None, :])
    tl.store(RowSums + tl.program_id(0) * R + r, tl.sum(x, axis=1))
    tl.store(ColMax + tl.program_id(0) * C + c, tl.max(x, axis=0))
    tl.store(Scratch + base + r[:, None] * C + c[None, :], x * 2.0)
    tl.debug_barrier()
    y = tl.load(Scratch + base + (R - 1 - r)[:, None] * C + c[None, :])
    tl.store(Flipped + base + r[:, None] * C + c[None, :], y)


@triton.jit
def ticket_then_copy(Counter, Tickets, X, Out, BLOCK: tl.constexpr):
    """Each program draws a ticket (an atomic whose old value every CTA would need) and adds it to its block."""
    t = tl.atomic_add(Counter, 1)
    tl.store(Tickets + tl.program_id(0), t)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Out + offs, tl.load(X + offs) + t)


@triton.jit
def dot_tiles_bt(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """dot_tiles with B given N x K (row-major) and transposed in the kernel, as attention's K is."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(B + rn[:, None] * K + (k + rk)[None, :], mask=(rn[:, None] < N) & ((k + rk)[None, :] < K), other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def row_cumsum(X, Out, BLOCK: tl.constexpr):
    """A running sum along the one dim a spread would split: each CTA would need the earlier CTAs' totals."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Out + offs, tl.cumsum(tl.load(X + offs), axis=0))


@triton.jit
def transposed_copy(X, Out, R: tl.constexpr, C: tl.constexpr):
    """Out = X^T, one R x C tile a program: spread by rows, the transposed tile is gathered across the CTAs."""
    base = tl.program_id(0) * R * C
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(X + base + r[:, None] * C + c[None, :])
    tl.store(Out + base + c[:, None] * R + r[None, :], tl.trans(x))


@triton.jit
def desc_dot_tiles(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B through tensor descriptors (TMA on sm_90a): one BM x BN tile a program, a pipelined K loop."""
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([om, k]), b_desc.load([k, on]), acc)
    c_desc.store([om, on], acc)


@triton.jit
def device_desc_dot_tiles(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """desc_dot_tiles with the descriptors made in the kernel (each CTA's tensor maps in its scratch slots)."""
    a_desc = tl.make_tensor_descriptor(A, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(B, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(C, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([om, k]), b_desc.load([k, on]), acc)
    c_desc.store([om, on], acc)
