"""The public tutorials' own benchmark tables, tessel against upstream Triton in one process, row by row and round
by round.

    python3 bench/tutorial_paired.py TUTORIALS_DIR NAME.py [NAME.py ...] [--rounds R] [--budget SECONDS]
                                     [--tables REGEX] [--json PATH]

`tutorial_sweeps.py` runs each tutorial twice, once per compiler, in two processes. On the H200 the rows of the
small and lock-bound tables then follow each process's luck more than its kernels: a process's host has phases of
seconds in which it runs 1.6x slower, 05's backward flips between two speeds from run to run (bimodally, for
both compilers and for torch's own column), and five runs per side still leave rows 2x apart. This harness
removes what the two processes do not share.

Each tutorial is executed twice in this one process, unmodified: once with `triton` bound to upstream Triton, once
with `triton` bound to tessel's stand-in modules (`tessel.shim.modules()`, what `python -m tessel` installs), each in
a namespace of its own. Module-level code runs as in the script (its correctness checks too), except that every
`perf_report(...)` table is recorded and none is printed. Both namespaces time with upstream Triton's
own `triton.testing.do_bench`, so the one timer measures both compilers.

Then, round after round, for every row of every table, the tutorial's own benchmark function runs its "triton"
provider (each of them, where a table has several: 06's "triton-fp16" and "triton-fp8") under each compiler back
to back, the order alternating from row to row and round to round; with
`--control` (the default) each namespace also runs the table's first other provider (torch, cuBLAS: the same
library code in both namespaces) in the same slots, so the control's ratio shows what the slot order alone does.
Per row the report gives each compiler's median over the rounds and tessel / Triton as a geometric mean with a
95% interval (> 1: tessel faster, for throughput columns). A row is "below" when its geometric mean is under
0.95, and "significantly below" when the whole interval is.

`--cudnn` adds torch's cuDNN scaled-dot-product attention as a column beside 06-fused-attention's fp16 rows
(`bench/cudnn_attention.py`: the row's shape, timed in each round after the two compilers): its median TFLOP/s and
tessel / cuDNN.

Needs a GPU, torch, upstream Triton (3.6) and the tessel wheel. The tutorials are public upstream files, not part
of this repository.
"""

from __future__ import annotations

import argparse
import builtins
import importlib
import json
import math
import os
import re
import statistics
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mm_paired import log_stats  # noqa: E402

SIDES = ("triton", "tessel")


def _recording_testing(upstream_testing, marks):
    """Upstream `triton.testing`, except that `perf_report(...)` records the mark it makes (a table is measured here
    whether or not the script runs it: 06 runs its own under `if __name__ == "__main__"`), and `.run()` does nothing."""
    testing = types.ModuleType("triton.testing", upstream_testing.__doc__)
    testing.__dict__.update(vars(upstream_testing))

    def perf_report(benchmarks):
        def wrap(fn):
            mark = upstream_testing.Mark(fn, benchmarks)
            mark.run = lambda *args, **kwargs: None
            marks.append(mark)
            return mark

        return wrap

    testing.perf_report = perf_report
    return testing


def _triton_modules(side):
    """The `triton` modules a namespace imports from: upstream's, or tessel's stand-ins."""
    if side == "tessel":
        import tessel.shim

        return tessel.shim.modules()
    return {name: m for name, m in sys.modules.items() if name == "triton" or name.startswith("triton.")}


def load(path, side):
    """Executes the tutorial at `path` with `triton` bound to `side`'s modules; returns its recorded marks."""
    import triton.testing

    marks = []
    mods = dict(_triton_modules(side))
    testing = _recording_testing(triton.testing, marks)
    top = types.ModuleType("triton", mods["triton"].__doc__)
    top.__dict__.update(vars(mods["triton"]))
    top.testing = testing
    mods.update({"triton": top, "triton.testing": testing})

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "triton" or name.startswith("triton.")):
            if not fromlist:
                return top  # `import triton.x as y` then reads the attributes from the top package
            if name not in mods:
                if side == "tessel":
                    raise ModuleNotFoundError(f"tessel does not provide `{name}`", name=name)
                mods[name] = importlib.import_module(name)
            return mods[name]
        return builtins.__import__(name, globals, locals, fromlist, level)

    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    module = types.ModuleType(f"tutorial_{stem}_{side}")
    module.__file__ = path
    module.__dict__["__builtins__"] = dict(vars(builtins), __import__=import_)
    sys.modules[module.__name__] = module  # what `inspect` and the compilers look a kernel's module up by
    source = open(path).read()
    exec(compile(source, path, "exec"), module.__dict__)
    return marks


def rows_of(mark):
    """(table name, line argument, the compiler's providers, the other providers, [(label, kwargs)]) per benchmark
    of a mark. The compiler's providers are those named for Triton ("triton", or 06's "triton-fp16" and
    "triton-fp8"); the others are libraries (torch, cuBLAS, flash-attn)."""
    benches = mark.benchmarks if isinstance(mark.benchmarks, list) else [mark.benchmarks]
    for bench in benches:
        ours = [p for p in bench.line_vals if "triton" in str(p).lower()]
        others = [p for p in bench.line_vals if p not in ours]
        rows = []
        for x in bench.x_vals:
            xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            kwargs = dict(zip(bench.x_names, xs), **bench.args)
            rows.append((" ".join(str(v) for v in dict(zip(bench.x_names, xs)).values()), kwargs))
        yield bench.plot_name, bench.line_arg, ours, others, rows


def measure(fn, line_arg, provider, kwargs):
    value = fn(**kwargs, **{line_arg: provider})
    return float(value[0] if isinstance(value, (tuple, list)) else value)


def summarize(table, rows, values, control_name, out):
    """Prints the table's rows and returns its one-line summary (None when no row was measured)."""
    print(f"\n== {table}: tessel / Triton per row, geometric mean over rounds [95% interval]"
          + (f"; control: {control_name}, same code in both slots" if control_name else ""), file=out)
    ratios_all, below, significant, control_all, cudnn_all = [], [], [], [], []
    for label, _ in rows:
        v = values.get(label)
        if not v or not v["tessel"]:
            continue
        ratios = [s / t for t, s in zip(v["triton"], v["tessel"])]
        g, lo, hi = log_stats(ratios)
        ratios_all.append(g)
        line = (f"{label:>16s}  triton {statistics.median(v['triton']):9.2f}  tessel "
                f"{statistics.median(v['tessel']):9.2f}  ratio {g:.3f} [{lo:.3f}, {hi:.3f}]")
        if v["control_triton"]:
            c = [s / t for t, s in zip(v["control_triton"], v["control_tessel"])]
            cg, clo, chi = log_stats(c)
            control_all.append(cg)
            line += f"  control {cg:.3f} [{clo:.3f}, {chi:.3f}]"
            # The control's own value (both slots' runs), beside tessel's: 03's cuBLAS column.
            ctl = statistics.median(v["control_triton"] + v["control_tessel"])
            line += f"  {control_name} {ctl:9.2f}  tessel/{control_name} {statistics.median(v['tessel']) / ctl:.3f}"
        if v.get("cudnn"):
            c = statistics.median(v["cudnn"])
            cudnn_all.append(statistics.median(v["tessel"]) / c)
            line += f"  cudnn {c:9.2f}  tessel/cudnn {cudnn_all[-1]:.3f}"
        if g < 0.95:
            below.append((label, g))
            line += "  <- below 0.95"
        if hi < 0.95:
            significant.append(label)
        print(line, file=out)
    if not ratios_all:
        return None
    geo = math.exp(statistics.fmean(math.log(r) for r in ratios_all))
    summary = (f"{table}: geomean {geo:.3f} over {len(ratios_all)} rows; below 0.95: {len(below)}"
               + (f" ({', '.join(f'{lab} {g:.3f}' for lab, g in below)})" if below else "")
               + f"; significantly below: {len(significant)}")
    if control_all:
        cgeo = math.exp(statistics.fmean(math.log(r) for r in control_all))
        summary += f"; control geomean {cgeo:.3f}, {sum(r < 0.95 for r in control_all)} rows below 0.95"
    if cudnn_all:
        ugeo = math.exp(statistics.fmean(math.log(r) for r in cudnn_all))
        summary += f"; tessel / cuDNN geomean {ugeo:.3f} over {len(cudnn_all)} rows"
    print(summary, file=out)
    return summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tutorials")
    p.add_argument("names", nargs="+", help="tutorial files, e.g. 02-fused-softmax.py")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--budget", type=float, default=float("inf"),
                   help="seconds: no new round starts after this (rows keep the rounds they have)")
    p.add_argument("--tables", default="", help="regex: only tables whose plot name matches")
    p.add_argument("--no-control", dest="control", action="store_false")
    p.add_argument("--json", help="write every measurement here")
    p.add_argument("--cudnn", action="store_true",
                   help="06-fused-attention: torch's cuDNN SDPA as a column beside the fp16 rows")
    args = p.parse_args(argv)

    import torch
    import triton

    import tessel

    print(f"triton {triton.__version__}, torch {torch.__version__}, tessel {os.path.dirname(tessel.__file__)}, "
          f"{torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU'}", flush=True)
    t0 = time.time()
    tables = []  # (tutorial, table, line_arg, provider, control provider, rows, {side: fn})
    for name in args.names:
        path = os.path.join(args.tutorials, name)
        marks = {side: load(path, side) for side in SIDES}
        for mark_t, mark_s in zip(marks["triton"], marks["tessel"]):
            for (table, line_arg, ours, others, rows), _ in zip(rows_of(mark_t), rows_of(mark_s)):
                control = others[0] if args.control and others else None
                for provider in ours:
                    label = table if len(ours) == 1 else f"{table} [{provider}]"
                    if args.tables and not re.search(args.tables, label):
                        continue
                    tables.append((name, label, line_arg, provider, control, rows,
                                   {"triton": mark_t.fn, "tessel": mark_s.fn}))
        print(f"loaded {name} under both compilers after {time.time() - t0:.0f} s", flush=True)

    values = {t[1]: {} for t in tables}
    done = 0
    for r in range(args.rounds):
        if time.time() - t0 > args.budget:
            print(f"budget reached: {done} rounds", flush=True)
            break
        for _, table, line_arg, provider, control, rows, fns in tables:
            for i, (label, kwargs) in enumerate(rows):
                v = values[table].setdefault(label, {k: [] for k in ("triton", "tessel", "control_triton",
                                                                     "control_tessel", "cudnn")})
                order = SIDES if (r + i) % 2 == 0 else SIDES[::-1]
                for side in order:
                    v[side].append(measure(fns[side], line_arg, provider, kwargs))
                    if control:
                        v[f"control_{side}"].append(measure(fns[side], line_arg, control, kwargs))
                if args.cudnn and "fp16" in str(provider) and "HEAD_DIM" in kwargs:
                    import cudnn_attention

                    if (c := cudnn_attention.tflops(kwargs)) is not None:
                        v["cudnn"].append(c)
            print(f"round {r + 1}: {table} after {time.time() - t0:.0f} s", flush=True)
        done = r + 1

    summaries = [s for _, table, _, _, control, rows, _ in tables
                 if (s := summarize(table, rows, values[table], control, sys.stdout))]
    print(f"\n== summary ({done} rounds, {time.time() - t0:.0f} s)")
    for s in summaries:
        print("  " + s)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": done, "values": values}, f)


if __name__ == "__main__":
    main()
