"""A line that is a signal on its own is the same signal after a block opener.

Multi-line blocks (a traceback, a CUDA error's advisory tail, a ChildFailedError report) hold
state across lines. A line that does not belong to the block must still reach every
recogniser: a real paste had ``NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus``
right after ``RuntimeError: CUDA error: an illegal memory access was encountered`` and it came
out as no row while the line accounting counted it as an event (the CUDA error's row, flushed
by that line, was taken for the line's own). Each opener below is a real first line (torch
``c10/cuda/CUDAException.cpp``, ``torch/distributed/elastic/multiprocessing/errors``,
``ProcessGroupNCCL.cpp``'s NCCL error, CPython's traceback header, the caching allocator's
OOM); the lines after it are the corpus's and the signature table's real examples.
"""

from __future__ import annotations

from typing import Any

import pytest

from parsers import signature_table as st
from parsers.joblog import JobLogParser
from tests.parsers.util import corpus_lines, parse

OPENERS = [
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
    "unhandled system error, NCCL version 2.14.3",
    "terminate called after throwing an instance of 'c10::DistBackendError'",
    "Traceback (most recent call last):",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
    "total capacity of 79.15 GiB of which 1.06 GiB is free.",
]


def _rows_at(text: str, line_no: int) -> list[tuple[str, str]]:
    ev, _, _ = parse(JobLogParser, text, "slurm-5.out")
    return sorted((e["kind"], str(e.get("code"))) for e in ev if e["line_no"] == line_no)


def _signal_lines(every: int = 1) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every corpus signal line and signature example that gives a row on its own (with
    ``every``: each signature's first example and every ``every``-th corpus line)."""
    corpus = sorted(set(corpus_lines(signal_only=True)))[::every]
    examples = [ex for s in st.builtin() for ex in s.examples[:1 if every > 1 else None]]
    return [(t, rows) for t in sorted(set(corpus + examples))
            if (rows := _rows_at(t + "\n", 1))]


def _expected(opener: str, line: str, alone: list[tuple[str, str]]) -> Any:
    """What the line gives after ``opener``: the same rows, except where it truly continues
    the block (the advisory line torch prints under a CUDA error names that error)."""
    if "Search for `cuda" in line and "CUDA" in opener:
        return None  # a continuation: it repeats the opener's error
    if opener.startswith("Traceback") and ("found NaN" in line or "loss is NaN" in line):
        return None  # the traceback's final line: its exception's row is there too
    return alone


def _check(openers: list[str], lines: list[tuple[str, list[tuple[str, str]]]]) -> list[str]:
    bad = []
    for text, alone in lines:
        for opener in openers:
            want = _expected(opener, text, alone)
            got = _rows_at(f"{opener}\n{text}\n", 2)
            if want is not None and got != want:
                bad.append(f"{opener[:30]!r} then {text[:90]!r}: {alone} -> {got}")
    return bad


def test_a_sample_of_signal_lines_after_every_opener() -> None:
    lines = _signal_lines(every=25)
    assert len({rows[0][0] for _, rows in lines}) >= 40  # kinds
    assert _check(OPENERS, lines) == []


@pytest.mark.slow
def test_every_signal_line_after_every_opener() -> None:
    lines = _signal_lines()
    assert len(lines) >= 1000
    assert _check(OPENERS, lines) == []


def test_a_traceback_ending_in_a_table_signature_is_that_signal() -> None:
    """'RuntimeError: NCCL Error 2: unhandled system error' ends a traceback in most pastes;
    the traceback's row was python_exception (user_code) where the line alone is nccl_error.
    CPython's traceback format (Lib/traceback.py)."""
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/train.py", line 88, in <module>\n'
            "    model = torch.nn.DataParallel(model)\n"
            "RuntimeError: NCCL Error 2: unhandled system error\n")
    ev, _, acct = parse(JobLogParser, text, "slurm-6.out")
    assert [(e["kind"], e["code"], e["line_no"]) for e in ev] == [
        ("nccl_error", "unhandled system error", 4)]
    assert acct.events == 4


def test_a_header_without_frames_does_not_swallow_indented_lines() -> None:
    """A traceback header whose frames never came (the process killed while printing) held
    every indented line for 2,000 lines as one of its frames."""
    text = ("Traceback (most recent call last):\n"
            "    slurmstepd: error: *** JOB 14679001 ON gpu-a100-138 CANCELLED AT "
            "2022-09-30T04:32:08 DUE TO TIME LIMIT ***\n")
    assert _rows_at(text, 2) == [("slurm_job_cancelled", "TIME LIMIT")]


def test_a_report_header_alone_is_a_failed_child() -> None:
    """The ChildFailedError header without its report (a paste, a job killed mid-print) gave
    no row but was counted as an event line."""
    ev, _, acct = parse(JobLogParser, "torch.distributed.elastic.multiprocessing.errors."
                        "ChildFailedError:\n", "slurm-7.out")
    assert [(e["kind"], e["line_no"]) for e in ev] == [("elastic_child_failed", 1)]
    assert acct.events == 1
