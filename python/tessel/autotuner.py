"""`@tessel.autotune` / `@triton.autotune`, `tessel.Config`, `@tessel.heuristics`.

The autotuner compiles every (pruned) config of a new key first, in parallel threads (the native compiler
releases the GIL), then times each with `do_bench`, showing one updating progress line on stderr, and launches
the fastest. Timings persist in a JSON file per kernel under `$TESSEL_CACHE_DIR/tune` (else
`$XDG_CACHE_HOME/tessel/tune`, else `~/.cache/tessel/tune`), keyed by the kernel's source hash, the key values,
the target and each config, so a later process reuses them; when the config list changes, the timings of configs
still listed are kept and only the new ones are timed. `_tune_cache.py` reads and writes the file: a damaged one
is a miss, concurrent tuners keep each other's entries, an unwritable one only warns.
"""

from __future__ import annotations

import builtins
import inspect
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from . import _tune_cache
from ._tessel import DEFAULT_LAUNCH
from ._triton.interface import AutotunerError, KernelInterface
from .jit import JITFunction, _interpret_requested, _use_interpreter
from .runtime import gpu_target
from .tools import TensorDescriptor


class Config:
    """One candidate: meta-parameters (`kwargs`) and launch options. `ir_override` (Triton's file of IR to
    compile instead of the kernel's source) is refused: tessel compiles from the source."""

    def __init__(self, kwargs, num_warps=DEFAULT_LAUNCH["num_warps"], num_stages=DEFAULT_LAUNCH["num_stages"],
                 num_ctas=DEFAULT_LAUNCH["num_ctas"], maxnreg=DEFAULT_LAUNCH["maxnreg"], pre_hook=None,
                 ir_override=None):
        if ir_override is not None:
            raise NotImplementedError(f"Config(ir_override={ir_override!r}): tessel compiles kernels from their "
                                      "Python source and cannot take IR files")
        self.kwargs = kwargs
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.ir_override = None

    def __setstate__(self, state):
        d = DEFAULT_LAUNCH
        self.__init__(state.get("kwargs", {}), state.get("num_warps", d["num_warps"]),
                      state.get("num_stages", d["num_stages"]), state.get("num_ctas", d["num_ctas"]),
                      state.get("maxnreg", d["maxnreg"]), state.get("pre_hook"), state.get("ir_override"))

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


def _key_part(v):
    if hasattr(v, "dtype") and hasattr(v, "shape"):
        return str(v.dtype)
    return repr(v)


class _Launcher(KernelInterface):
    """Shared by Autotuner and Heuristics: `kernel[grid](...)` (KernelInterface's), and the JITFunction
    underneath; attributes they do not have are the wrapped kernel's."""

    @property
    def jit_function(self):
        f = self.fn
        while not isinstance(f, JITFunction) and hasattr(f, "fn"):
            f = f.fn
        return f

    def __getattr__(self, name):
        if name == "fn":
            raise AttributeError(name)
        return getattr(self.fn, name)


def _reset_and_restore_hooks(tuner):
    """Triton's default benchmarking hooks: `reset_to_zero` arguments zeroed before each timed run (and once
    after tuning, `reset_only`), `restore_value` arguments copied before and restored after each."""

    def pre_hook(kwargs, reset_only=False):
        for name in tuner.reset_to_zero:
            _zero(kwargs[name])
        if not reset_only:
            tuner.restore_copies = {name: _copy(kwargs[name]) for name in tuner.restore_value}

    def post_hook(kwargs, exception):
        for name in tuner.restore_value:
            _restore(kwargs[name], tuner.restore_copies[name])
        tuner.restore_copies = {}

    return pre_hook, post_hook


class Autotuner(_Launcher):
    """`@triton.autotune`'s kernel, built as Triton builds it: `Autotuner(fn, arg_names, configs, key,
    reset_to_zero, restore_value, pre_hook=None, post_hook=None, prune_configs_by=None, warmup=None, rep=None,
    use_cuda_graph=False, do_bench=None, cache_results=False)`. `pre_hook(kwargs, reset_only=False)` and
    `post_hook(kwargs, exception)` run around each timed launch (replacing the `reset_to_zero` /
    `restore_value` handling, as in Triton); a config's own `pre_hook` runs before each of its launches.
    `cache_results` is accepted and changes nothing: tessel keeps every kernel's timings on disk (the module's
    docstring says where)."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=None, post_hook=None,
                 prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        self.fn = fn
        self.base_fn = fn
        while not inspect.isfunction(self.base_fn) and hasattr(self.base_fn, "fn"):
            self.base_fn = self.base_fn.fn
        self.arg_names = list(arg_names)
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key)
        self.cache = {}
        self.cache_results = cache_results
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.restore_copies = {}
        default_pre, default_post = _reset_and_restore_hooks(self)
        self.user_defined_pre_hook = pre_hook is not None
        self.user_defined_post_hook = post_hook is not None
        self.pre_hook = pre_hook or default_pre
        self.post_hook = post_hook or default_post
        prune = prune_configs_by or {}
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        self.num_warmups, self.num_reps = warmup, rep
        self.use_cuda_graph = use_cuda_graph
        self._do_bench = do_bench
        self.nargs = None
        self.best_config = None
        self.configs_timings = None
        self.bench_time = None
        # The tuned dispatch (`_dispatch`): the chosen config by a key read straight off the arguments.
        self._key_index = [self.arg_names.index(k) for k in self.keys if k in self.arg_names]
        self._chosen = {}

    @property
    def do_bench(self):
        """`do_bench(fn, quantiles)`: the function that times one config (the one given, else `triton.testing`'s
        with the deprecated `warmup`/`rep`, or the CUDA-graph one with `use_cuda_graph`)."""
        if self._do_bench is not None:
            return self._do_bench
        from . import testing

        warmup = 25 if self.num_warmups is None else self.num_warmups
        rep = 100 if self.num_reps is None else self.num_reps
        if self.use_cuda_graph:
            return lambda fn, quantiles: testing.do_bench_cudagraph(fn, rep=rep, quantiles=quantiles)
        return lambda fn, quantiles: testing.do_bench(fn, warmup=warmup, rep=rep, quantiles=quantiles)

    # --- the persistent cache ---
    def _cache_path(self):
        jf = self.jit_function
        return os.path.join(_tune_cache.tune_dir(), f"{jf.__name__}-{jf.src_hash[:16]}.json")

    def _load(self):
        """The timings on disk for this kernel's source: `{entry key: {config: ms}}`, `{}` when none (or the file
        was damaged)."""
        jf = self.jit_function
        return _tune_cache.load(self._cache_path(), jf.__name__, jf.src_hash)

    def _store(self, entry_key, timings):
        jf = self.jit_function
        _tune_cache.store(self._cache_path(), jf.__name__, jf.src_hash, entry_key, timings)

    # --- tuning ---
    def prune_configs(self, kwargs, nargs=None):
        """The configs to time, as Triton prunes them: `early_config_prune(configs, nargs, **kwargs)` and
        `perf_model(**nargs, **kwargs, **config.all_kwargs())`, where `nargs` are the arguments given by position
        (by name; `self.nargs` during a launch) and `kwargs` those given by keyword."""
        nargs = (self.nargs or {}) if nargs is None else nargs
        configs = self.configs
        if self.early_config_prune:
            configs = list(self.early_config_prune(self.configs, nargs, **kwargs))
            if not configs:
                raise AutotunerError(f"no config of `{self.base_fn.__name__}` is left after early_config_prune "
                                     "(it must return at least one)")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(self.configs) * top_k)
            elif not isinstance(top_k, int):
                raise TypeError("prune_configs_by['top_k'] must be a float <= 1.0 or an int")
            if len(configs) > top_k:
                est = {c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in configs}
                configs = sorted(est, key=est.get)[:top_k]
        return configs

    def _bench_one(self, args, kwargs, config):
        current = {**kwargs, **config.all_kwargs()}
        full_nargs = {**self.nargs, **current}

        def call():
            if config.pre_hook:
                config.pre_hook(full_nargs)
            self.pre_hook(full_nargs)
            try:
                self.fn.run(*args, **current)
            except Exception as e:
                self.post_hook(full_nargs, exception=e)
                raise
            self.post_hook(full_nargs, exception=None)

        t = self.do_bench(call, quantiles=(0.5, 0.2, 0.8))
        return float(t[0] if isinstance(t, (list, tuple)) else t)

    def run(self, *args, **kwargs):
        """Launches with the best config for these arguments (tuning first when their key is new); `kwargs`
        holds `grid` and `warmup` (given by `kernel[grid](...)`) besides the kernel's keyword arguments."""
        hit = self._dispatch(args, kwargs)
        if hit is not None:
            config, config_kwargs, _ = hit
            self.best_config = config
            if config.pre_hook is not None:
                # Every launch runs the config's pre-hook (tutorial 06's sets its descriptors' block shapes).
                config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config_kwargs})
            return self.fn.run(*args, **kwargs, **config_kwargs)
        if kwargs.get("warmup"):
            kwargs.pop("warmup")
            return self.warmup(*args, **kwargs)
        # `warmup=False` stays among the keywords, as in Triton: hooks and pruning see it, and the kernel's `run`
        # (a library's KernelInterface.run(*args, grid, warmup, **kwargs)) needs it.
        kwargs.setdefault("warmup", False)
        if "grid" not in kwargs:
            raise TypeError(f"{type(self).__name__}.run() needs grid=")
        self.nargs = dict(zip(self.arg_names, args))
        try:
            if len(self.configs) > 1:
                given = {k: v for k, v in {**self.nargs, **kwargs}.items() if k in self.arg_names}
                key_vals = tuple(_key_part(given[k]) for k in self.keys if k in given)
                key_vals += tuple(str(v.dtype) for v in given.values() if hasattr(v, "dtype"))
                interpret = _use_interpreter(given.values())
                key = (key_vals, "interpreter" if interpret else (gpu_target() or "cuda"))
                if key not in self.cache:
                    self.cache[key] = self._tune(args, kwargs, key)
                config = self.cache[key]
            else:
                key = None
                config = self.configs[0]
            self.best_config = config
            if config.pre_hook is not None:
                config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
            self._remember(args, kwargs, config, key)
            return self.fn.run(*args, **kwargs, **config.all_kwargs())
        finally:
            self.nargs = None

    # --- the tuned dispatch: what a launch costs once its key has a config ---
    _SIMPLE = frozenset({int, float, str, bool, type(None)})
    _CHOSEN_MAX = 4096

    def _fast_key(self, args, kwargs):
        """A key that determines the config as `run`'s does, read off the arguments without binding them: the
        key arguments' values, each argument's dtype and whether it is a CUDA tensor, the other keyword
        arguments (simple values only) and TRITON_INTERPRET; None when the arguments need `run`'s binding."""
        index = self._key_index
        simple = self._SIMPLE
        # Key arguments given by keyword (tutorial 06's N_CTX, HEAD_DIM...) are among the simple keywords below.
        n = len(args)
        if len(index) != len(self.keys) or any(i < n and args[i].__class__ not in simple for i in index):
            return None
        extra = []
        for k, v in kwargs.items():
            if k != "grid" and k != "warmup":
                if v.__class__ not in simple:
                    return None
                extra.append((k, v))
        kinds = []
        for a in args:
            dtype = getattr(a, "dtype", None)
            if dtype is not None:
                kinds.append((dtype, getattr(a, "is_cuda", False)))
            elif a.__class__ is TensorDescriptor:
                # Not part of `run`'s key (no dtype), but where its base lives picks the interpreter or the GPU.
                kinds.append((TensorDescriptor, getattr(a.base, "is_cuda", False)))
            elif a.__class__ not in simple:
                return None
        return (tuple([args[i] for i in index if i < n]), tuple(kinds), tuple(extra), _interpret_requested())

    def _dispatch(self, args, kwargs):
        """(config, its launch keywords) for arguments whose fast key has been dispatched before, else None (also
        when the tuning that chose the config was dropped from `cache` since)."""
        chosen = self._chosen
        if not chosen or kwargs.get("warmup"):
            return None
        key = self._fast_key(args, kwargs)
        hit = None if key is None else chosen.get(key)
        if hit is not None and hit[2] is not None and self.cache.get(hit[2]) is not hit[0]:
            chosen.clear()
            return None
        return hit

    def _remember(self, args, kwargs, config, tuning_key):
        """Remembers `config` for these arguments' fast key; `tuning_key` is its entry in `cache` (None for a
        single config, which is never tuned)."""
        key = self._fast_key(args, kwargs)
        if key is not None:
            if len(self._chosen) >= self._CHOSEN_MAX:
                self._chosen.clear()
            self._chosen[key] = (config, config.all_kwargs(), tuning_key)

    def _tune(self, args, kwargs, key):
        key_vals, target = key
        start = time.time()
        configs = self.prune_configs(kwargs)
        grid = kwargs["grid"]
        launch_kwargs = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        entry_key = json.dumps({"key": list(key_vals), "target": target})
        known = self._load().get(entry_key, {})
        todo = [c for c in configs if str(c) not in known]
        name = self.base_fn.__name__
        # Compile every config not yet timed before timing any (the native compiler runs without the GIL).
        if todo:
            def compile_one(c):
                try:
                    c_args, c_kwargs = args, launch_kwargs
                    if c.pre_hook and _has_descriptors(args, launch_kwargs):
                        # The hook may set what the specialization depends on (a descriptor's block shape, from
                        # the config): run it on copies of the descriptors, so that configs compiled at once in
                        # other threads, and the arguments themselves, are left alone. Nothing else a hook can
                        # change in place alters the specialization, so without descriptors it runs only where
                        # Triton runs it (before each timed launch).
                        c_args, c_kwargs = _with_copied_descriptors(args, launch_kwargs)
                        c_named = {**dict(zip(self.arg_names, c_args)), **c_kwargs}
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
        timings = dict(known)
        fresh = {}
        listed = {str(x) for x in configs}
        for i, (c, err) in enumerate(zip(todo, errors)):
            if _print_autotuning():
                print(f"Autotuning kernel {name} with config {c}")
            fresh[str(c)] = float("inf") if err is not None else self._bench_one(args, kwargs, c)
            timings[str(c)] = fresh[str(c)]
            cur = builtins.min((t, s) for s, t in timings.items() if s in listed)
            _progress(f"[tessel autotune] {name}: config {i + 1}/{len(todo)} timed, best {cur[0]:.4f} ms ({cur[1]})",
                      last=i + 1 == len(todo))
        if fresh:
            self._store(entry_key, fresh)
        self.configs_timings = {c: timings.get(str(c), float("inf")) for c in configs}
        best = builtins.min(configs, key=lambda c: self.configs_timings[c])
        if self.configs_timings[best] == float("inf"):
            first = next((e for e in errors if e is not None), None)
            raise AutotunerError(f"no config of `{name}` compiled and ran") from first
        if todo:
            self.pre_hook({**self.nargs, **kwargs, **best.all_kwargs()}, reset_only=True)
        self.bench_time = time.time() - start
        if _print_autotuning():
            print(f"Triton autotuning for function {name},\nwith key as {key_vals},\n"
                  f"finished after {self.bench_time:.2f}s,\nbest config selected: {best};")
        return best

    def warmup(self, *args, **kwargs):
        """Compiles every (pruned) config for these arguments, without running any."""
        self.nargs = dict(zip(self.arg_names, args))
        try:
            return [self.fn.warmup(*args, **kwargs, **c.all_kwargs()) for c in self.prune_configs(kwargs)]
        finally:
            self.nargs = None


def _print_autotuning():
    """`knobs.autotuning.print` (`TRITON_PRINT_AUTOTUNING`)."""
    return os.environ.get("TRITON_PRINT_AUTOTUNING", "0").lower() in ("1", "true", "on", "yes")


def _has_descriptors(args, kwargs):
    from .tools import HostDescriptor

    return any(isinstance(v, HostDescriptor) for v in (*args, *kwargs.values()))


def _with_copied_descriptors(args, kwargs):
    """`args` and `kwargs` with each tensor descriptor replaced by a copy (its lists copied too)."""
    from .tools import HostDescriptor

    def copy(v):
        return v._tessel_copy() if isinstance(v, HostDescriptor) else v

    return tuple(copy(a) for a in args), {k: copy(v) for k, v in kwargs.items()}


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
    """`@triton.heuristics`'s kernel, built as Triton builds it: `Heuristics(fn, arg_names, values)`, where
    `values` maps a meta-parameter's name to a function of the arguments (a dict, defaults included)."""

    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.arg_names = list(arg_names)
        self.values = values

    def _extra(self, args, kwargs):
        named = {**dict(zip(self.arg_names, args)), **kwargs}
        jf = self.jit_function
        signature = getattr(jf, "signature", None)
        if signature is not None:
            for name, p in signature.parameters.items():
                if name not in named and p.default is not p.empty:
                    named[name] = p.default
        extra = {}
        for name, f in self.values.items():
            extra[name] = f({**named, **extra})
        return extra

    def run(self, *args, **kwargs):
        return self.fn.run(*args, **kwargs, **self._extra(args, kwargs))


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    """Decorator: tune `configs` for each new value of the `key` arguments."""

    def decorator(fn):
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench, cache_results=cache_results)

    return decorator


def heuristics(values):
    """Decorator: compute meta-parameters from the arguments (`values`: name -> function of the args dict)."""

    def decorator(fn):
        return Heuristics(fn, fn.arg_names, values)

    return decorator
