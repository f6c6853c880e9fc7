"""Two writers and one reader on one output folder (issue 15, section 6).

Writer A re-ingests a log (from a FIFO) into a folder that holds an analysis; writer B tries
the same folder while A runs and is refused with A's PID; a reader reads the folder in a loop
the whole time. Every read must see one complete output -- the old analysis or A's new ingest,
with every file matching its manifest -- never a mix, never an error other than "holds an
ingest only" once A has committed."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import duckdb
import pytest

from pipeline.ingest import outputs
from tests.reliability.conftest import DEMO, cli, job_log_lines, manifest, start


@pytest.mark.slow  # ~3-6 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_two_writers_and_a_reader(prev: Path, tmp_path: Path) -> None:
    """The first writer reads a FIFO held open until the second has been refused (a file
    would be read before the second process started: ingest of 120 MB takes ~0.5 s)."""
    old = manifest(prev)
    fifo = tmp_path / "slurm-9.out"
    os.mkfifo(fifo)
    block = "".join(job_log_lines()).encode()
    seen: list[str] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                with outputs.reading(prev) as doc:
                    outputs.verify(prev)  # every file as the manifest says
                    con = duckdb.connect(str(prev / "tormortem.duckdb"), read_only=True)
                    try:
                        files = {r[0] for r in con.execute(
                            "SELECT file FROM line_accounting").fetchall()}
                    finally:
                        con.close()
                    inputs = {i["file"] for i in doc["inputs"]}
                    assert files == inputs, "the database is not the manifest's"
                    seen.append("old" if doc == old else "new")
            except BaseException as e:
                errors.append(e)
                return
            time.sleep(0.01)

    t = threading.Thread(target=reader)
    t.start()
    try:
        a = start("ingest", fifo, "--out", prev, "-q")
        with open(fifo, "wb") as w:
            w.write(block)
            w.flush()
            while not (prev / outputs.STAGING).exists() and a.poll() is None:
                time.sleep(0.01)
            b = cli("ingest", DEMO, "--out", prev, "-q")
            w.write(block)
        _, a_err = a.communicate(timeout=300)
        time.sleep(0.2)
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    assert a.returncode == 0, a_err
    assert b.returncode == 1 and f"is in use by PID {a.pid}" in b.stderr
    assert seen[0] == "old" and seen[-1] == "new"
    assert seen == sorted(seen, key=lambda s: s == "new")  # old ... old new ... new
    r = cli("report", prev, "--no-pdf")  # the reader command on the new, ingest-only folder
    assert r.returncode == 1 and "holds an ingest only" in r.stderr
