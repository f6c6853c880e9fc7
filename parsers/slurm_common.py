"""Shared pieces of the Slurm daemon-log parsers: the line envelope and job-id normalisation.

Envelopes seen in real Slurm logs (20.11 .. 24.x):

* the daemon's own log file (``SlurmctldLogFile`` / ``SlurmdLogFile``), ``LogTimeFormat``
  ``iso8601_ms`` (default) / ``iso8601``: ``[2024-05-01T12:00:00.123] msg`` -- no zone, so
  ``--tz`` is applied (flag ``assumed_tz``); ``rfc5424_ms`` / ``rfc5424`` add the offset
  (``[2024-05-01T12:00:00.123+02:00]``, flag ``exact``);
* ``LogTimeFormat=short``: ``[Oct 23 07:03:53] msg`` (no year: inferred as for syslog);
* syslog / journal: ``Oct 10 09:39:08 server2 slurmctld[262298]: msg`` (RFC 3164, year
  inferred) or with an ISO stamp instead of the BSD one (rsyslog high precision, ``journalctl
  -o short-iso``). When the daemon runs with ``-D`` under systemd its stderr lines keep their own
  ``[ISO]`` stamp after the tag (``slurmctld[262298]: [2025-10-10T09:39:08.507] debug3: ...``);
  that inner stamp is preferred (it has the year and milliseconds). Stderr lines may also carry
  a ``slurmctld: `` program prefix, which is removed.

slurmstepd writes into the slurmd log with a ``[<job>.<step>] `` prefix after the stamp
(``[5.batch]``, ``[1.0]``, ``[1.extern]``); ``split_step_prefix`` takes it off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import tzinfo

from parsers.base import head_lines
from parsers.timeutil import TimeError, YearInference, iso_match_to_us, syslog_to_us

_BRACKET = re.compile(
    r"^\[(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d(?::?\d\d)?)?\] ?"
)
_SYSLOG = re.compile(
    r"^([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d\d:\d\d:\d\d)(?:\.(\d+))? (\S+) "
    r"(slurmctld|slurmd|slurmstepd|slurmdbd)(?:\[\d+\])?: ?"
)
_ISO_SYSLOG = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d(?::?\d\d)?)? "
    r"(\S+) (slurmctld|slurmd|slurmstepd|slurmdbd)(?:\[\d+\])?: ?"
)
_PROG = re.compile(r"^(?:slurmctld|slurmd|slurmstepd-?\S*): ")
#: LogTimeFormat=short: ``[Oct 23 07:03:53] msg`` (no year)
_SHORT = re.compile(r"^\[([A-Z][a-z]{2}) ( \d|\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?\] ?")
_STEP = re.compile(r"^\[(\d+(?:_\d+)?(?:\+\d+)?)\.(\w+)\] ")
_D = "slurmctld|slurmd|slurmstepd|slurmdbd"
#: the envelopes above as one vectorised (Rust regex) test, for the prefiltered path
V_ENVELOPE = (r"^(?:\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d(?::?\d\d)?)?\]"
              r"|\[[A-Z][a-z]{2} (?: \d|\d\d) \d\d:\d\d:\d\d(?:\.\d+)?\]"
              r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}\d{1,2} \d\d:\d\d:\d\d"
              r"(?:\.\d+)? \S+ (?:" + _D + r")(?:\[\d+\])?:"
              r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d(?::?\d\d)?)? "
              r"\S+ (?:" + _D + r")(?:\[\d+\])?:)")
#: ``%pJ`` as Slurm prints it: ``JobId=12``, ``JobId=12_3(15)`` (array task; raw id in
#: parentheses), ``JobId=12_*`` / ``JobId=12_[1-5]`` (pending array), ``JobId=12+0(12)`` (het)
JOBID = r"Job(?:Id|ID)=(\d+(?:_(?:\d+|\*|\[[^\]]*\]))?(?:\+\d+)?)(?:\((\d+)\))?"
_LEVEL = re.compile(r"^(?:error|fatal|debug\d?|verbose|warning): ")


@dataclass(slots=True)
class Envelope:
    """A Slurm log line split into its parts."""

    ts: int | None
    ts_flag: str
    host: str | None  #: syslog host field, when the line came through syslog
    message: str  #: text after the stamp (and program prefix), level prefix kept


def parse_envelope(text: str, tz: tzinfo, years: YearInference) -> Envelope | None:
    """Split a Slurm daemon log line; None when the line has no known envelope."""
    m = _BRACKET.match(text)
    if m:
        try:
            ts, flag = iso_match_to_us(m, tz)
        except (ValueError, TimeError):
            return None
        return Envelope(ts, flag, None, _strip_prog(text[m.end():]))
    sh = _SHORT.match(text)
    if sh:
        try:
            ts = syslog_to_us(sh.group(1), int(sh.group(2)), sh.group(3), sh.group(4), tz, years)
        except (ValueError, TimeError):
            return None
        return Envelope(ts, "inferred_year", None, _strip_prog(text[sh.end():]))
    host: str | None
    if text[:1].isdigit():
        m = _ISO_SYSLOG.match(text)
        if not m:
            return None
        try:
            ts, flag = iso_match_to_us(m, tz)
        except (ValueError, TimeError):
            return None
        host, rest = m.group(9), text[m.end():]
    else:
        m = _SYSLOG.match(text)
        if not m:
            return None
        try:
            ts = syslog_to_us(m.group(1), int(m.group(2)), m.group(3), m.group(4), tz, years)
        except (ValueError, TimeError):
            return None
        flag, host, rest = "inferred_year", m.group(5), text[m.end():]
    rest = _strip_prog(rest)
    inner = _BRACKET.match(rest)
    if inner:
        try:
            ts, flag = iso_match_to_us(inner, tz)
            rest = rest[inner.end():]
        except (ValueError, TimeError):
            pass
    return Envelope(ts, flag, host, rest)


def _strip_prog(msg: str) -> str:
    if msg.startswith("slurm"):
        m = _PROG.match(msg)
        if m:
            return msg[m.end():]
    return msg


def split_step_prefix(msg: str) -> tuple[str | None, str | None, str]:
    """``[5.batch] done with job`` -> ("5", "batch", "done with job")."""
    if msg.startswith("["):
        m = _STEP.match(msg)
        if m:
            return m.group(1), m.group(2), msg[m.end():]
    return None, None, msg


def strip_level(msg: str) -> str:
    """``error: Nodes n3 not responding`` -> ``Nodes n3 not responding``."""
    m = _LEVEL.match(msg)
    return msg[m.end():] if m else msg


def looks_like_slurm_log(head: str) -> bool:
    """True when the first non-empty line has a Slurm daemon envelope."""
    for line in head_lines(head, 20):
        if not line.strip():
            continue
        return bool(_BRACKET.match(line) or _SYSLOG.match(line) or _ISO_SYSLOG.match(line)
                    or _SHORT.match(line))
    return False
