#!/usr/bin/env python3
"""Liger-Kernel's own op tests under upstream Triton and under tessel, side by side (issue 29's acceptance).

    python bench/liger.py SDIST_DIR [--files GLOB ...] [--timeout-per-file S] [--budget S] [--junit-dir DIR]
                          [--pytest-args ARGS] [--sides triton,tessel] [--parallel] [--jobs N] [--times SUMMARY.json ...]
    python bench/liger.py --report SUMMARY.json [SUMMARY.json ...]     (one table from several earlier runs)

SDIST_DIR is Liger-Kernel's sdist (`pip download --no-binary :all: --no-deps liger-kernel==0.8.5`), unpacked or
its .tar.gz itself (7 MB: what to carry to the device machine, which has torch, Triton, transformers, tokenizers
and pytest but reaches no registry); nothing of Liger's is part of this repository. For each selected `test/transformers/test_*.py` (all of
them but those that need a model download, cheapest first; `--files` picks by glob on the path or the file name) it
runs, with the sdist root as the working directory and this interpreter:

    python -m pytest FILE -q -p no:cacheprovider --junitxml=...                 (upstream Triton; TESSEL_SHIM=0)
    python -m tessel -m pytest FILE -q -p no:cacheprovider --junitxml=...       (tessel)

reads both junit files (per test id: passed / failed / skipped / error), and prints a table per file (tests, the
counts and the wall time of each side) and the acceptance: every test id that passes under Triton but not under
tessel, with the first line of tessel's failure. Besides the junit file, a small pytest plugin (written next to
the junit files) records each test as it ends and, at the end of the session, which `triton` the process had
imported: a run that crashes or is stopped still gives its finished tests, names the test it was in, and a
Triton run that got tessel (or the reverse) is reported.

Time: `--budget` (default 540 s, under the device's 10 minutes a command) bounds the whole run: no file starts
when less than `--min-start` seconds are left, each side of a file gets at most `--timeout-per-file` seconds and
what the budget leaves (Triton at most 40 % of it, so that tessel's run still has time), a run past its time gets
SIGINT (pytest then still writes its junit file) and, 20 s later, SIGKILL for its whole process group. The files
not run are listed at the end with a `--files` argument to run them in a later call; `--times SUMMARY.json` orders
files by the wall times an earlier run measured. `--parallel` runs a file's two sides at the same time (about half
the time; each wall time is then measured with the other run beside it); `--jobs N` runs N files at once.
`--report A/summary.json B/summary.json` prints one table from several calls.

Logs (each side's pytest output), junit files and summary.json go to $OUT/liger when OUT is set, else to a
temporary folder (printed); `--junit-dir` moves the junit files. HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 are
set (unless set already) so that nothing waits on a network the device machine does not have.

Exit status: 0 when every selected file ran to its end on both sides and no test passes under Triton but not
under tessel; 1 when some test does; 3 when nothing regressed but some file was not run or not finished; 2 for a
usage error or an environment where the two sides would not be what they claim.
"""

import argparse
import atexit
import concurrent.futures
import fnmatch
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

SIDES = ("triton", "tessel")

# Tests collected per file in liger-kernel 0.8.5's test/transformers (CPU collection): the default cost order
# (cheapest first) when no --times gives measured ones. A file missing here is ranked by its size.
COLLECTED_0_8_5 = {
    "test_trainer_integration.py": 1, "test_transformers.py": 1, "test_llama4.py": 2, "test_auto_model.py": 5,
    "test_muse_glimmer.py": 7, "test_group_norm.py": 8, "test_sparsemax.py": 10, "test_embedding.py": 11,
    "test_flex_attention.py": 12, "test_geglu.py": 14, "test_layer_norm.py": 16, "test_poly_norm.py": 17,
    "test_relu_squared.py": 18, "test_fused_moe.py": 19, "test_llama4_rope.py": 19,
    "test_fused_linear_scaled_cross_entropy.py": 21, "test_dyt.py": 24, "test_fused_ce_tvd.py": 26,
    "test_softmax.py": 26, "test_utils.py": 32, "test_attn_res.py": 33, "test_mhc.py": 33,
    "test_multi_token_attention.py": 36, "test_fused_add_rms_norm.py": 40, "test_tvd.py": 40, "test_mlp.py": 60,
    "test_fused_neighborhood_attention.py": 64, "test_fused_linear_jsd.py": 65, "test_jsd.py": 68,
    "test_tiled_mlp.py": 72, "test_rms_norm.py": 74, "test_selective_log_softmax_strides.py": 75,
    "test_fused_linear_kl_div.py": 76, "test_qwen2vl_mrope.py": 76, "test_monkey_patch.py": 80, "test_rope.py": 87,
    "test_swiglu.py": 93, "test_kl_div.py": 104, "test_grpo_loss.py": 121,
    "test_fused_linear_selected_log_probs.py": 130, "test_fused_linear_cross_entropy.py": 141,
    "test_modulated_rms_norm.py": 166, "test_cross_entropy.py": 185, "test_mm_int8int2.py": 204,
}

# Files that need a model (or data set) download are left out unless --files names them: a file is taken to need
# one when a line of it matches DOWNLOAD_RE, unless it is known to run offline. test_auto_model.py calls
# `from_pretrained` but mocks it (AutoConfig's and AutoModelForCausalLM's): its 5 tests pass with HF_HUB_OFFLINE=1,
# which both runs set, so a real download fails at once instead of waiting on the network.
OFFLINE_OK = {"test_auto_model.py"}
ALWAYS_EXCLUDED = {}
DOWNLOAD_RE = re.compile(r"\.from_pretrained\(|snapshot_download|hf_hub_download|load_dataset\(|AutoTokenizer\.")

PLUGIN = r'''
"""Written by bench/liger.py: records each test's end and, at the session's end, the `triton` imported."""
import json
import os
import sys

_PATH = os.environ.get("LIGER_BENCH_EVENTS")


def _write(rec):
    if _PATH:
        with open(_PATH, "a") as f:
            f.write(json.dumps(rec) + "\n")


def _first_line(report):
    text = getattr(report, "longreprtext", "") or ""
    lines = [l for l in text.splitlines() if l.strip()]
    for l in lines:
        if l.startswith("E "):
            return l[1:].strip()
    return lines[-1].strip() if lines else ""


def pytest_runtest_logstart(nodeid, location):
    _write({"event": "start", "id": nodeid})


def pytest_runtest_logreport(report):
    if report.when != "call" and report.outcome == "passed":
        return
    rec = {"event": "report", "id": report.nodeid, "when": report.when, "outcome": report.outcome,
           "xfail": hasattr(report, "wasxfail"), "duration": round(report.duration, 3)}
    if report.failed:
        rec["message"] = _first_line(report)[:500]
    _write(rec)


def pytest_sessionfinish(session, exitstatus):
    t = sys.modules.get("triton")
    _write({"event": "finish", "exitstatus": int(exitstatus), "triton": getattr(t, "__file__", None) if t else None})
'''


def first_line(text):
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def fmt_s(s):
    return "-" if s is None else f"{s:.1f}s"


# ---------------------------------------------------------------- selecting files


def select_files(sdist, globs, times):
    """-> (files to run in order, {file: reason} excluded). Paths are relative to the sdist root."""
    tdir = os.path.join(sdist, "test", "transformers")
    all_files = sorted(f"test/transformers/{n}" for n in os.listdir(tdir) if n.startswith("test_") and n.endswith(".py"))
    excluded = {}
    chosen = []
    for f in all_files:
        name = os.path.basename(f)
        named = bool(globs) and any(fnmatch.fnmatch(f, g) or fnmatch.fnmatch(name, g) for g in globs)
        if globs and not named:
            continue
        if not named and name not in OFFLINE_OK:  # an explicitly named file runs whatever it does
            if name in ALWAYS_EXCLUDED:
                excluded[f] = ALWAYS_EXCLUDED[name]
                continue
            try:
                with open(os.path.join(sdist, f), encoding="utf-8", errors="replace") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = DOWNLOAD_RE.search(line)
                        if m and not line.lstrip().startswith("#"):
                            excluded[f] = f"needs a download? ('{m.group(0)}' at line {lineno})"
                            break
            except OSError as e:
                excluded[f] = f"unreadable: {e}"
            if f in excluded:
                continue
        chosen.append(f)

    def cost(f):
        if f in times:
            return (0, times[f])
        name = os.path.basename(f)
        if name in COLLECTED_0_8_5:
            return (1, COLLECTED_0_8_5[name])
        return (2, os.path.getsize(os.path.join(sdist, f)))

    chosen.sort(key=cost)
    return chosen, excluded


def load_times(paths):
    times = {}
    for p in paths or ():
        try:
            with open(p) as fh:
                data = json.load(fh)
        except (OSError, ValueError) as e:
            print(f"warning: --times {p}: {e}", file=sys.stderr)
            continue
        for f, rec in data.get("files", {}).items():
            walls = [rec.get(s, {}).get("wall") for s in SIDES]
            walls = [w for w in walls if w is not None]
            if walls:
                times[f] = sum(walls)
    return times


# ---------------------------------------------------------------- running one side of one file


def parse_junit(path, file):
    """-> {test id: {"status", "message"}} or None when the file is missing or unreadable (and why)."""
    if not os.path.exists(path):
        return None, "no junit file"
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        return None, f"junit file unreadable: {e}"
    module = file[:-3].replace("/", ".")
    out = {}
    for tc in root.iter("testcase"):
        cls, name = tc.get("classname", ""), tc.get("name", "")
        if not name:  # the test a SIGINT interrupted gets a nameless record
            continue
        rest = cls[len(module):].lstrip(".") if cls.startswith(module) else ""
        tid = "::".join([file] + ([rest.replace(".", "::")] if rest else []) + [name])
        status, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            el = tc.find(kind)
            if el is None:
                continue
            if kind == "skipped":
                status = "xfail" if el.get("type") == "pytest.xfail" else "skipped"
            else:
                status = "failed" if kind == "failure" else "error"
            message = first_line(el.get("message"))
            if not message:
                for line in (el.text or "").splitlines():
                    if line.startswith("E "):
                        message = line[1:].strip()
                        break
            break
        out[tid] = {"status": status, "message": message[:500]}
    return out, None


def parse_events(path):
    """-> ({test id: {"status", "message"}}, test running when the run ended or None, finish record or None)."""
    results, started, finish = {}, [], None
    if not os.path.exists(path):
        return results, None, None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            ev = rec.get("event")
            if ev == "start":
                started.append(rec["id"])
            elif ev == "finish":
                finish = rec
            elif ev == "report":
                tid, when, outcome = rec["id"], rec["when"], rec["outcome"]
                prev = results.get(tid)
                if outcome == "failed":
                    status = "failed" if when == "call" else "error"
                elif outcome == "skipped":
                    status = "xfail" if rec.get("xfail") else "skipped"
                else:
                    status = "passed"
                # a teardown error after a call's result does not hide a failure, and turns a pass into an error
                if prev is None or prev["status"] == "passed" or (status in ("failed", "error") and prev["status"]
                                                                  not in ("failed", "error")):
                    results[tid] = {"status": status, "message": rec.get("message", "")}
    running = started[-1] if started and started[-1] not in results else None
    return results, running, finish


def summary_line(log_path):
    try:
        with open(log_path, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - 20000))
            tail = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    for line in reversed(tail):
        s = line.strip().strip("=").strip()
        if re.search(r"\b(passed|failed|error|errors|skipped|xfailed|no tests ran|deselected)\b", s) and \
                re.search(r"\d", s):
            return s
    return ""


def kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_side(side, file, args, timeout, work, tessel_pkg):
    stem = os.path.basename(file)[:-3]
    junit = os.path.join(args.junit_dir, f"{stem}.{side}.xml")
    events = os.path.join(work, f"{stem}.{side}.events.jsonl")
    log = os.path.join(work, f"{stem}.{side}.log")
    for p in (junit, events):
        if os.path.exists(p):
            os.remove(p)
    pytest_args = [file, "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", "-p", "_liger_bench_plugin"]
    pytest_args += shlex.split(args.pytest_args or "")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([work] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["LIGER_BENCH_EVENTS"] = events
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env.setdefault("PYTHONUNBUFFERED", "1")
    if side == "triton":
        env["TESSEL_SHIM"] = "0"
        cmd = [args.python, "-m", "pytest"] + pytest_args
    else:
        env.pop("TESSEL_SHIM", None)
        cmd = [args.python, "-m", "tessel", "-m", "pytest"] + pytest_args
    res = {"side": side, "cmd": " ".join(shlex.quote(c) for c in cmd), "log": log, "junit": junit,
           "timeout": round(timeout, 1), "timed_out": False, "rc": None, "problems": []}
    start = time.monotonic()
    try:
        with open(log, "wb") as logf:
            logf.write(f"$ (cd {args.sdist} && {res['cmd']})   # at most {timeout:.0f}s\n".encode())
            logf.flush()
            proc = subprocess.Popen(cmd, cwd=args.sdist, env=env, stdout=logf, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                res["rc"] = proc.wait(timeout=max(1.0, timeout))
            except subprocess.TimeoutExpired:
                res["timed_out"] = True
                kill_group(proc, signal.SIGINT)  # pytest stops at the test it is in and still writes its junit
                try:
                    res["rc"] = proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    kill_group(proc, signal.SIGKILL)
                    res["rc"] = proc.wait()
            kill_group(proc, signal.SIGKILL)  # what pytest's tests spawned and left behind
    except OSError as e:
        res["problems"].append(f"could not start: {e}")
    res["wall"] = round(time.monotonic() - start, 2)

    results, why = parse_junit(junit, file)
    ev_results, running, finish = parse_events(events)
    if results is None:
        res["problems"].append(why + (f"; {len(ev_results)} test results from the plugin" if ev_results else ""))
        results = ev_results
    else:
        for tid, r in ev_results.items():  # tests the junit file lacks (it is written at the end)
            results.setdefault(tid, r)
    if running:
        res["running"] = running
    if res["timed_out"]:
        res["problems"].append(f"stopped after {timeout:.0f}s" + (f" in {running}" if running else ""))
    elif res["rc"] is not None and res["rc"] < 0:
        res["problems"].append(f"killed by signal {-res['rc']}" + (f" in {running}" if running else ""))
    elif res["rc"] not in (0, 1, 5, None):
        res["problems"].append(f"pytest exit {res['rc']}" + (f" in {running}" if running else ""))
    if res["rc"] == 5 or (res["rc"] == 0 and not results):
        res["problems"].append("no tests collected/run")
    if finish is None and not res["problems"]:
        res["problems"].append("pytest session did not finish")
    if running and running not in results:  # the test the run died or was stopped in
        results[running] = {"status": "error", "message": "the run ended in this test: " + res["problems"][-1]
                            if res["problems"] else "the run ended in this test"}
    if finish is not None:
        tfile = finish.get("triton") or ""
        res["triton_module"] = tfile
        in_tessel = bool(tfile) and os.path.abspath(tfile).startswith(tessel_pkg + os.sep)
        if side == "tessel" and tfile and not in_tessel:
            res["problems"].append(f"`triton` was upstream's ({tfile}), not tessel's")
        if side == "triton" and in_tessel:
            res["problems"].append(f"`triton` was tessel's ({tfile}), not upstream's")
    res["results"] = results
    res["summary"] = summary_line(log)
    counts = {k: 0 for k in ("passed", "failed", "skipped", "error")}
    for r in results.values():
        counts["skipped" if r["status"] == "xfail" else r["status"]] += 1
    res["counts"] = counts
    return res


# ---------------------------------------------------------------- comparing and reporting


def regressions(rec):
    """Test ids that pass under Triton and not under tessel: [(id, tessel's status, first line)]."""
    tri, tes = rec.get("triton"), rec.get("tessel")
    if not tri or not tes:
        return []
    out = []
    for tid, r in sorted(tri["results"].items()):
        if r["status"] != "passed":
            continue
        t = tes["results"].get(tid)
        if t is None:
            why = "not run under tessel" + (f" ({'; '.join(tes['problems'])})" if tes["problems"] else "")
            out.append((tid, "missing", why))
        elif t["status"] != "passed":
            out.append((tid, t["status"], t["message"] or "(no message)"))
    return out


def gains(rec):
    tri, tes = rec.get("triton"), rec.get("tessel")
    if not tri or not tes:
        return []
    return sorted(tid for tid, r in tes["results"].items()
                  if r["status"] == "passed" and tri["results"].get(tid, {}).get("status") != "passed")


def side_cell(res):
    if not res:
        return "-", "-"
    c = res["counts"]
    cell = f"{c['passed']}/{c['failed']}/{c['skipped']}" + (f"+{c['error']}E" if c["error"] else "")
    if res["timed_out"]:
        cell += " (timeout)"
    elif res["problems"]:
        cell += " (!)"
    return cell, fmt_s(res.get("wall"))


def print_table(files, order, not_run, excluded, out=sys.stdout, max_listed=25):
    p = lambda *a: print(*a, file=out)
    p("\n## Liger-Kernel test/transformers: upstream Triton vs tessel (passed/failed/skipped; E = errors)\n")
    p("| file | tests | Triton p/f/s | Triton wall | tessel p/f/s | tessel wall | pass under Triton, not tessel |")
    p("|---|---:|---|---:|---|---:|---:|")
    tot = {"tests": 0, "reg": 0, "wall": {s: 0.0 for s in SIDES}, "c": {s: [0, 0, 0, 0] for s in SIDES}}
    for f in order:
        rec = files.get(f)
        if rec is None:
            continue
        ids = set()
        for s in SIDES:
            if rec.get(s):
                ids |= set(rec[s]["results"])
                tot["wall"][s] += rec[s].get("wall") or 0
                for i, k in enumerate(("passed", "failed", "skipped", "error")):
                    tot["c"][s][i] += rec[s]["counts"][k]
        reg = regressions(rec)
        tot["tests"] += len(ids)
        tot["reg"] += len(reg)
        (tc, tw), (sc, sw) = side_cell(rec.get("triton")), side_cell(rec.get("tessel"))
        p(f"| {os.path.basename(f)} | {len(ids)} | {tc} | {tw} | {sc} | {sw} | {len(reg) if rec.get('triton') and rec.get('tessel') else '-'} |")
    ct = {s: "/".join(map(str, tot["c"][s][:3])) + (f"+{tot['c'][s][3]}E" if tot["c"][s][3] else "") for s in SIDES}
    p(f"| **total** | {tot['tests']} | {ct['triton']} | {tot['wall']['triton']:.1f}s | {ct['tessel']} | "
      f"{tot['wall']['tessel']:.1f}s | {tot['reg']} |")

    problems = [(f, s, rec[s]["problems"]) for f in order if (rec := files.get(f)) for s in SIDES
                if rec.get(s) and rec[s]["problems"]]
    if problems:
        p("\nRuns that did not end normally:")
        for f, s, probs in problems:
            p(f"- {os.path.basename(f)} [{s}]: {'; '.join(probs)}")
    p("\nAcceptance: tests that pass under Triton but not under tessel (tessel's status and first line):")
    n = 0
    for f in order:
        rec = files.get(f)
        if not rec:
            continue
        reg = regressions(rec)
        for tid, status, msg in reg[:max_listed]:
            p(f"- {tid} [{status}]: {msg[:300]}")
        if len(reg) > max_listed:
            p(f"- ... and {len(reg) - max_listed} more in {os.path.basename(f)} (all in summary.json)")
        n += len(reg)
    if n == 0:
        p("- none")
    g = [(f, tid) for f in order if files.get(f) for tid in gains(files[f])]
    if g:
        p(f"\nTests that pass under tessel but not under Triton: {len(g)}"
          + (" (e.g. " + ", ".join(t for _, t in g[:3]) + ")" if g else ""))
    if excluded:
        p("\nExcluded (model download): " + ", ".join(f"{os.path.basename(f)} ({why})" for f, why in excluded.items()))
    if not_run:
        p(f"\nNot run (time budget): {len(not_run)} file(s): " + " ".join(os.path.basename(f) for f in not_run))
        p("  to run them: --files " + " ".join(os.path.basename(f) for f in not_run))
    return tot["reg"]


# ---------------------------------------------------------------- main


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def preflight(args):
    """Checks that the two sides are what they claim; -> (tessel package dir, lines to print) or exits 2."""
    info = []
    probe = ("import sys, os, torch; t = __import__('triton'); "
             "print(os.path.abspath(t.__file__), getattr(t, '__version__', '?'), torch.__version__, "
             "torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA GPU (CPU tensors)')")
    env = dict(os.environ, TESSEL_SHIM="0")
    try:
        tessel_pkg = subprocess.run([args.python, "-c", "import os, tessel; print(os.path.dirname(os.path.abspath("
                                     "tessel.__file__)))"], capture_output=True, text=True, timeout=120,
                                    check=True).stdout.strip()
    except (subprocess.SubprocessError, OSError) as e:
        die(f"liger.py: tessel is not importable with {args.python}: {e}")
    for side in args.sides:
        cmd = [args.python, "-c", probe] if side == "triton" else [args.python, "-m", "tessel", "-c", probe]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=args.sdist,
                               env=env if side == "triton" else None)
        except (subprocess.SubprocessError, OSError) as e:
            die(f"liger.py: probing the {side} side failed: {e}")
        if r.returncode != 0:
            tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-5:])
            die(f"liger.py: `import triton` fails on the {side} side:\n{tail}")
        try:
            path, ver, torch_v, dev = r.stdout.strip().splitlines()[-1].split(" ", 3)
        except (IndexError, ValueError):
            die(f"liger.py: unexpected answer from the {side} side's probe: {r.stdout!r}")
        in_tessel = path.startswith(tessel_pkg + os.sep)
        info.append(f"{side}: triton {ver} from {path}")
        if (side == "triton") == in_tessel:
            die(f"liger.py: on the {side} side `import triton` gives {path}: not a {side} run "
                     "(is tessel's shim installed in this environment? `python -m tessel shim status`)")
    info.append(f"python {sys.version.split()[0]} ({args.python}), torch {torch_v}, device: {dev}")
    return tessel_pkg, info


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sdist", nargs="?", help="liger-kernel's sdist: unpacked (holds test/transformers) or .tar.gz")
    ap.add_argument("--files", nargs="+", default=[], metavar="GLOB",
                    help="pick files by glob on their path or name (e.g. test_rms_norm.py 'test_*norm*.py')")
    ap.add_argument("--timeout-per-file", type=float, default=300, metavar="S", help="per side (default 300)")
    ap.add_argument("--budget", type=float, default=540, metavar="S", help="for the whole run (default 540)")
    ap.add_argument("--min-start", type=float, default=30, metavar="S",
                    help="start no file with less than this left of the budget (default 30)")
    ap.add_argument("--junit-dir", metavar="DIR", help="where the junit files go (default: the log folder)")
    ap.add_argument("--pytest-args", default="", metavar="ARGS",
                    help="more pytest arguments for both sides, one string (e.g. '-k \"not bfloat16\"')")
    ap.add_argument("--sides", default="triton,tessel", help="which runs (default triton,tessel)")
    ap.add_argument("--times", nargs="+", default=[], metavar="SUMMARY",
                    help="order files by the wall times in earlier summary.json files")
    ap.add_argument("--parallel", action="store_true",
                    help="run a file's two sides at once (halves the time; each side's wall time is then measured "
                         "while the other runs)")
    ap.add_argument("--jobs", type=int, default=1, metavar="N",
                    help="run N files at once (default 1; the device machine has 16 cores and one GPU: each wall "
                         "time is then measured beside the other files' runs)")
    ap.add_argument("--python", default=sys.executable, help="interpreter for both sides (default: this one)")
    ap.add_argument("--report", nargs="+", metavar="SUMMARY", help="print one table from earlier summary.json files")
    ap.add_argument("--list", action="store_true", help="print the files it would run, in order, and exit")
    args = ap.parse_args(argv)

    if args.report:
        files, order, not_run = {}, [], []
        for p in args.report:
            with open(p) as fh:
                data = json.load(fh)
            for f in data.get("order", []):
                if f in data["files"]:
                    # One call may run each side in its own process (one per GPU): merge the sides per file.
                    files.setdefault(f, {}).update(data["files"][f])
                    if f not in order:
                        order.append(f)
            not_run += [f for f in data.get("not_run", []) if f not in files]
        reg = print_table(files, order, [f for f in dict.fromkeys(not_run) if f not in files], {})
        return 1 if reg else 0

    if not args.sdist:
        ap.error("SDIST_DIR is needed (or --report)")
    args.sdist = os.path.abspath(args.sdist)
    if os.path.isfile(args.sdist) and args.sdist.endswith((".tar.gz", ".tgz")):  # the sdist as pip downloads it
        dest = tempfile.mkdtemp(prefix="liger-sdist-")
        atexit.register(shutil.rmtree, dest, True)
        try:
            with tarfile.open(args.sdist) as tf:
                tf.extractall(dest, filter="data") if hasattr(tarfile, "data_filter") else tf.extractall(dest)
        except (OSError, tarfile.TarError) as e:
            ap.error(f"cannot unpack {args.sdist}: {e}")
        tops = [os.path.join(dest, d) for d in os.listdir(dest)]
        args.sdist = tops[0] if len(tops) == 1 and os.path.isdir(tops[0]) else dest
    if not os.path.isdir(os.path.join(args.sdist, "test", "transformers")):
        ap.error(f"{args.sdist} holds no test/transformers: not an unpacked liger-kernel sdist")
    args.sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    if not args.sides or any(s not in SIDES for s in args.sides):
        ap.error("--sides takes triton, tessel or both")

    files, excluded = select_files(args.sdist, args.files, load_times(args.times))
    if args.list:
        for f in files:
            print(f)
        for f, why in excluded.items():
            print(f"(excluded) {f}: {why}")
        return 0
    if not files:
        print(f"liger.py: no test file matches {args.files}", file=sys.stderr)
        return 2

    began = time.monotonic()
    out_root = os.environ.get("OUT")
    work = os.path.join(out_root, "liger") if out_root else tempfile.mkdtemp(prefix="liger-bench-")
    os.makedirs(work, exist_ok=True)
    args.junit_dir = os.path.abspath(args.junit_dir or work)
    os.makedirs(args.junit_dir, exist_ok=True)
    with open(os.path.join(work, "_liger_bench_plugin.py"), "w") as fh:
        fh.write(PLUGIN)

    tessel_pkg, info = preflight(args)
    print(f"liger sdist: {args.sdist}")
    for line in info:
        print(line)
    print(f"logs, junit files, summary.json: {work}" + (f" (junit: {args.junit_dir})" if args.junit_dir != work else ""))
    print(f"{len(files)} file(s), budget {args.budget:.0f}s, at most {args.timeout_per_file:.0f}s per side"
          + (f", pytest args: {args.pytest_args}" if args.pytest_args else "")
          + (f"; excluded: {', '.join(os.path.basename(f) for f in excluded)}" if excluded else ""))

    summary = {"sdist": args.sdist, "python": args.python, "info": info, "pytest_args": args.pytest_args,
               "order": files, "files": {}, "not_run": [], "excluded": excluded}
    reserve = 10.0
    lock = threading.Lock()
    pending = list(files)

    def one(f, side, timeout):
        try:
            return run_side(side, f, args, timeout, work, tessel_pkg)
        except Exception as e:  # the runner itself must not die on one file
            return {"side": side, "results": {}, "counts": dict.fromkeys(("passed", "failed", "skipped", "error"),
                    0), "problems": [f"runner error: {type(e).__name__}: {e}"], "timed_out": False, "wall": None}

    def run_file(f):
        rec = {}
        if args.parallel and len(args.sides) == 2:
            left = args.budget - (time.monotonic() - began) - reserve
            timeout = min(args.timeout_per_file, max(5.0, left))
            with concurrent.futures.ThreadPoolExecutor(len(args.sides)) as pool:
                futures = {side: pool.submit(one, f, side, timeout) for side in args.sides}
                rec = {side: fut.result() for side, fut in futures.items()}
        else:
            for side in args.sides:
                left = args.budget - (time.monotonic() - began) - reserve
                share = 0.4 if side == "triton" and "tessel" in args.sides else 1.0
                rec[side] = one(f, side, min(args.timeout_per_file, max(5.0, left * share)))
        reg = regressions(rec)
        parts = []
        for side in args.sides:
            r = rec[side]
            c = r["counts"]
            parts.append(f"{side} {c['passed']}p {c['failed']}f {c['skipped']}s {c['error']}e in {fmt_s(r.get('wall'))}"
                         + (f" [{'; '.join(r['problems'])}]" if r["problems"] else ""))
        with lock:
            summary["files"][f] = rec
            print(f"[{time.monotonic() - began:5.0f}s] {os.path.basename(f)}: " + " | ".join(parts)
                  + (f" | {len(reg)} pass under Triton only" if len(args.sides) == 2 else ""), flush=True)
            with open(os.path.join(work, "summary.json"), "w") as fh:
                json.dump(summary, fh, indent=1)

    def worker():
        # Files start in order while the budget allows; `--jobs` workers share the queue.
        while True:
            with lock:
                if not pending:
                    return
                if args.budget - (time.monotonic() - began) < args.min_start:
                    summary["not_run"] = [f for f in files if f in pending]
                    pending.clear()
                    return
                f = pending.pop(0)
            run_file(f)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, args.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    with open(os.path.join(work, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    with open(os.path.join(work, "table.md"), "w") as fh:
        print_table(summary["files"], files, summary["not_run"], excluded, out=fh, max_listed=10**9)
    n_reg = print_table(summary["files"], files, summary["not_run"], excluded)
    print(f"\n(full table with every test id: {os.path.join(work, 'table.md')}; total {time.monotonic() - began:.0f}s)")
    incomplete = bool(summary["not_run"]) or any(r.get(s) and r[s]["problems"] for r in summary["files"].values()
                                                 for s in args.sides)
    return 1 if n_reg else (3 if incomplete else 0)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:  # `| head`
        sys.exit(0)
