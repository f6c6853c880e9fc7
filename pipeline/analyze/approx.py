"""What was inferred rather than read: the ``approx`` fields of the analysis.

Every number of the decomposition is exact *given* its inputs; some inputs are not in the logs
and are inferred. Each such case gets a reason, per attempt, per interruption and per run
(the union of its attempts'), so that the terminal, the JSON and the report can mark the value
(``~``) and say why. The cases:

* **Attempt boundaries from the job output** (no scheduler record: job logs alone,
  Kubernetes): an attempt runs from its first to its last output line, so its start and end
  are inferred; the time before its first line is counted in the repair gap, not in startup,
  and the time after its last line is not seen (hang, tail).
* **First iteration's start from t***: the first progress line has no per-iteration time, so
  the first iteration is taken to have started t* x iterations before it (startup).
* **Resume point assumed**: an attempt with no logged checkpoint load is taken to have
  resumed from the latest save before it (lost work).
* **Save time estimated**: a save with no timer line in an interval with no per-iteration
  time is the interval minus iterations x t* (checkpoint saves).
* **No progress**: an attempt with no progress line is startup until its root cause's time and
  hang after it, or all startup when no cause has a time; a run with none at all has no t*,
  so T_opt, slow, lost work and saves cannot be measured and TOR is undefined (``tor: null``
  and ``tor_undefined``), never 0.
* **Node**: named by Slurm's ``*** JOB n ON host ... ***`` banner only (the batch host, not
  necessarily the failed node), by the symptoms only (where the first failing rank ran), or
  the attempt's only node (no evidence names one).
* **Time of the cause line**: a stamp the line did not carry in full (inherited from an
  earlier line, year or wall time inferred; ``ts_flag``).
"""

from __future__ import annotations

import math
from typing import Any

from pipeline.analyze.decompose import AttemptInput, AttemptParts, Decomposition
from pipeline.analyze.silent import STARTED

INFERRED_BOUNDS = ("start and end inferred from the first and last lines of its output (no "
                   "scheduler record): the time before its first line is counted as repair "
                   "gap, not startup; the time after its last line is not seen")
NODE_REASONS = {
    "banner": "the batch host named by Slurm's '*** JOB ... ON host ***' banner, not "
              "necessarily the failed node; no node-level line names one",
    "symptoms": "where the first failing rank ran (from the symptoms), not a node that "
                "node-level evidence names as at fault",
    "allocation": "the attempt's only node; no evidence names one",
}
TS_REASONS = {
    "inherited": "the cause line has no timestamp; the previous line's is used",
    "inferred_year": "the cause line's stamp has no year; inferred from the file",
    "uptime_anchored": "kernel uptime stamp anchored to wall time by another line",
    "relative": "an age relative to when the listing was taken",
}


def attempt_approx(k: int, d: Decomposition, a: AttemptInput, row: dict[str, Any],
                   split_at_cause: bool) -> dict[str, str]:
    """Reasons per field of attempt ``k`` (start, end, startup_s, ckpt_save_s, hang_s,
    tail_s, repair_after_s, resumed_from)."""
    p: AttemptParts = d.attempts[k]
    out: dict[str, str] = {}
    last = k + 1 == len(d.attempts)
    if row.get("fidelity") == "progress":
        started = row.get("reason") == STARTED  # (its start read from the container's)
        for f in ("start", "end", "startup_s", "repair_after_s", "tail_s" if last else "hang_s"):
            if not (started and f in ("start", "startup_s")):
                out[f] = INFERRED_BOUNDS
        if last:
            out.pop("repair_after_s")
    if not a.progress:
        out["startup_s"] = ("no progress line: its time until the root cause's line is counted "
                            "as startup, the rest as hang" if split_at_cause else
                            "no progress line: all its time is counted as startup")
        if split_at_cause:
            out["hang_s"] = out["startup_s"]
    elif not math.isfinite(a.progress[0][2]):
        out.setdefault("startup_s", "the first iteration's start is estimated as t* x the "
                                    "iterations before the first progress line (no "
                                    "per-iteration time logged)")
    if k > 0 and a.resumed_from is None and a.progress and p.resumed_from != d.start_iteration:
        out["resumed_from"] = ("no checkpoint load logged: taken to resume from the latest "
                               "save before it (work lost by the previous interruption)")
    if any(s.seconds is None for s in a.saves) and not all(
            math.isfinite(ms) for _t, _i, ms in a.progress):
        out["ckpt_save_s"] = ("save time estimated as the interval minus iterations x t* (no "
                              "save timer, no per-iteration time)")
    return out


#: components a run without any progress line cannot measure: written as null, not 0
UNMEASURED = ("t_opt", "slow", "lost", "ckpt_save")

#: attempt field -> run component it feeds
_COMPONENT = {"startup_s": "startup", "hang_s": "hang", "tail_s": "tail",
              "repair_after_s": "repair", "ckpt_save_s": "ckpt_save", "resumed_from": "lost"}


def run_approx(attempts: list[dict[str, str]], has_progress: bool) -> dict[str, str]:
    """Reasons per component of a run: the first reason of any attempt feeding it."""
    out: dict[str, str] = {}
    for per in attempts:
        for f, why in per.items():
            comp = _COMPONENT.get(f)
            if comp and comp not in out:
                out[comp] = why
    if not has_progress:
        for comp in UNMEASURED:
            out[comp] = ("no progress lines: no healthy step time t*, so ideal work, slowness, "
                         "lost work and saves cannot be measured (null: unknown, not 0)")
    return out


def tor_reason(d: Decomposition) -> str | None:
    """Why TOR is undefined for this run (None: it is defined)."""
    if not any(p.last_progress is not None for p in d.attempts) or not math.isfinite(
            d.ideal_step_s):
        return ("no progress lines: add the job output (training iteration lines) to the "
                "inputs")
    if d.t_obs <= 0:
        return "the run has no duration"
    return None


def interruption_approx(node_from: str | None, ts_flag: str | None) -> dict[str, str]:
    out = {}
    if node_from in NODE_REASONS:
        out["node"] = NODE_REASONS[node_from]
    if ts_flag in TS_REASONS:
        out["cause_ts"] = TS_REASONS[ts_flag]
    return out
