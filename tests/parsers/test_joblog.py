"""JobLogParser: prefixes, timestamps, rank, the vectorised path, sniffing, accounting.

Prefix formats: ``srun --label`` (``%*d: ``, src/srun), torchrun ``[default3]:`` (role + local
rank, torch/distributed/elastic) and ``[rank3]:`` (global rank), ``kubectl logs --timestamps``
(RFC3339Nano), DeepSpeed's logger envelope, Megatron's stamps (see test_megatron.py for the
Megatron format sources).
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from parsers import progress_batch
from parsers.base import FileContext, LineParser
from parsers.joblog import JobLogParser
from parsers.joblog_prefix import Prefix, split_prefix
from parsers.reader import lines_series
from tests.parsers.test_megatron import NEW_ITER, OLD_ITER
from tests.parsers.util import parse, pick

PATH = "logs/node017/slurm-4242.out"


def _split(text: str) -> tuple[int | None, str | None, int | None, str]:
    p = split_prefix(text, UTC, Prefix())
    return p.ts, p.flag, p.rank, p.msg


def test_split_prefix_layers() -> None:
    # srun --label + Megatron stamp
    assert _split("  3:  [2024-05-01 12:00:00] iteration      100/  500000 |") == (
        1714564800000000, "assumed_tz", 3, "iteration      100/  500000 |")
    # kubectl logs --timestamps (RFC3339Nano, exact) + torchrun prefix
    assert _split("2024-05-01T12:00:00.123456789Z [default7]:NCCL version 2.18.1+cuda12.1") == (
        1714564800123456, "exact", 7, "NCCL version 2.18.1+cuda12.1")
    # the kubelet's CRI log file (/var/log/pods/NS_POD_UID/CONTAINER/N.log: containerd
    # writes "<RFC3339Nano> <stream> <F|P> <line>") around the same lines
    assert _split("2024-05-01T12:00:00.123456789Z stderr F [default7]:NCCL version 2.18.1") == (
        1714564800123456, "exact", 7, "NCCL version 2.18.1")
    assert _split("2024-05-01T12:00:00Z stdout F  [2024-05-01 12:00:00] iteration 100/ 500 |"
                  ) == (1714564800000000, "exact", None, "iteration 100/ 500 |")
    # torch >= 2.3 rank prefix (real traceback lines)
    assert _split("[rank3]: Traceback (most recent call last):") == (
        None, None, 3, "Traceback (most recent call last):")
    # DeepSpeed envelope
    assert _split("[2023-11-07 01:55:23,711] [INFO] [logging.py:96:log_dist] [Rank 0] step=10")[
        ::3] == (1699322123711000, "[Rank 0] step=10")
    # Python logging BASIC_FORMAT (real: torchrun --tee output of Megatron timers)
    assert _split("[default0]:INFO:megatron.core.timers:(min, max) time across ranks (ms):") == (
        None, None, 0, "(min, max) time across ranks (ms):")
    # a user's print is left alone
    assert _split("epoch 3 done") == (None, None, None, "epoch 3 done")


def test_rank_host_job_and_inherited_time() -> None:
    text = "\n".join([
        "[default3]:" + NEW_ITER,
        "  5: " + OLD_ITER,
        "srun: error: node018: task 5: Exited with exit code 1",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert pick(rows, ("ts", "host", "kind", "job_id", "rank", "iteration")) == [
        {"ts": "2024-05-01T12:00:00Z", "host": "node017", "kind": "iteration", "job_id": "4242",
         "rank": 3, "iteration": 100},
        {"ts": "2024-05-01T12:00:00Z", "host": "node017", "kind": "iteration", "job_id": "4242",
         "rank": 5, "iteration": 101},
        {"ts": "2024-05-01T12:00:00Z", "host": "node018", "kind": "srun_task_exit",
         "job_id": "4242", "rank": None, "iteration": None},
    ]
    assert [r["ts_flag"] for r in rows] == ["assumed_tz", "inherited", "inherited"]
    assert [r["host_from"] for r in rows] == ["path", "path", "line"]
    assert acct.read == 3 and acct.events == 3


def test_missing_time_before_any_stamp_and_blank_lines() -> None:
    rows, _, acct = parse(JobLogParser, OLD_ITER + "\n\n   \n", "job.out")
    assert pick(rows, ("ts", "host", "job_id", "iteration")) == [
        {"ts": None, "host": None, "job_id": None, "iteration": 101}]
    assert rows[0]["ts_flag"] == "missing" and rows[0]["host_from"] == "unknown"
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (3, 1, 2, 0)


def _mixed(n: int) -> str:
    lines = []
    for i in range(n):
        lines += [
            NEW_ITER.replace("     100/", f"{100 + 4 * i:8d}/")
            .replace("12:00:00", f"12:{i % 60:02d}:00"),
            "  2: " + OLD_ITER.replace("     101/", f"{101 + 4 * i:8d}/"),
            "[rank1]: " + NEW_ITER.replace("     100/", f"{102 + 4 * i:8d}/"),
            f"[before the start of training step] datetime: 2024-05-02 0{i % 10}:00:00 ",
            OLD_ITER.replace("     101/", f"{103 + 4 * i:8d}/"),
            "2024-05-03T00:00:00.5Z" + NEW_ITER,
            "my own print() output",
            "saving checkpoint at iteration     100 to /ckpt",
        ]
    return "\n".join(lines) + "\n"


def test_vectorised_path_equals_per_line_path() -> None:
    data = _mixed(30).encode()
    ctx = FileContext.for_path(PATH, UTC)
    fast = JobLogParser(ctx)
    fast.parse_chunk(lines_series(data), 1)
    slow = JobLogParser(ctx)
    LineParser.parse_chunk(slow, lines_series(data), 1)
    import pyarrow as pa

    def table(p: JobLogParser) -> list[dict[str, Any]]:
        batches = [progress_batch.to_events(b) if progress_batch.is_progress(b) else b
                   for b in p.events.drain()]
        rows = pa.Table.from_batches(batches).to_pylist()
        return sorted(rows, key=lambda r: (r["line_no"], r["kind"]))

    a, b = table(fast), table(slow)
    assert len(a) == len(b) == 30 * 7
    assert a == b
    assert (fast.acct.read, fast.acct.events, fast.acct.irrelevant, fast.acct.unparsed) == (
        slow.acct.read, slow.acct.events, slow.acct.irrelevant, slow.acct.unparsed) == (
        240, 210, 0, 30)
    # the stamp-less vectorised rows inherit from per-line stamps before them
    old = [r for r in a if r["iteration"] is not None and r["iteration"] % 4 == 3]
    assert {r["ts_flag"] for r in old} == {"inherited"}
    assert old[1]["ts"].isoformat() == "2024-05-02T01:00:00+00:00"


def test_sniff() -> None:
    head = "\n".join([NEW_ITER, "saving checkpoint at iteration     100 to /ckpt"])
    assert JobLogParser.sniff(head, "slurm-4242.out") >= 70
    assert JobLogParser.sniff("srun: error: node017: task 3: Exited with exit code 1\n",
                              "x.log") >= 60
    # other sources' first lines score low
    others = [
        ("[2024-05-01T12:00:00.123] _job_complete: JobId=1234 WEXITSTATUS 0\n", "slurmctld.log"),
        ("May  1 12:00:00 node017 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has"
         " fallen off the bus.\n", "node017/kern.log"),
        ("JobID|JobName|State|ExitCode\n1234|train|FAILED|1:0\n", "sacct.txt"),
        ('{"apiVersion": "v1", "items": [], "kind": "List"}\n', "pods.json"),
    ]
    for text, path in others:
        assert JobLogParser.sniff(text, path) < 30, path


def test_truncated_and_malformed_lines_are_unparsed() -> None:
    text = "\n".join([
        " iteration      10",  # cut mid-write when the job was killed
        "srun: error: something we do not know about",
        "slurmstepd: error: *** JOB 12 ON node017 CANCELL",
        "[Rank 0] step=abc, skipped=0",
        "{'loss': ",
        "\x00\x01binary junk\x7f",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert rows == []
    assert (acct.read, acct.unparsed) == (6, 6)
    assert [n for n, _ in acct.samples] == [1, 2, 3, 4, 5, 6]


def test_vectorised_path_leaves_odd_iteration_lines_to_the_per_line_path() -> None:
    # a 9-digit iteration widens Megatron's {:8d} field; a garbled value cannot be read
    wide = NEW_ITER.replace("     100/  500000", "123456789/999999999")
    bad = NEW_ITER.replace("(ms): 1234.5 |", "(ms): 12x4.5 |")
    text = "\n".join([NEW_ITER] * 70 + [wide, bad]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert len(rows) == 72 and acct.events == 72 and acct.unparsed == 0
    tail = sorted(rows, key=lambda r: r["line_no"])[-2:]
    assert pick(tail, ("iteration", "value")) == [
        {"iteration": 123456789, "value": 1234.5}, {"iteration": 100, "value": None}]


def test_interleaved_rank_tracebacks_stay_apart() -> None:
    # PyTorch >= 2.2 prefixes every line a rank prints to stderr with "[rankN]:" (as in
    # pytorch/pytorch issue reports of torchrun failures); two ranks' tracebacks interleave.
    text = (
        "[rank0]: Traceback (most recent call last):\n"
        "[rank1]: Traceback (most recent call last):\n"
        '[rank0]:   File "/workspace/train.py", line 42, in <module>\n'
        '[rank1]:   File "/workspace/train.py", line 42, in <module>\n'
        "[rank0]:     main()\n"
        "[rank1]:     main()\n"
        "[rank0]: ValueError: bad batch shape\n"
        "[rank1]: KeyError: 'labels'\n"
    )
    rows, _, acct = parse(JobLogParser, text, "logs/slurm-77.out")
    got = sorted((r["rank"], r["code"]) for r in rows if r["kind"] == "python_exception")
    assert got == [(0, "ValueError"), (1, "KeyError")]
    assert acct.unparsed == 0


def test_lines_after_an_execution_ending_banner_get_no_inherited_time() -> None:
    # A requeued job's .err (opened with --open-mode=append) as a real Slurm 22.05 wrote it:
    # the first execution ends with slurmstepd's banner; the next execution's srun line has no
    # stamp and must not take the previous execution's time (tests/integration found this).
    text = (
        "slurmstepd-tmn1: error: *** JOB 3 ON tmn1 CANCELLED AT 2026-11-29T20:40:01 DUE TO "
        "JOB REQUEUE ***\n"
        "srun: error: Node failure on tmn2\n"
    )
    rows, _, acct = parse(JobLogParser, text, "logs/slurm-3.err")
    by_kind = {r["kind"]: r for r in rows}
    assert by_kind["slurm_job_cancelled"]["ts"].isoformat() == "2026-11-29T20:40:01+00:00"
    node_fail = [r for r in rows if r["kind"] != "slurm_job_cancelled"]
    assert [(r["ts"], r["ts_flag"]) for r in node_fail] == [(None, "missing")]
    assert acct.unparsed == 0
