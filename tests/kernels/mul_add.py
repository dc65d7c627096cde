# `x * y + w` on fp32: one `fma` under Triton's default `enable_fp_fusion=True`, a multiply and an add with it
# off (`tests/launch_config.rs`, `tests/cli_kernel.rs`).
import triton
import triton.language as tl


@triton.jit
def mul_add(x_ptr, y_ptr, w_ptr, z_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    w = tl.load(w_ptr + offs)
    tl.store(z_ptr + offs, x * y + w)
