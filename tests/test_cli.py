"""CLI: exact output and exit codes, help for every command, errors as one line.

Exit codes (pipeline.cli.output): 0 ok, 1 the command ran and failed, 2 usage error. Data on
stdout, status on stderr (``CliRunner`` keeps them apart: ``.stdout`` / ``.stderr``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import duckdb
import pytest
from click.testing import CliRunner

from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, input: str | None = None) -> tuple[int, str]:
    """Exit code and everything printed (stdout and stderr, as a terminal shows them)."""
    r = CliRunner().invoke(main, list(args), input=input)
    return r.exit_code, r.output


def run3(*args: str, input: str | None = None) -> tuple[int, str, str]:
    """Exit code, stdout, stderr."""
    r = CliRunner().invoke(main, list(args), input=input)
    return r.exit_code, r.stdout, r.stderr


def test_every_command_has_help_with_an_example() -> None:
    ctx = click.Context(main)
    names = main.list_commands(ctx)
    assert {"ingest", "explain", "analyze", "fit", "plan", "simulate", "sources"} <= set(names)
    for name in names:
        cmd = main.get_command(ctx, name)
        assert cmd is not None
        code, out = run(name, "--help")
        assert code == 0, name
        assert "Example" in out, f"{name} --help has no example"
        assert cmd.help, name
    assert "Example" in (main.get_help(ctx))


def test_the_group_lists_commands_with_their_own_help_without_importing_them() -> None:
    # `tormortem --help` lists every command from COMMANDS (importing none of their modules):
    # those texts must stay the commands' own first paragraph
    import importlib

    from pipeline.cli.main import COMMANDS

    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(COMMANDS)
    for name, (target, short) in COMMANDS.items():
        mod, attr = target.split(":")
        cmd = getattr(importlib.import_module(mod), attr)
        assert cmd.name == name
        assert short == " ".join(cmd.help.split("\n\n")[0].split()), name
    code, out = run("--help")
    assert code == 0
    listed = {line.split()[0] for line in out.split("Commands:")[1].split("Exit status")[0]
              .splitlines() if line.strip()}
    assert listed == set(COMMANDS)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["ingest", "/nonexistent/x.log", "--out", "/tmp/tm-x"], 2,
         "Error: no such file, directory or glob match: '/nonexistent/x.log'; give log files, "
         "directories or a quoted glob\n"),
        (["explain", "/nonexistent"], 2,
         "Error: no such file, directory or glob match: '/nonexistent'; give log files, "
         "directories or a quoted glob\n"),
    ],
)
def test_errors_are_one_line(args: list[str], code: int, message: str) -> None:
    rc, out = run(*args)
    assert rc == code
    assert out == message


def test_usage_error_exit_2(tmp_path: Path) -> None:
    rc, out = run("ingest", str(tmp_path))
    assert rc == 2
    assert "Missing option '--out'" in out


def test_bad_tz_and_source_are_usage_errors(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_text("x\n")
    rc, out, err = run3("ingest", str(f), "--out", str(tmp_path / "o"), "--tz", "Mars/Olympus")
    assert (rc, out) == (2, "")
    assert err.endswith("Error: Invalid value for '--tz': unknown time zone 'Mars/Olympus': use "
                        "an IANA name such as Europe/Berlin, or an offset such as +02:00\n")
    rc, out, err = run3("ingest", str(f), "--out", str(tmp_path / "o"), "--source", "nope")
    assert (rc, out) == (2, "")
    assert "Error: Invalid value for '--source': unknown source 'nope'; choose one of: " in err
    assert not (tmp_path / "o").exists()  # nothing was started


def test_rules_file_with_a_bad_regex_names_the_line(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_text("x\n")
    rules = tmp_path / "r.csv"
    rules.write_text("id,source,kind,code,pattern,category,mode,specificity,scales_with,note\n"
                     "my-1,kernel,xid,79,,gpu_hardware,fail-stop,90,gpu,\n"
                     "my-2,kernel,xid,,fell off (the bus,gpu_hardware,fail-stop,90,gpu,\n")
    rc, out = run("ingest", str(f), "--out", str(tmp_path / "o"), "--rules", str(rules))
    assert rc == 1
    assert out.startswith(f"Error: {rules} line 3: pattern 'fell off (the bus' is not a valid "
                          "regular expression (RE2): ")
    assert out.count("\n") == 1


def test_bad_rules_file(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_text("x\n")
    rules = tmp_path / "r.csv"
    rules.write_text("id,source,kind,code,pattern,category,mode,specificity,scales_with,note\n"
                     "my-1,kernel,xid,79,,gpu_broken,fail-stop,90,gpu,\n")
    rc, out = run("ingest", str(f), "--out", str(tmp_path / "o"), "--rules", str(rules))
    assert rc == 1
    assert out.startswith(f"Error: {rules} line 2: unknown category 'gpu_broken'; use one of ")


def test_ingest_unknown_file_exact_table(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("hello\nworld\n\nlast line without newline")
    out_dir = tmp_path / "out"
    rc, out, err = run3("ingest", str(f), "--out", str(out_dir))
    assert rc == 0
    lines = out.splitlines()
    assert lines == [
        "Line accounting per file (read = events + irrelevant + unparsed):",
        f"{'file':<{len(str(f))}}  source  unit  read  events  irrelevant  unparsed",
        f"{f}  text    line     4       0           1         3",
        "",
        "Per source:",
        "source  unit  files  read  events  irrelevant  unparsed",
        "text    line      1     4       0           1         3",
        "total             1     4       0           1         3",
        "",
        f"note: {f}: no known layout; read as text (every signature tried); name a source "
        "with --source if it is one",
        "note: 3 unparsed lines; samples in the unparsed_samples table",
    ]
    # the status line goes to stderr, with the size in human units
    assert err.startswith(f"Wrote 0 events and 0 scheduler records to {out_dir}/")
    assert re.search(r" in \d+\.\d\d s \(38 B, \d+(\.\d)? (B|kB|MB)/s\)$", err.rstrip()), err
    con = duckdb.connect(str(out_dir / "tormortem.duckdb"), read_only=True)
    samples = con.execute("SELECT line_no, text FROM unparsed_samples ORDER BY 1").fetchall()
    assert samples == [(1, "hello"), (2, "world"), (4, "last line without newline")]
    assert {r[0] for r in con.execute("SHOW TABLES").fetchall()} >= {
        "events", "attempts", "job_steps", "line_accounting", "unparsed_samples", "rules",
        "classified_events", "unknown_templates"}


def test_ingest_sample_logs_accounting_adds_up(tmp_path: Path) -> None:
    rc, out = run("ingest", str(ROOT / "sample_logs"), "--out", str(tmp_path / "o"), "-q")
    assert rc == 0, out
    assert out == ""  # -q: neither the summary table (stdout) nor the status line (stderr)
    con = duckdb.connect(str(tmp_path / "o" / "tormortem.duckdb"), read_only=True)
    bad = con.execute("SELECT file FROM line_accounting "
                      "WHERE read != events + irrelevant + unparsed").fetchall()
    assert bad == []
    n_files = con.execute("SELECT count(*) FROM line_accounting").fetchone()
    assert n_files is not None and n_files[0] > 0
    unknown = con.execute("SELECT file FROM line_accounting WHERE source = 'unknown'"
                          " AND file NOT LIKE '%.md'").fetchall()
    assert unknown == []


def test_explain_jsonl_from_stdin() -> None:
    rc, out = run("explain", "-", "--jsonl", "--source", "unknown-source")
    assert rc == 2
    rc, out = run("explain", "-", "--jsonl", input="just some words\n")
    assert rc == 0
    assert out == ""


def test_sources_lists_names() -> None:
    rc, out = run("sources")
    assert rc == 0
    names = [line.split()[0] for line in out.splitlines()]
    assert len(names) == len(set(names))


def test_json_rows_are_json() -> None:
    # explain --jsonl prints one JSON object per line with the documented keys
    text = "nothing here\n"
    _, out = run("explain", "-", "--jsonl", input=text)
    for line in out.splitlines():
        row = json.loads(line)
        assert set(row) >= {"file", "line_no", "source", "kind", "category", "code"}
