"""Completeness checks that change the verdict: never a silent zero, never a silent gap.

Each check cross-checks two sources and, when they disagree, adds a warning (``code``,
``run``, ``attempt``, ``message``, ``files``) to the analysis's ``warnings[]`` and lowers the
run's ``fidelity`` to what is really known:

* ``scheduler`` -- every attempt from scheduler records and nothing below found missing;
* ``progress`` -- some attempts were reconstructed from training output (their start and end
  are their first and last stamped lines);
* ``incomplete`` -- something the numbers depend on is missing: read the warnings.

The checks (thresholds written down here):

* ``no_progress``: a run with attempts but no progress line at all has no T_opt: its TOR is
  undefined (never 0), and the warning names the output files that could be its own;
* ``attempt_without_output``: an attempt that ran more than ``SILENT_S`` with none of its
  output linked (no line of its job inside its time), while the run has progress elsewhere:
  its work is unknown; the warning names the candidate files (unlinked job output whose time
  overlaps) and unreadable files named after its job; one after the run's last progress
  leaves the TOR undefined (``nooutput.py``);
* ``truncated_output``: a requeued job whose output file holds only its later executions
  (``--open-mode=truncate`` erases the earlier ones): what was lost, and what the checkpoint
  the next execution loaded still tells (its work up to that iteration is estimated);
* ``missing_executions`` / ``after_executions``: progress lines of a scheduled job more than
  ``outside.SLACK_S`` before its first recorded execution / after its last one ended: they
  are in no attempt's window, so T_opt leaves them out (``outside.py``);
* ``no_record``: job output with progress (or job output at all) that no scheduler record
  accounts for: its attempts are inferred from its lines;
* ``records_cut``: a scheduler-record file (sacct text) with lines it could not read at its
  end -- the file was cut mid-record, and the records after it are missing;
* ``records_backwards``: scheduler records that end before they start, not read (sacct.py);
* ``records_unread``: sacct's fixed-width output whose rows were cut to their columns'
  widths (``+``): those records are missing;
* ``record_gap``: an attempt resumes from an iteration more than one logging interval above
  anything earlier attempts showed: an attempt between them is missing (its work is
  estimated, see unseen.py);
* ``restarts_unseen``: a pod's ``restartCount`` counts more incarnations since it was
  scheduled than its log and events show (silent.py);
* ``silence``: job output that attempts are inferred from falls silent for more than a day
  (``sql/inferred_sessions.sql``): the attempt is cut there; lines after it without progress
  are left out of every attempt's time (another program's lines, or a later execution that
  made no progress), pieces with progress become attempts of their own;
* ``backwards``: an attempt's iterations drop by more than a logging interval with no
  checkpoint load between (one process's counter only rises): lines of another run;
* ``timezone``: kernel lines that carry their UTC offset line up with the interruptions only
  when moved by hours (``zone.py``): the stamps without a zone were read in the wrong one;
* ``negative``: ``slow`` below ``-max(NEG_PER_ATTEMPT_S x attempts, NEG_SHARE x T_obs)``
  (surviving work took less than T_opt: progress is missing), or attempts from scheduler
  records that overlap by more than ``OVERLAP_S`` (counted once).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import duckdb
import numpy as np

from pipeline.analyze.decompose import Decomposition
from pipeline.analyze.nooutput import (
    cut_last,
    no_progress,
    unread_input,
    untimed_evidence,
    without_output,
)
from pipeline.analyze.nooutput import files_list as _files_list
from pipeline.analyze.nooutput import warning as _w
from pipeline.analyze.outside import after_last, before_first
from pipeline.analyze.progress import RunInputs
from pipeline.analyze.silent import restart_gaps
from pipeline.analyze.zone import output_shift, zone_shift
from pipeline.units import human

NEG_PER_ATTEMPT_S = 2.0
NEG_SHARE = 5e-4
OVERLAP_S = 5.0
ORDER = {"scheduler": 0, "progress": 1, "incomplete": 2}


def check(con: duckdb.DuckDBPyConnection, runs: list[RunInputs],
          decs: dict[str, Decomposition]) -> list[dict[str, Any]]:
    """All warnings (module docstring), in run order, then the campaign-wide ones."""
    out: list[dict[str, Any]] = []
    unlinked = con.execute("SELECT file, first_ts, last_ts FROM output_unlinked ORDER BY file"
                           ).fetchall()
    lines = {a: int(n) for a, n in con.execute(
        "SELECT attempt, count(*) FROM attempt_events GROUP BY attempt").fetchall()}
    files_of: dict[str, list[str]] = {}
    for a, f in con.execute("SELECT DISTINCT attempt, file FROM attempt_events").fetchall():
        files_of.setdefault(a, []).append(f)
    scheduled = _scheduled(con)
    untimed = untimed_progress(con)
    early = before_first(con)
    late = after_last(con)
    for ri in runs:
        out += _open_ends(ri)
        if ri.run in early:
            jobs = early[ri.run]
            fs = sorted({f for _, f, _, _ in jobs})
            n = sum(k for _, _, k, _ in jobs)
            ids = _files_list([j for j, _, _, _ in jobs])
            out.append(_w("missing_executions", f"run {ri.run}: {n:,} progress lines of "
                          f"{len(jobs)} job{'s' * (len(jobs) > 1)} ({ids}) were printed "
                          "before the job's first recorded execution (job "
                          f"{jobs[0][0]}: from {jobs[0][3]}): executions are missing from the "
                          "scheduler records (sacct without --duplicates lists only a requeued "
                          "job's last run): run sacct again with --duplicates, or leave the "
                          "sacct file out to infer every execution from the output; or the "
                          "output's clock or time zone disagrees with the records' (a clock "
                          "that stepped back, stamps of another zone: read both in one zone "
                          "with --tz)",
                          ri.run, files=fs) | {"lines": n})
        if ri.run in late:
            jobs = late[ri.run]
            fs = sorted({f for _, f, _, _ in jobs})
            n = sum(k for _, _, k, _ in jobs)
            out.append(_w("after_executions", f"run {ri.run}: {n:,} progress lines of "
                          f"{len(jobs)} job{'s' * (len(jobs) > 1)} "
                          f"({_files_list([j for j, _, _, _ in jobs])}) are stamped after the "
                          f"job's last recorded execution ended (job {jobs[0][0]}: up to "
                          f"{jobs[0][3]}), so they are left out of T_opt: the output's clock, "
                          "time zone or date disagrees with the scheduler records (read both "
                          "in one zone with --tz), or the records were taken before the job "
                          "ended (run sacct again)", ri.run, files=fs) | {"lines": n})
        if ri.run in untimed:
            n, c, fs = untimed[ri.run]
            timed = sum(len(a.progress) for a in ri.attempts) - c
            what = ([f"{n:,} carry no time (no timestamp on or before them in their file) and "
                     "are left out"] if n else []) + (
                [f"{c:,} share one inherited timestamp with other iterations and print no "
                 "step time to spread them"] if c else [])
            out.append(_w("untimed_progress", f"run {ri.run}: of the progress lines in "
                          f"{_files_list(fs)}, " + "; ".join(what) + f"; {timed:,} timed ones "
                          "remain" + (": too few to measure its TOR" if n + c > timed else ""),
                          ri.run, files=fs) | {"lines": n, "collapsed": c})
        inferred = [r["attempt"] for r in ri.rows if r.get("source") == "inferred"]
        if scheduled and inferred:
            fs = sorted({f for a in inferred for f in files_of.get(a, [])})
            out.append(_w("no_record", f"run {ri.run}: {len(inferred)} attempts come from job "
                          f"output no scheduler record lists ({_files_list(fs)}): they are "
                          "inferred from its lines (start and end = first and last stamped "
                          "line, or the controller log's allocation and end lines where it "
                          "has them)", ri.run, inferred[0], fs, fidelity="progress"))
        out += _run_checks(con, ri, decs[ri.run], unlinked, lines)
    silent = [f for f, t0, _ in unlinked if t0 is None]
    if scheduled and silent:
        out.append(_w("unlinked_output", f"{len(silent)} job output files could not be "
                      f"linked to any job ({_files_list(silent)}); if they are a job's output, "
                      "say how they are named with --job-output PATTERN", files=silent,
                      fidelity="scheduler"))
    out += _unlinked_pods(con)
    out += _records_cut(con)
    out += _silences(con)
    out += _zone(con)
    out += _output_zone(con)
    out += untimed_evidence(con)
    out += unread_input(con)
    for g in restart_gaps(con):
        out.append(_w("restarts_unseen", f"pod {g['pod']} restarted {g['restarts']} times since "
                      f"it was scheduled ({g['since']}), but only {g['seen']} of its "
                      f"{g['restarts'] + 1} incarnations are seen in its log and events "
                      "(events expire after --event-ttl, an hour by default): the others "
                      "left no trace, and their time is counted as repair"))
    return out


def untimed_progress(con: duckdb.DuckDBPyConnection
                     ) -> dict[str, tuple[int, int, list[str]]]:
    """Per run, progress lines no time could be given in the output files of its attempts
    (by the job id of the line, the file's links, or the file an attempt was inferred from):
    how many have none (ts_flag 'missing': no stamp on or before them in their file), how many
    share one inherited stamp with other iterations and no step time to spread them
    (Composer's console headers after one logger line: 'collapsed', see attempt_events.sql),
    and those files."""
    rows = con.execute("""
        WITH g AS (
            SELECT file, job_id, ts, count(*) AS n, count(DISTINCT iteration) AS k,
                   count(*) FILTER (WHERE value IS NULL) AS nv
            FROM events WHERE kind = 'iteration' AND (ts IS NULL OR ts_flag = 'inherited')
            GROUP BY ALL),
        u AS (
            SELECT file, job_id,
                   sum(CASE WHEN ts IS NULL THEN n ELSE 0 END) AS missing,
                   sum(CASE WHEN ts IS NOT NULL AND k > 1 AND nv > 0 THEN n ELSE 0 END)
                       AS collapsed
            FROM g GROUP BY ALL HAVING missing + collapsed > 0),
        f AS (
            SELECT DISTINCT a.run, u.* FROM u JOIN attempts_linked a ON a.job_id = u.job_id
            UNION
            SELECT DISTINCT a.run, u.* FROM u JOIN output_links l ON l.file = u.file
              JOIN attempts_linked a ON a.job_id = l.job_id WHERE u.job_id IS NULL
            UNION
            SELECT DISTINCT a.run, u.* FROM u JOIN attempts_linked a
              ON u.job_id IS NULL AND a.source = 'inferred' AND a.job_id = u.file)
        SELECT run, sum(missing), sum(collapsed), list(DISTINCT file ORDER BY file)
        FROM f GROUP BY run""").fetchall()
    return {str(r): (int(m), int(c), list(fs)) for r, m, c, fs in rows}


def _unlinked_pods(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Kubernetes pod records (``kubectl get pod -o json``) while the attempts were inferred
    from output files none of whose paths names any of those pods: the pods' logs are there
    under other names, and the records (container starts, exit codes, run name) go unused."""
    pods = [p for (p,) in con.execute(
        "SELECT DISTINCT name FROM attempts WHERE source = 'k8s_pod' AND name IS NOT NULL "
        "ORDER BY name").fetchall()]
    files = [f for (f,) in con.execute(
        "SELECT DISTINCT job_id FROM attempts_linked WHERE source = 'inferred'").fetchall()]
    if not pods or not files or any(p in str(f) for f in files for p in pods):
        return []
    return [_w("unlinked_pods", f"{len(pods)} pods have Kubernetes records ({_files_list(pods)}) "
               "but no output file the attempts were inferred from names one "
               f"({_files_list(files)}): save each pod's log under its name (kubectl logs "
               "POD > POD.log) so its container starts, exit codes and run name are used",
               files=files,
               fidelity="progress")]


def _scheduled(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT count(*) FROM attempts_linked WHERE source <> 'inferred'"
                      ).fetchone()
    return bool(row and row[0])


def _run_checks(con: duckdb.DuckDBPyConnection, ri: RunInputs, d: Decomposition,
                unlinked: list[tuple[str, float | None, float | None]],
                lines: dict[str, int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    run = ri.run
    if not any(a.progress for a in ri.attempts):
        return [no_progress(con, ri, unlinked)]
    by_job: dict[str, list[int]] = {}
    for k, row in enumerate(ri.rows):
        by_job.setdefault(row["job_id"], []).append(k)
    truncated: set[int] = set()
    for job, ks in by_job.items():
        seen = [k for k in ks if lines.get(ri.attempts[k].attempt)]
        if len(ks) > 1 and seen and min(seen) > ks[0]:
            lost = [ri.attempts[k].attempt for k in ks if k < min(seen)]
            truncated.update(k for k in ks if k < min(seen))
            nxt = d.attempts[min(seen)]
            load = nxt.resumed_from
            out.append(_w("truncated_output", f"run {run}: job {job}'s output holds only its "
                          f"execution(s) from {ri.attempts[min(seen)].attempt} on (opened "
                          f"with --open-mode=truncate, a requeue erases the earlier ones): "
                          f"the output of {', '.join(lost)} is lost; the checkpoint "
                          f"{ri.attempts[min(seen)].attempt} loaded (iteration {load}) says "
                          "they trained at least that far, and that work is estimated "
                          "(startup, hang and lost work of those attempts are not known)",
                          run, lost[0]))
    out += without_output(con, ri, unlinked, lines, truncated) + cut_last(con, ri)
    k_log = max(d.log_interval, 1)
    for k, p in enumerate(d.attempts[:-1]):
        n = (d.attempts[k + 1].resumed_from or 0) - (p.last_iteration or 0)
        if p.estimated_compute > 0 and k not in truncated and (
                p.last_iteration is None or n > k_log):
            out.append(_w("record_gap", f"run {run}: attempt {d.attempts[k + 1].attempt} "
                          f"loads iteration {d.attempts[k + 1].resumed_from}, above anything "
                          f"the attempts before it showed (up to {p.last_iteration or '-'}): "
                          "an attempt between them is missing from the records and the "
                          f"output; {p.estimated_compute:,.0f} s of its work are estimated",
                          run, p.attempt))
    back = sorted(((top - low, att, top, low, t) for att, (top, low, t) in
                   ri.backwards.items() if top - low > k_log), reverse=True)
    if back:  # one warning per run (a file of several runs' lines drops in every attempt)
        _, att, top, low, t = back[0]
        more = f" (and in {len(back) - 1} more attempts; this is the largest drop)" \
            if len(back) > 1 else ""
        out.append(_w("backwards", f"run {run}: attempt {att}'s iterations go back from "
                      f"{top:,} to {low:,} at {_iso(t)} with no checkpoint load between{more}: "
                      "its output holds the lines of another run (a file appended to by "
                      "several jobs?); the lines after the drop are not counted", run, att))
    slow = d.components["slow"]
    if slow < -negative_floor(d):
        out.append(_w("negative", f"run {run}: slow = {slow:,.0f} s is negative: the surviving "
                      "work took less than T_opt, so progress or attempts are missing",
                      run))
    rows = ri.rows
    for k in range(len(rows) - 1):
        a, b = ri.attempts[k], ri.attempts[k + 1]
        over = a.end - b.start
        if over > OVERLAP_S and rows[k].get("source") != "inferred" \
                and rows[k + 1].get("source") != "inferred":
            out.append(_w("negative", f"run {run}: attempts {a.attempt} and {b.attempt} "
                          f"overlap by {over:,.0f} s (counted once): two executions of one "
                          "run cannot both train; check the run linking (--run-map)", run,
                          a.attempt))
    return out


def _iso(t: float) -> str:
    if math.isnan(t):
        return "an unstamped line"
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _records_cut(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    out = []
    for file, read, unparsed, note, samples in con.execute(
            "SELECT a.file, a.read, a.unparsed, a.note, list(u.line_no ORDER BY u.line_no) "
            "FROM line_accounting a JOIN unparsed_samples u ON u.file = a.file WHERE "
            "a.source IN ('sacct', 'scontrol') GROUP BY a.file, a.read, a.unparsed, a.note"
            ).fetchall():
        if note and "fixed-width columns cut" in note and "unread" in note:
            out.append(_w("records_unread", f"scheduler records {file}: {unparsed:,} rows are "
                          "unread, their columns cut to their width by sacct ('+'): the "
                          "attempts they hold are missing (inferred from job output where "
                          "there is some); print sacct with --parsable2", files=[file]))
        elif note and "end before they start" in note:
            why = next(n for n in note.split("; ") if "end before they start" in n)
            out.append(_w("records_backwards", f"scheduler records {file}: {why}; the attempts "
                          "they held are inferred from job output where there is some",
                          files=[file]))
        elif samples and samples[-1] == read:
            out.append(_w("records_cut", f"scheduler records {file} end with a line that is "
                          f"not a whole record (line {read}): the file was cut, and the "
                          "records after it are missing (attempts after it are inferred from "
                          "job output where there is some)", files=[file]))
    return out


def ended_unrecorded(ri: RunInputs) -> list[str]:
    """Attempts with no recorded end that ended: not RUNNING by their records (pods of a live
    Kubernetes job run side by side), nor the run's last one with no state."""
    last = ri.attempts[-1].attempt if ri.attempts else None
    return [a for a, state, _ in ri.open_ends
            if (state or "").upper() != "RUNNING" and not (a == last and not state)]


def _open_ends(ri: RunInputs) -> list[dict[str, Any]]:
    if not ri.open_ends:
        return []
    closed = ended_unrecorded(ri)
    if not closed:
        a, _, t = ri.open_ends[-1]
        return [_w("still_running", f"run {ri.run}: attempt {a} was still running when the "
                   "records were written (no end time): its figures and the TOR are as of "
                   f"its last line seen ({datetime.fromtimestamp(t, UTC):%Y-%m-%d %H:%M:%S} "
                   "UTC); analyse again when it has ended", ri.run)]
    return [_w("no_end", f"run {ri.run}: {len(closed)} attempt(s) ({_files_list(closed)}) "
               "ended, but the records give no end time (sacct printed without End, or a "
               "record cut short): each is taken to end at its last line, so hangs and repair "
               "gaps cannot be told apart and the TOR is undefined: print sacct with End "
               "(-o JobID,JobName,State,ExitCode,Start,End,NodeList)", ri.run)]


def _output_zone(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    got = output_shift(con)
    if got is None:
        return []
    shift, hits, zero, n = got
    return [_w("output_timezone", f"the job output's progress lines fall within their jobs' "
               f"recorded executions for {hits} of {n} jobs when moved by {-shift / 3600:+g} h, "
               f"and for {zero} as read: the output's stamps (no zone: read in --tz) and the "
               "scheduler records were written in different zones (sacct prints the zone of "
               "the shell it ran in, TZ=...; sacct --json and pod status are UTC), so output "
               "and executions do not line up: read both in one zone (--tz, or sacct run with "
               "the cluster's TZ)")]


def _zone(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    got = zone_shift(con)
    if got is None:
        return []
    shift, hits, zero = got
    off = shift  # local = UTC + offset: the exact lines moved by it read as the local stamps
    name = f"UTC{'+' if off >= 0 else '-'}{abs(off) // 3600:02d}:{abs(off) % 3600 // 60:02d}"
    etc = f"Etc/GMT{'-' if off > 0 else '+'}{abs(off) // 3600}" if off % 3600 == 0 else None
    return [_w("timezone", f"kernel lines stamped with their UTC offset line up with {hits} "
               f"interruptions when moved by {shift / 3600:+g} h, and with {zero} as read: the "
               "stamps without a zone (slurmctld, sacct, job output) are most likely local "
               f"time at {name}, but were read in --tz (UTC unless given), so node evidence "
               "falls outside the windows and root causes become symptoms; run again with "
               "--tz set to the cluster's zone"
               + (f" (or --tz {etc}, that fixed offset)" if etc else ""))]


def _silences(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    out = []
    for file, run, silence, n_out, lines_out, t0, t1, n_in in con.execute("""
            WITH s AS (
                SELECT * FROM inferred_sessions s WHERE EXISTS (
                    SELECT 1 FROM inferred_sessions c WHERE c.session > 0
                    AND c.job_id = s.job_id AND c.file = s.file
                    AND c.incarnation = s.incarnation))
            SELECT s.file, min(a.run), max(s.silence_before),
                   count(DISTINCT (s.incarnation, s.session)) FILTER (NOT s.has_progress),
                   sum(s.lines) FILTER (NOT s.has_progress),
                   min(s.start) FILTER (NOT s.has_progress),
                   max(s."end") FILTER (NOT s.has_progress),
                   count(DISTINCT (s.incarnation, s.session)) FILTER (s.has_progress)
            FROM s LEFT JOIN attempts_linked a ON a.job_id = s.job_id
                   AND a.source = 'inferred'
            GROUP BY s.file ORDER BY s.file""").fetchall():
        if run is None:
            continue
        what = []
        if n_out:
            span = f"{t0:%Y-%m-%d %H:%M} to {t1:%Y-%m-%d %H:%M}"
            what.append(f"{lines_out:,} stamped lines ({span}) hold no progress and are left "
                        "out of every attempt's time (another program's lines, or an "
                        "execution that made no progress)")
        if n_in > 1:
            what.append(f"its {n_in} pieces with progress are attempts of their own, the "
                        "silence between them counted as repair gap")
        out.append(_w("silence", f"run {run}: {file} falls silent for {human(silence)}, "
                      "longer than any training step, watchdog or checkpoint save (a day), so "
                      "the attempts inferred from it are cut there: " + "; ".join(what),
                      run, files=[file], fidelity="progress"))
    return out


def fidelity(base: str, run: str, rows: list[dict[str, Any]],
             warnings: list[dict[str, Any]]) -> str:
    """The run's fidelity: the lowest of its attempts' sources and its warnings."""
    f = base
    if any(r.get("fidelity") == "progress" or r.get("source") == "inferred" for r in rows):
        f = max(f, "progress", key=ORDER.__getitem__)
    for w in warnings:
        if w["run"] in (run, None):
            f = max(f, w["fidelity"], key=ORDER.__getitem__)
    return f


def negative_floor(d: Decomposition) -> float:
    """How far below 0 ``slow`` may go before the run's data contradict themselves (stamps
    rounded to a second per attempt, a share of T_obs, or two standard errors of T_opt from
    the median step time t* -- 1.2533 x sd / sqrt(n) per iteration, sd from the MAD of the
    steady steps: a 20-minute run of 40 steps at 24 s +- 2% measured t* 24.078 s and was 4 s
    'too fast', TOR undefined for a true 0.748): the ``negative`` warning, and TOR
    undefined (``analyze.run._tor``)."""
    steps = np.array([iv.step_s for iv in d.intervals if not iv.first and not iv.after_save
                      and iv.b > iv.a and math.isfinite(iv.step_s)], float)
    stat = 0.0
    if steps.size >= 2 and math.isfinite(d.ideal_step_s) and d.ideal_step_s > 0:
        steps = steps[np.abs(steps / d.ideal_step_s - 1.0) < 0.2]  # steady, not fail-slow
        if steps.size >= 2:
            sd = 1.4826 * float(np.median(np.abs(steps - np.median(steps))))
            stat = 2.0 * 1.2533 * sd / math.sqrt(steps.size) * max(d.iterations_net, 0)
    return max(NEG_PER_ATTEMPT_S * len(d.attempts), NEG_SHARE * d.t_obs, stat)
