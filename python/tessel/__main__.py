"""`python -m tessel SCRIPT.py [ARGS...]`: runs a Triton script unmodified, with `triton` resolving to tessel.
`python -m tessel -m MODULE [ARGS...]` runs a module the same way (`python -m tessel -m pytest 04-tma.py` runs a
tutorial's tests on tessel).

Kernels run on the GPU when their arguments are CUDA torch tensors and tessel finds a GPU, else (numpy arrays,
CPU tensors, or `TRITON_INTERPRET=1`) in tessel's interpreter.
"""

import os
import runpy
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m tessel SCRIPT.py [ARGS...]\n       python -m tessel -m MODULE [ARGS...]\n\n"
              + __doc__.strip())
        return 0 if argv else 2
    if argv[0] == "-m":
        if len(argv) < 2:
            print("python -m tessel: -m needs a module name", file=sys.stderr)
            return 2
        from . import shim

        shim.install()
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"python -m tessel: no such file: {script}", file=sys.stderr)
        return 2
    from . import shim

    shim.install()
    sys.argv = [script] + argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
