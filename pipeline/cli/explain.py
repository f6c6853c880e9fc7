"""``tormortem explain``: what each signal line means (library: pipeline.ingest.explain).

Rows are printed as the library hands them out (``iter_explain`` streams in bounded memory):
jsonl and csv row by row, json as an array written element by element, the table in aligned
blocks of ``TABLE_ROWS`` rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from pipeline.cli import output
from pipeline.cli.options import (
    gather,
    input_warnings,
    rules_opt,
    source_opt,
    tz_of,
    tz_opt,
    year_opt,
)

COLUMNS = ["file", "line_no", "source", "kind", "category", "code", "rule"]
TABLE_ROWS = 1 << 14  #: rows per aligned block of the table (memory stays bounded)


@click.command("explain")
@click.argument("paths", nargs=-1, required=True)
@output.format_option("table", "json", "jsonl", "csv", aliases=("json", "jsonl", "csv"),
                      what="the lines")
@click.option("--unknown", is_flag=True,
              help="Instead: templates of the lines nothing recognised, with counts (those that "
                   "look like trouble first), to write rules from (kind text, see --rules).")
@source_opt
@tz_opt
@year_opt
@rules_opt
@output.verbosity_options
def explain_cmd(paths: tuple[str, ...], fmt: str | None, unknown: bool, source: str | None,
                tz: str, year: int | None, rules_files: tuple[Path, ...]) -> None:
    """What tormortem makes of each line that carries a signal.

    For every such line: file, line number, source, kind, category (from the rule table),
    code and the rule that decided. Use - to read standard input (nothing is copied to
    disk). json and jsonl rows have every field the library gives (message, timestamp,
    host, ...).

    \b
    Example:
      grep Xid /var/log/kern.log | tormortem explain - --jsonl
      tormortem explain nodes/node017/kern.log --format csv
    """
    from pipeline.ingest.explain import iter_explain
    from pipeline.report import terminal as render

    fmt = output.chosen_format(fmt)
    found = gather(paths)
    output.input_notes(input_warnings(found))
    if unknown:
        from pipeline.ingest.unknown import unknown_templates

        templates = unknown_templates(found.files, tz=tz_of(tz), year=year, source=source,
                                      extra_rules=list(rules_files))
        recs = [render.template_record(t) for t in templates]
        heads = ["template", "count", "files", "trouble", "first_file", "first_line_no",
                 "example"]
        output.emit_rows(fmt, heads, [[r[k] for k in heads] for r in recs],
                         lambda: render.unknown_table(templates))
        return
    notes: list[str] = []
    rows = iter_explain(found.files, tz=tz_of(tz), year=year, source=source,
                        extra_rules=list(rules_files), notes=notes)
    _stream(fmt, rows)
    for n in notes:
        output.status(f"note: {n}")


def _stream(fmt: str, rows: Iterator[dict[str, Any]]) -> None:
    if fmt == "jsonl":
        for r in rows:
            click.echo(output.dumps(r, indent=None))
    elif fmt == "json":
        click.echo("[", nl=False)
        sep = "\n"
        for r in rows:
            click.echo(sep + output.dumps(r, indent=None), nl=False)
            sep = ",\n"
        click.echo("\n]")
    elif fmt == "csv":
        click.echo(output.csv_text(COLUMNS, []))
        for r in rows:
            click.echo(output.csv_text([], [[r.get(k) for k in COLUMNS]]).lstrip("\n"))
    else:
        from pipeline.report import terminal as render

        block: list[dict[str, Any]] = []
        printed = False
        for r in rows:
            block.append(r)
            if len(block) >= TABLE_ROWS:
                click.echo(render.explain_table(block))
                block, printed = [], True
        if block or not printed:
            click.echo(render.explain_table(block))
