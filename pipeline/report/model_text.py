"""Terminal rendering of a run's model summary (``pipeline.model.predicted.model_summary``)."""

from __future__ import annotations

from typing import Any

from pipeline.model.predicted import factor_name

STAGE_NAMES = {"lost": "lost work", "repair": "repair gap", "hang": "hang", "startup": "startup",
               "checkpoint": "checkpoint saves", "slow": "fail-slow"}


def render_model(m: dict[str, Any], approx: dict[str, str] | None = None) -> str:
    """``approx``: the run's approximate components; recovery stages among them make the
    fitted recovery times, and so the prediction, approximate too (said in one line)."""
    p = m["predicted"]
    if p["tor"] is None or p["steady_tor"] is None:
        return ("  Model (from this run's fitted rates): no finite prediction -- failures come "
                "far more often than a checkpoint interval of work")
    iv = (f" [{p['low']:.3f}, {p['high']:.3f}]" if p["low"] is not None and p["high"]
          is not None else "")
    real = m.get("realized_tor")
    lines = [f"  Model (from this run's fitted rates): predicted TOR {p['tor']:.3f}{iv} "
             f"vs realized {'undefined' if real is None else format(real, '.3f')}; steady state "
             f"{p['steady_tor']:.3f}",
             f"  {p['failures_per_day']:.2f} interruptions/day, mean restart "
             f"{p['mean_restart_s'] / 60:.1f} min; checkpoint every {m['tau_s'] / 60:.1f} min"
             + (f", TOR-maximising {m['tau_opt_s'] / 60:.1f} min" if m["tau_opt_s"] else "")]
    if m.get("no_recommendation"):
        lines.append("  No TOR-maximising interval or key factors: " + "; ".join(
            m["no_recommendation"]))
        return "\n".join(lines)
    lines += key_factor_lines(m["key_factors"])
    shaky = [k for k in ("startup", "hang", "repair") if k in (approx or {})]
    if shaky:
        lines.append(f"  ~ fitted from approximate {', '.join(shaky)} (see the notes above): "
                     "their factors and the prediction are approximate too")
    return "\n".join(lines)


def key_factor_lines(factors: list[dict[str, Any]], top: int = 5) -> list[str]:
    """Causes (categories, fail-slow) and stages on separate lines: they are two splits of
    the same lost time, so a ranking across both would count it twice. The "slow" stage is
    left out of the stages when a fail-slow cause is listed (it is the same time)."""
    def fmt(f: dict[str, Any], name: str) -> str:
        return f"{name} +{100 * f['gain_without']:.2f} / +{100 * f['gain_halved']:.2f} pp"

    causes = [f for f in factors if f.get("kind", "category") == "category"
              and f["gain_without"] > 0][:top]
    has_slow = any(f.get("mode") == "fail-slow" for f in causes)
    stages = [f for f in factors if f.get("kind") == "stage" and f["gain_without"] > 0
              and not (has_slow and f["name"] == "slow")][:top]
    out = []
    if causes:
        out.append("  Key causes (TOR gained if removed / halved): " + "; ".join(
            fmt(f, factor_name(f)) for f in causes))
    if stages:
        out.append("  Same time by stage: " + "; ".join(
            fmt(f, STAGE_NAMES.get(f["name"], f["name"])) for f in stages))
    return out
