"""Predicting TOR from rates (TOR_MODEL.md section 5): ``predict(rates, gpus=None)``.

* ``tor``: the exact closed form of the process the simulator runs (pipeline.model.core: faults
  while an attempt runs - startup, training, save - not while it hangs or waits for repair).
* ``tor_daly``: section 5's formula verbatim, exp(L R)(exp(L (tau+delta)) - 1)/L with the whole
  mean restart R at risk (Daly 2006); lower than ``tor`` by O((L (H + G))^2).
* ``tor_first_order``: (tau/(tau+delta)) / (1 + L((tau+delta)/2 + R)); overestimates TOR once
  L (tau + delta) or L R is no longer small (see tests/model/test_montecarlo.py).
* All three are multiplied by the fail-slow factor max(0, 1 - sum mu S (1 - rho)).
* ``tor_low`` / ``tor_high``: 95% interval propagated from the rates' ``rate_ci95`` (see
  pipeline.model.interval: gamma per rate, independent draws; None without any interval).
* ``factors``: categories and stages with their wall-time share and TOR without / halved.
* Checkpoint interval: the exact TOR maximiser (scipy, bounded), Young sqrt(2 delta M) and
  Daly's higher-order estimate, M = 1/L.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pipeline.model import interval as model_interval
from pipeline.model.core import (
    NO_DELTA_S,
    Process,
    daly_exact_tau,
    daly_tau,
    daly_tor,
    expected_wall,
    first_order_tor,
    optimal_tau,
    process,
    stages,
    tor_value,
    young_tau,
)
from pipeline.model.factors import Factor, key_factors
from pipeline.model.rates import Rates


@dataclass(frozen=True)
class TauChoice:
    name: str  #: "current", "optimal (exact)", "Young", "Daly"
    tau_s: float
    tor: float


@dataclass(frozen=True)
class Prediction:
    tor: float
    tor_first_order: float
    tor_daly: float
    tor_low: float | None
    tor_high: float | None
    interval_method: str
    gpus: int
    nodes: int
    failures_per_day: float  #: whole-job fail-stop rate L
    mtbf_s: float  #: 1/L (inf without failures)
    mean_restart_s: float  #: R: rate-weighted hang + repair + startup
    tau_s: float
    delta_s: float
    slow_factor: float  #: max(0, 1 - sum mu S (1 - rho))
    segment_wall_s: float  #: expected wall time per tau of ideal compute
    stage_shares: dict[str, float]  #: share of wall time per stage (sums to 1)
    factors: tuple[Factor, ...]  #: categories and stages, most costly first
    taus: tuple[TauChoice, ...]

    @property
    def categories(self) -> tuple[Factor, ...]:
        """Per-category contributions (fail-stop and fail-slow entries), most costly first."""
        return tuple(f for f in self.factors if f.kind == "category")

    @property
    def stages(self) -> tuple[Factor, ...]:
        return tuple(f for f in self.factors if f.kind == "stage")

    @property
    def first_order_drift(self) -> float:
        return self.tor_first_order - self.tor

    def to_json(self) -> dict[str, Any]:
        return {
            "tor": self.tor, "tor_low": self.tor_low, "tor_high": self.tor_high,
            "interval_method": self.interval_method, "tor_first_order": self.tor_first_order,
            "tor_daly": self.tor_daly, "gpus": self.gpus, "nodes": self.nodes,
            "failures_per_day": self.failures_per_day,
            "mtbf_s": self.mtbf_s if math.isfinite(self.mtbf_s) else None,
            "mean_restart_s": self.mean_restart_s, "tau_s": self.tau_s,
            "delta_s": self.delta_s, "slow_factor": self.slow_factor,
            "segment_wall_s": _fin(self.segment_wall_s), "stage_shares": self.stage_shares,
            "checkpoint_interval": [{"name": t.name, "tau_s": _fin(t.tau_s), "tor": t.tor}
                                    for t in self.taus],
            "categories": [f.to_json() for f in self.categories],
            "stages": [f.to_json() for f in self.stages],
        }


def _fin(x: float) -> float | None:
    return x if math.isfinite(x) else None


def predict(rates: Rates, gpus: int | None = None) -> Prediction:
    """Predicted steady-state TOR of ``rates`` at ``gpus`` GPUs (default: the file's scale)."""
    r = rates.with_scale(gpus) if gpus is not None else rates
    p = process(r)
    L, R = p.total_rate, p.mean_restart_s()
    tau, delta = p.tau_s, p.delta.mean_s
    st = {k: float(v) for k, v in stages(p).items()}
    wall = st["wall"]
    slow_factor = max(0.0, 1.0 - float(p.slow_loss.sum()))
    base = tor_value(p)
    ci = model_interval.tor_interval(r, p)
    names = ("useful", "jitter", "checkpoint", "lost", "hang", "repair", "startup", "slow")
    shares = {k: (st[k] / wall if math.isfinite(wall) else 0.0) for k in names}
    return Prediction(
        tor=base, tor_first_order=first_order_tor(L, tau, delta, R) * slow_factor,
        tor_daly=daly_tor(L, tau, delta, R) * slow_factor,
        tor_low=ci[0] if ci else None, tor_high=ci[1] if ci else None,
        interval_method=model_interval.METHOD if ci else "none: no rate_ci95 in the rates",
        gpus=r.scale.gpus, nodes=r.scale.nodes, failures_per_day=L * 86400,
        mtbf_s=1.0 / L if L > 0 else math.inf, mean_restart_s=R, tau_s=tau, delta_s=delta,
        slow_factor=slow_factor, segment_wall_s=wall, stage_shares=shares,
        factors=tuple(key_factors(p)), taus=tau_choices(p))


def tau_choices(p: Process) -> tuple[TauChoice, ...]:
    """The current tau, the exact TOR maximiser, Young's and Daly's estimates, with their TOR;
    the current one alone when the rates give no save time (delta 0: a run that saved no
    checkpoint; every interval down to one step would look free)."""
    L, delta = p.total_rate, p.delta.mean_s
    out = [TauChoice("current", p.tau_s, tor_value(p))]
    if not delta >= NO_DELTA_S:  # no save seen: a save that costs nothing is no plan
        return tuple(out)
    if L <= 0:
        return (*out, TauChoice("optimal (exact)", math.inf, tor_value(p, 1e12)))
    m = 1.0 / L
    for name, t in (("optimal (exact)", optimal_tau(p)), ("Young", young_tau(delta, m)),
                    ("Daly", daly_tau(delta, m))):
        t = max(t, p.tstar_s)
        out.append(TauChoice(name, t, tor_value(p, t)))
    return tuple(out)


def wall_for_work(rates: Rates, work_s: float, gpus: int | None = None
                  ) -> tuple[float, float | None, float | None]:
    """Expected wall seconds (and its 95% interval) to do ``work_s`` of ideal compute,
    from the first attempt's start to the last attempt's end."""
    r = rates.with_scale(gpus) if gpus is not None else rates
    p = process(r)
    ci = model_interval.wall_interval(r, p, work_s)
    return float(expected_wall(p, work_s)), (ci[0] if ci else None), (ci[1] if ci else None)


__all__ = ["Factor", "Prediction", "Process", "TauChoice", "daly_exact_tau", "daly_tau",
           "daly_tor", "expected_wall", "first_order_tor", "optimal_tau", "predict", "process",
           "stages", "tau_choices", "tor_value", "wall_for_work", "young_tau"]
