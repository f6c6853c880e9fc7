"""Completeness checks that change the verdict (issue 15 section 3, issue 13 "never a silent
zero"): the probes that once passed silently, as regression tests on the committed demo
campaign (sample_logs/demo: 19 attempts, 18 interruptions, 10,800 iterations, truth.json).

* sacct cut to its first two thirds (mid-record) -> warned (records_cut, no_record), the
  missing attempts rebuilt from their job output and the controller log, every component
  still within 0.1% of T_obs of the truth, every root cause right;
* one sacct record removed -> warned (no_record), no ``slow = -3,826 s``;
* a record and its output both gone -> warned (record_gap): the work the next attempt's
  checkpoint proves is estimated, not a negative ``slow``;
* job output that cannot be linked -> TOR undefined with the reason, never 0;
* ``--strict`` turns any of these into exit status 1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.cli import main
from pipeline.ingest.run import ingest

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"
TRUTH = json.loads((DEMO / "truth.json").read_text())["runs"][0]


def _copy(tmp: Path) -> Path:
    logs = tmp / "logs"
    shutil.copytree(DEMO, logs)
    (logs / "truth.json").unlink()  # (tormortem ignores it anyway; keep the probe clean)
    return logs


def _analyze(logs: Path, out: Path) -> dict[str, Any]:
    ingest(expand_inputs([str(logs)]), out)
    return analyze_db(out / "tormortem.duckdb")


def _codes(doc: dict[str, Any]) -> list[str]:
    return sorted(w["code"] for w in doc["warnings"])


def _close_to_truth(run: dict[str, Any]) -> None:
    t_obs = TRUTH["t_obs_s"]
    assert abs(run["t_obs_s"] - t_obs) <= 1.0
    for k, v in TRUTH["components"].items():
        assert abs(run["components"][k] - v) <= 1e-3 * t_obs, (k, run["components"][k], v)
    assert [i["category"] for i in run["interruptions"]] == [
        i["category"] for i in TRUTH["interruptions"]]
    assert run["final_iteration"] == 10_800 and run["iterations_net"] == 10_800


def test_demo_has_no_warnings(tmp_path: Path) -> None:
    doc = _analyze(DEMO, tmp_path / "out")
    assert doc["warnings"] == [] and doc["fidelity"] == "scheduler"
    assert all(a["run_link"]["method"] == "name" for a in doc["runs"][0]["attempts"])
    assert all(o["method"] == "path" for a in doc["runs"][0]["attempts"]
               for o in a["outputs"])


def test_sacct_cut_to_two_thirds(tmp_path: Path) -> None:
    logs = _copy(tmp_path)
    sacct = logs / "slurm" / "sacct.txt"
    data = sacct.read_bytes()
    sacct.write_bytes(data[: len(data) * 2 // 3])  # mid-record, as a cut copy ends
    doc = _analyze(logs, tmp_path / "out")
    assert _codes(doc) == ["no_record", "records_cut"]
    assert doc["fidelity"] == "incomplete"
    run = doc["runs"][0]
    assert len(run["attempts"]) == 19
    inferred = [a for a in run["attempts"] if a["source"] == "inferred"]
    assert len(inferred) == 7
    _close_to_truth(run)


def test_one_record_removed(tmp_path: Path) -> None:
    logs = _copy(tmp_path)
    sacct = logs / "slurm" / "sacct.txt"
    lines = sacct.read_text().splitlines(keepends=True)
    sacct.write_text("".join(ln for ln in lines if not ln.startswith(("1027|", "1027."))))
    doc = _analyze(logs, tmp_path / "out")
    assert _codes(doc) == ["no_record"]
    assert doc["fidelity"] == "progress"
    run = doc["runs"][0]
    assert [a["attempt"] for a in run["attempts"] if a["source"] == "inferred"] == ["1027"]
    assert run["components"]["slow"] > 0  # was -3,826 s
    _close_to_truth(run)


def test_record_and_output_removed(tmp_path: Path) -> None:
    """Nothing left of job 1027 but the checkpoint the next attempt loads: a record gap,
    said, and the proven work estimated instead of a negative slow."""
    logs = _copy(tmp_path)
    sacct = logs / "slurm" / "sacct.txt"
    lines = sacct.read_text().splitlines(keepends=True)
    sacct.write_text("".join(ln for ln in lines if not ln.startswith(("1027|", "1027."))))
    (logs / "jobs" / "slurm-1027.out").unlink()
    doc = _analyze(logs, tmp_path / "out")
    assert _codes(doc) == ["record_gap"]
    assert doc["fidelity"] == "incomplete"
    run = doc["runs"][0]
    # the work the missing attempt did (the next attempt's checkpoint proves it) is estimated
    # compute, taken from the gap it ran in: slow stays right (it was -3,826 s)
    assert run["estimated"]["compute_s"] > 10_000
    slow = TRUTH["components"]["slow"]
    assert abs(run["components"]["slow"] - slow) <= 1e-3 * TRUTH["t_obs_s"]
    assert run["final_iteration"] == 10_800


def test_no_output_is_never_a_silent_zero(tmp_path: Path) -> None:
    """No job output at all: TOR undefined, with the reason, never 0."""
    logs = _copy(tmp_path)
    shutil.rmtree(logs / "jobs")
    doc = _analyze(logs, tmp_path / "out")
    run = doc["runs"][0]
    assert run["tor"] is None
    assert run["tor_undefined"] == "no progress lines linked to its attempts"
    w = [x for x in doc["warnings"] if x["code"] == "no_progress"]
    assert len(w) == 1 and "no job output file was found" in w[0]["message"]
    assert run["fidelity"] == "incomplete"
    r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(tmp_path / "o2")])
    assert "TOR undefined (no progress lines linked to its attempts)" in r.output


def test_more_work_than_time_is_no_tor(tmp_path: Path) -> None:
    """A job log whose iteration lines claim more work than their stamps allow (several
    runs' lines in one file, or lines shuffled: a probe printed ``realized TOR 72.3082``
    from such a file): TOR undefined with the reason, never a ratio above 1; the components
    still sum to T_obs and the ``negative`` warning names the run."""
    logs = tmp_path / "logs"
    logs.mkdir()
    # Megatron-LM's training_log (megatron/training/training.py): 10 iterations of ~5 s
    # each between stamps one second apart
    (logs / "slurm-42.out").write_text("".join(
        f" [2024-05-01 00:00:{k:02d}] iteration {10 * k:8d}/    1000 | consumed samples: "
        f"{5120 * k:12d} | elapsed time per iteration (ms): 5000.0 | learning rate: "
        f"1.000E-04 | global batch size:   512 | lm loss: 1.0E+01 |\n" for k in range(1, 40)))
    doc = _analyze(logs, tmp_path / "out")
    run = doc["runs"][0]
    assert run["t_opt_s"] > run["t_obs_s"] > 0
    assert run["tor"] is None and "T_opt exceeds the time its work took" in run["tor_undefined"]
    assert abs(sum(run["components"].values()) - run["t_obs_s"]) < 1e-6
    assert "negative" in _codes(doc)
    r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(tmp_path / "o2")])
    assert r.exit_code == 0, r.output
    assert "TOR undefined (T_opt exceeds the time its work took by" in r.output
    assert "vs realized undefined" in r.output and "realized TOR" not in r.output


def test_output_named_without_ids_is_linked_by_time(tmp_path: Path) -> None:
    """No job id in the names: a file whose lines name its job (Slurm's ``*** JOB N ...``
    banner) is linked by content, the others by the last resort, their stamped lines inside
    exactly one job's executions."""
    logs = _copy(tmp_path)
    for k, f in enumerate(sorted((logs / "jobs").iterdir())):
        f.rename(f.with_name(f"output-{chr(97 + k)}.txt"))
    doc = _analyze(logs, tmp_path / "out")
    run = doc["runs"][0]
    methods = [o["method"] for a in run["attempts"] for o in a["outputs"]]
    assert set(methods) == {"content", "window"} and methods.count("window") >= 10
    assert doc["warnings"] == []
    _close_to_truth(run)


def test_job_output_pattern_links_what_evidence_cannot(tmp_path: Path) -> None:
    logs = _copy(tmp_path)
    for f in (logs / "jobs").iterdir():
        f.rename(f.with_name(f.name.replace("slurm-", "out_") + ".txt"))  # out_1001.out.txt
    out = tmp_path / "out"
    ingest(expand_inputs([str(logs)]), out)
    doc = analyze_db(out / "tormortem.duckdb", job_output=["jobs/out_%j.out.txt"])
    run = doc["runs"][0]
    assert doc["warnings"] == []
    assert {o["method"] for a in run["attempts"] for o in a["outputs"]} == {"pattern"}
    _close_to_truth(run)


@pytest.mark.slow  # ~3-6 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_strict_exits_non_zero(tmp_path: Path) -> None:
    logs = _copy(tmp_path)
    sacct = logs / "slurm" / "sacct.txt"
    lines = sacct.read_text().splitlines(keepends=True)
    sacct.write_text("".join(ln for ln in lines if not ln.startswith(("1027|", "1027."))))
    r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(tmp_path / "o1")])
    assert r.exit_code == 0, r.output
    assert "[no_record]" in r.output and "fidelity: progress" in r.output
    r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(tmp_path / "o2"),
                                  "--strict"])
    assert r.exit_code == 1
    assert "--strict: 1 data-quality warning" in r.output


@pytest.mark.parametrize("strict", [False, True])
def test_clean_demo_passes_strict(tmp_path: Path, strict: bool) -> None:
    args = ["analyze", str(DEMO), "--out", str(tmp_path / "o")] + (["--strict"] if strict
                                                                     else [])
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output


def _megatron(day: str, first: int, n: int, step_ms: float = 9_000.0,
              every_s: int = 10) -> str:
    """Megatron-LM's training_log lines (megatron/training/training.py: ``[%Y-%m-%d
    %H:%M:%S]`` from print_datetime's clock, then `` iteration %8d/%8d |``), one iteration
    per line, ``every_s`` seconds apart from 00:00:00 of ``day``."""
    out = []
    for k in range(n):
        t = k * every_s
        out.append(f" [{day} {t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}] iteration "
                   f"{first + k:8d}/  100000 | consumed samples: {512 * (first + k):12d} | "
                   f"elapsed time per iteration (ms): {step_ms:.1f} | learning rate: "
                   "1.000E-04 | global batch size:   512 | lm loss: 1.0E+01 |\n")
    return "".join(out)


def test_a_day_of_silence_cuts_an_inferred_attempt(tmp_path: Path) -> None:
    """A job log (no scheduler record) whose last lines are another program's, 227 days
    after its training (a probe printed ``realized TOR 0.0000`` with T_obs 227 d and no
    warning): the attempt ends with the training's lines, and the ``silence`` warning says
    which lines were left out."""
    logs = tmp_path / "logs"
    logs.mkdir()
    # slurmctld's lines (src/slurmctld/ping_nodes.c: error("Nodes %s not responding"),
    # log.c's "[%Y-%m-%dT%H:%M:%S.%3N]" file stamp) pasted into the job's output
    (logs / "slurm-790.out").write_text(_megatron("2024-03-03", 100, 40) + "".join(
        f"[2024-10-17T08:1{k}:58.483] error: Nodes gpu-[30-31] not responding\n"
        for k in range(3)))
    doc = _analyze(logs, tmp_path / "out")
    run = doc["runs"][0]
    assert [a["source"] for a in run["attempts"]] == ["inferred"]
    assert run["t_obs_s"] == 390.0
    assert abs(sum(run["components"].values()) - run["t_obs_s"]) < 1e-6
    # 39 steps of 9 s in 390 s (the first line's work was done before the attempt is seen)
    assert run["tor"] == pytest.approx(39 * 9.0 / 390.0)
    w = [x for x in doc["warnings"] if x["code"] == "silence"]
    assert len(w) == 1 and "3 stamped lines (2024-10-17 08:10 to 2024-10-17 08:12)" in \
        w[0]["message"] and "falls silent for 228d 08h" in w[0]["message"]


def test_a_hang_until_the_time_limit_is_not_cut(tmp_path: Path) -> None:
    """The same silence ended by slurmstepd's banner of the same job (a hang no watchdog
    caught, killed at the time limit): the job was held all along, so the attempt runs to
    the banner and no ``silence`` warning is given."""
    logs = tmp_path / "logs"
    logs.mkdir()
    # slurmstepd (src/slurmd/slurmstepd/req.c / mgr.c): "*** JOB %u ON %s CANCELLED AT %s
    # DUE TO TIME LIMIT ***", printed into the job's stderr
    (logs / "slurm-790.out").write_text(
        _megatron("2024-03-03", 100, 40) + "slurmstepd: error: *** JOB 790 ON gpu017 "
        "CANCELLED AT 2024-03-05T00:00:00 DUE TO TIME LIMIT ***\n")
    doc = _analyze(logs, tmp_path / "out")
    run = doc["runs"][0]
    assert run["t_obs_s"] == 2 * 86400.0
    assert "silence" not in _codes(doc)


def test_progress_on_both_sides_of_a_silence_is_two_attempts(tmp_path: Path) -> None:
    """Iteration lines, three days of nothing, then more (an output file appended to by a
    later execution that printed no start line): two attempts, the silence between them
    repair gap, and said."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "slurm-790.out").write_text(_megatron("2024-03-03", 100, 40)
                                        + _megatron("2024-03-06", 140, 40))
    doc = _analyze(logs, tmp_path / "out")
    run = doc["runs"][0]
    assert len(run["attempts"]) == 2
    w = [x for x in doc["warnings"] if x["code"] == "silence"]
    assert len(w) == 1 and "its 2 pieces with progress are attempts" in w[0]["message"]


def test_a_run_shorter_than_its_rounding_has_no_tor(tmp_path: Path) -> None:
    """Three iteration lines 1 s apart, each 1.3 s of work: T_opt 2.6 s > T_obs 2 s, within
    the ``negative`` floor (stamps rounded to the second): TOR undefined, not 1.3."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "slurm-790.out").write_text(_megatron("2024-03-03", 100, 3, 1300.0, 1))
    doc = _analyze(logs, tmp_path / "out")
    run = doc["runs"][0]
    assert run["t_opt_s"] > run["t_obs_s"] == 2.0
    assert run["tor"] is None and "too short to measure" in run["tor_undefined"]


def test_iterations_that_end_below_their_start_have_no_tor(tmp_path: Path) -> None:
    """A later run's lines above an earlier run's in one file, the earlier one's checkpoint
    load between (iterations 20,000, then a load of 1,440: a probe printed ``T_opt -1d 15h,
    realized TOR -1838.6800`` and its fit failed its own schema with a negative
    target_iterations): TOR undefined with the reason; the rates are still written, without
    a target."""
    logs = tmp_path / "logs"
    logs.mkdir()
    # Megatron-LM megatron/training/checkpointing.py load_checkpoint: print_rank_0(f' loading
    # checkpoint from {load_dir} at iteration {iteration}')
    (logs / "slurm-790.out").write_text(
        _megatron("2024-03-03", 20_000, 10, 900.0, 1)
        + " loading checkpoint from /ckpt/gpt at iteration 1440\n"
        + _megatron("2024-03-03", 1_441, 10, 900.0, 1).replace("00:00:0", "00:00:2"))
    r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    run = json.loads((tmp_path / "o" / "analysis.json").read_text())["runs"][0]
    assert (run["start_iteration"], run["final_iteration"]) == (20_000, 1_450)
    assert run["tor"] is None and "below its start" in run["tor_undefined"]
    assert "TOR undefined (the run ends at iteration 1,450" in r.output
    rates = json.loads((tmp_path / "o" / "rates.json").read_text())
    assert "target_iterations" not in rates


def test_iterations_going_back_without_a_load_are_warned(tmp_path: Path) -> None:
    """The same without the load line: one attempt whose counter drops (a process's only
    rises): the ``backwards`` warning names it, and the run's fidelity is incomplete."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "slurm-790.out").write_text(
        _megatron("2024-03-03", 20_000, 10, 900.0, 1)
        + _megatron("2024-03-03", 1_441, 10, 900.0, 1).replace("00:00:0", "00:00:2"))
    doc = _analyze(logs, tmp_path / "out")
    w = [x for x in doc["warnings"] if x["code"] == "backwards"]
    assert len(w) == 1 and "back from 20,009 to 1,441 at 2024-03-03 00:00:20" in w[0]["message"]
    assert doc["runs"][0]["fidelity"] == "incomplete"


def test_progress_in_a_file_of_no_known_layout_makes_attempts(tmp_path: Path) -> None:
    """A NeMo 2 log whose first 20 KiB are pip's output (no training marker where the sniffer
    looks first): read as text of no known layout, its progress lines still make the
    attempt (``analyze`` said "no training progress lines" of such a file)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    # pip's own lines (src/pip/_internal/operations/prepare.py "Collecting %s",
    # req/req_install.py "Requirement already satisfied: ...")
    pip = "".join(f"2025-06-22T22:0{k // 100}:00Z Requirement already satisfied: pkg{k} in "
                  "/usr/local/lib/python3.10/dist-packages (1.0)\n" for k in range(250))
    # NeMo v2.4.0 nemo/lightning/pytorch/callbacks/progress_printer.py (prefix 'Training
    # epoch {e}, iteration {n-1}/{total-1}'), kubectl logs --timestamps
    nemo = "".join(f"2025-06-22T22:{23 + k // 60}:{k % 60:02d}.46104482Z Training epoch 0, "
                   f"iteration {652 + k}/999 | lr: 0.0003 | consumed_samples: "
                   f"{167168 + 256 * k} | global_batch_size: 256 | global_step: {653 + k} | "
                   "reduced_train_loss: 2.586 | train_step_timing in s: 0.9\n"
                   for k in range(100))
    assert len(pip) > 20_000
    (logs / "train.log").write_text(pip + nemo)
    doc = _analyze(logs, tmp_path / "out")
    run = doc["runs"][0]
    assert [a["source"] for a in run["attempts"]] == ["inferred"]
    assert run["iterations_net"] == 99 and 0.8 < run["tor"] <= 1.0, run


def test_sacct_with_cut_columns_is_warned(tmp_path: Path) -> None:
    """The demo's sacct printed as plain sacct does, at its default widths: node lists longer
    than 15 characters are cut (``node[001-005,0+``), those rows unread, and analyze says
    so (``records_unread``) instead of computing from what is left in silence."""
    from tests.parsers.test_sacct_fixed import DEFAULT, _fixed

    logs = _copy(tmp_path)
    sacct = logs / "slurm" / "sacct.txt"
    head, *rows = sacct.read_text().splitlines()
    widths = {**DEFAULT, "partition": 10, "alloctres": 10}
    sacct.write_text(_fixed(head, rows, widths))
    assert "node[001-005,0+" in sacct.read_text()
    doc = _analyze(logs, tmp_path / "out")
    w = [x for x in doc["warnings"] if x["code"] == "records_unread"]
    assert len(w) == 1 and "--parsable2" in w[0]["message"]


def test_hf_trainer_bars_alone_say_why_there_is_no_run(tmp_path: Path) -> None:
    """HF Trainer output (sample_logs/real_formats/training/gpu-worker-3/job-555.out: tqdm
    bars redrawn with \\r, no stamp of their own) and nothing else: the error names the bars
    it read and why they are not progress, not 'no training progress lines'."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(DEMO.parents[0] / "real_formats" / "training" / "gpu-worker-3" / "job-555.out",
                logs)
    r = CliRunner().invoke(main, ["analyze", str(logs), "--out", str(tmp_path / "o")])
    assert r.exit_code == 1
    assert "3 tqdm bar updates in 1 file(s)" in r.output and "Traceback" not in r.output


def _local(logs: Path, hours: int) -> None:
    """The demo as a cluster keeping local time at UTC+``hours`` writes it: slurmctld, sacct
    and Megatron print local time with no zone; rsyslog's RFC 3339 template prints local time
    with its offset (``2024-05-01T08:06:29.860533+08:00``: the same instant)."""
    import re
    from datetime import datetime, timedelta

    h = timedelta(hours=hours)

    def move(m: re.Match[str], fmt: str) -> str:
        return (datetime.strptime(m.group(1), fmt) + h).strftime(fmt)

    off = f"{'+' if hours >= 0 else '-'}{abs(hours):02d}:00"
    for p in logs.rglob("*"):
        if not p.is_file():
            continue
        t = p.read_text()
        if "nodes" in p.parts:
            t = re.sub(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)\+00:00",
                       lambda m: move(m, "%Y-%m-%dT%H:%M:%S") + m.group(2) + off, t)
        else:
            t = re.sub(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)",
                       lambda m: move(m, "%Y-%m-%dT%H:%M:%S"), t)
            t = re.sub(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)",
                       lambda m: move(m, "%Y-%m-%d %H:%M:%S"), t)
        p.write_text(t)


def test_local_time_read_as_utc_is_warned(tmp_path: Path) -> None:
    """A cluster at UTC+8 (rsyslog prints its offset, Slurm and Megatron do not), analysed
    without --tz: the GPU faults fall 8 h outside their attempts' windows and become NCCL
    timeouts. The ``timezone`` warning names the offset; with --tz the root causes are the
    truth's and nothing is warned."""
    from zoneinfo import ZoneInfo

    logs = _copy(tmp_path)
    _local(logs, 8)
    doc = _analyze(logs, tmp_path / "out")
    w = [x for x in doc["warnings"] if x["code"] == "timezone"]
    assert len(w) == 1 and "UTC+08:00" in w[0]["message"] and "Etc/GMT-8" in w[0]["message"]
    assert doc["runs"][0]["fidelity"] == "incomplete"
    ingest(expand_inputs([str(logs)]), tmp_path / "o2", tz=ZoneInfo("Asia/Shanghai"))
    right = analyze_db(tmp_path / "o2" / "tormortem.duckdb")
    assert "timezone" not in _codes(right)
    assert [i["category"] for i in right["runs"][0]["interruptions"]] == [
        i["category"] for i in TRUTH["interruptions"]]
