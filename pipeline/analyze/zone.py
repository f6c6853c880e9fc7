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

STEP_S = 900
MAX_S = 14 * 3600
BEFORE_S = 600.0
AFTER_S = 60.0
MIN_HITS = 3
_ENDED = ("COMPLETED", "RUNNING", "PENDING", "REQUEUED")


def zone_shift(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int] | None:
    """(shift in seconds to add to the exact kernel stamps, interruptions lined up with it,
    with none) when a non-zero shift explains the node logs far better; else None."""
    pairs = con.execute(f"""
        WITH k AS (
            SELECT host, epoch(ts) AS t FROM events
            WHERE source = 'kernel' AND ts_flag = 'exact' AND host IS NOT NULL
        ),
        e AS (
            SELECT attempt, epoch("end") AS e, unnest(nodes) AS host FROM attempts_linked
            WHERE source IN ('sacct', 'scontrol') AND "end" IS NOT NULL
              AND coalesce(state, '') NOT IN {_ENDED}
        )
        SELECT e.attempt, list(e.e - k.t) FROM e JOIN k USING (host)
        WHERE abs(e.e - k.t) <= {MAX_S + BEFORE_S + AFTER_S}
        GROUP BY e.attempt""").fetchall()
    if not pairs:
        return None
    shifts = np.arange(-MAX_S, MAX_S + 1, STEP_S, dtype=float)
    hits = np.zeros(shifts.size, int)
    for _attempt, diffs in pairs:
        d = np.asarray(diffs, float)[:, None]  # end - line; a hit: -AFTER <= d - h <= BEFORE
        hits += ((d - shifts >= -AFTER_S) & (d - shifts <= BEFORE_S)).any(axis=0)
    zero = int(hits[shifts.size // 2])
    best = int(np.argmax(hits - np.abs(shifts) * 1e-9))  # (ties: the shift nearest 0)
    if shifts[best] == 0 or hits[best] < MIN_HITS or hits[best] <= 2 * zero:
        return None
    return int(shifts[best]), int(hits[best]), zero
