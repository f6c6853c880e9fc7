"""``ingest --jobs N`` and ``--scheduler tcp://...`` (pipeline/ingest/parallel.py, parts.py):
the output is the same as one process reading the files in turn -- events.parquet byte for
byte, every DuckDB table row for row, the analysis the same.

The Dask test starts a real ``dask scheduler`` and two ``dask worker`` processes on loopback
and stops them (marked slow: it takes ~30 s of process start-up on 2 cores).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from parsers.reader import expand_inputs
from pipeline.cli.main import main
from pipeline.ingest import parallel, parts
from pipeline.ingest.run import ingest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "sample_logs" / "demo"
CAMPAIGN2 = ROOT / "tests" / "data" / "real_slurm" / "campaign2"
# a text rule, as written from an unknown-line template (README: the rule table): the workers
# must use it too
RULE = ("id,source,kind,code,pattern,category,mode,specificity,scales_with,note\n"
        "site-debug,*,text,,batch shapes look \\S+,user_code,fail-stop,10,none,test rule\n")


def _inputs(tmp: Path) -> list[str]:
    """The demo, a second real-Slurm campaign, a gzip copy of one demo file (a duplicate: read
    once, by the client) and a file of no known layout with the rule's lines."""
    extra = tmp / "extra"
    extra.mkdir()
    kern = next(DEMO.glob("nodes/*/kern.log"))
    with gzip.open(extra / "kern-copy.log.gz", "wb") as g:
        g.write(kern.read_bytes())
    (extra / "notes.txt").write_text("my own debug print: batch shapes look fine\n" * 3
                                     + "nothing to see here\n")
    return [str(DEMO), str(CAMPAIGN2), str(extra)]


def _tables(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [n for (n,) in con.execute(
            "SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
        return {n: con.execute(f'SELECT * FROM "{n}" ORDER BY ALL').fetchall() for n in names}
    finally:
        con.close()


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _same_outputs(a: Path, b: Path) -> None:
    for name in ("events.parquet", "attempts.parquet", "line_accounting.parquet",
                 "unparsed_samples.parquet", "unknown_templates.parquet"):
        assert _sha(a / name) == _sha(b / name), name
    ta, tb = _tables(a / "tormortem.duckdb"), _tables(b / "tormortem.duckdb")
    assert list(ta) == list(tb)
    for name in ta:
        assert ta[name] == tb[name], name


@pytest.mark.parametrize("client_reads", [False, True])
def test_jobs_give_the_same_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   client_reads: bool) -> None:
    """Tasks of a few files each (so there are many); the workers read them all, or the
    client reads the first and any a worker has not started when its turn comes."""
    monkeypatch.setattr(parts, "GROUP_FILES", 4)
    monkeypatch.setattr(parallel, "CLIENT_READS", client_reads)
    seen: list[str] = []
    real = parallel.parts_in_order

    def spy(*a: Any, **kw: Any) -> Any:
        for got in real(*a, **kw):
            seen.append(type(got).__name__)
            yield got
            if seen.count("Inline") <= 8 and type(got).__name__ == "Inline":
                # a slow client: the workers (started from scratch, on a loaded machine that
                # can take seconds) must get some tasks before the client takes them all back
                time.sleep(0.5)

    monkeypatch.setattr(parallel, "parts_in_order", spy)
    rules = tmp_path / "rules.csv"
    rules.write_text(RULE)
    files = expand_inputs(_inputs(tmp_path))
    one = ingest(files, tmp_path / "one", extra_rules=[rules], jobs=1)
    two = ingest(files, tmp_path / "two", extra_rules=[rules], jobs=2)
    _same_outputs(tmp_path / "one", tmp_path / "two")
    assert one.events == two.events > 12_000
    assert [f.note for f in one.files] == [f.note for f in two.files]
    assert len(seen) > 4 and "PartResult" in seen
    assert ("Inline" in seen) == client_reads and (seen[0] == "Inline") == client_reads
    # the rule reached the workers (every task is theirs without client_reads): its lines
    # are events of kind text in both
    con = duckdb.connect(str(tmp_path / "two" / "tormortem.duckdb"), read_only=True)
    n = con.execute("SELECT count(*) FROM classified_events WHERE rule_id = 'site-debug'"
                    ).fetchall()[0][0]
    con.close()
    assert n == 3
    assert not (tmp_path / "two" / "parts").exists()  # the parts are gone once replayed


@pytest.mark.slow  # ~3-6 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_cli_jobs_same_analysis(tmp_path: Path) -> None:
    """Through the CLI (the output folder, the manifest): --jobs 2 and --jobs 1 agree."""
    runner = CliRunner()
    docs = []
    for j in ("1", "2"):
        out = tmp_path / f"o{j}"
        r = runner.invoke(main, ["analyze", str(DEMO), "--out", str(out), "--jobs", j,
                                 "--json", "-q"])
        assert r.exit_code == 0, r.output
        docs.append(json.loads((out / "analysis.json").read_text()))
    assert docs[0] == docs[1]
    _same_outputs(tmp_path / "o1", tmp_path / "o2")


def test_bad_jobs_is_a_usage_error(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["ingest", str(DEMO), "--out", str(tmp_path / "o"),
                                  "--jobs", "0"])
    assert r.exit_code == 2 and "--jobs" in r.output


@pytest.mark.slow  # the client tries for its 20 s connect timeout
def test_no_scheduler_there_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="dask's distributed is in the dev extras")
    r = CliRunner().invoke(main, ["ingest", str(DEMO / "jobs"), "--out", str(tmp_path / "o"),
                                  "--scheduler", "tcp://127.0.0.1:9"])
    assert r.exit_code == 1
    last = r.output.rstrip().splitlines()[-1]
    assert last.startswith("Error: no Dask scheduler at tcp://127.0.0.1:9"), r.output
    assert not (tmp_path / "o").exists()


def _dask(*args: str, log: Path) -> subprocess.Popen[bytes]:
    """``dask scheduler|worker ...`` (the console script beside this Python)."""
    exe = Path(sys.executable).with_name("dask")
    with log.open("wb") as out:  # the child keeps its own descriptor
        return subprocess.Popen([str(exe), *args], cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})


def _read_tasks(dask_scheduler: Any) -> dict[str, int]:
    """Runs on the scheduler: how the ``tormortem-read`` tasks went (state -> count)."""
    prefix = dask_scheduler.task_prefixes.get("tormortem-read")
    return dict(prefix.state_counts) if prefix is not None else {}


@pytest.mark.slow
def test_dask_cluster_gives_the_same_answers(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason="in the dev extras")
    sfile = tmp_path / "scheduler.json"
    procs = [_dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", str(sfile), log=tmp_path / "scheduler.log")]
    try:
        deadline = time.monotonic() + 120
        while not sfile.exists():
            assert time.monotonic() < deadline, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.2)
        address = json.loads(sfile.read_text())["address"]
        for k in range(2):
            procs.append(_dask("worker", "--scheduler-file", str(sfile), "--nthreads", "1",
                               "--nworkers", "1", "--no-dashboard", "--host", "127.0.0.1",
                               log=tmp_path / f"worker{k}.log"))
        with distributed.Client(address, timeout="60s") as c:
            c.wait_for_workers(2, timeout=120)
        runner = CliRunner()
        docs = []
        for args in (["--jobs", "1"], ["--scheduler", address]):
            out = tmp_path / ("local" if args[0] == "--jobs" else "dask")
            r = runner.invoke(main, ["analyze", str(DEMO), str(CAMPAIGN2), "--out", str(out),
                                     "--json", "-q", *args])
            assert r.exit_code == 0, r.output
            docs.append(json.loads((out / "analysis.json").read_text()))
        assert docs[0] == docs[1]
        _same_outputs(tmp_path / "local", tmp_path / "dask")
        # the files were read by tasks on the workers, not in the client (a task per run of
        # small files: parts.group)
        with distributed.Client(address, timeout="60s") as c:
            states = c.run_on_scheduler(_read_tasks)
        assert states.get("memory", 0) >= 1, states
    finally:
        for p in procs[::-1]:
            p.terminate()
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp_path / "dask-worker-space", ignore_errors=True)


def test_small_files_are_grouped_into_tasks_in_order() -> None:
    from pipeline.ingest import parts

    mb = 1 << 20
    sizes = [40 * mb, 1, 2, 3] + [10 * mb] * 7 + [5] * 600
    tasks = parts.group(sizes)
    assert [i for t in tasks for i in t] == list(range(len(sizes)))  # every file, in order
    assert tasks[0] == [0]  # a file over the byte budget is a task of its own
    assert all(len(t) <= parts.GROUP_FILES for t in tasks)
    assert all(sum(sizes[i] for i in t) <= parts.GROUP_BYTES or len(t) == 1 for t in tasks)
    # 3 small + three 10 MB files fill 32 MB; then three more; then 256-file runs
    assert tasks[1] == [1, 2, 3, 4, 5, 6] and tasks[2] == [7, 8, 9]
    assert [len(t) for t in tasks[3:]] == [256, 256, 611 - 522]
