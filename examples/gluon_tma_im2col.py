"""A TMA im2col load (Gluon's `tma.async_load_im2col` of a host `TensorDescriptorIm2Col`): the 32 pixels x 16
channels of an NHWC fp16 tensor that the descriptor's pixel box and the filter tap (OFF_H, OFF_W) select, starting
at (n, h, w, c), copied to `out_ptr` (32 x 16, row-major) through shared memory and registers.

    tessel run examples/gluon_tma_im2col.py::im2col_copy --num-warps 4 --grid 1 \\
        --signature 'tensordesc_im2col<fp16[32, 16]>,*fp16,i32,i32,i32,i32' --const OFF_H=1 --const OFF_W=2 \\
        --arg x=randn:2x5x6x24:fp16 --arg x_desc=desc_im2col:x:block=32x16:lower=-1x-2:upper=0x-1 \\
        --arg out_ptr=fill:nan:512:fp16 --arg n=0 --arg h=-1 --arg w=-2 --arg c=8
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma


@gluon.jit
def im2col_copy(x_desc, out_ptr, n, h, w, c, OFF_H: gl.constexpr, OFF_W: gl.constexpr):
    buf = gl.allocate_shared_memory(x_desc.dtype, x_desc.block_shape, x_desc.layout)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, x_desc.block_type.nbytes)
    tma.async_load_im2col(x_desc, [n, h, w, c], [OFF_H, OFF_W], bar, buf)
    mbarrier.wait(bar, 0)
    mbarrier.invalidate(bar)
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    vals = buf.load(layout)
    rows = gl.arange(0, 32, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, 16, layout=gl.SliceLayout(0, layout))
    gl.store(out_ptr + rows[:, None] * 16 + cols[None, :], vals)
