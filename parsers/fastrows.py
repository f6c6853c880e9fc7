"""Rows built vectorised for a chunk, put in the order the per-line path would have emitted them.

A dialect with a *fast path* (a regular family of event lines whose rows polars can build for a
whole chunk: Slurm's ``sched: Allocate``, kubectl's event rows, ...) presets those lines' status
(``ChunkPlan.preset``) and builds their rows for the chunk (an Arrow batch for ``merge``, a
polars frame for ``merge_frame``); the other candidates still go
through ``parse_line``. The chunk's rows must then come out exactly as if every line had gone
through ``parse_line`` -- same rows, same order, one batch per chunk -- because events.parquet
is compared byte for byte and its row groups are cut by batch.

``Marks`` records, while ``parse_planned`` runs, which line each per-line row was emitted for
(the line ``parse_line`` was reading, which is not always the row's ``line_no``: a block's row
is emitted at its last line). ``merge`` then interleaves the per-line rows and the fast rows by
that line, stable, and drops the fast row of any line that went through ``parse_line`` after all
(a line inside a multi-line block that was open when the chunk reached it).

Choice: the interleaving is a stable sort by those keys (numpy argsort + an Arrow ``take``, or a
polars sort, which moves string views rather than strings: cheaper for rows with text); the
per-line rows are converted with ``RowSink.drain``'s own code (so coercion is the same).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta, timezone, tzinfo
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from parsers.rowsink import RowSink, frame_to_batch
from parsers.schema import EVENTS


class Marks:
    """(line number, per-line rows already in the sink) at each ``parse_line`` call; and
    the lines that went through ``parse_line`` (a fast row of such a line is dropped)."""

    def __init__(self, sink: RowSink) -> None:
        self.sink = sink
        self.lines: list[int] = []
        self.starts: list[int] = []
        self.parsed: list[int] = []

    def mark(self, line_no: int, parsed: bool = True) -> None:
        """Rows added from now on were emitted at ``line_no`` (read per line, or -- with
        ``parsed`` False -- a fast line at which a per-line row still pending is emitted:
        those rows go before the fast line's own)."""
        self.lines.append(line_no)
        self.starts.append(len(self.sink.cols[self.sink.names[0]]))
        if parsed:
            self.parsed.append(line_no)

    def unread(self, line_no: np.ndarray) -> np.ndarray:
        """Per fast row (its line ``line_no``): True unless that line went through
        ``parse_line`` after all (inside a block), whose rows then stand for it."""
        parsed = np.asarray(self.parsed, np.int64)
        return ~np.isin(line_no, parsed) if parsed.size else np.ones(len(line_no), bool)


def merge(sink: RowSink, marks: Marks, fast: pa.RecordBatch | None,
          fast_line_no: np.ndarray) -> None:
    """Put the chunk's per-line rows (in ``sink.cols``) and ``fast`` (rows of the lines
    ``fast_line_no``, in line order, one row per line) into ``sink`` as one batch, ordered as
    the per-line path would have emitted them."""
    if fast is None or fast.num_rows == 0:
        return
    keys = np.asarray(marks.lines, np.int64)
    keep = marks.unread(fast_line_no)
    if not keep.all():
        fast = fast.filter(pa.array(keep))
        fast_line_no = fast_line_no[keep]
        if fast.num_rows == 0:
            return
    slow = list(sink.drain())  # the per-line rows as drain would give them (one batch)
    if len(slow) > 1 or (slow and slow[0].schema != fast.schema):
        raise AssertionError("fast rows merge into plain per-line rows only")
    if not slow:
        sink.add_batch(fast)
        return
    k = slow[0].num_rows
    starts = np.asarray(marks.starts, np.int64)
    owner = np.searchsorted(starts, np.arange(k), side="right") - 1
    slow_key = np.where(owner >= 0, keys[np.maximum(owner, 0)], np.iinfo(np.int64).min)
    keys = np.concatenate([slow_key, fast_line_no.astype(np.int64)])
    order = np.argsort(keys, kind="stable")
    table = pa.Table.from_batches([slow[0], fast]).take(pa.array(order))
    batches = table.combine_chunks().to_batches()
    sink.add_batch(batches[0] if len(batches) == 1 else pa.concat_batches(batches))
    sink.count -= k  # the per-line rows were counted when added


def merge_frame(sink: RowSink, marks: Marks, fast: pl.DataFrame,
                fast_line_no: np.ndarray) -> None:
    """``merge`` for fast rows still in polars (every EVENTS column, in its polars type): the
    per-line rows join them there and the interleaving is a polars sort, which moves string
    views, not the strings (an Arrow ``take`` of a tqdm chunk's 100 k messages cost 18% of
    that mix); the chunk is converted to Arrow once."""
    keep = marks.unread(fast_line_no)
    if not keep.all():
        fast, fast_line_no = fast.filter(pl.Series(keep)), fast_line_no[keep]
    if fast.is_empty():
        return
    slow = list(sink.drain())
    if len(slow) > 1:
        raise AssertionError("fast rows merge into plain per-line rows only")
    if not slow:
        sink.add_batch(frame_to_batch(fast, EVENTS, {}))
        return
    k = slow[0].num_rows
    keys = np.asarray(marks.lines, np.int64)
    starts = np.asarray(marks.starts, np.int64)
    owner = np.searchsorted(starts, np.arange(k), side="right") - 1
    slow_key = np.where(owner >= 0, keys[np.maximum(owner, 0)], np.iinfo(np.int64).min)
    slow_df = pl.DataFrame(pl.from_arrow(slow[0]))
    both = pl.concat([slow_df.with_columns(pl.Series("_k", slow_key)),
                      fast.select([pl.col(c).cast(slow_df.schema[c]) for c in slow_df.columns])
                      .with_columns(pl.Series("_k", fast_line_no.astype(np.int64)))])
    merged = both.sort("_k", maintain_order=True).drop("_k")
    sink.add_batch(frame_to_batch(merged, EVENTS, {}))
    sink.count -= k  # the per-line rows were counted when added


def fixed_offset_us(tz: tzinfo) -> int | None:
    """The zone's UTC offset in microseconds when it has one offset all year (UTC, +02:00),
    else None (a zone with daylight saving: the per-line path converts each stamp)."""
    if not isinstance(tz, timezone):
        return None
    off = tz.utcoffset(None)
    return None if off is None else off // timedelta(microseconds=1)


#: ``YYYY-MM-DDTHH:MM:SS`` as ``datetime`` accepts it (the day of month is checked by polars)
ISO_SECONDS = r"[12][0-9]{3}-[01][0-9]-[0-3][0-9]T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"


def iso_us(stamp: pl.Expr, frac: pl.Expr, offset_us: int) -> pl.Expr:
    """Epoch microseconds of a zone-less ISO stamp (``ISO_SECONDS``) with its fraction digits
    (or null), read in a zone ``offset_us`` east of UTC: ``timeutil.iso_match_to_us`` for such
    stamps (fraction cut to microseconds, not rounded). Null for a date that does not exist."""
    us = frac.str.pad_end(6, "0").str.slice(0, 6).cast(pl.Int64).fill_null(0)
    return _seconds_us(stamp) + us - offset_us


def _seconds_us(stamp: pl.Expr) -> pl.Expr:
    """Epoch microseconds of ``YYYY-MM-DDTHH:MM:SS`` read as UTC (null: no such date)."""
    return stamp.str.to_datetime("%Y-%m-%dT%H:%M:%S", time_unit="us", strict=False) \
        .cast(pl.Int64)


def bracket_iso_us(line: pl.Expr, end: pl.Expr, offset_us: int) -> pl.Expr:
    """``iso_us`` of a line that begins ``[YYYY-MM-DDTHH:MM:SS]`` or ``[...SS.fraction]``
    (checked by the caller; ``end``: where its ``]`` is). The fraction's first six digits are
    read as a number and scaled (``12`` -> 120000): ~3.5 ms per 8 MiB of slurmctld log where
    ``iso_us``'s padding of a conditional slice took ~6.5."""
    n = (end.cast(pl.Int64) - 21).clip(0, 6)
    us = (line.str.slice(21, n).cast(pl.Int64, strict=False).fill_null(0)
          * pl.lit(10, pl.Int64).pow(6 - n))
    return _seconds_us(line.str.slice(1, 19)) + us - offset_us


#: a line of printable ASCII only (what ``printable`` computes)
PRINTABLE = r"^[ -~]*$"


def printable(lines: pl.Series) -> np.ndarray:
    """Per line (bool): every character printable ASCII, `` `` to ``~`` (``PRINTABLE``).

    That regex reads every byte of every line (~12 ms per 8 MiB chunk); ``from_buffer`` mostly
    answers in ~4 ms."""
    got = from_buffer(lines)
    if got is not None:
        return got
    return np.asarray(lines.str.contains(PRINTABLE).fill_null(False).to_numpy(), bool)


#: bytes ``only_printable`` tests at a time (its temporaries stay in the CPU cache)
_BLOCK = 1 << 16


def only_printable(a: np.ndarray) -> bool:
    """Every byte of ``a`` (uint8) printable ASCII or a newline. By blocks into two small
    scratch arrays: the whole-buffer expression allocated two temporaries of the chunk's size
    (8 MiB) and cost 2-3x as much, fresh pages being faulted in on every chunk."""
    low = np.empty(min(len(a), _BLOCK), np.uint8)
    hit = np.empty(len(low), bool)
    for s in range(0, len(a), _BLOCK):
        x = a[s: s + _BLOCK]
        n = len(x)
        np.subtract(x, np.uint8(32), out=low[:n])  # (wraps below 32)
        np.greater(low[:n], np.uint8(94), out=hit[:n])
        bad = np.count_nonzero(hit[:n])
        if bad:
            np.equal(x, np.uint8(10), out=hit[:n])
            if np.count_nonzero(hit[:n]) != bad:
                return False
    return True


def from_buffer(lines: pl.Series) -> np.ndarray | None:
    """``printable`` read from the bytes under the lines, or None when that cannot tell.

    A chunk from the reader is a string view over one buffer, the chunk's bytes. When that
    buffer holds only printable bytes and newlines (a line holds no newline), every line whose
    bytes are in it is printable: one numpy pass. The lines of at most 12 bytes, kept inside
    their views (not necessarily copies of the buffer's bytes), are tested apart. None for any
    other chunk: a \\r, a tab or UTF-8 anywhere in it, nulls, several buffers."""
    arr = lines.to_arrow(compat_level=pl.CompatLevel.newest())
    bufs = arr.buffers() if isinstance(arr, pa.StringViewArray) else []
    if len(bufs) != 3 or lines.null_count():
        return None
    if bufs[2] is not None and not only_printable(np.frombuffer(bufs[2], np.uint8)):
        return None
    ok = np.ones(len(lines), bool)
    short = np.flatnonzero(lines.str.len_bytes().to_numpy() <= 12)
    if short.size:
        ok[short] = np.asarray(lines.gather(short).str.contains(PRINTABLE).to_numpy(), bool)
    return ok


def parse_marked(p: Any, parse: Callable[[str, int], int], text: str, line_no: int) -> int:
    """``parse(text, line_no)`` in a chunk with preset lines (``joblog_preset.with_preset``):
    the line marked as read per line, and ``p._last_ts`` after it kept (``p._states``)."""
    p._marks.mark(line_no)
    st = parse(text, line_no)
    p._states.append(p._last_ts)
    return st
