"""A heterogeneous job is one execution: sacct prints a row per component (JobID
``<leader>+<offset>``, JobIDRaw its own id, all starting together; Slurm's sacct.c print
of JobID for het jobs, docs: heterogeneous_jobs.html). Read as two attempts, the demo's job
1002 split in two gave a second interruption, a hang of -2,506 s and fitted rates from an
interruption that never happened (fault probe B6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"
HEAD = ("JobID|JobIDRaw|JobName|Partition|State|ExitCode|Submit|Start|End|Elapsed|NNodes|"
        "NodeList|AllocTRES")
TIMES = "2024-05-01T00:21:28|2024-05-01T00:49:07|2024-05-01T01:38:45|00:49:38"
PLAIN = (f"1002|1002|llama-pretrain|gpu|FAILED|1:0|{TIMES}|16|node[001-005,007-017]|"
         "billing=1024,cpu=1024,gres/gpu=128,mem=16000G,node=16")
HET = [f"1002+0|1002|llama-pretrain|gpu|FAILED|1:0|{TIMES}|8|node[001-005,007-009]|"
       "billing=512,cpu=512,gres/gpu=64,mem=8000G,node=8",
       f"1002+1|1003|llama-pretrain|gpu|CANCELLED|0:15|{TIMES}|8|node[010-017]|"
       "billing=512,cpu=512,gres/gpu=64,mem=8000G,node=8"]


def _run(tmp: Path, rows: list[str]) -> dict[str, Any]:
    (tmp / "jobs").mkdir(parents=True)
    first = (DEMO / "slurm" / "sacct.txt").read_text().splitlines()[1]
    (tmp / "sacct.txt").write_text("\n".join([HEAD, first, *rows]) + "\n")
    for j in ("1001", "1002"):
        (tmp / "jobs" / f"slurm-{j}.out").write_bytes(
            (DEMO / "jobs" / f"slurm-{j}.out").read_bytes())
    ingest(expand_inputs([str(tmp / "sacct.txt"), str(tmp / "jobs")]), tmp / "out")
    return analyze_db(tmp / "out" / "tormortem.duckdb")


def test_het_components_are_one_attempt(tmp_path: Path) -> None:
    plain = _run(tmp_path / "plain", [PLAIN])["runs"][0]
    het = _run(tmp_path / "het", HET)["runs"][0]
    assert [a["attempt"] for a in het["attempts"]] == ["1001", "1002"]
    a = het["attempts"][1]
    assert (a["state"], a["gpus"], len(a["nodes"])) == ("FAILED", 128, 16)
    assert a["nodes"] == sorted(plain["attempts"][1]["nodes"])
    assert len(het["interruptions"]) == 1
    assert het["tor"] == pytest.approx(plain["tor"], abs=1e-12)
    assert het["components"] == pytest.approx(plain["components"], abs=1e-9)
