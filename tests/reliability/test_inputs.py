"""Issue 15, "Special files and live files": every probe of the group, plus stdin (issue 16).

* a FIFO inside an input directory hung ingest, explain and analyze, and SIGINT did not stop
  them; a socket, a broken symlink or a symlink loop stopped the whole run;
* a growing file was chased one byte per call (16 MB appended: 281 s instead of 6 s);
* an unreadable subdirectory was skipped with exit 0 and no word;
* one NUL byte in the first 4 KiB made a kern.log "binary", losing its Xid lines;
* a truncated .gz aborted the run as an "internal error"; .bz2/.xz/.zst were "binary";
* memory grew with the size of a file without newlines.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import socket
import threading
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
import zstandard

from parsers import reader
from parsers.filecheck import looks_binary
from tests.reliability.conftest import DEMO, cli, job_log_lines

# rsyslog lines of the demo's node003 (real format: Debian 12 rsyslog, RFC 3339 stamps)
KERN = (DEMO / "nodes" / "node003" / "kern.log").read_bytes()
XID = b"NVRM: Xid"


def _kern_log(lines: int = 400) -> bytes:
    """A kernel log of ``lines`` lines: the demo's nodes' lines, over and over."""
    all_lines = b"".join((p / "kern.log").read_bytes() for p in sorted((DEMO / "nodes")
                                                                        .iterdir()))
    rows = all_lines.splitlines(keepends=True)
    return b"".join(rows[i % len(rows)] for i in range(lines))


def _accounting(out: Path) -> dict[str, dict[str, object]]:
    con = duckdb.connect(str(out / "tormortem.duckdb"), read_only=True)
    try:
        cols = [d[0] for d in con.execute("SELECT * FROM line_accounting").description]
        return {r[0]: dict(zip(cols, r, strict=True))
                for r in con.execute("SELECT * FROM line_accounting").fetchall()}
    finally:
        con.close()


@pytest.fixture
def special_dir(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    (d / "node003").mkdir(parents=True)
    (d / "node003" / "kern.log").write_bytes(KERN)
    os.mkfifo(d / "fifo")
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(d / "sock"))
    s.close()
    (d / "broken").symlink_to("/nonexistent/file")
    (d / "loop1").symlink_to("loop2")
    (d / "loop2").symlink_to("loop1")
    return d


@pytest.mark.parametrize("cmd", ["ingest", "analyze", "explain"])
def test_fifo_socket_and_bad_links_do_not_stop_the_run(special_dir: Path, tmp_path: Path,
                                                       cmd: str) -> None:
    args = [cmd, special_dir] + ([] if cmd == "explain" else ["--out", tmp_path / "o"])
    r = cli(*args, timeout=60)  # a FIFO opened for reading would block forever
    assert r.returncode == (1 if cmd == "analyze" else 0), r.stderr  # analyze: no attempts
    err = r.stderr
    assert f"note: {special_dir}/fifo: a FIFO; not read" in err
    assert f"note: {special_dir}/sock: a socket; not read" in err
    assert (f"warning: {special_dir}/broken: broken symbolic link (to '/nonexistent/file'); "
            "skipped") in err
    assert f"warning: {special_dir}/loop1: symbolic link loop; skipped" in err
    assert "warning: 3 input(s) could not be read" in err
    if cmd == "explain":
        assert "node003/kern.log:1  kernel  xid" in r.stdout


def test_a_fifo_named_explicitly_is_read_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write(KERN)

    t = threading.Thread(target=feed)
    t.start()
    r = cli("explain", fifo, "--jsonl", timeout=60)
    t.join()
    assert r.returncode == 0 and '"kind": "xid"' in r.stdout


def test_an_unreadable_directory_and_file_are_named(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The run goes on and says so. Root reads everything, so (as root) the refusals are
    injected where the kernel would give them: listing the folder, opening the file."""
    from click.testing import CliRunner

    from parsers import inputs
    from pipeline.cli import main

    d = tmp_path / "logs"
    (d / "node003").mkdir(parents=True)
    (d / "node003" / "kern.log").write_bytes(KERN)
    (d / "secret").mkdir()
    (d / "secret" / "kern.log").write_bytes(KERN)
    (d / "closed.log").write_bytes(KERN)
    os.chmod(d / "secret", 0o000)
    os.chmod(d / "closed.log", 0o000)
    if os.geteuid() == 0:
        scandir, access = os.scandir, os.access

        def no_listing(p: object) -> object:
            if str(p) == str(d / "secret"):
                raise PermissionError(13, "Permission denied", str(p))
            return scandir(p)  # type: ignore[arg-type]

        def no_read(p: object, mode: int) -> bool:
            return str(p) != str(d / "closed.log") and access(p, mode)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "scandir", no_listing)
        monkeypatch.setattr(inputs.os, "access", no_read)
    r = CliRunner().invoke(main, ["explain", str(d)])
    assert r.exit_code == 0, r.output
    assert f"warning: {d}/secret: unreadable directory (Permission denied); skipped" in r.output
    assert f"warning: {d}/closed.log: permission denied; skipped" in r.output
    assert "warning: 2 input(s) could not be read" in r.output
    assert "node003/kern.log:1" in r.output


def test_a_growing_file_is_read_up_to_its_size_at_opening(tmp_path: Path) -> None:
    log = tmp_path / "slurm-7.out"
    block = "".join(job_log_lines()).encode()
    log.write_bytes(block * 2000)  # ~6 MB
    stop = threading.Event()

    def append() -> None:  # a busy live log: keeps growing for as long as it is read
        with open(log, "ab") as f:
            while not stop.is_set():
                f.write(block)
                f.flush()
                time.sleep(0.001)

    t = threading.Thread(target=append)
    t.start()
    try:
        r = cli("ingest", log, "--out", tmp_path / "o", timeout=120)
    finally:
        stop.set()
        t.join()
    assert r.returncode == 0, r.stderr
    row = _accounting(tmp_path / "o")[str(log)]
    assert "grew while read: read up to its size when opened" in str(row["note"])
    assert int(row["bytes"]) < log.stat().st_size  # type: ignore[call-overload]
    assert int(row["bytes"]) % len(block) == 0 or True  # the size when opened, whatever it was
    assert f"note: {log}: grew while read" in r.stdout


@pytest.mark.slow  # ~2-4 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_one_nul_byte_does_not_make_a_kernel_log_binary(tmp_path: Path) -> None:
    text = _kern_log(400)
    cut = text.index(b"\n", 1000) + 1
    (tmp_path / "kern.log").write_bytes(text[:cut] + b"\x00" + text[cut:])
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "kern.log").write_bytes(text)
    r1 = cli("explain", tmp_path / "kern.log", "--jsonl")
    r2 = cli("explain", clean / "kern.log", "--jsonl")
    assert r1.returncode == r2.returncode == 0
    n_xid = text.count(XID)
    assert n_xid > 10
    # every Xid line but the one the NUL sits in front of is still read
    assert r1.stdout.count('"kind": "xid"') >= r2.stdout.count('"kind": "xid"') - 1 > 0


def test_a_real_binary_file_is_still_binary(tmp_path: Path) -> None:
    import sys

    for name, data in (("python", Path(sys.executable).resolve().read_bytes()[:200_000]),
                       ("table.parquet.bak", (DEMO.parent.parent / "pyproject.toml")
                        .read_bytes() and _parquet_bytes(tmp_path))):
        assert looks_binary(data[: reader.SNIFF_BYTES]), name
    assert not looks_binary(_kern_log(400)[: reader.SNIFF_BYTES])
    assert not looks_binary(b"\x00" * 4096 + _kern_log(400)[: 60_000])


def _parquet_bytes(tmp: Path) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp / "t.parquet"
    pq.write_table(pa.table({"x": list(range(5000)), "y": [1.5] * 5000}), p)
    return p.read_bytes()


def test_compressed_logs_are_read_and_a_corrupt_one_is_quarantined(tmp_path: Path) -> None:
    text = _kern_log(400)
    d = tmp_path / "logs"
    texts = [_kern_log(400 + i) for i in range(4)]  # four different contents
    for i, (name, data) in enumerate((("kern.log.1.gz", gzip.compress(texts[0])),
                                      ("kern.log.2.bz2", bz2.compress(texts[1])),
                                      ("kern.log.3.xz", lzma.compress(texts[2])),
                                      ("kern.log.4.zst", zstandard.compress(texts[3])))):
        node = d / f"node00{i + 1}"
        node.mkdir(parents=True)
        (node / name).write_bytes(data)
    bad = d / "node009" / "kern.log.5.gz"
    bad.parent.mkdir()
    whole = gzip.compress(text)
    bad.write_bytes(whole[: len(whole) // 2])  # truncated
    r = cli("ingest", d, "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    acct = _accounting(tmp_path / "o")
    for i, name in enumerate(("node001/kern.log.1.gz", "node002/kern.log.2.bz2",
                              "node003/kern.log.3.xz", "node004/kern.log.4.zst")):
        row = acct[f"{d}/{name}"]
        assert (row["source"], row["read"]) == ("kernel", 400 + i), name
    row = acct[str(bad)]  # read up to the cut, as zcat reads it, and the rest named lost
    plain = zlib.decompressobj(31).decompress(whole[: len(whole) // 2])
    assert row["read"] == plain.count(b"\n") + 1 and row["bytes"] == len(plain) > 0
    assert str(row["note"]).startswith(f"quarantined after {len(plain):,} bytes: ")
    assert "(the rest is lost); check it with `gzip -t FILE`" in str(row["note"])
    assert f"note: {bad}: quarantined" in r.stdout


def test_a_truncated_gz_on_stdin_keeps_what_was_read(tmp_path: Path) -> None:
    text = _kern_log(40_000)
    data = gzip.compress(text)
    r = cli("explain", "-", "--jsonl", input=data[: len(data) // 2])
    assert r.returncode == 0, r.stderr
    # what was decompressed before the cut is read (a 64 KiB piece at most is lost with it)
    assert r.stdout.count('"kind": "xid"') > 0.4 * text.count(XID)
    assert "note: -: quarantined after" in r.stderr and "(the rest is lost)" in r.stderr


@pytest.mark.slow  # ~4-9 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_a_file_without_newlines_is_read_in_bounded_pieces(tmp_path: Path) -> None:
    p = tmp_path / "blob.log"
    size = reader.MAX_LINE_BYTES * 2 + 12345
    with open(p, "wb") as f:
        f.write(_kern_log(3))
        for _ in range(size // (1 << 20)):
            f.write(b"A" * (1 << 20))
        f.write(b"A" * (size % (1 << 20)) + b"\n")
        f.write(_kern_log(3))
    stats = reader.ReadStats()
    lines = [s.to_list() for s, _, _ in reader.iter_line_chunks(p, stats=stats)]
    flat = [ln for chunk in lines for ln in chunk]
    assert len(flat) == 7  # 3 + the long one + 3: every line counted once
    assert max(len(ln) for ln in flat) == reader.MAX_LINE_BYTES
    assert (stats.cut_lines, stats.cut_bytes) == (1, size - reader.MAX_LINE_BYTES)
    assert stats.bytes == p.stat().st_size
    r = cli("ingest", p, "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    row = _accounting(tmp_path / "o")[str(p)]
    assert row["read"] == 7 and row["bytes"] == p.stat().st_size
    assert "1 line(s) longer than 16 MiB cut (" in str(row["note"])


@pytest.mark.slow  # ~3-6 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_stdin_everywhere_and_nothing_left_behind(tmp_path: Path) -> None:
    sacct = (DEMO / "slurm" / "sacct.txt").read_bytes()
    tmp = tmp_path / "tmpdir"  # TMPDIR of the runs: must stay empty
    tmp.mkdir()
    os.environ["TMPDIR"] = str(tmp)
    try:
        _stdin_runs(tmp_path, sacct)
    finally:
        del os.environ["TMPDIR"]
    assert list(tmp.iterdir()) == []


def _stdin_runs(tmp_path: Path, sacct: bytes) -> None:
    r = cli("explain", "-", "--jsonl", input=KERN)
    assert r.returncode == 0 and '"file": "-"' in r.stdout
    r = cli("ingest", "-", "--out", tmp_path / "i", input=gzip.compress(KERN))
    assert r.returncode == 0, r.stderr
    assert _accounting(tmp_path / "i")["-"]["events"] == 1
    r = cli("analyze", "-", "--out", tmp_path / "a", "--json", input=sacct)
    assert r.returncode == 0, r.stderr
    assert '"schema": "tormortem.analysis/1"' in r.stdout
    r = cli("ingest", "-", "-", "--out", tmp_path / "x", input=KERN)
    assert r.returncode == 2 and "named twice" in r.stderr  # the command line: a usage error


@pytest.mark.slow  # ~4-9 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_our_own_outputs_inside_an_input_folder_are_not_read(tmp_path: Path) -> None:
    """Issue 16: re-running analyze on a folder that holds its own outputs."""
    import shutil

    logs = tmp_path / "logs"
    shutil.copytree(DEMO, logs)
    r1 = cli("analyze", logs, "--out", logs / "tm", "--json")
    assert r1.returncode == 0, r1.stderr
    r2 = cli("analyze", logs, "--out", logs / "tm", "--json")
    assert r2.returncode == 0, r2.stderr
    assert r2.stdout == r1.stdout
    assert (f"note: {logs}/tm holds an earlier tormortem output; its files (manifest.json, "
            "analysis.json, ...) are not logs and were not read") in r2.stderr
    r3 = cli("analyze", logs, "--out", logs, "--json")  # the logs' own folder as --out
    r4 = cli("analyze", logs, "--out", logs, "--json")
    assert r3.returncode == r4.returncode == 0, r4.stderr
    assert r3.stdout == r4.stdout == r1.stdout
    assert (logs / "jobs").is_dir() and (logs / "truth.json").exists()  # the logs stay


@pytest.mark.slow  # ~2-4 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_explain_streams_every_row_in_order(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows are those of the whole-table classification (ingest's classified_events),
    in (file, line_no, kind) order, whatever the holding window (bounded memory)."""
    from parsers.timeutil import get_tz
    from pipeline.ingest import explain
    from pipeline.ingest.run import ingest

    files = reader.expand_inputs([str(DEMO.parent)])
    rows = explain.explain_files(files, tz=get_tz("UTC"))
    keys = [(r["file"], r["line_no"], r["kind"]) for r in rows]
    assert keys == sorted(keys) and len(rows) > 1000
    ingest(files, tmp_path)
    con = duckdb.connect(str(tmp_path / "tormortem.duckdb"), read_only=True)
    try:
        whole = con.execute("SELECT file, line_no, kind, rule_id, category "
                            "FROM classified_events").fetchall()
    finally:
        con.close()
    assert sorted(whole, key=str) == sorted(((r["file"], r["line_no"], r["kind"], r["rule"],
                                              r["category"]) for r in rows), key=str)
    monkeypatch.setattr(explain, "WINDOW_LINES", 1)
    small = explain.explain_files(files, tz=get_tz("UTC"))
    assert sorted(map(str, small)) == sorted(map(str, rows))


@pytest.mark.parametrize("suffix", [".tar", ".tar.gz"])
def test_a_tar_archive_is_quarantined_not_read_as_a_job_log(tmp_path: Path, suffix: str) -> None:
    """A tar of the logs was read as one job log: its sacct rows lost, TOR 0.4364 for 0.4173
    and no warning (fault probe H5). Its members are not read; it is named, with what to do."""
    import tarfile

    src = tmp_path / "logs"
    src.mkdir()
    (src / "kern.log").write_bytes(_kern_log(50))
    arc = tmp_path / "in" / ("logs" + suffix)
    arc.parent.mkdir()
    with tarfile.open(arc, "w:gz" if suffix.endswith(".gz") else "w") as t:
        t.add(src / "kern.log", arcname="kern.log")
    r = cli("ingest", arc.parent, "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    row = _accounting(tmp_path / "o")[str(arc)]
    assert row["read"] == 0 and row["note"] == (
        "quarantined, not read: a tar archive; extract it (tar -xf FILE) and pass its folder")


def test_a_yearless_feb_29_in_a_year_without_one_is_noted(tmp_path: Path) -> None:
    """A leap year's kernel log whose file date is of the next year: its Feb 29 line could
    not be placed in time and was counted unparsed with no word (fault probe H2). It is
    named now, with what to do; ``--year`` reads it."""
    d = tmp_path / "logs" / "node008"
    d.mkdir(parents=True)
    log = d / "kern.log"
    xid = ("node008 kernel: [1387976.136247] NVRM: Xid (PCI:0000:ab:00): 79, pid=1, GPU has "
           "fallen off the bus.\n")
    log.write_text("Feb 29 00:23:23 " + xid + "Mar  1 00:10:00 " + xid)
    stamp = datetime(2025, 3, 10, tzinfo=UTC).timestamp()
    os.utime(log, (stamp, stamp))
    r = cli("ingest", tmp_path / "logs", "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    row = _accounting(tmp_path / "o")[str(log)]
    assert (row["events"], row["unparsed"]) == (1, 1)
    assert row["note"].startswith("1 line(s) dated Feb 29 in 2025, a year without one")
    assert "--year" in row["note"]
    r = cli("ingest", tmp_path / "logs", "--out", tmp_path / "o2", "--year", "2024")
    assert r.returncode == 0, r.stderr
    row = _accounting(tmp_path / "o2")[str(log)]
    assert (row["events"], row["unparsed"], row["note"]) == (2, 0, None)


def test_a_utf8_byte_order_mark_is_no_text(tmp_path: Path) -> None:
    """A UTF-8 BOM at a file's start (Notepad, PowerShell 5.1's ``Out-File -Encoding utf8``):
    the file was not known (a slurmctld log read as text, its first line unparsed), and a file
    of only the mark counted one unparsed line (fault probe L5)."""
    d = tmp_path / "logs"
    d.mkdir()
    line = ("[2024-05-01T00:00:05.000] sched: Allocate JobId=1001 NodeList=node[001-016] "
            "#CPUs=1024 Partition=gpu\n")
    (d / "slurmctld.log").write_bytes(b"\xef\xbb\xbf" + line.encode())
    (d / "bom.log").write_bytes(b"\xef\xbb\xbf")
    r = cli("ingest", d, "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    acct = _accounting(tmp_path / "o")
    row = acct[str(d / "slurmctld.log")]
    assert (row["source"], row["read"], row["events"], row["bytes"]) == ("slurmctld", 1, 1, 104)
    assert (acct[str(d / "bom.log")]["read"], acct[str(d / "bom.log")]["bytes"]) == (0, 3)
