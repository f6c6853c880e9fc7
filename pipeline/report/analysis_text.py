"""The terminal report of ``analyze``: per run, where the time went and why."""

from __future__ import annotations

import textwrap
from typing import Any

from pipeline.report.terminal import table
from pipeline.units import human

LABELS = {
    "t_opt": "T_opt (ideal work)", "slow": "slow (fail-slow + jitter)",
    "lost": "lost work (rolled back)", "ckpt_save": "checkpoint saves",
    "startup": "startup (init, load)", "hang": "hang (until detected)",
    "repair": "repair gap (requeue)", "tail": "tail (final save, exit)",
}


def _pct(x: float, total: float) -> str:
    return f"{100 * x / total:.2f}%" if total else "-"


def render_run(r: dict[str, Any], top: int = 10) -> str:
    t_obs = r["t_obs_s"]
    n_int = len(r["interruptions"])
    tor = (f"realized TOR {r['tor']:.4f}" if r["tor"] is not None else
           f"TOR undefined ({r.get('tor_undefined') or 'no progress'})")
    step = (f"{r['ideal_step_s']:.3f} s" if r["ideal_step_s"] == r["ideal_step_s"]
            else "unknown")
    lines = [
        f"Run {r['run']}: {r['start']} -> {r['end']} ({len(r['attempts'])} attempts, "
        f"{n_int} interruptions; fidelity: {r['fidelity']})",
        f"  T_obs {human(t_obs)} ({t_obs:,.0f} s)   T_opt {human(r['t_opt_s'])}   {tor}",
        f"  ideal step t* {step}   iterations {r['start_iteration']:,} -> "
        f"{r['final_iteration']:,} ({r['iterations_net']:,} net)",
        "",
        "  Where the time went:",
    ]
    rows: list[list[Any]] = []
    for k, v in r["components"].items():
        rows.append([LABELS[k], f"{v:,.1f}", human(v), _pct(v, t_obs)])
    rows.append(["total (= T_obs)", f"{sum(r['components'].values()):,.1f}",
                 human(sum(r["components"].values())), _pct(t_obs, t_obs)])
    lines += _indent(table(["component", "seconds", "", "share"], rows, {1, 3}))
    split = r["slow_split"]
    lines.append(f"  slow = {split['fail_slow_episodes']:,.1f} s in "
                 f"{len(r['slow_episodes'])} fail-slow episodes + {split['jitter']:,.1f} s "
                 "jitter")
    if r["by_category"]:
        lines += ["", "  Interruptions by root cause (cost = lost + hang + repair + next "
                      "startup):"]
        crow = [[cat, v["count"], human(v["cost_s"]), _pct(v["cost_s"], t_obs)]
                for cat, v in r["by_category"].items()]
        lines += _indent(table(["category", "count", "cost", "of T_obs"], crow, {1, 2, 3}))
    if r["interruptions"]:
        ints = sorted(r["interruptions"], key=lambda i: -i["cost_s"])[:top]
        lines += ["", f"  Top {len(ints)} interruptions by cost:"]
        irows = [[i["end"], i["attempt"], i["state"], i["category"], i["node"],
                  human(i["cost_s"]), human(i["lost_s"]), human(i["hang_s"]),
                  human(i["repair_s"]), human(i["startup_s"]), i["symptoms"]] for i in ints]
        lines += _indent(table(["ended", "attempt", "state", "root cause", "node", "cost",
                                "lost", "hang", "repair", "startup", "symptoms"], irows,
                               {5, 6, 7, 8, 9, 10}))
        lines += ["", "  Root-cause evidence (most specific line; symptoms are in the "
                      "evidence table):"]
        lines += [f"  {i['attempt']:<8} {_cause(i)}" for i in ints]
    est = r.get("estimated") or {}
    if est:
        lines.append("  estimated (work no progress line shows): " + ", ".join(
            f"{k.removesuffix('_s')} {human(v)}" for k, v in est.items()))
    if r["dropped_progress_lines"]:
        lines.append(f"  note: {r['dropped_progress_lines']:,} progress lines went backwards "
                     "without a checkpoint load and were ignored")
    return "\n".join(lines)


def _cause(i: dict[str, Any]) -> str:
    c = i["cause"]
    if not c["kind"]:
        return "no evidence in the window (see output tail in the report)"
    msg = (c["message"] or "").strip()
    if len(msg) > 110:
        msg = msg[:107] + "..."
    code = f" {c['code']}" if c["code"] else ""
    return f"{c['kind']}{code} at {c['where']}\n             {msg}"


def _indent(text: str) -> list[str]:
    return ["  " + line for line in text.splitlines()]


def render_warnings(analysis: dict[str, Any]) -> str:
    """The data-quality warnings (``warnings[]``), one paragraph each."""
    ws = analysis.get("warnings") or []
    if not ws:
        return ""
    out = [f"Data-quality warnings ({len(ws)}; fidelity: {analysis['fidelity']}):"]
    for w in ws:
        out += textwrap.wrap(f"[{w['code']}] {w['message']}", 100, initial_indent="  - ",
                             subsequent_indent="    ")
    return "\n".join(out)


def render(analysis: dict[str, Any]) -> str:
    parts = [render_run(r) for r in analysis["runs"]]
    w = render_warnings(analysis)
    return "\n\n".join([*parts, w] if w else parts)
