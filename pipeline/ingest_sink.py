"""Where ingest's rows go while the parsers run: events.parquet and the DuckDB tables.

One writer thread (Parquet encoding and DuckDB appends release the GIL, so it overlaps with
parsing) takes two kinds of batch:

* EVENTS batches -> events.parquet, and the DuckDB table ``events_raw`` (appended in groups
  of ``GROUP_ROWS``; ingest anchors uptime stamps and renames it ``events_other``);
* compact PROGRESS batches (parsers/progress_batch.py: the bulk Megatron iteration rows)
  -> events.parquet expanded to EVENTS, and the narrow DuckDB table ``progress`` (ts, flag
  code, rank, iteration, value, line_no, grp), the per-batch constants going once into
  ``progress_groups``.

``EVENTS_VIEW`` puts the two back together as the view ``events``, so a user (and the
pipeline) sees one events table with the EVENTS columns, while the database stores the 99%
progress rows in six numbers each. Loading the wide table cost ~1.3 s per GiB of job log.
"""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from parsers import progress_batch as pb
from parsers.schema import EVENTS

GROUP_ROWS = 1 << 17  #: EVENTS rows gathered before one DuckDB append


class ParquetSink:
    """Parquet writer that takes batches of one schema as they come."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path, self.schema = path, schema
        self.writer = pq.ParquetWriter(path, schema, compression="zstd")
        self.rows = 0

    def __call__(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self.writer.write_batch(batch, row_group_size=1 << 20)
            self.rows += batch.num_rows

    def close(self) -> None:
        self.writer.close()


_DUCK_NULL_TYPE = {"uptime_s": "DOUBLE", "code": "VARCHAR", "device": "VARCHAR",
                   "message": "VARCHAR"}


def events_view_sql() -> str:
    """``CREATE VIEW events``: events_other and the expanded progress rows, EVENTS columns."""
    flags = ", ".join(f"'{f}'" for f in pb.FLAG_NAMES[1:])
    cols = []
    for f in EVENTS:
        if f.name == "ts_flag":  # DuckDB lists are 1-based: code 1 is FLAG_NAMES[1]
            cols.append(f"[{flags}][p.ts_flag] AS ts_flag")
        elif f.name in pb.CONST:
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


_GROUPS = pa.schema([pa.field("grp", pa.int32())] + [pa.field(c, pa.string()) for c in pb.CONST])


def create_tables(cur: duckdb.DuckDBPyConnection, events_table: str = "events_raw",
                  events: pa.Table | None = None) -> None:
    """The tables behind the view ``events``: ``events_table`` (EVENTS columns, filled from
    ``events`` if given), and ``progress`` / ``progress_groups``, empty."""
    cur.register("events_arrow", events if events is not None else EVENTS.empty_table())
    cur.execute(f"CREATE TABLE {events_table} AS SELECT * FROM events_arrow")
    cur.unregister("events_arrow")
    cur.execute("CREATE TABLE progress (ts TIMESTAMPTZ, ts_flag UTINYINT, rank INTEGER,"
                " iteration BIGINT, value DOUBLE, line_no BIGINT, grp INTEGER)")
    cur.register("groups_arrow", _GROUPS.empty_table())
    cur.execute("CREATE TABLE progress_groups AS SELECT * FROM groups_arrow")
    cur.unregister("groups_arrow")


class EventSink:
    """Takes event and progress batches from the parsers; writes them on a thread of its own."""

    def __init__(self, out: Path, con: duckdb.DuckDBPyConnection) -> None:
        self.parquet = ParquetSink(out / "events.parquet", EVENTS)
        self.cur = con.cursor()
        self.cur.execute("SET TimeZone = 'UTC'")
        create_tables(self.cur)
        self.groups: dict[str, int] = {}
        self.pending: list[pa.RecordBatch] = []
        self.pending_rows = 0
        self.q: queue.Queue[tuple[bool, pa.RecordBatch] | None] = queue.Queue(maxsize=8)
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
            self.q.put((progress, batch))

    def _run(self) -> None:
        while (item := self.q.get()) is not None:
            if self.error is not None:
                continue
            try:
                is_progress, batch = item
                if is_progress:
                    self.parquet(pb.to_events(batch))
                    self._append_progress(batch)
                else:
                    self.parquet(batch)
                    self.pending.append(batch)
                    self.pending_rows += batch.num_rows
                    if self.pending_rows >= GROUP_ROWS:
                        self._flush()
            except BaseException as e:  # raised in the parsing thread
                self.error = e

    def _append_progress(self, batch: pa.RecordBatch) -> None:
        key = json.dumps(pb.constants(batch), sort_keys=True)
        grp = self.groups.setdefault(key, len(self.groups))
        self.cur.register("progress_batch", batch)
        self.cur.execute("INSERT INTO progress SELECT ts, ts_flag, rank, iteration, value, "
                         f"line_no, {grp} FROM progress_batch")
        self.cur.unregister("progress_batch")

    def _flush(self) -> None:
        if self.pending:
            self.cur.register("events_batch", pa.Table.from_batches(self.pending, EVENTS))
            self.cur.execute("INSERT INTO events_raw SELECT * FROM events_batch")
            self.cur.unregister("events_batch")
        self.pending, self.pending_rows = [], 0

    def close(self) -> int:
        """Finish writing; fill ``progress_groups``. Returns the number of event rows."""
        self.q.put(None)
        self.thread.join()
        if self.error is None:
            self._flush()
        self.parquet.close()
        if self.error is not None:
            raise self.error
        rows = [{"grp": g, **json.loads(k)} for k, g in self.groups.items()]
        self.cur.register("groups_arrow", pa.Table.from_pylist(rows, _GROUPS))
        self.cur.execute("INSERT INTO progress_groups SELECT * FROM groups_arrow")
        self.cur.unregister("groups_arrow")
        self.cur.close()
        return self.parquet.rows
