"""Input that is missing, says nothing, or has no time (warnings for quality.py).

* ``no_progress``: no progress line is linked to any attempt of the run: T_opt and the TOR
  are undefined. The warning says which it is: output files of the run's jobs were read but
  hold no progress line tormortem reads (named, with ``tormortem explain``), files named after
  its jobs could not be read (named, with their ``line_accounting`` note), unlinked output
  whose time overlaps (candidates for ``--job-output``), or no output at all.
* ``attempt_without_output``: an attempt that ran more than ``SILENT_S`` with none of its
  output linked. Decision: one *after* the run's last attempt with progress whose job has no
  output line it could read (no file, one that could not be read, or one of no line it reads)
  is ``final``: the run's
  last iteration is unknown, so T_opt and the TOR are undefined (``run.py``) -- a corrupt
  ``slurm-1044.out.gz`` gave TOR 0.7660 for a truth of 0.8052, 4 h of unknown work called
  startup. One in the middle leaves T_opt exact (the run's first and last progress bound the
  net work); only its own split (startup, hang, lost) is estimated.
* ``untimed_evidence``: failure lines of the kernel log with only an uptime stamp (raw
  ``dmesg``) on a host none of whose lines gives its boot time: no wall time, so no
  interruption can be traced to them, and the interruptions they caused fall to their
  symptoms (seven Xid-caused interruptions became NCCL timeouts, without a word).
* ``unread_input``: files with a ``line_accounting`` note (quarantined: corrupt, binary,
  unreadable, invalid JSON; cut or grown lines; scheduler records with columns missing or no
  header) -- what they hold is missing from the analysis, which ingest's stderr said but
  ``analyze`` did not (sacct printed with ``--delimiter=,`` gave a run inferred from its output,
  no word why). Files of no known layout count only when their name says scheduler record
  (``_RECORDS``): a job script or README in the log folder is no loss.
"""

from __future__ import annotations

import os
import re
from typing import Any

import duckdb

from pipeline.analyze.progress import RunInputs

SILENT_S = 180.0
_INFO = re.compile(r"UTF-(?:16|32)(?:LE|BE)? text, read re-encoded as UTF-8$")
_RECORDS = re.compile(r"sacct|squeue|scontrol|slurmctld|slurmd|events|pods?\b|pytorchjob|"
                      r"\.json$|\.ya?ml$", re.IGNORECASE)


def warning(code: str, message: str, run: str | None = None, attempt: str | None = None,
            files: list[str] | None = None, fidelity: str = "incomplete") -> dict[str, Any]:
    return {"code": code, "run": run, "attempt": attempt, "message": message,
            "files": files or [], "fidelity": fidelity}


def files_list(files: list[str], n: int = 5) -> str:
    return ", ".join(files[:n]) + (f" and {len(files) - n} more" if len(files) > n else "")


def job_files(con: duckdb.DuckDBPyConnection, jobs: set[str]
              ) -> dict[str, list[tuple[str, int, str | None]]]:
    """Per job: (file, lines read, note) of the files linked to it, and of the files named
    after it (its id as a whole number in the file's name) -- a file that could not be read
    has no lines to link, but its name still says whose it is."""
    out: dict[str, list[tuple[str, int, str | None]]] = {j: [] for j in jobs}
    acc = {f: (int(r or 0), n) for f, r, n in con.execute(
        "SELECT file, read, note FROM line_accounting").fetchall()}
    for f, j in con.execute("SELECT file, job_id FROM output_links").fetchall():
        if j in out and f in acc:
            out[j].append((f, *acc[f]))
    bare = {re.sub(r"#.*", "", j): j for j in jobs}
    for f, (read, note) in acc.items():
        for num in re.findall(r"(?<![0-9])[0-9]+(?:_[0-9]+)?(?![0-9])", os.path.basename(f)):
            j = bare.get(num)
            if j is not None and all(f != g for g, _, _ in out[j]):
                out[j].append((f, read, note))
    return out


def _unread(files: list[tuple[str, int, str | None]]) -> str:
    bad = [f"{f} ({(n or 'nothing read').split(';')[0]})" for f, r, n in files if not r]
    return f"; files named after its job(s) could not be read: {files_list(bad, 3)}" \
        if bad else ""


def no_progress(con: duckdb.DuckDBPyConnection, ri: RunInputs,
                unlinked: list[tuple[str, float | None, float | None]]) -> dict[str, Any]:
    cands = [f for f, t0, t1 in unlinked if t0 is None or any(
        t0 <= a.end + 60 and a.start - 60 <= (t1 or t0) for a in ri.attempts)]
    found = [x for fs in job_files(con, {str(r["job_id"]) for r in ri.rows}).values()
             for x in fs]
    read = sorted({f for f, r, _ in found if r})
    msg = (f"run {ri.run}: no progress line is linked to any of its {len(ri.attempts)} "
           "attempts, so T_opt and TOR are undefined")
    if read:
        msg += (f"; its output ({files_list(read, 3)}) was read but holds no progress line "
                "tormortem knows, or none within its attempts' times: see what its lines "
                "are with tormortem explain FILE")
    msg += _unread(found)
    if cands:
        msg += (f"; candidate output files: {files_list(cands)} (name their pattern with "
                "--job-output)")
    elif not found:
        msg += "; no job output file was found for it"
    return warning("no_progress", msg, ri.run, files=cands or read)


def without_output(con: duckdb.DuckDBPyConnection, ri: RunInputs,
                   unlinked: list[tuple[str, float | None, float | None]],
                   lines: dict[str, int], truncated: set[int]) -> list[dict[str, Any]]:
    """``attempt_without_output`` warnings (module docstring)."""
    silent = [k for k, a in enumerate(ri.attempts) if not (
        k in truncated or lines.get(a.attempt) or a.end - a.start <= SILENT_S)]
    if not silent:
        return []
    last = max((k for k, a in enumerate(ri.attempts) if a.progress), default=-1)
    files = job_files(con, {str(ri.rows[k]["job_id"]) for k in silent})
    out = []
    for k in silent:
        a, own = ri.attempts[k], files[str(ri.rows[k]["job_id"])]
        # after the run's last progress, nothing it printed says how far it got: a file read
        # but of no line tormortem reads (only ``\r``, only NCCL INFO) says no more than a
        # file that could not be read (fault probe H6: "realized TOR 0.0000" from such a file)
        final = k > last
        cands = [f for f, t0, t1 in unlinked
                 if t0 is None or (t0 <= a.end + 60 and a.start - 60 <= (t1 or t0))]
        msg = (f"run {ri.run}: attempt {a.attempt} ran {a.end - a.start:,.0f} s but none of "
               "its output is linked, so what it did is unknown" + _unread(own)
               + (f"; candidate files: {files_list(cands)}" if cands else
                  "; no candidate output file" if not own else ""))
        if final:
            msg += ("; it comes after the run's last progress, so the run's last iteration, "
                    "T_opt and the TOR are unknown")
        out.append(warning("attempt_without_output", msg, ri.run, a.attempt, cands)
                   | {"final": final})
    return out


def cut_last(con: duckdb.DuckDBPyConnection, ri: RunInputs) -> list[dict[str, Any]]:
    """``output_cut``: the run's last progress line is in an output file whose end is lost (a
    compressed file cut short, read up to the damage): the run may have trained further, so
    its last iteration, T_opt and the TOR are unknown (``run.py``), as when that output could
    not be read at all (a truncated .gz was quarantined whole before, ``final`` above)."""
    ends = [a.progress[-1][0] for a in ri.attempts if a.progress]
    if not ends:
        return []
    jobs = {str(r["job_id"]) for r in ri.rows}
    cut = [(f, n) for fs in job_files(con, jobs).values() for f, r, n in fs
           if r and n and n.startswith("quarantined after ")]
    out = []
    for f, note in sorted(set(cut)):
        row = con.execute("SELECT max(epoch(ts)) FROM events WHERE file = ? AND kind = "
                          "'iteration'", [f]).fetchone()
        if row and row[0] is not None and float(row[0]) >= max(ends) - 1e-6:
            out.append(warning(
                "output_cut", f"run {ri.run}: its last progress line is in {f}, whose end is "
                f"lost ({note.split(';')[0]}), so the run's last iteration, T_opt and the TOR "
                "are unknown", ri.run, files=[f]))
    return out


def untimed_evidence(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    rows = con.execute("""
        SELECT category, count(*), count(DISTINCT host), min(file) FROM classified_events
        WHERE ts IS NULL AND ts_flag = 'uptime' AND category IS NOT NULL
          AND category NOT IN ('none', 'progress', 'checkpoint')
        GROUP BY category ORDER BY count(*) DESC, category""").fetchall()
    out = _timeless(con)
    if not rows:
        return out
    n = sum(int(r[1]) for r in rows)
    cats = ", ".join(f"{c} {k:,}" for c, k, _, _ in rows)
    out.append(warning("untimed_evidence", f"{n:,} kernel failure lines ({cats}; e.g. in "
                    f"{rows[0][3]}) carry only an uptime stamp, and no line of their host gives "
                    "its boot time: they have no wall time, so no interruption is traced to "
                    "them and what they caused is blamed on its symptoms: give the kernel log "
                    "with wall-clock stamps (/var/log/kern.log, journalctl -k -o short-iso, "
                    "dmesg -T) or one of each host's syslog lines with both stamps",
                    files=sorted({str(r[3]) for r in rows})))
    return out


def _timeless(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Failure lines with no time at all that no job's output holds (a slurmctld log whose
    stamps were cut off, a node log of bare messages): they can be traced only by the job
    they name, and only to a job that ran once, so the nodes they name went unused without a
    word (fault probe M8). A job output's own lines need no time: they belong to its
    attempt."""
    rows = con.execute("""
        SELECT category, count(*), min(file), count(DISTINCT file) FROM classified_events
        WHERE ts IS NULL AND ts_flag = 'missing' AND category IS NOT NULL
          AND category NOT IN ('none', 'progress', 'checkpoint')
          AND file NOT IN (SELECT file FROM output_links)
        GROUP BY category ORDER BY count(*) DESC, category""").fetchall()
    if not rows:
        return []
    n = sum(int(r[1]) for r in rows)
    cats = ", ".join(f"{c} {k:,}" for c, k, _, _ in rows)
    return [warning("untimed_evidence", f"{n:,} failure lines ({cats}; e.g. in {rows[0][2]}) "
                    "carry no time at all: they are traced only where they name a job that ran "
                    "once, so what the others caused is blamed on its symptoms: give the logs "
                    "with their timestamps",
                    files=sorted({str(r[2]) for r in rows}))]


def _lossy(note: str) -> str:
    """The parts of a note that say something was not read (a UTF-16 file read re-encoded
    as UTF-8 lost nothing)."""
    return "; ".join(x for x in note.split("; ") if not _INFO.match(x))


def unread_input(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    rows = con.execute("SELECT file, note FROM line_accounting WHERE note IS NOT NULL "
                       "AND duplicate_of IS NULL ORDER BY file").fetchall()
    keep = [(str(f), n) for f, n in ((f, _lossy(str(n))) for f, n in rows)
            if n and (not n.startswith("no known layout")
                      or _RECORDS.search(os.path.basename(str(f))))]
    if not keep:
        return []
    shown = "; ".join(f"{f}: {n if len(n) <= 200 else n[:197] + '...'}" for f, n in keep[:3])
    more = f" (and {len(keep) - 3} more)" if len(keep) > 3 else ""
    return [warning("unread_input", f"{len(keep)} input file(s) were not read in full or not "
                    f"as what they hold, so their lines or records are missing from the "
                    f"analysis{more}: {shown} (all in line_accounting.note)",
                    files=[f for f, _ in keep])]
