"""Standard streams the caller closed: a reader that goes away (``| head -1``) ends the command
quietly with exit 0, whatever it was printing; a standard input closed before the start
(``<&-``) is one usage line for ``-`` (and for ``sql`` without a QUERY), never "internal error".
Both need a real process and a real pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import DEMO, ROOT

CLI = [sys.executable, "-c", "import sys; sys.argv[0] = 'tormortem'; "
       "from pipeline.cli import main; main()"]


@pytest.mark.parametrize("args", [
    # every row a write of its own: the second write after the reader left used to be
    # "Error: cannot access: Broken pipe; check the path and permissions", exit 1
    ["sql", "DIR", "SELECT range AS i, 'x' AS pad FROM range(200000)", "--format", "jsonl"],
    ["explain", str(DEMO), "--jsonl"],
    # one write per statement: the second statement's write hit the closed pipe
    ["sql", "DIR", "SELECT * FROM range(100000); SELECT * FROM range(100000)", "--csv"],
])
def test_a_reader_that_leaves_ends_the_command_quietly(demo_out: Path, args: list[str]
                                                        ) -> None:
    args = [str(demo_out) if a == "DIR" else a for a in args]
    with subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          cwd=ROOT) as p:
        assert p.stdout is not None and p.stderr is not None
        first = p.stdout.readline()  # what `head -1` reads; then it exits
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait(timeout=120) == 0, err
    assert first.strip() and err == ""


@pytest.mark.parametrize("args", [
    ["ingest", "-", "--out", "OUT"],
    ["explain", "-"],
    ["analyze", "-", "--out", "OUT"],
])
def test_dash_with_standard_input_closed_is_a_usage_error(tmp_path: Path, args: list[str]
                                                           ) -> None:
    args = [str(tmp_path / "o") if a == "OUT" else a for a in args]
    r = _stdin_closed(args)
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("Error: - names standard input, but it is closed: pipe the logs in "
                        "(zcat kern.log.gz | tormortem explain -) or name the files instead\n")
    assert not (tmp_path / "o").exists()


def test_sql_without_a_query_and_standard_input_closed(demo_out: Path) -> None:
    r = _stdin_closed(["sql", str(demo_out)])
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines()[-1] == (
        "Error: no QUERY, and standard input is closed: give the SQL as an argument "
        f'(tormortem sql {demo_out} "SHOW TABLES") or pipe it in')


def _stdin_closed(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``tormortem ARGS <&-``: started with file descriptor 0 closed (Python's sys.stdin is
    then None)."""
    return subprocess.run(["sh", "-c", 'exec "$@" <&-', "sh", *CLI, *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
