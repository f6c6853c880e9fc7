"""Options and input handling shared by several commands.

``parsers`` is imported inside the functions: ``--help`` must not load it (it pulls in
polars and numpy; see pipeline.cli.main on start-up).

Every option is checked before any work starts; a bad value is a usage error (exit 2) with
click's one-line ``Error: Invalid value for '--tz': ...``:

* ``--tz``: an IANA zone name, ``UTC``, or an offset within +-14:00 (the widest in use,
  Pacific/Kiritimati's +14:00; -12:00 is the other end).
* ``--year``: 1970-2100 (what a log written by a running system can carry; outside it every
  year-less line would become unparsable, or be given an absurd time).
* ``--source``: a name from ``tormortem sources``.
"""

from __future__ import annotations

import re
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from parsers.reader import InputFile, Inputs

YEARS = (1970, 2100)


def _check_tz(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    if not value.strip():
        raise click.BadParameter("empty; give an IANA name such as Europe/Berlin, UTC, or an "
                                 "offset such as +02:00")
    m = re.fullmatch(r"([+-])(\d\d):?(\d\d)", value)
    minutes = int(m.group(2)) * 60 + int(m.group(3)) if m else 0
    if m and (int(m.group(3)) >= 60 or minutes > (14 * 60 if m.group(1) == "+" else 12 * 60)):
        raise click.BadParameter(f"{value!r} is not a UTC offset in use; offsets run from "
                                 "-12:00 to +14:00 (e.g. +02:00), or give an IANA name such "
                                 "as Europe/Berlin")
    from parsers.timeutil import TimeError, get_tz

    try:
        get_tz(value)
    except (TimeError, ValueError) as e:
        raise click.BadParameter(str(e)) from None
    return value


def _check_source(_ctx: click.Context, _param: click.Parameter, value: str | None
                  ) -> str | None:
    if value is None:
        return None
    from parsers import registry

    try:
        registry.get(value)
    except registry.UnknownSourceError as e:
        raise click.BadParameter(str(e)) from None
    return value


def text_file(_ctx: click.Context, param: click.Parameter, value: Path | None
              ) -> Path | None:
    """A text file option (``--run-map``): it must exist and be text (``parsers.textfile``:
    UTF-8, or UTF-16 with its byte-order mark)."""
    if value is None:
        return None
    from parsers.textfile import NotText, read_text

    try:
        read_text(value)
    except OSError as e:
        raise click.BadParameter(f"{value}: {e.strerror}") from None
    except NotText as e:
        raise click.BadParameter(str(e)) from None
    return value


source_opt = click.option(
    "--source", metavar="NAME", default=None, callback=_check_source,
    help="Parse every input as this source instead of detecting it per file "
         "(see `tormortem sources`).")
tz_opt = click.option(
    "--tz", default="UTC", show_default=True, metavar="ZONE", callback=_check_tz,
    help="Zone of timestamps printed without one (Slurm, syslog, dmesg -T): an IANA name "
         "such as Europe/Berlin, or an offset such as +02:00 (-12:00 to +14:00).")
year_opt = click.option(
    "--year", type=click.IntRange(*YEARS), default=None,
    help="Year of the first syslog/journal stamp of each file (they have none; later stamps "
         "advance at Dec -> Jan). Default: from each file's mtime. "
         f"{YEARS[0]}-{YEARS[1]}.")
rules_opt = click.option(
    "--rules", "rules_files", multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Extra rule-table CSV (columns: README, \"The rule table\"); may be repeated.")


def tz_of(name: str) -> tzinfo:
    from parsers.timeutil import get_tz

    return get_tz(name)


def gather(paths: tuple[str, ...]) -> Inputs:
    """The inputs named by ``paths`` (``-`` is standard input); none found is an error."""
    from parsers.inputs import InputError, find_inputs  # light: no polars (procs.start_early)

    found = find_inputs(list(paths))
    if not found.files and found.own_outputs:
        raise InputError(f"{', '.join(found.own_outputs)}: a tormortem output folder, not "
                         "logs; give the logs it was made from (its manifest.json lists "
                         "them), or query it with tormortem sql / report")
    if not found.files:
        # what the walk left out, so the reason is on the same line (a folder holding only a
        # link to a folder said "no files found" and not why: fault probe L10)
        left = found.special + found.problems
        raise InputError("no files found under " + ", ".join(paths)
                         + (f" (left out: {'; '.join(left[:3])}"
                            + (f"; and {len(left) - 3} more" if len(left) > 3 else "") + ")"
                            if left else "")
                         + "; give log files, directories or a quoted glob")
    return found


def inputs(paths: tuple[str, ...], skipped: list[str] | None = None) -> list[InputFile]:
    found = gather(paths)
    if skipped is not None:
        skipped.extend(found.skipped)
    return found.files


def stdin_aware(paths: tuple[str, ...]) -> list[InputFile]:
    """Kept for callers of the old name: ``-`` is handled by ``gather`` (streamed, no copy)."""
    return inputs(paths)


def input_warnings(found: Inputs) -> list[str]:
    """What the walk could not or would not read, for stderr (never silent)."""
    out = [f"warning: {p}" for p in found.problems]
    out += [f"note: {s}" for s in found.special]
    for d in found.own_outputs:
        out.append(f"note: {d} holds an earlier tormortem output; its files (manifest.json, "
                   "analysis.json, ...) are not logs and were not read")
    if found.problems:
        out.append(f"warning: {len(found.problems):,} input(s) could not be read (listed "
                   "above); the results leave them out")
    return out


def manifest_fields(name: str, paths: tuple[str, ...], out: Path, found: Inputs,
                    ingest_result: Any, **options: Any) -> dict[str, Any]:
    """What the manifest says about a run besides its files (see pipeline.ingest.outputs):
    ``argv`` is the command without ``--out`` (to rebuild the folder wherever it now is)."""
    import shlex

    argv = [name, *paths]
    for opt in ("tz", "year", "source"):
        if options.get(opt) not in (None, "UTC"):
            argv += [f"--{opt}", str(options[opt])]
    for r in options.get("rules") or []:
        argv += ["--rules", str(r)]
    return {"command": shlex.join(["tormortem", *argv, "--out", str(out)]), "argv": argv,
            "options": options,
            "inputs": ingest_result.inputs,
            "unread": {"problems": found.problems, "special": found.special,
                       "skipped": len(found.skipped)},
            "duplicates": [{"file": a, "duplicate_of": b} for a, b in ingest_result.duplicates],
            "quarantined": ingest_result.quarantined}


jobs_opt = click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
    help="Parse this many files at once, each in a process of its own. Default: the cores "
         "this process may use, once there are 64 MiB of files to read (below that starting "
         "the processes costs more than they save). The output is the same whatever N.")
#: what Dask's distributed Client takes: SCHEME://HOST:PORT with one of its comm schemes
#: (distributed/comm/registry.py), or HOST:PORT (tcp)
_SCHEDULER = re.compile(r"(?:(?:tcp|tls|ucx|ws|wss)://)?(?:\[[0-9A-Fa-f:.]+\]|[\w.-]+):\d{1,5}"
                        r"|inproc://\S+")


def _check_scheduler(_ctx: click.Context, _param: click.Parameter,
                     value: str | None) -> str | None:
    if value is not None and not _SCHEDULER.fullmatch(value.strip()):
        raise click.BadParameter(f"{value!r} is not a Dask scheduler address; write "
                                 "tcp://HOST:PORT (the address `dask scheduler` prints)")
    return value.strip() if value is not None else None


scheduler_opt = click.option(
    "--scheduler", metavar="tcp://HOST:PORT", default=None, callback=_check_scheduler,
    help="Parse the files as tasks on this Dask cluster's workers (pip install distributed); "
         "--out must be on a filesystem every worker sees. The output is the same as a local "
         "run's.")
