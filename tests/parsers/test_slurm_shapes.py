"""slurmctld chunks read per line shape (parsers/slurm_shapes.py) against the same patterns
run on every line (``slurm_fast._per_line``): the same rows, in the same order, and the same
submit lines -- on the real-format lines of test_fast_paths and on stamps, codes and
envelopes at the edges of what the patterns allow."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from parsers import dedupe, slurm_fast, slurm_shapes
from parsers.fastrows import printable
from tests.parsers.test_fast_paths import CTLD

# slurmctld's LogTimeFormat=iso8601_ms envelope (src/common/log.c) with the wordings cited in
# test_fast_paths, at the edges: stamps the exact envelope refuses though their shape is
# accepted (year 0999 or 3024, second 60, hour 24), a date that does not exist, an exit code of
# 15 and of 16 digits, codes with spaces around or nothing but spaces, a glued second stamp
EDGES = """\
[0999-05-01T01:00:00.000] sched: Allocate JobId=1 NodeList=n1 #CPUs=8 Partition=gpu
[3024-05-01T01:00:00.000] sched: Allocate JobId=2 NodeList=n1 #CPUs=8 Partition=gpu
[2024-05-01T01:00:60.000] _job_complete: JobId=3 done
[2024-05-01T24:00:00.000] _job_complete: JobId=4 done
[2023-02-29T01:00:00.000] _job_complete: JobId=5 done
[2024-02-29T01:00:00.000] _job_complete: JobId=6 WEXITSTATUS 123456789012345
[2024-02-29T01:00:00.000] _job_complete: JobId=7 WEXITSTATUS 1234567890123456
[2024-02-29T01:00:00.1] _job_complete: JobId=8    done 7   \n\
[2024-02-29T01:00:00.12] _job_complete: JobId=9    \n\
[2024-02-29T01:00:00.123456789] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=10 uid 0
[2024-02-29T01:00:00] Time limit exhausted for JobId=11
[2024-02-29T01:00:00.000] Time limit exhausted for JobId=12 [2024-02-29T01:00:00.000] x
[2024-02-29T01:00:00.000] sched/backfill: _start_job: Started JobId=13 in gpu on n[1-2] x
[2024-02-29T01:00:00.000] _slurm_rpc_submit_batch_job: JobId=14 InitPrio=0 usec=0
[2024-02-29T01:00:00.000] _slurm_rpc_submit_batch_job: JobId=15 InitPrio=0 usec=0 x
"""


def test_the_patterns_read_on_shapes_cannot_tell_digits_apart() -> None:
    for rx in (slurm_shapes.SHAPE_PREFIX, slurm_shapes._EMBEDDED, slurm_shapes._SUBMIT,
               slurm_shapes._NUM, *(f[1] for f in slurm_shapes.FAMILIES)):
        assert dedupe.digit_blind(rx.pattern), rx.pattern
    assert not dedupe.digit_blind(slurm_shapes.ENVELOPE)  # hence tested per line


@pytest.mark.parametrize("offset_h", [0, 2, -7])
def test_shapes_give_what_every_line_gives(offset_h: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm_shapes, "MIN_LINES", 0)
    lines = pl.Series((CTLD + EDGES).splitlines() * 5)
    ok = printable(lines)
    off = offset_h * 3_600_000_000
    got = slurm_shapes.ctld_shaped(lines, ok, off)
    assert got is not None
    rows, submit, shapes = got
    want_rows, want_submit = slurm_fast._per_line(lines, ok, off)
    assert rows.equals(want_rows)
    assert np.array_equal(submit, want_submit)
    # the submit lines' shapes, taken from the chunk's: each line's key as read from them
    want = dedupe.shapes(lines.gather(submit))
    assert shapes.keys.gather(shapes.codes).to_list() == want.keys.gather(want.codes).to_list()
    assert sorted(shapes.keys.to_list()) == sorted(want.keys.to_list())
    assert rows.height == 17 * 5 and submit.size == 3 * 5  # 11 + 6 rows, 2 + 1 submits
    taken = set(rows.get_column("job_id").to_list())
    assert {"6", "8", "9", "10", "11", "13"} <= taken  # edges the patterns accept
    assert not {"1", "2", "3", "4", "5", "7", "12"} & taken  # and those they refuse
