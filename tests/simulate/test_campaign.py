"""The event simulation: exact decomposition, determinism, Llama 3 counts."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest

from pipeline.model.rates import from_json
from pipeline.simulate import presets, truth
from pipeline.simulate.campaign import Campaign
from pipeline.simulate.presets import LLAMA3_TABLE5


def _truth(rates: Any, seed: int) -> dict[str, Any]:
    return truth.build(Campaign(rates, seed).run(), {})["runs"][0]


def _harsh() -> Any:
    """Small, failure-heavy campaign: faults during startup and saves happen often."""
    d = copy.deepcopy(presets.demo())
    d["target_iterations"] = 1500
    for c in d["categories"]:
        for k in ("rate_per_gpu_hour", "rate_per_node_hour"):
            if k in c:
                c[k] *= 8.0
    d["checkpoint"]["delta"] = {"mean_s": 400.0, "dist": "exponential"}
    return from_json(d)


@pytest.mark.parametrize("which", ["demo", "harsh"])
def test_components_sum_to_t_obs(which: str) -> None:
    r = presets.get("demo") if which == "demo" else _harsh()
    startup_faults = 0
    for seed in range(60 if which == "demo" else 40):
        run = _truth(r, seed)
        t_obs = run["t_obs_s"]
        assert abs(truth.component_sum(run) - t_obs) < 1e-6 * t_obs
        comp = run["components"]
        assert all(comp[k] >= 0 for k in truth.COMPONENTS if k != "slow")
        assert comp["t_opt"] == run["iterations_net"] * run["ideal_step_s"]
        # the per-interruption attribution closes the same sum
        attributed = sum(i["cost_s"] for i in run["interruptions"])
        rest = (run["first_startup_s"] + comp["tail"] + comp["ckpt_save"] + comp["slow"]
                + comp["t_opt"])
        assert abs(attributed + rest - t_obs) < 1e-6 * t_obs
        split = run["slow_split"]
        assert math.isclose(split["fail_slow"] + split["jitter"], comp["slow"],
                            rel_tol=1e-9, abs_tol=1e-6)
        startup_faults += sum(i["fault_in_startup"] for i in run["interruptions"])
        assert len(run["attempts"]) == len(run["interruptions"]) + 1
    if which == "harsh":
        assert startup_faults > 0


def test_same_seed_same_truth_different_seed_differs() -> None:
    r = presets.get("demo")
    assert _truth(r, 3) == _truth(r, 3)
    assert _truth(r, 3)["t_obs_s"] != _truth(r, 4)["t_obs_s"]


def test_llama3_counts_follow_table5() -> None:
    r = presets.get("llama3-54d")
    seeds = (11, 12, 13)
    counts: dict[str, int] = dict.fromkeys(LLAMA3_TABLE5, 0)
    gpu_h = node_h = days = 0.0
    for seed in seeds:
        run = _truth(r, seed)
        for i in run["interruptions"]:
            counts[i["category"]] += 1
        gpu_h += run["exposure"]["gpu_hours"]
        node_h += run["exposure"]["node_hours"]
        days += run["t_obs_s"] / 86400.0
    total = 0
    for c in r.fail_stop():
        expected = c.rate * (gpu_h if c.scales_with == "gpu" else node_h)
        table = LLAMA3_TABLE5[c.category][0] * len(seeds)
        # realised counts vs rate x realised exposure: Poisson noise (4 sigma)
        assert abs(counts[c.category] - expected) <= 4 * math.sqrt(expected) + 2, c.category
        # and the expected counts track Table 5 (exposure close to 54 days at risk)
        assert abs(expected - table) <= 0.05 * table + 1, c.category
        total += counts[c.category]
    assert abs(total - 419 * len(seeds)) <= 4 * math.sqrt(419 * len(seeds))
    assert 50 < days / len(seeds) < 58


def test_out_is_never_a_folder_of_other_files(tmp_path: Path) -> None:
    """A campaign written into a folder of real logs was read with them (job ids collide):
    refused unless --force; a folder that holds a campaign is refused the same way."""
    from pipeline.simulate.run import OUTPUTS, SimulateError, prepare_out

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "sacct.txt").write_text("JobID|State\n")
    with pytest.raises(SimulateError, match=r"holds other files \(sacct\.txt\)"):
        prepare_out(logs, force=False)
    prepare_out(logs, force=True)  # asked for: written beside them, theirs kept
    assert (logs / "sacct.txt").exists()
    camp = tmp_path / "camp"
    (camp / "jobs").mkdir(parents=True)
    assert "jobs" in OUTPUTS
    with pytest.raises(SimulateError, match="already holds a campaign"):
        prepare_out(camp, force=False)
    prepare_out(tmp_path / "new" / "dir", force=False)
