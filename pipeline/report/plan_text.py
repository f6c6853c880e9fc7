"""Terminal rendering of ``plan``'s result (``pipeline.model.plan.PlanResult``)."""

from __future__ import annotations

import math

from pipeline.model.limits import describe
from pipeline.model.plan import PlanResult
from pipeline.model.predict import Factor, Prediction
from pipeline.report.terminal import table
from pipeline.units import human


def _ci(p: Prediction) -> str:
    if p.tor_low is None or p.tor_high is None:
        return "(no interval: the rates carry no rate_ci95)"
    return f"(95%: {p.tor_low:.3f} - {p.tor_high:.3f}, propagated from rate_ci95)"


def _pts(x: float) -> str:
    return f"{100 * x:+.2f}"


def render(res: PlanResult, source: str) -> str:
    s, b = res.scenario, res.baseline
    out = [f"Rates: {source}; {s.gpus:,} GPUs on {s.nodes:,} nodes",
           f"Scenario: {', '.join(res.changes) if res.changes else 'as in the file'}", "",
           f"Predicted TOR  {s.tor:.3f}  {_ci(s)}",
           f"  first order {s.tor_first_order:.3f} ({_pts(s.first_order_drift)} pts), "
           f"Daly form (restart at risk) {s.tor_daly:.3f}"
           + ("" if not res.changes else f"; the file as it is: {b.tor:.3f}"),
           f"  fail-stop {s.failures_per_day:.2f}/day (MTBF {human(s.mtbf_s)}), mean restart "
           f"R {human(s.mean_restart_s)}, tau {human(s.tau_s)}, delta {human(s.delta_s)}, "
           f"fail-slow factor {s.slow_factor:.4f}"]
    if res.work_s is not None and res.wall is not None:
        w, lo, hi = res.wall
        band = f" (95%: {human(lo)} - {human(hi)})" if lo is not None and hi is not None else ""
        out.append(f"Work: {human(res.work_s)} of ideal compute "
                   f"({res.work_s / res.ideal_step_s:,.0f} iterations) -> expected wall "
                   f"{human(w)}{band}")
    if s.failures_per_day <= 0 and s.slow_factor >= 1.0:
        out.append("  No failure rate in the rates (the run they were fitted from saw no "
                   "interruption): the rates of failure are unknown, not zero, so this TOR "
                   "counts none and no breaking point is given; fit a longer run, or add rates "
                   "with --what-if")
    elif res.breaking is not None:
        out.append(describe(res.breaking))
    if res.refused:
        out += ["", "No recommendation (no optimum checkpoint interval, no key factors):",
                *(f"  - {r}" for r in res.refused)]
        if s.mtbf_s <= s.mean_restart_s:
            out.append("  Plan at a scale or with rates where failures are rarer than a "
                       "restart (see the breaking point above, or --sweep gpus=...).")
    else:
        rows = [[t.name, human(t.tau_s), _iters(t.tau_s, res.ideal_step_s), f"{t.tor:.4f}",
                 _pts(t.tor - s.tor)] for t in s.taus]
        out += ["", "Checkpoint interval (tau = compute between saves):",
                table(["choice", "tau", "iterations", "TOR", "vs now (pts)"], rows,
                      {1, 2, 3, 4})]
        if len(s.taus) == 1:
            out.append("  No other interval: the rates give no checkpoint save time (delta 0, "
                       "no save was seen); give it with --delta (e.g. --delta 40s).")
        out += ["", "Key factors by category (TOR points gained if removed / halved):",
                _factor_table(s.categories, True), "",
                "Key factors by stage:", _factor_table(s.stages, False)]
    if res.sweep:
        out += ["", f"Sweep over {res.sweep_name}:", _sweep_table(res)]
        bad = next((r for r in res.sweep if r.refused), None)
        if bad is not None:
            out.append(f"  * no optimum: {bad.refused[0]}")
    return "\n".join(out)


def _iters(tau: float, tstar: float) -> str:
    return f"{tau / tstar:,.0f}" if math.isfinite(tau) else "-"


def _factor_table(fs: tuple[Factor, ...], cats: bool) -> str:
    rows = []
    for f in fs:
        row: list[object] = [f.name]
        if cats:
            row += [f.mode, f"{f.events_per_day:.3f}" if f.events_per_day is not None else "-"]
        row += [f"{100 * f.wall_share:.2f}%", f"{f.tor_without:.4f}", _pts(f.gain_without),
                f"{f.tor_halved:.4f}", _pts(f.gain_halved)]
        rows.append(row)
    head = ["category", "mode", "per day"] if cats else ["stage"]
    n = len(head)
    return table([*head, "wall share", "TOR w/o", "gain", "TOR halved", "gain"], rows,
                 set(range(n - 1 if cats else n, n + 5)))


def _sweep_table(res: PlanResult) -> str:
    name = res.sweep_name or ""
    rows = []
    for r in res.sweep:
        p = r.prediction
        ci = f"{p.tor_low:.3f}-{p.tor_high:.3f}" if p.tor_low is not None and \
            p.tor_high is not None else "-"
        opt = p.taus[1] if len(p.taus) > 1 else p.taus[0]
        val = f"{int(r.value):,}" if name == "gpus" else human(r.value)
        best = ["*", "*"] if r.refused else [human(opt.tau_s), f"{opt.tor:.4f}"]
        row: list[object] = [val, f"{p.tor:.4f}", ci, f"{p.tor_first_order:.4f}",
                             f"{p.failures_per_day:.2f}", human(p.mtbf_s), *best]
        if res.work_s is not None:
            row.append(human(r.wall_s) if r.wall_s is not None else "-")
        rows.append(row)
    head = [name, "TOR", "95%", "1st order", "fail/day", "MTBF", "best tau", "TOR@best"]
    if res.work_s is not None:
        head.append("wall")
    return table(head, rows, set(range(len(head))))
