"""The GPU launcher's Python side, without a GPU: a stand-in `torch` whose tensors report a CUDA device, and a
stand-in for the native launch that records what it was given (device, stream, grid, packed arguments)."""

import sys
import types

import numpy as np
import pytest

import tessel
import tessel.language as tl

jit_module = sys.modules["tessel.jit"]


@tessel.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tessel.jit
def scalars_kernel(x_ptr, n, stride, factor, flag, BLOCK: tl.constexpr = 64):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * stride, mask=mask)
    if flag:
        x = (x * factor).to(x.dtype)
    tl.store(x_ptr + offs * stride, x, mask=mask)


class FakeTensor:
    """What the launcher reads of a torch tensor."""

    def __init__(self, ptr, dtype="torch.float32", device=0):
        self._ptr, self.dtype, self._device = ptr, dtype, device
        self.is_cuda = device >= 0

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return self._device


class Recorder:
    tile_target = "sm_90a"  # the native kernel's: what its metadata names without a GPU

    def __init__(self):
        self.launches, self.loads, self.pdl = [], [], []

    def load(self, device):
        self.loads.append(device)

    def launch(self, device, stream, grid, args, pdl=False):
        self.launches.append((device, stream, grid, args))
        self.pdl.append(pdl)


@pytest.fixture
def fake_cuda(monkeypatch):
    """A stand-in torch (its tensors are CUDA tensors) and a stream per device (1000 + device)."""
    fake = types.ModuleType("torch")
    fake.Tensor = FakeTensor
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(sys.modules["tessel._launcher"], "_current_stream", lambda device: 1000 + device)
    add_kernel.cache.clear()
    scalars_kernel.cache.clear()
    yield
    add_kernel.cache.clear()
    scalars_kernel.cache.clear()


def recording(kernel, *args, **kwargs):
    """Compiles the specialization (no GPU needed: warm-up stops before loading) and records its launches."""
    compiled = kernel.warmup(*args, **kwargs)
    compiled.native = Recorder()
    return compiled.native


BASE = 0x7F00_0000_0000


def test_cuda_launch_packs_arguments_and_uses_torchs_stream(fake_cuda):
    x, y, out = FakeTensor(BASE), FakeTensor(BASE + 4096), FakeTensor(BASE + 8192)
    rec = recording(add_kernel, x, y, out, 1000, BLOCK=256, grid=(4,))
    k = add_kernel[(4,)](x, y, out, 1000, BLOCK=256)
    assert rec.launches == [(0, 1000, (4, 1, 1), [BASE, BASE + 4096, BASE + 8192, 1000])]
    assert isinstance(k, tessel.CompiledKernel)
    # A grid lambda sees the arguments and options by name.
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (tessel.cdiv(meta["n"], meta["BLOCK"]), 1)

    add_kernel[grid](x, y, out, 1000, BLOCK=256)
    assert rec.launches[-1] == (0, 1000, (4, 1, 1), [BASE, BASE + 4096, BASE + 8192, 1000])
    assert seen["n"] == 1000 and seen["BLOCK"] == 256 and seen["num_warps"] == 4 and seen["x_ptr"] is x
    # A zero-sized grid launches nothing.
    add_kernel[(0,)](x, y, out, 1000, BLOCK=256)
    assert len(rec.launches) == 2
    # The fast path's key is `specialize`'s: one cache entry.
    assert len(add_kernel.cache) == 1


def test_a_warmed_up_kernel_launches_as_tritons_compiled_kernel(fake_cuda):
    # Tutorial 02: `kernel = k.warmup(...)`, then `kernel[(n, 1, 1)](*all args, constexprs by position)`.
    x, y, out = FakeTensor(BASE), FakeTensor(BASE + 4096), FakeTensor(BASE + 8192)
    compiled = add_kernel.warmup(x, y, out, 1000, BLOCK=256, grid=(1,))
    assert add_kernel.warmup(x, y, out, 1000, BLOCK=256, grid=(1,)) is compiled  # found by the launcher's key
    rec = compiled.native = Recorder()
    compiled[(4, 1, 1)](x, y, out, 1000, 256)
    compiled[(2, 3, 1)](y, x, out, 1000, 256, stream=77)
    assert rec.launches == [(0, 1000, (4, 1, 1), [BASE, BASE + 4096, BASE + 8192, 1000]),
                            (0, 77, (2, 3, 1), [BASE + 4096, BASE, BASE + 8192, 1000])]
    assert compiled[(4, 1, 1)] is compiled[(4, 1, 1)]  # one launch function per grid
    # By keyword, it binds as the kernel does.
    compiled[(1, 1, 1)](x, y, out, n=1000, BLOCK=256)
    assert rec.launches[-1] == (0, 1000, (1, 1, 1), [BASE, BASE + 4096, BASE + 8192, 1000])
    compiled._resources = {"shared": 0, "n_regs": 32, "n_spills": 0}  # what `_init_handles` finds on a GPU
    assert compiled.metadata is compiled.metadata  # built once


def test_a_warmed_up_kernel_takes_tritons_launcher_abi(fake_cuda, monkeypatch):
    # `CompiledKernel.run(gridX, gridY, gridZ, stream, function, packed_metadata, launch_metadata, enter, exit,
    # *args)`, every argument by position (constexprs too), as torch's inductor and Triton's own `[grid]` call it.
    x, y, out = FakeTensor(BASE), FakeTensor(BASE + 4096), FakeTensor(BASE + 8192)
    compiled = add_kernel.warmup(x, y, out, 1000, BLOCK=256, grid=(1,))
    rec = compiled.native = Recorder()
    hooks = []
    compiled.run(4, 1, 1, 55, compiled.function, None, {"name": "add"}, hooks.append, hooks.append,
                 x, y, out, 1000, 256)
    assert rec.launches == [(0, 55, (4, 1, 1), [BASE, BASE + 4096, BASE + 8192, 1000])]
    assert hooks == [{"name": "add"}, {"name": "add"}]
    # Without hooks, the launcher generated for this specialization packs and launches (inductor's usual call).
    compiled.run(2, 1, 1, 56, compiled.function, None, None, None, None, x, y, out, 1000, 256)
    assert rec.launches[-1] == (0, 56, (2, 1, 1), [BASE, BASE + 4096, BASE + 8192, 1000])
    assert compiled.run.__code__.co_filename == "<tessel run of add_kernel>"
    # The metadata hooks get is built only while a launch-enter hook is set (Triton skips it too).
    assert compiled.launch_metadata((4, 1, 1), 55, x, y, out, 1000, 256) is None
    monkeypatch.setattr(type(compiled), "launch_enter_hook", hooks.append)
    assert compiled.launch_metadata((4, 1, 1), 55, x, y, out, 1000, 256) == {
        "name": "add_kernel", "grid": (4, 1, 1), "stream": 55}
    with pytest.raises(ValueError, match="CPU tensor"):
        compiled.run(1, 1, 1, 0, None, None, None, None, None, FakeTensor(BASE, device=-1), y, out, 1000, 256)
    with pytest.raises(TypeError, match="takes 5 arguments"):
        compiled.run(1, 1, 1, 0, None, None, None, None, None, x, y, out, 1000)


@tessel.jit
def staged_kernel(x_ptr, n, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    # Tutorial 02's softmax has a `num_stages` constexpr, named like the launch option.
    offs = tl.arange(0, BLOCK)
    for i in tl.range(0, n, num_stages=num_stages):
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)


def test_a_parameter_named_like_a_launch_option_keeps_the_fast_launcher(fake_cuda):
    staged_kernel.cache.clear()
    x = FakeTensor(BASE)
    rec = recording(staged_kernel, x, 8, BLOCK=64, num_stages=2, grid=(1,))
    assert staged_kernel.warmup(x, 8, BLOCK=64, num_stages=2, grid=(1,)).native is rec
    assert "_t_p_num_stages" in staged_kernel._launcher.source  # the generated launcher, not the generic path
    # By keyword it is both the parameter and the launch option, as in Triton; by position, the parameter only.
    staged_kernel[(1,)](x, 8, BLOCK=64, num_stages=2)
    assert rec.launches == [(0, 1000, (1, 1, 1), [BASE, 8])]
    keys = list(staged_kernel.cache)
    # The key ends with the options (num_warps, num_stages, num_ctas, maxnreg, enable_fp_fusion), then whether
    # the interpreter runs it.
    stages = jit_module._LAUNCH_OPTIONS.index("num_stages") - len(jit_module._LAUNCH_OPTIONS) - 1
    assert len(keys) == 1 and keys[0][stages] == 2
    rec3 = recording(staged_kernel, x, 8, 64, 3, grid=(1,))  # by position: the option keeps its default, 3
    assert len(staged_kernel.cache) == 2 and sorted(k[stages] for k in staged_kernel.cache) == [2, 3]
    seen = {}
    staged_kernel[lambda meta: seen.update(meta) or (1,)](x, 8, 64, 3)
    assert seen["num_stages"] == 3 and rec3.launches == [(0, 1000, (1, 1, 1), [BASE, 8])]
    staged_kernel.cache.clear()


@tessel.jit
def big_dot_kernel(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    # Four stages of 256 x 256 fp16 operand tiles: more shared memory than an sm_90a block has.
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for k in tl.range(0, K, BLOCK, num_stages=4):
        a = tl.load(a_ptr + offs[:, None] * K + k + offs[None, :])
        b = tl.load(b_ptr + (k + offs[:, None]) * BLOCK + offs[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


def test_a_warm_up_without_code_raises_every_time(fake_cuda, monkeypatch):
    # The autotuner skips a config whose warm-up raises; a second warm-up of the same specialization (a new key
    # value with the same specialization) must raise too, not hand back the kernel whose code failed.
    monkeypatch.setattr(sys.modules["tessel.runtime"], "gpu_target", lambda: "sm_90a")
    big_dot_kernel.cache.clear()
    a, b, c = FakeTensor(BASE, "torch.float16"), FakeTensor(BASE + 4096, "torch.float16"), FakeTensor(BASE + 8192)
    for _ in range(2):
        with pytest.raises(tessel.CompilationError, match="shared memory"):
            big_dot_kernel.warmup(a, b, c, 1024, BLOCK=256, grid=(1,))
    big_dot_kernel.cache.clear()


def test_a_kernel_over_shared_memory_raises_tritons_out_of_resources(fake_cuda, monkeypatch):
    # Code written for Triton catches `OutOfResources` (Triton raises it loading such a kernel): the error is
    # that, with the bytes needed and the limit as numbers, and still a `CompilationError`.
    from tessel._triton.interface import OutOfResources

    monkeypatch.setattr(sys.modules["tessel.runtime"], "gpu_target", lambda: "sm_90a")
    big_dot_kernel.cache.clear()
    a, b, c = FakeTensor(BASE, "torch.float16"), FakeTensor(BASE + 4096, "torch.float16"), FakeTensor(BASE + 8192)
    with pytest.raises(OutOfResources) as e:
        big_dot_kernel.warmup(a, b, c, 1024, BLOCK=256, grid=(1,))
    assert isinstance(e.value, tessel.CompilationError)
    assert e.value.name == "shared memory" and e.value.required > e.value.limit == 232448, vars(e.value)
    assert "shared memory" in str(e.value) and str(e.value).startswith("cannot generate code"), str(e.value)
    big_dot_kernel.cache.clear()


def test_warmup_takes_dtypes_for_tensors(fake_cuda, monkeypatch):
    fake = sys.modules["torch"]
    fake.dtype = type("dtype", (), {"__str__": lambda self: "torch.float16"})
    half = fake.dtype()
    compiled = add_kernel.warmup(half, half, half, 64, BLOCK=64, grid=(1,))
    assert compiled.spec_key[0] == ("ptr", "float16", True)


def test_the_tensors_device_picks_the_device_and_its_stream(fake_cuda):
    x, y, out = (FakeTensor(BASE + i * 256, device=3) for i in range(3))
    rec = recording(add_kernel, x, y, out, 64, BLOCK=64, grid=(1,))
    add_kernel[(1,)](x, y, out, 64, BLOCK=64)
    assert rec.launches == [(3, 1003, (1, 1, 1), [BASE, BASE + 256, BASE + 512, 64])]


def test_mixed_devices_and_host_memory_are_refused(fake_cuda):
    x, y = FakeTensor(BASE, device=0), FakeTensor(BASE + 256, device=1)
    with pytest.raises(ValueError, match="cuda:1.*cuda:0"):
        add_kernel[(1,)](x, y, x, 64, BLOCK=64)
    with pytest.raises(ValueError, match="`y_ptr` is in host memory"):
        add_kernel[(1,)](x, FakeTensor(BASE, device=-1), x, 64, BLOCK=64)
    with pytest.raises(ValueError, match="`y_ptr` is in host memory"):
        add_kernel[(1,)](x, np.zeros(64, np.float32), x, 64, BLOCK=64)


def test_scalars_are_specialized_as_triton_does(fake_cuda):
    x = FakeTensor(BASE + 4)  # not 16-byte aligned
    rec = recording(scalars_kernel, x, 1 << 40, 1, 2.5, True, grid=(1,))
    scalars_kernel[(1,)](x, 1 << 40, 1, 2.5, True)
    # stride == 1 is a constant (not passed); n is i64; the bool is an i1 passed as 0/1.
    assert rec.launches == [(0, 1000, (1, 1, 1), [BASE + 4, 1 << 40, 2.5, 1])]
    (key,) = scalars_kernel.cache
    assert key[0] == ("ptr", "float32", False)
    assert key[1] == ("int", "i64", True)
    assert key[2] == ("const", ("int", 1))
    assert key[3] == ("float", "fp32")
    assert key[4] == ("int", "i1", False)
    # Another stride is another specialization, compiled on its first launch, which loads it. Without a GPU the
    # load fails with a Python exception; with one, the stand-in tensor's address and stream are not real, so
    # only the compile is checked there (a warm-up, which stops before loading).
    if sys.modules["tessel.runtime"].gpu_target() is None:
        with pytest.raises(tessel.GPUError):
            scalars_kernel[(1,)](x, 1 << 40, 3, 2.5, True)
    else:
        scalars_kernel.warmup(x, 1 << 40, 3, 2.5, True, grid=(1,))
    assert len(scalars_kernel.cache) == 2


def test_fast_key_equals_specialize_key(fake_cuda):
    x = FakeTensor(BASE, dtype="torch.float16")
    for args in [(x, 17, 2, 1.0, False), (x, 32, 1, 0.5, True), (x, 2**35, 7, -1.0, 0)]:
        compiled = scalars_kernel.warmup(*args, BLOCK=32, grid=(1,), num_warps=2)
        values, opts = scalars_kernel.bind(args, {"BLOCK": 32, "num_warps": 2})
        _, key = scalars_kernel.specialize(values, opts, False)
        assert compiled.spec_key == key
        compiled.native = Recorder()
        assert scalars_kernel[(1,)](*args, BLOCK=32, num_warps=2) is compiled
        assert len(compiled.native.launches) == 1


def test_launch_options(fake_cuda):
    x = FakeTensor(BASE)
    # Auto mode at num_ctas > 1: a cluster launch, each CTA on its half of the tensors (docs/python.md).
    ptx2 = add_kernel.warmup(x, x, x, 64, BLOCK=64, grid=(1,), num_ctas=2).ptx("sm_90a")
    assert ".reqnctapercluster 2, 1, 1" in ptx2 and "%clusterid.x" in ptx2
    k = add_kernel.warmup(x, x, x, 64, BLOCK=64, grid=(1,), maxnreg=40, num_ctas=1)
    assert ".maxnreg 40" in k.ptx("sm_90a")
    assert ".maxnreg" not in add_kernel.warmup(x, x, x, 64, BLOCK=64, grid=(1,)).ptx("sm_90a")
    # Options Triton takes and tessel ignores; `enable_fp_fusion=True` is the default (see below).
    rec = recording(add_kernel, x, x, x, 64, BLOCK=64, grid=(1,))
    add_kernel[(1,)](x, x, x, 64, BLOCK=64, debug=False, enable_fp_fusion=True)
    assert len(rec.launches) == 1


@tessel.jit
def ticket_kernel(counter_ptr, out_ptr, BLOCK: tl.constexpr):
    t = tl.atomic_add(counter_ptr, 1)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), tl.int32) + t)


def first_cta_only(ptx):
    """Whether the entry lets every CTA but the cluster's first exit right after reading its rank."""
    lines = ptx.split("%cluster_ctarank", 1)[1].splitlines()[1:3]
    return lines[0].strip().startswith("setp.ge.u32") and lines[1].strip().endswith("exit;")


def test_cluster_launches_spread_or_warn(fake_cuda, capsys):
    x = FakeTensor(BASE)
    # Spread: both CTAs work, each on its half of the 1024 elements, and nothing crosses between them.
    ptx = add_kernel.warmup(x, x, x, 4096, BLOCK=1024, grid=(1,), num_ctas=2).ptx("sm_90a")
    assert not first_cta_only(ptx) and "barrier.cluster" not in ptx, ptx
    assert capsys.readouterr().err == ""
    # An atomic whose old value every CTA would need: the first CTA runs the program, and the compile says why on
    # Python's stderr, as the CLI does.
    c = FakeTensor(BASE, dtype="torch.int32")
    ptx = ticket_kernel.warmup(c, c, BLOCK=1024, grid=(1,), num_ctas=2).ptx("sm_90a")
    err = capsys.readouterr().err
    assert "num_ctas = 2: the program runs in each cluster's first CTA alone" in err, err
    assert "atomic_add" in err and first_cta_only(ptx), ptx


@tessel.jit
def mul_add_kernel(x_ptr, y_ptr, w_ptr, z_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs) * tl.load(y_ptr + offs) + tl.load(w_ptr + offs))


def test_enable_fp_fusion_false_keeps_multiply_and_add_apart(fake_cuda):
    """Triton's `enable_fp_fusion=False` reaches the compiler (no `a * b + c` contracted to `fma`), shows in the
    compiled kernel's options and metadata, and keys the launcher's cache: two launches differing only by it
    run different kernels, on the fast path once compiled."""
    from tessel import _launcher

    assert "enable_fp_fusion" not in _launcher._IGNORED_OPTIONS
    mul_add_kernel.cache.clear()
    x, y, w, z = (FakeTensor(BASE + i * 1024) for i in range(4))
    fused = mul_add_kernel.warmup(x, y, w, z, BLOCK=128, grid=(1,))
    apart = mul_add_kernel.warmup(x, y, w, z, BLOCK=128, grid=(1,), enable_fp_fusion=False)
    assert "fma.rn.f32" in fused.ptx("sm_90a")
    ptx = apart.ptx("sm_90a")
    assert "fma" not in ptx and "mul.rn.f32" in ptx and "add.rn.f32" in ptx
    assert "enable_fp_fusion = false" in apart.asm["tile"] and "enable_fp_fusion" not in fused.asm["tile"]
    assert fused.options["enable_fp_fusion"] is True and apart.options["enable_fp_fusion"] is False
    assert apart.metadata.enable_fp_fusion is False and fused.metadata.enable_fp_fusion is True
    fused.native, apart.native = Recorder(), Recorder()
    args = (x, y, w, z)
    mul_add_kernel[(1,)](*args, BLOCK=128, enable_fp_fusion=False)
    mul_add_kernel[(1,)](*args, BLOCK=128)
    mul_add_kernel[(1,)](*args, BLOCK=128, enable_fp_fusion=True)  # the default, given: the same kernel
    assert (len(fused.native.launches), len(apart.native.launches)) == (2, 1)
    assert len(mul_add_kernel.cache) == 2
    # Once compiled, each launches from the launcher's own cache.
    with pytest.MonkeyPatch.context() as m:
        m.setattr(mul_add_kernel, "_launch_miss", lambda *a, **k: pytest.fail("missed the launcher's cache"))
        mul_add_kernel[(1,)](*args, BLOCK=128, enable_fp_fusion=False)
        mul_add_kernel[(1,)](*args, BLOCK=128)
    assert (len(fused.native.launches), len(apart.native.launches)) == (3, 2)


def test_triton_default_fp_fusion_is_the_default(fake_cuda, monkeypatch):
    """`TRITON_DEFAULT_FP_FUSION` (`triton.knobs.language.default_fp_fusion`) is the default of `enable_fp_fusion`
    when a launch does not give it, as in Triton; a launch that gives it wins."""
    from tessel._triton import knobs

    x, y, w, z = (FakeTensor(BASE + i * 1024) for i in range(4))
    mul_add_kernel.cache.clear()
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    assert knobs.language.default_fp_fusion is False
    off = mul_add_kernel.warmup(x, y, w, z, BLOCK=128, grid=(1,))
    assert off.options["enable_fp_fusion"] is False and "fma" not in off.ptx("sm_90a")
    on = mul_add_kernel.warmup(x, y, w, z, BLOCK=128, grid=(1,), enable_fp_fusion=True)
    assert on is not off and "fma.rn.f32" in on.ptx("sm_90a")
    # Set through the knob, which tessel honours (it sets the variable, as Triton does).
    mul_add_kernel.cache.clear()
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    knobs.language.default_fp_fusion = False
    try:
        assert mul_add_kernel.warmup(x, y, w, z, BLOCK=128, grid=(1,)).options["enable_fp_fusion"] is False
    finally:
        knobs.language.default_fp_fusion = knobs.env  # back to the variable (which monkeypatch restores)


def test_launch_pdl_reaches_the_native_launch_and_not_the_cache_key(fake_cuda):
    """`launch_pdl=True` (Triton's launch keyword) asks the native launch for a programmatic dependent launch,
    on the first launch of the specialization (the generic path), on the cached fast path, and through a
    compiled kernel's own launcher; it compiles nothing new."""
    x = FakeTensor(BASE)
    rec = recording(add_kernel, x, x, x, 64, BLOCK=64, grid=(1,))
    add_kernel[(1,)](x, x, x, 64, BLOCK=64, launch_pdl=True)
    add_kernel[(1,)](x, x, x, 64, BLOCK=64)
    add_kernel[(1, 1, 1)](x, x, x, 64, BLOCK=64, launch_pdl=True)
    add_kernel[(1, 1, 1)](x, x, x, 64, BLOCK=64, launch_pdl=False)
    assert rec.pdl == [True, False, True, False]
    assert len(add_kernel.cache) == 1
    compiled = add_kernel.warmup(x, x, x, 64, BLOCK=64, grid=(1,))
    compiled[(1,)](x, x, x, 64, BLOCK=64, launch_pdl=True)
    assert rec.pdl[-1] is True


def test_interpret_env_runs_cuda_tensors_in_the_interpreter(fake_cuda, monkeypatch):
    x = FakeTensor(BASE)
    rec = recording(add_kernel, x, x, x, 64, BLOCK=64, grid=(1,))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert jit_module._interpret_requested()
    # The interpreter path copies CUDA tensors to the host through torch, which the stand-in does not have.
    with pytest.raises(Exception):
        add_kernel[(1,)](x, x, x, 64, BLOCK=64)
    assert rec.launches == []
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert not jit_module._interpret_requested()
    monkeypatch.delenv("TRITON_INTERPRET")
    assert not jit_module._interpret_requested()


def test_binder_matches_inspect_bind():
    binder = scalars_kernel._binder
    # The options: num_warps, num_stages, num_ctas, maxnreg, enable_fp_fusion (None: not given), launch_pdl.
    values, opts = binder(1, 2, 3, 4.0, True)
    assert values == (1, 2, 3, 4.0, True, 64) and opts == (4, 3, 1, None, None, False)
    values, opts = binder(1, n=2, stride=3, factor=4.0, flag=False, BLOCK=8, num_warps=8, maxnreg=64, stream=None,
                          enable_fp_fusion=False)
    assert values == (1, 2, 3, 4.0, False, 8) and opts == (8, 3, 1, 64, False, False)
    assert binder(1, 2, 3, 4.0, True, launch_pdl=True)[1] == (4, 3, 1, None, None, True)
    assert scalars_kernel.bind((1, 2, 3, 4.0, True), {"launch_pdl": True})[1]["launch_pdl"] is True
    assert scalars_kernel.bind((1, 2, 3, 4.0, True), {"enable_fp_fusion": False})[1]["enable_fp_fusion"] is False
    with pytest.raises(TypeError):
        binder(1, 2, 3)
    with pytest.raises(TypeError):
        binder(1, 2, 3, 4.0, True, nonsense=1)
    with pytest.raises(TypeError):
        add_kernel[(1,)](np.zeros(4), np.zeros(4), np.zeros(4), 4, BLOCK=4, nonsense=1)


def test_a_kernel_with_a_parameter_named_like_an_option_binds_through_inspect():
    import importlib.util
    import pathlib
    import tempfile

    src = (
        "import tessel\nimport tessel.language as tl\n\n\n@tessel.jit\n"
        "def k(x_ptr, num_stages: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, 4), tl.full([4], num_stages, "
        "tl.float32))\n"
    )
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "named_like_option.py"
        path.write_text(src)
        spec = importlib.util.spec_from_file_location("named_like_option", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["named_like_option"] = mod
        try:
            spec.loader.exec_module(mod)
            x = np.zeros(4, np.float32)
            mod.k[(1,)](x, 3)
            np.testing.assert_array_equal(x, 3.0)
        finally:
            del sys.modules["named_like_option"]


def test_launch_option_defaults_come_from_the_native_module():
    """Triton's defaults (4 warps, 3 stages, 1 CTA, no register cap) are written once, in the compiler's
    `KernelConfig`; the launcher, `Config` and `triton.compile`'s options read them from the native module."""
    import inspect

    from tessel import _compiler_face, _tessel, autotuner

    d = _tessel.DEFAULT_LAUNCH
    assert d == {"num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None}
    config = inspect.signature(autotuner.Config).parameters
    assert {k: config[k].default for k in d} == d
    assert {k: v for k, v in _compiler_face._options_dict({}).items() if k in d} == d


@tessel.jit
def desc_rows_kernel(in_desc, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    row = tl.program_id(0) * ROWS
    x = in_desc.load([row, 0])
    offs = (row + tl.arange(0, ROWS))[:, None] * COLS + tl.arange(0, COLS)[None, :]
    tl.store(out_ptr + offs, x)


def test_a_tensor_descriptor_launches_on_the_fast_path(fake_cuda, monkeypatch):
    # Tutorial 06 passes four host descriptors per launch: the launcher packs them inline (base pointer, shape,
    # strides) and keys them by dtype, block shape and padding, without the generic path.
    from tessel.tools import TensorDescriptor

    def desc(ptr, rows, block_rows):
        return TensorDescriptor(FakeTensor(ptr, dtype="torch.float16"), shape=[rows, 32], strides=[32, 1],
                                block_shape=[block_rows, 32])

    desc_rows_kernel.cache.clear()
    out = FakeTensor(BASE + 65536, dtype="torch.float16")
    rec = recording(desc_rows_kernel, desc(BASE, 256, 64), out, ROWS=64, COLS=32, grid=(4,))
    (compiled,) = desc_rows_kernel.cache.values()
    desc_rows_kernel[(4,)](desc(BASE, 256, 64), out, ROWS=64, COLS=32)  # fills the launcher's cache
    with monkeypatch.context() as m:
        m.setattr(desc_rows_kernel, "_run_slow", lambda *a, **k: pytest.fail("took the generic path"))
        m.setattr(desc_rows_kernel, "_run_cuda", lambda *a, **k: pytest.fail("missed the launcher's cache"))
        desc_rows_kernel[(2,)](desc(BASE + 4096, 128, 64), out, ROWS=64, COLS=32)
    assert rec.launches == [(0, 1000, (4, 1, 1), [BASE, 256, 32, 32, 1, BASE + 65536]),
                            (0, 1000, (2, 1, 1), [BASE + 4096, 128, 32, 32, 1, BASE + 65536])]
    # Another block shape is another specialization.
    assert desc_rows_kernel.warmup(desc(BASE, 256, 32), out, ROWS=32, COLS=32, grid=(8,)) is not compiled
    assert len(desc_rows_kernel.cache) == 2
