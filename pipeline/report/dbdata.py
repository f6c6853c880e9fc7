"""What the report reads from ``tormortem.duckdb`` besides ``analysis.json``.

All reads are optional: a missing database or table gives empty results, and the report says
"not available" for the sections that need them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from pipeline.ingest.sink import connect

MAX_SYMPTOMS = 6
MAX_UNPARSED = 20


@dataclass
class DbData:
    available: bool = False
    #: run -> (timestamps as datetime64[us], seconds per iteration)
    steps: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    #: run -> checkpoint save ends
    checkpoints: dict[str, list[datetime]] = field(default_factory=dict)
    #: (run, attempt) -> evidence rows, cause first, then symptoms (capped), plus count
    evidence: dict[tuple[str, str], tuple[list[dict[str, Any]], int]] = field(
        default_factory=dict)
    accounting: list[dict[str, Any]] = field(default_factory=list)
    unparsed: list[dict[str, Any]] = field(default_factory=list)
    ts_flags: list[dict[str, Any]] = field(default_factory=list)
    #: (run, attempt) -> (start, end) of each attempt
    spans: dict[tuple[str, str], tuple[datetime, datetime]] = field(default_factory=dict)


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute("SHOW TABLES").fetchall()}


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description or []]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def load(db: Path | None) -> DbData:
    out = DbData()
    if db is None or not db.exists():
        return out
    con = connect(db, read_only=True)
    try:
        con.execute("SET TimeZone = 'UTC'")
        have = _tables(con)
        out.available = True
        if "attempt_events" in have:
            _events(con, out)
        if "evidence" in have:
            _evidence(con, out)
        if "line_accounting" in have:
            out.accounting = _rows(con, """
                SELECT source, count(*) AS files, sum(read) AS read, sum(events) AS events,
                       sum(irrelevant) AS irrelevant, sum(unparsed) AS unparsed
                FROM line_accounting GROUP BY source ORDER BY sum(read) DESC""")
        if "unparsed_samples" in have:
            out.unparsed = _rows(con, f"""
                SELECT source, file, line_no, text FROM unparsed_samples
                ORDER BY source, file, line_no LIMIT {MAX_UNPARSED}""")
        if "events" in have:
            out.ts_flags = _rows(con, """
                SELECT source, ts_flag, count(*) AS n FROM events
                GROUP BY ALL ORDER BY source, n DESC""")
        if "attempt_parts" in have:
            for r in con.execute('SELECT run, attempt, start, "end" FROM attempt_parts'
                                 ).fetchall():
                if r[2] is not None and r[3] is not None:
                    out.spans[(r[0], r[1])] = (r[2], r[3])
    finally:
        con.close()
    return out


def _events(con: duckdb.DuckDBPyConnection, out: DbData) -> None:
    tbl = con.execute("""
        SELECT run, ts, value FROM attempt_events
        WHERE kind = 'iteration' AND value IS NOT NULL AND ts IS NOT NULL
        ORDER BY run, ts""").fetchnumpy()
    runs = np.asarray(tbl["run"]).astype(str)
    ts = np.asarray(tbl["ts"]).astype("datetime64[us]")
    val = np.asarray(tbl["value"], dtype=float) / 1000.0
    for run in np.unique(runs) if len(runs) else []:
        m = runs == run
        out.steps[str(run)] = (ts[m], val[m])
    for run, t in con.execute("""
            SELECT run, ts FROM attempt_events
            WHERE kind IN ('ckpt_save_end') AND ts IS NOT NULL ORDER BY ts""").fetchall():
        out.checkpoints.setdefault(run, []).append(t)


def _evidence(con: duckdb.DuckDBPyConnection, out: DbData) -> None:
    rows = _rows(con, """
        SELECT run, attempt, role, ts, host, source, kind, code, category, message, file,
               line_no, rank_in_attempt
        FROM evidence ORDER BY run, attempt, (role <> 'cause'), rank_in_attempt""")
    for r in rows:
        key = (r["run"], r["attempt"])
        lst, n = out.evidence.get(key, ([], 0))
        if r["role"] == "cause" or len(lst) < MAX_SYMPTOMS + 1:
            lst.append(r)
        out.evidence[key] = (lst, n + 1)
