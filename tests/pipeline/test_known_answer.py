"""Known answers: simulated campaigns analysed from their logs must match their truth.json.

Per seed: T_obs to the second, every decomposition component within 0.1% of T_obs, every
interruption found with the true root-cause category (and, where the truth names one, the
faulty node), and the components summing to T_obs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate

SEEDS = [1, 3, 7, 11, 19, 23, 29, 31]
NODE_NAMED = {"gpu_hardware", "gpu_memory", "gpu_driver", "nvlink", "network", "node_failure",
              "storage"}


def _analyze(logs: Path, out: Path) -> dict[str, Any]:
    ingest(expand_inputs([str(logs)]), out)
    return analyze_db(out / "tormortem.duckdb")


@pytest.mark.parametrize("seed", SEEDS)
def test_demo_matches_truth(tmp_path: Path, seed: int) -> None:
    truth = simulate(presets.get("demo"), seed, tmp_path / "logs", Settings(log_interval=1))
    got = _analyze(tmp_path / "logs", tmp_path / "out")
    assert len(got["runs"]) == len(truth["runs"]) == 1
    a, t = got["runs"][0], truth["runs"][0]
    t_obs = t["t_obs_s"]
    assert abs(a["t_obs_s"] - t_obs) <= 1.0
    assert abs(sum(a["components"].values()) - a["t_obs_s"]) <= 1e-6 * a["t_obs_s"]
    for k, v in t["components"].items():
        assert abs(a["components"][k] - v) <= 1e-3 * t_obs, (k, a["components"][k], v)
    assert abs(a["tor"] - t["tor"]) <= 1e-3
    assert len(a["interruptions"]) == len(t["interruptions"])
    for ia, it in zip(a["interruptions"], t["interruptions"], strict=True):
        assert ia["category"] == it["category"], (ia["attempt"], ia["cause"], it)
        # the logs name the faulty node for hardware causes; a preemption or a hung collective
        # is only seen in the job's output, printed on the batch host
        if it.get("node") and ia["category"] in NODE_NAMED:
            assert ia["node"] == it["node"], (ia["attempt"], ia["node"], it["node"])
        assert abs(ia["cost_s"] - it["cost_s"]) <= 1e-3 * t_obs


@pytest.mark.parametrize("seed", [7, pytest.param(11, marks=pytest.mark.slow)])  # budget
def test_kubernetes_flavour_matches_truth(tmp_path: Path, seed: int) -> None:
    """Kubernetes keeps two container runs per pod, so attempts come from the pod log (lower
    fidelity: they run from their first to their last line). What the logs do show must match:
    every interruption found, its lost work and T_opt exact to 0.1% of T_obs, its root cause
    right wherever the logs carry evidence (a cancellation by the user leaves none in a
    Kubernetes campaign: unknown)."""
    from pipeline.simulate.run import simulate as sim

    truth = sim(presets.get("demo"), seed, tmp_path / "logs", Settings(log_interval=1),
                flavour="k8s")
    a, t = _analyze(tmp_path / "logs", tmp_path / "out")["runs"][0], truth["runs"][0]
    t_obs = t["t_obs_s"]
    assert len(a["interruptions"]) == len(t["interruptions"])
    # startup too: an attempt starts when its container did (the kubelet's Started event),
    # not at its first line (that made startup 18 s of the true 6,769 s, the rest repair).
    # Hang and repair stay apart by the last line: nothing says when a container ended.
    for k in ("t_opt", "lost", "ckpt_save", "startup"):
        assert abs(a["components"][k] - t["components"][k]) <= 1e-3 * t_obs, k
    assert abs(a["tor"] - t["tor"]) <= 1e-3
    for ia, it in zip(a["interruptions"], t["interruptions"], strict=True):
        if it["category"] == "scheduler":
            assert ia["category"] in ("scheduler", "unknown")
        else:
            assert ia["category"] == it["category"], (ia["attempt"], ia["cause"], it)
        assert abs(ia["lost_s"] - it["lost_s"]) <= 1e-3 * t_obs
