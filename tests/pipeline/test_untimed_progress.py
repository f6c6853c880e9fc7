"""Progress lines without a stamp of their own.

Megatron-LM before mid-2023 (and Megatron-DeepSpeed, GPT-NeoX) print ``training_log``'s line
without a time: `` iteration      100/  250000 | consumed samples: ... | elapsed time per
iteration (ms): 87871.6 | ...`` (epfLLM/Megatron-LLM#11); the only stamps in the output are
``print_datetime``'s (``[before the start of training step] datetime: 2024-05-01 12:01:00``,
megatron/training.py). Every progress line used to inherit that one stamp: days of training at
one instant, a negative 'slow' and no TOR. Their times are now derived from the printed time
per iteration (and the save-checkpoint timer, which Megatron keeps out of its interval timer);
with no stamp at all before them, they are left out, said so, and TOR is not made up.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate

T0 = datetime(2024, 5, 1, 12, 0, 0)
_STAMP = re.compile(r"^ \[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] iteration")


def _line(it: int, ms: float) -> str:
    return (f" iteration {it:8d}/     100 | consumed samples: {it * 512:12d} | elapsed time "
            f"per iteration (ms): {ms:.1f} | learning rate: 1.000E-04 | global batch size:   "
            "512 | lm loss: 2.500000E+00 | loss scale: 1.0 | grad norm: 1.000 | number of "
            "skipped iterations:   0 | number of nan iterations:   0 |")


def _analyze(logs: Path, out: Path) -> dict[str, Any]:
    r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return dict(json.loads((out / "analysis.json").read_text()))


def _job(tmp: Path, *, anchor: bool) -> Path:
    """Job 7: 60 s start-up, iterations 1-30 logged every 10 at 1 s each, a save at 20 whose
    timer says 5 s, the job ends 2 s after iteration 30."""
    logs = tmp / "logs"
    logs.mkdir()
    start = T0 + timedelta(seconds=60)
    lines = [f"[before the start of training step] datetime: {start:%Y-%m-%d %H:%M:%S} "] \
        if anchor else []
    lines += [_line(10, 1000.0), _line(20, 1000.0),
              "saving checkpoint at iteration      20 to /ckpt",
              "  successfully saved checkpoint at iteration      20 to /ckpt",
              "(min, max) time across ranks (ms):",
              "    save-checkpoint ................................: (4990.12, 5000.00)",
              _line(30, 1000.0)]
    (logs / "slurm-7.out").write_text("\n".join(lines) + "\n")
    end = start + timedelta(seconds=37)
    (logs / "sacct.txt").write_text(
        "JobID|JobName|State|ExitCode|Submit|Start|End|NodeList|AllocNodes\n"
        f"7|train|COMPLETED|0:0|{T0:%Y-%m-%dT%H:%M:%S}|{T0:%Y-%m-%dT%H:%M:%S}|"
        f"{end:%Y-%m-%dT%H:%M:%S}|node01|1\n")
    return logs


def test_times_are_derived_from_the_printed_step_time(tmp_path: Path) -> None:
    run = _analyze(_job(tmp_path, anchor=True), tmp_path / "out")["runs"][0]
    with duckdb.connect(str(tmp_path / "out" / "tormortem.duckdb"), read_only=True) as con:
        got = con.execute("SELECT kind, iteration, epoch(ts) - epoch(TIMESTAMPTZ "
                          "'2024-05-01 12:01:00+00'), derived FROM attempt_events "
                          "ORDER BY line_no").fetchall()
    assert got == [("iteration", 10, 10.0, True), ("iteration", 20, 20.0, True),
                   ("ckpt_save_start", 20, 20.0, True), ("ckpt_save_end", 20, 20.0, True),
                   ("ckpt_save_time", None, 25.0, True), ("iteration", 30, 35.0, True)]
    c = run["components"]
    assert run["t_opt_s"] == pytest.approx(30.0) and c["ckpt_save"] == pytest.approx(5.0)
    assert c["startup"] == pytest.approx(60.0) and c["tail"] == pytest.approx(2.0)
    assert run["tor"] == pytest.approx(30.0 / 97.0)
    assert not [w for w in json.loads((tmp_path / "out" / "analysis.json").read_text())
                ["warnings"] if w["code"] == "untimed_progress"]


def test_no_stamp_at_all_leaves_tor_undefined_and_says_why(tmp_path: Path) -> None:
    got = _analyze(_job(tmp_path, anchor=False), tmp_path / "out")
    run = got["runs"][0]
    assert run["tor"] is None and "carry no time" in run["tor_undefined"]
    w = [w for w in got["warnings"] if w["code"] == "untimed_progress"]
    assert len(w) == 1 and w[0]["lines"] == 3 and w[0]["files"][0].endswith("slurm-7.out")


@pytest.mark.parametrize("seed", [7, 11])
def test_unstamped_megatron_campaign_matches_truth(tmp_path: Path, seed: int) -> None:
    logs = tmp_path / "logs"
    truth = simulate(presets.get("demo"), seed, logs, Settings(log_interval=1))["runs"][0]
    stripped = 0
    for f in (logs / "jobs").glob("slurm-*.out"):
        lines = f.read_text().splitlines(keepends=True)
        stripped += sum(1 for ln in lines if _STAMP.match(ln))
        f.write_text("".join(_STAMP.sub(" iteration", ln) for ln in lines))
    assert stripped > 10_000
    run = _analyze(logs, tmp_path / "out")["runs"][0]
    t_obs = truth["t_obs_s"]
    assert abs(run["t_obs_s"] - t_obs) <= 1.0
    assert abs(sum(run["components"].values()) - run["t_obs_s"]) <= 1e-6 * t_obs
    for k, v in truth["components"].items():
        assert abs(run["components"][k] - v) <= 1e-3 * t_obs, (k, run["components"][k], v)
    assert abs(run["tor"] - truth["tor"]) <= 1e-3


def test_many_iterations_at_one_inherited_stamp_are_no_timeline(tmp_path: Path) -> None:
    """Composer's console headers print no time and no step time (mosaicml/composer
    console_logger.py); after its one logger line they all inherit that line's stamp."""
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = ["2024-05-01 12:01:00,402: rank0[11406][MainThread]: INFO: composer.trainer."
             "trainer: Run name: interactive-il0GeA"]
    for b in range(1, 31):
        lines += [f"[batch={b}/30]:", f"\t Train time/batch: {b - 1}"]
    (logs / "slurm-8.out").write_text("\n".join(lines) + "\n")
    (logs / "sacct.txt").write_text(
        "JobID|JobName|State|ExitCode|Submit|Start|End|NodeList|AllocNodes\n"
        "8|train|COMPLETED|0:0|2024-05-01T12:00:00|2024-05-01T12:00:00|2024-05-01T12:30:00|"
        "node01|1\n")
    got = _analyze(logs, tmp_path / "out")
    run = got["runs"][0]
    assert run["tor"] is None and "carry no time of their own" in run["tor_undefined"]
    w = [w for w in got["warnings"] if w["code"] == "untimed_progress"]
    assert len(w) == 1 and (w[0]["lines"], w[0]["collapsed"]) == (0, 30)
