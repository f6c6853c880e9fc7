"""Files the user hands a command (a rates JSON, --rules and --run-map CSVs) in the encodings
editors write: UTF-8 with a byte-order mark and UTF-16 are read; bytes of no encoding read
here are one ``Error:`` line naming the file, its line and the byte -- never "internal error
(UnicodeDecodeError ...)", which plan, simulate and report printed for a UTF-16 rates file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.analyze.runs import load_run_map
from tests.cli.conftest import invoke

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"

XID = ("Dec 31 23:59:58 node017 kernel: [ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, "
       "GPU has fallen off the bus.\n")
#: the built-in rule xid-79 (category gpu_hardware) replaced by one of the same id
RULES = ("id,source,kind,code,pattern,category,mode,specificity,scales_with,note\n"
         "xid-79,kernel,xid,79,,gpu_memory,fail-stop,90,gpu,café\n")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_rates_in_utf16_or_with_a_bom_are_read(demo_out: Path, tmp_path: Path,
                                               encoding: str) -> None:
    rates = tmp_path / "rates.json"
    rates.write_text((demo_out / "rates.json").read_text(encoding="utf-8"), encoding=encoding)
    want = invoke("plan", "--rates", str(demo_out / "rates.json"), "--json")
    got = invoke("plan", "--rates", str(rates), "--json")
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout) == json.loads(want.stdout)
    r = invoke("simulate", "--rates", str(rates), "--no-logs", "--replicas", "2", "--json")
    assert r.exit_code == 0, r.output


def test_json_that_is_not_text_is_one_line_naming_the_file(demo_out: Path,
                                                           tmp_path: Path) -> None:
    rates = tmp_path / "rates.json"
    rates.write_bytes((demo_out / "rates.json").read_bytes().replace(b'"schema"',
                                                                       b'"sch\xe9ma"', 1))
    want = f"Error: {rates} line 2: not UTF-8 text (byte 0xe9); save the file as UTF-8\n"
    for args in (["plan", "--rates", str(rates)],
                 ["simulate", "--rates", str(rates), "--no-logs"],
                 ["report", str(demo_out), "--rates", str(rates), "--no-pdf", "--out",
                  str(tmp_path / "report")]):
        r = invoke(*args)
        assert (r.exit_code, r.stderr) == (1, want), (args, r.output)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_rules_in_utf16_or_with_a_bom_are_read(tmp_path: Path, encoding: str) -> None:
    (tmp_path / "kern.log").write_text(XID)
    (tmp_path / "rules.csv").write_text(RULES, encoding=encoding)
    r = invoke("explain", str(tmp_path / "kern.log"), "--rules", str(tmp_path / "rules.csv"),
               "--jsonl", "--year", "2023")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["category"] == "gpu_memory"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_a_run_map_in_utf16_or_with_a_bom_is_read(tmp_path: Path, encoding: str) -> None:
    (tmp_path / "map.csv").write_text("job_id,run\n1001,café\n", encoding=encoding)
    assert load_run_map(tmp_path / "map.csv").to_pylist() == [{"job_id": "1001",
                                                                "run": "café"}]
    # and the option's own check lets it through (the run stops later, at the missing logs)
    r = invoke("analyze", str(tmp_path / "nologs"), "--out", str(tmp_path / "o"), "--run-map",
               str(tmp_path / "map.csv"))
    assert r.exit_code == 2 and "no such file, directory or glob match" in r.stderr, r.output


def test_a_run_map_row_repeated_is_one_row_and_a_conflict_is_an_error(tmp_path: Path) -> None:
    """A job id listed twice made its attempt twice (a fake interruption, predicted TOR 0.190
    instead of 0.377, fault probe S4); listed under two runs, the last row won silently."""
    (tmp_path / "map.csv").write_text("job_id,run\n1001,a\n1001,a\n1002,a\n")
    assert load_run_map(tmp_path / "map.csv").to_pylist() == [
        {"job_id": "1001", "run": "a"}, {"job_id": "1002", "run": "a"}]
    (tmp_path / "bad.csv").write_text("job_id,run\n1001,a\n1002,a\n1001,b\n")
    r = invoke("analyze", str(DEMO), "--out", str(tmp_path / "o"), "--run-map",
               str(tmp_path / "bad.csv"))
    assert r.exit_code == 2, r.output
    assert "line 4: job 1001 is mapped to run 'b' here and to 'a' on line 2" in r.stderr
    assert "Traceback" not in r.output


def test_run_map_ids_no_attempt_has_are_a_warning(tmp_path: Path) -> None:
    """A --run-map row naming a job the records do not have (a typo, ``1001.0`` for ``1001``)
    was ignored with no word: the job stayed on its guessed run (fault probe leftover)."""
    (tmp_path / "map.csv").write_text("job_id,run\n1001,a\n1002,a\n10O3,a\n1001.0,b\n")
    r = invoke("analyze", str(DEMO), "--out", str(tmp_path / "o"), "--json", "--run-map",
               str(tmp_path / "map.csv"))
    assert r.exit_code == 0, r.output
    w = [x for x in json.loads(r.stdout)["warnings"] if x["code"] == "run_map_unmatched"]
    assert [x["message"] for x in w] == [
        "2 job id(s) of --run-map match no attempt and were not used: 1001.0, 10O3; write "
        "them as the records' JobID (an array task as 1234_5)"]
    (tmp_path / "good.csv").write_text("job_id,run\n1001,a\n1002,a\n")
    r = invoke("analyze", str(DEMO), "--out", str(tmp_path / "o2"), "--json", "--run-map",
               str(tmp_path / "good.csv"))
    assert "run_map_unmatched" not in {x["code"] for x in json.loads(r.stdout)["warnings"]}


def test_an_input_that_cannot_be_opened_is_a_warning_not_only_a_line(tmp_path: Path) -> None:
    """An input the walk could not open was said on stderr only: analysis.json had no
    warning and --strict exited 0 (fault probe D10b, a sacct file of mode 000). Its lines
    are missing, as a file read in part: ``unread_input``, fidelity incomplete."""
    logs = tmp_path / "logs"
    (logs / "jobs").mkdir(parents=True)
    (logs / "sacct.txt").write_text(
        "\n".join((DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:3]) + "\n")
    for j in ("1001", "1002"):
        (logs / "jobs" / f"slurm-{j}.out").write_bytes(
            (DEMO / "jobs" / f"slurm-{j}.out").read_bytes())
    (logs / "jobs" / "slurm-1003.out").symlink_to(tmp_path / "gone.out")
    r = invoke("analyze", str(logs), "--out", str(tmp_path / "o"), "--json", "--strict")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    w = [x for x in doc["warnings"] if x["code"] == "unread_input"]
    assert len(w) == 1 and "slurm-1003.out: broken symbolic link" in w[0]["message"]
    assert doc["fidelity"] == "incomplete"


@pytest.mark.parametrize("name", ["00-sacct.txt", "accounting.log", "zz-sacct.txt"])
def test_the_root_cause_does_not_depend_on_the_records_file_name(tmp_path: Path,
                                                                name: str) -> None:
    """The sacct row and Slurm's banner of one NODE_FAIL tie on specificity and time; the
    file that sorted first won, so ``00-sacct.txt`` gave no node where ``sacct.txt`` gave
    node001 (fault probe M1)."""
    logs = tmp_path / "logs"
    (logs / "jobs").mkdir(parents=True)
    rows = (DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:3]
    (logs / name).write_text("\n".join(rows) + "\n")
    for j in ("1001", "1002"):
        (logs / "jobs" / f"slurm-{j}.out").write_bytes(
            (DEMO / "jobs" / f"slurm-{j}.out").read_bytes())
    r = invoke("analyze", str(logs), "--out", str(tmp_path / "o"), "--json")
    assert r.exit_code == 0, r.output
    (i,) = json.loads(r.stdout)["runs"][0]["interruptions"]
    assert (i["category"], i["node"], i["cause"]["kind"]) == (
        "node_failure", "node001", "slurm_job_cancelled")


@pytest.mark.parametrize(("engine", "said"), [
    ("weasyprint", "(WeasyPrint)"), ("chromium", "(headless Chromium)"),
    ("auto", "(headless Chromium, else WeasyPrint)")])
def test_the_pdf_status_line_names_the_engine_asked_for(capsys: pytest.CaptureFixture[str],
                                                        engine: str, said: str) -> None:
    """``--pdf-engine weasyprint`` said it was printing with Chromium (fault probe L4)."""
    from pipeline.cli.report import report_phase

    report_phase("pdf", engine)
    assert f"report: printing report.pdf {said} ..." in capsys.readouterr().err


def test_plan_on_an_ingest_folder_advises_only_what_can_work(tmp_path: Path) -> None:
    """After ingest alone there is no analysis for ``fit`` to read; ``plan`` advised it, and
    fit refused the same folder (fault probe L3)."""
    r = invoke("ingest", str(DEMO / "slurm"), "--out", str(tmp_path / "i"))
    assert r.exit_code == 0, r.output
    r = invoke("plan", "--rates", str(tmp_path / "i"))
    assert r.exit_code == 1
    assert f"run `tormortem analyze LOGS --out {tmp_path / 'i'}`" in r.stderr
    assert "tormortem fit" not in r.stderr


def test_no_files_found_says_what_was_left_out(tmp_path: Path) -> None:
    """A folder holding only a link to a folder: "no files found" did not name the link it
    had not followed (fault probe L10)."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.log").write_text("x\n")
    (tmp_path / "wrap").mkdir()
    (tmp_path / "wrap" / "link").symlink_to(tmp_path / "real")
    r = invoke("ingest", str(tmp_path / "wrap"), "--out", str(tmp_path / "o"))
    assert r.exit_code != 0
    assert r.stderr.strip().splitlines()[-1] == (
        f"Error: no files found under {tmp_path / 'wrap'} (left out: {tmp_path / 'wrap' / 'link'}"
        ": symbolic link to a directory; not followed (name it explicitly to read it)); give "
        "log files, directories or a quoted glob")
