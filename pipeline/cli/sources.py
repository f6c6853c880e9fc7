"""``tormortem sources``: the log sources tormortem reads."""

from __future__ import annotations

import click

from parsers.registry import ALL as ALL_PARSERS


@click.command("sources")
def sources_cmd() -> None:
    """List the log sources tormortem reads (names for --source).

    \b
    Example:
      tormortem sources
    """
    width = max((len(p.name) for p in ALL_PARSERS), default=0)
    for p in ALL_PARSERS:
        click.echo(f"{p.name:<{width}}  {p.description}")
