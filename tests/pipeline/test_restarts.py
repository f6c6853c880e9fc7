"""In-job restarts (pipeline/analyze/restarts.py): torchrun's agent restarts its workers inside
one Slurm job, which resume from their last checkpoint. Read as one attempt, a run of 100
steps of 10 s with one restart came out at TOR 0.476, its rolled-back work and the restart
counted as slowness; the attempt is now cut at the restart and the decomposition is exact.

Lines as the programs print them: Megatron-LM's ``training_log`` iteration line and its
checkpointing.py save/load lines, PyTorch's c10d watchdog (ProcessGroupNCCL.cpp, c10 logging
prints the date as month * 100 + day: ``[E501 ...]``), the elastic agent's
``[default] Worker group FAILED. 3/3 attempts left; will restart worker group``
(torch/distributed/elastic/agent/server/api.py, glog-style header), ``sacct -P``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pipeline.cli import main

T0 = datetime(2024, 5, 1, 12, 0, 0)


def _iteration(t: datetime, it: int) -> str:
    return (f" [{t:%Y-%m-%d %H:%M:%S}] iteration {it:8d}/     100 | consumed samples: "
            f"{it * 512:12d} | elapsed time per iteration (ms): 10000.0 | learning rate: "
            "1.000E-04 | global batch size:   512 | lm loss: 2.500000E+00 | loss scale: 1.0 | "
            "grad norm: 1.000 | number of skipped iterations:   0 | number of nan iterations:"
            "   0 |")


def _campaign(tmp: Path, *, agent: bool, ranks: int = 1, fail_at: int = 50,
              reload: bool = True) -> Path:
    """Job 100: 60 s start-up, steps of 10 s, a save at 40, a hang at ``fail_at`` (the
    watchdog 30 s later on rank 0, the agent 5 s after that), 60 s to restart, then the
    rest to 100 from the load at 40 (or, ``reload`` False, no restart: a load of the best
    checkpoint at the very end)."""
    logs = tmp / "logs"
    logs.mkdir()
    files: list[list[str]] = [[] for _ in range(ranks)]
    main_out: list[str] = []
    t = T0 + timedelta(seconds=60)
    for it in range(1, fail_at + 1):
        t += timedelta(seconds=10)
        for f in files:
            f.append(_iteration(t, it))
            if it == 40:
                f += ["saving checkpoint at iteration      40 to /ckpt",
                      "  successfully saved checkpoint at iteration      40 to /ckpt"]
    if reload:
        w = t + timedelta(seconds=30)
        files[0].append(
            f"[rank0]:[E501 {w:%H:%M:%S}.000000000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog "
            "caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, "
            "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before "
            "timing out.")
        if agent:  # the agent writes to the job's output, after the workers' lines there
            (main_out if ranks > 1 else files[0]).append(
                f"I0501 {w + timedelta(seconds=5):%H:%M:%S}.000000 870572 torch/distributed/"
                "elastic/agent/server/api.py:889] [default] Worker group FAILED. 3/3 attempts "
                "left; will restart worker group")
        t = w + timedelta(seconds=5 + 60)
        for f in files:
            f += [" loading checkpoint from /ckpt at iteration 40",
                  " successfully loaded checkpoint from /ckpt [ t 0/1, p 0/1 ] at iteration 40"]
        for it in range(41, 101):
            t += timedelta(seconds=10)
            for f in files:
                f.append(_iteration(t, it))
    else:
        files[0].append(" loading checkpoint from /ckpt at iteration 40")
    end = t + timedelta(seconds=5)
    out = logs / "slurm-100.out"
    if ranks == 1:
        out.write_text("\n".join(files[0]) + "\n")
    else:
        out.write_text("\n".join(main_out) + "\n")
        for r, f in enumerate(files):
            d = logs / "torchrun" / "attempt_0" / str(r)
            d.mkdir(parents=True)
            (d / "stdout.log").write_text("\n".join(f) + "\n")
    (logs / "sacct.txt").write_text(
        "JobID|JobName|State|ExitCode|Submit|Start|End|NodeList|AllocNodes|WorkDir\n"
        f"100|train|COMPLETED|0:0|{T0:%Y-%m-%dT%H:%M:%S}|{T0:%Y-%m-%dT%H:%M:%S}|"
        f"{end:%Y-%m-%dT%H:%M:%S}|node01|1|{logs}\n")
    return logs


def _analyze(logs: Path, out: Path) -> dict[str, Any]:
    r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return dict(json.loads((out / "analysis.json").read_text()))


def test_the_agents_restart_cuts_the_attempt(tmp_path: Path) -> None:
    run = _analyze(_campaign(tmp_path, agent=True), tmp_path / "out")["runs"][0]
    assert [(a["attempt"], a["state"]) for a in run["attempts"]] == [
        ("100", "RESTARTED"), ("100.r1", "COMPLETED")]
    c = run["components"]
    assert run["t_obs_s"] == 1260.0 and run["t_opt_s"] == 1000.0
    assert run["tor"] == pytest.approx(1000.0 / 1260.0)
    assert abs(sum(c.values()) - run["t_obs_s"]) < 1e-6
    # steps 41-50 rolled back; the watchdog's 30 s and the agent's 5 s are the hang; the
    # restart's 60 s and the first start's 60 s are start-up; no slowness is left over
    assert c["lost"] == pytest.approx(100.0) and c["hang"] == pytest.approx(35.0)
    assert c["startup"] == pytest.approx(120.0) and abs(c["slow"]) < 1e-6
    assert [i["category"] for i in run["interruptions"]] == ["nccl_timeout"]


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_reload_after_progress_cuts_the_attempt(tmp_path: Path, ranks: int) -> None:
    """No agent line (a launcher that does not log one): the reload after progress says it;
    with two rank files that both reload, one cut."""
    run = _analyze(_campaign(tmp_path, agent=False, ranks=ranks), tmp_path / "out")["runs"][0]
    assert [a["attempt"] for a in run["attempts"]] == ["100", "100.r1"]
    c = run["components"]
    assert run["tor"] == pytest.approx(1000.0 / 1260.0)
    assert c["lost"] == pytest.approx(100.0) and abs(c["slow"]) < 1e-6
    assert c["hang"] + c["startup"] == pytest.approx(35.0 + 120.0)


def test_a_load_at_the_end_is_no_restart(tmp_path: Path) -> None:
    """A load with no progress after it (HF Trainer's load_best_model_at_end) cuts nothing."""
    run = _analyze(_campaign(tmp_path, agent=False, reload=False), tmp_path / "out")["runs"][0]
    assert [a["attempt"] for a in run["attempts"]] == ["100"]
