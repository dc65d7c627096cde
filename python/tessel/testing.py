"""`triton.testing`: `do_bench` (the mean, or quantiles, ... of a function's time in milliseconds),
`Benchmark` / `perf_report` (tables of such timings over a sweep of arguments), `assert_close`.

With a CUDA device in use (torch imported and CUDA available) `do_bench` times with CUDA events, clearing the L2
between runs, as Triton does; otherwise (the interpreter) it times with `time.perf_counter`. Quantiles are
interpolated linearly between the sorted times (as `torch.quantile`, which Triton uses), and come back as a list
(one quantile: a float). The timing itself is `tessel/_timing.py`'s, which `driver.active.get_benchmarker()`
also returns.

`perf_report(...)(fn).run(print_data=True)` prints each benchmark's table as Triton does (pandas' layout; with
pandas installed, through pandas); with `save_path` it writes `<plot_name>.csv` (and `results.html`), and the
plot `<plot_name>.png` when matplotlib is installed; `show_plots` shows the plot when matplotlib is installed.
"""

from __future__ import annotations

import math
import os

from ._timing import do_bench, do_bench_cudagraph  # noqa: F401 - re-exported names


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    import numpy as np

    def host(v):
        return v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)

    np.testing.assert_allclose(host(x), host(y), atol=atol or 0, rtol=rtol or 1e-7, err_msg=err_msg)


class Benchmark:
    """One table (and plot): `fn` runs for each value of `x_names` (`x_vals`) and each line (`line_arg` set to each
    of `line_vals`, named `line_names`), with `args` for the other parameters. `fn` returns a number, or
    (value, min, max)."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name, args, xlabel="", ylabel="",
                 x_log=False, y_log=False, styles=None, color=None):
        self.x_names = list(x_names)
        self.x_vals = list(x_vals)
        self.x_log = x_log
        self.line_arg = line_arg
        self.line_vals = list(line_vals)
        self.line_names = list(line_names)
        self.y_log = y_log
        self.styles = styles
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.plot_name = plot_name
        self.args = dict(args)


class _Table:
    """What `Mark.run` returns (with pandas installed it returns a DataFrame instead): the columns and the rows."""

    def __init__(self, columns, rows):
        self.columns, self.rows = list(columns), [list(r) for r in rows]

    def column(self, name):
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def to_string(self):
        return format_table(self.columns, self.rows)

    def __repr__(self):
        return self.to_string()


def _format_column(values):
    """pandas' rendering of a float column: every value with the same number of decimals (at most 6, the fewest
    that lose no digit of any of them at 6, at least 1); NaN for missing values."""
    finite = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    decimals = 1
    for v in finite:
        text = f"{v:.6f}".rstrip("0")
        decimals = max(decimals, len(text.split(".")[1]) if "." in text else 0)
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append("NaN")
        elif isinstance(v, float) and math.isinf(v):
            out.append("inf" if v > 0 else "-inf")
        else:
            out.append(f"{float(v):.{decimals}f}")
    return out


def format_table(columns, rows):
    """The table as pandas' `DataFrame.to_string()` prints a frame of float columns with a default index."""
    cells = [_format_column([r[i] for r in rows]) for i in range(len(columns))]
    index = [str(i) for i in range(len(rows))]
    index_w = max([len(x) for x in index], default=0)
    widths = [max([len(str(c))] + [len(x) for x in col]) for c, col in zip(columns, cells)]
    lines = [" " * index_w + "".join("  " + str(c).rjust(w) for c, w in zip(columns, widths))]
    for i, label in enumerate(index):
        lines.append(label.ljust(index_w) + "".join("  " + col[i].rjust(w) for col, w in zip(cells, widths)))
    return "\n".join(lines)


class Mark:
    """A benchmark function with its `Benchmark`s: `run(...)` produces their tables."""

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks

    def _run(self, bench, save_path, show_plots, print_data, diff_col=False, save_precision=6, **kwargs):
        x_names = list(bench.x_names)
        rows = []  # [x values..., means..., mins..., maxes...]
        for x in bench.x_vals:
            if not isinstance(x, (list, tuple)):
                x = [x for _ in x_names]
            if len(x) != len(x_names):
                raise ValueError(f"Expected {len(x_names)} values, got {x}")
            x_args = dict(zip(x_names, x))
            means, mins, maxes = [], [], []
            for y in bench.line_vals:
                ret = self.fn(**x_args, **{bench.line_arg: y}, **bench.args, **kwargs)
                try:
                    y_mean, y_min, y_max = ret
                except TypeError:
                    y_mean, y_min, y_max = ret, None, None
                means.append(y_mean)
                mins.append(y_min)
                maxes.append(y_max)
            rows.append(list(x) + means + mins + maxes)
        names = bench.line_names
        n, k = len(x_names), len(names)
        if bench.plot_name and (show_plots or save_path):
            _plot(bench, x_names, names, rows, n, k, save_path, show_plots)
        columns = x_names + [f"{name} ({bench.ylabel})" for name in names]  # Triton's labels: `Triton (GB/s)`
        table = [r[: n + k] for r in rows]
        if diff_col and len(columns) == 2:  # as Triton: the second column less the first
            columns = columns + ["Diff"]
            table = [r + [None if r[0] is None or r[1] is None else r[1] - r[0]] for r in table]
        df = _frame(columns, table)
        if print_data:
            print(bench.plot_name + ":")
            print(df.to_string())
        if save_path:
            os.makedirs(save_path, exist_ok=True)
            path = os.path.join(save_path, f"{bench.plot_name}.csv")
            if hasattr(df, "to_csv"):
                df.to_csv(path, float_format=f"%.{save_precision}f", index=False)
            else:
                with open(path, "w") as f:
                    f.write(",".join(str(c) for c in columns) + "\n")
                    for r in table:
                        f.write(",".join("" if v is None else f"{float(v):.{save_precision}f}" for v in r) + "\n")
        return df

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
        single = isinstance(self.benchmarks, Benchmark)
        benchmarks = [self.benchmarks] if single else self.benchmarks
        result = []
        try:
            for bench in benchmarks:
                result.append(self._run(bench, save_path, show_plots, print_data, **kwargs))
        finally:
            if save_path:
                os.makedirs(save_path, exist_ok=True)
                with open(os.path.join(save_path, "results.html"), "w") as html:
                    html.write("<html><body>\n")
                    for bench in benchmarks[: len(result)]:
                        html.write(f'<image src="{bench.plot_name}.png"/>\n')
                    html.write("</body></html>\n")
        if return_df:
            return result[0] if single else result
        return None


def _frame(columns, rows):
    """A pandas DataFrame of the rows when pandas is installed (what Triton returns), else a `_Table`."""
    try:
        import pandas as pd
    except ImportError:
        return _Table(columns, rows)
    return pd.DataFrame([[float("nan") if v is None else v for v in r] for r in rows], columns=columns,
                        dtype=float)


def _plot(bench, x_names, names, rows, n, k, save_path, show_plots):
    """The plot Triton draws, when matplotlib is installed (else nothing: the table is still printed)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return
    plt.figure()
    ax = plt.subplot()
    xs = [r[0] for r in rows]
    for i, name in enumerate(names):
        col = bench.styles[i][0] if bench.styles else None
        sty = bench.styles[i][1] if bench.styles else None
        ax.plot(xs, [r[n + i] for r in rows], label=name, color=col, ls=sty)
        lo = [r[n + k + i] for r in rows]
        hi = [r[n + 2 * k + i] for r in rows]
        if all(v is not None for v in lo + hi):
            ax.fill_between(xs, [float(v) for v in lo], [float(v) for v in hi], alpha=0.15, color=col)
    ax.legend()
    ax.set_xlabel(bench.xlabel or x_names[0])
    ax.set_ylabel(bench.ylabel)
    ax.set_xscale("log" if bench.x_log else "linear")
    ax.set_yscale("log" if bench.y_log else "linear")
    if show_plots:
        plt.show()
    if save_path:
        plt.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    plt.close()


def perf_report(benchmarks):
    """Decorator: `@perf_report(Benchmark(...))` (or a list of them) makes `fn` a `Mark`; call `.run(...)`."""

    def wrapper(fn):
        return Mark(fn, benchmarks)

    return wrapper


# --- the device's peak figures (Triton's roofline helpers), from `driver.active.utils.get_device_properties` ---

def _properties(device):
    from .runtime import driver

    return driver.active.utils.get_device_properties(device)


def _capability(device):
    """The device's compute capability major version: torch's when it sees CUDA, else tessel's target (the
    interpreter: the architecture whose nominal properties `get_device_properties` reports)."""
    from .runtime import _arch_of, _torch_cuda, gpu_target

    torch = _torch_cuda()
    if torch is not None:
        return torch.cuda.get_device_capability(device)[0]
    target = gpu_target()
    return (_arch_of(target) if target is not None else 90) // 10


def _dtype_name(dtype):
    """`float16` for torch.float16, tl.float16 or "float16"."""
    name = getattr(dtype, "name", None)
    return name if isinstance(name, str) else str(dtype).removeprefix("torch.").removeprefix("triton.language.")


def get_dram_gbps(device=None):
    """The device's DRAM bandwidth in GB/s: memory clock (kHz) x bus width (bits) x 2 (double data rate)."""
    p = _properties(device)
    return p["mem_clock_rate"] * p["mem_bus_width"] * 2 / 1e6 / 8


def get_max_tensorcore_tflops(dtype, clock_rate, device=None):
    """Peak tensor-core TFLOPS at `clock_rate` (kHz): 4 sub-cores per SM, each doing 256 (32-bit types), 512
    (16-bit) or 1024 (8-bit) operations a clock on sm_80 and newer (256 fp16 before)."""
    n = _properties(device)["multiprocessor_count"] * 4
    name = _dtype_name(dtype)
    if _capability(device) < 8:
        if name != "float16":
            raise RuntimeError(f"dtype not supported: {name} (tensor cores before sm_80 take float16)")
        per_clock = 256
    elif name in ("float32", "int32"):
        per_clock = 256
    elif name in ("float16", "bfloat16", "int16"):
        per_clock = 512
    elif name in ("int8", "float8e4nv", "float8e4b15", "float8e5", "float8_e4m3fn", "float8_e5m2"):
        per_clock = 1024
    else:
        raise RuntimeError(f"dtype not supported: {name}")
    return n * clock_rate * per_clock * 1e-9


def get_max_simd_tflops(dtype, clock_rate, device=None):
    """Peak non-tensor-core TFLOPS at `clock_rate` (kHz): 4 sub-cores per SM, each doing 32 (float32) or 64
    (float16, bfloat16 from sm_80) operations a clock."""
    n = _properties(device)["multiprocessor_count"] * 4
    name = _dtype_name(dtype)
    half = ("float16",) if _capability(device) < 8 else ("float16", "bfloat16")
    if name == "float32":
        per_clock = 32
    elif name in half:
        per_clock = 64
    else:
        raise RuntimeError(f"dtype not supported: {name}")
    return n * clock_rate * per_clock * 1e-9
