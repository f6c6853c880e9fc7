"""End-to-end ``tormortem analyze`` benchmark (not a test): seconds, phases, CPU, peak RSS.

Generates the Llama-3-like campaign (``simulate --preset llama3-54d --seed 3``: 421 attempts
on 2,048 nodes, 690 files, 42 MB) unless it is already in the work directory, then runs
``tormortem analyze CAMPAIGN --out DIR -v`` ``--runs`` times end to end (start-up, ingest,
analyze, fit and model, the JSON files; ``-v`` for the phase times, data to /dev/null) and
reports per variant the median, lowest and highest wall seconds, every run, the median of
each phase (ingest / analyze / fit, as ``-v`` prints them), CPU seconds (user + system) and
peak RSS (``os.wait4``'s rusage of each run), and the load average around the runs (the
machine is shared: read wall times beside it).

Variants compare builds: ``--variant NAME=DIR`` runs the ``tormortem`` of this interpreter
with ``PYTHONPATH=DIR`` (a checkout of another commit: ``git archive REV | tar -x -C DIR``);
several variants run alternately, so that a slower spell of the machine hits them all.

    python benchmarks/bench_analyze.py --runs 5
    python benchmarks/bench_analyze.py --runs 5 --variant before=/tmp/tm-before --variant now=
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PHASE = re.compile(r"^(\w+): done in ([0-9.]+) s$", re.MULTILINE)


def exe() -> list[str]:
    script = Path(sys.executable).with_name("tormortem")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pipeline"]


def campaign(workdir: Path, preset: str, seed: int) -> Path:
    logs = workdir / f"{preset}-seed{seed}"
    if not (logs / "truth.json").exists():
        shutil.rmtree(logs, ignore_errors=True)
        subprocess.run([*exe(), "simulate", "--preset", preset, "--seed", str(seed), "--out",
                        str(logs), "-q"], check=True, stdout=subprocess.DEVNULL)
    return logs


def run_once(logs: Path, out: Path, pythonpath: str | None) -> dict[str, Any]:
    """One end-to-end analyze: wall, phases, CPU and peak RSS of that child alone."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    shutil.rmtree(out, ignore_errors=True)
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen([*exe(), "analyze", str(logs), "--out", str(out), "-v"],
                                stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    if proc.returncode != 0:
        raise SystemExit(f"analyze failed (exit {proc.returncode}):\n{text}")
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mib": ru.ru_maxrss / 1024,
            "load1": load, "phases": {k: float(v) for k, v in PHASE.findall(text)}}


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    walls = sorted(r["wall_s"] for r in runs)
    phases = sorted({k for r in runs for k in r["phases"]})
    return {
        "wall_s": {"median": round(statistics.median(walls), 2), "min": round(walls[0], 2),
                   "max": round(walls[-1], 2)},
        "runs_s": [round(r["wall_s"], 2) for r in runs],
        "phases_median_s": {k: round(statistics.median(r["phases"].get(k, 0.0) for r in runs), 2)
                            for k in phases},
        "cpu_s_median": round(statistics.median(r["cpu_s"] for r in runs), 2),
        "peak_rss_mib": round(max(r["rss_mib"] for r in runs), 1),
        "load1": [round(r["load1"], 2) for r in runs],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/tm-bench-analyze"))
    ap.add_argument("--preset", default="llama3-54d")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5, help="runs per variant (median reported)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=PYTHONPATH",
                    help="a build to compare (PYTHONPATH empty: this interpreter's install)")
    a = ap.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    variants = [tuple(v.split("=", 1)) for v in a.variant] or [("current", "")]
    logs = campaign(a.workdir, a.preset, a.seed)
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in variants}
    for i in range(a.runs):
        for name, path in variants:  # alternated
            r = run_once(logs, a.workdir / "out", path or None)
            results[name].append(r)
            print(f"run {i + 1} {name}: {r['wall_s']:.2f} s (load {r['load1']:.2f}) "
                  f"{r['phases']}", file=sys.stderr)
    print(json.dumps({"campaign": str(logs), "cpus": os.cpu_count(),
                      **{name: summary(rs) for name, rs in results.items()}}, indent=2))


if __name__ == "__main__":
    main()
