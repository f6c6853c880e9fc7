"""``parsers.dstfold``: the second pass of a repeated local hour told by line order."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import numpy as np

from parsers.dstfold import FoldFix, repeats
from parsers.slurm_sacct_fields import elapsed_s, fold_by_elapsed
from parsers.timeutil import get_tz, parse_iso

BERLIN = ZoneInfo("Europe/Berlin")
H = 3_600_000_000


def _us(text: str) -> int:
    return parse_iso(text, BERLIN)[0]  # the first pass, as every parser reads it


def test_the_repeated_hours_of_a_year() -> None:
    (first, end, change), = repeats(BERLIN, 2024)
    assert datetime.fromtimestamp(first / 1e6, UTC) == datetime(2024, 10, 27, 0, tzinfo=UTC)
    assert (end - first, change) == (H, H)
    # Lord Howe goes back by 30 minutes; a zone without daylight saving never repeats
    (lo, hi, ch), = repeats(ZoneInfo("Australia/Lord_Howe"), 2024)
    assert hi - lo == ch == H // 2
    assert repeats(ZoneInfo("Asia/Tokyo"), 2024) == ()
    assert FoldFix.for_tz(ZoneInfo("Asia/Tokyo")) is None and FoldFix.for_tz(get_tz("+02:00")) \
        is None and FoldFix.for_tz(UTC) is None


def _fix(fix: FoldFix, stamps: list[str], lines: list[int]) -> list[int]:
    ts = np.array([_us(s) for s in stamps], np.int64)
    add = fix.shifts(ts, np.ones(len(ts), bool), np.array(lines, np.int64))
    return [int(x // 60_000_000) for x in (add if add is not None else np.zeros(len(ts)))]


def test_the_second_pass_begins_where_the_stamps_go_back_an_hour() -> None:
    stamps = ["2024-10-27 01:59:30", "2024-10-27 02:30:00", "2024-10-27 02:59:50",
              "2024-10-27 02:00:10", "2024-10-27 02:40:00", "2024-10-27 03:00:05"]
    assert _fix(FoldFix(BERLIN), stamps, [1, 2, 3, 4, 5, 6]) == [0, 0, 0, 60, 60, 0]
    # over two chunks, and a block's row (line 3) coming after the chunk of lines 4-5
    fix = FoldFix(BERLIN)
    assert _fix(fix, stamps[:2], [1, 2]) == [0, 0]
    assert _fix(fix, stamps[3:5], [4, 5]) == [60, 60]  # 02:00 after 02:30: went back
    fix = FoldFix(BERLIN)
    assert _fix(fix, stamps[:3], [1, 2, 3]) == [0, 0, 0]
    assert _fix(fix, stamps[3:5], [4, 5]) == [60, 60]
    assert _fix(fix, ["2024-10-27 02:41:00", "2024-10-27 02:50:00"], [7, 2]) == [60, 0]


def test_lines_a_little_out_of_order_are_not_a_second_pass() -> None:
    stamps = ["2024-10-27 02:10:00", "2024-10-27 02:09:30", "2024-10-27 02:20:00"]
    assert _fix(FoldFix(BERLIN), stamps, [1, 2, 3]) == [0, 0, 0]


def test_sacct_end_in_the_second_pass_by_elapsed() -> None:
    assert [elapsed_s(t) for t in ("00:49:38", "1-02:03:04", "INVALID", "", None)] == [
        2978, 93784, None, None, None]
    start, end = _us("2024-10-27T02:49:07"), _us("2024-10-27T02:38:45")
    got = fold_by_elapsed(start, end, "2024-10-27T02:49:07", "2024-10-27T02:38:45",
                          "00:49:38", BERLIN)
    assert got == (start, end + H)
    # a job that started in the second pass and ended after the hour
    s2, e2 = _us("2024-10-27T02:10:00"), _us("2024-10-27T04:10:00")
    assert fold_by_elapsed(s2, e2, "2024-10-27T02:10:00", "2024-10-27T04:10:00", "02:00:00",
                           BERLIN) == (s2 + H, e2)
    # Elapsed agreeing already, or absent: as read
    assert fold_by_elapsed(start, end + H, None, None, "00:49:38", BERLIN) == (start, end + H)
    assert fold_by_elapsed(start, end, "2024-10-27T02:49:07", "2024-10-27T02:38:45", None,
                           BERLIN) == (start, end)
