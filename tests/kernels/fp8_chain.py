import triton
import triton.language as tl


@triton.jit
def fp8_chain(a_ptr, bt_ptr, vt_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
              D: tl.constexpr):
    # Attention's two fp8 dots without the softmax: P = (A @ B) converted to fp8 in registers, then P @ V with P
    # as the second wgmma's A operand in registers (8-bit: four K elements to a register, across lanes from the
    # accumulator's layout). B and V come transposed, K-major, as fp8 wgmma needs.
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    rd = tl.arange(0, D)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    bt = tl.load(bt_ptr + rn[:, None] * K + rk[None, :])
    s = tl.dot(a, tl.trans(bt))
    p = (s * 0.125).to(tl.float8e5)
    vt = tl.load(vt_ptr + rd[:, None] * N + rn[None, :])
    o = tl.dot(p, tl.trans(vt))
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], o)
