"""What the tutorials time their kernels with and against: `triton.profiler` (proton) under tessel (sessions,
scopes, the kernel-launch hook and the hatchet file the viewer reads; the CUDA events are replaced here by a
clock the test advances, so the tree's arithmetic is checked exactly, where a GPU run reads torch's CUDA events)
and the cuBLAS baseline of `triton._C.libtriton.nvidia`."""

import json

import pytest

from tessel import profiler, profiler_viewer, shim


class Clock:
    """Stands in for CUDA events: each event is the clock's time when recorded; the test advances it."""

    def __init__(self):
        self.now = 0.0

    def event(self):
        return self.now

    def elapsed(self, a, b):
        return b - a


@pytest.fixture
def clock(monkeypatch, tmp_path):
    c = Clock()
    monkeypatch.setattr(profiler, "_event", c.event)
    monkeypatch.setattr(profiler, "_elapsed_ms", c.elapsed)
    monkeypatch.setattr(profiler, "_synchronize", lambda: None)
    monkeypatch.chdir(tmp_path)
    profiler._sessions.clear()
    yield c
    profiler._sessions.clear()


def test_scopes_nest_and_add_up(clock, tmp_path):
    proton = shim.modules()["triton.profiler"]
    sid = proton.start("run")
    with proton.scope("outer", {"bytes": 100}):
        clock.now += 1.0
        with proton.scope("inner", {"flops16": 2e9}):
            clock.now += 2.0
        with proton.scope("inner", {"flops16": 2e9}):
            clock.now += 3.0
    proton.deactivate(sid)
    with proton.scope("ignored"):
        clock.now += 5.0
    proton.activate(sid)
    proton.finalize()
    root = json.load(open(tmp_path / "run.hatchet"))[0]
    (outer,) = root["children"]
    (inner,) = outer["children"]
    assert outer["frame"]["name"] == "outer" and inner["frame"]["name"] == "inner"
    assert inner["metrics"] == {"time (ns)": 5e6, "count": 2, "flops16": 4e9}
    # The outer scope's own events span its children: 6 ms, not 6 + 5.
    assert outer["metrics"]["time (ns)"] == 6e6 and outer["metrics"]["bytes"] == 100
    assert outer["metrics"]["flops16"] == 4e9
    tree, names = profiler_viewer.parse(["time/ms", "tflop16/s", "count"], str(tmp_path / "run.hatchet"))
    assert tree["children"][0]["children"][0]["derived"] == {"time/ms": 5.0, "tflop16/s": 4e9 / 5e-3 / 1e12,
                                                             "count": 2}


def test_launch_hook_names_kernels_from_their_metadata(clock, tmp_path):
    class Kernel:
        __name__ = "matmul_kernel"

    def metadata(grid, kernel, args):
        return {"name": f"{kernel.name} [M={args['M']}]", "flops8": 2.0 * args["M"] ** 3}

    def run():
        clock.now += 0.5
        return "launched"

    assert not profiler.hooked()
    profiler.start("k", hook="triton")
    assert profiler.hooked()
    assert profiler.launch(Kernel(), (4,), {"M": 1000}, metadata, run) == "launched"
    profiler.deactivate()
    assert not profiler.hooked(), "a deactivated session times no launch"
    profiler.finalize()
    (k,) = json.load(open(tmp_path / "k.hatchet"))[0]["children"]
    assert k["frame"]["name"] == "matmul_kernel [M=1000]"
    assert k["metrics"] == {"time (ns)": 0.5e6, "count": 1, "flops8": 2e9}


def test_what_is_not_supported_is_an_error(clock):
    with pytest.raises(ValueError, match="hook='triton' only"):
        profiler.start(hook="cupti")
    with pytest.raises(RuntimeError, match="without a scope open"):
        profiler.exit_scope()
    with pytest.raises(ValueError, match="does not derive the metric 'flop/cycle'"):
        profiler_viewer._derive({}, "flop/cycle")


def test_cublas_baseline_is_torch_matmul_and_refuses_fp8(monkeypatch):
    """`from triton._C.libtriton import nvidia`: CublasLt.matmul(a, b, c) is C = A @ B^T through torch; what
    torch does not run on cuBLAS as-is is refused by name."""
    import sys
    import types

    calls = []
    fake = types.SimpleNamespace(float16="f16", bfloat16="bf16", float32="f32",
                                 matmul=lambda x, y, out: calls.append((x, y, out)))
    monkeypatch.setitem(sys.modules, "torch", fake)
    nvidia = shim.modules()["triton._C.libtriton"].nvidia

    class T:
        def __init__(self, name, dtype):
            self.name, self.dtype = name, dtype

        @property
        def T(self):
            return T(self.name + ".T", self.dtype)

    blas = nvidia.cublas.CublasLt(T("ws", "u8"))
    blas.matmul(T("a", "f16"), T("b", "f16"), T("c", "f16"))
    assert [(x.name, y.name, o.name) for x, y, o in calls] == [("a", "b.T", "c")]
    with pytest.raises(NotImplementedError, match="fp8 binding is not provided"):
        blas.matmul(T("a", "e4m3"), T("b", "e4m3"), T("c", "e4m3"))
