"""Writes a Slurm-flavour campaign directory while the campaign runs (streaming: the job output
is written per iteration batch through buffered files; only the few kernel lines and sacct rows
are kept until the end).

Layout::

    slurm/slurmctld.log      slurmctld messages in time order
    slurm/sacct.txt          sacct --parsable2 --duplicates --allocations listing
    jobs/slurm-<jobid>.out   stdout+stderr of the job; a requeued job (same id) appends to the
                             same file, as with sbatch --open-mode=append
    nodes/<node>/kern.log    nodes with kernel events, plus a few healthy ones with noise
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import numpy as np

from pipeline.simulate import writers_joblog as jl
from pipeline.simulate.params import Settings
from pipeline.simulate.records import Attempt
from pipeline.simulate.timefmt import Clock
from pipeline.simulate.writers_kernel import KernelLogs
from pipeline.simulate.writers_slurm import SACCT_HEADER, Slurmctld, sacct_row

BUF = 1 << 20
WATCHDOG_CATEGORIES = ("gpu_hardware", "gpu_driver", "nvlink", "nccl_timeout")


class SlurmLogSink:
    def __init__(self, out: Path, s: Settings, gpus_per_node: int, target: int,
                 save_every: int, rng: np.random.Generator) -> None:
        self.out, self.s, self.gpn, self.save_every = out, s, gpus_per_node, save_every
        self.clock = Clock(s.epoch)
        self.rng = rng
        for d in ("slurm", "jobs", "nodes"):
            (out / d).mkdir(parents=True, exist_ok=True)
        self.ctld_file = open(out / "slurm" / "slurmctld.log", "w",  # noqa: SIM115 (streamed)
                              encoding="utf-8", buffering=BUF)
        self.ctld = Slurmctld(self.ctld_file, self.clock, s)
        self.kern = KernelLogs(self.clock, rng)
        self.meg = jl.MegatronLog(s, self.clock, target, rng)
        self.rows: list[tuple[int, float, str]] = []
        self.job: TextIO | None = None
        self.seq = 0
        self.startup: Callable[[Attempt], list[str]] | None = None  #: noise.startup_hook

    def _lines(self, lines: list[str]) -> None:
        assert self.job is not None
        self.job.write("\n".join(lines) + "\n")

    # -- Sink ---------------------------------------------------------------------------------
    def attempt_start(self, a: Attempt) -> None:
        self.ctld.start(a)
        self.job = open(self.out / "jobs" / f"slurm-{a.job_id}.out", "a",  # noqa: SIM115
                        encoding="utf-8", buffering=BUF)  # append: --open-mode=append
        if self.startup is not None:
            self._lines(self.startup(a))

    def training_begin(self, a: Attempt, t: float) -> None:
        self._lines([*self.meg.start(a), self.meg.begin(t)])

    def iterations(self, a: Attempt, iters: np.ndarray, ends: np.ndarray,
                   durs: np.ndarray) -> None:
        assert self.job is not None
        w = self.job.write
        for line in self.meg.iterations(iters, ends, durs):
            w(line + "\n")

    def save(self, a: Attempt, iteration: int, start: float, end: float | None,
             final: bool) -> None:
        if final:
            done = [self.meg.done(start)]
            if iteration % self.save_every:  # pretrain()'s own save: no timer block
                self._lines(done + self.meg.save(iteration, (end or start) - start, False))
            else:  # saved inside the loop by save_checkpoint_and_time
                self._lines(self.meg.save(iteration, (end or start) - start, True) + done)
            return
        self._lines(self.meg.save(iteration, None if end is None else end - start, True))

    def attempt_end(self, a: Attempt) -> None:
        f = a.fault
        if f is not None:
            if f.node is not None:
                self.kern.fault(f.category, f.node, f.gpu, f.time)
                if f.category == "node_failure":
                    self.kern.reboot(f.node, a.end + float(self.rng.uniform(300.0, 900.0)))
            lines = self._failure_lines(a)
            if lines:
                self._lines(lines)
        self.ctld.end(a)
        assert self.job is not None
        self.job.close()
        self.job = None
        self.rows.append((int(a.job_id), a.start, sacct_row(a, self.clock, self.s, self.gpn)))

    def _failure_lines(self, a: Attempt) -> list[str]:
        f = a.fault
        assert f is not None
        rng, s, ck = self.rng, self.s, self.clock
        head = a.nodes[0]
        when = ck.slurm(a.end)
        if a.state in ("NODE_FAIL", "TIMEOUT", "CANCELLED", "PREEMPTED"):
            why = {"NODE_FAIL": "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS",
                   "TIMEOUT": "TIME LIMIT", "CANCELLED": "", "PREEMPTED": "PREEMPTION"}[a.state]
            return [jl.stepd(a.job_id, head, when, why)]
        if a.state == "REQUEUED":
            return []
        world = len(a.nodes) * self.gpn
        if f.rank is not None:
            rank, node_i = f.rank, f.rank // self.gpn
        else:
            rank = int(rng.integers(world))
            node_i = rank // self.gpn
        host = a.nodes[node_i]
        pid = int(rng.integers(10000, 60000))
        out: list[str] = []
        exitcode = 1
        if f.category in WATCHDOG_CATEGORIES and not f.in_startup:
            self.seq += int(rng.integers(1000, 5000))
            seq = 40 * max(a.last_iteration, 1) + self.seq % 40
            ran = int(min(f.detect_s * 1000.0, s.nccl_timeout_ms + int(rng.integers(10, 90))))
            ran = max(ran, s.nccl_timeout_ms + 1)
            pick = rng.choice(world, size=min(4, world), replace=False)
            others = [int(r) for r in pick if int(r) != rank][:3] or [rank]
            for r in sorted(others):
                out += jl.watchdog(r, seq, ran + int(rng.integers(0, 40)), s.nccl_timeout_ms, 1)
            rank, host = min(others), a.nodes[min(others) // self.gpn]
            exitcode = -6
        elif f.category == "network":
            peer = f"10.0.{int(rng.integers(0, 255))}.{int(rng.integers(1, 255))}"
            out.append(jl.nccl_ib_warn(host, pid, pid + int(rng.integers(30, 90)),
                                       rank % self.gpn, peer, int(rng.integers(30000, 60000))))
        else:
            out += jl.exception_lines(f.category, rank, s.ckpt_dir, a.last_iteration)
        stamp = ck.dt(a.end - 1.0).strftime("%Y-%m-%d_%H:%M:%S")
        out += jl.child_failed(host, rank, rank % self.gpn, exitcode, pid, stamp)
        out.append(f"srun: error: {host}: task {rank // self.gpn}: Exited with exit code 1")
        return out

    def close(self, nodes_seen: list[str], t_end: float) -> None:
        self.ctld_file.close()
        touched = set(self.kern.lines)
        healthy = [n for n in nodes_seen if n not in touched][: self.s.healthy_noise_nodes]
        for n in healthy:
            self.kern.noise(n, 0.0, t_end)
        for node, lines in self.kern.sorted_lines().items():
            d = self.out / "nodes" / node
            d.mkdir(parents=True, exist_ok=True)
            (d / "kern.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
        rows = [r for _, _, r in sorted(self.rows)]
        (self.out / "slurm" / "sacct.txt").write_text(
            "\n".join([SACCT_HEADER, *rows]) + "\n", encoding="utf-8")
