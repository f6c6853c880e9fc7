"""Data quality: line accounting, timestamp provenance, missing sources, clock skew, and what
the numbers can and cannot be trusted for."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from parsers.schema import TS_FLAGS
from pipeline.report.dbdata import DbData

SCHEDULER = {"sacct", "sacct_json", "slurmctld", "slurmd", "k8s_events", "k8s_events_json",
             "k8s_pod", "pytorchjob"}
#: A cause stamped this long after its attempt ended points at skewed clocks.
SKEW_S = 120.0
EXACT_FLAGS = {"exact", "assumed_tz", "uptime_anchored"}


def _parse(s: str | None) -> datetime | None:
    return None if not s else datetime.fromisoformat(s.replace("Z", "+00:00"))


def run_warnings(run: dict[str, Any], db: DbData) -> list[str]:
    w: list[str] = []
    if run.get("fidelity") == "incomplete":
        w.append("Fidelity incomplete: something these numbers depend on is missing from the "
                 "logs (see the warnings above).")
    elif run.get("fidelity") and run["fidelity"] != "scheduler":
        w.append(f"Attempts come from {run['fidelity']} records, not the scheduler: attempt "
                 "boundaries and repair gaps are estimates.")
    if run.get("dropped_progress_lines"):
        w.append(f"{run['dropped_progress_lines']:,} progress lines could not be placed in an "
                 "attempt and were left out.")
    rem = float(run.get("remainder_s") or 0.0)
    if abs(rem) > 1.0:
        w.append(f"The components miss T_obs by {rem:,.1f} s.")
    neg = [k for k, v in run["components"].items() if v is not None and v < -1.0]
    if neg:
        w.append("Negative components (" + ", ".join(neg) + "): overlapping or mis-stamped "
                 "events.")
    ints = run["interruptions"]
    unk = [i for i in ints if i["category"] == "unknown"]
    if unk:
        cost = sum(i["cost_s"] for i in unk) / 3600
        w.append(f"{len(unk)} of {len(ints)} interruptions have no identified root cause "
                 f"(unknown, {cost:.1f} h of cost): their logs carry no recognised error.")
    no_node = sum(1 for i in ints if not i.get("node") and i["category"] != "unknown")
    if no_node:
        w.append(f"{no_node} interruptions could not be tied to one node.")
    skewed = []
    for i in ints:
        c = _parse(i["cause"].get("ts"))
        end = _parse(i["end"])
        if c and end and (c - end).total_seconds() > SKEW_S:
            skewed.append(f"{i['attempt']} (+{(c - end).total_seconds():,.0f} s)")
    if skewed:
        w.append("Root-cause lines stamped after their attempt had ended, which suggests clock "
                 "skew between hosts and the scheduler: " + ", ".join(skewed[:8])
                 + (" ..." if len(skewed) > 8 else ""))
    if db.available and run["run"] not in db.steps:
        w.append("No step-time lines: fail-slow episodes and t* cannot be checked.")
    return w


def _sources(db: DbData) -> set[str]:
    return {str(r["source"]) for r in db.accounting if (r.get("events") or 0) > 0}


def missing_sources(db: DbData) -> list[str]:
    have = _sources(db)
    w = []
    if not have & SCHEDULER:
        w.append("No scheduler records (sacct, slurmctld, Kubernetes): attempts are rebuilt "
                 "from progress lines, and repair gaps between attempts are not measured.")
    if "joblog" not in have:
        w.append("No training job output: no step times, checkpoints or iteration numbers, so "
                 "T_opt, lost work and fail-slow episodes cannot be measured.")
    if "kernel" not in have:
        w.append("No kernel logs: GPU (Xid), memory, PCIe and InfiniBand faults are seen only "
                 "through their symptoms; hardware causes are under-counted.")
    return w


def ts_table(db: DbData) -> tuple[list[str], list[dict[str, Any]]]:
    flags = [f for f in TS_FLAGS if any(r["ts_flag"] == f for r in db.ts_flags)]
    by_src: dict[str, dict[str, int]] = {}
    for r in db.ts_flags:
        by_src.setdefault(str(r["source"]), {})[str(r["ts_flag"])] = int(r["n"])
    rows = [{"source": s, "counts": [c.get(f, 0) for f in flags], "total": sum(c.values())}
            for s, c in by_src.items()]
    return flags, rows


def quality_context(analysis: dict[str, Any], db: DbData) -> dict[str, Any]:
    warnings = missing_sources(db) if db.available else [
        "The database (tormortem.duckdb) was not found beside analysis.json: line accounting, "
        "timestamps, step times and evidence excerpts are not available."]
    flags, ts_rows = ts_table(db)
    missing_ts = sum(int(r["n"]) for r in db.ts_flags if r["ts_flag"] == "missing")
    soft = sum(int(r["n"]) for r in db.ts_flags if r["ts_flag"] not in EXACT_FLAGS
               and r["ts_flag"] != "missing")
    if missing_ts:
        warnings.append(f"{missing_ts:,} events have no timestamp at all; they are counted but "
                        "not placed on the timeline.")
    if soft:
        warnings.append(f"{soft:,} events carry an inherited, inferred or relative timestamp "
                        "(see the table): sub-minute ordering of those is approximate.")
    if any(r["ts_flag"] == "assumed_tz" for r in db.ts_flags):
        warnings.append("Some logs print times without a zone; --tz was applied to them. If the "
                        "hosts ran in different zones, cross-host ordering is off by hours.")
    acc = []
    for r in db.accounting:
        read = int(r["read"] or 0)
        acc.append({**r, "unparsed_pct": 100 * int(r["unparsed"] or 0) / read if read else 0.0})
    unparsed_total = sum(int(r["unparsed"] or 0) for r in db.accounting)
    if unparsed_total:
        warnings.append(f"{unparsed_total:,} lines were not understood (samples below); any "
                        "failure they describe is missing from the causes.")
    fid = {r.get("fidelity") for r in analysis["runs"]}
    trust = [
        "T_obs, the attempt boundaries and the repair gaps: as exact as the scheduler's stamps"
        + (" (scheduler records present)." if "scheduler" in fid else
           " — here they come from progress lines, so treat them as estimates."),
        "T_opt, lost work and slow time: exact given the ideal step time t*, which is the "
        "trimmed median of measured steps unless --ideal-step-time was given; a t* that is "
        "itself slow makes TOR look better than it is.",
        "Root causes: the most specific evidence line near each interruption; a category is as "
        "good as the rule table that named it, and 'unknown' means no rule matched.",
        "Rates per GPU-hour: exact Poisson intervals from this run's counts and exposure; a "
        "handful of events gives wide intervals, and one run says little about another "
        "cluster.",
        "Not measured: time lost before the first attempt (queueing), data-loader or "
        "evaluation stalls that do not change the logged step time, and faults that left no "
        "line in the logs given.",
    ]
    return {"available": db.available, "accounting": acc, "unparsed": db.unparsed,
            "ts_flags": flags, "ts_rows": ts_rows, "ts_help": TS_FLAGS, "warnings": warnings,
            "trust": trust}
