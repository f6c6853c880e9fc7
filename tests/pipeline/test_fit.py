"""Fitting: exact Poisson intervals, censored Weibull, rates from an analysis, coverage."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.model.fit import fit_dir, poisson_ci, weibull_censored
from pipeline.model.rates import from_json
from pipeline.simulate import presets
from pipeline.simulate.run import simulate

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("n", "lo", "hi"),
    # Garwood (1936) exact limits for a Poisson mean, 95%: the standard table values
    [(0, 0.0, 3.689), (1, 0.0253, 5.572), (5, 1.6235, 11.668), (20, 12.217, 30.889)],
)
def test_poisson_ci_matches_garwood_table(n: int, lo: float, hi: float) -> None:
    a, b = poisson_ci(n, 10.0)
    assert a * 10 == pytest.approx(lo, abs=2e-3)
    assert b * 10 == pytest.approx(hi, abs=2e-3)


def test_weibull_with_censoring_recovers_shape() -> None:
    rng = np.random.default_rng(5)
    k, scale = 1.6, 10.0
    t = scale * rng.weibull(k, 400)
    cens = rng.uniform(0, 25, 400)
    obs = np.minimum(t, cens)
    w = weibull_censored(list(obs), list(t <= cens))
    assert w["censored"] > 20
    lo, hi = w["shape_ci95"]
    assert lo < k < hi
    assert w["shape"] == pytest.approx(k, rel=0.15)
    assert w["scale_h"] == pytest.approx(scale, rel=0.15)
    # ignoring censoring would bias the scale down: the fit must not
    naive = weibull_censored(list(obs), [True] * 400)
    assert naive["scale_h"] < w["scale_h"]


def test_small_samples_give_wide_intervals_not_errors() -> None:
    w = weibull_censored([3.0], [False])
    assert w["shape"] is None and w["exponential_rate_per_h"] == 0.0
    lo, hi = poisson_ci(0, 1.0)
    assert lo == 0.0 and math.isfinite(hi)


def test_fit_from_demo_analysis(tmp_path: Path) -> None:
    ingest(expand_inputs([str(ROOT / "sample_logs" / "demo")]), tmp_path)
    analysis = analyze_db(tmp_path / "tormortem.duckdb")
    docs = fit_dir(tmp_path, analysis)
    run = analysis["runs"][0]
    doc = docs[run["run"]]
    rates = from_json(doc)  # validates against the schema
    assert rates.scale.gpus == 128 and rates.scale.gpus_per_node == 8
    stop = {c.category: c for c in rates.fail_stop()}
    assert {k: v.count for k, v in stop.items()} == {
        k: v["count"] for k, v in run["by_category"].items()}
    gpu_h = doc["fit"]["exposure_gpu_hours"]
    for c in stop.values():
        expo = gpu_h if c.scales_with == "gpu" else gpu_h / 8
        assert c.rate == pytest.approx((c.count or 0) / expo)
        assert c.rate_ci95 is not None and c.rate_ci95[0] <= c.rate <= c.rate_ci95[1]
    # checkpoint every 75 iterations of 24 s in the demo preset
    assert rates.checkpoint.tau_s == pytest.approx(75 * 24.0, rel=0.01)
    assert rates.checkpoint.delta.mean_s == pytest.approx(45.0, rel=0.1)


def test_no_time_at_risk_gives_no_rates_not_an_infinite_interval(tmp_path: Path) -> None:
    """Interruptions but attempts at risk for 0 s (each one's lines on one stamp, or hung
    from its start; a probe's fit wrote ``rate_ci95[1]: inf`` and failed its own schema):
    the run gets no rates, and the reason instead."""
    ingest(expand_inputs([str(ROOT / "sample_logs" / "demo")]), tmp_path)
    analysis = analyze_db(tmp_path / "tormortem.duckdb")
    run = analysis["runs"][0]
    for a in run["attempts"]:
        a["hang_s"], a["tail_s"] = _span(a), 0.0
    assert fit_dir(tmp_path, analysis) == {}
    assert "at risk for 0 s" in run["rates_undefined"]
    run["attempts"][0]["hang_s"] = 0.0  # one attempt at risk: rates again, finite
    doc = fit_dir(tmp_path, analysis)[run["run"]]
    assert all(math.isfinite(c["rate_ci95"][1]) for c in doc["categories"])


def _span(a: dict[str, str]) -> float:
    from datetime import datetime

    return (datetime.fromisoformat(a["end"]) - datetime.fromisoformat(a["start"])
            ).total_seconds()


@pytest.mark.slow
def test_interval_coverage_over_200_seeds() -> None:
    """The exact 95% intervals cover the true per-category rates 93-97% of the time at
    Llama-3-like counts (7-180 events per category). Fitted from each campaign's own record
    of interruptions and at-risk exposure (the log path is checked by the known-answer tests).
    """
    rates = presets.get("llama3-54d")
    gpn = rates.scale.gpus_per_node
    true: dict[str, float] = defaultdict(float)
    for c in rates.fail_stop():
        true[c.category] += c.rate if c.scales_with == "gpu" else c.rate / gpn
    hits = total = 0
    for seed in range(200):
        run = simulate(rates, seed, None)["runs"][0]
        gpu_h = run["exposure"]["gpu_hours"]
        counts: dict[str, int] = defaultdict(int)
        for i in run["interruptions"]:
            counts[i["category"]] += 1
        for cat, r in true.items():
            lo, hi = poisson_ci(counts[cat], gpu_h)
            hits += lo <= r <= hi
            total += 1
    assert 0.93 <= hits / total <= 0.97, hits / total


def test_weibull_fit_of_identical_failure_times_warns_nothing_and_invents_no_shape() -> None:
    """Two attempts of a real Slurm campaign failed after the same time: the fit's exp
    overflowed (a RuntimeWarning; at 1e-3 h an OverflowError). With every failure at one time
    and nothing surviving longer the likelihood has no maximum: no shape, the rate stays."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for t, failed in (([1e-3, 1e-3], [True, True]), ([5.0, 5.0, 5.0, 1.0],
                                                          [True, True, True, False])):
            w = weibull_censored(t, failed)
            assert w["shape"] is None and w["scale_h"] is None and w["shape_ci95"] is None
            assert w["exponential_rate_per_h"] == sum(failed) / sum(t)
        # a censored attempt that lasted longer bounds the shape: it is estimated
        w = weibull_censored([3600.0, 3600.0, 7200.0, 10.0], [True, True, False, False])
        assert w["shape"] is not None and 1.0 < w["shape"] < 5.0
        # nearly equal failure times: a (large) estimate, no warning
        w = weibull_censored([100.0, 100.0001, 50.0], [True, True, False])
        assert w["shape"] is not None and w["shape"] <= math.exp(20.0)
