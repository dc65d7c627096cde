"""Auto-mode kernels at num_ctas = 1, 2 and 4: a matmul (cp.async ring, wgmma), an elementwise add, a row
softmax and a tile reduced both ways, on torch tensors.

Each result is checked against torch in float64 (the output NaN-poisoned first) and timed with
triton.testing.do_bench (median; µs, and GB/s or TFLOP/s). Run it once per compiler in the same device call:
`python3 -m tessel bench/auto_clusters.py tessel` for tessel, `python3 bench/auto_clusters.py triton` for
upstream Triton (the first argument labels the lines). A configuration a compiler refuses is printed with its
error and counted as a failure. BENCHMARKS.md (2026-12-03) has the tables this printed.
"""
import sys
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0 + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)


@triton.jit
def tile_stats(x_ptr, rs_ptr, cm_ptr, R: tl.constexpr, C: tl.constexpr):
    base = tl.program_id(0) * R * C
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + base + r[:, None] * C + c[None, :])
    tl.store(rs_ptr + tl.program_id(0) * R + r, tl.sum(x, axis=1))
    tl.store(cm_ptr + tl.program_id(0) * C + c, tl.max(x, axis=0))


@triton.jit
def mm_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


label = sys.argv[1] if len(sys.argv) > 1 else "?"
torch.manual_seed(0)
fails = 0


def report(name, ctas, ok, ms, gbytes):
    global fails
    fails += 0 if ok else 1
    print(f"{label:8s} {name:28s} ctas={ctas} {'ok   ' if ok else 'WRONG'} {ms * 1e3:9.2f} us {gbytes / ms * 1e-6:8.1f} GB/s",
          flush=True)


def case(name, ctas, fn):
    global fails
    try:
        fn(ctas)
    except Exception as e:  # upstream Triton may refuse a cluster configuration
        print(f"{label:8s} {name:28s} ctas={ctas} {type(e).__name__}: {str(e).splitlines()[-1][:160]}", flush=True)
        fails += 1


def add_big(ctas):
    n = 1 << 26
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    grid = (triton.cdiv(n, 1024),)
    add_kernel[grid](x, y, out, n, BLOCK=1024, num_ctas=ctas)
    ok = torch.equal(out, x * 2 + y)
    ms = triton.testing.do_bench(lambda: add_kernel[grid](x, y, out, n, BLOCK=1024, num_ctas=ctas))
    report("add 2^26", ctas, ok, ms, 12 * n)


def add_masked(ctas):
    n = 100_003
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, num_ctas=ctas)
    report("add 100003 (masked)", ctas, torch.equal(out, x * 2 + y), 1.0, 0)


def softmax(rows, cols):
    def run_case(ctas):
        x = torch.randn(rows, cols, device="cuda")
        out = torch.full_like(x, float("nan"))
        block = triton.next_power_of_2(cols)
        warps = 8 if block >= 2048 else 4
        run = lambda: softmax_kernel[(rows,)](x, out, cols, cols, BLOCK=block, num_warps=warps, num_ctas=ctas)
        run()
        ok = (out.double() - torch.softmax(x.double(), dim=1)).abs().max().item() < 1e-6
        ms = triton.testing.do_bench(run)
        report(f"softmax {rows}x{cols}", ctas, ok, ms, 8 * rows * cols)
    return run_case


def matmul(M, N, K):
    def run_case(ctas):
        global fails
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        g = (triton.cdiv(M, 128), triton.cdiv(N, 128))
        run = lambda: mm_kernel[g](a, b, c, M, N, K, BM=128, BN=128, BK=64, num_warps=4, num_stages=3, num_ctas=ctas)
        run()
        ref = a.double() @ b.double()
        ok = ((c.double() - ref).abs() / (1 + ref.abs())).max().item() < 1e-2
        ms = triton.testing.do_bench(run)
        print(f"{label:8s} {'matmul %dx%dx%d' % (M, N, K):28s} ctas={ctas} {'ok   ' if ok else 'WRONG'} {ms * 1e3:9.2f} us "
              f"{2 * M * N * K / ms * 1e-9:8.1f} TFLOP/s", flush=True)
        fails += 0 if ok else 1
    return run_case


def tile(ctas):
    tiles, R, C = 4096, 64, 128
    x = torch.randn(tiles, R, C, device="cuda")
    rs = torch.full((tiles, R), float("nan"), device="cuda")
    cm = torch.full((tiles, C), float("nan"), device="cuda")
    run = lambda: tile_stats[(tiles,)](x, rs, cm, R=R, C=C, num_ctas=ctas)
    run()
    ok = (rs.double() - x.double().sum(2)).abs().max().item() < 1e-3 and torch.equal(cm, x.amax(1))
    ms = triton.testing.do_bench(run)
    report(f"tile stats {tiles}x{R}x{C}", ctas, ok, ms, 4 * tiles * R * C)


cases = [("add 2^26", add_big), ("add masked", add_masked)]
cases += [(f"matmul {m}", matmul(*m)) for m in ((4096, 4096, 4096), (8192, 8192, 4096), (1000, 528, 320))]
cases += [(f"softmax {r}x{c}", softmax(r, c)) for r, c in ((4096, 16384), (8192, 8192), (8192, 4096), (32768, 1024), (1823, 781))]
cases += [("tile stats", tile)]
for ctas in (1, 2, 4):
    for name, fn in cases:
        case(name, ctas, fn)
print(label, "FAILURES", fails)
