"""Stamps without a zone read in the wrong one, found from node logs that carry their zone.

Slurm's controller log and ``sacct`` text, Megatron's ``print_datetime`` and most job output
print local time with no zone; they are read in ``--tz`` (UTC by default). Node logs written
by rsyslog's RFC 3339 template or ``journalctl -o short-iso`` carry their UTC offset
(``2024-05-01T16:06:29.860533-05:00``) and are exact. On a cluster that keeps local time the
two disagree by the offset, and every kernel failure line falls hours outside the window of
the attempt it ended: the root causes silently become the symptoms (five GPU faults read as
NCCL timeouts on the demo campaign moved to UTC-5). Per-host clock skew (``skew.py``) is
bounded to minutes and does not see it.

``zone_shift`` counts, for every shift of the exact kernel lines by a multiple of 15 minutes
up to 14 hours, the interruptions of scheduler-recorded attempts (sacct text, scontrol: no
zone of their own) with such a line on one of their nodes within ``BEFORE_S`` before to
``AFTER_S`` after their end. When a shift other than 0 lines up at least ``MIN_HITS`` of them
and more than twice as many as no shift, the stamps without a zone were most likely read in
the wrong zone; ``quality.py`` warns (``timezone``) and names the offset. Nothing is moved:
which zone the cluster keeps is for the user to say (``--tz``).
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

STEP_S = 900
MAX_S = 14 * 3600
BEFORE_S = 600.0
AFTER_S = 60.0
MIN_HITS = 3
_ENDED = ("COMPLETED", "RUNNING", "PENDING", "REQUEUED")


def zone_shift(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int] | None:
    """(shift in seconds to add to the exact kernel stamps, interruptions lined up with it,
    with none) when a non-zero shift explains the node logs far better; else None."""
    k = con.sql("SELECT host, epoch(ts) AS t FROM events WHERE source = 'kernel' AND "
                "ts_flag = 'exact' AND host IS NOT NULL").to_arrow_table()
    if not k.num_rows:
        return None
    # node lists of thousands of names, matched in Arrow and numpy: unnested in SQL they
    # cost 0.12 s on the Llama-3 campaign, by list functions 0.4 s, per pair in Python 0.6 s
    tbl = con.sql(f"""
        SELECT epoch("end") AS e, nodes FROM attempts_linked
        WHERE source IN ('sacct', 'scontrol') AND "end" IS NOT NULL AND nodes IS NOT NULL
          AND coalesce(state, '') NOT IN {_ENDED}""").to_arrow_table()
    if not tbl.num_rows:
        return None
    hosts = pc.unique(k.column("host").combine_chunks().cast(pa.string()))
    nodes = tbl.column("nodes").combine_chunks()
    flat = nodes.flatten().cast(pa.string())
    owner = np.repeat(np.arange(len(nodes)), np.diff(np.asarray(nodes.offsets)))
    where = np.asarray(pc.index_in(flat, value_set=hosts).fill_null(-1), dtype=np.int64)
    hit = where >= 0
    rows, hix = owner[hit], where[hit]  # (attempt row, host index) of every node it ran on
    kh = np.asarray(pc.index_in(k.column("host").combine_chunks().cast(pa.string()),
                                value_set=hosts), dtype=np.int64)
    kt = k.column("t").to_numpy()
    order = np.argsort(kh, kind="stable")
    kh, kt = kh[order], kt[order]
    lo, hi = np.searchsorted(kh, hix, "left"), np.searchsorted(kh, hix, "right")
    n = hi - lo  # kernel lines of each pair's host
    pr = np.repeat(rows, n)
    pt = kt[np.repeat(lo, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))]
    d = tbl.column("e").to_numpy()[pr] - pt  # end - line; a hit: -AFTER <= d - h <= BEFORE
    shifts = np.arange(-MAX_S, MAX_S + 1, STEP_S, dtype=float)
    first = np.ceil((d - BEFORE_S + MAX_S) / STEP_S).astype(np.int64)
    last = np.floor((d + AFTER_S + MAX_S) / STEP_S).astype(np.int64)
    cover = [(pr[m], first[m] + j) for j in range(int((BEFORE_S + AFTER_S) // STEP_S) + 1)
             if (m := (first + j <= last) & (first + j >= 0) & (first + j < shifts.size)).any()]
    if not cover:
        return None
    r = np.concatenate([c[0] for c in cover])
    s = np.concatenate([c[1] for c in cover])
    pairs = np.unique(r * shifts.size + s)  # each interruption counts once per shift
    hits = np.bincount(pairs % shifts.size, minlength=shifts.size)
    zero = int(hits[shifts.size // 2])
    best = int(np.argmax(hits - np.abs(shifts) * 1e-9))  # (ties: the shift nearest 0)
    if shifts[best] == 0 or hits[best] < MIN_HITS or hits[best] <= 2 * zero:
        return None
    return int(shifts[best]), int(hits[best]), zero


def output_shift(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int, int] | None:
    """(shift in seconds to take off the job output's zone-less stamps, jobs whose output then
    lies within their recorded executions, jobs as read, jobs compared) when a non-zero shift
    of a multiple of 15 min explains the output far better (the same test as ``zone_shift``,
    on each job's first and last progress stamps against its executions' span); else None.
    Output and records written in different zones: ``sacct`` prints its caller's ``TZ``,
    ``sacct --json`` and pod status are UTC, job output the nodes' local time."""
    rows = con.execute("""
        WITH o AS (SELECT job_id, epoch(min(ts)) AS t0, epoch(max(ts)) AS t1 FROM events
                   WHERE kind = 'iteration' AND job_id IS NOT NULL AND ts IS NOT NULL
                     AND ts_flag = 'assumed_tz' GROUP BY job_id),
        r AS (SELECT job_id, epoch(min(start)) AS s, epoch(max(coalesce("end", start))) AS e
              FROM attempts_linked WHERE source NOT IN ('inferred', 'k8s_silent')
                AND start IS NOT NULL GROUP BY job_id)
        SELECT o.t0, o.t1, r.s, r.e FROM o JOIN r USING (job_id)""").fetchall()
    if len(rows) < MIN_HITS:
        return None
    a = np.array(rows, dtype=float)
    shifts = np.arange(-MAX_S, MAX_S + 1, STEP_S, dtype=float)
    hits = np.array([int(np.sum((a[:, 0] - h >= a[:, 2] - AFTER_S)
                                & (a[:, 1] - h <= a[:, 3] + AFTER_S))) for h in shifts])
    zero = int(hits[shifts.size // 2])
    best = int(np.argmax(hits - np.abs(shifts) * 1e-9))
    if shifts[best] == 0 or hits[best] < MIN_HITS or hits[best] <= 2 * zero:
        return None
    return int(shifts[best]), int(hits[best]), zero, len(rows)
