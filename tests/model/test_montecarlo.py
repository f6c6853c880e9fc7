"""The closed form against the simulator's Monte Carlo mode (pipeline.simulate.montecarlo).

Compared quantity: ideal compute / mean wall time of a finite campaign (ratio of means, what
``model.expected_wall`` predicts; the MC's own ``mean`` is the mean of ratios, higher by
Var/mean^2). The grid spans (scale, per-GPU rate, tau, delta, repair) from Llama-3-like
(L (tau+delta) ~ 0.06, L R ~ 0.03) to much worse (L (tau+delta) up to 1.8, L R up to 0.8,
TOR down to 0.16). The closed form must agree within 0.5 TOR points everywhere; the first-order
form is accurate only in the benign corner (it overestimates by up to ~18 points here).
"""

from __future__ import annotations

import itertools
import math

import pytest

from pipeline.model import predict as model
from pipeline.simulate import montecarlo, presets
from tests.model.helpers import rates

TOL = 0.005  # 0.5 percentage points of TOR
TSTAR = 6.0

#: (gpus, rate per GPU-hour, tau, delta, mean restart hang+repair+startup)
FAST_GRID = [
    (16384, 2e-5, 600.0, 10.0, 300.0),     # Llama-3-like
    (1024, 2e-5, 600.0, 300.0, 300.0),     # slow saves, rare failures
    (16384, 2e-5, 600.0, 10.0, 1800.0),    # slow repair: L R = 0.16
    (1024, 1e-4, 3600.0, 10.0, 1800.0),
    (1024, 4e-4, 3600.0, 300.0, 1800.0),
    (16384, 1e-4, 3600.0, 10.0, 300.0),    # L (tau + delta) = 1.6
    (16384, 1e-4, 600.0, 300.0, 1800.0),   # L R = 0.8
    (16384, 4e-4, 600.0, 300.0, 300.0),    # TOR ~ 0.16
]


def _case(gpus: int, rate: float, tau: float, delta: float, rep: float, segments: int,
          replicas: int, seed: int) -> tuple[float, float, float, model.Process]:
    r = rates(gpus=gpus, rate_per_gpu_hour=rate, tau=tau, delta=delta, hang=0.2 * rep,
              repair=0.5 * rep, startup=0.3 * rep, tstar=TSTAR,
              iterations=int(segments * tau / TSTAR))
    p = model.process(r)
    work = (r.target_iterations or 0) * TSTAR
    mc = montecarlo.run(r, replicas, seed=seed)
    mc_tor = work / float(mc.t_obs_s.mean())
    se = float(mc.t_obs_s.std(ddof=1)) / math.sqrt(replicas) / float(mc.t_obs_s.mean()) * mc_tor
    cf = work / float(model.expected_wall(p, work))
    return cf, mc_tor, se, p


@pytest.mark.parametrize("point", FAST_GRID, ids=lambda p: "-".join(f"{x:g}" for x in p))
def test_closed_form_matches_monte_carlo(point: tuple[int, float, float, float, float]
                                         ) -> None:
    cf, mc, se, _ = _case(*point, segments=100, replicas=2500, seed=11)
    assert se < 0.002, "too few replicas for a 0.5-point check"
    assert abs(cf - mc) < TOL, f"closed form {cf:.4f} vs MC {mc:.4f} (se {se:.4f})"


def test_first_order_drifts_outside_the_benign_corner() -> None:
    drift = {}
    for g, rate, tau, delta, rep in FAST_GRID:
        p = model.process(rates(gpus=g, rate_per_gpu_hour=rate, tau=tau, delta=delta,
                                hang=0.2 * rep, repair=0.5 * rep, startup=0.3 * rep))
        L, R = p.total_rate, p.mean_restart_s()
        drift[(g, rate, tau, delta, rep)] = model.first_order_tor(L, tau, delta, R) - \
            model.tor_value(p)
    assert abs(drift[FAST_GRID[0]]) < 0.002  # Llama-3-like: first order is fine
    assert all(d > 0 for d in drift.values())  # it always overestimates TOR
    assert drift[FAST_GRID[5]] > 0.10  # L (tau+delta) = 1.6: off by > 10 points
    assert drift[FAST_GRID[6]] > 0.05  # L R = 0.8


def test_llama3_preset_matches_monte_carlo() -> None:
    """Nine categories, lognormal durations, jitter and fail-slow episodes."""
    r = presets.get("llama3-54d")
    work = (r.target_iterations or 0) * r.ideal_step_s
    mc = montecarlo.run(r, 200, seed=2)
    cf = work / float(model.expected_wall(model.process(r), work))
    assert abs(cf - work / float(mc.t_obs_s.mean())) < 0.002
    assert abs(model.predict(r).tor - cf) < 0.002  # steady state ~ the 54-day campaign


@pytest.mark.slow
def test_full_grid_matches_monte_carlo() -> None:
    """2 scales x 3 rates x 2 tau x 2 delta x 2 repairs (TOR > 0.15), 4000 replicas each."""
    worst = 0.0
    for g, rate, tau, delta, rep in itertools.product(
            (1024, 16384), (2e-5, 1e-4, 4e-4), (600.0, 3600.0), (10.0, 300.0),
            (300.0, 1800.0)):
        p = model.process(rates(gpus=g, rate_per_gpu_hour=rate, tau=tau, delta=delta,
                                hang=0.2 * rep, repair=0.5 * rep, startup=0.3 * rep))
        if model.tor_value(p) < 0.15:
            continue
        cf, mc, se, _ = _case(g, rate, tau, delta, rep, segments=100, replicas=4000, seed=5)
        worst = max(worst, abs(cf - mc))
        assert abs(cf - mc) < TOL, (g, rate, tau, delta, rep, cf, mc, se)
    assert worst < TOL


@pytest.mark.slow
def test_demo_preset_matches_monte_carlo() -> None:
    """The demo preset has 2.6% fail-slow loss: the closed form charges it per unit of wall
    time (TOR_MODEL.md), the MC per unit of training work, a difference of ~0.3 points."""
    r = presets.get("demo")
    work = (r.target_iterations or 0) * r.ideal_step_s
    mc = montecarlo.run(r, 8000, seed=4)
    cf = work / float(model.expected_wall(model.process(r), work))
    assert abs(cf - work / float(mc.t_obs_s.mean())) < TOL


def test_one_replica_has_no_standard_error() -> None:
    """One campaign has no spread: no standard error (None, JSON null), never NaN."""
    import json

    summ = montecarlo.run(presets.get("demo"), 1, seed=1).summary()
    assert summ["replicas"] == 1 and summ["tor_stderr"] is None
    json.dumps(summ, allow_nan=False)
    two = montecarlo.run(presets.get("demo"), 2, seed=1).summary()
    assert isinstance(two["tor_stderr"], float) and math.isfinite(two["tor_stderr"])
