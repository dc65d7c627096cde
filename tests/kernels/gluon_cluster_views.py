# Views of a shared buffer split over the 2 CTAs of a cluster (rows: cga_layout=[[1, 0]]): column slices, which
# each CTA takes of its own rows, and the transposed view, whose CTAs split its columns; and the buffers of a
# multi-buffered allocation the CTAs split (each CTA its half of every buffer). tests/cluster_views.rs.
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def views(x_ptr, out_ptr):
    L: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0], cga_layout=[[1, 0]])
    H: gl.constexpr = gl.BlockedLayout([1, 4], [16, 2], [4, 1], [1, 0], cga_layout=[[1, 0]])
    T: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0], cga_layout=[[0, 1]])
    S: gl.constexpr = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float32, cga_layout=[[1, 0]])
    r = gl.arange(0, 64, gl.SliceLayout(1, L))
    c = gl.arange(0, 64, gl.SliceLayout(0, L))
    smem = gl.allocate_shared_memory(gl.float32, [64, 64], S, gl.load(x_ptr + r[:, None] * 64 + c[None, :]))
    rh = gl.arange(0, 64, gl.SliceLayout(1, H))
    ch = gl.arange(0, 32, gl.SliceLayout(0, H))
    for i in gl.static_range(2):
        half = smem.slice(i * 32, 32, dim=1).load(H)
        gl.store(out_ptr + rh[:, None] * 64 + i * 32 + ch[None, :], half)
    rt = gl.arange(0, 64, gl.SliceLayout(1, T))
    ct = gl.arange(0, 64, gl.SliceLayout(0, T))
    gl.store(out_ptr + 4096 + rt[:, None] * 64 + ct[None, :], smem.permute((1, 0)).load(T))


@gluon.jit
def row_slice(x_ptr, out_ptr):
    # A slice of rows, the dim the CTAs split: each CTA's part would start elsewhere.
    L: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0], cga_layout=[[1, 0]])
    S: gl.constexpr = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float32, cga_layout=[[1, 0]])
    r = gl.arange(0, 64, gl.SliceLayout(1, L))
    c = gl.arange(0, 64, gl.SliceLayout(0, L))
    smem = gl.allocate_shared_memory(gl.float32, [64, 64], S, gl.load(x_ptr + r[:, None] * 64 + c[None, :]))
    gl.store(out_ptr + r[:, None] * 64 + c[None, :], smem.slice(0, 32, dim=0).load(L))


@gluon.jit
def buffers(x_ptr, out_ptr):
    # Two buffers of 256 values, split over the CTAs along the values (`cga_layout=[[0, 1]]`: each CTA 128 of each
    # buffer), written and read back through `.index(i)`; the layout names the buffers' dim, one rank more than a
    # buffer's.
    L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0], cga_layout=[[1]])
    S: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0], cga_layout=[[0, 1]])
    r = gl.arange(0, 256, L)
    smem = gl.allocate_shared_memory(gl.float32, [2, 256], S)
    for i in gl.static_range(2):
        smem.index(i).store(gl.load(x_ptr + i * 256 + r))
    for i in gl.static_range(2):
        gl.store(out_ptr + (1 - i) * 256 + r, smem.index(i).load(L))
