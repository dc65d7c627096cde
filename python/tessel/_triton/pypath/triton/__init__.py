"""`triton` for the child processes of `python -m tessel SCRIPT|-m MODULE`: that command puts this package's
folder first on the children's `PYTHONPATH`, so their `import triton` lands here, and this installs tessel's
shim (`tessel.shim.install()`), which replaces this module in `sys.modules` with tessel's `triton`.
"""

from tessel import shim

shim.install()
