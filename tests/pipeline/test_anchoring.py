"""The rewrite of events.parquet (pipeline/ingest/anchoring.py): its Arrow path gives what
``events_anchored.sql``, the definition, gives, byte for byte, on the cases where they could
part: DuckDB's rounding of half microseconds (away from zero, 0.49999999999999994 down),
hosts without a boot or without a name, year shifts over Feb 29, rows on both sides of a row
group's end, and stamps out of range."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from parsers.schema import EVENTS
from pipeline.ingest import anchoring, years
from pipeline.ingest.sink import EventsParquet, events_view_sql

BOOT = datetime(2024, 3, 1, 11, 40, tzinfo=UTC)


def _row(i: int, **kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {f.name: None for f in EVENTS}
    base.update(ts_flag="exact", host_from="line", source="kernel", format="syslog",
                kind="xid", file="kern.log", line_no=i)
    base.update(kw)
    return base


def _rows() -> list[dict[str, Any]]:
    rows = []
    # node1's boot, from lines with both stamps (syslog's ``kernel: [uptime]``)
    for i in range(3):
        up = 1200.5 + 60 * i
        rows.append(_row(len(rows), ts=datetime.fromtimestamp(BOOT.timestamp() + up, UTC),
                         uptime_s=up, host="node1"))
    # uptime-only lines: halves of a microsecond (x 1e6 exactly .5), less, big uptimes
    for up in (3000.25, 0.0000005, 0.0000015, 0.0000025, 1234.0000005, 1e-7,
               123456.7890125, 9.5e-7, 86400.0 * 365 * 30, 0.0):
        rows.append(_row(len(rows), ts_flag="uptime", uptime_s=up, host="node1",
                         file="dmesg.log"))
    rows.append(_row(len(rows), ts_flag="uptime", uptime_s=5.0, host="node2",
                     file="dmesg.log"))  # no boot known
    rows.append(_row(len(rows), ts_flag="uptime", uptime_s=5.0, host=None, file="dmesg.log"))
    # year-less stamps of a file whose years move, Feb 29 among them, and of one that does not
    for day in (datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),
                datetime(2024, 12, 31, 12, tzinfo=UTC), datetime(2023, 3, 1, tzinfo=UTC)):
        for f in ("old/syslog", "syslog"):
            rows.append(_row(len(rows), ts=day, ts_flag="inferred_year", host="node3", file=f,
                             source="syslog"))
    rows.append(_row(len(rows), ts=BOOT, ts_flag="exact", file="old/syslog"))
    return rows


def _rewrite(tmp: Path, rows: list[dict[str, Any]], shifts: dict[str, int], sql: bool,
             monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, tuple[int, int]]:
    out = tmp / ("sql" if sql else "arrow")
    out.mkdir(parents=True)
    w = EventsParquet(out / "events.parquet")
    w(pa.Table.from_pylist(rows, EVENTS))
    w.close("id-1")
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(events_view_sql(out, "id-1"))
    years.register(con, {f: (n, 1) for f, n in shifts.items()})
    monkeypatch.setenv("TORMORTEM_ANCHOR_SQL", "1" if sql else "0")
    counts = anchoring.anchor(out, con, "id-1", shifts)
    con.close()
    return (out / "events.parquet").read_bytes(), counts


@pytest.mark.parametrize("rows_per_part", [1, 5, 16_384])
@pytest.mark.parametrize("shifts", [{}, {"old/syslog": 1}, {"old/syslog": -3, "syslog": 0}])
def test_arrow_rewrite_is_the_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    rows_per_part: int, shifts: dict[str, int]) -> None:
    monkeypatch.setattr(anchoring, "ANCHOR_ROWS", rows_per_part)
    rows = _rows()
    want, want_counts = _rewrite(tmp_path, rows, shifts, True, monkeypatch)
    got, got_counts = _rewrite(tmp_path, rows, shifts, False, monkeypatch)
    assert got_counts == want_counts == (10, 2)
    assert got == want
    table = pq.read_table(tmp_path / "arrow" / "events.parquet")
    flags = table.column("ts_flag").to_pylist()
    ts = table.column("ts").to_pylist()
    # the definition itself: half a microsecond goes up (away from zero), a tenth down
    half, tenth = (next(i for i, r in enumerate(rows) if r["uptime_s"] == up)
                   for up in (0.0000005, 1e-7))
    assert flags[half] == flags[tenth] == "uptime_anchored"
    assert (ts[half] - ts[tenth]).total_seconds() == 1e-6
    if shifts.get("old/syslog") == 1:
        leap = next(i for i, r in enumerate(rows) if r["file"] == "old/syslog"
                    and r["ts"] is not None and r["ts"].month == 2)
        assert ts[leap] == datetime(2025, 2, 28, 23, 59, 59, 999999, tzinfo=UTC)


def test_rounding_is_duckdbs() -> None:
    """``_round_half_away`` against DuckDB's ``round(DOUBLE)`` (C's ``round``), the largest
    double below 0.5 among them (``floor(x + 0.5)`` gives 1 there)."""
    import numpy as np

    xs = [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, -0.49999999999999994, 1e-300,
          4503599627370495.5, 4503599627370497.0, 1234000000.5, 3.4999999999999996, 0.0]
    want = duckdb.sql("SELECT round(x) FROM unnest(?::DOUBLE[]) t(x)", params=[xs]).fetchall()
    got = anchoring._round_half_away(np.array(xs))
    assert got.tolist() == [w[0] for w in want]


def test_values_out_of_range_are_the_querys(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Anchored past year 9999 (DuckDB still writes it) or past int64 microseconds (DuckDB
    refuses): the Arrow path leaves such a row group to the query, so the answer, or the
    error, is the query's, not a value made up here."""
    far = [*_rows()[:3], _row(3, ts_flag="uptime", uptime_s=1e12, host="node1",
                              file="dmesg.log")]
    want, _ = _rewrite(tmp_path / "a", far, {}, True, monkeypatch)
    got, _ = _rewrite(tmp_path / "b", far, {}, False, monkeypatch)
    assert got == want
    beyond = [*far[:3], _row(3, ts_flag="uptime", uptime_s=1e14, host="node1",
                             file="dmesg.log")]
    for sql in (True, False):
        with pytest.raises(duckdb.Error):
            _rewrite(tmp_path / str(sql), beyond, {}, sql, monkeypatch)
