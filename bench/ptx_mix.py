"""The instruction mix of two PTX files side by side: tensor-core MMAs and their commits, mbarrier waits,
tensor-memory loads and allocations, TMA copies, CTA barriers. Counts are static (instructions in the text, not
executions): the first two columns count the whole kernel (prologue, peeled iterations and epilogue included),
the `loop` columns the innermost loop that holds an MMA (the K loop: what one K step issues; an mbarrier wait
counts once though it spins in a loop of its own).

Two ways to call it:

  python3 bench/ptx_mix.py A.ptx B.ptx [--names tessel,triton]
      compares two PTX files you already have.

  python3 bench/ptx_mix.py FILE.py::KERNEL --triton PYTHON --arch sm_100a --signature SIG [--const NAME=VALUE]...
          [--num-warps N] [--num-stages S] [--maxnreg R] [--save DIR]
      compiles one specialization of a kernel twice: with tessel (`tessel compile --emit ptx`, the binary in
      $TESSEL or target/release/tessel) and with upstream Triton in the Python given (no GPU needed: Triton
      compiles for a `GPUTarget`), then compares them. The signature is tessel's (`*fp16,i32:16,tensordesc<fp16[128,
      64]>`...; `:16` marks an integer Triton's launcher would specialize as a multiple of 16, and pointers are
      16-byte aligned as torch allocates them); every --const is a constexpr on both sides (integer arguments
      equal to 1 are constants in Triton's specialization too). The kernel's file is not imported (tutorials
      import torch): its `@jit` functions are read out of it and compiled in a scratch module.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile

# (row label, regex over one instruction line): what the table counts.
ROWS = [
    ("tcgen05.mma", r"^\s*(@!?%\w+\s+)?tcgen05\.mma\b"),
    ("tcgen05.commit", r"\btcgen05\.commit\b"),
    ("mbarrier waits (try_wait/test_wait)", r"\bmbarrier\.(try_wait|test_wait)\b"),
    ("mbarrier arrives (incl. expect_tx)", r"\bmbarrier\.arrive\b"),
    ("tcgen05.ld", r"\btcgen05\.ld\b"),
    ("tcgen05.st", r"\btcgen05\.st\b"),
    ("tcgen05.alloc", r"\btcgen05\.alloc\b"),
    ("tcgen05.cp", r"\btcgen05\.cp\b"),
    ("tcgen05.fence", r"\btcgen05\.fence\b"),
    ("TMA (cp.async.bulk.tensor)", r"\bcp\.async\.bulk\.tensor\b"),
    ("cp.async (non-bulk)", r"\bcp\.async\.(ca|cg)\b"),
    ("bar.sync / barrier.sync", r"\b(bar|barrier)\.sync\b"),
    ("fence.proxy.async", r"\bfence\.proxy\.async\b"),
    ("wgmma / mma.sync", r"\b(wgmma\.mma_async|mma\.sync)\b"),
]


def instructions(ptx: str) -> list:
    """The PTX's instruction lines: comments and blank lines dropped."""
    out = []
    for line in ptx.splitlines():
        line = line.split("//", 1)[0].strip()
        if line:
            out.append(line)
    return out


def mma_loop(lines: list) -> list:
    """The instructions of the innermost loop holding a tensor-core MMA (the K loop): the smallest span from a
    label to a later branch back to it that contains a `tcgen05.mma` (else a `wgmma` or `mma.sync`); empty when
    no loop holds one."""
    labels = {}
    for i, l in enumerate(lines):
        m = re.match(r"^([$\w]+):", l)
        if m:
            labels[m.group(1)] = i
    spans = []
    for i, l in enumerate(lines):
        m = re.search(r"\bbra(\.uni)?\s+([$\w]+);", l)
        if m and m.group(2) in labels and labels[m.group(2)] < i:
            spans.append((labels[m.group(2)], i))
    for rx in (ROWS[0][1], ROWS[-1][1]):
        inside = [(b - a, a, b) for a, b in spans if any(re.search(rx, x) for x in lines[a:b + 1])]
        if inside:
            _, a, b = min(inside)
            return lines[a:b + 1]
    return []


def mix(ptx: str) -> dict:
    return counts_of(instructions(ptx))


def counts_of(lines: list) -> dict:
    counts = {label: sum(1 for l in lines if re.search(rx, l)) for label, rx in ROWS}
    # tcgen05.ld: also the 32-bit registers each thread receives (the sum of the .xN repeats, doubled for the
    # 16x32bx2 shape), i.e. how many accumulator columns the loads cover per lane.
    regs = 0
    for l in lines:
        m = re.search(r"tcgen05\.ld\.\S*?(32x32b|16x32bx2|16x64b|16x128b|16x256b)\.x(\d+)", l)
        if m:
            per = {"32x32b": 1, "16x32bx2": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4}[m.group(1)]
            regs += per * int(m.group(2))
    counts["tcgen05.ld registers per thread"] = regs
    counts["PTX instruction lines"] = len(lines)
    return counts


def table(names: list, ptxs: list) -> str:
    """Whole-kernel counts of each PTX, then the counts inside its K loop (see `mma_loop`: per K step)."""
    lines = [instructions(p) for p in ptxs]
    mixes = [counts_of(l) for l in lines] + [counts_of(mma_loop(l)) for l in lines]
    cols = list(names) + [f"{n} loop" for n in names]
    labels = [label for label, _ in ROWS] + ["tcgen05.ld registers per thread", "PTX instruction lines"]
    w = max(len(l) for l in labels)
    cw = max(8, *(len(c) for c in cols))
    out = [f"| {'instruction':<{w}} | " + " | ".join(f"{c:>{cw}}" for c in cols) + " |",
           f"|{'-' * (w + 2)}|" + "|".join("-" * (cw + 2) for _ in cols) + "|"]
    for label in labels:
        out.append(f"| {label:<{w}} | " + " | ".join(f"{m[label]:>{cw}}" for m in mixes) + " |")
    return "\n".join(out)


# --- compiling a kernel with both compilers ----------------------------------------------------------------------

def split_sig(sig: str) -> list:
    """The types of a signature (commas inside <...> and [...] belong to a descriptor type)."""
    out, depth, cur = [], 0, ""
    for ch in sig:
        depth += 1 if ch in "<[" else -1 if ch in ">]" else 0
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def tessel_ptx(a) -> str:
    tessel = os.environ.get("TESSEL", "target/release/tessel")
    cmd = [tessel, "compile", a.kernel, "--arch", a.arch, "--emit", "ptx", "--signature", a.signature,
           "--num-warps", str(a.num_warps), "--num-stages", str(a.num_stages)]
    if a.maxnreg:
        cmd += ["--maxnreg", str(a.maxnreg)]
    for c in a.const:
        cmd += ["--const", c]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"error: tessel could not compile {a.kernel}:\n{r.stderr.strip()}")
    return r.stdout


def triton_ptx(a) -> str:
    """Runs this file under `a.triton` in its --triton-compile role; returns the PTX Triton emits."""
    job = dict(kernel=a.kernel, arch=a.arch, signature=a.signature, const=a.const, num_warps=a.num_warps,
               num_stages=a.num_stages, maxnreg=a.maxnreg)
    r = subprocess.run([a.triton, os.path.abspath(__file__), "--triton-compile", json.dumps(job)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"error: Triton could not compile {a.kernel}:\n{r.stderr.strip()[-3000:]}")
    return r.stdout


def jit_module(path: str) -> str:
    """The `@jit` functions of the Python file at `path`, each under a plain `@triton.jit` (autotuners and launch
    metadata are host-side), after the imports a kernel needs."""
    src = open(path).read()
    tree = ast.parse(src)
    lines = src.splitlines()
    parts = ["import triton", "import triton.language as tl"]
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        decos = [ast.get_source_segment(src, d) for d in node.decorator_list]
        if not any("jit" in d for d in decos):
            continue
        body_start = node.lineno - 1  # `def` line (decorators sit above it)
        parts.append("@triton.jit\n" + "\n".join(lines[body_start:node.end_lineno]))
    return "\n\n\n".join(parts) + "\n"


def const_value(text: str):
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def triton_compile(job: dict) -> None:
    """The --triton-compile role: run under a Python with Triton; prints the PTX."""
    import importlib.util

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    path, kernel = job["kernel"].rsplit("::", 1)
    with tempfile.TemporaryDirectory() as tmp:
        mod_path = os.path.join(tmp, "kernels_of_" + re.sub(r"\W", "_", os.path.basename(path)) + ".py")
        with open(mod_path, "w") as f:
            f.write(jit_module(path))
        spec = importlib.util.spec_from_file_location("kernels_of_file", mod_path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fn = getattr(mod, kernel)
        consts = {}
        for c in job["const"]:
            name, value = c.split("=", 1)
            consts[name] = const_value(value)
        runtime = [p for p in fn.arg_names if p not in consts]
        types = split_sig(job["signature"])
        if len(types) != len(runtime):
            sys.exit(f"error: {len(types)} types for {len(runtime)} runtime parameters ({', '.join(runtime)})")
        sig, attrs = {}, {}
        for i, p in enumerate(fn.arg_names):
            if p in consts:
                sig[p] = "constexpr"
                continue
            t = types[runtime.index(p)]
            div16 = t.endswith(":16") or t.startswith("*")
            sig[p] = t.removesuffix(":16")
            if div16:
                attrs[(i,)] = [["tt.divisibility", 16]]
        cap = int(job["arch"][3:].rstrip("a"))
        opts = {"num_warps": job["num_warps"], "num_stages": job["num_stages"]}
        if job["maxnreg"]:
            opts["maxnreg"] = job["maxnreg"]
        k = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", cap, 32), options=opts)
        sys.stdout.write(k.asm["ptx"])


def main(argv=None) -> int:
    if argv is None and len(sys.argv) == 3 and sys.argv[1] == "--triton-compile":
        triton_compile(json.loads(sys.argv[2]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="two PTX files, or one FILE.py::KERNEL (with --triton)")
    ap.add_argument("--names", default="", help="column names, comma-separated (default: the file names)")
    ap.add_argument("--triton", help="a Python with upstream Triton (compiles FILE.py::KERNEL for comparison)")
    ap.add_argument("--arch", default="sm_100a", choices=["sm_80", "sm_90a", "sm_100a"])
    ap.add_argument("--signature", default="")
    ap.add_argument("--const", action="append", default=[])
    ap.add_argument("--num-warps", type=int, default=4)
    ap.add_argument("--num-stages", type=int, default=3)
    ap.add_argument("--maxnreg", type=int)
    ap.add_argument("--save", help="a directory to write both PTX files to (tessel.ptx, triton.ptx)")
    a = ap.parse_args(argv)
    if len(a.inputs) == 2:
        ptxs = []
        for p in a.inputs:
            try:
                with open(p) as f:
                    ptxs.append(f.read())
            except OSError as e:
                sys.exit(f"error: cannot read {p}: {e.strerror}")
        names = a.names.split(",") if a.names else [os.path.basename(p) for p in a.inputs]
    elif len(a.inputs) == 1 and "::" in a.inputs[0]:
        if not a.triton:
            sys.exit("error: FILE.py::KERNEL needs --triton PYTHON (a Python with upstream Triton)")
        if not a.signature:
            sys.exit("error: FILE.py::KERNEL needs --signature")
        a.kernel = a.inputs[0]
        ptxs = [tessel_ptx(a), triton_ptx(a)]
        names = a.names.split(",") if a.names else ["tessel", "triton"]
        if a.save:
            os.makedirs(a.save, exist_ok=True)
            for n, p in zip(("tessel", "triton"), ptxs):
                with open(os.path.join(a.save, n + ".ptx"), "w") as f:
                    f.write(p)
    else:
        sys.exit("error: give two PTX files, or FILE.py::KERNEL with --triton")
    if len(names) != 2:
        sys.exit("error: --names takes two names")
    print(table(names, ptxs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
