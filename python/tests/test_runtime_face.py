"""Triton's runtime face under the shim (issue 29): the modules and names libraries import
(`triton.runtime.*`, `triton.language.core`/`math`/`extra.libdevice`, `triton.knobs`, `triton.testing`'s peak
figures), `KernelInterface` and `Autotuner` subclasses built as libraries build them, JITFunction's Triton
attributes, and libdevice names imported at module level inside kernels. Kernels run in the interpreter on numpy
arrays whose outputs are poisoned (NaN) first."""

import os
import sys
import textwrap

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import runtime, shim, testing
from tessel._triton import knobs, language as language_face, runtime as runtime_face
from subprocesses import run_tessel

TESSEL_DIR = os.path.dirname(tessel.__file__)

SURFACE = textwrap.dedent('''
    import os, sys
    import triton
    import triton.language as tl
    from triton.runtime import KernelInterface, Autotuner, Heuristics, Config, JITFunction, OutOfResources, driver
    from triton.runtime.autotuner import Autotuner, Heuristics, OutOfResources, Config, PTXASError
    from triton.runtime.errors import OutOfResources, PTXASError
    from triton.runtime.cache import FileCacheManager, get_cache_manager, default_cache_dir
    from triton.runtime.jit import JITFunction, KernelInterface, jit
    import triton.runtime.interpreter
    from triton.runtime.interpreter import InterpretedFunction
    from triton.language.core import _aggregate, constexpr, tensor, dtype, view
    import triton.language.math
    from triton.language.standard import _log2, sum as standard_sum
    from triton.language.math import rsqrt
    from triton.language.extra.libdevice import rsqrt, tanh
    from triton.language.extra.cuda.libdevice import rsqrt as cuda_rsqrt
    from triton.language.extra import libdevice
    from triton import knobs
    from triton.testing import get_dram_gbps, get_max_tensorcore_tflops, get_max_simd_tflops
    import triton.knobs

    print("version", triton.__version__)
    print("file", triton.__file__)
    print("libdevice", rsqrt.__module__, rsqrt.__name__, tl.extra.libdevice.tanh.__name__, tl.math.rsqrt.__name__)
    try:
        rsqrt(1.0)
    except RuntimeError as e:
        print("host call", "device function" in str(e))
    print("knobs", knobs.runtime.interpret, knobs.autotuning.print, len(knobs.runtime.launch_enter_hook.calls))
    print("constexpr", tl.core.constexpr is tl.constexpr, dtype is tl.dtype)
    from triton.runtime.jit import ConstexprFunction, constexpr_function
    print("constexpr_function", triton.constexpr_function is constexpr_function,
          isinstance(triton.constexpr_function(len), ConstexprFunction), callable(triton.must_use_result))
    # torch's inductor writes these names into the kernels it generates (`X: triton.language.constexpr = ...`)
    print("named", tl.constexpr.__module__, tl.dtype.__module__, tl.store.__module__, tl.tensor.__module__)
    nofile = [n for n, m in sys.modules.items() if n.split(".")[0] == "triton"
              and not (getattr(m, "__file__", None) or "").startswith(os.path.dirname(tl.__file__))]
    print("files outside tessel", nofile)
    try:
        import triton.language.extra.cann.extension
    except ModuleNotFoundError as e:
        print("missing", e.name, "triton.language.extra.cann" in str(e))
''')


def test_every_listed_name_imports_under_the_shim(tmp_path):
    script = tmp_path / "surface.py"
    script.write_text(SURFACE)
    r = run_tessel(script)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0].startswith("version 3.")
    assert out[1] == f"file {os.path.join(TESSEL_DIR, 'shim.py')}"
    assert out[2:] == [
        "libdevice triton.language.extra.libdevice rsqrt tanh rsqrt",
        "host call True",
        "knobs False False 0",
        "constexpr True True",
        "constexpr_function True False True",
        "named triton.language triton.language triton.language triton.language",
        "files outside tessel []",
        "missing triton.language.extra.cann True",
    ]


def test_a_shim_module_taken_out_of_sys_modules_is_found_again(tmp_path):
    """torch's CUDA start-up asks `importlib.util.find_spec("triton")`; after something removed the shim's modules
    from `sys.modules` (a test's clean-up did), the finder must answer with tessel's module, not raise, or
    torch's first CUDA call fails."""
    script = tmp_path / "refind.py"
    script.write_text(textwrap.dedent('''
        import importlib.util, sys
        import triton, triton.language
        for name in [n for n in sys.modules if n.split(".")[0] == "triton"]:
            del sys.modules[name]
        spec = importlib.util.find_spec("triton")
        import triton.language as tl
        print(spec is not None, triton.__file__.startswith(sys.argv[1]), hasattr(tl, "load"))
        try:
            import triton.not_a_module
        except ModuleNotFoundError as e:
            print("missing", e.name)
    '''))
    r = run_tessel(script, TESSEL_DIR)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["True True True", "missing triton.not_a_module"]


def test_import_tessel_alone_leaves_triton_alone(tmp_path):
    code = "import sys, tessel, tessel.language; print(sorted(n for n in sys.modules if n.split('.')[0] == 'triton'))"
    import subprocess

    # From a folder of its own: `-c` puts the working directory first on sys.path, and python/ holds the source
    # package without its built module when tessel was installed from a wheel (CI).
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ},
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


KERNELS = textwrap.dedent('''
    import numpy as np
    import triton
    import triton.language as tl
    from triton.runtime import Autotuner, Config, Heuristics, KernelInterface
    from triton.language.extra.libdevice import rsqrt


    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


    @triton.jit
    def rsqrt_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, rsqrt(tl.load(x_ptr + offs, mask=mask, other=1.0)), mask=mask)


    class Launcher(KernelInterface):
        """A library's wrapper: chooses the block and the grid itself."""

        def __init__(self, fn):
            self.fn = fn
            self.seen = []

        def run(self, *args, grid, warmup, **kwargs):
            self.seen.append((grid, warmup))
            n = args[2]
            return self.fn.run(*args, grid=(triton.cdiv(n, 64),), warmup=warmup, BLOCK=64, **kwargs)


    class CountingTuner(Autotuner):
        """A library's autotuner: Triton's positional constructor, run() overridden."""

        def __init__(self, fn, configs, key):
            super().__init__(fn, fn.arg_names, configs, key, ["out_ptr"], None, None, None, None, None, None,
                             False, lambda kernel_call, quantiles: self.bench(kernel_call))
            self.runs = 0
            self.benched = 0

        def bench(self, kernel_call):
            kernel_call()
            self.benched += 1
            return [float(self.benched), 0.0, 0.0]  # the first config timed is the fastest

        def run(self, *args, **kwargs):
            self.runs += 1
            return super().run(*args, **kwargs)


    def fresh(n):
        x = np.linspace(0.5, 4.0, n).astype(np.float32)
        return x, np.full(n, np.nan, np.float32)


    n = 300
    x, out = fresh(n)
    launcher = Launcher(scale_kernel)
    launcher[(999,)](x, out, n, 3.0)
    np.testing.assert_allclose(out, 3.0 * x)
    x, out = fresh(n)
    compiled = launcher.warmup(x, out, n, 3.0, grid=(1,))
    print("interface", launcher.seen, np.isnan(out).all(), type(compiled).__name__)

    configs = [Config({"BLOCK": 32}, num_warps=1), Config({"BLOCK": 128}, num_warps=2)]
    tuner = CountingTuner(scale_kernel, configs, ["n"])
    x, out = fresh(n)
    tuner[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, 2.0)
    np.testing.assert_allclose(out, 2.0 * x)
    print("autotuner", tuner.runs, tuner.benched, tuner.best_config.kwargs, sorted(c.kwargs["BLOCK"] for c in
                                                                                       tuner.configs_timings))
    x, out = fresh(n)
    tuner[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, 0.5)
    np.testing.assert_allclose(out, 0.5 * x)
    print("cached", tuner.benched)

    heur = Heuristics(scale_kernel, scale_kernel.arg_names, {"BLOCK": lambda a: triton.next_power_of_2(a["n"])})
    x, out = fresh(n)
    heur[(1,)](x, out, n, 4.0)
    np.testing.assert_allclose(out, 4.0 * x)
    print("heuristics ok")

    p = scale_kernel.params
    print("params", [(q.num, q.name, q.is_constexpr, q.do_not_specialize, q.do_not_specialize_on_alignment)
                     for q in p])
    print("attrs", scale_kernel.arg_names, list(scale_kernel.signature.parameters), repr(scale_kernel),
          scale_kernel.fn.__name__, scale_kernel.src.startswith("def scale_kernel(x_ptr"), scale_kernel._fn_name,
          len(scale_kernel.cache_key))
    x, out = fresh(n)
    c = scale_kernel.run(x, out, n, 5.0, grid=(triton.cdiv(n, 64),), warmup=True, BLOCK=64)
    print("warmup", np.isnan(out).all(), type(c).__name__)
    scale_kernel.run(x, out, n, 5.0, grid=(triton.cdiv(n, 64),), warmup=False, BLOCK=64)
    np.testing.assert_allclose(out, 5.0 * x)

    x, out = fresh(n)
    rsqrt_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    np.testing.assert_allclose(out, 1.0 / np.sqrt(x), rtol=2e-6)
    print("rsqrt ok")
''')


def test_kernel_interface_autotuner_params_run_and_libdevice(tmp_path):
    script = tmp_path / "kernels.py"
    script.write_text(KERNELS)
    r = run_tessel(script)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "interface [((999,), False), ((1,), True)] True CompiledKernel",
        "autotuner 1 2 {'BLOCK': 32} [32, 128]",
        "cached 2",
        "heuristics ok",
        "params [(0, 'x_ptr', False, False, False), (1, 'out_ptr', False, False, False), (2, 'n', False, False, "
        "False), (3, 'factor', False, False, False), (4, 'BLOCK', True, False, False)]",
        "attrs ['x_ptr', 'out_ptr', 'n', 'factor', 'BLOCK'] ['x_ptr', 'out_ptr', 'n', 'factor', 'BLOCK'] "
        "JITFunction(__main__:scale_kernel) scale_kernel True __main__.scale_kernel 64",
        "warmup True CompiledKernel",
        "rsqrt ok",
    ]


# --- the autotuner's hooks, in process ---

@tessel.jit
def add_into(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask) + tl.load(x_ptr + offs, mask=mask), mask=mask)


def _tune_add_into(reset_to_zero, restore_value):
    n = 64
    x = np.ones(n, np.float32)
    acc = np.full(n, 10.0, np.float32)
    configs = [tessel.Config({"BLOCK": 16}), tessel.Config({"BLOCK": 64})]
    tuner = tessel.Autotuner(add_into, add_into.arg_names, configs, ["n"], reset_to_zero, restore_value,
                             do_bench=lambda call, quantiles: [call() or 1.0, 1.0, 1.0])
    tuner[lambda m: (n // m["BLOCK"],)](x, acc, n)
    return acc


def test_autotuner_restores_values_as_triton_does():
    """`restore_value` arguments are restored after each timed run; the launch then runs on them as given."""
    np.testing.assert_array_equal(_tune_add_into(None, ["out_ptr"]), 11.0)


def test_autotuner_resets_to_zero_as_triton_does():
    """`reset_to_zero` arguments are zeroed before each timed run and once after tuning."""
    np.testing.assert_array_equal(_tune_add_into(["out_ptr"], None), 1.0)


def test_autotuner_signature_is_tritons():
    import inspect

    params = list(inspect.signature(tessel.Autotuner.__init__).parameters)
    assert params == ["self", "fn", "arg_names", "configs", "key", "reset_to_zero", "restore_value", "pre_hook",
                      "post_hook", "prune_configs_by", "warmup", "rep", "use_cuda_graph", "do_bench",
                      "cache_results"]
    assert list(inspect.signature(tessel.Heuristics.__init__).parameters) == ["self", "fn", "arg_names", "values"]


# --- knobs ---

def test_knobs_read_the_environment_and_refuse_what_tessel_does_not_do(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    assert knobs.runtime.interpret is False
    with knobs.runtime.scope():
        knobs.runtime.interpret = True
        assert os.environ["TRITON_INTERPRET"] == "1" and knobs.runtime.interpret is True
    assert "TRITON_INTERPRET" not in os.environ and knobs.runtime.interpret is False
    monkeypatch.setenv("TRITON_PRINT_AUTOTUNING", "1")
    assert knobs.autotuning.print is True
    assert knobs.cache.dir == os.path.join(os.environ["TESSEL_CACHE_DIR"], "triton")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/somewhere")
    assert knobs.cache.dir == "/somewhere"
    with pytest.raises(NotImplementedError, match="compilation.always_compile"):
        knobs.compilation.always_compile = True
    knobs.compilation.always_compile = False  # the default is accepted
    knobs.compilation.always_compile = knobs.env
    with pytest.raises(NotImplementedError, match="launch hooks"):
        knobs.runtime.launch_enter_hook.add(print)
    with pytest.raises(NotImplementedError, match="jit_post_compile_hook"):
        knobs.runtime.jit_post_compile_hook = print
    knobs.runtime.jit_post_compile_hook = None
    assert knobs.runtime.jit_post_compile_hook is None
    assert isinstance(knobs.runtime.launch_exit_hook, knobs.HookChain)


# --- triton.runtime.cache ---

class CustomManager(runtime_face.FileCacheManager):
    pass


def test_cache_managers(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    m = runtime_face.get_cache_manager("00ff")
    assert m.cache_dir.startswith(str(tmp_path)) and os.path.isdir(m.cache_dir) and m.lock_path
    assert m.get_file("a.json") is None
    path = m.put('{"x": 1}', "a.json", binary=False)
    assert m.get_file("a.json") == path and open(path).read() == '{"x": 1}'
    b = m.put(b"\x00\x01", "b.bin")
    m.put_group("grp", {"a.json": path, "b.bin": b})
    assert m.get_group("grp") == {"a.json": path, "b.bin": b}
    os.remove(b)
    assert m.get_group("grp") is None
    assert not [p for p in os.listdir(m.cache_dir) if p.startswith("tmp")]
    monkeypatch.setenv("TRITON_CACHE_MANAGER", f"{__name__}:CustomManager")
    assert isinstance(runtime_face.get_cache_manager("00ff"), CustomManager)


# --- triton.testing's peak figures ---

def test_peak_figures_come_from_the_device_properties(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # the interpreter: the nominal sm_90 properties
    monkeypatch.setattr(runtime, "gpu_target", lambda: None)
    p = runtime.NOMINAL_PROPERTIES[90]
    assert testing.get_dram_gbps() == pytest.approx(p["mem_clock_rate"] * p["mem_bus_width"] * 2 / 8e6)
    sms = p["multiprocessor_count"]
    assert testing.get_max_tensorcore_tflops(tessel.language.float16, 1_000_000) == pytest.approx(sms * 4 * 512e-3)
    assert testing.get_max_tensorcore_tflops("float8e4nv", 1_000_000) == pytest.approx(sms * 4 * 1024e-3)
    assert testing.get_max_simd_tflops(tessel.language.float32, 1_000_000) == pytest.approx(sms * 4 * 32e-3)
    with pytest.raises(RuntimeError, match="not supported"):
        testing.get_max_simd_tflops(tessel.language.int8, 1_000_000)


# --- the host stand-ins agree with the kernel compiler ---

def test_device_function_modules_list_what_the_compiler_registers():
    """The host's device-function modules are made from the compiler's builtin registry (no second list to
    drift), and hold the names real code imports from them."""
    from tessel import _tessel

    mods = shim.modules()
    for name, prelude in [("triton.language.math", False), ("triton.language.extra.libdevice", False),
                          ("triton.language.extra.cuda", False), ("triton.language.standard", True)]:
        module = "triton.language" if prelude else name
        registered = set(_tessel.kernel_module_names(module, prelude=prelude))
        assert registered, name
        host = {k for k, v in vars(mods[name]).items() if callable(v) and getattr(v, "__module__", None) == name}
        assert registered <= host, (name, sorted(registered - host))
    # What inductor, Liger and the tutorials import.
    assert "_log2" in language_face.STANDARD_NAMES and "softmax" in language_face.STANDARD_NAMES
    assert {"rsqrt", "tanh", "fast_expf", "div_rn", "float2int_rn", "popc"} <= set(vars(
        mods["triton.language.extra.libdevice"]))
    assert {"smid", "globaltimer", "gdc_wait"} <= set(language_face.CUDA_NAMES)
    assert {"exp", "rsqrt", "fma", "umulhi"} <= set(language_face.MATH_NAMES)
    assert not hasattr(mods["triton.language.extra.libdevice"], "not_a_libdevice_function")


def test_shim_modules_carry_files_inside_tessel():
    for name, m in shim.modules().items():
        if name.startswith("triton"):
            assert m.__file__.startswith(TESSEL_DIR), name


def test_autotuner_hooks_and_pruning_are_called_as_in_triton():
    """The calls Triton 3.6's Autotuner makes (recorded from it under TRITON_INTERPRET=1 with the same kernel and
    hooks): pruning with the positional arguments and `grid`/`warmup`; per config a timing of config.pre_hook,
    pre_hook, launch, post_hook; pre_hook(reset_only=True) after tuning; config.pre_hook only, at launches."""
    log = []

    def pre(kwargs, reset_only=False):
        log.append(("pre", reset_only, sorted(k for k in kwargs if k not in ("x_ptr", "out_ptr"))))

    def post(kwargs, exception):
        log.append(("post", exception))

    def cfg_hook(name):
        return lambda nargs: log.append(("config_pre", name))

    def prune(configs, nargs, **kwargs):
        log.append(("prune", sorted(nargs), sorted(kwargs)))
        return configs

    def bench(fn, quantiles):
        log.append(("bench", quantiles))
        fn()
        return [1.0, 1.0, 1.0]

    configs = [tessel.Config({"BLOCK": 16}, pre_hook=cfg_hook("a")),
               tessel.Config({"BLOCK": 64}, pre_hook=cfg_hook("b"))]
    t = tessel.Autotuner(add_into, add_into.arg_names, configs, ["n"], None, None, pre, post,
                         {"early_config_prune": prune}, None, None, False, bench)
    x, out = np.ones(64, np.float32), np.zeros(64, np.float32)
    t[lambda m: (64 // m["BLOCK"],)](x, out, 64)
    log.append(("out", float(out[0])))
    t[lambda m: (64 // m["BLOCK"],)](x, out, 64)
    log.append(("out", float(out[0]), t.best_config.kwargs))
    meta = ["BLOCK", "grid", "n", "num_ctas", "num_stages", "num_warps", "warmup"]
    assert log == [
        ("prune", ["n", "out_ptr", "x_ptr"], ["grid", "warmup"]),
        ("bench", (0.5, 0.2, 0.8)), ("config_pre", "a"), ("pre", False, meta), ("post", None),
        ("bench", (0.5, 0.2, 0.8)), ("config_pre", "b"), ("pre", False, meta), ("post", None),
        ("pre", True, meta),
        ("config_pre", "a"), ("out", 3.0),
        ("config_pre", "a"), ("out", 4.0, {"BLOCK": 16}),
    ]
