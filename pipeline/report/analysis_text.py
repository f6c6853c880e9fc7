"""The terminal report of ``analyze``: per run, where the time went and why."""

from __future__ import annotations

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
    lines = [
        f"Run {r['run']}: {r['start']} -> {r['end']} ({len(r['attempts'])} attempts, "
        f"{n_int} interruptions; attempts from {r['fidelity']} records)",
        f"  T_obs {human(t_obs)} ({t_obs:,.0f} s)   T_opt {human(r['t_opt_s'])}   "
        f"realized TOR {r['tor']:.4f}" if r["tor"] is not None else "  TOR: -",
        f"  ideal step t* {r['ideal_step_s']:.3f} s   iterations {r['start_iteration']:,} -> "
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


def render(analysis: dict[str, Any]) -> str:
    return "\n\n".join(render_run(r) for r in analysis["runs"])
