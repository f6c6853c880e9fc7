"""Where ingest's rows go while the parsers run: events.parquet, and the view over it.

One writer thread (Parquet encoding releases the GIL, so it overlaps with parsing) takes two
kinds of batch: EVENTS batches, and compact PROGRESS batches (parsers/progress_batch.py: the
bulk Megatron iteration rows), expanded to EVENTS. Both are gathered into large groups
(``GROUP_ROWS``, ``PROGRESS_GROUP_ROWS``) before they are written: one Parquet row group per
group, which costs a fraction of writing every 8 MiB chunk's rows separately.

The database holds no copy of the events: ``events`` in ``tormortem.duckdb`` is a view over the
events.parquet beside it (``events_view_sql``), with ``event_id`` = the row's number in that
file. Why: copying them into a DuckDB table (DuckDB 2.0's compression of every column at
checkpoint) cost more than parsing them on event-heavy logs -- 512 MiB of slurmctld log,
4.46 M events: 8.3 s of 19.6 s; an HF job log's 6.7 M tqdm updates: 7.9 s of 17 s -- and
doubled what an output folder takes on disk (268 MB of table beside a 62 MB Parquet file).
Analysis reads the view as fast as it read the tables (the Llama-3 campaign: 1.57-1.68 s
against 1.59-1.66 s, the same analysis.json).

How the view finds the file, whatever the working directory: DuckDB resolves a relative path
against the working directory first (so a relative path could silently read another folder's
events.parquet), hence the path is ``getvariable('tormortem_dir')`` -- which ``connect`` sets to
the database's folder, for every connection tormortem opens -- or, when that is unset (another
program), the absolute folder the output was written for. And the view checks that the file
is the one written with this database: its footer carries ``EVENTS_ID_KEY``, a digest of the
inputs and options (``ingest.run``), which the view compares and otherwise fails with a message
saying what to do (a folder moved and opened by another program, an events.parquet replaced).
"""

from __future__ import annotations

import base64
import queue
import threading
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from parsers import progress_batch as pb
from parsers.schema import EVENTS
from pipeline.ingest.outputs import OutputError, read_manifest

#: EVENTS rows gathered before one write (one Parquet row group). 1 << 16, not 1 << 17: the
#: slurm mix (its slurmctld reader writes ~77,000 rows per 8 MiB chunk) peaked at 472-507 MiB
#: with 1 << 17 and 449-474 MiB with this, 6 alternated runs each, in 7.4-9.5 against
#: 7.5-8.8 s; events.parquet 3% larger (62.1 -> 64.2 MB)
GROUP_ROWS = 1 << 16
#: progress rows gathered before one write (one row group). 1 << 18, not 1 << 19: the 521 MB
#: tqdm mix peaked at 498-505 MiB with 1 << 19, 468-491 MiB with 1 << 18, no slower (4.35-4.61
#: against 4.29-4.62 s, 3 alternated runs). 1 << 16 (with QUEUE_BYTES 8 MiB): the 537 MB tqdm
#: mix 452-475 MiB against 489-510 MiB, 6.09-6.22 against 5.91-6.09 s, events.parquet 9.0
#: against 8.1 MB; megatron 537 MB 311-318 against 328-331 MiB, 2.02-2.32 against 2.15-2.33 s
PROGRESS_GROUP_ROWS = 1 << 16
#: batches waiting for the writer thread, at most (bounds memory). 24 MiB, not 64: the slurm
#: mix's client (4.5 M rows) peaked at 511-538 MiB with 64 and 467-478 MiB with 24, no slower
#: (7.68/7.21/7.12 against 7.46/7.75/7.27 s); tqdm, k8s and megatron alike in time and RSS.
#: 8 MiB (with PROGRESS_GROUP_ROWS 1 << 16): the slurm mix 450-460 against 457-475 MiB,
#: 6.20-6.55 against 6.42-6.78 s (3 alternated runs each, 2026-12-04 session 7)
QUEUE_BYTES = 8 << 20


class ParquetSink:
    """Parquet writer that takes batches (or tables) of one schema as they come."""

    def __init__(self, path: Path, schema: pa.Schema, **options: Any) -> None:
        self.path, self.schema = path, schema
        self.writer = pq.ParquetWriter(path, schema, compression="zstd", **options)
        self.rows = 0

    def __call__(self, batch: pa.RecordBatch | pa.Table) -> None:
        if batch.num_rows:
            if isinstance(batch, pa.Table):
                self.writer.write_table(batch, row_group_size=1 << 20)
            else:
                self.writer.write_batch(batch, row_group_size=1 << 20)
            self.rows += batch.num_rows

    def close(self) -> None:
        self.writer.close()


#: events.parquet encodings: dictionaries for the strings (host, kind, file ... repeat), delta
#: encoding for the integers that grow row by row, statistics only for the non-strings (min/max
#: of every string cost as much as writing it). ~40% faster than the defaults and several
#: times smaller.
EVENTS_PARQUET: dict[str, Any] = {
    "use_dictionary": [f.name for f in EVENTS if f.type == pa.string()],
    "column_encoding": {c: "DELTA_BINARY_PACKED" for c in ("ts", "iteration", "line_no")},
    "write_statistics": [f.name for f in EVENTS if f.type != pa.string()],
}


#: the key of events.parquet's footer that ties it to its database (``events_view_sql``)
EVENTS_ID_KEY = "tormortem:events_id"
#: the DuckDB variable that tells the view ``events`` where its folder is (``connect``)
DIR_VARIABLE = "tormortem_dir"


class EventsParquet(ParquetSink):
    """events.parquet: written in EVENTS_DICT (progress batches arrive in it; others are
    cast), but its stored Arrow schema is EVENTS, so readers get plain strings (and every
    field's description) back."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, pb.EVENTS_DICT, store_schema=False, **EVENTS_PARQUET)

    def __call__(self, batch: pa.RecordBatch | pa.Table) -> None:
        super().__call__(batch if batch.schema.equals(pb.EVENTS_DICT)
                         else batch.cast(pb.EVENTS_DICT))

    def close(self, events_id: str = "") -> None:
        # what store_schema=True would write for EVENTS (Arrow's parquet/arrow/schema.cc:
        # the IPC-serialised schema, base64); readers of the Arrow schema do not see the id
        self.writer.add_key_value_metadata(
            {b"ARROW:schema": base64.b64encode(EVENTS.serialize().to_pybytes()),
             EVENTS_ID_KEY.encode(): events_id.encode()})
        super().close()


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def events_view_sql(folder: Path, events_id: str) -> str:
    """``CREATE VIEW events``: every row of ``events.parquet`` (EVENTS columns) and its row
    number as ``event_id``; the file is looked for where ``connect`` says, else in ``folder``
    (absolute), and must carry ``events_id`` (see the module docstring)."""
    path = (f"coalesce(getvariable('{DIR_VARIABLE}'), {_lit(str(folder.resolve()))})"
            " || '/events.parquet'")
    stale = (f"{path} || {_lit(' is not the events.parquet written with this database: if ')}"
             f" || {_lit('the folder was moved, query it with tormortem sql DIR (or SET ')}"
             f" || {_lit(f'VARIABLE {DIR_VARIABLE} = DIR first); if the file was replaced, ')}"
             f" || {_lit('run tormortem ingest or analyze into the folder again')}")
    return (f"CREATE OR REPLACE VIEW events AS SELECT file_row_number AS event_id, "
            f"* EXCLUDE (file_row_number) FROM read_parquet({path}, file_row_number = true) "
            f"WHERE (SELECT CASE WHEN count(*) = 1 THEN true ELSE error({stale}) END "
            f"FROM parquet_kv_metadata({path}) WHERE decode(key) = '{EVENTS_ID_KEY}' "
            f"AND decode(value) = {_lit(events_id)})")


def connect(db: Path, read_only: bool = False, check: bool = True
            ) -> duckdb.DuckDBPyConnection:
    """A connection to an output folder's ``tormortem.duckdb`` whose view ``events`` reads the
    events.parquet beside it, wherever the folder now is. ``check``: that file is there and is
    the one written with this database (else ``OutputError``, one line)."""
    folder = db.resolve().parent
    if check and not (folder / "events.parquet").is_file():
        raise OutputError(f"{folder} has tormortem.duckdb but no events.parquet beside it (the "
                          "view events reads it): copy output folders whole, or run ingest "
                          "again")
    con = duckdb.connect(str(db), read_only=read_only)
    try:
        con.execute(f"SET VARIABLE {DIR_VARIABLE} = {_lit(str(folder))}")
        if check:
            con.execute("SELECT count(*) FROM (SELECT event_id FROM events LIMIT 1)")
    except duckdb.Error as e:
        con.close()
        msg = str(e).splitlines()[0]
        if STALE in msg:  # the view looked beside the database: the file was replaced
            raise OutputError(_replaced(folder, db)) from None
        raise OutputError(f"{db}: {msg}") from None
    return con


#: what the view's error says (``events_view_sql``)
STALE = "is not the events.parquet written with this database"


def _replaced(folder: Path, db: Path) -> str:
    """The message for an events.parquet that is not the database's own: what wrote the
    folder (its manifest's command, with this folder as --out) must run again."""
    import shlex

    doc = read_manifest(folder) or {}
    argv = doc.get("argv")
    again = (shlex.join(["tormortem", *argv, "--out", str(folder)])
             if isinstance(argv, list) and argv else f"tormortem ingest (or analyze) LOGS --out "
                                                     f"{shlex.quote(str(folder))}")
    return (f"{folder / 'events.parquet'} {STALE} ({db.name}): it was replaced or changed "
            f"since; run `{again}` again to rebuild the folder")


class EventSink:
    """Takes event and progress batches from the parsers; writes them on a thread of its own."""

    def __init__(self, out: Path) -> None:
        self.parquet = EventsParquet(out / "events.parquet")
        self.pending: list[pa.RecordBatch] = []
        self.pending_rows = 0
        self.progress_pending: list[pa.RecordBatch] = []
        self.progress_rows = 0
        # bounded by bytes, not batches: a narrow progress batch is ~1 MB, an events batch of
        # kernel lines can be 10 MB; counting batches stalled the parser behind every flush
        self.q: queue.Queue[tuple[bool, pa.RecordBatch] | None] = queue.Queue()
        self.queued = 0
        self.room = threading.Condition()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="tormortem-writer", daemon=True)
        self.thread.start()

    def __call__(self, batch: pa.RecordBatch) -> None:
        """An EVENTS batch."""
        self._put(False, batch)

    def progress(self, batch: pa.RecordBatch) -> None:
        """A PROGRESS batch."""
        self._put(True, batch)

    def _put(self, progress: bool, batch: pa.RecordBatch) -> None:
        if self.error is not None:
            raise self.error
        if batch.num_rows:
            with self.room:
                while self.queued > QUEUE_BYTES and self.error is None:
                    self.room.wait(0.1)
                self.queued += batch.nbytes
            self.q.put((progress, batch))

    def _next(self) -> tuple[bool, pa.RecordBatch] | None:
        """The next batch, None at the end. Polled, not waited for: a SIGINT that lands in
        the parsing thread in the middle of a ``Queue.put``'s wake-up can lose it (the
        waiter list of ``threading.Condition`` is not signal-safe), and a writer waiting
        without a timeout then never sees ``close``'s end mark (``test_many_random_kills``
        caught one such hang in ~40 interrupted runs)."""
        while True:
            try:
                item: tuple[bool, pa.RecordBatch] | None = self.q.get(timeout=0.2)
                return item
            except queue.Empty:
                continue

    def _run(self) -> None:
        while (item := self._next()) is not None:
            if self.error is not None:
                continue
            is_progress, batch = item
            with self.room:
                self.queued -= batch.nbytes
                self.room.notify()
            try:
                if is_progress:
                    self.progress_pending.append(batch)
                    self.progress_rows += batch.num_rows
                    if self.progress_rows >= PROGRESS_GROUP_ROWS:
                        self._flush_progress()
                        self._flush()  # the events so far too: less left for close()
                else:
                    self.pending.append(batch)
                    self.pending_rows += batch.num_rows
                    if self.pending_rows >= GROUP_ROWS:
                        self._flush()
            except BaseException as e:  # raised in the parsing thread
                self.error = e

    def _flush_progress(self) -> None:
        """One Parquet row group for the gathered progress batches."""
        if self.progress_pending:
            self.parquet(pa.Table.from_batches(
                [pb.to_events(b, dictionary=True) for b in self.progress_pending],
                pb.EVENTS_DICT))
        self.progress_pending, self.progress_rows = [], 0

    def _flush(self) -> None:
        if self.pending:
            self.parquet(pa.Table.from_batches(self.pending, EVENTS))
        self.pending, self.pending_rows = [], 0

    def close(self, events_id: str = "") -> int:
        """Finish writing (the file's footer carries ``events_id``). Returns the number of
        event rows."""
        self.q.put(None)
        self.thread.join()
        if self.error is None:
            self._flush()
            self._flush_progress()
        self.parquet.close(events_id)
        if self.error is not None:
            raise self.error
        return self.parquet.rows
