"""The launch API in the interpreter: numpy arrays in, results written back into them."""

import re

import numpy as np
import pytest

import tessel
import tessel.language as tl


@tessel.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@tessel.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_row_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + offs, num / tl.sum(num, axis=0), mask=mask)


@tessel.jit
def scale_kernel(x_ptr, n, stride, factor, SQUARE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * stride, mask=mask)
    if SQUARE:
        x = x * x
    tl.store(x_ptr + offs * stride, x * factor, mask=mask)


@tessel.jit
def bad_kernel(x_ptr, n):
    offs = tl.arange(0, 100)
    tl.store(x_ptr + offs, tl.zeros([64], dtype=tl.float32), mask=offs < n)


@tessel.jit
def oob_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32))


def test_vector_add_with_a_grid_lambda():
    rng = np.random.default_rng(0)
    n = 1000
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    grid = lambda meta: (tessel.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    add_kernel[grid](x, y, out, n, BLOCK=256)
    np.testing.assert_array_equal(out, x + y)


def test_vector_add_with_a_grid_tuple_and_float16():
    n = 300
    x = np.arange(n, dtype=np.float16)
    y = np.full(n, 0.5, dtype=np.float16)
    out = np.zeros(n, dtype=np.float16)
    add_kernel[(3,)](x, y, out, n, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)


def test_softmax_matches_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((7, 100)).astype(np.float32)
    out = np.empty_like(x)
    rows, cols = x.shape
    softmax_kernel[(rows,)](out, x, x.strides[0] // 4, out.strides[0] // 4, cols, BLOCK=tessel.next_power_of_2(cols))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_constexprs_and_specialization():
    x = np.arange(64, dtype=np.float32)
    scale_kernel[(1,)](x, 64, 1, 2.0, SQUARE=False, BLOCK=64)
    np.testing.assert_array_equal(x, np.arange(64) * 2.0)
    x = np.arange(64, dtype=np.float32)
    scale_kernel[(1,)](x, 64, 1, 0.5, SQUARE=True, BLOCK=64)
    np.testing.assert_array_equal(x, np.arange(64) ** 2 * 0.5)
    # Another constexpr value is another specialization; stride == 1 was specialized as a constant, 64 as a
    # multiple of 16.
    keys = list(scale_kernel.cache)
    assert len(keys) == 2
    assert keys[0][1] == ("int", "i32", True)
    assert keys[0][2] == ("const", ("int", 1))


def test_strided_view_and_large_integers():
    a = np.zeros((8, 4), dtype=np.float32)
    a[:, 1] = np.arange(8)
    col = a[:, 1]  # a strided view: the kernel reaches the whole span of memory it covers
    scale_kernel[(1,)](col, 8, 4, 3.0, SQUARE=False, BLOCK=8)
    np.testing.assert_array_equal(a[:, 1], np.arange(8) * 3.0)
    np.testing.assert_array_equal(a[:, 0], 0)
    spec, _ = scale_kernel.specialize({"x_ptr": col, "n": 2**40, "stride": 3, "factor": 1.0, "SQUARE": 0,
                                       "BLOCK": 8}, {"num_warps": 4, "num_stages": 3, "num_ctas": 1,
                                                     "maxnreg": None}, True)
    assert spec[1] == ("int", "i64", True)
    assert spec[2] == ("int", "i32", False)


def test_in_place_kernel_sees_its_own_array():
    x = np.arange(32, dtype=np.float32)
    add_kernel[(1,)](x, x, x, 32, BLOCK=32)
    np.testing.assert_array_equal(x, np.arange(32) * 2.0)


def test_warmup_compiles_without_running():
    out = np.zeros(16, dtype=np.float32)
    k = add_kernel.warmup(out, out, out, 16, BLOCK=16, grid=(1,))
    assert isinstance(k, tessel.CompiledKernel)
    assert "add_kernel" in k.asm["tile"]
    assert ".entry add_kernel" in k.ptx("sm_80")
    assert add_kernel.run(out, out, out, 16, BLOCK=16, grid=(1,)) is k


def test_compile_error_shows_the_source_line():
    x = np.zeros(64, dtype=np.float32)
    with pytest.raises(tessel.CompilationError) as e:
        bad_kernel[(1,)](x, 64)
    message = str(e.value)
    assert "offs = tl.arange(0, 100)" in message
    assert "test_launch.py" in message


def test_out_of_bounds_access_raises():
    x = np.zeros(16, dtype=np.float32)
    with pytest.raises(tessel.InterpreterError, match="out-of-bounds"):
        oob_kernel[(1,)](x, BLOCK=32)


def test_out_of_bounds_access_raises_its_own_exception_with_where():
    # Chosen by the interpreter's error kind, not its message: a subclass of InterpreterError with the program,
    # the buffer (the kernel's argument 0), the element and the buffer's size.
    x = np.zeros(16, dtype=np.float32)
    with pytest.raises(tessel.OutOfBoundsError) as e:
        oob_kernel[(1,)](x, BLOCK=32)
    assert isinstance(e.value, tessel.InterpreterError)
    assert e.value.program == (0, 0, 0)
    assert (e.value.buffer, e.value.index, e.value.size) == ("arg0", 16, 16)


@tessel.jit
def assert_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x >= 0, "x must not be negative")


def test_a_failed_device_assert_raises_its_own_exception():
    x = np.zeros(16, dtype=np.float32)
    assert_kernel[(1,)](x, BLOCK=16)
    x[3] = -1.0
    with pytest.raises(tessel.DeviceAssertionError, match="x must not be negative") as e:
        assert_kernel[(2,)](x, BLOCK=16)
    assert isinstance(e.value, tessel.InterpreterError) and not isinstance(e.value, tessel.OutOfBoundsError)
    assert e.value.program == (0, 0, 0)


def test_calling_a_kernel_directly_is_an_error():
    with pytest.raises(RuntimeError, match=r"add_kernel\[grid\]"):
        add_kernel(1, 2)


def test_amd_only_launch_options_are_refused_clearly():
    # Tutorial 10's CDNA4 kernel is launched with `matrix_instr_nonkdim`, which only AMD's backend has.
    x = np.ones(64, dtype=np.float32)
    out = np.full(64, np.nan, dtype=np.float32)
    with pytest.raises(NotImplementedError, match="AMD targets are not supported yet.*matrix_instr_nonkdim"):
        add_kernel[(1,)](x, x, out, 64, BLOCK=64, matrix_instr_nonkdim=16)
    assert np.isnan(out).all(), "nothing was launched"
    add_kernel[(1,)](x, x, out, 64, BLOCK=64)
    np.testing.assert_array_equal(out, 2 * x)


def test_launch_options_out_of_range_are_refused_before_anything_runs():
    # As Triton refuses them when compiling: a warp count that is not a power of two, a register cap ptxas does
    # not take. `num_stages=0` is Triton's "run the loops as written", as 1 is.
    x = np.ones(64, dtype=np.float32)
    out = np.full(64, np.nan, dtype=np.float32)
    for options, message in [(dict(num_warps=3), "num_warps must be a power of two in 1..=32, got 3"),
                             (dict(num_warps=64), "num_warps must be a power of two in 1..=32, got 64"),
                             (dict(maxnreg=7), "maxnreg must be in 24..=256, got 7")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            add_kernel[(1,)](x, x, out, 64, BLOCK=64, **options)
        assert np.isnan(out).all(), f"nothing was launched with {options}"
    add_kernel[(1,)](x, x, out, 64, BLOCK=64, num_stages=0)
    np.testing.assert_array_equal(out, 2 * x)


@tessel.jit
def printing_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.static_print("BLOCK is", BLOCK)
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


def test_static_print_reaches_stderr_once_per_compile(capsys):
    x = np.zeros(16, dtype=np.float32)
    printing_kernel[(1,)](x, BLOCK=16)
    printing_kernel[(1,)](x, BLOCK=16)
    err = capsys.readouterr().err
    assert err.count("BLOCK is 16") == 1, err
    np.testing.assert_array_equal(x, np.full(16, 2, dtype=np.float32))
