"""Job output split into stdout and stderr (``#SBATCH -o %x-%j.out -e %x-%j.err``).

Megatron's stamped progress goes to the ``.out``; the watchdog lines, tracebacks and torch
elastic reports to the ``.err``, whose last stamp is Megatron's ``[before the start of
training step] datetime: ...`` hours earlier. Those lines inherit it, so they fell before
their attempt's evidence window and three NCCL timeouts became user code (the traceback's own
time inside the report won). An inherited stamp is only a lower bound (evidence.sql): the
demo split this way must keep every root cause of the truth.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"
TRUTH = json.loads((DEMO / "truth.json").read_text())["runs"][0]


def test_stderr_split_from_stdout_keeps_the_root_causes(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(DEMO, logs)
    (logs / "truth.json").unlink()
    for p in list((logs / "jobs").iterdir()):
        lines = p.read_text().splitlines(keepends=True)
        out = [ln for ln in lines if " iteration " in ln or "checkpoint" in ln]
        p.write_text("".join(out))
        p.with_suffix(".err").write_text("".join(ln for ln in lines if ln not in out))
    ingest(expand_inputs([str(logs)]), tmp_path / "out")
    run = analyze_db(tmp_path / "out" / "tormortem.duckdb")["runs"][0]
    assert [i["category"] for i in run["interruptions"]] == [
        i["category"] for i in TRUTH["interruptions"]]
    assert abs(run["tor"] - TRUTH["tor"]) <= 1e-3
