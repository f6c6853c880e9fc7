"""Clock skew between hosts and the scheduler: measured, corrected within a bound, reported.

Node logs (kernel, slurmd) are stamped by each node's own clock; attempts' starts and ends by
the scheduler's. Five minutes of skew moves a node's Xid out of the window of the attempt it
ended. ``estimate_skew`` measures each host's offset (host clock minus scheduler clock) per
clock source (``kernel``, ``slurmd``) from events seen on both sides:

* **the same job's end, on the node and at the controller** (two-sided): slurmd's ``[J.batch]
  done with job`` on the batch host against slurmctld's ``_job_complete: JobId=J`` (or sacct's
  End, which is truncated to the second), and slurmd's ``Launching batch job J`` against
  ``sched: Allocate JobId=J``. The offset is the median of these differences (so a late
  outlier -- a node whose slurmd was stopped logs its job's end when it wakes -- does not move
  it); its bound is their median absolute deviation (at least ``MIN_BOUND_S``). Two samples
  that disagree by more than ``AGREE_S`` leave the host uncorrected.
* **kernel failure lines a node stamped while it ran none of its jobs** (one-sided): a
  failure line (Xid, ECC, link down, MCE, OOM ...) at ``x`` on a host with no attempt running
  then, at most ``max_skew`` after the end ``e`` of the host's last attempt, says the host
  runs at least ``x - e`` ahead (the fault ended that attempt, so it happened before ``e``);
  at most ``max_skew`` before the start ``s`` of its next attempt, that it runs at least
  ``s - x`` behind. The nearer explanation is taken. All such bounds of one host must agree
  (the largest lower bound not above the smallest upper bound); the offset is the value
  nearest zero they allow, i.e. the smallest correction that explains every line. A host with
  contradicting bounds is reported and not corrected. (Not slurmd's lines: a node whose
  slurmd was down or restarted logs errors while it runs no job, whatever its clock.)
* **Slurm's node-down time against the node's last kernel line** (of a node that then
  rebooted): that line cannot have been written after Slurm declared the node not
  responding; its excess is a lower bound like the ones above.

NCCL's own lines carry no time stamp of their own (``host:pid:tid [dev] NCCL WARN ...``), so
NCCL peers give no offsets here. A kernel log with no evidence of its own takes its host's
slurmd offset (same machine, same clock). ``host_skew(host, source, offset_s, bound_s,
method, samples)`` holds the result (an offset under ``MIN_SKEW_S`` counts as none);
``evidence.sql`` subtracts the offset from node evidence and widens node windows by the bound
(plus ``--skew-tolerance``).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

DEFAULT_MAX_SKEW_S = 600.0
AGREE_S = 5.0  #: two-sided samples of one clock further apart than this disagree
#: offsets below this are no skew worth correcting: a node logs a job's end a second or two
#: after the controller (slurmstepd tears the step down first), and windows allow 30 s
MIN_SKEW_S = 5.0
MIN_BOUND_S = 1.0
RUNNING_SLACK_S = 30.0  #: a line this close to an attempt on its host needs no skew


@dataclass
class Clock:
    host: str
    source: str
    pairs: list[float] = field(default_factory=list)  #: two-sided differences
    lower: list[float] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)

    def result(self) -> dict[str, Any] | None:
        if self.pairs:
            med = statistics.median(self.pairs)
            spread = max(abs(d - med) for d in self.pairs)
            if len(self.pairs) < 3 and spread > AGREE_S:
                # two pairs that disagree (a node whose slurmd was stopped logs its job's
                # end late): no majority to tell the clock from the outlier
                return {"offset_s": 0.0, "bound_s": 0.0, "samples": len(self.pairs),
                        "method": "job ends on node and controller that disagree by "
                                  f"{2 * spread:.0f} s: not corrected"}
            return {"offset_s": med, "bound_s": max(spread if len(self.pairs) < 3 else
                                                    _mad(self.pairs, med), MIN_BOUND_S),
                    "method": "job end on node and controller", "samples": len(self.pairs)}
        if not self.lower and not self.upper:
            return None
        lo = max(self.lower, default=float("-inf"))
        hi = min(self.upper, default=float("inf"))
        n = len(self.lower) + len(self.upper)
        if lo > hi:
            return {"offset_s": 0.0, "bound_s": 0.0, "samples": n,
                    "method": f"node lines that contradict each other (ahead >= {lo:.0f} s, "
                              f"behind <= {-hi:.0f} s): not corrected"}
        off = lo if lo > 0 else (hi if hi < 0 else 0.0)
        # the least correction that explains the lines: the clock may be off by more
        return {"offset_s": off, "bound_s": MIN_BOUND_S, "samples": n, "at_least": True,
                "method": "failure lines stamped while the host ran none of its jobs"}


def _mad(xs: list[float], med: float) -> float:
    """Median absolute deviation: the spread of the majority, outliers left out."""
    return statistics.median(abs(x - med) for x in xs)


def estimate_skew(con: duckdb.DuckDBPyConnection, max_skew_s: float = DEFAULT_MAX_SKEW_S,
                  enabled: bool = True) -> list[dict[str, Any]]:
    """Create ``host_skew``; returns its rows with a non-zero offset (for the report). Reads
    ``failure_events`` (rootcause.failure_events), which must exist."""
    clocks: dict[tuple[str, str], Clock] = {}

    def clock(h: str, s: str) -> Clock:
        return clocks.setdefault((h, s), Clock(h, s))

    if enabled:
        _two_sided(con, clock, max_skew_s)
        _one_sided(con, clock, max_skew_s)
        _node_down(con, clock, max_skew_s)
    rows: list[dict[str, Any]] = []
    for (h, s), c in sorted(clocks.items()):
        r = c.result()
        if r is not None:
            if abs(r["offset_s"]) < MIN_SKEW_S:
                r["offset_s"] = 0.0
            rows.append({"host": h, "source": s, **r})
    have = {(r["host"], r["source"]) for r in rows}
    for r in [r for r in rows if r["source"] == "slurmd"]:
        if (r["host"], "kernel") not in have:  # same machine, same clock
            rows.append({**r, "source": "kernel", "method": r["method"] + " (slurmd's)"})
    con.register("tmp_skew", pa.Table.from_pylist(rows, pa.schema([
        ("host", pa.string()), ("source", pa.string()), ("offset_s", pa.float64()),
        ("bound_s", pa.float64()), ("method", pa.string()), ("samples", pa.int64())])))
    con.execute("CREATE OR REPLACE TABLE host_skew AS SELECT * FROM tmp_skew")
    con.unregister("tmp_skew")
    return [r for r in rows if r["offset_s"] or "not corrected" in r["method"]]


def _two_sided(con: duckdb.DuckDBPyConnection, clock: Any, max_skew: float) -> None:
    q = """
        WITH node AS (
            SELECT host, job_id, kind, epoch(ts) AS t FROM events
            WHERE source = 'slurmd' AND host IS NOT NULL AND ts IS NOT NULL
              AND code = 'batch' AND kind IN ('step_end', 'step_start')),
        ctl AS (
            SELECT job_id, CASE kind WHEN 'job_end' THEN 'step_end' ELSE 'step_start' END
                   AS kind, epoch(ts) AS t FROM events
            WHERE source = 'slurmctld' AND kind IN ('job_end', 'job_start')
              AND ts IS NOT NULL AND (kind = 'job_start' OR code = 'done'))
        SELECT n.host, n.t - arg_min(c.t, abs(n.t - c.t)) FROM node n
        JOIN ctl c ON c.job_id = n.job_id AND c.kind = n.kind
        GROUP BY n.host, n.job_id, n.kind, n.t"""
    for host, d in con.execute(q).fetchall():
        if d is not None and abs(d) <= max_skew:
            clock(host, "slurmd").pairs.append(float(d))


def _one_sided(con: duckdb.DuckDBPyConnection, clock: Any, max_skew: float) -> None:
    """Per kernel failure line on a host, against the attempts that ran on that host (node
    lists unnested in the database): whether one was running (within ``RUNNING_SLACK_S``),
    the nearest end before it and the nearest start after it."""
    q = """
        WITH line AS (
            SELECT row_number() OVER () AS lid, host, source, epoch(ts) AS x
            FROM failure_events WHERE source = 'kernel' AND host IS NOT NULL
              AND ts IS NOT NULL AND job_id IS NULL),
        win AS (
            SELECT h, epoch(start) AS s, epoch(coalesce("end", start)) AS e
            FROM (SELECT unnest(nodes) AS h, start, "end" FROM attempts_linked)
            WHERE h IN (SELECT host FROM line))
        SELECT l.host, l.source, bool_or(w.s - $slack <= l.x AND l.x <= w.e + $slack),
               min(l.x - w.e) FILTER (w.e < l.x), min(w.s - l.x) FILTER (w.s > l.x)
        FROM line l JOIN win w ON w.h = l.host
        GROUP BY l.lid, l.host, l.source"""
    for host, src, running, ahead, behind in con.execute(
            q, {"slack": RUNNING_SLACK_S}).fetchall():
        if running:
            continue
        if ahead is not None and ahead <= max_skew and (behind is None or ahead <= behind):
            clock(host, src).lower.append(float(ahead))
        elif behind is not None and behind <= max_skew:
            clock(host, src).upper.append(-float(behind))


def _node_down(con: duckdb.DuckDBPyConnection, clock: Any, max_skew: float) -> None:
    """A node that Slurm declared not responding and that then rebooted: its last kernel line
    from before the reboot cannot be younger than the declaration. (Without a reboot the
    node may simply have lost its slurmd and gone on logging: no bound.)"""
    q = """
        WITH down AS (
            SELECT host, epoch(ts) AS t FROM events
            WHERE source = 'slurmctld' AND kind = 'node_not_responding' AND ts IS NOT NULL),
        k AS (
            SELECT host, epoch(ts) AS t, epoch(ts) - uptime_s AS boot FROM events
            WHERE source = 'kernel' AND ts IS NOT NULL AND host IS NOT NULL
              AND uptime_s IS NOT NULL),
        reboot AS (
            SELECT d.host, d.t, min(k.boot) AS boot FROM down d JOIN k ON k.host = d.host
            WHERE k.boot > d.t - $max AND k.boot < d.t + 7200 GROUP BY d.host, d.t)
        SELECT r.host, max(k.t) - r.t FROM reboot r JOIN k ON k.host = r.host
        WHERE k.boot < r.boot - 60 AND k.t > r.t AND k.t <= r.t + $max
        GROUP BY r.host, r.t"""
    for host, excess in con.execute(q, {"max": max_skew}).fetchall():
        if excess is not None and excess > 0:
            clock(host, "kernel").lower.append(float(excess))
