"""Warnings where the inputs leave runs or causes less certain than they look: records with
no job name (fault probe H7) and failure lines with no time at all (probe M8)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.cli.conftest import analysis

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"


def test_records_without_a_job_name_say_why_each_job_is_a_run(tmp_path: Path) -> None:
    """``sacct -o JobID,State,Start,End,NodeList,ExitCode``: no name to join jobs by."""
    logs = tmp_path / "logs"
    (logs / "jobs").mkdir(parents=True)
    keep = ("JobID", "State", "Start", "End", "NodeList", "ExitCode")
    rows = [r.split("|") for r in (DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:3]]
    cols = [rows[0].index(k) for k in keep]
    (logs / "sacct.txt").write_text("".join("|".join(r[c] for c in cols) + "\n" for r in rows))
    for j in ("1001", "1002"):
        shutil.copy(DEMO / "jobs" / f"slurm-{j}.out", logs / "jobs")
    doc = analysis(logs, tmp_path / "o")
    w = [x for x in doc["warnings"] if x["code"] == "nameless_records"]
    assert len(doc["runs"]) == 2 and len(w) == 1
    assert "none of the 2 scheduler records has a job name" in w[0]["message"]
    assert "--run-map" in w[0]["message"]
    # with the names, one run and no such warning
    shutil.copy(DEMO / "slurm" / "sacct.txt", logs / "sacct.txt")
    (logs / "sacct.txt").write_text("\n".join(
        (DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:3]) + "\n")
    doc = analysis(logs, tmp_path / "o2")
    assert len(doc["runs"]) == 1
    assert "nameless_records" not in {x["code"] for x in doc["warnings"]}


def test_failure_lines_with_no_time_are_said(tmp_path: Path) -> None:
    """The controller's lines with their stamps cut off: they name failed nodes, but only a
    job that ran once can take them, and nothing said so."""
    logs = tmp_path / "demo"
    shutil.copytree(DEMO, logs)
    ctld = logs / "slurm" / "slurmctld.log"
    ctld.write_text(re.sub(r"(?m)^\[[^\]]*\] ", "", ctld.read_text()))
    doc = analysis(logs, tmp_path / "o")
    w = [x for x in doc["warnings"] if x["code"] == "untimed_evidence"]
    assert len(w) == 1 and "carry no time at all" in w[0]["message"]
    assert w[0]["files"] == [str(ctld)]
    assert "untimed_evidence" not in {x["code"] for x in analysis(DEMO, tmp_path / "d")[
        "warnings"]}


def test_sacct_with_a_header_and_no_record_is_said(tmp_path: Path) -> None:
    """sacct printed for a window or user that holds none of the jobs: the run was rebuilt
    from its output, fidelity progress, with no warning (fault probe M5)."""
    logs = tmp_path / "logs"
    (logs / "jobs").mkdir(parents=True)
    (logs / "sacct.txt").write_text((DEMO / "slurm" / "sacct.txt").read_text().splitlines()[0]
                                    + "\n")
    for j in ("1001", "1002"):
        shutil.copy(DEMO / "jobs" / f"slurm-{j}.out", logs / "jobs")
    doc = analysis(logs, tmp_path / "o")
    w = [x for x in doc["warnings"] if x["code"] == "unread_input"]
    assert len(w) == 1 and "a header and no record" in w[0]["message"]
    assert doc["fidelity"] == "incomplete"


def test_job_ids_of_two_clusters_are_said(tmp_path: Path) -> None:
    """``sacct -M gpuA,gpuB -o Cluster,...``: job ids are per cluster, and gpuB's 1001 became
    an execution of ours, with a TOR of its own, no warning (fault probe H9)."""
    logs = tmp_path / "logs"
    (logs / "jobs").mkdir(parents=True)
    head, r1, r2 = (DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:3]
    other = r1.replace("llama-pretrain", "other-job").replace("2024-05-01T00:20:58",
                                                              "2024-05-01T00:10:00")
    rows = ["Cluster|" + head, "gpuA|" + r1, "gpuA|" + r2, "gpuB|" + other]
    (logs / "sacct.txt").write_text("\n".join(rows) + "\n")
    for j in ("1001", "1002"):
        shutil.copy(DEMO / "jobs" / f"slurm-{j}.out", logs / "jobs")
    doc = analysis(logs, tmp_path / "o")
    w = [x for x in doc["warnings"] if x["code"] == "unread_input"]
    assert len(w) == 1 and "1 job id(s) in the records of several clusters (e.g. 1001: gpuA, " \
        "gpuB)" in w[0]["message"] and "sacct -M NAME" in w[0]["message"]
    assert doc["fidelity"] == "incomplete"



def test_a_wait_of_months_between_attempts_is_said(tmp_path: Path) -> None:
    """sample_logs/real_formats as a whole: two unrelated outputs that resume from the same
    /ckpt folder, 176 days apart, are one run with a 176-day repair gap and TOR 0.0000162,
    printed with no word (fault probe L11). Said now; the numbers stand (a run may wait)."""
    doc = analysis(DEMO.parent / "real_formats", tmp_path / "o")
    w = [x for x in doc["warnings"] if x["code"] == "long_gap"]
    assert len(w) == 1 and w[0]["run"] == "run"
    assert "the longest 176.4 days, 77 to 4242" in w[0]["message"]
    assert w[0]["fidelity"] == "scheduler"
    assert "long_gap" not in {x["code"] for x in analysis(DEMO, tmp_path / "d")["warnings"]}


def test_no_component_is_float_noise_below_zero(tmp_path: Path) -> None:
    """The demo's jobs 1001-1002 with 1002's output empty: ckpt_save was -1.18e-08 s in
    analysis.json (fault probe L8). It is 0 now, and the components still sum to T_obs."""
    logs = tmp_path / "logs"
    (logs / "jobs").mkdir(parents=True)
    (logs / "sacct.txt").write_text(
        "\n".join((DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:3]) + "\n")
    shutil.copy(DEMO / "jobs" / "slurm-1001.out", logs / "jobs")
    (logs / "jobs" / "slurm-1002.out").write_text("")
    run = analysis(logs, tmp_path / "o")["runs"][0]
    c = run["components"]
    assert c["ckpt_save"] == 0.0 and all(v >= 0 for k, v in c.items() if k != "slow")
    assert abs(sum(c.values()) - run["t_obs_s"]) < 1e-6


def test_a_binary_file_is_not_called_job_output(tmp_path: Path) -> None:
    """An ELF named ls.log among the logs: named as binary, and no longer also as output no
    job could be linked to (fault probe L6)."""
    logs = tmp_path / "logs"
    (logs / "jobs").mkdir(parents=True)
    (logs / "sacct.txt").write_text(
        "\n".join((DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:3]) + "\n")
    for j in ("1001", "1002"):
        shutil.copy(DEMO / "jobs" / f"slurm-{j}.out", logs / "jobs")
    (logs / "ls.log").write_bytes(Path(shutil.which("ls") or "/bin/ls").read_bytes())
    doc = analysis(logs, tmp_path / "o")
    named = [w["code"] for w in doc["warnings"] if str(logs / "ls.log") in w["message"]]
    assert named == ["unread_input"]
