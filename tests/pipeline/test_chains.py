"""Runs across job ids and names (pipeline/analyze/chains.py) on hand-built tables: what
merges two runs, and what must not.

Messages are Megatron-LM's checkpoint lines as parsers/megatron.py reads them
(megatron/training/checkpointing.py: ``saving checkpoint at iteration {:7d} to {dir} in
torch_dist format``, `` loading checkpoint from {dir} at iteration {n}``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pytest

from pipeline.analyze.chains import assign_runs

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def _db(jobs: list[dict[str, Any]]) -> duckdb.DuckDBPyConnection:
    """jobs: job_id, name, start/end (minutes), saves [(it, dir)], load (it, dir), first
    iteration, submit line."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE TABLE attempts_linked (attempt VARCHAR, job_id VARCHAR, run VARCHAR, "
                "start TIMESTAMPTZ, \"end\" TIMESTAMPTZ, source VARCHAR)")
    con.execute("CREATE TABLE run_map (job_id VARCHAR, run VARCHAR)")
    con.execute("CREATE TABLE attempts (job_id VARCHAR, submit_line VARCHAR, "
                "dependency VARCHAR)")
    con.execute("CREATE TABLE attempt_events (attempt VARCHAR, run VARCHAR, ts TIMESTAMPTZ, "
                "kind VARCHAR, iteration BIGINT, file VARCHAR, line_no BIGINT)")
    con.execute("CREATE TABLE events (file VARCHAR, line_no BIGINT, kind VARCHAR, "
                "message VARCHAR)")
    for j in jobs:
        s, e = T0 + timedelta(minutes=j["start"]), T0 + timedelta(minutes=j["end"])
        con.execute("INSERT INTO attempts_linked VALUES (?, ?, ?, ?, ?, 'sacct')",
                    [j["job_id"], j["job_id"], j["name"], s, e])
        con.execute("INSERT INTO attempts VALUES (?, ?, NULL)", [j["job_id"], j.get("submit")])
        f = f"{j['job_id']}.out"
        lines: list[tuple[str, int | None, str | None]] = []
        if "load" in j:
            it, d = j["load"]
            lines.append(("ckpt_load", it, f" loading checkpoint from {d} at iteration {it}"))
        first = j.get("first", 1)
        lines.append(("iteration", first, None))
        for it, d in j.get("saves", []):
            lines.append(("ckpt_save_start", it,
                          f"saving checkpoint at iteration {it:7d} to {d} in torch_dist format"))
        for n, (kind, it, msg) in enumerate(lines, start=1):
            con.execute("INSERT INTO attempt_events VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [j["job_id"], j["name"], s + timedelta(seconds=n), kind, it, f, n])
            con.execute("INSERT INTO events VALUES (?, ?, ?, ?)", [f, n, kind, msg])
    return con


def _runs(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, str]]:
    assign_runs(con)
    return {a: (r, m) for a, r, m in con.execute(
        "SELECT attempt, run, method FROM run_links ORDER BY attempt").fetchall()}


def test_renamed_resubmission_joins_by_checkpoint() -> None:
    con = _db([
        {"job_id": "10", "name": "gpt-part1", "start": 0, "end": 60,
         "saves": [(100, "/ckpt/gpt")]},
        {"job_id": "11", "name": "gpt-part2", "start": 61, "end": 120,
         "load": (100, "/ckpt/gpt"), "first": 101},
    ])
    assert _runs(con) == {"10": ("gpt-part1", "name"), "11": ("gpt-part1", "checkpoint")}


def test_fine_tuning_from_a_checkpoint_is_another_run() -> None:
    """It loads the pretrained iteration but counts from 1 again and saves elsewhere."""
    con = _db([
        {"job_id": "10", "name": "pretrain", "start": 0, "end": 60,
         "saves": [(100, "/ckpt/gpt")]},
        {"job_id": "11", "name": "finetune", "start": 61, "end": 120,
         "load": (100, "/ckpt/gpt"), "first": 1, "saves": [(50, "/ckpt/ft")]},
    ])
    assert {r for r, _ in _runs(con).values()} == {"pretrain", "finetune"}


def test_dependency_chain() -> None:
    con = _db([
        {"job_id": "10", "name": "a", "start": 0, "end": 60},
        {"job_id": "11", "name": "b", "start": 61, "end": 120,
         "submit": "sbatch --dependency=afterany:10 -J b train.sh"},
    ])
    assert _runs(con)["11"] == ("a", "dependency")


def test_runs_side_by_side_never_merge() -> None:
    """Same save directory, but running at the same time: not one chain."""
    con = _db([
        {"job_id": "10", "name": "a", "start": 0, "end": 60, "saves": [(100, "/ckpt/x")]},
        {"job_id": "11", "name": "b", "start": 5, "end": 65, "saves": [(100, "/ckpt/x")]},
    ])
    assert {r for r, _ in _runs(con).values()} == {"a", "b"}


@pytest.mark.parametrize(("parallel", "runs"), [
    (True, {"sweep_0", "sweep_1", "sweep_2"}), (False, {"sweep"})])
def test_array_tasks(parallel: bool, runs: set[str]) -> None:
    """--array=0-2 (side by side: three runs) and --array=0-2%1 (one after another)."""
    jobs = [{"job_id": f"7_{k}", "name": "sweep", "start": 0 if parallel else 61 * k,
             "end": 60 if parallel else 61 * k + 60} for k in range(3)]
    assert {r for r, _ in _runs(_db(jobs)).values()} == runs
