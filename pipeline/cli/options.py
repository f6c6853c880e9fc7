"""Options and input handling shared by several commands.

``parsers`` is imported inside the functions: ``--help`` must not load it (it pulls in
polars and numpy; see pipeline.cli.main on start-up).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from parsers.reader import InputFile


def _check_source(_ctx: click.Context, _p: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        from parsers.registry import UnknownSourceError, get

        try:
            get(value)
        except UnknownSourceError as e:
            raise click.BadParameter(str(e)) from None
    return value


def _check_tz(_ctx: click.Context, _p: click.Parameter, value: str) -> Any:
    """The zone object (a bad name is a usage error, exit 2)."""
    from parsers.timeutil import TimeError, get_tz

    try:
        return get_tz(value)
    except TimeError as e:
        raise click.BadParameter(str(e)) from None


source_opt = click.option(
    "--source", metavar="NAME", default=None, callback=_check_source,
    help="Parse every input as this source instead of detecting it per file "
         "(see `tormortem sources`).")
tz_opt = click.option(
    "--tz", default="UTC", show_default=True, metavar="ZONE", callback=_check_tz,
    help="Zone of timestamps printed without one (Slurm, syslog, dmesg -T): an IANA name "
         "such as Europe/Berlin, or an offset such as +02:00.")
year_opt = click.option(
    "--year", type=int, default=None,
    help="Year for syslog/journal stamps that have none (default: from each file's mtime).")
rules_opt = click.option(
    "--rules", "rules_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
    help="Extra rule-table CSV (columns: README, \"The rule table\"); may be repeated.")


def inputs(paths: tuple[str, ...], skipped: list[str] | None = None) -> list[InputFile]:
    from parsers.reader import InputError, expand_inputs

    files = expand_inputs(list(paths), skipped)
    if not files:
        raise InputError("no files found under " + ", ".join(paths)
                         + "; give log files, directories or a quoted glob")
    return files


def stdin_aware(paths: tuple[str, ...]) -> list[InputFile]:
    from parsers.reader import InputFile

    if paths == ("-",):
        import tempfile

        data = sys.stdin.buffer.read()
        tmp = Path(tempfile.mkdtemp(prefix="tormortem-")) / "stdin"
        tmp.write_bytes(data)
        return [InputFile(tmp, "-")]
    return inputs(paths)
