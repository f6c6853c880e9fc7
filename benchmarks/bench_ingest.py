"""Ingest throughput benchmark (not a test): MB/s and peak RSS beside ``wc -l``.

Generates a mixed training-job log of about ``--size-mb`` (default 1024 MiB): ~99% Megatron-LM
iteration lines, the rest NCCL INFO/WARN lines, checkpoint save/load lines, a PyTorch watchdog
timeout and a few unparsed user prints -- all in the formats those programs print (see
sample_logs/real_formats/ for the sources). Then times ``wc -l`` and ``tormortem ingest`` on the
same file (page cache warm for both), ``--runs`` times alternately, and reports the median,
lowest and highest MB/s of each and the ingest's peak RSS.

    python benchmarks/bench_ingest.py --size-mb 1024 --workdir /tmp/tm-bench
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

ITER = (" [{ts}] iteration {it:>8d}/ 1000000 | consumed samples: {cs:>12d} | elapsed time per "
        "iteration (ms): {ms:.1f} | learning rate: 1.499999E-04 | global batch size:  1024 | "
        "lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: 0.{gn:03d} | number of skipped "
        "iterations:   0 | number of nan iterations:   0 |\n")
OTHER = [
    "node017:2210:2263 [3] NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7\n",
    "saving checkpoint at iteration {it:>7d} to /ckpt/llama-70b\n",
    "  successfully saved checkpoint at iteration {it:>7d} to /ckpt/llama-70b\n",
    "node017:2210:2263 [3] NCCL WARN NET/IB : Got completion from peer 10.3.2.17<52431> with "
    "error 12, opcode 0, len 0, vendor err 129 (Recv)\n",
    "[rank5]:[E ProcessGroupNCCL.cpp:563] [Rank 5] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=123456, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    "Timeout(ms)=600000) ran for 600046 milliseconds before timing out.\n",
    "my own debug print: batch shapes look fine\n",
]


def generate(path: Path, size: int) -> int:
    t0 = datetime(2024, 5, 1)
    written, it, n = 0, 0, 0
    with open(path, "w", buffering=1 << 22) as f:
        while written < size:
            it += 1
            ts = (t0 + timedelta(seconds=it * 2)).strftime("%Y-%m-%d %H:%M:%S")
            line = ITER.format(ts=ts, it=it, cs=it * 1024, ms=2000.0 + (it % 97) / 10,
                               loss=2.5 + (it % 13) / 100, gn=it % 1000)
            if it % 100 == 0:
                line += OTHER[it // 100 % len(OTHER)].format(it=it)
            f.write(line)
            written += len(line)
            n += line.count("\n")
    return n


def timed(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and the child's peak RSS (KiB) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(after, before)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/tm-bench"))
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    ap.add_argument("--runs", type=int, default=5,
                    help="ingest runs (this machine's speed varies by +-10%%; median reported)")
    a = ap.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    log = a.workdir / "slurm-4242.out"
    if not log.exists() or log.stat().st_size < a.size_mb << 20:
        lines = generate(log, a.size_mb << 20)
        print(f"generated {log} ({log.stat().st_size / 1e6:.0f} MB, {lines:,} lines)")
    size = log.stat().st_size
    subprocess.run(["cat", str(log)], check=True, stdout=subprocess.DEVNULL)  # warm the cache
    exe = str(Path(sys.executable).with_name("tormortem"))
    wc, ing, rss = [], [], 0
    for _ in range(a.runs):  # alternated, so a slower spell of the machine hits both
        wc.append(timed(["wc", "-l", str(log)])[0])
        s, r = timed([exe, "ingest", str(log), "--out", str(a.workdir / "out"), "-q"])
        ing.append(s)
        rss = max(rss, r)

    def rates(seconds: list[float]) -> dict[str, float]:
        mbps = sorted(size / x / 1e6 for x in seconds)
        return {"median": round(statistics.median(mbps), 1), "min": round(mbps[0], 1),
                "max": round(mbps[-1], 1)}

    res = {
        "bytes": size, "runs": a.runs,
        "wc_l_MBps": rates(wc),
        "ingest_MBps": rates(ing),
        "ingest_seconds": [round(x, 3) for x in ing],
        "ingest_peak_rss_MiB": round(rss / 1024, 1),
        "cpus": os.cpu_count(),
    }
    print(json.dumps(res, indent=2))
    if not a.keep:
        log.unlink()


if __name__ == "__main__":
    main()
