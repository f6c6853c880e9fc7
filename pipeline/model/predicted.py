"""The model next to the realized run: what its own fitted rates predict.

``model_summary(rates_doc, run)`` gives, for one analysed run and its fitted rates:

* ``predicted``: the TOR the model expects for *this* run -- the ideal work it did (T_opt)
  over the expected wall time to do that work from its first start to its last end
  (``model.wall_for_work``: first startup and tail included, as in the realized TOR) -- with
  the 95% interval propagated from the rate intervals; and the steady-state TOR.
* ``vs_gpus`` / ``vs_tau``: TOR at other scales and checkpoint intervals (for plots), with
  the TOR-maximising interval and Young's and Daly's estimates.
* ``key_factors``: categories and stages, most costly first, with the TOR gained if each were
  removed or halved. Categories and stages are two splits of the same lost time (a fail-slow
  category *is* the "slow" stage): rank within one kind, never across both.
* ``no_recommendation``: why the TOR-maximising interval is withheld (``pipeline.model.
  limits``: failures faster than a restart, TOR about 0); ``tau_opt_s`` etc. are then None.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pipeline.model.core import process, tor_value
from pipeline.model.limits import refusal
from pipeline.model.predict import predict, wall_for_work
from pipeline.model.rates import from_json


def model_summary(rates_doc: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """See the module docstring; non-finite numbers (hopeless regimes) come out as None."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out: dict[str, Any] = _finite(_summary(rates_doc, run))
    return out


def _finite(x: Any) -> Any:
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def _summary(rates_doc: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    rates = from_json(rates_doc)
    pred = predict(rates)
    work = float(run["t_opt_s"])
    wall, lo_wall, hi_wall = wall_for_work(rates, work)
    tor = work / wall if wall > 0 else None
    gpus0 = rates.scale.gpus
    gpn = rates.scale.gpus_per_node
    gpus = sorted({max(gpn, int(gpus0 * f) // gpn * gpn) for f in
                   (0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128)})
    p = process(rates)
    taus = np.geomspace(max(60.0, rates.ideal_step_s), 8 * 3600.0, 24)
    refused = refusal(pred)
    choices = {} if refused else {t.name: t.tau_s for t in pred.taus}
    return {
        "predicted": {
            "tor": tor,
            "low": work / hi_wall if hi_wall else None,
            "high": work / lo_wall if lo_wall else None,
            "steady_tor": pred.tor, "steady_low": pred.tor_low, "steady_high": pred.tor_high,
            "first_order": pred.tor_first_order, "daly": pred.tor_daly,
            "interval_method": pred.interval_method,
            "failures_per_day": pred.failures_per_day,
            "mtbf_s": pred.mtbf_s if math.isfinite(pred.mtbf_s) else None,
            "mean_restart_s": pred.mean_restart_s,
        },
        "realized_tor": run["tor"],
        # predict(rates, g).tor, without the interval, factors and tau choices it also makes
        "vs_gpus": [[g, tor_value(process(rates, g))] for g in gpus],
        "vs_tau": [[float(t), float(tor_value(p, float(t)))] for t in taus],
        "tau_s": rates.checkpoint.tau_s,
        "tau_opt_s": _fin(choices.get("optimal (exact)")),
        "tau_young_s": _fin(choices.get("Young")),
        "tau_daly_s": _fin(choices.get("Daly")),
        "key_factors": [
            {"name": f.name, "kind": f.kind, "mode": f.mode, "wall_share": f.wall_share,
             "gain_without": f.gain_without, "gain_halved": f.gain_halved}
            for f in pred.factors],
        "no_recommendation": refused,
    }


def factor_name(f: dict[str, Any]) -> str:
    """A key factor's display name: fail-slow entries say so (the analysis cannot attribute
    an episode to a category, so its entry is "unknown")."""
    if f.get("mode") == "fail-slow":
        return "fail-slow (cause unknown)" if f["name"] == "unknown" else f"{f['name']} (fail-slow)"
    return str(f["name"])


def _fin(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def report_model(analysis: dict[str, Any]) -> dict[str, Any] | None:
    """The ``model`` input of pipeline.report (see its docstring) from the runs' models."""
    runs = [r for r in analysis["runs"] if r.get("model")]
    if not runs:
        return None

    def pred(m: dict[str, Any]) -> dict[str, Any]:
        p = m["predicted"]
        return {"tor": p["tor"], "low": p["low"], "high": p["high"], "level": 0.95}

    first = runs[0]["model"]
    gpus = max((a.get("gpus") or 0 for a in runs[0]["attempts"]), default=0) or None
    return {
        "predicted": pred(first),
        "runs": {r["run"]: pred(r["model"]) for r in runs},
        "vs_gpus": first["vs_gpus"], "gpus": gpus,
        "vs_tau": first["vs_tau"], "tau_s": first["tau_s"], "tau_opt_s": first["tau_opt_s"],
        # causes only: the stages split the same lost time another way (no double counting)
        "key_factors": [[factor_name(f), f["gain_without"]] for f in first["key_factors"]
                        if f.get("kind", "category") == "category"],
        "note": "predicted from the run's own fitted rates (rates.json): the expected wall "
                "time of its ideal work, first startup and tail included; interval propagated "
                "from the exact 95% rate intervals; key factors by cause (failure category or "
                "fail-slow), each the TOR gained if its failures were removed",
    }
