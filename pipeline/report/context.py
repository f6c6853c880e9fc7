"""The data the template shows: plain dicts of display-ready values, built from the analysis
(``tormortem.analysis/1``), the optional database tables, rates and model."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
from scipy.stats import chi2

from pipeline.report import plots
from pipeline.report.analysis_text import LABELS
from pipeline.report.dbdata import DbData
from pipeline.report.model_ctx import model_context, predicted_for, rates_context
from pipeline.report.quality import quality_context, run_warnings
from pipeline.units import human, known_sum

CI_LEVEL = 0.95
#: Runs with more interruptions than this show full evidence chains only for the costliest
#: FULL_CHAINS; the others keep their cause line, with the symptoms folded (hidden in print).
ALL_CHAINS_UP_TO = 60
FULL_CHAINS = 30


def ts(s: str | None) -> datetime | None:
    return None if not s else datetime.fromisoformat(s.replace("Z", "+00:00"))


def fmt_ts(s: str | None) -> str:
    t = ts(s)
    return "-" if t is None else t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def dur(s: float | None) -> dict[str, Any]:
    """A duration cell: human text plus the exact seconds (for tooltips and tests)."""
    return {"h": human(s) if s is not None else "-", "s": s}


def poisson_ci(k: int, level: float = CI_LEVEL) -> tuple[float, float]:
    """Exact (Garwood) interval for a Poisson count."""
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(chi2.ppf(a, 2 * k)) / 2
    return lo, float(chi2.ppf(1 - a, 2 * k + 2)) / 2


def exposure(run: dict[str, Any]) -> tuple[float, float]:
    """GPU-hours and node-days the run's attempts were up (start to end of each attempt)."""
    gpu_h = node_d = 0.0
    for a in run["attempts"]:
        s, e = ts(a["start"]), ts(a["end"])
        if s is None or e is None:
            continue
        sec = max((e - s).total_seconds(), 0.0)
        gpu_h += sec * (a.get("gpus") or 0) / 3600.0
        node_d += sec * len(a.get("nodes") or []) / 86400.0
    return gpu_h, node_d


def categories(run: dict[str, Any]) -> list[dict[str, Any]]:
    gpu_h, node_d = exposure(run)
    ints = run["interruptions"]
    total = sum(i["cost_s"] for i in ints) or 0.0
    rows = []
    for cat in run["by_category"]:
        mine = [i for i in ints if i["category"] == cat]
        k = len(mine)
        lo, hi = poisson_ci(k)
        row: dict[str, Any] = {"category": cat, "color": plots.category_hex(cat), "count": k}
        row["per_gpu_h"] = _rate(k, lo, hi, gpu_h, 1.0, "{:.2e}")
        row["per_knd"] = _rate(k, lo, hi, node_d, 1000.0, "{:.3g}")
        for key in ("hang_s", "repair_s", "startup_s", "lost_s", "cost_s"):
            row[key] = float(np.mean([i[key] for i in mine])) if mine else 0.0
            row["sum_" + key] = float(sum(i[key] for i in mine))
        row["mean"] = {k2: dur(row[k2]) for k2 in ("hang_s", "repair_s", "startup_s")}
        row["cost"] = dur(row["sum_cost_s"])
        row["share"] = 100 * row["sum_cost_s"] / total if total else 0.0
        row["share_obs"] = 100 * row["sum_cost_s"] / run["t_obs_s"] if run["t_obs_s"] else 0.0
        rows.append(row)
    rows.sort(key=lambda r: -r["sum_cost_s"])
    return rows


def _rate(k: int, lo: float, hi: float, expo: float, per: float, fmt: str) -> dict[str, Any]:
    if expo <= 0:
        return {"v": None, "lo": None, "hi": None, "text": "-", "ci": "-"}
    v, a, b = per * k / expo, per * lo / expo, per * hi / expo
    return {"v": v, "lo": a, "hi": b, "text": fmt.format(v),
            "ci": f"{fmt.format(a)} – {fmt.format(b)}"}


def interruptions(run: dict[str, Any], db: DbData) -> list[dict[str, Any]]:
    out = []
    ints = run["interruptions"]
    by_cost = sorted(range(len(ints)), key=lambda k: -ints[k]["cost_s"])
    unfold = set(by_cost if len(ints) <= ALL_CHAINS_UP_TO else by_cost[:FULL_CHAINS])
    for k, i in enumerate(ints):
        ev, n = db.evidence.get((run["run"], i["attempt"]), ([], 0))
        chain = [{"role": e["role"], "ts": e["ts"].strftime("%Y-%m-%d %H:%M:%S")
                  if e["ts"] else "-", "host": e["host"] or "-", "source": e["source"],
                  "what": " ".join(str(x) for x in (e["kind"], e["code"]) if x),
                  "message": e["message"] or "", "where": f"{e['file']}:{e['line_no']}"}
                 for e in ev]
        c = i["cause"]
        if not chain and c.get("message"):
            chain = [{"role": "cause", "ts": fmt_ts(c.get("ts")), "host": i.get("node") or "-",
                      "source": "", "what": " ".join(x for x in (c["kind"], c["code"]) if x),
                      "message": c["message"], "where": c.get("where") or ""}]
        out.append({
            "attempt": i["attempt"], "end": fmt_ts(i["end"]), "category": i["category"],
            "color": plots.category_hex(i["category"]), "node": i.get("node") or "-",
            "node_approx": (i.get("approx") or {}).get("node"),
            "state": i.get("state") or "-", "cost": dur(i["cost_s"]), "lost": dur(i["lost_s"]),
            "hang": dur(i["hang_s"]), "repair": dur(i["repair_s"]),
            "startup": dur(i["startup_s"]),
            "cause": " ".join(x for x in (c.get("kind"), c.get("code")) if x) or "unknown",
            "chain": chain, "more": max(n - len(chain), 0), "unfold": k in unfold,
            "tail": list(i.get("output_tail") or [])[-12:],
        })
    return out


def components(run: dict[str, Any]) -> list[dict[str, Any]]:
    t = run["t_obs_s"]
    ap = run.get("approx") or {}
    rows = [{"key": k, "label": LABELS.get(k, k), "color": plots.COMPONENT_COLORS.get(k, "#999"),
             "d": dur(v), "share": 100 * v / t if t and v is not None else None,
             "approx": ap.get(k)}
            for k, v in run["components"].items()]
    rows.append({"key": "total", "label": "total (= T_obs)", "color": "",
                 "d": dur(known_sum(run["components"])), "share": 100.0 if t else 0.0,
                 "approx": None})
    return rows


def top_causes(run: dict[str, Any], cats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The three costliest causes of lost time: interruption categories and fail-slow (its
    episodes' cost, whose cause the logs do not attribute), shares over their sum."""
    rows = [{"category": c["category"], "color": c["color"], "cost": c["cost"],
             "count": c["count"], "unit": "interruption", "sum_cost_s": c["sum_cost_s"]}
            for c in cats]
    eps_cost = float((run.get("slow_split") or {}).get("fail_slow_episodes") or 0.0)
    if eps_cost > 0:
        rows.append({"category": "fail-slow (cause unknown)",
                     "color": plots.COMPONENT_COLORS["slow"], "cost": dur(eps_cost),
                     "count": len(run["slow_episodes"]), "unit": "episode",
                     "sum_cost_s": eps_cost})
    total = sum(r["sum_cost_s"] for r in rows)
    t_obs = run["t_obs_s"]
    for r in rows:
        r["share"] = 100 * r["sum_cost_s"] / total if total else 0.0
        r["share_obs"] = 100 * r["sum_cost_s"] / t_obs if t_obs else 0.0
    return sorted(rows, key=lambda r: -r["sum_cost_s"])[:3]


def approx_notes(run: dict[str, Any]) -> list[str]:
    """The caveats behind the report's ~ marks, each reason once with what it applies to."""
    by_reason: dict[str, list[str]] = {}
    for comp, why in (run.get("approx") or {}).items():
        by_reason.setdefault(why, []).append(LABELS.get(comp, comp).split(" (")[0])
    for i in run["interruptions"]:
        for f, why in (i.get("approx") or {}).items():
            what = "node" if f == "node" else "cause time"
            by_reason.setdefault(why, []).append(f"{what} of {i['attempt']}")
    return [f"{', '.join(w if len(w) <= 6 else [*w[:5], f'{len(w) - 5} more'])}: {why}"
            for why, w in by_reason.items()]


def run_context(run: dict[str, Any], db: DbData, model: dict[str, Any] | None) -> dict[str, Any]:
    cats = categories(run)
    name = run["run"]
    eps = [(ts(e["start"]), ts(e["end"])) for e in run["slow_episodes"]]
    eps_ok = [(a, b) for a, b in eps if a and b]
    att = [(ts(a["start"]), ts(a["end"]), a["state"]) for a in run["attempts"]]
    att_ok = [(a, b, s) for a, b, s in att if a and b]
    marks = [(t, i["category"]) for i in run["interruptions"] if (t := ts(i["end"]))]
    fig_time = plots.timeline(att_ok, marks, db.checkpoints.get(name, []), eps_ok)
    fig_step = None
    if name in db.steps and len(db.steps[name][0]):
        x, y = db.steps[name]
        fig_step = plots.step_time(x, y, run.get("ideal_step_s"), eps_ok)
    fig_cat = plots.by_category(cats) if cats else None
    gpus = max((a.get("gpus") or 0 for a in run["attempts"]), default=0)
    return {
        "name": name, "start": fmt_ts(run["start"]), "end": fmt_ts(run["end"]),
        "t_obs": dur(run["t_obs_s"]), "t_opt": dur(run["t_opt_s"]), "tor": run["tor"],
        "tor_undefined": run.get("tor_undefined"), "approx": run.get("approx") or {},
        "approx_notes": approx_notes(run),
        "predicted": predicted_for(model, name), "gpus": gpus,
        "n_attempts": len(run["attempts"]), "n_interruptions": len(run["interruptions"]),
        "ideal_step_s": run.get("ideal_step_s"), "iterations_net": run.get("iterations_net"),
        "fidelity": run.get("fidelity", "-"),
        "top3": top_causes(run, cats), "components": components(run), "categories": cats,
        "slow_split": run.get("slow_split") or {},
        "episodes": [{"attempt": e["attempt"], "start": fmt_ts(e["start"]),
                      "end": fmt_ts(e["end"]), "ratio": e["ratio"], "cost": dur(e["cost_s"])}
                     for e in run["slow_episodes"]],
        "interruptions": interruptions(run, db), "warnings": run_warnings(run, db),
        "fig_timeline": fig_time, "fig_step": fig_step, "fig_categories": fig_cat,
    }


def build(analysis: dict[str, Any], rates: dict[str, Any] | None,
          model: dict[str, Any] | None, db: DbData) -> dict[str, Any]:
    runs = [run_context(r, db, model) for r in analysis["runs"]]
    for ctx in runs:  # the analysis's data-quality warnings (warnings[]) lead the run's list
        ctx["warnings"] = [w["message"] for w in analysis.get("warnings") or []
                           if w.get("run") in (ctx["name"], None)] + ctx["warnings"]
    fig_dec = plots.decomposition(
        [(r["run"], r["components"], r["t_obs_s"]) for r in analysis["runs"]], LABELS)
    realized = {r["run"]: r["tor"] for r in analysis["runs"]}
    return {
        "title": "Post-mortem: " + ", ".join(r["name"] for r in runs),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "schema": analysis.get("schema", "-"), "runs": runs, "fig_decomposition": fig_dec,
        "model": model_context(model, realized), "rates": rates_context(rates),
        "quality": quality_context(analysis, db), "ci_level": int(CI_LEVEL * 100),
    }
