"""sacct dumped every day: a job's row of the day it was still running (State RUNNING, End
Unknown, ExitCode 0:0) beside the row of the day it ended. The final row's state and exit code
are the attempt's; the RUNNING row's won when it came first (fault probe M3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import invoke

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"


@pytest.mark.parametrize("order", ["running first", "final first"])
def test_the_final_row_gives_state_and_exit(tmp_path: Path, order: str) -> None:
    logs = tmp_path / "logs"
    (logs / "jobs").mkdir(parents=True)
    head, r1001, r1002 = (DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:3]
    f = r1001.split("|")
    cols = head.split("|")
    f[cols.index("State")], f[cols.index("ExitCode")] = "RUNNING", "0:0"
    f[cols.index("End")], f[cols.index("Elapsed")] = "Unknown", "00:10:00"
    running = "|".join(f)
    days = [[head, running], [head, r1001, r1002]]
    if order == "final first":
        days.reverse()
    for k, rows in enumerate(days):
        (logs / f"sacct-2024-05-0{k + 1}.txt").write_text("\n".join(rows) + "\n")
    for j in ("1001", "1002"):
        shutil.copy(DEMO / "jobs" / f"slurm-{j}.out", logs / "jobs")
    r = invoke("analyze", str(logs), "--out", str(tmp_path / "o"), "--json")
    assert r.exit_code == 0, r.output
    run = json.loads(r.stdout)["runs"][0]
    (i,) = run["interruptions"]
    assert (i["attempt"], i["state"], i["category"]) == ("1001", "NODE_FAIL", "node_failure")
    assert run["tor"] == pytest.approx(0.41727788006756755, abs=1e-12)
