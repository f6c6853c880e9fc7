"""Kernel logs whose lines cannot be placed in the campaign's time as read.

* RFC 3164 syslog (``May  4 13:01:50 node002 kernel: ...``, rsyslog's
  RSYSLOG_TraditionalFileFormat) has no year; the file's mtime gives it. Copied without their
  times, the demo campaign's (2024) kernel logs landed in the copy's year: its Xids were
  never matched, and seven root causes became the NCCL timeouts they set off, silently. The
  year now comes from the records when the mtime's puts every line outside them.
* Raw ``dmesg`` (``[ 1234.567890] NVRM: Xid ...``) with no line of the host that gives its boot
  time: no wall time; the analysis now says so (``untimed_evidence``).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate

_ISO = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d+\+00:00 ")
_HEAD = re.compile(r"^\S+ node\d+ kernel: ")


def _analyze(logs: Path, out: Path, year: int | None = None) -> dict[str, Any]:
    ingest(expand_inputs([str(logs)]), out, year=year)
    return analyze_db(out / "tormortem.duckdb")


def _causes(got: dict[str, Any]) -> Counter[str]:
    return Counter(i["category"] for i in got["runs"][0]["interruptions"])


def _rewrite(logs: Path, fn: Any) -> None:
    copied = datetime(2026, 12, 1, 9, 0).timestamp()  # the day the logs were copied
    for f in (logs / "nodes").glob("*/kern.log"):
        f.write_text("".join(fn(x) for x in f.read_text().splitlines(keepends=True)))
        os.utime(f, (copied, copied))


def _syslog(line: str) -> str:
    m = _ISO.match(line)
    if not m:
        return line
    t = datetime.fromisoformat(m.group(1))
    return f"{t:%b} {t.day:2d} {t:%H:%M:%S} " + line[m.end():]


def test_year_less_syslog_copied_later_takes_the_records_year(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 11, logs, Settings(log_interval=1))
    want = _causes(_analyze(logs, tmp_path / "a"))
    assert want["gpu_hardware"] >= 3
    _rewrite(logs, _syslog)
    assert _causes(_analyze(logs, tmp_path / "b")) == want
    # analyze says it moved them (it said nothing; ingest did): fault probe, low
    from tests.cli.conftest import invoke

    r = invoke("analyze", str(logs), "--out", str(tmp_path / "b2"), "--json")
    assert r.exit_code == 0 and "moved by -2 year(s)" in r.stderr, r.stderr
    # --year is the user's word: the lines stay in 2026, away from every attempt
    got = _causes(_analyze(logs, tmp_path / "c", year=2026))
    assert got["gpu_hardware"] == 0


def test_raw_dmesg_without_boot_time_is_said(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 11, logs, Settings(log_interval=1))
    _rewrite(logs, lambda x: _HEAD.sub("", x))
    got = _analyze(logs, tmp_path / "a")
    w = [w for w in got["warnings"] if w["code"] == "untimed_evidence"]
    assert len(w) == 1 and "gpu_hardware" in w[0]["message"]


def test_uptime_only_lines_are_anchored_in_order_part_by_part(tmp_path: Path,
                                                               monkeypatch: Any) -> None:
    """Raw ``dmesg`` lines of a host whose syslog gives its boot (``kernel: [uptime]`` behind
    an RFC 3339 stamp, rsyslog's RSYSLOG_FileFormat) get ts = boot + uptime, flag
    ``uptime_anchored``; every other row keeps its time, and the rows keep their order when
    events.parquet is rewritten a few rows at a time (``ANCHOR_ROWS``)."""
    import polars as pl

    from pipeline.ingest import anchoring

    monkeypatch.setattr(anchoring, "ANCHOR_ROWS", 3)
    node = tmp_path / "logs" / "nodes" / "node007"
    node.mkdir(parents=True)
    xid = "NVRM: Xid (PCI:0000:3b:00): {}, pid=1234, GPU has fallen off the bus."
    # booted at 2024-03-01T11:40:00Z: 1200.5 s of uptime at 12:00:00.5
    (node / "kern.log").write_text("".join(
        f"2024-03-01T12:{m:02d}:00.500000+00:00 node007 kernel: [ {1200.5 + 60 * m:.6f}] "
        + xid.format(79) + "\n" for m in range(4)))
    (node / "dmesg.log").write_text("".join(
        f"[ {3000.25 + i:.6f}] " + xid.format(48) + "\n" for i in range(5)))
    ingest(expand_inputs([str(tmp_path / "logs")]), tmp_path / "out")
    ev = pl.read_parquet(tmp_path / "out" / "events.parquet")
    dm = ev.filter(pl.col("file").str.ends_with("dmesg.log"))
    assert dm["ts_flag"].to_list() == ["uptime_anchored"] * 5
    assert dm["line_no"].to_list() == [1, 2, 3, 4, 5]
    boot = datetime(2024, 3, 1, 11, 40).timestamp()
    want = [boot + 3000.25 + i for i in range(5)]
    assert [t.timestamp() for t in dm["ts"]] == want
    kern = ev.filter(pl.col("file").str.ends_with("kern.log"))
    assert kern["ts_flag"].to_list() == ["exact"] * 4
    assert [t.minute for t in kern["ts"]] == [0, 1, 2, 3]
