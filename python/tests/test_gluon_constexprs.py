"""Gluon layouts, tuples, dtypes and module objects built on the host and passed to kernels as constexprs, as
Triton's launcher takes them (run in the interpreter)."""

import numpy as np
import pytest

from tessel import CompilationError, gluon
from tessel.gluon import language as gl
from tessel.layouts import LayoutError

ROWS = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
COLS = gl.BlockedLayout([4, 1], [4, 8], [1, 4], [0, 1])


@gluon.jit
def staged_scale_kernel(x_ptr, out_ptr, M: gl.constexpr, N: gl.constexpr, FACTOR: gl.constexpr,
                        layout: gl.constexpr, SHARED: gl.constexpr):
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    offs = rows[:, None] * N + cols[None, :]
    x = gl.load(x_ptr + offs)
    smem = gl.allocate_shared_memory(x.dtype, [M, N], SHARED)
    smem.store(x)
    y = smem.load(layout)
    gl.store(out_ptr + offs, y * FACTOR)


@gluon.jit
def fill_kernel(out_ptr, SHAPE: gl.constexpr, SPT: gl.constexpr, TPW: gl.constexpr, WPC: gl.constexpr,
                ORDER: gl.constexpr, DTYPE: gl.constexpr, VALUE: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout(SPT, TPW, WPC, ORDER)
    rows = gl.arange(0, SHAPE[0], layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, SHAPE[1], layout=gl.SliceLayout(0, layout))
    offs = rows[:, None] * SHAPE[1] + cols[None, :]
    gl.store(out_ptr + offs, gl.full(SHAPE, VALUE, DTYPE, layout))


@gluon.jit
def double(x):
    return x * 2


@gluon.jit
def negate(x):
    return -x


@gluon.jit
def apply_kernel(x_ptr, out_ptr, BLOCK: gl.constexpr, OP: gl.constexpr, layout: gl.constexpr):
    offs = gl.arange(0, BLOCK, layout=layout)
    gl.store(out_ptr + offs, OP(gl.load(x_ptr + offs)))


def _x(m, n, dtype=np.float16):
    return np.random.default_rng(7).standard_normal((m, n)).astype(dtype)


def test_layouts_built_on_the_host_reach_the_kernel():
    x = _x(128, 64)
    out = np.full_like(x, np.nan)
    shared = gl.NVMMASharedLayout.get_default_for([128, 64], gl.float16)
    k = staged_scale_kernel[(1,)](x, out, M=128, N=64, FACTOR=3, layout=ROWS, SHARED=shared, num_warps=4)
    np.testing.assert_array_equal(out, x * np.float16(3))
    tile = k.asm["tile"]
    assert "BlockedLayout([1,4],[8,4],[4,1],[1,0])" in tile
    assert "NVMMASharedLayout(128, 16)" in tile  # get_default_for's 128-byte swizzle for 64 fp16 per row
    assert "BlockedLayout([4,1],[4,8],[1,4],[0,1])" not in tile


def test_the_cache_key_holds_the_layouts():
    x = _x(64, 32, np.float32)
    swizzled = gl.SwizzledSharedLayout(vec=4, per_phase=1, max_phase=8, order=[1, 0])
    a = np.full_like(x, np.nan)
    b = np.full_like(x, np.nan)
    ka = staged_scale_kernel[(1,)](x, a, 64, 32, 2, ROWS, swizzled)
    kb = staged_scale_kernel[(1,)](x, b, 64, 32, 2, COLS, swizzled)
    np.testing.assert_array_equal(a, 2 * x)
    np.testing.assert_array_equal(b, 2 * x)
    assert ka is not kb
    assert "BlockedLayout([4,1],[4,8],[1,4],[0,1])" in kb.asm["tile"]
    assert "BlockedLayout([4,1],[4,8],[1,4],[0,1])" not in ka.asm["tile"]
    # An equal layout built again (here spelled with keywords) is the same specialization.
    again = gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])
    assert again == ROWS and hash(again) == hash(ROWS)
    assert staged_scale_kernel[(1,)](x, a, 64, 32, 2, again, swizzled) is ka
    other_shared = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])
    assert staged_scale_kernel[(1,)](x, a, 64, 32, 2, ROWS, other_shared) is not ka


def test_host_layout_objects_keep_their_fields_and_spell_as_the_compiler_does():
    assert ROWS.size_per_thread == [1, 4] and ROWS.order == [1, 0] and ROWS.cga_layout == []
    assert repr(ROWS) == "BlockedLayout([1,4],[8,4],[4,1],[1,0])"
    nested = gl.SliceLayout(dim=0, parent=ROWS)
    assert nested.parent is ROWS and repr(nested) == "SliceLayout(0, BlockedLayout([1,4],[8,4],[4,1],[1,0]))"
    d = gl.NVMMASharedLayout.get_default_for([64, 16], gl.float16)
    assert (d.swizzle_byte_width, d.element_bitwidth, d.rank, d.transposed) == (32, 16, 2, False)
    assert d == gl.NVMMASharedLayout(32, 16)
    assert d != gl.NVMMASharedLayout(128, 16)
    assert gl.NVMMASharedLayout.get_default_for([128, 64], gl.float16).swizzle_byte_width == 128
    # Asked again (host code does, around every launch), it is an equal layout of its own, from a cache that
    # tells a tuple shape from a list, and arguments apart.
    again = gl.NVMMASharedLayout.get_default_for((64, 16), gl.float16)
    assert again == d and again is not d and again.cga_layout is not d.cga_layout
    assert gl.NVMMASharedLayout.get_default_for((64, 16), gl.float32) == gl.NVMMASharedLayout(64, 32)
    assert gl.NVMMASharedLayout.get_default_for((64, 16), gl.float16, transposed=True).transposed
    with pytest.raises(AttributeError, match="immutable"):
        ROWS.order = [0, 1]


def test_bad_layouts_are_refused_when_built():
    with pytest.raises(LayoutError, match="32 threads"):
        gl.BlockedLayout([1, 4], [8, 8], [4, 1], [1, 0])
    with pytest.raises(TypeError, match="warps_per_cta"):
        gl.BlockedLayout([1, 4], [8, 4])
    with pytest.raises(NotImplementedError, match="PaddedSharedLayout"):
        gl.PaddedSharedLayout([[32, 4]], [[0, 1]], [], [16, 16])


def test_tuples_lists_and_dtypes_as_constexprs():
    for dtype, np_dtype in ((gl.float16, np.float16), (gl.int32, np.int32), (gl.float32, np.float32)):
        out = np.zeros((16, 32), dtype=np_dtype)
        fill_kernel[(1,)](out, (16, 32), [1, 4], (4, 8), [4, 1], (1, 0), dtype, 5, num_warps=4)
        np.testing.assert_array_equal(out, np.full((16, 32), 5, dtype=np_dtype))
    assert len(fill_kernel.cache) == 3  # one specialization per dtype


def test_module_functions_as_constexprs():
    x = np.arange(128, dtype=np.float32)
    layout = gl.BlockedLayout([1], [32], [4], [0])
    out = np.zeros_like(x)
    k2 = apply_kernel[(1,)](x, out, 128, double, layout)
    np.testing.assert_array_equal(out, 2 * x)
    kn = apply_kernel[(1,)](x, out, 128, negate, layout)
    np.testing.assert_array_equal(out, -x)
    assert k2 is not kn


def test_a_wrong_kind_of_object_names_the_parameter():
    x = np.arange(128, dtype=np.float32)
    out = np.zeros_like(x)
    with pytest.raises(TypeError, match="argument `layout`"):
        apply_kernel[(1,)](x, out, 128, double, object())
    with pytest.raises(TypeError, match="argument `OP`.*does not name it"):
        apply_kernel[(1,)](x, out, 128, lambda v: v, gl.BlockedLayout([1], [32], [4], [0]))
    with pytest.raises(TypeError, match="argument `layout`"):
        apply_kernel[(1,)](x, out, 128, double, np.zeros(4))
    with pytest.raises(TypeError, match="argument `SPT`.*inside a tuple"):
        fill_kernel[(1,)](out, (16, 32), (ROWS,), (4, 8), [4, 1], (1, 0), gl.float32, 5)


def test_a_layout_of_the_wrong_kind_is_a_compile_error_where_the_kernel_uses_it():
    x = _x(128, 64)
    out = np.full_like(x, np.nan)
    with pytest.raises(CompilationError, match=r"(?s)needs a shared-memory layout, got the BlockedLayout.*SHARED\)"):
        staged_scale_kernel[(1,)](x, out, 128, 64, 3, ROWS, ROWS)
    with pytest.raises(CompilationError, match=r"(?s)parent must be a distributed \(register\) layout.*layout\)"):
        staged_scale_kernel[(1,)](x, out, 128, 64, 3, gl.NVMMASharedLayout(128, 16), ROWS)


def test_a_layout_built_again_from_equal_arguments_is_equal_and_its_own(monkeypatch):
    # Host code builds layouts around every launch; equal arguments give an equal layout (from a per-process
    # table), whose list fields are its own, and arguments that differ only as True and 1 do not collide.
    from tessel.gluon import language as gl

    a = gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])
    b = gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])
    assert a == b and hash(a) == hash(b) and a.order == [1, 0] and a.order is not b.order

    # The second build came from the table: with binding broken it still builds, a new layout does not.
    class Unbindable:
        def bind(self, *args, **kwargs):
            raise AssertionError("bound again")

    monkeypatch.setattr(gl.BlockedLayout, "_signature", Unbindable())
    assert gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0]) == a
    with pytest.raises(AssertionError, match="bound again"):
        gl.BlockedLayout(size_per_thread=[2, 2], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])
    monkeypatch.undo()
    c = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [0, 1])
    assert c != a and c.order == [0, 1]
    t = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=True)
    u = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=False)
    assert t != u and t.transposed and not u.transposed
    # The table's key keeps list boundaries: the same ints split differently are another (here invalid) layout.
    with pytest.raises(LayoutError):
        gl.BlockedLayout([1], [4, 8, 4], [4, 1], [1, 0])
