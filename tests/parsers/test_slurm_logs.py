"""slurmctld / slurmd parsers.

Sources of the lines (cited per case):
* REAL1 / REAL2: a real Slurm 22.05.8 run (Debian 12 packages), files in
  sample_logs/real_formats/slurm/run1 and run2 (see NOTES.md there); lines copied verbatim.
* SchedMD/slurm source files named next to the other cases (format strings filled in).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from parsers.slurm_logs import SlurmctldParser, SlurmdParser
from parsers.timeutil import get_tz
from tests.parsers.util import parse, pick

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "slurm"


def _row(ts: str | None, kind: str, job: str | None = None, code: str | None = None,
         host: str | None = None, value: float | None = None,
         device: str | None = None) -> dict[str, object]:
    return {"ts": ts, "host": host, "kind": kind, "job_id": job, "rank": None, "code": code,
            "iteration": None, "value": value, "device": device}


# ------------------------------------------------------------------ slurmctld

CTLD_CASES = [
    # REAL1 slurmctld.log
    ("[2026-11-29T19:52:35.959] sched: Allocate JobId=1 NodeList=n1 #CPUs=1 Partition=gpu",
     [_row("2026-11-29T19:52:35.959000Z", "job_start", "1", "n1")]),
    # REAL2 slurmctld.log (multi-node allocation)
    ("[2026-11-29T19:54:57.221] sched: Allocate JobId=1 NodeList=n[1-2] #CPUs=2 Partition=gpu",
     [_row("2026-11-29T19:54:57.221000Z", "job_start", "1", "n[1-2]")]),
    # REAL2: backfill start of an array task, %pJ = JobId=<array>_<task>(<raw id>)
    ("[2026-11-29T19:54:58.943] sched/backfill: _start_job: Started JobId=3_0(5) in gpu on n4",
     [_row("2026-11-29T19:54:58.943000Z", "job_start", "3_0", "n4")]),
    # pre-21.08 wording, src/plugins/sched/backfill/backfill.c: "backfill: Started %pJ in %s on %s"
    ("[2021-03-02T10:00:00.001] backfill: Started JobId=77 in gpu on node[001-004]",
     [_row("2021-03-02T10:00:00.001000Z", "job_start", "77", "node[001-004]")]),
    # REAL1 _job_complete variants (job_mgr.c _job_complete)
    ("[2026-11-29T19:52:40.478] _job_complete: JobId=3 WEXITSTATUS 3",
     [_row("2026-11-29T19:52:40.478000Z", "job_end", "3", "WEXITSTATUS 3", value=3.0)]),
    ("[2026-11-29T19:52:40.858] _job_complete: JobId=4 WTERMSIG 11",
     [_row("2026-11-29T19:52:40.858000Z", "job_end", "4", "WTERMSIG 11", value=11.0)]),
    ("[2026-11-29T19:52:39.733] _job_complete: JobId=5 OOM failure",
     [_row("2026-11-29T19:52:39.733000Z", "job_end", "5", "OOM failure")]),
    ("[2026-11-29T19:52:39.734] _job_complete: JobId=5 done",
     [_row("2026-11-29T19:52:39.734000Z", "job_end", "5", "done")]),
    ("[2026-11-29T19:52:43.065] _job_complete: JobId=7 cancelled by interactive user",
     [_row("2026-11-29T19:52:43.065000Z", "job_end", "7", "cancelled by interactive user")]),
    # REAL2: array task completion
    ("[2026-11-29T19:55:02.169] _job_complete: JobId=3_1(3) WEXITSTATUS 137",
     [_row("2026-11-29T19:55:02.169000Z", "job_end", "3_1", "WEXITSTATUS 137", value=137.0)]),
    # REAL1 requeues
    ("[2026-11-29T19:52:42.049] requeue job JobId=7 due to failure of node n2",
     [_row("2026-11-29T19:52:42.049000Z", "job_requeue", "7", "node failure", host="n2")]),
    ("[2026-11-29T19:52:43.758] Requeuing JobId=8",
     [_row("2026-11-29T19:52:43.758000Z", "job_requeue", "8")]),
    # REAL1 scancel
    ("[2026-11-29T19:52:40.030] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=6 uid 0",
     [_row("2026-11-29T19:52:40.030000Z", "job_cancel", "6", "0")]),
    # REAL1 time limit
    ("[2026-11-29T19:54:02.109] Time limit exhausted for JobId=1",
     [_row("2026-11-29T19:54:02.109000Z", "job_time_limit", "1")]),
    # job_mgr.c: info("Inactivity time limit reached for JobId=%u", ...)
    ("[2024-05-01T12:00:00.000] Inactivity time limit reached for JobId=12",
     [_row("2024-05-01T12:00:00Z", "job_time_limit", "12", "inactivity")]),
    # slurmctld/preempt.c: "preempted %pJ has been requeued to reclaim resources for %pJ"
    ("[2024-05-01T12:00:00.000] preempted JobId=1234 has been requeued to reclaim resources "
     "for JobId=1240",
     [_row("2024-05-01T12:00:00Z", "job_preempt", "1234", "requeued")]),
    # slurmctld/preempt.c: "%s: preempted %pJ had to be killed"
    ("[2024-05-01T12:00:00.000] slurm_job_preempt: preempted JobId=1234 had to be killed",
     [_row("2024-05-01T12:00:00Z", "job_preempt", "1234", "killed")]),
    # REAL2 node crash detected by ping_nodes.c
    ("[2026-11-29T19:55:42.301] error: Nodes n3 not responding, setting DOWN",
     [_row("2026-11-29T19:55:42.301000Z", "node_not_responding", code="setting DOWN",
           host="n3")]),
    # ping_nodes.c: error("Nodes %s not responding", host_str) -- a hostlist, one row per node
    ("[2024-05-01T12:00:00.000] error: Nodes node[016-017] not responding",
     [_row("2024-05-01T12:00:00Z", "node_not_responding", host="node016"),
      _row("2024-05-01T12:00:00Z", "node_not_responding", host="node017")]),
    # job_mgr.c: info("Killing %pJ on failed node %s", ...)
    ("[2024-05-01T12:00:00.000] Killing JobId=1234 on failed node node017",
     [_row("2024-05-01T12:00:00Z", "node_fail_kill", "1234", host="node017")]),
    # REAL2
    ("[2026-11-29T19:55:42.492] Node n3 now responding",
     [_row("2026-11-29T19:55:42.492000Z", "node_resume", code="now responding", host="n3")]),
    ("[2026-11-29T19:55:42.492] node n3 returned to service",
     [_row("2026-11-29T19:55:42.492000Z", "node_resume", code="returned to service",
           host="n3")]),
]


@pytest.mark.parametrize(("line", "rows"), CTLD_CASES)
def test_slurmctld_lines(line: str, rows: list[dict[str, object]]) -> None:
    events, records, acct = parse(SlurmctldParser, line + "\n", "slurmctld.log")
    assert pick(events) == rows
    assert records == []
    assert (acct.events, acct.irrelevant, acct.unparsed) == (1, 0, 0)
    assert events[0]["message"] == line.split("] ", 1)[1]


def test_update_node_reason_becomes_down_code() -> None:
    # REAL1: scontrol update nodename=n2 state=down reason="GPU XID 79 (injected)", then resume
    text = ("[2026-11-29T19:52:42.049] update_node: node n2 reason set to: GPU XID 79 (injected)\n"
            "[2026-11-29T19:52:42.049] requeue job JobId=7 due to failure of node n2\n"
            "[2026-11-29T19:52:42.049] Requeuing JobId=7\n"
            "[2026-11-29T19:52:42.049] update_node: node n2 state set to DOWN\n"
            "[2026-11-29T19:52:47.087] update_node: node n2 state set to IDLE\n")
    events, _, acct = parse(SlurmctldParser, text, "slurmctld.log")
    t = "2026-11-29T19:52:42.049000Z"
    # the reason line is a node_drain row of its own (code = the reason), as well as the code
    # of the later state row
    assert pick(events) == [
        _row(t, "node_drain", code="GPU XID 79 (injected)", host="n2"),
        _row(t, "job_requeue", "7", "node failure", host="n2"),
        _row(t, "job_requeue", "7"),
        _row(t, "node_down", code="GPU XID 79 (injected)", host="n2"),
        _row("2026-11-29T19:52:47.087000Z", "node_resume", code="state set to IDLE", host="n2"),
    ]
    assert (acct.read, acct.events, acct.unparsed) == (5, 5, 0)


def test_slurmctld_noise_and_malformed() -> None:
    text = (
        # REAL1 healthy lines: must not become events
        "[2026-11-29T19:52:31.899] slurmctld version 22.05.8 started on cluster ci\n"
        "[2026-11-29T19:52:31.902] error:  mpi/pmix_v4: init: (null) [0]: mpi_pmix.c:195: "
        "pmi/pmix: can not load PMIx library\n"
        "[2026-11-29T19:52:33.203] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=4294901759 "
        "usec=435\n"
        "[2026-11-29T19:52:32.692] Running as primary controller\n"
        "\n"
        # malformed: no envelope / truncated stamp
        "_job_complete: JobId=3 WEXITSTATUS 3\n"
        "[2026-11-29T19:52 sched: Allocate JobId=1 NodeList=n1 #CPUs=1 Partition=gpu\n"
    )
    events, _, acct = parse(SlurmctldParser, text, "slurmctld.log")
    # the line without an envelope goes to the prefix+message layers, which know it: a job_end
    # row with no time and no host; the truncated stamp stays unparsed
    assert pick(events) == [_row(None, "job_end", "3", "WEXITSTATUS 3", value=3.0)]
    assert (events[0]["ts_flag"], events[0]["host_from"], events[0]["line_no"]) == (
        "missing", "unknown", 6)
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (7, 1, 5, 1)
    assert acct.samples == [(7, "[2026-11-29T19:52 sched: Allocate JobId=1 NodeList=n1 #CPUs=1 "
                                "Partition=gpu")]


def test_tz_and_offset_envelopes() -> None:
    # default iso8601_ms stamp + --tz Europe/Berlin: 12:00 CEST = 10:00 UTC
    line = "[2024-05-01T12:00:00.123] Time limit exhausted for JobId=9\n"
    events, _, _ = parse(SlurmctldParser, line, "slurmctld.log", tz=get_tz("Europe/Berlin"))
    assert (pick(events)[0]["ts"], events[0]["ts_flag"]) == ("2024-05-01T10:00:00.123000Z",
                                                             "assumed_tz")
    # LogTimeFormat=rfc5424_ms carries the offset: exact
    line = "[2024-05-01T12:00:00.123+02:00] Time limit exhausted for JobId=9\n"
    events, _, _ = parse(SlurmctldParser, line, "slurmctld.log")
    assert (pick(events)[0]["ts"], events[0]["ts_flag"]) == ("2024-05-01T10:00:00.123000Z",
                                                             "exact")


def test_journal_envelopes() -> None:
    # journal with the daemon's own stamp inside (quoted in a public slurmrestd write-up):
    # "Oct 10 09:39:08 server2 slurmctld[262298]: [2025-10-10T09:39:08.507] debug3: ..."
    text = ("Oct 10 09:39:08 server2 slurmctld[262298]: [2025-10-10T09:39:08.507] "
            "sched: Allocate JobId=4242 NodeList=compute[1-2] #CPUs=8 Partition=batch\n"
            # plain syslog form ("Sep 30 09:31:34 admin.hpc.com slurmctld[21068]: error: ...")
            "Sep 30 09:31:34 admin.hpc.com slurmctld[21068]: error: Nodes compute1 not "
            "responding, setting DOWN\n")
    events, _, acct = parse(SlurmctldParser, text, "messages", year=2025)
    assert pick(events) == [
        _row("2025-10-10T09:39:08.507000Z", "job_start", "4242", "compute[1-2]"),
        _row("2025-09-30T09:31:34Z", "node_not_responding", code="setting DOWN",
             host="compute1"),
    ]
    assert [e["ts_flag"] for e in events] == ["assumed_tz", "inferred_year"]
    assert acct.events == 2


# ------------------------------------------------------------------ slurmd

SLURMD_CASES = [
    # REAL1 slurmd-n1.log
    ("[2026-11-29T19:52:39.712] [5.batch] error: Detected 1 oom-kill event(s) in StepId=5.batch."
     " Some of your processes may have been killed by the cgroup out-of-memory handler.",
     _row("2026-11-29T19:52:39.712000Z", "oom_event", "5", "batch", host="n1", value=1.0)),
    # 20.11-21.08 wording ("... in StepId=47.batch cgroup. ..." quoted in a public issue)
    ("[2021-06-01T08:00:00.000] [47.batch] error: Detected 2 oom-kill event(s) in StepId=47.batch"
     " cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.",
     _row("2021-06-01T08:00:00Z", "oom_event", "47", "batch", host="n1", value=2.0)),
    # <= 20.02 wording ("in step 14037828.batch cgroup.")
    ("[2019-06-01T08:00:00.000] [14037828.batch] error: Detected 1 oom-kill event(s) in step "
     "14037828.batch cgroup. Some of your processes may have been killed by the cgroup "
     "out-of-memory handler.",
     _row("2019-06-01T08:00:00Z", "oom_event", "14037828", "batch", host="n1", value=1.0)),
    # REAL1
    ("[2026-11-29T19:52:36.892] Launching batch job 3 for UID 0",
     _row("2026-11-29T19:52:36.892000Z", "step_start", "3", "batch", host="n1")),
    # REAL2
    ("[2026-11-29T19:54:58.405] launch task StepId=1.0 request from UID:0 GID:0 HOST:127.0.0.1 "
     "PORT:54722",
     _row("2026-11-29T19:54:58.405000Z", "step_start", "1", "0", host="n1")),
    ("[2026-11-29T19:55:01.453] [1.extern] done with job",
     _row("2026-11-29T19:55:01.453000Z", "step_end", "1", "extern", host="n1")),
    # REAL1
    ("[2026-11-29T19:52:40.856] [4.batch] get_exit_code task 0 died by signal: 11",
     _row("2026-11-29T19:52:40.856000Z", "task_exit", "4", "signal 11", host="n1",
          value=11.0)),
    ("[2026-11-29T19:54:02.112] [1.batch] error: *** JOB 1 ON n1 CANCELLED AT "
     "2026-11-29T19:54:02 DUE TO TIME LIMIT ***",
     _row("2026-11-29T19:54:02.112000Z", "slurm_job_cancelled", "1", "TIME LIMIT", host="n1")),
    ("[2026-11-29T19:52:42.053] [7.batch] error: *** JOB 7 ON n2 CANCELLED AT "
     "2026-11-29T19:52:42 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
     _row("2026-11-29T19:52:42.053000Z", "slurm_job_cancelled", "7", "NODE FAILURE",
          host="n2")),
    ("[2026-11-29T19:52:42.076] [8.batch] error: *** JOB 8 ON n4 CANCELLED AT "
     "2026-11-29T19:52:42 DUE TO JOB REQUEUE ***",
     _row("2026-11-29T19:52:42.076000Z", "slurm_job_cancelled", "8", "JOB REQUEUE",
          host="n4")),
    ("[2026-11-29T19:52:40.032] [6.batch] error: *** JOB 6 ON n4 CANCELLED AT "
     "2026-11-29T19:52:40 ***",
     _row("2026-11-29T19:52:40.032000Z", "slurm_job_cancelled", "6", "CANCELLED",
          host="n4")),
    # slurmstepd/req.c: "*** %s ON %s CANCELLED AT %s DUE TO PREEMPTION ***", entity "STEP %u.%u"
    ("[2024-05-01T12:00:00.000] [1234.0] error: *** STEP 1234.0 ON node017 CANCELLED AT "
     "2024-05-01T12:00:00 DUE TO PREEMPTION ***",
     _row("2024-05-01T12:00:00Z", "slurm_job_cancelled", "1234", "PREEMPTION",
          host="node017")),
    # slurmstepd/req.c: "*** %s ON %s FAILED (non-zero exit code or other failure mode) ***"
    ("[2024-05-01T12:00:00.000] [1234.batch] error: *** JOB 1234 ON node017 FAILED (non-zero "
     "exit code or other failure mode) ***",
     _row("2024-05-01T12:00:00Z", "slurm_job_failed", "1234", "FAILED", host="node017")),
]


@pytest.mark.parametrize(("line", "row"), SLURMD_CASES)
def test_slurmd_lines(line: str, row: dict[str, object]) -> None:
    events, _, acct = parse(SlurmdParser, line + "\n", "logs/slurmd-n1.log")
    assert pick(events) == [row]
    assert events[0]["host_from"] == ("line" if "*** " in line else "path")
    assert (acct.events, acct.unparsed) == (1, 0)


def test_slurmd_interleaved_and_noise() -> None:
    # REAL2 slurmd-n4.log: two slurmstepd threads wrote into one line; the orphan rest follows
    text = (
        "[2026-11-29T19:55:05.466] [3.0] error: Failed to send MESSAGE_TASK_EXIT: Connection "
        "refused\n"
        "[2026-11-29T19:55:05.466] [5.0] get_e[2026-11-29T19:55:05.466] [3.0] get_exit_code "
        "task 0 died by signal: 9\n"
        "xit_code task 0 died by signal: 9\n"
        "[2026-11-29T19:55:05.472] [5.0] done with job\n"
        # REAL1 healthy noise, then the memory-limit line (an oom_event, code memory_limit_hit:
        # the step touched its limit, which "may or may not result in some failure")
        "[2026-11-29T19:52:36.908] [3.batch] task/cgroup: _memcg_initialize: job: alloc=500MB "
        "mem.limit=500MB memsw.limit=unlimited\n"
        "[2026-11-29T19:52:33.175] slurmd version 22.05.8 started\n"
        "[2026-11-29T19:52:39.712] [5.batch] task/cgroup: task_cgroup_memory_check_oom: "
        "StepId=5.batch hit memory limit at least once during execution. This may or may not "
        "result in some failure.\n"
    )
    events, _, acct = parse(SlurmdParser, text, "slurmd-n4.log")
    assert pick(events) == [
        _row("2026-11-29T19:55:05.466000Z", "task_exit", "3", "signal 9", host="n4", value=9.0),
        _row("2026-11-29T19:55:05.472000Z", "step_end", "5", "0", host="n4"),
        _row("2026-11-29T19:52:39.712000Z", "oom_event", "5", "memory_limit_hit", host="n4"),
    ]
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (7, 3, 3, 1)
    assert acct.samples == [(3, "xit_code task 0 died by signal: 9")]


@pytest.mark.parametrize(("path", "host"), [
    ("var/log/slurm/slurmd-n1.log", "n1"),
    ("slurmd.node017.log", "node017"),
    ("cluster/node017/slurmd.log", "node017"),
    ("slurm/slurmd.log", None),
])
def test_slurmd_host_from_path(path: str, host: str | None) -> None:
    events, _, _ = parse(SlurmdParser, SLURMD_CASES[3][0] + "\n", path)
    assert events[0]["host"] == host


# ------------------------------------------------------------------ samples and sniffing

def test_real_samples_accounting() -> None:
    for name, cls, counts in [
        ("run1/slurmctld.log", SlurmctldParser, (73, 33, 40, 0)),
        ("run2/slurmctld.log", SlurmctldParser, (56, 19, 37, 0)),
        # + the two "hit memory limit" lines before job 5's oom-kill (oom_event memory_limit)
        ("run1/slurmd-n1.log", SlurmdParser, (36, 15, 21, 0)),
        ("run2/slurmd-n4.log", SlurmdParser, (37, 11, 25, 1)),
    ]:
        text = (SAMPLES / name).read_text()
        _, _, acct = parse(cls, text, name, mtime=datetime(2026, 11, 30, tzinfo=UTC))
        assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == counts, name


OTHER_HEADS = [
    # kernel dmesg / syslog, NVIDIA Xid (open-gpu-kernel-modules nv.c "NVRM: Xid (%s): %d, ...")
    ("dmesg.log", "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
     "name=<unknown>, GPU has fallen off the bus.\n"),
    ("kern.log", "May  1 12:00:00 node017 kernel: [ 1234.567890] NVRM: Xid (PCI:0000:3b:00): "
     "79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"),
    # NCCL INFO (nccl src/debug.cc "%s:%d:%d [%d] NCCL INFO ...")
    ("slurm-1234.out", "node017:12345:12345 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.17<0>\n"),
    # torch elastic / python logging
    ("train.log", "[2024-05-01 12:00:00,123] torch.distributed.elastic.multiprocessing.api: "
     "[ERROR] failed (exitcode: 1) local_rank: 0 (pid: 1234) of binary: /usr/bin/python\n"),
    # kubectl get pods -o json
    ("pods.json", '{\n    "apiVersion": "v1",\n    "items": [],\n    "kind": "List"\n}\n'),
    # sacct --parsable2 (REAL1)
    ("sacct.psv", "JobID|JobIDRaw|JobName|State|ExitCode\n1|1|timeout|TIMEOUT|0:0\n"),
]


@pytest.mark.parametrize(("path", "head"), OTHER_HEADS)
def test_sniff_low_on_other_sources(path: str, head: str) -> None:
    assert SlurmctldParser.sniff(head, path) < 30
    assert SlurmdParser.sniff(head, path) < 30


def test_sniff_own_samples() -> None:
    ctld = (SAMPLES / "run1/slurmctld.log").read_text()[:65536]
    slurmd = (SAMPLES / "run1/slurmd-n1.log").read_text()[:65536]
    assert SlurmctldParser.sniff(ctld, "slurmctld.log") >= 90
    assert SlurmdParser.sniff(slurmd, "slurmd-n1.log") >= 90
    # by content alone (renamed files) each still wins over the other
    assert SlurmctldParser.sniff(ctld, "a.log") > SlurmdParser.sniff(ctld, "a.log")
    assert SlurmdParser.sniff(slurmd, "b.log") > SlurmctldParser.sniff(slurmd, "b.log")
    assert SlurmdParser.sniff(slurmd, "b.log") >= 30
    assert SlurmctldParser.sniff(ctld, "a.log") >= 30
