"""Attempts and runs: scheduler records -> ``attempts_linked`` (one row per execution, with
its run), or, when the logs hold no scheduler records, attempts inferred from progress.

A run is the training campaign: by default all attempts with the same run hint (PyTorchJob
name) or job name; ``run_map`` (a CSV ``job_id,run``) overrides that per job id.
"""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.analyze.sql import sql
from pipeline.ingest.ruletable import RulesError


class RunMapError(RulesError):
    """A run-mapping file that cannot be used."""


def load_run_map(path: Path | None) -> pa.Table:
    rows: list[dict[str, str]] = []
    if path is not None:
        try:
            with open(path, newline="", encoding="utf-8") as fh:
                reader = csv.DictReader(fh)
                if reader.fieldnames is None or not {"job_id", "run"} <= set(reader.fieldnames):
                    raise RunMapError(f"{path}: the header must be job_id,run (one row per job "
                                      "id naming the run it belongs to)")
                for i, r in enumerate(reader, start=2):
                    if not r["job_id"] or not r["run"]:
                        raise RunMapError(f"{path} line {i}: empty job_id or run")
                    rows.append({"job_id": r["job_id"].strip(), "run": r["run"].strip()})
        except OSError as e:
            raise RunMapError(f"cannot read run map {path}: {e.strerror}") from None
    return pa.Table.from_pylist(rows, pa.schema([("job_id", pa.string()), ("run", pa.string())]))


def link_attempts(con: duckdb.DuckDBPyConnection, run_map: pa.Table) -> str:
    """Create ``attempts_linked`` in ``con``; returns the fidelity: ``scheduler`` when the
    attempts come from Slurm records, ``progress`` when inferred from training logs (no
    scheduler records, or only Kubernetes pod/PyTorchJob status, which keeps too little
    history to rebuild every restart)."""
    con.register("run_map_arrow", run_map)
    con.execute("CREATE OR REPLACE TABLE run_map AS SELECT * FROM run_map_arrow")
    con.unregister("run_map_arrow")
    con.execute("CREATE OR REPLACE TABLE attempts_linked AS " + sql("attempts_linked"))
    row = con.execute("SELECT count(*), count(*) FILTER (source IN ('k8s_pod', 'pytorchjob'))"
                      " FROM attempts_linked").fetchall()[0]
    # Kubernetes keeps only the last two container runs of a pod and one record per
    # PyTorchJob: with nothing else, the training output tells the attempts more completely
    if row[0] > 0 and row[1] < row[0]:
        con.execute("ALTER TABLE attempts_linked ADD COLUMN fidelity VARCHAR DEFAULT 'scheduler'")
        return "scheduler"
    con.execute("CREATE OR REPLACE TABLE attempts_linked AS " + sql("attempts_inferred"))
    return "progress"
