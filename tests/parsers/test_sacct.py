"""sacct text and JSON parsers.

Sources:
* REAL1 / REAL2: real Slurm 22.05.8 output, sample_logs/real_formats/slurm/run1, run2
  (NOTES.md there gives the exact commands); rows copied verbatim.
* V41: Slurm 24.05.3 slurmdbd job (data_parser/v0.0.41, the same parser ``sacct --json`` uses),
  rackslab/Slurm-web tests/assets/slurmrestd/24.05/0.0.41/slurmdb-job-failed.json, trimmed to
  the fields the parser reads (values unchanged).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from parsers.sacct import SacctJsonParser, SacctTextParser
from parsers.slurm_sacct_fields import gpus_from_gres, gpus_from_tres, split_job_step
from tests.parsers.util import parse, pick

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "slurm"
DATA = Path(__file__).resolve().parents[1] / "data" / "real_slurm"
REC_KEYS = ("job_id", "step", "name", "run_hint", "state", "reason", "exit_code", "signal",
            "submit", "start", "end", "nodes", "node_count", "gpus", "restart_count")


def _iso(v: Any) -> Any:
    return v.isoformat().replace("+00:00", "Z") if isinstance(v, datetime) else v


def recs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: _iso(r[k]) for k in REC_KEYS} for r in rows]


def rec(job: str, step: str | None, name: str | None, state: str | None, exit_code: int | None,
        signal: int | None, submit: str | None, start: str | None, end: str | None,
        nodes: list[str], node_count: int | None, gpus: int | None, reason: str | None = None,
        run_hint: str | None = None, restart: int | None = None) -> dict[str, Any]:
    return {"job_id": job, "step": step, "name": name, "run_hint": run_hint, "state": state,
            "reason": reason, "exit_code": exit_code, "signal": signal, "submit": submit,
            "start": start, "end": end, "nodes": nodes, "node_count": node_count, "gpus": gpus,
            "restart_count": restart}


# REAL1 sacct_steps_duplicates.psv (header + job 6 cancelled + requeued job 7, both runs)
HEADER = ("JobID|JobIDRaw|JobName|State|ExitCode|DerivedExitCode|Submit|Eligible|Start|End|"
          "Elapsed|NNodes|NodeList|AllocTRES|Reason")
ROWS_REAL1 = [
    "6|6|cancel|CANCELLED by 0|0:0|0:0|2026-11-29T19:52:33|2026-11-29T19:52:33|"
    "2026-11-29T19:52:35|2026-11-29T19:52:40|00:00:05|1|n4|billing=1,cpu=1,gres/gpu=1,mem=500M,"
    "node=1|None",
    "6.batch|6.batch|batch|CANCELLED|0:15||2026-11-29T19:52:35|2026-11-29T19:52:35|"
    "2026-11-29T19:52:35|2026-11-29T19:52:41|00:00:06|1|n4|cpu=1,gres/gpu=1,mem=500M,node=1|",
    "7|7|nodefail|NODE_FAIL|0:0|0:0|2026-11-29T19:52:33|2026-11-29T19:52:33|2026-11-29T19:52:35|"
    "2026-11-29T19:52:42|00:00:07|1|n2|billing=1,cpu=1,gres/gpu=2,mem=500M,node=1|None",
    "7.batch|7.batch|batch|CANCELLED|||2026-11-29T19:52:35|2026-11-29T19:52:35|"
    "2026-11-29T19:52:35|2026-11-29T19:52:42|00:00:07|1|n2|cpu=1,gres/gpu=2,mem=500M,node=1|",
    "7|7|nodefail|COMPLETED|0:0|0:0|2026-11-29T19:52:42|2026-11-29T19:52:53|2026-11-29T19:52:58|"
    "2026-11-29T19:53:11|00:00:13|1|n2|billing=1,cpu=1,gres/gpu=2,mem=500M,node=1|BeginTime",
]


def test_parsable2_rows_with_steps_and_duplicates() -> None:
    text = "\n".join([HEADER, *ROWS_REAL1]) + "\n"
    events, records, acct = parse(SacctTextParser, text, "sacct.psv")
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (6, 5, 1, 0)
    assert recs(records) == [
        rec("6", None, "cancel", "CANCELLED", 0, 0, "2026-11-29T19:52:33Z",
            "2026-11-29T19:52:35Z", "2026-11-29T19:52:40Z", ["n4"], 1, 1, reason="by 0",
            run_hint="cancel"),
        rec("6", "batch", "batch", "CANCELLED", 0, 15, "2026-11-29T19:52:35Z",
            "2026-11-29T19:52:35Z", "2026-11-29T19:52:41Z", ["n4"], 1, 1),
        rec("7", None, "nodefail", "NODE_FAIL", 0, 0, "2026-11-29T19:52:33Z",
            "2026-11-29T19:52:35Z", "2026-11-29T19:52:42Z", ["n2"], 1, 2, run_hint="nodefail"),
        rec("7", "batch", "batch", "CANCELLED", None, None, "2026-11-29T19:52:35Z",
            "2026-11-29T19:52:35Z", "2026-11-29T19:52:42Z", ["n2"], 1, 2),
        rec("7", None, "nodefail", "COMPLETED", 0, 0, "2026-11-29T19:52:42Z",
            "2026-11-29T19:52:58Z", "2026-11-29T19:53:11Z", ["n2"], 1, 2, run_hint="nodefail"),
    ]
    assert pick(events) == [
        {"ts": "2026-11-29T19:52:40Z", "host": None, "kind": "job_state", "job_id": "6",
         "rank": None, "code": "CANCELLED", "iteration": None, "value": 0.0, "device": "n4"},
        {"ts": "2026-11-29T19:52:42Z", "host": None, "kind": "job_state", "job_id": "7",
         "rank": None, "code": "NODE_FAIL", "iteration": None, "value": 0.0, "device": "n2"},
        {"ts": "2026-11-29T19:53:11Z", "host": None, "kind": "job_state", "job_id": "7",
         "rank": None, "code": "COMPLETED", "iteration": None, "value": 0.0, "device": "n2"},
    ]
    assert [e["ts_flag"] for e in events] == ["assumed_tz"] * 3
    assert [r["line_no"] for r in records] == [2, 3, 4, 5, 6]


def test_parsable_trailing_bar_arrays_and_column_subset() -> None:
    text = (
        # REAL1 sacct --parsable (trailing "|"), OOM job
        "JobID|JobIDRaw|JobName|State|ExitCode|DerivedExitCode|Submit|Eligible|Start|End|"
        "Elapsed|NNodes|NodeList|AllocTRES|Reason|\n"
        "5|5|oom|OUT_OF_MEMORY|0:125|0:0|2026-11-29T19:52:33|2026-11-29T19:52:33|"
        "2026-11-29T19:52:35|2026-11-29T19:52:39|00:00:04|1|n1|billing=1,cpu=1,gres/gpu=1,"
        "mem=200M,node=1|None|\n"
    )
    _, records, acct = parse(SacctTextParser, text, "sacct_p.psv")
    assert recs(records) == [rec("5", None, "oom", "OUT_OF_MEMORY", 0, 125,
                                 "2026-11-29T19:52:33Z", "2026-11-29T19:52:35Z",
                                 "2026-11-29T19:52:39Z", ["n1"], 1, 1, run_hint="oom")]
    assert acct.unparsed == 0
    text = (
        # REAL2 sacct_steps.psv: array task 3_0 (raw 5) and its srun step cancelled by uid 0
        "JobID|JobIDRaw|JobName|State|ExitCode|DerivedExitCode|Submit|Start|End|NNodes|NodeList|"
        "AllocTRES|Reason\n"
        "3_0|5|arr|FAILED|9:0|0:0|2026-11-29T19:54:54|2026-11-29T19:54:58|2026-11-29T19:55:03|1|"
        "n4|billing=1,cpu=1,gres/gpu=1,mem=500M,node=1|None\n"
        "3_0.0|5.0|step.sh|CANCELLED by 0|0:9||2026-11-29T19:55:00|2026-11-29T19:55:00|"
        "2026-11-29T19:55:05|1|n4|cpu=1,gres/gpu=1,mem=500M,node=1|\n"
        # REAL2: a 2-node job
        "1|1|multiok|COMPLETED|0:0|0:0|2026-11-29T19:54:54|2026-11-29T19:54:57|"
        "2026-11-29T19:55:01|2|n[1-2]|billing=2,cpu=2,gres/gpu=8,mem=1000M,node=2|None\n"
    )
    events, records, _ = parse(SacctTextParser, text, "sacct.psv")
    got = recs(records)
    assert [(r["job_id"], r["step"], r["state"], r["reason"], r["exit_code"], r["signal"])
            for r in got] == [("3_0", None, "FAILED", None, 9, 0),
                              ("3_0", "0", "CANCELLED", "by 0", 0, 9),
                              ("1", None, "COMPLETED", None, 0, 0)]
    assert (got[2]["nodes"], got[2]["node_count"], got[2]["gpus"]) == (["n1", "n2"], 2, 8)
    assert [e["job_id"] for e in events] == ["3_0", "1"]
    # REAL1 default columns (sacct --parsable2 without --format): no times, no nodes
    text = ("JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode\n"
            "3|exit|gpu|root|1|FAILED|3:0\n3.batch|batch||root|1|FAILED|3:0\n")
    events, records, _ = parse(SacctTextParser, text, "sacct.psv")
    assert [(r["job_id"], r["step"], r["exit_code"], r["nodes"]) for r in records] == [
        ("3", None, 3, None), ("3", "batch", 3, None)]
    assert (events[0]["ts"], events[0]["ts_flag"], events[0]["code"]) == (None, "missing",
                                                                        "FAILED")


def test_noheader_and_malformed_rows_unparsed() -> None:
    noheader = (DATA / "run1/sacct_noheader.psv").read_text()
    _, records, acct = parse(SacctTextParser, noheader, "sacct_noheader.psv")
    assert records == [] and acct.unparsed == acct.read == 16
    assert SacctTextParser.sniff(noheader, "sacct_noheader.psv") == 0
    text = (HEADER + "\n"
            # wrong field count (a truncated copy of a REAL1 row)
            "6|6|cancel|CANCELLED by 0|0:0|0:0\n"
            # bad exit code and bad time
            "6|6|cancel|CANCELLED by 0|x:y|0:0|2026-11-29T19:52:33|2026-11-29T19:52:33|"
            "2026-11-29T19:52:35|2026-11-29T19:52:40|00:00:05|1|n4|cpu=1|None\n"
            "6|6|cancel|CANCELLED|0:0|0:0|yesterday|2026-11-29T19:52:33|2026-11-29T19:52:35|"
            "2026-11-29T19:52:40|00:00:05|1|n4|cpu=1|None\n"
            "no bar here\n")
    _, records, acct = parse(SacctTextParser, text, "sacct.psv")
    assert records == []
    assert (acct.read, acct.irrelevant, acct.unparsed) == (5, 1, 4)


def test_a_record_that_ends_before_it_starts_is_not_read(tmp_path: Path) -> None:
    """REAL1's job 6 with Start and End swapped: no time of it can be trusted, so it is not
    read (unparsed, the file's note says why); the other rows are. It used to become an
    attempt of -5 s that the fit read rates from."""
    from parsers.driver import parse_file
    from parsers.reader import InputFile

    back = ROWS_REAL1[0].replace("2026-11-29T19:52:35|2026-11-29T19:52:40",
                                 "2026-11-29T19:52:40|2026-11-29T19:52:35")
    assert back != ROWS_REAL1[0]
    f = tmp_path / "sacct.psv"
    f.write_text(HEADER + "\n" + back + "\n" + ROWS_REAL1[2] + "\n")
    records: list[Any] = []
    res = parse_file(InputFile(f, str(f)), lambda b: None, records.append,
                     source=SacctTextParser)
    assert [r["job_id"] for b in records for r in b.to_pylist()] == ["7"]
    assert (res.acct.read, res.acct.unparsed) == (3, 1)
    assert res.note is not None and "1 record(s) end before they start (line 2)" in res.note


def test_real_text_samples() -> None:
    for name, counts in [("run1/sacct_steps_duplicates.psv", (21, 20, 1, 0)),
                         ("run1/sacct_parsable_trailing_bar.psv", (17, 16, 1, 0)),
                         ("run2/sacct_steps.psv", (21, 20, 1, 0))]:
        text = (SAMPLES / name).read_text()
        _, records, acct = parse(SacctTextParser, text, name)
        assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == counts, name
        assert len(records) == counts[1]
        assert SacctTextParser.sniff(text, name) >= 90


@pytest.mark.parametrize(("text", "gpus"), [
    ("billing=2,cpu=2,gres/gpu=8,mem=1000M,node=2", 8),          # REAL2
    ("billing=1,cpu=1,gres/gpu:h100=4,gres/gpu=4,mem=1G,node=1", 4),  # typed + untyped: no x2
    ("cpu=1,gres/gpu:a100=2,gres/gpu:h100=4,node=1", 6),
    ("billing=1,cpu=1,mem=500M,node=1", None),
])
def test_gpus_from_tres(text: str, gpus: int | None) -> None:
    assert gpus_from_tres(text) == gpus


def test_gpus_from_gres_and_job_ids() -> None:
    assert gpus_from_gres("gpu:h100:8") == 8
    assert gpus_from_gres("gpu:4(IDX:0-3)") == 4
    assert split_job_step("1234+0.extern") == ("1234+0", "extern")
    assert split_job_step("1234_5") == ("1234_5", None)
    with pytest.raises(ValueError):
        split_job_step("JobID")


# ------------------------------------------------------------------ JSON

def test_json_2205_real_sample() -> None:
    data = (SAMPLES / "run1/sacct.json").read_text()
    events, records, acct = parse(SacctJsonParser, data, "sacct.json")
    assert (acct.read, acct.events, acct.unparsed) == (10, 10, 0)
    jobs = [r for r in recs(records) if r["step"] is None]
    # every run of requeued jobs 7 and 8 is present (JSON lists the requeued runs first)
    assert [(r["job_id"], r["state"], r["exit_code"], r["signal"]) for r in jobs] == [
        ("8", "REQUEUED", 0, None), ("7", "NODE_FAIL", 0, None), ("1", "TIMEOUT", 0, None),
        ("2", "COMPLETED", 0, None),
        ("3", "FAILED", 0, None),  # exit 3 in --parsable2: the 22.05 JSON bug, kept as is
        ("4", "FAILED", None, 11), ("5", "OUT_OF_MEMORY", None, 125),
        ("6", "CANCELLED", 0, None), ("7", "COMPLETED", 0, None), ("8", "COMPLETED", 0, None)]
    assert jobs[2] == rec("1", None, "timeout", "TIMEOUT", 0, None, "2026-11-29T19:52:33Z",
                          "2026-11-29T19:52:35Z", "2026-11-29T19:54:02Z", ["n1"], 1, 1,
                          run_hint="timeout")
    steps = [r for r in recs(records) if r["step"] is not None]
    assert (steps[0]["job_id"], steps[0]["step"], steps[0]["state"], steps[0]["signal"]) == (
        "8", "batch", "CANCELLED", 15)
    assert [(e["job_id"], e["code"], e["ts_flag"]) for e in events][:2] == [
        ("8", "REQUEUED", "exact"), ("7", "NODE_FAIL", "exact")]
    assert [r["line_no"] for r in records if r["job_id"] == "1"] == [3, 3]


def test_json_2205_array_and_srun_steps() -> None:
    data = (SAMPLES / "run2/sacct.json").read_text()
    _, records, _ = parse(SacctJsonParser, data, "sacct.json")
    got = [(r["job_id"], r["step"], r["state"], r["nodes"], r["gpus"]) for r in records
           if r["job_id"] in ("1", "3_1")]
    assert got == [("1", None, "COMPLETED", ["n1", "n2"], 8),
                   ("1", "batch", "COMPLETED", ["n1"], 4),
                   ("1", "extern", "COMPLETED", ["n1", "n2"], 8),
                   ("1", "0", "COMPLETED", ["n1", "n2"], 8),  # srun step id is the integer 0
                   ("3_1", None, "FAILED", ["n4"], 1),
                   ("3_1", "batch", "FAILED", ["n4"], 1),
                   ("3_1", "extern", "COMPLETED", ["n4"], 1),
                   ("3_1", "0", "CANCELLED", ["n4"], 1)]


V41_JOB: dict[str, Any] = {
    "allocation_nodes": 1,
    "array": {"job_id": 0, "limits": {"max": {"running": {"tasks": 0}}},
              "task_id": {"set": False, "infinite": False, "number": 0}, "task": ""},
    "exit_code": {"status": ["ERROR"],
                  "return_code": {"set": True, "infinite": False, "number": 1},
                  "signal": {"id": {"set": False, "infinite": False, "number": 0}, "name": ""}},
    "het": {"job_id": 0, "job_offset": {"set": False, "infinite": False, "number": 0}},
    "job_id": 13368,
    "kill_request_user": "",
    "name": "allocation",
    "nodes": "cn1",
    "state": {"current": ["FAILED"], "reason": "None"},
    "steps": [{
        "time": {"elapsed": 1, "end": {"set": True, "infinite": False, "number": 1780141364},
                 "start": {"set": True, "infinite": False, "number": 1780141363}},
        "exit_code": {"status": ["ERROR"],
                      "return_code": {"set": True, "infinite": False, "number": 1},
                      "signal": {"id": {"set": False, "infinite": False, "number": 0},
                                 "name": ""}},
        "nodes": {"count": 1, "range": "cn1", "list": ["cn1"]},
        "state": ["FAILED"],
        "step": {"id": "13368.batch", "name": "batch"},
        "tres": {"allocated": [{"type": "cpu", "name": "", "id": 1, "count": 1},
                               {"type": "node", "name": "", "id": 4, "count": 1}]},
    }],
    "time": {"elapsed": 1, "eligible": 1780141362, "end": 1780141364,
             "planned": {"set": True, "infinite": False, "number": 1}, "start": 1780141363,
             "submission": 1780141362, "suspended": 0,
             "limit": {"set": True, "infinite": False, "number": 1}},
    "tres": {"allocated": [{"type": "cpu", "name": "", "id": 1, "count": 1},
                           {"type": "energy", "name": "", "id": 3, "count": -2},
                           {"type": "node", "name": "", "id": 4, "count": 1}]},
}


def test_json_v0041_shape() -> None:
    doc = {"jobs": [V41_JOB],
           "meta": {"plugin": {"type": "openapi/slurmdbd", "name": "Slurm OpenAPI slurmdbd",
                               "data_parser": "data_parser/v0.0.41",
                               "accounting_storage": "accounting_storage/slurmdbd"}},
           "errors": [], "warnings": []}
    text = json.dumps(doc, indent=2)
    assert SacctJsonParser.sniff(text, "sacct.json") >= 90
    events, records, acct = parse(SacctJsonParser, text, "sacct.json")
    assert recs(records) == [
        rec("13368", None, "allocation", "FAILED", 1, None, "2026-05-30T11:42:42Z",
            "2026-05-30T11:42:43Z", "2026-05-30T11:42:44Z", ["cn1"], 1, None,
            run_hint="allocation"),
        rec("13368", "batch", "batch", "FAILED", 1, None, None, "2026-05-30T11:42:43Z",
            "2026-05-30T11:42:44Z", ["cn1"], 1, None),
    ]
    assert pick(events) == [{"ts": "2026-05-30T11:42:44Z", "host": None, "kind": "job_state",
                             "job_id": "13368", "rank": None, "code": "FAILED",
                             "iteration": None, "value": 1.0, "device": "cn1"}]
    assert acct.events == 1


def test_json_gpu_tres_array_het_and_bad_records() -> None:
    job = json.loads(json.dumps(V41_JOB))
    job["tres"]["allocated"].append({"type": "gres", "name": "gpu", "id": 1001, "count": 8})
    job["tres"]["allocated"].append({"type": "gres", "name": "gpu:h100", "id": 1002,
                                     "count": 8})
    job["array"] = {"job_id": 13360, "task_id": {"set": True, "infinite": False, "number": 7}}
    het = json.loads(json.dumps(V41_JOB))
    het["het"] = {"job_id": 13370, "job_offset": {"set": True, "infinite": False, "number": 1}}
    het["steps"] = []
    text = json.dumps({"jobs": [job, het, "garbage", {"name": "no id"}],
                       "meta": {"plugin": {"type": "openapi/slurmdbd"}}})
    _, records, acct = parse(SacctJsonParser, text, "sacct.json")
    assert [(r["job_id"], r["step"], r["gpus"]) for r in records] == [
        ("13360_7", None, 8), ("13360_7", "batch", None), ("13370+1", None, None)]
    assert (acct.read, acct.events, acct.unparsed) == (4, 2, 2)


def test_json_sniff() -> None:
    real = (SAMPLES / "run1/sacct.json").read_text()[:65536]
    assert SacctJsonParser.sniff(real, "sacct.json") >= 90
    assert SacctTextParser.sniff(real, "sacct.json") == 0
    # kubectl get pods -o json / scontrol --json (not sacct) are not claimed
    assert SacctJsonParser.sniff('{"apiVersion": "v1", "items": [], "kind": "List"}', "p.json") == 0
    assert SacctJsonParser.sniff('{"jobs": [{"job_id": 1, "job_state": ["RUNNING"]}]}',
                                 "squeue.json") == 0
    # other sources' first lines
    for head in ("[2026-11-29T19:52:31.899] slurmctld version 22.05.8 started on cluster ci\n",
                 "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
                 "name=<unknown>, GPU has fallen off the bus.\n",
                 "node017:12345:12345 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.17<0>\n"):
        assert SacctJsonParser.sniff(head, "x.log") < 30
        assert SacctTextParser.sniff(head, "x.log") < 30


@pytest.mark.parametrize("damage", [
    ("|cancel|", "|can|cel|"),  # a '|' inside a JobName: a field too many
    ("2026-11-29T19:52:35", "2026-13-45T99:00:05"),  # a Start that is no time
])
def test_a_row_that_is_no_record_is_counted_and_noted(tmp_path: Path,
                                                      damage: tuple[str, str]) -> None:
    """A row sacct printed that cannot be read loses its job's execution: counted unparsed
    and named in the file's note (analyze's ``unread_input`` warning; it was silent, and the
    run's TOR was computed without that execution)."""
    from parsers.driver import parse_file
    from parsers.reader import InputFile

    bad = ROWS_REAL1[0].replace(*damage)
    assert bad != ROWS_REAL1[0]
    f = tmp_path / "sacct.psv"
    f.write_text(HEADER + "\n" + bad + "\n" + ROWS_REAL1[2] + "\n")
    records: list[Any] = []
    res = parse_file(InputFile(f, str(f)), lambda b: None, records.append,
                     source=SacctTextParser)
    assert [r["job_id"] for b in records for r in b.to_pylist()] == ["7"]
    assert (res.acct.read, res.acct.unparsed) == (3, 1)
    assert res.note is not None and "1 row(s) could not be read (line 2)" in res.note


def test_yaml_is_read_as_the_json() -> None:
    """``sacct --yaml`` (Slurm 21.08+) writes the tree ``--json`` does, through libyaml; it was
    no known layout, and ``--source sacct_json`` then said "not valid JSON" (fault probe L1).
    The real 22.05 sample, dumped as YAML, gives the JSON's records and accounting."""
    import yaml

    data = (SAMPLES / "run1/sacct.json").read_text()
    text = yaml.safe_dump(json.loads(data), sort_keys=False)
    assert SacctJsonParser.sniff(text, "sacct.yaml") >= 90
    ev_j, rec_j, _ = parse(SacctJsonParser, data, "sacct.json")
    ev_y, rec_y, acct_y = parse(SacctJsonParser, text, "sacct.json")
    assert recs(rec_y) == recs(rec_j) and pick(ev_y) == pick(ev_j)
    assert (acct_y.read, acct_y.events, acct_y.unparsed) == (10, 10, 0)
