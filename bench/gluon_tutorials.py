#!/usr/bin/env python3
"""The public Gluon tutorials' entry kernels, unmodified, through tessel (issue 11's first acceptance item).

The tutorials are not part of this repository: pass the directory holding them (01-intro.py ... 13-conv-im2col.py,
as in python/tutorials/gluon of triton-lang/triton). For every entry kernel at the tutorial's own configuration
(the constexprs, shapes, num_warps and descriptor blocks of its test functions), this

  (a) compiles it to PTX for its target (sm_90a for the Hopper tier, sm_100a for Blackwell's, from 06-tcgen05
      on) with `tessel compile` and assembles that with ptxas,
  (b) runs it in the interpreter (`tessel run --interpret`) on random inputs, with NaN-poisoned outputs, and
      compares the outputs with a float64 NumPy reference where one is cheap (copies, adds, matmuls),
  (c) with --gpu, runs it on the GPU with `tessel run --check` (GPU against the interpreter on the same inputs,
      NaN-poisoned outputs), optionally under compute-sanitizer (--sanitize memcheck,racecheck,synccheck),

and prints one table: kernel x {compiles, ptxas, interpreter correct, [GPU = interpreter]}. Blackwell kernels
(sm_100a) are not run with --gpu: there is no Blackwell GPU here; the PTX simulator checks them against the
interpreter in tests/tcgen05.rs.

Usage: python3 bench/gluon_tutorials.py TUTORIAL_DIR [--tessel PATH] [--ptxas PATH] [--only REGEX]
                                        [--gpu] [--sanitize memcheck,racecheck,synccheck] [--verbose]
Needs numpy. Exits non-zero when any step fails.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from gluon_tutorial_cases import CASES


def run(cmd, timeout=900, stdout_only=False, warnings=None):
    """(exit status, output): stdout and stderr together, or stdout alone (the PTX of `compile --emit ptx`).
    With `warnings` (a list), the first line of each compiler warning on stderr is appended to it."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if warnings is not None:
            warnings += [l.strip() for l in p.stderr.splitlines() if l.startswith("Warning:")]
        return p.returncode, p.stdout if stdout_only and p.returncode == 0 else p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        return 124, f"timed out after {timeout} s: {' '.join(cmd)}"


def first_error(log):
    lines = [l for l in log.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if l.lstrip().lower().startswith(("error", "mismatch", "ptxas")) or "error" in l.lower():
            return " | ".join(x.strip() for x in lines[i : i + 3])[:300]
    return " | ".join(lines[-3:])[:300]


def kernel_flags(case, tdir):
    target = f"{os.path.join(tdir, case.file)}::{case.kernel}"
    flags = ["--signature", case.signature, "--num-warps", str(case.num_warps), *case.extra]
    for k, v in case.consts:
        flags += ["--const", f"{k}={v}"]
    return target, flags


def run_flags(case, seed):
    flags = ["--grid", case.grid, "--seed", str(seed), "--show", "0"]
    for k, v in case.args:
        flags += ["--arg", f"{k}={v}"]
    return flags


def check_reference(case, out_dir):
    bufs = {}
    for f in os.listdir(out_dir):
        if f.endswith(".npy"):
            bufs[f[:-4]] = np.load(os.path.join(out_dir, f))
    worst = []
    for name, expected, tol in case.reference(bufs):
        got = bufs[name].astype(np.float64).reshape(expected.shape)
        expected = expected.astype(np.float64)
        if np.isnan(got).any():
            return False, f"{name}: {int(np.isnan(got).sum())} NaN (unwritten) elements"
        denom = max(np.linalg.norm(expected), 1e-30)
        rel = np.linalg.norm(got - expected) / denom
        if not rel <= tol:
            bad = np.argwhere(~np.isclose(got, expected, rtol=tol, atol=tol))
            where = tuple(int(i) for i in bad[0]) if len(bad) else ()
            return False, f"{name}: relative error {rel:.3g} > {tol} (first at {where})"
        worst.append(f"{name} {rel:.1e}")
    return True, ", ".join(worst) if worst else "no reference"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tutorials", help="directory with the Gluon tutorials (01-intro.py, ...)")
    ap.add_argument("--tessel", default=os.environ.get("TESSEL", "target/release/tessel"))
    ap.add_argument("--ptxas", default=os.environ.get("PTXAS", shutil.which("ptxas") or "ptxas"))
    ap.add_argument("--only", default="", help="run the cases whose label matches this regular expression")
    ap.add_argument("--gpu", action="store_true", help="also run on the GPU against the interpreter (--check)")
    ap.add_argument("--sanitize", default="", help="with --gpu: compute-sanitizer tools, e.g. memcheck,racecheck")
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(2), "little"))
    ap.add_argument("--verbose", action="store_true", help="print every failing step's log tail")
    ap.add_argument("--timeout", type=int, default=900, help="seconds each GPU step may run (a hang costs this)")
    a = ap.parse_args()
    tdir = os.path.abspath(a.tutorials)
    cases = [c for c in CASES if re.search(a.only, c.label)]
    tools = [t for t in a.sanitize.split(",") if t]
    print(f"seed {a.seed}; {len(cases)} cases; tessel {a.tessel}; ptxas {a.ptxas}")
    header = ["kernel", "compiles", "ptxas", "interpreter"] + (["GPU = interp"] if a.gpu else [])
    header += tools
    rows, failures, notes = [], 0, []
    work = tempfile.mkdtemp(prefix="gluon-tutorials-")
    for case in cases:
        target, kflags = kernel_flags(case, tdir)
        row = [case.label]
        ptx = os.path.join(work, case.label.replace("/", "_").replace(" ", "_") + ".ptx")
        warned = []
        cmd = [a.tessel, "compile", target, *kflags, "--arch", case.arch, "--emit", "ptx"]
        rc, log = run(cmd, stdout_only=True, warnings=warned)
        notes += [f"{case.label} compile: {w}" for w in warned]
        if rc == 0:
            with open(ptx, "w") as f:
                f.write(log)
            row.append(f"yes ({len(warned)} warning{'s' if len(warned) > 1 else ''})" if warned else "yes")
            rc2, log2 = run([a.ptxas, f"-arch={case.arch}", ptx, "-o", os.devnull])
            row.append(("yes" if case.arch == "sm_90a" else f"yes ({case.arch})") if rc2 == 0 else "NO")
            if rc2 != 0:
                notes.append(f"{case.label} ptxas: {first_error(log2)}")
        else:
            row += ["NO", "-"]
            notes.append(f"{case.label} compile: {first_error(log)}")
        out_dir = os.path.join(work, case.label.replace("/", "_").replace(" ", "_"))
        os.makedirs(out_dir, exist_ok=True)
        arch = [] if case.arch == "sm_90a" else ["--arch", case.arch]
        rc, log = run([a.tessel, "run", target, *kflags, *arch, *run_flags(case, a.seed), "--interpret", "--out-dir",
                       out_dir])
        if rc != 0:
            row.append("NO (runs)")
            notes.append(f"{case.label} interpreter: {first_error(log)}")
        else:
            ok, msg = check_reference(case, out_dir)
            row.append(("yes " if ok else "NO ") + f"({msg})" if case.has_reference else "runs (no reference)")
            if not ok:
                notes.append(f"{case.label} reference: {msg}")
        if a.gpu and case.arch != "sm_90a":
            row += ["-"] * (1 + len(tools))
        elif a.gpu:
            cmd = [a.tessel, "run", target, *kflags, *run_flags(case, a.seed), "--check"]
            rc, log = run(cmd, timeout=a.timeout)
            good = rc == 0 and "in the interpreter over" not in log
            row.append("yes" if good else "NO")
            if not good:
                notes.append(f"{case.label} GPU: {first_error(log)}")
                if a.verbose:
                    print(log[-4000:], flush=True)
            for tool in tools:
                san = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", "--print-limit", "5"]
                rc, log = run(san + [a.tessel, "run", target, *kflags, *run_flags(case, a.seed)], timeout=a.timeout)
                row.append("clean" if rc == 0 else "NO")
                if rc != 0:
                    notes.append(f"{case.label} {tool}: {first_error(log)}")
                    if a.verbose:
                        print(log[-4000:], flush=True)
        if any(c.startswith("NO") for c in row[1:]):
            failures += 1
        rows.append(row)
        print(" | ".join(row), flush=True)
    print()
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))
    if notes:
        print("\nfailures and warnings:")
        for n in notes:
            print("  " + n)
    print(f"\n{len(rows) - failures}/{len(rows)} kernels pass every step")
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
