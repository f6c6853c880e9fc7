"""``fastrows.printable`` (the per-chunk printable-ASCII test) and the slurmctld envelope built
on it, against the regexes they replace."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest

from parsers import fastrows, slurm_fast
from parsers.fastrows import PRINTABLE, from_buffer, iso_us, printable
from parsers.reader import lines_series


def _regex(lines: pl.Series) -> np.ndarray:
    return np.asarray(lines.str.contains(PRINTABLE).fill_null(False).to_numpy(), bool)


# slurmctld lines (src/common/log.c: "[%s] %s" with LogTimeFormat iso8601_ms; Slurm 22.05.8 in
# sample_logs/real_formats/slurm) and what else a log holds: short lines, a tab, CRLF line ends,
# UTF-8, a DEL, an ESC of a coloured line.
PLAIN = ["[2024-05-01T00:00:04.292] _slurm_rpc_submit_batch_job: JobId=4000001 InitPrio=13830 "
         "usec=4150",
         "[2024-05-01T01:00:00.001] _job_complete: JobId=4000001 WEXITSTATUS 0",
         "[2024-05-01T01:00:04] _job_complete: JobId=4000006 cancelled by interactive user",
         "[2024-05-01T01:00:03.123456789] _job_complete: JobId=4000005 OOM failure",
         "", "x", "short line", "exactly12byt", "thirteen byte"]
ODD = ["a\tb", "[2024-05-01T01:00:05.000] sched: Allocate JobId=7 NodeList=nöde1 #CPUs=8",
       "tail\x7f", "\x1b[31merror\x1b[0m", "[2024-05-01T01:00:06.000] Node n1 now responding\r"]


def _chunk(lines: list[str]) -> pl.Series:
    return lines_series("".join(x + "\n" for x in lines).encode())


def test_a_printable_chunk_is_read_from_its_buffer() -> None:
    s = _chunk(PLAIN * 50)
    got = from_buffer(s)
    assert got is not None  # the numpy path, not the regex
    assert (got == _regex(s)).all() and got.all()


@pytest.mark.parametrize("odd", ODD)
def test_any_other_byte_sends_the_chunk_to_the_regex(odd: str) -> None:
    s = _chunk([*PLAIN, odd, *PLAIN])
    assert from_buffer(s) is None
    assert (printable(s) == _regex(s)).all()
    assert printable(s).all() == odd.endswith("\r")  # a CRLF line end is not the line's


def test_short_lines_are_tested_apart() -> None:
    """A Series not made by the reader: its short strings live in their views only, so the
    buffer can be printable while a short line is not."""
    s = pl.Series(["a long printable line of text, well over twelve bytes", "a\tb", "ok",
                   "é", None])
    assert (printable(s) == _regex(s)).all()
    s = pl.Series(["a long printable line of text, well over twelve bytes", "a\tb", "ok"])
    got = from_buffer(s)
    assert got is not None and got.tolist() == [True, False, True]


def test_random_chunks_agree_with_the_regex() -> None:
    rng = random.Random(7)
    for _ in range(200):
        pool = PLAIN + (ODD if rng.random() < 0.5 else [])
        lines = [rng.choice(pool)[: rng.randint(0, 90)] for _ in range(rng.randint(1, 60))]
        s = _chunk(lines)
        assert (printable(s) == _regex(s)).all(), lines


def _reference_envelope(lines: pl.Series, off: int) -> pl.DataFrame:
    """``slurm_fast._envelope`` as it was: ``_ENV``'s captures."""
    return (pl.DataFrame({"l": lines}).with_row_index("i")
            .with_columns(pl.col("l").str.extract_groups(slurm_fast._ENV).alias("g"))
            .unnest("g").rename({"1": "stamp", "2": "frac", "3": "msg"})
            .filter(pl.col("msg").is_not_null())
            .filter(~pl.col("msg").str.contains(slurm_fast._EMBEDDED))
            .with_columns(iso_us(pl.col("stamp"), pl.col("frac"), off).alias("ts"))
            .filter(pl.col("ts").is_not_null())
            .select("i", "ts", "msg"))


def test_envelope_equals_its_regex() -> None:
    from tests.parsers.test_fast_paths import CTLD

    extra = ["[2024-05-01T01:00:07.5] msg with ] bracket] inside",
             "[2024-05-01T01:00:07.] no fraction digits", "[2024-05-01T01:00:07]",
             "[2024-05-01T01:00:07] ", "[2024-05-01T01:00:07.1234567890] ten digits",
             "[2024-13-01T01:00:07] month 13", " [2024-05-01T01:00:07] leading space",
             # every length of fraction (bracket_iso_us scales the first six digits), and
             # stamps before and at the epoch
             *(f"[2024-05-01T01:00:07.{'987654321'[:n]}] {n} digits" for n in range(1, 10)),
             "[1969-12-31T23:59:59.999999] before the epoch", "[1970-01-01T00:00:00.5] epoch"]
    lines = CTLD.splitlines() + extra
    for chunk in (_chunk(lines), _chunk([x for x in lines if x.isascii()]),
                  _chunk([x for x in lines if x.isascii() and x.isprintable()]),
                  pl.Series(lines)):
        for off in (0, 7_200_000_000):
            got = slurm_fast._envelope(chunk, off)
            assert got.equals(_reference_envelope(chunk, off))
            assert got.height >= 20
    assert fastrows.from_buffer(_chunk([x for x in lines if x.isascii() and x.isprintable()]))\
        is not None


@pytest.mark.parametrize("size", [0, 1, 65535, 65536, 65537, 3 * 65536 + 17])
def test_only_printable_blocks(size: int) -> None:
    """``only_printable`` reads its buffer in blocks: one bad byte anywhere (first, last,
    either side of a block's edge) is found, and newlines anywhere are allowed."""
    rng = np.random.default_rng(size)
    clean = rng.integers(32, 127, size, dtype=np.uint8)
    clean[rng.integers(0, max(size, 1), size // 50)] = 10
    assert fastrows.only_printable(clean)
    for pos in (0, size - 1, 65535, 65536, size // 2):
        if 0 <= pos < size:
            for bad in (0, 9, 13, 31, 127, 128, 255):
                a = clean.copy()
                a[pos] = bad
                assert not fastrows.only_printable(a), (pos, bad)
