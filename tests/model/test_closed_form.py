"""The closed form: identities, limits, the stage split and the key factors."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from pipeline.model import predict as model
from pipeline.model.core import risk_time
from pipeline.model.rates import Dist
from tests.model.helpers import fixed, rates


def test_no_failures_only_checkpoint_overhead() -> None:
    r = replace(rates(tau=600, delta=30), categories=())
    p = model.process(r)
    assert model.tor_value(p) == pytest.approx(600 / 630)
    work = 10 * 600.0
    # first startup + 10 segments (the last without a save) + tail
    assert float(model.expected_wall(p, work)) == pytest.approx(120 + work + 9 * 30 + 30)
    pr = model.predict(r)
    assert math.isinf(pr.mtbf_s) and pr.tor_first_order == pytest.approx(600 / 630)


def test_equals_daly_when_the_whole_restart_is_at_risk() -> None:
    """With no hang and no repair gap, the restart is the startup, run (at risk): the exact
    process form is then Daly's exp(L R)(exp(L T) - 1)/L to rounding."""
    r = rates(gpus=16384, rate_per_gpu_hour=1e-4, tau=1800, delta=60, hang=0, repair=0,
              startup=900)
    p = model.process(r)
    L = p.total_rate
    assert model.tor_value(p) == pytest.approx(model.daly_tor(L, 1800, 60, 900), rel=1e-12)


def test_hang_and_repair_are_not_at_risk() -> None:
    r = rates(gpus=16384, rate_per_gpu_hour=1e-4, tau=1800, delta=60, hang=300, repair=600,
              startup=900)
    p = model.process(r)
    L = p.total_rate
    seg = (1 + L * 900) * math.exp(L * 900) * math.expm1(L * 1860) / L
    assert model.tor_value(p) == pytest.approx(1800 / seg, rel=1e-12)
    assert model.tor_value(p) > model.daly_tor(L, 1800, 60, p.mean_restart_s())


def test_first_order_is_the_small_rate_limit() -> None:
    p = model.process(rates(gpus=8, rate_per_gpu_hour=1e-5, tau=600, delta=10))
    L, R = p.total_rate, p.mean_restart_s()
    assert model.first_order_tor(L, 600, 10, R) == pytest.approx(model.tor_value(p), abs=1e-6)


def test_stage_shares_are_an_exact_split() -> None:
    extra: list[dict[str, Any]] = [
        {"category": "network", "mode": "fail-stop", "scales_with": "node",
         "rate_per_node_hour": 5e-4, "hang": fixed(90), "repair": {"mean_s": 600.0,
         "dist": "lognormal", "sigma": 0.5}, "startup": {"mean_s": 200.0,
         "dist": "exponential"}},
        {"category": "network", "mode": "fail-slow", "scales_with": "node",
         "rate_per_node_hour": 1e-4, "rho": 0.8, "slow_duration": fixed(3600)}]
    pr = model.predict(rates(gpus=4096, sigma=0.05, extra=extra))
    assert sum(pr.stage_shares.values()) == pytest.approx(1.0, abs=1e-12)
    assert pr.stage_shares["useful"] == pytest.approx(pr.tor)
    failure = sum(pr.stage_shares[k] for k in ("lost", "hang", "repair", "startup", "slow"))
    assert sum(f.wall_share for f in pr.categories) == pytest.approx(failure, abs=1e-12)
    assert {(f.name, f.mode) for f in pr.categories} == {
        ("gpu_hardware", "fail-stop"), ("network", "fail-stop"), ("network", "fail-slow")}


def test_fail_slow_multiplies_per_unit_time_and_caps_at_zero() -> None:
    base = rates()
    slow = {"category": "gpu_hardware", "mode": "fail-slow", "scales_with": "gpu",
            "rate_per_gpu_hour": 1e-4, "rho": 0.5, "slow_duration": fixed(1800)}
    m = 1024 * 1e-4 / 3600 * 1800 * 0.5
    assert model.predict(rates(extra=[slow])).tor == pytest.approx(
        model.predict(base).tor * (1 - m))
    big = dict(slow, rate_per_gpu_hour=1.0)
    assert model.predict(rates(extra=[big])).tor == 0.0


def test_per_gpu_and_per_node_scaling() -> None:
    node = {"category": "network", "mode": "fail-stop", "scales_with": "node",
            "rate_per_node_hour": 1e-3, "hang": fixed(60), "repair": fixed(60)}
    r = rates(gpus=1024, rate_per_gpu_hour=1e-4, extra=[node])
    a, b = model.predict(r), model.predict(r, gpus=4096)
    assert a.failures_per_day == pytest.approx(24 * (1024 * 1e-4 + 128 * 1e-3))
    assert b.failures_per_day == pytest.approx(4 * a.failures_per_day)
    assert b.tor < a.tor and b.gpus == 4096 and b.nodes == 512


def test_key_factors_removed_and_halved() -> None:
    r = rates(gpus=16384, rate_per_gpu_hour=1e-4, tau=600, delta=30)
    pr = model.predict(r)
    cat = pr.categories[0]
    assert cat.tor_without == pytest.approx(600 / 630)  # no failures at all
    assert pr.tor < cat.tor_halved < cat.tor_without
    st = {f.name: f for f in pr.stages}
    assert st["checkpoint"].tor_halved > pr.tor  # not obvious, but true at tau = 10 min here
    for name in ("hang", "repair", "startup", "lost"):
        assert pr.tor < st[name].tor_halved < st[name].tor_without
    assert st["slow"].gain_without == 0.0
    gains = [f.gain_without for f in pr.factors]
    assert gains == sorted(gains, reverse=True)


def test_optimal_tau_maximises_and_matches_daly_estimate() -> None:
    r = rates(gpus=16384, rate_per_gpu_hour=2e-5, tau=3600, delta=30)
    pr = model.predict(r)
    by = {t.name: t for t in pr.taus}
    best = by["optimal (exact)"]
    p = model.process(r)
    for f in (0.8, 1.25):
        assert model.tor_value(p, best.tau_s * f) < best.tor
    assert best.tor >= by["Young"].tor and best.tor >= by["Daly"].tor >= by["current"].tor
    assert by["Daly"].tau_s == pytest.approx(best.tau_s, rel=0.02)


@pytest.mark.parametrize("d", [Dist(300.0, "exponential"), Dist(300.0, "lognormal", 0.8),
                               Dist(300.0)])
def test_risk_time_matches_sampling(d: Dist) -> None:
    rng = np.random.default_rng(1)
    L = 1 / 400.0
    if d.dist == "exponential":
        u = rng.exponential(d.mean_s, 400_000)
    elif d.dist == "lognormal":
        u = np.exp(math.log(d.mean_s) - d.sigma ** 2 / 2 + d.sigma * rng.standard_normal(400_000))
    else:
        u = np.full(400_000, d.mean_s)
    x = rng.exponential(1 / L, len(u))
    assert float(risk_time(d, np.asarray(L))) == pytest.approx(np.minimum(x, u).mean(), rel=0.01)
    assert float(risk_time(d, np.asarray(0.0))) == pytest.approx(d.mean_s)
