"""The tuning cache on disk (`tessel/_tune_cache.py`): damage between runs is a miss that is repaired, concurrent
tuners keep every entry, an unwritable cache warns once and the launch goes on, files follow the umask."""

import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import tessel
import tessel.language as tl
from tessel import _tune_cache

pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

KERNEL, SOURCE = "k", "0123abcd" * 8


@pytest.fixture(autouse=True)
def _warn_afresh(monkeypatch):
    """Each test sees the process's first unwritable-cache warning."""
    monkeypatch.setattr(_tune_cache, "_warned", False)


def entry(n):
    return json.dumps({"key": [repr(n)], "target": "interpreter"})


def stored(path, entries):
    for e, timings in entries.items():
        _tune_cache.store(path, KERNEL, SOURCE, e, timings)


def sealed_text(data):
    """`data` (a file's fields but its seal) with its seal, as the cache writes it: damage whose seal is right."""
    entries = data.get("entries") if isinstance(data, dict) else None
    kernel = data.get("kernel") if isinstance(data, dict) else None
    source = data.get("source_hash") if isinstance(data, dict) else None
    return json.dumps({**data, "sha256": _tune_cache._seal(kernel, source, entries)})


# --- damage between runs ---

timings = st.dictionaries(st.text(max_size=8), st.floats(min_value=0, allow_nan=False) | st.just(float("inf")),
                          min_size=1, max_size=3)
entries_st = st.dictionaries(st.integers(0, 99).map(entry), timings, min_size=1, max_size=3)
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                         max_size=3),
                           max_leaves=8)
# Fields of a whole file given a wrong type or value, its seal recomputed: the schema, not the hash, refuses them.
wrong_fields = st.sampled_from([
    ("entries", []), ("entries", None), ("entries", {"e": []}), ("entries", {"e": {"c": "1.0"}}),
    ("entries", {"e": {"c": True}}), ("entries", {"e": {"c": -1.0}}), ("entries", {"e": {"c": None}}),
    ("entries", {"e": {"c": float("nan")}}), ("entries", {"e": {"c": 10**400, "d": -1}}),
    ("format", 1), ("format", "2"), ("kernel", ["k"]), ("source_hash", "another"), ("extra", 1),
])
damage = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 0.999)),
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(0, 7)),
    st.tuples(st.just("empty")),
    st.tuples(st.just("bytes"), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("json"), json_values),
    st.tuples(st.just("resealed"), wrong_fields),
    st.tuples(st.just("directory")),
    st.tuples(st.just("other kernel's")),
    st.tuples(st.just("previous format")),
)


def apply(d, path, entries):
    file = Path(path)
    raw = file.read_bytes()
    kind = d[0]
    if kind == "truncate":
        file.write_bytes(raw[:int(len(raw) * d[1])])
    elif kind == "flip":
        b = bytearray(raw)
        b[d[1] % len(b)] ^= 1 << d[2]
        file.write_bytes(bytes(b))
    elif kind == "empty":
        file.write_bytes(b"")
    elif kind == "bytes":
        file.write_bytes(d[1])
    elif kind == "json":
        file.write_text(json.dumps(d[1]))
    elif kind == "resealed":
        field, value = d[1]
        data = {k: v for k, v in json.loads(raw).items() if k != "sha256"}
        file.write_text(sealed_text({**data, field: value}))
    elif kind == "directory":
        file.unlink()
        (file / "inside").mkdir(parents=True)
        (file / "inside" / "f").write_text("")
    elif kind == "other kernel's":
        other = path + ".other"
        _tune_cache.store(other, "other", SOURCE, *next(iter(entries.items())))
        os.replace(other, path)
    elif kind == "previous format":
        file.write_text(json.dumps({"kernel": KERNEL, "source_hash": SOURCE, "entries": entries}))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=entries_st, d=damage)
def test_damage_between_runs_is_a_miss_that_is_repaired(entries, d):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tune", "k-0123.json")
        stored(path, entries)
        assert _tune_cache.load(path, KERNEL, SOURCE) == entries
        before = Path(path).read_bytes()
        apply(d, path, entries)
        changed = not os.path.isfile(path) or Path(path).read_bytes() != before
        got = _tune_cache.load(path, KERNEL, SOURCE)
        # The stored timings or a miss, never an exception or other timings; a miss removed the damage. Changed
        # bytes may still say the same thing (a bit flip turning `\u00a0` into `\u00A0`): then it is a hit.
        if changed and got == {}:
            assert not os.path.exists(path), d
        else:
            assert got == entries, d
        # A later run's store keeps what the load still read (the damaged file's timings were dropped with it).
        stored(path, {entry(100): {"c": 1.0}})
        assert _tune_cache.load(path, KERNEL, SOURCE) == {**got, entry(100): {"c": 1.0}}


def test_a_file_too_long_to_be_ours_is_not_read_whole():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.json")
        stored(path, {entry(1): {"c": 1.0}})
        os.truncate(path, _tune_cache._MAX_FILE + 1)  # sparse
        assert _tune_cache.load(path, KERNEL, SOURCE) == {}
        assert not os.path.exists(path)


def test_a_lock_file_that_is_a_directory_is_replaced():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.json")
        os.makedirs(path + ".lock")
        stored(path, {entry(1): {"c": 1.0}})
        assert _tune_cache.load(path, KERNEL, SOURCE) == {entry(1): {"c": 1.0}}


# --- the autotuner over a damaged or unwritable cache ---

@tessel.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def tuned():
    """A fresh tuner of two configs (the second is faster), launched on the interpreter."""
    clock = iter([2.0, 1.0] * 100)
    return tessel.autotune(configs=[tessel.Config({"BLOCK": 32}), tessel.Config({"BLOCK": 64})], key=["n"],
                           do_bench=lambda fn, quantiles: (fn(), next(clock))[1])(double_kernel)


def launch(kernel, n=100):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    kernel[lambda m: (tessel.cdiv(n, m["BLOCK"]),)](x, out, n)
    np.testing.assert_array_equal(out, x * 2)
    assert kernel.best_config.kwargs == {"BLOCK": 64}


@pytest.mark.parametrize("content", ["[]", "null", '{"entries": []}', '{"source_hash": 1}', "", "{",
                                     '{"format": 2, "kernel": "double_kernel", "source_hash": "x", "entries": {}}'])
def test_a_damaged_tuning_file_is_tuned_again_and_rewritten(content):
    # The probe's case: `[]`, `null` or an entry of the wrong type made every launch of the kernel raise.
    kernel = tuned()
    path = Path(kernel._cache_path())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    launch(kernel)
    [timings] = json.loads(path.read_text())["entries"].values()
    assert len(timings) == 2
    # The next process reads it back: nothing is timed again.
    again = tuned()
    again._do_bench = lambda fn, quantiles: pytest.fail("timed again")
    launch(again)


def unwritable_launches(kernel, where):
    """Two tunings (two keys) into a cache that cannot be written: both launch, one warning names `where`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        launch(kernel, 100)
        launch(kernel, 200)
    warned = [w for w in caught if issubclass(w.category, RuntimeWarning) and "tuning cache" in str(w.message)]
    assert len(warned) == 1, [str(w.message) for w in caught]
    assert where in str(warned[0].message)


def test_a_file_in_place_of_the_tune_directory_warns_once(tmp_path, monkeypatch):
    # Root-proof: no permission bits involved.
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path))
    (tmp_path / "tune").write_text("a file")
    unwritable_launches(tuned(), str(tmp_path / "tune"))
    assert (tmp_path / "tune").read_text() == "a file"


def test_an_unwritable_home_warns_once(tmp_path, monkeypatch):
    # Containers and CI: no TESSEL_CACHE_DIR, and a HOME that cannot hold ~/.cache (here a file, which stops
    # root too).
    for var in ("TESSEL_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").write_text("not a directory")
    unwritable_launches(tuned(), str(tmp_path / "home" / ".cache" / "tessel" / "tune"))


def test_a_read_only_tune_directory_warns_once(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path))
    tune = tmp_path / "tune"
    tune.mkdir()
    tune.chmod(0o555)
    try:
        try:
            (tune / "probe").write_text("")
            pytest.skip("this user writes into read-only directories (root)")
        except PermissionError:
            pass
        unwritable_launches(tuned(), str(tune))
    finally:
        tune.chmod(0o755)


def test_the_tune_directory_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv("TESSEL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _tune_cache.tune_dir() == str(tmp_path / "xdg" / "tessel" / "tune")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _tune_cache.tune_dir() == str(tmp_path / "home" / ".cache" / "tessel" / "tune")


# --- concurrency and modes ---

def store_many(path, first, barrier):
    barrier.wait()
    for i in range(first, first + 4):
        _tune_cache.store(path, KERNEL, SOURCE, entry(i), {f"config {i}": float(i)})


# A tuner process: `_tune_cache.py` loaded on its own (it imports only the standard library, so the eight start
# quickly), waiting for the start file, then storing four entries of its own.
TUNER = """
import importlib.util, json, os, sys, time
spec = importlib.util.spec_from_file_location("tune_cache", sys.argv[1])
cache = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cache)
path, first, start = sys.argv[2], int(sys.argv[3]), sys.argv[4]
while not os.path.exists(start):
    time.sleep(0.001)
for i in range(first, first + 4):
    entry = json.dumps({"key": [repr(i)], "target": "interpreter"})
    cache.store(path, "k", "0123abcd" * 8, entry, {f"config {i}": float(i)})
"""


def test_eight_processes_tuning_at_once_keep_every_entry(tmp_path):
    # The probe kept 4 to 8 of 8 entries: read-modify-replace without a lock.
    path, start = str(tmp_path / "tune" / "k.json"), tmp_path / "start"
    procs = [subprocess.Popen([sys.executable, "-c", TUNER, _tune_cache.__file__, path, str(4 * p), str(start)])
             for p in range(8)]
    start.write_text("")
    for p in procs:
        assert p.wait(60) == 0
    got = _tune_cache.load(path, KERNEL, SOURCE)
    assert got == {entry(i): {f"config {i}": float(i)} for i in range(32)}
    assert sorted(os.listdir(tmp_path / "tune")) == ["k.json", "k.json.lock"], "no temporary file left"


def test_eight_threads_tuning_at_once_keep_every_entry(tmp_path):
    path = str(tmp_path / "tune" / "k.json")
    barrier = threading.Barrier(8)
    threads = [threading.Thread(target=store_many, args=(path, 4 * t, barrier)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _tune_cache.load(path, KERNEL, SOURCE) == {entry(i): {f"config {i}": float(i)} for i in range(32)}


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_files_are_created_with_the_umask(tmp_path, umask):
    # tempfile.mkstemp made every file 0600, so a cache shared by a group was unreadable to the others.
    old = os.umask(umask)
    try:
        path = str(tmp_path / "tune" / "k.json")
        stored(path, {entry(1): {"c": 1.0}})
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask
    assert stat.S_IMODE(os.stat(path + ".lock").st_mode) == 0o666 & ~umask
    assert stat.S_IMODE(os.stat(tmp_path / "tune").st_mode) == 0o777 & ~umask


@pytest.mark.parametrize("value", ["0", "off"])
def test_tessel_cache_off_reads_and_writes_no_tuning_file(tmp_path, monkeypatch, value):
    path = str(tmp_path / "tune" / "k-0123.json")
    stored(path, {entry(1): {"c": 1.0}})
    monkeypatch.setenv("TESSEL_CACHE", value)
    assert _tune_cache.load(path, KERNEL, SOURCE) == {}
    other = str(tmp_path / "tune" / "k-4567.json")
    _tune_cache.store(other, KERNEL, SOURCE, entry(2), {"c": 2.0})
    assert not os.path.exists(other)
    monkeypatch.delenv("TESSEL_CACHE")
    assert _tune_cache.load(path, KERNEL, SOURCE) == {entry(1): {"c": 1.0}}
