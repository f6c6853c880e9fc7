"""The predicted TOR's interval, propagated from rate_ci95."""

from __future__ import annotations

import pytest
from scipy.stats import chi2, gamma

from pipeline.model import predict as model
from pipeline.model.interval import gamma_from_ci
from tests.model.helpers import rates


def _garwood(n: int, exposure: float) -> tuple[float, float]:
    lo = chi2.ppf(0.025, 2 * n) / 2 / exposure if n > 0 else 0.0
    return float(lo), float(chi2.ppf(0.975, 2 * n + 2) / 2 / exposure)


@pytest.mark.parametrize(("lo", "hi"), [(0.5, 2.0), (1e-5, 3e-5), (0.9, 1.1)])
def test_gamma_fit_reproduces_the_interval(lo: float, hi: float) -> None:
    fit = gamma_from_ci(lo, hi)
    assert fit is not None
    k, s = fit
    assert gamma.ppf(0.025, k, scale=s) == pytest.approx(lo, rel=1e-6)
    assert gamma.ppf(0.975, k, scale=s) == pytest.approx(hi, rel=1e-6)


def test_zero_count_and_point_intervals() -> None:
    lo, hi = _garwood(0, 1000.0)
    fit = gamma_from_ci(lo, hi)
    assert fit is not None and fit[0] == 1.0
    assert gamma.ppf(0.975, fit[0], scale=fit[1]) == pytest.approx(hi)
    assert gamma_from_ci(1.0, 1.0) is None


def test_interval_brackets_the_prediction_and_narrows_with_data() -> None:
    exposure = 16384 * 24 * 54.0  # GPU-hours
    wide = rates(gpus=16384, rate_per_gpu_hour=20 / exposure, ci=_garwood(20, exposure))
    narrow = rates(gpus=16384, rate_per_gpu_hour=400 / (20 * exposure),
                   ci=_garwood(400, 20 * exposure))
    a, b = model.predict(wide), model.predict(narrow)
    assert a.tor_low is not None and a.tor_high is not None
    assert b.tor_low is not None and b.tor_high is not None
    assert a.tor_low < a.tor < a.tor_high and b.tor_low < b.tor < b.tor_high
    assert (b.tor_high - b.tor_low) < 0.5 * (a.tor_high - a.tor_low)
    assert "propagated" in a.interval_method
    assert model.predict(wide).tor_low == a.tor_low  # fixed seed: reproducible


def test_no_interval_without_rate_ci95() -> None:
    pr = model.predict(rates())
    assert pr.tor_low is None and pr.tor_high is None
    assert pr.interval_method.startswith("none")
    wall, lo, hi = model.wall_for_work(rates(), 86400.0)
    assert wall > 86400.0 and lo is None and hi is None
