"""Many small files of one kind prepared together: a fleet's node logs.

A 200 KB syslog costs ~6.5 ms to read, and ~3 ms of it is the fixed cost of its plan's
polars queries (each compiles its regular expressions: ~0.8 ms for the recognisers'
anchors, ~0.7 for the stamp's month), whatever the file's size. A parser whose ``prepare``
is line by line (``LineParser.PREPARE_SPLITS``: each line's result depends on that line
alone) gets the lines of a run of consecutive small files of its kind prepared in one call,
each file then parsed, in input order, with its share (``split_prepared``): the same
prepared values, so the same rows (``tests/parsers/test_batch.py``). A parser whose
``prepare`` is line by line only in its costly parts (``PreparesRuns``: the job logs, one
per Slurm job, ~3.5 ms each of fixed costs) prepares the run itself, each file's value what
its ``prepare`` alone gives.

``Lookahead`` is what the readers of a list of files (``pipeline.ingest``: the serial loop,
a worker's task) hold: ``take(i)`` gives file ``i`` read and prepared, reading and preparing
the run of small files it begins when it is not yet.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import polars as pl

from parsers.base import LineParser
from parsers.reader import CHUNK_BYTES, InputFile, ReadStats, compression, iter_line_chunks

#: a file of at most this many bytes may join a run; a run holds at most RUN_BYTES
SMALL_BYTES = 2 << 20
RUN_BYTES = 16 << 20
RUN_FILES = 256


#: ``driver.open_parser`` with the reader's options: a file's parser and note, or the
#: result of a file that is not parsed
Opener = Callable[[InputFile, ReadStats], object]


@runtime_checkable
class PreparesRuns(Protocol):
    def prepare_run(self, parsers: list[Any], parts: list[pl.Series]) -> list[Any]:
        """``prepare`` of each of ``parts`` (the lines of consecutive files of this parser's
        kind, each read by its parser in ``parsers``), computed together."""
        ...


def prepare_run(parsers: list[LineParser], parts: list[pl.Series]) -> list[Any]:
    """Each file's ``prepare`` value, the run's files prepared together."""
    first = parsers[0]
    if isinstance(first, PreparesRuns):
        return first.prepare_run(parsers, parts)
    both = pl.concat(parts) if len(parts) > 1 else parts[0]
    return first.split_prepared(first.prepare(both), [len(p) for p in parts])


def _batches(parser: object) -> bool:
    return isinstance(parser, LineParser) and (parser.PREPARE_SPLITS
                                               or isinstance(parser, PreparesRuns))


@dataclass
class Opened:
    """A file the run ended at, already sniffed: ``driver.open_parser``'s answer, which
    ``driver.parse_file`` then takes instead of sniffing it again."""

    got: object


@dataclass
class Ready:
    """A file read and prepared ahead: what ``driver.parse_file`` does next with it."""

    parser: LineParser
    note: str | None
    lines: pl.Series
    nbytes: int
    prepared: object


def _compressed(f: InputFile) -> bool:
    try:
        with open(f.path, "rb") as fh:
            return compression(fh.read(6)) is not None
    except OSError:
        return True


def _small(f: InputFile) -> bool:
    if f.stream is not None or f.url is not None:
        return False
    try:
        return os.stat(f.path).st_size <= SMALL_BYTES
    except OSError:
        return False


class Lookahead:
    """The files of one reader (``files``, each read with its ``stats``; ``eligible(i)``:
    file ``i`` is to be parsed at all, not a duplicate or quarantined)."""

    def __init__(self, files: list[InputFile], stats: list[ReadStats], opener: Opener,
                 eligible: Callable[[int], bool] = lambda i: True) -> None:
        self.files, self.stats = files, stats
        self.opener = opener
        self.eligible = eligible
        self.ready: dict[int, Ready | Opened] = {}
        self.tried = -1  #: files up to here were looked at

    def take(self, i: int) -> Ready | Opened | None:
        """File ``i`` read and prepared with the small files after it; or only sniffed
        (``Opened``: a small file that is not of the run's kind); or None: read it as usual
        (not small, unreadable ...)."""
        if i > self.tried:
            self._run(i)
        return self.ready.pop(i, None)

    def _run(self, i: int) -> None:
        run: list[tuple[int, LineParser, str | None, pl.Series, int]] = []
        held = 0
        kind: type | None = None
        j = i
        while j < len(self.files) and len(run) < RUN_FILES and held < RUN_BYTES:
            f, st = self.files[j], self.stats[j]
            if not (self.eligible(j) and _small(f)) or _compressed(f):
                break
            got = self.opener(f, st)
            if not isinstance(got, tuple):  # not parsed at all (binary, unreadable ...)
                self.ready[j] = Opened(got)
                break
            parser, note = got
            if not isinstance(parser, LineParser) or not _batches(parser) \
                    or (kind is not None and type(parser) is not kind):
                self.ready[j] = Opened(got)
                break
            before = replace(st)
            try:
                chunks = list(iter_line_chunks(f, CHUNK_BYTES, st))
            except OSError:  # gone, or unreadable since: read as usual (which says so)
                chunks = []
            if len(chunks) != 1:  # empty, or grown past a chunk: read as usual, from the start
                st.__dict__.update(before.__dict__)
                break
            lines, _first, n = chunks[0]
            kind = type(parser)
            run.append((j, parser, note, lines, n))
            held += n
            j += 1
        # the file that ended the run, if sniffed, is read as usual; else it may begin the
        # next run (when it is looked at again)
        self.tried = max(self.tried, j if j in self.ready or not run else j - 1)
        if not run:
            return
        shares = prepare_run([r[1] for r in run], [r[3] for r in run])
        for (k, parser, note, lines, n), share in zip(run, shares, strict=True):
            self.ready[k] = Ready(parser, note, lines, n, share)
