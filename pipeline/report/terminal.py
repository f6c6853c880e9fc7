"""Plain-text rendering for the terminal (tables with aligned columns, the progress bar)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from parsers.reader import InputFile
from pipeline.ingest.run import IngestResult


def table(headers: list[str], rows: list[list[Any]], right: set[int] | None = None) -> str:
    """Aligned text table; numbers get thousands separators; ``right`` = right-aligned cols."""
    right = right or set()
    cells = [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(headers)]

    def line(vals: list[str]) -> str:
        parts = [v.rjust(w) if i in right else v.ljust(w)
                 for i, (v, w) in enumerate(zip(vals, widths, strict=True))]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), *(line(r) for r in cells)])


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def ingest_report(res: IngestResult, *, max_files: int, seconds: float,
                  skipped: list[str] | None = None) -> str:
    num = {3, 4, 5, 6}
    file_rows = [[f.file, f.source, f.unit, f.acct.read, f.acct.events, f.acct.irrelevant,
                  f.acct.unparsed] for f in res.files]
    shown = file_rows[:max_files]
    out = ["Line accounting per file (read = events + irrelevant + unparsed):",
           table(["file", "source", "unit", "read", "events", "irrelevant", "unparsed"],
                 shown, num)]
    if len(file_rows) > len(shown):
        out.append(f"... {len(file_rows) - len(shown):,} more files: see the line_accounting "
                   "table")
    by_src: dict[tuple[str, str], list[int]] = {}
    for f in res.files:
        acc = by_src.setdefault((f.source, f.unit), [0, 0, 0, 0, 0])
        for i, v in enumerate((1, f.acct.read, f.acct.events, f.acct.irrelevant,
                               f.acct.unparsed)):
            acc[i] += v
    src_rows: list[list[Any]] = [[s, u, *v] for (s, u), v in sorted(by_src.items())]
    t = res.totals
    src_rows.append(["total", "", len(res.files), t["read"], t["events"], t["irrelevant"],
                     t["unparsed"]])
    out += ["", "Per source:",
            table(["source", "unit", "files", "read", "events", "irrelevant", "unparsed"],
                  src_rows, {2, 3, 4, 5, 6})]
    notes = []
    unknown = [f for f in res.files if f.note]
    for f in unknown[:10]:
        notes.append(f"note: {f.file}: {f.note}")
    if skipped:
        notes.append(f"note: not read: {len(skipped):,} documentation/output files inside the "
                     f"given directories (*.md, *.rst, *.parquet, ...), e.g. {skipped[0]}")
    if res.anchored or res.unanchored:
        notes.append(f"note: kernel uptime-only lines: {res.anchored:,} anchored to wall time, "
                     f"{res.unanchored:,} left without (ts null, ts_flag 'uptime')")
    if t["unparsed"]:
        notes.append(f"note: {t['unparsed']:,} unparsed lines; samples in the "
                     "unparsed_samples table")
    if notes:
        out += ["", *notes]
    rate = t["bytes"] / seconds / 1e6 if seconds > 0 else 0.0
    out += ["", f"Wrote {res.events:,} events and {res.records:,} scheduler records to "
                f"{res.out}/ (events.parquet, attempts.parquet, tormortem.duckdb) "
                f"in {seconds:.2f} s ({_mb(t['bytes'])}, {rate:.0f} MB/s)"]
    return "\n".join(out)


def explain_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no signal lines found"
    body = [[f"{r['file']}:{r['line_no']}", r["source"], r["kind"], r["category"], r["code"],
             r["rule"]] for r in rows]
    return table(["line", "source", "kind", "category", "code", "rule"], body)


@contextmanager
def progress(files: list[InputFile], enabled: bool
             ) -> Iterator[Callable[[InputFile, int], None]]:
    """A progress bar on stderr when it is a terminal; otherwise a no-op callback."""
    if not enabled or not sys.stderr.isatty():
        yield lambda _f, _n: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    def size(f: InputFile) -> int:  # stdin and FIFOs have no size
        return 0 if f.stream is not None else f.path.stat().st_size

    total = sum(size(f) for f in files)
    with Progress(TextColumn("ingest"), BarColumn(), TextColumn("{task.completed:,.0f} B"),
                  TimeRemainingColumn(), transient=True) as bar:
        task = bar.add_task("ingest", total=total)

        def advance(f: InputFile, _n: int) -> None:
            bar.advance(task, size(f))

        yield advance
