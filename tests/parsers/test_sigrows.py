"""Progress lines a data signature recognises, read per chunk (parsers/sigrows.py), against
the per-line path (``TORMORTEM_PREFILTER=0``).

The lines are the ``examples`` of every ``kind = "iteration"`` signature of
``parsers/signatures/progress.toml`` (each cites the code that prints it: torchtitan's
metrics.py, nanoGPT's train.py, fairseq's progress_bar.py, ...) with their digits changed
line by line (so every shape holds many lines, some with dates that do not exist), mixed with
lines the fast path must leave alone: a stamped Python-logging line (the stamp unstamped
lines inherit), an NCCL WARN, a traceback, an ``srun`` error. Both dialects that read them
(a job log, text of no known layout) must give the same rows and line counts either way, and
the fast path must have taken most of the progress lines.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from parsers import sigrows
from parsers.joblog import JobLogParser
from parsers.signature_table import builtin
from parsers.text import TextParser
from tests.parsers.test_fast_paths import both_paths

_STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d")
_GLOG = re.compile(r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ ")

# between the progress lines: a Python-logging stamp (logging's default asctime), NCCL's
# WARN (src/include/debug.h: "host:pid:tid [dev] NCCL WARN ..."), a traceback (CPython's
# traceback.print_exc) and srun's error (src/srun/srun_job.c)
OTHER = [
    "2024-05-01 12:00:00,123 - INFO - train.py:88 - saving a checkpoint",
    "gpu-node-07:1234:5678 [3] NCCL WARN Cuda failure 'an illegal memory access was "
    "encountered'",
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 120, in <module>',
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "srun: error: gpu-node-07: task 3: Exited with exit code 1",
]


#: heads the fast path leaves to ``parse_line`` (``sigrows.analyse`` reads ISO stamps only):
#: glog's ``I0912 11:40:27.956218``, detectron2's ``[11/01 11:27:04``, mmengine's ``2023/02/14``
_NOT_ISO = re.compile(r"[IWEF]\d{4} |\[\d\d/\d\d |\d{4}/\d\d/\d\d ")


def _iteration_examples() -> list[str]:
    return [e for s in builtin() if s.kind == "iteration" and not s.noise
            for e in s.examples if "\r" not in e and "%|" not in e
            # Megatron's own lines: its vectorised path (joblog_fast.py) takes such a chunk
            and "elapsed time per iteration (ms):" not in e]


def _vary(example: str, rng: random.Random, when: datetime, widths: bool) -> str:
    """``example`` with its stamp set to ``when`` (same layout) and its other digits
    changed (``widths``: a run may also grow by a digit, another shape)."""
    glog = _GLOG.match(example)  # a year-less stamp: kept (the year is inferred from it)
    if glog:
        return glog.group() + _vary(example[glog.end():], rng, when, widths)
    m = _STAMP.search(example)
    head, tail = (example[:m.start()], example[m.end():]) if m else (example, "")
    stamp = when.strftime("%Y-%m-%d") + example[m.start() + 10] + when.strftime("%H:%M:%S") \
        if m else ""

    def digits(run: re.Match[str]) -> str:
        out = "".join(rng.choice("0123456789") for _ in run.group())
        return out + rng.choice("123") if widths and rng.random() < 0.01 else out

    return re.sub(r"\d+", digits, head) + stamp + re.sub(r"(?<=[^\d,.])\d{1,2}(?=\D)",
                                                         digits, tail)


def _text(rng: random.Random, n: int, start: datetime, widths: bool = False,
          steps: tuple[int, ...] = (1, 7, 61, 3599)) -> str:
    ex = _iteration_examples()
    out = []
    t = start
    for i in range(n):
        t += timedelta(seconds=rng.choice(steps))
        out.append(_vary(ex[i % len(ex)], rng, t, widths))
        if i % 97 == 0:
            out.append(OTHER[(i // 97) % len(OTHER)])
    # days that do not exist, in the shape of the stamped lines: read per line
    stamped = next(e for e in ex if _STAMP.search(e) and not e.startswith("["))
    for bad in ("2024-02-30", "2023-02-29", "2024-04-31", "2024-13-01"):
        out.append(_vary(stamped, rng, start, False).replace(start.strftime("%Y-%m-%d"), bad))
    return "\n".join(out) + "\n"


def _taken(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    real = sigrows._read

    def counting(*a: Any, **k: Any) -> Any:
        got = real(*a, **k)
        seen.append(0 if got is None else len(got.lines))
        return got

    monkeypatch.setattr(sigrows, "_read", counting)
    return seen


@pytest.mark.parametrize(("cls", "path"), [(JobLogParser, "slurm-777.out"),
                                           (TextParser, "train.log")])
def test_same_rows_as_per_line(cls: type, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    text = _text(rng, 6000, datetime(2024, 5, 1, 12, 0))
    seen = _taken(monkeypatch)
    rows = both_paths(cls, text, path, monkeypatch, ordered=False)
    iters = [r for r in rows if r["kind"] == "iteration"]
    assert len(iters) >= 5900
    ex = _iteration_examples()
    fast = sum(not _NOT_ISO.match(e) for e in ex) / len(ex)
    assert sum(seen) >= 0.75 * fast * len(iters), (sum(seen), fast, len(iters))
    # the stamp-less formats inherit the last stamp (the logging line's or a progress line's)
    assert {r["ts_flag"] for r in iters} >= {"assumed_tz", "inherited"}
    assert any(r["value"] is None for r in iters) and any(r["value"] for r in iters)


@pytest.mark.parametrize("tz", ["America/New_York", "Asia/Kolkata"])
def test_zones_and_dst(tz: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Local stamps through a zone, across the spring-forward gap (2024-03-10 02:00-03:00 in
    New York does not exist: those lines go per line) and the autumn's repeated hour."""
    rng = random.Random(11)
    text = _text(rng, 3000, datetime(2024, 3, 10, 0, 30)) \
        + _text(rng, 3000, datetime(2024, 11, 3, 0, 30), widths=True) \
        + _text(rng, 600, datetime(2024, 3, 10, 1, 50), steps=(7, 11)) \
        + _text(rng, 600, datetime(2024, 11, 3, 0, 50), steps=(7, 11))
    seen = _taken(monkeypatch)
    rows = both_paths(JobLogParser, text, "slurm-778.out", monkeypatch, ordered=False,
                      tz=ZoneInfo(tz))
    assert sum(seen) >= 0.7 * sum(r["kind"] == "iteration" for r in rows)


def test_other_digits_are_not_taken() -> None:
    """A shape is kept only when every decision holds for all its lines: a pattern that
    names a digit, a stamp-like text the prefix layers might read, a non-plain number."""
    from datetime import UTC as utc

    from parsers.base import FileContext

    p = JobLogParser(FileContext.for_path("slurm-1.out", utc))
    ok = "iter 1200: loss 2.3540, time 400.59ms, mfu 45.12%"
    got = sigrows.analyse(p, ok)
    assert got is not None and got.fmt == "nanogpt" and got.stamp is None
    assert {n[0] for n in got.nums} == {"iteration", "value"}
    # a clock time before the message that no prefix layer read: another line of the
    # shape might be read differently
    assert sigrows.analyse(p, "12:00:01 " + ok) is None
    # the bar glued behind, a redraw: the per-line path splits those
    assert sigrows.analyse(p, ok + "\r" + ok) is None
    stamped = "[rank5]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  " \
        "6.1384  memory: 49.66GiB(52.28%)  tps: 5,856  tflops: 339.12  mfu: 34.29%"
    got = sigrows.analyse(p, stamped)
    assert got is not None and got.rank is not None and got.stamp is not None
    assert datetime(2025, 6, 16, 22, 30, 50, 322000, UTC)  # the stamp the rows carry


def test_a_chunk_without_progress_lines_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _taken(monkeypatch)
    text = "\n".join(OTHER * 200) + "\n"
    both_paths(JobLogParser, text, "slurm-779.out", monkeypatch, ordered=False)
    assert sum(seen) == 0
