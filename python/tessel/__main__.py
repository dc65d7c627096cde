"""`python -m tessel SCRIPT.py [ARGS...]`: runs a Triton script unmodified, with `triton` resolving to tessel.
`python -m tessel -m MODULE [ARGS...]` runs a module the same way (`python -m tessel -m pytest 04-tma.py` runs a
tutorial's tests on tessel), and `python -m tessel -c CODE [ARGS...]` a string of code.

Kernels run on the GPU when their arguments are CUDA torch tensors and tessel finds a GPU, else (numpy arrays,
CPU tensors, or `TRITON_INTERPRET=1`) in tessel's interpreter.

Child processes (pytest workers, torch's compile workers, `subprocess` of Python) resolve `triton` to tessel
too: `python -m tessel` puts a folder holding a `triton` package that installs the shim
(`tessel/_triton/pypath`) first on their `PYTHONPATH`.

`python -m tessel shim install | uninstall | status [SITE_DIR]` makes every process of this Python environment
resolve `import triton` to tessel, without `python -m tessel`, through a `.pth` file in site-packages
(`tessel._triton.install` says how), and undoes it.
"""

import os
import runpy
import sys


def _shim_for_children():
    """Installs the shim here and makes child Python processes install it too (PYTHONPATH)."""
    from . import shim
    from ._triton.install import CHILD_PATH

    shim.install()
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != CHILD_PATH]
    os.environ["PYTHONPATH"] = os.pathsep.join([CHILD_PATH] + paths)
    # Also first on this process's path (where `triton` is already tessel's): torch's inductor starts its compile
    # workers with PYTHONPATH set to this process's `sys.path`, not to its PYTHONPATH.
    if CHILD_PATH not in sys.path:
        sys.path.insert(0, CHILD_PATH)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "shim" and not os.path.isfile("shim"):  # a script named `shim` still runs
        from ._triton import install

        return install.main(argv[1:])
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m tessel SCRIPT.py [ARGS...]\n       python -m tessel -m MODULE [ARGS...]\n"
              "       python -m tessel -c CODE [ARGS...]\n"
              "       python -m tessel shim install|uninstall|status [SITE_DIR]\n\n"
              + __doc__.strip())
        return 0 if argv else 2
    if argv[0] == "-c":
        if len(argv) < 2:
            print("python -m tessel: -c needs the code to run", file=sys.stderr)
            return 2
        _shim_for_children()
        sys.argv = ["-c"] + argv[2:]
        sys.path.insert(0, "")
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        return 0
    if argv[0] == "-m":
        if len(argv) < 2:
            print("python -m tessel: -m needs a module name", file=sys.stderr)
            return 2
        _shim_for_children()
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"python -m tessel: no such file: {script}", file=sys.stderr)
        return 2
    _shim_for_children()
    sys.argv = [script] + argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
