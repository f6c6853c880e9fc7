"""Issue 15, "Outputs are not atomic, not locked, not marked": every probe of the group.

* an interrupted or failed analyze kept the half-built database beside the old JSON files and
  `report` rendered the mix with exit 0;
* SIGINT left a valid-looking events.parquet with a fraction of the rows and exited 1;
* two ingests into one --out both "succeeded", leaving one's rows and an unreadable file;
* a disk-full error left a complete-looking Parquet file beside a partial database.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from pipeline.ingest import outputs
from tests.reliability.conftest import DEMO, cli, job_log_lines, manifest, start


def _wait_for_staging(out: Path, p: object, limit: float = 60) -> None:
    """Until the writer has started writing (its staging folder exists)."""
    t0 = time.monotonic()
    while not (out / outputs.STAGING).exists():
        assert time.monotonic() - t0 < limit, "the writer never started"
        time.sleep(0.01)


def _intact(out: Path, before: dict[str, object]) -> None:
    assert manifest(out) == before
    outputs.verify(out)
    assert not (out / outputs.STAGING).exists() and not (out / outputs.COMMIT).exists()


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), pytest.param(
    signal.SIGTERM, 143, marks=pytest.mark.slow)])  # ~6 s each: the quick loop's budget
def test_a_signal_mid_run_keeps_the_previous_output(prev: Path, big_log: Path, sig: int,
                                                    code: int) -> None:
    before = manifest(prev)
    p = start("analyze", big_log, "--out", prev)
    _wait_for_staging(prev, p)
    time.sleep(0.3)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert b"Traceback" not in err and b"interrupted (SIG" in err
    _intact(prev, before)
    r = cli("report", prev, "--no-pdf")
    assert r.returncode == 0, r.stderr


def test_a_failed_analyze_keeps_the_previous_output(prev: Path, tmp_path: Path) -> None:
    before = manifest(prev)
    nothing = tmp_path / "words.log"
    nothing.write_text("no scheduler records, no progress\n")
    r = cli("analyze", nothing, "--out", prev)
    # stderr: a status line per phase (-q leaves them out), then the error
    assert r.returncode == 1 and r.stderr.splitlines()[-1].startswith("Error: no attempts found")
    _intact(prev, before)


def test_a_second_writer_is_refused_with_the_pid(prev: Path, tmp_path: Path) -> None:
    """The first writer reads a FIFO the test holds open, so it is still writing when the
    second one starts, however fast ingest is (a 120 MB file was read in ~0.5 s, before the
    second process had started)."""
    fifo = tmp_path / "slurm-9.out"
    os.mkfifo(fifo)
    block = "".join(job_log_lines()).encode()
    p = start("ingest", fifo, "--out", prev, "-q")
    with open(fifo, "wb") as w:  # opened once the writer opens it to read
        w.write(block)
        w.flush()
        _wait_for_staging(prev, p)
        r = cli("ingest", DEMO, "--out", prev, "-q")
        w.write(block)
    p.communicate(timeout=120)
    assert r.returncode == 1
    assert r.stderr == (f"Error: {prev} is in use by PID {p.pid} (another tormortem is "
                        "writing it); wait for it to finish or choose another --out\n")
    assert p.returncode == 0
    doc = manifest(prev)
    assert doc["stage"] == "ingest" and [i["file"] for i in doc["inputs"]] == [str(fifo)]
    outputs.verify(prev)


@pytest.mark.slow  # ~3-6 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_report_fit_and_plan_refuse_what_a_manifest_does_not_vouch_for(prev: Path) -> None:
    analysis = prev / "analysis.json"
    doc = json.loads(analysis.read_text())
    doc["runs"][0]["tor"] = 0.99  # another analysis's file dropped beside this database
    analysis.write_text(json.dumps(doc))
    want = (f"Error: {prev} is not a complete tormortem output (analysis.json does not match "
            f"manifest.json: changed after it was written); run `tormortem analyze {DEMO} "
            f"--out {prev}` again to rebuild it\n")
    for args in (("report", prev, "--no-pdf"), ("fit", prev), ("plan", "--rates", prev)):
        r = cli(*args)
        assert (r.returncode, r.stderr) == (1, want), args
    (prev / "manifest.json").unlink()
    for args in (("report", prev, "--no-pdf"), ("fit", prev), ("plan", "--rates", prev)):
        r = cli(*args)
        assert r.returncode == 1 and "no manifest.json" in r.stderr, args
        assert r.stderr.count("\n") == 1


def test_an_ingest_replaces_an_analysis_whole(prev: Path) -> None:
    # the old analysis.json/rates.json/model.json would disagree with the new tables
    r = cli("ingest", DEMO / "slurm", "--out", prev, "-q")
    assert r.returncode == 0, r.stderr
    assert not (prev / "analysis.json").exists() and not (prev / "rates.json").exists()
    r = cli("report", prev, "--no-pdf")
    assert (r.returncode, r.stderr) == (1, f"Error: {prev} holds an ingest only (no analysis); "
                                           f"run `tormortem analyze LOGS --out {prev}` first\n")


def test_the_manifest_describes_the_output(demo_analysis: Path) -> None:
    prev = demo_analysis
    doc = manifest(prev)
    assert doc["schema"] == "tormortem.manifest/1" and doc["complete"] is True
    assert doc["stage"] == "analyze" and doc["tool"] == {"name": "tormortem",
                                                         "version": outputs.tool_version()}
    assert doc["command"] == f"tormortem analyze {DEMO} --out {prev}"
    assert doc["argv"] == ["analyze", str(DEMO)]
    files = doc["files"]
    assert isinstance(files, dict)
    assert set(files) == {"events.parquet", "attempts.parquet", "line_accounting.parquet",
                          "unknown_templates.parquet",
                          "unparsed_samples.parquet", "tormortem.duckdb", "analysis.json",
                          "rates.json", "model.json"}
    for name, meta in files.items():
        assert meta["sha256"] == outputs.file_sha256(prev / name)
        assert meta["size"] == (prev / name).stat().st_size
    inputs = doc["inputs"]
    assert isinstance(inputs, list)
    logs = sorted(p for p in DEMO.rglob("*") if p.is_file())
    assert sorted(i["file"] for i in inputs) == sorted(str(p) for p in logs)
    for i in inputs:
        p = Path(i["file"])
        assert i["size"] == p.stat().st_size
        assert i["sha256"] == outputs.file_sha256(p)


@pytest.mark.slow  # ~4-9 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_fit_and_report_add_to_the_manifest(prev: Path) -> None:
    r = cli("report", prev, "--no-pdf")
    assert r.returncode == 0, r.stderr
    files = manifest(prev)["files"]
    assert isinstance(files, dict) and "report.html" in files
    assert files["report.html"]["sha256"] == outputs.file_sha256(prev / "report.html")
    r = cli("fit", prev)
    assert r.returncode == 0, r.stderr
    outputs.verify(prev)


@pytest.mark.slow  # ~3-6 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_disk_full_is_one_line_and_keeps_the_previous_output(prev: Path) -> None:
    """A real full disk: a 3 MiB tmpfs (root can mount one; CI runs as root)."""
    mnt = prev.parent / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or os.system(f"mount -t tmpfs -o size=3m tmpfs {mnt} 2>/dev/null"):
        pytest.skip("needs root to mount a small tmpfs")  # the in-process test below holds
    try:
        out = mnt / "out"
        r = cli("ingest", DEMO / "nodes", "--out", out, "-q")
        assert r.returncode == 0, r.stderr
        before = manifest(out)
        r = cli("analyze", DEMO, "--out", out, "-q")  # -q: no status line per phase
        assert r.returncode == 1
        assert r.stderr.splitlines()[-1].startswith(
            f"Error: no space left on device while writing {out}")
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
        _intact(out, before)
    finally:
        os.system(f"umount {mnt}")


def test_disk_full_in_process(prev: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC raised by the Parquet writer (the same path as a real full disk)."""
    import errno

    from click.testing import CliRunner

    from pipeline.cli import main
    from pipeline.ingest import sink

    def full(self: object, batch: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    before = manifest(prev)
    monkeypatch.setattr(sink.EventsParquet, "__call__", full)
    r = CliRunner().invoke(main, ["ingest", str(DEMO), "--out", str(prev), "-q"])
    assert r.exit_code == 1
    assert r.output.startswith(f"Error: no space left on device while writing {prev}")
    _intact(prev, before)


def test_a_dead_writers_commit_is_finished_by_the_next_reader(
        demo_analysis: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rename of a commit as the point of death: the next reader sees the old output
    (journal not yet written) or the new one (journal rolled forward), never a mix."""
    import shutil

    new = tmp_path / "new"
    r = cli("ingest", DEMO / "slurm", "--out", new, "-q")
    assert r.returncode == 0
    names = sorted(manifest(new)["files"])  # type: ignore[arg-type]
    real = os.replace
    renames = 2 + len(names)  # the journal, each file, the manifest
    seen = []
    for k in range(1, renames + 1):
        prev = tmp_path / f"out{k}"
        shutil.copytree(demo_analysis, prev, copy_function=shutil.copy2)
        old_doc = manifest(prev)
        calls = [0]

        def dying(a: object, b: object, k: int = k, calls: list[int] = calls) -> None:
            calls[0] += 1
            if calls[0] == k:
                raise SystemExit("killed")  # like a SIGKILL: nothing after this rename runs
            real(a, b)  # type: ignore[arg-type]

        w = outputs.Writer(prev, "ingest")
        w.__enter__()
        for f in names:
            shutil.copy2(new / f, w.path / f)
        monkeypatch.setattr(outputs.os, "replace", dying)
        with pytest.raises(SystemExit):
            w.commit(command="x")
        monkeypatch.setattr(outputs.os, "replace", real)
        outputs._unlock(w.lock_fd)  # the process is gone: its lock with it
        with outputs.reading(prev) as doc:
            assert doc == old_doc or (doc["command"] == "x" and doc["stage"] == "ingest")
            seen.append("old" if doc == old_doc else "new")
        outputs.verify(prev)
        if seen[-1] == "new":  # the old analysis's files are gone, not left beside
            assert not any((prev / f).exists() for f in ("analysis.json", "rates.json"))
        assert not (prev / outputs.COMMIT).exists() and not (prev / outputs.STAGING).exists()
    assert seen == ["old"] + ["new"] * (renames - 1)


def test_readers_leave_a_folder_that_is_not_an_output_untouched(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    for args in (("fit", tmp_path), ("report", tmp_path, "--no-pdf")):
        r = cli(*args)
        assert r.returncode == 1 and "no manifest.json" in r.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    r = cli("report", tmp_path / "missing", "--no-pdf")
    # a path argument that does not exist is a usage error (exit 2, click's message)
    assert r.returncode == 2 and r.stderr.rstrip().endswith(
        f"Error: Invalid value for 'DIRECTORY': Directory '{tmp_path / 'missing'}' does not "
        "exist.")
    assert not (tmp_path / "missing").exists()
