"""Tiny torch models compiled with torch.compile (inductor) on tessel, run as a script under `python -m tessel`:

    python -m tessel models.py MODEL DEVICE

prints one JSON line (prefixed `RESULT `): whether the compiled result matched eager (`ok`, `error`),
which kernels inductor generated (`generated`: names of the Triton kernels it precompiled) and which tessel
compiled (`compiled`: names through `triton.compile`), and which `triton` modules were loaded from outside
tessel (`foreign`: must be empty). On `cpu` inductor's CPU backend is set to Triton, so the generated kernels run
in tessel's interpreter; on `cuda` inductor's default backend generates Triton kernels tessel runs on the GPU.

Models: mlp (Linear, LayerNorm, GELU), rmsnorm_swiglu, attention (softmax attention), reductions (var_mean,
argmax, cumsum), random (dropout and rand: statistics and seeded determinism, not bits), ops (elementwise,
reduction, scan, sort, indexing, scatter and dtype operations, each compiled alone), user_kernel (a Triton
kernel of the user's, `user_kernels.py`, launched inside the compiled function), train_block (a
hand-written transformer block: forward, backward, AdamW), train_hf (a tiny `transformers` model's training
step; skipped without transformers).
"""

import json
import math
import os
import sys
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

FP32_TOL = dict(rtol=1e-4, atol=1e-4)
TRAIN_TOL = dict(rtol=1e-3, atol=1e-4)


def configure(device):
    import torch._inductor.config as ic

    ic.compile_threads = int(os.environ.get("TESSEL_TEST_COMPILE_THREADS", "1"))
    ic.fx_graph_cache = False
    ic.autotune_local_cache = False
    if device == "cpu":
        ic.cpu_backend = "triton"
    if ic.compile_threads > 1:
        # Compile in inductor's worker processes: start the pool and wait until it is up (else inductor compiles
        # in this process while it starts).
        from torch._inductor.async_compile import AsyncCompile

        AsyncCompile.use_process_pool()
        AsyncCompile._ready_future.result(timeout=300)


generated = []  # kernels inductor precompiled in this process (each config)
launchers = []  # (kernel name, its compiled kernel's class) of every launcher inductor made, wherever compiled


def count_generated():
    """Records every Triton kernel inductor precompiles here, and the compiled kernel behind every launcher it
    makes (compiled here or in a compile worker)."""
    from torch._inductor.runtime import triton_heuristics as th

    precompile_config = th.CachingAutotuner._precompile_config
    make_launcher = th.TritonCompileResult.make_launcher

    def counted_precompile_config(self, cfg):
        generated.append(self.fn.__name__)
        return precompile_config(self, cfg)

    def counted_make_launcher(self):
        k = self.kernel
        launchers.append((k.src.fn.__name__, f"{type(k).__module__}.{type(k).__qualname__}"))
        return make_launcher(self)

    th.CachingAutotuner._precompile_config = counted_precompile_config
    th.TritonCompileResult.make_launcher = counted_make_launcher


# --- the models ---

class MLP(nn.Module):
    def __init__(self, d=16, h=32):
        super().__init__()
        self.fc1, self.ln, self.fc2 = nn.Linear(d, h), nn.LayerNorm(h), nn.Linear(h, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class RMSNormSwiGLU(nn.Module):
    def __init__(self, d=16, h=32):
        super().__init__()
        self.norm = RMSNorm(d)
        self.gate, self.up, self.down = nn.Linear(d, h, bias=False), nn.Linear(d, h, bias=False), nn.Linear(h, d)

    def forward(self, x):
        y = self.norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


def attention(q, k, v):
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return torch.softmax(s, dim=-1) @ v


def reductions(x):
    var, mean = torch.var_mean(x, dim=-1)
    return var, mean, torch.argmax(x, dim=-1), torch.cumsum(x, dim=-1)


class Block(nn.Module):
    """A pre-norm transformer block: causal self-attention and a GELU MLP."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        s = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        a = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def _close(got, want, tol):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **tol)


def run_forward(module_or_fn, inputs, tol=FP32_TOL):
    want = module_or_fn(*inputs)
    got = torch.compile(module_or_fn)(*inputs)
    _close(got, want, tol)


def run_random(device):
    n = 2048
    x = torch.ones(n, device=device)

    def f(x):
        return F.dropout(x, p=0.25, training=True), torch.rand(n, device=x.device)

    cf = torch.compile(f)
    torch.manual_seed(123)
    a, r = cf(x)
    torch.manual_seed(123)
    a2, r2 = cf(x)
    assert a.shape == x.shape and r.shape == (n,)
    assert torch.equal(a, a2) and torch.equal(r, r2), "the same seed gave different results"
    kept = a != 0
    assert torch.allclose(a[kept], torch.full_like(a[kept], 1 / 0.75)), "kept elements are not scaled by 1/(1-p)"
    frac = 1 - kept.float().mean().item()
    assert abs(frac - 0.25) < 0.05, f"dropped fraction {frac}, expected about 0.25"
    assert 0 <= r.min() and r.max() < 1 and abs(r.mean().item() - 0.5) < 0.05, "rand is not uniform on [0, 1)"
    torch.manual_seed(7)
    a3, _ = cf(x)
    assert not torch.equal(a, a3), "a different seed gave the same dropout mask"


def train_step(model, x, steps=2, compiled=True):
    # eps well above the rounding noise of gradients that are zero in exact arithmetic (the q and k biases under
    # softmax), which Adam would otherwise scale up to +-lr in either run.
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, eps=1e-4)

    def step():
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    fn = torch.compile(step) if compiled else step
    return [fn() for _ in range(steps)]


def run_training(make_model, x):
    import copy

    torch.manual_seed(0)
    eager_model = make_model()
    compiled_model = copy.deepcopy(eager_model)
    want = train_step(eager_model, x, compiled=False)
    got = train_step(compiled_model, x, compiled=True)
    _close(got, want, TRAIN_TOL)
    for (name, p), q in zip(compiled_model.named_parameters(), eager_model.parameters()):
        torch.testing.assert_close(p, q, **TRAIN_TOL, msg=lambda m, n=name: f"parameter {n}: {m}")


def hf_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=16)
    return LlamaForCausalLM(cfg)


# Elementwise, reduction, indexing, dtype and scan operations beyond the models, each compiled on its own so that
# one failure does not hide the others (model "ops").
OPS = {
    "unary_math": lambda x, y, i: (torch.sigmoid(x), torch.tanh(x), torch.exp(x), torch.log1p(x.abs()),
                                   torch.erf(x), torch.sqrt(x.abs()), torch.rsqrt(x.abs() + 1), torch.sin(x),
                                   torch.cos(x), torch.exp2(x), torch.log2(x.abs() + 1), torch.atan2(x, y)),
    "activations": lambda x, y, i: (F.softplus(x), F.mish(x), F.silu(x), F.elu(x), F.hardswish(x),
                                    F.leaky_relu(x, 0.1), F.gelu(x, approximate="tanh")),
    "binary_where": lambda x, y, i: (torch.where(x > y, x, y), torch.clamp(x, -0.5, 0.5), x.pow(3), x ** y.abs(),
                                     torch.maximum(x, y), torch.minimum(x, y), torch.fmod(x, 0.7),
                                     torch.remainder(x, 0.7), torch.sign(x), torch.round(x), torch.trunc(x),
                                     torch.floor(x), torch.ceil(x)),
    "special_values": lambda x, y, i: (torch.isnan(x / y.round()), torch.isinf(x / y.round()),
                                       torch.nan_to_num(x / y.round(), 0.0, 1.0, -1.0)),
    "integers": lambda x, y, i: (i // 3, i % 5, i & 6, i | 1, i ^ 3, i << 1, i >> 1, (i * 7).to(torch.int32),
                                 torch.abs(i - 10), i.float() / 3),
    "reductions": lambda x, y, i: (x.amax(-1), x.amin(0), x.prod(-1), (x > 0).any(-1), (x > -3).all(-1),
                                   torch.logsumexp(x, -1), x.std(0), torch.argmin(x, 0), x.norm(dim=-1)),
    "scans": lambda x, y, i: (torch.cumprod(x * 0.5 + 1, -1), torch.cummax(x, -1).values, torch.cumsum(i, 0)),
    "sort_topk": lambda x, y, i: (torch.sort(x, -1).values, torch.topk(x, 3, -1).values),
    "indexing": lambda x, y, i: (x[i.clamp(0, 7) % 8], torch.gather(x, 1, i.clamp(0, 15).view(8, 2).long()),
                                 x[:, ::2] + x[:, 1::2], torch.flip(x, (1,)), torch.cat([x, y], 0) * 2),
    "scatter": lambda x, y, i: (torch.zeros(8, device=x.device).index_add(0, i[:16] % 8, x.reshape(-1)[:16]),
                                torch.zeros(8, 16, device=x.device).scatter_add(0, (i[:16] % 8).view(1, 16).expand(
                                    8, 16).long(), x)),
    "low_precision": lambda x, y, i: ((x.half() * y.half()).float(), (x.bfloat16() + 1).float(),
                                      x.half().sum(-1).float(), torch.softmax(x.bfloat16(), -1).float()),
    "float64": lambda x, y, i: ((x.double() * y.double()).exp(),),
    "integer_math": lambda x, y, i: (torch.div(i - 20, 3, rounding_mode="floor"), torch.div(i, 3, rounding_mode="trunc"),
                                     i.clamp(5, 30), i.pow(2), (i % 7).sum(), i.to(torch.int8).sum(), i.max()),
    "masks": lambda x, y, i: (x.masked_fill(x > 0.5, -1.0), torch.tril(x), torch.triu(x, 1), (x > 0).sum(-1),
                              torch.bucketize(x, torch.linspace(-1, 1, 5, device=x.device))),
    "losses": lambda x, y, i: (F.cross_entropy(x, i[:8] % 16), F.log_softmax(x, -1), F.mse_loss(x, y),
                               F.binary_cross_entropy_with_logits(x, (y > 0).float())),
    "looped_reductions": lambda x, y, i: (x.repeat(1, 256).sum(-1), x.repeat(1, 256).var(-1),
                                          x.repeat(1, 256).amax(-1), torch.softmax(x.repeat(1, 256), -1)),
    "large_pointwise": lambda x, y, i: ((x.repeat(32, 16) * 2).t().contiguous() + 1,),
    "pooling": lambda x, y, i: (F.max_pool2d(x.view(1, 1, 8, 16), 2), F.avg_pool2d(x.view(1, 1, 8, 16), 2),
                                F.interpolate(x.view(1, 1, 8, 16), scale_factor=2, mode="bilinear")),
    "embedding_index": lambda x, y, i: (F.embedding(i % 8, x), x[i % 8].sum(0), x.index_select(0, i % 8)),
}


def run_ops(device):
    torch.manual_seed(0)
    x, y = torch.randn(8, 16, device=device), torch.randn(8, 16, device=device)
    i = torch.randint(0, 40, (16,), device=device)
    failed = {}
    for name, op in OPS.items():
        torch._dynamo.reset()
        try:
            want = op(x, y, i)
            got = torch.compile(op)(x, y, i)
            for g, w in zip(got, want):
                tol = dict(rtol=1e-2, atol=1e-2) if name == "low_precision" else FP32_TOL
                torch.testing.assert_close(g, w, **tol, equal_nan=True)
        except Exception as e:  # noqa: BLE001 - collected and reported together
            failed[name] = "".join(traceback.format_exception_only(type(e), e)).strip()[:2000]
    if failed:
        raise OpsFailed(failed)


class OpsFailed(AssertionError):
    """The op groups that failed, by name (reported one by one in the result's `failed_ops`)."""

    def __init__(self, failed):
        super().__init__("ops that failed: " + json.dumps(failed, indent=1))
        self.failed = failed


def user_kernel(x, y):
    import triton

    from user_kernels import scaled_add_kernel

    out = torch.empty_like(x)
    scaled_add_kernel[(triton.cdiv(x.numel(), 64),)](torch.sigmoid(x), y, out, 0.5, x.numel(), BLOCK=64)
    return out * 2


def run_model(name, device):
    torch.manual_seed(0)
    d = device
    if name == "mlp":
        run_forward(MLP().to(d), (torch.randn(4, 16, device=d),))
    elif name == "rmsnorm_swiglu":
        run_forward(RMSNormSwiGLU().to(d), (torch.randn(4, 16, device=d),))
    elif name == "attention":
        import torch._inductor.config as ic

        ic.pattern_matcher = False  # else inductor replaces the softmax attention by aten's SDPA: no Triton kernel
        run_forward(attention, tuple(torch.randn(1, 2, 8, 16, device=d) for _ in range(3)))
    elif name == "reductions":
        run_forward(reductions, (torch.randn(4, 24, device=d),))
    elif name == "random":
        run_random(d)
    elif name == "ops":
        run_ops(d)
    elif name == "user_kernel":
        run_forward(user_kernel, (torch.randn(100, device=d), torch.randn(100, device=d)))
        assert "scaled_add_kernel" in generated + [n for n, _ in launchers], "the user kernel was not compiled"
    elif name == "train_block":
        run_training(lambda: Block().to(d), torch.randn(2, 8, 16, device=d))
    elif name == "train_hf":
        ids = torch.randint(0, 64, (2, 8), device=d)

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.m = hf_model().to(d)

            def forward(self, ids):
                return self.m(input_ids=ids, labels=ids).loss

        run_training(LM, ids)
    else:
        raise SystemExit(f"unknown model {name}")


def foreign_triton_modules():
    """`triton` modules loaded from outside tessel (an installed Triton)."""
    import tessel

    root = os.path.dirname(os.path.abspath(tessel.__file__))
    out = []
    for n, m in list(sys.modules.items()):
        if n == "triton" or n.startswith("triton."):
            f = getattr(m, "__file__", None)
            if f and not os.path.abspath(f).startswith(root):
                out.append(f"{n}: {f}")
    return out


def main():
    name, device = sys.argv[1], sys.argv[2]
    configure(device)
    count_generated()
    from tessel import _compiler_face

    result = {"model": name, "device": device, "ok": False, "error": None}
    try:
        run_model(name, device)
        result["ok"] = True
    except ImportError as e:
        result["skip"] = f"{type(e).__name__}: {e}"
    except BaseException as e:  # noqa: BLE001 - reported to the test
        result["error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
        result["traceback"] = traceback.format_exc()
        if isinstance(e, OpsFailed):
            result["failed_ops"] = e.failed
    import triton

    result["generated"] = generated
    result["launchers"] = launchers
    result["workers"] = torch._inductor.config.compile_threads > 1
    result["compiled"] = list(_compiler_face.compiled_names)
    result["triton_is_tessel"] = triton.compile is _compiler_face.compile
    result["foreign"] = foreign_triton_modules()
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
