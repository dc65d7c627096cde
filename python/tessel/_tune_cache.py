"""The autotuner's timings on disk: one JSON file per kernel, safe against crashes, damage and concurrent tuners.

A file holds `{"format": 2, "kernel": NAME, "source_hash": HASH, "entries": {ENTRY: {CONFIG: ms}}, "sha256": S}`,
where S is the SHA-256 of the canonical JSON of the other fields, so a file cut short by a crash, with flipped
bits, of the wrong types, or of another format is a miss: it is removed and tuning starts over, never an
exception. Writers take an exclusive `flock` on `FILE.lock`, read the file again, merge their timings into it
and replace it through a temporary file in the same directory, so processes tuning at once keep each other's
entries and a reader (who takes no lock) sees the whole old file or the whole new one. Files are created with
the mode the umask leaves. A tuning cache that cannot be written warns once per process (`RuntimeWarning`) and
tuning goes on: only the next process times the configs again. `TESSEL_CACHE=0` (or `off`), which turns the
compile cache off, turns this one off too: nothing is read or written.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import shutil
import threading
import warnings

try:
    import fcntl
except ImportError:  # no flock (Windows): concurrent tuners of one kernel may drop each other's entries
    fcntl = None

FORMAT = 2
# The longest file read (a kernel's timings take kilobytes).
_MAX_FILE = 64 << 20


def tune_dir():
    """`$TESSEL_CACHE_DIR/tune`, else `$XDG_CACHE_HOME/tessel/tune`, else `~/.cache/tessel/tune`: beside the
    compile cache, which the native extension places the same way."""
    base = os.environ.get("TESSEL_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = os.path.join(xdg, "tessel") if xdg else os.path.join(os.path.expanduser("~"), ".cache", "tessel")
    return os.path.join(base, "tune")


def _seal(kernel, source_hash, entries):
    body = {"kernel": kernel, "source_hash": source_hash, "entries": entries}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _valid_timing(t):
    # NaN fails `>= 0`; no float() of an int, which overflows past 1e308.
    return type(t) in (int, float) and t >= 0


def _entries(data, kernel, source_hash):
    """The entries of a file's parsed JSON when it is a whole file of this format for this kernel and source,
    else None."""
    if not isinstance(data, dict) or set(data) != {"format", "kernel", "source_hash", "entries", "sha256"}:
        return None
    if data["format"] != FORMAT or data["kernel"] != kernel or data["source_hash"] != source_hash:
        return None
    entries = data["entries"]
    if not isinstance(entries, dict) or not all(
            isinstance(e, str) and isinstance(ts, dict)
            and all(isinstance(c, str) and _valid_timing(t) for c, t in ts.items())
            for e, ts in entries.items()):
        return None
    return entries if data["sha256"] == _seal(kernel, source_hash, entries) else None


def _read(path, kernel, source_hash):
    """(entries, bad): the file's entries ({} when there is none, or it is bad); `bad` when something is at `path`
    that is not a whole file of this kernel's, which the caller may remove."""
    try:
        with open(path, "rb") as f:
            raw = f.read(_MAX_FILE + 1)
    except FileNotFoundError:
        return {}, False
    except (IsADirectoryError, NotADirectoryError, PermissionError):
        return {}, True
    except OSError:  # an I/O error that may pass: a miss, nothing removed
        return {}, False
    if len(raw) > _MAX_FILE:  # damage (a file extended by mistake, a sparse file): not read whole into memory
        return {}, True
    try:
        entries = _entries(json.loads(raw), kernel, source_hash)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested too deep to parse
        entries = None
    return (entries, False) if entries is not None else ({}, True)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


@contextlib.contextmanager
def _locked(path):
    """Holds the exclusive lock of `path` (on `path.lock`, created with the umask's mode) while the body runs."""
    if fcntl is None:
        yield
        return
    lock = path + ".lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except IsADirectoryError:
        _remove(lock)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:  # another user's lock file in a directory shared with this one: flock reads suffice
        fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


_temp_names = itertools.count()


def _write_atomic(path, text):
    """Writes `path` through a temporary file of this writer's own in its directory and a rename; a directory in
    the way is removed first."""
    d, base = os.path.split(path)
    while True:
        tmp = os.path.join(d, f".{base}.{os.getpid()}.{threading.get_ident()}.{next(_temp_names)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
            break
        except FileExistsError:  # left by a crashed process whose id came round again
            continue
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def disabled():
    """`TESSEL_CACHE=0` or `off`: no cache, compiled or tuned."""
    return os.environ.get("TESSEL_CACHE") in ("0", "off")


def load(path, kernel, source_hash):
    """The timings in the file at `path` (`{entry: {config: ms}}`), `{}` when there are none; a damaged file
    is removed, under the lock, unless a writer replaced it with a whole one meanwhile."""
    if disabled():
        return {}
    entries, bad = _read(path, kernel, source_hash)
    if bad:
        with contextlib.suppress(OSError), _locked(path):
            entries, bad = _read(path, kernel, source_hash)
            if bad:
                _remove(path)
    return entries


def store(path, kernel, source_hash, entry, timings):
    """Adds `timings` (`{config: ms}`) to `entry` in the file at `path`, keeping what other processes stored
    meanwhile. A cache that cannot be written warns once per process and stores nothing."""
    if disabled():
        return
    d = os.path.dirname(path)
    try:
        os.makedirs(d, exist_ok=True)
        with _locked(path):
            entries, _ = _read(path, kernel, source_hash)
            entries.setdefault(entry, {}).update(timings)
            data = {"format": FORMAT, "kernel": kernel, "source_hash": source_hash, "entries": entries,
                    "sha256": _seal(kernel, source_hash, entries)}
            _write_atomic(path, json.dumps(data, indent=1, sort_keys=True))
    except OSError as e:
        _warn_unwritable(d, e)


_warned = False
_warned_lock = threading.Lock()


def _warn_unwritable(d, err):
    global _warned
    with _warned_lock:
        if _warned:
            return
        _warned = True
    warnings.warn(f"tessel: cannot write the tuning cache in {d} ({err}); tuned configs will be timed again by "
                  "the next process (set TESSEL_CACHE_DIR to a writable directory)", RuntimeWarning, stacklevel=4)
