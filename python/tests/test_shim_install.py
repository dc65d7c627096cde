"""`import triton` -> tessel without `python -m tessel` (issue 29): `python -m tessel shim install | uninstall |
status` on a temporary site directory (a fresh process adds it with `site.addsitedir`, as Python does with
site-packages), and the children of `python -m tessel`."""

import os
import subprocess
import sys
import tempfile

import pytest

import tessel
from tessel._triton import install
from subprocesses import python_m_tessel

TESSEL_DIR = os.path.dirname(os.path.abspath(tessel.__file__))

PROBE = ("import sys, site\n"
         "site.addsitedir(sys.argv[1])\n"
         "print('tessel imported at startup', 'tessel' in sys.modules)\n"
         "try:\n"
         "    import triton, triton.language\n"
         "    print(triton.__file__)\n"
         "except ImportError as e:\n"
         "    print('ImportError', e)\n")


def _probe(site_dir, env=None):
    # Not from python/: `-c` puts the working directory first on sys.path, and there that is the source package,
    # without its built module when tessel was installed from a wheel (CI).
    r = subprocess.run([sys.executable, "-c", PROBE, str(site_dir)], capture_output=True, text=True,
                       env={**os.environ, **(env or {})}, timeout=120, cwd=tempfile.gettempdir())
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def _without_shim():
    """What `import triton` gives in this environment without the shim (an installed Triton, or nothing)."""
    return _probe(os.devnull)[1]


def test_install_then_uninstall_restores_the_previous_triton(tmp_path):
    before = _without_shim()
    assert not before.startswith(TESSEL_DIR)
    path = install.install(tmp_path)
    assert path == str(tmp_path / install.PTH_NAME)
    with open(path) as f:
        lines = f.read().splitlines()
    assert len(lines) == 1 and lines[0].startswith("import ")
    startup, resolved = _probe(tmp_path)
    assert startup == "tessel imported at startup False"  # the finder imports tessel only for `import triton`
    assert resolved == os.path.join(TESSEL_DIR, "shim.py")
    # a process can opt out
    assert _probe(tmp_path, {"TESSEL_SHIM": "0"})[1] == before
    s = install.status(tmp_path)
    assert s["installed"] and s["tessel"] and s["pth"] == path
    assert install.uninstall(tmp_path) is True
    assert install.uninstall(tmp_path) is False
    assert _probe(tmp_path)[1] == before
    assert not install.status(tmp_path)["installed"]


def test_a_process_that_never_imports_triton_never_imports_tessel(tmp_path):
    install.install(tmp_path)
    code = "import sys, site; site.addsitedir(sys.argv[1]); import json; print('tessel' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.stdout.strip() == "False", r.stderr


def test_a_removed_tessel_leaves_startup_alone(tmp_path):
    (tmp_path / install.PTH_NAME).write_text(install.pth_line(str(tmp_path / install.PTH_NAME),
                                                              startup=str(tmp_path / "gone.py")))
    assert _probe(tmp_path)[1] == _without_shim()


def test_cli(tmp_path):
    r = python_m_tessel("shim", "install", tmp_path, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"installed {tmp_path / install.PTH_NAME}" in r.stdout
    assert f"import triton -> {os.path.join(TESSEL_DIR, 'shim.py')} (tessel)" in r.stdout
    r = python_m_tessel("shim", "status", tmp_path, cwd=tmp_path)
    assert "shim: installed" in r.stdout
    r = python_m_tessel("shim", "uninstall", tmp_path, cwd=tmp_path)
    assert f"removed {tmp_path / install.PTH_NAME}" in r.stdout and "shim: not installed" in r.stdout
    r = python_m_tessel("shim", "frobnicate", cwd=tmp_path)
    assert r.returncode == 2 and "usage: python -m tessel shim" in r.stderr


CHILD = '''
import subprocess, sys
import triton
print("parent", triton.__file__)
code = "import triton, triton.language as tl; print(triton.__file__, tl.__name__)"
print("child", subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip())
'''


@pytest.mark.parametrize("how", ["script", "module", "code"])
def test_children_of_python_m_tessel_resolve_triton_to_tessel(tmp_path, how):
    (tmp_path / "child_probe.py").write_text(CHILD)
    args = {"script": ["child_probe.py"], "module": ["-m", "child_probe"], "code": ["-c", CHILD]}[how]
    r = python_m_tessel(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    shim_file = os.path.join(TESSEL_DIR, "shim.py")
    assert r.stdout.splitlines() == [f"parent {shim_file}", f"child {shim_file} tessel.language"]
