#!/usr/bin/env python3
"""Bit-for-bit conformance of tessel with upstream Triton (issue 14).

For every case of `cases.py` (tl ops x dtypes, on edge values and random data) one kernel source is written
to a file and run three ways on the same input bits:

  triton   upstream Triton (`import triton`) on the GPU: the reference
  gpu      `tessel run FILE::KERNEL` (tessel's GPU path; a note says when it fell back to the interpreter)
  interp   `tessel run FILE::KERNEL --interpret` (tessel's reference interpreter on the CPU)

and the outputs are compared bit for bit (NaN against NaN counts as equal, with NaN-bit differences
counted apart), with the largest distance in ulps (floats) for the rest. Each row gets a verdict: EXACT,
`explained: REASON` (the case's `expect` in cases.py covers the difference and its bound; README.md justifies
each reason) or UNEXPLAINED. The result is a markdown report: counts per backend, the unexplained rows, the
reasons, and the table of every case.

    python3 conformance/run.py --tessel target/release/tessel --out $OUT/conformance.md

Options: --only SUBSTRING (cases whose label contains it), --random N (random elements per case),
--no-triton / --no-gpu / --no-interp (skip a backend), --keep DIR (keep the kernels and .npy files).
Without Triton or a GPU (--no-triton --no-gpu) it still runs the interpreter, which checks the script.
"""

import argparse
import datetime
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import DTYPES, FLOAT_FMT, REASONS, UINT, all_cases, bits_of, fp8_value, is_float  # noqa: E402

BLOCK = 1024


# ------------------------------------------------------------------------------------------------ files


def npy_array(bits, dt):
    """The array tessel reads for input bits of dtype `dt` (bf16 and fp8 travel as f32: the widening is exact)."""
    if dt == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    if dt in ("f8e5", "f8e4"):
        # fp8 travels as the f32 of each code (exact; NaN codes as NaN of their sign).
        table = np.array([fp8_value(c, dt) for c in range(256)], dtype=np.float32)
        vals = table[bits.astype(np.int64)]
        return np.where(np.isnan(vals) & (bits >= 0x80), -np.abs(vals), vals).astype(np.float32)
    view = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32, "i64": np.int64,
            "u32": np.uint32, "u64": np.uint64}[dt]
    return bits.view(view)


def bits_from_npy(arr, dt):
    """Output bits of dtype `dt` from the .npy tessel wrote (bf16 and fp8 come back widened to f32)."""
    if dt == "bf16":
        return (arr.view(np.uint32) >> 16).astype(np.uint16)
    if dt in ("f8e5", "f8e4"):
        # The f32 value of every code back to its code (values are exact; NaN keeps its sign, 0x7f).
        f = arr.astype(np.float32)
        table = {}
        for code in range(256):
            v = np.float32(fp8_value(code, dt))
            if not np.isnan(v):
                table[int(v.view(np.uint32))] = code
        sign = (f.view(np.uint32) >> 24).astype(np.uint8) & 0x80
        codes = [table.get(int(b), 0x7F) for b in f.view(np.uint32)]
        return np.where(np.isnan(f), sign | 0x7F, np.array(codes, dtype=np.uint8)).astype(np.uint8)
    return arr.view(UINT[bits_of(dt)]).copy()


# ------------------------------------------------------------------------------------------------ compare


def nan_mask(bits, dt):
    if not is_float(dt):
        return np.zeros(len(bits), dtype=bool)
    if dt == "f8e4":
        return bits & 0x7F == 0x7F
    e, m = FLOAT_FMT[dt]
    b = bits.astype(np.uint64)
    return ((b >> np.uint64(m)) & np.uint64((1 << e) - 1) == (1 << e) - 1) & (b & np.uint64((1 << m) - 1) != 0)


def ordered(b, dt):
    """A float's bits as a signed position on the number line (consecutive floats differ by 1)."""
    sign = 1 << (bits_of(dt) - 1)
    return -(b & (sign - 1)) if b & sign else b


def show(b, dt):
    b = int(b)
    if is_float(dt):
        w = bits_of(dt) // 4
        return f"0x{b:0{w}x}"
    n = bits_of(dt)
    if DTYPES[dt][4] == "int" and b >> (n - 1):
        b -= 1 << n
    return str(b)


def compare(ref, got, dt, inputs, in_dt):
    """(identical, nan-bits-only, other, max ulp, first difference) of `got` against `ref`."""
    same = ref == got
    both_nan = nan_mask(ref, dt) & nan_mask(got, dt)
    nan_only = int(np.sum(~same & both_nan))
    diff = np.nonzero(~same & ~both_nan)[0]
    worst, example = 0, ""
    for i in diff:
        if is_float(dt) and not nan_mask(ref[i : i + 1], dt)[0] and not nan_mask(got[i : i + 1], dt)[0]:
            worst = max(worst, abs(ordered(int(ref[i]), dt) - ordered(int(got[i]), dt)))
        else:
            worst = float("inf") if is_float(dt) else worst
    if len(diff):
        i = diff[0]
        args = ", ".join(show(a[i], in_dt) for a in inputs)
        example = f"({args}): triton {show(ref[i], dt)}, tessel {show(got[i], dt)}"
    return int(np.sum(same)), nan_only, len(diff), worst, example


# ------------------------------------------------------------------------------------------------ runs


def run_triton(case, path, kernel, inputs, n):
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location(kernel, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    k = getattr(mod, kernel)
    signed = {8: torch.int8, 16: torch.int16, 32: torch.int32, 64: torch.int64}
    tensors = []
    for bits in inputs:
        w = bits_of(case.dt)
        t = torch.from_numpy(bits.view({8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[w]).copy())
        tensors.append(t.view(getattr(torch, DTYPES[case.dt][1])).cuda())
    # empty, not zeros: the unsigned and fp8 dtypes have few kernels in PyTorch, and the mask covers every lane;
    # zeros where the kernel accumulates into the output (atomics).
    make = torch.zeros if case.zero_out else torch.empty
    out = make(n, dtype=getattr(torch, DTYPES[case.out][1]), device="cuda")
    k[(triton_cdiv(n),)](*tensors, out, n, BLOCK=BLOCK)
    torch.cuda.synchronize()
    w = bits_of(case.out)
    raw = out.cpu().view(signed[w]) if w > 8 else out.cpu().view(torch.uint8)
    return raw.numpy().view(UINT[w]).copy()


def triton_cdiv(n):
    return (n + BLOCK - 1) // BLOCK


def run_tessel(tessel, case, path, kernel, inputs, n, workdir, interpret, timeout):
    """Returns (bits, where it ran, note)."""
    names = ["x_ptr", "y_ptr"][: len(inputs)]
    sig = ",".join([f"*{DTYPES[case.dt][2]}"] * len(inputs) + [f"*{DTYPES[case.out][2]}", "i32"])
    args = [tessel, "run", f"{path}::{kernel}", "--const", f"BLOCK={BLOCK}", "--grid", str(triton_cdiv(n)),
            "--signature", sig, "--show", "0"]
    for name, bits in zip(names, inputs):
        f = os.path.join(workdir, f"{name}.npy")
        np.save(f, npy_array(bits, case.dt))
        args += ["--arg", f"{name}={f}"]
    out_dir = os.path.join(workdir, "gpu-out" if not interpret else "interp-out")
    args += ["--arg", f"out_ptr=zeros:{n}:{DTYPES[case.out][2]}", "--arg", f"n={n}", "--out-dir", out_dir]
    if interpret:
        args.append("--interpret")
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        first = next((ln for ln in (p.stderr or p.stdout).splitlines() if ln.strip()), "")
        raise RuntimeError(f"tessel exit {p.returncode}: {first.strip()[:300]}")
    where = "interpreter" if "in the interpreter" in p.stderr else "GPU" if "on the GPU" in p.stderr else "?"
    notes = [line[len("note: "):] for line in p.stderr.splitlines()
             if line.startswith("note:") and "running `" not in line]
    bits = bits_from_npy(np.load(os.path.join(out_dir, "out_ptr.npy")), case.out)
    return bits, where, "; ".join(notes)


# ------------------------------------------------------------------------------------------------ main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default="target/release/tessel", help="the tessel binary")
    ap.add_argument("--out", default="conformance.md", help="where to write the markdown report")
    ap.add_argument("--only", default="", help="run the cases whose label contains this")
    ap.add_argument("--random", type=int, default=4096, help="random elements per case (besides edge values)")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per tessel run")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--no-gpu", action="store_true", help="skip tessel's GPU path")
    ap.add_argument("--no-interp", action="store_true", help="skip tessel's interpreter")
    ap.add_argument("--keep", default=None, help="keep kernels and buffers in this directory")
    a = ap.parse_args()

    tessel = os.path.abspath(a.tessel)
    if not os.access(tessel, os.X_OK):
        sys.exit(f"no tessel binary at {tessel} (build it with: cargo build --release)")
    env = environment(a.no_triton, a.tessel)
    backends = [b for b, skip in (("gpu", a.no_gpu), ("interp", a.no_interp)) if not skip]
    root = a.keep or tempfile.mkdtemp(prefix="tessel-conformance-")
    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    rows, start = [], time.time()
    cases = [c for c in all_cases() if a.only in c.label]
    for idx, case in enumerate(cases):
        kernel = f"k{idx}"
        workdir = os.path.join(root, f"{idx:03d}")
        os.makedirs(workdir, exist_ok=True)
        path = os.path.join(workdir, "kernel.py")
        with open(path, "w") as f:
            f.write(case.source(kernel))
        inputs = case.inputs(rng, a.random)
        n = len(inputs[0])
        print(f"[{idx + 1}/{len(cases)}] {case.label}: {n} elements", flush=True)
        ref, ref_err = None, ""
        if not a.no_triton:
            try:
                ref = run_triton(case, path, kernel, inputs, n)
            except Exception as e:  # noqa: BLE001 - a failing case is a row of the report, not the end
                ref_err = f"Triton failed: {short(e)}"
                traceback.print_exc()
        outputs = {}
        for b in backends:
            try:
                outputs[b] = run_tessel(tessel, case, path, kernel, inputs, n, workdir, b == "interp", a.timeout)
            except Exception as e:  # noqa: BLE001
                outputs[b] = (None, "-", f"failed: {short(e)}")
        if ref is None and a.no_triton and "gpu" in outputs and outputs["gpu"][0] is not None:
            # Without Triton, the interpreter is compared with tessel's GPU path.
            ref, ref_err = outputs.pop("gpu")[0], "reference: tessel GPU (no Triton)"
        for b, (got, where, note) in outputs.items():
            rows.append(row(case, b, where, note, ref, ref_err, got, inputs, n))
        for r in rows[len(rows) - len(outputs):]:
            print("   " + " | ".join(str(x) for x in r[1:]), flush=True)
    bad = [r for r in rows if r[3].startswith("UNEXPLAINED") or r[3] == "FAILED"]
    print(f"\n{len(bad)} unexplained differences or failures" + (":" if bad else ""))
    for r in bad:
        print(f"  {r[0]} ({r[1]}): {r[3]}; {r[6]} differ, max ulp {r[7]}; {r[8][:200]}")
    report = render(rows, env, time.time() - start, a)
    with open(a.out, "w") as f:
        f.write(report)
    print(f"\nwrote {a.out}")
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)


def short(e):
    return str(e).strip().replace("\n", " ")[:300]


def verdict(case, backend, where, other, worst):
    """EXACT, `explained: REASON` (the case's expectation covers the difference), or UNEXPLAINED."""
    if other == 0:
        return "EXACT"
    if backend == "gpu" and where != "GPU":
        return "UNEXPLAINED (the GPU run fell back to the interpreter)"
    exp = case.expect.get(backend)
    if exp is None:
        return "UNEXPLAINED"
    reason, bound = exp
    if bound is None or worst <= bound:
        return f"explained: {reason}" + (f" (≤ {bound} ulp)" if bound is not None else "")
    return f"UNEXPLAINED ({reason} allows ≤ {bound} ulp)"


def row(case, backend, where, note, ref, ref_err, got, inputs, n):
    if got is None:
        return [case.label, backend, where, "FAILED", "-", "-", "-", "-", note]
    if ref is None:
        what = ref_err or "ran; no reference to compare with (--no-triton without a GPU run)"
        return [case.label, backend, where, "NOT COMPARED", "-", "-", "-", "-", "; ".join(x for x in (what, note) if x)]
    same, nan_only, other, worst, example = compare(ref, got, case.out, inputs, case.dt)
    ulp = "-" if not is_float(case.out) or other == 0 else ("NaN/inf" if worst == float("inf") else str(worst))
    detail = "; ".join(x for x in (example, ref_err if ref_err.startswith("reference") else "", note) if x)
    return [case.label, backend, where, verdict(case, backend, where, other, worst), f"{same}/{n}", nan_only, other,
            ulp, detail]


def environment(no_triton, tessel):
    env = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "host": os.uname().nodename}
    try:
        # The checkout's commit: on a machine the tree was copied to, its .git may be older than the tree, so the
        # binary's own digest says what ran.
        env["tessel commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                              text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        pass
    try:
        with open(tessel, "rb") as f:
            env["tessel binary sha256"] = hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        pass
    if not no_triton:
        try:
            import torch
            import triton

            env["triton"] = triton.__version__
            env["torch"] = torch.__version__
            env["gpu"] = torch.cuda.get_device_name() if torch.cuda.is_available() else "none"
        except Exception as e:  # noqa: BLE001 - every Triton row will then say why it failed
            env["triton"] = f"unavailable ({short(e)})"
    return env


def render(rows, env, seconds, a):
    lines = ["# tessel vs Triton: bit-for-bit conformance", ""]
    lines += [f"- {k}: {v}" for k, v in env.items()]
    lines += [f"- command: `{' '.join(sys.argv)}`", f"- {seconds:.0f} s, {a.random} random elements per case plus"
              " edge values (every pair of them for binary ops)", ""]
    for b in ("gpu", "interp"):
        mine = [r for r in rows if r[1] == b]
        if not mine:
            continue
        count = lambda p: sum(1 for r in mine if p(r[3]))  # noqa: E731
        lines.append(f"- **{b}**: {len(mine)} cases: {count(lambda v: v == 'EXACT')} bit-identical, "
                     f"{count(lambda v: v.startswith('explained'))} differing as explained, "
                     f"**{count(lambda v: v.startswith('UNEXPLAINED'))} UNEXPLAINED**, "
                     f"{count(lambda v: v == 'FAILED')} failed to run, {count(lambda v: v == 'NOT COMPARED')} "
                     "not compared (no reference)")
    bad = [r for r in rows if r[3].startswith("UNEXPLAINED") or r[3] == "FAILED"]
    lines += ["", "## Unexplained differences and failures", ""]
    lines += [f"- {r[0]} ({r[1]}): {r[3]}; {r[6]} elements differ, max ulp {r[7]}; {r[8]}" for r in bad] or ["none"]
    lines += ["", "## Reasons a case may differ (see conformance/README.md)", ""]
    lines += [f"- **{k}**: {v}" for k, v in REASONS.items()]
    lines += ["- NaN bits (a column of its own, never a failure): Triton does not specify the bits of a NaN "
              "result; the GPU returns the canonical NaN, the interpreter the host's.", "",
              "## All cases", "",
              "identical = elements with the same bits as the reference; NaN bits = both NaN, different bits; "
              "differ = the rest; ulp = the largest distance among those (floats).", "",
              "| case | tessel | ran on | verdict | identical | NaN bits | differ | max ulp | first difference / notes |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| " + " | ".join(str(x).replace("|", "\\|") for x in r) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
