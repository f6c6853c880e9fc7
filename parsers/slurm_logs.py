"""Slurm daemon logs: slurmctld (the controller) and slurmd/slurmstepd (one per node).

Both print ``[ISO stamp] message`` (see ``parsers.slurm_common`` for the envelopes). Message
wordings were checked against Slurm's source (src/slurmctld/job_mgr.c, job_scheduler.c,
node_mgr.c, ping_nodes.c, preempt.c, src/plugins/sched/backfill, src/slurmd/slurmstepd/req.c,
mgr.c, task/cgroup) and against a real Slurm 22.05.8 (sample_logs/real_formats/slurm/).

Decisions where reality is ambiguous:

* ``job_start``: ``code`` holds the NodeList expression (``n[1-2]``) and ``host`` stays null:
  a job start is about several nodes; expand ``code`` with parsers.hostlist when needed.
* Array tasks keep Slurm's ``JobId=3_1(3)`` user-facing id ``3_1`` (what sacct's JobID shows);
  the raw id in parentheses is dropped. slurmd/slurmstepd only know raw ids (``[3.0]``).
* ``_job_complete`` prints a status line and then ``done`` for the same job; both become
  ``job_end`` rows (code ``WEXITSTATUS 3`` / ``WTERMSIG 11`` / ``OOM failure`` /
  ``cancelled by interactive user`` / ``done``), ``value`` = the number when there is one.
* ``update_node: node X reason set to: R`` is remembered and becomes the ``code`` of the
  following ``state set to DOWN`` row of that node (the line itself counts as EVENT).
* slurmd ``step_start`` / ``step_end`` carry the step name (``batch``, ``extern``, ``0``) in
  ``code``; slurmd never prints the exit status on those lines. ``get_exit_code task N died by
  signal: S`` becomes ``task_exit`` (code ``signal S``, value S).
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any, ClassVar

from parsers import hostlist
from parsers.base import EVENT, NOISE, UNPARSED, FileContext, LineParser, Parser
from parsers.slurm_common import (
    JOBID,
    Envelope,
    looks_like_slurm_log,
    parse_envelope,
    split_step_prefix,
    strip_level,
)
from parsers.timeutil import YearInference

# ---------------------------------------------------------------- slurmctld messages
_ALLOCATE = re.compile(r"^sched: Allocate " + JOBID + r" NodeList=(\S+)")
_BACKFILL = re.compile(r"^(?:sched/)?backfill: (?:_start_job: )?Started " + JOBID
                       + r" in \S+ on (\S+)")
_COMPLETE = re.compile(r"^_?job_complete: " + JOBID + r" (.+)$")
_REQUEUE_NODE = re.compile(r"^requeue job " + JOBID + r" due to failure of node (\S+)")
_REQUEUING = re.compile(r"^Requeuing " + JOBID)
_TIMELIMIT = re.compile(r"^(Time limit exhausted|Inactivity time limit reached) for " + JOBID)
_KILL_RPC = re.compile(r"^_slurm_rpc_kill_job: REQUEST_KILL_JOB " + JOBID + r" uid (\d+)")
_PREEMPT = re.compile(r"^(?:\w+: )?preempted " + JOBID
                      + r" (?:has been (killed|requeued) to reclaim|had to be (killed))")
_NOT_RESPONDING = re.compile(r"^Nodes (\S+) not responding(, setting DOWN)?")
_FAIL_KILL = re.compile(r"^Killing " + JOBID + r" on failed node (\S+)")
_UPD_REASON = re.compile(r"^update_node: node (\S+) reason set to: (.*)$")
_UPD_STATE = re.compile(r"^update_node: node (\S+) state set to (\S+)")
_NOW_RESPONDING = re.compile(r"^Node (\S+) now responding")
_RETURNED = re.compile(r"^node (\S+) returned to service")
_NUM = re.compile(r"(\d+)$")
_EMBEDDED = re.compile(r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

_CTLD_WORDS = ("sched: Allocate", "_job_complete", "_slurm_rpc_", "slurmctld version",
               "Running as primary controller", "sched/backfill", "update_node:")
_SLURMD_WORDS = ("slurmd version", "Launching batch job", "launch task StepId", "done with job",
                 "slurmstepd", "oom-kill event", "get_exit_code")
_STEP_PREFIX = re.compile(r"\] \[\d+(?:_\d+)?\.\w+\] ")


def _score(head: str, path: str, own: str, own_words: tuple[str, ...],
           other_words: tuple[str, ...]) -> int:
    """Sniff score shared by both parsers: envelope, file name, content words."""
    if not looks_like_slurm_log(head):
        return 0
    name = PurePath(path).name.lower()
    score = 20
    if name.startswith(own) and not (own == "slurmd" and name.startswith("slurmdbd")):
        score += 50
    own_hits = sum(1 for w in own_words if w in head)
    other_hits = sum(1 for w in other_words if w in head)
    score += 15 * own_hits - 15 * other_hits
    return max(0, min(95, score))


class _SlurmLogParser(LineParser):
    """Common per-line flow: envelope, then ``_message`` (implemented by subclasses)."""

    #: a syslog line's host field names the node (slurmd), not the controller (slurmctld)
    syslog_host_is_node: ClassVar[bool] = False

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.years = YearInference(ctx.mtime, ctx.year)

    def parse_line(self, text: str, line_no: int) -> int:
        if not text.strip():
            return NOISE
        env = parse_envelope(text, self.ctx.tz, self.years)
        if env is None:
            return UNPARSED
        i = env.message.find("[", 1)
        if i > 0 and _EMBEDDED.match(env.message, i):
            # two daemon threads wrote into one line (seen in real slurmd logs):
            # ``[ts] [5.0] get_e[ts] [3.0] get_exit_code task 0 died by signal: 9``
            tail = self.parse_line(env.message[i:], line_no)
            env.message = env.message[:i]
            head = self._safe_message(env, line_no)
            return EVENT if EVENT in (head, tail) else NOISE
        return self._safe_message(env, line_no)

    def _safe_message(self, env: Envelope, line_no: int) -> int:
        try:
            return self._message(env, line_no)
        except (ValueError, hostlist.HostlistError):
            return UNPARSED

    def _message(self, env: Envelope, line_no: int) -> int:
        raise NotImplementedError

    def _emit(self, env: Envelope, line_no: int, kind: str, host: str | None = None,
              **fields: Any) -> None:
        if host is None and self.syslog_host_is_node:
            host = env.host
        self.events.add(ts=env.ts, ts_flag=env.ts_flag, kind=kind, message=env.message,
                        line_no=line_no, **self._host(host), **fields)

    def _host(self, host: str | None) -> dict[str, Any]:
        return self.host_fields(host)


class SlurmctldParser(_SlurmLogParser):
    """slurmctld log: job starts/ends/requeues/cancels/time limits/preemption, node state."""

    name: ClassVar[str] = "slurmctld"
    description: ClassVar[str] = "Slurm controller log (slurmctld.log or its syslog lines)"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.reasons: dict[str, str] = {}

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        return _score(head, path, "slurmctld", _CTLD_WORDS, _SLURMD_WORDS)

    def _host(self, host: str | None) -> dict[str, Any]:
        # slurmctld lines are about nodes, never about the controller's own host
        return {"host": host, "host_from": "line"} if host else {"host": None,
                                                                 "host_from": "unknown"}

    def _message(self, env: Envelope, line_no: int) -> int:
        msg = strip_level(env.message)
        c = msg[:1]
        if c == "s" and msg.startswith("sched"):
            m = _ALLOCATE.match(msg) or _BACKFILL.match(msg)
            if m:
                self._emit(env, line_no, "job_start", job_id=m.group(1), code=m.group(3))
                return EVENT
        elif c == "b" and msg.startswith("backfill"):
            m = _BACKFILL.match(msg)
            if m:
                self._emit(env, line_no, "job_start", job_id=m.group(1), code=m.group(3))
                return EVENT
        elif "job_complete: " in msg:
            m = _COMPLETE.match(msg)
            if m:
                code = m.group(3).strip()
                n = _NUM.search(code)
                self._emit(env, line_no, "job_end", job_id=m.group(1), code=code,
                           value=float(n.group(1)) if n else None)
                return EVENT
        elif c == "r" and msg.startswith("requeue job "):
            m = _REQUEUE_NODE.match(msg)
            if m:
                self._emit(env, line_no, "job_requeue", host=m.group(3), job_id=m.group(1),
                           code="node failure")
                return EVENT
        elif c == "R" and msg.startswith("Requeuing "):
            m = _REQUEUING.match(msg)
            if m:
                self._emit(env, line_no, "job_requeue", job_id=m.group(1))
                return EVENT
        elif "ime limit " in msg:
            m = _TIMELIMIT.match(msg)
            if m:
                code = "inactivity" if m.group(1).startswith("Inactivity") else None
                self._emit(env, line_no, "job_time_limit", job_id=m.group(2), code=code)
                return EVENT
        elif msg.startswith("_slurm_rpc_kill_job: REQUEST_KILL_JOB"):
            m = _KILL_RPC.match(msg)
            if m:
                self._emit(env, line_no, "job_cancel", job_id=m.group(1), code=m.group(3))
                return EVENT
        elif "preempted " in msg:
            m = _PREEMPT.match(msg)
            if m:
                self._emit(env, line_no, "job_preempt", job_id=m.group(1),
                           code=m.group(3) or m.group(4))
                return EVENT
        elif c == "N" and msg.startswith("Nodes "):
            m = _NOT_RESPONDING.match(msg)
            if m:
                code = "setting DOWN" if m.group(2) else None
                for h in hostlist.expand(m.group(1)):
                    self._emit(env, line_no, "node_not_responding", host=h, code=code)
                return EVENT
        elif c == "K" and msg.startswith("Killing "):
            m = _FAIL_KILL.match(msg)
            if m:
                self._emit(env, line_no, "node_fail_kill", host=m.group(3), job_id=m.group(1))
                return EVENT
        elif msg.startswith("update_node: "):
            return self._update_node(env, msg, line_no)
        elif c == "N" or c == "n":
            m = _NOW_RESPONDING.match(msg) or _RETURNED.match(msg)
            if m:
                code = "now responding" if c == "N" else "returned to service"
                self._emit(env, line_no, "node_resume", host=m.group(1), code=code)
                return EVENT
        return NOISE

    def _update_node(self, env: Envelope, msg: str, line_no: int) -> int:
        m = _UPD_REASON.match(msg)
        if m:
            for h in hostlist.expand(m.group(1)):
                self.reasons[h] = m.group(2)
            return EVENT
        m = _UPD_STATE.match(msg)
        if not m:
            return NOISE
        state = m.group(2).upper()
        if state.startswith("DOWN"):
            kind = "node_down"
        elif state.startswith("DRAIN"):
            kind = "node_drain"
        elif state in ("IDLE", "RESUME"):
            kind = "node_resume"
        else:
            return NOISE
        for h in hostlist.expand(m.group(1)):
            reason = self.reasons.pop(h, None)
            code = reason if kind != "node_resume" else "state set to " + state
            self._emit(env, line_no, kind, host=h, code=code)
        return EVENT


# ---------------------------------------------------------------- slurmd messages
_OOM = re.compile(r"^Detected (\d+) oom-kill event\(s\) in (?:StepId=|step )?"
                  r"(\d+(?:_\d+)?(?:\+\d+)?)\.(\w+)")
_LAUNCH_TASK = re.compile(r"^launch task (?:StepId=)?(\d+(?:\+\d+)?)\.(\w+) request")
_LAUNCH_BATCH = re.compile(r"^Launching batch job (\d+)")
_TASK_EXIT = re.compile(r"^get_exit_code task (\d+) died by signal: (\d+)")
_BANNER = re.compile(
    r"^\*\*\* (JOB|STEP) (\d+(?:_\d+)?(?:\+\d+)?)(?:\.(\w+))?(?: ON (\S+))? "
    r"(?:CANCELLED AT \S+(?: DUE TO ([A-Z ]+?))?(?:, SEE SLURMCTLD LOG FOR DETAILS)?"
    r"|(FAILED) \(non-zero exit code or other failure mode\)"
    r"|(UNCORRECTABLE MEMORY ERROR) AT \S+) \*\*\*"
)
_NAME_HOST = re.compile(r"^slurmd[-_.](.+?)(?:\.log)?$")
_GENERIC_DIRS = {"log", "logs", "slurm", "var", "tmp", "slurmd", "output", "jobs"}


def slurmd_host(ctx: FileContext) -> str | None:
    """Host of a per-node slurmd log: ``slurmd-n1.log`` / ``slurmd.node017.log`` (the
    ``SlurmdLogFile=.../slurmd-%n.log`` convention), else the path's host hint, else the
    directory of a plain ``<host>/slurmd.log``."""
    p = PurePath(ctx.path)
    m = _NAME_HOST.match(p.name)
    if m and m.group(1).lower() != "log":
        return m.group(1)
    if ctx.host_hint:
        return ctx.host_hint
    parent = p.parent.name
    if p.name.startswith("slurmd") and parent and parent.lower() not in _GENERIC_DIRS:
        return parent
    return None


class SlurmdParser(_SlurmLogParser):
    """slurmd / slurmstepd log of one node: step launches and ends, cgroup OOM kills,
    the ``*** JOB n ON node CANCELLED AT ... DUE TO ... ***`` banners."""

    name: ClassVar[str] = "slurmd"
    syslog_host_is_node: ClassVar[bool] = True
    description: ClassVar[str] = "Slurm node daemon log (slurmd-<node>.log, slurmstepd lines)"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.node = slurmd_host(ctx)

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        score = _score(head, path, "slurmd", _SLURMD_WORDS, _CTLD_WORDS)
        if score and _STEP_PREFIX.search(head):
            score = min(95, score + 15)
        return score

    def _host(self, host: str | None) -> dict[str, Any]:
        if host:
            return {"host": host, "host_from": "line"}
        if self.node:
            return {"host": self.node, "host_from": "path"}
        return {"host": None, "host_from": "unknown"}

    def _message(self, env: Envelope, line_no: int) -> int:
        job, step, rest = split_step_prefix(env.message)
        msg = strip_level(rest)
        c = msg[:1]
        if c == "D" and msg.startswith("Detected "):
            m = _OOM.match(msg)
            if m:
                self._emit(env, line_no, "oom_event", job_id=m.group(2), code=m.group(3),
                           value=float(m.group(1)))
                return EVENT
        elif c == "l" and msg.startswith("launch task "):
            m = _LAUNCH_TASK.match(msg)
            if m:
                self._emit(env, line_no, "step_start", job_id=m.group(1), code=m.group(2))
                return EVENT
        elif c == "L" and msg.startswith("Launching batch job "):
            m = _LAUNCH_BATCH.match(msg)
            if m:
                self._emit(env, line_no, "step_start", job_id=m.group(1), code="batch")
                return EVENT
        elif msg == "done with job" and job is not None:
            self._emit(env, line_no, "step_end", job_id=job, code=step)
            return EVENT
        elif c == "g" and msg.startswith("get_exit_code task "):
            m = _TASK_EXIT.match(msg)
            if m and job is not None:
                self._emit(env, line_no, "task_exit", job_id=job, code="signal " + m.group(2),
                           value=float(m.group(2)))
                return EVENT
        elif c == "*" and msg.startswith("*** "):
            m = _BANNER.match(msg)
            if m:
                code = m.group(5) or m.group(6) or m.group(7) or "CANCELLED"
                self._emit(env, line_no, "job_cancelled_msg", host=m.group(4),
                           job_id=m.group(2), code=code)
                return EVENT
        return NOISE


PARSERS: list[type[Parser]] = [SlurmctldParser, SlurmdParser]
