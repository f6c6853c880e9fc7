"""Kernel log parser: dmesg / journalctl / syslog envelopes around kernel messages.

Envelopes (``format`` column):

* ``dmesg``             ``[12345.678901] msg`` (ts null, uptime_s set, ts_flag ``uptime``)
* ``dmesg-T``           ``[Wed May  1 12:00:00 2024] msg`` (--tz applied: ``assumed_tz``)
* ``dmesg-iso``         ``2024-05-01T12:00:00,123456+00:00 msg`` (comma before the fraction)
* ``journal-short``     ``May 01 12:00:00 node017 kernel: msg`` (zero-padded day; year
  inferred); with a fraction ``journal-short-precise``; ``journalctl --no-hostname`` drops
  the host.
* ``journal-short-iso`` ``2024-05-01T12:00:00+0000 node017 kernel: msg`` (zone without colon)
* ``syslog-iso``        ``2024-05-01T12:00:00.123456+00:00 node017 kernel: msg`` (rsyslog
  RFC3339 / journalctl short-iso-precise; both are the same text)
* ``syslog-rfc3164``    ``[<4>]May  1 12:00:00 node017 kernel: [12345.678] msg`` (space-padded
  day or a leading PRI; the ``[uptime]`` after ``kernel:`` is kept as uptime_s)
* ``syslog-rfc5424``    ``<4>1 2024-05-01T12:00:00.123456Z node017 kernel - - - msg``

A day >= 10 cannot tell journal-short from RFC 3164; the file's earlier lines decide, else
``journal-short`` if the file name contains "journal", else ``syslog-rfc3164``. Lines from
other programs (sshd, systemd, ...) with a valid envelope are NOISE, except Fabric Manager
errors. A line starting with white space continues the previous record (dmesg and journalctl
indent the 2nd+ lines of a multi-line kernel message), unless it is an indented envelope.
Hosts ``localhost``, ``(none)`` and ``-`` count as no host (the path's host is used). Lines
labelled by a parallel shell (``pdsh -w nodes dmesg``: ``node0025: [12.5] msg``) are read
without the label, which is the host of a line that names none (``split_label``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import polars as pl

from parsers import base, kernel_plan, prefilter
from parsers.base import EVENT, NOISE, UNPARSED, FileContext, LineParser, head_lines
from parsers.kernel_common import Env, split_label
from parsers.kernel_envelope import (
    CTIME,
    ISO,
    MONTHS,
    PRI,
    R5424,
    RAW,
    SHORT,
    TAG,
    UPTIME,
    host_of,
    sniff_line,
)
from parsers.kernel_host import HostLines
from parsers.kernel_nvidia import NvidiaLines, fabric_manager
from parsers.kernel_pci import PciLines
from parsers.message import (
    Fallback,
    KernelMessages,
    candidates_with_default_noise,
    peeled_fields,
)
from parsers.timeutil import TimeError, YearInference, ctime_to_us, parse_iso, syslog_to_us


class KernelLogParser(LineParser):
    """Kernel messages (NVIDIA Xid, AER, MCE/EDAC, mlx5/IB, OOM, I/O, hangs) in any of the
    dmesg / journalctl / syslog envelopes."""

    name: ClassVar[str] = "kernel"
    description: ClassVar[str] = ("kernel log (dmesg, journalctl -k, syslog): Xid, AER, MCE, "
                                  "EDAC, mlx5/IB, OOM kills, I/O errors, hung tasks")
    #: a line whose envelope ``parse_line`` reads sets ``prev`` as ``set_context`` would
    OWN_CONTEXT: ClassVar[bool] = True

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.years = YearInference(self.ctx.mtime, self.ctx.year)
        self.env: Env | None = None  #: envelope of the current line
        self.prev: Env | None = None  #: envelope of the last line that had one
        self.prev_kernel = False
        # Undecided "Mon DD" variant: a file named like a journal export says journal.
        self.short_fmt = ("journal-short" if "journal" in ctx.path.lower()
                          else "syslog-rfc3164")
        self.nv = NvidiaLines()
        self.pci = PciLines()
        self.host = HostLines()
        self.fallback = Fallback(ctx, skip=(KernelMessages,))
        self._pinned_fmt: object = None
        self._label: str | None = None  #: the current line's host label (``split_label``)

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        """High when the head's lines are kernel envelopes (dmesg forms, or syslog/journal
        lines from ``kernel``); 40 for a syslog/journal file with no kernel line in the head."""
        lines = [ln for ln in head_lines(head, 60) if ln.strip()]
        if not lines:
            return 0
        env = kern = 0
        need = (len(lines) + 1) // 2  # envelopes enough for env * 2 >= len(lines)
        for ln in lines:
            r = sniff_line(ln)
            env += r > 0
            kern += r > 1
            if kern and env >= need:  # the answer cannot change: stop reading
                break
        lowered = path.lower()
        bonus = 10 if any(w in lowered for w in ("kern", "dmesg", "messages", "syslog",
                                                 "journal")) else 0
        if env * 2 < len(lines):
            return min(25, 10 * kern)
        if kern:
            return min(100, 85 + bonus + (5 if "NVRM" in head else 0))
        return 40 + bonus

    def parse_line(self, text: str, line_no: int) -> int:
        """Read the envelope, then hand kernel messages to the signal recognisers."""
        if not text.strip():
            return NOISE
        label, text = split_label(text)
        if label is not None:
            if not text.strip():  # an empty line of the node's (``node0025: ``)
                return NOISE
            self._label = label
            try:
                return self._line(text, line_no)
            finally:
                self._label = None
        return self._line(text, line_no)

    def _line(self, text: str, line_no: int) -> int:
        try:
            first = text[0]
            if first in " \t":
                r = self._indented(text, line_no)
                if r is not None:
                    return r
                text = text.lstrip()
                first = text[0]
            parsed = self._envelope(text, first, line_no)
        except (TimeError, ValueError, IndexError):
            self.resolve_context()
            return UNPARSED
        if parsed is None:  # no envelope: a pasted or foreign line; the prefix layer decides
            self.resolve_context()
            if self._label is not None:  # (which peels the label again, as its host)
                text = f"{self._label}: {text}"
            r = self.fallback.raw(text, line_no, self._peeled_emit(line_no))
            return UNPARSED if r is None else r
        env, program, msg = parsed
        self.env = self.prev = env
        if program is None or program == "kernel":
            self.prev_kernel = True
            m = UPTIME.match(msg)
            if m and env.uptime_s is None:
                self.env = self.prev = env = Env(env.ts, env.ts_flag, float(m.group(1)),
                                                 env.host, env.fmt, line_no)
                msg = m.group(2)
            return self._kernel(msg, line_no)
        self.prev_kernel = False
        if program.startswith("nv-fabricmanager"):
            return fabric_manager(msg, self._emit)
        r = self.fallback.peeled(msg, line_no, self._peeled_fields)
        return NOISE if r is None else r

    # -- the prefiltered path (parsers/prefilter.py) ----------------------------------------
    def vector_plan(self, lines: pl.Series) -> prefilter.ChunkPlan | None:
        """Candidates: lines with an anchor of any recogniser (or a Fabric Manager error).
        Others: NOISE when they have an envelope (another program's line, or a kernel line no
        recogniser claims), or are indented under an earlier enveloped line (a continuation);
        UNPARSED otherwise. Enveloped lines are the context of the next line."""
        if not prefilter.enabled():
            return None
        if self.premasks is not None:
            m, lines = self.premasks
        else:
            lines = kernel_plan.unlabel(lines)
            m = kernel_plan.masks(lines)
        env = m["env"]
        wake = ~env | m["kernel"] | m["bracket"]
        indented = m["ws"] & ~env
        before = np.maximum.accumulate(env) if env.size else env
        had = np.concatenate(([self.prev is not None], before[:-1])) if env.size else env
        noise = env | (indented & had) | m["blank"]
        cand = candidates_with_default_noise(lines, noise, m["cand"]) | m["fm"]
        months = m["month"]
        if not months.any():  # no year-less stamp in the chunk
            return prefilter.ChunkPlan(candidate=cand, noise=noise, context=env, wake=wake)
        return prefilter.ChunkPlan(candidate=cand, noise=noise, context=env, wake=wake,
                                   years=self.years.vector(months),
                                   pins={"short_fmt": self._short_fmts(
                                       kernel_plan.fmt_hints(m, months > 0))})

    PREPARE_SPLITS: ClassVar[bool] = True  #: the masks are line by line

    def split_prepared(self, prepared: Any, sizes: list[int]) -> list[Any]:
        out: list[Any] = []
        at = 0
        for n in sizes:
            if prepared is None or n < base.SMALL_CHUNK:
                out.append(None)  # what ``prepare`` gives a file of so few lines
            else:
                m, lines = prepared
                out.append(({k: v[at: at + n].copy() for k, v in m.items()},
                            lines.slice(at, n)))
            at += n
        return out

    def prepare(self, lines: pl.Series) -> tuple[dict[str, np.ndarray], pl.Series] | None:
        """The plan's regex passes (they depend on the chunk alone) on the driver's helper
        thread, a chunk ahead: ``vector_plan`` then only combines them with the file's state.
        The masks are of the lines without their labels (``kernel_plan.unlabel``)."""
        if len(lines) < base.SMALL_CHUNK or not prefilter.enabled():
            return None
        lines = kernel_plan.unlabel(lines)
        return kernel_plan.masks(lines), lines

    def _short_fmts(self, hint: np.ndarray) -> np.ndarray:
        """The ``Mon DD`` variant each line gets (``_short_fmt``'s rule, forward-filled), as
        codes of ``kernel_plan.FMTS``."""
        out = kernel_plan.forward_fill(hint, kernel_plan.FMTS.index(self.short_fmt))
        if out.size:
            self.short_fmt = kernel_plan.FMTS[int(out[-1])]
        return out

    def set_context(self, text: str, line_no: int) -> bool:
        """The envelope of a line Python does not otherwise read (for a continuation)."""
        self._label, text = split_label(text)
        try:
            stripped = text.lstrip()
            parsed = self._envelope(stripped, stripped[:1], line_no)
        except (TimeError, ValueError, IndexError):
            return False
        finally:
            self._label = None
        if parsed is None:
            return False
        env, program, msg = parsed
        m = UPTIME.match(msg) if program is None or program == "kernel" else None
        if m and env.uptime_s is None:
            env = Env(env.ts, env.ts_flag, float(m.group(1)), env.host, env.fmt, line_no)
        self.prev = env
        self.prev_kernel = program is None or program == "kernel"
        return True

    def pin_year(self, year: int | None) -> None:
        self.years.pinned = year

    def pin(self, values: dict[str, Any] | None) -> None:
        code = None if values is None else values.get("short_fmt")
        self._pinned_fmt = None if code is None else kernel_plan.FMTS[int(code)]

    def open_wake(self) -> bool:
        """Open only by a GSP report or an SXid (which the next kernel line that is not
        NVIDIA's ends: ``NvidiaLines.other_line``): lines with a syslog envelope of another
        program (no "kernel" in them, no dmesg ``[`` stamp) cannot end it, and in a merged
        syslog of many hosts they are most lines (~2,000 after an Xid 119 in the benchmark's
        fleet syslog, each ~45 us in Python)."""
        nv, pci = self.nv, self.pci
        return not (nv.lost_pending or pci.aer_open or pci.mce_open or pci.mlx5_health_open
                    or self.host.oom_job or self.fallback.is_open())

    def is_open(self) -> bool:
        nv, pci = self.nv, self.pci
        return bool(nv.gsp_open or nv.lost_pending or nv.sxid_last or pci.aer_open
                    or pci.mce_open or pci.mlx5_health_open or self.host.oom_job
                    or self.fallback.is_open())

    def finish(self) -> None:
        """Flush an AER header still waiting for its detail lines, and open blocks of the
        other recognisers."""
        self.pci.flush(self._emit)
        if self.env is not None:
            self.fallback.finish(self._fields_emit)

    # -- envelopes ---------------------------------------------------------------------

    def _indented(self, text: str, line_no: int) -> int | None:
        """A line starting with white space: an indented envelope (pasted logs), or the
        continuation of the previous multi-line record (inherits its envelope)."""
        stripped = text.lstrip()
        if self._envelope_probe(stripped):
            return None
        self.resolve_context()  # (an indented context line the probe reads no envelope in)
        if self.prev is None:  # nothing to continue: a pasted, indented line
            if self._label is not None:
                text = f"{self._label}: {text}"
            r = self.fallback.raw(text, line_no, self._peeled_emit(line_no))
            return UNPARSED if r is None else r
        p = self.prev
        flag = "inherited" if p.ts is not None else p.ts_flag
        self.env = Env(p.ts, flag, p.uptime_s, self._label or p.host, p.fmt, line_no)
        if not self.prev_kernel:
            return NOISE
        return self._kernel(stripped, line_no)

    def _envelope_probe(self, text: str) -> bool:
        c = text[:1]
        if c == "[":
            return bool(RAW.match(text) or CTIME.match(text))
        if c.isdigit():
            return bool(ISO.match(text))
        if c == "<":
            return bool(PRI.match(text))
        return bool(c.isupper() and text[:3] in MONTHS and SHORT.match(text))

    def _envelope(self, text: str, first: str, line_no: int
                  ) -> tuple[Env, str | None, str] | None:
        """(envelope, program or None for dmesg, message) or None if no envelope; the
        line's parallel-shell label is the host of an envelope that names none."""
        got = self._envelope_of(text, first, line_no)
        if got is None or self._label is None or got[0].host is not None:
            return got
        e = got[0]
        return Env(e.ts, e.ts_flag, e.uptime_s, self._label, e.fmt, e.line_no), got[1], got[2]

    def _envelope_of(self, text: str, first: str, line_no: int
                     ) -> tuple[Env, str | None, str] | None:
        tz = self.ctx.tz
        if first == "[":
            m = RAW.match(text)
            if m:
                return Env(None, "uptime", float(m.group(1)), None, "dmesg", line_no), None, \
                    m.group(2)
            c = CTIME.match(text)
            if c:
                return (Env(ctime_to_us(c.group(1), tz), "assumed_tz", None, None, "dmesg-T",
                            line_no), None, c.group(2))
            return None
        pri = False
        if first == "<":
            p = PRI.match(text)
            if not p:
                return None
            text, pri = text[p.end():], True
            if text.startswith("1 "):
                return self._rfc5424(text, line_no)
            first = text[:1]
        if first.isdigit():
            i = ISO.match(text)
            if not i:
                return None
            ts, flag = parse_iso(text, tz)
            rest = i.group(4)
            frac, zone = i.group(2) or "", i.group(3)
            if frac.startswith(",") and not pri:
                return Env(ts, flag, None, None, "dmesg-iso", line_no), None, rest
            t = TAG.match(rest)
            if not t:
                return Env(ts, flag, None, None, "dmesg-iso", line_no), None, rest
            fmt = "journal-short-iso" if (":" not in zone and zone != "Z") else "syslog-iso"
            return Env(ts, flag, None, host_of(t.group(1)), fmt, line_no), t.group(2), t.group(3)
        if first.isupper():
            s = SHORT.match(text)
            if not s:
                return None
            mon, day, hms, frac, rest = s.groups()
            t = TAG.match(rest)
            if not t:
                return None
            ts = syslog_to_us(mon, int(day), hms, frac, self.ctx.tz, self.years)
            fmt = self._short_fmt(day, frac, pri, t.group(3))
            return (Env(ts, "inferred_year", None, host_of(t.group(1)), fmt, line_no),
                    t.group(2), t.group(3))
        return None

    def _short_fmt(self, day: str, frac: str | None, pri: bool, msg: str) -> str:
        """Variant of a ``Mon DD HH:MM:SS`` envelope (see module docstring)."""
        if self._pinned_fmt is not None:
            return str(self._pinned_fmt)
        if pri or day[0] == " " or UPTIME.match(msg):
            self.short_fmt = "syslog-rfc3164"
        elif frac:
            self.short_fmt = "journal-short-precise"
        elif day[0] == "0":
            self.short_fmt = "journal-short"
        return self.short_fmt

    def _rfc5424(self, text: str, line_no: int) -> tuple[Env, str | None, str] | None:
        r = R5424.match(text)
        if not r:
            return None
        stamp, host, app = r.group(1), r.group(2), r.group(3)
        if stamp == "-":
            ts, flag = None, "missing"
        else:
            ts, flag = parse_iso(stamp, self.ctx.tz)
        return Env(ts, flag, None, host_of(host), "syslog-rfc5424", line_no), app, r.group(7)

    # -- kernel messages ---------------------------------------------------------------

    def _kernel(self, body: str, line_no: int) -> int:
        """Dispatch a kernel message on cheap substring checks, then the regexes."""
        emit = self._emit
        r: int | None = None
        if "NVRM" in body or "SXid" in body:
            r = self.nv.match(body, line_no, emit)
        if r is None:
            self.nv.other_line()
            assert self.env is not None
            r = self.pci.match(body, emit, self.env)
        if r is None:
            r = self.host.match(body, emit)
        if r == EVENT:
            return r
        # NOISE from the kernel's own recognisers is not final: a signature may know the line
        r2 = self.fallback.peeled(body, line_no, self._peeled_fields)
        if r2 == EVENT:
            return EVENT
        return UNPARSED if r == UNPARSED else NOISE

    def _fields_emit(self, env: Env | None = None, **fields: Any) -> None:
        """Rows of the other recognisers, on ``env`` (a late row's own line) or the current."""
        e = env or self.env
        assert e is not None
        f = {k: v for k, v in fields.items() if v is not None}
        for k in ("ts_fallback", "ts_fallback_flag"):
            f.pop(k, None)
        host = f.pop("host", None)
        row: dict[str, Any] = {"ts": e.ts, "ts_flag": e.ts_flag, "uptime_s": e.uptime_s,
                               "format": e.fmt, "line_no": e.line_no,
                               **(self.host_fields(e.host) if host is None else
                                  {"host": host or None,
                                   "host_from": "line" if host else "unknown"}), **f}
        self.events.add(**row)

    def _peeled_fields(self, p: Any) -> Any:
        """``_fields_emit`` with what the prefix layer read inside the message on top."""
        extra, env = peeled_fields(p), self.env

        def emit(**fields: Any) -> None:
            self._fields_emit(env, **{**extra, **fields})
        return emit

    def _peeled_emit(self, line_no: int) -> Any:
        def make(p: Any) -> Any:
            flag = p.flag or ("uptime" if p.uptime_s is not None else "missing")
            e = self.env = Env(p.ts, flag, p.uptime_s, p.host, p.fmt or "text", line_no)
            return lambda **fields: self._fields_emit(e, **fields)
        return make

    def _emit(self, kind: str, message: str, *, code: str | None = None,
              device: str | None = None, value: float | None = None,
              job_id: str | None = None, env: Env | None = None) -> None:
        e = env or self.env
        assert e is not None
        self.events.add(ts=e.ts, ts_flag=e.ts_flag, uptime_s=e.uptime_s,
                        **self.host_fields(e.host), format=e.fmt, kind=kind, code=code,
                        device=device, value=value, message=message, job_id=job_id,
                        line_no=e.line_no)


PARSERS = [KernelLogParser]
