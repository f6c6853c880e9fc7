"""What users read is true: help and errors cite only what ships (README sections, not
TOR_MODEL.md/TAXONOMY.md), the README's test commands leave the real-Slurm suite out, the
license is there."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import main
from pipeline.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_help_cites_no_file_users_do_not_have() -> None:
    for args in ([], *([name] for name in COMMANDS)):
        out = CliRunner().invoke(main, [*args, "--help"]).output
        assert "TOR_MODEL" not in out and "TAXONOMY" not in out, args
        assert not re.search(r"(?<![.\w])duckdb\s+[/\w]", out), args  # no `duckdb FILE`


def test_error_texts_cite_no_file_users_do_not_have() -> None:
    pat = re.compile(r"(Error|raise [A-Za-z]+Error|ClickException)\(.*(TOR_MODEL|TAXONOMY)")
    for f in (ROOT / "pipeline").rglob("*.py"):
        src = f.read_text()
        assert not pat.search(src), f
        for m in re.finditer(r"raise \w+\(\s*f?\"[^\n]*\n?[^\n]*", src):
            assert "TOR_MODEL" not in m.group(0) and "TAXONOMY" not in m.group(0), f


def _pytest_commands() -> list[list[str]]:
    cmds = []
    for line in README.splitlines():
        for m in re.finditer(r"(python -m pytest[^`\n;&|)]*)", line):
            cmds.append(shlex.split(m.group(1)))
    return cmds


def test_readme_test_commands_leave_the_slurm_suite_out_unless_named() -> None:
    cmds = _pytest_commands()
    assert len(cmds) >= 3, cmds
    for argv in cmds:
        args = argv[3:]  # after `python -m pytest`
        marks = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-m"]
        if not marks:
            continue  # the default marker expression (pyproject): not slurm
        expr = marks[-1]  # a -m given replaces the default one
        assert expr == "slurm" or "not slurm" in expr, argv
    # and every marker expression the README suggests on its own
    for m in re.finditer(r"-m ([\"'])(.*?)\1|-m (\w+)", README):
        expr = m.group(2) or m.group(3)
        if expr in ("pytest", "pipeline", "venv", "pip"):
            continue  # python -m MODULE
        assert expr == "slurm" or "not slurm" in expr, expr


def test_readme_names_no_duckdb_command_and_states_test_durations() -> None:
    assert "duckdb DIR" not in README
    testing = README.split("## Testing")[1].split("\n## ")[0]
    assert re.search(r"about \d+ minutes", testing)
    assert '-m "slow and not slurm"' in testing


def test_license_is_apache_2() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
