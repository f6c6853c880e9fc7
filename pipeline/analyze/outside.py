"""Progress lines of a scheduled job stamped outside all of its recorded executions.

The attempts' windows come from the scheduler records; a progress line of the job (its id
on the line or in its file's name) is read into the attempt whose window holds its time
(``sql/attempt_events.sql``). Lines outside every window are left out of T_opt, so the run's
TOR falls: never without a warning (``quality.py`` words them). Before the first execution
means executions are missing from the records (sacct without ``--duplicates``); after the
last one ended, the output's clock, zone or date disagree with the scheduler's (or the
records were taken before the job's last execution). ``SLACK_S``: how far outside a line may
be before it counts (a node's clock a few minutes off the controller's is common and the
skew estimate in ``skew.py`` handles it)."""

from __future__ import annotations

import duckdb

SLACK_S = 300

#: per run: (job, first file, lines, the farthest such line's time)
Outside = dict[str, list[tuple[str, str, int, str]]]


def before_first(con: duckdb.DuckDBPyConnection) -> Outside:
    """Jobs whose output has progress lines more than ``SLACK_S`` before the job's first
    recorded execution, with the earliest such line's time."""
    return _rows(con, f"""
        WITH w AS (SELECT job_id, min(run) AS run, min(start) AS s FROM attempts_linked
                   WHERE source <> 'inferred' AND start IS NOT NULL GROUP BY job_id)
        SELECT w.run, e.job_id, min(e.file), count(*), strftime(min(e.ts), '%Y-%m-%dT%H:%M:%SZ')
        FROM events e JOIN w ON w.job_id = e.job_id
        WHERE e.kind = 'iteration' AND e.ts < w.s - INTERVAL {SLACK_S} SECOND
        GROUP BY ALL ORDER BY 1, 2""")


def after_last(con: duckdb.DuckDBPyConnection) -> Outside:
    """Jobs whose every recorded execution has ended, with progress lines more than
    ``SLACK_S`` after the last end, and the latest such line's time."""
    return _rows(con, f"""
        WITH w AS (SELECT job_id, min(run) AS run, max("end") AS e FROM attempts_linked
                   WHERE source <> 'inferred' GROUP BY job_id
                   HAVING count(*) = count("end"))
        SELECT w.run, e.job_id, min(e.file), count(*), strftime(max(e.ts), '%Y-%m-%dT%H:%M:%SZ')
        FROM events e JOIN w ON w.job_id = e.job_id
        WHERE e.kind = 'iteration' AND e.ts > w.e + INTERVAL {SLACK_S} SECOND
        GROUP BY ALL ORDER BY 1, 2""")


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> Outside:
    out: Outside = {}
    for run, job, f, n, t in con.execute(sql).fetchall():
        out.setdefault(str(run), []).append((str(job), str(f), int(n), str(t)))
    return out
