"""`@tessel.gluon.jit`: a gluon-mode kernel (layouts written in the kernel) through the same launch API."""

import numpy as np

from tessel import gluon
from tessel.gluon import language as gl


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
