"""Template data for the optional inputs: fitted rates (``tormortem.rates/1``) and the model
predictions (shape in ``pipeline.report``'s docstring). Absent inputs give ``None``."""

from __future__ import annotations

from typing import Any

from pipeline.report import plots
from pipeline.units import human


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _pred(p: Any) -> dict[str, Any] | None:
    if not isinstance(p, dict) or _num(p.get("tor")) is None:
        return None
    lo, hi = _num(p.get("low")), _num(p.get("high"))
    lvl = _num(p.get("level"))
    return {"tor": float(p["tor"]), "low": lo, "high": hi,
            "level": round(100 * lvl) if lvl is not None and lvl <= 1 else lvl}


def predicted_for(model: dict[str, Any] | None, run: str) -> dict[str, Any] | None:
    """The model's prediction for ``run``: ``model["runs"][run]`` if given, else
    ``model["predicted"]``."""
    if not model:
        return None
    per_run = model.get("runs")
    if isinstance(per_run, dict) and run in per_run:
        return _pred(per_run[run])
    return _pred(model.get("predicted"))


def _points(v: Any) -> list[list[float]]:
    if not isinstance(v, list):
        return []
    return [[float(x) for x in p] for p in v
            if isinstance(p, list | tuple) and len(p) >= 2 and all(_num(x) is not None for x in p)]


def model_context(model: dict[str, Any] | None, realized: dict[str, float | None]
                  ) -> dict[str, Any] | None:
    if not model:
        return None
    vs_gpus, vs_tau = _points(model.get("vs_gpus")), _points(model.get("vs_tau"))
    tau_opt, tau_now, gpus_now = (_num(model.get(k)) for k in ("tau_opt_s", "tau_s", "gpus"))
    facs = [(str(f[0]), float(f[1])) for f in model.get("key_factors") or []
            if isinstance(f, list | tuple) and len(f) >= 2 and _num(f[1]) is not None]
    facs.sort(key=lambda f: -f[1])
    first_real = next((v for v in realized.values() if v is not None), None)
    compare = []
    for run, tor in realized.items():
        p = predicted_for(model, run)
        inside = None
        if p and tor is not None and p["low"] is not None and p["high"] is not None:
            inside = p["low"] <= tor <= p["high"]
        compare.append({"run": run, "realized": tor, "predicted": p, "inside": inside})
    return {
        "note": str(model.get("note") or ""), "compare": compare,
        "fig_gpus": plots.curve(vs_gpus, xlabel="GPUs (log scale)", logx=True,
                                title="TOR vs scale", now_x=gpus_now, realized=first_real)
        if vs_gpus else None,
        "fig_tau": plots.curve([[p[0] / 60.0, *p[1:]] for p in vs_tau],
                               xlabel="checkpoint interval τ (minutes, log scale)", logx=True,
                               title="TOR vs checkpoint interval",
                               mark_x=tau_opt / 60.0 if tau_opt else None,
                               mark_label=f"optimum τ* = {human(tau_opt)}" if tau_opt else "",
                               now_x=tau_now / 60.0 if tau_now else None)
        if vs_tau else None,
        "tau_opt": human(tau_opt) if tau_opt else None,
        "tau_now": human(tau_now) if tau_now else None,
        "factors": [{"name": n, "gain": g} for n, g in facs],
        "fig_factors": plots.factors(facs) if facs else None,
    }


def _dist(d: Any) -> str:
    if not isinstance(d, dict) or _num(d.get("mean_s")) is None:
        return "-"
    return human(float(d["mean_s"]))


def rates_context(rates: dict[str, Any] | None) -> dict[str, Any] | None:
    """Fitted rates as rows; every rate also per 1,000 node-days."""
    if not rates:
        return None
    scale = rates.get("scale") or {}
    gpn = _num(scale.get("gpus_per_node")) or 0.0
    rows = []
    for c in rates.get("categories") or []:
        if "rate_per_gpu_hour" in c:
            per_gpu_h = float(c["rate_per_gpu_hour"])
            per_knd_factor = gpn * 24 * 1000
        else:
            per_gpu_h = float(c.get("rate_per_node_hour", 0.0)) / gpn if gpn else 0.0
            per_knd_factor = gpn * 24 * 1000
        ci = c.get("rate_ci95")
        if ci and "rate_per_node_hour" in c and gpn:
            ci = [x / gpn for x in ci]
        rows.append({
            "category": c.get("category", "?"), "mode": c.get("mode", "-"),
            "color": plots.category_hex(str(c.get("category", "?"))),
            "count": c.get("count"),
            "per_gpu_h": f"{per_gpu_h:.2e}" + (f" [{ci[0]:.2e}, {ci[1]:.2e}]" if ci else ""),
            "per_knd": f"{per_gpu_h * per_knd_factor:.3g}" + (
                f" [{ci[0] * per_knd_factor:.3g}, {ci[1] * per_knd_factor:.3g}]" if ci else ""),
            "hang": _dist(c.get("hang")), "repair": _dist(c.get("repair")),
            "startup": _dist(c.get("startup")),
            "rho": f"{c['rho']:.2f}" if _num(c.get("rho")) is not None else "-",
            "slow": _dist(c.get("slow_duration")),
        })
    ck = rates.get("checkpoint") or {}
    return {
        "provenance": ", ".join(f"{k}: {v}" for k, v in (rates.get("provenance") or {}).items()),
        "gpus": scale.get("gpus"), "gpus_per_node": scale.get("gpus_per_node"),
        "tau": human(float(ck["tau_s"])) if _num(ck.get("tau_s")) is not None else "-",
        "delta": _dist(ck.get("delta")), "rows": rows,
    }
