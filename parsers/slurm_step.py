"""srun / slurmstepd messages that land in a job's output: ``SlurmStepMatcher``.

Formats (SchedMD/slurm; ``error()`` prefixes ``srun: error: `` / ``slurmstepd: error: ``):

* src/srun (``_task_finish``): ``%s: %s %s: Exited with exit code %d``, ``%s: %s %s: %s%s``
  (strsignal text + `` (core dumped)``), e.g. ``srun: error: node017: task 3: Exited with exit
  code 1``, ``srun: error: node[017-018]: tasks 0-15: Killed`` -> ``srun_task_exit`` (host: one
  row per host of the hostlist, code = exit code or signal text, device = the task list);
  ``%s: %s %s: Out Of Memory`` -> ``oom_event`` (code ``srun``).
* src/srun ``_node_fail_handler``: ``Node failure on %s`` -> ``srun_node_fail`` (one row per
  host). ``salloc: Prolog failure on node %s`` (slurmd's job notification) -> ``node_drain``
  (code ``Prolog or job env setup failure``, as slurmctld's line; slurmctld drains the node).
* slurmstepd (req.c ``_handle_signal_container``) and srun (``_handle_timeout``):
  ``*** JOB 1234 ON node017 CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME LIMIT ***`` and the
  ``STEP 1234.0`` variants; reasons TIME LIMIT, PREEMPTION, NODE FAILURE (newer: ``, SEE
  SLURMCTLD LOG FOR DETAILS``), JOB REQUEUE, or none (``CANCELLED AT ... ***``: scancel) ->
  ``slurm_job_cancelled`` (code = TIME LIMIT / PREEMPTION / NODE FAILURE / JOB REQUEUE /
  CANCELLED; host; job_id; ts = the stamp, --tz applied: ``assumed_tz``). Older versions
  omit ``ON <host>``.
* ``*** JOB 1234 ON node017 FAILED (non-zero exit code or other failure mode) ***`` ->
  ``slurm_job_failed`` (code FAILED); ``*** ... UNCORRECTABLE MEMORY ERROR AT <ts> ***`` ->
  ``slurm_job_failed`` (code UNCORRECTABLE MEMORY ERROR).
* slurmstepd (step_terminate_monitor): ``*** STEP 1234.0 STEPD TERMINATED ON node017 AT <ts>
  DUE TO JOB NOT ENDING WITH SIGNALS ***`` -> ``slurm_stepd_terminated`` (the node is drained
  with "Kill task failed").
* slurmstepd cgroup: ``Detected 1 oom-kill event(s) in StepId=1234.0[ cgroup]. Some of your
  processes may have been killed by the cgroup out-of-memory handler.`` (older: ``in step
  1234.0 cgroup``) -> ``oom_event`` (code ``cgroup``, value = the count, job_id).
* The job's own id printed by its script (``echo SLURM_JOB_ID=$SLURM_JOB_ID``, or an ``env``
  dump: ``SLURM_JOB_ID=1234`` / ``SLURM_JOBID=1234``; ``export -p``: bash's ``declare -x
  SLURM_JOB_ID="1234"``, dash's ``export SLURM_JOB_ID='1234'``; a Python
  ``print(f"SLURM_JOB_ID: {...}")``; Slurm sets both, sbatch(1) "OUTPUT
  ENVIRONMENT VARIABLES") -> ``job_id_banner`` (job_id = the id; for an array task that is
  its own raw id): lets the analysis link an output file whose name carries no job id.
* ``srun: Job step aborted: Waiting up to 32 seconds for job step to finish.``, ``srun:
  forcing job termination``, ``Timed out waiting for job step to complete`` -> NOISE
  (consequences of the failure already reported).
"""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, tzinfo
from typing import Any, ClassVar

from parsers.base import EVENT, NOISE, Emit, never_open
from parsers.hostlist import HostlistError, expand
from parsers.slurm_messages import _stepd_trouble
from parsers.timeutil import TimeError, parse_iso

#: "slurmstepd-<node>: " names the node the step daemon ran on (Slurm >= 21.08)
_PREFIX = re.compile(r"^(?:srun|sbatch|salloc|slurmstepd(?:-(?P<node>[^:\s]+))?): (?:error: )?")
_TASK = re.compile(r"^(\S+): (tasks?) ([\d,\-]+): (.+?)\s*$")
_EXIT = re.compile(r"^Exited with exit code (\d+)$")
_VERDICT = re.compile(
    r"^\*\*\* (JOB|STEP) (\S+)(?: ON (\S+))? "
    r"(?:CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?)(?:, SEE SLURMCTLD LOG FOR DETAILS)?)?"
    r"(?: on \S+)?"  # before 15.08 the node came last: "... DUE TO TIME LIMIT on n447 ***"
    r"|(FAILED) \(non-zero exit code or other failure mode\)"
    r"|(UNCORRECTABLE MEMORY ERROR) AT (\S+)"
    r"|STEPD TERMINATED ON (\S+) AT (\S+) DUE TO ([A-Z ]+?)) \*\*\*$"
)
#: slurmstepd's stuck-step banner for the extern step (22.05+): ``*** EXTERN STEP FOR 12 STEPD
#: TERMINATED ON n1 AT t DUE TO JOB NOT RUNNING ***``
_EXTERN = re.compile(r"^\*\*\* EXTERN STEP FOR (\d+) STEPD TERMINATED ON (\S+) AT (\S+) DUE TO "
                     r"([A-Z ]+?) \*\*\*$")
#: srun tearing a step down after a failure (src/srun/srun_job.c, launch/slurm)
_ABORTED = ("Job step aborted", "forcing job termination", "Force Terminated",
            "Timed out waiting for job step to complete", "Terminating StepId=",
            "launch/slurm: _step_signal: Terminating", "Terminating job step")
#: launch failures (srun/libsrun/launch.c, plugins/launch/slurm)
_LAUNCH_FAIL = re.compile(r"^(?:Task launch for StepId=\S+ failed on node (\S+): |Application "
                          r"launch failed: )(.*)$")
#: allocation / submission refused by slurmctld (srun/allocate.c, sbatch.c)
_REJECTED = re.compile(r"^(?:Unable to allocate resources|Batch job submission failed|Job "
                       r"submit/allocate failed|Unable to create step for job \d+): (.*)$")
_OOM = re.compile(r"^Detected (\d+) oom[-_]kill events?(?:\(s\))? in (?:StepId=|step )"
                  r"(\d+(?:_\d+)?)?")
_NODE_FAIL = re.compile(r"^Node failure on (\S+)$")
#: slurmd's job notification when a node's prolog failed (slurmd/req.c _rpc_launch_tasks /
#: _rpc_batch_job: slurm_notify_job "Prolog failure on node %s"; _prolog_timer: "Prolog hung
#: on node %s"), printed by salloc/srun; srun's launch error for a step whose node's prolog
#: failed (launch.c: "Task launch for %ps failed on node %s: %s" with ESLURMD_PROLOG_FAILED's
#: text "Job prolog failed")
_PROLOG_FAIL = re.compile(r"^(?:Prolog (?:failure|hung) on node (\S+)|Task launch for \S+ "
                          r"failed on node (\S+): Job prolog failed)$")
_JOB_ID_VAR = re.compile(r"^(?:export\s+|declare -x\s+)?SLURM_JOB_?ID\s*[=:]\s*([\"']?)(\d+)\1\s*$")
_NOISE: tuple[str, ...] = ()


def _hosts(expr: str) -> list[str]:
    try:
        return expand(expr) or [expr]
    except HostlistError:
        return [expr]


class SlurmStepMatcher:
    """Recognises srun / slurmstepd lines (see module docstring)."""

    #: every line it can claim starts with one of these programs (parsers.message)
    SIGNAL: ClassVar[tuple[str, ...]] = ("srun:", "slurmstepd", "sbatch:", "salloc:",
                                         "SLURM_JOB", "export SLURM_JOB",
                                         "declare -x SLURM_JOB")
    SIGNAL_RE: ClassVar[tuple[str, ...]] = ()

    is_open = never_open

    format = "slurm_step"

    def __init__(self, tz: tzinfo = UTC) -> None:
        self.tz = tz

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        """EVENT/NOISE for an srun/slurmstepd line, None for anything else."""
        if text.startswith(("SLURM_JOB", "export SLURM_JOB",
                                         "declare -x SLURM_JOB")):
            mj = _JOB_ID_VAR.match(text)
            if mj is not None:
                emit(kind="job_id_banner", job_id=mj.group(2), message=text,
                     format=self.format)
                return EVENT
            return None
        if not (text.startswith("s") and ("srun" in text[:5] or "slurmstepd" in text[:10]
                                           or "sbatch" in text[:7] or "salloc" in text[:7])):
            return None
        p = _PREFIX.match(text)
        if p is None:
            return None
        msg = text[p.end():]
        if msg.startswith("***"):
            return self._verdict(msg, emit)
        if msg.startswith("Detected "):
            m = _OOM.match(msg)
            if m is not None:
                node = {"host": p.group("node")} if p.group("node") else {}
                emit(kind="oom_event", code="cgroup", value=float(m.group(1)),
                     job_id=m.group(2), message=msg, format=self.format, **node)
                return EVENT
        m2 = _TASK.match(msg)
        if m2 is not None:
            return self._task(m2, msg, emit)
        pf = _PROLOG_FAIL.match(msg)
        if pf is not None:
            emit(kind="node_drain", host=pf.group(1) or pf.group(2),
                 code="Prolog or job env setup failure",
                 message=msg, format=self.format)
            return EVENT
        m3 = _NODE_FAIL.match(msg)
        if m3 is not None:
            for h in _hosts(m3.group(1)):
                emit(kind="srun_node_fail", host=h, message=msg, format=self.format)
            return EVENT
        if any(a in msg for a in _ABORTED):
            emit(kind="step_aborted", code=msg.split(":", 1)[0][:60], message=msg,
                 format=self.format)
            return EVENT
        lf = _LAUNCH_FAIL.match(msg)
        if lf is not None:
            emit(kind="srun_node_fail", code=lf.group(2)[:80], message=msg, format=self.format,
                 **({"host": lf.group(1)} if lf.group(1) else {}))
            return EVENT
        rj = _REJECTED.match(msg)
        if rj is not None or (text.startswith(("sbatch", "salloc")) and "error: " in text[:16]):
            why = rj.group(1) if rj is not None else msg
            emit(kind="job_rejected", code=why[:120], message=msg, format=self.format)
            return EVENT
        r = _stepd_trouble(msg, None, self._with(emit))
        if r is not None:
            return r
        return None

    def _with(self, emit: Emit) -> Emit:
        def out(**fields: Any) -> None:
            emit(**{"format": self.format, **fields})
        return out

    def finish(self, emit: Emit) -> None:
        """No multi-line state."""

    def _task(self, m: re.Match[str], msg: str, emit: Emit) -> int | None:
        hosts, tasks, what = m.group(1), m.group(3), m.group(4)
        if what == "Completed":
            return NOISE
        fields: dict[str, Any] = {"device": tasks, "message": msg, "format": self.format}
        if what == "Out Of Memory":
            fields.update(kind="oom_event", code="srun")
        else:
            ex = _EXIT.match(what)
            fields.update(kind="srun_task_exit", code=ex.group(1) if ex else what)
        for h in _hosts(hosts):
            emit(host=h, **fields)
        return EVENT

    def _verdict(self, msg: str, emit: Emit) -> int | None:
        x = _EXTERN.match(msg)
        if x is not None:
            emit(kind="slurm_stepd_terminated", job_id=x.group(1), host=x.group(2),
                 code=x.group(4), message=msg, format=self.format)
            return EVENT
        m = _VERDICT.match(msg)
        if m is None:
            return None
        entity = m.group(2)
        fields: dict[str, Any] = {"job_id": entity.split(".")[0], "message": msg,
                                  "format": self.format}
        host = m.group(3) or m.group(9)
        if host:
            fields["host"] = host
        stamp = m.group(4) or m.group(8) or m.group(10)
        if m.group(6):
            fields.update(kind="slurm_job_failed", code="FAILED")
        elif m.group(7):
            fields.update(kind="slurm_job_failed", code=m.group(7))
        elif m.group(11):
            fields.update(kind="slurm_stepd_terminated", code=m.group(11))
        else:
            fields.update(kind="slurm_job_cancelled", code=m.group(5) or "CANCELLED")
        if stamp:
            with contextlib.suppress(TimeError, ValueError, OverflowError):
                fields["ts"], fields["ts_flag"] = parse_iso(stamp, self.tz)
        emit(**fields)
        return EVENT
