"""The autotuner: picks a config, and a second process reuses the tuning cache."""

import json
import textwrap

import numpy as np

import tessel
import tessel.language as tl
from subprocesses import run_tessel

SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import triton
    import triton.language as tl

    CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in [(64, 1), (128, 2), (256, 4)]]
    if sys.argv[1:] == ["more"]:
        CONFIGS.append(triton.Config({"BLOCK": 512}, num_warps=4))


    @triton.autotune(configs=CONFIGS, key=["n"], reset_to_zero=["out_ptr"])
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


    if __name__ == "__main__":
        n = 2048
        x = np.random.rand(n).astype(np.float32)
        y = np.random.rand(n).astype(np.float32)
        out = np.zeros(n, dtype=np.float32)
        add_kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, y, out, n)
        assert (out == x + y).all()
        print("best", add_kernel.best_config)
''')


@tessel.autotune(configs=[tessel.Config({"BLOCK": 32}), tessel.Config({"BLOCK": 64}, num_warps=2)], key=["n"])
@tessel.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})
@tessel.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs))
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_autotune_and_heuristics_in_process(capfd):
    x = np.random.rand(200).astype(np.float32)
    out = np.zeros_like(x)
    copy_kernel[lambda m: (tessel.cdiv(200, m["BLOCK"]),)](x, out, 200)
    np.testing.assert_array_equal(out, x)
    assert copy_kernel.best_config in copy_kernel.configs
    assert set(copy_kernel.configs_timings) == set(copy_kernel.configs)
    err = capfd.readouterr().err
    assert "[tessel autotune] copy_kernel: config 2/2 timed, best" in err
    # Not a terminal: the last progress line only, no carriage returns or escape codes in the log.
    assert "config 1/2" not in err and "\r" not in err and "\x1b" not in err
    # Both configs were compiled; 200 is no multiple of 32 or 64, so EVEN was False for both.
    keys = list(copy_kernel.jit_function.cache)
    assert len(keys) == 2 and all(k[4] == ("const", ("bool", False)) for k in keys)


def run_script(path, *args, cache):
    return run_tessel(path, *args, env={"TESSEL_CACHE_DIR": str(cache)})


def test_a_second_process_reuses_the_tuning_cache(tmp_path):
    script, cache = tmp_path / "tuned.py", tmp_path / "cache"
    script.write_text(SCRIPT)
    first = run_script(script, cache=cache)
    assert first.returncode == 0, first.stderr
    assert "add_kernel: config 3/3 timed" in first.stderr
    best = first.stdout.strip()
    assert best.startswith("best BLOCK: ")
    [path] = list((cache / "tune").glob("add_kernel-*.json"))
    [entry] = json.loads(path.read_text())["entries"].values()
    assert len(entry) == 3

    second = run_script(script, cache=cache)
    assert second.returncode == 0, second.stderr
    assert "[tessel autotune]" not in second.stderr  # nothing timed again
    assert second.stdout.strip() == best

    # A config list with one more config: only the new one is timed, the others keep their timings.
    third = run_script(script, "more", cache=cache)
    assert third.returncode == 0, third.stderr
    assert "add_kernel: config 1/1 timed" in third.stderr
    [entry2] = json.loads(path.read_text())["entries"].values()
    assert len(entry2) == 4
    assert all(entry2[c] == t for c, t in entry.items())


@tessel.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)


def test_tuned_dispatch_reads_the_key_off_the_arguments(tmp_path, monkeypatch):
    # Once a key has a config, launches find it without binding the arguments (`_dispatch`); a new key value, a
    # new dtype or a keyword argument's new value is a new key, as in `run`.
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path))
    timings = iter([3.0, 1.0, 2.0] * 10)  # the second config wins every tuning
    configs = [tessel.Config({"BLOCK": b}) for b in (32, 64, 128)]
    scale = tessel.autotune(configs=configs, key=["n"], do_bench=lambda fn, quantiles: (fn(), next(timings))[1])(
        scale_kernel)
    x = np.random.rand(100).astype(np.float32)
    grid = lambda m: (tessel.cdiv(100, m["BLOCK"]),)  # noqa: E731
    for factor in (2.0, 3.0):
        out = np.full_like(x, np.nan)
        scale[grid](x, out, 100, factor=factor)
        np.testing.assert_allclose(out, x * factor, rtol=1e-6)
    assert scale.best_config is configs[1] and len(scale._chosen) == 2 and len(scale.cache) == 1
    assert scale._dispatch((x, out, 100), {"grid": grid, "warmup": False, "factor": 2.0})[0] is configs[1]
    out = np.full_like(x, np.nan)
    scale[grid](x, out, 100, factor=2.0)  # the dispatch's hit
    np.testing.assert_allclose(out, x * 2, rtol=1e-6)
    assert len(scale._chosen) == 2
    out64 = np.full(100, np.nan)
    scale[grid](x.astype(np.float64), out64, 100, factor=2.0)  # new dtypes: `run` keys them, and tunes again
    np.testing.assert_allclose(out64, x * 2, rtol=1e-6)
    assert len(scale.cache) == 2 and len(scale._chosen) == 3
    # Clearing the tuner's cache (as libraries do to re-tune) drops what the dispatch remembered.
    scale.cache.clear()
    assert scale._dispatch((x, out, 100), {"grid": grid, "warmup": False, "factor": 2.0}) is None


@tessel.jit
def rows_kernel(in_desc, out_ptr, N_ROWS, COLS: tl.constexpr, ROWS: tl.constexpr):
    row = tl.program_id(0) * ROWS
    offs = (row + tl.arange(0, ROWS))[:, None] * COLS + tl.arange(0, COLS)[None, :]
    tl.store(out_ptr + offs, in_desc.load([row, 0]) * 2, mask=offs < N_ROWS * COLS)


def test_pre_hooked_configs_dispatch_fast_and_run_their_hook_every_launch(tmp_path, monkeypatch):
    # Tutorial 06: descriptors whose block shape the config's pre-hook sets, key arguments by keyword. Once
    # tuned, launches dispatch without binding, and the hook still runs before each.
    from tessel.tools import TensorDescriptor

    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path))
    hooked = []

    def set_block(nargs):
        hooked.append(nargs["ROWS"])
        nargs["in_desc"].block_shape = [nargs["ROWS"], nargs["COLS"]]

    timings = iter([2.0, 1.0] * 10)
    configs = [tessel.Config({"ROWS": r}, pre_hook=set_block) for r in (8, 16)]
    tuned = tessel.autotune(configs=configs, key=["N_ROWS"], do_bench=lambda fn, quantiles: (fn(), next(timings))[1])(
        rows_kernel)
    x = np.random.rand(40, 16).astype(np.float32)
    grid = lambda m: (tessel.cdiv(40, m["ROWS"]),)  # noqa: E731
    for _ in range(3):
        out = np.full_like(x, np.nan)
        desc = TensorDescriptor(x, shape=[40, 16], strides=[16, 1], block_shape=[1, 1])
        tuned[grid](desc, out, N_ROWS=40, COLS=16)
        np.testing.assert_array_equal(out, x * 2)
    assert tuned.best_config is configs[1] and len(tuned._chosen) == 1
    assert hooked[-2:] == [16, 16]  # the two dispatched launches ran the winner's hook
    kwargs = {"grid": grid, "warmup": False, "N_ROWS": 40, "COLS": 16}
    assert tuned._dispatch((desc, out), kwargs)[0] is configs[1]
    assert tuned._dispatch((desc, out), {**kwargs, "N_ROWS": 41}) is None  # a new key value


def test_triton_interpret_is_read_as_tritons_knob(monkeypatch):
    from tessel.jit import _interpret_requested

    for value, on in [("1", True), ("true", True), ("ON", True), ("0", False), ("false", False), ("", False)]:
        monkeypatch.setenv("TRITON_INTERPRET", value)
        assert _interpret_requested() is on, value
