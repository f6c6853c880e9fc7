"""journalctl's ``-o short-unix`` and ``-o short-full`` line heads (the prefix layer's).

systemd src/shared/logs-show.c, ``output_timestamp_realtime``:

* ``short-unix``: ``"%10"PRI_USEC".%06"PRI_USEC`` -- seconds and microseconds since the epoch
  (UTC by definition): ``1714522470.000000 node003 kernel: NVRM: Xid ...``
* ``short-full``: ``format_timestamp_style(..., TIMESTAMP_PRETTY)`` -- ``%a %Y-%m-%d %H:%M:%S``
  and the zone's abbreviation (``--utc``: ``UTC``): ``Wed 2024-05-01 00:14:30 UTC node003
  kernel: ...``. An abbreviation other than UTC/GMT or a numeric ``+03`` is the printing
  machine's local zone: such a stamp is read in ``--tz`` (``assumed_tz``).

Then the host and the program tag, as ``-o short``. Without these the stamps were not read:
a node's Xid lines had no time, so no interruption was traced to them (fault probe H3).

Also the whole-line JSON forms: ``journalctl -o json`` and Docker's json-file driver.
"""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, timedelta, timezone, tzinfo
from typing import Any

from parsers.kernel_envelope import NO_HOST
from parsers.timeutil import TimeError, iso_match_to_us, local_to_us

#: an ISO stamp as Docker writes ``time`` (RFC 3339 with nanoseconds)
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?"
                  r"\s?(Z|[+-]\d\d(?::?\d\d)?)?")

UNIX = re.compile(r" ?(\d{9,11})\.(\d{6}) ")
FULL = re.compile(r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)"
                  r"(?:\.(\d{1,6}))? (UTC|GMT|[A-Z]{2,5}|[+-]\d\d(?:\d\d)?) ")


def unix_stamp(m: re.Match[str]) -> int:
    return int(m.group(1)) * 1_000_000 + int(m.group(2))


def full_stamp(m: re.Match[str], tz: tzinfo) -> tuple[int, str]:
    """(epoch microseconds, ts_flag) of a ``FULL`` match."""
    zone = m.group(8)
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    us = int((m.group(7) + "000000")[:6]) if m.group(7) else 0
    if zone in ("UTC", "GMT"):
        return local_to_us(y, mo, d, h, mi, s, us, UTC), "exact"
    if zone[0] in "+-":
        off = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5] or 0))
        return local_to_us(y, mo, d, h, mi, s, us,
                           timezone(off if zone[0] == "+" else -off)), "exact"
    return local_to_us(y, mo, d, h, mi, s, us, tz), "assumed_tz"


def head(text: str, pos: int, tz: tzinfo) -> tuple[int, int, str] | None:
    """(end of the stamp, epoch microseconds, ts_flag) of a short-unix or short-full stamp at
    ``pos``, or None."""
    c = text[pos: pos + 1]
    if c.isdigit() or c == " ":
        u = UNIX.match(text, pos)
        return None if u is None else (u.end(), unix_stamp(u), "exact")
    f = FULL.match(text, pos)
    if f is None:
        return None
    try:
        return (f.end(), *full_stamp(f, tz))
    except (ValueError, OverflowError):
        return None


def journal_json(text: str, p: Any) -> str | None:
    """``journalctl -o json``: one JSON object a line; the message and what it says of itself."""
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return None
    msg = doc.get("MESSAGE") if isinstance(doc, dict) else None
    if isinstance(msg, list):  # non-UTF-8 messages are arrays of bytes
        msg = bytes(b for b in msg if isinstance(b, int) and 0 <= b < 256).decode(
            "utf-8", "replace")
    if not isinstance(msg, str):
        return None
    with contextlib.suppress(TypeError, ValueError):
        p.stamp(int(doc.get("__REALTIME_TIMESTAMP")), "exact")
    host = doc.get("_HOSTNAME")
    if isinstance(host, str) and p.host is None and host not in NO_HOST:
        p.host = host
    prog = doc.get("SYSLOG_IDENTIFIER") or doc.get("_COMM")
    if isinstance(prog, str):
        p.program = prog
    p.fmt = "journal-json"
    return msg


def docker_json(text: str, tz: tzinfo, p: Any) -> str | None:
    """Docker's json-file log driver: ``{"log":"msg\\n","stream":"stderr","time":"..."}``."""
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return None
    msg = doc.get("log") if isinstance(doc, dict) else None
    if not isinstance(msg, str):
        return None
    t = doc.get("time")
    if isinstance(t, str):
        m = _ISO.match(t)
        if m is not None:
            with contextlib.suppress(TimeError, ValueError, OverflowError):
                p.stamp(*iso_match_to_us(m, tz))
    p.fmt = "docker-json"
    return msg.rstrip("\n")
