"""Per-attempt progress timelines from ``attempt_events`` (iterations, saves, loads).

* Progress lines: one per logged iteration (the first line seen for an iteration wins, so
  several ranks printing the same line count once); iterations going backwards inside one
  attempt without a load line are dropped and counted (``dropped_lines``); each attempt's
  largest such drop is kept (``backwards``: top iteration, the lower one, its time) for
  ``quality.py``'s warning.
* Saves: a ``ckpt_save_start``/``ckpt_save_end`` marks a save after that iteration; a save
  timer line (Megatron's ``save-checkpoint`` timer, seconds) that follows is its duration.
* Resume point: the first checkpoint load of the attempt (iteration loaded).
* Attempts with no end in the records (a job still RUNNING when sacct ran, ``End=Unknown``;
  a pod with no ``finishedAt``; sacct printed without an End column) end at their last line
  seen (progress, save, load), else at their start, and are listed in ``open_ends``: the run's
  figures are as of that line (``quality.py`` says so; ``run.py`` leaves the TOR undefined
  unless the open attempt is the run's last and its state is RUNNING or unknown).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import duckdb

from pipeline.analyze.decompose import AttemptInput, Save
from pipeline.analyze.silent import STARTED
from pipeline.analyze.sql import sql


@dataclass
class RunInputs:
    run: str
    attempts: list[AttemptInput] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  #: attempts_linked rows
    dropped_lines: int = 0
    #: per attempt, its largest drop: (iteration before it, iteration after, epoch seconds)
    backwards: dict[str, tuple[int, int, float]] = field(default_factory=dict)
    #: attempts with no recorded end: (attempt, state, end taken: epoch seconds)
    open_ends: list[tuple[str, str | None, float]] = field(default_factory=list)


def _epoch(ts: object) -> float:
    return ts.timestamp() if ts is not None else math.nan  # type: ignore[attr-defined]


def make_attempt_events(con: duckdb.DuckDBPyConnection) -> None:
    """Create ``attempt_events`` (sql/attempt_events.sql) from ``attempts_linked`` and
    ``output_links``."""
    con.execute("CREATE OR REPLACE TABLE attempt_events AS " + sql("attempt_events"))


def collect(con: duckdb.DuckDBPyConnection) -> list[RunInputs]:
    """One ``RunInputs`` per run, attempts in start order (``attempt_events`` must exist)."""
    cols = [d[0] for d in con.execute("SELECT * FROM attempts_linked LIMIT 0").description]
    runs: dict[str, RunInputs] = {}
    by_attempt: dict[str, AttemptInput] = {}
    order = ' FROM attempts_linked ORDER BY run, start, "end", attempt'
    # node lists (thousands of hosts per attempt) come over through Arrow: a row-wise fetch
    # builds them twice as slowly; the rest row-wise, as Python values
    k = cols.index("nodes")
    nodes = con.sql("SELECT nodes" + order).to_arrow_table().column(0).to_pylist()
    for row, ns in zip(con.execute("SELECT * EXCLUDE (nodes)" + order).fetchall(), nodes,
                       strict=True):
        r = dict(zip(cols, (*row[:k], ns, *row[k:]), strict=True))
        start = _epoch(r["start"])
        end = _epoch(r["end"]) if r["end"] is not None else start
        a = AttemptInput(str(r["attempt"]), start, end, start_from_output=(
            r.get("fidelity") == "progress" and r.get("reason") != STARTED))
        ri = runs.setdefault(str(r["run"]), RunInputs(str(r["run"])))
        ri.attempts.append(a)
        ri.rows.append(r)
        by_attempt[a.attempt] = a
    seen: dict[str, set[int]] = {}
    last_save: dict[str, Save] = {}
    # times as integer microseconds: us / 1e6 is exactly datetime.timestamp() (both are the
    # correctly rounded quotient), without building a datetime per line
    cur = con.execute("SELECT attempt, run, epoch_us(ts), kind, iteration, value "
                      "FROM attempt_events")
    while batch := cur.fetchmany(100_000):
        for attempt, run, us, kind, iteration, value in batch:
            a = by_attempt[attempt]
            if kind == "iteration" and iteration is not None:
                s = seen.setdefault(attempt, set())
                if iteration in s or (a.progress and iteration < a.progress[-1][1]):
                    if iteration not in s:
                        runs[run].dropped_lines += 1
                        top = a.progress[-1][1]
                        b = runs[run].backwards.get(attempt)
                        if b is None or top - iteration > b[0] - b[1]:
                            runs[run].backwards[attempt] = (
                                top, int(iteration), us / 1e6 if us is not None else math.nan)
                    continue
                s.add(iteration)
                ms = float(value) if value is not None else math.nan
                a.progress.append((us / 1e6 if us is not None else math.nan, int(iteration),
                                   ms))
            elif kind in ("ckpt_save_start", "ckpt_save_end") and iteration is not None:
                if not a.saves or a.saves[-1].iteration != iteration:
                    sv = Save(int(iteration), completed=kind == "ckpt_save_end")
                    a.saves.append(sv)
                    last_save[attempt] = sv
                elif kind == "ckpt_save_end":
                    a.saves[-1].completed = True
            elif kind == "ckpt_save_time" and value is not None and attempt in last_save:
                last_save[attempt].seconds = float(value)
            elif kind == "ckpt_load" and iteration is not None and a.resumed_from is None:
                a.resumed_from = int(iteration)
    _close_open_ends(con, runs)
    return list(runs.values())


def _close_open_ends(con: duckdb.DuckDBPyConnection, runs: dict[str, RunInputs]) -> None:
    """End each attempt without a recorded end at its last line seen (module docstring)."""
    last = {str(a): t for a, t in con.execute(
        "SELECT attempt, max(epoch_us(ts)) / 1e6 FROM attempt_events WHERE ts IS NOT NULL "
        "GROUP BY attempt").fetchall()}
    for ri in runs.values():
        for a, r in zip(ri.attempts, ri.rows, strict=True):
            if r["end"] is None:
                a.end = max(a.start, last.get(a.attempt) or a.start)
                ri.open_ends.append((a.attempt, r.get("state"), a.end))
