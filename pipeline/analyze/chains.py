"""Runs across job ids and names: which attempts are one training campaign.

A resubmitted job gets a new id, and sometimes a new name (``pretrain-part2`` after
``pretrain-part1``); an array task runs one after another (``--array=0-9%1``) or side by
side. ``assign_runs`` starts from the first guess of ``attempts_linked.sql`` (``--run-map``,
else the PyTorchJob name, else the job name; tasks of one array that run at the same time are
separate runs, ``<name>_<task>``) and merges runs on evidence, in this order:

* ``dependency``: the job waited for a job of the other run (sacct SubmitLine's
  ``--dependency``/``-d``, scontrol's ``Dependency=``) and trains (it has progress lines);
* ``checkpoint``: an attempt loads a checkpoint (iteration and directory) that an attempt of
  the other run saved earlier, and trains on from it (its first progress line is above the
  loaded iteration: a fine-tuning run that loads a pretrained checkpoint and counts from 0
  again is another run);
* ``ckpt_path``: both save checkpoints to the same directory (Megatron's ``saving checkpoint
  ... to DIR``; loading from a directory alone is not enough, for the same reason);
* ``time``: an attempt inferred from output no scheduler record accounts for, with nothing
  else to go by, joins the one run whose time span it falls in or right after.

Decision: an attempt that trains from scratch -- progress from iteration ``FRESH_ITER`` or
below, no checkpoint load -- begins a new run (``fresh_start``) after attempts of its name
that trained and saved a checkpoint (it would have loaded one), or that trained and ended
more than ``FRESH_GAP_S`` before it; a restart from scratch after a failure before the first
save is the same run. The same sbatch script's smoke test two days before a campaign, or a
finished experiment run again, gave one run whose gap was "repair" (TOR 0.5651 for 0.8052,
no word). Such a run is never merged after another one either. The part with the most
attempt time keeps the name; the others are named ``<name>@<start, UTC minute>``.

Two runs whose attempts overlap in time are never merged: a chain runs one attempt after
another. Overlap counts when one pair overlaps by more than the least of ``PAIR_OVERLAP_S``
and half the shorter attempt (but at least ``MIN_OVERLAP_S``: stamps are whole seconds), or
by ``OVERLAP_S`` in all (a new pod may start before the old one is reaped). A job
``--run-map`` names keeps that run, and two mapped runs are never merged. The merged run is
named after its earliest attempt's run. ``run_links`` records, per job, the run and how it
was linked.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import pyarrow as pa

from pipeline.analyze.slurmpat import dependency_ids, submit_options

OVERLAP_S = 60.0
#: the directory in Megatron's checkpoint lines (parsers/megatron.py): "saving checkpoint at
#: iteration N to DIR", "successfully saved checkpoint from iteration N to DIR [ t 1/1 ...",
#: " loading checkpoint from DIR at iteration N", "successfully loaded checkpoint from DIR [..."
_PATH = re.compile(r"(?:iteration\s+\d+ to|checkpoint from(?! iteration)) (\S+)")
PAIR_OVERLAP_S = 30.0
FRESH_ITER = 100  #: a first progress line at or below this, with no load, starts from scratch
FRESH_GAP_S = 86400.0  #: ... and begins a new run this long after unsaved training
MIN_OVERLAP_S = 2.0


@dataclass
class Att:
    attempt: str
    job_id: str
    run: str
    start: float
    end: float
    source: str
    mapped: bool
    progress: bool = False
    load: int | None = None  #: first checkpoint loaded
    load_path: str | None = None
    first_iter: int | None = None  #: first progress line's iteration
    saves: set[tuple[int, str | None]] = field(default_factory=set)
    save_paths: set[str] = field(default_factory=set)

    @property
    def fresh(self) -> bool:
        return self.progress and self.load is None and self.first_iter is not None \
            and self.first_iter <= FRESH_ITER

    def saved(self, it: int, path: str | None) -> bool:
        return any(s == it and (path is None or p is None or p == path) for s, p in self.saves)


def _collect(con: duckdb.DuckDBPyConnection) -> list[Att]:
    atts = {}
    for a, j, run, s, e, src, mapped in con.execute(
            "SELECT a.attempt, a.job_id, a.run, epoch(a.start), epoch(coalesce(a.\"end\", "
            "a.start)), a.source, m.job_id IS NOT NULL FROM attempts_linked a LEFT JOIN "
            "run_map m ON m.job_id = a.job_id ORDER BY a.start, a.attempt").fetchall():
        atts[a] = Att(a, j, run, float(s), float(e), src, bool(mapped))
    for a, kind, it, msg in con.execute(
            "SELECT ae.attempt, ae.kind, ae.iteration, e.message FROM attempt_events ae "
            "JOIN events e ON e.file = ae.file AND e.line_no = ae.line_no AND e.kind = ae.kind "
            "WHERE ae.kind IN ('ckpt_save_start', 'ckpt_save_end', 'ckpt_load') "
            "ORDER BY ae.ts, ae.line_no").fetchall():
        x = atts[a]
        m = _PATH.search(msg or "")
        path = m.group(1).rstrip("/") if m else None
        if kind == "ckpt_load" and x.load is None and it is not None:
            x.load, x.load_path = int(it), path
        elif kind in ("ckpt_save_start", "ckpt_save_end") and it is not None:
            x.saves.add((int(it), path))
            if path:
                x.save_paths.add(path)
    for a, first in con.execute("SELECT attempt, min(iteration) FROM attempt_events "
                                "WHERE kind = 'iteration' GROUP BY attempt").fetchall():
        atts[a].progress, atts[a].first_iter = True, first
    return list(atts.values())


def _deps(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    deps: dict[str, list[str]] = defaultdict(list)
    for job, line, dep in con.execute(
            "SELECT job_id, submit_line, dependency FROM attempts").fetchall():
        for d in dependency_ids(submit_options(line).get("dependency")) + dependency_ids(dep):
            if d not in deps[job]:
                deps[job].append(d)
    return deps


class _Runs:
    def __init__(self, atts: list[Att]) -> None:
        self.parent = {a.run: a.run for a in atts}
        self.members: dict[str, list[Att]] = defaultdict(list)
        for a in atts:
            self.members[a.run].append(a)
        self.how: dict[str, tuple[str, str]] = {}

    def find(self, r: str) -> str:
        while self.parent[r] != r:
            self.parent[r] = self.parent[self.parent[r]]
            r = self.parent[r]
        return r

    def merge(self, a: str, b: str, method: str, detail: str) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        ma, mb = self.members[ra], self.members[rb]
        if any(x.mapped for x in ma) and any(x.mapped for x in mb):
            return False
        early, later = (ma, mb) if min(y.start for y in mb) > min(x.start for x in ma) \
            else (mb, ma)
        trained = [x for x in later if x.progress]
        if trained and (f := min(trained, key=lambda x: x.start)).fresh and _new_run(early, f):
            return False  # a run that starts from scratch continues no run that saved
        total = 0.0
        for x in ma:
            for y in mb:
                o = min(x.end, y.end) - max(x.start, y.start)
                short = min(x.end - x.start, y.end - y.start)
                if o > max(MIN_OVERLAP_S, min(PAIR_OVERLAP_S, short / 2)):
                    return False
                total += max(o, 0.0)
        if total > OVERLAP_S:
            return False
        first, second = (ra, rb) if min(x.start for x in ma) <= min(y.start for y in mb) \
            else (rb, ra)
        if any(x.mapped for x in self.members[second]):
            first, second = second, first
        self.parent[second] = first
        self.members[first] += self.members.pop(second)
        self.how[second] = (method, detail)
        return True


def _split_parallel_arrays(atts: list[Att]) -> None:
    """Tasks of one array that run side by side are separate runs."""
    by_array: dict[tuple[str, str], list[Att]] = defaultdict(list)
    for a in atts:
        base, sep, _ = a.job_id.partition("_")
        if sep and not a.mapped:
            by_array[(a.run, base)].append(a)
    for tasks in by_array.values():
        if any(min(x.end, y.end) - max(x.start, y.start) > OVERLAP_S
               for x in tasks for y in tasks if x.job_id < y.job_id):
            for a in tasks:
                a.run = f"{a.run}_{a.job_id.partition('_')[2]}"


def _new_run(before: list[Att], a: Att) -> bool:
    """Whether fresh attempt ``a`` begins a run after the attempts ``before`` (module
    docstring): they trained and saved a checkpoint it would have loaded (and it starts
    below the first one: above it, a load line was missed or unstamped), or trained and
    ended more than ``FRESH_GAP_S`` before it (a failure before the first save restarts
    from scratch: that is the same run)."""
    trained = [x for x in before if x.progress]
    if not trained:
        return False
    saved = [it for x in before for it, _ in x.saves]
    if saved and a.first_iter is not None and a.first_iter > min(saved):
        return False  # above a checkpoint they saved: a load its output does not show
    return bool(saved) or a.start - max(x.end for x in before) > FRESH_GAP_S


def _split_fresh_starts(atts: list[Att]) -> dict[str, tuple[str, str]]:
    """Attempts of one name from a fresh start on are another run (module docstring);
    returns how each new run was made."""
    by_run: dict[str, list[Att]] = defaultdict(list)
    for a in atts:
        if not a.mapped:
            by_run[a.run].append(a)
    how: dict[str, tuple[str, str]] = {}
    for name, group in by_run.items():
        parts: list[list[Att]] = [[]]
        for a in sorted(group, key=lambda x: (x.start, x.attempt)):
            if a.fresh and _new_run(parts[-1], a):
                parts.append([])
            parts[-1].append(a)
        if len(parts) == 1:
            continue
        keep = max(range(len(parts)), key=lambda k: sum(x.end - x.start for x in parts[k]))
        for k, part in enumerate(parts):
            if k == keep:
                continue
            new = f"{name}@{datetime.fromtimestamp(part[0].start, UTC):%Y-%m-%dT%H:%M}"
            f = parts[max(k, 1)][0]  # the fresh start that begins this part or the next
            for a in part:
                a.run = new
            how[new] = ("fresh_start", f"attempt {f.attempt} trains from iteration "
                        f"{f.first_iter} without loading a checkpoint: runs split there")
    return how


def assign_runs(con: duckdb.DuckDBPyConnection) -> None:
    """Merge runs on evidence (module docstring); update ``attempts_linked.run`` and
    ``attempt_events.run``; create ``run_links``."""
    atts = _collect(con)
    _split_parallel_arrays(atts)
    split = _split_fresh_starts(atts)
    runs = _Runs(atts)
    runs.how.update(split)
    by_job: dict[str, list[Att]] = defaultdict(list)
    for a in atts:
        by_job[a.job_id].append(a)
    for job, deps in _deps(con).items():
        for d in deps:
            if by_job.get(job) and by_job.get(d) and any(a.progress for a in by_job[job]):
                runs.merge(by_job[d][0].run, by_job[job][0].run, "dependency",
                           f"job {job} depends on job {d}")
    # attempts (in start order) by the iterations they saved: a load looks only at those
    saved_at: dict[int, list[Att]] = defaultdict(list)
    for a in atts:
        for it in sorted({it for it, _ in a.saves}):
            saved_at[it].append(a)
    for b in atts:
        if not b.load or (b.first_iter is not None and b.first_iter <= b.load):
            continue
        src = [a for a in saved_at.get(b.load, []) if a is not b and a.start < b.start
               and a.saved(b.load, b.load_path)]
        with_path = [a for a in src if (b.load, b.load_path) in a.saves and b.load_path]
        if with_path:
            src = with_path
        elif len({a.run for a in src}) > 1:
            continue  # an iteration number alone is no evidence when several runs saved it
        for a in src[-1:]:
            runs.merge(a.run, b.run, "checkpoint", f"attempt {b.attempt} loads iteration "
                       f"{b.load} saved by attempt {a.attempt}")
    by_path: dict[str, list[Att]] = defaultdict(list)
    for a in atts:
        for p in a.save_paths:
            by_path[p].append(a)
    for p, group in by_path.items():
        for a in group[1:]:
            runs.merge(group[0].run, a.run, "ckpt_path", f"checkpoint directory {p}")
    _by_time(atts, runs)
    _write(con, atts, runs)


def _by_time(atts: list[Att], runs: _Runs) -> None:
    """An inferred attempt still alone joins the single scheduler run it follows."""
    for a in atts:
        r = runs.find(a.run)
        if a.source != "inferred" or any(x.source != "inferred" for x in runs.members[r]):
            continue
        before = {runs.find(x.run) for x in atts
                  if x.source != "inferred" and x.start <= a.start}
        if len(before) == 1:
            runs.merge(before.pop(), a.run, "time", "output with no scheduler record, "
                       "after the attempts of the only run before it")


def _write(con: duckdb.DuckDBPyConnection, atts: list[Att], runs: _Runs) -> None:
    rows: list[dict[str, Any]] = []
    for a in atts:
        root = runs.find(a.run)
        method, detail = ("run_map", "--run-map") if a.mapped else runs.how.get(
            a.run, ("name", "job name" if a.source != "inferred" else "output file"))
        rows.append({"attempt": a.attempt, "job_id": a.job_id, "run": root,
                     "method": method, "detail": detail})
    con.register("tmp_runs", pa.Table.from_pylist(rows, pa.schema([
        ("attempt", pa.string()), ("job_id", pa.string()), ("run", pa.string()),
        ("method", pa.string()), ("detail", pa.string())])))
    con.execute("CREATE OR REPLACE TABLE run_links AS SELECT * FROM tmp_runs")
    con.unregister("tmp_runs")
    con.execute("UPDATE attempts_linked SET run = r.run FROM run_links r "
                "WHERE r.attempt = attempts_linked.attempt")
    con.execute("UPDATE attempt_events SET run = r.run FROM run_links r "
                "WHERE r.attempt = attempt_events.attempt")
