"""``tormortem explain``: what each signal line means (library: pipeline.ingest.explain)."""

from __future__ import annotations

from datetime import tzinfo
from pathlib import Path

import click

from pipeline.cli import output
from pipeline.cli.options import rules_opt, source_opt, stdin_aware, tz_opt, year_opt

COLUMNS = ["file", "line_no", "source", "kind", "category", "code", "rule"]


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
                tz: tzinfo, year: int | None, rules_files: tuple[Path, ...]) -> None:
    """What tormortem makes of each line that carries a signal.

    For every such line: file, line number, source, kind, category (from the rule table),
    code and the rule that decided. Use - to read standard input. json and jsonl rows have
    every field the library gives (message, timestamp, host, ...).

    \b
    Example:
      grep Xid /var/log/kern.log | tormortem explain - --jsonl
      tormortem explain nodes/node017/kern.log --format csv
    """
    from pipeline.ingest.explain import explain_files
    from pipeline.report import terminal as render

    fmt = output.chosen_format(fmt)
    files = stdin_aware(paths)
    if unknown:
        from pipeline.ingest.unknown import unknown_templates

        templates = unknown_templates(files, tz=tz, year=year, source=source,
                                      extra_rules=list(rules_files))
        recs = [render.template_record(t) for t in templates]
        heads = ["template", "count", "files", "trouble", "first_file", "first_line_no",
                 "example"]
        output.emit_rows(fmt, heads, [[r[k] for k in heads] for r in recs],
                         lambda: render.unknown_table(templates))
        return
    rows = explain_files(files, tz=tz, year=year, source=source,
                         extra_rules=list(rules_files))
    if fmt in ("json", "jsonl"):
        heads = list(rows[0]) if rows else COLUMNS
        output.emit_rows(fmt, heads, [[r.get(k) for k in heads] for r in rows], lambda: "")
    else:
        output.emit_rows(fmt, COLUMNS, [[r.get(k) for k in COLUMNS] for r in rows],
                         lambda: render.explain_table(rows))
