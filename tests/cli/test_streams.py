"""A reader that goes away (``| head -1``) ends the command quietly with exit 0, whatever it
was printing. It needs a real process and a real pipe."""

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
