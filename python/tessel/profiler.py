"""`triton.profiler` (proton) for `python -m tessel`: sessions, scopes and kernel launches timed with CUDA events.

What it does: `start(name, hook="triton")` opens a session; while it is active, `scope(name, metrics)` (or
`enter_scope`/`exit_scope`) times the enclosed work with a pair of CUDA events on torch's current stream, and
with `hook="triton"` every launch of a tessel kernel is timed the same way and named (and given its flops/bytes)
by the kernel's `launch_metadata` function, as proton does. `finalize()` waits for the events and writes
`NAME.hatchet` (proton's tree format: frames with `time (ns)`, `count` and the user metrics, inclusive of
children); `triton.profiler.viewer` reads it back and prints the tree with derived metrics (`time/ms`,
`tflop16/s`, ...).

How it differs from proton: proton measures kernels with CUPTI (the sum of the kernels' own GPU time); here a
scope's time is the GPU time between its two events, so idle gaps on the stream count, and kernels launched by
other libraries (cuBLAS, torch) inside a scope are timed only as that scope, not each by name. Launches of
tessel kernels under `hook="triton"` are each timed by their own events. Nothing is estimated: every number
comes from a CUDA event pair or from the caller's metrics.
"""

from __future__ import annotations

import functools
import json

_sessions = {}  # id -> _Session
_stack = []  # the open scopes' names, outermost first


class _Session:
    def __init__(self, name, hook):
        self.name = name
        self.hook = hook
        self.active = True
        self.records = []  # (path, start event, end event, metrics)


def _event():
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("triton.profiler under tessel times work with CUDA events: it needs torch with CUDA")
    e = torch.cuda.Event(enable_timing=True)
    e.record()
    return e


def _elapsed_ms(start, end):
    return start.elapsed_time(end)


def _synchronize():
    import torch

    torch.cuda.synchronize()


def start(name=None, *, context="shadow", data="tree", backend=None, mode=None, hook=None):
    """Opens a session (active) and returns its id. `hook="triton"` also times every tessel kernel launch."""
    if data not in ("tree", None):
        raise ValueError(f"triton.profiler under tessel keeps a tree of scopes, not data={data!r}")
    if hook not in (None, "triton"):
        raise ValueError(f"triton.profiler under tessel knows hook='triton' only, not {hook!r}")
    sid = len(_sessions)
    _sessions[sid] = _Session(name or "proton", hook)
    return sid


def _select(session):
    return list(_sessions.values()) if session is None else [_sessions[session]]


def activate(session=None):
    for s in _select(session):
        s.active = True


def deactivate(session=None):
    for s in _select(session):
        s.active = False


def _recording():
    return [s for s in _sessions.values() if s.active]


def hooked():
    """Whether a kernel launch should be timed now (an active session with hook='triton')."""
    return any(s.hook == "triton" for s in _recording())


class scope:
    """`with proton.scope(name, metrics):` or `@proton.scope(name)`: times the enclosed work."""

    def __init__(self, name, metrics=None):
        self.name, self.metrics = name, metrics

    def __enter__(self):
        enter_scope(self.name, self.metrics)
        return self

    def __exit__(self, *exc):
        exit_scope()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with scope(self.name, self.metrics):
                return fn(*args, **kwargs)

        return wrapped


_open = []  # per open scope: (sessions recording it, path, start event, metrics)


def enter_scope(name, metrics=None):
    sessions = _recording()
    _stack.append(name)
    _open.append((sessions, tuple(_stack), _event() if sessions else None, dict(metrics or {})))


def exit_scope(name=None):
    if not _open:
        raise RuntimeError("triton.profiler.exit_scope() without a scope open")
    sessions, path, begin, metrics = _open.pop()
    _stack.pop()
    if name is not None and name != path[-1]:
        raise RuntimeError(f"triton.profiler.exit_scope({name!r}) closes scope {path[-1]!r}")
    if sessions:
        end = _event()
        for s in sessions:
            s.records.append((path, begin, end, metrics))


def launch(kernel, grid, args, metadata_fn, run):
    """Times `run()`, a launch of `kernel`, for the sessions hooked on kernels; names it from
    `metadata_fn(grid, kernel, args)` (its "name" and the numeric metrics), as proton's launch hook does."""
    sessions = [s for s in _recording() if s.hook == "triton"]
    meta = {}
    if metadata_fn is not None:
        meta = dict(metadata_fn(grid, _KernelInfo(kernel.__name__), args) or {})
    name = meta.pop("name", kernel.__name__)
    begin = _event()
    out = run()
    end = _event()
    path = tuple(_stack) + (name,)
    for s in sessions:
        s.records.append((path, begin, end, meta))
    return out


class _KernelInfo:
    def __init__(self, name):
        self.name = name


def _tree(records):
    root = {"frame": {"name": "ROOT", "type": "function"}, "metrics": {}, "children": []}
    for path, begin, end, metrics in records:
        node = root
        for part in path:
            found = next((c for c in node["children"] if c["frame"]["name"] == part), None)
            if found is None:
                found = {"frame": {"name": part, "type": "function"}, "metrics": {}, "children": []}
                node["children"].append(found)
            node = found
        m = node["metrics"]
        m["time (ns)"] = m.get("time (ns)", 0.0) + _elapsed_ms(begin, end) * 1e6
        m["count"] = m.get("count", 0) + 1
        for k, v in metrics.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                m[k] = m.get(k, 0) + v
    _inclusive(root)
    return root


def _inclusive(node):
    """A frame's metrics include its children's, except time where the frame's own events span its children."""
    timed = "time (ns)" in node["metrics"]
    for c in node["children"]:
        _inclusive(c)
        for k, v in c["metrics"].items():
            if k == "time (ns)" and timed:
                continue
            node["metrics"][k] = node["metrics"].get(k, 0) + v


def finalize(session=None, output_format="hatchet"):
    """Waits for the recorded events and writes each session's tree to NAME.hatchet; closes the sessions."""
    if output_format != "hatchet":
        raise ValueError(f"triton.profiler under tessel writes hatchet files, not {output_format!r}")
    ids = list(_sessions) if session is None else [session]
    if any(_sessions[i].records for i in ids):
        _synchronize()
    for i in ids:
        s = _sessions.pop(i)
        with open(f"{s.name}.hatchet", "w") as f:
            json.dump([_tree(s.records), {"profiler": "tessel (CUDA events)"}], f, indent=1)
