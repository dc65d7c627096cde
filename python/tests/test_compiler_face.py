"""Triton's compiler face (`tessel._compiler_face`), driven as torch's inductor drives it but without torch:
`ASTSource` + `triton.compile` for the `cpu` target (tessel's interpreter), Triton's launch ABI
(`CompiledKernel.run`), the specialization taken from a signature and attributes, backends and options, and a
compiled kernel sent across processes the way inductor sends it (its `__dict__`, blanked handles, pickled)."""

import pickle

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import _compiler_face as cf
from tessel.compiled import CompiledKernel
from tessel.runtime import GPUTarget

CPU = GPUTarget("cpu", "interpreter", 32)


@tessel.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)


SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "a": "fp32", "n": "i32", "BLOCK": "constexpr"}


def _compile(n_div16=True):
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]}
    if n_div16:
        attrs[(4,)] = [["tt.divisibility", 16]]
    src = cf.ASTSource(axpy_kernel, SIGNATURE, {"BLOCK": 32}, attrs)
    return cf.compile(src, target=CPU, options={"num_warps": 2, "num_stages": 1, "debug": True})


def _launch(k, n=100):
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    grid = (-(-n // 32), 1, 1)
    # Triton's ABI: grid, stream, function, packed metadata, launch metadata, hooks, then every argument
    # (constexprs included).
    k.run(*grid, 0, k.function, k.packed_metadata, None, None, None, x, y, out, 2.0, n, 32)
    return x, y, out


def test_compile_and_run_with_tritons_launch_abi():
    before = cf.compile_count()
    k = _compile(n_div16=False)
    assert cf.compile_count() == before + 1 and cf.compiled_names[-1] == "axpy_kernel"
    x, y, out = _launch(k)
    np.testing.assert_array_equal(out, 2 * x + y)
    m = k.metadata
    assert (m.name, m.num_warps, m.num_stages, m.num_ctas, m.shared) == ("axpy_kernel", 2, 1, 1, 0)
    assert m.target == CPU and m.cluster_dims == (1, 1, 1) and m.hash == k.hash
    assert k.n_regs == 0 and k.n_spills == 0  # the interpreter has no registers
    assert k.src.fn is axpy_kernel and len(k.hash) == 64


def test_specialization_from_signature_and_attributes():
    src = cf.ASTSource(axpy_kernel, SIGNATURE, {"BLOCK": 32}, {(0,): [["tt.divisibility", 16]],
                                                              (4,): [["tt.divisibility", 16]]})
    specs, kinds = cf.specialization(src)
    assert specs == [("ptr", "fp32", True), ("ptr", "fp32", False), ("ptr", "fp32", False), ("float", "fp32"),
                     ("int", "i32", True), ("const", 32)]
    assert kinds == ["ptr", "ptr", "ptr", "float", "int", None]
    # constants keyed by (index,), as Triton's own callers give them
    assert cf.ASTSource(axpy_kernel, SIGNATURE, {(5,): 64}).constants == {(5,): 64}


def test_a_type_tessel_does_not_take_is_named():
    sig = dict(SIGNATURE, x_ptr="tensordesc<fp32[16]>")
    with pytest.raises(NotImplementedError, match="tensordesc"):
        cf.compile(cf.ASTSource(axpy_kernel, sig, {"BLOCK": 32}), target=CPU)


def test_backend_options_and_key():
    b = cf.make_backend(CPU)
    o = b.parse_options({"num_warps": 8, "unknown_option": 1})
    assert o.num_warps == 8 and o.num_stages == 3 and o.debug is False and "max_num_imprecise_acc_default" in vars(o)
    assert isinstance(o.hash(), str) and isinstance(b.hash(), str)
    assert cf.triton_key() == cf.triton_key() and cf.triton_key().startswith("tessel-")
    backends = cf.backends()
    assert "cpu" in backends and backends["cpu"].driver.is_active()
    assert backends["cpu"].driver().get_current_target().backend == "cpu"


def test_enable_fp_fusion_is_a_compile_option(monkeypatch):
    """`triton.compile(src, options={"enable_fp_fusion": False})` keeps `a * x + y` a multiply and an add (on, the
    default, they contract to one `fma`); the option shows in the metadata, keys and hashes the compiled kernel,
    and travels in its recipe. Not given, it is `TRITON_DEFAULT_FP_FUSION`'s, as Triton's `parse_options` has it."""
    from tessel.compiled import build_native

    src = cf.ASTSource(axpy_kernel, SIGNATURE, {"BLOCK": 32})
    gpu = GPUTarget("cuda", 90, 32)
    fused = cf.compile(src, target=gpu)
    apart = cf.compile(src, target=gpu, options={"enable_fp_fusion": False})
    assert "fma.rn.f32" in fused.asm["ptx"]
    assert "fma" not in apart.asm["ptx"] and "mul.rn.f32" in apart.asm["ptx"] and "add.rn.f32" in apart.asm["ptx"]
    assert fused.options["enable_fp_fusion"] is True and apart.options["enable_fp_fusion"] is False
    assert fused.metadata.enable_fp_fusion is True and apart.metadata.enable_fp_fusion is False
    assert fused.spec_key != apart.spec_key and fused.hash != apart.hash
    assert "fma" not in build_native(apart._recipe).ptx("sm_90a")  # as another process rebuilds it
    # inductor passes the backend's parsed options, every field given.
    options = vars(cf.make_backend(gpu).parse_options({"enable_fp_fusion": False}))
    assert "fma" not in cf.compile(src, target=gpu, options=options).asm["ptx"]
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    assert cf.make_backend(gpu).parse_options({}).enable_fp_fusion is False
    assert cf.make_backend(gpu).parse_options({"enable_fp_fusion": True}).enable_fp_fusion is True
    assert cf.compile(src, target=gpu).metadata.enable_fp_fusion is False


def test_a_kernel_sent_across_processes_as_inductor_sends_it():
    """inductor's TritonCompileResult pickles the kernel's `__dict__` with `module`, `function` and `run` blanked,
    rebuilds it with `CompiledKernel.__new__`, and calls `_init_handles()` (after blanking the JITFunction's
    `fn` and `__globals__`, as its prepare_for_pickle does)."""
    k = _compile()
    fn = k.src.fn
    saved = fn.fn, fn.__globals__
    fn.fn = fn.__globals__ = None
    try:
        state = {**k.__dict__, "metadata": k.metadata._asdict(), "packed_metadata": k.packed_metadata,
                 "module": None, "function": None, "run": None}
        state = pickle.loads(pickle.dumps(state))
    finally:
        fn.fn, fn.__globals__ = saved
    k2 = CompiledKernel.__new__(CompiledKernel)
    k2.__dict__.update(state)
    k2._init_handles()
    assert k2.src.fn.arg_names == axpy_kernel.arg_names and k2.src.fn is not axpy_kernel
    x, y, out = _launch(k2)  # recompiled from its recipe in this "process"
    np.testing.assert_array_equal(out, 2 * x + y)


def _gpu():
    torch = pytest.importorskip("torch")
    from tessel import _tessel

    target = _tessel.gpu_target()[0] if torch.cuda.is_available() else None
    if target is None:
        pytest.skip("no GPU tessel can use")
    return torch, target


def test_compile_and_run_on_the_gpu_with_tritons_launch_abi():
    torch, target = _gpu()
    assert "nvidia" in cf.backends() and cf.backends()["nvidia"].driver.is_active()
    arch = int(target[3:].rstrip("a"))
    src = cf.ASTSource(axpy_kernel, SIGNATURE, {"BLOCK": 128}, {(i,): [["tt.divisibility", 16]] for i in range(3)})
    k = cf.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": 4, "num_stages": 2})
    assert not k.interpreted and k.metadata.target.backend == "cuda" and k.metadata.shared >= 0
    k._init_handles()
    assert k.n_regs > 0
    n = 1000
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    y = torch.ones(n, device="cuda")
    out = torch.empty(n, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        k.run(-(-n // 128), 1, 1, stream.cuda_stream, k.function, k.packed_metadata, None, None, None, x, y, out,
              0.5, n, 128)
    stream.synchronize()
    torch.testing.assert_close(out, 0.5 * x + y)
