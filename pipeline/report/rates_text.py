"""Terminal rendering of fitted rates (``tormortem fit``)."""

from __future__ import annotations

from typing import Any

from pipeline.report.terminal import table
from pipeline.units import human


def _sci(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def render_rates(doc: dict[str, Any]) -> str:
    f = doc["fit"]
    lines = [f"Fitted rates for run {doc['provenance'].get('run')} "
             f"({doc['scale']['gpus']:,} GPUs, {doc['scale']['gpus_per_node']} per node; "
             f"exposure {f['exposure_gpu_hours']:,.0f} GPU-hours = "
             f"{f['exposure_node_days']:,.1f} node-days at risk)"]
    rows = []
    for c in doc["categories"]:
        per_gpu = c.get("rate_per_gpu_hour")
        rate = per_gpu if per_gpu is not None else c["rate_per_node_hour"]
        unit = "/GPU-h" if per_gpu is not None else "/node-h"
        lo, hi = c["rate_ci95"]
        st = c.get("stats", {})
        nd = st.get("per_1000_node_days")
        nd_ci = st.get("per_1000_node_days_ci95") or [None, None]
        rows.append([
            c["category"], c["mode"], c.get("count"), f"{_sci(rate)} {unit}",
            f"[{_sci(lo)}, {_sci(hi)}]",
            "-" if nd is None else f"{nd:.2f} [{_sci(nd_ci[0])}, {_sci(nd_ci[1])}]",
            c["scales_with"],
            human(st["hang"]["mean_s"]) if st.get("hang", {}).get("mean_s") is not None else "-",
            human(st["repair"]["mean_s"]) if st.get("repair", {}).get("mean_s") is not None
            else "-",
            human(st["startup"]["mean_s"]) if st.get("startup", {}).get("mean_s") is not None
            else "-",
        ])
    if rows:
        lines.append(table(["category", "mode", "n", "rate", "95% (exact)", "per 1k node-days",
                            "scales", "hang", "repair", "startup"], rows, {2}))
    else:  # no interruption: the rates are unknown, not 0; say what the exposure bounds
        gh = f["exposure_gpu_hours"]
        bound = f"; 95% upper bound on the total: {3.689 / gh:.3g} /GPU-h (3.689 / exposure)" \
            if gh else ""
        lines.append(f"No interruption in this run: 0 events in {gh:,.0f} GPU-hours{bound}. "
                     "No per-category rate can be fitted; plan needs rates from a run with "
                     "failures (or --what-if CATEGORY.rate=...).")
    w = f["time_to_interruption"]
    if w["shape"] is not None:
        ci = w["shape_ci95"]
        lines.append(f"Time to interruption (censored Weibull): shape k = {w['shape']:.2f}"
                     + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
                     + f", scale {w['scale_h']:.1f} h over {w['attempts']} attempts "
                     f"({w['censored']} censored); k near 1 means a flat hazard")
    fs = f.get("fail_slow") or {}
    slow = [c for c in doc["categories"] if c["mode"] == "fail-slow"]
    if fs.get("episodes"):
        c = slow[0] if slow else {}
        lines.append(
            f"Fail-slow: {fs['episodes']} episodes, {fs.get('episodes_started', '-')} of them "
            f"began while training was watched, over "
            f"{fs.get('exposure_gpu_hours') or 0:,.0f} GPU-hours watched outside episodes"
            + (f"; mean duration {human(c['slow_duration']['mean_s'])}, throughput ratio "
               f"rho {c['rho']:.2f}" if c.get("slow_duration") else ""))
    ck = doc["checkpoint"]
    lines.append(f"Checkpointing: tau {human(ck['tau_s'])} of compute between saves, "
                 f"delta {human(ck['delta']['mean_s'])} per save, load {human(ck['load_s'])}")
    return "\n".join(lines)


RATE_COLUMNS = ["category", "mode", "scales_with", "count", "rate", "rate_unit", "ci95_low",
                "ci95_high", "per_1000_node_days", "hang_mean_s", "repair_mean_s",
                "startup_mean_s", "slow_duration_mean_s", "rho"]


def rates_rows(doc: dict[str, Any]) -> list[list[Any]]:
    """One row per category entry (``fit --format csv``)."""
    rows = []
    for c in doc["categories"]:
        per_gpu = c.get("rate_per_gpu_hour")
        lo, hi = c.get("rate_ci95") or [None, None]
        mean = {k: (c.get(k) or {}).get("mean_s") for k in ("hang", "repair", "startup",
                                                            "slow_duration")}
        rows.append([c["category"], c["mode"], c["scales_with"], c.get("count"),
                     per_gpu if per_gpu is not None else c.get("rate_per_node_hour"),
                     "per GPU-hour" if per_gpu is not None else "per node-hour", lo, hi,
                     (c.get("stats") or {}).get("per_1000_node_days"), mean["hang"],
                     mean["repair"], mean["startup"], mean["slow_duration"], c.get("rho")])
    return rows
