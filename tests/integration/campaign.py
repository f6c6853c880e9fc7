"""The training campaign the real-Slurm tests run (see test_real_slurm.py for what it injects
and what is checked): submission, injections, collection and analysis."""

from __future__ import annotations

import json
import threading
import time
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from pipeline.cli import main
from tests.integration.slurm_config import HarnessError, iter_lines
from tests.integration.slurm_harness import Cluster

MAIN, SIDE = "llm-main", "llm-side"
MAIN_ITERS, SIDE_ITERS = 170, 420
SAVE_EVERY = 20
ITER_MS = 250
GPU = "--gres=gpu:4"


@dataclass
class Campaign:
    cluster: Cluster
    jobs: dict[str, str] = field(default_factory=dict)  #: role -> job id
    sacct: list[dict[str, str]] = field(default_factory=list)  #: sacct --parsable2 rows
    sacct_json: dict[str, Any] = field(default_factory=dict)
    analysis: dict[str, Any] = field(default_factory=dict)
    logs: Path = Path()
    side_error: BaseException | None = None
    warnings: list[str] = field(default_factory=list)  #: warnings raised by analyze

    def attempts(self, run: str) -> list[dict[str, Any]]:
        return list(self.run(run)["attempts"])

    def attempt(self, role: str) -> dict[str, Any]:
        """The analysed attempt of a role: ``J1#0`` (execution 0 of job J1), ``J2``, ``S1``."""
        aid = self.attempt_id(role)
        for r in self.analysis["runs"]:
            for a in r["attempts"]:
                if a["attempt"] == aid:
                    return dict(a)
        raise AssertionError(f"attempt {aid} ({role}) not in the analysis")

    def interruption(self, role: str) -> dict[str, Any]:
        aid = self.attempt_id(role)
        for r in self.analysis["runs"]:
            for i in r["interruptions"]:
                if i["attempt"] == aid:
                    return dict(i)
        raise AssertionError(f"no interruption for attempt {aid} ({role})")

    def attempt_id(self, role: str) -> str:
        job, _, ex = role.partition("#")
        return f"{self.jobs[job]}#{ex}" if ex else self.jobs[job]

    def sacct_row(self, role: str) -> dict[str, str]:
        job, _, ex = role.partition("#")
        return self.alloc_rows(self.jobs[job])[int(ex or 0)]

    def truth(self, role: str) -> list[dict[str, Any]]:
        """The trainer's own record of one execution (never shown to tormortem)."""
        job, _, ex = role.partition("#")
        path = self.cluster.base / "truth" / f"{self.jobs[job]}.jsonl"
        recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
        return [r for r in recs if r["restart"] == int(ex or 0)]

    def injection(self, action: str, job: str | None = None) -> Any:
        hits = [i for i in self.cluster.timeline
                if i.action == action and (job is None or i.job_id == job)]
        assert hits, f"no {action} recorded for {job}"
        return hits[0]

    def run(self, name: str) -> dict[str, Any]:
        runs = {r["run"]: r for r in self.analysis["runs"]}
        assert name in runs, f"run {name} not found; runs: {sorted(runs)}"
        return dict(runs[name])

    def alloc_rows(self, job: str) -> list[dict[str, str]]:
        """sacct allocation rows of one job id, in start order (one per execution)."""
        rows = [r for r in self.sacct if r["JobID"] == job]
        return sorted(rows, key=lambda r: r["Start"])


def epoch(s: str) -> float:
    """sacct / analysis time -> epoch seconds (sacct prints local time; the cluster runs
    with TZ=UTC)."""
    s = s.rstrip("Z")
    return datetime.fromisoformat(s).replace(tzinfo=UTC).timestamp()


def submit(c: Cluster, script: Path, run: str, iters: int, *args: str,
           launch: str = "srun") -> str:
    return c.sbatch(script, run, *args, RUN_NAME=run, TRAIN_ITERS=iters, ITER_MS=ITER_MS,
                    SAVE_INTERVAL=SAVE_EVERY, LAUNCH=launch)


def side_run(c: Cluster, script: Path, camp: Campaign) -> None:
    try:
        s1 = submit(c, script, SIDE, SIDE_ITERS, "-N1", "-w", "tmn4", GPU, "--time=1")
        camp.jobs["S1"] = s1
        c.wait_final(s1, timeout=200)
        time.sleep(1)
        s2 = submit(c, script, SIDE, SIDE_ITERS, "-N1", "-w", "tmn4", GPU)
        camp.jobs["S2"] = s2
        c.wait_final(s2, timeout=200)
    except BaseException as e:  # reported by the fixture
        camp.side_error = e


def run_campaign(c: Cluster) -> Campaign:
    camp = Campaign(c)
    script = c.job_script()
    t0 = time.time()
    side = threading.Thread(target=side_run, args=(c, script, camp), daemon=True)
    side.start()
    two = ("-N2", GPU)

    # J1: requeue, node failure (requeued by Slurm), crash
    j1 = camp.jobs["J1"] = submit(c, script, MAIN, MAIN_ITERS, *two, "-w", "tmn1,tmn2",
                                  "--requeue")
    c.wait_running(j1, 0)
    c.wait_iteration(j1, 28)
    c.requeue(j1)
    c.wait_running(j1, 1)
    c.wait_iteration(j1, 48)
    c.node_down("tmn2", j1, "GPU XID 79 injected by the test")
    time.sleep(2)
    c.node_resume("tmn2")
    c.wait_running(j1, 2)
    c.wait_iteration(j1, 68)
    c.inject_trainer(j1, "exit")
    c.wait_final(j1)

    # J2..J6: resubmissions (new job id, same JobName), without the node that failed
    nodes = ("-w", "tmn1,tmn3")
    time.sleep(1)
    j2 = camp.jobs["J2"] = submit(c, script, MAIN, MAIN_ITERS, *two, *nodes)
    c.wait_running(j2)
    c.wait_iteration(j2, 88)
    c.inject_trainer(j2, "segv")
    c.wait_final(j2)

    time.sleep(1)
    j3 = camp.jobs["J3"] = submit(c, script, MAIN, MAIN_ITERS, *two, *nodes)
    c.wait_running(j3)
    c.wait_iteration(j3, 108)
    c.kill_batch(j3)
    c.wait_final(j3)

    time.sleep(1)
    mem = ("-N1", "-w", "tmn1", GPU, "--mem=300M")
    j4 = camp.jobs["J4"] = submit(c, script, MAIN, MAIN_ITERS, *mem, launch="direct")
    c.wait_running(j4)
    c.wait_iteration(j4, 128)
    c.inject_trainer(j4, "oom")
    c.wait_final(j4)

    time.sleep(1)
    j5 = camp.jobs["J5"] = submit(c, script, MAIN, MAIN_ITERS, *two, *nodes)
    c.wait_running(j5)
    c.wait_iteration(j5, 148)
    c.scancel(j5)
    c.wait_final(j5)

    time.sleep(1)
    j6 = camp.jobs["J6"] = submit(c, script, MAIN, MAIN_ITERS, *two, *nodes)
    c.wait_final(j6)

    side.join(240)
    if camp.side_error is not None:
        raise HarnessError(f"side run: {camp.side_error!r}")
    if side.is_alive():
        raise HarnessError("side run did not finish")
    c.write_timeline(c.base / "timeline.json")

    # what a user would have
    # no directory name in the last three path parts may look like a host (see
    # test_directory_names_are_not_hosts): <base>/campaign/logs/{slurm,jobs}/...
    logs = camp.logs = c.collect(c.base / "campaign" / "logs", t0)
    lines = list(iter_lines(logs / "slurm" / "sacct.psv"))
    head = lines[0].split("|")
    camp.sacct = [dict(zip(head, ln.split("|"), strict=True)) for ln in lines[1:] if ln]
    camp.sacct_json = json.loads((logs / "slurm" / "sacct.json").read_text())

    out = c.base / "analysis"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(out)])
    camp.warnings = [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})"
                     for w in caught]
    (c.base / "analysis.txt").write_text(r.output)
    if r.exit_code != 0:
        raise HarnessError(f"tormortem analyze failed ({r.exit_code}): {r.output[-3000:]}"
                           f" {r.exception!r}")
    camp.analysis = json.loads((out / "analysis.json").read_text())
    return camp
