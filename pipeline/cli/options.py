"""Options and input handling shared by several commands."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from parsers.reader import InputError, InputFile, expand_inputs

source_opt = click.option(
    "--source", metavar="NAME", default=None,
    help="Parse every input as this source instead of detecting it per file "
         "(see `tormortem sources`).")
tz_opt = click.option(
    "--tz", default="UTC", show_default=True, metavar="ZONE",
    help="Zone of timestamps printed without one (Slurm, syslog, dmesg -T): an IANA name "
         "such as Europe/Berlin, or an offset such as +02:00.")
year_opt = click.option(
    "--year", type=int, default=None,
    help="Year for syslog/journal stamps that have none (default: from each file's mtime).")
rules_opt = click.option(
    "--rules", "rules_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
    help="Extra rule-table CSV (same columns as pipeline/ingest/rules/*.csv); may be repeated.")


def inputs(paths: tuple[str, ...], skipped: list[str] | None = None) -> list[InputFile]:
    files = expand_inputs(list(paths), skipped)
    if not files:
        raise InputError("no files found under " + ", ".join(paths)
                         + "; give log files, directories or a quoted glob")
    return files


def stdin_aware(paths: tuple[str, ...]) -> list[InputFile]:
    if paths == ("-",):
        import tempfile

        data = sys.stdin.buffer.read()
        tmp = Path(tempfile.mkdtemp(prefix="tormortem-")) / "stdin"
        tmp.write_bytes(data)
        return [InputFile(tmp, "-")]
    return inputs(paths)
