"""events.parquet written again with kernel uptime-only stamps anchored to their host's boot
(and year-less stamps moved by ``years.py``), rows in the same order.

``events_boots.sql`` estimates each host's most recent boot; ``events_anchored.sql`` is the
definition of the rewrite, a DuckDB query per row group. Only a few rows of a row group
change, and that query (two joins, a sort, the conversion both ways) was most of the
rewrite's time (fleet-dir mix: ~0.3 of ~0.6 s, on the client after every worker is done), so
a row group is rewritten here instead: the rows whose year moves get DuckDB's own
``ts + to_years(n)`` (``_years_moved``: calendar arithmetic, Feb 29 included), the uptime-only
rows ``boot + round(uptime)`` with Arrow and numpy (``_uptime_fixed``), the others are kept
as read. A row group that cannot be vouched for here (a stamp out of range, an uptime that is
not finite) goes through the query, whose answer (or error) is the definition.
``tests/pipeline/test_anchoring.py`` compares the two.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from parsers.schema import EVENTS
from pipeline.ingest import ruletable as rules_mod
from pipeline.ingest.sink import EventsParquet

#: rows of events.parquet rewritten at a time (each a row group of the new file). 16,384, not
#: 65,536: the fleet-dir mix's peak RSS with --jobs 1 was 520 MiB, the rewrite's parts adding
#: ~65 MiB to the parse's peak; now 450-461 MiB (--jobs 2: 383-442 -> 330-371), in the same
#: time (3 alternated runs each; the Llama-3 analyze 6.5-7.8 s either way)
ANCHOR_ROWS = 1 << 14
#: epoch microseconds of years 1-9999 (Python's datetime): a stamp outside is the query's to make
_MIN_US, _MAX_US = -62_135_596_800_000_000, 253_402_300_799_999_999


def anchor(out: Path, con: duckdb.DuckDBPyConnection, events_id: str,
           shifts: dict[str, int]) -> tuple[int, int]:
    """Rewrite ``out``/events.parquet; ``shifts``: the years each file's year-less stamps move
    (what the table ``year_shift`` holds). Returns the uptime-only rows (anchored, left
    unanchored)."""
    con.execute(rules_mod.sql("events_boots"))
    boots = con.sql("SELECT host, boot_us FROM latest_boot").to_arrow_table()
    w = EventsParquet(out / "events.parquet.tmp")
    query = rules_mod.sql("events_anchored")
    src = pq.ParquetFile(out / "events.parquet")
    fast = os.environ.get("TORMORTEM_ANCHOR_SQL", "0") != "1"
    # one thread for the parts: each is small, and every thread of DuckDB keeps what it
    # allocated (fleet-dir mix: peak RSS 497 MiB with two, ~455 with one)
    con.execute("SET threads = 1")
    anchored = unanchored = 0
    for batch in src.iter_batches(ANCHOR_ROWS):  # a part at a time (a 416K-row group: +320 MiB)
        got = _uptime_fixed(_years_moved(batch, shifts, con), boots) if fast else None
        if got is None:
            part = pa.Table.from_batches([batch]).append_column(
                "rn", pa.array(np.arange(batch.num_rows)))
            con.register("part", part)
            table = con.sql(query).to_arrow_table()
            con.unregister("part")
            got = pa.Table.from_arrays(
                [c.cast(f.type) for c, f in zip(table.columns, EVENTS, strict=True)],
                schema=EVENTS)
        flags = pc.value_counts(got.column("ts_flag"))
        for item in flags.to_pylist():
            if item["values"] == "uptime_anchored":
                anchored += item["counts"]
            elif item["values"] == "uptime":
                unanchored += item["counts"]
        w(got)
    con.execute("RESET threads")
    w.close(events_id)
    shutil.move(out / "events.parquet.tmp", out / "events.parquet")
    return anchored, unanchored


def _years_moved(batch: pa.RecordBatch, shifts: dict[str, int],
                 con: duckdb.DuckDBPyConnection) -> pa.RecordBatch:
    """``batch`` with the ``inferred_year`` stamps of the files in ``shifts`` moved by their
    years, by DuckDB (``ts + to_years(n)``, as ``events_anchored.sql``) on those rows only."""
    if not shifts:
        return batch
    files = pa.array(list(shifts), pa.string())
    at = pc.index_in(batch.column("file"), value_set=files)
    sel = pc.and_(pc.equal(batch.column("ts_flag"), "inferred_year"), pc.is_valid(at))
    mask = np.asarray(sel.fill_null(False).to_numpy(zero_copy_only=False), bool)
    rows = np.flatnonzero(mask)
    if not rows.size:
        return batch
    ts = batch.column("ts")
    years = pc.take(pa.array(list(shifts.values()), pa.int32()), pc.take(at, rows))
    con.register("moved_part", pa.table({"ts": pc.take(ts, rows), "n": years}))
    moved = con.sql("SELECT ts + to_years(n) AS ts FROM moved_part").to_arrow_table()
    con.unregister("moved_part")
    new = pc.replace_with_mask(ts, pa.array(mask), moved.column("ts").combine_chunks()
                               .cast(ts.type))
    return batch.set_column(batch.schema.get_field_index("ts"), batch.schema.field("ts"), new)


def _uptime_fixed(batch: pa.RecordBatch, boots: pa.Table) -> pa.RecordBatch | None:
    """``events_anchored.sql``'s anchoring of one row group: a row with no ``ts``, an
    ``uptime_s`` and a host in ``boots`` gets ``boot_us + round(uptime_s * 1e6)`` (DuckDB's
    ``round``: half away from zero) and the flag ``uptime_anchored``; the rest is kept.
    None where that cannot be computed here (the query decides)."""
    ts = batch.column("ts")
    need = pc.and_(pc.is_null(ts), pc.is_valid(batch.column("uptime_s")))
    if not pc.any(need).as_py():
        return batch
    at = pc.index_in(batch.column("host"), value_set=boots.column("host"))
    fix = pc.and_(need, pc.is_valid(at)).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(fix)
    if not rows.size:
        return batch
    up = np.asarray(batch.column("uptime_s").to_numpy(zero_copy_only=False), np.float64)[rows]
    boot = np.asarray(pc.take(boots.column("boot_us"), pc.take(at, rows))
                      .to_numpy(zero_copy_only=False), np.int64)
    if not np.isfinite(up).all():
        return None
    micros = _round_half_away(up * 1e6)
    # in float: a sum beyond int64 or the timestamp range is the query's to refuse
    end = boot.astype(np.float64) + micros
    if (np.abs(micros) > 2.0 ** 62).any() or (end < _MIN_US).any() or (end > _MAX_US).any():
        return None
    values = np.zeros(batch.num_rows, np.int64)
    values[rows] = boot + micros.astype(np.int64)
    mask = pa.array(fix)
    flag = batch.column("ts_flag")
    for name, new in (("ts", pc.if_else(mask, pa.array(values).cast(ts.type), ts)),
                      ("ts_flag", pc.if_else(mask, pa.scalar("uptime_anchored", flag.type),
                                             flag))):
        i = batch.schema.get_field_index(name)
        batch = batch.set_column(i, batch.schema.field(i), new)
    return batch


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """C's ``round`` (DuckDB's for DOUBLE): halves away from zero, exactly (the fraction
    ``x - trunc(x)`` of a double is exact, where ``floor(x + 0.5)`` rounds 0.49999999999999994
    up)."""
    whole = np.trunc(x)
    out: np.ndarray = whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0.0)
    return out
