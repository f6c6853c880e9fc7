"""``tormortem explain``: what each signal line means (library: pipeline.ingest.explain)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from pipeline.cli.options import (
    gather,
    input_warnings,
    rules_opt,
    source_opt,
    tz_of,
    tz_opt,
    year_opt,
)
from pipeline.ingest.explain import iter_explain
from pipeline.report import terminal as render

TABLE_ROWS = 1 << 14  #: rows per aligned block of the table (memory stays bounded)


@click.command("explain")
@click.argument("paths", nargs=-1, required=True)
@click.option("--jsonl", is_flag=True, help="One JSON object per line instead of a table.")
@source_opt
@tz_opt
@year_opt
@rules_opt
def explain_cmd(paths: tuple[str, ...], jsonl: bool, source: str | None, tz: str,
                year: int | None, rules_files: tuple[Path, ...]) -> None:
    """What tormortem makes of each line that carries a signal.

    For every such line: file, line number, source, kind, category (from the rule table),
    code and the rule that decided. Use - to read standard input (nothing is copied to disk).

    \b
    Example:
      grep Xid /var/log/kern.log | tormortem explain - --jsonl
    """
    found = gather(paths)
    for line in input_warnings(found):
        click.echo(line, err=True)
    notes: list[str] = []
    rows = iter_explain(found.files, tz=tz_of(tz), year=year, source=source,
                        extra_rules=list(rules_files), notes=notes)
    if jsonl:
        for r in rows:
            click.echo(json.dumps(r, ensure_ascii=False))
    else:
        block: list[dict[str, object]] = []
        printed = False
        for r in rows:
            block.append(r)
            if len(block) >= TABLE_ROWS:
                click.echo(render.explain_table(block))
                block, printed = [], True
        if block or not printed:
            click.echo(render.explain_table(block))
    for n in notes:
        click.echo(f"note: {n}", err=True)
