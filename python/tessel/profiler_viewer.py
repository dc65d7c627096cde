"""`triton.profiler.viewer`: reads a `.hatchet` file (proton's tree format, as `triton.profiler` writes it)
and prints the tree with derived metrics: `time/s|ms|us|ns`, `count`, `[g|t]flop[8|16|32|64]/s` (flops of that
width, or all widths without one, per second of the frame's time), `[g|t]byte/s`."""

from __future__ import annotations

import json
import re

_TIME = {"s": 1e-9, "ms": 1e-6, "us": 1e-3, "ns": 1.0}
_SCALE = {"g": 1e9, "t": 1e12}


def _derive(metrics, name):
    t_ns = metrics.get("time (ns)", 0.0)
    m = re.fullmatch(r"time/(s|ms|us|ns)", name)
    if m:
        return t_ns * _TIME[m.group(1)]
    if name == "count":
        return metrics.get("count", 0)
    m = re.fullmatch(r"([gt])flop(8|16|32|64)?/s", name)
    if m:
        if m.group(2):
            flops = metrics.get(f"flops{m.group(2)}", 0.0)
        else:
            flops = sum(v for k, v in metrics.items() if re.fullmatch(r"flops(8|16|32|64)?", k))
        return flops / (t_ns * 1e-9) / _SCALE[m.group(1)] if t_ns else 0.0
    m = re.fullmatch(r"([gt])byte/s", name)
    if m:
        return metrics.get("bytes", 0.0) / (t_ns * 1e-9) / _SCALE[m.group(1)] if t_ns else 0.0
    raise ValueError(f"triton.profiler.viewer under tessel does not derive the metric {name!r}")


def parse(metric_names, filename, include=None, exclude=None, threshold=None):
    """(tree, metric names): the file's tree with each frame's derived metrics under `derived`."""
    with open(filename) as f:
        data = json.load(f)
    root = data[0]

    def walk(node):
        node["derived"] = {n: _derive(node["metrics"], n) for n in metric_names}
        for c in node["children"]:
            walk(c)

    walk(root)
    return root, list(metric_names)


def print_tree(tree, metrics, depth=100, format=None, print_sorted=False):
    print("  ".join(metrics) + "  frame")

    def show(node, prefix, level):
        vals = "  ".join(f"{node['derived'][m]:.3f}" for m in metrics)
        print(f"{vals}  {prefix}{node['frame']['name']}")
        if level >= depth:
            return
        children = node["children"]
        if print_sorted and metrics:
            children = sorted(children, key=lambda c: -c["derived"][metrics[0]])
        for i, c in enumerate(children):
            show(c, prefix.replace("├─ ", "│  ").replace("└─ ", "   ") + ("└─ " if i == len(children) - 1 else "├─ "),
                 level + 1)

    show(tree, "", 0)
