"""Kernels that use what their module imports: `@triton.jit` helpers and constants of other modules of a package
(relative imports, aliases), names a module-level `if`/`try` chose as Liger-Kernel does, and torch inductor's
`triton_helpers`. Each script runs under `python -m tessel` (so `triton` is tessel) in the interpreter, on
outputs poisoned with NaN first, against numpy."""

import textwrap

import pytest

from subprocesses import run_tessel

PACKAGE = {
    "xm_pkg/__init__.py": "",
    "xm_pkg/utils.py": '''
        import triton
        import triton.language as tl

        SCALE: tl.constexpr = tl.constexpr(3.0)
        OFFSET = 0.5


        @triton.jit
        def helper(x):
            return x * SCALE + OFFSET


        @triton.jit
        def twice(x):
            return helper(x) * 2
    ''',
    "xm_pkg/ops/__init__.py": "",
    "xm_pkg/ops/kernels.py": '''
        import triton
        import triton.language as tl
        from ..utils import helper as h
        from .. import utils
        import xm_pkg.utils as pu


        @triton.jit
        def combine(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            y = h(x) + utils.SCALE + pu.twice(x)
            tl.store(y_ptr + offs, y, mask=mask)
    ''',
}

MAIN = '''
    import numpy as np
    from xm_pkg.ops.kernels import combine

    x = np.linspace(-2, 2, 1000).astype(np.float32)
    y = np.full_like(x, np.nan)
    combine[(4,)](x, y, x.size, BLOCK=256)
    expected = (x * 3 + 0.5) + 3 + (x * 3 + 0.5) * 2
    print("max difference", float(np.max(np.abs(y - expected))))
'''


def write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def run(tmp_path, files, main):
    write(tmp_path, files)
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(main))
    return run_tessel(script, env={"TRITON_INTERPRET": "1", "PYTHONPATH": str(tmp_path)})


def test_helpers_of_other_modules_of_a_package(tmp_path):
    r = run(tmp_path, PACKAGE, MAIN)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["max difference 0.0"]


def test_an_error_in_a_helper_module_points_into_it(tmp_path):
    files = dict(PACKAGE)
    files["xm_pkg/utils.py"] = PACKAGE["xm_pkg/utils.py"].replace("x * SCALE + OFFSET", "x * SCALE + OFSET")
    r = run(tmp_path, files, MAIN)
    assert r.returncode != 0
    assert "name `OFSET` is not defined in module `xm_pkg.utils`" in r.stderr, r.stderr
    assert "xm_pkg/utils.py:11" in r.stderr, r.stderr


LIGER = {
    "xm_liger/__init__.py": "",
    "xm_liger/utils.py": '''
        import operator

        import triton
        import triton.language as tl


        def compare_version(package, op, version):
            return op(tuple(int(p) for p in triton.__version__.split("+")[0].split(".")[:2]), (3, 0))


        def is_npu_available():
            return False


        if compare_version("triton", operator.ge, "3.0.0") and not is_npu_available():
            try:
                from triton.language.extra.libdevice import rsqrt
            except ModuleNotFoundError:
                from triton.language.extra.cuda.libdevice import rsqrt
        else:
            from triton.language.math import rsqrt


        @triton.jit
        def norm_scale(x, eps):
            return rsqrt(x * x + eps)
    ''',
    "xm_liger/rms.py": '''
        import triton
        import triton.language as tl
        from .utils import norm_scale as h, rsqrt


        @triton.jit
        def scale_kernel(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            tl.store(y_ptr + offs, x * h(x, eps) + rsqrt(x * 0.0 + 4.0), mask=mask)
    ''',
}

LIGER_MAIN = '''
    import numpy as np
    try:
        from xm_liger.rms import scale_kernel
    except ImportError as e:
        print("SKIP", e)
        raise SystemExit(0)

    x = np.linspace(-3, 3, 500).astype(np.float32)
    y = np.full_like(x, np.nan)
    scale_kernel[(2,)](x, y, x.size, 1e-6, BLOCK=256)
    expected = x / np.sqrt(x * x + np.float32(1e-6)) + 0.5
    print("close", bool(np.allclose(y, expected, rtol=1e-5, atol=1e-6)))
'''


def test_names_a_module_level_if_and_try_chose_as_liger_does(tmp_path):
    r = run(tmp_path, LIGER, LIGER_MAIN)
    assert r.returncode == 0, r.stderr
    if r.stdout.startswith("SKIP"):
        pytest.skip(f"the shim's triton.language.extra.libdevice lacks rsqrt on the host: {r.stdout.strip()}")
    assert r.stdout.splitlines() == ["close True"]


INDUCTOR = {
    "xm_inductor_kernel.py": '''
        import triton
        import triton.language as tl
        from torch._inductor.runtime import triton_helpers
        from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math


        @triton.jit
        def fused(a_ptr, b_ptr, out_ptr, rmax_ptr, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
            rows = tl.arange(0, XBLOCK)[:, None]
            cols = tl.arange(0, RBLOCK)[None, :]
            a = tl.load(a_ptr + rows * RBLOCK + cols)
            b = tl.load(b_ptr + rows * RBLOCK + cols)
            m = triton_helpers.maximum(a, b)
            tl.store(out_ptr + rows * RBLOCK + cols, libdevice.sqrt(m) + tl_math.exp(a * 0.0))
            r = triton_helpers.max2(m, 1)
            tl.store(rmax_ptr + tl.arange(0, XBLOCK), r)
    ''',
}

INDUCTOR_MAIN = '''
    try:
        import torch
        from torch._inductor.runtime import triton_helpers  # noqa: F401
    except Exception as e:  # noqa: BLE001 - reported: what the shim lacks for inductor's helpers
        print("SKIP", type(e).__name__, e)
        raise SystemExit(0)
    from xm_inductor_kernel import fused

    a = torch.rand(8, 16)
    b = torch.rand(8, 16)
    out = torch.full((8, 16), float("nan"))
    rmax = torch.full((8,), float("nan"))
    fused[(1,)](a, b, out, rmax, XBLOCK=8, RBLOCK=16)
    m = torch.maximum(a, b)
    print("out", bool(torch.allclose(out, m.sqrt() + 1)))
    print("rmax", bool(torch.equal(rmax, m.max(dim=1).values)))
'''


def test_inductor_triton_helpers(tmp_path):
    pytest.importorskip("torch")
    r = run(tmp_path, INDUCTOR, INDUCTOR_MAIN)
    assert r.returncode == 0, r.stderr
    if r.stdout.startswith("SKIP"):
        pytest.skip(f"torch's triton_helpers does not import under the shim: {r.stdout.strip()}")
    assert r.stdout.splitlines() == ["out True", "rmax True"]


CHOSEN = {
    "xm_a.py": '''
        import triton


        @triton.jit
        def f(x):
            return x + 1
    ''',
    "xm_b.py": '''
        import triton


        @triton.jit
        def f(x):
            return x * 10
    ''',
    "xm_chooser.py": '''
        import os

        import triton
        import triton.language as tl
        import xm_a

        # The compiler cannot decide this; reading the source alone it would take the first branch.
        if os.environ.get("XM_CHOOSE_A") == "1":
            import xm_a as impl
        else:
            import xm_b as impl


        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, impl.f(tl.load(x_ptr + offs)) + xm_a.f(0.0))
    ''',
}

CHOSEN_MAIN = '''
    import numpy as np
    from xm_chooser import k

    x = np.arange(8, dtype=np.float32)
    k[(1,)](x, BLOCK=8)
    print(x.tolist())
'''


def test_the_branch_python_took_is_the_one_compiled(tmp_path):
    r = run(tmp_path, CHOSEN, CHOSEN_MAIN)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str([i * 10.0 + 1 for i in range(8)])]


def test_a_module_set_that_cannot_be_read_is_a_warning(monkeypatch):
    # The fallback (imports read from the files on disk) can compile another branch of a module-level `if` than
    # the one Python ran, so it is said, naming why.
    import types
    import warnings

    from tessel import _modules

    def broken(*args):
        raise RuntimeError("no source")

    monkeypatch.setattr(_modules, "module_set", broken)
    fake = types.SimpleNamespace(fn=None, filename="k.py", source="", __name__="k")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _modules.for_kernel(fake) is None
    assert any("could not be read from the running interpreter (RuntimeError: no source)" in str(w.message)
               for w in caught)


WALK = {
    "xw_world.py": '''
        # A library, as peft or transformers are to Liger: it defines no kernel code, and a decorator named like
        # torch's `@torch.jit.script` is not kernel code either.
        import types

        jit = types.SimpleNamespace(script=lambda f: f)


        @jit.script
        def not_a_kernel(x):
            return x
    ''',
    "xw_host.py": '''
        # Liger's `liger_kernel.utils`: host helpers, and a library imported for its own use.
        import xw_world


        def is_npu_available():
            return xw_world is None
    ''',
    "xw_helpers/__init__.py": '''
        from .impl import helper
    ''',
    "xw_helpers/impl.py": '''
        import triton


        @triton.jit
        def helper(x):
            return x * 2
    ''',
    "xw_kernels.py": '''
        import triton
        import triton.language as tl
        import xw_helpers as hp
        from xw_host import is_npu_available

        BIAS = 1.0 if not is_npu_available() else 2.0


        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, hp.helper(tl.load(x_ptr + offs)) + BIAS)
    ''',
}


def test_the_module_walk_stops_at_modules_without_kernel_code(tmp_path, monkeypatch):
    """Only modules kernel code can reach are read: the kernel's module, the modules defining kernel code it binds
    and a module alias re-exporting one; a host module's own imports (Liger's `peft`) are never walked."""
    import sys

    from tessel import _modules
    from tessel._triton.install import CHILD_PATH

    write(tmp_path, WALK)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    # Importing the walked modules may install the shim, finder included; the clean-up below takes its modules
    # out again, so the finder goes too (it would put them back into later tests' processes).
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    if "triton" not in sys.modules:
        monkeypatch.syspath_prepend(CHILD_PATH)  # the modules `import triton`: tessel's, when no Triton is loaded
    walked = []
    real = _modules.bindings
    monkeypatch.setattr(_modules, "bindings", lambda m: walked.append(m.__name__) or real(m))
    try:
        import xw_kernels

        found = _modules.module_set(xw_kernels.k, xw_kernels.__file__, open(xw_kernels.__file__).read())
    finally:
        for name in [n for n in sys.modules if n not in before and n.startswith(("xw_", "triton"))]:
            del sys.modules[name]
    assert [m[0] for m in found] == ["xw_kernels", "xw_helpers", "xw_helpers.impl"]
    assert "xw_world" not in walked and "xw_host" not in walked, walked
    assert not _modules._KERNEL_CODE.search(WALK["xw_world.py"])
    assert _modules._KERNEL_CODE.search("@triton.jit\ndef f(): pass")
    assert _modules._KERNEL_CODE.search("  @ gluon . jit(do_not_specialize=[0])\n")
    assert _modules._KERNEL_CODE.search("@tl.constexpr_function  # helper\n")
