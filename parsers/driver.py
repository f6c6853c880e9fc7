"""Run one parser over one file: sniff, stream chunks, drain rows, account every line."""

from __future__ import annotations

import hashlib
import json
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from parsers import dstfold, progress_batch, registry, remote
from parsers.base import (
    Accounting,
    DocumentParser,
    FileContext,
    LineParser,
    Parser,
)
from parsers.batch import Opened, Ready
from parsers.filecheck import (
    TEST_CMD,
    DocumentError,
    looks_binary,
    read_head_or_note,
    unparsed_lines,
    with_notes,
)
from parsers.heap import release_free_memory
from parsers.reader import (
    CHUNK_BYTES,
    CorruptInput,
    InputFile,
    ReadStats,
    decode,
    iter_line_chunks,
    open_binary,
    prefetch,
)
from parsers.schema import ATTEMPTS, EVENTS
from parsers.slurm_sacct_fields import headerless_note
from parsers.text import TextParser
from parsers.utf16 import Transcoded

#: chunks whose preparation is queued ahead of the one being parsed (the parsing thread
#: prepares a later one itself rather than wait: ``_prepared_chunks``)
AHEAD = 2

BatchFn = Callable[[pa.RecordBatch], None]
#: a document that is not JSON, or JSON of another shape than the parser's source writes (a
#: field of another type): the file's lines are counted unparsed, with the reason, no rows
DOCUMENT_ERRORS = (json.JSONDecodeError, DocumentError, UnicodeDecodeError, AttributeError,
                   TypeError, KeyError, IndexError)


@dataclass
class FileResult:
    file: str
    source: str
    unit: str
    acct: Accounting
    nbytes: int
    note: str | None = None  #: why a file was not parsed (unknown format, bad JSON ...)
    stats: ReadStats | None = None  #: what reading found (hash, growth, cut lines)


def _ctx(f: InputFile, tz: tzinfo, year: int | None) -> FileContext:
    if f.url is not None:
        mtime = remote.stat(f.url)[1]
    else:
        try:
            mtime = datetime.fromtimestamp(os.stat(f.path).st_mtime, UTC)
        except OSError:
            mtime = None
    return FileContext.for_path(f.display, tz, mtime, year)


def _drain(p: Parser, on_events: BatchFn, on_records: BatchFn,
           on_progress: BatchFn | None = None) -> None:
    batches = list(p.events.drain())
    if p.fold is not None and batches:
        batches = dstfold.fix_events(p.fold, batches,
                                     [progress_batch.is_progress(b) for b in batches])
    for b in batches:
        if progress_batch.is_progress(b):
            if on_progress is not None:
                on_progress(b)
            else:
                on_events(progress_batch.to_events(b))
        else:
            on_events(b)
    for b in p.records.drain():
        on_records(b)


def _unparsed_file(f: InputFile, source: str, note: str, stats: ReadStats | None = None
                   ) -> FileResult:
    """Count a file nobody can read: every line unparsed, first lines kept as samples."""
    acct = Accounting()
    stats = stats if stats is not None else ReadStats()
    nbytes = 0
    try:
        for lines, first, n in iter_line_chunks(f, stats=stats):
            nbytes += n
            for i, text in enumerate(lines.head(40).to_list(), start=first):
                acct.note(2, i, text)
            rest = len(lines) - min(len(lines), 40)
            acct.read += rest
            acct.unparsed += rest
    except CorruptInput as e:
        note = f"{note}; {e.why} after {e.after:,} bytes (the rest is lost)"
    return FileResult(f.display, source, "line", acct, max(nbytes, stats.bytes),
                      with_notes(note, stats), stats)


def _prepared_chunks(parser: LineParser, path: Path | InputFile, chunk_bytes: int = CHUNK_BYTES,
                     stats: ReadStats | None = None
                     ) -> Iterator[tuple[pl.Series, int, int, Any]]:
    """(lines, first line number, bytes, prepared) per chunk, in order.

    The reader thread reads and splits chunks ahead. A parser with a ``prepare`` step gets it
    run on a helper thread, ``AHEAD`` chunks ahead of ``parse_chunk``; when the parsing thread
    gets to a chunk whose preparation has not started, it prepares that chunk itself, and
    when it is still running, the parsing thread prepares the next chunk not yet begun rather
    than wait (work stealing). On 2 cores that keeps the preparing side, the slowest stage of
    a job log's ingest, from leaving a core idle: ~10% less wall time than one thread
    preparing two chunks ahead; the stealing of a later chunk, 3-14% less again on the
    benchmark's job logs and syslog (tqdm 6.0 -> 5.7 s, nccl-info 2.88 -> 2.48 s)."""
    if _small(path, chunk_bytes):  # one chunk: a thread would only cost its start-up
        for lines, first, n in iter_line_chunks(path, chunk_bytes, stats):
            yield lines, first, n, parser.prepare(lines)
        return
    # one chunk read ahead: the prepare window holds AHEAD more (10 GiB of syslog: peak
    # RSS 404 MiB with two read ahead, 312 with one; no slower)
    chunks = prefetch(iter_line_chunks(path, chunk_bytes, stats), depth=1)
    try:
        if type(parser).prepare is LineParser.prepare:
            for lines, first, n in chunks:
                yield lines, first, n, None
            return
        with ThreadPoolExecutor(1, thread_name_prefix="tormortem-prepare") as pool:
            window: deque[tuple[pl.Series, int, int, Future[Any]]] = deque()

            def ready() -> tuple[pl.Series, int, int, Any]:
                lines, first, n, job = window.popleft()
                if job.cancel():
                    return lines, first, n, parser.prepare(lines)
                if not job.done():  # rather than wait, prepare a later chunk not yet begun
                    for i, (later, f2, n2, job2) in enumerate(window):
                        if job2.cancel():
                            window[i] = (later, f2, n2, _done(parser.prepare, later))
                            break
                return lines, first, n, job.result()

            while True:
                try:
                    lines, first, n = next(chunks)
                except StopIteration:
                    break
                except Exception:  # a read that failed (a truncated .gz): what was read
                    while window:  # before it is still parsed, then the error is raised
                        yield ready()
                    raise
                window.append((lines, first, n, pool.submit(parser.prepare, lines)))
                if len(window) > AHEAD:
                    yield ready()
            while window:
                yield ready()
    finally:
        chunks.close()  # stops the reader thread if the caller gave up early


def _done(prepare: Callable[[pl.Series], Any], lines: pl.Series) -> Future[Any]:
    """``prepare(lines)`` run now, as a finished future: an error it raises comes out when
    that chunk's turn comes, as from the helper thread, not before the chunks ahead of it."""
    f: Future[Any] = Future()
    try:
        f.set_result(prepare(lines))
    except Exception as e:
        f.set_exception(e)
    return f


def _small(path: Path | InputFile, chunk_bytes: int) -> bool:
    """A plain file of at most one chunk (a fleet's many small node logs)."""
    f = path if isinstance(path, InputFile) else InputFile(path, str(path))
    if f.stream is not None:
        return False
    if f.url is not None:
        size = remote.stat(f.url)[0]
        return size is not None and size <= chunk_bytes
    try:
        return os.stat(f.path).st_size <= chunk_bytes
    except OSError:
        return False


def open_parser(f: InputFile, stats: ReadStats, *, tz: tzinfo = UTC, year: int | None = None,
                source: str | type[Parser] | None = None
                ) -> FileResult | tuple[Parser, str | None]:
    """The parser for ``f`` (named by ``source``, else sniffed from its head) and the note to
    give the file (read as text: no known layout), or the result of a file that is not
    parsed at all (unreadable, corrupt, binary)."""
    head = read_head_or_note(f, stats)
    if isinstance(head, str):
        return FileResult(f.display, "unknown", "line", Accounting(), 0, head, stats)
    note: str | None = None
    if head[257:262] == b"ustar":  # POSIX/GNU tar's magic (ustar header, offset 257)
        return FileResult(f.display, "unknown", "line", Accounting(), 0, "quarantined, not "
                          "read: a tar archive; extract it (tar -xf FILE) and pass its folder",
                          stats)
    if source is None:
        if looks_binary(head):
            return _unparsed_file(f, "unknown", "binary file, not a log", stats)
        cls, _score = registry.detect(decode(head.replace(b"\x00", b"")), f.display)
        if cls is None:  # no known layout: the prefix and message layers on every line
            cls = TextParser
            note = headerless_note(decode(head[:8192])) or (
                "no known layout; read as text (every signature tried); name a source with "
                "--source if it is one")
    elif isinstance(source, str):
        cls = registry.get(source)
    else:
        cls = source
    return cls(_ctx(f, tz, year)), note


def parse_file(f: InputFile, on_events: BatchFn, on_records: BatchFn, *, tz: tzinfo = UTC,
               year: int | None = None, source: str | type[Parser] | None = None,
               on_progress: BatchFn | None = None, stats: ReadStats | None = None,
               ready: Ready | Opened | None = None) -> FileResult:
    """Parse one file with the named parser (or the sniffed one), streaming rows out.

    Event rows go to ``on_events`` as EVENTS batches; bulk progress rows come as compact
    PROGRESS batches (progress_batch.py) to ``on_progress`` if given, else expanded to EVENTS
    and passed to ``on_events``. ``stats`` bounds the read and receives what it found; a file
    that cannot be read or decompressed is returned with a note, never raised. ``ready``: the
    file already read and prepared, or only sniffed (``parsers.batch``, with these
    ``stats``)."""
    stats = stats if stats is not None else ReadStats()
    if isinstance(ready, Ready):
        p = ready.parser
        p.parse_chunk(ready.lines, 1, ready.prepared)
        _drain(p, on_events, on_records, on_progress)
        release_free_memory()
        p.finish()
        _drain(p, on_events, on_records, on_progress)
        return FileResult(f.display, p.name, "line", p.acct, max(ready.nbytes, stats.bytes),
                          with_notes(_joined(ready.note, p.file_note, _feb29(p)), stats), stats)
    got = open_parser(f, stats, tz=tz, year=year, source=source) if ready is None \
        else ready.got
    if isinstance(got, FileResult):
        return got
    assert isinstance(got, tuple)
    parser, note = got
    cls = type(parser)
    if isinstance(parser, DocumentParser):
        try:
            with open_binary(f) as fh:
                data = fh.read()
        except CorruptInput as e:
            return FileResult(f.display, "unknown", "record", Accounting(), 0,
                              f"quarantined: {e}", stats)
        stats.bytes = len(data)
        stats.encoding = fh.encoding if isinstance(fh, Transcoded) else None
        if stats.hash:
            stats.sha256 = hashlib.sha256(data).hexdigest()
        try:
            parser.parse_document(data)
        except DOCUMENT_ERRORS as e:
            why = (f"not valid JSON for {cls.name}: {e}" if isinstance(e, ValueError) else
                   f"not the structure {cls.name} has ({type(e).__name__}: {e})")
            if f.stream is not None:  # read once: count the lines from what was read
                return FileResult(f.display, cls.name, "line", unparsed_lines(data), len(data),
                                  why, stats)
            stats.bytes = 0
            res = _unparsed_file(f, cls.name, why, stats)
            return res
        _drain(parser, on_events, on_records)
        return FileResult(f.display, cls.name, "record", parser.acct, len(data),
                          with_notes(_joined(note, parser.file_note), stats), stats)
    assert isinstance(parser, LineParser)
    nbytes = 0
    try:
        for lines, first, n, prep in _prepared_chunks(parser, f, stats=stats):
            parser.parse_chunk(lines, first, prep)
            nbytes += n
            _drain(parser, on_events, on_records, on_progress)
            release_free_memory()
    except CorruptInput as e:  # the lines before the damage are kept, the rest is named lost
        note = "; ".join(x for x in (f"quarantined after {e.after:,} bytes: {e.why} "
                                     f"(the rest is lost); check it with `{TEST_CMD[e.kind]} "
                                     "FILE`", note) if x)
    parser.finish()
    _drain(parser, on_events, on_records, on_progress)
    return FileResult(f.display, cls.name, "line", parser.acct, max(nbytes, stats.bytes),
                      with_notes(_joined(note, parser.file_note, _feb29(parser)), stats), stats)


def _feb29(parser: Parser) -> str | None:
    """The note for year-less Feb 29 stamps in a year without one (``timeutil.yearless_us``):
    those lines have no time (fault probe H2: a node's Xid lost, its interruption blamed on
    symptoms, no word)."""
    years = getattr(parser, "years", None)
    n = getattr(years, "feb29", 0)
    if not n:
        return None
    return (f"{n:,} line(s) dated Feb 29 in {getattr(years, 'feb29_year', '?')}, a year "
            "without one (taken from the file's date): not placed in time; give the log's "
            "year with --year")


def _joined(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


def parse_text(cls: type[Parser], text: str, path: str = "test.log", *, tz: tzinfo = UTC,
               mtime: datetime | None = None, year: int | None = None
               ) -> tuple[pa.Table, pa.Table, Accounting]:
    """Parse ``text`` in memory (tests, ``explain`` on stdin): events, records, accounting."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / Path(path).name
        p.write_text(text, encoding="utf-8")
        if mtime is not None:
            os.utime(p, (mtime.timestamp(), mtime.timestamp()))
        events: list[pa.RecordBatch] = []
        records: list[pa.RecordBatch] = []
        res = parse_file(InputFile(p, path), events.append, records.append, tz=tz, year=year,
                         source=cls)
    return (pa.Table.from_batches(events, EVENTS), pa.Table.from_batches(records, ATTEMPTS),
            res.acct)
