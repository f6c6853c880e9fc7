"""``kubectl get events`` / ``kubectl events`` table output -> ``k8s_event`` rows.

Layouts (all found from the header line, so any of them, and a file holding several
listings one after another, is read):

* default: ``LAST SEEN  TYPE  REASON  OBJECT  MESSAGE``, with ``-A`` a leading ``NAMESPACE``
  (kubernetes pkg/printers/internalversion/printers.go, eventColumnDefinitions; and
  staging/src/k8s.io/kubectl/pkg/cmd/events/event_printer.go for ``kubectl events``);
* ``-o wide``: ``LAST SEEN  TYPE  REASON  OBJECT  SUBOBJECT  SOURCE  MESSAGE  FIRST SEEN
  COUNT  NAME`` (same column definitions, Priority 1 columns);
* kubectl before server-side printing (<= 1.10): ``LASTSEEN  FIRSTSEEN  COUNT  NAME  KIND
  SUBOBJECT  TYPE  REASON  SOURCE  MESSAGE`` (NAME is the event's name, ``<object>.<hex>``).

Cells are cut at the header's column starts (kubectl's tabwriter pads every column to one
width, padding 3). When a row does not fit the header (``--watch`` output is flushed line by
line and not aligned), the default layout is read by a whitespace regex instead.

LAST SEEN is an age printed by apimachinery ``duration.HumanDuration`` (``63s``, ``7m30s``,
``5h3m``, ``3d4h``, ``2y10d``, ``<unknown>``), rounded down to the printed unit; ``kubectl
events`` adds `` (x3 over 10m)`` when an event repeated. The row's ``ts`` is the file's mtime
minus that age, flag ``relative``: approximate, because the age was rounded down (up to one
unit: a day for ``3d``) and the mtime is only the listing time if the file was written then.
``value`` is the event's count when the row shows it, else null.

A message containing newlines (FailedMount's mount output) continues on raw lines after its
row; in the layouts where MESSAGE is the last column those lines are appended to the
pending row's message (rows are emitted when the next row, a header, or the end comes).
"""

from __future__ import annotations

import itertools
import re
from typing import Any, ClassVar

import numpy as np
import polars as pl

from parsers import fastrows, prefilter
from parsers.base import (
    EVENT,
    NOISE,
    NOT_PREPARED,
    SMALL_CHUNK,
    UNPARSED,
    FileContext,
    LineParser,
    head_lines,
)
from parsers.k8s_common import event_host, split_source
from parsers.k8s_events_fast import ascii_lines, table_rows
from parsers.schema import EVENTS
from parsers.timeutil import to_us

_UNIT_S = {"y": 365 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_AGE = r"<unknown>|<invalid>|(?:\d+[ydhms])+"
_SEEN = re.compile(rf"^(?P<age>{_AGE})(?: \(x(?P<count>\d+) over (?:{_AGE})\))?$")
_AGE_PART = re.compile(r"(\d+)([ydhms])")
_HEADER_TOKEN = re.compile(r"\S+(?: \S+)*")
_EVENT_NAME_SUFFIX = re.compile(r"\.[0-9a-f]{8,}$")
#: the default layout read by whitespace (for unaligned --watch output)
_LOOSE = re.compile(
    rf"^(?P<age>(?:{_AGE})(?: \(x\d+ over (?:{_AGE})\))?)\s+(?P<type>[A-Z]\w*)\s+"
    r"(?P<reason>\S+)\s+(?P<object>\S+)\s*(?P<message>.*)$"
)
_LOOSE_NS = re.compile(r"^(?P<ns>\S+)\s+(?P<rest>.*)$")
_SEEN_COLS = ("LAST SEEN", "LASTSEEN")
_NOISE_PREFIXES = ("No resources found", "No events found", "Warning: ")


def parse_seen(cell: str) -> tuple[int | None, int | None]:
    """A LAST SEEN cell -> (age in seconds or None for ``<unknown>``, repeat count or None).
    Raises ValueError when the cell is not an age."""
    m = _SEEN.match(cell)
    if not m:
        raise ValueError(cell)
    age = m.group("age")
    count = int(m.group("count")) if m.group("count") else None
    if age.startswith("<"):
        return None, count
    return sum(int(n) * _UNIT_S[u] for n, u in _AGE_PART.findall(age)), count


def is_header(line: str) -> bool:
    return ("LAST SEEN" in line or "LASTSEEN" in line) and "REASON" in line and (
        "OBJECT" in line or "KIND" in line)


class K8sEventsParser(LineParser):
    """Table printed by ``kubectl get events`` (plain, ``-A``, ``-o wide``) and
    ``kubectl events``."""

    name: ClassVar[str] = "k8s_events"
    description: ClassVar[str] = (
        "kubectl get events / kubectl events table (LAST SEEN TYPE REASON OBJECT MESSAGE; "
        "-A, -o wide)")

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.cols: list[tuple[str, int]] = []
        self.names: set[str] = set()
        #: the row waiting for continuation lines; an int: the chunk index of a row the fast
        #: path read (``parse_chunk``), turned into a dict before anything else touches it
        self.pending: dict[str, Any] | int | None = None
        self._chunk: pl.Series | None = None  #: the chunk's lines (fast path)
        self._taken: list[int] = []  #: chunk indices of fast rows emitted
        mt = self.ctx.mtime
        self.ref_us: int | None = to_us(mt) if mt is not None else None

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        """High when one of the first lines is an events table header."""
        for line in head_lines(head, 5):
            if is_header(line):
                return 90
        return 0

    def _set_header(self, line: str) -> None:
        self.cols = [(m.group(0), m.start()) for m in _HEADER_TOKEN.finditer(line)]
        self.names = {c for c, _ in self.cols}

    def parse_line(self, text: str, line_no: int) -> int:
        line = text.rstrip()
        if not line:
            self._flush()
            return NOISE
        if is_header(line) and "TYPE" in line:
            self._flush()
            self._set_header(line)
            return NOISE
        if line.startswith(_NOISE_PREFIXES):
            self._flush()
            return NOISE
        if not self.cols:
            return UNPARSED
        cells = self._cut(line)
        if cells is None or not self._valid(cells):
            cells = self._loose(line)
        if cells is not None:
            row = self._row(cells, line_no)
            if row is not None:
                self._flush()
                self.pending = row
                return EVENT
        if isinstance(self.pending, dict) and self.cols[-1][0] == "MESSAGE":
            # A message with newlines (FailedMount's "Mounting command: ..."): tabwriter
            # ends the row at the newline, so the rest of the message follows as raw lines.
            self.pending["message"] += "\n" + line
            return EVENT
        return UNPARSED

    def finish(self) -> None:
        self._flush()

    def _flush(self) -> None:
        if isinstance(self.pending, int):
            self._taken.append(self.pending)
        elif self.pending is not None:
            self.events.add(**self.pending)
        self.pending = None

    # -- the fast path (parsers/k8s_events_fast.py) ------------------------------------------
    def parse_chunk(self, lines: pl.Series, first_line_no: int,
                    prepared: Any = NOT_PREPARED) -> None:
        """Rows under a known header read by polars; every other line through
        ``parse_line`` in order, with the pending row handed over as a dict."""
        if len(lines) < SMALL_CHUNK or not prefilter.enabled():
            super().parse_chunk(lines, first_line_no, prepared)
            return
        stripped = lines.str.strip_chars_end()
        fast, rows = self._fast_rows(lines, stripped)
        if rows.is_empty():
            super().parse_chunk(lines, first_line_no, prepared)
            return
        marks = fastrows.Marks(self.events)
        # the lines stay in polars: Python reads only the few it needs (~0.6 s per 180 MB
        # of ``kubectl get events`` saved against a list of every line)
        self._chunk, self._taken = lines, []
        note = self.acct.note
        n = len(lines)
        fast_idx = np.flatnonzero(fast)
        # the last position (in fast_idx) of each run of consecutive fast lines
        run_ends = np.append(np.flatnonzero(np.diff(fast_idx) != 1), fast_idx.size - 1)
        i = 0
        while i < n:
            if not fast[i]:
                self._materialise(first_line_no)
                marks.mark(i + first_line_no)
                text = str(lines[i])
                note(self.parse_line(text, i + first_line_no), i + first_line_no, text)
                i += 1
                continue
            j = int(np.searchsorted(fast_idx, i))  # the run of fast lines from i
            end = int(fast_idx[run_ends[np.searchsorted(run_ends, j)]]) + 1
            if isinstance(self.pending, dict):
                marks.mark(i + first_line_no, parsed=False)
            self._flush()
            self._taken.extend(range(i, end - 1))
            self.pending = end - 1
            self.acct.read += end - i
            self.acct.events += end - i
            i = end
        self._materialise(first_line_no)  # the last row may continue in the next chunk
        taken = np.asarray(self._taken, np.int64)
        self._chunk, self._taken = None, []
        pos = np.searchsorted(rows.get_column("i").to_numpy(), taken)
        self._add_rows(rows[pos], taken + first_line_no, marks)

    def _fast_rows(self, lines: pl.Series, stripped: pl.Series
                   ) -> tuple[np.ndarray, pl.DataFrame]:
        """Fast-path mask and rows of the chunk (``stripped``: its lines right-stripped),
        header by header (the one in effect at its start, then each header line's)."""
        maybe = np.flatnonzero(np.asarray(
            stripped.str.contains("LAST SEEN|LASTSEEN").fill_null(False).to_numpy(), bool))
        heads = [h for h in maybe.tolist() if is_header(str(stripped[h]))
                 and "TYPE" in str(stripped[h])]
        bounds = [0, *heads, len(stripped)]
        mask = np.zeros(len(stripped), bool)
        ascii_ok = ascii_lines(lines, stripped) if self.cols or heads else mask
        frames = []
        cols = self.cols
        for a, b in itertools.pairwise(bounds):
            if a in heads:
                cols = [(m.group(0), m.start()) for m in _HEADER_TOKEN.finditer(str(stripped[a]))]
                a += 1
            if not cols or b <= a:
                continue
            m, rows = table_rows(stripped.slice(a, b - a), cols, self.ref_us,
                                 self.ctx.host_hint, ascii_ok[a:b])
            if rows.height:
                mask[a:b] = m
                frames.append(rows.with_columns(pl.col("i") + a))
        return mask, (pl.concat(frames) if frames else pl.DataFrame())

    def _materialise(self, first: int) -> None:
        """A fast row still pending becomes the dict ``parse_line`` would have made."""
        if isinstance(self.pending, int):
            i = self.pending
            assert self._chunk is not None
            line = str(self._chunk[i]).rstrip()
            cells = self._cut(line)
            assert cells is not None
            self.pending = self._row(cells, i + first)

    def _add_rows(self, rows: pl.DataFrame, line_no: np.ndarray, marks: fastrows.Marks) -> None:
        const = {"kind": "k8s_event", "source": self.name, "file": self.ctx.path}
        frame = rows.select(
            pl.col("ts").cast(pl.Datetime("us", "UTC")), "ts_flag", "code", "value", "device",
            "message", "format", "host", "host_from", pl.Series("line_no", line_no),
            *(pl.lit(v, pl.String).alias(c) for c, v in const.items()),
            *(pl.lit(None, dt).alias(c) for c, dt in (
                ("uptime_s", pl.Float64), ("rank", pl.Int32), ("iteration", pl.Int64),
                ("job_id", pl.String))))
        fastrows.merge_frame(self.events, marks, frame.select(EVENTS.names), line_no)

    def _cut(self, line: str) -> dict[str, str] | None:
        """Cells by the header's column starts, or None if a cut would split a word."""
        cells: dict[str, str] = {}
        n = len(self.cols)
        for i, (col, start) in enumerate(self.cols):
            if i + 1 < n:
                end = self.cols[i + 1][1]
                if len(line) >= end and line[end - 1] != " ":
                    return None
                cells[col] = line[start:end].strip()
            else:
                if start > 0 and len(line) > start and line[start - 1] != " ":
                    return None
                cells[col] = line[start:].strip()
        return cells

    def _valid(self, cells: dict[str, str]) -> bool:
        seen = next((cells[c] for c in _SEEN_COLS if c in cells), None)
        if seen is None or not _SEEN.match(seen):
            return False
        typ = cells.get("TYPE", "")
        return bool(typ) and typ[0].isupper() and typ.isalpha() and bool(cells.get("REASON"))

    def _loose(self, line: str) -> dict[str, str] | None:
        """Default layout (optionally with NAMESPACE) read by whitespace."""
        if "OBJECT" not in self.names or "SOURCE" in self.names:
            return None
        ns = None
        if "NAMESPACE" in self.names:
            mns = _LOOSE_NS.match(line)
            if not mns:
                return None
            ns, line = mns.group("ns"), mns.group("rest")
        m = _LOOSE.match(line)
        if not m:
            return None
        cells = {"LAST SEEN": m.group("age"), "TYPE": m.group("type"),
                 "REASON": m.group("reason"), "OBJECT": m.group("object"),
                 "MESSAGE": m.group("message")}
        if ns is not None:
            cells["NAMESPACE"] = ns
        return cells

    def _row(self, cells: dict[str, str], line_no: int) -> dict[str, Any] | None:
        """The event row for a table row's cells (None if LAST SEEN is not an age)."""
        seen = next(cells[c] for c in _SEEN_COLS if c in cells)
        try:
            age_s, count = parse_seen(seen)
        except ValueError:
            return None
        if count is None and cells.get("COUNT", "").isdigit():
            count = int(cells["COUNT"])
        obj = cells.get("OBJECT")
        if obj is None:  # old layout: KIND + event NAME (<object name>.<hex>)
            kind_cell, ev_name = cells.get("KIND", ""), cells.get("NAME", "")
            obj = f"{kind_cell.lower()}/{_EVENT_NAME_SUFFIX.sub('', ev_name)}" if ev_name \
                else kind_cell.lower()
        kind, _, name = obj.partition("/")
        comp, inst = split_source(cells.get("SOURCE", ""))
        reason = cells.get("REASON") or None
        message = cells.get("MESSAGE", "")
        host = event_host(kind, name or None, comp, inst, reason, message)
        if age_s is not None and self.ref_us is not None:
            ts: int | None = self.ref_us - age_s * 1_000_000
            flag = "relative"
        else:
            ts, flag = None, "missing"
        fmt = "wide" if "SOURCE" in self.names else "table"
        if "OBJECT" not in self.names:
            fmt = "table-old"
        return dict(ts=ts, ts_flag=flag, kind="k8s_event", code=reason,
                    value=float(count) if count is not None else None, device=obj,
                    message=message, line_no=line_no, format=f"k8s_events-{fmt}",
                    **self.host_fields(host))
