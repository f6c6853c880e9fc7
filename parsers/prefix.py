"""The prefix layer: peel the wrappers off any log line, whatever file it sits in.

A line as it reaches a user is a message inside layers added by whoever carried it: syslog or
the journal, ``dmesg``, ``kubectl logs --timestamps``, ``srun --label``, torchrun, Ray, Python
logging, glog. ``peel`` removes the layers it knows, outermost first, and reports what they
said (time, host, program, pid, rank, level) and the message that is left. It degrades
gracefully: a prefix it does not know stays part of the message, and the message layer
(``parsers.message``), which searches rather than anchors, still finds the signal in it.

Layers (each checked against the program that writes it):

* syslog RFC 3164 ``Apr  5 21:29:39 host prog[pid]: `` (optionally ``<PRI>``), journalctl
  ``-o short`` (``Apr 05 ...``), ``-o short-precise`` (fraction), ``-o short-iso`` /
  rsyslog RFC 3339 ``2024-04-05T21:29:39.123456+00:00 host prog[pid]: ``, RFC 5424
  ``<4>1 2024-04-05T21:29:39Z host prog pid - - msg``; the host ``localhost``/``(none)``/``-``
  counts as none; ``journalctl --no-hostname`` (no host field).
* A bare program tag ``kernel: `` / ``slurmctld[123]: `` at the start of a pasted line.
* ``dmesg``: raw ``[12345.678901] `` (uptime), ``-T`` ``[Fri Apr  5 21:29:39 2024] ``,
  ``-H``/``--reltime`` ``[Apr 5 21:29] `` and ``[  +0.000316] `` (relative: no time),
  ``-x`` ``kern  :err   : `` (facility and level).
* ``kubectl logs --timestamps`` / ``ts`` / Python ``asctime`` ISO stamps; Slurm daemon
  ``[2024-04-05T21:29:39.123] ``; bracketed ``[2024-04-05 21:29:39]`` (Megatron, NCCL);
  DeepSpeed ``[ts] [LEVEL] [file:line:func] ``; HF ``[LEVEL|file:line] ts >> ``.
* ``pdsh`` / ``clush`` (and DeepSpeed's multi-node runner, which uses pdsh) ``node0025: ``:
  each line of the remote command's output behind the host's name and a colon (pdsh
  src/pdsh/dsh.c; pshbak(1): "each line is prefixed by a hostname followed by a colon"): the
  host of a node's log line (dmesg, syslog, journal) that names none itself
  (``pdsh -w ... dmesg``); not of job output (``rank3: ...`` is no host).
* ``srun --label`` ``  3: ``; torchrun ``[default3]:`` / ``[rank3]:``; Ray
  ``(RayWorker pid=1234) `` / ``(pid=1234, ip=10.0.0.1) ``; slurmstepd ``[1234.0] ``.
* Python logging ``LEVEL:logger:`` and glog ``E1206 18:44:12.715588  1234 file.cc:56] ``.
* Container logs: CRI (``2024-04-05T21:29:39.123456789Z stderr F msg``, the files under
  /var/log/pods), Docker's json-file ``{"log":"msg\\n","stream":"stderr","time":"..."}``,
  ``journalctl -o json`` (``MESSAGE``, ``__REALTIME_TIMESTAMP``, ``_HOSTNAME``); /dev/kmsg
  records ``6,1234,5678901,-;msg``; talosctl dmesg; a quoted paste's ``> ``.

Time stamps: the outermost one wins (a collector's stamp is written when the line is produced);
stamps without a zone are read in ``--tz`` (``assumed_tz``), year-less ones get their year
from ``YearInference`` (``inferred_year``), dmesg uptimes set ``uptime_s`` (``ts`` stays null).
"""

from __future__ import annotations

import contextlib
import re
from datetime import tzinfo

from parsers import journal_heads
from parsers.joblog_prefix import KUBECTL_PREFIX, MPIRUN_CTIME, MPIRUN_TAG, PDSH, ctime_stamp
from parsers.joblog_prefix import RAY as _RAY
from parsers.kernel_envelope import NO_HOST
from parsers.timeutil import (
    MONTHS,
    TimeError,
    YearInference,
    ctime_to_us,
    iso_match_to_us,
    local_to_us,
    yearless_us,
)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PRI = re.compile(r"<(\d{1,3})>")
_SHORT = re.compile(r"([A-Z][a-z]{2}) ( \d|\d\d?) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))? ")
_ISO = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d(?::?\d\d)?)?"
    r"(?: - (?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) - )?| >> |[ \t]|$)")
_R5424 = re.compile(r"1 (\S+) (\S+) (\S+) (\S+) (\S+) (?:-|(?:\[.*?\])+) ?")
_TAG = re.compile(r"([A-Za-z][\w.\-/]*)(?:\[(\d+)\])?: ")
_HOST_TAG = re.compile(r"([^\s:\[\]]+) ([A-Za-z(][\w.\-/()]*)(?:\[(\d+)\])?: ?")
_DMESG_RAW = re.compile(r"\[\s*(\d+\.\d+)\](?:\[\s*[TC]\d+\])? ?")
_DMESG_T = re.compile(r"\[((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d "
                      r"\d\d:\d\d:\d\d \d{4})\] ?")
_DMESG_REL = re.compile(r"\[\s*[+-]\d+\.\d+\] ?|\[[A-Z][a-z]{2} ?\d{1,2} \d\d:\d\d\] ?")
_DMESG_X = re.compile(r"(kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|"
                      r"local\d) *:(emerg|alert|crit|err|warn|notice|info|debug) *: ")
_BRACKET = re.compile(
    r" *\[(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?\] ?")
_DEEPSPEED = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] \[([A-Z]+)\] \[[^\]\s]+\] ")
_HF = re.compile(r"\[([A-Z]+)\|[^\]\s]+\] (\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d),(\d{3}) >> ")
_SRUN = re.compile(r" *(\d{1,7}): ")
_TORCHRUN = re.compile(r"\[(?:default|rank)(\d{1,7})\]: ?")

_STEP = re.compile(r"\[(\d+(?:_\d+)?(?:\+\d+)?)\.(\w+)\] ")
_PYLOG = re.compile(r"(DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:")
_GLOG = re.compile(r"([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9})\s+\d+ [^\s\]]+:\d+\] ")
_CRI = re.compile(r"(?:stdout|stderr) [FP] ")  #: kubelet CRI log line: stream and full/partial tag
_QUOTE = re.compile(r"(?:> ?)+")  #: a quoted paste (mail, GitHub): ``> [Mon May 12 ...] ...``
#: /dev/kmsg records: ``prio,seq,usec,flags[,...];message`` (Documentation/ABI/testing/dev-kmsg)
_KMSG = re.compile(r"(\d{1,3}),(\d+),(\d+),[^;]{0,20};")
#: talosctl dmesg: ``10.5.0.2: kern: warning: [2024-05-01T12:00:00.123456789Z]: ``
_TALOS = re.compile(r"(?:[\w.:\-]+: )?(?:kern|user|daemon|auth|syslog): *\w+: "
                    r"\[(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
                    r"(Z|[+-]\d\d:?\d\d)?\]: ")
_KNOWN_PROGRAMS = ("kernel", "slurmctld", "slurmd", "slurmstepd", "slurmdbd", "kubelet",
                   "nv-fabricmanager", "nvidia-persistenced", "containerd", "dockerd",
                   "systemd", "sshd", "CRON", "cron")
_NO_HOST = NO_HOST
_LEVELS = {"err": "ERROR", "warn": "WARNING", "crit": "CRITICAL", "alert": "CRITICAL",
           "emerg": "CRITICAL", "notice": "INFO", "info": "INFO", "debug": "DEBUG"}


class Peeled:
    """What the prefixes of one line said, and the message left (a reusable record)."""

    __slots__ = ("flag", "fmt", "host", "level", "msg", "pid", "program", "rank", "relay",
                 "ts", "uptime_s")

    def __init__(self) -> None:
        self.reset("")

    def reset(self, msg: str) -> None:
        self.ts: int | None = None
        self.flag: str | None = None
        self.uptime_s: float | None = None
        self.host: str | None = None
        self.program: str | None = None
        self.pid: int | None = None
        self.rank: int | None = None
        self.level: str | None = None
        self.fmt: str | None = None  #: the outermost wrapper recognised
        #: the host a parallel shell labelled the line with (``pdsh``): ``host`` if the line
        #: is a node's log line that names none itself (``_node_line``; a syslog line's own
        #: host field is the node that logged it, the label may be a log server's)
        self.relay: str | None = None
        self.msg = msg

    def stamp(self, ts: int | None, flag: str) -> None:
        if ts is not None and self.ts is None:
            self.ts, self.flag = ts, flag


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text) if "\x1b" in text else text


def peel(text: str, tz: tzinfo, years: YearInference, out: Peeled | None = None) -> Peeled:
    """Remove the known prefixes of ``text`` (see module docstring)."""
    p = out if out is not None else Peeled()
    p.reset(text)
    if text.startswith("{") and ('"MESSAGE"' in text or '"log":' in text):
        inner = journal_heads.journal_json(text, p) if '"MESSAGE"' in text else \
            journal_heads.docker_json(text, tz, p)
        if inner is not None:
            text = inner
    pos = 0
    n = len(text)
    q = _QUOTE.match(text)
    if q is not None:
        pos = q.end()
    if text[pos:pos + 1] in (" ", "\t") and _SRUN.match(text, pos) is None:
        pos = len(text) - len(text.lstrip())  # an indented paste; srun pads its labels
    for _ in range(10):
        if pos >= n:
            break
        new = _one(text, pos, tz, years, p)
        if new is None or new <= pos:
            break
        pos = new
    p.msg = text[pos:] if pos else text
    if p.host is None and p.relay is not None and _node_line(p, text):
        p.host = p.relay
    return p


def _node_line(p: Peeled, text: str) -> bool:
    """The line behind a parallel-shell label is a node's own log line (a dmesg stamp, a
    syslog / journal / kmsg envelope, a program tag): only then is the label taken for its
    host. Job output behind a word like ``rank3: `` names no host."""
    if p.uptime_s is not None or p.program is not None or p.fmt in ("dmesg", "kmsg", "talos"):
        return True
    assert p.relay is not None
    at = len(p.relay) + 2
    return bool(_DMESG_T.match(text, at) or _DMESG_REL.match(text, at))


def _one(text: str, pos: int, tz: tzinfo, years: YearInference, p: Peeled) -> int | None:
    """Peel one layer at ``pos``; the position after it, or None."""
    c = text[pos]
    if c == "<":
        m = _PRI.match(text, pos)
        if m is None:
            return None
        r = _R5424.match(text, m.end())
        if r is not None:
            try:
                if r.group(1) != "-":
                    im = _ISO.match(r.group(1) + " ")
                    if im is not None:
                        p.stamp(*iso_match_to_us(im, tz))
            except (TimeError, ValueError, OverflowError):
                pass
            _set_host(p, r.group(2))
            p.program = p.program or r.group(3)
            p.fmt = p.fmt or "syslog-rfc5424"
            return r.end()
        return m.end()
    if c.isdigit():
        return _digit(text, pos, tz, p)
    if c == "[":
        return _bracket(text, pos, tz, p)
    if c == "(":
        m = _RAY.match(text, pos)
        return m.end() if m is not None else None
    if c.isupper() or c.islower():
        return _word(text, pos, tz, years, p)
    if c == " ":
        m = _SRUN.match(text, pos)
        if m is not None:
            if p.rank is None:
                p.rank = int(m.group(1))
            return m.end()
        return _bracket(text, pos, tz, p)
    return None


def _digit(text: str, pos: int, tz: tzinfo, p: Peeled) -> int | None:
    if (j := journal_heads.head(text, pos, tz)) is not None and \
            (e := _host_tag(text, j[0], p, "journal")) is not None:
        p.stamp(j[1], j[2])
        return e
    k = _KMSG.match(text, pos)
    if k is not None:
        if p.uptime_s is None and p.ts is None:
            p.uptime_s = int(k.group(3)) / 1e6
        p.fmt = p.fmt or "kmsg"
        return k.end()
    t = _TALOS.match(text, pos)
    if t is not None:
        with contextlib.suppress(TimeError, ValueError, OverflowError):
            p.stamp(*iso_match_to_us(t, tz))
        p.fmt = p.fmt or "talos"
        return t.end()
    m = _ISO.match(text, pos)
    if m is not None:
        try:
            ts, flag = iso_match_to_us(m, tz)
        except (TimeError, ValueError, OverflowError):
            return None
        p.stamp(ts, flag)
        end = m.end()
        c = _CRI.match(text, end)
        if c is not None:  # a container runtime's log file (CRI): ``<ts> stderr F <msg>``
            p.fmt = p.fmt or "cri"
            return c.end()
        if (e := _host_tag(text, end, p, "syslog-iso")) is not None:
            return e
        t = _TAG.match(text, end)
        if t is not None and t.group(1) in _KNOWN_PROGRAMS:
            _set_program(p, t.group(1), t.group(2))
            return t.end()
        p.fmt = p.fmt or "iso"
        return end
    s = _SRUN.match(text, pos)
    if s is not None:
        if p.rank is None:
            p.rank = int(s.group(1))
        return s.end()
    return None


def _bracket(text: str, pos: int, tz: tzinfo, p: Peeled) -> int | None:
    m = _DMESG_RAW.match(text, pos)
    if m is not None:
        if p.uptime_s is None and p.ts is None:
            p.uptime_s = float(m.group(1))
        p.fmt = p.fmt or "dmesg"
        return m.end()
    m = _TORCHRUN.match(text, pos) or MPIRUN_TAG.match(text, pos)
    if m is not None:
        if p.rank is None:
            p.rank = int(m.group(1))
        return m.end()
    m = _DEEPSPEED.match(text, pos)
    if m is not None:
        p.level = p.level or m.group(1)
        b = _BRACKET.match(text, pos)
        if b is not None:
            _bracket_stamp(b, tz, p)
        return m.end()
    m = _HF.match(text, pos)
    if m is not None:
        p.level = p.level or m.group(1)
        try:
            y, mo, d, h, mi, s = (int(m.group(i)) for i in range(2, 8))
            p.stamp(local_to_us(y, mo, d, h, mi, s, int(m.group(8)) * 1000, tz), "assumed_tz")
        except (ValueError, OverflowError):
            pass
        return m.end()
    m = _BRACKET.match(text, pos)
    if m is not None:
        _bracket_stamp(m, tz, p)
        return m.end()
    m = _DMESG_T.match(text, pos)
    if m is not None:
        try:
            p.stamp(ctime_to_us(m.group(1), tz), "assumed_tz")
        except (TimeError, ValueError, OverflowError):
            return None
        p.fmt = p.fmt or "dmesg-T"
        return m.end()
    m = _DMESG_REL.match(text, pos)
    if m is not None:
        p.fmt = p.fmt or "dmesg-H"
        return m.end()
    m = _STEP.match(text, pos) or KUBECTL_PREFIX.match(text, pos)
    if m is not None:
        return m.end()
    return None


def _bracket_stamp(m: re.Match[str], tz: tzinfo, p: Peeled) -> None:
    with contextlib.suppress(TimeError, ValueError, OverflowError):
        p.stamp(*iso_match_to_us(m, tz))


def _word(text: str, pos: int, tz: tzinfo, years: YearInference, p: Peeled) -> int | None:
    c = text[pos]
    if c.isupper() and (mc := MPIRUN_CTIME.match(text, pos)) is not None:
        st = ctime_stamp(mc, tz)
        if st is not None:
            p.stamp(*st)
        return mc.end()
    if c.isupper() and (j := journal_heads.head(text, pos, tz)) is not None and \
            (e := _host_tag(text, j[0], p, "journal")) is not None:
        p.stamp(j[1], j[2])
        return e
    if c.isupper() and text[pos:pos + 3].lower() in MONTHS:
        m = _SHORT.match(text, pos)
        if m is not None:
            end = m.end()
            h = _HOST_TAG.match(text, end)
            t = _TAG.match(text, end)
            if h is not None and _plausible_tag(h.group(2)):
                _set_host(p, h.group(1))
                _set_program(p, h.group(2), h.group(3))
                end = h.end()
            elif t is not None:  # journalctl --no-hostname
                _set_program(p, t.group(1), t.group(2))
                end = t.end()
            else:
                return None
            try:
                mon = MONTHS[m.group(1).lower()]
                frac = m.group(6)
                us = int((frac + "000000")[:6]) if frac else 0
                ts = yearless_us(years, mon, int(m.group(2)), int(m.group(3)),
                                 int(m.group(4)), int(m.group(5)), us, tz)
                p.stamp(ts, "inferred_year")
            except (ValueError, OverflowError):
                pass
            p.fmt = p.fmt or ("journal-short" if m.group(2)[0] == "0" else "syslog-rfc3164")
            return end
    g = _GLOG.match(text, pos)
    if g is not None:
        p.level = p.level or {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL"}[g.group(1)]
        try:
            mo, d = int(g.group(2)), int(g.group(3))
            us = int((g.group(7) + "000000")[:6])
            ts = local_to_us(years.year_for(mo), mo, d, int(g.group(4)), int(g.group(5)),
                             int(g.group(6)), us, tz)
            p.stamp(ts, "inferred_year")
        except (ValueError, OverflowError):
            pass
        return g.end()
    t = _TALOS.match(text, pos)
    if t is not None:
        with contextlib.suppress(TimeError, ValueError, OverflowError):
            p.stamp(*iso_match_to_us(t, tz))
        p.fmt = p.fmt or "talos"
        return t.end()
    x = _DMESG_X.match(text, pos)
    if x is not None:
        p.level = p.level or _LEVELS.get(x.group(2))
        if x.group(1) == "kern":
            p.program = p.program or "kernel"
        return x.end()
    t = _TAG.match(text, pos)
    if t is not None and t.group(1) in _KNOWN_PROGRAMS and p.program is None:
        _set_program(p, t.group(1), t.group(2))
        return t.end()
    y = _PYLOG.match(text, pos)
    if y is not None:
        p.level = p.level or y.group(1)
        return y.end()
    if pos == 0 and c.islower():
        h = PDSH.match(text, pos)
        if h is not None:
            p.relay = text[:h.end() - 2]
            return h.end()
    return None


def _host_tag(text: str, end: int, p: Peeled, fmt: str) -> int | None:
    """After a syslog or journal stamp: the host and the program tag (end past them)."""
    h = _HOST_TAG.match(text, end)
    if h is None or not _plausible_tag(h.group(2)):
        return None
    _set_host(p, h.group(1))
    _set_program(p, h.group(2), h.group(3))
    p.fmt = p.fmt or fmt
    return h.end()


def _plausible_tag(tag: str) -> bool:
    """A syslog tag, not the first word of a message ("node17 Out of memory:")."""
    return not tag[:1].isdigit() and len(tag) <= 48


def _set_host(p: Peeled, host: str) -> None:
    if p.host is None and host not in _NO_HOST:
        p.host = host


def _set_program(p: Peeled, program: str, pid: str | None) -> None:
    if p.program is None:
        p.program = program
        p.pid = int(pid) if pid else None
