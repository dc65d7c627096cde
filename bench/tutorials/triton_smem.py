"""Shared memory upstream Triton gives a tutorial kernel at one configuration (compile only: no torch, no GPU).

When tessel refuses a configuration for want of shared memory, the harness asks this (under a Python with
Triton installed, `--triton PYTHON`) whether Triton needs more than the GPU has too: Triton then fails the launch
with OutOfResources and its autotuner drops the configuration, so the tutorial never runs it.
Usage: PYTHON triton_smem.py FILE KERNEL SIGNATURE_JSON CONSTS_JSON NUM_WARPS NUM_STAGES CAPABILITY
(a signature type ending in `:16` is divisible by 16; pointers are 16-byte aligned, as Triton specializes them).
The kernels are taken from FILE without running its host code: its triton imports (those that need torch
skipped) and @triton.jit functions."""
import ast
import importlib.util
import json
import os
import sys
import tempfile

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


def load_kernels(path):
    """A module holding FILE's triton imports and @triton.jit functions (decorators reduced to triton.jit)."""
    keep = []
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            text = ast.unparse(node)
            if "triton" in text and "profiler" not in text:
                # guarded: some triton modules import torch (10's `triton.tools.mxfp`), which the kernels never use
                keep.append(ast.parse(f"try:\n    {text}\nexcept ImportError:\n    pass").body[0])
        elif isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            node.decorator_list = [ast.parse("triton.jit").body[0].value]
            keep.append(node)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as out:
        out.write(ast.unparse(ast.Module(body=keep, type_ignores=[])))
    spec = importlib.util.spec_from_file_location(os.path.basename(out.name)[:-3], out.name)
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m
    spec.loader.exec_module(m)
    return m


def main():
    path, kname, sig, consts, warps, stages, cap = sys.argv[1:8]
    fn = getattr(load_kernels(path), kname)
    sig, consts = json.loads(sig), json.loads(consts)
    for k, v in consts.items():
        if isinstance(v, str) and v.startswith("tl."):
            consts[k] = getattr(tl, v[3:])
    attrs = {}
    names = list(fn.arg_names)
    for k, t in list(sig.items()):
        if t.startswith("*") or t.endswith(":16"):
            attrs[(names.index(k),)] = [["tt.divisibility", 16]]
        sig[k] = t.split(":")[0]
    sig.update({k: "constexpr" for k in consts})
    kernel = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", int(cap), 32),
                            options={"num_warps": int(warps), "num_stages": int(stages)})
    print(json.dumps({"shared": kernel.metadata.shared}))


if __name__ == "__main__":
    main()
