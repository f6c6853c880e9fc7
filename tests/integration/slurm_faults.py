"""What the integration tests do to the real Slurm of ``slurm_harness.Cluster`` (a mixin of
it): the faults they inject (trainer failures, nodes down, requeues, cancels, killed batch
scripts), each recorded with its wall time in the cluster's timeline, and the collection of
what a user would have afterwards (daemon logs, job output, ``sacct`` text and JSON)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from tests.integration.slurm_config import HarnessError

T = TypeVar("T")

SACCT_FIELDS = ("JobID,JobIDRaw,JobName,Partition,State,ExitCode,DerivedExitCode,Submit,"
                "Eligible,Start,End,Elapsed,NNodes,NodeList,AllocTRES,Reason")


def wait_for(pred: Callable[[], T | None], what: str, timeout: float = 60.0,
             poll: float = 0.2) -> T:
    """Poll ``pred`` until it returns a truthy value; HarnessError after ``timeout`` s."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise HarnessError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(poll)


@dataclass
class Injection:
    """One thing the harness did to the cluster, with the wall time it did it."""

    time: float  #: epoch seconds, taken right after the action returned
    action: str
    job_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0  #: epoch seconds, taken right before the action (0: not timed)

    def as_dict(self) -> dict[str, Any]:
        return {"time": self.time, "started": self.started or self.time,
                "iso": datetime.fromtimestamp(self.time, UTC).isoformat(),
                "action": self.action, "job_id": self.job_id, **self.detail}


class Faults:
    """Injections and collection; ``Cluster`` supplies ``base``, ``nodes``, ``logdir``,
    ``jobdir``, ``timeline``, ``out``, ``job``, ``raw_id``, ``progress`` and ``record``."""

    # -- injections -------------------------------------------------------------------------
    def inject_trainer(self, jid: str, mode: str) -> Injection:
        """Ask the trainer (rank 0) to fail: exit | segv | oom."""
        it, ck = self.progress(jid)
        t0 = time.time()
        (self.base / "inject" / f"{self.raw_id(jid)}.{mode}").touch()
        return self.record(f"trainer_{mode}", jid, t0, iteration=it, checkpoint=ck)

    def node_down(self, node: str, jid: str, reason: str) -> Injection:
        it, ck = self.progress(jid)
        t0 = time.time()
        self.out("scontrol", "update", f"nodename={node}", "state=down", f"reason={reason}")
        return self.record("node_down", jid, t0, node=node, reason=reason, iteration=it,
                           checkpoint=ck)

    def node_resume(self, node: str) -> Injection:
        self.out("scontrol", "update", f"nodename={node}", "state=resume")
        return self.record("node_resume", None, node=node)

    def requeue(self, jid: str) -> Injection:
        it, ck = self.progress(jid)
        t0 = time.time()
        self.out("scontrol", "requeue", jid)
        return self.record("scontrol_requeue", jid, t0, iteration=it, checkpoint=ck)

    def scancel(self, jid: str) -> Injection:
        it, ck = self.progress(jid)
        t0 = time.time()
        self.out("scancel", jid)
        return self.record("scancel", jid, t0, iteration=it, checkpoint=ck)

    def kill_batch(self, jid: str, sig: int = signal.SIGKILL) -> Injection:
        """Send ``sig`` to the job's batch script (pid from ``scontrol listpids``)."""
        node = self.job(jid)["BatchHost"]
        rows = self.out("scontrol", "listpids", jid, node).splitlines()[1:]
        pids = [r.split()[0] for r in rows if len(r.split()) >= 4
                and r.split()[2] == "batch" and r.split()[3] == "0"]
        if not pids:
            raise HarnessError(f"no batch script pid for job {jid} on {node}: {rows}")
        it, ck = self.progress(jid)
        t0 = time.time()
        os.kill(int(pids[0]), sig)
        return self.record("kill_batch", jid, t0, signal=int(sig), pid=int(pids[0]), node=node,
                           iteration=it, checkpoint=ck)

    # -- collection -------------------------------------------------------------------------
    def accounted(self, start: str, jobs: str | None = None, timeout: float = 30) -> None:
        """Wait until slurmdbd has every job's end: the controller reports a job COMPLETED
        a moment before the accounting record says so (sacct would still print RUNNING)."""
        sel = ["-j", jobs] if jobs else []

        def done() -> bool:
            out = self.out("sacct", "-a", "-X", "-n", "-P", "-S", start, "-E", "now", *sel,
                           "--format=State", check=False)
            return all(st.split()[0] not in ("RUNNING", "PENDING", "COMPLETING")
                       for st in out.split("\n") if st.strip())
        wait_for(done, "slurmdbd to record every job's end", timeout, poll=0.5)

    def collect(self, dest: Path, since: float) -> Path:
        """What a user would have: daemon logs, job output, sacct text and JSON."""
        start = datetime.fromtimestamp(since - 120, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        self.accounted(start)
        (dest / "slurm").mkdir(parents=True, exist_ok=True)
        (dest / "jobs").mkdir(exist_ok=True)
        shutil.copy(self.logdir / "slurmctld.log", dest / "slurm" / "slurmctld.log")
        for n in self.nodes:
            src = self.logdir / f"slurmd-{n}.log"
            if src.exists():
                shutil.copy(src, dest / "slurm" / src.name)
        for f in sorted(self.jobdir.glob("slurm-*.*")):
            shutil.copy(f, dest / "jobs" / f.name)
        common = ["sacct", "-a", "-S", start, "-E", "now"]
        (dest / "slurm" / "sacct.psv").write_text(self.out(
            *common, "--parsable2", "--duplicates", f"--format={SACCT_FIELDS}"))
        (dest / "slurm" / "sacct.json").write_text(self.out(*common, "--json"))
        return dest

    def write_timeline(self, path: Path) -> None:
        path.write_text(json.dumps([i.as_dict() for i in self.timeline], indent=1) + "\n")


