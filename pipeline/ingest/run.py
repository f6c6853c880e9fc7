"""Ingest: every input file through its parser into Parquet files and one DuckDB database.

Writes into ``out``:

* ``events.parquet``            one row per signal line (schema ``parsers.schema.EVENTS``)
* ``attempts.parquet``          scheduler records (jobs, steps, pod incarnations) (ATTEMPTS)
* ``line_accounting.parquet``   per file: lines read = events + irrelevant + unparsed
* ``unparsed_samples.parquet``  up to 20 unparsed lines per file, for the user to look at
* ``tormortem.duckdb``          the same as tables (``attempts``, ``job_steps``,
  ``line_accounting``, ``unparsed_samples``, ``rules``) plus the views ``events`` (over
  events.parquet, see sink.py: open it with ``sink.connect``) and ``classified_events``.

Memory stays bounded: parsers hand over Arrow batches per chunk and they go straight to the
Parquet writer. Kernel lines stamped only with uptime are anchored here, per host, when another
line of that host carries both wall time and uptime (syslog's ``kernel: [12345.678]`` lines):
events.parquet is then written again with those stamps, rows in the same order.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from parsers.base import Accounting
from parsers.batch import Lookahead, Opened, Ready
from parsers.driver import FileResult, open_parser, parse_file
from parsers.reader import InputFile, ReadStats
from parsers.schema import ATTEMPTS, LINE_ACCOUNTING, UNPARSED
from pipeline.ingest import anchoring, outputs, parallel, parts, procs, unknown, years
from pipeline.ingest import ruletable as rules_mod
from pipeline.ingest.dedup import Fingerprint, survey
from pipeline.ingest.sink import EventSink, ParquetSink, connect, events_view_sql

DB_NAME = "tormortem.duckdb"
#: DuckDB's buffer pool while ingesting (the view ``events`` is read to anchor uptime stamps;
#: its default, 80% of RAM, would let that grow with the events); the rest spills to
#: ``tormortem.duckdb.tmp/``
DUCKDB_MEMORY = "256MB"
ProgressFn = Callable[[InputFile, int], None]


@dataclass
class IngestResult:
    out: Path
    files: list[FileResult] = field(default_factory=list)
    events: int = 0
    records: int = 0
    anchored: int = 0  #: uptime-only kernel lines given a wall time
    unanchored: int = 0  #: uptime-only kernel lines left without one
    #: files whose year-less stamps moved to the records' years: (years, lines) (years.py)
    year_shifts: dict[str, tuple[int, int]] = field(default_factory=dict)
    inputs: list[dict[str, object]] = field(default_factory=list)  #: for the manifest
    duplicates: list[tuple[str, str]] = field(default_factory=list)  #: (file, first copy)
    quarantined: list[str] = field(default_factory=list)  #: files not read: corrupt

    @property
    def totals(self) -> dict[str, int]:
        t = {"read": 0, "events": 0, "irrelevant": 0, "unparsed": 0, "bytes": 0}
        for f in self.files:
            t["read"] += f.acct.read
            t["events"] += f.acct.events
            t["irrelevant"] += f.acct.irrelevant
            t["unparsed"] += f.acct.unparsed
            t["bytes"] += f.nbytes
        return t


def ingest(files: list[InputFile], out: Path, *, tz: tzinfo = UTC, year: int | None = None,
           source: str | None = None, extra_rules: list[Path] | None = None,
           progress: ProgressFn | None = None, jobs: int | None = 1,
           scheduler: str | None = None, folder: Path | None = None) -> IngestResult:
    """Parse ``files`` into ``out`` (created; an existing database there is replaced).
    ``folder``: where the outputs will be read from, if not ``out`` (a staging folder); the
    database's view ``events`` looks for events.parquet there when opened by another program.

    ``jobs`` > 1 parses files in that many processes (None: ``procs.auto_jobs``),
    ``scheduler`` (``tcp://HOST:PORT``) on a Dask cluster (``parallel.py``); the output is the
    same as with one (``parts.py``)."""
    parts.returning_pool()
    rules = rules_mod.load_rules(extra_rules or [])  # fail early on a bad rules file
    rules_mod.activate_text_rules(rules)
    out.mkdir(parents=True, exist_ok=True)
    db_path = out / DB_NAME
    for p in (db_path, out / (DB_NAME + ".wal")):
        if p.exists():
            p.unlink()
    pool = parallel.warm_pool(jobs, files) if scheduler is None else None
    failed = True
    con = connect(db_path, check=False)
    try:
        con.execute(f"SET memory_limit = '{DUCKDB_MEMORY}'")
        ev = EventSink(out)
        rec = ParquetSink(out / "attempts.parquet", ATTEMPTS)
        result = IngestResult(out)
        prints = survey(files).prints
        try:
            for f, res in _read_all(files, prints, out, ev, rec, tz=tz, year=year,
                                    source=source, jobs=jobs, scheduler=scheduler,
                                    pool=pool):
                fp = prints[f.display]
                result.files.append(res)
                _note_input(result, f, fp, res)
                if progress:
                    progress(f, res.nbytes)
        finally:
            events_id = _events_id(result, tz, year, source, rules)
            result.events = ev.close(events_id)
            rec.close()
        result.records = rec.rows
        _write_accounting(result, out)
        _build_db(result, out, con, rules, folder or out, events_id, year)
        failed = False
    finally:
        con.close()
        if pool is not None:
            parallel.stop(pool, failed=failed)
    return result


def _read_all(files: list[InputFile], prints: dict[str, Fingerprint], out: Path,
              ev: EventSink, rec: ParquetSink, *, tz: tzinfo, year: int | None,
              source: str | None, jobs: int | None, scheduler: str | None,
              pool: ProcessPoolExecutor | None = None
              ) -> Iterator[tuple[InputFile, FileResult]]:
    """Each file's result, in input order: read here, or by workers (``jobs`` > 1 or a
    Dask ``scheduler``) and replayed here. Quarantined and duplicate files, streams
    (stdin, FIFOs: read once, by this process) and ``memory://`` URLs (this process's memory)
    are never sent to a worker."""
    remote = [f for f in procs.sendable(files) if not prints[f.display].quarantined
              and not prints[f.display].duplicate_of]
    if jobs is None:
        jobs = procs.auto_jobs(remote)
    if scheduler is None and (jobs <= 1 or len(remote) <= 1):
        yield from zip(files, _read_in_turn(files, prints, ev, rec, tz=tz, year=year,
                                            source=source), strict=True)
        return
    folder = out / "parts"
    opts = parts.options(tz, year, source)
    try:
        grouped = parallel.tasks_of(remote)
        done = parallel.parts_in_order(remote, [_stats(prints[f.display]) for f in remote],
                                       folder, opts, jobs=jobs, scheduler=scheduler, pool=pool,
                                       tasks=grouped)
        tasks = [[remote[i] for i in t] for t in grouped]
        sent = {f.display for f in remote}
        replayed: Iterator[FileResult] = iter(())
        for f in files:
            if f.display in sent:
                res = next(replayed, None)
                if res is None:  # the next task's files
                    part = next(done)
                    if isinstance(part, parallel.Inline):  # read here, as with --jobs 1
                        replayed = _read_in_turn(tasks[part.index], prints, ev, rec, tz=tz,
                                                 year=year, source=source)
                    else:
                        replayed = parts.replay(part, folder, ev, rec, ev.progress)
                    res = next(replayed)
                yield f, res
            else:
                yield f, _read_one(f, prints[f.display], ev, rec, tz=tz, year=year,
                                   source=source)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _read_in_turn(files: list[InputFile], prints: dict[str, Fingerprint], ev: EventSink,
                  rec: ParquetSink, *, tz: tzinfo, year: int | None, source: str | None
                  ) -> Iterator[FileResult]:
    """``_read_one`` of each file in turn, runs of small ones prepared together
    (``parsers.batch``)."""
    stats = [_stats(prints[f.display]) for f in files]
    ahead = Lookahead(files, stats, functools.partial(open_parser, tz=tz, year=year,
                                                      source=source),
                      lambda i: _readable(prints[files[i].display]))
    for i, f in enumerate(files):
        yield _read_one(f, prints[f.display], ev, rec, tz=tz, year=year, source=source,
                        stats=stats[i], ready=ahead.take(i))


def _readable(fp: Fingerprint) -> bool:
    return not (fp.quarantined or fp.duplicate_of)


def _stats(fp: Fingerprint) -> ReadStats:
    return ReadStats(limit=fp.size if fp.compressed is None else None, hash=fp.sha256 is None)


def _read_one(f: InputFile, fp: Fingerprint, ev: EventSink, rec: ParquetSink, *, tz: tzinfo,
              year: int | None, source: str | None, stats: ReadStats | None = None,
              ready: Ready | Opened | None = None) -> FileResult:
    """Parse one input, unless it is quarantined (corrupt) or a duplicate: those are counted
    with a note and nothing read."""
    if fp.quarantined:
        return FileResult(f.display, "unknown", "line", Accounting(), 0,
                          f"quarantined, not read: {fp.quarantined}")
    if fp.duplicate_of:
        return FileResult(f.display, "duplicate", "line", Accounting(), 0,
                          f"duplicate of {fp.duplicate_of} (same content); not read again")
    return parse_file(f, ev, rec, tz=tz, year=year, source=source, on_progress=ev.progress,
                      stats=stats if stats is not None else _stats(fp), ready=ready)


def _note_input(result: IngestResult, f: InputFile, fp: Fingerprint, res: FileResult) -> None:
    st = res.stats
    sha = fp.sha256 or (st.sha256 if st is not None else None)
    size = st.bytes if st is not None and st.bytes else fp.size
    result.inputs.append({"file": f.display, "size": size, "mtime": fp.mtime, "sha256": sha,
                          "compression": fp.compressed or (st.compression if st else None),
                          "duplicate_of": fp.duplicate_of, "note": res.note})
    if fp.duplicate_of:
        result.duplicates.append((f.display, fp.duplicate_of))
    if res.note and res.note.startswith("quarantined"):
        result.quarantined.append(f.display)


def _write_accounting(result: IngestResult, out: Path) -> None:
    dup = dict(result.duplicates)
    rows = [{"file": f.file, "source": f.source, "unit": f.unit, "read": f.acct.read,
             "events": f.acct.events, "irrelevant": f.acct.irrelevant,
             "unparsed": f.acct.unparsed, "bytes": f.nbytes, "note": f.note,
             "duplicate_of": dup.get(f.file)} for f in result.files]
    pq.write_table(pa.Table.from_pylist(rows, LINE_ACCOUNTING), out / "line_accounting.parquet")
    samples = [{"file": f.file, "source": f.source, "line_no": n, "text": t}
               for f in result.files for n, t in f.acct.samples]
    pq.write_table(pa.Table.from_pylist(samples, UNPARSED), out / "unparsed_samples.parquet")
    templates = unknown.mine((f.file, f.acct.unknown.forms) for f in result.files)
    pq.write_table(unknown.to_table(templates), out / "unknown_templates.parquet")


def _events_id(result: IngestResult, tz: tzinfo, year: int | None, source: str | None,
               rules: pa.Table) -> str:
    """What ties events.parquet to its database (sink.py): a digest of what the events were
    made from -- the tool's version, the inputs (name, size, SHA-256, notes), the options and
    the rules -- so the same run on the same inputs writes the same file."""
    doc = {"version": outputs.tool_version(), "inputs": result.inputs, "tz": str(tz), "year": year,
           "source": source, "rules": rules.to_pylist()}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def _build_db(result: IngestResult, out: Path, con: duckdb.DuckDBPyConnection,
              rules: pa.Table, folder: Path, events_id: str, year: int | None) -> None:
    con.execute("SET TimeZone = 'UTC'")
    con.execute(events_view_sql(folder, events_id))
    row = con.execute("SELECT count(*) FROM events "
                      "WHERE ts IS NULL AND uptime_s IS NOT NULL").fetchall()[0]
    result.year_shifts = {} if year is not None else years.year_shifts(
        con, out / "attempts.parquet")
    years.register(con, result.year_shifts)
    if (row is not None and row[0]) or result.year_shifts:
        result.anchored, result.unanchored = anchoring.anchor(
            out, con, events_id, {f: n for f, (n, _) in result.year_shifts.items()})
    for name in ("attempts", "line_accounting", "unparsed_samples", "unknown_templates"):
        con.execute(f"CREATE TABLE {name}_all AS SELECT * FROM "
                    f"read_parquet('{_q(out / (name + '.parquet'))}')")
    con.execute("CREATE TABLE attempts AS SELECT * FROM attempts_all WHERE step IS NULL")
    con.execute("CREATE TABLE job_steps AS SELECT * FROM attempts_all WHERE step IS NOT NULL")
    con.execute("DROP TABLE attempts_all")
    con.execute("ALTER TABLE line_accounting_all RENAME TO line_accounting")
    con.execute("ALTER TABLE unparsed_samples_all RENAME TO unparsed_samples")
    con.execute("ALTER TABLE unknown_templates_all RENAME TO unknown_templates")
    rules_mod.register(con, rules)
    con.execute("CREATE VIEW classified_events AS " + rules_mod.sql("classified_events"))


def _q(p: Path) -> str:
    return str(p).replace("'", "''")
