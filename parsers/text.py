"""Text of no known layout: a paste, stdin, a log of a program we have no dialect for.

Every line goes through the prefix layer (``parsers.prefix``) and then every recogniser of
the message layer (``parsers.message``). A line a recogniser claims is an EVENT (or NOISE when
the recogniser says it carries no signal); a blank line is NOISE; anything else is UNPARSED,
kept as a sample and mined for templates (``tormortem explain --unknown``).

Time: a line's own stamp, else the last stamp seen earlier in the file (``inherited``).
Host: the line's (syslog host field), else the path's.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import polars as pl

from parsers import base, dedupe, fastrows, prefilter, sigrows
from parsers.base import EVENT, NOISE, UNPARSED, Emit, FileContext, LineParser
from parsers.message import Fallback, global_prefilter, peeled_fields
from parsers.prefix import Peeled, peel, strip_ansi


class TextParser(LineParser):
    """Any text: prefixes peeled, every recogniser tried (see module docstring)."""

    name: ClassVar[str] = "text"
    description: ClassVar[str] = (
        "text of no known layout (pastes, stdin, other programs' logs): every signature "
        "tried on every line")

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.fallback = Fallback(ctx)
        self._last_ts: int | None = None
        self._last_flag = "missing"
        self._marks: fastrows.Marks | None = None  #: lines read per line (``sigrows``)
        self._states: list[int | None] = []  #: ``_last_ts`` after each of them

    MAX_SCORE: ClassVar[int] = 1

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        return 1  # only when nothing else claims the file (registry.detect's fallback)

    #: progress lines a signature recognises are read per chunk (``parsers.sigrows``)
    SIG_ROWS: ClassVar[bool] = True

    def parse_line(self, text: str, line_no: int) -> int:
        if self._marks is None:
            return self._parse_line(text, line_no)
        return fastrows.parse_marked(self, self._parse_line, text, line_no)

    def _parse_line(self, text: str, line_no: int) -> int:
        if not text.strip():
            return NOISE
        if "\r" in text:  # tqdm redraws, several bars glued: every part is judged
            seen = {self._one(strip_ansi(part), line_no) for part in text.split("\r")
                    if part.strip()}
            return EVENT if EVENT in seen else (UNPARSED if UNPARSED in seen else NOISE)
        return self._one(strip_ansi(text) if "\x1b" in text else text, line_no)

    def _one(self, text: str, line_no: int) -> int:
        r = self.fallback.raw(text, line_no, lambda p: self._emitter(p, line_no))
        return UNPARSED if r is None else r

    def _emitter(self, p: Peeled, line_no: int) -> Emit:
        own = peeled_fields(p)
        if p.ts is not None:
            self._last_ts, self._last_flag = p.ts, "inherited"
        ts = own.pop("ts", self._last_ts)
        flag = own.pop("ts_flag", self._last_flag if ts is not None else "missing")

        def emit(**fields: Any) -> None:
            f = {k: v for k, v in fields.items() if v is not None}
            fb, fbf = f.pop("ts_fallback", None), f.pop("ts_fallback_flag", None)
            row: dict[str, Any] = {"ts": ts, "ts_flag": flag, "line_no": line_no, **own}
            # progress rows keep no copy of their text, as in a job log (parsers/joblog.py)
            if f.get("kind") not in ("iteration", "progress_bar"):
                row["message"] = text_of(f, p)
            else:
                f.pop("message", None)
            if p.ts is None and fb is not None:
                row["ts"], row["ts_flag"] = fb, fbf or "assumed_tz"
            if f.get("host") == "":
                f.pop("host")
                row["host"], row["host_from"] = None, "unknown"
            row.update(f)
            if "host" in f or "host" in own:
                row.setdefault("host_from", "line")
            else:
                row.update(self.host_fields(None))
            self.events.add(**row)

        return emit

    def finish(self) -> None:
        self.fallback.finish(self._emitter(Peeled(), 0))

    # -- the prefiltered path (parsers/prefilter.py) ----------------------------------------
    def parse_chunk(self, lines: pl.Series, first_line_no: int,
                    prepared: Any = base.NOT_PREPARED) -> None:
        """The prefilter's plan, with the progress lines a signature recognises read per
        chunk (``parsers.sigrows``)."""
        if not self.SIG_ROWS or len(lines) < base.SMALL_CHUNK:
            super().parse_chunk(lines, first_line_no, prepared)
            return
        self.premasks = None if prepared is base.NOT_PREPARED else prepared
        plan = self.vector_plan(lines)
        self.premasks = None
        if plan is None:
            super().parse_chunk(lines, first_line_no)
            return
        rows = sigrows.sig_rows(self, lines, plan)
        if rows is None:
            self.parse_planned(lines, first_line_no, plan)
        else:
            sigrows.sig_chunk(self, lines, first_line_no, rows, plan)

    def vector_plan(self, lines: pl.Series) -> prefilter.ChunkPlan | None:
        """Candidates: lines with an anchor of any recogniser; the rest are NOISE if blank,
        else UNPARSED. Stamped lines are the context of the unstamped ones after them."""
        if not prefilter.enabled():
            return None
        m, shapes = self.premasks if self.premasks is not None else self.masks(lines)
        glog = prefilter.glog_months(lines, m["glog"])
        months = np.where(m["month"] > 0, m["month"], glog)
        return prefilter.ChunkPlan(candidate=m["cand"], noise=m["blank"], context=m["stamped"],
                                   years=self.fallback.years.vector(months), shapes=shapes)

    def prepare(self, lines: pl.Series) -> Masks | None:
        """The plan's regex passes on the driver's helper thread, a chunk ahead."""
        return self.masks(lines) if len(lines) >= base.SMALL_CHUNK and prefilter.enabled() \
            else None

    def masks(self, lines: pl.Series) -> Masks:
        """The plan's masks (a dialect built on this one adds its own patterns)."""
        return _masks(lines)

    def set_context(self, text: str, line_no: int) -> bool:
        ts = self.stamp_of(text)
        if ts is None:
            return False
        self._last_ts, self._last_flag = ts, "inherited"
        return True

    def stamp_of(self, text: str) -> int | None:
        """The stamp ``set_context`` would take from ``text`` (None: none)."""
        for part in reversed(text.split("\r")):
            p = peel(strip_ansi(part), self.ctx.tz, self.fallback.years)
            if p.ts is not None:
                return p.ts
        return None

    def sig_prefix(self, line: str) -> sigrows.SigPrefix | None:
        return sigrows.text_prefix(self, line)

    def sig_constants(self) -> dict[str, str | None]:
        return {**self.host_fields(None), "job_id": None}

    def pin_year(self, year: int | None) -> None:
        self.fallback.years.pinned = year

    def is_open(self) -> bool:
        return self.fallback.is_open()


Masks = tuple[dict[str, np.ndarray], dedupe.Unique | None]


def _masks(lines: pl.Series, extra: dict[str, str] | None = None) -> Masks:
    """The plan's masks (and ``extra`` patterns'), and the chunk's shapes if they were
    evaluated on them."""
    shapes = dedupe.unique_lines(lines)
    return prefilter.masks(lines, {
        "cand": global_prefilter(), "blank": r"^\s*$", "stamped": prefilter.STAMPED,
        "glog": prefilter.GLOG_MONTH, **(extra or {})}, {"month": prefilter.SHORT_MONTH},
        unique=shapes), shapes


def text_of(fields: dict[str, Any], p: Peeled) -> str:
    return str(fields.get("message") or p.msg.strip())


PARSERS = [TextParser]
