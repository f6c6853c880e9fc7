"""The library behind ``tormortem plan``: what-ifs on a rates file, predictions, sweeps.

What-if syntax (``--what-if CATEGORY.FIELD=VALUE``, repeatable): FIELD is ``rate`` (every entry of
the category), ``stop_rate`` / ``slow_rate`` (one mode), ``hang`` / ``repair`` / ``startup``
(fail-stop entry; a duration such as ``2m``), ``slow_duration`` or ``rho`` (fail-slow entry).
VALUE ``xF`` multiplies (``x0.5``); otherwise it sets (rates in the file's unit, per GPU-hour or
node-hour; durations as ``90s``, ``15m``, ``2h``). ``--drop CATEGORY`` removes all its entries.

A prediction in a regime where a recommendation is nonsense (MTBF shorter than the mean
restart, fail-slow loss >= 100%, TOR about 0; ``pipeline.model.limits``) carries the reasons
in ``refused`` and no optimum; every plan carries the breaking point of its scenario (the
scales at which that begins).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from pipeline.model.limits import BreakingPoint, breaking_point, refusal
from pipeline.model.predict import Prediction, predict, wall_for_work
from pipeline.model.rates import Category, Checkpoint, Dist, Rates, default_startup
from pipeline.units import DurationError, parse_duration

STOP_FIELDS = ("hang", "repair", "startup")
SLOW_FIELDS = ("slow_duration", "rho")
FIELDS = ("rate", "stop_rate", "slow_rate", *STOP_FIELDS, *SLOW_FIELDS)
SWEEPS = ("gpus", "tau", "delta")


class PlanError(ValueError):
    """A plan request that cannot be answered; the message says what to do."""


@dataclass(frozen=True)
class WhatIf:
    category: str
    field: str
    scale: float | None  #: multiply by this ...
    value: float | None  #: ... or set to this (seconds, rate or rho)
    text: str


def categories_in(rates: Rates) -> list[str]:
    return sorted({c.category for c in rates.categories})


def parse_what_if(text: str, rates: Rates) -> WhatIf:
    lhs, eq, rhs = text.partition("=")
    cat, dot, fld = lhs.strip().partition(".")
    if not eq or not dot or not rhs.strip():
        raise PlanError(f"cannot read --what-if {text!r}; write CATEGORY.FIELD=VALUE, e.g. "
                        "nccl_timeout.hang=2m or gpu_memory.rate=x0.5")
    known = categories_in(rates)
    if cat not in known:
        raise PlanError(f"--what-if {text!r}: no category {cat!r} in the rates file; it has: "
                        f"{', '.join(known) or 'none'}")
    if fld not in FIELDS:
        raise PlanError(f"--what-if {text!r}: unknown field {fld!r}; use one of: "
                        f"{', '.join(FIELDS)}")
    modes = {c.mode for c in rates.categories if c.category == cat}
    need = {"stop_rate": "fail-stop", "slow_rate": "fail-slow"}.get(fld)
    need = need or ("fail-stop" if fld in STOP_FIELDS else "fail-slow" if fld in SLOW_FIELDS
                    else None)
    if need and need not in modes:
        raise PlanError(f"--what-if {text!r}: {cat} has no {need} entry in the rates file "
                        f"(only {', '.join(sorted(modes))})")
    v = rhs.strip()
    try:
        if v[:1] in ("x", "X", "*"):
            f = float(v[1:])
            if f < 0 or not math.isfinite(f):
                raise ValueError
            return WhatIf(cat, fld, f, None, text)
        if fld in (*STOP_FIELDS, "slow_duration"):
            return WhatIf(cat, fld, None, parse_duration(v), text)
        x = float(v)
        if not math.isfinite(x):  # nan, inf, 1e400: no prediction can be made from them
            raise ValueError
    except (ValueError, DurationError):
        raise PlanError(f"--what-if {text!r}: cannot read value {v!r}; write a factor like "
                        "x0.5, a duration like 2m (hang/repair/startup/slow_duration) or a "
                        "number (rate, rho)") from None
    if x < 0 or (fld == "rho" and not 0 < x < 1):
        raise PlanError(f"--what-if {text!r}: {fld} must be "
                        f"{'between 0 and 1' if fld == 'rho' else '>= 0'}")
    return WhatIf(cat, fld, None, x, text)


def _dist(d: Dist, w: WhatIf) -> Dist:
    return replace(d, mean_s=d.mean_s * w.scale if w.scale is not None else float(w.value or 0))


def _apply(c: Category, w: WhatIf, rates: Rates) -> Category:
    f = w.field
    if f in ("rate", "stop_rate", "slow_rate"):
        if (f == "stop_rate" and c.mode != "fail-stop") or (
                f == "slow_rate" and c.mode != "fail-slow"):
            return c
        if w.scale is not None:
            ci = (c.rate_ci95[0] * w.scale, c.rate_ci95[1] * w.scale) if c.rate_ci95 else None
            return replace(c, rate=c.rate * w.scale, rate_ci95=ci)
        return replace(c, rate=float(w.value or 0), rate_ci95=None)
    if f in STOP_FIELDS and c.mode == "fail-stop":
        cur: Dist = getattr(c, f) or (default_startup(rates) if f == "startup" else Dist(0.0))
        new = _dist(cur, w)
        if f == "hang":
            return replace(c, hang=new)
        return replace(c, repair=new) if f == "repair" else replace(c, startup=new)
    if f == "slow_duration" and c.mode == "fail-slow":
        return replace(c, slow_duration=_dist(c.slow_duration or Dist(0.0), w))
    if f == "rho" and c.mode == "fail-slow":
        rho = (c.rho or 1.0) * w.scale if w.scale is not None else float(w.value or 0)
        if not 0 < rho < 1:
            raise PlanError(f"--what-if {w.text!r} gives rho = {rho:g}; rho must stay "
                            "between 0 and 1")
        return replace(c, rho=rho)
    return c


def apply_what_ifs(rates: Rates, what_ifs: list[WhatIf], drops: list[str]) -> Rates:
    known = categories_in(rates)
    for d in drops:
        if d not in known:
            raise PlanError(f"--drop {d}: no such category in the rates file; it has: "
                            f"{', '.join(known) or 'none'}")
    cats = [c for c in rates.categories if c.category not in drops]
    for w in what_ifs:
        cats = [_apply(c, w, rates) if c.category == w.category else c for c in cats]
    return replace(rates, categories=tuple(cats))


def with_setup(rates: Rates, gpus: int | None = None, tau_s: float | None = None,
               delta_s: float | None = None) -> Rates:
    """``rates`` at another scale, checkpoint interval or save time (delta keeps its shape)."""
    if gpus is not None:
        gpn = rates.scale.gpus_per_node
        if gpus < gpn or gpus % gpn:
            raise PlanError(f"--gpus {gpus}: must be a positive multiple of gpus_per_node "
                            f"({gpn}) in the rates file")
        rates = rates.with_scale(gpus)
    ck = rates.checkpoint
    if tau_s is not None:
        if tau_s <= 0:
            raise PlanError("--tau must be > 0, e.g. --tau 30m")
        ck = replace(ck, tau_s=tau_s)
    if delta_s is not None:
        ck = Checkpoint(ck.tau_s, replace(ck.delta, mean_s=delta_s), ck.load_s)
    return replace(rates, checkpoint=ck)


def parse_sweep(text: str) -> tuple[str, list[float]]:
    name, eq, vals = text.partition("=")
    name = name.strip()
    if not eq or name not in SWEEPS or not vals.strip():
        raise PlanError(f"cannot read --sweep {text!r}; write gpus=1024,4096,16384 or "
                        "tau=5m,10m,30m or delta=10s,1m")
    out: list[float] = []
    for v in vals.split(","):
        try:
            out.append(float(int(v)) if name == "gpus" else parse_duration(v))
        except (ValueError, DurationError):
            raise PlanError(f"--sweep {text!r}: cannot read {v!r} as "
                            f"{'a GPU count' if name == 'gpus' else 'a duration'}") from None
    return name, out


@dataclass(frozen=True)
class SweepRow:
    value: float
    prediction: Prediction
    wall_s: float | None
    refused: tuple[str, ...] = ()  #: why this row has no optimum (empty: it has one)


@dataclass
class PlanResult:
    baseline: Prediction  #: the rates file as it is
    scenario: Prediction  #: with --gpus/--tau/--delta/--what-if/--drop
    changes: list[str]
    ideal_step_s: float
    work_s: float | None = None
    wall: tuple[float, float | None, float | None] | None = None
    sweep_name: str | None = None
    sweep: list[SweepRow] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  #: why no recommendation (scenario)
    breaking: BreakingPoint | None = None


def plan(rates: Rates, *, gpus: int | None = None, tau_s: float | None = None,
         delta_s: float | None = None, what_ifs: list[str] | None = None,
         drops: list[str] | None = None, work_s: float | None = None,
         iterations: int | None = None, sweep: str | None = None) -> PlanResult:
    wis = [parse_what_if(t, rates) for t in what_ifs or []]
    changed = with_setup(apply_what_ifs(rates, wis, list(drops or [])), gpus, tau_s, delta_s)
    changes = ([f"--gpus {gpus}"] if gpus else []) + (
        [f"--tau {tau_s:g}s"] if tau_s else []) + (
        [f"--delta {delta_s:g}s"] if delta_s is not None else []) + [
        f"--what-if {w.text}" for w in wis] + [f"--drop {d}" for d in drops or []]
    if work_s is not None and iterations is not None:
        raise PlanError("give either --work or --iterations, not both")
    if iterations is not None:
        work_s = iterations * rates.ideal_step_s
    if work_s is not None and work_s <= 0:
        raise PlanError("the amount of work must be > 0, e.g. --work 30d or --iterations 1000000")
    res = PlanResult(predict(rates), predict(changed), changes, rates.ideal_step_s, work_s)
    res.refused = refusal(res.scenario)
    res.breaking = breaking_point(changed)
    if work_s is not None:
        res.wall = wall_for_work(changed, work_s)
    if sweep:
        name, values = parse_sweep(sweep)
        res.sweep_name = name
        for v in values:
            r = with_setup(changed, gpus=int(v)) if name == "gpus" else with_setup(
                changed, tau_s=v if name == "tau" else None, delta_s=v if name == "delta"
                else None)
            wall = wall_for_work(r, work_s)[0] if work_s is not None else None
            pred = predict(r)
            res.sweep.append(SweepRow(v, pred, wall, tuple(refusal(pred))))
    return res


def to_json(res: PlanResult) -> dict[str, Any]:
    scenario = res.scenario.to_json()
    if res.refused:  # no optimum: only the interval the rates file has
        scenario["checkpoint_interval"] = scenario["checkpoint_interval"][:1]
    out: dict[str, Any] = {"schema": "tormortem.plan/1", "changes": res.changes,
                           "baseline": res.baseline.to_json(), "scenario": scenario,
                           "no_recommendation": res.refused}
    if res.breaking is not None:
        b = res.breaking
        out["breaking_point"] = {"mtbf_below_restart_gpus": b.mtbf_below_restart_gpus,
                                 "tor_half_gpus": b.tor_half_gpus,
                                 "tor_half_capped": b.tor_half_capped}
    if res.work_s is not None and res.wall is not None:
        out["work"] = {"ideal_compute_s": res.work_s,
                       "iterations": res.work_s / res.ideal_step_s,
                       "expected_wall_s": _fin(res.wall[0]), "wall_low_s": _fin(res.wall[1]),
                       "wall_high_s": _fin(res.wall[2])}
    if res.sweep_name:
        out["sweep"] = {"parameter": res.sweep_name, "rows": [
            {"value": row.value, "tor": row.prediction.tor, "tor_low": row.prediction.tor_low,
             "tor_high": row.prediction.tor_high,
             "tor_first_order": row.prediction.tor_first_order,
             "failures_per_day": row.prediction.failures_per_day,
             "tau_opt_s": row.prediction.taus[1].tau_s if len(row.prediction.taus) > 1
             and math.isfinite(row.prediction.taus[1].tau_s) and not row.refused else None,
             "no_recommendation": list(row.refused),
             "expected_wall_s": _fin(row.wall_s)} for row in res.sweep]}
    return out


def _fin(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None
