"""The second real-Slurm campaign (issue 13): output named as users name it (``%x-%j.out``,
``logs/%x/%A_%a.out``, ``%j.log``, torchrun per-rank directories), a dependency chain whose
resubmissions change name, a sequential job array, ``--open-mode=truncate`` with a requeue,
and ``srun --label`` with two ranks printing. What runs is in campaign2.py; here, per
scenario, the ground truth Slurm recorded and the trainer wrote down, against the analysis.
Run with ``pytest -m slurm`` (after test_real_slurm.py, on the same cluster).
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

import duckdb
import pytest

from tests.integration.campaign import ITER_MS, SAVE_EVERY
from tests.integration.campaign2 import ARRAY, CHAIN, ITERS, TORCH, TRUNC, Campaign2, run_campaign2
from tests.integration.slurm_config import HarnessError
from tests.integration.slurm_harness import Cluster

pytestmark = pytest.mark.slurm

ROLES = {CHAIN: ("P1", "P2", "P3"), ARRAY: ("A0", "A1", "A2"), TRUNC: ("T#0", "T#1"),
         TORCH: ("R1", "R2")}
STATE = {"P1": "FAILED", "P2": "FAILED", "P3": "COMPLETED", "A0": "FAILED",
         "A1": "CANCELLED", "A2": "COMPLETED", "T#0": "REQUEUED", "T#1": "COMPLETED",
         "R1": "FAILED", "R2": "COMPLETED"}
CATEGORY = {"P1": "user_code", "P2": "user_code", "A0": "user_code", "A1": "scheduler",
            "T#0": "scheduler", "R1": "user_code"}
LOG_EVERY = 2  #: trainer --log-interval


@pytest.fixture(scope="module")
def camp(slurm_cluster: Cluster) -> Campaign2:
    try:
        return run_campaign2(slurm_cluster)
    except HarnessError as e:
        pytest.fail(f"campaign 2: {e}", pytrace=False)


def _db(c: Campaign2) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(c.cluster.base / "analysis2" / "tormortem.duckdb"),
                          read_only=True)


def _row(c: Campaign2, role: str) -> dict[str, str]:
    job, _, ex = role.partition("#")
    rows = sorted((r for r in c.sacct if r["JobID"] == c.jobs[job]), key=lambda r: r["Start"])
    return rows[int(ex or 0)]


def test_the_campaign_happened_as_submitted(camp: Campaign2) -> None:
    for role, state in STATE.items():
        assert _row(camp, role)["State"].split()[0] == state, role
    # the chain's names change; sacct's SubmitLine keeps the -o pattern and the dependency
    assert [_row(camp, r)["JobName"] for r in ROLES[CHAIN]] == ["c2-part1", "c2-part2",
                                                                "c2-part3"]
    sub = _row(camp, "P2")["SubmitLine"]
    assert f"--dependency=afterany:{camp.jobs['P1']}" in sub and "%x-%j.out" in sub
    assert camp.elapsed_s < 150, "keep the real-Slurm suite under 5 minutes"


def test_runs_span_ids_and_names(camp: Campaign2) -> None:
    assert sorted(r["run"] for r in camp.analysis["runs"]) == sorted(ROLES)
    for run, roles in ROLES.items():
        got = [a["attempt"] for a in camp.run(run)["attempts"]]
        assert got == [camp.attempt_id(r) for r in roles], run
    links = {a["attempt"]: a["run_link"]["method"] for a in camp.run(CHAIN)["attempts"]}
    assert links == {camp.jobs["P1"]: "name", camp.jobs["P2"]: "dependency",
                     camp.jobs["P3"]: "dependency"}


@pytest.mark.parametrize("role", [r for rs in ROLES.values() for r in rs if r != "T#0"])
def test_output_linked_with_its_method(camp: Campaign2, role: str) -> None:
    a = camp.attempt(role)
    files = {PurePath(o["file"]).name: o["method"] for o in a["outputs"]}
    job = camp.jobs[role.partition("#")[0]]
    if role.startswith("P"):
        name = _row(camp, role)["JobName"]
        assert files == {f"{name}-{job}.out": "path", f"{name}-{job}.err": "path"}
    elif role.startswith("A"):
        assert files == {f"{job}.out": "path"}
    elif role.startswith("T"):
        assert files == {f"{job}.log": "path"}
    else:  # torchrun: the launcher's %x-%j.out by id, the rank logs by name and time
        ranks = [o for o in a["outputs"] if "/attempt_0/" in o["file"]]
        assert files[f"{TORCH}-{job}.out"] == "path"
        assert {o["method"] for o in ranks} == {"name"} and len(ranks) == 4
        assert len({str(PurePath(o["file"]).parents[2]) for o in ranks}) == 1


def test_every_output_file_is_linked(camp: Campaign2) -> None:
    con = _db(camp)
    assert con.execute("SELECT file, reason FROM output_unlinked").fetchall() == []
    # the scheduler's own record of the output (scontrol show job StdOut=), real format
    rows = con.execute("SELECT job_id, std_out FROM attempts WHERE source = 'scontrol' "
                       "AND job_id = ?", [camp.jobs["P1"]]).fetchall()
    assert rows and rows[0][1].endswith(f"/c2-part1-{camp.jobs['P1']}.out")
    con.close()


@pytest.mark.parametrize("role", [r for rs in ROLES.values() for r in rs if r != "T#0"])
def test_progress_matches_the_trainers_own_record(camp: Campaign2, role: str) -> None:
    a = camp.attempt(role)
    starts = [t for t in camp.truth(role) if t["event"] == "start"]
    assert len(starts) == 1
    assert a["resumed_from"] == starts[0]["iteration"]
    logged = camp.logged(role, LOG_EVERY)  # every rank's (the chain's ranks both print)
    if STATE[role] == "COMPLETED":
        assert a["last_iteration"] == max(logged)
    else:
        assert a["last_iteration"] <= max(logged)
        assert a["last_iteration"] >= max(logged) - 2 * LOG_EVERY


@pytest.mark.parametrize("run", list(ROLES))
def test_run_totals(camp: Campaign2, run: str) -> None:
    r = camp.run(run)
    assert r["final_iteration"] == ITERS[run] and r["iterations_net"] == ITERS[run]
    assert r["ideal_step_s"] == pytest.approx(ITER_MS / 1000.0, rel=0.1)
    assert abs(sum(r["components"].values()) - r["t_obs_s"]) <= 1e-6 * r["t_obs_s"]
    assert r["tor"] is not None and r["tor"] > 0
    assert r["dropped_progress_lines"] == 0


def test_labelled_ranks_count_each_iteration_once(camp: Campaign2) -> None:
    """Both ranks print every line under srun --label (0: ..., 1: ...)."""
    text = (camp.logs / "out" / f"c2-part3-{camp.jobs['P3']}.out").read_text()
    assert "0:  [" in text and "1:  [" in text
    r = camp.run(CHAIN)
    assert r["t_opt_s"] == pytest.approx(ITERS[CHAIN] * r["ideal_step_s"], rel=1e-9)


@pytest.mark.parametrize("role", list(CATEGORY))
def test_root_cause(camp: Campaign2, role: str) -> None:
    i = camp.interruption(role)
    assert i["category"] == CATEGORY[role], i["cause"]


@pytest.mark.parametrize("role", ["P1", "P2", "A0", "A1", "R1"])
def test_lost_work_is_the_rolled_back_iterations(camp: Campaign2, role: str) -> None:
    run = next(r for r, rs in ROLES.items() if role in rs)
    roles = ROLES[run]
    a, nxt = camp.attempt(role), camp.attempt(roles[roles.index(role) + 1])
    rolled = a["last_iteration"] - nxt["resumed_from"]
    r = camp.run(run)
    i = camp.interruption(role)
    # one-second stamps (the span of the rolled-back lines is off by up to 1 s) and t*'s
    # own error over the rolled-back steps; plus the expected unseen step after the last line
    # (log interval 2)
    assert i["lost_s"] == pytest.approx(rolled * r["ideal_step_s"] + i["lost_estimated_s"],
                                        abs=1.0 + 0.02 * rolled * r["ideal_step_s"] + 0.1)


def test_truncated_output_is_said_and_estimated(camp: Campaign2) -> None:
    r = camp.run(TRUNC)
    w = [x for x in camp.analysis["warnings"] if x["code"] == "truncated_output"]
    assert len(w) == 1 and w[0]["attempt"] == camp.attempt_id("T#0")
    assert r["fidelity"] == "incomplete"
    first = camp.attempt("T#0")
    assert first["outputs"] == [] and first["last_iteration"] is None
    loaded = camp.attempt("T#1")["resumed_from"]
    assert loaded == SAVE_EVERY
    # what the checkpoint says: the first execution trained 0 -> 20 (estimated compute)
    assert first["estimated_compute_s"] == pytest.approx(loaded * r["ideal_step_s"], rel=1e-6)
    assert r["estimated"]["compute_s"] == first["estimated_compute_s"]
    assert r["t_opt_s"] == pytest.approx(ITERS[TRUNC] * r["ideal_step_s"], rel=1e-9)
    assert r["components"]["slow"] > -2.0


def test_only_the_truncation_is_warned(camp: Campaign2) -> None:
    assert sorted(w["code"] for w in camp.analysis["warnings"]) == ["truncated_output"]
    fid = {r["run"]: r["fidelity"] for r in camp.analysis["runs"]}
    assert fid == {CHAIN: "scheduler", ARRAY: "scheduler", TORCH: "scheduler",
                   TRUNC: "incomplete"}
    assert camp.warnings == []


def _attempt_nodes(camp: Campaign2, role: str) -> list[Any]:
    return list(camp.attempt(role)["nodes"])


def test_chain_runs_on_both_nodes(camp: Campaign2) -> None:
    assert _attempt_nodes(camp, "P1") == ["tmn1", "tmn2"]
