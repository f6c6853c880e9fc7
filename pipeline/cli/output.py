"""One output convention for every command.

* **Data** goes to stdout, as ``--format table`` (aligned text, the default), ``json`` or
  ``csv`` (``jsonl`` where rows stream: ``explain``, ``sql``); ``--json``, ``--jsonl`` and
  ``--csv`` are aliases of ``--format``.
* **Progress and status** (what is being done, where files were written, how long it took)
  go to stderr, so that ``> out.txt`` holds only data. ``-q`` silences them (errors still
  print); ``-v`` adds timings and shows every row of long tables. Both work before the command
  (``tormortem -q analyze ...``) and after it (``tormortem analyze -q ...``).
* **Exit status**: 0 ok; 1 the command ran and failed (unreadable or unusable input content,
  nothing to analyse, an output that cannot be written, an internal error); 2 the command line
  cannot be acted on as written (unknown option, malformed value, contradictory options, a
  path argument that does not exist) -- click's own usage errors use 2 as well.
"""

from __future__ import annotations

import csv
import io
import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


@dataclass
class Settings:
    quiet: bool = False
    verbose: int = 0
    t0: float = field(default_factory=time.perf_counter)


def settings() -> Settings:
    """The -q/-v settings of the current invocation (defaults outside a click context)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return Settings()
    root = ctx.find_root()
    if not isinstance(root.obj, Settings):
        root.obj = Settings()
    return root.obj


def status(msg: str) -> None:
    """A status line on stderr (not with -q)."""
    s = settings()
    if not s.quiet:
        click.echo(msg, err=True)


def verbose(msg: str) -> None:
    """A detail line on stderr, only with -v."""
    s = settings()
    if s.verbose and not s.quiet:
        click.echo(msg, err=True)


def warn(msg: str) -> None:
    """A warning on stderr: shown even with -q (it changes what the output means)."""
    click.echo(f"warning: {msg}", err=True)


def input_notes(lines: list[str]) -> None:
    """What the walk of the inputs could not or would not read (``options.input_warnings``):
    its ``warning:`` lines always, its ``note:`` lines unless -q."""
    for line in lines:
        if line.startswith("warning:"):
            click.echo(line, err=True)
        else:
            status(line)


class Phase:
    """``with Phase("analyze", "runs, decomposition, root causes"):`` -- one status line when
    the phase starts; with -v its duration when it ends."""

    def __init__(self, name: str, what: str) -> None:
        self.name, self.what = name, what
        self.t0 = 0.0

    def __enter__(self) -> Phase:
        self.t0 = time.perf_counter()
        status(f"{self.name}: {self.what} ...")
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            verbose(f"{self.name}: done in {time.perf_counter() - self.t0:.2f} s")


def _set_quiet(ctx: click.Context, _p: click.Parameter, value: bool) -> None:
    if value:
        settings().quiet = True


def _set_verbose(ctx: click.Context, _p: click.Parameter, value: int) -> None:
    if value:
        settings().verbose += value


def verbosity_options(f: F) -> F:
    """-q/--quiet and -v/--verbose (accepted on the group and on every command)."""
    f = click.option("-v", "--verbose", count=True, expose_value=False, callback=_set_verbose,
                     help="More detail: phase timings on stderr, every row of long tables "
                          "(repeat for more).")(f)
    f = click.option("-q", "--quiet", is_flag=True, expose_value=False, callback=_set_quiet,
                     help="No progress or status lines on stderr (errors and warnings "
                          "still print).")(f)
    return f


def _alias(ctx: click.Context, p: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta.setdefault("tormortem_format_aliases", []).append(p.name)


def format_option(*choices: str, aliases: Sequence[str] = ("json",),
                  what: str = "the result") -> Callable[[F], F]:
    """``--format CHOICE`` plus ``--json``/``--csv``/``--jsonl`` aliases; read the chosen
    format with ``chosen_format(fmt)``."""

    def deco(f: F) -> F:
        for a in reversed(aliases):
            f = click.option(f"--{a}", a, is_flag=True, expose_value=False, callback=_alias,
                             help=f"Same as --format {a}.")(f)
        return click.option(
            "--format", "fmt", type=click.Choice(list(choices)), default=None,
            help=f"How to print {what}: {', '.join(choices)} (default {choices[0]}).")(f)

    return deco


def chosen_format(fmt: str | None, default: str = "table") -> str:
    ctx = click.get_current_context()
    picked = [*([fmt] if fmt else []), *ctx.meta.get("tormortem_format_aliases", [])]
    if len(set(picked)) > 1:
        raise click.UsageError(f"choose one output format, not {' and '.join(sorted(set(picked)))}")
    return picked[0] if picked else default


# --- printing data -----------------------------------------------------------------------


#: values plain() returns as they are (exact types: subclasses take the general path)
_AS_IS = frozenset({str, int, bool, type(None)})


def plain(v: Any) -> Any:
    """A JSON-able value: timestamps as ISO 8601, non-finite floats as null. (Fast paths for
    the common exact types: an analysis holds about a million node names.)"""
    t = type(v)
    if t in _AS_IS:
        return v
    if t is list and _AS_IS.issuperset(map(type, v)):
        return list(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, datetime | date):
        return v.isoformat()
    if isinstance(v, timedelta):
        return v.total_seconds()
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple | set):
        return [plain(x) for x in v]
    return v


def dumps(doc: Any, indent: int | None = 2) -> str:
    if indent == 2:  # the same text, faster
        from pipeline.model.jsondump import dumps2

        return dumps2(plain(doc), ensure_ascii=False, allow_nan=False)
    return json.dumps(plain(doc), indent=indent, ensure_ascii=False, allow_nan=False)


def csv_text(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    for r in rows:
        w.writerow(["" if v is None else json.dumps(plain(v)) if isinstance(v, list | dict)
                    else plain(v) for v in r])
    return buf.getvalue().rstrip("\n")


def emit_rows(fmt: str, headers: Sequence[str], rows: Sequence[Sequence[Any]],
              table: Callable[[], str]) -> None:
    """Print rows in ``fmt``; ``table`` renders the text form."""
    if fmt == "json":
        click.echo(dumps([dict(zip(headers, r, strict=True)) for r in rows]))
    elif fmt == "jsonl":
        for r in rows:
            click.echo(dumps(dict(zip(headers, r, strict=True)), indent=None))
    elif fmt == "csv":
        click.echo(csv_text(headers, rows))
    else:
        click.echo(table())
