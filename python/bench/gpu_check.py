"""tessel's torch/CUDA launch path, checked on a GPU: correctness against torch, stream and event semantics.

    python python/bench/gpu_check.py [-k NAME]

Needs torch with CUDA and the `tessel` package (no Triton, no pytest). Every output is poisoned with NaN before
the launch and every input is fresh random data, so a kernel that does not run, runs on the wrong stream, or
runs before its inputs are written shows up as a mismatch. No check synchronizes by hand except where torch
itself does (reading a result on the host) or where the check is about events and streams. Prints one line per
check and exits 1 if any check fails (2 when there is no torch or no CUDA device). `python/tests/test_cuda.py`
runs the same checks under pytest, skipped without CUDA.
"""

from __future__ import annotations

import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch
except ImportError:
    if __name__ == "__main__":
        print("gpu_check: torch is not installed (it needs torch with CUDA)")
        sys.exit(2)
    raise

import tessel  # noqa: E402
from _kernels import add_kernel, axpby_kernel, softmax_kernel, staged_scale_kernel  # noqa: E402
from tessel.gluon import language as gl  # noqa: E402
from tessel.runtime import gpu_target  # noqa: E402

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def _nan_like(t):
    return torch.full_like(t, float("nan"))


def _expect_equal(got, want, what):
    if got.shape != want.shape or got.dtype != want.dtype:
        raise AssertionError(f"{what}: got {got.dtype}{tuple(got.shape)}, want {want.dtype}{tuple(want.shape)}")
    bad = ~((got == want) | (torch.isnan(got) & torch.isnan(want)))
    n = int(bad.sum())
    if n:
        i = int(bad.flatten().nonzero()[0])
        raise AssertionError(f"{what}: {n} of {got.numel()} elements differ; first at flat index {i}: got "
                             f"{got.flatten()[i].item()}, want {want.flatten()[i].item()}")


def _expect_close(got, want, what, rtol, atol):
    try:
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=False)
    except AssertionError as e:
        raise AssertionError(f"{what}: {e}") from None


def _busy(stream, ms=50):
    """Queues about `ms` milliseconds of GPU work on `stream` (so that anything not ordered after it runs first)."""
    with torch.cuda.stream(stream):
        if hasattr(torch.cuda, "_sleep"):
            # _sleep counts clock cycles; about 1.5 GHz.
            torch.cuda._sleep(int(ms * 1.5e6))
        else:
            a = torch.randn(4096, 4096, device=stream.device)
            for _ in range(max(1, ms // 2)):
                a = a @ a
                a /= a.abs().max()


def _add(x, y, out, block=1024, **opts):
    n = x.numel()
    return add_kernel[lambda meta: (triton_cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)](
        x, y, out, n, BLOCK_SIZE=block, **opts)


def triton_cdiv(a, b):
    return (a + b - 1) // b


def _warm(n):
    """Compiles and loads the vector add's specialization for length `n` (so that a timed launch is a cached one)."""
    x = torch.randn(n, device="cuda")
    out = _nan_like(x)
    _add(x, x, out)
    torch.cuda.synchronize()


# --- (a) results against torch ---

@check
def vector_add_matches_torch():
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for n in (1, 1000, 4097, (1 << 20) + 3):
            x = torch.randn(n, device="cuda", dtype=dtype)
            y = torch.randn(n, device="cuda", dtype=dtype)
            out = _nan_like(x)
            _add(x, y, out)
            _expect_equal(out, x + y, f"add {dtype} n={n}")
    return "float32/float16/bfloat16, n in 1, 1000, 4097, 2^20+3"


@check
def vector_add_grid_tuple_and_block_sizes():
    n = 10_000
    for block, warps in ((128, 1), (256, 2), (1024, 4), (2048, 8)):
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        out = _nan_like(x)
        add_kernel[(triton_cdiv(n, block),)](x, y, out, n, BLOCK_SIZE=block, num_warps=warps)
        _expect_equal(out, x + y, f"add BLOCK={block} num_warps={warps}")
    return "BLOCK 128..2048, num_warps 1..8"


@check
def softmax_matches_torch():
    for dtype, (rows, cols) in ((torch.float32, (7, 100)), (torch.float32, (1823, 781)), (torch.float16, (64, 1024))):
        # A strided view: rows are further apart than their length.
        big = torch.randn(rows, cols + 37, device="cuda", dtype=dtype)
        x = big[:, :cols]
        out = torch.full((rows, cols), float("nan"), device="cuda", dtype=torch.float32)
        block = 1 << (cols - 1).bit_length()
        softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=block,
                                num_warps=8 if block >= 2048 else 4)
        _expect_close(out, torch.softmax(x.float(), dim=1), f"softmax {dtype} {rows}x{cols}", rtol=1e-5, atol=1e-6)
    return "fp32 7x100, fp32 1823x781, fp16 64x1024 (strided rows)"


@check
def scalar_arguments_and_specialization():
    n = 5000
    x = torch.randn(2 * n, device="cuda")
    for stride, alpha, beta in ((1, 2.5, 0.0), (2, -1.0, 0.25), (1, 0.5, 1.0)):
        out = torch.full((n,), float("nan"), device="cuda")
        axpby_kernel[(triton_cdiv(n, 512),)](x, out, n, stride, alpha, beta, BLOCK=512)
        want = alpha * x[: n * stride: stride] + beta * torch.arange(n, device="cuda", dtype=torch.float32)
        _expect_close(out, want, f"axpby stride={stride} alpha={alpha} beta={beta}", rtol=1e-6, atol=1e-6)
    keys = [k for k in axpby_kernel.cache if not k[-1]]
    # stride 1 is specialized as a constant, stride 2 is a runtime i32: two specializations.
    if len(keys) != 2:
        raise AssertionError(f"expected 2 GPU specializations of axpby_kernel, got {len(keys)}: {keys}")
    return "f32 scalars, stride==1 specialized, stride 2 at run time"


@check
def gluon_layouts_from_the_host():
    x = torch.randn(4 * 128, 64, device="cuda", dtype=torch.float16)
    shared = gl.NVMMASharedLayout.get_default_for([128, 64], gl.float16)
    compiled = []
    for layout in (gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]), gl.BlockedLayout([4, 1], [4, 8], [1, 4], [0, 1]),
                   gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1],
                                    order=[1, 0])):
        out = _nan_like(x)
        compiled.append(staged_scale_kernel[(4,)](x, out, 128, 64, layout, shared, num_warps=4))
        _expect_equal(out, 2 * x, f"staged_scale {layout}")
    # The third layout equals the first: the launcher's cache gives the same compiled kernel.
    if compiled[2] is not compiled[0] or compiled[1] is compiled[0]:
        raise AssertionError(f"specializations by layout: {compiled}")
    return "two BlockedLayouts and an NVMMA shared layout built on the host; equal layouts share a kernel"


@check
def launch_options_num_warps_maxnreg_num_ctas():
    n = 4096
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = _nan_like(x)
    k = _add(x, y, out, num_warps=8, maxnreg=32)
    _expect_equal(out, x + y, "add with num_warps=8, maxnreg=32")
    ptx = k.ptx(gpu_target())
    if ".maxnreg 32" not in ptx:
        raise AssertionError("maxnreg=32 did not reach the PTX entry (.maxnreg 32)")
    out = _nan_like(x)
    _add(x, y, out, num_ctas=1)
    _expect_equal(out, x + y, "add with num_ctas=1")
    # An auto-mode kernel at num_ctas > 1: a cluster launch, its tensors split over the CTAs (docs/python.md).
    for ctas in (2, 4):
        out = _nan_like(x)
        k = _add(x, y, out, num_ctas=ctas)
        _expect_equal(out, x + y, f"add with num_ctas={ctas}")
        if f".reqnctapercluster {ctas}, 1, 1" not in k.ptx(gpu_target()):
            raise AssertionError(f"num_ctas={ctas}: the PTX entry is not a cluster of {ctas}")
    return "num_warps=8 + maxnreg=32 correct and in the PTX; num_ctas=1, 2 and 4 run"


# --- devices ---

@check
def device_index_is_honoured_and_current_device_unchanged():
    count = torch.cuda.device_count()
    before = torch.cuda.current_device()
    devices = list(range(count))
    for d in devices:
        x = torch.randn(3000, device=f"cuda:{d}")
        y = torch.randn(3000, device=f"cuda:{d}")
        out = _nan_like(x)
        _add(x, y, out)  # launched from whatever device is current: the tensors' device decides
        _expect_equal(out, x + y, f"add on cuda:{d} with cuda:{before} current")
        if torch.cuda.current_device() != before:
            raise AssertionError(f"launching on cuda:{d} changed torch's current device from {before} to "
                                 f"{torch.cuda.current_device()}")
    if count > 1:
        a = torch.randn(10, device="cuda:0")
        b = torch.randn(10, device="cuda:1")
        try:
            _add(a, b, _nan_like(a))
        except ValueError:
            pass
        else:
            raise AssertionError("tensors on two devices in one launch must raise ValueError")
    return f"{count} device(s); current device stays cuda:{before}" + ("" if count > 1 else " (one GPU: cuda:0 only)")


@check
def host_tensor_among_cuda_tensors_is_refused():
    x = torch.randn(100, device="cuda")
    try:
        _add(x, torch.randn(100), _nan_like(x))
    except ValueError as e:
        return f"ValueError: {e}"
    raise AssertionError("a CPU tensor among CUDA tensors must raise ValueError")


# --- (b) streams ---

@check
def launch_is_on_the_current_stream_and_asynchronous():
    n = 1 << 20
    _warm(n)
    src, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.full((n,), float("nan"), device="cuda")
        out = torch.full((n,), float("nan"), device="cuda")
    _busy(s, ms=200)
    with torch.cuda.stream(s):
        x.copy_(src)  # torch work before the kernel, on s
        t0 = time.perf_counter()
        _add(x, y, out)
        launch_ms = (time.perf_counter() - t0) * 1e3
        still_busy = not s.query()
        z = out * 2  # torch work after the kernel, on s
    if not still_busy:
        raise AssertionError("the stream was idle right after the launch: the launch waited for the GPU")
    if launch_ms > 100:
        raise AssertionError(f"the launch took {launch_ms:.1f} ms behind 200 ms of queued work: it synchronized")
    # Nothing of this went to the default stream: it is idle while s is still busy.
    if not torch.cuda.default_stream().query():
        raise AssertionError("the default stream has work queued: the kernel did not go (only) to s")
    s.synchronize()
    _expect_equal(z, (src + y) * 2, "torch op before, kernel, torch op after, on one side stream")
    return f"launch returned in {launch_ms:.2f} ms with 200 ms of work queued ahead; ordered with torch on s"


@check
def default_stream_ordering_without_sync():
    # Torch ops and the kernel on the default stream, results read by torch: no synchronize anywhere.
    for _ in range(20):
        n = 1 << 16
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        x.mul_(3.0)
        out = _nan_like(x)
        _add(x, y, out)
        out.add_(1.0)
        _expect_equal(out, (x + y) + 1.0, "default stream: mul_, kernel, add_")
    return "20 rounds"


# --- (c) events ---

@check
def events_order_work_across_streams():
    n = 1 << 20
    _warm(n)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    src, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    torch.cuda.synchronize()
    start, done = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(s1):
        x = torch.full((n,), float("nan"), device="cuda")
        out = torch.full((n,), float("nan"), device="cuda")
    # Long enough that the host queues everything below before s1 drains, even with other test processes
    # loading the machine (at 100 ms, pytest -n 8 on one H200 once saw the event complete first).
    _busy(s1, ms=500)
    with torch.cuda.stream(s1):
        x.copy_(src)
        start.record()
        _add(x, y, out)
        done.record()
    with torch.cuda.stream(s2):
        s2.wait_event(done)
        z = out - y  # consumer on another stream, ordered by the event only
    if done.query():
        raise AssertionError("the kernel's event completed at once: the launch waited or went elsewhere")
    done.synchronize()
    ms = start.elapsed_time(done)
    s2.synchronize()
    _expect_equal(out, src + y, "kernel output after its event")
    _expect_close(z, src, "consumer on a second stream after wait_event", rtol=1e-6, atol=1e-6)
    return f"kernel between events on s1 ({ms * 1e3:.1f} us), consumed on s2 after wait_event"


@check
def cuda_graph_capture_and_replay():
    n = 1 << 16
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = _nan_like(x)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        _add(x, y, out)  # warm-up: compile and load outside the capture
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        _add(x, y, out)
    for _ in range(3):
        x.copy_(torch.randn(n, device="cuda"))
        out.fill_(float("nan"))
        g.replay()
        _expect_equal(out, x + y, "graph replay")
    return "captured into a torch CUDA graph, replayed 3 times with new inputs"


# --- errors ---

@check
def launch_errors_raise_and_are_not_sticky():
    x, y = torch.randn(64, device="cuda"), torch.randn(64, device="cuda")
    out = _nan_like(x)
    try:
        add_kernel[(1, 70000)](x, y, out, 64, BLOCK_SIZE=64)  # grid y > 65535: refused before the driver sees it
    except ValueError as e:
        message = str(e)
        if "more than CUDA allows" not in message:
            raise AssertionError(f"the refusal does not name CUDA's limit: {message}") from e
    else:
        raise AssertionError("a grid of 70000 in y launched: it must raise ValueError naming CUDA's limit")
    _add(x, y, out)
    _expect_equal(out, x + y, "a launch after a refused one")
    return f"ValueError: {message[:80]}"


@check
def triton_interpret_runs_cuda_tensors_in_the_interpreter():
    old = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        x, y = torch.randn(300, device="cuda"), torch.randn(300, device="cuda")
        out = _nan_like(x)
        _add(x, y, out, block=128)
        _expect_equal(out, x + y, "TRITON_INTERPRET=1 on CUDA tensors")
    finally:
        if old is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = old
    return "host copies in and out"


def run(selected=None):
    """Runs the checks (those whose name contains `selected`): the number that failed."""
    failed = 0
    for i, fn in enumerate(CHECKS):
        if selected and selected not in fn.__name__:
            continue
        torch.manual_seed(1000 + i)
        try:
            note = fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported, then the next check runs
            failed += 1
            print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}")
            traceback.print_exc(limit=4)
        else:
            print(f"PASS {fn.__name__}: {note}")
    return failed


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-k", help="run only the checks whose name contains this")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 2
    target, why = tessel._tessel.gpu_target()
    props = torch.cuda.get_device_properties(0)
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}), {props.name} sm_{props.major}{props.minor}, "
          f"tessel target {target or why}, {torch.cuda.device_count()} device(s)")
    if target is None:
        print(f"FAIL tessel sees no usable GPU: {why}")
        return 1
    failed = run(args.k)
    total = sum(1 for fn in CHECKS if not args.k or args.k in fn.__name__)
    print(f"{total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
