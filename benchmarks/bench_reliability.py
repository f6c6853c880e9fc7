"""Peak memory and time of the reliability probes that were about size and liveness.

    python benchmarks/bench_reliability.py [--code DIR] [--mb-explain 300] [--mb-blob 400]

* ``explain --jsonl`` of a ~300 MB job log (Megatron-LM iteration lines, as the demo's job
  output prints them): every line is an event, so this is explain's worst case;
* ``ingest`` of a ~400 MB file without a newline;
* ``ingest`` of a job log that another process keeps appending to (a busy live log).

Each runs in a subprocess; peak RSS is that child's ``ru_maxrss``. ``--code DIR`` runs another
source tree (e.g. a checkout of the commit before, for before/after figures).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; sys.argv[0] = 'tormortem'; from pipeline.cli import main; main()"


def run(code: Path, *args: str, limit: float = 900) -> tuple[float, float, int]:
    """(seconds, peak RSS MiB, exit code) of ``tormortem ARGS`` from source tree ``code``;
    stopped (exit -9) after ``limit`` seconds."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    t0 = time.perf_counter()
    # a wrapper reports its one child's peak RSS (ours accumulates over every child) and
    # stops it after ``limit`` seconds
    p = subprocess.run([sys.executable, "-c", _WRAP, str(limit), sys.executable, "-c", CLI,
                        *args], env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, check=False)
    secs = time.perf_counter() - t0
    text = p.stderr.decode(errors="replace").strip().splitlines()
    rc, peak = (int(x) for x in text[-1].split())
    if rc:
        print("   stderr:", "\n".join(text[-4:-1])[-300:])
    return secs, peak / 1024, rc


_WRAP = """
import resource, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)
try:
    rc = p.wait(timeout=float(sys.argv[1]))
except subprocess.TimeoutExpired:
    p.kill()
    rc = p.wait()
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
"""


def job_block() -> bytes:
    text = (ROOT / "sample_logs" / "demo" / "jobs" / "slurm-1001.out").read_text()
    return "".join(ln + "\n" for ln in text.splitlines() if " iteration " in ln).encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", type=Path, default=ROOT)
    ap.add_argument("--mb-explain", type=int, default=300)
    ap.add_argument("--mb-blob", type=int, default=400)
    ap.add_argument("--only", choices=["explain", "blob", "live"], default=None)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-rel-"))
    block = job_block()
    print(f"code: {a.code}")
    if a.only in (None, "explain"):
        log = tmp / "slurm-1.out"
        with open(log, "wb") as f:
            while f.tell() < a.mb_explain << 20:
                f.write(block)
        s, rss, rc = run(a.code, "explain", str(log), "--jsonl")
        print(f"explain --jsonl {log.stat().st_size / 1e6:.0f} MB job log: {s:.1f} s, "
              f"peak RSS {rss:.0f} MiB, exit {rc}")
        log.unlink()
    if a.only in (None, "blob"):
        blob = tmp / "blob.log"
        with open(blob, "wb") as f:
            for _ in range(a.mb_blob):
                f.write(b"x" * (1 << 20))
        s, rss, rc = run(a.code, "ingest", str(blob), "--out", str(tmp / "o1"), "-q")
        print(f"ingest {blob.stat().st_size / 1e6:.0f} MB without a newline: {s:.1f} s, "
              f"peak RSS {rss:.0f} MiB, exit {rc}")
        blob.unlink()
    if a.only in (None, "live"):
        live = tmp / "slurm-2.out"
        with open(live, "wb") as f:
            while f.tell() < 16 << 20:
                f.write(block)
        stop = threading.Event()
        appended = [0]

        def append() -> None:
            with open(live, "ab") as f:
                while not stop.is_set():
                    f.write(block)
                    f.flush()
                    appended[0] += len(block)
                    time.sleep(0.002)

        t = threading.Thread(target=append)
        t.start()
        try:
            s, rss, rc = run(a.code, "ingest", str(live), "--out", str(tmp / "o2"), "-q",
                             limit=120)
        finally:
            stop.set()
            t.join()
        print(f"ingest of a 16 MB live job log (appended {appended[0] / 1e6:.0f} MB while "
              f"read): {s:.1f} s, exit {rc}" + (" (stopped: did not finish in 120 s)"
                                                 if rc == -9 else ""))
    subprocess.run(["rm", "-rf", str(tmp)], check=False)


if __name__ == "__main__":
    main()
