"""`@gluon.aggregate` classes on the host: passed to kernels as constexprs (a module's class by name, a class made
by a host factory function by the call that made it), with fields annotated by the kernel language's types
(run in the interpreter)."""

from typing import Union

import numpy as np
import pytest

from tessel import gluon
from tessel.gluon import language as gl
from tessel.gluon.language.nvidia.blackwell import tensor_memory_descriptor
from tessel.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma, warpgroup_mma_accumulator
from tessel.gluon.language.nvidia.hopper import warpgroup_mma_wait
from tessel.gluon.nvidia.hopper import TensorDescriptor

LANES = gl.BlockedLayout([1], [32], [4], [0])


@gluon.aggregate
class Affine:
    scale: gl.tensor
    shift: gl.constexpr

    @gluon.jit
    def create(scale, shift: gl.constexpr):
        return Affine(gl.to_tensor(scale), shift)

    @gluon.jit
    def apply(self, x):
        return x * self.scale + self.shift


def Stepper(STEP, START=0):
    """A template: each call makes an aggregate class whose methods see this call's arguments."""
    STEP = gl.constexpr(STEP)

    @gluon.aggregate
    class StepperImpl:
        count: gl.tensor

        @gluon.jit
        def create():
            return StepperImpl(gl.to_tensor(START))

        @gluon.jit
        def advance(self):
            return StepperImpl(self.count + STEP)

    return StepperImpl


@gluon.aggregate
class Accumulator:
    acc: Union[warpgroup_mma_accumulator, gl.tensor]

    @gluon.jit
    def zeros(M: gl.constexpr, N: gl.constexpr, layout: gl.constexpr):
        return Accumulator(gl.zeros((M, N), dtype=gl.float32, layout=layout))

    @gluon.jit
    def add_product(self, a, b):
        acc = warpgroup_mma(a, b, self.acc, is_async=True)
        return Accumulator(warpgroup_mma_wait(num_outstanding=0, deps=(acc,)))


@gluon.jit
def affine_kernel(x_ptr, out_ptr, scale, Op: gl.constexpr, BLOCK: gl.constexpr, layout: gl.constexpr):
    offs = gl.arange(0, BLOCK, layout=layout)
    op = Op.create(scale, 2.0)
    gl.store(out_ptr + offs, op.apply(gl.load(x_ptr + offs)))


@gluon.jit
def stepper_kernel(out_ptr, n, S: gl.constexpr):
    s = S.create()
    for _ in range(n):
        s = s.advance()
    gl.store(out_ptr, s.count)


@gluon.jit
def gemm_kernel(a_desc, b_desc, c_ptr, K, Acc: gl.constexpr, num_warps: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                     instr_shape=[16, BN, 16])
    a_smem = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_type.shape, a_desc.layout)
    b_smem = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_type.shape, b_desc.layout)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    acc = Acc.zeros(BM, BN, layout)
    phase = 0
    for k in range(0, K, BK):
        mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_load(a_desc, [0, k], bar, a_smem)
        tma.async_load(b_desc, [k, 0], bar, b_smem)
        mbarrier.wait(bar, phase)
        phase ^= 1
        acc = acc.add_product(a_smem, b_smem)
    mbarrier.invalidate(bar)
    rows = gl.arange(0, BM, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, BN, layout=gl.SliceLayout(0, layout))
    gl.store(c_ptr + rows[:, None] * BN + cols[None, :], acc.acc)


def test_a_module_aggregate_is_passed_by_name():
    x = np.arange(128, dtype=np.float32)
    out = np.zeros_like(x)
    affine_kernel[(1,)](x, out, 3.0, Affine, 128, LANES)
    np.testing.assert_array_equal(out, 3 * x + 2)
    assert Affine._tessel_aggregate_fields == ("scale", "shift")


def test_factory_made_aggregates_are_the_call_that_made_them():
    out = np.zeros(1, dtype=np.int32)
    stepper_kernel[(1,)](out, 5, Stepper(3))
    assert out[0] == 15
    stepper_kernel[(1,)](out, 5, Stepper(2, START=100))
    assert out[0] == 110
    # A new class from an equal call is the same constexpr: the compiled specialization is shared.
    compiled = len(stepper_kernel.cache)
    stepper_kernel[(1,)](out, 4, Stepper(3))
    assert out[0] == 12 and len(stepper_kernel.cache) == compiled
    assert Stepper(3)._tessel_factory.args_source == "3, 0"  # every parameter, by position


def test_a_factory_argument_without_source_is_refused_naming_the_parameter():
    out = np.zeros(1, dtype=np.int32)
    with pytest.raises(TypeError, match=r"argument `S`.*factory `Stepper`.*object"):
        stepper_kernel[(1,)](out, 5, Stepper(object()))


def test_aggregate_decorates_classes_only():
    with pytest.raises(TypeError, match="decorates a class"):
        gluon.aggregate(lambda: None)


def test_fields_take_the_kernel_languages_types_as_annotations():
    @gluon.aggregate
    class Partition:
        a_desc: tma.tensor_descriptor
        bufs: gl.shared_memory_descriptor
        acc: tensor_memory_descriptor
        acc_or_tensor: Union[warpgroup_mma_accumulator, gl.tensor]
        n: gl.constexpr

    assert Partition._tessel_aggregate_fields == ("a_desc", "bufs", "acc", "acc_or_tensor", "n")
    with pytest.raises(AttributeError, match="part of the kernel language"):
        gl.shared_memory_descriptor()


def test_an_aggregate_holding_an_async_wgmma_accumulator():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 128)).astype(np.float16)
    b = rng.standard_normal((128, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, dtype=np.float32)
    a_desc = TensorDescriptor.from_tensor(a, [64, 64], gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16))
    b_desc = TensorDescriptor.from_tensor(b, [64, 64], gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16))
    gemm_kernel[(1,)](a_desc, b_desc, c, 128, Accumulator, num_warps=4)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
