"""Local workers (pipeline/ingest/procs.py, parallel.py): forked from a fork server that
imported the parsers once; how many are planned; and a worker that dies ends the ingest with
one line, no traceback, no process left behind (the pool could hang on Python 3.11:
``parallel.stop``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parsers.inputs import InputFile
from pipeline.ingest import procs

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "sample_logs" / "demo"
CLI = [sys.executable, "-c", "import sys; sys.argv[0] = 'tormortem'; "
       "from pipeline.cli import main; main()"]

THREADS = """
import os, sys
def names():
    return [open(f'/proc/self/task/{t}/comm').read().strip() for t in os.listdir('/proc/self/task')]
for m in sys.argv[1:]:
    __import__(m)
print(','.join(names()))
import polars as pl, time
pl.DataFrame({'a': list(range(1000))}).select(pl.col('a').sum())
for _ in range(100):  # a new pool thread is named a moment after it starts ('python' before)
    if any(n.startswith(('rayon', 'tokio')) or (n.startswith('polars-') and n[7:].isdigit())
           for n in names()):
        break
    time.sleep(0.02)
print(','.join(names()))
"""


def _pools(names: str) -> list[str]:
    """Threads of a pool a forked child would inherit as started but without its threads:
    polars' (``polars-N``) and its async runtime's."""
    return [n for n in names.split(",") if n.startswith(("tokio", "rayon"))
            or (n.startswith("polars-") and n[7:].isdigit())]


def test_preload_starts_no_thread_pool() -> None:
    """The fork server imports ``PRELOAD``; a thread pool started by that (a polars query at
    import time) would hang every worker forked from it. The second line shows the check
    sees one when there is."""
    r = subprocess.run([sys.executable, "-c", THREADS, *procs.PRELOAD], capture_output=True,
                       text=True, timeout=120, check=True, cwd=ROOT)
    after_import, after_query = r.stdout.split()
    assert _pools(after_import) == []
    assert _pools(after_query)


def _file(tmp: Path, name: str, size: int) -> InputFile:
    p = tmp / name
    p.write_bytes(b"x" * size)
    return InputFile(p, str(p))


def test_workers_planned(tmp_path: Path) -> None:
    big = procs.AUTO_MIN_BYTES
    small = [_file(tmp_path, f"s{i}", 10) for i in range(3)]
    large = [_file(tmp_path, "a", big // 2), _file(tmp_path, "b", big // 2 + 1)]
    assert procs.planned(1, large) == 0
    assert procs.planned(2, large) == 2
    assert procs.planned(2, large[:1]) == 0  # one file: nothing to share
    assert procs.planned(None, small) == 0  # too little to read
    assert procs.planned(None, large) == (procs.default_jobs()
                                          if procs.default_jobs() > 1 else 0)
    assert procs.context().get_start_method() in ("forkserver", "spawn")


def _children(pid: int) -> list[int]:
    """The children of ``pid`` ([] once it is gone)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                out += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children")
                        .read_text().split()]
    return out


def _tree(pid: int) -> list[int]:
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += _children(p)
    return seen


def _workers(client: int) -> list[int]:
    """The pool's worker processes: below the client, leaves of the tree (the fork server
    and the resource tracker are not)."""
    out = []
    for pid in _tree(client)[1:]:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_text()
        except OSError:
            continue
        if not _children(pid) and "resource_tracker" not in cmd:
            out.append(pid)
    return sorted(out)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow  # ~3-6 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_a_killed_worker_ends_the_ingest_in_one_line(tmp_path: Path) -> None:
    """SIGKILL a worker in the middle of a task (the out-of-memory killer's way): exit 1 with
    one ``Error:`` line naming the files (or 0 and a whole output, should the client have
    read the dead worker's task itself), no traceback, no process left. Before
    ``parallel.stop`` the pool's manager thread died of an InvalidStateError (a task the
    client had taken back was a cancelled future) and the CLI never exited."""
    line = next(DEMO.glob("nodes/*/kern.log")).read_bytes().splitlines(keepends=True)[0]
    logs = tmp_path / "logs"
    logs.mkdir()
    # tasks (parts.group): a0, a1, a2 (20 MB each) and b0..b5 (40 MB): the workers start on
    # the b's (largest first), the client reads a0 and takes a1 and a2 back, then waits
    for name, mb in [*((f"a{i}", 20) for i in range(3)), *((f"b{i}", 40) for i in range(6))]:
        (logs / f"{name}.log").write_bytes(name.encode() + b"\n"  # not alike: no duplicates
                                           + line * ((mb << 20) // len(line)))
    out = tmp_path / "out"
    p = subprocess.Popen([*CLI, "ingest", str(logs), "--out", str(out), "--jobs", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        victim = None
        deadline = time.monotonic() + 60
        started: set[str] = set()  # every b task begun so far (a replayed part is removed)
        while victim is None and time.monotonic() < deadline and p.poll() is None:
            # a worker on its second b: the client is past a2 by then
            started |= {d.name for d in tmp_path.rglob("parts/0*") if d.name >= "000003"}
            workers = _workers(p.pid)
            if len(started) >= 3 and workers:
                victim = workers[-1]
            time.sleep(0.01)
        assert victim is not None, ("no worker started a task", p.poll(),
                                    p.stderr.read() if p.poll() is not None and p.stderr
                                    else "")
        everyone = _tree(p.pid)
        os.kill(victim, signal.SIGKILL)
        _, err = p.communicate(timeout=60)
    finally:
        for q in _tree(p.pid) if p.poll() is None else []:  # nothing left to slow others
            with contextlib.suppress(OSError):
                os.kill(q, signal.SIGKILL)
        for pipe in (p.stdout, p.stderr):  # (a failed assertion above left them open: their
            if pipe is not None:           # ResourceWarning then failed a later test)
                pipe.close()
    text = err.decode()
    assert "Traceback" not in text and "Exception in thread" not in text, text
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if p.returncode == 0:  # the dead worker held nothing the client still needed
        assert (out / "manifest.json").exists(), text
    else:
        assert p.returncode == 1 and len(lines) == 1, (p.returncode, text)
        assert lines[0].startswith("Error: a worker process died while reading "), text
        assert not out.exists()
    time.sleep(0.5)
    assert [q for q in everyone if _alive(q)] == []


def test_no_more_workers_than_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--jobs 500`` on three files starts three workers (a task each here), not 500."""
    from pipeline.ingest import parallel, parts

    monkeypatch.setattr(parts, "GROUP_BYTES", 1)  # every file a task of its own
    files = [_file(tmp_path, f"f{i}", 100) for i in range(3)]
    assert parallel.warm_pool(500, files[:1]) is None  # one file: read here
    pool = parallel.warm_pool(500, files)
    assert pool is not None
    try:
        assert pool._max_workers == 3  # the pool's size (no public accessor)
    finally:
        parallel.stop(pool, failed=False)


def test_workers_run_below_the_client(tmp_path: Path) -> None:
    """The workers yield the cores to the client (``procs.WORKER_NICE``), which reads a task
    itself and replays theirs in order."""
    pool = procs.pool(2)
    try:
        here = os.nice(0)
        got = {pool.submit(os.nice, 0).result(timeout=60) for _ in range(4)}
    finally:
        pool.shutdown()
    assert got == {min(19, here + procs.WORKER_NICE)}


@pytest.mark.slow  # ~3-5 s
def test_a_killed_client_leaves_no_worker(tmp_path: Path) -> None:
    """SIGKILL the client in the middle of an ingest with workers: the workers and the fork
    server end within a few seconds (``procs.worker_init``) and release the client's stdout,
    so ``tormortem ingest ... | cat`` ends. They lived on for minutes and held the pipe."""
    line = next(DEMO.glob("nodes/*/kern.log")).read_bytes().splitlines(keepends=True)[0]
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(8):
        (logs / f"n{i}.log").write_bytes(f"n{i}\n".encode() + line * ((30 << 20) // len(line)))
    r, w = os.pipe()
    p = subprocess.Popen([*CLI, "ingest", str(logs), "--out", str(tmp_path / "out"),
                          "--jobs", "2"], stdout=w, stderr=w, cwd=ROOT)
    os.close(w)
    everyone: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(_workers(p.pid)) < 2 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.01)
        assert len(_workers(p.pid)) >= 2, "no workers started"
        everyone = _tree(p.pid)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        deadline = time.monotonic() + 10 * procs.CLIENT_POLL_S + 5
        while any(_alive(q) for q in everyone) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [q for q in everyone if _alive(q)] == []
        # the pipe's write ends are all closed: the reader sees its end
        os.set_blocking(r, False)
        end = time.monotonic() + 5
        while time.monotonic() < end:
            try:
                if os.read(r, 1 << 16) == b"":
                    break
            except BlockingIOError:
                time.sleep(0.05)
        else:
            pytest.fail("the output pipe is still held open")
    finally:  # (orphans of a failed run are no longer below the client: kill them by id)
        for q in {*everyone, *_tree(p.pid)}:
            with contextlib.suppress(OSError):
                os.kill(q, signal.SIGKILL)
        os.close(r)
