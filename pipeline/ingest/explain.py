"""``explain``: for every line that carries a signal, what it is and what it means.

Streamed, in bounded memory whatever the input's size: the parser runs on a worker thread and
hands over its event batches through a short queue; each batch is classified by the rule
table on its own (a rule looks at one event at a time) in an in-memory DuckDB, and the
classified rows wait in a window until no row of a lower line number can still come: the
parser may report an event for an earlier line once a multi-line block it belongs to ends
(a torch elastic ``ChildFailedError`` report), so rows are handed out only when they are
``WINDOW_LINES`` lines behind the furthest line seen, sorted by line number and kind. (A
block longer than that would come out after later lines; none of the formats read has one.)
Files are taken in the order of their names: the order of ``ORDER BY file, line_no, kind``
over all rows, which is what explain printed when it built one table (a 296 MB job log then
peaked at 2.6 GB). Files with fewer than ``GROUP_ROWS`` event rows are classified together,
in one query, when that many have gathered (a folder of 2,580 small files took 90 ms per
file with a query each, ~11 ms with them grouped).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from datetime import tzinfo
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from parsers.driver import FileResult, parse_file
from parsers.reader import InputFile
from parsers.schema import EVENTS
from pipeline.ingest import ruletable as rules_mod

FIELDS = ("file", "line_no", "source", "kind", "category", "code", "rule", "ts", "host",
          "message")
WINDOW_LINES = 100_000  #: rows are held until the parser is this many lines past them
#: files with fewer event rows are classified together (one query for many small files: a
#: query costs ~15 ms); a file with more is classified and handed out as it is parsed
GROUP_ROWS = 50_000
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
    layout, read as text, is not noted: explain is for pasted snippets, which have none)."""
    rules = rules_mod.load_rules(extra_rules or [])
    rules_mod.activate_text_rules(rules)
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET enable_progress_bar = false")
        rules_mod.register(con, rules)
        _tables(con)
        small: list[pa.RecordBatch] = []  # whole small files, classified together
        for f in sorted(files, key=lambda f: f.display):
            done: list[FileResult] = []
            raw: list[pa.RecordBatch] = []
            held: list[pa.Table] = []
            furthest, streaming = 0, False
            for batch in _parsed(f, done, tz=tz, year=year, source=source):
                raw.append(batch)
                if not streaming and sum(b.num_rows for b in raw) < GROUP_ROWS:
                    continue
                if not streaming:  # a large file: what came before it goes out first
                    yield from _records([_classify(con, small)] if small else [])
                    small, streaming = [], True
                table = _classify(con, raw)
                raw = []
                furthest = max(furthest, pc.max(table.column("line_no")).as_py() or 0)
                held.append(table)
                ready, held = _split(held, furthest - WINDOW_LINES)
                yield from _records(ready)
            if streaming:
                yield from _records(held + ([_classify(con, raw)] if raw else []))
            else:
                small += raw
                if sum(b.num_rows for b in small) >= GROUP_ROWS:
                    yield from _records([_classify(con, small)])
                    small = []
            res = done[0]
            if notes is not None and res.note and (res.source not in ("unknown", "text")
                                                   or res.note.startswith(_READ_NOTES)):
                notes.append(f"{f.display}: {res.note}")
        if small:
            yield from _records([_classify(con, small)])
    finally:
        con.close()


def _classify(con: duckdb.DuckDBPyConnection, batches: list[pa.RecordBatch]) -> pa.Table:
    """The batches through ``classified_events``; the table ``events`` (``_tables``) holds
    one call's rows at a time, numbered."""
    con.execute("DELETE FROM events")
    con.register("batch_arrow", pa.Table.from_batches(batches, EVENTS))
    con.execute("INSERT INTO events SELECT row_number() OVER () AS event_id, * "
                "FROM batch_arrow")
    con.unregister("batch_arrow")
    return rules_mod.classify(con)


def _tables(con: duckdb.DuckDBPyConnection) -> None:
    """The table ``events`` (``event_id`` and the EVENTS columns, as the ingested view), made
    once (creating and dropping it per batch cost ~20 ms, most of explain's time on a folder
    of small files)."""
    con.register("events_arrow", EVENTS.empty_table())
    con.execute("CREATE TABLE events AS SELECT 0::BIGINT AS event_id, * FROM events_arrow")
    con.unregister("events_arrow")


def _split(held: list[pa.Table], upto: int) -> tuple[list[pa.Table], list[pa.Table]]:
    """(rows with line_no <= upto, the rest), from the held tables."""
    ready, keep = [], []
    for t in held:
        mask = pc.less_equal(t.column("line_no"), upto)
        ready.append(t.filter(mask))
        keep.append(t.filter(pc.invert(mask)))
    return ready, [t for t in keep if t.num_rows]


def _records(tables: list[pa.Table]) -> Iterator[dict[str, Any]]:
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return
    t = pa.concat_tables(tables).sort_by([("file", "ascending"), ("line_no", "ascending"),
                                          ("kind", "ascending")])
    for batch in t.to_batches(max_chunksize=1 << 16):
        cols = {n: batch.column(n).to_pylist() for n in (
            "file", "line_no", "source", "kind", "category", "code", "rule_id", "host",
            "message")}
        ts = pc.strftime(batch.column("ts"), format="%Y-%m-%dT%H:%M:%SZ").to_pylist()
        for i in range(batch.num_rows):  # stamps past year 9999 are written as they are
            yield {"file": cols["file"][i], "line_no": cols["line_no"][i],
                   "source": cols["source"][i], "kind": cols["kind"][i],
                   "category": cols["category"][i], "code": cols["code"][i],
                   "rule": cols["rule_id"][i], "ts": ts[i], "host": cols["host"][i],
                   "message": cols["message"][i]}


class _Stop(Exception):
    """The consumer went away: the worker's parse stops at its next batch."""


_END = object()


def _parsed(f: InputFile, done: list[FileResult], **options: Any
            ) -> Iterator[pa.RecordBatch]:
    """The file's event batches, parsed on a worker thread, a few batches ahead; the parse's
    result is appended to ``done`` at the end."""
    q: queue.Queue[object] = queue.Queue(maxsize=4)
    stop = threading.Event()

    def put(item: object) -> None:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return
            except queue.Full:
                continue
        raise _Stop

    def run() -> None:
        try:
            done.append(parse_file(f, put, lambda _b: None, **options))
            put(_END)
        except _Stop:
            pass
        except BaseException as e:  # handed to the consumer, raised there
            with contextlib.suppress(_Stop):
                put(e)

    t = threading.Thread(target=run, name="tormortem-explain", daemon=True)
    t.start()
    try:
        while (item := q.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, pa.RecordBatch)
            yield item
    finally:
        stop.set()
        t.join(timeout=5)
