"""The key-factor view: what each failure category and each stage costs.

For every fail-stop / fail-slow entry and every stage (hang, repair, startup, lost work,
checkpoint save, fail-slow) two numbers:

* ``wall_share``: the share of expected wall time it accounts for (an exact split: the shares of
  the stages plus useful work and jitter sum to 1; the categories' shares sum to the failure
  stages plus fail-slow). A category's cost is its failures' lost work + hang + repair gap +
  the next startup, as in TOR_MODEL.md section 2.
* ``tor_without`` / ``tor_halved``: the exact TOR recomputed with the category's rate (or the
  stage's duration) at 0 or halved. For "lost work" that means the work lost per failure is
  removed or halved (e.g. by more frequent free checkpoints); for "checkpoint" the save time
  delta; for "fail-slow" every episode's cost mu*S*(1-rho).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from pipeline.model.core import Process, risk_time, stages, tor_value

STAGES = ("hang", "repair", "startup", "lost", "checkpoint", "slow")


@dataclass(frozen=True)
class Factor:
    kind: str  #: "category" or "stage"
    name: str  #: category name or stage name
    mode: str | None  #: fail-stop / fail-slow for categories
    events_per_day: float | None  #: whole-job rate, for categories
    wall_share: float
    tor_without: float
    tor_halved: float
    gain_without: float  #: tor_without - tor (TOR points as a fraction)
    gain_halved: float

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "name": self.name, "mode": self.mode,
                "events_per_day": self.events_per_day, "wall_share": self.wall_share,
                "tor_without": self.tor_without, "tor_halved": self.tor_halved,
                "gain_without": self.gain_without, "gain_halved": self.gain_halved}


def scaled(p: Process, stage: str, f: float) -> Process:
    """``p`` with one stage's duration scaled by ``f``."""
    if stage == "hang":
        return p.with_(hang=p.hang * f)
    if stage == "repair":
        return p.with_(repair=p.repair * f)
    if stage == "startup":
        return p.with_(startup=tuple(replace(d, mean_s=d.mean_s * f) for d in p.startup))
    if stage == "checkpoint":
        return p.with_(delta=replace(p.delta, mean_s=p.delta.mean_s * f))
    if stage == "lost":
        return p.with_(lost_factor=p.lost_factor * f)
    if stage == "slow":
        return p.with_(slow_loss=p.slow_loss * f)
    raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")


def _rate_scaled(p: Process, mode: str, i: int, f: float) -> Process:
    if mode == "fail-stop":
        lam = p.lam.copy()
        lam[i] *= f
        return p.with_(lam=lam)
    sl = p.slow_loss.copy()
    sl[i] *= f
    return p.with_(slow_loss=sl)


def category_shares(p: Process) -> tuple[np.ndarray, np.ndarray]:
    """Wall-time shares of each fail-stop entry (C,) and each fail-slow entry (S,)."""
    st = {k: float(v) for k, v in stages(p).items()}
    wall = st["wall"]
    L = p.total_rate
    stop = np.zeros(len(p.lam))
    if L > 0 and np.isfinite(wall):
        pc = p.lam / L
        rt = np.array([float(risk_time(d, np.asarray(L))) for d in p.startup])
        a = 1.0 - L * float((pc * rt).sum())
        restarts = L * (st["lost"] + st["useful"] + st["jitter"] + st["checkpoint"]) / a
        stop = pc * (st["lost"] + restarts * (p.hang + p.repair + rt)) / wall
    m = float(p.slow_loss.sum())
    # fail-slow costs m of the wall time; when m >= 1 (TOR 0) split the whole wall by m_c / m
    slow = p.slow_loss.copy() if np.isfinite(wall) else p.slow_loss / max(m, 1e-300)
    return stop, slow


def key_factors(p: Process) -> list[Factor]:
    """Categories and stages, most costly first (by the TOR gained if removed)."""
    base = tor_value(p)
    st = {k: float(v) for k, v in stages(p).items()}
    wall = st["wall"]
    out: list[Factor] = []
    stop_share, slow_share = category_shares(p)
    entries: list[tuple[str, int, str, float, float]] = [
        ("fail-stop", i, n, float(p.lam[i]), float(stop_share[i]))
        for i, n in enumerate(p.stop_names)]
    entries += [("fail-slow", i, n, float(p.slow_rate[i]), float(slow_share[i]))
                for i, n in enumerate(p.slow_names)]
    for mode, i, name, lam, share in entries:
        t0 = tor_value(_rate_scaled(p, mode, i, 0.0))
        th = tor_value(_rate_scaled(p, mode, i, 0.5))
        out.append(Factor("category", name, mode, lam * 86400,
                          share, t0, th, t0 - base, th - base))
    for s in STAGES:
        share = st[s] / wall if np.isfinite(wall) and wall > 0 else 0.0
        t0, th = tor_value(scaled(p, s, 0.0)), tor_value(scaled(p, s, 0.5))
        out.append(Factor("stage", s, None, None, share, t0, th, t0 - base, th - base))
    out.sort(key=lambda f: (-f.gain_without, f.kind, f.name))
    return out
