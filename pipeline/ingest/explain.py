"""``explain``: for every line that carries a signal, what it is and what it means.

Streamed: one file at a time, its events go into an in-memory DuckDB table (columnar and
compressed, a fraction of the Arrow batches' size) as the parser hands them over; the file's
rows are then classified by the rule table and handed out in batches, ordered by line number
and kind, so memory is bounded by one file's events in DuckDB, not by Python objects for every
row of every file (a 296 MB job log peaked at 2.6 GB when all records were built first). Files
are taken in the order of their names, which is the order the rows had when they were sorted
as one table (``ORDER BY file, line_no, kind``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import tzinfo
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from parsers.driver import parse_file
from parsers.reader import InputFile
from pipeline.ingest import ruletable as rules_mod
from pipeline.ingest.sink import create_tables, events_view_sql

FIELDS = ("file", "line_no", "source", "kind", "category", "code", "rule", "ts", "host",
          "message")
BATCH_ROWS = 1 << 16  #: rows converted to records at a time
#: notes on files that were not (fully) read, worth a line even when nothing was recognised
_READ_NOTES = ("quarantined", "unreadable")


def explain_files(files: list[InputFile], *, tz: tzinfo, year: int | None = None,
                  source: str | None = None, extra_rules: list[Path] | None = None
                  ) -> list[dict[str, Any]]:
    """One record per event of ``files``, classified by the rule table, in file/line order."""
    return list(iter_explain(files, tz=tz, year=year, source=source, extra_rules=extra_rules))


def iter_explain(files: list[InputFile], *, tz: tzinfo, year: int | None = None,
                 source: str | None = None, extra_rules: list[Path] | None = None,
                 notes: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """``explain_files`` as a stream of records (the CLI prints them as they come).
    ``notes`` receives a line per file that was not (fully) read and why (a file in no known
    format is not noted: it has no rows, which says so)."""
    rules = rules_mod.load_rules(extra_rules or [])
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET enable_progress_bar = false")
        rules_mod.register(con, rules)
        for f in sorted(files, key=lambda f: f.display):
            create_tables(con, "events_other")
            con.execute(events_view_sql())

            def append(b: pa.RecordBatch) -> None:
                con.register("batch_arrow", b)
                con.execute("INSERT INTO events_other SELECT * FROM batch_arrow")
                con.unregister("batch_arrow")

            res = parse_file(f, append, lambda _b: None, tz=tz, year=year, source=source)
            if (res.note and notes is not None and res.source != "unknown") or (
                    res.note and notes is not None and res.note.startswith(_READ_NOTES)):
                notes.append(f"{f.display}: {res.note}")
            reader = con.sql(rules_mod.sql("classified_events")).to_arrow_reader(BATCH_ROWS)
            for batch in reader:
                yield from _records(batch)
            for t in ("events", "events_other", "progress", "progress_groups"):
                kind = "VIEW" if t == "events" else "TABLE"
                con.execute(f"DROP {kind} {t}")
    finally:
        con.close()


def _records(batch: pa.RecordBatch) -> Iterator[dict[str, Any]]:
    cols = {n: batch.column(n) for n in ("file", "line_no", "source", "kind", "category",
                                         "code", "rule_id", "host", "message")}
    lists = {n: c.to_pylist() for n, c in cols.items()}
    ts = _iso(batch.column("ts"))
    for i in range(batch.num_rows):
        yield {"file": lists["file"][i], "line_no": lists["line_no"][i],
               "source": lists["source"][i], "kind": lists["kind"][i],
               "category": lists["category"][i], "code": lists["code"][i],
               "rule": lists["rule_id"][i], "ts": ts[i], "host": lists["host"][i],
               "message": lists["message"][i]}


def _iso(col: pa.Array | pa.ChunkedArray) -> list[str | None]:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` per stamp, formatted by Arrow (Python's datetime stops
    at year 9999; a line may say 10000, which Arrow writes as such)."""
    import pyarrow.compute as pc

    out: list[str | None] = pc.strftime(col, format="%Y-%m-%dT%H:%M:%SZ").to_pylist()
    return out
