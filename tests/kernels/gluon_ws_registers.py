# Partitions asking for different register counts, written for tessel's tests: worker 0 a warpgroup of its own
# (152 registers), workers 1 and 2 sharing the next warpgroup (56 each), the default partition taking the rest.
# Each partition scales its own quarter of X into Y, so a warp that ran another partition's code, or did not get
# there at all, shows in Y.
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def _scale(X, Y, N: gl.constexpr, PART: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    offs = PART * N + gl.arange(0, N, layout=layout)
    gl.store(Y + offs, gl.load(X + offs) * (PART + 1))


@gluon.jit
def partitions_by_warpgroup(X, Y, N: gl.constexpr):
    gl.warp_specialize([(_scale, (X, Y, N, 0)), (_scale, (X, Y, N, 1)), (_scale, (X, Y, N, 2)),
                        (_scale, (X, Y, N, 3))], [4, 2, 2], [152, 56, 56])
