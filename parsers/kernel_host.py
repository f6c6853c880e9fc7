"""Host-side kernel signals: OOM killer, block / filesystem errors, hung tasks, panics.

Formats:

* OOM (mm/oom_kill.c): ``python invoked oom-killer: gfp_mask=..., order=0, oom_score_adj=0``;
  ``oom-kill:constraint=CONSTRAINT_MEMCG,...,task_memcg=/slurm/uid_1000/job_1234/step_0/task_0,
  task=python,pid=1234,uid=1000``; ``Out of memory: Killed process 1234 (python) total-vm:...``
  and ``Memory cgroup out of memory: Killed process ...`` (5.x+); 4.x prints ``Out of memory:
  Kill process 1234 (python) score 900 or sacrifice child`` then ``Killed process 1234 (python)
  total-vm:...``. The *Killed process* line is the event (code = process name, value = pid);
  the others are parts of it; the job id (Slurm ``job_<id>`` or Kubernetes ``pod<uid>``) is
  taken from the ``oom-kill:`` line's ``task_memcg`` when present.
* Block layer: ``blk_update_request: I/O error, dev sda, sector 123 op 0x0:(READ) ...`` (4.x-5.x),
  ``I/O error, dev nvme0n1, sector ...`` (6.x), ``print_req_error: I/O error, dev sdc, sector``
  (4.1x), ``Buffer I/O error on dev sda1, logical block 0, ...``.
* ``EXT4-fs error (device sda1): ...``; ``XFS (sdb1): Corruption detected. Unmount and run
  xfs_repair`` and the other XFS shutdown / metadata I/O error lines.
* ``LustreError: 11-0: ...: operation ost_write to node ... failed: rc = -107``;
  ``Lustre: <obd>: Connection to <tgt> (at <nid>) was lost; in progress operations using
  this service will wait for recovery to complete`` (ptlrpc import.c).
* ``nfs: server nfs01 not responding, still trying`` / ``timed out`` (net/sunrpc/clnt.c).
* ``nvme nvme0: I/O 258 (I/O Cmd) QID 4 timeout, aborting`` and ``controller is down``.
* ``Aborting journal on device nvme0n1p2-8.`` (jbd2), ``nvme nvme0: Removing after probe failure
  status: -19``, Lustre ``Request sent has timed out for slow reply`` (ptlrpc client.c).
* ``BUG: unable to handle page fault for address`` / ``general protection fault`` (oops ->
  ``kernel_panic`` code oops), ``Memory failure: 0x..: recovery action for ...``
  (mm/memory-failure.c: a poisoned page, ``edac`` UE).
* Every line of an OOM report (``invoked oom-killer``, ``oom-kill:constraint=...``, ``Killed
  process``) gets its row (kind ``oom_kill``), as every line of an NVIDIA report does.
* ``INFO: task %s:%d blocked for more than %ld seconds.`` (kernel/hung_task.c),
  ``watchdog: BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]``,
  ``Kernel panic - not syncing: %s`` (kernel/panic.c).
"""

from __future__ import annotations

import re

from parsers.base import EVENT, NOISE
from parsers.kernel_common import Emit

_KILLED = re.compile(r"Killed process (\d+) \((.*?)\)")
_MEMCG_JOB = re.compile(r"task_memcg=\S*?/job_(\d+(?:_\d+)?)(?:/|,)")
_MEMCG_POD = re.compile(r"task_memcg=\S*?pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_]"
                        r"[0-9a-f]{4}[-_][0-9a-f]{12})")
_MEMCG_PID = re.compile(r",pid=(\d+),")
_BLK = re.compile(r"error, dev ([^,\s]+), sector \d+")
_BUF = re.compile(r"Buffer I/O error on dev(?:ice)? ([^,\s]+),")
_EXT4 = re.compile(r"EXT4-fs (?:error|\(([^)]+)\): Remounting filesystem read-only)"
                   r"(?: \(device ([^)]+)\))?")
_XFS = re.compile(r"^XFS \(([^)]+)\): (.*)")
_XFS_BAD = ("Corruption", "I/O error", "I/O Error", "shut down", "Shutting down",
            "Please unmount the filesystem",
            "xfs_do_force_shutdown", "metadata I/O error")
_NFS = re.compile(r"^nfs: server (\S+) not responding")
_NVME = re.compile(r"^nvme (nvme\d+): (?:.*timeout, (?:aborting|reset controller)"
                   r"|Removing after probe failure"
                   r"|Device not ready; aborting (?:reset|initialisation)"
                   r"|controller is down)")
_LUSTRE = ("Request sent has timed out", "was lost; in progress operations")
#: broad anchors of these recognisers -> the patterns that every line holding only that anchor
#: must match for ``HostLines.match`` to give it a row (``KernelMessages.CHECKED``): a healthy
#: node's ``EXT4-fs (nvme0n1p2): mounted filesystem ...``, smartd's ``Device: /dev/nvme0, SMART
#: Health Status: OK`` and ``Lustre: ... Connection restored to ...`` stay out of Python
CHECKED = {"nvme": (_NVME.pattern,), "EXT4-fs": (_EXT4.pattern,),
           "Lustre:": ("Lustre:.*(?:" + "|".join(map(re.escape, _LUSTRE)) + ")",)}
_HUNG = re.compile(r"INFO: task (.+):(\d+) blocked for more than (\d+) seconds")
_SOFT = re.compile(r"soft lockup - CPU#\d+ stuck for \d+s! \[(.+):(\d+)\]")
_PANIC = re.compile(r"(?:^|---\[ end )Kernel panic - not syncing: ?(.*?)(?: \]---)?$")
#: oopses (arch/x86/mm/fault.c, kernel/panic.c) and memory_failure (mm/memory-failure.c)
_OOPS = ("BUG: unable to handle", "general protection fault", "BUG: kernel NULL pointer",
         "Oops: ", "#PF: ")
_MEMORY_FAILURE = re.compile(r"Memory failure: (0x[0-9a-f]+): (.*)")


class HostLines:
    """OOM, storage and hang/panic recognisers (keeps the pending OOM report)."""

    def __init__(self) -> None:
        self.oom_job: tuple[str, str] | None = None  #: (pid, job id) from oom-kill: line

    def match(self, body: str, emit: Emit) -> int | None:
        """Classify a kernel message; None when no host signal family claims it."""
        if "oom" in body or "Out of memory" in body or "Kill" in body:
            r = self._oom(body, emit)
            if r is not None:
                return r
        if "rror" in body or "XFS" in body or "Lustre" in body or body.startswith(("nfs", "nvme")) \
                or "capacity change" in body or body.startswith("Aborting journal"):
            r = self._io(body, emit)
            if r is not None:
                return r
        if "INFO: task" in body:
            h = _HUNG.search(body)
            if h:
                emit("hung_task", body, code=h.group(1), value=float(h.group(2)))
                return EVENT
        if "soft lockup" in body:
            s = _SOFT.search(body)
            if s:
                emit("hung_task", body, code="soft_lockup", value=float(s.group(2)))
                return EVENT
        if "Kernel panic" in body:
            p = _PANIC.search(body)
            if p:
                emit("kernel_panic", body, code=p.group(1)[:80] or None)
                return EVENT
            return NOISE
        if body.startswith(_OOPS):
            emit("kernel_panic", body, code="oops")
            return EVENT
        if body.startswith("Memory failure: "):
            mf = _MEMORY_FAILURE.match(body)
            if mf:
                emit("edac", body, code="UE", device=mf.group(1))
                return EVENT
        return None

    def _oom(self, body: str, emit: Emit) -> int | None:
        k = _KILLED.search(body)
        if k and ("ut of memory" in body or body.startswith("Killed process")):
            pid, name = k.group(1), k.group(2)
            job = self.oom_job[1] if self.oom_job and self.oom_job[0] == pid else None
            self.oom_job = None
            emit("oom_kill", body, code=name, value=float(pid), job_id=job)
            return EVENT
        if body.startswith("oom-kill:"):
            pid_m = _MEMCG_PID.search(body + ",")
            job_m = _MEMCG_JOB.search(body + ",")
            pod_m = _MEMCG_POD.search(body)
            job = job_m.group(1) if job_m else (pod_m.group(1).replace("_", "-")
                                                if pod_m else None)
            self.oom_job = (pid_m.group(1), job) if pid_m and job else None
            emit("oom_kill", body, code="oom-kill", job_id=job)
            return EVENT
        if "invoked oom-killer" in body or ("Out of memory: Kill process" in body) \
                or "Memory cgroup out of memory: Kill process" in body:
            proc = body.split(" invoked oom-killer", 1)[0] if "invoked" in body else None
            emit("oom_kill", body, code=proc)
            return EVENT
        if body.startswith("oom_reaper:"):
            return NOISE
        return None

    def _io(self, body: str, emit: Emit) -> int | None:
        if "I/O error" in body or "medium error" in body or "target error" in body:
            b = _BLK.search(body)
            if b:
                emit("io_error", body, code="blk", device=b.group(1))
                return EVENT
            f = _BUF.search(body)
            if f:
                emit("io_error", body, code="buffer_io", device=f.group(1))
                return EVENT
        if body.startswith("Aborting journal on device "):
            dev = body.split()[-1].rstrip(".").rsplit("-", 1)[0]
            emit("io_error", body, code="ext4", device=dev)
            return EVENT
        if body.startswith("EXT4-fs"):
            e = _EXT4.search(body)
            if e:
                emit("io_error", body, code="ext4", device=e.group(2) or e.group(1))
                return EVENT
            return NOISE  # mounts, warnings
        if body.startswith("XFS ("):
            x = _XFS.search(body)
            if x and any(w in x.group(2) for w in _XFS_BAD):
                emit("io_error", body, code="xfs", device=x.group(1))
                return EVENT
            return NOISE
        if body.startswith("LustreError:"):
            if "Skipped" in body and "previous similar message" in body:
                return NOISE
            emit("io_error", body, code="lustre")
            return EVENT
        if body.startswith("Lustre:"):
            if _LUSTRE[0] in body:
                emit("io_error", body, code="lustre_timeout")
                return EVENT
            if _LUSTRE[1] in body:
                emit("io_error", body, code="lustre_conn_lost")
                return EVENT
            return NOISE
        n = _NFS.search(body)
        if n:
            emit("io_error", body, code="nfs", device=n.group(1))
            return EVENT
        if "detected capacity change from" in body and body.rstrip().endswith(" to 0"):
            emit("io_error", body, code="nvme", device=body.split(":", 1)[0])
            return EVENT
        v = _NVME.search(body)
        if v:
            emit("io_error", body, code="nvme", device=v.group(1))
            return EVENT
        return None
