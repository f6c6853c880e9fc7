"""Plain-text rendering for the terminal (tables with aligned columns, the ingest summary,
``explain``). The progress bar is in ``progress``. Imports nothing heavy: the CLI's ``--help``
loads this module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def size(n: float) -> str:
    """Bytes for people: ``512 B``, ``1.5 kB``, ``420 MB``, ``1.1 GB`` (SI units, as
    ``ls -h --si`` and the MB/s of the benchmark)."""
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= f:
            return f"{n / f:.1f} {unit}" if n / f < 100 else f"{n / f:.0f} {unit}"
    return f"{n:.0f} B"


def ingest_report(res: IngestResult, *, max_files: int,
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
    notes = ingest_notes(res, skipped)
    if notes:
        out += ["", *notes]
    return "\n".join(out)


def ingest_notes(res: IngestResult, skipped: list[str] | None = None) -> list[str]:
    """What the accounting table does not say by itself (files not recognised, files left
    out, kernel lines without wall time, unparsed lines)."""
    t = res.totals
    notes = []
    unknown = [f for f in res.files if f.note]
    for f in unknown[:10]:
        notes.append(f"note: {f.file}: {f.note}")
    if skipped:
        notes.append(f"note: not read: {len(skipped):,} documentation/output files inside the "
                     f"given directories (*.md, *.rst, *.parquet, ...), e.g. {skipped[0]}")
    if (y := year_note(res)) is not None:
        notes.append(y)
    if res.anchored or res.unanchored:
        notes.append(f"note: kernel uptime-only lines: {res.anchored:,} anchored to wall time, "
                     f"{res.unanchored:,} left without (ts null, ts_flag 'uptime')")
    if t["unparsed"]:
        notes.append(f"note: {t['unparsed']:,} unparsed lines; samples in the "
                     "unparsed_samples table")
    return notes


def year_note(res: IngestResult) -> str | None:
    """The note on year-less lines moved by whole years (``pipeline.ingest.years``), if any:
    ingest's and analyze's (a change to the data the analysis stands on)."""
    if not res.year_shifts:
        return None
    k = {y for y, _ in res.year_shifts.values()}
    n = sum(c for _, c in res.year_shifts.values())
    return (f"note: year-less stamps (syslog 'May  1 11:04:45') of {n:,} lines in "
            f"{len(res.year_shifts):,} file(s), e.g. {next(iter(res.year_shifts))}, moved by "
            f"{'/'.join(f'{y:+d}' for y in sorted(k))} year(s): their year, from the files' "
            "modification time, put them outside every record of the campaign (give --year "
            "to choose it yourself)")


def ingest_status(res: IngestResult, seconds: float) -> str:
    """The status line after an ingest (stderr)."""
    t = res.totals
    rate = t["bytes"] / seconds if seconds > 0 else 0.0
    return (f"Wrote {res.events:,} events and {res.records:,} scheduler records to "
            f"{res.out}/ (events.parquet, attempts.parquet, tormortem.duckdb) "
            f"in {seconds:.2f} s ({size(t['bytes'])}, {size(rate)}/s)")


def ingest_rows(res: IngestResult) -> tuple[list[str], list[list[Any]]]:
    """The line accounting per file, for --format json/csv."""
    head = ["file", "source", "unit", "read", "events", "irrelevant", "unparsed", "bytes",
            "note"]
    return head, [[f.file, f.source, f.unit, f.acct.read, f.acct.events, f.acct.irrelevant,
                   f.acct.unparsed, f.nbytes, f.note] for f in res.files]


def explain_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no signal lines found"
    body = [[f"{r['file']}:{r['line_no']}", r["source"], r["kind"], r["category"], r["code"],
             r["rule"]] for r in rows]
    return table(["line", "source", "kind", "category", "code", "rule"], body)


def template_record(t: Any) -> dict[str, Any]:
    """One unknown-line template (``pipeline.ingest.unknown.Template``) as a JSON record."""
    first = t.first or (None, None, None)
    return {"template": t.template, "count": t.count, "files": len(t.files),
            "trouble": t.trouble, "first_file": first[0], "first_line_no": first[1],
            "example": first[2]}


def unknown_table(templates: list[Any]) -> str:
    """Templates of unrecognised lines, trouble first (``explain --unknown``)."""
    if not templates:
        return "Every line was recognised (no unparsed lines)."
    rows = [["!" if t.trouble else "", f"{t.count:,}", str(len(t.files)), t.template[:100],
             f"{t.first[0]}:{t.first[1]}" if t.first else ""] for t in templates]
    return (table(["", "lines", "files", "template", "first seen"], rows, {1, 2})
            + "\n! = looks like trouble. Write a rule of kind text from a template to make "
              "such lines events (see the README, section on the rule table).")
