"""`python -m tessel shim install | uninstall | status`: whether `import triton` resolves to tessel in every
process of this Python environment, not only under `python -m tessel`.

`install` writes one file, `tessel-triton-shim.pth`, into the environment's site-packages
(`sysconfig.get_paths()["purelib"]`, or the directory given). Python runs its single line at startup: it reads
`tessel/_triton/startup.py` (when that file still exists) and puts a finder first on `sys.meta_path`; tessel is
imported only when a process first imports `triton`, so startup stays cheap: the line reads and compiles a small
file, 0.2 to 0.4 ms of an 11 to 16 ms interpreter start (`python -X importtime` shows no import added). `uninstall`
removes the file, and `import triton` finds whatever it found before (an installed Triton, or nothing). `status`
says whether the file is there and what `import triton` gives in a fresh process. A process with `TESSEL_SHIM=0`
in its environment is left alone. `import tessel` alone never touches `triton`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile

PTH_NAME = "tessel-triton-shim.pth"
STARTUP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "startup.py")
# The directory `python -m tessel` puts first on its children's PYTHONPATH (a `triton` package that installs
# the shim).
CHILD_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pypath")


def site_dir(target=None) -> str:
    return target if target is not None else sysconfig.get_paths()["purelib"]


def pth_path(target=None) -> str:
    return os.path.join(site_dir(target), PTH_NAME)


def pth_line(pth, startup=STARTUP) -> str:
    """The `.pth` file's line: an `import` line (Python executes those at startup), guarded so that a removed
    tessel leaves startup alone. `pth`: the file's own path, for the finder's messages."""
    return (f"import os; TESSEL_STARTUP = {startup!r}; f = os.path.exists(TESSEL_STARTUP) and open(TESSEL_STARTUP); "
            f"f and exec(compile(f.read(), TESSEL_STARTUP, 'exec'), {{'__name__': 'tessel_triton_startup', "
            f"'PTH_FILE': {pth!r}}}); f and f.close()\n")


def install(target=None) -> str:
    """Writes the `.pth` file into `target` (default: this environment's site-packages); its path."""
    path = pth_path(target)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(pth_line(path))
    os.replace(tmp, path)
    return path


def uninstall(target=None) -> bool:
    """Removes the `.pth` file; whether there was one."""
    try:
        os.remove(pth_path(target))
        return True
    except FileNotFoundError:
        return False


def resolve_in_subprocess(target=None, env=None) -> str:
    """What `import triton` resolves to in a fresh process of this Python (with `target` added as a site
    directory when given): the module's file, or the ImportError's message."""
    code = ("import sys, site\n"
            "if len(sys.argv) > 1: site.addsitedir(sys.argv[1])\n"
            "try:\n    import triton\n    print(getattr(triton, '__file__', None) or triton)\n"
            "except ImportError as e:\n    print(f'ImportError: {e}')\n")
    args = [sys.executable, "-c", code] + ([target] if target is not None else [])
    # From a neutral folder: `-c` puts the working directory first on sys.path, and a checkout's python/ folder
    # (a `tessel` source package without its built module) would answer instead of the environment.
    r = subprocess.run(args, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=120,
                       cwd=tempfile.gettempdir())
    lines = r.stdout.strip().splitlines() or r.stderr.strip().splitlines() or ["?"]
    return lines[-1]


def status(target=None) -> dict:
    path = pth_path(target)
    resolved = resolve_in_subprocess(target)
    tessel_dir = os.path.dirname(os.path.dirname(STARTUP))
    return {"installed": os.path.exists(path), "pth": path, "triton": resolved,
            "tessel": resolved.startswith(tessel_dir)}


USAGE = """usage: python -m tessel shim install [SITE_DIR]
       python -m tessel shim uninstall [SITE_DIR]
       python -m tessel shim status [SITE_DIR]"""


def main(argv) -> int:
    if not argv or argv[0] not in ("install", "uninstall", "status") or len(argv) > 2:
        print(USAGE + "\n\n" + __doc__.strip(), file=sys.stderr)
        return 2
    target = argv[1] if len(argv) > 1 else None
    if argv[0] == "install":
        print(f"installed {install(target)}: `import triton` resolves to tessel in new processes of {sys.executable}")
    elif argv[0] == "uninstall":
        path = pth_path(target)
        print(f"removed {path}" if uninstall(target) else f"not installed ({path} does not exist)")
    s = status(target)
    print(f"shim: {'installed' if s['installed'] else 'not installed'} ({s['pth']})")
    print(f"import triton -> {s['triton']}{' (tessel)' if s['tessel'] else ''}")
    return 0
