"""A compiled kernel's machine code, offline: `asm["cubin"]` (its PTX assembled by ptxas for the target) and
`asm["sass"]` (the cubin disassembled by `cuobjdump -sass`, laid out as Triton's `asm["sass"]`: a
`Function:NAME` line, then one line per instruction, `CONTROL<tab>INSTRUCTION;`, with branch targets as `LBBn`
labels). Tutorial 02 reads the SASS for its loads and stores.

The control field is what the scheduler encoded in the instruction's second 64-bit word (Volta and later):
`wait:read:write:yield:stall`, where `wait` is the mask of scoreboard barriers the instruction waits on (`--`
for none), `read` and `write` the barriers it sets when its operands are read and its result written (`-` for
none), `yield` is `Y` when the warp may be switched out, and `stall` the cycles (hex) before the next
instruction issues.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

_INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;\s*/\* 0x([0-9a-f]{16}) \*/")
_CONTROL = re.compile(r"\s*/\* 0x([0-9a-f]{16}) \*/\s*$")
_FUNCTION = re.compile(r"\s*Function : (\S+)")
_BRANCH = re.compile(r"^(.*\bBRA(?:\.\S+)? )0x([0-9a-f]+)(.*)$")


def find_ptxas():
    """A `ptxas` to ask for resource usage: `$PTXAS` (empty: none), `$TRITON_PTXAS_PATH`, `ptxas` on `PATH`,
    under `$CUDA_HOME` or /usr/local/cuda, else the one an installed Triton package bundles."""
    if "PTXAS" in os.environ:
        return os.environ["PTXAS"] or None
    candidates = [os.environ.get("TRITON_PTXAS_PATH"), shutil.which("ptxas")]
    candidates += [os.path.join(d, "bin", "ptxas") for d in (os.environ.get("CUDA_HOME"), "/usr/local/cuda") if d]
    candidates += [os.path.join(p, "triton", "backends", "nvidia", "bin", "ptxas") for p in sys.path if p]
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def find_tool(name: str):
    """A CUDA tool (`cuobjdump`, `nvdisasm`): next to the ptxas tessel uses, on `PATH`, under `$CUDA_HOME` or
    /usr/local/cuda, else the one an installed Triton package bundles."""
    ptxas = find_ptxas()
    dirs = [os.path.dirname(ptxas)] if ptxas else []
    candidates = [os.path.join(d, name) for d in dirs] + [shutil.which(name)]
    candidates += [os.path.join(d, "bin", name) for d in (os.environ.get("CUDA_HOME"), "/usr/local/cuda") if d]
    candidates += [os.path.join(p, "triton", "backends", "nvidia", "bin", name) for p in sys.path if p]
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def assemble(ptx: str, target: str) -> bytes:
    """The cubin of `ptx` for `target` (`sm_90a`), from ptxas."""
    ptxas = find_ptxas()
    if ptxas is None:
        raise RuntimeError("assembling PTX needs ptxas: set PTXAS or CUDA_HOME, or put ptxas on PATH")
    with tempfile.TemporaryDirectory(prefix="tessel-cubin-") as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        r = subprocess.run([ptxas, "-arch", target, "-o", out, src], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas failed on the kernel's PTX for {target}:\n{r.stderr.strip()}")
        with open(out, "rb") as f:
            return f.read()


def disassemble(cubin: bytes) -> str:
    """`cuobjdump -sass` of `cubin`, laid out as described in the module's docstring."""
    tool = find_tool("cuobjdump")
    if tool is None:
        raise RuntimeError("asm['sass'] needs cuobjdump (and the nvdisasm it runs), from a CUDA toolkit: put them "
                           "on PATH or next to ptxas, or set CUDA_HOME")
    # cuobjdump runs nvdisasm, which it looks for on PATH.
    dirs = [os.path.dirname(t) for t in (tool, find_tool("nvdisasm")) if t]
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(dirs + [env.get("PATH", "")])
    with tempfile.TemporaryDirectory(prefix="tessel-sass-") as d:
        path = os.path.join(d, "k.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        r = subprocess.run([tool, "-sass", path], capture_output=True, text=True, timeout=300, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"cuobjdump -sass failed: {(r.stderr or r.stdout).strip()}")
    return layout(r.stdout)


def control(word: int) -> str:
    """The scheduling field of an instruction's second word, as `wait:read:write:yield:stall`."""
    stall = (word >> 41) & 0xF
    may_yield = (word >> 45) & 1
    write, read = (word >> 46) & 0x7, (word >> 49) & 0x7
    wait = (word >> 52) & 0x3F
    return (f"{'--' if wait == 0 else f'{wait:02d}'}:{'-' if read == 7 else read}:{'-' if write == 7 else write}:"
            f"{'Y' if may_yield == 0 else '-'}:{stall:x}")


def layout(dump: str) -> str:
    """cuobjdump's SASS listing, one `control<tab>instruction;` line per instruction (see the docstring)."""
    out = []
    lines = dump.splitlines()
    i = 0
    while i < len(lines):
        m = _FUNCTION.match(lines[i])
        i += 1
        if not m:
            continue
        instructions = []  # (address, text, control)
        while i < len(lines) and not _FUNCTION.match(lines[i]):
            ins = _INSTRUCTION.match(lines[i])
            if ins and i + 1 < len(lines) and _CONTROL.match(lines[i + 1]):
                word = int(_CONTROL.match(lines[i + 1]).group(1), 16)
                instructions.append((int(ins.group(1), 16), ins.group(2), control(word)))
                i += 2
            else:
                i += 1
        labels = {}
        for _, text, _ in instructions:
            b = _BRANCH.match(text)
            if b:
                labels.setdefault(int(b.group(2), 16), f"LBB{len(labels)}")
        out.append(f"Function:{m.group(1)}")
        for address, text, ctrl in instructions:
            if address in labels:
                out.append(f"{labels[address]}:")
            b = _BRANCH.match(text)
            if b and int(b.group(2), 16) in labels:
                text = f"{b.group(1)}{labels[int(b.group(2), 16)]}{b.group(3)}"
            out.append(f"{ctrl}\t{text};")
    return "\n".join(out) + "\n"
