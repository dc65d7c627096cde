"""Element-wise addition of two vectors, with the host code that launches, checks and times it.

Each program instance handles one BLOCK-wide slice; the last slice is masked.
"""

import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def add_kernel(a_ptr,  # first input
               b_ptr,  # second input
               c_ptr,  # output
               n,  # number of elements
               BLOCK: tl.constexpr,  # elements per program
               ):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offs < n
    a = tl.load(a_ptr + offs, mask=in_bounds)
    b = tl.load(b_ptr + offs, mask=in_bounds)
    tl.store(c_ptr + offs, a + b, mask=in_bounds)


def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    c = torch.empty_like(a)
    assert a.device == DEVICE and b.device == DEVICE and c.device == DEVICE, "inputs must live on the GPU"
    n = c.numel()
    # The grid may be a callable of the launch's meta-parameters.
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]), )
    add_kernel[grid](a, b, c, n, BLOCK=1024)
    return c


torch.manual_seed(0)
size = 98_432
a = torch.rand(size, device=DEVICE)
b = torch.rand(size, device=DEVICE)
expected = a + b
actual = add(a, b)
print(f"max |torch - triton| = {torch.max(torch.abs(expected - actual)):.3e} over {size:,} elements")


@triton.testing.perf_report(
    triton.testing.Benchmark(
        x_names=["size"],
        x_vals=[2**i for i in range(12, 28)],
        x_log=True,
        line_arg="provider",
        line_vals=["triton", "torch"],
        line_names=["Triton", "Torch"],
        styles=[("blue", "-"), ("green", "-")],
        ylabel="GB/s",
        plot_name="vector-add",
        args={},
    ))
def benchmark(size, provider):
    a = torch.rand(size, device=DEVICE, dtype=torch.float32)
    b = torch.rand(size, device=DEVICE, dtype=torch.float32)
    quantiles = [0.5, 0.2, 0.8]
    fn = {"torch": lambda: a + b, "triton": lambda: add(a, b)}[provider]
    ms, min_ms, max_ms = triton.testing.do_bench(fn, quantiles=quantiles)
    bandwidth = lambda t: 3 * a.numel() * a.element_size() * 1e-9 / (t * 1e-3)
    return bandwidth(ms), bandwidth(max_ms), bandwidth(min_ms)


if __name__ == "__main__":
    benchmark.run(print_data=True, show_plots=False)
