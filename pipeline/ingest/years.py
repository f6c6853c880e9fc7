"""The year of year-less stamps, checked against the scheduler records.

RFC 3164 syslog and ``journalctl -o short`` print ``May  1 11:04:45``: no year. The parsers take
it from the file's mtime (with rollover: a date after the mtime is the year before;
``ts_flag`` ``inferred_year``). Logs copied without their times (``cp``, ``scp`` without ``-p``,
a ticket attachment) carry the day they were copied: a 2024 campaign's kernel lines landed in
2026, outside every attempt, and its Xids were never matched to the interruptions they caused
(seven root causes became the NCCL timeouts they set off, without a word).

Decision: when the records give the campaign's time span (attempts, or lines with a full
stamp), a file whose year-less lines fall entirely outside that span (a day's margin), while a
shift by whole years (up to ten either way) puts them inside it and exactly one such shift does,
is shifted by it (DuckDB's ``+ INTERVAL n YEAR``: 29 Feb becomes 28 Feb in a common year) and
said on stderr. A file that overlaps the span is left alone, as is any file when ``--year`` was
given (the user's word) or when the shift is ambiguous (a file spanning years).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb

MARGIN = timedelta(days=1)
MAX_YEARS = 10


def _shift(t: datetime, years: int) -> datetime:
    try:
        return t.replace(year=t.year + years)
    except ValueError:  # 29 Feb
        return t.replace(year=t.year + years, day=28)


def year_shifts(con: duckdb.DuckDBPyConnection, attempts: Path) -> dict[str, tuple[int, int]]:
    """Per file to shift: (years, year-less lines) (module docstring)."""
    rows = con.execute("SELECT file, min(ts), max(ts), count(*) FROM events "
                       "WHERE ts_flag = 'inferred_year' AND ts IS NOT NULL GROUP BY file"
                       ).fetchall()
    if not rows:
        return {}
    path = str(attempts).replace("'", "''")
    span = con.execute(f"""
        SELECT min(lo), max(hi) FROM (
            SELECT min(start) AS lo, max(coalesce("end", start)) AS hi
            FROM read_parquet('{path}')
            UNION ALL
            SELECT min(ts), max(ts) FROM events WHERE ts_flag IN ('exact', 'assumed_tz'))
        """).fetchone()
    if span is None or span[0] is None:
        return {}
    lo, hi = span[0] - MARGIN, span[1] + MARGIN
    out: dict[str, tuple[int, int]] = {}
    for file, a, b, n in rows:
        if a <= hi and b >= lo:
            continue
        fits = [k for k in range(-MAX_YEARS, MAX_YEARS + 1)
                if k and _shift(a, k) <= hi and _shift(b, k) >= lo]
        if len(fits) == 1:
            out[str(file)] = (fits[0], int(n))
    return out


def register(con: duckdb.DuckDBPyConnection, shifts: dict[str, tuple[int, int]]) -> None:
    """The table ``year_shift(file, years)`` that ``events_anchored.sql`` applies."""
    con.execute("CREATE OR REPLACE TEMP TABLE year_shift (file VARCHAR, years INTEGER)")
    if shifts:
        con.executemany("INSERT INTO year_shift VALUES (?, ?)",
                        [(f, k) for f, (k, _) in shifts.items()])
