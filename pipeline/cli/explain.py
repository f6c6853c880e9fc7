"""``tormortem explain``: what each signal line means (library: pipeline.ingest.explain)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from parsers.timeutil import get_tz
from pipeline.cli.options import rules_opt, source_opt, stdin_aware, tz_opt, year_opt
from pipeline.ingest.explain import explain_files
from pipeline.report import terminal as render


@click.command("explain")
@click.argument("paths", nargs=-1, required=True)
@click.option("--jsonl", is_flag=True, help="One JSON object per line instead of a table.")
@click.option("--unknown", is_flag=True,
              help="Instead: templates of the lines nothing recognised, with counts (those that "
                   "look like trouble first), to write rules from (kind text, see --rules).")
@source_opt
@tz_opt
@year_opt
@rules_opt
def explain_cmd(paths: tuple[str, ...], jsonl: bool, unknown: bool, source: str | None,
                tz: str, year: int | None, rules_files: tuple[Path, ...]) -> None:
    """What tormortem makes of each line that carries a signal.

    For every such line: file, line number, source, kind, category (from the rule table),
    code and the rule that decided. Use - to read standard input.

    \b
    Example:
      grep Xid /var/log/kern.log | tormortem explain - --jsonl
    """
    files = stdin_aware(paths)
    if unknown:
        from pipeline.ingest.unknown import unknown_templates

        templates = unknown_templates(files, tz=get_tz(tz), year=year, source=source,
                                      extra_rules=list(rules_files))
        if jsonl:
            for t in templates:
                click.echo(json.dumps(render.template_record(t), ensure_ascii=False))
        else:
            click.echo(render.unknown_table(templates))
        return
    rows = explain_files(files, tz=get_tz(tz), year=year, source=source,
                         extra_rules=list(rules_files))
    if jsonl:
        for r in rows:
            click.echo(json.dumps(r, ensure_ascii=False))
    else:
        click.echo(render.explain_table(rows))
