"""The vectorised Monte Carlo agrees with the event simulation."""

from __future__ import annotations

import math

import numpy as np

from pipeline.simulate import montecarlo, presets, truth
from pipeline.simulate.campaign import Campaign


def test_mc_mean_matches_event_simulation() -> None:
    r = presets.get("demo")
    mc = montecarlo.run(r, 4000, seed=5)
    ev = np.array([truth.build(Campaign(r, s).run(), {})["runs"][0]["tor"]
                   for s in range(100, 140)])
    se = math.sqrt(mc.stderr ** 2 + ev.var(ddof=1) / len(ev))
    assert abs(mc.mean - ev.mean()) < 4 * se
    assert 0.6 < mc.mean < 0.95


def test_mc_is_deterministic_and_reports() -> None:
    r = presets.get("demo")
    a, b = montecarlo.run(r, 200, 3), montecarlo.run(r, 200, 3)
    assert np.array_equal(a.tor, b.tor)
    s = a.summary()
    assert s["replicas"] == 200 and s["tor_p05"] <= s["tor_median"] <= s["tor_p95"]
    assert 0 < s["tor_stderr"] < 0.01


def test_no_failures_gives_checkpoint_only_overhead() -> None:
    from dataclasses import replace

    r = presets.get("demo")
    r = replace(r, categories=(), step_jitter_sigma=0.0)
    res = montecarlo.run(r, 10, 1)
    run = truth.build(Campaign(r, 1).run(), {})["runs"][0]
    assert res.tor.std() < 1e-3  # only the save and startup times vary
    assert abs(res.mean - run["tor"]) < 2e-3
