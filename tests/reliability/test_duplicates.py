"""Issue 15, "Silent wrong answers from incomplete inputs", the duplicate-file probe: the same
file under a second name (kern.log.1, sacct-copy.txt, a .gz copy) doubled the events and the
attempts, with no warning. (The cut-sacct and removed-record probes are another section's.)"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.reliability.conftest import DEMO, cli, manifest


@pytest.mark.slow  # ~3-6 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_copies_are_read_once_and_named(tmp_path: Path) -> None:
    # (not directly under tmp_path: a folder named like test_x_0 would be taken for a host)
    logs = tmp_path / "copies" / "logs"
    shutil.copytree(DEMO, logs)
    node = logs / "nodes" / "node003"
    shutil.copy(node / "kern.log", node / "kern.log.1")
    (node / "kern.log.2.gz").write_bytes(gzip.compress((node / "kern.log").read_bytes()))
    shutil.copy(logs / "slurm" / "sacct.txt", logs / "slurm" / "sacct-copy.txt")
    ref = cli("analyze", DEMO, "--out", tmp_path / "ref", "--json")
    r = cli("analyze", logs, "--out", tmp_path / "out", "--json")
    assert ref.returncode == r.returncode == 0, r.stderr
    # the same answer as without the copies: no doubled events, attempts or interruptions
    # (evidence names its file: the same names under the copy's folder)
    assert json.loads(r.stdout) == json.loads(ref.stdout.replace(str(DEMO), str(logs)))
    for copy, first in ((node / "kern.log.1", node / "kern.log"),
                        (node / "kern.log.2.gz", node / "kern.log"),
                        # the first in name order is read: sacct-copy.txt sorts first
                        (logs / "slurm" / "sacct.txt", logs / "slurm" / "sacct-copy.txt")):
        assert f"note: {copy} has the same content as {first}; read once" in r.stderr
    con = duckdb.connect(str(tmp_path / "out" / "tormortem.duckdb"), read_only=True)
    try:
        dup = dict(con.execute("SELECT file, duplicate_of FROM line_accounting "
                               "WHERE duplicate_of IS NOT NULL").fetchall())
        n_events = con.execute("SELECT count(*) FROM events").fetchone()
    finally:
        con.close()
    assert dup == {str(node / "kern.log.1"): str(node / "kern.log"),
                   str(node / "kern.log.2.gz"): str(node / "kern.log"),
                   str(logs / "slurm" / "sacct.txt"): str(logs / "slurm" / "sacct-copy.txt")}
    con = duckdb.connect(str(tmp_path / "ref" / "tormortem.duckdb"), read_only=True)
    try:
        assert n_events == con.execute("SELECT count(*) FROM events").fetchone()
    finally:
        con.close()
    doc = manifest(tmp_path / "out")
    assert {d["file"]: d["duplicate_of"] for d in doc["duplicates"]} == dup  # type: ignore
    by_file = {i["file"]: i for i in doc["inputs"]}  # type: ignore[attr-defined]
    assert by_file[str(node / "kern.log.2.gz")]["sha256"] == by_file[str(node / "kern.log")][
        "sha256"]


def test_ingest_summary_names_the_duplicates(tmp_path: Path) -> None:
    d = tmp_path / "logs"
    d.mkdir()
    src = DEMO / "nodes" / "node003" / "kern.log"
    shutil.copy(src, d / "kern.log")
    shutil.copy(src, d / "kern.log.1")
    (d / "empty1.log").write_text("")
    (d / "empty2.log").write_text("")  # empty files are not "duplicates": nothing to lose
    r = cli("ingest", d, "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert (f"note: {d}/kern.log.1: duplicate of {d}/kern.log (same content); not read again"
            in r.stdout)
    assert "empty2.log: duplicate" not in r.stdout
    assert "\nduplicate  line      1     0" in r.stdout  # its row in the per-source table


def test_files_of_one_size_are_compared_by_their_ends_first(tmp_path: Path) -> None:
    """A fleet has many node logs of one size: only those alike at both ends are hashed
    whole by the survey (the others are hashed while they are parsed); a file that differs
    only in its middle is still no duplicate, and a true copy still is."""
    from parsers.reader import InputFile
    from pipeline.ingest.dedup import ENDS, survey

    body = bytearray(b"May  1 00:00:00 node1 systemd[1]: Started Session 1 of user root.\n"
                     * (3 * ENDS // 60))
    a, b, c, d = (tmp_path / n for n in ("a.log", "b.log", "c.log", "d.log"))
    a.write_bytes(body)
    b.write_bytes(body)  # a copy
    mid = bytearray(body)
    mid[len(mid) // 2] = ord("X")
    c.write_bytes(mid)  # the same size and ends, another middle
    other = bytearray(body)
    other[0] = ord("J")
    d.write_bytes(other)  # the same size, another start
    prints = survey([InputFile(p, p.name) for p in (a, b, c, d)]).prints
    assert prints["b.log"].duplicate_of == "a.log"
    assert prints["c.log"].duplicate_of is None and prints["c.log"].sha256 is not None
    assert prints["d.log"].duplicate_of is None and prints["d.log"].sha256 is None
