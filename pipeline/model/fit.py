"""Fitting failure rates, recovery times and checkpoint parameters from an analysed run.

Writes the versioned rates JSON (``tormortem.rates/1``,
``pipeline/model/schemas/rates.schema.json``) that the model, ``plan`` and
``simulate --rates`` read. Choices, written down:

* **Exposure** is the time attempts were *at risk*: from start to the last progress line (the
  attempt's duration minus its hang/tail), times its GPUs (GPU-hours) or nodes (node-days).
  Time spent hung, being repaired or in the final save cannot produce a new interruption.
* **Rates**: lambda_c = n_c / exposure, per GPU-hour for categories that scale with GPUs and
  per node-hour for those that scale with nodes (``SCALES``); the 95% interval is the exact
  (Garwood) Poisson interval: chi2(0.025, 2n)/2 and chi2(0.975, 2n+2)/2 over the exposure. Also
  given per 1,000 node-days, the unit of Meta's RSC study. Zero events give [0, 3.69/exposure].
* **Recovery times** per category: hang, repair gap, next startup -- mean, median, p90; the
  distribution written for the model/simulator is lognormal with the sample's log-sd (fixed when
  fewer than two values).
* **Time to interruption** per attempt (hours at risk) is right-censored when the attempt ended
  without a failure (the final attempt, or one ended by the scheduler on purpose: TIMEOUT,
  CANCELLED, preemption); a Weibull is fitted by maximum likelihood with censoring, with a 95%
  Wald interval for the shape k on the log scale (k ~ 1: a flat hazard, as the model assumes).
* **Checkpointing**: tau = median iterations between consecutive saves x t*; delta = the mean
  blocking save time; load = Megatron's load-checkpoint timer when logged.
* **Fail-slow**: episodes per GPU-hour (mu), mean duration S and throughput ratio rho. The
  rate counts the episodes whose start was seen over the steady iterating time (episodes
  arrive in wall time; one already under way at a restart began while nothing was watching).

Small samples give wide intervals, never errors.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special

from pipeline.model.rates import SCHEMA_ID, validate

#: what each category's rate grows with (per GPU or per node)
SCALES = {
    "gpu_hardware": "gpu", "gpu_memory": "gpu", "gpu_driver": "gpu", "nvlink": "gpu",
    "nccl_error": "gpu", "nccl_timeout": "gpu", "oom_gpu": "gpu", "user_code": "gpu",
    "network": "node", "node_failure": "node", "storage": "node", "oom_host": "node",
    "preemption": "node", "scheduler": "node", "unknown": "gpu",
}
#: interruptions the scheduler made on purpose: not failures for time-to-failure fitting
PLANNED = {"scheduler", "preemption"}


def poisson_ci(n: int, exposure: float, level: float = 0.95) -> tuple[float, float]:
    """Exact (Garwood) interval for a Poisson rate with ``n`` events in ``exposure``."""
    if exposure <= 0:
        return (0.0, math.inf)
    a = 1.0 - level
    lo = 0.0 if n == 0 else _chi2_ppf(a / 2, 2 * n) / 2
    hi = _chi2_ppf(1 - a / 2, 2 * n + 2) / 2
    return (lo / exposure, hi / exposure)


def _chi2_ppf(q: float, df: int) -> float:
    """The chi-square quantile: scipy.stats.chi2.ppf computes 2 * gammaincinv(df / 2, q);
    scipy.special alone spares importing scipy.stats (half a second)."""
    return float(2 * special.gammaincinv(df / 2, q)) if df > 0 else math.nan


def summary(values: list[float]) -> dict[str, float | int | None]:
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], float)
    if v.size == 0:
        return {"n": 0, "mean_s": None, "median_s": None, "p90_s": None}
    return {"n": int(v.size), "mean_s": float(v.mean()), "median_s": float(np.median(v)),
            "p90_s": float(np.quantile(v, 0.9))}


def _dist(values: list[float]) -> dict[str, Any]:
    v = np.asarray([x for x in values if x is not None and x > 0], float)
    if v.size == 0:
        return {"mean_s": 0.0, "dist": "fixed"}
    if v.size < 2:
        return {"mean_s": float(v.mean()), "dist": "fixed"}
    return {"mean_s": float(v.mean()), "dist": "lognormal",
            "sigma": float(np.std(np.log(v), ddof=1))}


#: the largest log Weibull shape the fit explores (k ~ 4.9e8)
MAX_LOG_SHAPE = 20.0


def weibull_censored(t: list[float], failed: list[bool]) -> dict[str, Any]:
    """Weibull MLE with right-censoring: shape k, scale (hours), 95% interval for k."""
    tt = np.asarray(t, float)
    d = np.asarray(failed, bool)
    keep = tt > 0
    tt, d = tt[keep], d[keep]
    n_fail = int(d.sum())
    out: dict[str, Any] = {"attempts": int(tt.size), "failures": n_fail,
                           "censored": int(tt.size - n_fail), "shape": None, "scale_h": None,
                           "shape_ci95": None, "exponential_rate_per_h": None}
    if tt.size == 0:
        return out
    out["exponential_rate_per_h"] = n_fail / float(tt.sum())
    if n_fail < 2:
        return out
    logt = np.log(tt)
    if np.ptp(logt[d]) < 1e-9 and not (logt[~d] > logt[d].max() + 1e-9).any():
        # every failure after the same time and nothing survived longer: the likelihood
        # grows without end as the shape does (a step at that time), so there is no shape to
        # report (two identical failure times raised an OverflowError at 1e-3 h)
        return out

    def nll(p: np.ndarray) -> float:  # p = (log k, log scale)
        if p[0] > MAX_LOG_SHAPE:
            return math.inf  # k > ~5e8: no failure data supports it; exp(z) would overflow
        k = math.exp(p[0])
        z = np.minimum((logt - p[1]) * k, 700.0)  # exp(700) ~ 1e304: finite, and worse
        return -float(np.sum(d * (p[0] - p[1] + (k - 1) * (logt - p[1]))) - np.sum(np.exp(z)))

    x0 = np.array([0.0, math.log(float(tt.sum()) / n_fail)])
    res = optimize.minimize(nll, x0, method="Nelder-Mead",
                            options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 4000})
    p = res.x
    h = 1e-4
    e1, e2 = np.array([h, 0.0]), np.array([0.0, h])
    f0 = nll(p)
    d2 = (nll(p + e1) - 2 * f0 + nll(p - e1)) / h**2
    d2l = (nll(p + e2) - 2 * f0 + nll(p - e2)) / h**2
    dx = (nll(p + e1 + e2) - nll(p + e1 - e2) - nll(p - e1 + e2) + nll(p - e1 - e2)) / (4 * h**2)
    cov_ok = False
    try:
        cov = np.linalg.inv(np.array([[d2, dx], [dx, d2l]]))
        se = math.sqrt(cov[0, 0]) if cov[0, 0] > 0 else math.nan
        cov_ok = math.isfinite(se)
    except np.linalg.LinAlgError:
        se = math.nan
    out["shape"] = math.exp(p[0])
    out["scale_h"] = math.exp(p[1])
    if cov_ok:
        out["shape_ci95"] = [math.exp(p[0] - 1.96 * se), math.exp(p[0] + 1.96 * se)]
    return out


def fit(analysis_run: dict[str, Any], attempts: list[dict[str, Any]],
        saves: list[int], load_s: list[float], gpus_per_node_default: int = 8,
        provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """Rates JSON for one analysed run.

    ``analysis_run``: a run of ``analyze``'s JSON; ``attempts``: per attempt ``attempt``,
    ``gpus``, ``node_count``, ``at_risk_s``, ``interrupted`` (bool) and ``category`` (root
    cause, for interrupted attempts); ``saves``: iterations saved; ``load_s``: load timers."""
    r = analysis_run
    t_star = float(r["ideal_step_s"])
    gpus_l = [a["gpus"] for a in attempts if a.get("gpus")]
    nodes_l = [a["node_count"] for a in attempts if a.get("node_count")]
    gpus = int(max(gpus_l)) if gpus_l else None
    nodes = int(max(nodes_l)) if nodes_l else None
    if gpus and nodes:
        gpn = max(1, gpus // nodes)
    else:
        gpn = gpus_per_node_default
        gpus = gpus or (nodes or 1) * gpn
        nodes = nodes or max(1, gpus // gpn)
    gpu_h = node_h = 0.0
    for a in attempts:
        g = a.get("gpus") or gpus
        nd = a.get("node_count") or max(1, g // gpn)
        gpu_h += a["at_risk_s"] / 3600.0 * g
        node_h += a["at_risk_s"] / 3600.0 * nd
    ints = r["interruptions"]
    lost_total = sum(i["lost_s"] for i in ints) or 0.0
    cats: list[dict[str, Any]] = []
    for cat in sorted({i["category"] for i in ints}):
        mine = [i for i in ints if i["category"] == cat]
        scales = SCALES.get(cat, "gpu")
        expo_h = gpu_h if scales == "gpu" else node_h
        n = len(mine)
        lo, hi = poisson_ci(n, expo_h)
        nd_lo, nd_hi = poisson_ci(n, node_h / 24.0 / 1000.0)
        c: dict[str, Any] = {
            "category": cat, "mode": "fail-stop", "scales_with": scales,
            "rate_per_gpu_hour" if scales == "gpu" else "rate_per_node_hour": n / expo_h
            if expo_h > 0 else 0.0,
            "count": n, "exposure_gpu_hours": gpu_h, "exposure_node_hours": node_h,
            "rate_ci95": [lo, hi],
            "hang": _dist([i["hang_s"] for i in mine]),
            "repair": _dist([i["repair_s"] for i in mine]),
            "startup": _dist([i["startup_s"] for i in mine]),
            "stats": {
                "per_1000_node_days": n / (node_h / 24.0 / 1000.0) if node_h > 0 else None,
                "per_1000_node_days_ci95": [nd_lo, nd_hi],
                "hang": summary([i["hang_s"] for i in mine]),
                "repair": summary([i["repair_s"] for i in mine]),
                "startup": summary([i["startup_s"] for i in mine]),
                "lost": summary([i["lost_s"] for i in mine]),
                "share_of_lost": sum(i["lost_s"] for i in mine) / lost_total
                if lost_total else None,
                "cost_s": sum(i["cost_s"] for i in mine),
            },
        }
        if expo_h > 0 and n:
            c["mean_interval_s"] = expo_h * 3600.0 / n / (gpus if scales == "gpu" else nodes)
        cats.append(c)
    eps = r.get("slow_episodes", [])
    n_slow, slow_h = _fail_slow_counts(r, attempts, gpus, gpu_h)
    if eps and slow_h > 0:
        dur = [(_ts(e["end"]) - _ts(e["start"])) for e in eps]
        cats.append({
            "category": "unknown", "mode": "fail-slow", "scales_with": "gpu",
            "rate_per_gpu_hour": n_slow / slow_h if slow_h else 0.0, "count": n_slow,
            "exposure_gpu_hours": slow_h, "rate_ci95": list(poisson_ci(n_slow, slow_h)),
            "rho": float(min(0.999, max(1e-3, np.mean([e["ratio"] for e in eps])))),
            "slow_duration": _dist(dur),
            "note": "fail-slow episodes found from step times (cause not attributed)",
        })
    diffs = np.diff(sorted(set(saves)))
    save_every = float(np.median(diffs)) if diffs.size else None
    n_saves = max(len(set(saves)), 1)
    # max(0, .): a run with no save time has ckpt_save 0 up to float rounding (-1e-8 s)
    delta_mean = max(0.0, (r["components"]["ckpt_save"] or 0.0) / n_saves) if saves else 0.0
    parts = r["attempts"]
    doc: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "provenance": {"source": "tormortem fit", "run": r["run"], "start": r["start"],
                       "end": r["end"], **(provenance or {})},
        "scale": {"gpus": int(gpus), "gpus_per_node": int(gpn)},
        "ideal_step_s": t_star,
        "checkpoint": {
            "tau_s": save_every * t_star if save_every else max(r["t_opt_s"], t_star),
            "delta": {"mean_s": delta_mean, "dist": "fixed"},
            "load_s": float(np.mean(load_s)) if load_s else 0.0,
        },
        "first_startup": {"mean_s": float(parts[0]["startup_s"]), "dist": "fixed"},
        "tail": {"mean_s": float(parts[-1]["tail_s"]), "dist": "fixed"},
        "categories": cats,
        "fit": {
            "exposure_gpu_hours": gpu_h, "exposure_node_days": node_h / 24.0,
            "interruptions": len(ints),
            "time_to_interruption": weibull_censored(
                [a["at_risk_s"] / 3600.0 for a in attempts],
                [bool(a.get("interrupted")) and a.get("category") not in PLANNED
                 for a in attempts]),
            "save_every_iterations": save_every,
            "fail_slow": {"episodes": len(eps), "episodes_started": n_slow,
                          "exposure_gpu_hours": slow_h,
                          "mu_per_gpu_hour": n_slow / slow_h if slow_h else None},
        },
    }
    if (r.get("iterations_net") or 0) >= 1:  # (net 0 or below: lines of several runs)
        doc["target_iterations"] = int(r["iterations_net"])
    validate(doc, "fitted rates")
    return doc


def _fail_slow_counts(r: dict[str, Any], attempts: list[dict[str, Any]], gpus: int,
                     at_risk_gpu_h: float) -> tuple[int, float]:
    """Fail-slow episodes whose start was seen and the GPU-hours in which a start could be
    seen (steady iterating time, ``analyze``'s ``fail_slow_exposure``): episodes arrive in
    wall time, so one already under way when an attempt started (it began in a repair gap)
    is not counted against the time that was watched. Older analyses: every episode over the
    at-risk exposure."""
    fx = r.get("fail_slow_exposure")
    if not fx:
        return len(r.get("slow_episodes", [])), at_risk_gpu_h
    g = {a["attempt"]: a.get("gpus") or gpus for a in attempts}
    hours = sum(s * g.get(k, gpus) for k, s in fx["per_attempt_s"].items()) / 3600.0
    return int(fx["episodes_started"]), hours


def _ts(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def fit_dir(out: Any, analysis: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Rates per run of an analysed directory (``analyze`` wrote its tables there). Runs
    without progress lines (no t*) are left out: there is nothing to express rates against."""
    from pipeline.ingest.run import DB_NAME
    from pipeline.ingest.sink import connect

    con = connect(out / DB_NAME, read_only=True)
    try:
        docs: dict[str, dict[str, Any]] = {}
        for r in analysis["runs"]:
            if not (r.get("ideal_step_s") or 0) > 0 or not r["attempts"]:
                continue  # no progress lines: no healthy step time, nothing to scale rates by
            cause = {i["attempt"]: i["category"] for i in r["interruptions"]}
            attempts = []
            for a in r["attempts"]:
                dur = _ts(a["end"]) - _ts(a["start"])
                attempts.append({
                    "attempt": a["attempt"], "gpus": a.get("gpus"),
                    "node_count": len(a.get("nodes") or []) or None,
                    "at_risk_s": max(0.0, dur - a["hang_s"] - a["tail_s"]),
                    "interrupted": a["attempt"] in cause, "category": cause.get(a["attempt"])})
            if r["interruptions"] and sum(a["at_risk_s"] for a in attempts) <= 0:
                r["rates_undefined"] = (
                    f"its {len(attempts)} attempts were at risk for 0 s (each one's lines share "
                    "a stamp, or it hung from its start): no failure rate can be expressed")
                continue
            saves = [int(x[0]) for x in con.execute(
                "SELECT DISTINCT iteration FROM attempt_events WHERE run = ? AND iteration IS "
                "NOT NULL AND kind IN ('ckpt_save_end', 'ckpt_save_start')", [r["run"]]
            ).fetchall()]
            jobs = sorted({a["job_id"] for a in r["attempts"] if a.get("job_id")})
            loads = [float(x[0]) for x in con.execute(
                "SELECT value FROM events WHERE kind = 'ckpt_load_time' AND value IS NOT NULL "
                "AND list_contains(?, job_id)", [jobs]).fetchall()]
            docs[r["run"]] = fit(r, attempts, saves, loads)
        return docs
    finally:
        con.close()
