"""slurm: the slurmctld log and slurmd logs of a busy 2,048-node GPU cluster.

``slurm/slurmctld.log`` (about 4/5 of the bytes) and ``slurm/slurmd-node0000.log`` ..
``slurmd-node0063.log`` (the nodes whose slurmd logs were collected). Jobs arrive at random,
most finish with exit 0, some fail (exit 1, OOM, signal 6), hit the time limit or are cancelled;
a node occasionally stops responding and its job is requeued. Every message is one Slurm
22.05-23.11 prints at the default ``info`` level, with ``LogTimeFormat=iso8601_ms``
(``[2024-05-01T10:02:11.123] ``): the unedited output of a real Slurm 22.05.8 in
sample_logs/real_formats/slurm (run1, run2; NOTES.md there) and the slurmctld/slurmd lines of
tests/data/formats/slurm.jsonl (slurm-logfile groups, each citing src/slurmctld/job_mgr.c,
node_mgr.c, proc_req.c, backfill.c, src/slurmd/slurmd/req.c, slurmstepd/req.c, task/cgroup).
"""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np

from logmix.common import Sized, iso
from pipeline.simulate.timefmt import compress

NODES, SLURMD_NODES = 2048, 64
PARTITIONS = ("gpu", "gpu", "gpu", "debug", "lowprio")


class Cluster:
    def __init__(self, out: Path, size: int, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        d = out / "slurm"
        self.size = size
        self.ctld = Sized(d / "slurmctld.log", size)
        self.slurmd = [Sized(d / f"slurmd-node{i:04d}.log", size) for i in range(SLURMD_NODES)]
        self.heap: list[tuple[float, int, int, str]] = []  #: (t, seq, file: -1 ctld, line)
        self.seq = 0
        self.job = 4_000_000

    def at(self, t: float, where: int, msg: str) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, where, f"[{iso(t, 3)}] {msg}"))

    def flush(self, until: float) -> None:
        ctld: list[str] = []
        nodes: dict[int, list[str]] = {}
        while self.heap and self.heap[0][0] <= until:
            _, _, where, line = heapq.heappop(self.heap)
            if where < 0:
                ctld.append(line)
            else:
                nodes.setdefault(where, []).append(line)
        self.ctld.write(ctld)
        for k, lines in nodes.items():
            self.slurmd[k].write(lines)

    @property
    def full(self) -> bool:
        return self.ctld.written + sum(s.written for s in self.slurmd) >= self.size

    def submit(self, t: float) -> None:
        rng = self.rng
        self.job += 1
        j = self.job
        n = int(rng.choice([1, 1, 1, 2, 4, 8, 16, 32]))
        first = int(rng.integers(0, NODES - n + 1))
        nodes = [f"node{k:04d}" for k in range(first, first + n)]
        part = PARTITIONS[int(rng.integers(len(PARTITIONS)))]
        self.at(t, -1, f"_slurm_rpc_submit_batch_job: JobId={j} InitPrio="
                f"{int(rng.integers(1000, 90000))} usec={int(rng.integers(200, 5000))}")
        start = t + float(rng.exponential(120.0))
        if rng.random() < 0.6:
            self.at(start, -1, f"sched: Allocate JobId={j} NodeList={compress(nodes)} "
                    f"#CPUs={64 * n} Partition={part}")
        else:
            self.at(start, -1, f"sched/backfill: _start_job: Started JobId={j} in {part} on "
                    f"{compress(nodes)}")
        end = start + float(rng.exponential(3 * 3600.0)) + 60.0
        fate = float(rng.random())
        local = [first + k for k in range(n) if first + k < SLURMD_NODES]
        for k in local:
            self._slurmd_job(k, j, start, end, head=k == first, fate=fate)
        if fate < 0.80:
            self.at(end, -1, f"_job_complete: JobId={j} WEXITSTATUS 0")
        elif fate < 0.88:
            self.at(end, -1, f"_job_complete: JobId={j} WEXITSTATUS 1")
        elif fate < 0.90:
            self.at(end, -1, f"_job_complete: JobId={j} OOM failure")
        elif fate < 0.92:
            self.at(end, -1, f"_job_complete: JobId={j} WTERMSIG 6")
        elif fate < 0.96:
            self.at(end - 0.5, -1, f"Time limit exhausted for JobId={j}")
            self.at(end, -1, f"_job_complete: JobId={j} WTERMSIG 15")
        elif fate < 0.995:
            self.at(end - 0.2, -1, f"_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId={j} uid "
                    f"{int(rng.integers(20000, 40000))}")
            self.at(end, -1, f"_job_complete: JobId={j} WTERMSIG 15")
            self.at(end + 0.001, -1, f"_job_complete: JobId={j} cancelled by interactive user")
            self.at(end + 0.002, -1, f"_job_complete: JobId={j} done")
            return
        else:
            bad = nodes[0]
            self.at(end - 300.0, -1, f"error: Nodes {bad} not responding")
            self.at(end, -1, f"error: Nodes {bad} not responding, setting DOWN")
            self.at(end + 0.01, -1, f"requeue JobId={j} due to failure of node {bad}")
            self.at(end + 1800.0, -1, f"Node {bad} now responding")
            self.at(end + 1800.002, -1, f"node_did_resp: node {bad} returned to service")
            return
        self.at(end + 0.003, -1, f"_job_complete: JobId={j} done")

    def _slurmd_job(self, k: int, j: int, start: float, end: float, head: bool,
                    fate: float) -> None:
        rng = self.rng
        t = start + 0.2
        mem = int(rng.choice([64000, 240000, 500000]))
        if head:
            self.at(t, k, f"Launching batch job {j} for UID {int(rng.integers(20000, 40000))}")
            for what in ("job", "step"):
                self.at(t + 0.02, k, f"[{j}.batch] task/cgroup: _memcg_initialize: {what}: "
                        f"alloc={mem}MB mem.limit={mem}MB memsw.limit=unlimited")
        self.at(t + 2.0, k, f"launch task StepId={j}.0 request from UID:1000 GID:1000 "
                f"HOST:10.7.{k // 250}.{k % 250 + 2} PORT:{int(rng.integers(30000, 60000))}")
        for what in ("job", "step"):
            self.at(t + 2.02, k, f"[{j}.0] task/cgroup: _memcg_initialize: {what}: "
                    f"alloc={mem}MB mem.limit={mem}MB memsw.limit=unlimited")
        if 0.88 <= fate < 0.90:
            self.at(end - 0.1, k, f"[{j}.0] error: Detected 1 oom_kill event in StepId={j}.0. "
                    "Some of the step tasks have been OOM Killed.")
        if 0.92 <= fate < 0.96:
            self.at(end - 0.4, k, f"[{j}.0] error: *** STEP {j}.0 ON node{k:04d} CANCELLED AT "
                    f"{iso(end, 0)} DUE TO TIME LIMIT ***")
        self.at(end - 0.05, k, f"[{j}.0] done with job")
        if head:
            self.at(end, k, f"[{j}.batch] done with job")


def busy_cluster(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    c = Cluster(out, size, seed)
    t = 0.0
    try:
        while not c.full:
            for _ in range(200):
                t += float(c.rng.exponential(4.0))
                c.submit(t)
            c.flush(t - 12 * 3600.0)
        c.flush(float("inf"))
    finally:
        c.ctld.f.close()
        for s in c.slurmd:
            s.f.close()
    files = [c.ctld.path, *(s.path for s in c.slurmd)]
    return [out / "slurm"], files
