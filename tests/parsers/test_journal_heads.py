"""journalctl ``-o short-unix`` and ``-o short-full`` heads, as systemd's logs-show.c
``output_timestamp_realtime`` prints them ("%10"PRI_USEC".%06"PRI_USEC; TIMESTAMP_PRETTY:
``%a %Y-%m-%d %H:%M:%S`` and the zone's abbreviation): their stamps were not read, so a node's
Xid had no time and no interruption was traced to it (fault probe H3)."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest

from parsers.reader import InputFile
from parsers.timeutil import get_tz
from pipeline.ingest.explain import explain_files

XID = "NVRM: Xid (PCI:0000:ab:00): 79, pid=1, GPU has fallen off the bus."


@pytest.mark.parametrize(("line", "tz"), [
    (f"1714522470.000000 node003 kernel: {XID}", "UTC"),
    (f"Wed 2024-05-01 00:14:30 UTC node003 kernel: {XID}", "UTC"),
    (f"Wed 2024-05-01 02:14:30 CEST node003 kernel: {XID}", "Europe/Berlin"),
    (f"Wed 2024-05-01 03:14:30 +03 node003 kernel: {XID}", "UTC"),
])
def test_journal_stamps_are_read(tmp_path: Path, line: str, tz: str) -> None:
    f = tmp_path / "kern.log"
    f.write_text(line + "\n")
    (row,) = list(explain_files([InputFile(f, "kern.log")], tz=get_tz(tz), year=None))
    assert (row["kind"], row["code"], row["host"]) == ("xid", "79", "node003")
    assert row["ts"] == "2024-05-01T00:14:30.000000Z"


def test_a_number_that_is_not_a_journal_stamp_stays_message(tmp_path: Path) -> None:
    f = tmp_path / "out.log"
    f.write_text("1714522470.000000 is not followed by a host and a tag\n")
    assert list(explain_files([InputFile(f, "out.log")], tz=UTC, year=None)) == []
