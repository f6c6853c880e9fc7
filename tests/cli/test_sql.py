"""``tormortem sql``: queries in every format, scripts from stdin, the shell, read-only."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from tests.cli.conftest import DEMO, invoke

Q = "SELECT category, count(*) AS n FROM interruptions GROUP BY 1 ORDER BY 2 DESC, 1"


def _expected(demo_out: Path) -> list[tuple[str, int]]:
    con = duckdb.connect(str(demo_out / "tormortem.duckdb"), read_only=True)
    try:
        return [(str(a), int(b)) for a, b in con.execute(Q).fetchall()]
    finally:
        con.close()


def test_query_as_table_csv_json_jsonl(demo_out: Path) -> None:
    want = _expected(demo_out)
    t = invoke("sql", str(demo_out), Q)
    assert t.exit_code == 0, t.output
    lines = t.stdout.splitlines()
    assert lines[0].split() == ["category", "n"]
    assert [tuple(x.split()) for x in lines[1:-1]] == [(a, str(b)) for a, b in want]
    assert lines[-1] == f"({len(want)} rows)"
    c = list(csv.reader(io.StringIO(invoke("sql", str(demo_out), Q, "--csv").stdout)))
    assert c == [["category", "n"], *([a, str(b)] for a, b in want)]
    j = json.loads(invoke("sql", str(demo_out), Q, "--format", "json").stdout)
    assert j == [{"category": a, "n": b} for a, b in want]
    jl = invoke("sql", str(demo_out), Q, "--jsonl").stdout.splitlines()
    assert [json.loads(x) for x in jl] == j


def test_the_database_file_itself_and_timestamps_as_iso(demo_out: Path) -> None:
    r = invoke("sql", str(demo_out / "tormortem.duckdb"),
               "SELECT min(start) AS s FROM runs", "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)[0]["s"].startswith("2024-05-01T00:00:05")


def test_script_from_stdin_runs_every_statement(demo_out: Path) -> None:
    r = invoke("sql", str(demo_out), "--csv",
               input="SELECT 1 AS a;\nSELECT count(*) AS runs FROM runs;\n")
    assert r.exit_code == 0
    assert r.stdout.splitlines() == ["a", "1", "runs", "1"]


def test_read_only(demo_out: Path) -> None:
    r = invoke("sql", str(demo_out), "DROP TABLE runs")
    assert r.exit_code == 1 and "read-only" in r.stderr
    assert r.stderr.endswith("; tormortem sql opens the database read-only; to keep a result, "
                             "COPY (SELECT ...) TO 'result.parquet'\n")
    assert invoke("sql", str(demo_out), "SELECT count(*) FROM runs").exit_code == 0


@pytest.mark.parametrize(("query", "message"), [
    ("selec 1", 'Parser Error: syntax error at or near "selec" (LINE 1: selec 1)'),
    ("SELECT 1;\nSELECT * FROM nosuch", "Catalog Error: Table with name nosuch does not exist!"),
    ("SELECT nosuch FROM runs", 'Binder Error: Referenced column "nosuch" not found'),
])
def test_duckdb_errors_are_one_line_with_what_to_do(demo_out: Path, query: str,
                                                    message: str) -> None:
    r = invoke("sql", str(demo_out), query)
    assert r.exit_code == 1
    assert r.stderr.count("\n") == 1 and "^" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"Error: {message}")
    assert r.stderr.endswith(f'; tormortem sql {demo_out} "SHOW TABLES" lists the tables, '
                             '"DESCRIBE <table>" a table\'s columns\n')
    assert "events" in invoke("sql", str(demo_out), "SHOW TABLES").stdout.split()


def test_sql_that_is_not_utf8(demo_out: Path) -> None:
    """Bytes that are not UTF-8 reached DuckDB as lone surrogates: "internal error
    (TypeError: extract_statements(): incompatible function arguments ...)" on 5 lines."""
    r = CliRunner().invoke(main, ["sql", str(demo_out)], input=b"SELECT 1 AS caf\xe9;")
    assert (r.exit_code, r.stderr) == (1, "Error: the SQL on standard input line 1: not UTF-8 "
                                          "text (byte 0xe9); give it as UTF-8 text\n")
    r = invoke("sql", str(demo_out), "SELECT 1 AS caf\udce9")  # argv's surrogateescape
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == ("Error: Invalid value for QUERY: not UTF-8 text (byte "
                                         "0xe9); type it in a UTF-8 terminal, or pipe it in "
                                         "as UTF-8")
    assert invoke("sql", str(demo_out), "--csv", input="SELECT 1 AS café;").stdout == "café\n1\n"


def test_a_replaced_events_parquet_says_how_to_rebuild_the_folder(demo_out: Path,
                                                                   tmp_path: Path) -> None:
    """It said to run `tormortem sql DIR` -- the command that had just failed."""
    import shutil

    import pyarrow.parquet as pq

    out = tmp_path / "out"
    shutil.copytree(demo_out, out)
    pq.write_table(pq.read_table(out / "events.parquet").slice(0, 10), out / "events.parquet")
    r = invoke("sql", str(out), "SELECT count(*) FROM runs")
    assert r.exit_code == 1
    assert r.stderr == (f"Error: {out}/events.parquet is not the events.parquet written with "
                        "this database (tormortem.duckdb): it was replaced or changed since; run "
                        f"`tormortem analyze {DEMO} --out {out}` again to rebuild the folder\n")


def test_shell(demo_out: Path, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> None:
    from pipeline.cli import sql

    lines = iter([".tables", "SELECT count(*)", "AS n FROM interruptions;", "SELEKT 1;",
                  ".format csv", "SELECT 2 AS two;", ".quit"])
    monkeypatch.setattr("builtins.input", lambda _prompt: next(lines))
    con = duckdb.connect(str(demo_out / "tormortem.duckdb"), read_only=True)
    try:
        sql._shell(con, "table")
    finally:
        con.close()
    out, err = capsys.readouterr()
    assert "interruptions" in out and "decomposition" in out  # .tables
    assert "\n18\n" in out or " 18\n" in out  # the two-line statement ran
    assert "Error: Parser Error" in err  # a bad statement does not end the shell
    assert "; .tables lists the tables, .schema <table> a table's columns\n" in err
    assert out.rstrip().endswith("two\n2")


def _pty_read(fd: int, until: bytes, timeout: float = 30.0) -> bytes:
    import os
    import select
    import time

    out, end = b"", time.monotonic() + timeout
    while until not in out and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                got = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not got:
                break
            out += got
    return out


def test_ctrl_c_in_the_shell_clears_the_line_and_the_shell_goes_on(demo_out: Path) -> None:
    """On a terminal (a pseudo-terminal here), Ctrl-C is the terminal's SIGINT to the shell:
    the half-typed statement is dropped and the next one runs, as in psql or sqlite3."""
    import os
    import pty
    import sys

    pid, fd = pty.fork()
    if pid == 0:  # the child: tormortem sql on the terminal
        os.execv(sys.executable, [sys.executable, "-c", "import sys; sys.argv[0] = 'tormortem'; "
                                  "from pipeline.cli import main; main()", "sql", str(demo_out)])
    try:
        assert b"tormortem> " in _pty_read(fd, b"tormortem> ")
        os.write(fd, b"SELECT 41 + 1 AS never")
        assert b"never" in _pty_read(fd, b"never")  # echoed: the shell has read it
        os.write(fd, b"\x03")  # the terminal turns it into SIGINT for the shell
        assert b"tormortem> " in _pty_read(fd, b"tormortem> ")
        os.write(fd, b"SELECT 6 * 7 AS answer;\n")
        got = _pty_read(fd, b"(1 row)")
        assert b"42" in got and b"(1 row)" in got, got
        os.write(fd, b".quit\n")
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        os.close(fd)
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
