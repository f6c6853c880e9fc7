"""Slurm daemon messages (slurmctld, slurmd/slurmstepd) as message-layer recognisers.

The wording of each message was checked against Slurm's source (src/slurmctld/job_mgr.c,
job_scheduler.c, node_mgr.c, ping_nodes.c, preempt.c, src/plugins/sched/backfill,
src/slurmd/slurmstepd/req.c, mgr.c, task/cgroup) and a real Slurm 22.05.8 (see
``parsers.slurm_logs`` for the envelopes and the decisions). The same recognisers read a
slurmctld.log, a node's syslog with ``slurmctld[pid]:`` lines, and a pasted snippet.

Rows about no particular node (a job start, a job end) carry ``host=""``: the dialect must not
put its own default host on them (the controller's host is not where a job ran).
"""

from __future__ import annotations

import re
from typing import ClassVar

from parsers import hostlist
from parsers.base import EVENT, NOISE, Emit, never_open
from parsers.slurm_common import JOBID, split_step_prefix, strip_level

_ALLOCATE = re.compile(r"^sched: Allocate " + JOBID + r" NodeList=(\S+)")
_BACKFILL = re.compile(r"^(?:sched/)?backfill: (?:_start_job: )?Started " + JOBID
                       + r" in \S+ on (\S+)")
#: Slurm before 17.11 put the job's state bits and node count before the outcome:
#: ``_job_complete: JobID=12 State=0x1 NodeCnt=1 WEXITSTATUS 1`` (read as the newer form)
_COMPLETE = re.compile(r"^_?job_complete: " + JOBID
                       + r" (?:State=0x[0-9a-fA-F]+ NodeCnt=\d+ )?(.+)$")
_REQUEUE_NODE = re.compile(r"^requeue job " + JOBID + r" due to failure of node (\S+)")
_REQUEUING = re.compile(r"^Requeuing " + JOBID)
_TIMELIMIT = re.compile(r"^(Time limit exhausted|Inactivity time limit reached) for " + JOBID)
_KILL_RPC = re.compile(r"^_slurm_rpc_kill_job: REQUEST_KILL_JOB " + JOBID + r" uid (\d+)")
_PREEMPT = re.compile(r"^(?:\w+: )?preempted " + JOBID
                      + r" (?:has been (killed|requeued)|had to be (killed))")
_NOT_RESPONDING = re.compile(r"^Nodes (\S+) not responding(, setting DOWN)?")
_FAIL_KILL = re.compile(r"^Killing " + JOBID + r"(?: StepId=\d+)? on failed node (\S+)")
_REQUEUE_NODE2 = re.compile(r"^requeue " + JOBID + r" due to failure of node (\S+)")
_COMPLETE_REQUEUE = re.compile(r"^_?job_complete: requeue " + JOBID + r" (due to node failure|"
                               r"per user/system request)")
#: node_mgr.c / node_scheduler.c automatic drains and registration failures
_DRAIN_NODES = re.compile(r"^drain_nodes: node (\S+) state set to (\S+)")
_SETTING_STATE = re.compile(
    r"^Setting node (\S+) state to (DRAIN|INVAL|DOWN)\w* with reason:\s*(.*)$")
_SETTING_PLAIN = re.compile(r"^Setting node (\S+) state to (DRAIN|INVAL|DOWN)\s*$")
_REGISTRATION = re.compile(r"^_slurm_rpc_node_registration node=(\S+): (.*)$")
_LOW_MEM = re.compile(r"^Node (\S+) has low (real_memory size|tmp_disk size|"
                      r"socket\*core\*thread count|CPU count)")
#: node_mgr.c validate_node_specs (20.02+); before it ``Prolog failure on node %s, state to
#: DOWN`` (up to 2.x) / ``..., draining the node`` (14.x-19.05)
_PROLOG = re.compile(r"^(?:validate_node_specs: Prolog or job env setup|Prolog) failure on node "
                     r"([^\s,]+)")
_REBOOTED = re.compile(r"^validate_node_specs: Node (\S+) unexpectedly rebooted")
_SLURMD_ERR = re.compile(r"^slurmd error running " + JOBID + r" on [Nn]ode\(s\)=(\S+): (.*)$")
_SUBMIT_ERR = re.compile(r"^_slurm_rpc_(?:submit_batch_job|allocate_resources|job_will_run): "
                         r"(?!JobId=|StepId=)(.*\S)\s*$")
_JOB_SUBMIT = re.compile(r"^job_submit/\w+: (.*)$")
_UPD_REASON = re.compile(r"^update_node: node (\S+) reason set to: (.*)$")
_UPD_STATE = re.compile(r"^update_node: node (\S+) state set to (\S+)")
_NOW_RESPONDING = re.compile(r"^Node (\S+) now responding")
_RETURNED = re.compile(r"^node (\S+) returned to service")
_NUM = re.compile(r"(\d+)$")
_PROG = re.compile(r"^(?:slurmctld|slurmd|slurmstepd): ")



class CtldMessages:
    """slurmctld: job starts/ends/requeues/cancels/time limits/preemption, node state."""

    SIGNAL: ClassVar[tuple[str, ...]] = (
        "sched", "backfill", "job_complete: ", "requeue job ", "requeue JobId=", "Requeuing ",
        "ime limit ", "REQUEST_KILL_JOB", "preempted ", "not responding", "Killing ",
        "update_node: ",
        "now responding", "returned to service", "drain_nodes: ", "Setting node ",
        "_slurm_rpc_node_registration", "has low ", "validate_node_specs: ",
        "slurmd error running ", "_slurm_rpc_submit_batch_job: ", "job_submit/",
        "Prolog failure on node ",
        "_slurm_rpc_allocate_resources: ", "_slurm_rpc_job_will_run: ")
    SIGNAL_RE: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}

    def match(self, text: str, line_no: int, sink: Emit) -> int | None:
        """EVENT/NOISE for a slurmctld message (level prefix kept), else None."""

        def emit(**fields: object) -> None:  # rows name their node, or none at all
            sink(**{"host": "", **fields})

        msg = strip_level(_PROG.sub("", text, count=1))
        r = self._node_trouble(msg, emit)
        if r is not None:
            return r
        c = msg[:1]
        if c == "s" and msg.startswith("sched"):
            m = _ALLOCATE.match(msg) or _BACKFILL.match(msg)
            if m:
                emit(kind="job_start", job_id=m.group(1), code=m.group(3))
                return EVENT
        elif c == "b" and msg.startswith("backfill"):
            m = _BACKFILL.match(msg)
            if m:
                emit(kind="job_start", job_id=m.group(1), code=m.group(3))
                return EVENT
        elif "job_complete: requeue " in msg:
            m = _COMPLETE_REQUEUE.match(msg)
            if m:
                node = m.group(3).startswith("due to node")
                emit(kind="job_requeue", job_id=m.group(1),
                     code="node failure" if node else "per user/system request")
                return EVENT
        elif "job_complete: " in msg:
            m = _COMPLETE.match(msg)
            if m:
                code = m.group(3).strip()
                n = _NUM.search(code)
                emit(kind="job_end", job_id=m.group(1), code=code,
                           value=float(n.group(1)) if n else None)
                return EVENT
        elif c == "r" and msg.startswith("requeue "):
            m = _REQUEUE_NODE.match(msg) or _REQUEUE_NODE2.match(msg)
            if m:
                emit(kind="job_requeue", host=m.group(3), job_id=m.group(1),
                           code="node failure")
                return EVENT
        elif c == "R" and msg.startswith("Requeuing "):
            m = _REQUEUING.match(msg)
            if m:
                emit(kind="job_requeue", job_id=m.group(1))
                return EVENT
        elif "ime limit " in msg:
            m = _TIMELIMIT.match(msg)
            if m:
                code = "inactivity" if m.group(1).startswith("Inactivity") else None
                emit(kind="job_time_limit", job_id=m.group(2), code=code)
                return EVENT
        elif msg.startswith("_slurm_rpc_kill_job: REQUEST_KILL_JOB"):
            m = _KILL_RPC.match(msg)
            if m:
                emit(kind="job_cancel", job_id=m.group(1), code=m.group(3))
                return EVENT
        elif "preempted " in msg:
            m = _PREEMPT.match(msg)
            if m:
                emit(kind="job_preempt", job_id=m.group(1),
                           code=m.group(3) or m.group(4))
                return EVENT
        elif c == "N" and msg.startswith("Nodes "):
            m = _NOT_RESPONDING.match(msg)
            if m:
                code = "setting DOWN" if m.group(2) else None
                for h in hostlist.expand(m.group(1)):
                    emit(kind="node_not_responding", host=h, code=code)
                return EVENT
        elif c == "K" and msg.startswith("Killing "):
            m = _FAIL_KILL.match(msg)
            if m:
                emit(kind="node_fail_kill", host=m.group(3), job_id=m.group(1))
                return EVENT
        elif msg.startswith("update_node: "):
            return self._update_node(msg, emit)
        elif c == "N" or c == "n":
            m = _NOW_RESPONDING.match(msg) or _RETURNED.match(msg)
            if m:
                code = "now responding" if c == "N" else "returned to service"
                emit(kind="node_resume", host=m.group(1), code=code)
                return EVENT
        return None

    def _node_trouble(self, msg: str, emit: Emit) -> int | None:
        """Automatic drains, registration and launch failures, rejected submissions."""
        for rx, kind, code in ((_DRAIN_NODES, "node_drain", None), (_PROLOG, "node_drain",
                               "Prolog or job env setup failure"),
                               (_REBOOTED, "node_down", "unexpectedly rebooted")):
            m = rx.match(msg)
            if m:
                for h in hostlist.expand(m.group(1)):
                    emit(kind=kind, host=h, code=code or self.reasons.get(h))
                return EVENT
        m = _SETTING_STATE.match(msg) or _SETTING_PLAIN.match(msg)
        if m:
            reason = m.group(3) if m.re is _SETTING_STATE else None
            for h in hostlist.expand(m.group(1)):
                emit(kind="node_drain", host=h, code=reason or self.reasons.get(h))
            return EVENT
        m = _REGISTRATION.match(msg) or _LOW_MEM.match(msg)
        if m:
            emit(kind="node_drain", host=m.group(1), code=f"registration: {m.group(2)}")
            return EVENT
        m = _SLURMD_ERR.match(msg)
        if m:
            what = m.group(4)
            kind = "exec_failed" if "execve" in what else "node_drain"
            for h in hostlist.expand(m.group(3)):
                emit(kind=kind, host=h, job_id=m.group(1), code=what)
            return EVENT
        m = _SUBMIT_ERR.match(msg) or _JOB_SUBMIT.match(msg)
        if m:
            emit(kind="job_rejected", code=m.group(1)[:120])
            return EVENT
        return None

    def _update_node(self, msg: str, emit: Emit) -> int:
        m = _UPD_REASON.match(msg)
        if m:
            for h in hostlist.expand(m.group(1)):
                self.reasons[h] = m.group(2)
                emit(kind="node_drain", host=h, code=m.group(2))
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
            emit(kind=kind, host=h, code=code)
        return EVENT

    def finish(self, emit: Emit) -> None:
        """No multi-line state."""

    is_open = never_open


_OOM = re.compile(r"^Detected (\d+) oom[-_]kill events?(?:\(s\))? in (?:StepId=|step )?"
                  r"(\d+(?:_\d+)?(?:\+\d+)?)\.(\w+)")
_LAUNCH_TASK = re.compile(r"^launch task (?:StepId=)?(\d+(?:\+\d+)?)\.(\w+) request")
_LAUNCH_BATCH = re.compile(r"^Launching batch job (\d+)")
_TASK_EXIT = re.compile(r"^get_exit_code task (\d+) died by signal: (\d+)")
_BANNER = re.compile(
    r"^\*\*\* (JOB|STEP) (\d+(?:_\d+)?(?:\+\d+)?)(?:\.(\w+))?(?: ON (\S+))? "
    r"(?:CANCELLED AT \S+(?: DUE (?:TO|to) ([A-Za-z ]+?))?(?:, SEE SLURMCTLD LOG FOR DETAILS)?"
    r"(?: on \S+)?"
    r"|(FAILED) \(non-zero exit code or other failure mode\)"
    r"|(UNCORRECTABLE MEMORY ERROR) AT \S+) \*\*\*"
)
#: slurmstepd step_terminate_monitor: ``*** STEP 1.0 STEPD TERMINATED ON n1 AT t DUE TO JOB NOT
#: ENDING WITH SIGNALS ***`` / ``... DUE TO JOB NOT RUNNING ***``, ``*** EXTERN STEP FOR 12 ...``
_STEPD_TERM = re.compile(r"\*\*\* (?:EXTERN STEP FOR|JOB|STEP) (\d+)\S* STEPD TERMINATED ON "
                         r"(\S+) AT \S+ DUE TO ([A-Z ]+?) \*\*\*")
#: jobacct_gather and task/cgroup memory enforcement (all wordings 17.x .. 24.x)
_MEM_LIMIT = re.compile(r"(?:(?:Step|StepId=)\s?(\d+)\S* exceeded memory limit|Exceeded "
                        r"(?:step|job) memory limit|(?:Step |StepId=)(\d+)\S* hit memory limit)")
_EXECVE = re.compile(r"execve\(\): (?:bad interpreter\()?([^:)]+)\)?: (.*)$")
_REGISTER = re.compile(r"Unable to register: (.*)$")


def _stepd_trouble(msg: str, job: str | None, emit: Emit) -> int | None:
    """Memory limits, execve failures, stuck steps, registration failures."""
    t = _STEPD_TERM.search(msg) if "STEPD TERMINATED" in msg else None
    if t is not None:
        emit(kind="slurm_stepd_terminated", job_id=t.group(1), host=t.group(2),
             code=t.group(3))
        return EVENT
    if "emory limit" in msg:
        m = _MEM_LIMIT.search(msg)
        if m is not None:
            hit = "hit memory limit" in msg  # touched the limit; "being killed" is the kill
            emit(kind="oom_event", code="memory_limit_hit" if hit else "memory_limit",
                 job_id=m.group(1) or m.group(2) or job)
            return EVENT
    if "execve(): " in msg:
        e = _EXECVE.search(msg)
        if e is not None:
            emit(kind="exec_failed", code=e.group(2)[:80], device=e.group(1), job_id=job)
            return EVENT
    if "Unable to register" in msg:
        g = _REGISTER.search(msg)
        if g is not None:
            emit(kind="node_not_responding", code="register: " + g.group(1)[:80])
            return EVENT
    return None


class SlurmdMessages:
    """slurmd / slurmstepd: step launches and ends, cgroup OOM kills, signals, banners."""

    SIGNAL: ClassVar[tuple[str, ...]] = (
        "oom-kill event", "oom_kill event", "emory limit", "execve(): ", "Unable to register",
        "STEPD TERMINATED", "launch task ", "Launching batch job ", "done with job",
        "get_exit_code task ", "*** JOB ", "*** STEP ")  # (``_BANNER``'s two openings)
    SIGNAL_RE: ClassVar[tuple[str, ...]] = ()

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        """EVENT for a slurmd/slurmstepd message (``[job.step]`` prefix kept), else None."""
        job, step, rest = split_step_prefix(text)
        msg = strip_level(_PROG.sub("", rest, count=1))
        r = self._trouble(msg, job, emit)
        if r is not None:
            return r
        c = msg[:1]
        if c == "D" and msg.startswith("Detected "):
            m = _OOM.match(msg)
            if m:
                emit(kind="oom_event", job_id=m.group(2), code=m.group(3),
                           value=float(m.group(1)))
                return EVENT
        elif c == "l" and msg.startswith("launch task "):
            m = _LAUNCH_TASK.match(msg)
            if m:
                emit(kind="step_start", job_id=m.group(1), code=m.group(2))
                return EVENT
        elif c == "L" and msg.startswith("Launching batch job "):
            m = _LAUNCH_BATCH.match(msg)
            if m:
                emit(kind="step_start", job_id=m.group(1), code="batch")
                return EVENT
        elif msg == "done with job" and job is not None:
            emit(kind="step_end", job_id=job, code=step)
            return EVENT
        elif c == "g" and msg.startswith("get_exit_code task "):
            m = _TASK_EXIT.match(msg)
            if m and job is not None:
                emit(kind="task_exit", job_id=job, code="signal " + m.group(2),
                           value=float(m.group(2)))
                return EVENT
        elif c == "*" and msg.startswith("*** "):
            m = _BANNER.match(msg)
            if m:
                # the banner slurmstepd also writes into the job's .err: same kind and code as
                # there (parsers.slurm_step), so the same line gives the same event
                code = m.group(5) or m.group(6) or m.group(7) or "CANCELLED"
                kind = "slurm_job_failed" if (m.group(6) or m.group(7)) else \
                    "slurm_job_cancelled"
                emit(kind=kind, host=m.group(4), job_id=m.group(2), code=code.upper())
                return EVENT
        return None

    def finish(self, emit: Emit) -> None:
        """No multi-line state."""

    is_open = never_open

    @staticmethod
    def _trouble(msg: str, job: str | None, emit: Emit) -> int | None:
        return _stepd_trouble(msg, job, emit)
