"""The compile cache (runtime/src/cache/) as the package reaches it: a damaged entry is compiled again and
rewritten, never returned; a cache that cannot be written says so once and compiling goes on."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import tessel
import tessel.language as tl


@tessel.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + tl.load(y_ptr + offs, mask=offs < n),
             mask=offs < n)


def compiled(block):
    out = np.zeros(16, dtype=np.float32)
    return add_kernel.warmup(out, out, out, 16, BLOCK=block, grid=(1,))


def entry_files(cache, name):
    return sorted(cache.glob(f"*/{name}"))


def test_a_damaged_entry_is_compiled_again_and_rewritten(tmp_path, monkeypatch):
    cache = tmp_path / "compile-cache"
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(cache))
    k = compiled(16)
    whole = k.ptx("sm_80")
    [ptx] = entry_files(cache, "kernel.ptx")
    [meta] = entry_files(cache, "kernel.meta")
    assert ptx.read_text() == whole
    # The probe's damage: the PTX cut to 700 bytes (its entry point still declared), then metadata that parses but
    # says something impossible.
    ptx.write_text(whole[:700])
    assert ".entry add_kernel" in whole[:700]
    assert k.ptx("sm_80") == whole
    assert ptx.read_text() == whole
    meta.write_text(meta.read_text().replace("num_warps=4", "num_warps=999999"))
    assert k.ptx("sm_80") == whole
    assert "num_warps=4" in meta.read_text()
    # A directory where the PTX belongs.
    ptx.unlink()
    (ptx / "inside").mkdir(parents=True)
    assert k.ptx("sm_80") == whole
    assert Path(ptx).read_text() == whole


UNWRITABLE = textwrap.dedent('''
    import numpy as np
    import tessel
    import tessel.language as tl

    @tessel.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    x = np.zeros(16, dtype=np.float32)
    for block in (16, 32):
        assert ".entry k" in k.warmup(x, 16, BLOCK=block, grid=(1,)).ptx("sm_80")
    k[(1,)](x, 16, BLOCK=16)
    assert (x == 1).all()
''')


def test_an_unwritable_compile_cache_warns_once(tmp_path):
    # Its own process: the warning is once per process. A file in place of the cache stops root too.
    (tmp_path / "cache").write_text("a file")
    script = tmp_path / "unwritable.py"
    script.write_text(UNWRITABLE)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False,
                       env={**os.environ, "TESSEL_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("cannot write the kernel cache") == 1, r.stderr
    assert str(tmp_path / "cache") in r.stderr


def test_cache_keys_name_the_installed_compiler_not_the_interpreter():
    # Keys carry the compiler's identity. In this process the executable is Python, which a `pip install` of a new
    # tessel leaves as it is: the identity must name the extension module, or the new compiler would be served
    # the old one's kernels.
    ident = tessel._tessel.compiler_id()
    so = Path(tessel._tessel.__file__).resolve()
    assert str(so) in ident or tessel._tessel.__file__ in ident, ident
    assert os.path.realpath(sys.executable) not in ident
