"""A compiled specialization (`CompiledKernel`, what `kernel.warmup(...)` returns, as Triton's) and its
resource usage: shared memory from the compiler, registers and spills from `ptxas -v` over its PTX. Also how one
is launched with Triton's launcher arguments (`CompiledKernel.run`, what torch's inductor calls), and how its
native code is rebuilt from its recipe (`build_native`, for a kernel sent between processes)."""

from __future__ import annotations

import collections
import os
import sys

from . import _tessel
from ._sass import find_ptxas
from ._memory import HostRegions, is_torch_tensor


class CompiledKernel:
    """One specialization of a kernel: its tile IR (`asm["tile"]`), PTX on demand (`ptx(target)`, `asm["ptx"]`).

    As Triton's compiled kernel (what `kernel.warmup(...)` returns): `kernel[grid](*args)` launches this
    specialization with its launch options (the arguments are all the kernel's, constexprs included, as Triton
    takes them); `_init_handles()` loads it on the current CUDA device (when it is a GPU specialization) and finds
    its resources: `metadata.shared` (the dynamic shared memory it launches with, from the compiler), `n_regs` and
    `n_spills` (registers per thread, and spilled 4-byte words, from `ptxas -v` over its PTX when a ptxas is
    found; see `resource_usage`)."""

    # Triton's class-level launch hooks (read by torch's inductor when `triton.knobs` is absent).
    launch_enter_hook = None
    launch_exit_hook = None

    def __init__(self, native, spec_key, options, jit_function=None, *, src=None, recipe=None, target=None,
                 hash=None):
        self.native = native
        self.spec_key = spec_key
        self.options = options
        self.name = native.name
        self.fn = jit_function
        self._resources = None
        self._ptx_ready = False
        # Set when compiled through `triton.compile` (see `_compiler_face`): the `ASTSource`, what rebuilds the
        # native kernel in another process (`_recipe`), the target and the hash.
        self.src = src
        self._recipe = recipe
        self._compile_target = target
        self.hash = hash

    # The native kernel lives in a slot, outside the instance's `__dict__`: torch's inductor copies that dict to
    # send a compiled kernel between processes, and the native object does not pickle (`__getstate__` leaves it
    # out too). A copy rebuilt from its `__dict__` recompiles from `_recipe` on first use. A slot, not a side
    # table: every launch reads it. `_handles` (set by `_init_handles`) is a slot for the same reason: a copy
    # made from `__dict__` must run `_init_handles` again.
    __slots__ = ("__dict__", "__weakref__", "_native", "_handles", "_run_fn")

    @property
    def native(self):
        try:
            return self._native
        except AttributeError:
            recipe = self.__dict__.get("_recipe")
            if recipe is None:
                raise RuntimeError(f"`{self.name}`: this compiled kernel has no native code and no recipe to build it")
            self._native = build_native(recipe)
            return self._native

    @native.setter
    def native(self, value):
        self._native = value
        self.__dict__.pop("_runners", None)  # launch functions made for the previous native kernel
        try:
            del self._run_fn
        except AttributeError:
            pass

    def __getstate__(self):
        return self.__dict__.copy()

    @property
    def asm(self):
        return _Asm(self)

    def ptx(self, target=None):
        """The kernel's PTX for `target` (`sm_80`, `sm_90a`, `sm_100a`; by default the GPU's, or without one the
        target the kernel needs)."""
        return self.native.ptx(target or self._target())

    @property
    def interpreted(self) -> bool:
        """Whether this specialization is the interpreter's (its arguments were in host memory)."""
        return bool(self.spec_key[-1])

    def _target(self):
        target = self.__dict__.get("_compile_target")
        if target is not None and target.backend == "cuda":
            # The architecture `triton.compile` was given (no driver call: inductor's compile workers are forked
            # and must not touch CUDA): sm_90 and newer as their `a` variants, as tessel targets them.
            arch = int(target.arch)
            return f"sm_{arch}a" if arch >= 90 else f"sm_{arch}"
        from .runtime import gpu_target

        # Without a GPU: sm_90a, or sm_100a for a kernel that uses Blackwell's tensor memory or tcgen05.
        return gpu_target() or self.native.tile_target

    # --- Triton's compiled-kernel surface ---
    def __getitem__(self, grid):
        """`compiled[grid](*args)`: launches this specialization, as Triton's compiled kernel does. All the
        kernel's arguments are given by position (constexprs included, as Triton takes them); on CUDA tensors
        they are packed straight from the specialization (no key is built: the caller chose the kernel), on
        torch's current stream or `stream=`."""
        runners = self.__dict__.get("_runners")
        if runners is None:
            runners = self._runners = {}
        runner = runners.get(grid) if type(grid) is tuple else None
        if runner is None:
            runner = self._runner(grid)
            if type(grid) is tuple and len(runners) < 64:
                runners[grid] = runner  # scripts launch a warmed-up kernel on the same grid call after call
        return runner

    def _runner(self, grid):
        """The launch function `compiled[grid]` returns: the arguments packed straight from the specialization on
        CUDA tensors, else bound as the kernel binds them."""
        if self.fn is None:
            raise RuntimeError(f"`{self.name}` was compiled without its kernel: launch it through the kernel")
        from ._launcher import _LAUNCH_OPTIONS, _N_KEY_OPTIONS, _stream_of, grid_fast

        def slow(*args, stream=None, **kwargs):
            values, bound = self.fn._binder(*args, **kwargs)
            opts = tuple(self.options[k] for k in _LAUNCH_OPTIONS) + tuple(bound[_N_KEY_OPTIONS:])
            return self.fn._run_slow(values, opts, grid)

        packing = self._packing()
        g = grid_fast(grid) if type(grid) is tuple else None
        if packing is None or self.interpreted or g is None:
            return slow
        n_args = len(self.fn.arg_names)
        launch = self.native.launch

        def fast(*args, stream=None, **kwargs):
            if kwargs or len(args) != n_args:
                return slow(*args, stream=stream, **kwargs)
            ir_args = []
            device = -1
            for index, kind in packing:
                v = args[index]
                if kind == 0:
                    ir_args.append(v.data_ptr())
                    if device < 0:
                        device = v.get_device()
                elif kind == 1:
                    ir_args.append(int(v))
                else:
                    ir_args.append(float(v))
            if device < 0:
                return slow(*args, stream=stream)
            launch(device, _stream_of(device) if stream is None else stream, g, ir_args)
            return None

        return fast

    def _packing(self):
        """For each runtime argument of this specialization, in order: (its position among the kernel's
        arguments, 0 for a pointer, 1 for an int or bool, 2 for a float); None when an argument needs more than
        that (a tensor descriptor)."""
        if "_packing_cache" in self.__dict__:
            return self._packing_cache
        packing = []
        for (index, _name, _constexpr, _dns), spec in zip(self.fn._launch_plan(), self.spec_key):
            kind = spec[0]
            if kind == "const":
                continue
            if kind == "ptr":
                packing.append((index, 0))
            elif kind == "int":
                packing.append((index, 1))
            elif kind == "float":
                packing.append((index, 2))
            else:
                packing = None
                break
        self._packing_cache = packing
        return packing

    def _init_handles(self):
        """Loads the kernel on the current CUDA device (a GPU specialization) and finds its resource usage; once
        (tutorial 02 calls it before every launch)."""
        try:
            if self._handles:
                return
        except AttributeError:
            pass
        for attr in ("run", "function", "module"):  # what torch's inductor blanks when it sends a kernel across
            if attr in self.__dict__ and self.__dict__[attr] is None:
                del self.__dict__[attr]
        if not self.__dict__.get("_loaded"):
            if not self.interpreted:
                torch = sys.modules.get("torch")
                if torch is not None and torch.cuda.is_available():
                    self.native.load(torch.cuda.current_device())
            self._loaded = True
        self._find_resources()
        self._handles = True

    def _find_resources(self):
        """The resource usage (`_resources`), found once, without loading anything on a device (inductor reads
        `metadata` in its compile workers, which must not touch CUDA)."""
        if self._resources is not None:
            return
        if self.interpreted and self.__dict__.get("_compile_target") is not None:
            # Compiled for the interpreter through `triton.compile`: no registers, spills or shared memory exist.
            self._resources = {"shared": 0, "n_regs": 0, "n_spills": 0}
        else:
            self._resources = resource_usage(self)

    @property
    def n_regs(self):
        if self._resources is None:
            self._find_resources()
        return self._resources["n_regs"]

    @property
    def n_spills(self):
        if self._resources is None:
            self._find_resources()
        return self._resources["n_spills"]

    @property
    def shared(self):
        return self.metadata.shared

    @property
    def function(self):
        """Triton's `CUfunction` handle slot, which `run` receives back: tessel's native kernel (the handle stays
        inside it)."""
        try:
            return self._native
        except AttributeError:
            return self.native

    @property
    def metadata(self):
        """Triton's `metadata` (built once: scripts read it around every launch)."""
        m = self.__dict__.get("_metadata")
        if m is not None:
            return m
        from .runtime import GPUTarget

        self._find_resources()
        target = self.__dict__.get("_compile_target")
        if target is None:
            t = self._target()
            target = GPUTarget("cuda", int(t[3:].rstrip("a")), 32)
        o = self.options
        self._metadata = KernelMetadata(
            name=self.name, hash=self.__dict__.get("hash"), shared=self._resources["shared"],
            num_warps=o["num_warps"], num_stages=o["num_stages"], num_ctas=o["num_ctas"], cluster_dims=(o["num_ctas"], 1, 1),
            maxnreg=o["maxnreg"], enable_fp_fusion=o["enable_fp_fusion"], target=target,
            launch_pdl=bool(o.get("launch_pdl", False)),
            launch_cooperative_grid=bool(o.get("launch_cooperative_grid", False)), debug=bool(o.get("debug", False)),
        )
        return self._metadata

    @property
    def packed_metadata(self):
        """What Triton's launcher takes besides the arguments: (num_warps, num_ctas, shared bytes); built once
        (inductor reads it before every launch)."""
        p = self.__dict__.get("_packed_metadata")
        if p is None:
            m = self.metadata
            p = self._packed_metadata = (m.num_warps, m.num_ctas, m.shared)
        return p

    def launch_metadata(self, grid, stream, *args):
        """What launch hooks receive (Triton's `launch_metadata`): the kernel's name, grid and stream, merged with
        what the kernel's own `launch_metadata` function returns; None while no launch-enter hook is set, as in
        Triton (torch's inductor asks for it before every launch, and building it is most of that launch's
        host time)."""
        if CompiledKernel.launch_enter_hook is None:
            return None
        meta = {"name": self.name, "grid": tuple(grid), "stream": stream}
        fn = self.src.fn if self.src is not None else self.fn
        hook = getattr(fn, "launch_metadata", None)
        if callable(hook) and self.src is not None:
            named = dict(zip(fn.arg_names, args))
            meta.update(hook(tuple(grid), self.metadata, named) or {})
        return meta

    @property
    def run(self):
        """Triton's launch ABI, `run(grid_x, grid_y, grid_z, stream, function, packed_metadata, launch_metadata,
        enter_hook, exit_hook, *args)` (what torch's inductor calls): every kernel argument in signature order,
        constexprs included (dropped, as Triton's launcher drops them), on `stream`; CPU tensors run in tessel's
        interpreter, synchronously. A function generated for this specialization (see `_abi_launcher`), made on
        first use and kept in a slot (inductor blanks `run` in the `__dict__` it copies; the property wins)."""
        try:
            return self._run_fn
        except AttributeError:
            pass
        self._run_fn = fn = _abi_launcher(self)
        return fn

    def _run_abi(self, grid_x, grid_y, grid_z, stream, function, packed_metadata, launch_metadata, enter_hook,
                 exit_hook, *args):
        """`run`'s generic path: hooks, interpreted kernels, and arguments the generated launcher does not take
        inline."""
        kinds = self.__dict__.get("_arg_kinds")
        if kinds is None:
            kinds = self._arg_kinds = self._kinds_from_spec()
        if len(args) != len(kinds):
            raise TypeError(f"`{self.name}` takes {len(kinds)} arguments (constexprs included), got {len(args)}")
        if enter_hook is not None:
            enter_hook(launch_metadata)
        try:
            _launch_abi(self, (grid_x, grid_y, grid_z), stream, kinds, args)
        finally:
            if exit_hook is not None:
                exit_hook(launch_metadata)

    def _kinds_from_spec(self):
        """What `run` takes in each argument position of a kernel compiled through its launcher (`warmup`):
        "ptr", "int", "float", or None for a constant, from the specialization."""
        if self.fn is None:
            raise RuntimeError(f"`{self.name}` was compiled without its kernel: its arguments are unknown")
        by_name = {name: spec for (_i, name, _c, _d), spec in zip(self.fn._launch_plan(), self.spec_key)}
        kinds = []
        for name in self.fn.arg_names:
            kind = by_name[name][0] if name in by_name else "const"
            if kind not in ("const", "ptr", "int", "float"):
                raise NotImplementedError(
                    f"`{self.name}`: Triton's launch ABI (`CompiledKernel.run`) with a tensor descriptor argument "
                    f"(`{name}`) is not supported by tessel yet; launch it with kernel[grid]")
            kinds.append(None if kind == "const" else kind)
        return tuple(kinds)

    def __repr__(self):
        return f"<tessel.CompiledKernel {self.name} {self.options}>"


def build_native(recipe):
    """The native kernel from a recipe: (source, filename, kernel name, specs, num_warps, num_stages, maxnreg,
    num_ctas, enable_fp_fusion, module set or None). The recipe travels with the compiled kernel (inductor pickles
    it to and from its compile workers), so the module set is in it rather than looked up again where it is
    rebuilt."""
    source, filename, name, specs, num_warps, num_stages, maxnreg, num_ctas, fp_fusion, modules = recipe
    kwargs = {"modules": list(modules)} if modules is not None else {}
    return _tessel.compile(source, filename, name, list(specs), num_warps, num_stages, maxnreg, num_ctas,
                           fp_fusion=fp_fusion, **kwargs)


def _abi_launcher(compiled):
    """`compiled.run` for a GPU specialization whose arguments are pointers, ints and floats: Triton's launch ABI
    as one generated function that unpacks the arguments, packs the runtime ones inline (torch tensors by
    `data_ptr()`, on one device) and launches. Anything else (launch hooks, interpreted kernels, another
    argument count, pointers that are not torch tensors, grids that are not positive ints) takes `_run_abi`."""
    slow = compiled._run_abi
    torch = sys.modules.get("torch")
    try:
        kinds = None
        if not compiled.interpreted and torch is not None:
            kinds = compiled.__dict__.get("_arg_kinds") or compiled._kinds_from_spec()
    except (NotImplementedError, RuntimeError):
        kinds = None
    if kinds is None:
        return slow
    names = [f"a{i}" for i in range(len(kinds))]
    head = "gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter_hook, exit_hook"
    lines = [
        f"def run({head}, *args):",
        f"    if enter_hook is not None or exit_hook is not None or len(args) != {len(kinds)} or gx.__class__ is not "
        "int or gy.__class__ is not int or gz.__class__ is not int or gx <= 0 or gy <= 0 or gz <= 0:",
        f"        return slow({head}, *args)",
        f"    {', '.join(names)}{',' if len(names) == 1 else ''} = args" if names else "    pass",
    ]
    packed = []
    first = True
    for name, kind in zip(names, kinds):
        if kind == "ptr":
            lines += [f"    if {name}.__class__ is not T:", f"        return slow({head}, *args)"]
            if first:
                lines.append(f"    d = {name}.get_device()")
                first = False
            else:
                lines += [f"    if {name}.get_device() != d:", f"        return slow({head}, *args)"]
            packed.append(f"{name}.data_ptr()")
        elif kind == "int":
            packed.append(f"{name} if {name}.__class__ is int else int({name})")
        elif kind == "float":
            packed.append(f"float({name})")
    if first:
        return slow  # no tensor says which device
    pdl = ", True" if compiled.options.get("launch_pdl") else ""
    lines += [
        "    if d < 0:",
        f"        return slow({head}, *args)",
        f"    launch(d, int(stream or 0), (gx, gy, gz), [{', '.join(packed)}]{pdl})",
    ]
    scope = {"slow": slow, "T": torch.Tensor, "launch": compiled.native.launch}
    exec(compile("\n".join(lines) + "\n", f"<tessel run of {compiled.name}>", "exec"), scope)  # noqa: S102
    return scope["run"]


def _launch_abi(compiled, grid, stream, kinds, args):
    """`CompiledKernel.run`'s launch: `compiled` over `grid` with Triton's positional arguments `args` (constexprs
    included; `kinds`: "ptr", "int", "float" or None for a constant, per argument), on `stream` for CUDA tensors,
    in the interpreter for host ones."""
    if grid.__class__ is not tuple or grid[0].__class__ is not int or grid[1].__class__ is not int \
            or grid[2].__class__ is not int:
        grid = tuple(int(g) for g in grid)
    if 0 in grid:
        return
    native = compiled.native
    if not compiled.interpreted:
        packing = compiled.__dict__.get("_abi_packing")
        if packing is None:
            codes = {"ptr": 0, "int": 1, "float": 2}
            packing = compiled._abi_packing = tuple((i, codes[k]) for i, k in enumerate(kinds) if k in codes)
        tensor = getattr(sys.modules.get("torch"), "Tensor", None)
        ir_args = []
        device = -2  # none seen yet
        for i, code in packing:
            v = args[i]
            if code == 0:
                if v.__class__ is tensor or (tensor is not None and isinstance(v, tensor)):
                    d = v.get_device()
                    if d != device:
                        if d < 0:
                            raise ValueError(f"`{compiled.name}`: a CPU tensor passed to a GPU kernel")
                        if device >= 0:
                            raise ValueError(f"arguments on cuda:{device} and cuda:{d}: a kernel launches on one "
                                             "device")
                        device = d
                    ir_args.append(v.data_ptr())
                else:
                    ir_args.append(0 if v is None else int(v))  # None, or a raw device address
            elif code == 1:
                ir_args.append(int(v))
            else:
                ir_args.append(float(v))
        if device < 0:
            raise ValueError(f"`{compiled.name}` was compiled for the GPU but no argument is a CUDA tensor")
        if compiled.options.get("launch_pdl"):
            native.launch(device, int(stream or 0), grid, ir_args, True)
        else:
            native.launch(device, int(stream or 0), grid, ir_args)
        return
    regions = HostRegions()
    ir_args = []
    for kind, v in zip(kinds, args):
        if kind == "ptr":
            if not (is_torch_tensor(v) or hasattr(v, "__array_interface__")):
                raise TypeError(f"`{compiled.name}`: the interpreter takes tensors or arrays for pointers, got "
                                f"{type(v).__name__}")
            ir_args.append(("buf", regions.add(v)))
        elif kind == "int":
            ir_args.append(("int", int(v)))
        elif kind == "float":
            ir_args.append(("float", float(v)))
    if len(ir_args) != native.num_ir_args():
        raise RuntimeError(f"`{compiled.name}` takes {native.num_ir_args()} runtime arguments, the launch gives "
                           f"{len(ir_args)}")
    out, log = native.interpret(regions.buffers(), ir_args, list(grid))
    regions.write_back(out)
    for line in log:
        print(line)


KernelMetadata = collections.namedtuple(
    "KernelMetadata", "name hash shared num_warps num_stages num_ctas cluster_dims maxnreg enable_fp_fusion target "
    "launch_pdl launch_cooperative_grid debug")
KernelMetadata.__doc__ = "A compiled kernel's `metadata`, with the fields of Triton's that torch's inductor reads."


class _Asm(dict):
    """`compiled.asm`: "tile" (tessel's tile IR) and, computed when asked for, "ptx" (for the GPU's target; without
    one, sm_90a, or sm_100a for a kernel that needs Blackwell), "cubin" (that PTX assembled by ptxas) and "sass"
    (the cubin disassembled, laid out as Triton's; see `_sass`)."""

    _LAZY = ("ptx", "cubin", "sass")

    def __init__(self, compiled):
        super().__init__(tile=compiled.native.tile_ir())
        self._compiled = compiled

    def __missing__(self, key):
        from . import _sass

        if key == "ptx":
            self[key] = self._compiled.native.ptx(self._compiled._target())
        elif key == "cubin":
            self[key] = _sass.assemble(self["ptx"], self._compiled._target())
        elif key == "sass":
            self[key] = _sass.disassemble(self["cubin"])
        else:
            raise KeyError(key)
        return self[key]

    def __contains__(self, key):
        return key in self._LAZY or super().__contains__(key)


_NOTED = set()


def _note(key, text):
    if key not in _NOTED:
        _NOTED.add(key)
        print(f"[tessel] {text}", file=sys.stderr)


# The most registers a thread can have: what `n_regs` reports when it is unknown, so that occupancy arithmetic
# (registers per SM // (n_regs * threads per block)) stays an under-estimate.
MAX_REGS_PER_THREAD = 255


def resource_usage(compiled):
    """{"shared": bytes, "n_regs": registers per thread, "n_spills": spilled 4-byte words (Triton's definition:
    local memory / 4)}. Registers and spills come from `ptxas -v` over the kernel's PTX (assembled for the
    target as the loader assembles it); without a ptxas, `n_regs` is `MAX_REGS_PER_THREAD` (an upper bound)
    and `n_spills` None, and a note on stderr says so. `shared` is the compiler's; when the code generator
    cannot produce this kernel (an interpreter-only specialization), the whole shared memory of a block (an
    upper bound) with a note."""
    import re
    import subprocess
    import tempfile

    target = compiled._target()
    out = {"shared": None, "n_regs": None, "n_spills": None}
    try:
        out["shared"] = compiled.native.shared_bytes(target)
        ptx = compiled.native.ptx(target)
    except Exception as e:  # noqa: BLE001 - reported below with the upper bounds
        ptx = None
        from .runtime import driver

        out["shared"] = driver.active.utils.get_device_properties(None)["max_shared_mem"]
        _note(("shared", compiled.name), f"`{compiled.name}`: no {target} code ({str(e).splitlines()[0]}); "
              f"metadata.shared is the whole block's shared memory ({out['shared']} bytes), an upper bound")
    ptxas = find_ptxas() if ptx is not None else None
    if ptxas is not None:
        with tempfile.TemporaryDirectory(prefix="tessel-ptxas-") as d:
            src = os.path.join(d, "k.ptx")
            with open(src, "w") as f:
                f.write(ptx)
            try:
                r = subprocess.run([ptxas, "-v", "-arch", target, "-o", os.path.join(d, "k.cubin"), src],
                                   capture_output=True, text=True, timeout=300)
                text = r.stdout + r.stderr
            except (OSError, subprocess.SubprocessError) as e:
                text = str(e)
        regs = re.search(r"Used (\d+) registers", text)
        stack = re.search(r"(\d+) bytes stack frame", text)
        if regs:
            out["n_regs"] = int(regs.group(1))
            out["n_spills"] = int(stack.group(1)) // 4 if stack else 0
    if out["n_regs"] is None:
        maxnreg = compiled.options.get("maxnreg")
        out["n_regs"] = min(MAX_REGS_PER_THREAD, maxnreg) if maxnreg else MAX_REGS_PER_THREAD
        why = "no ptxas found (set PTXAS or CUDA_HOME)" if ptx is not None and ptxas is None else "ptxas said nothing"
        if ptx is None:
            why = "no PTX"
        _note(("regs", compiled.name), f"`{compiled.name}`: register count unknown ({why}); n_regs reports "
              f"{out['n_regs']}, an upper bound, so occupancy computed from it is an under-estimate")
    return out
