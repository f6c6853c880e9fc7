"""Attempts: scheduler records -> ``attempts_linked`` (one row per execution), or, when the
logs hold no scheduler records, attempts inferred from progress; plus attempts inferred for
job output that no scheduler record accounts for.

Which run each attempt belongs to is decided afterwards (``chains.py``); the SQL's first
guess is the explicit mapping (``run_map``, a CSV ``job_id,run``), else the run hint
(PyTorchJob name), else the job name.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import duckdb
import pyarrow as pa

from parsers.textfile import NotText, read_text
from pipeline.analyze.links import link_outputs
from pipeline.analyze.orphans import infer_orphans, inferred_attempts, refine
from pipeline.analyze.silent import add_silent
from pipeline.analyze.sql import sql
from pipeline.ingest.ruletable import RulesError


class RunMapError(RulesError):
    """A run-mapping file that cannot be used."""


def load_run_map(path: Path | None) -> pa.Table:
    rows: list[dict[str, str]] = []
    seen: dict[str, tuple[str, int]] = {}  #: job id -> (run, line): a row repeated is one row
    if path is not None:
        try:
            with io.StringIO(read_text(path), newline="") as fh:
                reader = csv.DictReader(fh)
                if reader.fieldnames is None or not {"job_id", "run"} <= set(reader.fieldnames):
                    raise RunMapError(f"{path}: the header must be job_id,run (one row per job "
                                      "id naming the run it belongs to)")
                for i, r in enumerate(reader, start=2):
                    if not r["job_id"] or not r["run"]:
                        raise RunMapError(f"{path} line {i}: empty job_id or run")
                    job, run = r["job_id"].strip(), r["run"].strip()
                    if job in seen:
                        if seen[job][0] != run:
                            raise RunMapError(
                                f"{path} line {i}: job {job} is mapped to run {run!r} here and "
                                f"to {seen[job][0]!r} on line {seen[job][1]}: a job belongs to "
                                "one run; keep one of the rows")
                        continue
                    seen[job] = (run, i)
                    rows.append({"job_id": job, "run": run})
        except OSError as e:
            raise RunMapError(f"cannot read run map {path}: {e.strerror}") from None
        except NotText as e:
            raise RunMapError(str(e)) from None
    return pa.Table.from_pylist(rows, pa.schema([("job_id", pa.string()), ("run", pa.string())]))


def link_attempts(con: duckdb.DuckDBPyConnection, run_map: pa.Table,
                  job_output: list[str] | None = None) -> tuple[str, dict[str, int | None]]:
    """Create ``attempts_linked``, ``output_links`` and ``output_unlinked`` in ``con``;
    returns the fidelity: ``scheduler`` when the attempts come from Slurm records,
    ``progress`` when inferred from training logs (no scheduler records, or only Kubernetes
    pod/PyTorchJob status, which keeps too little history to rebuild every restart); and per
    ``job_output`` pattern the job-output files it matched (None: not used, as there are no
    scheduler records to expand it with).

    With scheduler records, output files no record accounts for (a job the records miss: sacct
    cut short, a record removed) but that hold progress become attempts inferred from that
    progress (source ``inferred``, fidelity ``progress``): what the records miss is used, and
    ``quality.py`` says so."""
    con.register("run_map_arrow", run_map)
    con.execute("CREATE OR REPLACE TABLE run_map AS SELECT * FROM run_map_arrow")
    con.unregister("run_map_arrow")
    # only jobs no sacct record covers count as attempts from a scontrol snapshot (it shows
    # the current execution alone; see parsers/scontrol.py)
    con.execute("CREATE OR REPLACE TEMP VIEW attempts_scheduled AS SELECT a.rowid AS "
                "attempts_row, * FROM attempts a WHERE source <> 'scontrol' OR NOT EXISTS "
                "(SELECT 1 FROM attempts s WHERE s.job_id = a.job_id AND s.source IN "
                "('sacct', 'sacct_json'))")
    con.execute("CREATE OR REPLACE TABLE attempts_linked AS " + sql("attempts_linked"))
    row = con.execute("SELECT count(*), count(*) FILTER (source IN ('k8s_pod', 'pytorchjob'))"
                      " FROM attempts_linked").fetchall()[0]
    # Kubernetes keeps only the last two container runs of a pod and one record per
    # PyTorchJob: with nothing else, the training output tells the attempts more completely
    if row[0] > 0 and row[1] < row[0]:
        con.execute("ALTER TABLE attempts_linked ADD COLUMN fidelity VARCHAR DEFAULT 'scheduler'")
        matched: dict[str, int | None] = {**link_outputs(con, job_output)}
        infer_orphans(con)
        return "scheduler", matched
    link_outputs(con, [])
    # job output, and any file whose lines hold progress (one read as text of no known
    # layout: its framework's lines only after 16 KiB of other output, parsers/joblog_sniff.py)
    con.execute("CREATE OR REPLACE TABLE inference_files AS SELECT DISTINCT file FROM events "
                "WHERE source = 'joblog' OR kind = 'iteration'")
    con.execute("CREATE OR REPLACE TABLE attempts_linked AS " + inferred_attempts(con))
    # the controller's allocation and end lines give them their nodes, start and end, as
    # they do an orphan's (without, node evidence had no attempt to go to: probe H8)
    refine(con)
    con.execute("DELETE FROM output_links")
    add_silent(con)  # Kubernetes: container incarnations that printed nothing
    return "progress", dict.fromkeys(job_output or [])
