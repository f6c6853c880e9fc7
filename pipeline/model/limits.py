"""Where the model's answers stop meaning something, and the scale at which that happens.

``plan`` and the model summary recommend nothing (no TOR-maximising interval, no key factors)
when a prediction falls in a regime where a recommendation would be nonsense, and say why:

* **MTBF <= mean restart R** (hang + repair gap + next startup, rate-weighted): a failure is
  expected before the job is even back to training. The exact model still gives a number (a
  TOR near 0), but no checkpoint interval changes it, and the rates were fitted in a regime
  that had nothing in common with it.
* **Fail-slow loss >= 100%** (sum of mu S (1 - rho) >= 1): episodes would overlap all the
  time; the model's linear fail-slow factor max(0, 1 - m) is 0 there, which is not what a
  permanently slowed job does (it runs at about rho).
* **TOR < 1%** (``TOR_FLOOR``): about 0 -- the job would make almost no progress.

``breaking_point`` gives the scales at which these begin, so that a planner sees where the
answer stops holding rather than a page of zeros: the GPU count at which the MTBF reaches the
mean restart (rates scale linearly with GPUs or nodes, R does not), and the largest GPU count
at which TOR, with the checkpoint interval re-optimised at each scale, is still >= 0.5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.model.core import NO_DELTA_S
from pipeline.units import human

if TYPE_CHECKING:
    from pipeline.model.predict import Prediction
    from pipeline.model.rates import Rates

TOR_FLOOR = 0.01
HALF = 0.5
MAX_GPUS = 10_000_000


def refusal(p: Prediction) -> list[str]:
    """Why no recommendation can be made for ``p`` (empty: it can)."""
    out = []
    if p.mtbf_s <= p.mean_restart_s:
        out.append(f"failures come every {human(p.mtbf_s)} on average (MTBF), sooner than the "
                   f"mean restart of {human(p.mean_restart_s)} (hang + repair gap + startup): "
                   "the job would not get back to training between failures, and no "
                   "checkpoint interval changes that")
    if p.slow_factor <= 0:
        out.append("fail-slow episodes would take 100% or more of the time at this scale "
                   "(sum of rate x duration x (1 - rho) >= 1): they would overlap all the "
                   "time, where the model's fail-slow factor does not hold")
    best = max((t.tor for t in p.taus), default=p.tor)
    if p.tor < TOR_FLOOR and best < TOR_FLOOR:  # at any interval, not only the one given
        out.append(f"the predicted TOR is {p.tor:.4f}, about 0: the job would make almost no "
                   "progress")
    return out


@dataclass(frozen=True)
class BreakingPoint:
    gpus_now: int
    mtbf_below_restart_gpus: int | None  #: smallest scale at which MTBF <= R (None: never)
    tor_half_gpus: int | None  #: largest scale with best TOR >= 0.5 (None: not even 1 node)
    tor_half_capped: bool  #: TOR stays >= 0.5 up to MAX_GPUS
    best_tau: bool = True  #: at the best interval (False: the rates give no save time)


def breaking_point(rates: Rates) -> BreakingPoint:
    from pipeline.model.core import optimal_tau, process, tor_value

    gpn = rates.scale.gpus_per_node
    p0 = process(rates)
    known = p0.delta.mean_s >= NO_DELTA_S
    lr = p0.total_rate * p0.mean_restart_s()
    mtbf_gpus = None
    if lr > 0:  # L grows linearly with the scale; R does not
        mtbf_gpus = max(gpn, math.ceil(rates.scale.gpus / lr / gpn) * gpn)

    def best(nodes: int) -> float:
        p = process(rates.with_scale(nodes * gpn))
        tau = optimal_tau(p) if p.delta.mean_s >= NO_DELTA_S else math.inf  # no save time: as now
        return float(tor_value(p, tau if math.isfinite(tau) else None))

    if best(1) < HALF:
        return BreakingPoint(rates.scale.gpus, mtbf_gpus, None, False, known)
    lo, hi = 1, 2
    while best(hi) >= HALF:
        lo, hi = hi, hi * 2
        if hi * gpn > MAX_GPUS:
            return BreakingPoint(rates.scale.gpus, mtbf_gpus, MAX_GPUS // gpn * gpn, True,
                                     known)
    while hi - lo > max(1, lo // 100):  # to 1%
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if best(mid) >= HALF else (lo, mid)
    return BreakingPoint(rates.scale.gpus, mtbf_gpus, lo * gpn, False, known)


def describe(bp: BreakingPoint) -> str:
    """One sentence for people."""
    parts = []
    if bp.tor_half_gpus is None:
        parts.append("TOR is below 0.5 even on one node")
    elif bp.tor_half_capped:
        parts.append(f"TOR stays >= 0.5 up to {bp.tor_half_gpus:,} GPUs")
    else:
        how = "the best checkpoint interval" if bp.best_tau else "today's checkpoint interval"
        parts.append(f"TOR (with {how} at each scale) stays >= 0.5 up to about "
                     f"{bp.tor_half_gpus:,} GPUs")
    if bp.mtbf_below_restart_gpus is not None:
        parts.append(f"from about {bp.mtbf_below_restart_gpus:,} GPUs failures come faster "
                     "than a restart (MTBF < mean restart) and no plan helps")
    return "Breaking point: " + "; ".join(parts) + "."
