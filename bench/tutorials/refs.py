"""The numerics the cases' problems and references share: constants, integer helpers, float64 views, random
inputs, and the error bounds by output dtype."""

from __future__ import annotations

import numpy as np

LOG2E = 1.4426950408889634
H100_SMS = 132
B200_SMS = 148  # what `multi_processor_count` gives the tutorials on a capability-10 GPU


def cdiv(a, b):
    return -(-a // b)


def f64(a):
    return np.asarray(a, dtype=np.float64)


def randn(rng, shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


# Relative-error bounds (||got - want|| / ||want||) by output dtype: the kernel rounds its results to it.
TOL = {"fp32": 2e-5, "fp16": 2e-3, "fp8": 0.08}
