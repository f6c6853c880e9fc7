"""``tormortem sql DIR [QUERY]``: query an ingested or analysed directory's tables.

Uses the DuckDB library tormortem itself depends on (the same version that wrote the file), so
no separate ``duckdb`` command is needed -- and a standalone DuckDB CLI of another version may
not open the file. The database is opened read-only.

* With a QUERY: runs it (several statements separated by ``;`` run in order; the result of
  each that returns rows is printed) as ``--format table|csv|json|jsonl``.
* Without one, on a terminal: an interactive shell (statements end with ``;``; ``.tables``,
  ``.schema [TABLE]``, ``.format FORMAT``, ``.help``, ``.quit``).
* Without one, with standard input redirected: the SQL read from it, as with a QUERY.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from pipeline.cli import output

PROMPT, MORE = "tormortem> ", "     ...> "
SHELL_HELP = """\
Statements end with ; and may span lines. Commands:
  .tables            the tables and views
  .schema [TABLE]    columns of one table (or of all)
  .format FORMAT     table, csv, json or jsonl
  .help              this text
  .quit              leave (also Ctrl-D)"""


@click.command("sql")
@click.argument("directory", type=click.Path(exists=True, path_type=Path))
@click.argument("query", required=False)
@output.format_option("table", "csv", "json", "jsonl", aliases=("json", "jsonl", "csv"),
                      what="the rows")
@output.verbosity_options
def sql_cmd(directory: Path, query: str | None, fmt: str | None) -> None:
    """Query an analysed directory's tables with SQL (DuckDB), or open a shell.

    DIRECTORY is an `ingest`/`analyze --out` folder (or its tormortem.duckdb). The tables
    are listed in the README ("A tour" and "analyze"); `.tables` in the shell lists them.
    Without QUERY: an interactive shell on a terminal, else the SQL read from stdin.

    \b
    Example:
      tormortem sql reports/demo "SELECT category, count(*) FROM interruptions GROUP BY 1"
      tormortem sql reports/demo "SELECT * FROM decomposition" --format csv > d.csv
      tormortem sql reports/demo
    """
    import duckdb

    from pipeline.ingest.sink import connect

    fmt = output.chosen_format(fmt)
    if query is None and sys.stdin is None:
        raise click.UsageError("no QUERY, and standard input is closed: give the SQL as an "
                               f"argument (tormortem sql {_q(directory)} \"SHOW TABLES\") or "
                               "pipe it in")
    db = directory / "tormortem.duckdb" if directory.is_dir() else directory
    if not db.is_file():
        raise click.ClickException(f"no tormortem.duckdb in {directory}; run `tormortem "
                                   f"analyze LOGS --out {directory}` (or ingest) first")
    try:
        con = connect(db, read_only=True)
    except duckdb.Error as e:
        raise click.ClickException(f"cannot open {db}: {e}") from None
    try:
        if query is None and sys.stdin.isatty():
            _shell(con, fmt)
            return
        text = _sql_text(query)
        try:
            for head, rows in run_statements(con, text):
                _print(fmt, head, rows)
        except duckdb.Error as e:
            raise click.ClickException(f"{_one_line(e)}; {_hint(e, directory)}") from None
    finally:
        con.close()


def run_statements(con: Any, text: str) -> list[tuple[list[str], list[tuple[Any, ...]]]]:
    """Run every statement of ``text``; the columns and rows of each that returns rows."""
    out = []
    for stmt in con.extract_statements(text):
        cur = con.execute(stmt)
        if cur.description:
            out.append(([d[0] for d in cur.description], cur.fetchall()))
    return out


def _print(fmt: str, head: list[str], rows: list[tuple[Any, ...]]) -> None:
    from pipeline.report.terminal import table

    def text() -> str:
        shown = [[_cell(v) for v in r] for r in rows]
        n = len(rows)
        return table(head, shown) + f"\n({n:,} row{'s' if n != 1 else ''})"

    output.emit_rows(fmt, head, [list(r) for r in rows], text)


def _cell(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e6 else f"{v:,.1f}"
    if isinstance(v, str) and len(v) > 120:
        return v[:117] + "..."
    return v if isinstance(v, int | str | type(None)) else str(v)


def _q(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


def _sql_text(query: str | None) -> str:
    """QUERY, or the SQL on standard input, as text (``parsers.textfile``): bytes that are
    not UTF-8 reached DuckDB as lone surrogates, "internal error (TypeError ...)"."""
    from parsers.textfile import NotText, decode

    if query is None:
        try:
            return decode(sys.stdin.buffer.read(), "the SQL on standard input",
                          "give it as UTF-8 text")
        except NotText as e:
            raise click.ClickException(str(e)) from None
    bad = next((c for c in query if "\udc80" <= c <= "\udcff"), None)  # surrogateescape'd
    if bad is not None:
        raise click.BadParameter(f"not UTF-8 text (byte 0x{ord(bad) - 0xdc00:02x}); type it "
                                 "in a UTF-8 terminal, or pipe it in as UTF-8",
                                 param_hint="QUERY")
    return query


def _one_line(e: Exception) -> str:
    """DuckDB's message on one line: its ``LINE n: <the SQL>`` quote in parentheses, without
    the carets under it (they point nowhere once the lines are joined)."""
    parts = []
    for line in str(e).splitlines():
        words = " ".join(line.split())
        if not words.strip("^ "):
            continue
        parts.append(f"({words})" if words.startswith("LINE ") else words)
    return " ".join(parts)


def _hint(e: Exception, where: Path | None) -> str:
    """What to do next, after DuckDB's message: where the table and column names are, or
    that the database is opened read-only. ``where``: None in the shell (its dot commands)."""
    if "read-only" in str(e):
        return ("tormortem sql opens the database read-only; to keep a result, COPY (SELECT "
                "...) TO 'result.parquet'")
    if where is None:
        return ".tables lists the tables, .schema <table> a table's columns"
    return (f'tormortem sql {_q(where)} "SHOW TABLES" lists the tables, "DESCRIBE <table>" '
            "a table's columns")


def _shell(con: Any, fmt: str) -> None:
    """The interactive shell. Ctrl-C clears the line being typed, or stops the running
    statement, and the shell goes on (as in psql, sqlite3 or DuckDB's own shell): SIGINT is
    a KeyboardInterrupt here, not the CLI's ``Interrupted``, which would end it. (A SIGINT
    the kernel hands to another thread reaches the main one through the watchdog's relay,
    ``pipeline.ingest.signals``: without it 4 Ctrl-C in 12 were lost until the next Enter.)"""
    import signal

    from pipeline.ingest.signals import note_handled

    def on_int(_signum: int, _frame: object) -> None:
        note_handled()
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGINT, on_int)
    try:
        _loop(con, fmt)
    finally:
        signal.signal(signal.SIGINT, old)


def _loop(con: Any, fmt: str) -> None:
    import duckdb

    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (line editing and history for input())
    click.echo(f"tormortem sql shell on {con.execute('PRAGMA database_list').fetchone()[2]} "
               "(read-only); .help for help, .quit to leave", err=True)
    buf: list[str] = []
    while True:
        try:
            line = input(MORE if buf else PROMPT)
        except EOFError:
            click.echo(err=True)
            return
        except KeyboardInterrupt:
            click.echo(err=True)
            buf.clear()
            continue
        if not buf and line.strip().startswith("."):
            fmt = _dot(con, line.strip(), fmt)
            if fmt == "quit":
                return
            continue
        buf.append(line)
        if not line.rstrip().endswith(";"):
            continue
        text, buf = "\n".join(buf), []
        try:
            for head, rows in run_statements(con, text):
                _print(fmt, head, rows)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
        except duckdb.Error as e:
            click.echo(f"Error: {_one_line(e)}; {_hint(e, None)}", err=True)


def _dot(con: Any, line: str, fmt: str) -> str:
    cmd, _, arg = line.partition(" ")
    arg = arg.strip()
    if cmd in (".quit", ".exit", ".q"):
        return "quit"
    if cmd == ".tables":
        rows = con.execute("SELECT table_name, table_type FROM information_schema.tables "
                           "ORDER BY 1").fetchall()
        _print("table", ["name", "type"], rows)
    elif cmd == ".schema":
        q = ("SELECT table_name, column_name, data_type FROM information_schema.columns "
             + ("WHERE table_name = ? " if arg else "") + "ORDER BY table_name, ordinal_position")
        _print("table", ["table", "column", "type"], con.execute(q, [arg] if arg else []
                                                                  ).fetchall())
    elif cmd == ".format" and arg in ("table", "csv", "json", "jsonl"):
        return arg
    elif cmd == ".help":
        click.echo(SHELL_HELP)
    else:
        click.echo(f"unknown command {line!r}; .help lists them", err=True)
    return fmt
