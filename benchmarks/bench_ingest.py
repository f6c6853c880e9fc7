"""Ingest throughput benchmark (not a test): MB/s and peak RSS beside ``wc -l``, per kind of log.

``--mix NAME`` generates about ``--size-mb`` (default 512) of one kind of log in the formats the
real programs print (``logmix/``: each module cites the printing code of every line family),
deterministically (``--seed``):

    megatron         a training job's output, ~99% Megatron-LM iteration lines (the original mix)
    kernel-noise     one rsyslog file of 2,048 healthy GPU nodes, 1 Xid per ~20,000 lines
    syslog-errors    the same with 1 line in 4 a kubelet/containerd/driver error no prefilter drops
    nccl-info        NCCL_DEBUG=INFO start-up of 16,384 ranks (world, TP and DP communicators)
    slurm            slurmctld + slurmd logs of a busy 2,048-node cluster
    k8s              kubectl get events, kubelet journals, kube-controller-manager log
    kubectl-stamped  a Megatron pod's `kubectl logs --timestamps` (iterations, NCCL INFO, warnings)
    tqdm             HF Trainer output: tqdm bars redrawn with \\r, loss dicts, checkpoints
    lightning        Lightning output: an epoch of described bars redrawn with \\r per line
    unknown          a custom trainer's `[rankN] step ... | loss ...` prints no recogniser claims
    fleet-dir        nodes/node0000..node2047/kern.log plus jobs/slurm-*.out (size = total)
    all              every mix above, one after the other

Then it runs ``wc -l`` and ``tormortem ingest`` on the same input (page cache warm for both),
``--runs`` times alternately so that a slower spell of the machine hits both, and reports the
median, lowest and highest MB/s of each, how many times faster ``wc -l`` was (ratio of the
median times), and the ingest's peak RSS (of that process and its children, from ``wait4``).

    python benchmarks/bench_ingest.py --mix kernel-noise --size-mb 512 --workdir /tmp/tm-bench
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logmix import MIXES


def timed(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one command (its own ``wait4`` rusage)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit(f"{cmd[0]} exited with {p.returncode}: {' '.join(cmd)}")
    return wall, ru.ru_maxrss


def rates(size: int, seconds: list[float]) -> dict[str, float]:
    mbps = sorted(size / x / 1e6 for x in seconds)
    return {"median": round(statistics.median(mbps), 1), "min": round(mbps[0], 1),
            "max": round(mbps[-1], 1)}


def run_mix(name: str, a: argparse.Namespace) -> dict[str, Any]:
    work = a.workdir / name
    if work.exists():
        shutil.rmtree(work)
    (work / "in").mkdir(parents=True)
    t0 = time.perf_counter()
    inputs, files = MIXES[name](work / "in", a.size_mb << 20, a.seed)
    gen_s = time.perf_counter() - t0
    size = sum(f.stat().st_size for f in files)
    print(f"{name}: generated {size / 1e6:.0f} MB in {len(files)} files ({gen_s:.0f} s)",
          file=sys.stderr)
    for f in files:  # warm the page cache
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass
    exe = str(Path(sys.executable).with_name("tormortem"))
    out = work / "out"
    ingest = [exe, "ingest", *map(str, inputs), "--out", str(out), "-q", *a.ingest_arg]
    wc_cmd = ["wc", "-l", *map(str, files)]
    lines = sum(int(x.split()[0]) for x in subprocess.run(
        wc_cmd, check=True, capture_output=True, text=True).stdout.splitlines()
        if not x.endswith(" total"))
    load0 = os.getloadavg()
    wc, ing, rss = [], [], 0
    for _ in range(a.runs):  # alternated, so a slower spell of the machine hits both
        wc.append(timed(wc_cmd)[0])
        if out.exists():
            shutil.rmtree(out)
        s, r = timed(ingest)
        ing.append(s)
        rss = max(rss, r)
    res = {
        "mix": name, "bytes": size, "lines": lines, "files": len(files), "runs": a.runs,
        "wc_l_MBps": rates(size, wc), "ingest_MBps": rates(size, ing),
        "wc_l_times_faster": round(statistics.median(ing) / statistics.median(wc), 1),
        "ingest_seconds": [round(x, 3) for x in ing],
        "ingest_peak_rss_MiB": round(rss / 1024, 1),
        "loadavg_before_after": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
        "cpus": os.cpu_count(), "generate_seconds": round(gen_s, 1),
    }
    if not a.keep:
        shutil.rmtree(work)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--mix", default="megatron", choices=[*MIXES, "all"])
    ap.add_argument("--size-mb", type=int, default=512,
                    help="MiB of input to generate (fleet-dir: the total)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/tm-bench"))
    ap.add_argument("--keep", action="store_true", help="keep the generated logs and output")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=5,
                    help="ingest runs (this machine's speed varies by +-10%%; median reported)")
    ap.add_argument("--ingest-arg", action="append", default=[],
                    help="extra argument for tormortem ingest (repeatable), e.g. --jobs=2")
    a = ap.parse_args()
    names = list(MIXES) if a.mix == "all" else [a.mix]
    results = []
    for name in names:
        res = run_mix(name, a)
        results.append(res)
        print(json.dumps(res, indent=2), flush=True)
    if len(results) > 1:
        print("| mix | MB | ingest MB/s (median, min-max) | wc -l MB/s | ratio | peak RSS MiB |")
        print("| --- | --- | --- | --- | --- | --- |")
        for r in results:
            i, w = r["ingest_MBps"], r["wc_l_MBps"]
            print(f"| {r['mix']} | {r['bytes'] / 1e6:.0f} | {i['median']} ({i['min']}-{i['max']})"
                  f" | {w['median']} | 1/{r['wc_l_times_faster']:.0f} | "
                  f"{r['ingest_peak_rss_MiB']} |")


if __name__ == "__main__":
    main()
