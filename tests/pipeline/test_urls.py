"""Inputs named by fsspec URLs (parsers/remote.py): ``file://``, ``memory://`` and ``http://``
(a ``python -m http.server`` on loopback that the test starts and stops) give the same events
and tables as the same files read from their local paths, the ``file`` columns aside (they
hold the URL); a directory URL expands like a local directory; a protocol whose package is
missing and a URL that names nothing are one-line usage errors, as a missing path is.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import fsspec
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from parsers.reader import expand_inputs, find_inputs
from pipeline.cli.main import main
from pipeline.ingest.run import ingest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "sample_logs" / "demo"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Part of the demo (its Slurm logs, two job logs, two nodes' kernel logs), a gzip copy of
    one kernel log (a duplicate: hashed while read) and what a walk must skip."""
    d = tmp_path_factory.mktemp("urls") / "logs"
    shutil.copytree(DEMO / "slurm", d / "slurm")
    (d / "jobs").mkdir(parents=True)
    for p in sorted((DEMO / "jobs").iterdir())[:2]:
        shutil.copy(p, d / "jobs" / p.name)
    nodes = sorted((DEMO / "nodes").iterdir())[:2]
    for n in nodes:
        shutil.copytree(n, d / "nodes" / n.name)
    kern = next(nodes[0].glob("*"))
    with gzip.open(d / "kern-copy.log.gz", "wb") as g:
        g.write(kern.read_bytes())
    (d / "NOTES.md").write_text("# not a log\n")
    (d / ".git").mkdir()
    (d / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return d


def _rows(db: Path, prefix: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, the input prefix (local folder or URL) cut from strings."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [n for (n,) in con.execute(
            "SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
        out = {}
        for n in names:
            rows = [tuple(v.replace(prefix, "<in>/") if isinstance(v, str) else v for v in r)
                    for r in con.execute(f'SELECT * FROM "{n}"').fetchall()]
            out[n] = sorted(rows, key=repr)
        return out
    finally:
        con.close()


def _events(out: Path, prefix: str) -> list[dict[str, Any]]:
    rows = pq.read_table(out / "events.parquet").to_pylist()
    for r in rows:
        r["file"] = r["file"].replace(prefix, "<in>/")
    return rows


def _same(local: Path, local_prefix: str, other: Path, other_prefix: str) -> None:
    assert _events(local, local_prefix) == _events(other, other_prefix)
    a, b = _rows(local / "tormortem.duckdb", local_prefix), _rows(other / "tormortem.duckdb",
                                                                  other_prefix)
    assert list(a) == list(b)
    for name in a:
        assert a[name] == b[name], name
    # the kernel log and its gzip copy: one of them read, the other named its duplicate
    dups = {(r[0], r[-1]) for r in b["line_accounting"] if r[-1] is not None}
    assert len(dups) == 1 and "<in>/kern-copy.log.gz" in dups.pop()


@pytest.fixture(scope="module")
def local_out(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local") / "out"
    ingest(expand_inputs([str(logs)]), out, jobs=1)
    return out


def test_file_url_reads_like_the_local_path(logs: Path, local_out: Path,
                                            tmp_path: Path) -> None:
    url = logs.as_uri()  # file:///...
    files = expand_inputs([url])
    assert all(f.url is not None and f.display.startswith("file://") for f in files)
    ingest(files, tmp_path / "out", jobs=1)
    _same(local_out, f"{logs}/", tmp_path / "out", f"{url}/")


def test_memory_url_reads_like_the_local_path(logs: Path, local_out: Path,
                                              tmp_path: Path) -> None:
    # the same path inside memory:// (hosts are also named from folders: the same ones)
    fs = fsspec.filesystem("memory")
    fs.put(str(logs), str(logs), recursive=True)
    try:
        # jobs=2: memory:// is this process's memory, so nothing goes to a worker
        ingest(expand_inputs([f"memory://{logs}"]), tmp_path / "out", jobs=2)
    finally:
        fs.rm(str(logs), recursive=True)
    _same(local_out, f"{logs}/", tmp_path / "out", f"memory://{logs}/")


@pytest.fixture()
def http_root(logs: Path) -> Iterator[str]:
    """``python -m http.server`` on a free loopback port, serving ``logs`` as
    ``/<its parent's name>/logs/`` (hosts are also named from folders: the same ones); stopped
    after."""
    p = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                          "--directory", str(logs.parent.parent)], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        assert p.stdout is not None
        line = p.stdout.readline()  # Serving HTTP on 127.0.0.1 port 41234 (http://...) ...
        port = int(line.split(" port ")[1].split()[0])
        yield f"http://127.0.0.1:{port}/{logs.parent.name}/logs/"
    finally:
        p.terminate()
        p.wait(10)
        if p.stdout is not None:
            p.stdout.close()


def test_http_url_reads_like_the_local_path_with_workers(logs: Path, local_out: Path,
                                                         http_root: str,
                                                         tmp_path: Path) -> None:
    pytest.importorskip("aiohttp", reason="http:// needs aiohttp (pip install -e '.[dev]')")
    files = expand_inputs([http_root])
    assert [f.display for f in files] == [f.display.replace(f"{logs}/", http_root) for f in
                                          expand_inputs([str(logs)])]
    ingest(files, tmp_path / "out", jobs=2)  # the workers open the URLs themselves
    _same(local_out, f"{logs}/", tmp_path / "out", http_root)


def test_directory_and_glob_urls_expand_like_local_ones(logs: Path) -> None:
    local = find_inputs([str(logs)])
    url = find_inputs([logs.as_uri()])
    cut = len(str(logs))
    assert [f.display[cut:] for f in local.files] == \
        [f.display[len(logs.as_uri()):] for f in url.files]
    assert {s[cut:] for s in local.skipped} == {s[len(logs.as_uri()):] for s in url.skipped}
    assert any(s.endswith("/NOTES.md") for s in url.skipped)
    assert not any("/.git/" in f.display for f in url.files)
    globbed = find_inputs([logs.as_uri() + "/jobs/*"])
    assert [f.display for f in globbed.files] == sorted(
        (logs / "jobs").as_uri() + "/" + p.name for p in (logs / "jobs").iterdir())


def test_missing_backend_and_missing_url_are_one_line_errors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "s3fs", None)  # import s3fs fails, as when not installed
    monkeypatch.delitem(sys.modules["fsspec.registry"]._registry, "s3", raising=False)
    runner = CliRunner()
    missing_local = runner.invoke(main, ["ingest", str(tmp_path / "nope.log"),
                                         "--out", str(tmp_path / "o")])
    assert missing_local.exit_code == 2
    for url, says in (("s3://some-bucket/logs/", "pip install s3fs"),
                      ((tmp_path / "nope.log").as_uri(), "check the URL"),
                      ("memory://nothing-here/x.log", "check the URL"),
                      ("nosuchproto://x/y", "knows no protocol")):
        r = runner.invoke(main, ["ingest", url, "--out", str(tmp_path / "o")])
        assert r.exit_code == missing_local.exit_code, (url, r.output)
        assert r.exception is None or isinstance(r.exception, SystemExit), url
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and says in lines[0], r.output
        assert "Traceback" not in r.output


class _Dropped(Exception):
    """What aiohttp raises when a response ends early (ClientPayloadError): no OSError."""


def test_a_read_that_fails_part_way_is_one_line(tmp_path: Path) -> None:
    """A connection that drops in the middle of a file: exit 1, one line naming the URL and
    how far the read got, no traceback, no output committed."""
    import io

    from fsspec.implementations.memory import MemoryFileSystem

    class Dropping(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self.data, self.pos = data, 0

        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            if self.pos >= len(self.data) // 2:
                raise _Dropped("Response payload is not completed")
            n = min(len(b), len(self.data) // 2 - self.pos)
            b[:n] = self.data[self.pos:self.pos + n]
            self.pos += n
            return n

    class DroppingFS(MemoryFileSystem):  # type: ignore[misc]
        protocol = "dropping"

        @classmethod
        def _strip_protocol(cls, path: str) -> str:
            return str(MemoryFileSystem._strip_protocol(path.removeprefix("dropping://")))

        def _open(self, path: str, mode: str = "rb", **kw: Any) -> Any:
            if "w" in mode:
                return super()._open(path, mode, **kw)
            return io.BufferedReader(Dropping(super()._open(path, "rb").read()))

    fsspec.register_implementation("dropping", DroppingFS, clobber=True)
    job = sorted((DEMO / "jobs").iterdir())[0]
    DroppingFS().pipe("/drop/" + job.name, job.read_bytes() * 40)
    r = CliRunner().invoke(main, ["ingest", f"dropping://drop/{job.name}",
                                  "--out", str(tmp_path / "out")])
    assert r.exit_code == 1, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output
    assert f"drop/{job.name}: the read failed after " in lines[0]
    assert "_Dropped: Response payload is not completed" in lines[0]
    assert "check the network" in lines[0]
    assert not (tmp_path / "out" / "events.parquet").exists()


def test_a_server_that_never_answers_is_one_line_in_bounded_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that accepts the connection and sends nothing: aiohttp's default waited for
    ever (a probe was killed after 120 s with nothing said). Now the wait is
    TORMORTEM_REMOTE_TIMEOUT (here 1 s) and the error one line, exit 2 as a missing URL."""
    import socket
    import time

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)  # connections queue in the backlog: accepted by the kernel, never answered
    port = srv.getsockname()[1]
    monkeypatch.setenv("TORMORTEM_REMOTE_TIMEOUT", "1")
    try:
        t0 = time.monotonic()
        r = CliRunner().invoke(main, ["ingest", f"http://127.0.0.1:{port}/x.log",
                                      "--out", str(tmp_path / "o")])
        took = time.monotonic() - t0
    finally:
        srv.close()
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "no answer within 1 s" in lines[0], r.output
    assert took < 30
