"""``scontrol show job`` records carry their times: every Start/End/Submit was null, because
the block was emptied before its times were read (fault probe H1), so a run of scontrol
snapshots was rebuilt from its output instead (TOR 0.4364 for 0.4173). The real output of
this repository's Slurm campaign (``tests/data/real_slurm/campaign2``, written by scontrol
of Slurm 23.x) against sacct's record of the same jobs."""

from __future__ import annotations

from pathlib import Path

from parsers.driver import parse_text
from parsers.sacct import SacctTextParser
from parsers.scontrol import ScontrolJobParser

DATA = Path(__file__).resolve().parents[1] / "data" / "real_slurm" / "campaign2" / "slurm"


def _rows(cls: type, name: str) -> dict[str, dict]:
    _ev, rec, _acct = parse_text(cls, (DATA / name).read_text())
    return {r["job_id"]: r for r in rec.to_pylist() if r["step"] is None}


def test_scontrol_times_are_sacct_times() -> None:
    sc = _rows(ScontrolJobParser, "scontrol_show_job.txt")
    sa = _rows(SacctTextParser, "sacct.psv")
    assert len(sc) == 9
    for job, r in sc.items():
        assert r["start"] is not None and r["end"] is not None and r["submit"] is not None, job
        assert (r["start"], r["end"], r["state"]) == (sa[job]["start"], sa[job]["end"],
                                                     sa[job]["state"]), job


def test_alloc_tres_gives_the_gpus() -> None:
    """Slurm 19.05+ prints ``AllocTRES=`` / ``ReqTRES=`` (src/api/job_info.c); older ones
    ``TRES=``."""
    block = ("JobId=77 JobName=train\n   JobState=RUNNING Reason=None Dependency=(null)\n"
             "   SubmitTime=2024-05-01T00:00:00 EligibleTime=2024-05-01T00:00:00\n"
             "   StartTime=2024-05-01T00:00:05 EndTime=2024-05-02T00:00:05 Deadline=N/A\n"
             "   NodeList=node[001-002]\n   NumNodes=2 NumCPUs=16 NumTasks=2\n"
             "   ReqTRES=cpu=16,mem=64G,node=2,billing=16,gres/gpu=16\n"
             "   AllocTRES=cpu=16,mem=64G,node=2,billing=16,gres/gpu=16\n")
    _ev, rec, _acct = parse_text(ScontrolJobParser, block)
    (r,) = rec.to_pylist()
    assert (r["gpus"], r["nodes"], r["end"]) == (16, ["node001", "node002"], None)
    assert r["start"] is not None
