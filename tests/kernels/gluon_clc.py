# Cluster launch control (Blackwell), written for tessel's tests: a persistent kernel whose programs steal the
# tiles of programs not yet started, recording which program did each tile and how often; and the misuses the
# interpreter names: a response read before its barrier phase, a request after a failed response, a canceled
# program's response left unread, a request whose barrier nobody arms.
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import clc, mbarrier


@gluon.jit
def clc_steal(X, Y, visits, owner, n, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    response = gl.allocate_shared_memory(gl.int64, [2], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    tile = gl.program_id(0)
    has_work = gl.to_tensor(True)
    phase = gl.to_tensor(0)
    while has_work:
        # Asked before the tile's work, so the answer is there when the tile is done.
        clc.try_cancel(response, bar)
        mbarrier.expect(bar, 16)
        offs = tile * BLOCK + gl.arange(0, BLOCK, layout=layout)
        mask = offs < n
        x = gl.load(X + offs, mask=mask)
        gl.store(Y + offs, x * 2.0 + 1.0, mask=mask)
        gl.atomic_add(visits + tile, 1)
        gl.store(owner + tile, gl.program_id(0))
        mbarrier.wait(bar, phase)
        result = clc.load_result(response)
        has_work = result.is_canceled()
        tile = result.program_id(0)
        phase = phase ^ 1
    mbarrier.invalidate(bar)


@gluon.jit
def clc_read_early(out):
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    response = gl.allocate_shared_memory(gl.int64, [2], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    clc.try_cancel(response, bar)
    mbarrier.expect(bar, 16)
    result = clc.load_result(response)
    gl.store(out, result.program_id(0))
    mbarrier.wait(bar, 0)


@gluon.jit
def clc_ask_twice(out):
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    response = gl.allocate_shared_memory(gl.int64, [2], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    for i in range(2):
        clc.try_cancel(response, bar)
        mbarrier.expect(bar, 16)
        mbarrier.wait(bar, i & 1)
        result = clc.load_result(response)
        gl.store(out + i, result.program_id(0))


@gluon.jit
def clc_unread(out):
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    response = gl.allocate_shared_memory(gl.int64, [2], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    clc.try_cancel(response, bar)
    mbarrier.expect(bar, 16)
    mbarrier.wait(bar, 0)
    gl.store(out, gl.program_id(0))


@gluon.jit
def clc_unarmed(out):
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    response = gl.allocate_shared_memory(gl.int64, [2], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    clc.try_cancel(response, bar)
    mbarrier.wait(bar, 0)
    gl.store(out, clc.load_result(response).program_id(0))


@gluon.jit
def clc_small_buffer(out):
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    response = gl.allocate_shared_memory(gl.int32, [2], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    clc.try_cancel(response, bar)
