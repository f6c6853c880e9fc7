"""Scheduler lines and files as users paste or save them, beside what each must give."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest

from parsers.driver import parse_file
from parsers.joblog import JobLogParser
from parsers.reader import InputFile
from parsers.slurm_logs import SlurmctldParser
from parsers.slurm_sacct_fields import headerless_note
from pipeline.ingest.explain import explain_files
from tests.parsers.util import parse


@pytest.mark.parametrize("line", [
    # AMDResearch/hpcfund#69; slurmd/req.c: slurm_notify_job(job_id, "Prolog failure on node
    # %s"), printed by salloc / srun
    "salloc: Prolog failure on node k003-006",
    "srun: Prolog failure on node k003-006",
])
def test_prolog_failure_in_job_output(line: str) -> None:
    ev, _, acct = parse(JobLogParser, line + "\n", "slurm-235454.out")
    assert [(e["kind"], e["host"], e["code"]) for e in ev] == [
        ("node_drain", "k003-006", "Prolog or job env setup failure")]
    assert acct.events == 1


@pytest.mark.parametrize("line", [
    # slurmctld node_mgr.c validate_node_specs, 14.x-19.05
    "[2019-03-01T10:00:00.000] error: Prolog failure on node node12, draining the node",
    # the same before 14.x
    "[2012-03-01T10:00:00] error: Prolog failure on node node12, state to DOWN",
    # 20.02+
    "[2023-03-01T10:00:00.000] error: validate_node_specs: Prolog or job env setup failure on "
    "node node12, draining the node",
])
def test_prolog_failure_in_slurmctld(tmp_path: Path, line: str) -> None:
    ev, _, _ = parse(SlurmctldParser, line + "\n", "slurmctld.log")
    assert [(e["kind"], e["host"]) for e in ev] == [("node_drain", "node12")]
    f = tmp_path / "slurmctld.log"
    f.write_text(line + "\n")
    rows = list(explain_files([InputFile(f, "slurmctld.log")], tz=UTC, year=2024))
    assert [(r["category"], r["rule"]) for r in rows] == [
        ("node_failure", "slurm-node-drain-prolog")]


# sacct -n -P rows (martius-lab/cluster_utils#87, snakemake-executor-plugin-slurm#157) and
# plain sacct's fixed-width rows without the header (desihub/desispec#2744)
HEADERLESS = [
    "239023|galvani-cn001|COMPLETED|0:0\n239023.batch|galvani-cn001|COMPLETED|0:0\n"
    "239023.0|galvani-cn001|CANCELLED|0:10\n",
    "8183088|FAILED\n",
    "52222788   desi_zproc   desi_g   128  COMPLETED      0:0\n"
    "52222788.0 desi_zproc   desi_g   128  COMPLETED      0:0\n",
    "12_[1-4]|PENDING|0:0\n12_0|CANCELLED by 1000|0:0\n",
]


@pytest.mark.parametrize("text", HEADERLESS)
def test_headerless_sacct_rows_say_how_to_print_them(tmp_path: Path, text: str) -> None:
    assert "without its header" not in (headerless_note(text) or "")
    assert "sacct --parsable2" in (headerless_note(text) or "")
    f = tmp_path / "sacct.txt"
    f.write_text(text)
    res = parse_file(InputFile(f, "sacct.txt"), lambda b: None, lambda b: None)
    assert "without their header line (-n/--noheader)" in (res.note or "")
    assert res.acct.unparsed == len(text.splitlines())


@pytest.mark.parametrize("text", [
    "JobID|State|ExitCode\n1|COMPLETED|0:0\n",  # has its header: the sacct parser's
    "2024-05-01 12:00:00 job 12 FAILED\n",
    "1 passed, 2 FAILED in 3.2s\nhello\nworld\n",
    "",
])
def test_other_text_is_not_called_headerless_sacct(text: str) -> None:
    assert headerless_note(text) is None


def test_sacct_default_columns_say_what_is_missing(tmp_path: Path) -> None:
    # sacct(1): the default format is JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode
    f = tmp_path / "sacct.txt"
    f.write_text("JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode\n"
                 "1001|llama|gpu|acct|1024|NODE_FAIL|0:0\n"
                 "1001.batch|batch||acct|64|CANCELLED|0:15\n")
    res = parse_file(InputFile(f, "sacct.txt"), lambda b: None, lambda b: None)
    assert res.note is not None
    assert res.note.startswith("no Start, End or NodeList column: its records give no times")
    assert res.acct.events == 2
    f.write_text("JobID|State|ExitCode|Start|End|NodeList\n"
                 "1001|COMPLETED|0:0|2024-05-01T00:00:00|2024-05-01T01:00:00|n1\n")
    assert parse_file(InputFile(f, "sacct.txt"), lambda b: None, lambda b: None).note is None
