"""A short training campaign under a real Slurm, failing in real ways; tormortem must recover
what happened (issue 7). Run alone with ``pytest -m slurm``.

The campaign (one JobName per run, so all attempts of a run link into one run):

run ``llm-main`` (2 nodes, trainer under ``srun --kill-on-bad-exit``; checkpoints every 20
iterations, resumed by every attempt):

====  =====================================  ==========================  ====================
job   injection                              Slurm records               category expected
====  =====================================  ==========================  ====================
J1#0  ``scontrol requeue`` (operator)        REQUEUED, same job id       scheduler
J1#1  ``scontrol update state=down`` on      NODE_FAIL, requeued         node_failure (tmn2)
      tmn2 while it runs
J1#2  rank 0 raises (CUDA illegal memory     FAILED, non-zero exit       user_code
      access), exit 1
J2    rank 0 SIGSEGV inside the srun step    FAILED (signal 11 only in   user_code
      (resubmitted, new job id)              the .err file)
J3    ``kill -9`` of the batch script        FAILED 0:9                  user_code
J4    memory grows past ``--mem=300M`` in    OUT_OF_MEMORY 0:125         oom_host
      the batch step (no srun)
J5    ``scancel``                            CANCELLED by 0              scheduler
J6    --                                     COMPLETED                   (end of run)
====  =====================================  ==========================  ====================

run ``llm-side`` (1 node, concurrently on tmn4): S1 ``--time=1`` -> TIMEOUT (scheduler), S2
resubmitted -> COMPLETED. The time limit costs 60-90 s (limits are whole minutes and the
check runs every ~30 s), so it runs beside the main run instead of in it.

Categories: from the rule table (pipeline/ingest/rules/*.csv): NODE_FAIL / ``requeue ... due to
failure of node`` / ``update_node ... DOWN`` -> node_failure (80); TIMEOUT, CANCELLED,
``Requeuing JobId``, the ``DUE TO JOB REQUEUE`` banner -> scheduler (60); OUT_OF_MEMORY / ``OOM
failure`` / ``Detected 1 oom-kill event`` -> oom_host (60); FAILED, ``WEXITSTATUS n``,
``WTERMSIG n``, ``srun: error: ... Segmentation fault`` -> user_code (20-25).
"""

from __future__ import annotations

import json
import re
import shutil
import warnings

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from tests.integration.campaign import (
    ITER_MS,
    MAIN,
    MAIN_ITERS,
    SIDE,
    SIDE_ITERS,
    Campaign,
    epoch,
    run_campaign,
)
from tests.integration.slurm_config import HarnessError, iter_lines
from tests.integration.slurm_harness import Cluster

pytestmark = pytest.mark.slurm

@pytest.fixture(scope="module")
def campaign(slurm_cluster: Cluster) -> Campaign:
    try:
        return run_campaign(slurm_cluster)
    except HarnessError as e:
        pytest.fail(f"campaign: {e}", pytrace=False)


# ------------------------------------------------------------------------------ expectations
MAIN_ROLES = ("J1#0", "J1#1", "J1#2", "J2", "J3", "J4", "J5", "J6")
SIDE_ROLES = ("S1", "S2")
STATE = {"J1#0": "REQUEUED", "J1#1": "NODE_FAIL", "J1#2": "FAILED", "J2": "FAILED",
         "J3": "FAILED", "J4": "OUT_OF_MEMORY", "J5": "CANCELLED", "J6": "COMPLETED",
         "S1": "TIMEOUT", "S2": "COMPLETED"}
INJECTED = {"J1#0": "scontrol_requeue", "J1#1": "node_down", "J1#2": "trainer_exit",
            "J2": "trainer_segv", "J3": "kill_batch", "J4": "trainer_oom", "J5": "scancel"}
LOG_EVERY = 2  #: trainer --log-interval



def test_campaign_happened_as_injected(campaign: Campaign) -> None:
    """The harness itself: Slurm recorded each injected failure as expected."""
    assert len(campaign.alloc_rows(campaign.jobs["J1"])) == 3
    for role, state in STATE.items():
        hint = "" if role != "J4" or campaign.cluster.memory_limits else (
            ": this host has no cgroup v1 memory controller, so --mem is not enforced as "
            "OUT_OF_MEMORY (see tests/integration/README.md)")
        assert campaign.sacct_row(role)["State"].split()[0] == state, f"{role}{hint}"
    assert campaign.sacct_row("J3")["ExitCode"] == "0:9"
    assert campaign.sacct_row("J4")["ExitCode"] == "0:125"
    assert campaign.sacct_row("J5")["State"] == "CANCELLED by 0"
    names = {r["JobName"] for r in campaign.sacct if "." not in r["JobID"]}
    assert names == {MAIN, SIDE}
    # sacct has no Restarts field; --duplicates is the only way to see every execution
    assert "Restarts" not in campaign.cluster.out("sacct", "--helpformat")
    json_runs = [j for j in campaign.sacct_json["jobs"] if str(j["job_id"]) == campaign.jobs["J1"]]
    assert len(json_runs) == 3, "sacct --json lists every execution of a requeued job"


def test_runs_link_requeues_and_resubmissions(campaign: Campaign) -> None:
    assert campaign.analysis["fidelity"] == "scheduler"
    assert sorted(r["run"] for r in campaign.analysis["runs"]) == [MAIN, SIDE]
    assert [a["attempt"] for a in campaign.attempts(MAIN)] == [
        campaign.attempt_id(r) for r in MAIN_ROLES]
    assert [a["job_id"] for a in campaign.attempts(MAIN)] == [
        campaign.jobs[r.split("#")[0]] for r in MAIN_ROLES]
    assert [a["attempt"] for a in campaign.attempts(SIDE)] == [
        campaign.attempt_id(r) for r in SIDE_ROLES]


@pytest.mark.parametrize("role", MAIN_ROLES + SIDE_ROLES)
def test_attempt_state_and_exit_code(campaign: Campaign, role: str) -> None:
    a = campaign.attempt(role)
    row = campaign.sacct_row(role)
    assert a["state"] == STATE[role]
    assert a["start"] == row["Start"] + "Z" and a["end"] == row["End"] + "Z"
    # exit code from sacct text (22.05's --json says 0 for plain non-zero exits, scontrol
    # says 143 where sacct says 15)
    assert a["exit_code"] == int(row["ExitCode"].split(":")[0])
    assert a["nodes"] == sorted(campaign.cluster.out(
        "scontrol", "show", "hostnames", row["NodeList"]).split())


def test_exit_codes_disagree_and_sacct_text_wins(campaign: Campaign) -> None:
    """The real quirk: for the crash, scontrol, sacct text and sacct --json all differ."""
    role = "J1#2"
    text = int(campaign.sacct_row(role)["ExitCode"].split(":")[0])
    scontrol = [i.detail["exit_code"] for i in campaign.cluster.timeline
                if i.action == "observed_end" and i.job_id == campaign.jobs["J1"]][-1]
    js = [j for j in campaign.sacct_json["jobs"] if str(j["job_id"]) == campaign.jobs["J1"]]
    last = max(js, key=lambda j: j["time"]["start"])
    assert text != 0
    assert last["exit_code"]["return_code"] == 0  # Slurm 22.05's JSON
    assert scontrol != f"{text}:0"  # 143:0
    assert campaign.attempt(role)["exit_code"] == text


def test_interruptions(campaign: Campaign) -> None:
    main_ints = campaign.run(MAIN)["interruptions"]
    assert [i["attempt"] for i in main_ints] == [campaign.attempt_id(r) for r in MAIN_ROLES[:-1]]
    assert [i["attempt"] for i in campaign.run(SIDE)["interruptions"]] == [campaign.jobs["S1"]]
    assert sum(v["count"] for v in campaign.run(MAIN)["by_category"].values()) == 7


CATEGORY = [
    pytest.param("J1#0", "scheduler", None, id="requeue"),
    pytest.param("J1#1", "node_failure", "tmn2", id="node_down"),
    pytest.param("J1#2", "user_code", None, id="crash_exit"),
    pytest.param("J2", "user_code", None, id="segv_in_srun"),
    pytest.param("J3", "user_code", None, id="kill_9"),
    pytest.param("J4", "oom_host", "tmn1", id="oom"),
    pytest.param("J5", "scheduler", None, id="scancel"),
    pytest.param("S1", "scheduler", "tmn4", id="timeout"),
]


@pytest.mark.parametrize(("role", "category", "node"), CATEGORY)
def test_root_cause_category(campaign: Campaign, role: str, category: str,
                             node: str | None) -> None:
    i = campaign.interruption(role)
    assert i["state"] == STATE[role]
    assert i["category"] == category, i["cause"]
    if node is not None:
        assert i["node"] == node


CAUSE_TIME = [
    pytest.param("J1#0", id="requeue"),
    pytest.param("J1#1", id="node_down"),
    pytest.param("J1#2", id="crash_exit"),
    pytest.param("J2", id="segv_in_srun"),
    pytest.param("J3", id="kill_9"),
    pytest.param("J4", id="oom"),
    pytest.param("J5", id="scancel"),
    pytest.param("S1", id="timeout"),
]


@pytest.mark.parametrize("role", CAUSE_TIME)
def test_cause_is_from_the_attempt_itself(campaign: Campaign, role: str) -> None:
    """The root-cause line was written while this execution ran (or when it ended)."""
    i, a = campaign.interruption(role), campaign.attempt(role)
    assert epoch(a["start"]) <= epoch(i["cause"]["ts"]) <= epoch(a["end"]) + 2.0, i["cause"]


def test_segfault_only_in_err_file_is_the_cause(campaign: Campaign) -> None:
    i = campaign.interruption("J2")
    msg = i["cause"]["message"] or ""
    assert "Segmentation fault" in msg or "signal: 11" in msg, i["cause"]
    assert i["node"] == "tmn1"


def test_timeout_costs_a_whole_minute(campaign: Campaign) -> None:
    a = campaign.attempt("S1")
    assert 60 <= epoch(a["end"]) - epoch(a["start"]) <= 100
    assert campaign.interruption("S1")["cause"]["code"] in ("TIME LIMIT", None)


# ------------------------------------------------------------------------------ decomposition
@pytest.mark.parametrize("run", [MAIN, SIDE])
def test_components_sum_to_t_obs(campaign: Campaign, run: str) -> None:
    r = campaign.run(run)
    assert abs(sum(r["components"].values()) - r["t_obs_s"]) <= 1e-6 * r["t_obs_s"]
    assert abs(r["remainder_s"]) <= 1e-6 * r["t_obs_s"]
    roles = MAIN_ROLES if run == MAIN else SIDE_ROLES
    first, last = campaign.sacct_row(roles[0]), campaign.sacct_row(roles[-1])
    assert r["t_obs_s"] == pytest.approx(epoch(last["End"]) - epoch(first["Start"]), abs=1e-6)
    assert all(v >= -1e-9 for k, v in r["components"].items() if k != "slow"), r["components"]
    # stamps have 1 s resolution: each attempt's measured compute is off by up to ~1 s at
    # either end (its first line's stamp and its last line's), so `slow` (surviving compute -
    # t_opt) is within 2 s per attempt of its true small value and may even be negative
    assert abs(r["components"]["slow"]) <= 2.0 * len(roles), r["components"]


@pytest.mark.parametrize("run", [MAIN, SIDE])
def test_repair_gaps_are_sacct_gaps(campaign: Campaign, run: str) -> None:
    roles = MAIN_ROLES if run == MAIN else SIDE_ROLES
    r = campaign.run(run)
    total = 0.0
    for k, role in enumerate(roles[:-1]):
        gap = (epoch(campaign.sacct_row(roles[k + 1])["Start"])
               - epoch(campaign.sacct_row(role)["End"]))
        assert campaign.interruption(role)["repair_s"] == pytest.approx(gap, abs=1e-6), role
        total += gap
    assert r["components"]["repair"] == pytest.approx(total, abs=1e-6)


def test_node_failure_hang_ends_at_slurms_node_fail_time(campaign: Campaign) -> None:
    a, row = campaign.attempt("J1#1"), campaign.sacct_row("J1#1")
    inj = campaign.injection("node_down", campaign.jobs["J1"])
    end = epoch(a["end"])
    assert end == epoch(row["End"])  # the attempt ends at sacct's NODE_FAIL End
    ctld = [ln for ln in iter_lines(campaign.logs / "slurm" / "slurmctld.log")
            if f"requeue job JobId={campaign.jobs['J1']} due to failure of node tmn2" in ln]
    assert len(ctld) == 1
    m = re.match(r"\[([^\]]+)\]", ctld[0])
    assert m is not None
    noticed = epoch(m.group(1))
    assert inj.started - 0.1 <= noticed <= inj.time + 0.1  # scontrol down acts at once
    # sacct End is truncated to the second (here it can read up to 1 s before slurmctld's line)
    assert -0.01 <= noticed - end <= 1.5
    i = campaign.interruption("J1#1")
    lp = epoch(i["last_progress"])
    # the hang ends at End; it begins after the last line plus the iterations that probably
    # ran unprinted after it (``pipeline/analyze/unseen.py``: half the log interval's rest,
    # when End came a step or more after the line; charged as lost, flagged estimated)
    assert i["hang_s"] + i["lost_estimated_s"] == pytest.approx(end - lp, abs=1e-6)
    assert lp <= end
    # the last progress line is the last one printed before Slurm killed the job
    assert lp >= inj.started - LOG_EVERY * ITER_MS / 1000.0 - 1.0


@pytest.mark.parametrize("role", MAIN_ROLES + SIDE_ROLES)
def test_progress_matches_the_trainers_own_record(campaign: Campaign, role: str) -> None:
    a = campaign.attempt(role)
    truth = campaign.truth(role)
    starts = [t for t in truth if t["event"] == "start"]
    assert len(starts) == 1
    assert a["resumed_from"] == starts[0]["iteration"]
    its = [t["iteration"] for t in truth if t["event"] == "iteration"]
    logged = [n for n in its if n % LOG_EVERY == 0]
    if role in INJECTED:
        inj = campaign.injection(INJECTED[role], campaign.jobs[role.split("#")[0]])
        # what was logged up to the injection is in the logs; lines printed after Slurm
        # ended the job may be lost (srun already gone) or fall after the sacct End
        assert inj.detail["iteration"] // LOG_EVERY * LOG_EVERY <= a["last_iteration"]
        assert a["last_iteration"] <= max(logged)
    else:
        assert a["last_iteration"] == max(logged)


def test_run_progress_totals(campaign: Campaign) -> None:
    for run, iters in ((MAIN, MAIN_ITERS), (SIDE, SIDE_ITERS)):
        r = campaign.run(run)
        assert r["final_iteration"] == iters and r["iterations_net"] == iters
        assert r["ideal_step_s"] == pytest.approx(ITER_MS / 1000.0, rel=0.1)
        assert r["t_opt_s"] == pytest.approx(iters * r["ideal_step_s"], rel=1e-9)


@pytest.mark.parametrize("role", MAIN_ROLES[:-1] + SIDE_ROLES[:-1])
def test_lost_work_is_the_rolled_back_iterations(campaign: Campaign, role: str) -> None:
    roles = MAIN_ROLES if role in MAIN_ROLES else SIDE_ROLES
    nxt = campaign.attempt(roles[roles.index(role) + 1])
    a, i = campaign.attempt(role), campaign.interruption(role)
    r = campaign.run(MAIN if role in MAIN_ROLES else SIDE)
    rolled_back = a["last_iteration"] - nxt["resumed_from"]
    assert rolled_back > 0
    # one-second stamps: the measured span of the rolled-back iterations is off by <= ~1 s
    assert i["lost_s"] == pytest.approx(rolled_back * r["ideal_step_s"], abs=1.1)


def test_job_output_appended_across_requeues(campaign: Campaign) -> None:
    out = campaign.logs / "jobs" / f"slurm-{campaign.jobs['J1']}.out"
    text = out.read_text()
    assert text.count("[before the start of training step]") == 3
    assert text.count("successfully loaded checkpoint") == 2


def test_analyze_raises_no_warnings(campaign: Campaign) -> None:
    assert campaign.warnings == []


def test_directory_names_are_not_hosts(campaign: Campaign) -> None:
    """The same logs under a directory named like a user's second run (``run2/``)."""
    copy = campaign.cluster.base / "run2"
    shutil.copytree(campaign.logs, copy, dirs_exist_ok=True)
    out = campaign.cluster.base / "analysis-run2"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # test_analyze_raises_no_warnings
        r = CliRunner().invoke(main, ["analyze", str(copy), "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "analysis.json").read_text())
    oom = [i for run in doc["runs"] for i in run["interruptions"]
           if i["attempt"] == campaign.jobs["J4"]]
    assert oom and oom[0]["node"] == "tmn1", oom
