"""tessel.layouts: layouts from their Gluon spelling, their bases, evaluation, composition and inversion; conversion
plans, the plan executor's verdict, and bank conflicts; and, as a Hypothesis property, the classic blocked ↔
transposed blocked conversion (docs/layouts.md's "Property-testing layouts" section quotes it from this file)."""

from pathlib import Path

import pytest

pytest.importorskip("hypothesis")

# ----- the documented example -----
from hypothesis import given, settings, strategies as st

from tessel.layouts import Layout, check_conversion, strategies


@settings(max_examples=50, deadline=None)
@given(st.data(), strategies.shapes(), strategies.warps(), strategies.element_bits([16, 32]))
def test_blocked_to_transposed_blocked(data, shape, num_warps, bits):
    """Any blocked layout converts to its transposition and back, for 16- and 32-bit elements: every element lands
    where the destination layout puts it, and the shared-memory round trip (when there is one) has no bank
    conflicts."""
    row, col = data.draw(strategies.transposed_blocked(shape, num_warps))
    for src, dst in [(row, col), (col, row)]:
        check = check_conversion(Layout(src, shape), Layout(dst, shape), bits)
        assert check.ok, check.message
        assert check.plan.store_conflicts == check.plan.load_conflicts == 0, check.plan
# ----- end of the documented example -----

from tessel.layouts import (  # noqa: E402
    BlockedLayout,
    LayoutError,
    NVMMASharedLayout,
    SliceLayout,
    SwizzledSharedLayout,
    bank_conflicts,
    plan_conversion,
    transposed_blocked,
)

ROW = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
COL = BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1])
SHAPE = [64, 128]


def test_docs_layouts_quotes_the_property_verbatim():
    source = Path(__file__).read_text()
    start = source.index("from hypothesis import given")
    end = source.index("# ----- end of the documented example -----")
    example = source[start:end].rstrip()
    doc = Path(__file__).resolve().parents[2] / "docs" / "layouts.md"
    if not doc.exists():
        pytest.skip("no docs/layouts.md next to python/")
    section = doc.read_text().split("## Property-testing layouts")[1].split("\n## ")[0]
    assert f"```python\n{example}\n```" in section, f"docs/layouts.md does not quote:\n{example}"


def test_helpers_spell_gluon_layouts():
    assert ROW == "BlockedLayout([1,8],[4,8],[4,1],[1,0])"
    assert transposed_blocked([1, 8], [4, 8], [4, 1], [1, 0]) == COL
    assert SliceLayout(0, ROW) == "SliceLayout(0,BlockedLayout([1,8],[4,8],[4,1],[1,0]))"
    assert NVMMASharedLayout(128, 16) == "NVMMASharedLayout(128,16)"
    assert NVMMASharedLayout(64, 16, transposed=True) == "NVMMASharedLayout(64,16,transposed=True)"
    assert Layout(SliceLayout(0, ROW), [128]).shape == (128,)
    assert Layout(NVMMASharedLayout(128, 16), [64, 64]).in_dims == {"offset": 4096, "block": 1}


def test_bases_and_apply():
    layout = Layout("BlockedLayout([1,4],[8,4],[4,1],[1,0])", shape=[64, 128])
    assert layout.shape == (64, 128)
    assert layout.out_dims == {"dim0": 64, "dim1": 128}
    assert layout.in_dims == {"register": 64, "lane": 32, "warp": 4, "block": 1}
    bases = layout.bases()
    assert list(bases) == ["register", "lane", "warp", "block"]
    assert bases["register"][:2] == [[0, 1], [0, 2]]
    assert bases["lane"] == [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]]
    assert bases["warp"] == [[8, 0], [16, 0]]
    assert bases["block"] == []
    assert layout.apply(register=1, lane=2) == (0, 9)
    assert layout(lane=4, warp=1) == (9, 0)
    # apply is linear over F2: the coordinates are the XOR of the bases of the index bits that are set.
    for r, lane, w in [(0, 0, 0), (5, 17, 3), (31, 31, 1), (12, 6, 2)]:
        want = [0, 0]
        for dim, x in [("register", r), ("lane", lane), ("warp", w)]:
            for bit, basis in enumerate(bases[dim]):
                if x >> bit & 1:
                    want = [a ^ b for a, b in zip(want, basis)]
        assert layout.apply(register=r, lane=lane, warp=w) == tuple(want)
    with pytest.raises(LayoutError, match="no in-dim `thread`"):
        layout.apply(thread=0)
    with pytest.raises(LayoutError, match="out of range"):
        layout.apply(lane=32)


def test_compose_and_invert():
    tile = Layout(ROW, shape=[16, 64])  # exactly one CTA tile: every element once
    assert tile.is_invertible()
    inverse = tile.invert()
    assert inverse.in_dims == {"dim0": 16, "dim1": 64}
    identity = tile.compose(inverse)
    for r, lane, w in [(0, 0, 0), (3, 9, 1), (7, 31, 3)]:
        coords = tile.apply(register=r, lane=lane, warp=w)
        assert inverse.apply(dim0=coords[0], dim1=coords[1]) == (r, lane, w, 0)
        assert identity.apply(register=r, lane=lane, warp=w) == (r, lane, w, 0)
    # A tensor smaller than the tile is broadcast: lanes hold copies, so the layout has no inverse.
    small = Layout(ROW, shape=[8, 8])
    assert not small.is_injective() and small.is_surjective()
    with pytest.raises(LayoutError, match="not invertible"):
        small.invert()
    with pytest.raises(LayoutError, match="compose"):
        tile.compose(tile)


def test_from_bases():
    swap = Layout.from_bases({"x": [[0, 1], [0, 2], [1, 0]]}, {"a": 2, "b": 4})
    assert swap.bases() == {"x": [[0, 1], [0, 2], [1, 0]]}
    assert swap.apply(x=5) == (1, 1)
    assert swap.invert().invert() == swap
    assert swap == Layout.from_bases({"x": [[0, 1], [0, 2], [1, 0]]}, {"a": 2, "b": 4})
    with pytest.raises(LayoutError, match="size 4"):
        Layout.from_bases({"x": [[0, 4]]}, {"a": 2, "b": 4})


def test_plan_conversion_summaries():
    plan = plan_conversion(ROW, COL, 16, shape=SHAPE)
    assert plan.kind == "shared"
    assert (plan.store_conflicts, plan.load_conflicts) == (0, 0)
    assert plan.vector_width >= 2 and plan.access_bytes == plan.vector_width * 2
    assert plan.scratch_bytes > 0 and plan.reps >= 1 and plan.barrier == "cta"
    assert "shared" in str(plan).lower()
    assert plan_conversion(ROW, ROW, 32, shape=SHAPE).kind == "noop"
    # The same tile with the other dim fastest: only the lanes of a warp exchange data.
    assert plan_conversion(ROW, "BlockedLayout([1,8],[4,8],[4,1],[0,1])", 32, shape=[16, 64]).kind == "shuffle"
    split = plan_conversion(ROW, COL, 16, shape=SHAPE, max_scratch_bytes=8192)
    assert split.scratch_bytes <= 8192 < plan.scratch_bytes and split.reps > 1
    with pytest.raises(LayoutError, match="more than max_scratch_bytes"):
        plan_conversion(ROW, COL, 16, shape=SHAPE, max_scratch_bytes=1024)


def test_check_conversion_runs_the_plan():
    row, col = Layout(ROW, SHAPE), Layout(COL, SHAPE)
    check = check_conversion(row, col, 32, cases=3)
    assert check.ok and check.message is None and check
    assert check.plan.kind == "shared"


def test_a_wrong_plan_is_caught():
    """The checker is not vacuous: a plan with one data movement redirected on purpose lands elements in the
    wrong registers, and the check says which."""
    check = check_conversion(ROW, COL, 16, shape=SHAPE, _corrupt=True)
    assert not check.ok and not check
    assert "lands in the destination at" in check.message
    assert "destination registers are wrong" in check.message


def test_a_conversion_between_different_shapes_raises():
    with pytest.raises(LayoutError):
        check_conversion(Layout(ROW, [64, 128]), Layout(COL, [128, 64]), 16)
    with pytest.raises(LayoutError):
        plan_conversion(Layout(ROW, [64, 128]), Layout(ROW, [64, 64]), 16)
    with pytest.raises(LayoutError):
        plan_conversion(ROW, COL, 12, shape=SHAPE)


def test_bank_conflicts():
    plain = SwizzledSharedLayout(1, 1, 1, [1, 0])  # row-major, no swizzle
    rows = bank_conflicts(BlockedLayout([1, 4], [2, 16], [4, 1], [1, 0]), plain, 32, shape=SHAPE)
    assert rows.conflicts == 0 and rows.wavefronts == rows.ideal_wavefronts
    # Column-major threads storing into an unswizzled row-major buffer: every lane of a phase hits one bank.
    cols = bank_conflicts(COL, plain, 32, shape=SHAPE)
    assert cols.conflicts > 0 and cols.max_conflicts_per_instruction > 0
    swizzled = bank_conflicts(COL, SwizzledSharedLayout(8, 1, 8, [0, 1]), 32, shape=SHAPE)
    assert swizzled.conflicts < cols.conflicts


def test_errors_carry_the_layout_librarys_message():
    with pytest.raises(LayoutError, match="unknown layout `BlokedLayout`"):
        Layout("BlokedLayout([1,4],[8,4],[4,1],[1,0])", [64, 128])
    with pytest.raises(LayoutError, match="does not imply a shape"):
        Layout(ROW)
    with pytest.raises(ValueError):  # LayoutError is a ValueError
        Layout("BlockedLayout([1,4],[8,4],[4,1],[1,0])", [64, 100])


def test_strategies_draw_valid_layouts():
    @settings(max_examples=30, deadline=None)
    @given(st.data(), strategies.shapes(rank=3, min_size=4, max_elements=1 << 12), strategies.warps())
    def draw(data, shape, num_warps):
        assert len(shape) == 3 and all(n & (n - 1) == 0 for n in shape)
        layout = Layout(data.draw(strategies.blocked(shape, num_warps)), shape)
        assert layout.in_dims["warp"] == num_warps and layout.in_dims["lane"] == 32
        assert layout.is_surjective()

    draw()
