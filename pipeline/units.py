"""Durations as people type them (``90s``, ``15m``, ``2h``, ``1d``, ``1h30m``, ``2.5``) and as
they read them (``3d 04h``, ``1h 12m``, ``42 s``)."""

from __future__ import annotations

import math
import re

_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)?", re.IGNORECASE)
_UNIT = {"ms": 0.001, "s": 1.0, "": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


class DurationError(ValueError):
    pass


def parse_duration(text: str) -> float:
    """Seconds in ``text``; a bare number is seconds."""
    t = text.strip().replace(" ", "")
    if not t:
        raise DurationError("empty duration; write e.g. 90s, 15m, 2h or 1d")
    pos, total = 0, 0.0
    while pos < len(t):
        m = _PART.match(t, pos)
        if not m:
            raise DurationError(f"cannot read duration {text!r}; write e.g. 90s, 15m, 2h, 1d "
                                "or 1h30m")
        total += float(m.group(1)) * _UNIT[(m.group(2) or "").lower()]
        pos = m.end()
    return total


def human(seconds: float) -> str:
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
