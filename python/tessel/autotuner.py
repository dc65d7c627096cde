"""`@tessel.autotune` / `@triton.autotune`, `tessel.Config`, `@tessel.heuristics`.

The autotuner compiles every (pruned) config of a new key first, in parallel threads (the native compiler
releases the GIL), then times each with `do_bench`, showing one updating progress line on stderr, and launches
the fastest. Timings persist in a JSON file per kernel under `$TESSEL_CACHE_DIR/tune` (else
`~/.cache/tessel/tune`), keyed by the kernel's source hash, the key values, the target and each config, so a
later process reuses them; when the config list changes, the timings of configs still listed are kept and only
the new ones are timed.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from .jit import _LAUNCH_OPTIONS, _use_interpreter
from .runtime import gpu_target


class Config:
    """One candidate: meta-parameters (`kwargs`) and launch options."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None,
                 ir_override=None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self):
        opts = {"num_warps": self.num_warps, "num_stages": self.num_stages, "num_ctas": self.num_ctas}
        if self.maxnreg is not None:
            opts["maxnreg"] = self.maxnreg
        return {**self.kwargs, **opts}

    def __str__(self):
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}", f"num_stages: {self.num_stages}"]
        parts.append(f"maxnreg: {self.maxnreg}")
        return ", ".join(parts)

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, Config) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def _tune_dir():
    base = os.environ.get("TESSEL_CACHE_DIR")
    if base:
        return os.path.join(base, "tune")
    return os.path.join(os.path.expanduser("~"), ".cache", "tessel", "tune")


def _key_part(v):
    if hasattr(v, "dtype") and hasattr(v, "shape"):
        return str(v.dtype)
    return repr(v)


class _Launcher:
    """Shared by Autotuner and Heuristics: `kernel[grid](...)`, and the JITFunction underneath."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    @property
    def jit_function(self):
        f = self.fn
        while isinstance(f, _Launcher):
            f = f.fn
        return f

    def __getattr__(self, name):
        if name == "fn":
            raise AttributeError(name)
        return getattr(self.fn, name)


class Autotuner(_Launcher):
    def __init__(self, fn, configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
                 warmup=25, rep=100, do_bench=None, pre_hook=None, post_hook=None, cache_results=True):
        self.fn = fn
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key)
        prune = prune_configs_by or {}
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k")
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.warmup, self.rep = warmup, rep
        self.user_do_bench = do_bench
        self.pre_hook, self.post_hook = pre_hook, post_hook
        self.cache = {}
        self.best_config = None
        self.configs_timings = None

    # --- the persistent cache ---
    def _cache_path(self):
        jf = self.jit_function
        return os.path.join(_tune_dir(), f"{jf.__name__}-{jf.src_hash[:16]}.json")

    def _load(self):
        try:
            with open(self._cache_path()) as f:
                data = json.load(f)
            return data if data.get("source_hash") == self.jit_function.src_hash else {}
        except (OSError, ValueError):
            return {}

    def _store(self, entry_key, timings):
        path = self._cache_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = self._load() or {"kernel": self.jit_function.__name__, "source_hash": self.jit_function.src_hash}
        entries = data.setdefault("entries", {})
        entries.setdefault(entry_key, {}).update(timings)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)

    # --- tuning ---
    def prune_configs(self, kwargs, nargs=None):
        """The configs to time, as Triton prunes them: `early_config_prune(configs, nargs, **kwargs)` and
        `perf_model(**nargs, **kwargs, **config.all_kwargs())`, where `nargs` are the arguments given by position
        (by name) and `kwargs` those given by keyword."""
        nargs = {} if nargs is None else nargs
        configs = self.configs
        if self.early_config_prune:
            configs = list(self.early_config_prune(self.configs, nargs, **kwargs))
            if not configs:
                raise RuntimeError(f"autotune: early_config_prune left no config of `{self.jit_function.__name__}`")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(self.configs) * top_k)
            if top_k and len(configs) > top_k:
                est = {c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in configs}
                configs = sorted(est, key=est.get)[:top_k]
        return configs

    def _bench_one(self, args, kwargs, grid, config, named, saved):
        def call():
            for name in self.reset_to_zero:
                _zero(named[name])
            for name, copy in saved.items():
                _restore(named[name], copy)
            if config.pre_hook:
                config.pre_hook({**named, **config.all_kwargs()})
            self.fn.run(*args, grid=grid, **kwargs, **config.all_kwargs())

        bench = self.user_do_bench
        if bench is None:
            from .testing import do_bench

            return do_bench(call, warmup=self.warmup, rep=self.rep, quantiles=(0.5,))
        return bench(call, quantiles=(0.5,))

    def run(self, *args, grid, **kwargs):
        jf = self.jit_function
        named = _bind_partial(jf, args, kwargs)
        key_vals = tuple(_key_part(named[k]) for k in self.keys if k in named)
        key_vals += tuple(_key_part(v) for v in named.values() if hasattr(v, "dtype") and hasattr(v, "shape"))
        interpret = _use_interpreter(named.values())
        target = "interpreter" if interpret else (gpu_target() or "cuda")
        key = (key_vals, target)
        if key not in self.cache:
            nargs = dict(zip(jf.arg_names, args))
            self.cache[key] = self._tune(args, kwargs, grid, named, key_vals, target, nargs)
        config = self.cache[key]
        self.best_config = config
        if config.pre_hook:
            config.pre_hook({**named, **config.all_kwargs()})
        if self.pre_hook:
            self.pre_hook(named)
        out = self.fn.run(*args, grid=grid, **kwargs, **config.all_kwargs())
        if self.post_hook:
            self.post_hook(named, None)
        return out

    def _tune(self, args, kwargs, grid, named, key_vals, target, nargs):
        configs = self.prune_configs({k: v for k, v in kwargs.items()}, nargs)
        if len(configs) == 1 and not self.early_config_prune and len(self.configs) == 1:
            return configs[0]
        entry_key = json.dumps({"key": list(key_vals), "target": target})
        known = self._load().get("entries", {}).get(entry_key, {})
        todo = [c for c in configs if str(c) not in known]
        name = self.jit_function.__name__
        # Compile every config not yet timed before timing any (the native compiler runs without the GIL).
        if todo:
            def compile_one(c):
                try:
                    c_args, c_kwargs = args, kwargs
                    if c.pre_hook:
                        # The hook may set what the specialization depends on (a descriptor's block shape, from
                        # the config): run it on copies of the descriptors, so that configs compiled at once in
                        # other threads, and the arguments themselves, are left alone.
                        c_args, c_kwargs = _with_copied_descriptors(args, kwargs)
                        c_named = _bind_partial(self.jit_function, c_args, c_kwargs)
                        c.pre_hook({**c_named, **c.all_kwargs()})
                    self.fn.warmup(*c_args, grid=grid, **c_kwargs, **c.all_kwargs())
                    return None
                except Exception as e:  # noqa: BLE001 - a config that does not compile is skipped, as Triton does
                    return e

            workers = builtins.min(len(todo), os.cpu_count() or 1)
            with ThreadPoolExecutor(max_workers=workers) as pool:
                errors = list(pool.map(compile_one, todo))
        else:
            errors = []
        saved = {n: _copy(named[n]) for n in self.restore_value}
        timings = dict(known)
        fresh = {}
        for i, (c, err) in enumerate(zip(todo, errors)):
            if err is not None:
                fresh[str(c)] = float("inf")
            else:
                fresh[str(c)] = float(self._bench_one(args, kwargs, grid, c, named, saved))
            timings[str(c)] = fresh[str(c)]
            listed = {str(x) for x in configs}
            cur = builtins.min((t, s) for s, t in timings.items() if s in listed)
            _progress(f"[tessel autotune] {name}: config {i + 1}/{len(todo)} timed, best {cur[0]:.4f} ms ({cur[1]})",
                      last=i + 1 == len(todo))
        for n, copy in saved.items():
            _restore(named[n], copy)
        if fresh:
            self._store(entry_key, fresh)
        self.configs_timings = {c: timings.get(str(c), float("inf")) for c in configs}
        best = builtins.min(configs, key=lambda c: self.configs_timings[c])
        if self.configs_timings[best] == float("inf"):
            first = next((e for e in errors if e is not None), None)
            raise RuntimeError(f"autotune: no config of `{name}` compiled and ran") from first
        return best

    def warmup(self, *args, **kwargs):
        nargs = dict(zip(self.jit_function.arg_names, args))
        launch_kwargs = {k: v for k, v in kwargs.items() if k != "grid"}
        return [self.fn.warmup(*args, **kwargs, **c.all_kwargs()) for c in self.prune_configs(launch_kwargs, nargs)]


def _with_copied_descriptors(args, kwargs):
    """`args` and `kwargs` with each tensor descriptor replaced by a copy (its lists copied too)."""
    from .tools import HostDescriptor

    def copy(v):
        return v._tessel_copy() if isinstance(v, HostDescriptor) else v

    return tuple(copy(a) for a in args), {k: copy(v) for k, v in kwargs.items()}


def _bind_partial(jf, args, kwargs):
    """The kernel's arguments given so far, by name (launch options left out)."""
    kwargs = {k: v for k, v in kwargs.items() if k not in _LAUNCH_OPTIONS}
    return dict(jf.signature.bind_partial(*args, **kwargs).arguments)


def _progress(line, last):
    """One progress line rewritten in place on a terminal; elsewhere (a log, a pipe) only the last one."""
    if sys.stderr.isatty():
        sys.stderr.write("\r" + line + "\x1b[K" + ("\n" if last else ""))
    elif last:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _zero(v):
    if hasattr(v, "zero_"):
        v.zero_()
    else:
        v[...] = 0


def _copy(v):
    return v.clone() if hasattr(v, "clone") else v.copy()


def _restore(v, copy):
    if hasattr(v, "copy_"):
        v.copy_(copy)
    else:
        v[...] = copy


class Heuristics(_Launcher):
    """Meta-parameters computed from the other arguments: `values` maps a name to `fn(args dict)`."""

    def __init__(self, fn, values):
        self.fn = fn
        self.values = values

    def _extra(self, args, kwargs):
        jf = self.jit_function
        named = _bind_partial(jf, args, kwargs)
        for name, p in jf.signature.parameters.items():
            if name not in named and p.default is not p.empty:
                named[name] = p.default
        extra = {}
        for name, f in self.values.items():
            extra[name] = f({**named, **extra})
        return extra

    def run(self, *args, grid, **kwargs):
        return self.fn.run(*args, grid=grid, **kwargs, **self._extra(args, kwargs))

    def warmup(self, *args, grid=None, **kwargs):
        return self.fn.warmup(*args, grid=grid, **kwargs, **self._extra(args, kwargs))


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=25, rep=100, use_cuda_graph=False, do_bench=None, cache_results=True):
    """Decorator: tune `configs` for each new value of the `key` arguments."""

    def decorator(fn):
        return Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value, warmup, rep, do_bench,
                         pre_hook, post_hook, cache_results)

    return decorator


def heuristics(values):
    """Decorator: compute meta-parameters from the arguments (`values`: name -> function of the args dict)."""

    def decorator(fn):
        return Heuristics(fn, values)

    return decorator
