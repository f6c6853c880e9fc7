"""The command's own process ends without the interpreter's teardown (``main._leave``):
what it printed, wrote and returned must be what the ordinary exit gives.

Run as ``python -m pipeline`` (the console script takes the same path): its output piped
to a file arrives whole, the outputs' database is closed (no write-ahead log left), exit
codes are click's, and a non-daemon thread still running is joined first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

# Megatron-LM's training_log line (megatron/training/training.py), as in sample_logs/
LINE = (" [2024-05-01 00:00:{s:02d}] iteration {i:8d}/   10000 | consumed samples: {c:12d} | "
        "elapsed time per iteration (ms): 1000.0 | learning rate: 3.000000E-04 | "
        "global batch size:  1024 | lm loss: 2.500000E+00 | loss scale: 1.0 | "
        "number of skipped iterations:   0 | number of nan iterations:   0 |\n")


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_outputs_whole_and_closed(tmp_path: Path) -> None:
    log = tmp_path / "slurm-7.out"
    log.write_text("".join(LINE.format(s=i, i=i, c=1024 * i) for i in range(1, 41)))
    out = tmp_path / "o"
    got = _run("-q", "ingest", str(log), "--out", str(out), cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert not list(out.glob("*.wal"))
    con = duckdb.connect(str(out / "tormortem.duckdb"), read_only=True)
    try:
        n = con.execute("select count(*) from events where kind = 'iteration'").fetchone()
    finally:
        con.close()
    assert n == (40,)
    rows = _run("sql", str(out), "select * from range(200000)", "--format", "csv",
                cwd=tmp_path)
    assert rows.returncode == 0, rows.stderr
    lines = rows.stdout.splitlines()
    assert len(lines) == 200_001 and lines[-1] == "199999"


def test_exit_codes_kept(tmp_path: Path) -> None:
    assert _run("--version", cwd=tmp_path).returncode == 0
    bad = _run("ingest", str(tmp_path / "missing.log"), "--out", str(tmp_path / "o"),
               cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("Usage:") is False
    assert "Error:" in bad.stderr
    assert _run("no-such-command", cwd=tmp_path).returncode == 2


def test_threads_joined_and_atexit_run(tmp_path: Path) -> None:
    """A non-daemon thread's last write and an ``atexit`` handler both happen, as with the
    ordinary exit."""
    code = f"""
import atexit, sys, threading, time
from pathlib import Path
sys.argv[0] = {str(Path('pipeline') / '__main__.py')!r}
import pipeline.cli.main
m = sys.modules["pipeline.cli.main"]
assert m._PROCESS
def late():
    time.sleep(0.3)
    Path({str(tmp_path / 'thread')!r}).write_text('done')
threading.Thread(target=late).start()
atexit.register(lambda: Path({str(tmp_path / 'atexit')!r}).write_text('done'))
m.main(['--version'], prog_name='tormortem')
"""
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert got.returncode == 0, got.stderr
    assert "version" in got.stdout
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "done"
