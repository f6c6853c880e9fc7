"""Attempts the scheduler records miss, rebuilt from what else the logs hold.

When sacct was cut short or a record is missing, the job's output is still there. Output
files that hold progress but link to no job the records know -- because their name carries a
job id the records lack (``slurm-1027.out``), or because their lines fall outside every
recorded execution -- become attempts inferred from their lines (an unlinked file whose
lines fall inside recorded executions is more likely those executions' own output named in
a way the linking could not read: it is named in the warnings, not made an attempt).
``sql/attempts_inferred.sql`` makes them: start and end = first and last stamped line, cut
where a restart shows. Where the controller log (``slurmctld.log``) names the job, its
lines refine the attempt: the ``sched: Allocate JobId=N NodeList=...`` line just before the
first output line gives the start and the nodes (so node evidence can be found), and the
first line that ends the job after its last output line (``_job_complete``, ``requeue ...
due to failure of node``, ``Killing JobId=N on failed node``, ``Time limit exhausted``,
``REQUEST_KILL_JOB``) gives the end and the state. Such attempts keep ``source =
'inferred'`` (``quality.py`` warns about them) and record what refined them in ``reason``.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

from parsers import hostlist
from pipeline.analyze.sql import sql

START_SLACK_S = 5.0  #: the allocation may be logged this long after the first output line
END_WITHIN_S = 3600.0  #: an end line further than this after the last output line is not it
_END_STATE = {"job_end": None, "job_requeue": "NODE_FAIL", "node_fail_kill": "NODE_FAIL",
              "job_time_limit": "TIMEOUT", "job_cancel": "CANCELLED",
              "job_preempt": "PREEMPTED"}


def infer_orphans(con: duckdb.DuckDBPyConnection) -> int:
    """Add attempts for output files linked to no known job that hold progress lines;
    returns how many were added."""
    con.execute("""
        CREATE OR REPLACE TABLE inference_files AS
        WITH cand AS (
            SELECT e.file, bool_or(e.job_id IS NOT NULL) AS named,
                   min(e.ts) AS t0, max(e.ts) AS t1
            FROM events e
            WHERE e.kind = 'iteration'
              AND e.file NOT IN (SELECT file FROM output_links)
              AND (e.job_id IS NULL OR e.job_id NOT IN (SELECT job_id FROM attempts_linked))
            GROUP BY e.file
        )
        SELECT file FROM cand c
        WHERE named OR NOT EXISTS (
            SELECT 1 FROM attempts_linked a
            WHERE c.t0 <= coalesce(a."end", a.start) + INTERVAL 60 SECOND
              AND a.start - INTERVAL 60 SECOND <= c.t1)""")
    attempts = inferred_attempts(con)
    if con.execute("SELECT count(*) FROM inference_files").fetchone() == (0,):
        return 0
    before = _count(con)
    con.execute("INSERT INTO attempts_linked BY NAME " + attempts)
    refine(con)
    return _count(con) - before


def inferred_attempts(con: duckdb.DuckDBPyConnection) -> str:
    """Cut ``inference_files`` into sessions (table ``inferred_sessions``, which quality.py
    reads for its ``silence`` warning); returns the query of the attempts they make."""
    con.execute("CREATE OR REPLACE TABLE inferred_sessions AS " + sql("inferred_sessions"))
    return sql("attempts_inferred")


def _count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM attempts_linked").fetchone()
    return int(row[0]) if row else 0


def refine(con: duckdb.DuckDBPyConnection) -> None:
    """Inferred attempts' start, nodes, end and state from the controller log (module
    docstring); with no scheduler records at all too."""
    orphans = con.execute(
        "SELECT attempt, job_id, start, \"end\" FROM attempts_linked WHERE source = 'inferred'"
    ).fetchall()
    if not orphans:
        return
    kinds = ", ".join(f"'{k}'" for k in ("job_start", *_END_STATE))
    ev: dict[str, list[tuple[datetime, str, str | None, float | None]]] = {}
    for job, ts, kind, code, value in con.execute(
            f"SELECT job_id, ts, kind, code, value FROM events WHERE source = 'slurmctld' "
            f"AND kind IN ({kinds}) AND ts IS NOT NULL AND job_id IS NOT NULL "
            f"ORDER BY ts").fetchall():
        ev.setdefault(job, []).append((ts, kind, code, value))
    for attempt, job, start, end in orphans:
        lines = ev.get(job, [])
        starts = [x for x in lines if x[1] == "job_start"
                  and (x[0] - start).total_seconds() <= START_SLACK_S]
        ends = [x for x in lines if x[1] != "job_start"
                and 0 <= (x[0] - end).total_seconds() <= END_WITHIN_S]
        if not starts and not ends:
            continue
        sets, args, notes = [], [], []
        if starts:
            ts, _, code, _ = starts[-1]
            try:
                nodes = hostlist.expand(code) if code else []
            except hostlist.HostlistError:
                nodes = []
            sets += ["start = ?", "nodes = ?", "node_count = ?"]
            args += [ts, nodes, len(nodes)]
            notes.append("start and nodes from the controller's allocation line")
        if ends:
            ts, kind, code, value = ends[0]
            state = _END_STATE[kind] or ("COMPLETED" if value == 0 and code and "WEXITSTATUS"
                                         in code else "FAILED")
            sets += ["\"end\" = ?", "state = ?"]
            args += [ts, state]
            notes.append(f"end from the controller's {kind} line")
        sets.append("reason = ?")
        args.append("; ".join(notes))
        con.execute(f"UPDATE attempts_linked SET {', '.join(sets)} WHERE attempt = ?",
                    [*args, attempt])
