"""The interpreter's bounds from Python (issue 31): a grid of 2^31 - 1 programs on host arrays used to abort the
process allocating its program ids and could not be stopped; Ctrl-C now stops it at once, grids beyond CUDA's
limits and scalars outside their parameter's type are errors naming the limit or the argument."""

import _thread
import signal
import threading
import time

import numpy as np
import pytest

import tessel
import tessel.language as tl


@tessel.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tessel.jit
def add_first_block(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # add_kernel's work on program 0 only: its offsets never overflow i32, so every program of any grid stays in
    # bounds (add_kernel's `pid * BLOCK` wraps from program 2^31 / BLOCK on, and its mask then lets it read).
    offs = tl.arange(0, BLOCK)
    mask = (offs < n) & (tl.program_id(0) == 0)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tessel.jit
def put(out_ptr, n):
    tl.store(out_ptr, n)


def test_ctrl_c_stops_a_huge_grid_at_once():
    x = np.ones(64, dtype=np.float32)
    out = np.zeros(64, dtype=np.float32)
    add_first_block[(1,)](x, x, out, 64, BLOCK=64)  # compiled before the timed launch
    out[:] = 0
    # What Ctrl-C does: SIGINT's Python handler raises KeyboardInterrupt in the main thread. Where the process
    # ignores SIGINT there is no handler and nothing for Ctrl-C to raise: in a fresh-clone CI run (session 38,
    # started in the background) both xdist workers had SIGINT ignored (SigIgn in /proc/PID/status) and this
    # launch ran on until the run was killed. The test is about what tessel does when Python handles Ctrl-C, so it
    # installs Python's own handler for its duration.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            add_first_block[(2**31 - 1,)](x, x, out, 64, BLOCK=64)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - start < 10
    assert (out == 0).all(), "an interrupted launch writes nothing back"
    # The process and the kernel are fine afterwards.
    add_kernel[(1,)](x, x, out, 64, BLOCK=64)
    assert (out == 2).all()


def test_grids_beyond_cuda_limits_are_refused():
    x = np.ones(4, dtype=np.float32)
    with pytest.raises(ValueError, match=r"grid: 65536 programs along y is more than CUDA allows \(65535\)"):
        add_kernel[(1, 2**16)](x, x, x, 4, BLOCK=4)
    compiled = put.warmup(np.zeros(1, dtype=np.int32), 16, grid=(1,))
    for grid, message in [
        ([0, 1, 1], "grid: 0 programs along x: each dimension of a grid must be at least 1"),
        ([1, 1, 2**70], "grid: 1180591620717411303424 programs along z is more than CUDA allows (65535)"),
        ([2**31, 1, 1], "grid: 2147483648 programs along x is more than CUDA allows (2147483647)"),
    ]:
        with pytest.raises(ValueError) as e:
            compiled.native.interpret([("i32", bytes(4))], [("buf", 0), ("int", 3)], grid)
        assert str(e.value) == message


def test_u64_scalars_pass_and_every_scalar_is_range_checked():
    out = np.zeros(1, dtype=np.uint64)
    # 2^63 + 5 is a u64, as Triton types it: it used to raise "Python int too large to convert to C long".
    put[(1,)](out, 2**63 + 5)
    assert int(out[0]) == 2**63 + 5
    with pytest.raises(OverflowError, match=r"argument `n` = 18446744073709551616 does not fit in 64 bits"):
        put[(1,)](out, 2**64)
    # A specialization compiled for an int32 parameter is given what does not fit it.
    native = put.warmup(np.zeros(1, dtype=np.int32), 16, grid=(1,)).native
    buffers = [("i32", bytes(4))]
    with pytest.raises(OverflowError) as e:
        native.interpret(buffers, [("buf", 0), ("int", 2**40)], [1, 1, 1])
    assert str(e.value) == ("`put`: argument `n`: 1099511627776 does not fit int32 (from -2147483648 to "
                            "2147483647): it would wrap")
    with pytest.raises(OverflowError, match=r"argument `n`: 340282366920938463463374607431768211456 does not"):
        native.interpret(buffers, [("buf", 0), ("int", 2**128)], [1, 1, 1])
    with pytest.raises(TypeError, match=r"`put`: argument `n`: a float for a parameter of type i32"):
        native.interpret(buffers, [("buf", 0), ("float", 2.5)], [1, 1, 1])
    # The edge of the range runs.
    out32, _ = native.interpret(buffers, [("buf", 0), ("int", -(2**31))], [1, 1, 1])
    assert np.frombuffer(out32[0], dtype=np.int32)[0] == -(2**31)


def test_a_float_beyond_its_type_is_an_error_not_inf():
    out = np.zeros(1, dtype=np.float32)
    with pytest.raises(OverflowError, match=r"`put`: argument `n`: 1e39 does not fit float32: it would round to inf"):
        put[(1,)](out, 1e39)
    put[(1,)](out, float("inf"))
    assert out[0] == np.inf


def test_grids_that_are_not_grids_are_named():
    """`grid=None`, a float dimension (Triton's launcher would truncate nothing silently either), a negative one,
    and too many dimensions are errors naming what is wrong; a zero dimension is an empty launch."""
    x = np.ones(4, dtype=np.float32)
    cases = [
        (None, TypeError, "grid: expected an int, a tuple of 1 to 3 ints, or a function of the meta-parameters "
                          "returning one; got None"),
        ((1.5,), TypeError, "grid: programs along x must be an integer, got 1.5"),
        ((1, -2), ValueError, "grid: -2 programs along y: a grid dimension cannot be negative"),
        ((1, 1, 1, 1), ValueError, "grid: a grid has 1 to 3 dimensions, got (1, 1, 1, 1)"),
        ((2**31,), ValueError, r"grid: 2147483648 programs along x is more than CUDA allows (2147483647)"),
        (lambda meta: (1, 70000), ValueError, "grid: 70000 programs along y is more than CUDA allows (65535)"),
    ]
    for grid, kind, message in cases:
        with pytest.raises(kind) as e:
            add_kernel[grid](x, x, x, 4, BLOCK=4)
        assert str(e.value) == message, grid
    out = np.zeros(4, dtype=np.float32)
    add_kernel[(0,)](x, x, out, 4, BLOCK=4)
    add_kernel[(np.int64(1),)](x, x, out, 4, BLOCK=4)
    assert (out == 2).all()


def test_binding_errors_name_the_kernel():
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(TypeError, match=r"^add_kernel\(\) takes 5 positional arguments but 6 were given$"):
        add_kernel[(1,)](x, x, x, 4, 4, 5)
    with pytest.raises(TypeError, match=r"^add_kernel\(\) missing 1 required positional argument: 'BLOCK'$"):
        add_kernel[(1,)](x, x, x, 4)
