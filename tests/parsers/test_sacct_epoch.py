"""sacct under ``SLURM_TIME_FORMAT=%s`` (src/common/parse_time.c slurm_make_time_str: the
variable is an strftime format; ``%s`` prints seconds since the epoch): Start/End were not
read, and the file was called cut (fault probe M2). Read as the ISO form of the same times."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from parsers.driver import parse_text
from parsers.sacct import SacctTextParser

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"


def _epoch(text: str) -> str:
    return str(int(datetime.fromisoformat(text + "+00:00").timestamp()))


def test_epoch_seconds_read_as_the_iso_times() -> None:
    rows = (DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:6]
    cols = rows[0].split("|")
    at = [cols.index(k) for k in ("Submit", "Start", "End")]
    epoch = [rows[0]]
    for r in rows[1:]:
        f = r.split("|")
        for i in at:
            f[i] = _epoch(f[i])
        epoch.append("|".join(f))
    _e, want, acct_w = parse_text(SacctTextParser, "\n".join(rows) + "\n")
    _e, got, acct_g = parse_text(SacctTextParser, "\n".join(epoch) + "\n")
    assert got.select(["job_id", "submit", "start", "end", "state"]).to_pylist() == \
        want.select(["job_id", "submit", "start", "end", "state"]).to_pylist()
    assert acct_g.unparsed == acct_w.unparsed == 0 and len(got) == 5
