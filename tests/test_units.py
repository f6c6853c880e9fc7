"""Durations as people type them (pipeline.units.parse_duration) and read them (human)."""

from __future__ import annotations

import pytest

from pipeline.units import DurationError, human, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90), ("90", 90), ("2.5", 2.5), ("15m", 900), ("15min", 900), ("30min", 1800),
    ("15 min", 900), ("15 minutes", 900), ("2h", 7200), ("2 hours", 7200), ("1.5h", 5400),
    ("1d", 86400), ("3 days", 3 * 86400), ("250ms", 0.25), ("1h30m", 5400),
    ("1h 30min", 5400), ("1H30M", 5400), ("1d2h3m4s", 93784), ("1:30:00", 5400),
    ("0:00:45", 45), ("05:30", 330), ("90:00", 5400), ("1-02:00:00", 93600),
    ("2-0:0:1", 172801), (".5h", 1800),
])
def test_typed_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("text", "why"), [
    ("", "empty duration"), ("soon", "cannot read"), ("1h30", "every part needs a unit"),
    ("-5s", "cannot read"), ("5 fortnights", "cannot read"), ("1:75:00", "below 60"),
    ("1:30:75", "below 60"), ("15mins x", "cannot read"), ("3 4", "every part needs a unit"),
])
def test_what_cannot_be_read_says_how_to_write_it(text: str, why: str) -> None:
    with pytest.raises(DurationError, match=why) as e:
        parse_duration(text)
    assert "1h30m" in str(e.value) and "1:30:00" in str(e.value)


def test_human() -> None:
    assert [human(x) for x in (42.04, 725, 18_420, 273_600, -60)] == [
        "42.0 s", "12m 05s", "5h 07m", "3d 04h", "-1m 00s"]
    assert human(float("nan")) == "-"
