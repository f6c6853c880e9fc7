"""Rows that come out at a later line than their own (parsers/torch_blocks.py ``ORIGIN``): a
traceback's row (emitted when the chain ends), a one-line error's that waits for continuation
lines, a ``terminate called`` line's that waits for its ``what():``. Each keeps the stamp of
its own line, not the one of the line that closed it, with the prefilter on and off."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.parsers.test_prefilter import _parse_all

T0 = datetime(2024, 5, 1, tzinfo=UTC)
# a torch warning as users paste it (torch/utils/checkpoint.py's UserWarning): no candidate
WARN = ("/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:429: UserWarning: "
        "torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False "
        "explicitly.")
# Megatron-LM training_log (megatron/training/training.py)
ITER = (" iteration {:8d}/    1000 | consumed samples: {:12d} | elapsed time per iteration "
        "(ms): 812.3 | learning rate: 3.0E-04 |")
BODY = [
    ITER.format(1, 8),
    # torch 2.3+ prefixes a rank's uncaught exception with [rankN]: (torch/distributed/
    # elastic/multiprocessing/errors); DistNetworkError's text from c10d's TCPStore
    "[rank0]: torch.distributed.DistNetworkError: Connection reset by peer",
    *[WARN] * 8,
    ITER.format(2, 16),
    # CPython's traceback; the final line as ProcessGroupNCCL.cpp (torch 1.13/2.0) words it
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 42, in <module>',
    "    main()",
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
    "unhandled system error, NCCL version 2.14.3",
    *[WARN] * 6,
    # libstdc++'s verbose terminate handler, with no what(): line within 3 lines
    "terminate called after throwing an instance of 'c10::DistBackendError'",
    *[WARN] * 6,
    *[ITER.format(i, 8 * i) for i in range(3, 40)],
]
#: 1-based line number -> the kind of row it must give (every other row is an iteration)
WANT = {2: "rendezvous_error", 15: "nccl_error", 22: "python_exception"}


def _stamp(line_no: int) -> datetime:
    return T0 + timedelta(seconds=line_no - 1)


@pytest.mark.parametrize("source", ["joblog", "text", "-"])
@pytest.mark.parametrize("prefilter", ["0", "1"])
def test_late_rows_keep_their_own_lines_stamp(tmp_path: Path, source: str,
                                              prefilter: str) -> None:
    # kubectl logs --timestamps: an RFC 3339 stamp before every line, one second apart
    f = tmp_path / "slurm-77.out"
    f.write_text("".join(f"{_stamp(i + 1):%Y-%m-%dT%H:%M:%S}.000000000Z {b}\n"
                         for i, b in enumerate(BODY)), encoding="utf-8")
    rows = [json.loads(r) for r in _parse_all([str(f)], source, prefilter)[0][7]]  # type: ignore[index]
    late = {int(r["line_no"]): r for r in rows if r["kind"] != "iteration"}
    assert {n: r["kind"] for n, r in late.items()} == WANT
    for n, r in late.items():
        assert r["ts"] == str(_stamp(n)), (n, r)
        assert r["ts_flag"] == "exact"
    assert late[2]["rank"] == "0"
    assert sum(r["kind"] == "iteration" for r in rows) == 39
