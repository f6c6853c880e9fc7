"""Where ingest's rows go while the parsers run: events.parquet and the DuckDB tables.

One writer thread (Parquet encoding and DuckDB appends release the GIL, so it overlaps with
parsing) takes two kinds of batch:

* EVENTS batches -> events.parquet; the DuckDB table ``events_raw`` (ingest anchors
  uptime stamps and renames it ``events_other``) is loaded from those row groups of
  events.parquet at ``close`` (``_load_events``: DuckDB's read_parquet, one INSERT);
* compact PROGRESS batches (parsers/progress_batch.py: the bulk Megatron iteration rows)
  -> events.parquet expanded to EVENTS, and the narrow DuckDB table ``progress`` (ts,
  iteration, value, line_no, grp); what rows share -- the batch's constants, ts_flag and rank
  -- goes once per group into ``progress_groups``.

Both are gathered into large groups (``GROUP_ROWS``, ``PROGRESS_GROUP_ROWS``) before they are
written: one Parquet row group (and, for progress rows, one DuckDB append) per group, which
costs a fraction of writing every 8 MiB chunk's rows separately.

Why events_raw is loaded at the end rather than appended to group by group: DuckDB (2.0) kept
what hundreds of separate appends to a table of a file-backed database wrote, and its
checkpoint at ``close`` needed several times the table's size: peak RSS grew with the number of
events (slurm mix: 1,081 MiB at 542 MB with ``--jobs 1``, 2.7 GiB at 1.08 GB with ``--jobs
2``), 373 MiB without those appends. One INSERT that DuckDB reads from events.parquet itself,
in file order (so the same rows and the same rowids, which are ``event_id``), under the
connection's ``memory_limit`` (``run.DUCKDB_MEMORY``) stays flat: 340-353 MiB for 0.5-1 GiB of
slurm logs (an INSERT from an Arrow stream of the same batches still held ~300 MiB per million
rows). The narrow ``progress`` rows are still appended group by group: they are small and their
peak stayed flat (megatron mix, 365-387 MiB to 1 GiB).

``events_view_sql`` puts the two back together as the view ``events``, so a user (and the
pipeline) sees one events table with the EVENTS columns, while the database stores the 99%
progress rows in five numbers each (loading the wide table cost ~1.3 s per GiB of job log;
each column more ~0.1 s).
"""

from __future__ import annotations

import base64
import json
import queue
import threading
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from parsers import progress_batch as pb
from parsers.schema import EVENTS

GROUP_ROWS = 1 << 17  #: EVENTS rows gathered before one write (Parquet row group, DuckDB)
PROGRESS_GROUP_ROWS = 1 << 19  #: progress rows gathered before one write (~20 MB narrow)
QUEUE_BYTES = 64 << 20  #: batches waiting for the writer thread, at most (bounds memory)


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


class EventsParquet(ParquetSink):
    """events.parquet: written in EVENTS_DICT (progress batches arrive in it; others are
    cast), but its stored Arrow schema is EVENTS, so readers get plain strings (and every
    field's description) back."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, pb.EVENTS_DICT, store_schema=False, **EVENTS_PARQUET)

    def __call__(self, batch: pa.RecordBatch | pa.Table) -> None:
        super().__call__(batch if batch.schema.equals(pb.EVENTS_DICT)
                         else batch.cast(pb.EVENTS_DICT))

    def close(self) -> None:
        # what store_schema=True would write for EVENTS (Arrow's parquet/arrow/schema.cc:
        # the IPC-serialised schema, base64)
        self.writer.add_key_value_metadata(
            {b"ARROW:schema": base64.b64encode(EVENTS.serialize().to_pybytes())})
        super().close()


_DUCK_NULL_TYPE = {"uptime_s": "DOUBLE", "code": "VARCHAR", "device": "VARCHAR",
                   "message": "VARCHAR"}


def events_view_sql() -> str:
    """``CREATE VIEW events``: events_other and the expanded progress rows, EVENTS columns."""
    cols = []
    for f in EVENTS:
        if f.name in GROUP_COLUMNS:
            cols.append(f"g.{f.name}")
        elif f.name in pb.NULL:
            cols.append(f"NULL::{_DUCK_NULL_TYPE[f.name]} AS {f.name}")
        else:
            cols.append(f"p.{f.name}")
    # event_id: a row's identity in this database (classified_events, evidence): the rowid
    # of events_other, or -1 - rowid for progress rows
    return ("CREATE OR REPLACE VIEW events AS SELECT rowid AS event_id, * FROM events_other "
            "UNION ALL SELECT -1 - p.rowid AS event_id, " + ", ".join(cols)
            + " FROM progress p JOIN progress_groups g ON p.grp = g.grp")


#: what the progress rows of one group share: a batch's constants, how ts was obtained, rank
GROUP_COLUMNS = (*pb.CONST, "ts_flag", "rank")
_GROUPS = pa.schema([pa.field("grp", pa.int32())] + [pa.field(c, pa.string()) for c in pb.CONST]
                    + [pa.field("ts_flag", pa.string()), pa.field("rank", pa.int32())])
_NARROW = ("ts", "iteration", "value", "line_no")


def create_tables(cur: duckdb.DuckDBPyConnection, events_table: str = "events_raw",
                  events: pa.Table | None = None) -> None:
    """The tables behind the view ``events``: ``events_table`` (EVENTS columns, filled from
    ``events`` if given), and ``progress`` / ``progress_groups``, empty."""
    cur.register("events_arrow", events if events is not None else EVENTS.empty_table())
    cur.execute(f"CREATE TABLE {events_table} AS SELECT * FROM events_arrow")
    cur.unregister("events_arrow")
    cur.execute("CREATE TABLE progress (ts TIMESTAMPTZ, iteration BIGINT, value DOUBLE,"
                " line_no BIGINT, grp INTEGER)")
    cur.register("groups_arrow", _GROUPS.empty_table())
    cur.execute("CREATE TABLE progress_groups AS SELECT * FROM groups_arrow")
    cur.unregister("groups_arrow")


class EventSink:
    """Takes event and progress batches from the parsers; writes them on a thread of its own."""

    def __init__(self, out: Path, con: duckdb.DuckDBPyConnection) -> None:
        self.parquet = EventsParquet(out / "events.parquet")
        self.cur = con.cursor()
        self.cur.execute("SET TimeZone = 'UTC'")
        create_tables(self.cur)
        self.groups: dict[tuple[str, int, int], int] = {}
        self.pending: list[pa.RecordBatch] = []
        self.pending_rows = 0
        #: events.parquet rows written by ``_flush`` (each its own row groups): (start, stop)
        self.event_rows: list[tuple[int, int]] = []
        self.progress_pending: list[tuple[np.ndarray, pa.RecordBatch]] = []
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
                    self.progress_pending.append((self._groups_of(batch), batch))
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

    def _groups_of(self, batch: pa.RecordBatch) -> np.ndarray:
        """Each row's group: the batch's constants with the row's ts_flag and rank (a chunk
        has one or a few: one file, mostly one flag, the ranks of an srun --label log)."""
        const = json.dumps(pb.constants(batch), sort_keys=True)
        flag = batch.column("ts_flag").to_numpy().astype(np.int64)
        rank = batch.column("rank").fill_null(-1).to_numpy().astype(np.int64)
        key = (rank + 1) * 8 + flag  # rank >= -1, flag < 8
        if key.size and key.min() == key.max():
            uniq, inv = key[:1], np.zeros(key.size, np.intp)
        else:
            uniq, inv = np.unique(key, return_inverse=True)
        ids = np.array([self.groups.setdefault((const, int(k) % 8, int(k) // 8 - 1),
                                               len(self.groups)) for k in uniq], np.int32)
        out: np.ndarray = ids[inv]
        return out

    def _flush_progress(self) -> None:
        """One Parquet row group and one DuckDB append for the gathered progress batches
        (appending per 8 MiB chunk cost DuckDB 4x more)."""
        if self.progress_pending:
            self.parquet(pa.Table.from_batches(
                [pb.to_events(b, dictionary=True) for _, b in self.progress_pending],
                pb.EVENTS_DICT))
            narrow = pa.Table.from_batches(
                [pa.RecordBatch.from_arrays([*(b.column(c) for c in _NARROW), pa.array(g)],
                                            names=[*_NARROW, "grp"])
                 for g, b in self.progress_pending])
            self.cur.register("progress_arrow", narrow)
            self.cur.execute("INSERT INTO progress SELECT * FROM progress_arrow")
            self.cur.unregister("progress_arrow")
        self.progress_pending, self.progress_rows = [], 0

    def _flush(self) -> None:
        if self.pending:
            start = self.parquet.rows
            self.parquet(pa.Table.from_batches(self.pending, EVENTS))
            self.event_rows.append((start, self.parquet.rows))
        self.pending, self.pending_rows = [], 0

    def _load_events(self) -> None:
        """``events_raw`` from the rows of the closed events.parquet that ``_flush`` wrote,
        read by DuckDB itself in file order (what appending each group did, row for row)."""
        path = str(self.parquet.path).replace("'", "''")
        if sum(b - a for a, b in self.event_rows) == self.parquet.rows:  # no progress rows
            self.cur.execute(f"INSERT INTO events_raw SELECT * FROM read_parquet('{path}')")
            return
        where = " OR ".join(f"file_row_number BETWEEN {a} AND {b - 1}"
                            for a, b in self.event_rows)
        self.cur.execute("INSERT INTO events_raw SELECT * EXCLUDE (file_row_number) FROM "
                         f"read_parquet('{path}', file_row_number = true) WHERE {where}")

    def close(self) -> int:
        """Finish writing; fill ``progress_groups``. Returns the number of event rows."""
        self.q.put(None)
        self.thread.join()
        if self.error is None:
            self._flush()
            self._flush_progress()
        self.parquet.close()
        if self.error is not None:
            raise self.error
        if self.event_rows:
            self._load_events()
        rows = [{"grp": g, **json.loads(const), "ts_flag": pb.FLAG_NAMES[flag],
                 "rank": None if rank < 0 else rank}
                for (const, flag, rank), g in self.groups.items()]
        self.cur.register("groups_arrow", pa.Table.from_pylist(rows, _GROUPS))
        self.cur.execute("INSERT INTO progress_groups SELECT * FROM groups_arrow")
        self.cur.unregister("groups_arrow")
        self.cur.close()
        return self.parquet.rows
