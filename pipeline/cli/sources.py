"""``tormortem sources``: the log sources tormortem reads."""

from __future__ import annotations

import click

from pipeline.cli.output import chosen_format, emit_rows, format_option, verbosity_options


@click.command("sources")
@format_option("table", "json", "csv", aliases=("json", "csv"), what="the list")
@verbosity_options
def sources_cmd(fmt: str | None) -> None:
    """List the log sources tormortem reads (names for --source).

    \b
    Example:
      tormortem sources
      tormortem sources --format csv
    """
    from parsers.registry import ALL as ALL_PARSERS

    rows: list[list[str]] = [[p.name, p.description] for p in ALL_PARSERS]
    width = max((len(r[0]) for r in rows), default=0)
    emit_rows(chosen_format(fmt), ["name", "description"], rows,
              lambda: "\n".join(f"{n:<{width}}  {d}" for n, d in rows))
