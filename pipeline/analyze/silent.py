"""Kubernetes container incarnations that died before printing anything.

Attempts of a Kubernetes run are cut from the pod's log (``sql/attempts_inferred.sql``), so
an incarnation that crashed before its first line (an import error, a CUDA init failure, a
crash loop at start-up) leaves no trace there. The cluster still saw it:

* the kubelet's ``Started`` events of the pod (``Started container pytorch``; a crash loop
  folds them into one Event with a count, ``k8s_event_first`` .. ``k8s_event``, the repeats
  spread evenly between -- approximate), its ``BackOff``/``Killing`` events;
* ``kubectl get pod -o json``: ``lastState.terminated`` (startedAt, finishedAt, exit code,
  reason) of the previous incarnation and ``state.running.startedAt`` of the current one
  (parsers/k8s_pod.py makes them ``k8s_pod`` records), and ``restartCount``;
* the PyTorchJob's ``Restarting`` condition (when the operator last restarted it).

``add_silent`` matches each container start of the log's pod to the log's attempts (the
latest start at or before an attempt's first line is that attempt's, and becomes its start
when it is exact, after the previous attempt's last line and at most ``START_WITHIN_S``
before: the time to its first line is startup, not repair); a start no attempt claims is an
incarnation that printed nothing: an attempt is added (source ``k8s_silent``,
no progress; start = the start, end = its own finishedAt when the pod status has it, else the
first BackOff/Killing after it, else the next start), with the exit code and reason the pod
status gives. ``restart_gaps`` compares the pod's ``restartCount`` with the incarnations
seen since the pod was scheduled (Events expire, an hour by default: kube-apiserver
``--event-ttl``), for a warning when some left no trace at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import PurePath
from typing import Any

import duckdb

MATCH_S = 5.0  #: a container start this close after an attempt's first line is still its own
#: a container start at most this long before an attempt's first line is that attempt's start
START_WITHIN_S = 6 * 3600.0
#: ``reason`` of an inferred attempt whose start is its container's
STARTED = "start: its container's start (kubelet Started event / pod status)"


@dataclass
class Start:
    ts: datetime
    approx: bool = False
    end: datetime | None = None
    exit_code: int | None = None
    state: str | None = None
    reason: str | None = None


#: the kubelet's own log files: /var/log/pods/NS_POD_UID/CONTAINER/N.log (N: restart count)
#: and /var/log/containers/POD_NS_CONTAINER-ID.log (pkg/kubelet/kuberuntime/helpers.go
#: BuildPodLogsDirectory, BuildContainerLogsDirectory; pkg/kubelet/kuberuntime/kuberuntime_
#: container.go legacyLogSymlink)
_POD_DIR = re.compile(r"/[^/_]+_([^/_]+)_[0-9a-f-]{36}/[^/]+/\d+\.log$")
_CONTAINER_LINK = re.compile(r"/([^/_]+)_[^/_]+_[^/]+-[0-9a-f]{64}\.log$")


def pod_of(file: str) -> str:
    """The pod a container log file is of: POD.log, or the kubelet's own names (above)."""
    m = _POD_DIR.search(file) or _CONTAINER_LINK.search(file)
    return m.group(1) if m else PurePath(file).name.removesuffix(".log")


def _starts(con: duckdb.DuckDBPyConnection, pod: str) -> list[Start]:
    dev = f"pod/{pod}"
    out: list[Start] = []
    firsts = {(round(v), c): t for t, v, c in con.execute(
        "SELECT ts, value, code FROM events WHERE kind = 'k8s_event_first' AND device = ? "
        "AND code = 'Started'", [dev]).fetchall()}
    for ts, n in con.execute("SELECT ts, coalesce(value, 1) FROM events WHERE kind = "
                             "'k8s_event' AND code = 'Started' AND device = ? AND ts IS NOT "
                             "NULL ORDER BY ts", [dev]).fetchall():
        k = max(round(float(n)), 1)
        t0 = firsts.get((k, "Started"))
        if k == 1 or t0 is None:
            out.append(Start(ts))
            continue
        step = (ts - t0) / (k - 1)
        out += [Start(t0 + step * i, approx=0 < i < k - 1) for i in range(k)]
    for start, end, code, state, reason in con.execute(
            "SELECT start, \"end\", exit_code, state, reason FROM attempts WHERE source = "
            "'k8s_pod' AND name = ? AND start IS NOT NULL", [pod]).fetchall():
        near = [s for s in out if abs((s.ts - start).total_seconds()) <= MATCH_S]
        s = near[0] if near else Start(start)
        if not near:
            out.append(s)
        s.ts, s.approx, s.end = start, False, end
        s.exit_code, s.state, s.reason = code, state, reason
    return sorted(out, key=lambda s: s.ts)


def add_silent(con: duckdb.DuckDBPyConnection) -> int:
    """Insert attempts for incarnations without output (module docstring); returns how
    many."""
    rows = con.execute(
        "SELECT attempt, job_id, run, start, \"end\", nodes FROM attempts_linked "
        "WHERE source = 'inferred' ORDER BY job_id, start").fetchall()
    by_file: dict[str, list[tuple[Any, ...]]] = {}
    for r in rows:
        by_file.setdefault(r[1], []).append(r)
    added = 0
    for file, atts in by_file.items():
        starts = _starts(con, pod_of(file))
        if not starts:
            continue
        claimed: set[int] = set()
        prev_end = None
        for a in atts:
            own = [k for k, s in enumerate(starts)
                   if s.ts <= a[3] + timedelta(seconds=MATCH_S)]
            if own:
                claimed.add(own[-1])
                _start_at(con, a, starts[own[-1]], prev_end)
            prev_end = a[4]
        ends = _ends(con, pod_of(file))
        for k, s in enumerate(starts):
            if k in claimed or s.ts < atts[0][3] - timedelta(hours=1):
                continue
            nxt = [t.ts for t in starts[k + 1:]] + [a[3] for a in atts if a[3] > s.ts]
            limit = min(nxt) if nxt else None
            end = s.end or next((e for e in ends if e > s.ts and (limit is None
                                                                  or e <= limit)), limit)
            if end is None or end <= s.ts:
                continue
            prev = [a for a in atts if a[3] <= s.ts]
            nodes = list(prev[-1][5]) if prev else list(atts[0][5])
            con.execute(
                "INSERT INTO attempts_linked (attempt, job_id, execution, run, source, state, "
                "reason, exit_code, start, \"end\", nodes, node_count, fidelity) VALUES "
                "(?, ?, -1, ?, 'k8s_silent', ?, ?, ?, ?, ?, ?, ?, 'progress')",
                [f"{file}#silent{k}", file, atts[0][2], s.state or "FAILED",
                 (s.reason or "") + ("; " if s.reason else "") + "container started "
                 "(kubelet event / pod status) and printed nothing"
                 + ("; start approximate (folded event)" if s.approx else ""),
                 s.exit_code, s.ts, end, nodes, len(nodes)])
            added += 1
        if added:
            _renumber(con, file)
    return added


def _start_at(con: duckdb.DuckDBPyConnection, a: tuple[Any, ...], s: Start,
              prev_end: datetime | None) -> None:
    """The attempt (inferred from its first output line) starts when its container did, when
    that is known exactly (not a start spread inside a folded event) and lies after the
    previous attempt's last line: the time between is the incarnation's startup (image
    start, imports, NCCL set-up), not repair."""
    if s.approx or s.ts >= a[3] or (prev_end is not None and s.ts < prev_end) \
            or a[3] - s.ts > timedelta(seconds=START_WITHIN_S):
        return
    con.execute("UPDATE attempts_linked SET start = ?, reason = ? WHERE attempt = ?",
                [s.ts, STARTED, a[0]])


def _ends(con: duckdb.DuckDBPyConnection, pod: str) -> list[datetime]:
    return [t for (t,) in con.execute(
        "SELECT ts FROM events WHERE kind IN ('k8s_event', 'k8s_event_first') AND code IN "
        "('BackOff', 'Killing') AND device = ? AND ts IS NOT NULL ORDER BY ts",
        [f"pod/{pod}"]).fetchall()]


def _renumber(con: duckdb.DuckDBPyConnection, file: str) -> None:
    """Attempts of one pod log in start order: ``<file>#0``, ``#1``, ..."""
    con.execute("""
        UPDATE attempts_linked SET attempt = r.new, execution = r.k
        FROM (SELECT attempt AS old, row_number() OVER (ORDER BY start) - 1 AS k,
                     job_id || '#' || (row_number() OVER (ORDER BY start) - 1) AS new
              FROM attempts_linked WHERE job_id = ?) r
        WHERE attempts_linked.attempt = r.old""", [file])


def restart_gaps(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Pods whose restartCount says more incarnations ran since they were scheduled than the
    analysis sees: (pod, restarts, seen, scheduled at)."""
    out = []
    for file, in con.execute("SELECT DISTINCT job_id FROM attempts_linked WHERE source IN "
                             "('inferred', 'k8s_silent')").fetchall():
        pod = pod_of(file)
        rc = con.execute("SELECT max(restart_count) FROM attempts WHERE source = 'k8s_pod' "
                         "AND name = ?", [pod]).fetchall()[0][0]
        born = con.execute("SELECT max(ts) FROM events WHERE kind = 'k8s_event' AND code = "
                           "'Scheduled' AND device = ?", [f"pod/{pod}"]).fetchall()[0][0]
        if rc is None or born is None:
            continue
        seen = con.execute("SELECT count(*) FROM attempts_linked WHERE job_id = ? AND start "
                           ">= ?", [file, born]).fetchall()[0][0]
        if rc + 1 > seen:
            out.append({"pod": pod, "restarts": int(rc), "seen": int(seen), "since": born})
    return out
