"""Durations as people type them and as they read them.

Typed (``parse_duration``): a number with a unit, or several (``90s``, ``15m``, ``15min``,
``2h``, ``1d``, ``1h30m``, ``1h 30min``, ``2.5h``, ``250ms``; units ms, s/sec/second(s),
m/min/minute(s), h/hr/hour(s), d/day(s), any case); a bare number is seconds; clock form
``H:MM:SS``, ``MM:SS`` or Slurm's ``D-HH:MM:SS`` (``1:30:00`` is 90 minutes). Read
(``human``): ``3d 04h``, ``1h 12m``, ``42.0 s``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

_UNITS = {
    "ms": 0.001, "msec": 0.001,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
}
# longest unit first, so that "min" is not read as "m" followed by "in"
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*("
                   + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")?(?![a-z])",
                   re.IGNORECASE)
_CLOCK = re.compile(r"(?:(\d+)-)?(\d+):(\d{1,2})(?::(\d{1,2}(?:\.\d+)?))?")
HINT = "write e.g. 90s, 15m, 15min, 2h, 1h30m, 1d or 1:30:00"


class DurationError(ValueError):
    pass


def parse_duration(text: str) -> float:
    """Seconds in ``text`` (see the module docstring); a bare number is seconds."""
    t = text.strip()
    if not t:
        raise DurationError(f"empty duration; {HINT}")
    clock = _CLOCK.fullmatch(t)
    if clock:
        days, a, b, c = clock.groups()
        if c is None:  # MM:SS
            h, m, sec = 0.0, float(a), float(b)
        else:  # [D-]H:MM:SS
            h, m, sec = float(a), float(b), float(c)
        if (m >= 60 and c is not None) or sec >= 60:
            raise DurationError(f"cannot read duration {text!r}: minutes and seconds must be "
                                f"below 60; {HINT}")
        return float(days or 0) * 86400 + h * 3600 + m * 60 + sec
    pos, total, parts = 0, 0.0, 0
    compact = re.sub(r"\s+", " ", t)
    while pos < len(compact):
        if compact[pos] == " ":
            pos += 1
            continue
        part = _PART.match(compact, pos)
        if not part:
            raise DurationError(f"cannot read duration {text!r}; {HINT}")
        unit = (part.group(2) or "").lower()
        if not unit and (parts or part.end() < len(compact)):
            raise DurationError(f"cannot read duration {text!r}: every part needs a unit when "
                                f"there are several; {HINT}")
        total += float(part.group(1)) * _UNITS.get(unit, 1.0)
        pos, parts = part.end(), parts + 1
    return total


def known_sum(values: Mapping[str, float | None]) -> float:
    """Sum of the components that could be measured (a None is unknown, not 0): for a run
    with no progress lines, the measured ones alone make T_obs."""
    return float(sum(v for v in values.values() if v is not None))


def human(seconds: float | None) -> str:
    """Compact human duration: ``3d 04h``, ``5h 07m``, ``12m 05s``, ``42.0 s``."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    neg = seconds < 0
    s = abs(seconds)
    if s < 60:
        out = f"{s:.1f} s"
    elif s < 3600:
        out = f"{int(s // 60)}m {int(s % 60):02d}s"
    elif s < 86400:
        out = f"{int(s // 3600)}h {int(s % 3600 // 60):02d}m"
    else:
        out = f"{int(s // 86400)}d {int(s % 86400 // 3600):02d}h"
    return "-" + out if neg else out
