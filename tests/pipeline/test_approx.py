"""What is inferred is marked: ``approx`` fields, the undefined TOR, the node's provenance.

Same demo campaign, three views: all logs; the job output alone (attempts cut from it, the
node only from Slurm's banner or the symptoms); the scheduler logs alone (no progress)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.report.analysis_text import render

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"


def _analyze(tmp: Path, sub: str) -> dict[str, Any]:
    out = tmp / sub.replace("/", "_")
    ingest(expand_inputs([str(DEMO / sub) if sub else str(DEMO)]), out)
    return analyze_db(out / "tormortem.duckdb")


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("approx")
    return {"all": _analyze(tmp, ""), "jobs": _analyze(tmp, "jobs"),
            "slurm": _analyze(tmp, "slurm")}


def test_all_logs_nothing_inferred_but_symptom_nodes(views: dict[str, Any]) -> None:
    r = views["all"]["runs"][0]
    assert r["approx"] == {}
    assert all(a["approx"] == {} for a in r["attempts"])
    by = {i["attempt"]: i for i in r["interruptions"]}
    # node-level evidence names the failed node; the job banner's batch host does not count
    assert by["1024#0"]["node"] == "node002" and by["1024#0"]["node_from"] == "node_evidence"
    assert by["1024#0"]["node_where"].endswith("slurmctld.log:41")
    assert "node" not in by["1024#0"]["approx"]
    # an NCCL watchdog timeout names no host: the first failing rank's host, marked as such
    assert by["1020"]["node"] == "node005" and by["1020"]["node_from"] == "symptoms"
    assert "first failing rank" in by["1020"]["approx"]["node"]
    # its watchdog line carries no stamp of its own
    assert "previous line" in by["1020"]["approx"]["cause_ts"]


def test_job_output_alone_marks_boundaries_and_banner_nodes(views: dict[str, Any]) -> None:
    r = views["jobs"]["runs"][0]
    assert {"startup", "repair", "hang", "tail"} <= set(r["approx"])
    assert "first and last lines of its output" in r["approx"]["repair"]
    assert "t_opt" not in r["approx"] and r["tor"] is not None
    by = {i["attempt"]: i for i in r["interruptions"]}
    # the banner '*** JOB 1001 ON node001 ...' names the batch host (truth: node006)
    assert by["1001"]["node"] == "node001" and by["1001"]["node_from"] == "banner"
    assert "batch host" in by["1001"]["approx"]["node"]
    text = render(views["jobs"])
    assert "~node001" in text and "~ approximate (inferred, not read from the logs):" in text
    assert "startup (init, load)            ~1.5" in text


def test_no_progress_tor_undefined_never_zero(views: dict[str, Any]) -> None:
    r = views["slurm"]["runs"][0]
    assert r["tor"] is None and r["tor_undefined"].startswith("no progress lines")
    assert r["ideal_step_s"] is None
    assert {"t_opt", "slow", "lost", "ckpt_save"} <= set(r["approx"])
    json.dumps(views["slurm"], allow_nan=False)  # no NaN anywhere
    text = render(views["slurm"])
    assert "TOR undefined (no progress lines linked to its attempts)" in text
    assert "TOR 0" not in text and "nan" not in text


def test_no_progress_unmeasurable_components_are_null_not_zero(
        views: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    """Without t* the ideal work, slowness, lost work and saves are unknown: null in the JSON
    (a 0 would be a number computed from missing data); the measured rest still makes T_obs."""
    r = views["slurm"]["runs"][0]
    c = r["components"]
    assert r["t_opt_s"] is None
    assert [k for k, v in c.items() if v is None] == ["t_opt", "slow", "lost", "ckpt_save"]
    assert c["repair"] > 0 and c["startup"] > 0
    assert sum(v for v in c.values() if v is not None) == pytest.approx(r["t_obs_s"], rel=1e-12)
    assert r["slow_split"] == {"fail_slow_episodes": None, "jitter": None}
    text = render(views["slurm"])
    assert "T_opt ~unknown" in text and "~unknown" in text.split("checkpoint saves")[1][:40]
    assert f"{r['t_obs_s']:,.1f}" in text.split("total (= T_obs)")[1][:40]
    # the tables say NULL, not 0
    db = next(tmp_path_factory.getbasetemp().glob("approx*/slurm/tormortem.duckdb"))
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT component, seconds, share FROM decomposition "
                           "WHERE seconds IS NULL ORDER BY component").fetchall()
        opt = con.execute("SELECT t_opt_s FROM runs").fetchall()
    assert rows == [(k, None, None) for k in sorted(["t_opt", "slow", "lost", "ckpt_save"])]
    assert opt == [(None,)]


def test_no_node_is_not_printed_as_none() -> None:
    """An interruption whose symptoms name no node printed 'node None from the symptom at
    ...' and an approx note about it (fault probe, sacct without End)."""
    from pipeline.analyze.approx import interruption_approx
    from pipeline.report.analysis_text import _cause

    i = {"node": None, "node_from": "symptoms", "node_where": "a.log:3",
         "cause": {"kind": "nccl_timeout", "code": "ALLREDUCE", "where": "a.log:3",
                   "message": "Watchdog caught collective operation timeout"}}
    assert "None" not in _cause(i)
    assert "node" not in interruption_approx(None, None)
