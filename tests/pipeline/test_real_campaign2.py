"""What the second real-Slurm campaign left behind (tests/data/real_slurm/campaign2: collected
from a run of tests/integration/campaign2.py on Slurm 22.05 -- job output trees, sacct text
with SubmitLine and WorkDir, ``scontrol show job``, slurmctld/slurmd logs, and the trainer's
own record in truth/), analysed without a Slurm: every output layout linked with the right
method, runs across ids and names, resume points against the trainer's record, the
truncation warned. The same checks run on a fresh campaign under ``pytest -m slurm``.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePath
from typing import Any

import pytest

from parsers.reader import expand_inputs
from parsers.scontrol import ScontrolJobParser
from pipeline.analyze.run import analyze_db
from pipeline.analyze.slurmpat import JobNames, dependency_ids, path_regex, submit_options
from pipeline.ingest.run import ingest
from tests.parsers.util import parse

DATA = Path(__file__).resolve().parents[1] / "data" / "real_slurm" / "campaign2"
ROLES = json.loads((DATA / "roles.json").read_text())["roles"]
RAW = json.loads((DATA / "roles.json").read_text())["raw"]


@pytest.fixture(scope="module")
def doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("c2") / "out"
    ingest(expand_inputs([str(DATA / "out"), str(DATA / "slurm")]), out)
    return analyze_db(out / "tormortem.duckdb")


def _attempts(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["attempt"]: a for r in doc["runs"] for a in r["attempts"]}


def _truth(job: str, restart: int = 0) -> list[dict[str, Any]]:
    recs = []
    for f in (DATA / "truth").glob(f"{RAW[job]}*.jsonl"):
        recs += [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    return [r for r in recs if r["restart"] == restart]


def test_runs_and_how_they_were_linked(doc: dict[str, Any]) -> None:
    runs = {r["run"]: [a["attempt"] for a in r["attempts"]] for r in doc["runs"]}
    t = ROLES["T"]
    assert runs == {"c2-part1": [ROLES["P1"], ROLES["P2"], ROLES["P3"]],
                    "c2-array": [ROLES["A0"], ROLES["A1"], ROLES["A2"]],
                    "c2-trunc": [f"{t}#0", f"{t}#1"], "c2-torchrun": [ROLES["R1"], ROLES["R2"]]}
    how = {a["attempt"]: a["run_link"]["method"] for a in _attempts(doc).values()}
    assert how[ROLES["P2"]] == how[ROLES["P3"]] == "dependency"


def test_every_layout_linked(doc: dict[str, Any]) -> None:
    atts = _attempts(doc)

    def names(role: str) -> dict[str, str]:
        return {PurePath(o["file"]).name: o["method"] for o in atts[role]["outputs"]}

    assert names(ROLES["P1"]) == {f"c2-part1-{ROLES['P1']}.out": "path",
                                  f"c2-part1-{ROLES['P1']}.err": "path"}
    assert names(ROLES["A1"]) == {f"{ROLES['A1']}.out": "path"}  # logs/%x/%A_%a.out
    assert names(f"{ROLES['T']}#1") == {f"{ROLES['T']}.log": "path"}
    ranks = [o for o in atts[ROLES["R2"]]["outputs"] if "/attempt_0/" in o["file"]]
    assert len(ranks) == 4 and {o["method"] for o in ranks} == {"name"}


@pytest.mark.parametrize("role", ["P1", "P2", "P3", "A0", "A1", "A2", "R1", "R2"])
def test_resume_points_are_the_trainers(doc: dict[str, Any], role: str) -> None:
    starts = [t["iteration"] for t in _truth(ROLES[role]) if t["event"] == "start"]
    assert _attempts(doc)[ROLES[role]]["resumed_from"] == starts[0]


def test_truncated_output(doc: dict[str, Any]) -> None:
    assert [w["code"] for w in doc["warnings"]] == ["truncated_output"]
    first = _attempts(doc)[f"{ROLES['T']}#0"]
    run = next(r for r in doc["runs"] if r["run"] == "c2-trunc")
    assert first["estimated_compute_s"] == pytest.approx(20 * run["ideal_step_s"])
    assert run["final_iteration"] == 50 and run["fidelity"] == "incomplete"


def test_scontrol_show_job_records() -> None:
    text = (DATA / "slurm" / "scontrol_show_job.txt").read_text()
    _, records, acct = parse(ScontrolJobParser, text, "scontrol_show_job.txt")
    assert acct.unparsed == 0
    by = {r["job_id"]: r for r in records}
    p1 = by[ROLES["P1"]]
    assert p1["std_out"].endswith(f"/c2-part1-{ROLES['P1']}.out")
    assert p1["std_err"].endswith(f"/c2-part1-{ROLES['P1']}.err")
    assert p1["nodes"] == ["tmn1", "tmn2"] and p1["state"] == "FAILED"
    task = by[ROLES["A2"]]  # an array task: job id as sacct prints it, its own id kept
    assert task["job_id_raw"] == RAW[ROLES["A2"]] and task["std_out"].endswith(
        f"/logs/c2-array/{ROLES['A2']}.out")


def test_submit_lines_and_patterns() -> None:
    import csv

    text = (DATA / "slurm" / "sacct.psv").read_text().splitlines()
    rows = {r["JobID"]: r for r in csv.DictReader(text, delimiter="|")}
    opts = submit_options(rows[ROLES["P2"]]["SubmitLine"])
    assert dependency_ids(opts["dependency"]) == [ROLES["P1"]]
    assert opts["output"].endswith("/%x-%j.out") and opts["open_mode"] == "append"
    a = submit_options(rows[ROLES["A0"]]["SubmitLine"])
    assert a["array"] == "0-2%1"
    rx = path_regex(a["output"], JobNames(ROLES["A0"], RAW[ROLES["A0"]], "c2-array"))
    assert rx.search(f"/elsewhere/logs/c2-array/{ROLES['A0']}.out")
    assert not rx.search(f"/elsewhere/logs/c2-array/{ROLES['A1']}.out")
    t = submit_options(rows[ROLES["T"]]["SubmitLine"])
    assert t["open_mode"] == "truncate"
    assert path_regex(t["output"], JobNames(ROLES["T"], ROLES["T"], "c2-trunc")).search(
        f"x/{ROLES['T']}.log")
