"""A compiled kernel's `asm["cubin"]` and `asm["sass"]` (Triton's layout of `cuobjdump -sass`), which tutorial 02
reads for its loads and stores."""

import numpy as np
import pytest

from tessel import _sass, gluon
from tessel._sass import find_ptxas
from tessel.gluon import language as gl


@gluon.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: gl.constexpr, layout: gl.constexpr):
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    mask = offs < n
    gl.store(out_ptr + offs, gl.load(x_ptr + offs, mask=mask), mask=mask)


# Part of `cuobjdump -sass` of copy_kernel for sm_90a: each instruction, then its control word on a line of its
# own; the tail of the kernel is a branch to itself.
LISTING = """
\tcode for sm_90a
\t.target\tsm_90a

\t\tFunction : copy_kernel
\t.headerflags\t@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                   /* 0x00000a00ff017b82 */
                                                                            /* 0x000fe20000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;                       /* 0x0000000000007919 */
                                                                            /* 0x000e2e0000002100 */
        /*0020*/              @!P0 STG.E.128 desc[UR4][R2.64], R8 ;         /* 0x0000000802008986 */
                                                                            /* 0x0041e2000c101d04 */
        /*0030*/                   EXIT ;                                   /* 0x000000000000794d */
                                                                            /* 0x000fea0003800000 */
        /*0040*/                   BRA 0x40;                                /* 0xfffffffc00fc7947 */
                                                                            /* 0x000fc0000383ffff */
"""


def test_the_control_word_decodes_as_wait_read_write_yield_stall():
    def word(wait, read, write, no_yield, stall):
        return wait << 52 | read << 49 | write << 46 | no_yield << 45 | stall << 41

    assert _sass.control(word(0, 7, 7, 1, 1)) == "--:-:-:-:1"
    assert _sass.control(word(0b010000, 1, 2, 1, 1)) == "16:1:2:-:1"
    assert _sass.control(word(0b000001, 7, 0, 0, 0xC)) == "01:-:0:Y:c"
    # Real control words (S2R sets write barrier 0 and stalls 7 cycles; the store waits on barrier 2).
    assert _sass.control(0x000E2E0000002100) == "--:-:0:-:7"
    assert _sass.control(0x0041E2000C101D04) == "04:0:-:-:1"


def test_the_listing_is_laid_out_as_tritons():
    assert _sass.layout(LISTING).splitlines() == [
        "Function:copy_kernel",
        "--:-:-:-:1\tLDC R1, c[0x0][0x28];",
        "--:-:0:-:7\tS2R R0, SR_TID.X;",
        "04:0:-:-:1\t@!P0 STG.E.128 desc[UR4][R2.64], R8;",
        "--:-:-:-:5\tEXIT;",
        "LBB0:",
        "--:-:-:Y:0\tBRA LBB0;",
    ]


def test_without_cuobjdump_sass_says_what_it_needs(monkeypatch):
    monkeypatch.setattr(_sass, "find_tool", lambda name: None)
    with pytest.raises(RuntimeError, match="needs cuobjdump"):
        _sass.disassemble(b"")


@pytest.mark.skipif(find_ptxas() is None or _sass.find_tool("cuobjdump") is None,
                    reason="needs ptxas and cuobjdump (a CUDA toolkit)")
def test_the_layout_sets_the_width_of_the_loads_in_the_sass():
    x = np.zeros(1024, np.float32)
    widths = {}
    for per_thread in (1, 4):
        layout = gl.BlockedLayout([per_thread], [32], [4], [0])
        k = copy_kernel.warmup(x, x.copy(), 1024, BLOCK=1024, layout=layout, grid=(1,))
        assert k.asm["cubin"][:4] == b"\x7fELF"
        loads = [line.split("\t")[1] for line in k.asm["sass"].splitlines() if "LDG.E" in line]
        widths[per_thread] = {ins.split()[1] if ins.startswith("@") else ins.split()[0] for ins in loads}
    assert widths == {1: {"LDG.E"}, 4: {"LDG.E.128"}}
