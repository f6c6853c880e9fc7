"""Attempts of one job name that train from scratch are another run.

The same sbatch script (same job name) used for a 20-minute smoke test two days before the
demo campaign (seed 11) gave one run of 5 days with the two days between as "repair gap":
TOR 0.5651 for a truth of 0.8052, no warning. An attempt whose progress starts at iteration
1 without a checkpoint load now begins a run after unsaved training that ended more than a
day before it (or after any that saved a checkpoint); an hour before, it is a restart from
scratch of the same run (a failure before the first save).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate

_STAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]")


def _with_smoke_test(logs: Path, start: datetime) -> None:
    """Job 987, same name, 2 nodes, 20 min at ``start``: Megatron's 'start from random'
    lines (megatron/training/checkpointing.py) and 30 of the campaign's iteration lines
    stamped anew, then Slurm's cancel line (slurmstepd, src/slurmd/slurmstepd/req.c)."""
    sacct = logs / "slurm" / "sacct.txt"
    head, *rows = sacct.read_text().splitlines()
    cols = head.split("|")
    r = dict(zip(cols, rows[0].split("|"), strict=True))
    end = start + timedelta(minutes=20)
    r |= {"JobID": "987", "JobIDRaw": "987", "State": "CANCELLED by 1000", "ExitCode": "0:15",
          "Submit": f"{start:%Y-%m-%dT%H:%M:%S}", "Start": f"{start:%Y-%m-%dT%H:%M:%S}",
          "End": f"{end:%Y-%m-%dT%H:%M:%S}", "Elapsed": "00:20:00", "NNodes": "2",
          "NodeList": "node[040-041]"}
    sacct.write_text("\n".join([head, "|".join(r[c] for c in cols), *rows]) + "\n")
    src = (logs / "jobs" / "slurm-1001.out").read_text().splitlines()
    out = ["WARNING: could not find the metadata file /ckpt/llama/latest_checkpointed_"
           "iteration.txt ", "    will not load any checkpoints and will start from random"]
    for i in range(1, 31):
        line = next(x for x in src if re.search(rf"iteration\s+{i}/", x))
        t = start + timedelta(minutes=4, seconds=24 * i)
        out.append(_STAMP.sub(f"[{t:%Y-%m-%d %H:%M:%S}]", line))
    out.append(f"slurmstepd: error: *** JOB 987 ON node040 CANCELLED AT {end:%Y-%m-%dT%H:%M:%S}"
               " ***")
    (logs / "jobs" / "slurm-987.out").write_text("\n".join(out) + "\n")


def _analyze(logs: Path, out: Path) -> dict[str, Any]:
    ingest(expand_inputs([str(logs)]), out)
    return analyze_db(out / "tormortem.duckdb")


def test_smoke_test_days_before_is_its_own_run(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    truth = simulate(presets.get("demo"), 11, logs, Settings(log_interval=1))
    _with_smoke_test(logs, datetime(2024, 4, 29, 10, 0, 5))
    got = {r["run"]: r for r in _analyze(logs, tmp_path / "a")["runs"]}
    assert set(got) == {"llama-pretrain", "llama-pretrain@2024-04-29T10:00"}
    assert abs(got["llama-pretrain"]["tor"] - truth["runs"][0]["tor"]) < 1e-3
    assert got["llama-pretrain@2024-04-29T10:00"]["t_obs_s"] == 1200


def test_restart_from_scratch_an_hour_later_is_the_same_run(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 11, logs, Settings(log_interval=1))
    _with_smoke_test(logs, datetime(2024, 4, 30, 22, 40, 5))
    runs = _analyze(logs, tmp_path / "a")["runs"]
    assert [r["run"] for r in runs] == ["llama-pretrain"]
    assert runs[0]["t_obs_s"] > 321_905
