"""Warnings about how attempts were put into runs: ``--run-map`` rows that match nothing,
and scheduler records with no job name to tell runs apart by."""

from __future__ import annotations

from typing import Any

import duckdb

from pipeline.analyze.nooutput import warning


def unmatched_run_map(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """``--run-map`` rows whose job id no attempt has: a typo or another id form (an array
    task is ``1234_5``, a het job ``1234``) would otherwise leave that job on its guessed run
    with no word said."""
    ids = [r[0] for r in con.execute(
        "SELECT job_id FROM run_map m WHERE NOT EXISTS (SELECT 1 FROM attempts_linked a "
        "WHERE a.job_id = m.job_id) ORDER BY job_id").fetchall()]
    if not ids:
        return []
    return [warning("run_map_unmatched", f"{len(ids)} job id(s) of --run-map match no attempt "
                    f"and were not used: {', '.join(ids[:5])}"
                    + (f" (and {len(ids) - 5} more)" if len(ids) > 5 else "")
                    + "; write them as the records' JobID (an array task as 1234_5)",
                    fidelity="scheduler")]  # (a usage note: the numbers are not less sure)


def nameless(con: duckdb.DuckDBPyConnection, runs: int) -> list[dict[str, Any]]:
    """``nameless_records``: scheduler records none of which has a job name (``sacct -o``
    without JobName), and more than one run came of them: each job was a run of its own unless
    its checkpoints joined it to another, and nothing said so (fault probe H7: one run of two
    jobs gave TOR 0.4578 and 0.8307 instead of 0.4173, its NODE_FAIL no interruption)."""
    if runs < 2:
        return []
    row = con.execute("SELECT count(*), count(name) FROM attempts WHERE source IN "
                      "('sacct', 'sacct_json', 'scontrol')").fetchone()
    if row is None or not row[0] or row[1]:
        return []
    return [warning("nameless_records", f"none of the {row[0]:,} scheduler records has a job "
                    "name, so jobs could be joined into runs only by their checkpoints: "
                    f"{runs} runs; print sacct with JobName (sacct -o ...,JobName) or map jobs "
                    "to runs with --run-map")]


#: a wait between two attempts of one run longer than this is more likely two runs joined
LONG_GAP_S = 7 * 86400.0


def long_gaps(decs: dict[str, Any]) -> list[dict[str, Any]]:
    """``long_gap``: attempts of one run more than ``LONG_GAP_S`` apart, the wait counted as
    repair. Two runs that share a checkpoint folder are joined into one (by their
    checkpoints or names), and a TOR of 0.0000162 with a 176-day repair gap was printed with
    no word (fault probe L11); a real run may wait that long, so this is a warning, no more."""
    out = []
    for run, d in decs.items():
        gaps = [(b.start - a.end, a.attempt, b.attempt)
                for a, b in zip(d.attempts, d.attempts[1:], strict=False)
                if b.start - a.end > LONG_GAP_S]
        if gaps:
            gap, a, b = max(gaps)
            out.append(warning("long_gap", f"run {run}: {len(gaps)} wait(s) of more than "
                               f"{LONG_GAP_S / 86400:.0f} days between its attempts, counted "
                               f"as repair (the longest {gap / 86400:,.1f} days, {a} to {b}): if "
                               "they are separate runs, map each job to its run with --run-map",
                               run, fidelity="scheduler"))
    return out
