"""`python -m tessel SCRIPT.py`: an unmodified Triton-style script (numpy arrays) runs on tessel."""

import textwrap

import pytest

from subprocesses import run_tessel

SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor


    @triton.jit
    def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(axis=0)
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(output_ptr + offsets, x + y, mask=mask)


    @triton.jit
    def double_kernel(in_desc, out_desc, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        out_desc.store([pid * BLOCK, 0], in_desc.load([pid * BLOCK, 0]) * 2)


    def add(x, y):
        output = np.empty_like(x)
        n_elements = output.size
        grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
        add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
        return output


    if __name__ == "__main__":
        print("argv", sys.argv[1:])
        print("backend", triton.runtime.driver.active.get_current_target().backend)
        x = np.random.rand(5000).astype(np.float32)
        y = np.random.rand(5000).astype(np.float32)
        print("max difference", np.abs(add(x, y) - (x + y)).max())
        a = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
        b = np.zeros_like(a)
        double_kernel[(2,)](TensorDescriptor.from_tensor(a, [16, 16]), TensorDescriptor.from_tensor(b, [16, 16]),
                            BLOCK=16)
        print("descriptors", bool((b == 2 * a).all()))
        print("bench", triton.testing.do_bench(lambda: add(x, y), warmup=1, rep=5) > 0)
        print("names", triton.next_power_of_2(1000), tl.float16, triton.__version__)
''')


# From the script's folder: run from python/, `-m` would import the sources there, which lack the built module.
def test_a_triton_script_runs_unmodified(tmp_path):
    script = tmp_path / "vector_add.py"
    script.write_text(SCRIPT)
    r = run_tessel(script, "--size", "5", env={"TRITON_INTERPRET": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "argv ['--size', '5']",
        "backend cpu",
        "max difference 0.0",
        "descriptors True",
        "bench True",
        "names 1024 triton.language.float16 3.5.0+tessel",
    ]


def test_missing_triton_modules_say_so(tmp_path):
    script = tmp_path / "compiler.py"
    # Ascend's extension module (Liger imports it on NPUs): tessel has no such module
    script.write_text("from triton.language.extra.cann.extension import insert_slice\n")
    r = run_tessel(script)
    assert r.returncode != 0
    assert "No module named 'triton.language.extra.cann'" in r.stderr
    assert "does not provide the module `triton.language.extra.cann`" in r.stderr


LIBDEVICE_SCRIPT = """
import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice


@triton.jit
def asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, libdevice.asin(x) + cuda_libdevice.acos(x), mask=offs < n)


x = np.linspace(-1, 1, 100).astype(np.float32)
y = np.full_like(x, np.nan)
asin_kernel[(1,)](x, y, 100, BLOCK=128, extern_libs={"libdevice": "/a/path/tessel/does/not/read.bc"})
print("max difference", float(np.max(np.abs(y - (np.arcsin(x) + np.arccos(x))))) < 1e-6)
"""


def test_libdevice_imports_as_in_the_extern_functions_tutorial(tmp_path):
    # Tutorial 07 imports `triton.language.extra.libdevice` in host code; its functions run in kernels.
    script = tmp_path / "extern.py"
    script.write_text(LIBDEVICE_SCRIPT)
    r = run_tessel(script, env={"TRITON_INTERPRET": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["max difference True"]


def test_host_code_cannot_call_kernel_builtins(tmp_path):
    script = tmp_path / "host.py"
    script.write_text("import triton.language as tl\ntl.program_id(0)\n")
    r = run_tessel(script)
    assert r.returncode != 0
    assert "part of the kernel language" in r.stderr


def test_host_code_can_ask_whether_a_kernel_builtin_exists():
    # Tutorial 09 enables its in-kernel descriptor kernel with `hasattr(tl, "make_tensor_descriptor")`.
    import tessel.language as tl

    assert hasattr(tl, "make_tensor_descriptor") and hasattr(tl, "load")
    assert not hasattr(tl, "no_such_builtin")
    with pytest.raises(AttributeError, match="part of the kernel language"):
        tl.make_tensor_descriptor(None, [1], [1], [1])
