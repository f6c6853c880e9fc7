"""A requeued job's earlier executions missing from the scheduler records.

``sacct`` without ``--duplicates`` lists only the last run of a requeued job (sacct(1):
"--duplicates ... If not specified, only the most recent run is shown"). The simulated demo
campaign (seed 11, job 1001 requeued after a node failure) with such a sacct file gave TOR
0.7961 for a T_obs 41,543 s short, without a word: the first run's 1,552 progress lines in
slurm-1001.out sat before the only execution sacct listed and were dropped. They are a
``missing_executions`` warning now, and the run's TOR is undefined with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate


def _analyze(logs: Path, out: Path) -> dict[str, Any]:
    ingest(expand_inputs([str(logs)]), out)
    return analyze_db(out / "tormortem.duckdb")


def test_sacct_without_duplicates_is_no_silent_tor(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    truth = simulate(presets.get("demo"), 11, logs, Settings(log_interval=1))
    full = _analyze(logs, tmp_path / "a")
    assert not [w for w in full["warnings"]
                if w["code"] in ("missing_executions", "after_executions")]
    assert abs(full["runs"][0]["tor"] - truth["runs"][0]["tor"]) < 1e-3
    sacct = logs / "slurm" / "sacct.txt"
    head, *rows = sacct.read_text().splitlines(keepends=True)
    last = {r.split("|")[0]: r for r in rows}  # what sacct prints without --duplicates
    assert len(last) < len(rows)
    sacct.write_text(head + "".join(last.values()))
    got = _analyze(logs, tmp_path / "b")
    w = [w for w in got["warnings"] if w["code"] == "missing_executions"]
    assert len(w) == 1 and "1001" in w[0]["message"] and w[0]["lines"] > 1000
    # both causes, each with what to do (a clock that stepped back gave only the first: M4)
    assert "run sacct again with --duplicates" in w[0]["message"]
    assert "read both in one zone with --tz" in w[0]["message"]
    run = got["runs"][0]
    assert run["tor"] is None and "first recorded execution" in run["tor_undefined"]


def test_progress_after_the_last_execution_is_no_silent_tor(tmp_path: Path) -> None:
    """The other side: job 1001's output moved a day later than its records (a node clock
    or date that is off, output read in another zone) put ~1,500 of its progress lines after
    its last recorded end; they were dropped and the TOR fell without a word."""
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 11, logs, Settings(log_interval=1))
    out = logs / "jobs" / "slurm-1002.out"
    text = out.read_text()
    assert "[2024-05-01 " in text
    out.write_text(text.replace("[2024-05-01 ", "[2024-05-02 "))
    got = _analyze(logs, tmp_path / "b")
    w = [w for w in got["warnings"] if w["code"] == "after_executions"]
    assert len(w) == 1 and "1002" in w[0]["message"] and w[0]["lines"] > 100
    assert not [w for w in got["warnings"] if w["code"] == "missing_executions"]
    run = got["runs"][0]
    assert run["tor"] is None and "last recorded execution" in run["tor_undefined"]
