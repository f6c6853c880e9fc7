"""Ingest's storage: the view ``events`` holds exactly the rows of events.parquet, in its
order, numbered by it, which are exactly what the parsers produce; it finds the file wherever
the folder is, and refuses a file that is not the one written with it."""

from __future__ import annotations

import shutil
from datetime import UTC
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from parsers.driver import parse_text
from parsers.joblog import JobLogParser
from parsers.reader import InputFile
from parsers.schema import EVENTS
from pipeline.ingest.outputs import OutputError
from pipeline.ingest.run import ingest
from pipeline.ingest.sink import connect

# Megatron-LM training_log() (megatron/training/training.py): ' [%Y-%m-%d %H:%M:%S]' then
# ' iteration {:8d}/{:8d} |' ... ' elapsed time per iteration (ms): {:.1f} |'
ITER = (" [2024-05-01 12:{m:02d}:{s:02d}] iteration {it:8d}/   50000 | consumed samples:"
        " {cs:12d} | elapsed time per iteration (ms): {ms:.1f} | learning rate: 1.5E-04 |"
        " global batch size:  1024 | lm loss: 2.512345E+00 | loss scale: 1.0 |")
# srun --label prefix; an NCCL WARN (NCCL's debug.cc: "%s:%d:%d [%d] NCCL WARN ...")
LABELLED = "  3: " + ITER
NCCL = ("node017:2210:2263 [3] NCCL WARN NET/IB : Got completion from peer 10.3.2.17<52431> "
        "with error 12, opcode 0, len 0, vendor err 129 (Recv)")


def _log(n: int) -> str:
    lines = []
    for i in range(n):
        line = (LABELLED if i % 7 == 3 else ITER).format(
            m=i // 60 % 60, s=i % 60, it=i + 1, cs=(i + 1) * 1024, ms=2000.0 + i % 10)
        lines.append(line)
        if i % 50 == 49:
            lines += [NCCL, "my own debug print"]
    return "\n".join(lines) + "\n"


def _rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    keys = ("file", "line_no", "kind", "ts", "ts_flag", "host", "host_from", "source",
            "format", "job_id", "rank", "code", "iteration", "value", "device", "message",
            "uptime_s")
    return sorted(tuple(r[k] for k in keys) for r in rows)


def test_events_view_equals_parquet_equals_parser(tmp_path: Path) -> None:
    log = tmp_path / "node017" / "slurm-4242.out"
    log.parent.mkdir()
    text = _log(400)
    log.write_text(text)
    out = tmp_path / "out"
    res = ingest([InputFile(log, str(log))], out)
    con = duckdb.connect(str(out / "tormortem.duckdb"), read_only=True)
    con.execute("SET TimeZone = 'UTC'")
    numbered = con.sql("SELECT * FROM events ORDER BY event_id").to_arrow_table()
    view = numbered.drop_columns(["event_id"]).to_pylist()
    ids = numbered.column("event_id").to_pylist()
    con.close()
    parquet_table = pq.read_table(out / "events.parquet")
    # written with dictionaries, read back as EVENTS: plain strings, every description kept
    assert parquet_table.schema.equals(EVENTS, check_metadata=True)
    parquet = parquet_table.to_pylist()
    expected, _, acct = parse_text(JobLogParser, text, str(log), tz=UTC)
    assert ids == list(range(res.events))  # event_id: the row's number in events.parquet
    assert view == parquet  # the same rows in the same order
    assert _rows(view) == _rows(expected.to_pylist())
    assert {r["host"] for r in view} == {"node017"}
    assert len([r for r in view if r["kind"] == "iteration"]) == 400
    assert acct.read == res.totals["read"] == 400 + 16


def _ingest_log(tmp: Path, name: str, n: int) -> Path:
    log = tmp / name / "node017" / "slurm-4242.out"
    log.parent.mkdir(parents=True)
    log.write_text(_log(n))
    out = tmp / name / "out"
    ingest([InputFile(log, str(log))], out)
    return out


def _count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM events").fetchall()[0]
    return int(row[0])


def test_the_view_follows_a_moved_folder_and_never_reads_another_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = _ingest_log(tmp_path, "a", 120)
    b = _ingest_log(tmp_path, "b", 300)
    n_a, n_b = pq.read_metadata(a / "events.parquet").num_rows, \
        pq.read_metadata(b / "events.parquet").num_rows
    assert n_a != n_b
    # a working directory holding another output's events.parquet changes nothing (DuckDB
    # looks for a relative path there first: the view's path is never relative)
    monkeypatch.chdir(b)
    con = duckdb.connect(str(a / "tormortem.duckdb"), read_only=True)
    assert _count(con) == n_a
    con.close()
    # the folder moved: tormortem's connections find the file beside the database ...
    moved = tmp_path / "moved"
    a.rename(moved)
    con = connect(moved / "tormortem.duckdb", read_only=True)
    assert _count(con) == n_a
    con.close()
    # ... another program's look where it was written, and find nothing there
    con = duckdb.connect(str(moved / "tormortem.duckdb"), read_only=True)
    with pytest.raises(duckdb.Error, match=r"No files found .*/a/out/events\.parquet"):
        _count(con)
    con.close()
    # the original place now holds another ingest's file: refused, not read
    a.mkdir()
    shutil.copy(b / "events.parquet", a / "events.parquet")
    con = duckdb.connect(str(moved / "tormortem.duckdb"), read_only=True)
    with pytest.raises(duckdb.Error, match=r"is not the events\.parquet written with this "
                       r"database: if the folder was moved, query it with tormortem sql DIR "
                       r".*; if the file was replaced, run tormortem ingest or analyze into the "
                       r"folder again"):
        _count(con)
    con.close()
    # an events.parquet replaced beside the database, or gone: one line, what to do (not
    # `tormortem sql DIR`, which is what says it: the ingest that wrote the folder, again)
    shutil.copy(b / "events.parquet", moved / "events.parquet")
    with pytest.raises(OutputError, match=r"moved/events\.parquet is not the events\.parquet "
                       r"written with this database \(tormortem\.duckdb\): it was replaced or "
                       r"changed since; run `tormortem ingest \(or analyze\) LOGS --out "
                       r".*/moved` again"):
        connect(moved / "tormortem.duckdb", read_only=True)
    (moved / "events.parquet").unlink()
    with pytest.raises(OutputError, match=r"no events\.parquet beside it"):
        connect(moved / "tormortem.duckdb", read_only=True)
