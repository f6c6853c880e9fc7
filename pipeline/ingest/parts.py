"""One input file parsed apart from the others, into a part folder the client replays in order.

This is what makes ``ingest --jobs N`` and ``--scheduler tcp://...`` give the same output as one
process reading the files in turn, byte for byte in ``events.parquet``:

* A worker (a local process or a Dask worker) runs ``read_part`` on a task: one large file or
  a run of consecutive small ones (``group``: a fleet's thousands of small node logs cost
  one task, one part folder and one set of writers per group, not per file). It is the same
  ``parse_file`` as the serial path, with sinks that write each batch as it comes to Parquet
  files in the part folder (``events.parquet``, ``progress.parquet``, ``records.parquet``),
  one row group per batch, and remember the order the batches came in, and of which file
  (``PartResult.seq``), and each progress batch's schema metadata (its constants,
  ``parsers.progress_batch``).
* The client (``replay``) reads the parts of task 1, 2, ... in the order of the inputs and
  hands the same batches, in the same order, with the same boundaries and metadata, to the same
  sinks the serial path uses. Everything downstream (the Parquet writer's row groups, the
  DuckDB tables, the cross-file steps: uptime anchoring, accounting, unknown-line mining) is
  then the serial path's own code on the same input.

The part folders are a partitioned Parquet dataset (``parts/<file index>/``) inside the output
folder, which must be on a filesystem every worker sees; the client removes each part once it
has replayed it.
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from parsers import prefilter
from parsers.driver import FileResult
from parsers.reader import InputFile, ReadStats
from parsers.schema import ATTEMPTS, EVENTS

_KINDS = {"e": ("events.parquet", EVENTS), "r": ("records.parquet", ATTEMPTS)}


@dataclass(frozen=True)
class Options:
    """What every worker needs to parse like the client would (sent with each task)."""

    tz: tzinfo
    year: int | None
    source: str | None
    #: signatures of ``--rules`` rules of kind text (``ruletable.activate_text_rules``)
    extra_signatures: tuple[Any, ...] = ()
    prefilter: bool = True


@dataclass
class PartResult:
    index: int
    results: list[FileResult]
    #: the batches in arrival order: (file's position in the task, "e" | "r" | "p",
    #: progress metadata as JSON or None)
    seq: list[tuple[int, str, str | None]] = field(default_factory=list)


#: a task is one file, or consecutive files until they hold this many bytes or this many
#: files (``group``)
GROUP_BYTES, GROUP_FILES = 32 << 20, 256


def group(sizes: list[int]) -> list[list[int]]:
    """Consecutive runs of file positions, one per task (input order kept)."""
    out: list[list[int]] = []
    cur: list[int] = []
    held = 0
    for i, n in enumerate(sizes):
        if cur and (held + n > GROUP_BYTES or len(cur) >= GROUP_FILES):
            out.append(cur)
            cur, held = [], 0
        cur.append(i)
        held += n
    if cur:
        out.append(cur)
    return out


class _PartWriter:
    """The sinks ``parse_file`` writes to, on the worker: one Parquet file per kind."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.pos = 0  #: the file being read (its position in the task)
        self.seq: list[tuple[int, str, str | None]] = []
        self.writers: dict[str, pq.ParquetWriter] = {}

    def _write(self, kind: str, batch: pa.RecordBatch, schema: pa.Schema,
               name: str) -> None:
        if batch.num_rows == 0:
            return
        w = self.writers.get(kind)
        if w is None:
            w = self.writers[kind] = pq.ParquetWriter(self.folder / name, schema,
                                                      compression="lz4")
        w.write_table(pa.Table.from_batches([batch.replace_schema_metadata(None)], schema),
                      row_group_size=max(batch.num_rows, 1))
        meta = batch.schema.metadata
        self.seq.append((self.pos, kind,
                         json.dumps({k.decode(): v.decode() for k, v in meta.items()})
                         if kind == "p" and meta else None))

    def events(self, batch: pa.RecordBatch) -> None:
        self._write("e", batch, EVENTS, "events.parquet")

    def records(self, batch: pa.RecordBatch) -> None:
        self._write("r", batch, ATTEMPTS, "records.parquet")

    def progress(self, batch: pa.RecordBatch) -> None:
        self._write("p", batch, batch.schema.remove_metadata(), "progress.parquet")

    def close(self) -> None:
        for w in self.writers.values():
            w.close()


_ACTIVE: dict[str, Any] = {}


def returning_pool() -> None:
    """Arrow buffers from the C library's allocator from now on, in this process.

    pyarrow's default pool (mimalloc) kept the memory of the batches ingest had freed: the
    client replaying a 72 MB slurm mix peaked at 461 MiB with it, 356 MiB with this (jemalloc:
    373). A user's ``ARROW_DEFAULT_MEMORY_POOL`` is left to rule."""
    import os

    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        pa.set_memory_pool(pa.system_memory_pool())


def _activate(opts: Options) -> None:
    """Make this process parse as the client does: --rules text signatures, prefilter, the
    memory pool."""
    import os

    returning_pool()

    from parsers import signature_table

    if _ACTIVE.get("sigs") != opts.extra_signatures:
        signature_table.EXTRA[:] = list(opts.extra_signatures)
        _ACTIVE["sigs"] = opts.extra_signatures
    os.environ["TORMORTEM_PREFILTER"] = "1" if opts.prefilter else "0"


def claim(parts: Path, index: int) -> bool:
    """Take task ``index`` for this process: its folder made here, or False when another
    process made it first (``mkdir`` either creates or fails, atomically)."""
    parts.mkdir(parents=True, exist_ok=True)
    try:
        (parts / f"{index:06d}").mkdir()
    except FileExistsError:
        return False
    return True


def read_part(index: int, files: list[InputFile], stats: list[ReadStats], parts: Path,
              opts: Options, exclusive: bool = False) -> PartResult:
    """Worker side: parse ``files`` (one task) into ``parts/<index>/`` (``stats``: how to
    read each, filled with what reading found, as on the serial path).

    ``exclusive`` (local workers): the task is read only if ``claim`` gets it; the client
    claims the tasks it reads itself (``parallel._local``), so a task it took back comes
    back empty, unread (nothing waits for it). A Dask task is never taken back, and a
    retried one reads again into a fresh folder."""
    from parsers.batch import Lookahead
    from parsers.driver import open_parser, parse_file

    folder = parts / f"{index:06d}"
    if exclusive:
        if not claim(parts, index):
            return PartResult(index, [])
    else:
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    _activate(opts)
    w = _PartWriter(folder)
    results = []
    ahead = Lookahead(files, stats, functools.partial(open_parser, tz=opts.tz, year=opts.year,
                                                      source=opts.source))
    try:
        for pos, (f, st) in enumerate(zip(files, stats, strict=True)):
            w.pos = pos
            results.append(parse_file(f, w.events, w.records, tz=opts.tz, year=opts.year,
                                      source=opts.source, on_progress=w.progress, stats=st,
                                      ready=ahead.take(pos)))
    finally:
        w.close()
    return PartResult(index, results, w.seq)


def replay(part: PartResult, parts: Path, on_events: Any, on_records: Any,
           on_progress: Any) -> Iterator[FileResult]:
    """Client side: the task's batches to the sinks, in the order the parser made them, and
    each file's result once its batches are in; the part folder is removed after."""
    folder = parts / f"{part.index:06d}"
    files: dict[str, pq.ParquetFile] = {}
    next_group: dict[str, int] = {}
    done = 0
    try:
        for pos, kind, meta in part.seq:
            while done < pos:
                yield part.results[done]
                done += 1
            pf = files.get(kind)
            if pf is None:
                name = "progress.parquet" if kind == "p" else _KINDS[kind][0]
                pf = files[kind] = pq.ParquetFile(folder / name)
            g = next_group.get(kind, 0)
            next_group[kind] = g + 1
            table = pf.read_row_group(g)
            batch = table.combine_chunks().to_batches()[0] if table.num_rows else None
            if batch is None:
                continue
            if kind == "e":
                on_events(batch.cast(EVENTS) if batch.schema != EVENTS else batch)
            elif kind == "r":
                on_records(batch.cast(ATTEMPTS) if batch.schema != ATTEMPTS else batch)
            else:
                md = {k.encode(): v.encode() for k, v in json.loads(meta).items()} \
                    if meta else None
                on_progress(batch.replace_schema_metadata(md))
        while done < len(part.results):
            yield part.results[done]
            done += 1
    finally:
        for pf in files.values():
            pf.close()
        shutil.rmtree(folder, ignore_errors=True)


def options(tz: tzinfo, year: int | None, source: str | None) -> Options:
    from parsers import signature_table

    return Options(tz, year, source, tuple(signature_table.EXTRA), prefilter.enabled())
