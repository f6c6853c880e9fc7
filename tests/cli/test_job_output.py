"""``analyze --job-output PATTERN``: a pattern that is none (empty, a directory, an unknown
``%`` field) is a usage error; one that matches no job output file, or that there are no
scheduler records to expand, is a warning on stderr -- all were ignored without a word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.analyze.slurmpat import pattern_problem
from tests.cli.conftest import DEMO, invoke

FIELDS = ("Slurm's are %x name, %j job id, %A/%a array job/task, %J job.step, %N host, "
          "%n node index, %s step, %t task, %u user, %% a percent sign")


@pytest.mark.parametrize(("pattern", "problem"), [
    ("", "empty; give how the job output files are named, e.g. 'logs/%x-%j.out'"),
    ("  ", "empty; give how the job output files are named, e.g. 'logs/%x-%j.out'"),
    ("%q%z", f"'%q%z': unknown field %q, %z; {FIELDS}"),
    ("logs/%j.out%", f"'logs/%j.out%': unknown field % at the end; {FIELDS}"),
    ("logs/", "'logs/' names a directory; end it with the file name, e.g. 'logs/%x-%j.out'"),
    ("logs/%x-%j.out", None), ("%A_%4a.%%", None), ("slurm-%J.log", None),
    ("plain.log", None), ("logs/\\%q.out", None),  # a backslash: taken as written (Slurm)
])
def test_pattern_problems(pattern: str, problem: str | None) -> None:
    assert pattern_problem(pattern) == problem


def test_a_bad_pattern_is_a_usage_error() -> None:
    r = invoke("analyze", str(DEMO), "--out", "/tmp/tm-nope", "--job-output", "%q%z")
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == f"Error: Invalid value for '--job-output': " \
                                        f"'%q%z': unknown field %q, %z; {FIELDS}"


def test_a_pattern_that_matches_nothing_is_warned(tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = invoke("analyze", str(DEMO), "--out", str(out), "-q", "--job-output", "nomatch/%j.log",
               "--job-output", "jobs/slurm-%j.out")
    assert r.exit_code == 0, r.output
    assert r.stderr == (
        "warning: --job-output 'nomatch/%j.log' matched 0 job output files, so the output was "
        f"linked from evidence; compare it with their paths (tormortem sql {out} \"SELECT "
        "file, method FROM output_links\")\n")
    doc = json.loads((out / "analysis.json").read_text())
    jobs = len(list((DEMO / "jobs").iterdir()))
    assert doc["job_output"] == [{"pattern": "nomatch/%j.log", "files": 0},
                                 {"pattern": "jobs/slurm-%j.out", "files": jobs}]
    # --strict fails on it, as on a data-quality warning (the README pairs them)
    r = invoke("analyze", str(DEMO), "--out", str(out), "-q", "--job-output", "nomatch/%j.log",
               "--strict")
    assert r.exit_code == 1
    assert r.stderr.splitlines()[-1] == ("Error: --strict: 1 --job-output pattern(s) matched no "
                                         "job output file (the warning above)")


def test_a_pattern_without_scheduler_records_is_warned(tmp_path: Path) -> None:
    r = invoke("analyze", str(DEMO / "jobs"), "--out", str(tmp_path / "o"), "-q",
               "--job-output", "slurm-%j.out")
    assert r.exit_code == 0, r.output
    assert r.stderr == ("warning: --job-output 'slurm-%j.out' was not used: the logs hold no "
                        "scheduler records (Slurm) whose jobs it could name\n")
