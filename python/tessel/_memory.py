"""Host memory for the interpreter: numpy arrays and CPU torch tensors as byte buffers.

A pointer argument is the array's first element; the kernel may reach any element of the array through it,
so the buffer handed to the interpreter is the span of memory the array covers (for a strided view, from its
first to its last element, gaps included), and after the run that span is copied back into the same memory.
Arguments over the same span share one buffer (an in-place kernel that reads and writes one array sees its
own stores); distinct arguments over overlapping memory are refused, since the interpreter cannot alias them.
"""

from __future__ import annotations

import sys

import numpy as np

# numpy has no bfloat16 or fp8: such torch tensors travel as same-sized integers with the dtype named apart.
_RAW_INT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def is_torch_tensor(v) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


def is_cuda_tensor(v) -> bool:
    return is_torch_tensor(v) and v.is_cuda


def tensor_dtype_name(v) -> str:
    """The element type's Triton name: `float32`, `bfloat16`, `int1` for bool, ..."""
    if is_torch_tensor(v):
        name = str(v.dtype).removeprefix("torch.")
    else:
        name = np.dtype(v.dtype).name
    return "int1" if name == "bool" else name


def data_ptr(v) -> int:
    if is_torch_tensor(v):
        return v.data_ptr()
    return v.__array_interface__["data"][0]


def _as_numpy(v) -> np.ndarray:
    """A numpy view of the same memory."""
    if is_torch_tensor(v):
        if v.is_cuda:
            raise ValueError("a CUDA tensor cannot be viewed on the host")
        t = v.detach()
        try:
            return t.numpy()
        except TypeError:  # bfloat16, fp8: view the bits
            import torch

            ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
            return t.view(ints[t.element_size()]).numpy()
    return np.asarray(v)


def _span(a: np.ndarray) -> np.ndarray:
    """A 1-d view of every element from the array's first to its last one (gaps of a strided view included)."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    item = a.itemsize
    if any(s < 0 for s in a.strides) or any(s % item for s in a.strides):
        raise ValueError(
            f"the interpreter takes arrays with non-negative strides that are multiples of the element size, got "
            f"strides {a.strides}"
        )
    if a.size == 0:
        return a.reshape(-1)
    last = sum((n - 1) * s for n, s in zip(a.shape, a.strides))
    return np.lib.stride_tricks.as_strided(a, shape=(last // item + 1,), strides=(item,))


class HostRegions:
    """The buffers of one interpreter launch."""

    def __init__(self):
        self._regions = []  # (start address, byte length, dtype name, 1-d numpy view)
        self._cuda = {}  # (device address, elements, dtype) -> (device span, host copy)

    def _host_copy(self, t):
        """A CUDA tensor (under TRITON_INTERPRET=1): the device span it covers, copied to the host (and copied back
        by `write_back`). Not tested here: the machine this was written on has no GPU and no torch."""
        import torch

        span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) if t.numel() else 0
        key = (t.data_ptr(), span, str(t.dtype))
        if key not in self._cuda:
            device = torch.as_strided(t.detach(), (span,), (1,))
            self._cuda[key] = (device, device.cpu())
        return self._cuda[key][1]

    def add(self, v) -> int:
        """The index of the buffer holding `v`'s memory."""
        dt = tensor_dtype_name(v)
        if is_cuda_tensor(v):
            v = self._host_copy(v)
        flat = _span(_as_numpy(v))
        if flat.dtype.kind not in "biufc" or flat.dtype.itemsize not in _RAW_INT:
            raise TypeError(f"the interpreter cannot take arrays of {flat.dtype}")
        start, length = flat.__array_interface__["data"][0], flat.nbytes
        for i, (s, n, d, _) in enumerate(self._regions):
            if s == start and n == length and d == dt:
                return i
            if length and n and s < start + length and start < s + n:
                raise ValueError(
                    "two kernel arguments overlap in memory without being the same array; the interpreter cannot "
                    "alias them (pass one array, or copies)"
                )
        self._regions.append((start, length, dt, flat))
        return len(self._regions) - 1

    def buffers(self):
        """(dtype name, bytes) of each buffer, in order."""
        return [(d, flat.tobytes()) for (_, _, d, flat) in self._regions]

    def write_back(self, outs):
        """Copies the interpreter's buffers back into the arrays' memory."""
        for (_, _, _, flat), b in zip(self._regions, outs):
            # Unchanged buffers are left alone (inputs may be read-only views).
            if flat.size and flat.tobytes() != b:
                raw = _RAW_INT[flat.dtype.itemsize]
                flat.view(raw)[...] = np.frombuffer(b, dtype=raw)
        for device, host in self._cuda.values():
            device.copy_(host)
