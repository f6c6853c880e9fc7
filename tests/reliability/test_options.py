"""Issue 15, "Time" (the option and stamp probes) and section 5, "Options and errors":
`--year` turned the Dec -> Jan rollover off; `--year 0` or `99999` was accepted and every line
became unparsed; `--tz +25:00`, a non-UTF-8 rules file and `explain` of a year-10000 stamp each
gave "internal error". Usage errors exit 2 with click's one line; nothing a user can give
says "internal error"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reliability.conftest import cli

# RFC 3164 kernel lines as rsyslog's traditional file format writes them (no year); Xid text
# as the NVIDIA driver prints it (NVIDIA Xid Errors doc, "Xid 79: GPU has fallen off the bus")
DEC = ("Dec 31 23:59:58 node017 kernel: [ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, "
       "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n")
JAN = ("Jan  1 00:00:03 node017 kernel: [ 1239.567890] NVRM: Xid (PCI:0000:3b:00): 79, "
       "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n")


@pytest.mark.parametrize("year", ["0", "99999", "1969", "2101", "abc"])
def test_year_out_of_range_is_a_usage_error(tmp_path: Path, year: str) -> None:
    (tmp_path / "kern.log").write_text(DEC)
    for cmd in (["explain"], ["ingest", "--out", str(tmp_path / "o")]):
        r = cli(*cmd, tmp_path / "kern.log", "--year", year)
        assert r.returncode == 2, r.stderr
        assert r.stderr.splitlines()[-1].startswith("Error: Invalid value for '--year'")
        assert not (tmp_path / "o").exists()


def test_year_keeps_the_december_to_january_rollover(tmp_path: Path) -> None:
    (tmp_path / "kern.log").write_text(DEC + JAN)
    r = cli("explain", tmp_path / "kern.log", "--jsonl", "--year", "2023")
    assert r.returncode == 0, r.stderr
    stamps = [json.loads(line)["ts"] for line in r.stdout.splitlines()]
    assert stamps == ["2023-12-31T23:59:58.000000Z", "2024-01-01T00:00:03.000000Z"]


@pytest.mark.parametrize("tz", ["+25:00", "-13:30", "+14:01", "+02:99", "Mars/Olympus", "+2",
                                "UTC+99", ""])
def test_bad_zones_are_usage_errors(tmp_path: Path, tz: str) -> None:
    (tmp_path / "kern.log").write_text(DEC)
    r = cli("explain", tmp_path / "kern.log", "--tz", tz)
    assert r.returncode == 2, (tz, r.stderr)
    assert r.stderr.splitlines()[-1].startswith("Error: Invalid value for '--tz'")
    assert "internal error" not in r.stderr


@pytest.mark.parametrize("tz", ["+14:00", "-12:00", "+05:45", "Pacific/Kiritimati", "UTC"])
def test_real_zones_are_accepted(tmp_path: Path, tz: str) -> None:
    (tmp_path / "kern.log").write_text(DEC)
    r = cli("explain", tmp_path / "kern.log", "--tz", tz)
    assert r.returncode == 0, r.stderr


def test_a_rules_file_that_is_not_utf8(tmp_path: Path) -> None:
    rules = tmp_path / "r.csv"
    rules.write_bytes(b"id,source,kind,code,pattern,category,mode,specificity,scales_with,"
                      b"note\nmy-1,kernel,xid,79,,gpu_hardware,fail-stop,90,gpu,caf\xe9\n")
    (tmp_path / "kern.log").write_text(DEC)
    for cmd in (["explain"], ["ingest", "--out", str(tmp_path / "o")]):
        r = cli(*cmd, tmp_path / "kern.log", "--rules", rules)
        assert (r.returncode, r.stderr) == (1, f"Error: {rules} line 2: not UTF-8 text (byte "
                                               "0xe9); save the file as UTF-8\n")


@pytest.mark.parametrize("stamp", [  # ~4-5 s each: two in the slow suite (the quick budget)
    "9999-12-31T23:30:00.000000-05:00",
    pytest.param("0001-01-01T00:10:00.000000+05:00", marks=pytest.mark.slow),
    pytest.param("9999-12-31T23:59:59.999999-14:00", marks=pytest.mark.slow)])
def test_stamps_beyond_the_calendar_are_no_internal_error(tmp_path: Path, stamp: str) -> None:
    # rsyslog's RFC 3339 form (Debian 12 default), the stamp pushed to the calendar's edges:
    # in UTC these are year 10000 or year 0, which Python's datetime cannot hold
    (tmp_path / "kern.log").write_text(
        f"{stamp} node001 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off "
        "the bus.\n")
    for args in (["explain", "--jsonl"], ["explain"], ["ingest", "--out", str(tmp_path / "o")]):
        r = cli(args[0], tmp_path / "kern.log", *args[1:])
        assert r.returncode == 0, r.stderr
        assert "internal error" not in r.stderr
    r = cli("explain", tmp_path / "kern.log", "--jsonl")
    assert json.loads(r.stdout)["kind"] == "xid"


def test_a_run_map_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "map.csv").write_bytes(b"job_id,run\n1001,caf\xe9\n")
    r = cli("analyze", tmp_path / "map.csv", "--out", tmp_path / "o", "--run-map",
            tmp_path / "map.csv")
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == (f"Error: Invalid value for '--run-map': "
                                         f"{tmp_path / 'map.csv'} line 2: not UTF-8 text (byte "
                                         "0xe9); save the file as UTF-8")


def test_a_terminal_that_cannot_show_a_job_name(tmp_path: Path) -> None:
    """stdout in Latin-1 and a job name in Chinese: the name is printed with escapes, not an
    "internal error (UnicodeEncodeError)" after the folder was written (fault probe M9)."""
    import os
    import subprocess

    from tests.reliability.conftest import CLI

    logs = tmp_path / "logs"
    (logs / "jobs").mkdir(parents=True)
    demo = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"
    rows = (demo / "slurm" / "sacct.txt").read_text().splitlines()[:3]
    (logs / "sacct.txt").write_text("\n".join(rows).replace("llama-pretrain", "llama-pré训练")
                                    + "\n")
    for j in ("1001", "1002"):
        (logs / "jobs" / f"slurm-{j}.out").write_bytes((demo / "jobs" / f"slurm-{j}.out")
                                                        .read_bytes())
    r = subprocess.run([*CLI, "analyze", str(logs), "--out", str(tmp_path / "o")],
                       capture_output=True, timeout=300, check=False,
                       env={**os.environ, "PYTHONIOENCODING": "latin-1"})
    assert r.returncode == 0, r.stderr
    assert "Run llama-pr\xe9\\u8bad\\u7ec3: " in r.stdout.decode("latin-1")
