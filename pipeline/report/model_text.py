"""Terminal rendering of a run's model summary (``pipeline.model.predicted.model_summary``)."""

from __future__ import annotations

from typing import Any


def render_model(m: dict[str, Any]) -> str:
    p = m["predicted"]
    if p["tor"] is None or p["steady_tor"] is None:
        return ("  Model (from this run's fitted rates): no finite prediction -- failures come "
                "far more often than a checkpoint interval of work")
    iv = (f" [{p['low']:.3f}, {p['high']:.3f}]" if p["low"] is not None and p["high"]
          is not None else "")
    lines = [f"  Model (from this run's fitted rates): predicted TOR {p['tor']:.3f}{iv} "
             f"vs realized {m['realized_tor']:.3f}; steady state {p['steady_tor']:.3f}",
             f"  {p['failures_per_day']:.2f} interruptions/day, mean restart "
             f"{p['mean_restart_s'] / 60:.1f} min; checkpoint every {m['tau_s'] / 60:.1f} min"
             + (f", TOR-maximising {m['tau_opt_s'] / 60:.1f} min" if m["tau_opt_s"] else "")]
    top = [f for f in m["key_factors"] if f["gain_without"] > 0][:5]
    if top:
        lines.append("  Key factors (TOR gained if removed / halved): " + "; ".join(
            f"{f['name']}{' (fail-slow)' if f['mode'] == 'fail-slow' else ''} "
            f"+{100 * f['gain_without']:.2f} / +{100 * f['gain_halved']:.2f} pp"
            for f in top))
    return "\n".join(lines)
