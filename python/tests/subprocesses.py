"""`python -m tessel ...` in a child process, as the drop-in tests run scripts (not collected: no test_ prefix)."""

import os
import subprocess
import sys


def python_m_tessel(*args, cwd, env=None, timeout=300):
    """`python -m tessel ARGS...` from `cwd`, with `env` added to this process's environment (a `PYTHONPATH` in
    `env` goes before this process's, which may be where tessel itself is installed)."""
    env = dict(env or {})
    if "PYTHONPATH" in env and os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] += os.pathsep + os.environ["PYTHONPATH"]
    return subprocess.run([sys.executable, "-m", "tessel", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=timeout, cwd=cwd)


def run_tessel(path, *args, env=None):
    """The script at `path` under `python -m tessel`, from the script's folder."""
    return python_m_tessel(path, *args, cwd=path.parent, env=env)
