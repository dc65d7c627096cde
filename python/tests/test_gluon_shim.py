"""Gluon's host surface under `python -m tessel`: the `triton.experimental.gluon` modules a Gluon script imports
(host descriptors, the NVIDIA namespaces of the kernel language, `gluon.aggregate`), used as the Gluon tutorials
use them, with a TMA kernel and a factory-made aggregate run in the interpreter."""

import textwrap

from subprocesses import python_m_tessel, run_tessel

SCRIPT = textwrap.dedent('''
    from typing import Union

    import numpy as np
    import triton
    import triton.experimental.gluon.language.nvidia.hopper.tma as tma_module
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor, TensorDescriptorIm2Col
    from triton.experimental.gluon.nvidia.blackwell import TensorDescriptor as BlackwellDescriptor
    from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
    from triton.experimental.gluon.language.nvidia.hopper import (
        fence_async_shared, mbarrier, tma, warpgroup_mma, warpgroup_mma_accumulator, warpgroup_mma_wait,
    )
    from triton.experimental.gluon.language.nvidia.blackwell import (
        TensorMemoryLayout, allocate_tensor_memory, get_tmem_reg_layout, tcgen05_commit, tcgen05_mma,
        tensor_memory_descriptor,
    )
    from triton.experimental.gluon.language.nvidia.blackwell.tma import tensor_descriptor_type  # noqa: F401


    @gluon.aggregate
    class Mma:
        acc: Union[warpgroup_mma_accumulator, gl.tensor]
        tmem: tensor_memory_descriptor
        bufs: gl.shared_memory_descriptor


    def Shift(AMOUNT):
        AMOUNT = gl.constexpr(AMOUNT)

        @gluon.aggregate
        class ShiftImpl:
            @gluon.must_use_result
            @gluon.jit
            def apply(x):
                return x + AMOUNT

        ShiftImpl.__name__ = f"Shift({AMOUNT.value})"
        return ShiftImpl


    @gluon.jit
    def shifted_copy_kernel(src, dst, Op: gl.constexpr, layout: gl.constexpr):
        smem = gl.allocate_shared_memory(src.dtype, src.block_type.shape, src.layout)
        bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
        mbarrier.init(bar, count=1)
        row = gl.program_id(0) * src.block_type.shape[0]
        mbarrier.expect(bar, src.block_type.nbytes)
        tma.async_copy_global_to_shared(src, [row, 0], bar, smem)
        mbarrier.wait(bar, phase=0)
        mbarrier.invalidate(bar)
        smem.store(Op.apply(smem.load(layout)))
        fence_async_shared()
        tma.async_copy_shared_to_global(dst, [row, 0], smem)
        tma.store_wait(pendings=0)


    x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    y = np.full_like(x, np.nan)
    layout = gl.NVMMASharedLayout.get_default_for([16, 32], gl.float32)
    src = TensorDescriptor.from_tensor(x, [16, 32], layout)
    dst = TensorDescriptor.from_tensor(y, [16, 32], layout)
    shifted_copy_kernel[(triton.cdiv(64, 16),)](src, dst, Shift(5), gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]))
    print("tma copy", bool((y == x + 5).all()))
    print("layout", layout, src.mode)
    print("blackwell descriptor", BlackwellDescriptor is TensorDescriptor)
    print("tmem layout", TensorMemoryLayout([128, 64], col_stride=1))
    print("tma module", tma_module is tma, "async_load" in tma.__all__)
    try:
        tma.async_load(src, [0, 0], None, None)
    except AttributeError as e:
        print("host call", "kernel language" in str(e))
    try:
        from triton.experimental.gluon.language.nvidia.hopper import no_such_builtin  # noqa: F401
    except ImportError:
        print("unknown name ImportError")
''')


def test_a_gluon_script_runs_under_python_m_tessel(tmp_path):
    script = tmp_path / "gluon_surface.py"
    script.write_text(SCRIPT)
    r = run_tessel(script, env={"TRITON_INTERPRET": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "tma copy True",
        "layout NVMMASharedLayout(128, 32) tiled",
        "blackwell descriptor True",
        "tmem layout TensorMemoryLayout((128,64), 1)",
        "tma module True True",
        "host call True",
        "unknown name ImportError",
    ]


TUTORIAL_TESTS = textwrap.dedent('''
    import numpy as np
    import pytest
    import triton
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl


    @gluon.jit
    def negate_kernel(x_ptr, out_ptr, BLOCK: gl.constexpr):
        offs = gl.arange(0, BLOCK, layout=gl.BlockedLayout([1], [32], [4], [0]))
        gl.store(out_ptr + offs, -gl.load(x_ptr + offs))


    @pytest.mark.parametrize("BLOCK", [128, 256])
    def test_negate(BLOCK):
        x = np.arange(BLOCK, dtype=np.float32)
        out = np.zeros_like(x)
        negate_kernel[(1,)](x, out, BLOCK)
        assert triton.__version__.endswith("+tessel")
        np.testing.assert_array_equal(out, EXPECTED_SIGN * x)
''')


def test_python_m_tessel_runs_pytest_on_a_tutorial_file(tmp_path):
    """`python -m tessel -m pytest FILE`: a tutorial's own tests, with `triton` resolving to tessel."""
    for name, sign in (("test_good.py", -1), ("test_bad.py", 1)):
        (tmp_path / name).write_text(f"EXPECTED_SIGN = {sign}\n" + TUTORIAL_TESTS)

    def run(f):
        return python_m_tessel("-m", "pytest", "-q", "-p", "no:cacheprovider", f, cwd=tmp_path)

    good = run("test_good.py")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "2 passed" in good.stdout
    bad = run("test_bad.py")
    assert bad.returncode == 1 and "2 failed" in bad.stdout
