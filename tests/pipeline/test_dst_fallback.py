"""A run through the night daylight saving time ends, its stamps local (Europe/Berlin, read
with ``--tz``): the same answers as the same run stamped in UTC. Before ``parsers/dstfold.py``
the stamps of the repeated hour were read as its first pass: job output an hour early, and
sacct's End of a job that ended in the second pass before its Start (fault probe E6: TOR
undefined with advice to run ``sacct --duplicates``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.cli.conftest import analysis

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"
BERLIN = ZoneInfo("Europe/Berlin")
#: the demo's jobs 1001-1002 moved from 2024-05-01 to the night of 2024-10-27, when Berlin's
#: clocks go back at 01:00 UTC (03:00 CEST -> 02:00 CET): job 1002 runs 00:49-01:38 UTC, so
#: it starts in the first pass of the repeated hour and ends in the second
MOVE = datetime(2024, 10, 27, tzinfo=UTC) - datetime(2024, 5, 1, tzinfo=UTC)
STAMP = re.compile(r"(\d{4}-\d\d-\d\d)([T ])(\d\d:\d\d:\d\d)")


def _moved(text: str, local: bool) -> str:
    def one(m: re.Match[str]) -> str:
        t = datetime.fromisoformat(f"{m.group(1)}T{m.group(3)}").replace(tzinfo=UTC) + MOVE
        if local:
            t = t.astimezone(BERLIN)
        return t.strftime(f"%Y-%m-%d{m.group(2)}%H:%M:%S")
    return STAMP.sub(one, text)


def _campaign(root: Path, local: bool) -> Path:
    (root / "jobs").mkdir(parents=True)
    rows = (DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:3]  # header, 1001, 1002
    (root / "sacct.txt").write_text(_moved("\n".join(rows) + "\n", local))
    for job in ("1001", "1002"):
        text = (DEMO / "jobs" / f"slurm-{job}.out").read_text()
        (root / "jobs" / f"slurm-{job}.out").write_text(_moved(text, local))
    return root


def _out(root: Path) -> tuple[Path, Path]:
    return root, root.parent / (root.name + "-out")


def test_a_run_through_the_repeated_hour_reads_as_in_utc(tmp_path: Path) -> None:
    local = _campaign(tmp_path / "berlin", local=True)
    sacct = (local / "sacct.txt").read_text()
    # job 1002 starts at 02:49:07 CEST and ends at 02:38:45 CET: its End reads before its Start
    assert "|2024-10-27T02:49:07|2024-10-27T02:38:45|00:49:38|" in sacct
    out = (local / "jobs" / "slurm-1002.out").read_text()
    first, second = out.index("[2024-10-27 02:59:"), out.index("[2024-10-27 02:00:")
    assert first < second  # the clocks go back inside the job's output
    want = analysis(*_out(_campaign(tmp_path / "utc", local=False)))
    got = analysis(*_out(local), "--tz", "Europe/Berlin")
    assert [w["code"] for w in got["warnings"]] == [w["code"] for w in want["warnings"]] == []
    for a, b in zip(got["runs"], want["runs"], strict=True):
        assert a["tor"] == pytest.approx(b["tor"], abs=0) and a["tor"] is not None
        for k in ("start", "end", "t_obs_s", "t_opt_s", "components", "final_iteration"):
            assert a[k] == b[k], k
        assert [(i["end"], i["category"], i["node"], i["cost_s"]) for i in a["interruptions"]] \
            == [(i["end"], i["category"], i["node"], i["cost_s"]) for i in b["interruptions"]]
        assert len(a["interruptions"]) == 1


def test_moving_the_demo_by_a_day_less_changes_nothing_either(tmp_path: Path) -> None:
    """The same with no repeated hour inside the run (the day before): the fix moves nothing
    that it should not."""
    global MOVE
    keep = MOVE
    MOVE = keep - timedelta(days=1)
    try:
        want = analysis(*_out(_campaign(tmp_path / "utc", local=False)))
        got = analysis(*_out(_campaign(tmp_path / "berlin", local=True)), "--tz", "Europe/Berlin")
    finally:
        MOVE = keep
    assert got["runs"][0]["tor"] == want["runs"][0]["tor"]
    assert got["runs"][0]["components"] == want["runs"][0]["components"]
