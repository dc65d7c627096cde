"""Vector addition: the first Triton tutorial's kernel, written for tessel.

Each program adds one BLOCK_SIZE-element block of `x` and `y`; the mask keeps the last program inside the
`n_elements` bounds when the length is not a multiple of the block.
"""
import torch

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr,  # pointer to the first input vector
               y_ptr,  # pointer to the second input vector
               output_ptr,  # pointer to the output vector
               n_elements,  # size of the vector
               BLOCK_SIZE: tl.constexpr,  # elements each program processes
               ):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor):
    output = torch.empty_like(x)
    assert x.device == y.device == output.device
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


if __name__ == "__main__":
    torch.manual_seed(0)
    size = 98432
    x = torch.rand(size, device="cuda")
    y = torch.rand(size, device="cuda")
    output_torch = x + y
    output_triton = add(x, y)
    print(f"max difference: {torch.max(torch.abs(output_torch - output_triton))}")
