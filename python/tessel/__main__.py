"""`python -m tessel SCRIPT.py [ARGS...]`: runs a Triton script unmodified, with `triton` resolving to tessel.

Kernels run on the GPU when their arguments are CUDA torch tensors and tessel finds a GPU, else (numpy arrays,
CPU tensors, or `TRITON_INTERPRET=1`) in tessel's interpreter.
"""

import os
import runpy
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m tessel SCRIPT.py [ARGS...]\n\n" + __doc__.strip())
        return 0 if argv else 2
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
