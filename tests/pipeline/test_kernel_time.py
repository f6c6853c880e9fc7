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
