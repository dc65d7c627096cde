"""Fused softmax: the second Triton tutorial's kernel, written for tessel.

A persistent kernel: each program walks rows `row_start, row_start + num_programs, ...` with a software-
pipelined `tl.range` loop, keeps one whole row in registers (BLOCK_SIZE is the next power of two of the row
length, the tail masked to -inf), and writes the normalized row back.
"""
import torch

import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # starting row of the program
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        # The stride is how much the pointer advances by one row
        row_start_ptr = input_ptr + row_idx * input_row_stride
        # BLOCK_SIZE is the next power of two of n_cols, so a row fits in one block
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        # Load the row, masking the columns past n_cols with -inf
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf')).to(tl.float32)
        # Subtract the maximum for numerical stability
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        # Write the row back
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


def softmax(x, num_programs=132):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 8 if BLOCK_SIZE >= 2048 else 4
    num_stages = 4
    y = torch.empty_like(x)
    grid = (min(num_programs, n_rows), )
    softmax_kernel[grid](y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE, num_stages,
                         num_warps=num_warps)
    return y


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(1823, 781, device="cuda")
    y_triton = softmax(x)
    y_torch = torch.softmax(x, axis=1)
    assert torch.allclose(y_triton, y_torch), (y_triton, y_torch)
