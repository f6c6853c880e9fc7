"""No scheduler records, but the controller's log: its ``sched: Allocate JobId=N
NodeList=...`` lines give the attempts rebuilt from output their nodes, so node-level
evidence (an Xid on node003) finds them. Without, 5 of the demo's 18 GPU causes became NCCL
timeouts and nothing said so (fault probe H8)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.cli.conftest import analysis

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"


def test_the_controller_log_gives_inferred_attempts_their_nodes(tmp_path: Path) -> None:
    logs = tmp_path / "demo"
    shutil.copytree(DEMO, logs)
    (logs / "slurm" / "sacct.txt").unlink()
    want, got = analysis(DEMO, tmp_path / "a")["runs"][0], analysis(logs, tmp_path / "b")["runs"][0]
    assert Counter(i["category"] for i in got["interruptions"]) == \
        Counter(i["category"] for i in want["interruptions"])
    assert [i["node"] for i in got["interruptions"]] == [i["node"] for i in want["interruptions"]]
    assert got["tor"] == pytest.approx(want["tor"], abs=1e-4)
    assert all(len(a["nodes"]) == 16 for a in got["attempts"][:3])
