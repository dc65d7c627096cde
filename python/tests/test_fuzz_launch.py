"""Fuzzing the Python launch path (issue 31): random grids, arrays, scalars and constexprs given to a kernel on
host arrays. Each launch must run, or raise an error a user can act on (`TypeError`, `ValueError`,
`OverflowError`, tessel's `CompilationError` or `InterpreterError`); anything else (an `AttributeError`, an
`IndexError`, a `SystemError`, a panic surfacing as `PanicException`) is an internal error, and an abort ends the
process and so the run. A launch that runs is checked against numpy.

`TESSEL_FUZZ_EXAMPLES` sets the number of launches (default 60, for CI); the fuzzing campaign of docs/testing.md runs it with
many more."""

import os
import signal
import threading

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tessel  # noqa: E402
import tessel.language as tl  # noqa: E402

EXAMPLES = int(os.environ.get("TESSEL_FUZZ_EXAMPLES", "60"))
ACTIONABLE = (TypeError, ValueError, OverflowError, tessel.CompilationError, tessel.InterpreterError)
# A launch of this kernel on at most 40 elements that takes longer than this is a hang.
HANG_SECONDS = 20


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"a launch took more than {HANG_SECONDS} s")


@tessel.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha + y, mask=mask)


HUGE = [2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64, 2**70, -(2**63), -(2**63) - 1]
ODD = [None, 1.5, float("nan"), float("inf"), "4", b"x", [], (), object(), np.int64(2), np.float32(2.0), True]

# Grid dimensions that are valid stay small (a valid huge grid is a long run, not a wrong one); the invalid ones
# are anything.
dims = st.one_of(st.integers(0, 3), st.sampled_from([h for h in HUGE if h != 2**31 - 1] + [-1, -5, 65535 + 1]),
                 st.sampled_from(ODD))
grids = st.one_of(
    st.tuples(dims), st.tuples(st.integers(1, 2), dims), st.tuples(st.integers(1, 2), st.integers(1, 2), dims),
    st.lists(dims, min_size=0, max_size=5).map(tuple), st.sampled_from(ODD), st.integers(-2, 3),
)
dtypes = st.sampled_from([np.float32, np.float16, np.float64, np.int32, np.int64, np.uint8, np.bool_])
arrays = st.one_of(
    st.builds(lambda n, t: (np.arange(n) % 7).astype(t), st.integers(0, 40), dtypes),
    st.builds(lambda n: np.arange(2 * n, dtype=np.float32)[::2], st.integers(1, 20)),  # not contiguous
    st.sampled_from(ODD),
)
scalars = st.one_of(st.integers(-50, 50), st.sampled_from(HUGE), st.floats(allow_nan=True), st.sampled_from(ODD))
blocks = st.one_of(st.sampled_from([1, 2, 4, 8, 16, 32, 64]), st.sampled_from([0, -4, 3, 12, 2**20, 2**40]),
                   st.sampled_from(ODD))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(grid=grids, x=arrays, y=arrays, n=scalars, alpha=scalars, block=blocks)
def test_a_launch_runs_or_raises_an_actionable_error(grid, x, y, n, alpha, block):
    out = np.full(x.shape, np.nan, dtype=x.dtype) if isinstance(x, np.ndarray) and x.dtype.kind == "f" else None
    target = out if out is not None else x
    timed = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if timed:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        scale_add[grid](x, y, target, n, alpha, BLOCK=block)
    except ACTIONABLE as e:
        assert str(e), f"{type(e).__name__} without a message"
        event(f"raised {type(e).__name__}")
        return
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    event("ran")
    # It ran: check what it wrote where the launch is simple enough to predict.
    if out is None or not isinstance(y, np.ndarray) or type(n) is not int or type(alpha) is not int:
        return
    if not isinstance(grid, tuple) or len(grid) != 1 or type(grid[0]) is not int or type(block) is not int:
        return
    covered = min(grid[0] * block, n, x.size)
    # A strided view is read as memory from its first element on (pointer arithmetic, as on the GPU): only
    # contiguous inputs have a numpy answer here.
    if covered <= 0 or y.size < covered or y.dtype != x.dtype or not (x.flags.c_contiguous and y.flags.c_contiguous):
        return
    expected = x[:covered].astype(np.float64) * alpha + y[:covered].astype(np.float64)
    np.testing.assert_allclose(out[:covered].astype(np.float64), expected, rtol=1e-2, atol=1e-2)
