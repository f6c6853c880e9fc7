"""The Llama-3-like campaign (16,384 GPUs, 54 days, ~420 interruptions) end to end: simulate
with logs, analyze, fit, predict -- against the simulator's truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main


@pytest.mark.slow
def test_llama3_campaign_end_to_end(tmp_path: Path) -> None:
    logs, out = tmp_path / "logs", tmp_path / "out"
    r = CliRunner().invoke(main, ["simulate", "--preset", "llama3-54d", "--seed", "3",
                                  "--out", str(logs)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(out)])
    assert r.exit_code == 0, r.output
    got = json.loads((out / "analysis.json").read_text())["runs"][0]
    truth = json.loads((logs / "truth.json").read_text())["runs"][0]
    t_obs = truth["t_obs_s"]
    assert abs(got["t_obs_s"] - t_obs) <= 1.0
    assert len(got["interruptions"]) == len(truth["interruptions"])
    wrong = [(a["attempt"], a["category"], t["category"]) for a, t in
             zip(got["interruptions"], truth["interruptions"], strict=True)
             if a["category"] != t["category"]]
    assert wrong == []
    # progress is logged every 10 iterations here: iterations finished after the last logged
    # one are invisible; their expected time is estimated as lost work (pipeline/analyze/
    # unseen.py), which brings lost and hang from 0.25% of T_obs off to within 0.1%
    assert got["log_interval_iterations"] == 10
    assert got["estimated"]["lost_s"] > 0
    for k, v in truth["components"].items():
        assert abs(got["components"][k] - v) <= 0.001 * t_obs, k
    # fitted rates: every true per-category rate inside its exact 95% interval is likely but
    # not certain; require the intervals to cover at least all but one category
    fitted = json.loads((out / "rates.json").read_text())
    params = json.loads((logs / "params.json").read_text())
    gpn = params["scale"]["gpus_per_node"]

    def per_gpu(c: dict[str, float], v: float) -> float:
        return v if "rate_per_gpu_hour" in c else v / gpn

    true: dict[str, float] = {}
    for c in params["categories"]:
        if c["mode"] == "fail-stop":
            rate = c.get("rate_per_gpu_hour", c.get("rate_per_node_hour", 0.0))
            true[c["category"]] = true.get(c["category"], 0.0) + per_gpu(c, rate)
    misses = [c["category"] for c in fitted["categories"] if c["mode"] == "fail-stop"
              and not per_gpu(c, c["rate_ci95"][0]) <= true[c["category"]]
              <= per_gpu(c, c["rate_ci95"][1])]
    assert len(misses) <= 1, misses
    model = got["model"]["predicted"]
    assert model["low"] <= got["tor"] <= model["high"]
