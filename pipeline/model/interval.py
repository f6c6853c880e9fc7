"""The predicted TOR's 95% interval, propagated from the rates' ``rate_ci95``.

Method (not "evaluate at the interval ends"): each category entry that has ``rate_ci95`` gets
a gamma distribution for its rate whose 2.5% and 97.5% quantiles are the interval's ends
(for a Poisson count the exact interval is close to a gamma posterior; ``low == 0`` gets shape 1,
which reproduces the exact upper bound of a zero count). Categories are drawn independently,
``DRAWS`` times with a fixed seed; the exact closed form is evaluated for every draw and the
interval is the 2.5% / 97.5% percentiles of TOR. Hang, repair, startup, tau and delta are held
at their means (their uncertainty is not in the rates file). Evaluating all categories at
their interval ends at once would overstate the spread of a sum of independent rates.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaincinv

from pipeline.model.core import Process, expected_wall, tor
from pipeline.model.rates import Category, Rates

DRAWS = 4000
SEED = 20240807
METHOD = ("95% interval propagated from rate_ci95: each rate ~ gamma fitted to its interval, "
          f"independent, {DRAWS} draws of the exact closed form (2.5/97.5 percentiles)")


def _gamma_ppf(q: float, k: float) -> float:
    """The standard gamma's quantile (what scipy.stats.gamma.ppf computes, without importing
    scipy.stats)."""
    return float(gammaincinv(k, q)) if k > 0 else math.nan


@lru_cache(maxsize=1024)
def gamma_from_ci(lo: float, hi: float) -> tuple[float, float] | None:
    """(shape, scale) of the gamma with quantiles 2.5% = lo and 97.5% = hi; None if the
    interval is a point. Cached: a prediction at every scale fits the same intervals."""
    if hi <= 0 or hi <= lo * (1 + 1e-9):
        return None
    if lo <= 0:
        return 1.0, hi / _gamma_ppf(0.975, 1.0)
    target = math.log(hi / lo)

    def f(logk: float) -> float:
        k = math.exp(logk)
        return math.log(_gamma_ppf(0.975, k) / _gamma_ppf(0.025, k)) - target

    lo_k, hi_k = math.log(1e-2), math.log(1e9)
    if f(hi_k) > 0:  # narrower than any gamma we can fit: a point
        return None
    if f(lo_k) < 0:
        lo_k = math.log(1e-4)
    k = math.exp(brentq(f, lo_k, hi_k, xtol=1e-10))
    return k, hi / _gamma_ppf(0.975, k)


def _scale_count(c: Category, rates: Rates) -> int:
    return rates.scale.gpus if c.scales_with == "gpu" else rates.scale.nodes


def draws(rates: Rates, p: Process, n: int = DRAWS, seed: int = SEED
          ) -> tuple[np.ndarray, np.ndarray] | None:
    """(lam (n, C), slow (n, S)) drawn from the rate intervals; None if no entry has one.
    ``rates`` must already be at the scale of ``p``."""
    rng = np.random.default_rng(seed)
    stop, slow = rates.fail_stop(), rates.fail_slow()
    lam = np.tile(p.lam, (n, 1))
    sl = np.tile(p.slow_loss, (n, 1))
    any_ci = False
    for j, group in enumerate((stop, slow)):
        for i, c in enumerate(group):
            fit = gamma_from_ci(*c.rate_ci95) if c.rate_ci95 is not None else None
            if fit is None:
                continue
            any_ci = True
            x = rng.gamma(fit[0], fit[1], n) * _scale_count(c, rates) / 3600.0
            if j == 0:
                lam[:, i] = x
            else:
                sl[:, i] = x * _slow_cost(c)
    return (lam, sl) if any_ci else None


def _slow_cost(c: Category) -> float:
    return (c.slow_duration.mean_s if c.slow_duration else 0.0) * (1.0 - (c.rho or 1.0))


def tor_interval(rates: Rates, p: Process) -> tuple[float, float] | None:
    d = draws(rates, p)
    if d is None:
        return None
    t = tor(p, d[0], d[1])
    lo, hi = np.percentile(t, [2.5, 97.5])
    return float(lo), float(hi)


def wall_interval(rates: Rates, p: Process, work_s: float) -> tuple[float, float] | None:
    d = draws(rates, p)
    if d is None:
        return None
    w = expected_wall(p, work_s, d[0], d[1])
    lo, hi = np.percentile(w, [2.5, 97.5])
    return float(lo), float(hi)
