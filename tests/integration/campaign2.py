"""The second real-Slurm campaign (issue 13): output named as users name it, runs that span
job ids and names. Four runs side by side on the test cluster (see test_campaign2.py for
what is checked):

====================  ============================================  =======================
run                   how it is submitted                           what happens
====================  ============================================  =======================
``c2-part1`` chain    ``-o %x-%j.out -e %x-%j.err``, 2 nodes,       part1 crashes (exit 1);
                      ``srun --label`` with both ranks printing;    part2 (``-d afterany``,
                      three jobs submitted at once, each            new name) SIGSEGV;
                      ``--dependency=afterany:<previous>``, the     part3 (new name)
                      name changing (part1, part2, part3)           completes
``c2-array``          ``--array=0-2%1`` (one task at a time),       task 0 crashes, task 1
                      ``-o logs/%x/%A_%a.out``                      is scancelled, task 2
                                                                    completes
``c2-trunc``          ``-o %j.log --open-mode=truncate --requeue``  scontrol requeue: the
                                                                    requeue erases the first
                                                                    execution's output
``c2-torchrun``       torchrun-style per-rank logs:                 job 1 crashes, job 2
                      ``logs/torchrun/<name>/none_XXXX/attempt_0/   (same name) completes
                      <rank>/stdout.log``; sbatch's own output
                      ``%x-%j.out`` holds only the launcher's lines
====================  ============================================  =======================

The torchrun layout is the one torch/distributed/elastic/multiprocessing/api.py makes for
``--log-dir DIR`` (``DefaultLogsSpecs``: ``DIR/<run_id>_<mkdtemp>/attempt_<restart>/
<local_rank>/stdout.log``; the run id is ``none`` unless ``--rdzv-id`` is given): torch is
not installed here, so the job script makes the same directories and runs one trainer per
rank with its output redirected there, as torchrun's ``--redirects 3`` does.

Collected like a user would: every job's output tree, the daemon logs, sacct text with
SubmitLine and WorkDir, sacct --json, and ``scontrol show job`` of the campaign's jobs.
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from pipeline.cli import main
from tests.integration.campaign import ITER_MS, SAVE_EVERY
from tests.integration.slurm_config import HarnessError, iter_lines
from tests.integration.slurm_faults import SACCT_FIELDS
from tests.integration.slurm_harness import Cluster

CHAIN, ARRAY, TRUNC, TORCH = "c2-part1", "c2-array", "c2-trunc", "c2-torchrun"
ITERS = {CHAIN: 70, ARRAY: 60, TRUNC: 50, TORCH: 40}


@dataclass
class Campaign2:
    cluster: Cluster
    root: Path = Path()  #: where the jobs write (the users' directories)
    jobs: dict[str, str] = field(default_factory=dict)  #: role -> job id (sacct JobID)
    sacct: list[dict[str, str]] = field(default_factory=list)
    analysis: dict[str, Any] = field(default_factory=dict)
    logs: Path = Path()
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    def run(self, name: str) -> dict[str, Any]:
        runs = {r["run"]: r for r in self.analysis["runs"]}
        assert name in runs, f"run {name} not found; runs: {sorted(runs)}"
        return dict(runs[name])

    def attempt_id(self, role: str) -> str:
        job, _, ex = role.partition("#")
        return f"{self.jobs[job]}#{ex}" if ex else self.jobs[job]

    def attempt(self, role: str) -> dict[str, Any]:
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

    def truth(self, role: str) -> list[dict[str, Any]]:
        """The trainer's own record of one execution (never shown to tormortem)."""
        job, _, ex = role.partition("#")
        raw = self.raw(job)
        path = self.cluster.base / "truth" / f"{raw}.jsonl"
        recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
        return [r for r in recs if r["restart"] == int(ex or 0)]

    def logged(self, role: str, every: int) -> list[int]:
        """Iterations any rank of one execution printed (every ``every``-th)."""
        job, _, ex = role.partition("#")
        out = []
        for path in (self.cluster.base / "truth").glob(f"{self.raw(job)}*.jsonl"):
            for ln in path.read_text().splitlines():
                r = json.loads(ln) if ln.strip() else {}
                if r.get("event") == "iteration" and r["restart"] == int(ex or 0) \
                        and r["iteration"] % every == 0:
                    out.append(int(r["iteration"]))
        return out

    def raw(self, job: str) -> str:
        jid = self.jobs[job]
        rows = [r for r in self.sacct if r["JobID"] == jid]
        return rows[0]["JobIDRaw"] if rows else jid


def _scripts(c: Cluster, root: Path) -> dict[str, Path]:
    bindir = c.base / "bin"
    bindir.mkdir(exist_ok=True)
    trainer = bindir / "trainer.py"
    shutil.copy(Path(__file__).with_name("trainer.py"), trainer)
    py = f"{sys.executable} -u {trainer}"
    head = f"""#!/bin/bash
#SBATCH --partition=gpu
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=1
trap 'true' TERM
CKPT={c.base}/ckpt/$RUN_NAME
ARGS="--save $CKPT --load $CKPT --train-iters $TRAIN_ITERS --iter-ms {ITER_MS}
      --save-interval {SAVE_EVERY} --inject-dir {c.base}/inject --truth {c.base}/truth"
"""
    scripts = {
        "label": head + f"srun --label --kill-on-bad-exit=1 {py} $ARGS --all-ranks\n",
        "plain": head + f"srun --kill-on-bad-exit=1 {py} $ARGS\n",
        # torchrun --log-dir layout (see the module docstring), two local ranks
        "torchrun": head + f"""LOGDIR={root}/logs/torchrun/$SLURM_JOB_NAME
mkdir -p $LOGDIR
RUNDIR=$(mktemp -d -p $LOGDIR none_XXXXXXXX)
echo "launcher: rank logs in $RUNDIR"
for r in 0 1; do mkdir -p $RUNDIR/attempt_0/$r; done
RANK=0 {py} $ARGS > $RUNDIR/attempt_0/0/stdout.log 2> $RUNDIR/attempt_0/0/stderr.log &
P0=$!
RANK=1 {py} $ARGS --all-ranks > $RUNDIR/attempt_0/1/stdout.log \\
    2> $RUNDIR/attempt_0/1/stderr.log &
P1=$!
wait $P0
RC=$?
kill $P1 2>/dev/null
wait $P1
echo "launcher: worker group exited with $RC"
exit $RC
""",
    }
    out = {}
    for k, text in scripts.items():
        p = bindir / f"c2-{k}.sbatch"
        p.write_text(text)
        p.chmod(0o755)
        out[k] = p
    return out


def _go(fn: Any, camp: Campaign2, what: str) -> threading.Thread:
    def body() -> None:
        try:
            fn()
        except BaseException as e:  # reported after join
            camp.errors.append(f"{what}: {e!r}")
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


def run_campaign2(c: Cluster) -> Campaign2:
    root = c.base / "c2"
    (root / "logs").mkdir(parents=True, exist_ok=True)
    camp = Campaign2(c, root)
    sc = _scripts(c, root)
    t0 = time.time()

    def sub(script: str, name: str, run: str, *args: str, **kw: Any) -> str:
        return c.sbatch(sc[script], name, *args, RUN_NAME=run, TRAIN_ITERS=ITERS[run],
                        **kw)

    def chain() -> None:
        o, e = f"{root}/%x-%j.out", f"{root}/%x-%j.err"
        two = ("-N2", "-w", "tmn1,tmn2")
        p1 = camp.jobs["P1"] = sub("label", "c2-part1", CHAIN, *two, output=o, error=e)
        p2 = camp.jobs["P2"] = sub("label", "c2-part2", CHAIN, *two, f"--dependency=afterany:{p1}",
                                   output=o, error=e)
        p3 = camp.jobs["P3"] = sub("label", "c2-part3", CHAIN, *two, f"--dependency=afterany:{p2}",
                                   output=o, error=e)
        c.wait_running(p1)
        c.wait_iteration(p1, 26)
        c.inject_trainer(p1, "exit")
        c.wait_final(p1)
        c.wait_running(p2, timeout=60)
        c.wait_iteration(p2, 48)
        c.inject_trainer(p2, "segv")
        c.wait_final(p2)
        c.wait_final(p3, timeout=120)

    def array() -> None:
        (root / "logs" / ARRAY).mkdir(parents=True, exist_ok=True)  # Slurm makes no dirs
        a = sub("plain", ARRAY, ARRAY, "-N1", "-w", "tmn3", "--array=0-2%1",
                output=f"{root}/logs/%x/%A_%a.out")
        for k in range(3):
            camp.jobs[f"A{k}"] = f"{a}_{k}"
        c.wait_running(f"{a}_0")
        c.wait_iteration(f"{a}_0", 18)
        c.inject_trainer(f"{a}_0", "exit")
        c.wait_final(f"{a}_0")
        c.wait_running(f"{a}_1", timeout=60)
        c.wait_iteration(f"{a}_1", 34)
        c.scancel(f"{a}_1")
        c.wait_final(f"{a}_1")
        c.wait_final(f"{a}_2", timeout=120)

    def trunc() -> None:
        t = camp.jobs["T"] = sub("plain", TRUNC, TRUNC, "-N1", "-w", "tmn4", "--requeue",
                                 output=f"{root}/%j.log", open_mode="truncate")
        c.wait_running(t, 0)
        c.wait_iteration(t, 28)
        c.requeue(t)
        c.wait_running(t, 1)
        c.wait_final(t, timeout=120)

    def torchrun() -> None:
        o = f"{root}/%x-%j.out"
        r1 = camp.jobs["R1"] = sub("torchrun", TORCH, TORCH, "-N1", "-w", "tmn4", output=o)
        c.wait_running(r1)
        c.wait_iteration(r1, 24)
        c.inject_trainer(r1, "exit")
        c.wait_final(r1)
        time.sleep(1)
        r2 = camp.jobs["R2"] = sub("torchrun", TORCH, TORCH, "-N1", "-w", "tmn4", output=o)
        c.wait_final(r2, timeout=120)

    threads = [_go(chain, camp, "chain"), _go(array, camp, "array"),
               _go(trunc, camp, "truncate"), _go(torchrun, camp, "torchrun")]
    for t in threads:
        t.join(300)
    if camp.errors or any(t.is_alive() for t in threads):
        raise HarnessError("; ".join(camp.errors) or "a scenario did not finish")
    camp.elapsed_s = time.time() - t0
    camp.logs = _collect(c, camp, root, t0)
    _analyze(camp)
    return camp


def _collect(c: Cluster, camp: Campaign2, root: Path, since: float) -> Path:
    dest = c.base / "campaign2" / "logs"
    shutil.copytree(root, dest / "out", dirs_exist_ok=True)
    (dest / "slurm").mkdir(parents=True, exist_ok=True)
    shutil.copy(c.logdir / "slurmctld.log", dest / "slurm" / "slurmctld.log")
    for n in c.nodes:
        src = c.logdir / f"slurmd-{n}.log"
        if src.exists():
            shutil.copy(src, dest / "slurm" / src.name)
    # the campaign's own jobs (the first campaign's last job may end seconds before)
    ids = sorted({j.split("_")[0] for j in camp.jobs.values()}, key=int)
    start = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(since - 5))
    c.accounted(start, ",".join(ids))
    common = ["sacct", "-a", "-S", start, "-E", "now", "-j", ",".join(ids)]
    (dest / "slurm" / "sacct.psv").write_text(c.out(
        *common, "--parsable2", "--duplicates", f"--format={SACCT_FIELDS},SubmitLine,WorkDir"))
    (dest / "slurm" / "sacct.json").write_text(c.out(*common, "--json"))
    shown = [c.out("scontrol", "show", "job", j, check=False) for j in ids]
    (dest / "slurm" / "scontrol_show_job.txt").write_text("".join(shown))
    lines = list(iter_lines(dest / "slurm" / "sacct.psv"))
    head = lines[0].split("|")
    camp.sacct = [dict(zip(head, ln.split("|"), strict=True)) for ln in lines[1:] if ln]
    return dest


def _analyze(camp: Campaign2) -> None:
    out = camp.cluster.base / "analysis2"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = CliRunner().invoke(main, ["analyze", str(camp.logs), "--out", str(out)])
    camp.warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
    (camp.cluster.base / "analysis2.txt").write_text(r.output)
    if r.exit_code != 0:
        raise HarnessError(f"tormortem analyze failed ({r.exit_code}): {r.output[-3000:]}"
                           f" {r.exception!r}")
    camp.analysis = json.loads((out / "analysis.json").read_text())
