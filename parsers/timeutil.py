"""Timestamp normalisation to UTC epoch microseconds (what the ``ts`` columns hold).

Rules (documented in the README, section "Time"):

* A stamp with a UTC offset or ``Z`` is exact (flag ``exact``).
* A stamp without a zone (Slurm's ``2024-05-01T12:00:00.123``, Python logging's
  ``2024-05-01 12:00:00,123``, ``dmesg -T``) is read in ``--tz`` (default UTC): ``assumed_tz``.
* A stamp without a year (RFC 3164 syslog ``May  1 12:00:00``, ``journalctl -o short``) gets
  the year of the file's mtime (or ``--year``, the year of the file's first such stamp); if the
  first stamp's month is after the mtime's month the file is taken to have started the year
  before; each time the month goes back by more than six (Dec -> Jan) the year advances by one,
  with or without ``--year`` (a month or two back is lines out of order): ``inferred_year``.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}

_ISO = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[T _](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?"
    r"\s?(Z|[+-]\d\d(?::?\d\d)?)?"
)


class TimeError(ValueError):
    """A timestamp that cannot be read."""


def get_tz(name: str | None) -> tzinfo:
    """``--tz`` value to a tzinfo: an IANA name (Europe/Berlin), UTC, or an offset +02:00."""
    if not name or name.upper() in ("UTC", "Z"):
        return UTC
    m = re.fullmatch(r"([+-])(\d\d):?(\d\d)", name)
    if m:
        sign = 1 if m.group(1) == "+" else -1
        from datetime import timezone

        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise TimeError(f"unknown time zone {name!r}: use an IANA name such as "
                        "Europe/Berlin, or an offset such as +02:00") from e


def to_us(dt: datetime) -> int:
    """Aware datetime to epoch microseconds."""
    d = dt - EPOCH
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def local_to_us(y: int, mo: int, d: int, h: int, mi: int, s: int, us: int, tz: tzinfo) -> int:
    return to_us(datetime(y, mo, d, h, mi, s, us, tzinfo=tz))


def _frac_us(frac: str | None) -> int:
    if not frac:
        return 0
    return int((frac + "000000")[:6])


def parse_iso(text: str, tz: tzinfo) -> tuple[int, str]:
    """An ISO-8601-like stamp (at the start of ``text``) -> (epoch us, flag)."""
    m = _ISO.match(text)
    if not m:
        raise TimeError(f"not an ISO timestamp: {text[:40]!r}")
    return iso_match_to_us(m, tz)


def iso_match_to_us(m: re.Match[str], tz: tzinfo) -> tuple[int, str]:
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    us = _frac_us(m.group(7))
    zone = m.group(8)
    if zone:
        if zone == "Z":
            z: tzinfo = UTC
        else:
            sign = 1 if zone[0] == "+" else -1
            digits = zone[1:].replace(":", "")
            hh, mm = int(digits[:2]), int(digits[2:4] or 0)
            from datetime import timezone

            z = timezone(sign * timedelta(hours=hh, minutes=mm))
        return local_to_us(y, mo, d, h, mi, s, us, z), "exact"
    return local_to_us(y, mo, d, h, mi, s, us, tz), "assumed_tz"


def later_fold_us(text: str, tz: tzinfo) -> int | None:
    """The second reading of a zone-less ISO stamp in the hour ``tz`` repeats when daylight
    saving ends (``fold=1``: the later instant), or None where the stamp has one reading."""
    m = _ISO.match(text)
    if not m or m.group(8):
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    dt = datetime(y, mo, d, h, mi, s, _frac_us(m.group(7)), tzinfo=tz)
    first, second = to_us(dt), to_us(dt.replace(fold=1))
    return second if second > first else None


class YearInference:
    """Year for year-less stamps, per file (see module docstring)."""

    def __init__(self, mtime: datetime | None, year: int | None) -> None:
        self.fixed = year
        ref = mtime or datetime.now(UTC)
        self.ref_year, self.ref_month = ref.year, ref.month
        self.year: int | None = year
        self.last_month = 0
        self.pinned: int | None = None  #: set by the prefiltered path: the line's year
        self.feb29 = 0  #: year-less Feb 29 stamps that fell in a year without one
        self.feb29_year = 0
        #: the file's latest stamp with a year so far (epoch us), where the dialect keeps one
        #: (job output): a year-less stamp then takes the year nearest it, not one guessed
        #: from the file's mtime (a job log of 2024 read in 2026)
        self.ref: Callable[[], int | None] | None = None

    def vector(self, months: Any) -> Any:
        """Years for a chunk's lines in order (month 0: the line has no year-less stamp; its
        year is 0), as ``year_for`` called on each stamped line would give; the state moves
        to the chunk's end."""
        import numpy as np

        m = np.asarray(months, dtype=np.int64)
        out = np.zeros(m.size, np.int64)
        has = np.flatnonzero(m > 0)
        if not has.size:
            return out
        seq = m[has]
        prev = np.concatenate(([self.last_month], seq[:-1]))
        if self.year is None:
            start = self.ref_year - 1 if seq[0] > self.ref_month else self.ref_year
            roll = np.concatenate(([0], (seq[1:] < seq[:-1] - 6).astype(np.int64)))
        else:
            start = self.year
            roll = (seq < prev - 6).astype(np.int64)
        ys = start + np.cumsum(roll)
        out[has] = ys
        self.year, self.last_month = int(ys[-1]), int(seq[-1])
        return out

    def year_for(self, month: int) -> int:
        if self.pinned is not None:
            return self.pinned
        at = self.ref() if self.ref is not None and self.fixed is None else None
        if at is not None:
            d = datetime.fromtimestamp(at / 1e6, UTC)
            return d.year - 1 if month > d.month + 6 else d.year + 1 if month < d.month - 6 \
                else d.year
        # --year (``fixed``) is the year of the file's first stamp; Dec -> Jan still advances
        if self.year is None:
            self.year = self.ref_year - 1 if month > self.ref_month else self.ref_year
        elif month < self.last_month - 6:  # Dec -> Jan; a month or two back is lines out of order
            self.year += 1
        self.last_month = month
        return self.year


def syslog_to_us(mon: str, day: int, hms: str, frac: str | None, tz: tzinfo,
                 years: YearInference) -> int:
    """RFC 3164 ``May  1 12:00:00`` (+ optional fraction) -> epoch us."""
    month = MONTHS.get(mon[:3].lower())
    if month is None:
        raise TimeError(f"not a month: {mon!r}")
    h, mi, s = (int(x) for x in hms.split(":"))
    return yearless_us(years, month, day, h, mi, s, _frac_us(frac), tz)


def yearless_us(years: YearInference, month: int, day: int, h: int, mi: int, s: int, us: int,
                tz: tzinfo) -> int:
    """A year-less stamp in the year ``years`` gives it. Feb 29 in a year without one (the
    year guessed from the file's date, a leap year's log read a year later) cannot be placed:
    it is counted (``years.feb29``, the file's note asks for ``--year``) and raises."""
    y = years.year_for(month)
    if month == 2 and day == 29 and not calendar.isleap(y):
        years.feb29 += 1
        years.feb29_year = y
        raise TimeError(f"Feb 29 in {y}, a year without one")
    return local_to_us(y, month, day, h, mi, s, us, tz)


def ctime_to_us(text: str, tz: tzinfo) -> int:
    """``Wed May  1 12:00:00 2024`` (dmesg -T, C ctime) -> epoch us."""
    parts = text.split()
    if len(parts) != 5:
        raise TimeError(f"not a ctime stamp: {text!r}")
    _, mon, day, hms, year = parts
    month = MONTHS.get(mon[:3].lower())
    if month is None:
        raise TimeError(f"not a month: {mon!r}")
    h, mi, s = (int(x) for x in hms.split(":"))
    return local_to_us(int(year), month, int(day), h, mi, s, 0, tz)


def us_to_iso(us: int) -> str:
    """Epoch us -> ``2024-05-01T12:00:00.123456Z`` (fraction dropped when zero)."""
    dt = EPOCH + timedelta(microseconds=us)
    if dt.microsecond:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")
