"""Gluon's host tensor descriptors (`triton.experimental.gluon.nvidia.hopper`): `TensorDescriptor` with the
shared layout of its block, and `TensorDescriptorIm2Col`; their checks, their specialization, and TMA kernels
that use them (run in the interpreter)."""

import numpy as np
import pytest

from tessel import gluon
from tessel.gluon import language as gl
from tessel.gluon.language.nvidia.hopper import mbarrier, tma
from tessel.gluon.nvidia.hopper import TensorDescriptor, TensorDescriptorIm2Col


@gluon.jit
def tma_round_trip_kernel(src, dst, FACTOR: gl.constexpr, layout: gl.constexpr):
    # Each program loads the block at its row of blocks, scales it in registers, and stores it back with TMA.
    smem = gl.allocate_shared_memory(src.dtype, src.block_shape, src.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    row = gl.program_id(0) * src.block_shape[0]
    mbarrier.expect(bar, src.nbytes_per_cta)
    tma.async_load(src, [row, 0], bar, smem)
    mbarrier.wait(bar, phase=0)
    mbarrier.invalidate(bar)
    smem.store(smem.load(layout) * FACTOR)
    tma.async_copy_shared_to_global(dst, [row, 0], smem)
    tma.store_wait(pendings=0)


@gluon.jit
def tma_copy_1d_kernel(src, dst):
    smem = gl.allocate_shared_memory(src.dtype, src.block_shape, src.layout)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    offset = gl.program_id(0) * src.block_shape[0]
    mbarrier.expect(bar, src.block_type.nbytes)
    tma.async_load(src, [offset], bar, smem)
    mbarrier.wait(bar, phase=0)
    mbarrier.invalidate(bar)
    tma.async_copy_shared_to_global(dst, [offset], smem)
    tma.store_wait(pendings=0)


@gluon.jit
def im2col_kernel(src, dst, n, h, w, c, OFF_H: gl.constexpr, OFF_W: gl.constexpr):
    smem = gl.allocate_shared_memory(src.dtype, src.block_shape, src.layout)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, src.block_type.nbytes)
    tma.async_load_im2col(src, [n, h, w, c], [OFF_H, OFF_W], bar, smem)
    mbarrier.wait(bar, phase=0)
    mbarrier.invalidate(bar)
    tma.async_copy_shared_to_global(dst, [0, 0], smem)
    tma.store_wait(pendings=0)


ROWS = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])


def _rows(m, n, dtype=np.float16):
    return np.random.default_rng(m * n).standard_normal((m, n)).astype(dtype)


@pytest.mark.parametrize("block", [[16, 64], [8, 32], [32, 16], [8, 16]])
def test_descriptors_with_their_layouts_run_a_tma_kernel(block):
    x = _rows(4 * block[0], block[1])
    y = np.full_like(x, np.nan)
    layout = gl.NVMMASharedLayout.get_default_for(block, gl.float16)
    k = tma_round_trip_kernel[(4,)](TensorDescriptor.from_tensor(x, block, layout),
                                    TensorDescriptor.from_tensor(y, block, layout), 3, ROWS)
    np.testing.assert_array_equal(y, x * np.float16(3))
    # The kernel's `src.layout` is the descriptor's layout: its buffer is allocated in it.
    assert f"local_alloc : memdesc<{block[0]}x{block[1]}xf16, {layout!r}>" in k.asm["tile"]


def test_a_one_dimensional_descriptor():
    x = np.arange(500, dtype=np.float32)
    y = np.full(512, np.nan, dtype=np.float32)
    layout = gl.NVMMASharedLayout.get_default_for([64], gl.float32)
    assert (layout.rank, layout.swizzle_byte_width) == (1, 0)
    tma_copy_1d_kernel[(8,)](TensorDescriptor.from_tensor(x, [64], layout),
                             TensorDescriptor.from_tensor(y[:500], [64], layout))
    np.testing.assert_array_equal(y[:500], x)
    assert np.isnan(y[500:]).all()  # the last block's store is clipped to the tensor's 500 elements


def test_the_specialization_carries_the_layout_and_the_key_follows_it():
    x = _rows(64, 64)
    layout = gl.NVMMASharedLayout.get_default_for([16, 64], gl.float16)
    d = TensorDescriptor.from_tensor(x, [16, 64], layout)
    assert d._tessel_spec() == ("desc", "float16", [16, 64], False, "NVMMASharedLayout(128, 16)")
    assert d._tessel_runtime_ints() == [64, 64, 64, 1]
    y = np.full_like(x, np.nan)
    out = TensorDescriptor.from_tensor(y, [16, 64], layout)
    first = tma_round_trip_kernel[(4,)](d, out, 1, ROWS)
    again = TensorDescriptor.from_tensor(x, [16, 64], gl.NVMMASharedLayout(128, 16))
    assert tma_round_trip_kernel[(4,)](again, out, 1, ROWS) is first
    layout32 = gl.NVMMASharedLayout.get_default_for([8, 16], gl.float16)
    smaller = tma_round_trip_kernel[(8,)](TensorDescriptor.from_tensor(x[:, :16], [8, 16], layout32),
                                          TensorDescriptor.from_tensor(y[:, :16], [8, 16], layout32), 1, ROWS)
    assert smaller is not first


def test_a_layout_the_compiler_cannot_give_the_block_is_refused_at_launch():
    x = _rows(64, 64)
    wide = gl.NVMMASharedLayout(64, 16)  # the default for [16, 64] fp16 swizzles 128 bytes
    desc = TensorDescriptor.from_tensor(x, [16, 64], wide)
    with pytest.raises(NotImplementedError, match=r"NVMMASharedLayout\(64, 16\).*NVMMASharedLayout\(128, 16\)"):
        tma_round_trip_kernel[(4,)](desc, desc, 1, ROWS)
    transposed = gl.NVMMASharedLayout.get_default_for([16, 64], gl.float16, transposed=True)
    with pytest.raises(NotImplementedError, match="transposed=True"):
        tma_round_trip_kernel[(4,)](TensorDescriptor.from_tensor(x, [16, 64], transposed), desc, 1, ROWS)


def test_a_descriptor_block_may_carry_any_cga_layout():
    # A descriptor's block in a cluster: zero CTA bases give every CTA the whole block (a multicast load's),
    # nonzero ones split it over the CTAs (each copies its part); both are the default layout's, with the bases.
    x = _rows(64, 64)
    for cga in ([[0, 0]], [[1, 0]], [[1, 0], [2, 0]]):
        layout = gl.NVMMASharedLayout.get_default_for([16, 64], gl.float16, cga_layout=cga)
        spec = TensorDescriptor.from_tensor(x, [16, 64], layout)._tessel_spec()
        assert spec[:4] == ("desc", "float16", [16, 64], False) and "cga_layout" in spec[4]
    # A block of 512 rows split over 4 CTAs: each CTA's box is 128 rows, within TMA's 256.
    tall = _rows(512, 64)
    four = gl.NVMMASharedLayout.get_default_for([512, 64], gl.float16, cga_layout=[[1, 0], [2, 0]])
    assert TensorDescriptor.from_tensor(tall, [512, 64], four)._tessel_spec()[2] == [512, 64]
    with pytest.raises(ValueError, match="up to 256"):
        TensorDescriptor.from_tensor(tall, [512, 64], gl.NVMMASharedLayout.get_default_for([512, 64], gl.float16))
    # Another swizzle than the block's default is still refused.
    narrow = gl.NVMMASharedLayout(64, 16, cga_layout=[[1, 0]])
    with pytest.raises(NotImplementedError, match="cannot take another one"):
        TensorDescriptor.from_tensor(x, [16, 64], narrow)._tessel_spec()


def test_a_cluster_kernel_takes_descriptors_split_over_its_ctas():
    x = _rows(64, 64)
    out = np.full_like(x, np.nan)
    split = gl.NVMMASharedLayout.get_default_for([32, 64], gl.float16, cga_layout=[[1, 0]])
    regs = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], cga_layout=[[1, 0]])
    # Each CTA of a 2-CTA cluster loads, scales and stores its own half of the block's rows.
    src, dst = TensorDescriptor.from_tensor(x, [32, 64], split), TensorDescriptor.from_tensor(out, [32, 64], split)
    tma_round_trip_kernel[(2, )](src, dst, 2, regs, num_ctas=2)
    np.testing.assert_array_equal(out, x * 2)
    # The layout reaches the compiler: each CTA's shared memory holds its 16 rows (16 x 64 halves).
    ptx = tma_round_trip_kernel.warmup(src, dst, 2, regs, num_ctas=2, grid=(2, )).native.ptx("sm_90a")
    assert "%smem 2048 bytes" in ptx, ptx


def test_descriptors_are_checked_when_built():
    x = _rows(64, 64)
    layout = gl.NVMMASharedLayout.get_default_for([16, 64], gl.float16)
    with pytest.raises(TypeError, match="must be an NVMMASharedLayout"):
        TensorDescriptor.from_tensor(x, [16, 64], ROWS)
    with pytest.raises(ValueError, match="32-bit elements, the tensor's are float16"):
        TensorDescriptor.from_tensor(x, [16, 64], gl.NVMMASharedLayout(128, 32))
    with pytest.raises(ValueError, match="contiguous"):
        TensorDescriptor.from_tensor(x.T, [16, 64], layout)
    with pytest.raises(ValueError, match="multiples of 16 bytes"):
        TensorDescriptor.from_tensor(np.zeros((8, 20), np.float16), [8, 16], gl.NVMMASharedLayout(32, 16))
    with pytest.raises(ValueError, match="16-byte aligned"):
        TensorDescriptor.from_tensor(np.zeros(80, np.float16)[1:65], [64], gl.NVMMASharedLayout(0, 16, rank=1))
    with pytest.raises(ValueError, match="at least 64 elements"):
        TensorDescriptor.from_tensor(x, [16, 32], layout)
    with pytest.raises(ValueError, match="powers of 2"):
        TensorDescriptor.from_tensor(x, [12, 64], layout)
    with pytest.raises(ValueError, match="differ in rank"):
        TensorDescriptor.from_tensor(x, [64], layout)
    with pytest.raises(ValueError, match="floating-point"):
        TensorDescriptor.from_tensor(np.zeros((8, 32), np.int16), [8, 32], gl.NVMMASharedLayout(64, 16),
                                     padding="nan")
    with pytest.raises(NotImplementedError, match="round_f32_to_tf32"):
        TensorDescriptor.from_tensor(_rows(8, 32, np.float32), [8, 32], gl.NVMMASharedLayout(128, 32),
                                     round_f32_to_tf32=True)


def _image():
    """A 2x4x4x32 channels-last image whose channel 0 holds the pixel's number (from 1)."""
    x = np.zeros((2, 4, 4, 32), dtype=np.float32)
    x[..., :] = np.arange(1, 33, dtype=np.float32).reshape(2, 4, 4, 1)
    return x


def _im2col_desc(x, **kwargs):
    return TensorDescriptorIm2Col.from_tensor(x, [16, 32], gl.NVMMASharedLayout(128, 32), **kwargs)


def test_im2col_descriptors_are_checked_and_flatten_in_the_launch_order():
    x = _image()
    d = _im2col_desc(x, pixel_box_lower_corner=[-1, -1], pixel_box_upper_corner=[-1, 0],
                     element_strides=[1, 2, 1, 1])
    assert d.mode == "im2col"
    assert d._tessel_spec() == ("desc_im2col", "float32", [16, 32], 4, False, "NVMMASharedLayout(128, 32)")
    # base, then shape, strides, the box's lower and upper corners, element strides
    assert d._tessel_runtime_ints() == [2, 4, 4, 32, 512, 128, 32, 1, -1, -1, -1, 0, 1, 2, 1, 1]
    plain = _im2col_desc(x, pixel_box_lower_corner=[0, 0], pixel_box_upper_corner=[0, 0])
    assert plain._tessel_runtime_ints()[-4:] == [1, 1, 1, 1]  # element strides default to 1
    with pytest.raises(ValueError, match="pixel_box_lower_corner is required"):
        _im2col_desc(x, pixel_box_upper_corner=[0, 0])
    with pytest.raises(ValueError, match=r"2 offsets in \[-128, 127\]"):
        _im2col_desc(x, pixel_box_lower_corner=[0, 0, 0], pixel_box_upper_corner=[0, 0])
    with pytest.raises(ValueError, match=r"2 offsets in \[-128, 127\]"):
        _im2col_desc(x, pixel_box_lower_corner=[-200, 0], pixel_box_upper_corner=[0, 0])
    with pytest.raises(ValueError, match="one stride from 1 to 8"):
        _im2col_desc(x, pixel_box_lower_corner=[0, 0], pixel_box_upper_corner=[0, 0], element_strides=[1, 9, 1, 1])
    with pytest.raises(ValueError, match="3 to 5 dimensions"):
        TensorDescriptorIm2Col.from_tensor(x.reshape(32, 32), [16, 32], gl.NVMMASharedLayout(128, 32),
                                           pixel_box_lower_corner=[], pixel_box_upper_corner=[])


def _im2col_reference(x, lower, upper, coord, offsets, pixels):
    """What an im2col load gathers: the positions of the pixel box in order (image, then row, then column) from
    `coord` on, each shifted by `offsets`; zeros outside the image."""
    n_img, height, width, channels = x.shape
    box = [(n, h, w) for n in range(n_img) for h in range(lower[0], height + upper[0])
           for w in range(lower[1], width + upper[1])]
    start = box.index(tuple(coord[:3]))
    out = np.zeros((pixels, channels), dtype=x.dtype)
    for p, (n, h, w) in enumerate(box[start:start + pixels]):
        h, w = h + offsets[0], w + offsets[1]
        if 0 <= h < height and 0 <= w < width:
            out[p] = x[n, h, w]
    return out


@pytest.mark.parametrize("lower, upper, coord, offsets", [
    ([0, 0], [0, 0], [0, 0, 0, 0], [0, 0]),
    ([-1, -1], [-1, -1], [0, -1, -1, 0], [1, 1]),
    ([0, 0], [0, 0], [0, 3, 2, 0], [0, 0]),
])
def test_an_im2col_descriptor_runs_an_im2col_kernel(lower, upper, coord, offsets):
    x = _image()
    y = np.full((16, 32), np.nan, dtype=np.float32)
    src = _im2col_desc(x, pixel_box_lower_corner=lower, pixel_box_upper_corner=upper)
    dst = TensorDescriptor.from_tensor(y, [16, 32], gl.NVMMASharedLayout(128, 32))
    im2col_kernel[(1,)](src, dst, *coord, *offsets, num_warps=1)
    np.testing.assert_array_equal(y, _im2col_reference(x, lower, upper, coord, offsets, 16))


def test_cluster_occupancy_takes_the_kernels_own_cluster_size():
    # `driver.active.utils.cuOccupancyMaxActiveClusters(function, shared, cluster_dim)`, Triton's call: the
    # cluster size must be the one the kernel was compiled for; without a GPU it says so.
    from tessel.runtime import driver
    x = _rows(64, 64)
    split = gl.NVMMASharedLayout.get_default_for([32, 64], gl.float16, cga_layout=[[1, 0]])
    regs = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], cga_layout=[[1, 0]])
    src = TensorDescriptor.from_tensor(x, [32, 64], split)
    k = tma_round_trip_kernel.warmup(src, src, 2, regs, num_ctas=2, grid=(2, ))
    utils = driver.active.utils
    with pytest.raises(ValueError, match="clusters are 2 CTAs, not 4"):
        utils.cuOccupancyMaxActiveClusters(k.function, k.metadata.shared, 4)
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if gpu:
        assert utils.cuOccupancyMaxActiveClusters(k.function, k.metadata.shared, 2) > 0
    else:
        with pytest.raises(RuntimeError, match="needs a CUDA device"):
            utils.cuOccupancyMaxActiveClusters(k.function, k.metadata.shared, 2)
