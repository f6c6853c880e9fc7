"""The closed form of TOR_MODEL.md section 5 (the public face is pipeline.model.predict).

Process (the same one the simulator runs, pipeline/simulate/montecarlo.py): fail-stop faults are
a Poisson process of total rate L = sum_c lambda_c x (GPUs or nodes) while an attempt *runs*
(startup, training, checkpoint save). A fault of category c (probability p_c = lambda_c / L)
costs its hang H_c (fault -> attempt end), the repair gap G_c, and the next attempt's startup
u_c, which can itself be hit by a fault; the work since the last completed save is lost. A
segment is tau of ideal compute (tau * exp(sigma^2/2) with step jitter) plus the save delta.

Exact expected wall time per segment (renewal argument, memoryless faults):

    r  = (1/b - 1) / L,  b = E[exp(-L (W + delta))]    training-phase time (useful+save+lost)
    a  = sum_c p_c E[exp(-L u_c)]                       a startup survives
    K  = (sum_c p_c (H_c + G_c) + (1 - a)/L) / a        failure -> back in training
    E[segment] = r (1 + L K);  TOR_stop = tau / E[segment]

With fixed W + delta = T and one category this is (1 + L(H+G)) exp(L u) (exp(L T) - 1) / L;
Daly's form (TOR_MODEL.md section 5, ``daly_tor``) is exp(L R)(exp(L T) - 1)/L with R = H+G+u
all at risk: the two differ by exp(L(H+G)) vs 1 + L(H+G), i.e. O((L(H+G))^2). We use the
former by default because a job that is hung or waiting for repair cannot be hit again, and
the simulator (and reality) agree with it; ``daly_tor`` is kept as the published reference.

Fail-slow: TOR is multiplied by max(0, 1 - m), m = sum mu S (1 - rho) per unit of wall time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from pipeline.model.rates import Dist, Rates, default_startup, default_tail

_GH_X, _GH_W = np.polynomial.hermite.hermgauss(32)
_GH_W = _GH_W / math.sqrt(math.pi)


#: a save time below this is none seen (a run with no save fits 0, up to float rounding)
NO_DELTA_S = 1e-3

@dataclass(frozen=True, eq=False)
class Process:
    """Everything the closed form needs, at one scale (rates per second for the whole job)."""

    tau_s: float
    tstar_s: float
    jitter_sigma: float
    delta: Dist
    stop_names: tuple[str, ...]
    lam: np.ndarray  #: (C,) fail-stop rate per second, whole job
    hang: np.ndarray  #: (C,) mean hang seconds
    repair: np.ndarray  #: (C,) mean repair-gap seconds
    startup: tuple[Dist, ...]  #: (C,) startup after a fault of that category
    slow_names: tuple[str, ...]
    slow_rate: np.ndarray  #: (S,) fail-slow episodes per second, whole job
    slow_loss: np.ndarray  #: (S,) mu*S*(1-rho): share of wall time lost to each fail-slow entry
    first_startup: Dist
    tail_s: float
    lost_factor: float = 1.0  #: what-if knob: scale the work lost per failure

    @property
    def total_rate(self) -> float:
        return float(self.lam.sum())

    def mean_restart_s(self) -> float:
        """R: rate-weighted mean of hang + repair + startup over fail-stop categories."""
        L = self.total_rate
        if L <= 0:
            return 0.0
        u = np.array([d.mean_s for d in self.startup])
        return float((self.lam * (self.hang + self.repair + u)).sum() / L)

    def with_(self, **kw: Any) -> Process:
        return replace(self, **kw)


def process(rates: Rates, gpus: int | None = None) -> Process:
    """The Process of ``rates`` at ``gpus`` GPUs (default: the file's scale)."""
    r = rates.with_scale(gpus) if gpus is not None else rates
    g, n = r.scale.gpus, r.scale.nodes
    stop, slow = r.fail_stop(), r.fail_slow()
    return Process(
        tau_s=r.checkpoint.tau_s, tstar_s=r.ideal_step_s, jitter_sigma=r.step_jitter_sigma,
        delta=r.checkpoint.delta, stop_names=tuple(c.category for c in stop),
        lam=np.array([c.rate_per_second(g, n) for c in stop], dtype=float),
        hang=np.array([c.hang.mean_s if c.hang else 0.0 for c in stop], dtype=float),
        repair=np.array([c.repair.mean_s if c.repair else 0.0 for c in stop], dtype=float),
        startup=tuple(c.startup or default_startup(r) for c in stop),
        slow_names=tuple(c.category for c in slow),
        slow_rate=np.array([c.rate_per_second(g, n) for c in slow], dtype=float),
        slow_loss=np.array([c.rate_per_second(g, n) * _slow_cost(c.rho, c.slow_duration)
                            for c in slow], dtype=float),
        first_startup=r.first_startup or default_startup(r), tail_s=default_tail(r).mean_s)


def _slow_cost(rho: float | None, dur: Dist | None) -> float:
    return (dur.mean_s if dur else 0.0) * (1.0 - (rho if rho is not None else 1.0))


# --- exact form (vectorised over leading axes of lam / slow) ----------------------------------

def risk_time(d: Dist, L: np.ndarray) -> np.ndarray:
    """E[(1 - exp(-L u)) / L] for u ~ d: expected time run before min(fault, u); L=0 -> mean."""
    L = np.asarray(L, dtype=float)
    if d.dist == "exponential":
        out: np.ndarray = d.mean_s / (1.0 + L * d.mean_s)
        return out
    if d.dist == "lognormal" and d.sigma > 0:
        mu = math.log(max(d.mean_s, 1e-300)) - d.sigma ** 2 / 2
        u = np.exp(mu + d.sigma * math.sqrt(2.0) * _GH_X)
        return np.asarray((_GH_W * _expm1_ratio(L[..., None], u)).sum(-1))
    return _expm1_ratio(L, np.asarray(d.mean_s))


def _expm1_ratio(L: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(1 - exp(-L u)) / L, with its limit u at L = 0."""
    safe = np.where(L > 0, L, 1.0)
    out: np.ndarray = np.where(L > 0, -np.expm1(-L * u) / safe, u * np.ones_like(L))
    return out


def _stages(p: Process, lam: np.ndarray | None = None, slow: np.ndarray | None = None,
           tau_s: float | None = None, save: bool = True) -> dict[str, np.ndarray]:
    """Expected wall seconds per segment of ``tau`` ideal compute, split into stages that sum
    exactly to ``wall``: useful, jitter, checkpoint, lost, hang, repair, startup, slow."""
    lam = p.lam if lam is None else lam
    slow = p.slow_loss if slow is None else slow
    tau = p.tau_s if tau_s is None else tau_s
    L = lam.sum(-1)
    safe = np.where(L > 0, L, 1.0)
    pc = lam / safe[..., None]
    s2 = p.jitter_sigma ** 2
    mu_w = tau * math.exp(s2 / 2)
    var_w = tau * p.tstar_s * math.exp(s2) * math.expm1(s2)
    d_mean = p.delta.mean_s if save else 0.0
    log_b = -L * mu_w + L * L * var_w / 2
    if save:
        log_b = log_b + np.log1p(-L * risk_time(p.delta, L))
    t_bar = mu_w + d_mean
    r = np.where(L > 0, np.expm1(-log_b) / safe, t_bar)
    if p.lost_factor != 1.0:
        r = t_bar / (1.0 - p.lost_factor * (1.0 - t_bar / r))
    n1 = L * r  # training-phase failures per segment
    rt = np.stack([risk_time(d, L) for d in p.startup], -1) if p.startup else pc * 0.0
    a = 1.0 - L * (pc * rt).sum(-1)  # a startup survives
    restarts = n1 / a
    st = {"useful": np.full_like(L, tau), "jitter": np.full_like(L, mu_w - tau),
          "checkpoint": np.full_like(L, d_mean), "lost": r - t_bar,
          "hang": restarts * (pc * p.hang).sum(-1), "repair": restarts * (pc * p.repair).sum(-1),
          "startup": restarts * (pc * rt).sum(-1)}
    busy = sum(st.values(), np.zeros_like(L))
    m = np.asarray(slow).sum(-1) if np.size(slow) else np.zeros_like(L)
    keep = np.maximum(0.0, 1.0 - m)
    st["slow"] = np.where(keep > 0, busy * np.minimum(m, 1.0) / np.where(keep > 0, keep, 1.0),
                          np.inf)
    st["wall"] = busy + st["slow"]
    st["per_failure_restart"] = np.where(
        L > 0, ((pc * (p.hang + p.repair)).sum(-1) + (pc * rt).sum(-1)) / a, 0.0)
    return st


def tor(p: Process, lam: np.ndarray | None = None, slow: np.ndarray | None = None,
        tau_s: float | None = None) -> np.ndarray:
    """Exact steady-state TOR of the process (ideal compute / wall)."""
    st = stages(p, lam, slow, tau_s)
    out: np.ndarray = np.where(np.isfinite(st["wall"]), st["useful"] / st["wall"], 0.0)
    return out


def tor_value(p: Process, tau_s: float | None = None) -> float:
    return float(tor(p, tau_s=tau_s))


def expected_wall(p: Process, work_s: float, lam: np.ndarray | None = None,
                  slow: np.ndarray | None = None) -> np.ndarray:
    """Expected wall seconds for ``work_s`` of ideal compute, from the first attempt's start
    (its startup) to the end of the last (its tail): (k-1) full segments, a last one without
    a save, the first startup (at risk) and the tail."""
    lam = p.lam if lam is None else lam
    slow = p.slow_loss if slow is None else slow
    k = max(1, math.ceil(work_s / p.tau_s - 1e-9))
    last = work_s - (k - 1) * p.tau_s
    full = stages(p, lam, slow)
    end = stages(p, lam, slow, tau_s=last, save=False)
    L = lam.sum(-1)
    first = risk_time(p.first_startup, L)
    first = first * (1.0 + L * full["per_failure_restart"])
    m = np.asarray(slow).sum(-1) if np.size(slow) else np.zeros_like(L)
    keep = np.maximum(0.0, 1.0 - m)
    busy = (k - 1) * (full["wall"] - full["slow"]) + end["wall"] - end["slow"] + first
    out: np.ndarray = np.where(keep > 0, busy / np.where(keep > 0, keep, 1.0) + p.tail_s,
                               np.inf)
    return out


# --- the formulas as published ----------------------------------------------------------------

def daly_tor(L: float, tau: float, delta: float, R: float) -> float:
    """TOR_MODEL.md section 5 verbatim: tau / (exp(L R) (exp(L (tau + delta)) - 1) / L)."""
    if L <= 0:
        return tau / (tau + delta)
    try:
        return tau * L / (math.exp(L * R) * math.expm1(L * (tau + delta)))
    except OverflowError:  # L R or L tau past ~709: the ratio is below the smallest float
        return 0.0


def first_order_tor(L: float, tau: float, delta: float, R: float) -> float:
    """(tau / (tau + delta)) / (1 + L ((tau + delta)/2 + R)), valid for L (tau + delta) << 1."""
    return (tau / (tau + delta)) / (1.0 + L * ((tau + delta) / 2 + R))


def young_tau(delta: float, mtbf: float) -> float:
    """Young (1974): sqrt(2 delta M)."""
    return math.sqrt(2.0 * delta * mtbf)


def daly_tau(delta: float, mtbf: float) -> float:
    """Daly (2006) higher-order estimate: sqrt(2 delta M)[1 + sqrt(delta/2M)/3 + delta/(18M)]
    - delta for delta < 2M, else M."""
    if delta >= 2 * mtbf:
        return mtbf
    x = delta / (2 * mtbf)
    return math.sqrt(2 * delta * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - delta


def daly_exact_tau(delta: float, mtbf: float) -> float:
    """The tau maximising Daly's exact form tau / (exp((tau+delta)/M) - 1) (R drops out)."""
    L = 1.0 / mtbf
    return _argmax(lambda t: daly_tor(L, t, delta, 0.0), 1e-6 * mtbf, 20 * mtbf)


def optimal_tau(p: Process) -> float:
    """The tau maximising the exact TOR of the process (bounded, on log tau)."""
    L = p.total_rate
    if L <= 0:
        return math.inf
    lo = max(p.tstar_s, 1.0)
    hi = max(lo * 10, 50.0 / L)
    return _argmax(lambda t: tor_value(p, tau_s=t), lo, hi)


def _argmax(f: Any, lo: float, hi: float) -> float:
    res = minimize_scalar(lambda x: -f(math.exp(x)), bounds=(math.log(lo), math.log(hi)),
                          method="bounded", options={"xatol": 1e-7})
    return float(math.exp(res.x))


def stages(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """``_stages`` without floating-point warnings: in hopeless regimes (failures far more
    often than a checkpoint segment) the expected wall time overflows to inf, i.e. TOR 0."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _stages(*args, **kwargs)
