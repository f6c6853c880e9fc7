"""``scontrol show job`` (and ``scontrol show job -o``) output -> ATTEMPTS records.

Format (Slurm 22.05, src/api/job_info.c ``slurm_sprint_job_info``; checked on the real Slurm
of tests/integration): one job per block of ``Key=Value`` words, the block's first line
starting ``JobId=``, continuation lines indented three spaces, blocks separated by a blank
line; ``-o`` prints each block on one line. For example::

    JobId=4 ArrayJobId=2 ArrayTaskId=0 ArrayTaskThrottle=1 JobName=arr
       JobState=RUNNING Reason=None Dependency=(null)
       Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
       SubmitTime=2026-11-30T21:32:35 EligibleTime=2026-11-30T21:32:36
       StartTime=2026-11-30T21:32:36 EndTime=2027-11-30T21:32:36 Deadline=N/A
       NodeList=tmn1
       BatchHost=tmn1
       TRES=cpu=1,mem=500M,node=1,billing=1,gres/gpu=4
       Command=/home/u/train.sbatch
       WorkDir=/home/u
       StdErr=/home/u/logs/2_0.out
       StdOut=/home/u/logs/2_0.out

What it tells that sacct (22.05) does not: ``StdOut=``/``StdErr=`` with ``%j %x %u %A %a``
already expanded (``%N`` is left as is: slurmstepd expands it per node), and ``Dependency=``
while the job waits (``afterany:1(unfulfilled)``). Decisions:

* ``job_id`` as sacct prints it: an array task is ``<ArrayJobId>_<ArrayTaskId>`` with its own
  id in ``job_id_raw``; a pending array's ``ArrayTaskId=1-2%1`` keeps the plain id.
* ``StartTime`` counts only once the job has started (not PENDING); ``EndTime`` only in a
  final state -- for a running job it is the time limit's end, not an end.
* ``scontrol`` shows only a job's *current* execution (``Restarts=N``): the analysis uses these
  records for what they name (output paths, working directory, dependency) and as attempts
  only for jobs no sacct record covers.
* The text of a record carries no log line of its own: no events.
"""

from __future__ import annotations

import re
from typing import ClassVar

from parsers import hostlist
from parsers.base import EVENT, NOISE, UNPARSED, FileContext, LineParser, head_lines
from parsers.slurm_sacct_fields import gpus_from_tres, split_exit
from parsers.timeutil import TimeError, parse_iso

_KV = re.compile(r"(?:^|\s)([A-Za-z][\w/:]*)=(\S*)")
_FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL",
          "BOOT_FAIL", "DEADLINE", "PREEMPTED", "REQUEUED", "REVOKED"}
_NULL = ("", "(null)", "None", "Unknown", "N/A")


class ScontrolJobParser(LineParser):
    """``scontrol show job [-o] [-d]`` output, one record per job (see module docstring)."""

    chronological: ClassVar[bool] = False  #: a table: rows in job order, not time order
    name: ClassVar[str] = "scontrol"
    description: ClassVar[str] = "scontrol show job [-o] output: jobs with StdOut/WorkDir"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.block: dict[str, str] = {}
        self.block_line = 0

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        first = next((ln for ln in head_lines(head, 64) if ln.strip()), None)
        if first is None:  # 64 blank lines first: the rest of the head
            first = next((ln for ln in head.splitlines() if ln.strip()), "")
        return 95 if first.startswith("JobId=") and "JobName=" in first else 0

    def parse_line(self, text: str, line_no: int) -> int:
        if not text.strip():
            self._flush()
            return NOISE
        if text.startswith("JobId="):
            self._flush()
            self.block_line = line_no
        elif not self.block:
            return UNPARSED
        pairs = _KV.findall(text)
        if not pairs:
            return UNPARSED
        for k, v in pairs:
            self.block.setdefault(k, v)
        return EVENT

    def finish(self) -> None:
        self._flush()

    def _time(self, b: dict[str, str], key: str) -> int | None:
        v = b.get(key, "")
        if v in _NULL:
            return None
        try:
            return parse_iso(v, self.ctx.tz)[0]
        except TimeError:
            return None

    def _flush(self) -> None:
        b, self.block = self.block, {}
        if not b.get("JobId"):
            return
        jid = b["JobId"]
        arr, task = b.get("ArrayJobId"), b.get("ArrayTaskId", "")
        job_id, raw = jid, None
        if arr and task.isdigit():
            job_id, raw = f"{arr}_{task}", (jid if jid != f"{arr}_{task}" else None)
        state = (b.get("JobState") or "").upper() or None
        started = state not in (None, "PENDING")
        nodes = None
        if b.get("NodeList", "") not in _NULL:
            try:
                nodes = hostlist.expand(b["NodeList"])
            except hostlist.HostlistError:
                nodes = None
        try:
            code, sig = split_exit(b.get("ExitCode", ""))
        except ValueError:
            code = sig = None
        restarts = b.get("Restarts", "")
        # Slurm 19.05+ prints AllocTRES= (and ReqTRES=); older releases TRES=
        tres = b.get("AllocTRES") or b.get("TRES") or ""
        nn = b.get("NumNodes", "")

        def opt(key: str) -> str | None:
            v = b.get(key, "")
            return None if v in _NULL else v

        self.records.add(
            job_id=job_id, step=None, name=opt("JobName"), run_hint=opt("JobName"),
            state=state, reason=None, exit_code=code, signal=sig,
            submit=self._time(b, "SubmitTime"),
            start=self._time(b, "StartTime") if started else None,
            end=self._time(b, "EndTime") if state in _FINAL else None, nodes=nodes,
            node_count=int(nn) if nn.isdigit() else None,
            gpus=gpus_from_tres(tres) if tres else None,
            restart_count=int(restarts) if restarts.isdigit() else None, job_id_raw=raw,
            work_dir=opt("WorkDir"), std_out=opt("StdOut"), std_err=opt("StdErr"),
            dependency=opt("Dependency"), line_no=self.block_line)


PARSERS = [ScontrolJobParser]
