"""The terminal report of ``analyze``: per run, where the time went and why."""

from __future__ import annotations

import textwrap
from typing import Any

from pipeline.report.terminal import table
from pipeline.units import human, known_sum

LABELS = {
    "t_opt": "T_opt (ideal work)", "slow": "slow (fail-slow + jitter)",
    "lost": "lost work (rolled back)", "ckpt_save": "checkpoint saves",
    "startup": "startup (init, load)", "hang": "hang (until detected)",
    "repair": "repair gap (requeue)", "tail": "tail (final save, exit)",
}


def _pct(x: float, total: float) -> str:
    return f"{100 * x / total:.2f}%" if total else "-"


def tor_text(r: dict[str, Any]) -> str:
    """``realized TOR 0.8087``, or why it is undefined (never a made-up 0)."""
    if r.get("tor") is None:
        why = r.get("tor_undefined") or "no progress lines"
        return f"TOR undefined ({why.split(':')[0]})"
    return f"realized TOR {r['tor']:.4f}"


def render_run(r: dict[str, Any], top: int | None = 10) -> str:
    t_obs = r["t_obs_s"]
    n_int = len(r["interruptions"])
    ap = r.get("approx") or {}
    t_star = r.get("ideal_step_s")
    lines = [
        f"Run {r['run']}: {r['start']} -> {r['end']} ({len(r['attempts'])} attempts, "
        f"{n_int} interruptions; fidelity: {r['fidelity']})",
        f"  T_obs {human(t_obs)} ({t_obs:,.0f} s)   T_opt "
        f"{_mark(ap, 't_opt')}{human(r['t_opt_s']) if r['t_opt_s'] is not None else 'unknown'}"
        f"   {tor_text(r)}",
        (f"  ideal step t* {t_star:.3f} s" if t_star is not None and t_star == t_star
         else "  ideal step t* unknown (no progress lines)")
        + f"   iterations {r['start_iteration']:,} -> {r['final_iteration']:,} "
          f"({r['iterations_net']:,} net)",
        "",
        "  Where the time went:",
    ]
    rows: list[list[Any]] = []
    for k, v in r["components"].items():
        m = _mark(ap, k)
        if v is None:  # not measurable (no progress lines): unknown, not 0
            rows.append([LABELS[k], f"{m}unknown", "", ""])
            continue
        v = round(v, 1) + 0.0  # a float residue (-1e-10) prints as 0.0, not -0.0
        rows.append([LABELS[k], f"{m}{v:,.1f}", m + human(v), _pct(v, t_obs)])
    total = known_sum(r["components"])
    rows.append(["total (= T_obs)", f"{total:,.1f}", human(total), _pct(t_obs, t_obs)])
    lines += _indent(table(["component", "seconds", "", "share"], rows, {1, 3}))
    split = r["slow_split"]
    if split["jitter"] is not None:
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
        lines += ["", f"  Top {len(ints)} interruptions by cost:" if top is not None and
                  len(ints) < n_int else f"  Interruptions ({n_int}) by cost:"]
        irows = [[i["end"], i["attempt"], i["state"], i["category"], _node(i),
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
    lines += caveats(r)
    return "\n".join(lines)


def _mark(ap: dict[str, str], key: str) -> str:
    return "~" if key in ap else ""


def _node(i: dict[str, Any]) -> str:
    if not i.get("node"):
        return "-"
    return ("~" if "node" in (i.get("approx") or {}) else "") + str(i["node"])


def caveats(r: dict[str, Any]) -> list[str]:
    """The ``~`` footnotes: each distinct reason once, with what it applies to."""
    by_reason: dict[str, list[str]] = {}
    for comp, why in (r.get("approx") or {}).items():
        by_reason.setdefault(why, []).append(LABELS.get(comp, comp).split(" (")[0])
    for i in r["interruptions"]:
        why = (i.get("approx") or {}).get("node")
        if why:
            by_reason.setdefault(why, []).append(f"node of {i['attempt']}")
    if not by_reason:
        return []
    out = ["", "  ~ approximate (inferred, not read from the logs):"]
    for why, what in by_reason.items():
        shown = what if len(what) <= 4 else [*what[:3], f"{len(what) - 3} more"]
        out.append(f"    {', '.join(shown)}: {why}")
    return out


def decomposition_rows(analysis: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Per run and component: seconds, share of T_obs, and why it is approximate (if so)."""
    head = ["run", "component", "seconds", "share", "approx"]
    rows = []
    for r in analysis["runs"]:
        ap = r.get("approx") or {}
        for k, v in r["components"].items():
            rows.append([r["run"], k, v, v / r["t_obs_s"] if r["t_obs_s"] and v is not None
                         else None, ap.get(k)])
    return head, rows


def _cause(i: dict[str, Any]) -> str:
    c = i["cause"]
    if not c["kind"]:
        return "no evidence in the window (see output tail in the report)"
    msg = (c["message"] or "").strip()
    if len(msg) > 110:
        msg = msg[:107] + "..."
    code = f" {c['code']}" if c["code"] else ""
    out = f"{c['kind']}{code} at {c['where']}\n             {msg}"
    src = {"node_evidence": "named by", "symptoms": "from the symptom at"}.get(
        i.get("node_from") or "")
    if i.get("node") is None:  # no node to name (nothing to say where it came from)
        return out
    if src and i.get("node_where"):
        out += f"\n             node {i['node']} {src} {i['node_where']}"
    elif i.get("node_from") == "banner":
        out += f"\n             node {i['node']}: the batch host this banner names"
    return out


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


def render(analysis: dict[str, Any], top: int | None = 10) -> str:
    parts = [render_run(r, top) for r in analysis["runs"]]
    w = render_warnings(analysis)
    return "\n\n".join([*parts, w] if w else parts)
