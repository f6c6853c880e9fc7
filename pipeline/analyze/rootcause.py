"""Root cause of each interruption: evidence windows, the rule table, most specific first.

An *interruption* is an attempt that ended without finishing its run, i.e. every attempt that
another attempt of the same run follows. Its evidence and ranking are in ``sql/evidence.sql``;
an interruption without evidence gets category ``unknown`` and keeps the last lines of its own
output (``output_tail``) so the report can show what the job said last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from pipeline.analyze.sql import sql

DEFAULT_BEFORE_S = 15 * 60.0
DEFAULT_AFTER_S = 5 * 60.0
#: node-level evidence may be stamped this much after the attempt's end (less when
#: --window-after is shorter; more by the host's measured clock-skew bound and
#: --skew-tolerance; see skew.py)
NODE_SKEW_S = 30.0
TAIL_LINES = 15
#: Slurm's "*** JOB n ON host CANCELLED ... ***" lines name the batch host
BANNER_KINDS = ("slurm_job_cancelled", "job_cancelled_msg")


@dataclass
class Cause:
    attempt: str
    category: str = "unknown"
    node: str | None = None
    kind: str | None = None
    code: str | None = None
    message: str | None = None
    where: str | None = None  #: file:line of the cause
    ts: Any = None
    symptoms: int = 0
    output_tail: list[str] = field(default_factory=list)
    #: how the node was found: "evidence" (the cause line's host), "node_evidence" (a
    #: node-level line of the cause's category), "banner" (Slurm's job banner: the batch
    #: host), "symptoms" (host of a symptom line), "allocation" (the attempt's only node)
    node_from: str | None = None
    ts_flag: str | None = None  #: how the cause line's time was obtained
    node_where: str | None = None  #: file:line naming the node when it is not the cause's


#: the rows handed over from Python; ``nodes`` is joined in the database from the
#: ``attempts_linked`` row ``nodes_of`` (lists of thousands of hosts are slow to hand over)
INTERRUPTIONS_BASE = pa.schema([
    ("pos", pa.int64()),
    ("attempt", pa.string()), ("run", pa.string()), ("job_id", pa.string()),
    ("executions", pa.int64()), ("nodes_of", pa.string()),
    ("start", pa.timestamp("us", tz="UTC")), ("end", pa.timestamp("us", tz="UTC")),
    ("last_progress", pa.timestamp("us", tz="UTC")),
    ("next_start", pa.timestamp("us", tz="UTC")), ("first_in_run", pa.bool_()),
    ("end_inferred", pa.bool_()),
])


def failure_events(con: duckdb.DuckDBPyConnection) -> None:
    """Create the temporary table ``failure_events``: the rows of ``classified_events`` (a
    view that classifies every event against the rule table) of a failure category, in its
    order. Evidence (``sql/evidence.sql``) and clock skew (``skew.py``) read it: the view is
    evaluated once."""
    con.execute("CREATE OR REPLACE TEMP TABLE failure_events AS SELECT * FROM "
                "classified_events WHERE category NOT IN ('none', 'progress', 'checkpoint', "
                "'unclassified')")


def find_causes(con: duckdb.DuckDBPyConnection, base: list[dict[str, Any]],
                before_s: float = DEFAULT_BEFORE_S, after_s: float = DEFAULT_AFTER_S,
                skew_tolerance_s: float = 0.0) -> dict[str, Cause]:
    """Create tables ``interruptions_base`` and ``evidence``; one Cause per attempt in base
    (``nodes``: its nodes, the list of the ``attempts_linked`` row ``nodes_of``). Node lines
    are corrected by ``host_skew`` (skew.py); it and ``failure_events`` must exist."""
    con.register("ib_arrow", pa.Table.from_pylist(
        [{"pos": k, **b} for k, b in enumerate(base)], INTERRUPTIONS_BASE))
    con.execute("CREATE OR REPLACE TABLE interruptions_base AS SELECT b.attempt, b.run, "
                "b.job_id, b.executions, coalesce(a.nodes, []) AS nodes, b.start, b.\"end\", "
                "b.last_progress, b.next_start, b.first_in_run, b.end_inferred FROM ib_arrow b "
                "LEFT JOIN attempts_linked a ON a.attempt = b.nodes_of ORDER BY b.pos")
    con.unregister("ib_arrow")
    con.execute("CREATE OR REPLACE TABLE evidence AS " + sql("evidence"),
                {"before_s": before_s, "after_s": after_s, "skew_s": NODE_SKEW_S,
                 "tol_s": skew_tolerance_s})
    causes = {b["attempt"]: Cause(b["attempt"]) for b in base}
    rows = con.execute(
        "SELECT attempt, category, host, kind, code, message, file, line_no, ts, "
        "count(*) OVER (PARTITION BY attempt) - 1 FROM evidence WHERE role = 'cause'"
    ).fetchall()
    for attempt, cat, host, kind, code, msg, file, line_no, ts, n_sym in rows:
        causes[attempt] = Cause(attempt, cat, host, kind, code, msg, f"{file}:{line_no}", ts,
                                int(n_sym))
        if host is not None:
            causes[attempt].node_from = "banner" if kind in BANNER_KINDS else "evidence"
    # The node: a job-scope line names where it was printed (the batch host in Slurm's
    # "*** JOB ... ON node001 CANCELLED ... DUE TO NODE FAILURE ***"), not the node at fault;
    # prefer the host of the most specific node-scope evidence of the cause's category.
    for attempt, host, where in con.execute(
        "SELECT e.attempt, arg_max(e.host, e.specificity * 1e12 - epoch(e.ts)), "
        "arg_max(e.file || ':' || e.line_no, e.specificity * 1e12 - epoch(e.ts)) "
        "FROM evidence e JOIN evidence c ON c.attempt = e.attempt AND c.role = 'cause' "
        "WHERE e.scope = 'node' AND e.host IS NOT NULL AND e.category = c.category "
        "AND c.scope = 'job' GROUP BY e.attempt").fetchall():
        causes[attempt].node = host
        causes[attempt].node_from = "node_evidence"
        causes[attempt].node_where = where
    _from_symptoms(con, causes)
    counts = con.execute("SELECT attempt, count(*) - 1 FROM evidence GROUP BY attempt").fetchall()
    for attempt, n in counts:
        causes[attempt].symptoms = int(n)
    nodes = {b["attempt"]: b["nodes"] for b in base}
    for c in causes.values():
        # a host read from a job output file's path (a directory named like a host) is not
        # the node at fault unless the attempt ran there
        if c.node is not None and nodes.get(c.attempt) and c.node not in nodes[c.attempt]:
            c.node = None
        if c.node is None and nodes.get(c.attempt) and len(nodes[c.attempt]) == 1:
            c.node = nodes[c.attempt][0]
            c.node_from = "allocation"
        if c.category == "unknown":
            c.output_tail = _output_tail(con, c.attempt)
    return causes


def _from_symptoms(con: duckdb.DuckDBPyConnection, causes: dict[str, Cause]) -> None:
    """A cause line that names no host (a watchdog timeout, a Python exception printed by
    rank 0's logger): the host of the most specific symptom that names one (earliest among
    equals), e.g. the failing rank of torch elastic's ChildFailedError report or srun's
    "node004: task 3: Exited". It says where the failure showed first, not that the node is
    at fault (``approx``). Slurm's job banner is not used: it names the batch host, not where
    anything failed. Also records how each cause line's time was obtained."""
    for attempt, host, where in con.execute(
        "SELECT attempt, arg_max(host, specificity * 1e12 - epoch(ts)), "
        "arg_max(file || ':' || line_no, specificity * 1e12 - epoch(ts)) FROM evidence "
        "WHERE role = 'symptom' AND host IS NOT NULL AND kind NOT IN "
        f"({', '.join(repr(k) for k in BANNER_KINDS)}) GROUP BY attempt").fetchall():
        c = causes.get(attempt)
        if c is not None and c.node is None and c.kind is not None:
            c.node, c.node_from, c.node_where = host, "symptoms", where
    for attempt, flag in con.execute(
        "SELECT e.attempt, ev.ts_flag FROM evidence e JOIN events ev USING (event_id) "
        "WHERE e.role = 'cause'").fetchall():
        if attempt in causes:
            causes[attempt].ts_flag = flag


def _output_tail(con: duckdb.DuckDBPyConnection, attempt: str) -> list[str]:
    """The last lines the attempt's own output printed (read back from the file)."""
    rows = con.execute(
        "SELECT file, max(line_no) FROM attempt_events WHERE attempt = ? GROUP BY file "
        "ORDER BY 2 DESC LIMIT 1", [attempt]).fetchall()
    if not rows:
        return []
    path, last = Path(rows[0][0]), int(rows[0][1])
    try:
        from parsers.reader import open_binary

        with open_binary(path) as fh:
            lines: list[str] = []
            for i, raw in enumerate(fh, start=1):
                if i > last + TAIL_LINES:
                    break
                if i > last - TAIL_LINES:
                    lines.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
        return lines
    except OSError:
        return []
