"""Realized TOR per run: attempts, progress, the exact decomposition, root causes.

``analyze_db`` works on an ingested database (``pipeline.ingest.run``) and adds the tables

* ``attempts_linked``  one row per attempt with its run (``sql/attempts_linked.sql``)
* ``attempt_events``   progress/checkpoint events assigned to attempts
* ``attempt_parts``    per attempt: startup, ckpt_save, compute, hang, tail, repair, lost
* ``runs``             per run: T_obs, T_opt, TOR, t*, iterations
* ``decomposition``    per run and component: seconds (sums to T_obs; NULL where a run
                       without progress lines cannot measure it: T_opt, slow, lost, saves)
* ``interruptions``    per interruption: root cause, node, cost and its parts
* ``evidence``         every evidence line of every interruption, cause first, then symptoms
* ``slow_episodes``    fail-slow episodes found from step times

and returns the same as a dict in the JSON shape of TOR_MODEL.md section 7
(``schema: tormortem.analysis/1``).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from pipeline.analyze import approx, linkcheck, quality
from pipeline.analyze.chains import assign_runs
from pipeline.analyze.decompose import Decomposition, decompose, split_no_progress
from pipeline.analyze.hosts import alias_hosts
from pipeline.analyze.nooutput import warning
from pipeline.analyze.progress import RunInputs, collect, make_attempt_events
from pipeline.analyze.quality import ORDER
from pipeline.analyze.quality import check as check_quality
from pipeline.analyze.quality import fidelity as run_fidelity
from pipeline.analyze.restarts import add_cut_column, split_restarts
from pipeline.analyze.rootcause import (
    DEFAULT_AFTER_S,
    DEFAULT_BEFORE_S,
    Cause,
    failure_events,
    find_causes,
)
from pipeline.analyze.runs import link_attempts, load_run_map
from pipeline.analyze.skew import DEFAULT_MAX_SKEW_S, estimate_skew
from pipeline.analyze.slowdown import Episode, find_episodes, observed_seconds
from pipeline.ingest.sink import connect

SCHEMA = "tormortem.analysis/1"
COMPONENTS = ("t_opt", "slow", "lost", "ckpt_save", "startup", "hang", "repair", "tail")


class AnalysisError(ValueError):
    """Nothing to analyse; the message says what is missing."""


def iso(t: float | datetime | None) -> str | None:
    if t is None:
        return None
    dt = t if isinstance(t, datetime) else datetime.fromtimestamp(t, UTC)
    s = dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0").rstrip(".")
    return s + "Z"


def analyze_db(db: Path, *, run_map: Path | None = None, ideal_step_s: float | None = None,
               before_s: float = DEFAULT_BEFORE_S, after_s: float = DEFAULT_AFTER_S,
               job_output: list[str] | None = None, clock_skew: bool = True,
               max_skew_s: float = DEFAULT_MAX_SKEW_S, skew_tolerance_s: float = 0.0,
               unreadable: list[str] | None = None) -> dict[str, Any]:
    """``unreadable``: inputs the walk could not open (``Inputs.problems``): their lines are
    missing, so they are an ``unread_input`` warning as the files read in part are."""
    con = connect(db)
    try:
        con.execute("SET TimeZone = 'UTC'")
        alias_hosts(con)
        fidelity, matched = link_attempts(con, load_run_map(run_map), job_output)
        add_cut_column(con)
        make_attempt_events(con)
        if split_restarts(con):
            make_attempt_events(con)
        assign_runs(con)
        runs = collect(con)
        if not runs:
            raise AnalysisError(_no_attempts(con))
        results = []
        base: list[dict[str, Any]] = []
        decs: dict[str, Decomposition] = {}
        for ri in runs:
            d = decompose(ri.attempts, ideal_step_s=ideal_step_s)
            decs[ri.run] = d
            executions: dict[str, int] = {}
            for row in ri.rows:
                executions[row["job_id"]] = executions.get(row["job_id"], 0) + 1
            for k, p in enumerate(d.attempts[:-1]):
                row = ri.rows[k]
                base.append({"attempt": p.attempt, "run": ri.run, "job_id": row["job_id"],
                             "executions": executions[row["job_id"]],
                             "nodes": list(row["nodes"] or []), "nodes_of": row["attempt"],
                             "start": _dt(p.start), "end": _dt(p.end),
                             "last_progress": _dt(p.last_progress),
                             "next_start": _dt(d.attempts[k + 1].start),
                             "first_in_run": k == 0,
                             "end_inferred": row.get("fidelity") == "progress"})
        failure_events(con)
        skews = estimate_skew(con, max_skew_s, clock_skew)
        causes = find_causes(con, base, before_s, after_s, skew_tolerance_s)
        split: set[str] = set()
        for ri in runs:
            d = decs[ri.run]
            for k, p in enumerate(d.attempts[:-1]):
                c = causes[p.attempt]
                if p.last_progress is None and c.ts is not None:
                    split_no_progress(d, k, c.ts.timestamp())
                    split.add(p.attempt)
        warnings = check_quality(con, runs, decs) + _skew_warnings(skews)
        warnings += (linkcheck.unmatched_run_map(con) + linkcheck.nameless(con, len(runs))
                     + linkcheck.long_gaps(decs))
        if unreadable:
            warnings.append(warning(
                "unread_input", f"{len(unreadable)} input(s) could not be opened, so their "
                "lines or records are missing from the analysis: " + "; ".join(unreadable[:3])
                + (f" (and {len(unreadable) - 3} more)" if len(unreadable) > 3 else "")))
        links = _links(con)
        for ri in runs:
            d = decs[ri.run]
            eps = find_episodes(d.intervals, d.ideal_step_s)
            fid = run_fidelity(fidelity, ri.run, ri.rows, warnings)
            results.append(_mark_approx(_run_json(ri, d, causes, eps, fid, warnings, links),
                                        ri, d, causes, split))
        _write_tables(con, results, decs, runs, warnings)
    finally:
        con.close()
    overall = max([fidelity, *(r["fidelity"] for r in results)], key=ORDER.__getitem__)
    return {"schema": SCHEMA, "fidelity": overall, "runs": results, "warnings": warnings,
            "clock_skew": skews,
            "job_output": [{"pattern": p, "files": n} for p, n in matched.items()]}


def _skew_warnings(skews: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for s in skews:
        fixed = "not corrected" not in s["method"]
        how = (f"at least {s['offset_s']:+,.0f} s (the least offset that explains them; it may "
               "be more, up to --max-skew)") if s.get("at_least") else \
            f"{s['offset_s']:+,.0f} s (within {s['bound_s']:,.0f} s)"
        out.append({"code": "clock_skew", "run": None, "attempt": None, "files": [],
                    "fidelity": "scheduler",
                    "message": f"{s['host']}'s {s['source']} clock runs {how} against the "
                               f"scheduler's, from {s['samples']} {s['method']}"
                               + ("; its lines were corrected by that" if fixed else "")})
    return out


def _dt(t: float | None) -> datetime | None:
    return None if t is None else datetime.fromtimestamp(t, UTC)


def _no_attempts(con: duckdb.DuckDBPyConnection) -> str:
    """Why there is nothing to analyse, with what the logs do hold."""
    row = con.execute("SELECT count(*), count(DISTINCT file) FROM events "
                      "WHERE kind = 'progress_bar'").fetchone()
    bars, files = (int(row[0]), int(row[1])) if row else (0, 0)
    if bars:
        return (f"no attempts found: the logs have no scheduler records (sacct, sacct --json, "
                f"pod status) and no progress line with its own time; {bars:,} tqdm bar "
                f"updates in {files:,} file(s) (HF Trainer, Lightning) carry no timestamp and "
                "are not used as progress: add the scheduler records, and for the work, a "
                "logging callback that prints the step with a time (or Megatron/DeepSpeed "
                "progress lines)")
    return ("no attempts found: the logs have no scheduler records (sacct, sacct --json, "
            "pod status) and no training progress lines; add them to the inputs")


def _tor(ri: RunInputs, d: Decomposition, warnings: list[dict[str, Any]]
         ) -> tuple[float | None, str | None]:
    """TOR, or None with the reason it is undefined (never a silent 0)."""
    if d.t_obs <= 0:
        return None, "T_obs is 0"
    cut = [w for w in warnings if w["code"] == "output_cut" and w["run"] == ri.run]
    if cut:
        return None, (f"its last progress line is in {cut[0]['files'][0]}, whose end is lost, "
                      "so its last iteration is unknown (see the output_cut warning)")
    closed = quality.ended_unrecorded(ri)
    if closed:
        return None, (f"{len(closed)} of its attempts ended with no end time in the records, "
                      f"so where their time went is unknown (first {closed[0]}; see the no_end "
                      "warning)")
    if any(w["code"] == "output_timezone" for w in warnings):
        return None, ("the job output's stamps are hours off its scheduler records (see the "
                      "output_timezone warning)")
    if any(w["code"] == "missing_executions" and w["run"] == ri.run for w in warnings):
        return None, ("progress lines were printed before their job's first recorded "
                      "execution: executions are missing from the scheduler records (see the "
                      "missing_executions warning)")
    if any(w["code"] == "after_executions" and w["run"] == ri.run for w in warnings):
        return None, ("progress lines are stamped after their job's last recorded execution "
                      "ended: output and scheduler records disagree on the time (see the "
                      "after_executions warning)")
    # (after the time disagreements: they say why such output was not linked)
    if any(w["code"] == "attempt_without_output" and w.get("final") and w["run"] == ri.run
           for w in warnings):
        return None, ("an attempt after its last progress line left no output line that "
                      "could be read, so its last iteration is unknown (see the "
                      "attempt_without_output warning)")
    bad = [w for w in warnings if w["code"] == "untimed_progress" and w["run"] == ri.run]
    untimed = sum(w["lines"] + w["collapsed"] for w in bad)
    if untimed > sum(len(a.progress) for a in ri.attempts) - sum(w["collapsed"] for w in bad):
        return None, (f"{untimed:,} of its progress lines carry no time of their own (no "
                      "timestamp, or one inherited stamp for many iterations with no step "
                      "time), more than those that do")
    if not any(a.progress for a in ri.attempts):
        return None, "no progress lines linked to its attempts"
    if math.isnan(d.ideal_step_s):
        return None, "no step time could be measured"
    if d.iterations_net < 0:
        return None, (f"the run ends at iteration {d.final_iteration:,}, below its start at "
                      f"{d.start_iteration:,}: no net work to measure (progress lines of "
                      "several runs in one file, or a rollback past the first checkpoint)")
    over = -d.components["slow"]
    if over > quality.negative_floor(d):
        # the ``negative`` warning's case: a ratio above what the data can hold (72.3 from
        # 88 shuffled iteration lines of several logs) is no result
        return None, (f"T_opt exceeds the time its work took by {over:,.0f} s: progress lines "
                      "are missing or not of one run (see the data-quality warnings)")
    if over > 0 and d.t_opt > d.t_obs:
        # within the floor, but a ratio above 1 is no TOR: the run is too short to measure
        return None, (f"T_opt exceeds T_obs by {d.t_opt - d.t_obs:,.1f} s, within the rounding "
                      "of stamps to the second; the run is too short to measure")
    return d.t_opt / d.t_obs, None


def _links(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, Any]]:
    """Per attempt: the output files its lines came from, with how each was linked to its
    job (links.py), and how the attempt was linked into its run (chains.py)."""
    out: dict[str, dict[str, Any]] = {}
    for attempt, method, detail in con.execute(
            "SELECT attempt, method, detail FROM run_links").fetchall():
        out[attempt] = {"run_link": {"method": method, "detail": detail}, "outputs": []}
    # files linked to the attempt's job (all of them when the job ran once; else those whose
    # lines fell in this execution), and files whose job id the lines carry
    for attempt, file, method in con.execute("""
            WITH n AS (SELECT job_id, count(*) AS k FROM attempts_linked GROUP BY job_id),
            mine AS (SELECT DISTINCT attempt, file FROM attempt_events)
            SELECT a.attempt, l.file, l.method FROM attempts_linked a
            JOIN n USING (job_id) JOIN output_links l ON l.job_id = a.job_id
            WHERE n.k = 1 OR (a.attempt, l.file) IN (SELECT (attempt, file) FROM mine)
            UNION
            SELECT m.attempt, m.file, CASE WHEN a.source = 'inferred' THEN 'inferred'
                                           ELSE 'job id in the lines' END
            FROM mine m JOIN attempts_linked a USING (attempt)
            WHERE m.file NOT IN (SELECT file FROM output_links)
            ORDER BY 1, 2""").fetchall():
        out.setdefault(attempt, {"outputs": []})["outputs"].append(
            {"file": file, "method": method})
    return out


def _run_json(ri: RunInputs, d: Decomposition, causes: dict[str, Cause],
              eps: list[Episode], fidelity: str, warnings: list[dict[str, Any]],
              links: dict[str, dict[str, Any]]) -> dict[str, Any]:
    atts = []
    for p, row in zip(d.attempts, ri.rows, strict=True):
        lk = links.get(p.attempt, {})
        atts.append({"attempt": p.attempt, "job_id": row["job_id"], "start": iso(p.start),
                     "end": iso(p.end), "state": row["state"], "exit_code": row["exit_code"],
                     "nodes": list(row["nodes"] or []), "gpus": row["gpus"],
                     "resumed_from": p.resumed_from, "last_iteration": p.last_iteration,
                     "startup_s": p.startup, "ckpt_save_s": p.ckpt_save, "hang_s": p.hang,
                     "tail_s": p.tail, "repair_after_s": p.repair_after,
                     "source": row.get("source"), "estimated_compute_s": p.estimated_compute,
                     "run_link": lk.get("run_link"), "outputs": lk.get("outputs", [])})
    ints = []
    by_cat: dict[str, dict[str, float]] = {}
    for k, p in enumerate(d.attempts[:-1]):
        c = causes[p.attempt]
        nxt = d.attempts[k + 1]
        cost = p.lost_charged + p.hang + p.repair_after + nxt.startup
        ints.append({"attempt": p.attempt, "end": iso(p.end), "category": c.category,
                     "node": c.node, "cost_s": cost, "lost_s": p.lost_charged,
                     "hang_s": p.hang, "repair_s": p.repair_after, "startup_s": nxt.startup,
                     "lost_estimated_s": p.estimated_lost,
                     "state": ri.rows[k]["state"], "last_progress": iso(p.last_progress),
                     "cause": {"kind": c.kind, "code": c.code, "message": c.message,
                               "where": c.where, "ts": iso(c.ts)},
                     "symptoms": c.symptoms, "output_tail": c.output_tail})
        agg = by_cat.setdefault(c.category, {"count": 0, "cost_s": 0.0})
        agg["count"] += 1
        agg["cost_s"] += cost
    comps = {k: d.components[k] for k in COMPONENTS}
    if abs(d.check()) > 1e-6 * max(d.t_obs, 1.0):
        raise RuntimeError(f"internal error: run {ri.run}: the components sum to "
                           f"{sum(comps.values())} s, not T_obs = {d.t_obs} s")
    eps_cost = sum(e.cost for e in eps)
    tor, why = _tor(ri, d, warnings)
    extra = {"tor_undefined": why} if why else {}
    return {
        "run": ri.run, "start": iso(d.attempts[0].start), "end": iso(d.attempts[-1].end),
        "t_obs_s": d.t_obs, "t_opt_s": d.t_opt,
        "tor": tor, **extra,
        "ideal_step_s": d.ideal_step_s, "iterations_net": d.iterations_net,
        "start_iteration": d.start_iteration, "final_iteration": d.final_iteration,
        "components": comps,
        "slow_split": {"fail_slow_episodes": eps_cost, "jitter": comps["slow"] - eps_cost},
        "remainder_s": d.check(), "fidelity": fidelity,
        "log_interval_iterations": d.log_interval,
        "estimated": {f"{k}_s": v for k, v in d.estimated.items()},
        "dropped_progress_lines": ri.dropped_lines,
        "attempts": atts, "interruptions": ints,
        "by_category": dict(sorted(by_cat.items(), key=lambda kv: -kv[1]["cost_s"])),
        "slow_episodes": _episodes_json(d, eps),
        "fail_slow_exposure": _fail_slow_exposure(d, eps),
    }


def _mark_approx(r: dict[str, Any], ri: RunInputs, d: Decomposition, causes: dict[str, Cause],
                 split: set[str]) -> dict[str, Any]:
    """Add the ``approx`` fields (``pipeline.analyze.approx``) and the undefined-TOR reason."""
    by_name = {a.attempt: a for a in ri.attempts}
    per_attempt = []
    for k, (aj, p) in enumerate(zip(r["attempts"], d.attempts, strict=True)):
        aj["approx"] = approx.attempt_approx(k, d, by_name[p.attempt], ri.rows[k],
                                             p.attempt in split)
        per_attempt.append(aj["approx"])
    for ij in r["interruptions"]:
        c = causes[ij["attempt"]]
        ij["node_from"], ij["node_where"] = c.node_from, c.node_where
        # (no node: no note on where the node came from)
        ij["approx"] = approx.interruption_approx(c.node_from if c.node else None, c.ts_flag)
    has_progress = any(a.progress for a in ri.attempts)
    r["approx"] = approx.run_approx(per_attempt, has_progress)
    if not has_progress:  # no t*: these are unknown, not 0 (null in JSON, NULL in the tables)
        r["t_opt_s"] = None
        r["components"].update(dict.fromkeys(approx.UNMEASURED))
        r["slow_split"] = {"fail_slow_episodes": None, "jitter": None}
    why = approx.tor_reason(d)
    if why is not None and r.get("tor_undefined") is None:
        r["tor"], r["tor_undefined"] = None, why
    if r["tor"] is None and r["ideal_step_s"] != r["ideal_step_s"]:  # NaN: no step time
        r["ideal_step_s"] = None
    return r


def _episodes_json(d: Decomposition, eps: list[Episode]) -> list[dict[str, Any]]:
    return [{"attempt": d.attempts[e.attempt].attempt, "start": iso(e.start),
             "end": iso(e.end), "first_iteration": e.first_iteration,
             "last_iteration": e.last_iteration, "ratio": e.ratio, "cost_s": e.cost,
             "attempts": [d.attempts[k].attempt for k in e.attempts],
             "intervals": e.intervals, "started_inside": e.started_inside} for e in eps]


def _fail_slow_exposure(d: Decomposition, eps: list[Episode]) -> dict[str, Any]:
    """The time in which a fail-slow episode's start could be seen (each attempt's steady
    iterating time outside episodes) and the episodes whose start was seen: what the
    fail-slow rate is fitted from (``pipeline.model.fit``)."""
    secs = observed_seconds(d.intervals, eps)
    return {"seconds": sum(secs.values()), "episodes_started": sum(e.started_inside for e in eps),
            "per_attempt_s": {d.attempts[k].attempt: s for k, s in sorted(secs.items())}}


def _write_tables(con: duckdb.DuckDBPyConnection, results: list[dict[str, Any]],
                  decs: dict[str, Decomposition], runs: list[RunInputs],
                  warnings: list[dict[str, Any]]) -> None:
    def put(name: str, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
        con.register("tmp_arrow", pa.Table.from_pylist(rows, schema))
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM tmp_arrow")
        con.unregister("tmp_arrow")

    ts = pa.timestamp("us", tz="UTC")
    f64, s = pa.float64(), pa.string()
    put("runs", [{"run": r["run"], "start": _dt(decs[r["run"]].attempts[0].start),
                  "end": _dt(decs[r["run"]].attempts[-1].end), "t_obs_s": r["t_obs_s"],
                  "t_opt_s": r["t_opt_s"], "tor": r["tor"], "ideal_step_s": r["ideal_step_s"],
                  "iterations_net": r["iterations_net"], "attempts": len(r["attempts"]),
                  "interruptions": len(r["interruptions"]), "fidelity": r["fidelity"]}
                 for r in results],
        pa.schema([("run", s), ("start", ts), ("end", ts), ("t_obs_s", f64), ("t_opt_s", f64),
                   ("tor", f64), ("ideal_step_s", f64), ("iterations_net", pa.int64()),
                   ("attempts", pa.int64()), ("interruptions", pa.int64()), ("fidelity", s)]))
    put("decomposition", [{"run": r["run"], "component": k, "seconds": v,
                           "share": v / r["t_obs_s"] if r["t_obs_s"] and v is not None
                           else None}
                          for r in results for k, v in r["components"].items()],
        pa.schema([("run", s), ("component", s), ("seconds", f64), ("share", f64)]))
    put("attempt_parts", [{"run": ri.run, "attempt": p.attempt, "start": _dt(p.start),
                           "end": _dt(p.end), "startup_s": p.startup, "compute_s": p.compute,
                           "ckpt_save_s": p.ckpt_save, "hang_s": p.hang, "tail_s": p.tail,
                           "repair_after_s": p.repair_after, "lost_charged_s": p.lost_charged,
                           "resumed_from": p.resumed_from, "last_iteration": p.last_iteration}
                          for ri in runs for p in decs[ri.run].attempts],
        pa.schema([("run", s), ("attempt", s), ("start", ts), ("end", ts), ("startup_s", f64),
                   ("compute_s", f64), ("ckpt_save_s", f64), ("hang_s", f64), ("tail_s", f64),
                   ("repair_after_s", f64), ("lost_charged_s", f64),
                   ("resumed_from", pa.int64()), ("last_iteration", pa.int64())]))
    put("interruptions", [{"run": r["run"], **{k: i[k] for k in (
        "attempt", "category", "node", "cost_s", "lost_s", "hang_s", "repair_s", "startup_s",
        "state", "symptoms")}, "node_from": i.get("node_from"), "end": i["end"],
        "cause_kind": i["cause"]["kind"],
        "cause_code": i["cause"]["code"], "cause_message": i["cause"]["message"],
        "cause_where": i["cause"]["where"]} for r in results for i in r["interruptions"]],
        pa.schema([("run", s), ("attempt", s), ("category", s), ("node", s), ("cost_s", f64),
                   ("lost_s", f64), ("hang_s", f64), ("repair_s", f64), ("startup_s", f64),
                   ("state", s), ("symptoms", pa.int64()), ("node_from", s), ("end", s),
                   ("cause_kind", s),
                   ("cause_code", s), ("cause_message", s), ("cause_where", s)]))
    put("data_warnings", [{k: w[k] for k in ("code", "run", "attempt", "message", "fidelity")}
                          | {"files": w["files"]} for w in warnings],
        pa.schema([("code", s), ("run", s), ("attempt", s), ("message", s), ("fidelity", s),
                   ("files", pa.list_(s))]))
    put("slow_episodes", [{"run": run, **e} for run, r in
                          ((r["run"], r) for r in results) for e in r["slow_episodes"]],
        pa.schema([("run", s), ("attempt", s), ("start", s), ("end", s),
                   ("first_iteration", pa.int64()), ("last_iteration", pa.int64()),
                   ("ratio", f64), ("cost_s", f64)]))
