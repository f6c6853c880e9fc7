"""Fast Monte Carlo of the TOR distribution, vectorised over replicas (no logs).

It runs the same process as campaign.py at checkpoint-segment granularity: each loop step
advances every unfinished replica by one *trial* (a startup, or one segment of
``save_interval`` iterations plus its save), with the fault hazard L over the trial. Within a
segment the iteration durations are summed in distribution (normal approximation of the sum of
lognormal jitter), and fail-slow episodes that start during the segment add S * (1 - rho) each
(the event simulation also lets an episode that started during a gap run into training: a
second-order difference). Memorylessness of the exponential fault clock makes per-trial draws
exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipeline.model.rates import Dist, Rates, default_startup, default_tail, save_interval


@dataclass(frozen=True)
class MCResult:
    tor: np.ndarray
    t_obs_s: np.ndarray
    interruptions: np.ndarray

    @property
    def mean(self) -> float:
        return float(self.tor.mean())

    @property
    def stderr(self) -> float | None:
        """The mean's standard error; None for one replica (no spread to measure)."""
        n = len(self.tor)
        return float(self.tor.std(ddof=1) / math.sqrt(n)) if n > 1 else None

    def summary(self) -> dict[str, float | int | None]:
        q = np.quantile(self.tor, [0.05, 0.5, 0.95])
        return {"replicas": len(self.tor), "tor_mean": self.mean, "tor_stderr": self.stderr,
                "tor_p05": float(q[0]), "tor_median": float(q[1]), "tor_p95": float(q[2]),
                "t_obs_mean_days": float(self.t_obs_s.mean() / 86400.0),
                "interruptions_mean": float(self.interruptions.mean())}


class _Dists:
    """Several ``Dist`` drawn at once, one per element of an index array."""

    def __init__(self, ds: list[Dist]) -> None:
        self.kind = np.array([{"fixed": 0, "lognormal": 1, "exponential": 2}[d.dist]
                              for d in ds])
        self.mean = np.array([d.mean_s for d in ds])
        self.sigma = np.array([d.sigma for d in ds])
        self.mu = np.log(np.maximum(self.mean, 1e-300)) - self.sigma ** 2 / 2

    def draw(self, idx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        k, m = self.kind[idx], self.mean[idx]
        z = rng.standard_normal(len(idx))
        e = rng.exponential(1.0, len(idx))
        out: np.ndarray = np.where(
            k == 0, m, np.where(k == 1, np.exp(self.mu[idx] + self.sigma[idx] * z), m * e))
        return out


def run(rates: Rates, replicas: int, seed: int, target_iterations: int | None = None
        ) -> MCResult:
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 20240501])))
    n_it = int(target_iterations or rates.target_iterations or 0)
    if n_it < 1:
        raise ValueError("no target iteration count: set target_iterations in the rates file")
    g, nodes = rates.scale.gpus, rates.scale.nodes
    tstar, sig = rates.ideal_step_s, rates.step_jitter_sigma
    every = save_interval(rates)
    k_seg = -(-n_it // every)
    last_n = n_it - (k_seg - 1) * every
    stop = rates.fail_stop()
    lam = np.array([c.rate_per_second(g, nodes) for c in stop])
    big_l = float(lam.sum())
    cum = np.cumsum(lam / big_l) if big_l > 0 else np.array([1.0])
    first = len(stop)  # index of "first attempt" in the startup table
    hang = _Dists([c.hang or Dist(0.0) for c in stop] or [Dist(0.0)])
    repair = _Dists([c.repair or Dist(0.0) for c in stop] or [Dist(0.0)])
    startup = _Dists([c.startup or default_startup(rates) for c in stop]
                     + [rates.first_startup or default_startup(rates)])
    delta = _Dists([rates.checkpoint.delta])
    tail = _Dists([default_tail(rates)])
    slow = rates.fail_slow()
    mu = sum(c.rate_per_second(g, nodes) for c in slow)
    slow_cost = (sum(c.rate_per_second(g, nodes) * (c.slow_duration.mean_s if c.slow_duration
                                                      else 0.0) * (1.0 - (c.rho or 1.0))
                     for c in slow) / mu) if mu > 0 else 0.0
    em = math.exp(sig * sig / 2)
    ev = math.exp(sig * sig) * (math.exp(sig * sig) - 1.0)

    t = np.zeros(replicas)
    seg = np.zeros(replicas, dtype=np.int64)
    phase = np.zeros(replicas, dtype=np.int8)  # 0: needs startup, 1: training
    prev = np.full(replicas, first, dtype=np.int64)
    fails = np.zeros(replicas, dtype=np.int64)
    done = np.zeros(replicas, dtype=bool)

    def fail(idx: np.ndarray, x: np.ndarray) -> None:
        c = np.searchsorted(cum, rng.uniform(size=len(idx)), side="right")
        c = np.minimum(c, len(cum) - 1)
        t[idx] += x + hang.draw(c, rng) + repair.draw(c, rng)
        prev[idx] = c
        phase[idx] = 0
        fails[idx] += 1

    while not done.all():
        i0 = np.nonzero(~done & (phase == 0))[0]
        if len(i0):
            u = startup.draw(prev[i0], rng)
            x = rng.exponential(1.0 / big_l, len(i0)) if big_l > 0 else np.full(len(i0), np.inf)
            f = x < u
            ok = i0[~f]
            t[ok] += u[~f]
            phase[ok] = 1
            if f.any():
                fail(i0[f], x[f])
        i1 = np.nonzero(~done & (phase == 1))[0]
        if not len(i1):
            continue
        last = seg[i1] == k_seg - 1
        n = np.where(last, last_n, every).astype(float)
        work = n * tstar * em
        if sig > 0:
            work = work + np.sqrt(n * ev) * tstar * rng.standard_normal(len(i1))
        if mu > 0:
            work = work + rng.poisson(mu * work) * slow_cost
        d = delta.draw(np.zeros(len(i1), dtype=np.int64), rng)
        total = work + np.where(last, 0.0, d)
        x = rng.exponential(1.0 / big_l, len(i1)) if big_l > 0 else np.full(len(i1), np.inf)
        f = x < total
        ok = i1[~f]
        t[ok] += total[~f]
        seg[ok] += 1
        fin = ok[seg[ok] >= k_seg]
        if len(fin):
            t[fin] += tail.draw(np.zeros(len(fin), dtype=np.int64), rng)
            done[fin] = True
        if f.any():
            fail(i1[f], x[f])
    return MCResult(tor=n_it * tstar / t, t_obs_s=t, interruptions=fails)
