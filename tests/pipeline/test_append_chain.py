"""A chain of jobs appending to one output file (``--output=logs/%x.out --open-mode=append``).

Slurm writes its ``*** JOB N ON host CANCELLED AT ... ***`` banner (slurmstepd,
src/slurmd/slurmstepd/req.c) only for the jobs it cancels, so the file names 4 of the demo
campaign's 19 jobs (seed 11): the file was linked to those alone, and 15 attempts had "no
output" (TOR undefined). Without banners, a job kept the file only if it held 2% of its
lines, and 4 short jobs were dropped (lost work 17,625 s for a true 21,671 s, no word). Jobs
that ran one after another now keep the file from 3 lines of their own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate

_BANNER = re.compile(r"^slurmstepd: error: \*\*\* JOB \d+ ON .*\*\*\*$", re.MULTILINE)


@pytest.mark.parametrize("banners", [True, False])
def test_one_file_for_the_whole_chain(tmp_path: Path, banners: bool) -> None:
    logs = tmp_path / "logs"
    truth = simulate(presets.get("demo"), 11, logs, Settings(log_interval=1))["runs"][0]
    outs = sorted((logs / "jobs").glob("slurm-*.out"), key=lambda p: int(p.stem[6:]))
    text = "".join(p.read_text() for p in outs)
    assert len(_BANNER.findall(text)) < len(outs) / 2
    if not banners:
        text = _BANNER.sub("", text)
    for p in outs:
        p.unlink()
    (logs / "llama-pretrain.out").write_text(text)
    ingest(expand_inputs([str(logs)]), tmp_path / "out")
    got = analyze_db(tmp_path / "out" / "tormortem.duckdb")
    run = got["runs"][0]
    assert run["tor"] is not None and abs(run["tor"] - truth["tor"]) < 1e-3
    assert abs(run["components"]["lost"] - truth["components"]["lost"]) < 1e-3 * run["t_obs_s"]
