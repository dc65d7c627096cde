"""Run at interpreter startup by the `.pth` line of `python -m tessel shim install` (see `install`): puts a
finder first on `sys.meta_path` that imports tessel and installs its shim only when `triton` is first imported.
Executed as source, not imported with tessel (that would load the native compiler at every startup), so it
imports nothing beyond what startup already has. `TESSEL_SHIM=0` in the environment leaves `triton` alone."""

import os
import sys


class TesselTritonFinder:
    def __init__(self, pth):
        self.pth = pth

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] != "triton" or os.environ.get("TESSEL_SHIM") == "0":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        try:
            from tessel import shim
        except ImportError as e:
            raise ImportError(f"`import triton` resolves to tessel here ({self.pth}, written by `python -m tessel "
                              f"shim install`), but tessel cannot be imported: {e}; remove that file") from e
        shim.install()
        if fullname not in sys.modules:
            raise ModuleNotFoundError(f"No module named '{fullname}': tessel stands in for Triton here and does "
                                      f"not provide the module `{fullname}`", name=fullname)
        return sys.modules[fullname].__spec__


if "triton" not in sys.modules and not any(type(f).__name__ == "TesselTritonFinder" for f in sys.meta_path):
    sys.meta_path.insert(0, TesselTritonFinder(globals().get("PTH_FILE", "a .pth file")))
