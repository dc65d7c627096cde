"""Runs each kernel of the public Triton tutorials through tessel at the tutorial's own configurations.

For every (kernel, configuration) it records these results:
  PTX     `tessel compile --emit ptx` succeeds (sm_90a, or sm_100a for the Blackwell-only kernel)
  ptxas   `ptxas -arch=<arch>` accepts that PTX
  tc      (sm_100a) the PTX of a kernel with a dot holds `tcgen05.mma` (`block_scale` for `tl.dot_scaled`); where
          Triton itself keeps a configuration off tcgen05 (fewer than 4 warps, 32-row tiles), its absence is
          expected ("mma"); else a missing one fails and the note quotes why codegen chose another instruction
  interp  `tessel run --interpret` on a small problem (sizes that leave partial tiles, so the masks are
          exercised) matches a NumPy float64 reference computed from the very inputs the interpreter read

Two modes: `--arch sm_90a` (the default) runs each tutorial at the configurations it picks on an sm_90 GPU;
`--arch sm_100a` at those its own code picks on a capability-10 GPU (`Case.bw`: 06's warp_specialize on and off
and its Blackwell launch options, 09's WARP_SPECIALIZE on and off with FLATTEN, the B200's SM count...).

The tutorials stay out of the repository: the harness takes the directory holding them (01-vector-add.py ...).
The kernels, their configurations and their references are in `cases.py` (what a case is: `case_types.py`); this
file runs them.
"""

from __future__ import annotations

import concurrent.futures as futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from case_types import Case, Config, Desc, Gen, Problem, Ptrs

# Shared-memory bytes one CTA may use on the targets we compile for (cudaDevAttrMaxSharedMemoryPerBlockOptin).
SMEM_LIMIT = {"sm_90a": 232448, "sm_100a": 232448}


NP_DTYPE = {np.float16: "fp16", np.float32: "fp32", np.float64: "fp64", np.int32: "i32", np.int64: "i64",
            np.int8: "i8", np.uint8: "u8", np.int16: "i16", np.uint32: "u32", np.bool_: "i1"}


def np_dtype_name(a: np.ndarray) -> str:
    return NP_DTYPE[a.dtype.type]


def buffer_dtype(v, problem: Problem, name: str) -> str:
    if isinstance(v, np.ndarray):
        return np_dtype_name(v)
    if isinstance(v, Gen):
        return v.dtype
    raise TypeError(f"{name} is not a buffer")


def const_spelling(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str):
        return repr(v).replace("'", '"')
    return str(v)


def signature(problem: Problem, params: list, tut_ints=None) -> tuple[str, list]:
    """Triton's specialization of the runtime arguments: the signature, and the ints equal to 1 that Triton
    turns into constants (`tut_ints` overrides the problem's integers)."""
    sig, consts = [], []
    tut_ints = tut_ints or {}
    buffers = {**problem.extra, **{k: v for k, v in problem.args.items() if isinstance(v, (np.ndarray, Gen))}}
    for name in params:
        v = tut_ints.get(name, problem.args[name])
        if isinstance(v, bool):
            raise TypeError(f"{name}: a bool runtime argument")
        if isinstance(v, int):
            if v == 1:
                consts.append(f"{name}=1")
                continue
            ty = "i32" if -2**31 <= v < 2**31 else "i64"
            sig.append(ty + (":16" if v % 16 == 0 else ""))
        elif isinstance(v, float):
            sig.append("fp32")
        elif isinstance(v, (np.ndarray, Gen)):
            sig.append("*" + buffer_dtype(v, problem, name))
        elif isinstance(v, Ptrs):
            sig.append("*i64")
        elif isinstance(v, Desc):
            dt = buffer_dtype(buffers[v.buf], problem, v.buf)
            sig.append(f"tensordesc<{dt}[{', '.join(map(str, v.block))}]>")
        else:
            raise TypeError(f"{name}: {type(v)}")
    return ",".join(sig), consts


def shape_spelling(shape) -> str:
    return "x".join(str(d) for d in shape)


class Runner:
    def __init__(self, tessel: str, ptxas: str | None, tutorials: str, work: str, triton: str | None):
        self.tessel, self.ptxas, self.dir, self.work, self.triton = tessel, ptxas, tutorials, work, triton
        self._params = {}

    def path(self, case: Case) -> str:
        return os.path.join(self.dir, case.tutorial + ".py")

    def params(self, case: Case) -> list:
        """The kernel's runtime (non-constexpr) parameters, from `tessel check`."""
        key = (case.tutorial, case.kernel)
        if key not in self._params:
            out = subprocess.run([self.tessel, "check", self.path(case)], capture_output=True, text=True)
            m = re.search(rf"kernel {re.escape(case.kernel)}\((.*)\)", out.stdout)
            if not m:
                raise RuntimeError(f"tessel check {self.path(case)} lists no kernel {case.kernel}:\n"
                                   f"{out.stdout}{out.stderr}")
            self._params[key] = [p.strip() for p in m.group(1).split(",") if "constexpr" not in p]
        return self._params[key]

    def spec_flags(self, cfg: Config) -> list:
        flags = ["--num-warps", str(cfg.num_warps), "--num-stages", str(cfg.num_stages)]
        if cfg.maxnreg:
            flags += ["--maxnreg", str(cfg.maxnreg)]
        for k, v in cfg.consts.items():
            if k.startswith("_"):  # the harness's own knobs (dtype, problem size), not kernel parameters
                continue
            flags += ["--const", f"{k}={const_spelling(v)}"]
        return flags

    def compile(self, case: Case, cfg: Config, problem: Problem, out: str) -> tuple[str, str, str, str]:
        """(ptx status, ptxas status, tcgen05 status, message)."""
        sig, int_consts = signature(problem, self.params(case), case.tut_ints)
        cmd = [self.tessel, "compile", f"{self.path(case)}::{case.kernel}", "--arch", cfg.arch, "--emit", "ptx",
               "--signature", sig] + self.spec_flags(cfg)
        for c in int_consts:
            cmd += ["--const", c]
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        secs = time.time() - t0
        if r.returncode != 0:
            m = re.search(r"needs (\d+) bytes of shared memory, more than the (\d+)", r.stderr)
            if m:
                ptx, ptxas, msg = self.over_smem(case, cfg, sig, int_consts, int(m.group(1)), int(m.group(2)))
                return ptx, ptxas, "-", msg
            return "FAIL", "-", "-", first_error(r.stderr or r.stdout)
        tc, tc_msg = tcgen05_status(case, cfg, r.stdout)
        ptx = os.path.join(out, "kernel.ptx")
        with open(ptx, "w") as f:
            f.write(r.stdout)
        if not self.ptxas:
            return f"ok {secs:.1f}s", "skip", tc, join_msgs("no ptxas", tc_msg)
        r = subprocess.run([self.ptxas, f"-arch={cfg.arch}", ptx, "-o", os.devnull], capture_output=True,
                           text=True, timeout=600)
        if r.returncode != 0:
            return f"ok {secs:.1f}s", "FAIL", tc, join_msgs(first_error(r.stderr or r.stdout), tc_msg)
        return f"ok {secs:.1f}s", "ok", tc, tc_msg

    def over_smem(self, case: Case, cfg: Config, sig: str, int_consts: list, need: int, limit: int):
        """tessel refused the configuration for want of shared memory: not a failure when Triton needs more than
        the GPU has too (its launch fails with OutOfResources and its autotuner drops the configuration)."""
        what = f"needs {need} B of shared memory > {limit}"
        if not self.triton:
            return "FAIL", "-", f"{what} (unverified: pass --triton PYTHON to ask upstream Triton)"
        types = {}
        for name, t in zip([p for p in self.params(case) if f"{p}=1" not in int_consts], split_sig(sig)):
            types[name] = t
        consts = {k: v for k, v in cfg.consts.items() if not k.startswith("_")}
        consts.update({c.split("=")[0]: 1 for c in int_consts})
        cap = cfg.arch[3:-1]
        here = os.path.dirname(os.path.abspath(__file__))
        r = subprocess.run([self.triton, os.path.join(here, "triton_smem.py"), self.path(case), case.kernel,
                            json.dumps(types), json.dumps(consts), str(cfg.num_warps), str(cfg.num_stages), cap],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            return "FAIL", "-", f"{what}; Triton: {first_error(r.stderr)}"
        theirs = json.loads(r.stdout.strip().splitlines()[-1])["shared"]
        if theirs > limit:
            return "n/a", "-", f"{what}; Triton needs {theirs} B too: its autotuner drops this configuration"
        return "FAIL", "-", f"{what}, where Triton needs {theirs} B"


    def interpret(self, case: Case, cfg: Config, problem: Problem, out: str) -> tuple[str, str]:
        cmd = [self.tessel, "run", f"{self.path(case)}::{case.kernel}", "--interpret", "--show", "0",
               "--grid", ",".join(map(str, problem.grid)), "--out-dir", out] + self.spec_flags(cfg)
        for name, v in list(problem.args.items()) + list(problem.extra.items()):
            cmd += ["--arg", f"{name}={self.arg_spelling(name, v, problem, out)}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            return "FAIL", first_error(r.stderr or r.stdout)
        bufs = {}
        for f in os.listdir(out):
            if f.endswith(".npy"):
                bufs[f[:-4]] = np.load(os.path.join(out, f))
        msgs = []
        for name, got, want, tol in problem.check(bufs):
            err = rel_error(got, want)
            if not err <= tol:
                msgs.append(f"{name}: relative error {err:.3g} > {tol:g}")
        return ("FAIL", "; ".join(msgs)) if msgs else ("ok", "")

    def arg_spelling(self, name, v, problem: Problem, out: str) -> str:
        if isinstance(v, bool):
            return str(int(v))
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, np.ndarray):
            p = os.path.join(out, f"in_{name}.npy")
            np.save(p, v)
            return p
        if isinstance(v, Gen):
            return v.spec
        if isinstance(v, Desc):
            s = f"desc:{v.buf}"
            if v.shape:
                s += ":" + shape_spelling(v.shape)
            return s + ":block=" + shape_spelling(v.block)
        if isinstance(v, Ptrs):
            return "ptrs:" + ",".join(v.bufs)
        raise TypeError(type(v))


# What each `Case.tc` looks for on an instruction line: the dense MMA, or a block-scaled one (`kind::mxf8f6f4`,
# `kind::mxf4`, `kind::mxf4nvf4`, all `.block_scale`); not the kernel's name (`block_scaled_matmul_kernel`).
TC_INSTRUCTION = {"tcgen05.mma": r"^\s*(@!?%\w+\s+)?tcgen05\.mma\b",
                  "block_scale": r"^\s*(@!?%\w+\s+)?tcgen05\.mma\S*\.kind::mxf\w*\.block_scale"}


def tcgen05_status(case: Case, cfg: Config, ptx: str) -> tuple[str, str]:
    """The tc column (see the module's doc) and, for a missing instruction, the reason codegen wrote into the PTX
    (`// mma.sync, not tcgen05: ...`, `// dot_scaled, not block_scale: ...`)."""
    if cfg.arch != "sm_100a" or not case.tc:
        return "-", ""
    code = [l.split("//", 1)[0] for l in ptx.splitlines()]
    present = any(re.search(TC_INSTRUCTION[case.tc], l) for l in code)
    if present:
        return "ok", ""
    if not cfg.tcgen05:
        return "mma", ""
    why = sorted({l.strip().lstrip("/ ").strip() for l in ptx.splitlines()
                  if "not tcgen05" in l or "not block_scale" in l})
    return "FAIL", f"no {case.tc}: " + ("; ".join(why) if why else "(the PTX says no reason)")


def join_msgs(*msgs) -> str:
    return "; ".join(m for m in msgs if m)


def split_sig(sig: str) -> list:
    """The types of a signature (commas inside <...> and [...] belong to a descriptor type)."""
    out, depth, cur = [], 0, ""
    for ch in sig:
        depth += ch in "<[" and 1 or (ch in ">]" and -1 or 0)
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur] if cur else out


def first_error(text: str) -> str:
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    for l in lines:
        if "rror" in l or "fatal" in l:  # ptxas's "fatal : (C7602) Insufficient registers ..." names the cause
            return l[:300]
    return (lines[0] if lines else "(no message)")[:300]


def rel_error(got, want) -> float:
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    want = np.asarray(want, dtype=np.float64).reshape(-1)
    if got.shape != want.shape:
        return float("inf")
    if np.isnan(got).any() != np.isnan(want).any():
        return float("inf")
    ok = ~np.isnan(want)
    d = np.linalg.norm(got[ok] - want[ok])
    n = np.linalg.norm(want[ok])
    return float(d / n) if n > 0 else float(d)


@dataclass
class Row:
    case: Case
    cfg: Config
    ptx: str = "-"
    ptxas: str = "-"
    tc: str = "-"
    interp: str = "-"
    msg: str = ""

    def failed(self) -> bool:
        return "FAIL" in (self.ptx, self.ptxas, self.tc, self.interp)


def run_one(runner: Runner, case: Case, cfg: Config, seed: int, interp: bool) -> Row:
    try:
        return run_checked(runner, case, cfg, seed, interp)
    except Exception as e:  # a harness error is a failure of that row, reported with the rest
        return Row(case, cfg, "FAIL", "-", "-", "-", f"harness: {type(e).__name__}: {e}")


def run_checked(runner: Runner, case: Case, cfg: Config, seed: int, interp: bool) -> Row:
    row = Row(case, cfg)
    rng = np.random.default_rng(seed)
    problem = case.problem(cfg, rng)
    with tempfile.TemporaryDirectory(dir=runner.work) as tmp:
        try:
            row.ptx, row.ptxas, row.tc, msg = runner.compile(case, cfg, problem, tmp)
        except subprocess.TimeoutExpired:
            row.ptx, msg = "FAIL", "compile timed out"
        if interp and cfg.interp:
            out = os.path.join(tmp, "out")
            os.mkdir(out)
            try:
                row.interp, imsg = runner.interpret(case, cfg, problem, out)
            except subprocess.TimeoutExpired:
                row.interp, imsg = "FAIL", "interpreter timed out"
            msg = join_msgs(msg, imsg)
        row.msg = msg
    return row


def main(argv=None) -> int:
    import argparse

    import cases as cases_mod

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tutorials", help="directory holding the tutorials (01-vector-add.py ...)")
    ap.add_argument("--tessel", default=os.environ.get("TESSEL", "target/release/tessel"))
    ap.add_argument("--ptxas", default=os.environ.get("PTXAS") or shutil.which("ptxas"))
    ap.add_argument("--arch", choices=["sm_90a", "sm_100a"], default="sm_90a",
                    help="the GPU whose configurations the tutorials pick: sm_90a (Hopper), sm_100a (capability 10: "
                         "compiled for sm_100a, tcgen05 checked)")
    ap.add_argument("--mode", choices=["fast", "full"], default="full",
                    help="fast: one configuration per kernel (compiled and interpreted); full: every configuration")
    ap.add_argument("--only", default="", help="regex over TUTORIAL::KERNEL[CONFIG]")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-interp", action="store_true", help="compile only")
    ap.add_argument("--triton", default=os.environ.get("TRITON_PYTHON"),
                    help="a Python with upstream Triton: asked whether a configuration tessel finds over the shared "
                         "memory limit is over it in Triton too")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)

    if not a.ptxas:
        print("warning: no ptxas (set PTXAS): PTX is not assembled", file=sys.stderr)
    missing = sorted({c.tutorial for c in cases_mod.CASES
                      if not os.path.exists(os.path.join(a.tutorials, c.tutorial + ".py"))})
    if missing:
        print(f"error: {a.tutorials} lacks {', '.join(m + '.py' for m in missing)}", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="tessel-tutorials-")
    runner = Runner(a.tessel, a.ptxas, a.tutorials, work, a.triton)
    jobs = []
    for case in cases_mod.CASES:
        cfgs = case.configs_for(a.arch)
        if not cfgs:
            continue
        if a.mode == "fast":
            cfgs = [c for c in cfgs if c.fast] or cfgs[:1]
        for cfg in cfgs:
            tag = f"{case.tutorial}::{case.kernel}[{cfg.label}]"
            if a.only and not re.search(a.only, tag):
                continue
            jobs.append((case, cfg))
    t0 = time.time()
    rows = []
    with futures.ThreadPoolExecutor(a.jobs) as ex:
        fs = [ex.submit(run_one, runner, c, cfg, a.seed, not a.no_interp) for c, cfg in jobs]
        for f in fs:
            row = f.result()
            rows.append(row)
            if a.verbose or row.failed():
                print(fmt_row(row), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print_table(rows)
    failed = [r for r in rows if r.failed()]
    dropped = [r for r in rows if r.ptx == "n/a"]
    print(f"\n{len(rows)} kernel configurations, {len(failed)} failing, {len(dropped)} over the shared memory in "
          f"Triton too (not run by the tutorial), {time.time() - t0:.0f} s "
          f"({a.mode} mode, {a.arch})")
    return 1 if failed else 0


def fmt_row(r: Row) -> str:
    return (f"{r.case.tutorial[:2]} {r.case.kernel:<38} {r.cfg.label:<40} {r.cfg.arch:<7} {r.ptx:<10} "
            f"{r.ptxas:<6} {r.tc:<4} {r.interp:<6} {r.msg}")


def print_table(rows):
    print(f"\n{'tu':<2} {'kernel':<38} {'config':<40} {'arch':<7} {'PTX':<10} {'ptxas':<6} {'tc':<4} {'interp':<6} "
          "note")
    by_kernel = {}
    for r in rows:
        by_kernel.setdefault((r.case.tutorial, r.case.kernel), []).append(r)
    for (tut, k), rs in by_kernel.items():
        bad = [r for r in rs if r.failed()]
        na = [r for r in rs if r.ptx == "n/a"]
        for r in rs:
            print(fmt_row(r))
        print(f"   -> {tut}::{k}: {len(rs) - len(bad) - len(na)}/{len(rs) - len(na)} configurations pass"
              + (f" ({len(na)} over Triton's shared memory too)" if na else ""))


if __name__ == "__main__":
    sys.exit(main())
