"""Local stamps in the hour that repeats when daylight saving time ends, told apart by order.

When the clocks go back (Europe/Berlin, 2024-10-27: 03:00 CEST becomes 02:00 CET), every local
time from 02:00 to 02:59:59 happens twice. A stamp without a zone read in ``--tz`` is taken as
the first of the two (``fold=0`` in Python, ``ambiguous="earliest"`` in polars), so a log
written through that night runs an hour backwards at the change, and its lines of the second
pass land an hour early: progress before its job's first execution (fault probe E6: the
analysis said executions were missing and advised ``sacct --duplicates``).

A log is written in order, so the second pass is told by that order: per file, in line
order, among the rows whose stamp (read as the first pass) falls in the repeated hour, the
first that is more than ``BACK_US`` earlier than one before it begins the second pass; it
and every such row after it are moved one repeat (the zone's change, an hour) later. A file
whose lines of that hour all come from one pass is left as read: nothing tells which pass.
Rows come per chunk; a row that comes after rows of later lines (a block's row, emitted when
the block ends) is moved when its line is at or after the second pass's first line.

Only stamps read in the zone are moved (``ts_flag`` ``assumed_tz``, and ``inherited``: a
line's stamp taken from the line before). sacct's records have no order to go by; their
``Elapsed`` tells (``parsers.sacct``, ``fold_end``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from parsers.timeutil import to_us

#: a step back smaller than this is lines written out of order, not the clocks going back
BACK_US = 60_000_000
#: ``ts_flag`` values of stamps read in the zone: as strings (EVENTS) and as codes (PROGRESS)
LOCAL_FLAGS = ("assumed_tz", "inherited")
LOCAL_CODES = (1, 3)


@lru_cache(maxsize=4096)
def repeats(tz: ZoneInfo, year: int) -> tuple[tuple[int, int, int], ...]:
    """The year's repeated local hours in ``tz``: (first, end, change), epoch microseconds of
    the first pass as ``fold=0`` reads it (``first <= ts < end``) and the change (how much
    later the second pass is)."""
    out = []
    t = datetime(year, 1, 1, tzinfo=UTC)
    stop = datetime(year + 1, 1, 1, tzinfo=UTC)
    step = timedelta(hours=1)
    before = t.astimezone(tz).utcoffset()
    while t < stop:
        after = (t + step).astimezone(tz).utcoffset()
        if before is not None and after is not None and after < before:
            lo, hi = t, t + step  # the change is in (lo, hi]: to the second
            while hi - lo > timedelta(seconds=1):
                mid = lo + (hi - lo) / 2
                if mid.astimezone(tz).utcoffset() == before:
                    lo = mid
                else:
                    hi = mid
            change = before - after
            out.append((to_us(hi - change), to_us(hi), change // timedelta(microseconds=1)))
        before = after
        t += step
    return tuple(out)


class FoldFix:
    """One file's second-pass state (see the module docstring); ``None`` from ``for_tz`` for a
    zone that never goes back."""

    def __init__(self, tz: ZoneInfo) -> None:
        self.tz = tz
        self.seen: dict[int, int] = {}  #: repeat (first) -> latest first-pass stamp so far
        self.second: dict[int, int] = {}  #: repeat (first) -> line the second pass began on
        self.last_line = 0  #: the latest line of a chunk already judged

    @staticmethod
    def for_tz(tz: tzinfo) -> FoldFix | None:
        if not isinstance(tz, ZoneInfo):
            return None
        now = datetime.now(UTC).year
        if not any(repeats(tz, y) for y in range(now - 3, now + 1)):
            return None
        return FoldFix(tz)

    def shifts(self, ts: np.ndarray, local: np.ndarray, line: np.ndarray) -> np.ndarray | None:
        """Microseconds to add to each row (None: none moves). ``ts``: epoch microseconds
        (nulls any value, not ``local``), ``local``: stamps read in the zone, ``line``: line
        numbers. The rows of one chunk together, any order."""
        if not local.any():
            return None
        sel = np.flatnonzero(local)
        t = ts[sel]
        years = range(datetime.fromtimestamp(int(t.min()) // 1_000_000, UTC).year,
                      datetime.fromtimestamp(int(t.max()) // 1_000_000, UTC).year + 1)
        add: np.ndarray | None = None
        for y in years:
            for first, end, change in repeats(self.tz, y):
                inside = (t >= first) & (t < end)
                if not inside.any():
                    continue
                rows = sel[inside]
                moved = self._judge(first, ts[rows], line[rows])
                if moved.any():
                    if add is None:
                        add = np.zeros(len(ts), np.int64)
                    add[rows[moved]] = change
        self.last_line = max(self.last_line, int(line.max()) if len(line) else 0)
        return add

    def _judge(self, first: int, t: np.ndarray, line: np.ndarray) -> np.ndarray:
        order = np.argsort(line, kind="stable")
        t, ln = t[order], line[order]
        late = ln <= self.last_line  # rows of lines judged with an earlier chunk
        moved = np.zeros(len(t), bool)
        began = self.second.get(first)
        if began is None:
            new = np.flatnonzero(~late)
            if new.size:
                u = t[new]
                # (the start: a stamp no row can be earlier than; no int64 overflow below)
                seen = self.seen.get(first, -(1 << 62))
                prior = np.maximum.accumulate(np.concatenate(
                    [np.array([seen], np.int64), u[:-1]]))
                back = np.flatnonzero(u < prior - BACK_US)
                if back.size:
                    began = int(ln[new[back[0]]])
                    self.second[first] = began
                else:
                    self.seen[first] = max(seen, int(u.max()))
        if began is not None:
            moved = ln >= began
        out = np.zeros(len(t), bool)
        out[order] = moved
        return out


def fix_events(fix: FoldFix, batches: list[pa.RecordBatch], progress: list[bool]
               ) -> list[pa.RecordBatch]:
    """A chunk's rows (EVENTS batches, or PROGRESS batches where ``progress``) with their
    second-pass stamps moved."""
    if not batches:
        return batches
    ts_l, loc_l, line_l = [], [], []
    for b, prog in zip(batches, progress, strict=True):
        ts = b.column("ts")
        flag = b.column("ts_flag")
        ok = pc.is_valid(ts)
        codes = pc.is_in(flag, value_set=pa.array(LOCAL_CODES if prog else LOCAL_FLAGS,
                                                  flag.type))
        ts_l.append(np.asarray(ts.cast(pa.int64()).fill_null(0).to_numpy(), np.int64))
        loc_l.append(np.asarray(pc.and_(ok, codes).fill_null(False)
                                .to_numpy(zero_copy_only=False), bool))
        line_l.append(np.asarray(b.column("line_no").cast(pa.int64()).fill_null(0)
                                 .to_numpy(), np.int64))
    add = fix.shifts(np.concatenate(ts_l), np.concatenate(loc_l), np.concatenate(line_l))
    if add is None:
        return batches
    out, at = [], 0
    for b, t in zip(batches, ts_l, strict=True):
        a = add[at: at + len(t)]
        at += len(t)
        if a.any():
            i = b.schema.get_field_index("ts")
            col = b.column(i)
            new = pa.array(t + a, pa.int64()).cast(col.type)
            b = b.set_column(i, b.schema.field(i), pc.if_else(pc.is_valid(col), new, col))
        out.append(b)
    return out
