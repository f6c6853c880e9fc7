"""Job output and scheduler records written in different zones.

Megatron's stamps are the nodes' local time with no zone; ``sacct`` prints the zone of the
shell it ran in (TZ), ``sacct --json`` and pod status UTC. The simulated demo campaign with its
job output two hours ahead of sacct gave no TOR, and warnings that blamed unlinked output and
missing attempts. The offset is now found (each job's first and last progress stamps against
its executions, shifted by multiples of 15 min) and said, and TOR stays undefined.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate

_STAMP = re.compile(r"(\d{4}-\d\d-\d\d)([ T])(\d\d:\d\d:\d\d)")


def _later(m: re.Match[str]) -> str:
    t = datetime.strptime(f"{m.group(1)} {m.group(3)}", "%Y-%m-%d %H:%M:%S")
    return (t + timedelta(hours=2)).strftime(f"%Y-%m-%d{m.group(2)}%H:%M:%S")


def _analyze(logs: Path, out: Path) -> dict[str, Any]:
    ingest(expand_inputs([str(logs)]), out)
    return analyze_db(out / "tormortem.duckdb")


def test_output_two_hours_off_its_records_is_said(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 7, logs, Settings(log_interval=1))
    assert not [w for w in _analyze(logs, tmp_path / "a")["warnings"]
                if w["code"] == "output_timezone"]
    for f in (logs / "jobs").glob("*.out"):
        f.write_text(_STAMP.sub(_later, f.read_text()))
    got = _analyze(logs, tmp_path / "b")
    w = [w for w in got["warnings"] if w["code"] == "output_timezone"]
    assert len(w) == 1 and "moved by -2 h" in w[0]["message"]
    assert got["runs"][0]["tor"] is None
    assert "hours off" in got["runs"][0]["tor_undefined"]
