"""In-job restarts: one scheduler attempt that restarted its training without the scheduler.

``torchrun --max-restarts N`` (the elastic agent) restarts its workers inside the same Slurm
job or pod after a worker fails, and training frameworks resume from their last checkpoint:
the job's output shows progress, a failure, ``[default] Worker group FAILED. 3/3 attempts
left; will restart worker group``, a checkpoint load, and progress again from the loaded
iteration. Read as one attempt, the work rolled back and the time until the restart were
counted as slowness, and iterations already counted as progress (a Slurm run of 100 steps
with one restart: TOR 0.48 where it was 0.79).

``split_restarts`` cuts such an attempt into pieces, ``<attempt>`` then ``<attempt>.r1``,
``.r2``, ...: a cut where, after progress, the agent's restart line comes, or a checkpoint load
followed by more progress in its own file (or the files of torchrun's ``attempt_<n>`` folders,
one stream: fault probe H4) (a load at the very end, as HF Trainer's
``load_best_model_at_end``, is no restart); ``_cuts`` says how the marks of one restart are
merged and where the cut falls. A piece that ends at a cut has state ``RESTARTED`` and no exit
code; the last piece keeps the scheduler's verdict. Attempts inferred from output are cut
already (``sql/inferred_sessions.sql``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from datetime import datetime, timedelta
from typing import NamedTuple

import duckdb


class Mark(NamedTuple):
    """A sign of a restart: when, the last progress before it and the first after it (of its
    file for a load, of the attempt for the agent's line), and whether it is the agent's."""

    at: datetime
    before: datetime
    after: datetime | None
    agent: bool


#: ``attempts_linked.reason`` of a piece that ended at an in-job restart
RESTART_REASON = "in-job restart (the elastic agent, or a checkpoint reload after progress)"

_MARKS = """
WITH e AS (
    -- a file's stream: torchrun's --log-dir writes each restart of the workers to its own
    -- folder (<log_dir>/<run>/attempt_<n>/<local_rank>/stdout.log): those files are one
    -- stream, in the order of n
    SELECT ae.attempt, ae.ts, ae.kind, ae.file, ae.line_no,
           regexp_replace(ae.file, '/attempt_[0-9]+/', '/attempt_*/') AS stream,
           coalesce(TRY_CAST(regexp_extract(ae.file, '/attempt_([0-9]+)/', 1) AS BIGINT), 0)
               AS seq
    FROM attempt_events ae JOIN attempts_linked a USING (attempt)
    WHERE a.source <> 'inferred' AND ae.ts IS NOT NULL
      AND ae.kind IN ('iteration', 'ckpt_load', 'elastic_restart')
),
w AS (
    SELECT *,
           max(ts) FILTER (kind = 'iteration') OVER (
               PARTITION BY attempt, stream ORDER BY seq, line_no
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_f,
           min(ts) FILTER (kind = 'iteration') OVER (
               PARTITION BY attempt, stream ORDER BY seq, line_no
               ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS after_f,
           max(ts) FILTER (kind = 'iteration') OVER (
               PARTITION BY attempt ORDER BY ts, file, line_no
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_a,
           min(ts) FILTER (kind = 'iteration') OVER (
               PARTITION BY attempt ORDER BY ts, file, line_no
               ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS after_a
    FROM e
),
loads AS (
    -- a load after progress in its own stream, with progress after it there: the first of
    -- each such stretch of a stream; its time is the last time its stream showed before it
    -- (a load without a stamp gets the next one in attempt_events: too late for a cut)
    SELECT attempt, stream, arg_min(file, (seq, line_no)) AS file,
           min((seq, line_no)) AS at_pos, before_f AS before, any_value(after_f) AS after
    FROM w WHERE kind = 'ckpt_load' AND before_f IS NOT NULL AND after_f IS NOT NULL
    GROUP BY attempt, stream, before_f
)
SELECT attempt, ts AS at, before_a AS before, after_a AS after, true AS agent FROM w
WHERE kind = 'elastic_restart' AND before_a IS NOT NULL
UNION ALL
SELECT l.attempt, max(r.ts) AS at, l.before, l.after, false AS agent
FROM loads l JOIN (
    SELECT ts, line_no, regexp_replace(file, '/attempt_[0-9]+/', '/attempt_*/') AS stream,
           coalesce(TRY_CAST(regexp_extract(file, '/attempt_([0-9]+)/', 1) AS BIGINT), 0)
               AS seq
    FROM events WHERE ts_flag <> 'missing'
) r ON r.stream = l.stream AND (r.seq, r.line_no) < l.at_pos
GROUP BY l.attempt, l.stream, l.at_pos, l.before, l.after
"""


def _cuts(con: duckdb.DuckDBPyConnection) -> dict[str, list[datetime]]:
    """Cut times per attempt. The marks of one restart (the agent's line, each rank file's
    load) are one cut: marks with no more progress lines of the attempt between them than
    its files could print around a restart (two per file: a slow rank's last, a fast rank's
    first); two lines of the agent are two restarts. The cut is the agent's line if there is
    one, else the latest time a load's file showed before its load, and in any case after
    every file's last progress line before the restart and before every first one after."""
    marks = con.execute(_MARKS).fetchall()
    if not marks:
        return {}
    by: dict[str, list[Mark]] = {}
    for attempt, at, before, after, agent in marks:
        by.setdefault(attempt, []).append(Mark(at, before, after, agent))
    stats = {a: (ts, n) for a, ts, n in con.execute(
        "SELECT attempt, list(ts ORDER BY ts) FILTER (kind = 'iteration'), count(DISTINCT "
        "file) FROM attempt_events WHERE attempt IN (SELECT unnest(?)) GROUP BY attempt",
        [list(by)]).fetchall()}
    out: dict[str, list[datetime]] = {}
    for attempt, ms in by.items():
        ts, files = stats[attempt]
        ts = ts or []
        clusters: list[list[Mark]] = []
        for m in sorted(ms, key=lambda x: x.at):
            if clusters:
                last = clusters[-1]
                between = bisect_left(ts, m.at) - bisect_right(ts, max(x.at for x in last))
                if between <= 2 * files and not (m.agent and any(x.agent for x in last)):
                    last.append(m)
                    continue
            clusters.append([m])
        for c in clusters:
            agent = [m.at for m in c if m.agent]
            at = min(agent) if agent else max(m.at for m in c)
            at = max(at, max(m.before for m in c) + timedelta(microseconds=1))
            after = [m.after for m in c if m.after is not None]
            if not after or at < min(after):
                out.setdefault(attempt, []).append(at)
    return out


def add_cut_column(con: duckdb.DuckDBPyConnection) -> None:
    """``attempts_linked.cut_end``: the attempt is a piece that ends at a cut (its events end
    just before ``end``; ``sql/attempt_events.sql``)."""
    con.execute("ALTER TABLE attempts_linked ADD COLUMN IF NOT EXISTS cut_end BOOLEAN "
                "DEFAULT false")


def split_restarts(con: duckdb.DuckDBPyConnection) -> int:
    """Cut attempts at in-job restarts (module docstring); the number of cuts. The caller
    rebuilds ``attempt_events`` when there were any."""
    by = _cuts(con)
    if not by:
        return 0
    bounds: list[tuple[str, int, object, object, bool]] = []
    rows = dict(con.execute('SELECT attempt, [start, "end"] FROM attempts_linked WHERE '
                            "attempt IN (SELECT unnest(?))", [list(by)]).fetchall())
    for attempt, cs in by.items():
        start, end = rows[attempt]
        edges = [start, *[c for c in cs if c > start and (end is None or c < end)], end]
        for k in range(len(edges) - 1):
            bounds.append((attempt, k, edges[k], edges[k + 1], k == len(edges) - 2))
    con.execute("CREATE OR REPLACE TEMP TABLE restart_pieces (attempt VARCHAR, k INTEGER, "
                'pstart TIMESTAMPTZ, pend TIMESTAMPTZ, last BOOLEAN)')
    con.executemany("INSERT INTO restart_pieces VALUES (?, ?, ?, ?, ?)", bounds)
    con.execute("""
        CREATE OR REPLACE TABLE attempts_linked AS
        SELECT * FROM attempts_linked WHERE attempt NOT IN (SELECT attempt FROM restart_pieces)
        UNION ALL BY NAME
        SELECT a.* REPLACE (
                   CASE WHEN p.k = 0 THEN a.attempt ELSE a.attempt || '.r' || p.k END
                       AS attempt,
                   p.pstart AS start, p.pend AS "end",
                   CASE WHEN p.last THEN a.state ELSE 'RESTARTED' END AS state,
                   CASE WHEN p.last THEN a.reason ELSE ? END AS reason,
                   CASE WHEN p.last THEN a.exit_code END AS exit_code,
                   CASE WHEN p.last THEN a.signal END AS signal,
                   NOT p.last AS cut_end)
        FROM attempts_linked a JOIN restart_pieces p USING (attempt)
        ORDER BY run, start, attempt""", [RESTART_REASON])
    return len(bounds) - len(by)
