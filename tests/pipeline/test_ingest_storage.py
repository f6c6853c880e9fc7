"""Ingest's storage: the view ``events`` (narrow progress rows + events_other) holds exactly
the rows of events.parquet, which are exactly what the parsers produce."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq

from parsers.driver import parse_text
from parsers.joblog import JobLogParser
from parsers.reader import InputFile
from parsers.schema import EVENTS
from pipeline.ingest.run import ingest

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
    view = con.sql("SELECT * EXCLUDE (event_id) FROM events").to_arrow_table().to_pylist()
    n_progress = con.execute("SELECT count(*) FROM progress").fetchall()[0][0]
    ids = con.execute("SELECT count(DISTINCT event_id), count(*) FROM events").fetchall()[0]
    con.close()
    parquet_table = pq.read_table(out / "events.parquet")
    # written with dictionaries, read back as EVENTS: plain strings, every description kept
    assert parquet_table.schema.equals(EVENTS, check_metadata=True)
    parquet = parquet_table.to_pylist()
    expected, _, acct = parse_text(JobLogParser, text, str(log), tz=UTC)
    assert n_progress > 300  # the vectorised path was taken and stored narrow
    assert ids[0] == ids[1] == len(view) == res.events
    assert _rows(view) == _rows(parquet) == _rows(expected.to_pylist())
    assert {r["host"] for r in view} == {"node017"}
    assert len([r for r in view if r["kind"] == "iteration"]) == 400
    assert acct.read == res.totals["read"] == 400 + 16
