"""srun / slurmstepd lines in a job's output -> rows (parsers/slurm_step.py via JobLogParser).

Formats: SchedMD/slurm src/srun (``_task_finish``: ``%s: %s %s: Exited with exit code %d``,
``%s: %s %s: %s%s``, ``%s: %s %s: Out Of Memory``; ``_node_fail_handler``), src/slurmd/
slurmstepd/req.c (``*** %s ON %s CANCELLED AT %s DUE TO ... ***``), step_terminate_monitor,
and the task/cgroup OOM message; ``srun: Job step aborted: ...`` (api/step_launch.c).
"""

from __future__ import annotations

from parsers.joblog import JobLogParser
from tests.parsers.util import parse, pick

PATH = "runs/slurm-32321214.out"


def test_task_exits_and_oom() -> None:
    text = "\n".join([
        # real (NVIDIA enroot issue notes): single task exit code
        "srun: error: 1x-instant-cluster-testing-1: task 0: Exited with exit code 1",
        # _task_finish with a hostlist and a task range; signal text from strsignal()
        "srun: error: node[017-018]: tasks 0-15: Killed",
        "srun: error: node019: task 5: Segmentation fault (core dumped)",
        # real (nic5 cluster notes): cgroup OOM, then srun's per-task verdict
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=10238881.0. Some of your"
        " processes may have been killed by the cgroup out-of-memory handler.",
        "srun: error: nic5-w052: task 13: Out Of Memory",
        # real (older wording, 2019): 'in step N.batch cgroup'
        "slurmstepd: error: Detected 1 oom-kill event(s) in step 32321481.batch cgroup. Some of"
        " your processes may have been killed by the cgroup out-of-memory handler.",
        "srun: error: Node failure on node020",
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
        "srun: forcing job termination",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert pick(rows, ("host", "kind", "job_id", "code", "value", "device")) == [
        {"host": "1x-instant-cluster-testing-1", "kind": "srun_task_exit", "job_id": "32321214",
         "code": "1", "value": None, "device": "0"},
        {"host": "node017", "kind": "srun_task_exit", "job_id": "32321214", "code": "Killed",
         "value": None, "device": "0-15"},
        {"host": "node018", "kind": "srun_task_exit", "job_id": "32321214", "code": "Killed",
         "value": None, "device": "0-15"},
        {"host": "node019", "kind": "srun_task_exit", "job_id": "32321214",
         "code": "Segmentation fault (core dumped)", "value": None, "device": "5"},
        {"host": None, "kind": "oom_event", "job_id": "10238881", "code": "cgroup", "value": 1.0,
         "device": None},
        {"host": "nic5-w052", "kind": "oom_event", "job_id": "32321214", "code": "srun",
         "value": None, "device": "13"},
        {"host": None, "kind": "oom_event", "job_id": "32321481", "code": "cgroup", "value": 1.0,
         "device": None},
        {"host": "node020", "kind": "srun_node_fail", "job_id": "32321214", "code": None,
         "value": None, "device": None},
        # srun's step teardown lines are step_aborted rows (code = the message's head)
        {"host": None, "kind": "step_aborted", "job_id": "32321214", "code": "Job step aborted",
         "value": None, "device": None},
        {"host": None, "kind": "step_aborted", "job_id": "32321214",
         "code": "forcing job termination", "value": None, "device": None},
    ]
    assert [r["host_from"] for r in rows[:2]] == ["line", "line"]
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (9, 9, 0, 0)


def test_cancel_verdicts() -> None:
    text = "\n".join([
        "slurmstepd: error: *** JOB 1234 ON node017 CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME"
        " LIMIT ***",
        "slurmstepd: error: *** STEP 1234.0 ON node017 CANCELLED AT 2024-05-01T12:00:01 DUE TO"
        " PREEMPTION ***",
        "slurmstepd: error: *** JOB 1234 ON node017 CANCELLED AT 2024-05-01T12:00:02 DUE TO NODE"
        " FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
        # real (2019 log): requeue
        "slurmstepd: error: *** JOB 32321214 ON compute0221 CANCELLED AT 2019-01-28T10:43:09 DUE TO"
        " JOB REQUEUE ***",
        "slurmstepd: error: *** JOB 1235 ON node017 CANCELLED AT 2024-05-01T12:00:03 ***",
        # older slurmstepd: no 'ON <host>'
        "slurmstepd: error: *** JOB 1236 CANCELLED AT 2015-03-01T08:00:00 DUE TO NODE FAILURE ***",
        "slurmstepd: error: *** JOB 1237 ON node017 FAILED (non-zero exit code or other failure"
        " mode) ***",
        "slurmstepd: error: *** STEP 1238.0 STEPD TERMINATED ON node021 AT 2024-05-01T13:00:00 DUE"
        " TO JOB NOT ENDING WITH SIGNALS ***",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert pick(rows, ("ts", "host", "kind", "job_id", "code")) == [
        {"ts": "2024-05-01T12:00:00Z", "host": "node017", "kind": "slurm_job_cancelled",
         "job_id": "1234", "code": "TIME LIMIT"},
        {"ts": "2024-05-01T12:00:01Z", "host": "node017", "kind": "slurm_job_cancelled",
         "job_id": "1234", "code": "PREEMPTION"},
        {"ts": "2024-05-01T12:00:02Z", "host": "node017", "kind": "slurm_job_cancelled",
         "job_id": "1234", "code": "NODE FAILURE"},
        {"ts": "2019-01-28T10:43:09Z", "host": "compute0221", "kind": "slurm_job_cancelled",
         "job_id": "32321214", "code": "JOB REQUEUE"},
        {"ts": "2024-05-01T12:00:03Z", "host": "node017", "kind": "slurm_job_cancelled",
         "job_id": "1235", "code": "CANCELLED"},
        {"ts": "2015-03-01T08:00:00Z", "host": None, "kind": "slurm_job_cancelled",
         "job_id": "1236", "code": "NODE FAILURE"},
        # no stamp of its own, and the line before ended an execution: no inherited time
        {"ts": None, "host": "node017", "kind": "slurm_job_failed",
         "job_id": "1237", "code": "FAILED"},
        {"ts": "2024-05-01T13:00:00Z", "host": "node021", "kind": "slurm_stepd_terminated",
         "job_id": "1238", "code": "JOB NOT ENDING WITH SIGNALS"},
    ]
    assert [r["ts_flag"] for r in rows] == ["assumed_tz"] * 6 + ["missing", "assumed_tz"]
    assert (acct.read, acct.events, acct.unparsed) == (8, 8, 0)


def test_timezone_applies_to_the_verdict_stamp() -> None:
    from parsers.timeutil import get_tz

    text = ("slurmstepd: error: *** JOB 1234 ON node017 CANCELLED AT 2024-05-01T12:00:00 DUE TO"
            " TIME LIMIT ***\n")
    rows, _, _ = parse(JobLogParser, text, PATH, tz=get_tz("Europe/Berlin"))
    assert pick(rows, ("ts",)) == [{"ts": "2024-05-01T10:00:00Z"}]


def test_job_id_printed_by_the_script() -> None:
    """A job's own id as its script prints it: ``env`` / ``set`` (``SLURM_JOB_ID=N``,
    ``SLURM_JOBID=N``), bash's ``export -p`` (``declare -x NAME="VALUE"``, bash builtins/
    setattr.c), dash's ``export -p`` (``export NAME='VALUE'``), a Python print (``NAME: N``);
    not another variable, not a value that is no id."""
    text = "\n".join([
        "SLURM_JOB_ID=4101", "SLURM_JOBID=4101", 'declare -x SLURM_JOB_ID="4102"',
        "export SLURM_JOB_ID='4103'", "SLURM_JOB_ID: 4104", 'export SLURM_JOB_ID="4105',
        "SLURM_JOB_NAME=train", 'declare -x SLURM_JOB_NODELIST="node[01-02]"',
    ]) + "\n"
    rows, _, _ = parse(JobLogParser, text, "logs/train.out")
    assert [(r["kind"], r["job_id"]) for r in rows] == [("job_id_banner", x) for x in (
        "4101", "4101", "4102", "4103", "4104")]
