"""The Kubernetes flavour of ``tormortem simulate``: byte determinism, the same campaign as the
Slurm flavour, every record/line read by the project's parsers, and truth attempts named as
parsers/k8s_pod.py names pod incarnations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from parsers.reader import expand_inputs
from pipeline.cli.simulate import simulate
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate as run_simulate
from pipeline.simulate.truth import component_sum

ITER = 3000  #: a short campaign (a day, a few interruptions) keeps the tests fast


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _k8s(out: Path, seed: int = 7) -> dict[str, Any]:
    return run_simulate(presets.get("demo"), seed, out, Settings(log_interval=10),
                        target_iterations=ITER, flavour="k8s")


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], Path]:
    base = tmp_path_factory.mktemp("k8s")
    doc = _k8s(base / "logs")
    ingest(expand_inputs([str(base / "logs")]), base / "db")
    return base / "logs", doc, base / "db" / "tormortem.duckdb"


def _accounting(db: Path) -> dict[str, tuple[int, int]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.sql("select source, sum(read), sum(unparsed) from line_accounting "
                       "group by source").fetchall()
    finally:
        con.close()
    return {s: (int(r), int(u)) for s, r, u in rows}


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    _k8s(tmp_path / "a", 11)
    _k8s(tmp_path / "b", 11)
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a.keys() == b.keys() and a == b
    assert {"k8s/events.json", "k8s/pods.json", "k8s/pytorchjob.json", "truth.json",
            "params.json", "pods/llama-pretrain-master-0/llama-pretrain-master-0.log"} <= set(a)
    _k8s(tmp_path / "c", 12)
    assert _files(tmp_path / "c") != a


def test_same_campaign_as_slurm(tmp_path: Path, campaign: tuple[Path, dict[str, Any], Path]
                                ) -> None:
    _, doc, _ = campaign
    slurm = run_simulate(presets.get("demo"), 7, tmp_path / "s", Settings(log_interval=10),
                         target_iterations=ITER)
    k, s = doc["runs"][0], slurm["runs"][0]
    assert k["components"] == s["components"]
    assert abs(component_sum(k) - k["t_obs_s"]) <= 1e-6 * k["t_obs_s"]
    assert doc["generator"]["flavour"] == "k8s"
    assert len(k["attempts"]) > 2  # the campaign has interruptions to show


def test_k8s_records_and_kernel_fully_parsed(campaign: tuple[Path, dict[str, Any], Path]
                                             ) -> None:
    _, _, db = campaign
    acc = _accounting(db)
    for src in ("k8s_events_json", "k8s_pod", "pytorchjob", "kernel"):
        assert src in acc and acc[src][0] > 0, (src, acc)
        assert acc[src][1] == 0, (src, acc)
    assert "unknown" not in acc


def test_pod_log_fully_parsed(campaign: tuple[Path, dict[str, Any], Path]) -> None:
    """kubectl's stamp is followed by one space; the line's own indentation (timer blocks,
    tracebacks) must survive the prefix stripping."""
    _, _, db = campaign
    read, unparsed = _accounting(db)["joblog"]
    assert read > 0 and unparsed == 0


def test_full_demo_pod_log_ingests(tmp_path: Path) -> None:
    run_simulate(presets.get("demo"), 7, tmp_path / "logs", Settings(log_interval=1),
                 flavour="k8s")
    ingest(expand_inputs([str(tmp_path / "logs")]), tmp_path / "db")
    read, unparsed = _accounting(tmp_path / "db" / "tormortem.duckdb")["joblog"]
    assert read > 4096 and unparsed == 0


def test_pod_attempts_in_attempts_table(campaign: tuple[Path, dict[str, Any], Path]) -> None:
    logs, doc, db = campaign
    con = duckdb.connect(str(db), read_only=True)
    try:
        ids = {r[0] for r in con.sql("select job_id from attempts where source = 'k8s_pod'")
               .fetchall()}
    finally:
        con.close()
    pods = json.loads((logs / "k8s" / "pods.json").read_text())["items"]
    m0 = next(p for p in pods if p["metadata"]["name"] == "llama-pretrain-master-0")
    uid = m0["metadata"]["uid"]
    rc = m0["status"]["containerStatuses"][0]["restartCount"]
    names = [a["attempt"] for a in doc["runs"][0]["attempts"]]
    # Kubernetes keeps the current and the last termination: those incarnations are attempts
    known = [n for n in names if n.split("#")[0] == uid and int(n.split("#")[1]) >= rc - 1]
    assert known and names[-1] == f"{uid}#{rc}"
    assert set(known) <= ids
    assert all(a["job_id"] == a["attempt"] for a in doc["runs"][0]["attempts"])


def test_cli_flavour(tmp_path: Path) -> None:
    res = CliRunner().invoke(simulate, ["--preset", "demo", "--seed", "3", "--flavour", "k8s",
                                        "--iterations", "500", "--out", str(tmp_path / "k")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "k" / "k8s" / "events.json").is_file()
    assert not (tmp_path / "k" / "slurm").exists()
    res = CliRunner().invoke(simulate, ["--preset", "demo", "--flavour", "pbs", "--out",
                                        str(tmp_path / "p")])
    assert res.exit_code == 2
