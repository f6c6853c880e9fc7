"""Side by side: our realized TOR beside Google's ml-goodput-measurement goodput (not a test).

Feeds ml-goodput-measurement (``pip install ml-goodput-measurement``; its ``GoodputRecorder``
and ``GoodputCalculator``) the same step/job events as our parsed timeline, fully offline
through its ``cloud_logger`` hook, and prints both for every run of a campaign directory:

    python benchmarks/goodput_compare.py CAMPAIGN_DIR [--workdir DIR] [--no-ckpt-events] [--json]

**Plugging it in offline.** ``GoodputRecorder(job, logger, logging_enabled=True,
cloud_logger=X)`` and ``GoodputCalculator(job, logger, cloud_logger=X, cache_dir=D)`` accept
any object with ``write_cloud_logging_entry(entry)``, ``read_cloud_logging_entries(start_time,
end_time, last_entry_info) -> (payloads, (timestamp, insert_id))`` and ``flush()``;
``MemoryCloudLogger`` below is that object (no Google client is created when it is given).
The calculator keeps a JSONL cache of the entries in ``cache_dir`` (default ``/tmp``,
appended to across runs), so each calculation here gets a fresh directory.

**The events** (one per fact our timeline holds, written in time order with backfilled times):

* ``job_start_time`` = each attempt's start; ``job_end_time`` = the last attempt's end only
  (an interrupted attempt dies without calling ``record_job_end_time``; the calculator only
  uses the last end anyway);
* ``step_start_time`` for every iteration: a progress line at ``ts`` reporting ``ms`` per
  iteration for iterations ``(p, i]`` gives iteration ``j`` the start
  ``ts - (i - j + 1) * ms / 1000`` (log interval 1: ``ts - ms``); step number = Megatron's
  iteration number, so a resume from checkpoint ``K`` re-logs step ``K + 1`` -- exactly its
  convention ("restarted from step n: progress till n - 1 preserved");
* optionally (default on) each checkpoint save as the Orbax checkpoint-logger entry it reads
  (``event_type: save``, ``checkpoint_manager_blocking_duration_secs`` = the save timer).

**What its goodput is, in our terms.** Its productive time is the sum, over the steps it
believes survived, of the gaps between consecutive step starts, minus per restart segment the
first step's excess over the segment mean (``PROGRAM_STARTUP`` badput), plus ``job_end - last
step start``, minus the blocking checkpoint-save time it was told about; its total is ``last
job end - first job start`` = our T_obs. The gaps telescope, so (``told`` = save seconds it
was told, which are our ``ckpt_save`` plus the final save that is part of our ``tail``;
``blind`` = restarts it cannot see, below)::

    productive + PROGRAM_STARTUP == t_opt + slow + ckpt_save + tail + blind - told
    goodput - TOR == (slow + ckpt_save + tail + blind - told - PROGRAM_STARTUP) / T_obs

to about a second per restart (log lines carry whole seconds). Where its assumptions hold
(every step logged, each restart re-logs a step, saves reported, no fail-slow) that is
``goodput == TOR + (tail - final save) / T_obs`` (+ its tiny first-step estimate). Its badput
``WASTED_PROGRESS + INFRASTRUCTURE_RECOVERY + OTHER`` == our ``lost + hang + repair +
startup`` (``OTHER`` is our startup: it is told no TPU-init / training-prep brackets; a failed
attempt that never stepped lands in ``INFRASTRUCTURE_RECOVERY``).

**Where and why they differ.**

* ``slow``: every step that survived is productive to it, however slow; fail-slow and jitter
  excess over t* are badput to us. (Its step-time deviation metric is a separate signal.)
* ``tail``: it counts ``job_end - last step start`` as productive (the shutdown, and the
  final save unless it is told); to us it is overhead.
* ``ckpt_save``: productive to it unless a checkpoint logger reports the blocking time.
* ``PROGRAM_STARTUP``: the first step of each segment above the segment mean is badput to it;
  to us that excess is ``slow`` (or nothing, if the first step was fast).
* Restarts it cannot see: it detects a restart only when a step number is logged twice.
  When an attempt dies after saving checkpoint ``K`` but before logging ``K + 1``, the next
  attempt's ``K + 1`` is new to it, so the whole gap -- the hang, the repair and the next
  startup -- becomes one long productive step (``blind_gap_s`` below, when that step
  survives; if the two step numbers are not consecutive it skips the pair instead and loses
  the old attempt's last step).
* No hang vs repair: ``INFRASTRUCTURE_RECOVERY`` runs from the last step start before a
  restart to the next job start, so it holds the lost last step, our hang and our repair.
* It needs every step: with a log interval > 1 and no expansion (``expand=False``) no two
  logged steps are consecutive and its productive time collapses to the final ``job_end -
  last step start`` (told the saves too, it goes negative and it refuses to answer).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from parsers.reader import expand_inputs
from pipeline.analyze.decompose import AttemptInput, decompose
from pipeline.analyze.progress import collect
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest

JOB = "tormortem-compare"
LOGGER = "goodput-compare"
CKPT_DIR = "/ckpt"  #: not gs://, so it counts as a "local" save; both kinds are summed


class MemoryCloudLogger:
    """In-memory stand-in for ml-goodput-measurement's ``_CloudLogger``.

    Entries are kept in write order with a timestamp (the event time carried by their
    ``*_time`` field, else the previous entry's) and an insert id, and read back in ascending
    order with Cloud Logging's window semantics (``start < timestamp <= end``, or after
    ``last_entry_info``)."""

    def __init__(self, job_name: str) -> None:
        self.job_name = job_name
        self.entries: list[tuple[datetime, str, dict[str, Any]]] = []

    def write_cloud_logging_entry(self, entry: dict[str, Any] | None) -> None:
        if entry is None or entry.get("job_name", self.job_name) != self.job_name:
            return
        times = [v for k, v in entry.items() if k.endswith("_time") and isinstance(v, float)]
        if times:
            ts = datetime.fromtimestamp(times[0], UTC)
        else:
            ts = self.entries[-1][0] if self.entries else datetime.fromtimestamp(0, UTC)
        self.entries.append((ts, f"{len(self.entries):012d}", dict(entry)))

    def flush(self) -> None:
        return None

    def read_cloud_logging_entries(
        self, start_time: datetime | None = None, end_time: datetime | None = None,
        last_entry_info: tuple[datetime, str] | None = None,
    ) -> tuple[list[dict[str, Any]], tuple[datetime | None, str | None]]:
        rows = sorted(self.entries, key=lambda r: (r[0], r[1]))
        if last_entry_info is not None and last_entry_info[0] is not None:
            lt, lid = last_entry_info
            rows = [r for r in rows if (r[0], r[1]) > (lt, lid)]
        elif start_time is not None:
            rows = [r for r in rows if r[0] > start_time]
        if end_time is not None:
            rows = [r for r in rows if r[0] <= end_time]
        last = (rows[-1][0], rows[-1][1]) if rows else (None, None)
        return [dict(r[2]) for r in rows], last


@dataclass
class Event:
    t: float
    kind: str  #: job_start | job_end | step | save
    step: int = 0
    seconds: float = 0.0


@dataclass
class Timeline:
    events: list[Event] = field(default_factory=list)
    #: restarts it cannot see (the step after the resume point was never logged before):
    #: (attempt, seconds from the previous attempt's last progress line to this attempt's
    #: first step start -- hang, repair and startup -- that it counts as one productive step)
    blind: list[tuple[str, float]] = field(default_factory=list)
    #: blocking save seconds it is told (per step, the mean over repeats, as it computes them)
    saves_told_s: float = 0.0
    attempts_with_steps: int = 0


def events_from_attempts(attempts: list[AttemptInput], *, ckpt_events: bool = True,
                         expand: bool = True) -> Timeline:
    """The recorder calls our parsed timeline corresponds to (see the module docstring)."""
    d = decompose(attempts)
    parts = d.attempts
    atts = sorted(attempts, key=lambda a: (a.start, a.end))
    t_star = d.ideal_step_s if math.isfinite(d.ideal_step_s) else 0.0
    tl = Timeline()
    seg: set[int] = set()  # step numbers of the calculator's current restart segment
    #: the previous attempt with steps: its last progress line's time, last step and its start
    prev_last: tuple[float, int, float] | None = None
    told: dict[int, list[float]] = {}
    for k, a in enumerate(atts):
        tl.events.append(Event(a.start, "job_start"))
        prev_i = parts[k].resumed_from
        steps: list[tuple[float, int]] = []
        for ts, it, ms in a.progress:
            per = ms / 1000.0 if math.isfinite(ms) else t_star
            lo = prev_i if prev_i is not None and prev_i < it else it - 1
            n = it - lo
            if expand:
                steps.extend((ts - (it - j + 1) * per, j) for j in range(lo + 1, it + 1))
            else:
                steps.append((ts - per * n, it))
            prev_i = it
        saves = {s.iteration: s.seconds for s in a.saves if s.seconds is not None}
        if ckpt_events:
            for s, v in saves.items():
                tl.events.append(Event(_line_time(a, s) + v, "save", step=s, seconds=v))
                told.setdefault(s, []).append(v)
        tl.events.extend(Event(t, "step", step=j) for t, j in steps)
        if steps:
            tl.attempts_with_steps += 1
            first = steps[0][1]
            if first in seg or prev_last is None:
                seg = set()
            else:
                last_t, last_step, last_start = prev_last
                # consecutive: the pair (last_step -> first) is one long step it counts;
                # else it skips the pair, and with it the old last step's own duration
                gap = (steps[0][0] - last_t if first == last_step + 1
                       else -(last_t - last_start))
                later = [p.resumed_from for p in parts[k + 1:] if p.resumed_from is not None]
                # the merged pair (first - 1 -> first) is productive to it unless a later
                # restart goes back before it (a reload of first - 1 keeps it)
                if all(r >= first - 1 for r in later):
                    tl.blind.append((a.attempt, gap))
            seg.update(j for _, j in steps)
            prev_last = (a.progress[-1][0], steps[-1][1], steps[-1][0])
    tl.events.append(Event(atts[-1].end, "job_end"))
    order = {"job_start": 0, "save": 1, "step": 2, "job_end": 3}
    tl.events.sort(key=lambda e: (e.t, order[e.kind]))
    tl.saves_told_s = sum(sum(v) / len(v) for v in told.values())
    return tl


def _line_time(a: AttemptInput, iteration: int) -> float:
    for ts, it, _ in a.progress:
        if it >= iteration:
            return ts
    return a.progress[-1][0] if a.progress else a.start


@dataclass
class GoodputResult:
    goodput: float  #: fraction (its percentage / 100)
    productive_s: float
    total_s: float
    disruptions: int
    max_productive_step: int
    badput_s: dict[str, float]  #: BadputType name -> seconds (custom events summed)


def run_goodput(tl: Timeline, cache_dir: Path, job: str = JOB) -> GoodputResult:
    """Record the timeline through its ``GoodputRecorder`` into a ``MemoryCloudLogger`` and
    compute the job goodput with its ``GoodputCalculator`` (no network)."""
    from ml_goodput_measurement.src import goodput as gp

    mem = MemoryCloudLogger(job)
    rec = gp.GoodputRecorder(job, LOGGER, logging_enabled=True, cloud_logger=mem)
    for e in tl.events:
        when = datetime.fromtimestamp(e.t, UTC)
        if e.kind == "job_start":
            rec.record_job_start_time(when)
        elif e.kind == "job_end":
            rec.record_job_end_time(when)
        elif e.kind == "step":
            rec.record_step_start_time(e.step, when)
        else:  # what Orbax's checkpoint logger writes for a save
            mem.write_cloud_logging_entry({
                "job_name": job, "step": e.step, "event_type": "save", "directory": CKPT_DIR,
                "checkpoint_manager_blocking_duration_secs": e.seconds,
                "checkpointer_blocking_duration_secs": e.seconds,
                "wait_for_prev_duration_secs": 0.0, "get_old_steps_duration_secs": 0.0,
            })
    cache_dir.mkdir(parents=True, exist_ok=True)
    calc = gp.GoodputCalculator(job, LOGGER, cloud_logger=mem, cache_dir=str(cache_dir))
    pct, _, max_step = calc.get_job_goodput(include_badput_breakdown=True)
    det = calc.get_job_goodput_details()
    productive = float(sum(det["goodput_time"].values()))
    badput: dict[str, float] = {}
    for bt, v in det["badput_time"].items():
        badput[bt.name] = float(sum(v.values())) if isinstance(v, dict) else float(v)
    return GoodputResult(float(pct) / 100.0, productive, float(det["total_elapsed_time"]),
                         int(det["disruption_count"]), int(max_step), badput)


@dataclass
class RunComparison:
    run: str
    t_obs_s: float
    tor: float
    components: dict[str, float]
    goodput: GoodputResult
    blind: list[tuple[str, float]]
    saves_told_s: float
    attempts_with_steps: int

    @property
    def blind_gap_s(self) -> float:
        return sum(g for _, g in self.blind)

    def predicted_productive_s(self) -> float:
        """Its productive time, predicted from our components and the save times it was told:
        ``t_opt + slow + ckpt_save + tail + blind gaps - saves told``, before its
        PROGRAM_STARTUP (which is its own estimate)."""
        c = self.components
        return (c["t_opt"] + c["slow"] + c["ckpt_save"] + c["tail"] + self.blind_gap_s
                - self.saves_told_s)

    def predicted_goodput(self) -> float:
        return ((self.predicted_productive_s() - self.goodput.badput_s.get("PROGRAM_STARTUP", 0.0))
                / self.t_obs_s)

    def residual_s(self) -> float:
        """Its productive + PROGRAM_STARTUP minus the prediction: rounding only (log lines carry
        whole seconds) where the mapping holds."""
        g = self.goodput
        return (g.productive_s + g.badput_s.get("PROGRAM_STARTUP", 0.0)
                - self.predicted_productive_s())


def compare(campaign: Path, workdir: Path, *, ckpt_events: bool = True,
            expand: bool = True) -> list[RunComparison]:
    """Ingest + analyze ``campaign`` into ``workdir/out``, then run the goodput calculator on
    each run's timeline."""
    out = workdir / "out"
    ingest(expand_inputs([str(campaign)]), out)
    db = out / "tormortem.duckdb"
    ours = {r["run"]: r for r in analyze_db(db)["runs"]}
    con = duckdb.connect(str(db))
    try:
        runs = collect(con)
    finally:
        con.close()
    res = []
    for n, ri in enumerate(runs):
        tl = events_from_attempts(ri.attempts, ckpt_events=ckpt_events, expand=expand)
        g = run_goodput(tl, workdir / f"goodput-cache-{n}")
        r = ours[ri.run]
        res.append(RunComparison(ri.run, float(r["t_obs_s"]), float(r["tor"]),
                                 {k: float(v) for k, v in r["components"].items()}, g,
                                 tl.blind, tl.saves_told_s, tl.attempts_with_steps))
    return res


def render(rows: list[RunComparison]) -> str:
    lines = []
    for r in rows:
        g, c, t = r.goodput, r.components, r.t_obs_s
        lines += [f"run {r.run}: T_obs {t:.0f} s (its total {g.total_s:.0f} s)",
                  f"  ours   TOR = T_opt/T_obs         {r.tor:.4f}",
                  f"  its    goodput                   {g.goodput:.4f}  "
                  f"({g.disruptions} restarts seen, checkpoint events "
                  f"{'on' if r.saves_told_s else 'off'})",
                  f"  ours   predicted goodput         {r.predicted_goodput():.4f}  "
                  f"(productive residual {r.residual_s():+.1f} s)",
                  "  our components (s, share of T_obs):"]
        lines += [f"    {k:<10} {v:>11.1f}  {v / t:.4f}" for k, v in c.items()]
        lines.append("  its badput (s, share of its total):")
        lines += [f"    {k:<40} {v:>11.1f}  {v / g.total_s:.4f}"
                  for k, v in g.badput_s.items() if v]
        lines.append("  where they differ (share of T_obs): "
                     f"slow {c['slow'] / t:+.4f}, tail {c['tail'] / t:+.4f}, "
                     f"program startup {-g.badput_s.get('PROGRAM_STARTUP', 0.0) / t:+.4f}"
                     + f", ckpt_save - saves told {(c['ckpt_save'] - r.saves_told_s) / t:+.4f}"
                     + (f", blind restarts {r.blind_gap_s / t:+.4f} ({len(r.blind)})"
                        if r.blind else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("campaign", type=Path, help="campaign dir (tormortem simulate --out)")
    ap.add_argument("--workdir", type=Path, help="where to ingest (default: a temp dir)")
    ap.add_argument("--no-ckpt-events", action="store_true",
                    help="do not tell it the checkpoint save times")
    ap.add_argument("--no-expand", action="store_true",
                    help="one step record per progress line (log interval > 1)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="goodput-compare-") as tmp:
        rows = compare(a.campaign, a.workdir or Path(tmp), ckpt_events=not a.no_ckpt_events,
                       expand=not a.no_expand)
    if a.json:
        print(json.dumps([{**asdict(r), "predicted_productive_s": r.predicted_productive_s(),
                           "predicted_goodput": r.predicted_goodput(),
                           "residual_s": r.residual_s()} for r in rows], indent=1, default=str))
    else:
        print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
