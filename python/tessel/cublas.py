"""`triton._C.libtriton.nvidia.cublas` for `python -m tessel`: the cuBLAS baseline the tutorials time beside
their kernels (09's `device_blas.matmul(a, b, c)`), run through torch, whose CUDA matmul is a cuBLAS/cuBLASLt
GEMM. Only what torch runs on cuBLAS as-is is provided: fp16, bf16 and fp32; fp8 and the block-scaled GEMMs
(Triton binds cuBLASLt's fp8 and MX/NVFP4 paths directly) raise NotImplementedError naming what is missing."""

from __future__ import annotations


class CublasLt:
    """`CublasLt(workspace)`: torch manages cuBLAS's workspace itself; the tensor is kept, unused."""

    def __init__(self, workspace):
        self.workspace = workspace

    def matmul(self, a, b, c):
        """C = A @ B^T, as Triton's binding computes it: A is M x K, B is N x K, C is M x N."""
        import torch

        if a.dtype not in (torch.float16, torch.bfloat16, torch.float32) or b.dtype != a.dtype:
            raise NotImplementedError(
                f"cuBLAS matmul of {a.dtype} x {b.dtype} under tessel: torch runs fp16/bf16/fp32 GEMMs on cuBLAS; "
                "Triton's direct cuBLASLt fp8 binding is not provided"
            )
        torch.matmul(a, b.T, out=c)

    def block_scaled_matmul_mxfp8(self, *args, **kwargs):
        raise NotImplementedError("cuBLASLt block-scaled (mxfp8) matmul is not provided under tessel")

    def block_scaled_matmul_nvfp4(self, *args, **kwargs):
        raise NotImplementedError("cuBLASLt block-scaled (nvfp4) matmul is not provided under tessel")
