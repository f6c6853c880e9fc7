"""The parser interface and the row sinks every parser writes into.

Two kinds of parser:

* ``LineParser`` -- text read line by line. The reader hands it chunks of lines as a polars
  Series (newline stripped); the default ``parse_chunk`` calls ``parse_line`` for every line,
  and a parser with a high-volume line type (training progress) may override ``parse_chunk``
  to handle those lines vectorised and pass the rest to ``parse_line``.
  ``parse_line`` returns one of EVENT / NOISE / UNPARSED for the line's accounting and emits
  rows through ``self.events`` / ``self.records``. A multi-line block (a traceback, a torch
  elastic ChildFailedError report) may return EVENT for each of its lines and emit one row
  when the block ends (or in ``finish``).
* ``DocumentParser`` -- a whole JSON document; accounting is per record (job, event, pod).

Parsers know nothing of TOR: they turn text into rows. Nothing is silently dropped: a line
is an event, recognised noise, or unparsed (and a sample of unparsed lines is kept).
"""

from __future__ import annotations

import os
from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any, ClassVar, Protocol

import numpy as np
import polars as pl

from parsers.dstfold import FoldFix
from parsers.paths import host_from_path, job_from_path
from parsers.rowsink import RowSink
from parsers.schema import ATTEMPTS, EVENTS
from parsers.unknown import Forms

EVENT = 0  #: the line produced (or is part of a block that produces) an event or record
NOISE = 1  #: recognised, carries no reliability signal
UNPARSED = 2  #: nothing recognised it

UNPARSED_SAMPLES_PER_FILE = 20


def never_open(self: object) -> bool:
    """``is_open`` of a recogniser without multi-line state (``is_open = never_open``): the
    message layer does not ask it line by line (``MessageLayer.is_open``)."""
    return False


@dataclass
class FileContext:
    """What a parser knows about the file it reads, besides the lines."""

    path: str  #: path as given / displayed (stored in the ``file`` column)
    tz: tzinfo  #: zone for timestamps without one (--tz; default UTC)
    mtime: datetime | None = None  #: file modification time (UTC), for year inference
    year: int | None = None  #: --year override for year-less timestamps
    host_hint: str | None = None  #: host from the directory / file name
    job_hint: str | None = None  #: job id from the file name (slurm-1234.out)

    @classmethod
    def for_path(cls, path: str, tz: tzinfo, mtime: datetime | None = None,
                 year: int | None = None) -> FileContext:
        return cls(path=path, tz=tz, mtime=mtime, year=year, host_hint=host_from_path(path),
                   job_hint=job_from_path(path))


@dataclass
class Accounting:
    read: int = 0
    events: int = 0
    irrelevant: int = 0
    unparsed: int = 0
    samples: list[tuple[int, str]] = field(default_factory=list)
    #: every unparsed line, as masked forms with counts (parsers/unknown.py)
    unknown: Forms = field(default_factory=Forms)

    def note(self, status: int, line_no: int, text: str) -> None:
        self.read += 1
        if status == EVENT:
            self.events += 1
        elif status == NOISE:
            self.irrelevant += 1
        else:
            self.unparsed += 1
            self.unknown.add_line(text, line_no)
            if len(self.samples) < UNPARSED_SAMPLES_PER_FILE:
                self.samples.append((line_no, text[:500]))


def head_lines(head: str, n: int) -> list[str]:
    """``head.splitlines()[:n]`` without splitting all of a 64 KiB head (each sniffer reads a
    few lines of every file): the first n lines of a growing prefix, once it holds more than
    n (then the n-th line and the break after it are whole)."""
    size = 4096
    while size < len(head):
        lines = head[:size].splitlines()
        if len(lines) > n:
            return lines[:n]
        size *= 4
    return head.splitlines()[:n]


class Parser:
    """Common part of line and document parsers."""

    name: ClassVar[str] = "?"
    #: one-line description for ``tormortem sources``
    description: ClassVar[str] = ""
    unit: ClassVar[str] = "line"
    #: its lines are written in time order (a log), so a stamp's place tells which pass of a
    #: repeated local hour it is (``dstfold``); False for tables (sacct, scontrol, JSON)
    chronological: ClassVar[bool] = True

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.acct = Accounting()
        defaults: dict[str, Any] = {"source": self.name, "file": ctx.path, "ts_flag": "missing",
                                    "host_from": "unknown", "format": self.name}
        self.events = RowSink(EVENTS, defaults)
        self.records = RowSink(ATTEMPTS, {"source": self.name, "file": ctx.path})
        #: stamps of the hour daylight saving repeats told apart by line order (``dstfold``)
        self.fold = FoldFix.for_tz(ctx.tz) if self.chronological else None

    #: the highest score ``sniff`` ever gives (``registry.detect`` skips a parser that cannot
    #: beat the best so far: a fleet's 2,048 node logs were 2 s of sniffing)
    MAX_SCORE: ClassVar[int] = 100

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        """Confidence 0..MAX_SCORE that ``head`` (the first ~64 KiB, decoded) is this
        source."""
        return 0

    def host_fields(self, host: str | None) -> dict[str, Any]:
        """host/host_from for a row: the line's host, else the path's, else unknown."""
        if host:
            return {"host": host, "host_from": "line"}
        if self.ctx.host_hint:
            return {"host": self.ctx.host_hint, "host_from": "path"}
        return {"host": None, "host_from": "unknown"}


#: ``parse_chunk``'s ``prepared`` when ``prepare`` was not run for the chunk
NOT_PREPARED: Any = object()
#: a chunk of fewer lines is read line by line: the vectorised plan's fixed cost (polars
#: queries, each a round trip to its thread pool) is more than reading them in Python.
#: ``TORMORTEM_SMALL_CHUNK=0`` plans every chunk (the prefilter equivalence tests use it)
def _small_chunk(default: int = 256) -> int:
    """The setting, or its default when it is no whole number >= 0 (a test knob, not an option:
    junk in it must not stop a run)."""
    v = os.environ.get("TORMORTEM_SMALL_CHUNK", "").strip()
    return int(v) if v.isdigit() else default


SMALL_CHUNK = _small_chunk()


class LineParser(Parser):
    def parse_line(self, text: str, line_no: int) -> int:
        raise NotImplementedError

    #: the file's ``line_accounting.note`` from what parsing found (sacct's cut columns)
    file_note: str | None = None

    #: what ``prepare`` returned for the chunk ``parse_chunk`` is planning (None: nothing)
    premasks: Any = None

    #: ``prepare`` is line by line: its result for several files' lines together can be cut
    #: into each file's (``split_prepared``; ``parsers.batch`` prepares small files so)
    PREPARE_SPLITS: ClassVar[bool] = False

    def split_prepared(self, prepared: Any, sizes: list[int]) -> list[Any]:
        """``prepare``'s result for the lines of several files together, as each file's (of
        ``sizes`` lines each, in order): what ``prepare`` of its lines alone returns."""
        raise NotImplementedError

    def prepare(self, lines: pl.Series) -> Any:
        """Work on a chunk that depends on nothing but the chunk and ``self.ctx`` (vectorised
        extraction): the driver runs it on the reader thread, a chunk ahead of ``parse_chunk``,
        which gets the result as ``prepared``. Must not touch any other state. None here."""
        return None

    def parse_chunk(self, lines: pl.Series, first_line_no: int,
                    prepared: Any = NOT_PREPARED) -> None:
        """Parse a chunk of lines (newline stripped). ``first_line_no`` is 1-based.

        With a plan from ``vector_plan`` (see parsers/prefilter.py) only candidate lines go
        through ``parse_line``; without one, every line does."""
        self.premasks = None if prepared is NOT_PREPARED else prepared
        plan = self.vector_plan(lines) if len(lines) >= SMALL_CHUNK else None
        self.premasks = None
        if plan is not None:
            self.parse_planned(lines, first_line_no, plan)
            return
        note = self.acct.note
        parse = self.parse_line
        for i, text in enumerate(lines.to_list(), start=first_line_no):
            note(parse(text, i), i, text)

    def finish(self) -> None:
        """End of file: flush any open multi-line block."""

    # -- the prefiltered path (parsers/prefilter.py) ------------------------------------------
    def vector_plan(self, lines: pl.Series) -> Any:
        """A ``prefilter.ChunkPlan`` for the chunk, or None to read every line in Python
        (always None when ``prefilter.enabled()`` is false)."""
        return None

    def set_context(self, text: str, line_no: int) -> bool:
        """Learn from a line Python does not otherwise read what later lines inherit (its
        stamp, its envelope), without emitting or accounting anything; False if the line
        turned out to carry none (the caller then tries the context line before it)."""
        return True

    def pin_year(self, year: int | None) -> None:
        """The year the next parsed line's year-less stamp gets (``ChunkPlan.years``)."""

    def pin(self, values: dict[str, Any] | None) -> None:
        """Other per-line state for the next parsed line (``ChunkPlan.pins``); None: unpin."""

    def is_open(self) -> bool:
        """A multi-line block is open: the next line must go through ``parse_line``."""
        return False

    def open_wake(self) -> bool:
        """The open block can only be continued or ended by a line of the plan's ``wake``
        mask (or a candidate): the lines before the next such line are taken by the plan,
        as when no block is open (their context is read before that line as usual)."""
        return False

    def parse_planned(self, lines: pl.Series, first: int, plan: Any,
                      status: np.ndarray | None = None) -> np.ndarray:
        """Candidates (and lines inside open blocks) through ``parse_line``, the rest by the
        plan; accounts every line of the chunk. ``status`` (int8, -1 = not for this pass)
        may preset lines another vectorised path took."""
        n = len(lines)
        st = np.where(plan.noise, NOISE, UNPARSED).astype(np.int8)
        if plan.preset is not None:
            st = np.where(plan.preset >= 0, plan.preset, st).astype(np.int8)
        skip = np.zeros(n, bool) if status is None else status >= 0
        if status is not None:
            st[skip] = status[skip]
        cand = plan.candidate & ~skip
        idx = np.flatnonzero(cand)
        ctx = np.flatnonzero(plan.context) if plan.context is not None else None
        years = plan.years
        seen, pos, k = -1, 0, 0
        woken = None if plan.wake is None or status is not None or plan.preset is not None \
            else np.flatnonzero(plan.wake | cand)
        while True:
            if self.is_open() and pos < n and not skip[pos]:
                i = pos
                if woken is not None and self.open_wake():
                    w = bisect_left(woken, pos)
                    if w == woken.size:
                        break
                    i = int(woken[w])
            else:
                while k < idx.size and idx[k] < pos:
                    k += 1
                if k == idx.size:
                    break
                i = int(idx[k])
            if ctx is not None and ctx.size:
                if self.OWN_CONTEXT and plan.context[i]:
                    self._deferred = (lines, first, plan, ctx, i, seen)
                else:
                    self._context_before(lines, first, plan, ctx, i, seen)
            self._pin_at(plan, i)
            st[i] = self.parse_line(str(lines[i]), i + first)
            self._deferred = None
            seen, pos = i, i + 1
        if ctx is not None and ctx.size:
            self._context_before(lines, first, plan, ctx, n, seen)
        if years is not None:
            self.pin_year(None)
        if plan.pins is not None:
            self.pin(None)
        self._account(lines, first, st, skip, plan.shapes)
        return st

    #: a context line the parser reads sets all the context a following line needs, so
    #: before such a line the earlier context is read only if the parser asks for it
    #: (``resolve_context``: a line whose envelope turns out unreadable, a continuation)
    OWN_CONTEXT: ClassVar[bool] = False
    _deferred: tuple[Any, ...] | None = None

    def resolve_context(self) -> None:
        """Read the context deferred before the line being parsed (``OWN_CONTEXT``)."""
        if self._deferred is not None:
            lines, first, plan, ctx, i, seen = self._deferred
            self._deferred = None
            self._context_before(lines, first, plan, ctx, i, seen)
            self._pin_at(plan, i)

    def _pin_at(self, plan: Any, i: int) -> None:
        if plan.years is not None:
            self.pin_year(int(plan.years[i]) or None)
        if plan.pins is not None:
            self.pin({k: v[i] for k, v in plan.pins.items()})

    def _context_before(self, lines: pl.Series, first: int, plan: Any, ctx: np.ndarray,
                        i: int, seen: int) -> None:
        """Read the latest context line before ``i`` that Python has not seen (walking back
        while a candidate context line turns out to carry none)."""
        # bisect, not np.searchsorted: numpy releases the GIL for the search, and taking it
        # back from a busy reader thread cost a kernel candidate line ~30 us (a syslog of
        # candidate-heavy kernel lines: 7.3 of 19 s); bisect probes the array ~17 times, ~3 us
        j = bisect_left(ctx, i) - 1
        while j >= 0 and ctx[j] > seen:
            c = int(ctx[j])
            self._pin_at(plan, c)
            if self.set_context(str(lines[c]), c + first):
                return
            j -= 1

    def _account(self, lines: pl.Series, first: int, st: np.ndarray,
                 skip: np.ndarray, shapes: Any = None) -> None:
        """Counts and unparsed samples of the chunk's lines (those of ``skip`` excluded);
        ``shapes``: the chunk's ``dedupe.Unique``, if the plan has it."""
        mine = st[~skip] if skip.any() else st
        c = np.bincount(mine, minlength=3)
        acct = self.acct
        acct.read += int(mine.size)
        acct.events += int(c[EVENT])
        acct.irrelevant += int(c[NOISE])
        acct.unparsed += int(c[UNPARSED])
        if not c[UNPARSED]:
            return
        where = np.flatnonzero((st == UNPARSED) & ~skip)
        if shapes is not None:
            acct.unknown.add_shapes(lines, where, first, shapes)
        else:
            acct.unknown.add_chunk(lines.gather(where), pl.Series(where + first, dtype=pl.Int64))
        want = UNPARSED_SAMPLES_PER_FILE - len(acct.samples)
        if want > 0:
            where = where[:want]
            for i, text in zip(where.tolist(), lines.gather(where).to_list(), strict=True):
                acct.samples.append((i + first, text[:500]))


class DocumentParser(Parser):
    chronological: ClassVar[bool] = False
    unit = "record"

    #: the file's ``line_accounting.note`` from what parsing found (untimed events)
    file_note: str | None = None

    def parse_document(self, data: bytes) -> None:
        """Parse the whole file; account one unit per record through ``self.acct.note``."""
        raise NotImplementedError


class Emit(Protocol):
    """Emit one event row; fields not given are filled by the enclosing parser (ts, host, job,
    rank from the line's prefix or the file, file/line_no, source)."""

    def __call__(self, **fields: Any) -> None: ...


class Matcher(Protocol):
    """A recogniser for one family of lines inside a job's output (NCCL, torch distributed,
    Megatron, ...). ``match`` gets the line's message (timestamp / rank prefixes already
    removed by the job-log parser) and returns EVENT or NOISE when it recognises the line
    (emitting rows through ``emit``), or None to let the next matcher try. Matchers that
    collect multi-line blocks keep state and flush it in ``finish``."""

    def match(self, text: str, line_no: int, emit: Emit) -> int | None: ...

    def finish(self, emit: Emit) -> None: ...

    def is_open(self) -> bool: ...
