"""Attempts with no end in the scheduler records.

``sacct`` prints ``End=Unknown`` for a job still RUNNING (sacct(1): End "... Unknown if the job
has not yet ended"), and a user may print it without the End column. Both made the fit fail
("fitted rates.tail.mean_s: must be >= 0.0, got -14772.0": an open attempt ended at its start,
before its own progress) and nothing was written. A running last attempt now ends at its last
line (TOR as of then, warning ``still_running``); ended attempts with no end time leave the
TOR undefined (warning ``no_end``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.model.outputs import write_rates
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate


def _analyze(logs: Path, out: Path) -> dict[str, Any]:
    ingest(expand_inputs([str(logs)]), out)
    got = analyze_db(out / "tormortem.duckdb")
    write_rates(out, got)  # the step that failed
    return got


def _codes(got: dict[str, Any]) -> set[str]:
    return {w["code"] for w in got["warnings"]}


def test_running_last_job_gives_tor_so_far(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 7, logs, Settings(log_interval=1))
    full = _analyze(logs, tmp_path / "a")
    sacct = logs / "slurm" / "sacct.txt"
    head, *rows = sacct.read_text().splitlines(keepends=True)
    f = rows[-1].split("|")
    job = f[0]
    f[4], f[8] = "RUNNING", "Unknown"  # State, End as sacct prints a running job
    sacct.write_text(head + "".join(rows[:-1]) + "|".join(f))
    out = logs / "jobs" / f"slurm-{job}.out"
    lines = out.read_text().splitlines(keepends=True)
    cut = lines[: len(lines) // 2]  # the job is half way
    out.write_text("".join(cut))
    got = _analyze(logs, tmp_path / "b")
    assert "still_running" in _codes(got) and "no_end" not in _codes(got)
    run, was = got["runs"][0], full["runs"][0]
    assert run["tor"] is not None and 0.5 < run["tor"] < 1.0
    assert abs(sum(run["components"].values()) - run["t_obs_s"]) <= 1e-6 * run["t_obs_s"]
    assert run["t_obs_s"] < was["t_obs_s"]
    stamps = [m.group(0) for m in map(re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d").search,
                                      cut) if m]
    assert run["end"].replace("T", " ").startswith(stamps[-1])


def test_ended_jobs_without_end_times_leave_tor_undefined(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 7, logs, Settings(log_interval=1))
    sacct = logs / "slurm" / "sacct.txt"
    rows = [r.split("|") for r in sacct.read_text().splitlines()]
    sacct.write_text("".join("|".join(r[:8] + r[9:]) + "\n" for r in rows))  # no End column
    got = _analyze(logs, tmp_path / "b")
    assert "no_end" in _codes(got)
    run = got["runs"][0]
    assert run["tor"] is None and "no end time" in run["tor_undefined"]


def test_pods_running_side_by_side_are_not_ended() -> None:
    """A live Kubernetes job's worker pods all run, none with finishedAt: running, not ended;
    an attempt with a final state and no end is ended; the last with no state is running."""
    from pipeline.analyze.decompose import AttemptInput
    from pipeline.analyze.progress import RunInputs
    from pipeline.analyze.quality import ended_unrecorded

    ri = RunInputs("r", attempts=[AttemptInput(a, 0.0, 1.0) for a in ("p0", "p1", "p2", "p3")])
    ri.open_ends = [("p0", "RUNNING", 1.0), ("p1", "FAILED", 1.0), ("p2", "Running", 1.0),
                    ("p3", None, 1.0)]
    assert ended_unrecorded(ri) == ["p1"]
