"""slurmctld log lines and the ``sacct --parsable2`` listing.

slurmctld messages, as printed by SchedMD/slurm src/slurmctld (``%pJ`` prints ``JobId=<id>``;
the log prefix is ``[%Y-%m-%dT%H:%M:%S.%3N]``):

* job_scheduler.c: ``sched: Allocate %pJ NodeList=%s #CPUs=%u Partition=%s``
* job_mgr.c ``_job_complete``: ``%s: %pJ WEXITSTATUS %d`` and ``%s: %pJ done``
* ping_nodes.c: ``error: Nodes %s not responding``
* node_mgr.c ``_kill_running_jobs``/``kill_running_job_by_node_name``: ``requeue %pJ due to
  failure of node %s`` (batch job with --requeue) or ``Killing %pJ on failed node %s``
* job_mgr.c ``job_time_limit``: ``Time limit exhausted for %pJ``
* proc_req.c ``_slurm_rpc_kill_job``: ``%s: REQUEST_KILL_JOB JobId=%s uid %u``

sacct: ``sacct --parsable2 --duplicates --allocations -o JobID,JobIDRaw,JobName,Partition,State,
ExitCode,Submit,Start,End,Elapsed,NNodes,NodeList,AllocTRES``; times are local (UTC here)
without zone; a user cancel shows ``CANCELLED by <uid>``.
"""

from __future__ import annotations

from typing import TextIO

from pipeline.simulate.params import Settings
from pipeline.simulate.records import Attempt
from pipeline.simulate.timefmt import Clock, compress, elapsed

SACCT_HEADER = ("JobID|JobIDRaw|JobName|Partition|State|ExitCode|Submit|Start|End|Elapsed|"
                "NNodes|NodeList|AllocTRES")


class Slurmctld:
    def __init__(self, out: TextIO, clock: Clock, s: Settings) -> None:
        self.out, self.clock, self.s = out, clock, s

    def _w(self, t: float, msg: str) -> None:
        self.out.write(f"[{self.clock.slurmctld(t)}] {msg}\n")

    def start(self, a: Attempt) -> None:
        cpus = len(a.nodes) * self.s.cpus_per_node
        self._w(a.start, f"sched: Allocate JobId={a.job_id} NodeList={compress(a.nodes)} "
                         f"#CPUs={cpus} Partition={self.s.partition}")

    def end(self, a: Attempt) -> None:
        f = a.fault
        j = f"JobId={a.job_id}"
        if f is None or a.state in ("FAILED", "COMPLETED"):
            code = int(a.exit_code.split(":")[0])
            self._w(a.end, f"_job_complete: {j} WEXITSTATUS {code}")
            self._w(a.end, f"_job_complete: {j} done")
        elif a.state == "NODE_FAIL":
            assert f.node is not None
            self._w(f.time + 0.5 * f.detect_s, f"error: Nodes {f.node} not responding")
            if f.requeue:
                self._w(a.end, f"requeue {j} due to failure of node {f.node}")
            else:
                self._w(a.end, f"Killing {j} on failed node {f.node}")
        elif a.state == "TIMEOUT":
            self._w(f.time, f"Time limit exhausted for {j}")
        elif a.state == "CANCELLED":
            self._w(f.time, f"_slurm_rpc_kill_job: REQUEST_KILL_JOB {j} uid {self.s.user_uid}")
        elif a.state in ("REQUEUED", "PREEMPTED") and f.node is not None:
            # a host-maintenance drain of the job's node, as `scontrol update nodename=X
            # state=drain reason=...` logs it (slurmctld node_mgr.c update_node(): "update_node:
            # node %s reason set to: %s" then "update_node: node %s state set to %s", DRAINING
            # while a job still runs there -- seen verbatim in a real 22.05 slurmctld.log)
            self._w(f.time, f"update_node: node {f.node} reason set to: host maintenance")
            self._w(f.time, f"update_node: node {f.node} state set to DRAINING")


def sacct_row(a: Attempt, clock: Clock, s: Settings, gpus_per_node: int) -> str:
    n = len(a.nodes)
    state = a.state
    if state == "CANCELLED":
        state = f"CANCELLED by {s.user_uid}"
    cpus = n * s.cpus_per_node
    tres = (f"billing={cpus},cpu={cpus},gres/gpu={n * gpus_per_node},"
            f"mem={n * s.mem_per_node_g}G,node={n}")
    return "|".join([a.job_id, a.job_id, s.job_name, s.partition, state, a.exit_code,
                     clock.slurm(a.submit), clock.slurm(a.start), clock.slurm(a.end),
                     elapsed(_whole(clock, a.end) - _whole(clock, a.start)), str(n),
                     compress(a.nodes), tres])


def _whole(clock: Clock, t: float) -> float:
    return clock.dt(t).replace(microsecond=0).timestamp()
