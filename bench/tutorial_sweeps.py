"""The public tutorials' own benchmark tables under upstream Triton and under tessel, in one device command, row by
row.

    python bench/tutorial_sweeps.py TUTORIALS_DIR [NAME.py ...] [--timeout SECONDS] [--order triton,tessel]
                                    [--repeat N] [--side triton|tessel]
    python bench/tutorial_sweeps.py NAME --compare TRITON_LOG[,LOG...] TESSEL_LOG[,LOG...]

Runs each tutorial script unmodified twice: `python NAME.py` (upstream Triton) and `python -m tessel NAME.py`
(tessel standing in for Triton), each printing its `perf_report` tables (`benchmark.run(print_data=True)`). Then,
for every table and row, it prints the tutorial's "Triton" column under tessel divided by the same column under
Triton (the provider both runs measure with the same tutorial code), and the same ratio of the other providers
(torch, cuBLAS: the same library in both processes, so their ratio shows the drift between the two runs). The
summary line per table gives the geometric mean, the worst row and the rows below 0.95. Full logs go to $OUT (or
/tmp) as sweep-NAME-{triton,tessel}[-RUN].log. The tutorials are public upstream files, not part of this repository.

For rows the two processes' luck decides (host phases, 05's locks), `bench/tutorial_paired.py` runs the same
tables with both compilers in one process, row by row. One run per side cannot rank a row whose own column jumps
2x between neighbouring sizes (the GPU's clocks, L2 state
and the autotuner's timing noise). `--repeat N` runs each side N times, alternating which goes first, and compares
the per-row medians of each column; it also prints, per table, how far the runs of one side spread (the largest
max/min of a row), so a ratio smaller than that spread reads as noise.

A tutorial that runs for minutes per side (06's autotuned attention) can run one side per GPU in one device
command: `--side triton` with CUDA_VISIBLE_DEVICES=0 and `--side tessel` with CUDA_VISIBLE_DEVICES=1 at once, then
`--compare` over the two logs (with `--repeat N`, each side's N logs, comma-separated: rows compare medians). Two GPUs of one host are the same part, but not the same chip: the other providers'
columns (torch, cuBLAS) show how far the two differ.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import time

_COLUMN_GAP = re.compile(r"\s{2,}")  # pandas separates columns by two spaces or more; a name has single spaces


def parse_tables(text: str) -> dict[str, tuple[list[str], list[list[float]]]]:
    """The tables a perf_report printed, by name: (column names, rows of numbers). A table is a `NAME:` line,
    then pandas' header line, then rows `INDEX v1 v2 ...`."""
    lines = text.splitlines()
    tables = {}
    i = 0
    while i < len(lines):
        name = lines[i].strip()
        if name.endswith(":") and " " not in name and i + 1 < len(lines):
            columns = [c for c in _COLUMN_GAP.split(lines[i + 1].strip()) if c]
            rows = []
            j = i + 2
            while j < len(lines):
                parts = lines[j].split()
                if len(parts) != len(columns) + 1 or not parts[0].isdigit():
                    break
                try:
                    rows.append([float(p) for p in parts[1:]])
                except ValueError:
                    break
                j += 1
            if rows:
                tables[name[:-1]] = (columns, rows)
                i = j
                continue
        i += 1
    return tables


def _run(cmd, log, timeout):
    start = time.time()
    with open(log, "w") as f:
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    with open(log) as f:
        return rc, f.read(), time.time() - start


def median_tables(runs):
    """Per-row medians of every column over several runs' tables (the runs that printed a table of the same shape
    and the same x values); also the largest max/min over the runs of any provider cell, per table."""
    merged, spread = {}, {}
    for table in runs[0] if runs else {}:
        same = [r[table] for r in runs if table in r and r[table][0] == runs[0][table][0]
                and len(r[table][1]) == len(runs[0][table][1])]
        columns, rows0 = same[0]
        n_x = len(columns) - len([c for c in columns if "(" in c])
        rows, worst = [], 1.0
        for i, row in enumerate(rows0):
            cells = [t[1][i] for t in same if t[1][i][:n_x] == row[:n_x]]
            out = list(row[:n_x])
            for k in range(n_x, len(row)):
                vals = sorted(c[k] for c in cells)
                out.append(statistics.median(vals))
                if vals[0] > 0:
                    worst = max(worst, vals[-1] / vals[0])
            rows.append(out)
        merged[table] = (columns, rows)
        spread[table] = (len(same), worst)
    return merged, spread


def compare(name, triton_tables, tessel_tables):
    """Prints the row-by-row ratios of every table both runs printed; returns the rows below 0.95."""
    below = []
    for table, (columns, rows) in triton_tables.items():
        if table not in tessel_tables:
            print(f"  {table}: only under Triton")
            continue
        t_columns, t_rows = tessel_tables[table]
        providers = [c for c in columns if "(" in c]
        n_x = len(columns) - len(providers)
        if t_columns != columns or len(t_rows) != len(rows):
            print(f"  {table}: the two runs printed different tables ({columns} x {len(rows)} against "
                  f"{t_columns} x {len(t_rows)})")
            continue
        print(f"  {table}: tessel / Triton, per row, of each provider column")
        print("    " + " ".join(f"{c:>8}" for c in columns[:n_x]) + "".join(f"  {c:>22}" for c in providers))
        ratios = {c: [] for c in providers}
        for r, t in zip(rows, t_rows):
            if r[:n_x] != t[:n_x]:
                print(f"    rows differ: {r[:n_x]} against {t[:n_x]}")
                continue
            cells = []
            for k, c in enumerate(providers):
                a, b = r[n_x + k], t[n_x + k]
                ratio = b / a if a > 0 and b > 0 else float("nan")
                ratios[c].append(ratio)
                cells.append(f"{a:9.2f}->{b:9.2f} {ratio:5.2f}x")
                if c.startswith("Triton") and not ratio >= 0.95:
                    below.append((name, table, r[:n_x], ratio))
            print("    " + " ".join(f"{x:8g}" for x in r[:n_x]) + "".join(f"  {c:>22}" for c in cells))
        for c, rs in ratios.items():
            good = [x for x in rs if x == x]
            if good:
                geo = math.exp(sum(math.log(x) for x in good) / len(good))
                worst = min(good)
                n_below = sum(1 for x in good if x < 0.95)
                print(f"  {table} {c}: geomean {geo:.3f}, worst {worst:.3f}, rows below 0.95: {n_below}/{len(rs)}")
    return below


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir")
    p.add_argument("names", nargs="*", default=["01-vector-add.py", "02-fused-softmax.py",
                                                "03-matrix-multiplication.py", "05-layer-norm.py"])
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--order", default="triton,tessel", help="which run goes first (default triton,tessel)")
    p.add_argument("--repeat", type=int, default=1, help="runs per side; rows compare the medians (default 1)")
    p.add_argument("--side", choices=["triton", "tessel"],
                   help="run one side only (one GPU each, in one device command); compare the logs with --compare")
    p.add_argument("--compare", nargs=2, metavar=("TRITON_LOGS", "TESSEL_LOGS"),
                   help="compare the logs --side runs wrote, instead of running anything (DIR names the table); "
                        "several logs of one side, comma-separated, compare by per-row medians as --repeat does")
    args = p.parse_args(argv)
    logs = os.environ.get("OUT") or "/tmp"
    below = []
    if args.compare:
        tables = []
        for side, logs_of_side in zip(("triton", "tessel"), args.compare):
            runs = []
            for log in logs_of_side.split(","):
                with open(log) as f:
                    runs.append(parse_tables(f.read()))
            merged, spread = median_tables([t for t in runs if t])
            if len(runs) > 1:
                for table, (n, worst) in spread.items():
                    print(f"  {table} under {side}: median of {n} runs; the runs of one cell differ by up to "
                          f"{worst:.2f}x")
            tables.append(merged)
        below = compare(args.dir, *tables)
        args.names = []
    for name in args.names:
        path = os.path.join(args.dir, name)
        cmds = {"triton": [sys.executable, path], "tessel": [sys.executable, "-m", "tessel", path]}
        runs = {"triton": [], "tessel": []}
        order = [args.side] if args.side else args.order.split(",")
        for run in range(args.repeat):
            for which in order if run % 2 == 0 else order[::-1]:
                suffix = f"-{run + 1}" if args.repeat > 1 else ""
                log = os.path.join(logs, f"sweep-{os.path.splitext(name)[0]}-{which}{suffix}.log")
                rc, text, secs = _run(cmds[which], log, args.timeout)
                print(f"== {name} under {which}: exit {rc} after {secs:.0f}s ({log})", flush=True)
                if rc != 0:
                    print("   " + "\n   ".join(text.strip().splitlines()[-8:]))
                runs[which].append(parse_tables(text))
        if args.side:
            continue
        outs = {}
        for which, tables in runs.items():
            outs[which], spread = median_tables([t for t in tables if t])
            if args.repeat > 1:
                for table, (n, worst) in spread.items():
                    print(f"  {table} under {which}: median of {n} runs; the runs of one cell differ by up to "
                          f"{worst:.2f}x")
        below += compare(name, outs["triton"], outs["tessel"])
        sys.stdout.flush()
    print(f"== rows where tessel's Triton column is below 0.95x of Triton's: {len(below)}")
    for name, table, x, ratio in below:
        print(f"   {name} {table} {x}: {ratio:.3f}")


if __name__ == "__main__":
    main()
