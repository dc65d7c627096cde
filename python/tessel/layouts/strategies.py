"""Hypothesis strategies for layouts and the sizes they are built from, mirroring the Rust crate's
`tessel_layouts::testing` (with its `proptest` feature). Layouts are drawn as Gluon spellings, to be built with
`tessel.layouts.Layout(spelling, shape)`:

    from hypothesis import given
    from tessel.layouts import Layout, check_conversion, strategies

    @given(strategies.shapes(), strategies.warps(), strategies.element_bits(), st.data())
    def test_any_blocked_converts(shape, num_warps, bits, data):
        src = Layout(data.draw(strategies.blocked(shape, num_warps)), shape)
        ...

Importing this module needs Hypothesis (`pip install hypothesis`); `tessel.layouts` itself does not.
"""

from __future__ import annotations

from typing import Sequence

from hypothesis import strategies as st

from . import BlockedLayout, transposed_blocked as _transposed

__all__ = ["blocked", "blocked_params", "element_bits", "shapes", "split", "transposed_blocked", "warps"]


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise ValueError(f"{n} is not a power of two")
    return n.bit_length() - 1


def shapes(rank: int = 2, min_size: int = 16, max_size: int = 256, max_elements: int = 1 << 14):
    """Tensor shapes of `rank` dims, each a power of two from `min_size` to `max_size`, with at most
    `max_elements` elements in all."""
    lo, hi, budget = _log2(min_size), _log2(max_size), _log2(max_elements)
    if lo * rank > budget:
        raise ValueError(f"shapes: {rank} dims of at least {min_size} exceed max_elements = {max_elements}")

    @st.composite
    def draw(draw):
        left, dims = budget, []
        for i in range(rank):
            x = draw(st.integers(lo, min(hi, left - lo * (rank - 1 - i))))
            dims.append(x)
            left -= x
        return [1 << x for x in draw(st.permutations(dims))]

    return draw()


def warps(choices: Sequence[int] = (1, 2, 4, 8)):
    """Warps per CTA."""
    return st.sampled_from(list(choices))


def element_bits(choices: Sequence[int] = (8, 16, 32)):
    """Element widths in bits."""
    return st.sampled_from(list(choices))


def split(total: int, rank: int):
    """`rank` powers of two whose product is `total` (a power of two), e.g. threads per warp over the dims."""
    bits = _log2(total)

    @st.composite
    def draw(draw):
        cuts = sorted(draw(st.lists(st.integers(0, bits), min_size=rank - 1, max_size=rank - 1)))
        edges = [0, *cuts, bits]
        return [1 << (edges[i + 1] - edges[i]) for i in range(rank)]

    return draw()


def blocked_params(shape: Sequence[int], num_warps: int, warp_size: int = 32, max_per_thread: int = 8):
    """`(size_per_thread, threads_per_warp, warps_per_cta, order)` of a blocked layout for a tensor of `shape` with
    `num_warps` warps of `warp_size` lanes: each a list with one power of two per dim (at most `max_per_thread`
    elements per thread along a dim), `order` a permutation of the dims. The layout's CTA tile may be larger than
    the tensor (the layout then broadcasts) or smaller (it repeats)."""
    rank = len(shape)
    spt = st.lists(st.sampled_from([1 << i for i in range(_log2(max_per_thread) + 1)]), min_size=rank,
                   max_size=rank)
    order = st.permutations(list(range(rank)))
    return st.tuples(spt, split(warp_size, rank), split(num_warps, rank), order)


def blocked(shape: Sequence[int], num_warps: int, warp_size: int = 32, max_per_thread: int = 8):
    """Spellings of blocked layouts (see `blocked_params`)."""
    return blocked_params(shape, num_warps, warp_size, max_per_thread).map(lambda p: BlockedLayout(*p))


def transposed_blocked(shape: Sequence[int], num_warps: int, warp_size: int = 32, max_per_thread: int = 8):
    """Pairs `(blocked, transposed)` of rank-2 blocked layouts (see `blocked_params`), where `transposed` is
    `blocked` with its dims swapped (`tessel.layouts.transposed_blocked`): what one layout keeps contiguous along
    one dim, the other keeps contiguous along the other, the classic conversion through shared memory."""
    if len(shape) != 2:
        raise ValueError(f"transposed_blocked: shape {list(shape)} is not rank 2")
    return blocked_params(shape, num_warps, warp_size, max_per_thread).map(
        lambda p: (BlockedLayout(*p), _transposed(*p)))
