"""The parts of Triton's Python surface the public tutorials use outside kernels (issue 12): module specs and
torch's probing of `triton`, `driver.active` (targets, device properties), `triton.testing` (`do_bench`
quantiles, `Benchmark` / `perf_report` tables), compiled kernels from `warmup` (launch, resources), the
autotuner's pruning and pre-hooks, `set_allocator`. Real torch and CUDA are not needed: a stand-in torch answers
where torch is asked."""

import sys
import textwrap
import types

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import _timing, runtime, shim, testing
from tessel.tools import TensorDescriptor
from subprocesses import run_tessel

jit_module = sys.modules["tessel.jit"]
compiled_module = sys.modules["tessel.compiled"]


# --- modules and torch's probing ---

def test_every_shim_module_has_a_spec():
    for name, m in shim.modules().items():
        if isinstance(m, types.ModuleType):
            assert m.__spec__ is not None, name
            if m.__name__.startswith("triton"):
                assert m.__spec__.name == name


PROBE = textwrap.dedent('''
    import importlib.util
    import triton

    # torch.cuda's _register_triton_kernels, on CUDA initialization:
    print("find_spec", importlib.util.find_spec("triton") is not None)
    # torch.utils._triton.has_triton_package / get_triton_version:
    print("version", tuple(int(v) for v in triton.__version__.split(".")[:2]))
    # CudaInterface.raise_if_triton_unavailable (has_triton(device) catches the RuntimeError it raises):
    import triton.backends
    print("nvidia backend", "nvidia" in triton.backends.backends)
    # older torch: has_triton_package imports triton_key and treats ImportError as no Triton
    try:
        from triton.compiler.compiler import triton_key
        print("triton_key found")
    except ImportError:
        print("no triton_key")
    # what scripts see
    from triton.runtime import driver
    from triton.runtime.jit import JITFunction
    from triton.runtime.autotuner import Autotuner, Config
    import triton.runtime.driver
    from triton.backends.compiler import GPUTarget
    print("jit", JITFunction.__module__)
    print("driver", driver is triton.runtime.driver)
    print("target", isinstance(driver.active.get_current_target(), GPUTarget))
''')


def test_torch_probing_sees_no_usable_triton_and_scripts_see_tessel(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    r = run_tessel(script)
    assert r.returncode == 0, r.stderr
    # torch sees Triton's `nvidia` backend where tessel finds a GPU (torch.compile then drives tessel through
    # `triton.compiler`, see `_compiler_face`), and `triton_key` is found.
    from tessel import _tessel

    gpu = _tessel.gpu_target()[0] is not None
    assert r.stdout.splitlines() == [
        "find_spec True", "version (3, 5)", f"nvidia backend {gpu}", "triton_key found", "jit tessel.jit",
        "driver True", "target True",
    ]


# --- driver.active ---

class FakeProps:
    major, minor = 9, 0
    multi_processor_count = 132
    shared_memory_per_block_optin = 232448
    regs_per_multiprocessor = 65536
    warp_size = 32
    clock_rate = 1980000
    memory_clock_rate = 2619000
    memory_bus_width = 5120


@pytest.fixture
def fake_torch_cuda(monkeypatch):
    fake = types.ModuleType("torch")
    fake.Tensor = type("Tensor", (), {})
    asked = []

    def props(i):
        asked.append(i)
        return FakeProps()

    fake.cuda = types.SimpleNamespace(is_available=lambda: True, current_device=lambda: 0,
                                      get_device_properties=props)
    monkeypatch.setitem(sys.modules, "torch", fake)
    return asked


KEYS = ["max_num_regs", "max_shared_mem", "mem_bus_width", "mem_clock_rate", "multiprocessor_count",
        "sm_clock_rate", "warpSize"]


def test_device_properties_from_torch(fake_torch_cuda):
    p = runtime.driver.active.utils.get_device_properties(0)
    assert sorted(p) == KEYS
    assert p["multiprocessor_count"] == 132 and p["max_shared_mem"] == 232448 and p["max_num_regs"] == 65536
    assert p["warpSize"] == 32
    runtime.driver.active.utils.get_device_properties(None)
    assert fake_torch_cuda == [0, 0]  # None asks for the current device


def test_device_properties_without_cuda(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` fails
    p = runtime.driver.active.utils.get_device_properties(None)
    assert sorted(p) == KEYS
    assert p in runtime.NOMINAL_PROPERTIES.values()


def test_current_target(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    t = runtime.driver.active.get_current_target()
    assert (t.backend, t.warp_size, t.is_cuda_backend(), t.is_hip_backend()) == ("cpu", 32, False, False)
    monkeypatch.delenv("TRITON_INTERPRET")
    monkeypatch.setattr(runtime._tessel, "gpu_target", lambda: ("sm_90a", None))
    t = runtime.driver.active.get_current_target()
    assert (t.backend, t.arch, t.is_cuda_backend()) == ("cuda", 90, True)
    assert t.arch >= 90  # scripts compare the capability as an int


# --- triton.testing ---

def test_do_bench_quantiles_are_a_list_triton_can_unpack():
    ms, lo, hi = testing.do_bench(lambda: sum(range(100)), warmup=1, rep=5, quantiles=[0.5, 0.2, 0.8])
    assert lo <= ms <= hi
    assert isinstance(testing.do_bench(lambda: None, warmup=1, rep=2, quantiles=[0.5]), float)
    # linear interpolation between ranks, as torch.quantile
    assert _timing._summarize([1.0, 2.0, 3.0, 4.0], [0.5, 0.2, 0.8, 0.0, 1.0], "mean") == pytest.approx(
        [2.5, 1.6, 3.4, 1.0, 4.0])


def test_table_is_laid_out_as_pandas_does():
    rows = [[4096.0, 9.6, 9.6, None], [8192.0, 19.2, 19.25, 1.0], [16384.0, 12345.678901234, 0.1, 3.0]]
    rows += [[1, 2, 3, 4]] * 8
    expected = [
        "       size        Triton  Torch    x",
        "0    4096.0      9.600000   9.60  NaN",
        "1    8192.0     19.200000  19.25  1.0",
        "2   16384.0  12345.678901   0.10  3.0",
    ] + [f"{i:<2}      1.0      2.000000   3.00  4.0" for i in range(3, 11)]
    assert testing.format_table(["size", "Triton", "Torch", "x"], rows).splitlines() == expected


def test_perf_report_prints_and_saves(tmp_path, capsys):
    calls = []

    @testing.perf_report([
        testing.Benchmark(x_names=["size"], x_vals=[16, 32], x_log=True, line_arg="provider",
                          line_vals=["a", "b"], line_names=["A", "B"], styles=[("blue", "-"), ("green", "-")],
                          ylabel="GB/s", plot_name="first", args={"scale": 2}),
        testing.Benchmark(x_names=["M", "N"], x_vals=[8, (16, 4)], line_arg="provider", line_vals=["a"],
                          line_names=["A"], ylabel="ms", plot_name="second", args={"scale": 1}),
    ])
    def bench(provider, scale, size=None, M=None, N=None):
        calls.append((provider, scale, size, M, N))
        if size is not None:
            v = size * scale + (provider == "b")
            return v, v - 1, v + 1
        return float(M + N)

    assert bench.run(print_data=True, save_path=str(tmp_path)) is None
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "first:",  # Triton's column labels: `NAME (YLABEL)`
        "   size  A (GB/s)  B (GB/s)",
        "0  16.0      32.0      33.0",
        "1  32.0      64.0      65.0",
        "second:",
        "      M    N  A (ms)",
        "0   8.0  8.0    16.0",
        "1  16.0  4.0    20.0",
    ]
    assert calls[:2] == [("a", 2, 16, None, None), ("b", 2, 16, None, None)]
    assert (tmp_path / "first.csv").read_text().splitlines() == [
        "size,A (GB/s),B (GB/s)", "16.000000,32.000000,33.000000", "32.000000,64.000000,65.000000"]
    assert (tmp_path / "second.csv").exists()
    assert 'src="first.png"' in (tmp_path / "results.html").read_text()
    df = bench.run(return_df=True)
    assert len(df) == 2


# --- compiled kernels: warmup, launch, resources ---

@tessel.jit
def scale_rows(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * n_cols + offs, mask=mask)
    tl.store(out_ptr + row * n_cols + offs, x * num_stages, mask=mask)


def test_warmup_then_launch_the_compiled_kernel(capsys, monkeypatch):
    monkeypatch.setenv("PTXAS", "")  # no ptxas: the register count is an upper bound, with a note
    compiled_module._NOTED.clear()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.zeros_like(x)
    # `num_stages` names a parameter and a launch option: as in Triton it is both
    kernel = scale_rows.warmup(y, x, 4, BLOCK=4, num_stages=2, num_warps=2, grid=(1,))
    assert kernel.options["num_stages"] == 2 and kernel.options["num_warps"] == 2
    kernel._init_handles()
    assert kernel.n_regs == compiled_module.MAX_REGS_PER_THREAD and kernel.n_spills is None
    assert "register count unknown" in capsys.readouterr().err
    assert isinstance(kernel.metadata.shared, int) and kernel.metadata.num_warps == 2
    assert kernel.metadata.target.arch == 90
    # the tutorial's occupancy arithmetic goes through
    props = runtime.driver.active.utils.get_device_properties(None)
    occupancy = props["max_num_regs"] // (kernel.n_regs * props["warpSize"] * 2)
    occupancy = min(occupancy, props["max_shared_mem"] // max(kernel.metadata.shared, 1))
    assert occupancy >= 1
    # launched with all the kernel's arguments, constexprs included
    kernel[(3, 1, 1)](y, x, 4, 4, 2)
    np.testing.assert_array_equal(y, 2 * x)
    assert "ptx" in kernel.asm and kernel.asm["tile"]


def test_ptxas_resource_usage_is_parsed(monkeypatch, tmp_path):
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\necho \"ptxas info    : Used 40 registers, used 1 barriers\" >&2\n"
                    "echo \"    24 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\" >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PTXAS", str(fake))
    x = np.ones((1, 4), dtype=np.float32)
    kernel = scale_rows.warmup(np.zeros_like(x), x, 4, BLOCK=4, num_stages=3, grid=(1,))
    kernel._resources = None
    assert (kernel.n_regs, kernel.n_spills) == (40, 6)


# --- the autotuner: Triton's pruning arguments, pre-hooks that set descriptor block shapes ---

@tessel.autotune(
    configs=[tessel.Config({"BLOCK": b}, num_warps=1, pre_hook=lambda nargs: setattr(
        nargs["in_desc"], "block_shape", [nargs["BLOCK"], 16])) for b in (4, 8, 16)],
    key=["n"],
    prune_configs_by={"early_config_prune": lambda configs, named_args, **kwargs: [
        c for c in configs if c.kwargs["BLOCK"] <= kwargs["n"] and "in_desc" in named_args]},
)
@tessel.jit
def double_rows(in_desc, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    x = in_desc.load([pid * BLOCK, 0])
    offs = (pid * BLOCK + tl.arange(0, BLOCK))[:, None] * 16 + tl.arange(0, 16)[None, :]
    tl.store(out_ptr + offs, x * 2)


def test_autotune_prunes_with_keyword_arguments_and_pre_hooks_set_descriptors():
    a = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    out = np.zeros_like(a)
    desc = TensorDescriptor(a, shape=[16, 16], strides=[16, 1], block_shape=[1, 1])
    double_rows[lambda m: (16 // m["BLOCK"],)](desc, out, n=8)
    np.testing.assert_array_equal(out, 2 * a)
    assert double_rows.best_config.kwargs["BLOCK"] in (4, 8)  # 16 > n was pruned
    assert set(c.kwargs["BLOCK"] for c in double_rows.configs_timings) == {4, 8}
    assert desc.block_shape == [double_rows.best_config.kwargs["BLOCK"], 16]


def test_set_allocator_is_kept():
    def alloc(size, align, stream):
        return None

    shim.set_allocator(alloc)
    assert shim.get_allocator() is alloc
    shim.set_allocator(None)


# --- the tutorials' module-level code, through `python -m tessel` ---

TUTORIAL_SURFACE = textwrap.dedent('''
    import numpy as np
    import triton
    import triton.language as tl
    from triton.runtime import driver
    from triton.tools.tensor_descriptor import TensorDescriptor


    def is_hip():
        return triton.runtime.driver.active.get_current_target().backend == "hip"


    def is_cuda():
        return triton.runtime.driver.active.get_current_target().is_cuda_backend()


    @triton.jit
    def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                       BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
        row_start = tl.program_id(0)
        row_step = tl.num_programs(0)
        for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
            row_start_ptr = input_ptr + row_idx * input_row_stride
            col_offsets = tl.arange(0, BLOCK_SIZE)
            input_ptrs = row_start_ptr + col_offsets
            mask = col_offsets < n_cols
            row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
            row_minus_max = row - tl.max(row, axis=0)
            numerator = tl.exp(row_minus_max)
            denominator = tl.sum(numerator, axis=0)
            softmax_output = numerator / denominator
            output_row_start_ptr = output_ptr + row_idx * output_row_stride
            output_ptrs = output_row_start_ptr + col_offsets
            tl.store(output_ptrs, softmax_output, mask=mask)


    properties = driver.active.utils.get_device_properties(None)
    NUM_SM = properties["multiprocessor_count"]
    NUM_REGS = properties["max_num_regs"]
    SIZE_SMEM = properties["max_shared_mem"]
    WARP_SIZE = properties["warpSize"]
    target = triton.runtime.driver.active.get_current_target()
    triton.set_allocator(lambda size, align, stream: None)


    def softmax(x):
        n_rows, n_cols = x.shape
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        num_warps = 8
        num_stages = 4 if SIZE_SMEM > 200000 else 2
        y = np.empty_like(x)
        kernel = softmax_kernel.warmup(y, x, x.strides[0] // 4, y.strides[0] // 4, n_rows, n_cols,
                                       BLOCK_SIZE=BLOCK_SIZE, num_stages=num_stages, num_warps=num_warps,
                                       grid=(1, ))
        kernel._init_handles()
        n_regs = kernel.n_regs
        size_smem = kernel.metadata.shared
        occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)
        occupancy = min(occupancy, SIZE_SMEM // max(size_smem, 1))
        num_programs = min(NUM_SM * occupancy, n_rows)
        kernel[(num_programs, 1, 1)](y, x, x.strides[0] // 4, y.strides[0] // 4, n_rows, n_cols, BLOCK_SIZE,
                                     num_stages)
        return y


    x = np.random.rand(37, 50).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    print("softmax", np.allclose(softmax(x), e / e.sum(axis=1, keepdims=True), atol=1e-6))
    print("target", is_hip(), is_cuda())


    @triton.testing.perf_report(
        triton.testing.Benchmark(
            x_names=['N'], x_vals=[16 * i for i in range(2, 4)], line_arg='provider',
            line_vals=['triton', 'numpy'], line_names=["Triton", "NumPy"], styles=[('blue', '-'), ('green', '-')],
            ylabel="GB/s", plot_name="softmax-performance", args={'M': 8},
        ))
    def benchmark(M, N, provider):
        x = np.random.rand(M, N).astype(np.float32)
        quantiles = [0.5, 0.2, 0.8]
        if provider == 'triton':
            ms, min_ms, max_ms = triton.testing.do_bench(lambda: softmax(x), quantiles=quantiles, warmup=1, rep=2)
        if provider == 'numpy':
            ms, min_ms, max_ms = triton.testing.do_bench(lambda: np.exp(x), quantiles=quantiles, warmup=1, rep=2)
        gbps = lambda ms: 2 * x.size * x.itemsize * 1e-9 / (ms * 1e-3)
        return gbps(ms), gbps(max_ms), gbps(min_ms)


    benchmark.run(show_plots=True, print_data=True, save_path='.')
''')


def test_tutorial_surface_runs_under_python_m_tessel(tmp_path):
    script = tmp_path / "tutorial_surface.py"
    script.write_text(TUTORIAL_SURFACE)
    r = run_tessel(script, env={"TRITON_INTERPRET": "1", "PTXAS": ""})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:3] == ["softmax True", "target False False", "softmax-performance:"]
    assert lines[3].split("  ") and [c for c in lines[3].split("  ") if c] == ["N", "Triton (GB/s)", "NumPy (GB/s)"]
    assert [line.split()[:2] for line in lines[4:6]] == [["0", "32.0"], ["1", "48.0"]]
    assert (tmp_path / "softmax-performance.csv").exists()
    assert "register count unknown" in r.stderr
