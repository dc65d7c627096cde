"""`@tessel.gluon.jit`: a gluon-mode kernel (layouts written in the kernel) through the same launch API."""

import numpy as np
import pytest

import tessel

from tessel import gluon
from tessel.gluon import language as gl
from tessel.gluon.language.nvidia.blackwell import TensorMemoryLayout, allocate_tensor_memory, get_tmem_reg_layout


@gluon.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    mask = offs < n
    gl.store(out_ptr + offs, gl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def test_gluon_kernel_in_the_interpreter():
    x = np.arange(300, dtype=np.float32)
    out = np.zeros_like(x)
    k = double_kernel[(3,)](x, out, 300, BLOCK=128)
    np.testing.assert_array_equal(out, 2 * x)
    assert "tensor<128xi32, BlockedLayout([1],[32],[4],[0])>" in k.asm["tile"]  # the layout as written


@gluon.jit
def tmem_scale_kernel(x_ptr, out_ptr, M: gl.constexpr, N: gl.constexpr):
    # Blackwell's tensor memory: a round trip through it, then a scale. The interpreter runs it without a GPU.
    regs: gl.constexpr = get_tmem_reg_layout(gl.float32, [M, N], TensorMemoryLayout([M, N], col_stride=1),
                                             gl.num_warps())
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, regs))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, regs))
    offs = rows[:, None] * N + cols[None, :]
    t = allocate_tensor_memory(gl.float32, [M, N], TensorMemoryLayout([M, N], col_stride=1), value=gl.load(x_ptr + offs))
    gl.store(out_ptr + offs, t.load(regs) * 3)


def test_blackwell_tensor_memory_in_the_interpreter():
    # The kernel is elaborated for the target its ops need (sm_100a: tensor memory), not Hopper's.
    x = np.random.default_rng(0).standard_normal((128, 32)).astype(np.float32)
    out = np.full_like(x, np.nan)
    k = tmem_scale_kernel[(1,)](x, out, M=128, N=32)
    np.testing.assert_array_equal(out, 3 * x)
    assert "target = sm_100a" in k.asm["tile"]
    # Its PTX for Blackwell; for Hopper it is refused at the op. Without a GPU, `asm["ptx"]` is Blackwell's (with
    # one, the GPU's target is asked for and checked).
    assert "tcgen05.alloc" in k.ptx("sm_100a")
    with pytest.raises(tessel.CompilationError, match="needs sm_100a .* compiles for sm_90a"):
        k.ptx("sm_90a")
    if tessel.runtime.gpu_target() is None:
        assert "tcgen05.alloc" in k.asm["ptx"]
    # A Hopper-tier kernel keeps Hopper's target.
    assert "target = sm_90a" in double_kernel[(1,)](x.ravel(), np.zeros(x.size, np.float32), 300, BLOCK=128).asm["tile"]
